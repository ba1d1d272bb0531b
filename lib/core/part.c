// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One node's part of a schedule: building, the canonical order, cutting it
 * from a whole schedule, comparing two (core/part.h says what each means).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/part.h"

struct tc_part *tc_part_new(const struct tc_shape *shape, enum tc_coll_id coll, const char *algo, const char *cite,
			    unsigned int claims, int node)
{
	struct tc_part *p;

	if (!shape || node < 0 || node >= shape->nodes) {
		tc_err(-EINVAL, "%s: node %d is not in the shape", algo ? algo : "?", node);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		tc_err(-ENOMEM, "%s: out of memory for node %d's part", algo ? algo : "?", node);
		return NULL;
	}
	p->shape = *shape;
	p->coll = coll;
	p->algo = algo ? algo : "?";
	p->cite = cite ? cite : "";
	p->claims = claims;
	p->npackets = 1;
	p->node = node;
	p->only_step = -1;
	p->only_peer = -1;
	return p;
}

void tc_part_free(struct tc_part *p)
{
	if (!p)
		return;
	free(p->act_step);
	free(p->act_first);
	free(p->msgs);
	free(p->blks);
	free(p);
}

void tc_part_only(struct tc_part *p, uint32_t step, int peer)
{
	p->only_step = step;
	p->only_peer = peer;
}

int tc_part_wants(const struct tc_part *p, uint32_t step)
{
	return p->only_step < 0 || p->only_step == (int64_t)step;
}

int tc_part_only_peer(const struct tc_part *p)
{
	return p->only_step < 0 ? -1 : p->only_peer;
}

int64_t tc_part_only_step(const struct tc_part *p)
{
	return p->only_step;
}

int tc_part_at(struct tc_part *p, uint32_t step)
{
	if (p->finished)
		return tc_err(-EINVAL, "%s: tc_part_at after tc_part_finish", p->algo);
	p->cur = step;
	return 0;
}

int tc_part_msg(struct tc_part *p, int src, int dst, const int8_t *route)
{
	struct tc_msg *m;

	if (p->finished)
		return tc_err(-EINVAL, "%s: tc_part_msg after tc_part_finish", p->algo);
	if (src != p->node && dst != p->node)
		return tc_err(-EINVAL, "%s: step %u: message %d -> %d is not node %d's", p->algo, p->cur, src, dst,
			      p->node);
	if (src < 0 || src >= p->shape.nodes || dst < 0 || dst >= p->shape.nodes)
		return tc_err(-EINVAL, "%s: step %u: message %d -> %d: node out of range [0, %d)", p->algo, p->cur,
			      src, dst, p->shape.nodes);
	p->dropped = p->only_step >= 0 &&
		     (p->only_step != (int64_t)p->cur || src != p->node || dst != p->only_peer);
	if (p->dropped)
		return 0;
	if (p->nmsgs == UINT32_MAX ||
	    tc_grow((void **)&p->msgs, &p->cap_msgs, p->nmsgs + 1, sizeof(*p->msgs), 64))
		return tc_err(-ENOMEM, "%s: out of memory for %u messages", p->algo, p->nmsgs + 1);
	m = &p->msgs[p->nmsgs];
	memset(m, 0, sizeof(*m));
	m->src = src;
	m->dst = dst;
	m->step = p->cur;
	m->blk_off = p->nblks;
	m->op = TC_MSG_COPY;
	if (route)
		memcpy(m->route, route, sizeof(m->route));
	else
		tc_route_nodes(&p->shape, src, dst, 0, m->route);
	p->nmsgs++;
	return 0;
}

int tc_part_blk(struct tc_part *p, int a, int b)
{
	struct tc_msg *m;

	if (p->finished)
		return tc_err(-EINVAL, "%s: tc_part_blk after tc_part_finish", p->algo);
	if (p->dropped)
		return 0;
	if (!p->nmsgs)
		return tc_err(-EINVAL, "%s: tc_part_blk before any tc_part_msg", p->algo);
	m = &p->msgs[p->nmsgs - 1];
	if (p->nblks == UINT32_MAX ||
	    tc_grow((void **)&p->blks, &p->cap_blks, p->nblks + 1, sizeof(*p->blks), 256))
		return tc_err(-ENOMEM, "%s: out of memory for %u blocks", p->algo, p->nblks + 1);
	p->blks[p->nblks].a = a;
	p->blks[p->nblks].b = b;
	p->nblks++;
	m->nblk++;
	return 0;
}

/* Nodes, route and blocks of message m: 0 or -EINVAL naming it. */
static int part_check_msg(const struct tc_part *p, const struct tc_msg *m)
{
	const struct tc_shape *sh = &p->shape;

	if (m->src == m->dst)
		return tc_err(-EINVAL, "%s: step %u: message %d -> %d: sent to itself", p->algo, m->step, m->src,
			      m->dst);
	for (int d = 0; d < TC_MAX_DIMS; d++) {
		if (d >= sh->ndims && m->route[d])
			return tc_err(-EINVAL, "%s: step %u: message %d -> %d: hops in dimension %d of a %d-D shape",
				      p->algo, m->step, m->src, m->dst, d, sh->ndims);
		if (d < sh->ndims && (sh->wrap_mask & (1u << d)) && abs(m->route[d]) >= sh->dims[d])
			return tc_err(-EINVAL, "%s: step %u: message %d -> %d: %d hops in dimension %d go round the ring",
				      p->algo, m->step, m->src, m->dst, m->route[d], d);
	}
	if (tc_shape_walk(sh, m->src, m->route) != m->dst)
		return tc_err(-EINVAL, "%s: step %u: message %d -> %d: route does not lead there", p->algo, m->step,
			      m->src, m->dst);
	if (m->step >= p->nsteps)
		return tc_err(-EINVAL, "%s: message %d -> %d has step %u of %u", p->algo, m->src, m->dst, m->step,
			      p->nsteps);
	for (uint32_t i = 0; i < m->nblk; i++) {
		const struct tc_blk *b = &p->blks[m->blk_off + i];
		int bad = b->a < 0 || b->a >= sh->nodes;

		if (p->coll == TC_ALLTOALL)
			bad |= b->b < 0 || b->b >= sh->nodes;
		else if (p->coll == TC_ALLGATHER)
			bad |= b->b < 0 || b->b >= p->npackets;
		if (bad)
			return tc_err(-EINVAL, "%s: step %u: message %d -> %d: block {%d,%d} out of range", p->algo,
				      m->step, m->src, m->dst, b->a, b->b);
	}
	return 0;
}

static int cmp_blk(const void *pa, const void *pb)
{
	const struct tc_blk *a = pa, *b = pb;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return (a->b > b->b) - (a->b < b->b);
}

/* Sort key of a message: step, send before receive, peer, route, insertion. */
struct part_key {
	uint32_t step, idx;
	int32_t recv, peer;
	const int8_t *route;
};

static int cmp_key(const void *pa, const void *pb)
{
	const struct part_key *a = pa, *b = pb;
	int c;

	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	if (a->recv != b->recv)
		return a->recv < b->recv ? -1 : 1;
	if (a->peer != b->peer)
		return a->peer < b->peer ? -1 : 1;
	c = memcmp(a->route, b->route, TC_MAX_DIMS);
	if (c)
		return c;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

int tc_part_finish(struct tc_part *p, uint32_t nsteps)
{
	struct part_key *key = NULL;
	struct tc_msg *msgs = NULL;
	struct tc_blk *blks = NULL;
	uint32_t n = 0, nb = 0, i;
	int err;

	if (p->finished)
		return tc_err(-EINVAL, "%s: tc_part_finish called twice", p->algo);
	if (p->npackets < 1)
		return tc_err(-EINVAL, "%s: npackets %d < 1", p->algo, p->npackets);
	p->nsteps = nsteps;
	for (i = 0; i < p->nmsgs; i++) {
		if (p->msgs[i].blk_off + p->msgs[i].nblk > p->nblks)
			return tc_err(-EINVAL, "%s: message %u: blocks beyond the block array", p->algo, i);
		err = part_check_msg(p, &p->msgs[i]);
		if (err)
			return err;
	}
	key = malloc((p->nmsgs + 1) * sizeof(*key));
	msgs = malloc((p->nmsgs + 1) * sizeof(*msgs));
	blks = malloc((p->nblks + 1) * sizeof(*blks));
	if (!key || !msgs || !blks) {
		err = tc_err(-ENOMEM, "%s: out of memory finishing node %d's part", p->algo, p->node);
		goto out;
	}
	for (i = 0; i < p->nmsgs; i++) {
		const struct tc_msg *m = &p->msgs[i];

		if (!m->nblk)
			continue;
		key[n++] = (struct part_key){ .step = m->step,
					      .idx = i,
					      .recv = m->src != p->node,
					      .peer = m->src != p->node ? m->src : m->dst,
					      .route = m->route };
	}
	qsort(key, n, sizeof(*key), cmp_key);
	for (i = 0; i < n; i++) {
		const struct tc_msg *m = &p->msgs[key[i].idx];

		msgs[i] = *m;
		msgs[i].blk_off = nb;
		memcpy(&blks[nb], &p->blks[m->blk_off], m->nblk * sizeof(*blks));
		qsort(&blks[nb], m->nblk, sizeof(*blks), cmp_blk);
		nb += m->nblk;
	}
	free(p->msgs);
	free(p->blks);
	p->msgs = msgs;
	p->blks = blks;
	p->nmsgs = p->cap_msgs = n;
	p->nblks = p->cap_blks = nb;
	msgs = NULL;
	blks = NULL;
	/* the active steps */
	p->nact = 0;
	for (i = 0; i < n; i++)
		p->nact += !i || p->msgs[i].step != p->msgs[i - 1].step;
	p->act_step = malloc((p->nact + 1) * sizeof(*p->act_step));
	p->act_first = malloc((p->nact + 1) * sizeof(*p->act_first));
	if (!p->act_step || !p->act_first) {
		err = tc_err(-ENOMEM, "%s: out of memory finishing node %d's part", p->algo, p->node);
		goto out;
	}
	p->nact = 0;
	for (i = 0; i < n; i++) {
		if (i && p->msgs[i].step == p->msgs[i - 1].step)
			continue;
		p->act_step[p->nact] = p->msgs[i].step;
		p->act_first[p->nact++] = i;
	}
	p->act_first[p->nact] = n;
	p->finished = 1;
	err = 0;
out:
	free(key);
	free(msgs);
	free(blks);
	return err;
}

int tc_part_done(struct tc_part *p, int err, uint32_t nsteps, struct tc_part **out, const char **why,
		 const char *fail_why)
{
	if (err >= 0 && p)
		err = tc_part_finish(p, nsteps);
	else if (err >= 0)
		err = -ENOMEM;
	if (err < 0) {
		tc_part_free(p);
		if (why)
			*why = fail_why;
		return err;
	}
	*out = p;
	return 0;
}

int tc_part_extract(const struct tc_sched *s, int node, struct tc_part **out)
{
	struct tc_part *p;
	int err = 0;

	if (!s->node_first || !s->node_msgs)
		return tc_err(-EINVAL, "schedule %s is not finished", s->algo);
	p = tc_part_new(&s->shape, s->coll, s->algo, s->cite, s->claims, node);
	if (!p)
		return -ENOMEM;
	p->npackets = s->npackets;
	for (uint32_t st = 0; st < s->nsteps && !err; st++) {
		uint32_t a = s->node_first[(size_t)node * s->nsteps + st];
		uint32_t b = s->node_first[(size_t)node * s->nsteps + st + 1];

		tc_part_at(p, st);
		for (uint32_t k = a; k < b && !err; k++) {
			const struct tc_msg *m = &s->msgs[s->node_msgs[k]];

			err = tc_part_msg(p, m->src, m->dst, m->route);
			p->msgs[p->nmsgs - 1].op = m->op;
			p->msgs[p->nmsgs - 1].flags = m->flags;
			for (uint32_t i = 0; i < m->nblk && !err; i++)
				err = tc_part_blk(p, s->blks[m->blk_off + i].a, s->blks[m->blk_off + i].b);
		}
	}
	if (!err)
		err = tc_part_finish(p, s->nsteps);
	if (err) {
		tc_part_free(p);
		return err;
	}
	p->extracted = 1;
	*out = p;
	return 0;
}

int tc_part_equal(const struct tc_part *a, const struct tc_part *b, char *why, size_t len)
{
	if (a->node != b->node || a->coll != b->coll || !tc_shape_equal(&a->shape, &b->shape)) {
		snprintf(why, len, "not the same node, collective or shape");
		return 0;
	}
	if (a->nsteps != b->nsteps || a->npackets != b->npackets) {
		snprintf(why, len, "node %d: %u steps, %d packets against %u, %d", a->node, a->nsteps, a->npackets,
			 b->nsteps, b->npackets);
		return 0;
	}
	for (uint32_t i = 0; i < a->nmsgs || i < b->nmsgs; i++) {
		const struct tc_msg *x = i < a->nmsgs ? &a->msgs[i] : NULL, *y = i < b->nmsgs ? &b->msgs[i] : NULL;

		if (!x || !y) {
			x = x ? x : y;
			snprintf(why, len, "node %d: message %u (step %u, %d -> %d) only in the %s", a->node, i, x->step,
				 x->src, x->dst, i < a->nmsgs ? "first" : "second");
			return 0;
		}
		if (x->step != y->step || x->src != y->src || x->dst != y->dst || x->op != y->op ||
		    memcmp(x->route, y->route, sizeof(x->route)) || x->nblk != y->nblk) {
			snprintf(why, len,
				 "node %d: message %u: step %u, %d -> %d, %u blocks against step %u, %d -> %d, %u blocks (or the route differs)",
				 a->node, i, x->step, x->src, x->dst, x->nblk, y->step, y->src, y->dst, y->nblk);
			return 0;
		}
		for (uint32_t k = 0; k < x->nblk; k++) {
			const struct tc_blk *p = &a->blks[x->blk_off + k], *q = &b->blks[y->blk_off + k];

			if (p->a != q->a || p->b != q->b) {
				snprintf(why, len, "node %d: step %u, %d -> %d: block %u is {%d,%d} against {%d,%d}",
					 a->node, x->step, x->src, x->dst, k, p->a, p->b, q->a, q->b);
				return 0;
			}
		}
	}
	return 1;
}

void tc_part_stats(const struct tc_part *p, struct tc_part_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (uint32_t i = 0; i < p->nmsgs; i++) {
		const struct tc_msg *m = &p->msgs[i];

		if (m->src == p->node) {
			st->msgs_sent++;
			st->blks_sent += m->nblk;
			for (uint32_t k = 0; k < m->nblk; k++)
				st->blks_fwd += p->blks[m->blk_off + k].a != p->node;
		} else {
			st->msgs_recv++;
			st->blks_recv += m->nblk;
		}
	}
	st->active_steps = p->nact;
	st->bytes = sizeof(*p) + (size_t)p->cap_msgs * sizeof(*p->msgs) + (size_t)p->cap_blks * sizeof(*p->blks) +
		    2 * (size_t)(p->nact + 1) * sizeof(uint32_t);
}
