// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One node's part of a schedule that commutes with the torus translations
 * by multiples of a period mod[] (core/part_sym.h).
 *
 * If translating every message of the whole schedule by g (a vector of
 * multiples of mod[d]) gives the whole schedule again, the schedule is known
 * from the blocks that start in one fundamental cell C = {x : x_d < mod[d]}:
 * a block {a, b} is the translate by g = a - c of the block {c, b - g}, c in
 * C, and travels in the same steps along the translated hops. So a node n's
 * message in step s on route r carries exactly the translates of the blocks
 * from C that the restricted schedule moves, in step s on route r, from a
 * node u with n - u a multiple of mod (likewise for what n receives).
 *
 * The restricted schedule (tc_sched_build_sources: the builder places the
 * blocks of C's nodes only) holds |C| * (P - 1) blocks, each once per
 * message that carries it: |C| times the blocks one node sends, within a
 * factor of its ports. It is built once per (algorithm, shape) and kept in
 * a small cache, with its messages indexed by the translation class of
 * their sender and receiver, so that node n visits only the messages that
 * translate to its own: time proportional to n's traffic (plus |C| message
 * headers per message of n), memory its traffic.
 *
 * This holds only for builders whose choice for a block does not depend on
 * the other blocks (no alternation counted over what a node holds) and whose
 * schedule is translation invariant; tests/unit/test_part.c compares every
 * node's part made here with its cut from the whole schedule.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/cost.h"
#include "core/part.h"
#include "core/part_sym.h"
#include "core/verify.h"

struct sym_entry {
	const struct tc_algo *algo;
	struct tc_shape shape;
	int mod[TC_MAX_DIMS];
	struct tc_sched *s; /* NULL: the build failed with err, why */
	int err;
	const char *why;
	int ncls;
	/* per translation class k: the messages sent (received) by a node of
	 * class k, by_src[src_first[k] .. src_first[k+1]), in step order */
	uint32_t *src_first, *by_src;
	uint32_t *dst_first, *by_dst;
	uint64_t used;
};

#define SYM_CACHE 4
static pthread_mutex_t sym_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sym_entry sym_cache[SYM_CACHE]; /* protected by sym_lock */
static uint64_t sym_clock;		       /* protected by sym_lock */

static int sym_class(const struct tc_shape *sh, const int *mod, int node)
{
	int c[TC_MAX_DIMS], k = 0;

	tc_shape_coords(sh, node, c);
	for (int d = 0; d < sh->ndims; d++)
		k = k * mod[d] + c[d] % mod[d];
	return k;
}

static void sym_entry_clear(struct sym_entry *e)
{
	tc_sched_free(e->s);
	free(e->src_first);
	free(e->by_src);
	free(e->dst_first);
	free(e->by_dst);
	memset(e, 0, sizeof(*e));
}

/* Index the messages of e->s by the class of their sender and receiver. */
static int sym_index(struct sym_entry *e)
{
	const struct tc_sched *s = e->s;
	uint32_t *sk, *dk;

	e->src_first = calloc((size_t)e->ncls + 1, sizeof(uint32_t));
	e->dst_first = calloc((size_t)e->ncls + 1, sizeof(uint32_t));
	e->by_src = malloc(((size_t)s->nmsgs + 1) * sizeof(uint32_t));
	e->by_dst = malloc(((size_t)s->nmsgs + 1) * sizeof(uint32_t));
	sk = malloc(((size_t)s->nmsgs + 1) * sizeof(uint32_t));
	dk = malloc(((size_t)s->nmsgs + 1) * sizeof(uint32_t));
	if (!e->src_first || !e->dst_first || !e->by_src || !e->by_dst || !sk || !dk) {
		free(sk);
		free(dk);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->nmsgs; i++) {
		sk[i] = sym_class(&s->shape, e->mod, s->msgs[i].src);
		dk[i] = sym_class(&s->shape, e->mod, s->msgs[i].dst);
		e->src_first[sk[i] + 1]++;
		e->dst_first[dk[i] + 1]++;
	}
	for (int k = 0; k < e->ncls; k++) {
		e->src_first[k + 1] += e->src_first[k];
		e->dst_first[k + 1] += e->dst_first[k];
	}
	/* counting sort, stable: each class keeps the schedule's step order */
	{
		uint32_t *ps = calloc((size_t)e->ncls, sizeof(uint32_t)), *pd = calloc((size_t)e->ncls, sizeof(uint32_t));

		if (!ps || !pd) {
			free(ps);
			free(pd);
			free(sk);
			free(dk);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < s->nmsgs; i++) {
			e->by_src[e->src_first[sk[i]] + ps[sk[i]]++] = i;
			e->by_dst[e->dst_first[dk[i]] + pd[dk[i]]++] = i;
		}
		free(ps);
		free(pd);
	}
	free(sk);
	free(dk);
	return 0;
}

/* The cached restricted schedule of (algo, shape, mod); sym_lock held. */
static struct sym_entry *sym_get(const struct tc_algo *algo, const struct tc_shape *sh, const int *mod)
{
	struct sym_entry *e, *victim = &sym_cache[0];

	for (int i = 0; i < SYM_CACHE; i++) {
		e = &sym_cache[i];
		if (e->algo == algo && tc_shape_equal(&e->shape, sh) && !memcmp(e->mod, mod, sh->ndims * sizeof(int))) {
			e->used = ++sym_clock;
			return e;
		}
		if (e->used < victim->used)
			victim = e;
	}
	e = victim;
	sym_entry_clear(e);
	e->algo = algo;
	e->shape = *sh;
	e->ncls = 1;
	for (int d = 0; d < sh->ndims; d++) {
		e->mod[d] = mod[d];
		e->ncls *= mod[d];
	}
	e->used = ++sym_clock;
	e->err = tc_sched_build_sources(algo, sh, mod, &e->s, &e->why);
	if (!e->err && !e->s->src_mod[0]) {
		e->err = -EPROTO;
		e->why = "the builder did not restrict its sources";
	}
	if (!e->err) {
		e->err = sym_index(e);
		if (e->err)
			e->why = "out of memory indexing the restricted schedule";
	}
	if (e->err) {
		tc_sched_free(e->s);
		e->s = NULL;
	}
	return e;
}

/* One block or message end of node n's part, before grouping. */
struct sym_item {
	uint32_t step;
	int32_t peer;
	int32_t a, b;
	int8_t route[TC_MAX_DIMS];
	uint8_t recv;
};

static int sym_item_cmp(const void *x, const void *y)
{
	const struct sym_item *p = x, *q = y;
	int c;

	if (p->step != q->step)
		return p->step < q->step ? -1 : 1;
	if (p->recv != q->recv)
		return p->recv < q->recv ? -1 : 1;
	if (p->peer != q->peer)
		return p->peer < q->peer ? -1 : 1;
	c = memcmp(p->route, q->route, sizeof(p->route));
	if (c)
		return c;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->b < q->b ? -1 : p->b > q->b;
}

struct sym_items {
	struct sym_item *v;
	uint32_t n, cap;
};

/* x translated by g (coordinates). */
static int sym_move(const struct tc_shape *sh, int x, const int *g)
{
	int c[TC_MAX_DIMS];

	tc_shape_coords(sh, x, c);
	for (int d = 0; d < sh->ndims; d++)
		c[d] += g[d];
	return tc_shape_node(sh, c);
}

void tc_sym_msg_translate(const struct tc_shape *sh, const int *g, int x, uint32_t st, int dst, const int8_t *route,
			  uint32_t nblk, int op, struct tc_msg *m)
{
	int back[TC_MAX_DIMS];

	/* tc_sym_rep's g takes x to its cell node: the cell's dst goes back by -g */
	for (int d = 0; d < sh->ndims; d++)
		back[d] = -g[d];
	memset(m, 0, sizeof(*m));
	m->src = x;
	m->dst = sym_move(sh, dst, back);
	memcpy(m->route, route, sizeof(m->route));
	m->step = st;
	m->nblk = nblk;
	m->op = op;
}

/* Add the translates to node n of the messages in idx[lo..hi) (recv: n receives them). */
static int sym_collect(const struct sym_entry *e, int n, const uint32_t *idx, uint32_t lo, uint32_t hi, int recv,
		       int64_t only_step, struct sym_items *out)
{
	const struct tc_sched *s = e->s;
	const struct tc_shape *sh = &s->shape;
	const int move_b = s->coll == TC_ALLTOALL;
	int nc[TC_MAX_DIMS];

	tc_shape_coords(sh, n, nc);
	for (uint32_t i = lo; i < hi; i++) {
		const struct tc_msg *m = &s->msgs[idx[i]];
		int uc[TC_MAX_DIMS], g[TC_MAX_DIMS], peer;

		if (only_step >= 0 && m->step != only_step)
			continue;
		tc_shape_coords(sh, recv ? m->dst : m->src, uc);
		for (int d = 0; d < sh->ndims; d++)
			g[d] = nc[d] - uc[d];
		peer = sym_move(sh, recv ? m->src : m->dst, g);
		if (tc_grow((void **)&out->v, &out->cap, out->n + m->nblk, sizeof(*out->v), 256))
			return -ENOMEM;
		for (uint32_t k = 0; k < m->nblk; k++) {
			const struct tc_blk *bk = &s->blks[m->blk_off + k];
			struct sym_item *it = &out->v[out->n++];

			it->step = m->step;
			it->peer = peer;
			it->a = sym_move(sh, bk->a, g);
			it->b = move_b ? sym_move(sh, bk->b, g) : bk->b;
			memcpy(it->route, m->route, sizeof(it->route));
			it->recv = (uint8_t)recv;
		}
	}
	return 0;
}

/* First index in idx[lo..hi) whose message's step is >= step. */
static uint32_t sym_lower(const struct tc_sched *s, const uint32_t *idx, uint32_t lo, uint32_t hi, uint32_t step)
{
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->msgs[idx[mid]].step < step)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Node n's items from the restricted schedule; sym_lock held. */
static int sym_items(const struct sym_entry *e, const struct tc_part *p, struct sym_items *out)
{
	const struct tc_sched *s = e->s;
	int k = sym_class(&s->shape, e->mod, p->node);
	int64_t only = tc_part_only_step(p);
	uint32_t lo = e->src_first[k], hi = e->src_first[k + 1];
	int err;

	if (only >= 0) {
		/* the local check asks for one step's sends: bisect to it */
		lo = sym_lower(s, e->by_src, lo, hi, (uint32_t)only);
		hi = sym_lower(s, e->by_src, lo, hi, (uint32_t)only + 1);
		return sym_collect(e, p->node, e->by_src, lo, hi, 0, only, out);
	}
	err = sym_collect(e, p->node, e->by_src, lo, hi, 0, -1, out);
	if (!err)
		err = sym_collect(e, p->node, e->by_dst, e->dst_first[k], e->dst_first[k + 1], 1, -1, out);
	return err;
}

/*
 * The period on sh: algo's (sym_period's, if it has one) where it divides a
 * wrapping dimension, else the whole dimension (no translation there, always a symmetry). The cell's size.
 */
static int sym_eff_mod(const struct tc_algo *algo, const struct tc_shape *sh, int *mod)
{
	int per[TC_MAX_DIMS], cell = 1;

	for (int d = 0; d < sh->ndims; d++)
		per[d] = algo->sym_mod[d];
	if (algo->sym_period)
		algo->sym_period(sh, per);
	for (int d = 0; d < sh->ndims; d++) {
		int m = per[d];

		mod[d] = ((sh->wrap_mask >> d) & 1) && m >= 1 && !(sh->dims[d] % m) ? m : sh->dims[d];
		cell *= mod[d];
	}
	return cell;
}

int tc_algo_translated(const struct tc_algo *algo, const struct tc_shape *sh)
{
	int mod[TC_MAX_DIMS];

	/* worth it when the cell is at most a quarter of the nodes */
	return algo->sym_mod[0] && 4 * sym_eff_mod(algo, sh, mod) <= sh->nodes;
}

int tc_part_translate(struct tc_part *p, const struct tc_algo *algo, const char **why)
{
	struct sym_items it = { NULL, 0, 0 };
	const struct sym_entry *e;
	int mod[TC_MAX_DIMS];
	uint32_t nsteps = 0;
	int err;

	sym_eff_mod(algo, &p->shape, mod);
	pthread_mutex_lock(&sym_lock);
	e = sym_get(algo, &p->shape, mod);
	err = e->err;
	if (err) {
		*why = e->why;
	} else {
		p->cite = e->s->cite;
		p->claims = e->s->claims;
		p->npackets = e->s->npackets;
		nsteps = e->s->nsteps;
		err = sym_items(e, p, &it);
		if (err)
			*why = "out of memory collecting the node's part";
	}
	pthread_mutex_unlock(&sym_lock);
	if (err) {
		free(it.v);
		return err;
	}
	qsort(it.v, it.n, sizeof(*it.v), sym_item_cmp);
	for (uint32_t i = 0; i < it.n && !err; i++) {
		const struct sym_item *x = &it.v[i];

		if (!i || x->step != it.v[i - 1].step || x->recv != it.v[i - 1].recv || x->peer != it.v[i - 1].peer ||
		    memcmp(x->route, it.v[i - 1].route, sizeof(x->route))) {
			err = tc_part_at(p, x->step);
			if (!err)
				err = x->recv ? tc_part_msg(p, x->peer, p->node, x->route) :
						tc_part_msg(p, p->node, x->peer, x->route);
		}
		if (!err)
			err = tc_part_blk(p, x->a, x->b);
	}
	free(it.v);
	if (!err)
		err = tc_part_finish(p, nsteps);
	if (err)
		*why = "building the node's part from the translation-invariant schedule failed";
	return err;
}

int tc_sym_cell_visit(const struct tc_algo *algo, const struct tc_shape *sh,
		      int (*fn)(void *arg, const struct tc_sched *cell, const int *mod), void *arg, const char **why)
{
	const struct sym_entry *e;
	int mod[TC_MAX_DIMS], err;

	sym_eff_mod(algo, sh, mod);
	pthread_mutex_lock(&sym_lock);
	e = sym_get(algo, sh, mod);
	err = e->err;
	if (err)
		*why = e->why;
	else
		err = fn(arg, e->s, e->mod);
	pthread_mutex_unlock(&sym_lock);
	return err;
}

/* One orbit of whole messages of a step: sent by the cell node u0 to dst. */
struct sym_key {
	int32_t u0, dst;
	int8_t route[TC_MAX_DIMS];
	uint32_t nblk;
};

static int sym_key_cmp(const void *x, const void *y)
{
	const struct sym_key *p = x, *q = y;

	if (p->u0 != q->u0)
		return p->u0 < q->u0 ? -1 : 1;
	if (p->dst != q->dst)
		return p->dst < q->dst ? -1 : 1;
	return memcmp(p->route, q->route, sizeof(p->route));
}

/* The cell node of x's class (its coordinates mod the period). */
int tc_sym_rep(const struct tc_shape *sh, const int *mod, int x, int *g)
{
	int c[TC_MAX_DIMS];

	tc_shape_coords(sh, x, c);
	for (int d = 0; d < sh->ndims; d++) {
		g[d] = c[d] % mod[d] - c[d];
		c[d] %= mod[d];
	}
	return tc_shape_node(sh, c);
}

/*
 * Step st of the whole schedule, message headers only (no blocks): the
 * restricted schedule's messages merged into orbits, then every orbit's
 * translate from every node of its class, in the order of the senders.
 */
static int sym_whole_step(const struct sym_entry *e, uint32_t st, struct sym_key **keys, uint32_t *kcap,
			  struct tc_msg **msgs, uint32_t *mcap, struct tc_step_view *view)
{
	const struct tc_sched *s = e->s;
	const struct tc_shape *sh = &s->shape;
	uint32_t lo = s->step_first[st], hi = s->step_first[st + 1], nk = 0, nm = 0, *first;
	int g[TC_MAX_DIMS];

	if (tc_grow((void **)keys, kcap, hi - lo + 1, sizeof(**keys), 64))
		return -ENOMEM;
	for (uint32_t i = lo; i < hi; i++) {
		const struct tc_msg *m = &s->msgs[i];
		struct sym_key *k = &(*keys)[nk++];

		k->u0 = tc_sym_rep(sh, e->mod, m->src, g);
		k->dst = sym_move(sh, m->dst, g);
		memcpy(k->route, m->route, sizeof(k->route));
		k->nblk = m->nblk;
	}
	qsort(*keys, nk, sizeof(**keys), sym_key_cmp);
	{
		uint32_t w = 0;

		for (uint32_t i = 0; i < nk; i++) {
			if (w && !sym_key_cmp(&(*keys)[w - 1], &(*keys)[i]))
				(*keys)[w - 1].nblk += (*keys)[i].nblk;
			else
				(*keys)[w++] = (*keys)[i];
		}
		nk = w;
	}
	first = calloc((size_t)sh->nodes + 1, sizeof(*first)); /* keys of cell node u: first[u]..first[u+1] */
	if (!first)
		return -ENOMEM;
	for (uint32_t i = 0; i < nk; i++)
		first[(*keys)[i].u0 + 1]++;
	for (int u = 0; u < sh->nodes; u++)
		first[u + 1] += first[u];
	for (int n = 0; n < sh->nodes; n++) {
		int u0 = tc_sym_rep(sh, e->mod, n, g);

		if (first[u0] == first[u0 + 1])
			continue;
		if (tc_grow((void **)msgs, mcap, nm + (first[u0 + 1] - first[u0]), sizeof(**msgs), 1024)) {
			free(first);
			return -ENOMEM;
		}
		for (uint32_t i = first[u0]; i < first[u0 + 1]; i++) {
			const struct sym_key *k = &(*keys)[i];

			tc_sym_msg_translate(sh, g, n, st, k->dst, k->route, k->nblk, TC_MSG_COPY, &(*msgs)[nm++]);
		}
	}
	free(first);
	view->step = st;
	view->nmsgs = nm;
	view->msgs = *msgs;
	view->blks = NULL;
	return 0;
}

int tc_sched_check_translated(const struct tc_algo *algo, const struct tc_shape *shape,
			      const struct tc_cost_params *p, const size_t *sizes, int nsizes, double *time_us,
			      struct tc_verify_report *r, struct tc_cost *cost, struct tc_sym_totals *tot,
			      const char **why)
{
	struct tc_verify_report cell = { 0 };
	struct tc_verify_state *v = NULL;
	struct tc_cost_state *c = NULL;
	struct sym_key *keys = NULL;
	struct tc_msg *msgs = NULL;
	uint32_t kcap = 0, mcap = 0;
	const struct sym_entry *e;
	struct tc_step_view view;
	int err, cerr;

	memset(r, 0, sizeof(*r));
	memset(tot, 0, sizeof(*tot));
	pthread_mutex_lock(&sym_lock);
	if (!tc_algo_translated(algo, shape)) {
		*why = "the algorithm has no translation period on this shape";
		err = -EINVAL;
		goto out;
	}
	int mod[TC_MAX_DIMS];

	sym_eff_mod(algo, shape, mod);
	e = sym_get(algo, shape, mod);
	err = e->err;
	if (err) {
		*why = e->why;
		goto out;
	}
	/* the blocks: every block of the cell's sources, replayed */
	cerr = tc_verify(e->s, &cell);
	if (cerr && cerr != -EPROTO) {
		err = cerr;
		*why = "verifying the cell's blocks failed";
		goto out;
	}
	/* the links, loads and price: the whole schedule's messages */
	err = tc_verify_begin_links(e->s, r, &v);
	if (!err)
		err = tc_cost_begin(e->s, p, sizes, nsizes, &c);
	for (uint32_t st = 0; !err && st < e->s->nsteps; st++) {
		err = sym_whole_step(e, st, &keys, &kcap, &msgs, &mcap, &view);
		if (!err)
			err = tc_verify_step(v, &view);
		if (!err)
			err = tc_cost_step(c, &view);
		for (uint32_t i = 0; !err && i < view.nmsgs; i++)
			tot->blks += view.msgs[i].nblk;
		tot->msgs += err ? 0 : view.nmsgs;
	}
	if (err) {
		*why = "checking the whole schedule's messages failed";
		if (c)
			tc_cost_end(c, NULL, NULL, NULL);
		if (v)
			tc_verify_end(v);
		tc_verify_report_free(r);
		goto out;
	}
	tot->steps = e->s->nsteps;
	tot->cell_blks = e->s->nblks;
	tot->cell_nodes = e->ncls;
	tot->cite = e->s->cite;
	tot->claims = e->s->claims;
	err = tc_cost_end(c, e->s, time_us, cost);
	cerr = tc_verify_end(v);
	if (!cell.ok && r->ok) {
		r->ok = 0;
		memcpy(r->first_violation, cell.first_violation, sizeof(r->first_violation));
	}
	if (!err && !r->ok)
		err = tc_err(-EPROTO, "%s", r->first_violation);
	else if (!err)
		err = cerr;
out:
	pthread_mutex_unlock(&sym_lock);
	tc_verify_report_free(&cell);
	free(keys);
	free(msgs);
	return err;
}
