// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Complete exchange on any shape by imaginary nodes (Liu et al., All-Port Tori, Sec. VI: "adding
 * imaginary nodes to compensate the network size"): run an all-port algorithm
 * on the smallest shape it supports that contains this one, and let real nodes
 * play the imaginary nodes' roles.
 *
 *   1-D        AR on the ring of V = max(4, n rounded up to even) nodes;
 *   2-D        AT2 on V0 x V1, each side rounded up to a multiple of 4;
 *   3-D, k-D   allport-kd on the torus of the same sides: it takes any
 *              parity and sides of 2, so no node is imaginary; what pad
 *              adds there is the mesh dimensions (a torus's wrap-around
 *              link contracts to the whole line, below).
 * Rounding k-D sides up (to even, at least 4, as this did) multiplied the
 * virtual nodes by up to 2^k and cost both time and blocks: 2x2x2x2x2 ran
 * allport-kd on 4x4x4x4x4, 1024 virtual nodes, 39 s of CPU to build, for 18
 * blocks where allport-kd on the shape itself moves 9 (bound 8); on every
 * k-D shape measured the same sides give as few or fewer blocks and steps.
 *
 * Mapping (per dimension, n real and V >= n virtual coordinates): virtual
 * coordinate v is hosted by real coordinate host(v) = floor(v * n / V), a
 * contraction: neighbouring virtual nodes land on the same or on neighbouring
 * real nodes, and the virtual wrap-around link (V-1 -> 0) lands on the real
 * one (n-1 -> 0). Real coordinate r plays virtual coordinate
 * emb(r) = ceil(r * V / n) (host(emb(r)) = r); every other virtual node is
 * imaginary: it has no data of its own, receives nothing for itself, and only
 * relays. Only blocks between real nodes are kept.
 *
 * A virtual message u -> w becomes a message host(u) -> host(w) that goes the
 * same way round each wrapping dimension, over the real links its virtual
 * links contract to (on a mesh dimension: the only path); one whose ends share
 * a host is a local move and disappears. Messages of one step with the same
 * ends and route (two virtual nodes on one host) are merged.
 *
 * Correct on every shape, but not contention-free, not always shortest, and a
 * real node may do the work of several virtual ones: the cost model prices
 * that honestly (6x6 on 8x8: 68 blocks for 27, 2.52x; measured
 * 2.37x with another mapping). Claims nothing beyond
 * delivery.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/algos.h"
#include "algorithms/engine/allport.h"
#include "core/part.h"
#include "core/part_sym.h"

struct pad_map {
	const struct tc_shape *real, *virt;
	int *host;  /* virtual node -> real node */
	int *emb;   /* real node -> virtual node */
	int *real_of; /* virtual node -> real node it plays, or -1 (imaginary) */
};

static int host_coord(int v, int n, int V)
{
	return (int)((long long)v * n / V);
}

static int emb_coord(int r, int n, int V)
{
	return (int)(((long long)r * V + n - 1) / n);
}

/* Real hops of a virtual route segment in dimension d from virtual coordinate v. */
static int real_hops(const struct pad_map *m, int d, int v, int h)
{
	int n = m->real->dims[d], V = m->virt->dims[d], cnt = 0, step = h > 0 ? 1 : -1;

	if (!(m->real->wrap_mask & (1u << d)))
		return host_coord(((v + h) % V + V) % V, n, V) - host_coord(v, n, V);
	for (int k = 0; k < abs(h); k++) {
		int a = ((v + k * step) % V + V) % V, b = ((a + step) % V + V) % V;

		if (host_coord(a, n, V) != host_coord(b, n, V))
			cnt++;
	}
	return step * cnt;
}

struct pad_msg {
	int32_t src, dst;
	int8_t route[TC_MAX_DIMS];
	uint32_t vmsg;
};

static int pad_cmp(const void *pa, const void *pb)
{
	const struct pad_msg *a = pa, *b = pb;
	int c;

	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	if (a->dst != b->dst)
		return a->dst < b->dst ? -1 : 1;
	c = memcmp(a->route, b->route, sizeof(a->route));
	if (c)
		return c;
	return a->vmsg < b->vmsg ? -1 : a->vmsg > b->vmsg;
}

/* Translating, one virtual step at a time: the inner build streams into the real schedule. */
struct pad_ctx {
	struct tc_sched *s;
	const struct pad_map *m;
	struct pad_msg *pm;
	uint32_t cap;
};

static int pad_translate(void *arg, const struct tc_sched *vs, const struct tc_step_view *v)
{
	struct pad_ctx *x = arg;
	const struct pad_map *m = x->m;
	const struct tc_shape *vsh = m->virt;
	struct tc_sched *s = x->s;
	uint32_t n = 0;
	int err;

	(void)vs;
	if (tc_grow((void **)&x->pm, &x->cap, v->nmsgs, sizeof(*x->pm), 64))
		return -ENOMEM;
	for (uint32_t i = 0; i < v->nmsgs; i++) {
		const struct tc_msg *vm = &v->msgs[i];
		int vc[TC_MAX_DIMS], any = 0;
		struct pad_msg *p = &x->pm[n];

		memset(p, 0, sizeof(*p));
		tc_shape_coords(vsh, vm->src, vc);
		/* Dimension-ordered: dimension d starts where d-1 ended. */
		for (int d = 0; d < vsh->ndims; d++) {
			p->route[d] = (int8_t)real_hops(m, d, vc[d], vm->route[d]);
			any |= p->route[d] != 0;
		}
		p->src = m->host[vm->src];
		p->dst = m->host[vm->dst];
		p->vmsg = i;
		if (any && p->src != p->dst)
			n++;
	}
	qsort(x->pm, n, sizeof(*x->pm), pad_cmp);
	err = tc_sched_step(s);
	if (err < 0)
		return err;
	err = 0;
	for (uint32_t i = 0; i < n && !err; i++) {
		const struct pad_msg *pm = &x->pm[i];
		const struct tc_msg *vm = &v->msgs[pm->vmsg];

		if (!i || pm->src != pm[-1].src || pm->dst != pm[-1].dst ||
		    memcmp(pm->route, pm[-1].route, sizeof(pm->route))) {
			err = tc_sched_msg(s, pm->src, pm->dst, pm->route);
			if (err < 0)
				break;
			err = 0;
		}
		for (uint32_t k = 0; k < vm->nblk && !err; k++) {
			const struct tc_blk *b = &v->blks[vm->blk_off + k];
			int ra = m->real_of[b->a], rb = m->real_of[b->b];

			if (ra >= 0 && rb >= 0)
				err = tc_sched_blk(s, ra, rb);
		}
	}
	return err < 0 ? err : 0;
}

/* The base algorithm and the virtual shape for a real shape. */
static const struct tc_algo *pad_base(const struct tc_shape *sh, struct tc_shape *vsh)
{
	int dims[TC_MAX_DIMS];
	const struct tc_algo *base;

	for (int d = 0; d < sh->ndims; d++) {
		int n = sh->dims[d] < 4 ? 4 : sh->dims[d];

		dims[d] = sh->ndims >= 3 ? sh->dims[d] : sh->ndims == 2 ? (n + 3) / 4 * 4 : (n + 1) / 2 * 2;
	}
	base = sh->ndims == 1 ? &tc_algo_ar : sh->ndims == 2 ? &tc_algo_at2 : &tc_algo_allport_kd;
	if (tc_shape_init(vsh, sh->ndims, dims, (1u << sh->ndims) - 1, 0))
		return NULL;
	return base;
}

/* Fill m (real and virt set): who hosts each virtual node, and which virtual node each real one plays. */
static int pad_map_init(struct pad_map *m)
{
	const struct tc_shape *shape = m->real, *vsh = m->virt;

	m->host = malloc((size_t)vsh->nodes * sizeof(*m->host));
	m->real_of = malloc((size_t)vsh->nodes * sizeof(*m->real_of));
	m->emb = malloc((size_t)shape->nodes * sizeof(*m->emb));
	if (!m->host || !m->real_of || !m->emb)
		return -ENOMEM;
	for (int v = 0; v < vsh->nodes; v++) {
		int c[TC_MAX_DIMS];

		tc_shape_coords(vsh, v, c);
		for (int d = 0; d < vsh->ndims; d++)
			c[d] = host_coord(c[d], shape->dims[d], vsh->dims[d]);
		m->host[v] = tc_shape_node(shape, c);
		m->real_of[v] = -1;
	}
	for (int r = 0; r < shape->nodes; r++) {
		int c[TC_MAX_DIMS];

		tc_shape_coords(shape, r, c);
		for (int d = 0; d < shape->ndims; d++)
			c[d] = emb_coord(c[d], shape->dims[d], vsh->dims[d]);
		m->emb[r] = tc_shape_node(vsh, c);
		m->real_of[m->emb[r]] = r;
	}
	return 0;
}

static void pad_map_free(struct pad_map *m)
{
	free(m->host);
	free(m->real_of);
	free(m->emb);
}

/* The most virtual nodes one real node hosts: the product of ceil(V / n) over the dimensions. */
static int pad_hosted(const struct pad_map *m)
{
	int hosted = 1;

	for (int d = 0; d < m->real->ndims; d++)
		hosted *= (m->virt->dims[d] + m->real->dims[d] - 1) / m->real->dims[d];
	return hosted;
}

/*
 * The base algorithm where the padded torus is the shape itself (every side
 * wraps and needs no rounding): no node is imaginary, every virtual link is
 * its real one, and a contention-free base has no two messages of a step
 * with the same ends and route to merge, so pad's schedule is the base's.
 * It is then the base's, message for message in the base's order, which
 * auto prices once for both (struct tc_algo.same_as) and whose parts the
 * base's generator makes. NULL elsewhere.
 */
static const struct tc_algo *pad_same_as(const struct tc_shape *sh)
{
	struct tc_shape vsh;
	const struct tc_algo *base;

	if (sh->one_port || sh->wrap_mask != (1u << sh->ndims) - 1)
		return NULL;
	base = pad_base(sh, &vsh);
	if (!base)
		return NULL;
	for (int d = 0; d < sh->ndims; d++)
		if (vsh.dims[d] != sh->dims[d])
			return NULL;
	return base;
}

#define PAD_CITE                                                                                                   \
	"Liu et al., All-Port Tori, Sec. VI (imaginary nodes) over AR/AT2 (Liu et al., All-Port Tori, Sec. III-IV)"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct tc_shape vsh;
	const struct tc_algo *base;
	struct tc_sched *vs = NULL, *s = NULL;
	struct pad_map m = { .real = shape, .virt = &vsh };
	struct pad_ctx x = { .m = &m };
	int err;

	if (shape->one_port) {
		*why = "pad: all-port algorithm; the one-port family handles one-port shapes";
		return -EOPNOTSUPP;
	}
	base = pad_same_as(shape);
	if (base) {
		err = base->build(shape, &s, why);
		if (!err) {
			s->algo = "pad";
			s->cite = PAD_CITE;
			*out = s;
		} else if (err == -ENOMEM) {
			*why = "pad: out of memory building the base algorithm's schedule";
		}
		return err;
	}
	base = pad_base(shape, &vsh);
	if (!base) {
		*why = "pad: the padded shape is too large";
		return -EOPNOTSUPP;
	}
	err = pad_map_init(&m);
	if (err) {
		*why = "pad: out of memory";
		goto out;
	}
	s = tc_sched_new(shape, TC_ALLTOALL, "pad", PAD_CITE, 0);
	if (!s) {
		err = -ENOMEM;
		*why = "pad: out of memory";
		goto out;
	}
	/*
	 * The virtual schedule is never kept whole: each of its steps is
	 * translated as the base algorithm completes it (64x64 over AT2 would
	 * otherwise hold both schedules, 2.8 GB).
	 */
	x.s = s;
	err = tc_sched_build_streamed(base, &vsh, pad_translate, &x, &vs, why);
	if (err) {
		if (err != -EOPNOTSUPP)
			*why = err == -ENOMEM ? "pad: out of memory translating the padded schedule"
					      : "pad: internal error translating the padded schedule";
		tc_sched_free(s);
		s = NULL;
		goto out;
	}
	/* Each real node rearranges for every virtual node it plays. */
	s->rearranged_blocks = vs->rearranged_blocks * pad_hosted(&m);
	err = tc_sched_done(s, 0, &s, why, "pad: internal error finishing the padded schedule");
	if (err)
		s = NULL;
out:
	free(x.pm);
	pad_map_free(&m);
	tc_sched_free(vs);
	if (!err)
		*out = s;
	return err;
}

/*
 * Node r's part where the padded torus is not the shape itself. Real node r
 * plays every virtual node v it hosts (host(v) = r: a box of at most
 * ceil(V / n) coordinates per dimension), so its part is the base's parts
 * of those virtual nodes (the base's own generator), each message
 * translated as pad_translate does: ends to their hosts, route contracted,
 * local moves and blocks with an imaginary end dropped, messages of one step
 * with the same ends and route merged. A message between two real nodes is
 * in the part of the virtual node at its end that r hosts, once.
 *
 * The step numbers are the one global fact: a virtual step whose every
 * message is a local move or carries only blocks with an imaginary end is
 * empty machine-wide and the whole schedule drops it, renumbering the rest.
 * Which steps those are comes once per shape from the base's restricted
 * schedule (core/part_sym.h: every node's messages with the blocks of one
 * translation cell of sources): every block moved in a step is the
 * translate, by a multiple g of the period, of a cell block moved in that
 * step, and whether some translate has both ends real and a message that
 * leaves its host is decided dimension by dimension (pad_blk_real). Time and
 * memory: the restricted schedule's blocks, |cell| times one node's; a step
 * is scanned until its first real block.
 */

/* Real coordinate n's view of virtual coordinate v of V: is it a real node's? */
static int pad_coord_real(int v, int n, int V)
{
	return emb_coord(host_coord(v, n, V), n, V) == v;
}

/*
 * The translates by g (g[d] a multiple of mod[d]) of block {a, b} moved in
 * message x -> y on route: 1 if one has both ends real and its message
 * leaves its host (real route not zero, hosts differ), as pad_translate keeps it.
 */
static int pad_blk_real(const struct pad_map *m, const int *mod, const int *ac, const int *bc, const int *xc,
			const int *yc, const int8_t *route)
{
	int hop = -1, host = -1, two = 0;

	for (int d = 0; d < m->virt->ndims; d++) {
		const int n = m->real->dims[d], V = m->virt->dims[d];
		int valid = 0, anyh = 0, anyr = 0;

		for (int g = 0; g < V; g += mod[d]) {
			int x = (xc[d] + g) % V, y = (yc[d] + g) % V, h, r;

			if (!pad_coord_real((ac[d] + g) % V, n, V) || !pad_coord_real((bc[d] + g) % V, n, V))
				continue;
			valid = 1;
			h = host_coord(x, n, V) != host_coord(y, n, V);
			r = real_hops(m, d, x, route[d]) != 0;
			anyh |= h;
			anyr |= r;
			two |= h && r;
		}
		if (!valid)
			return 0;
		if (anyr)
			hop = hop < 0 || hop == d ? d : TC_MAX_DIMS;
		if (anyh)
			host = host < 0 || host == d ? d : TC_MAX_DIMS;
	}
	/* one dimension where a translate both hops and changes host, or two dimensions doing one each */
	return two || (hop >= 0 && host >= 0 && (hop != host || hop == TC_MAX_DIMS));
}

/* Per padded shape: which virtual steps stay, as real steps. */
struct pad_steps {
	struct pad_steps *next;
	struct tc_shape shape;
	uint32_t nvirt, nreal;
	uint32_t *vstep; /* real step -> virtual step */
	int32_t *rstep;	 /* virtual step -> real step, or -1 (empty machine-wide) */
};

static pthread_mutex_t pad_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pad_steps *pad_head; /* protected by pad_lock; entries never freed or changed */

struct pad_scan {
	const struct pad_map *m;
	struct pad_steps *st;
};

/* tc_sym_cell_visit's callback: mark the steps of the restricted schedule with a real block. */
static int pad_scan_cell(void *arg, const struct tc_sched *cs, const int *mod)
{
	struct pad_scan *x = arg;
	const struct tc_shape *vsh = x->m->virt;
	struct pad_steps *st = x->st;

	st->nvirt = cs->nsteps;
	st->vstep = malloc(((size_t)cs->nsteps + 1) * sizeof(*st->vstep));
	st->rstep = malloc(((size_t)cs->nsteps + 1) * sizeof(*st->rstep));
	if (!st->vstep || !st->rstep)
		return -ENOMEM;
	for (uint32_t s = 0; s < cs->nsteps; s++) {
		int keep = 0;

		for (uint32_t i = cs->step_first[s]; i < cs->step_first[s + 1] && !keep; i++) {
			const struct tc_msg *vm = &cs->msgs[i];
			int xc[TC_MAX_DIMS], yc[TC_MAX_DIMS];

			tc_shape_coords(vsh, vm->src, xc);
			tc_shape_coords(vsh, vm->dst, yc);
			for (uint32_t k = 0; k < vm->nblk && !keep; k++) {
				const struct tc_blk *b = &cs->blks[vm->blk_off + k];
				int ac[TC_MAX_DIMS], bc[TC_MAX_DIMS];

				tc_shape_coords(vsh, b->a, ac);
				tc_shape_coords(vsh, b->b, bc);
				keep = pad_blk_real(x->m, mod, ac, bc, xc, yc, vm->route);
			}
		}
		st->rstep[s] = keep ? (int32_t)st->nreal : -1;
		if (keep)
			st->vstep[st->nreal++] = s;
	}
	return 0;
}

/* The step map of shape (padded to m->virt, over base), made once per shape. */
static int pad_steps_get(const struct pad_map *m, const struct tc_algo *base, const struct pad_steps **out,
			 const char **why)
{
	struct pad_steps *st;
	int err = 0;

	pthread_mutex_lock(&pad_lock);
	for (st = pad_head; st; st = st->next)
		if (tc_shape_equal(&st->shape, m->real))
			break;
	if (!st) {
		struct pad_scan x = { .m = m };

		st = calloc(1, sizeof(*st));
		x.st = st;
		err = st ? tc_sym_cell_visit(base, m->virt, pad_scan_cell, &x, why) : -ENOMEM;
		if (err) {
			if (err == -ENOMEM)
				*why = "pad: out of memory finding the padded schedule's empty steps";
			if (st) {
				free(st->vstep);
				free(st->rstep);
			}
			free(st);
			st = NULL;
		} else {
			st->shape = *m->real;
			st->next = pad_head;
			pad_head = st;
		}
	}
	pthread_mutex_unlock(&pad_lock);
	*out = st;
	return err;
}

/* One block of node r's part before merging: real step, ends, contracted route. */
struct pad_item {
	uint32_t step;
	int32_t src, dst, a, b;
	int8_t route[TC_MAX_DIMS];
};

static int pad_item_cmp(const void *x, const void *y)
{
	const struct pad_item *p = x, *q = y;

	if (p->step != q->step)
		return p->step < q->step ? -1 : 1;
	if (p->src != q->src)
		return p->src < q->src ? -1 : 1;
	if (p->dst != q->dst)
		return p->dst < q->dst ? -1 : 1;
	return memcmp(p->route, q->route, sizeof(p->route));
}

struct pad_items {
	struct pad_item *v;
	uint32_t n, cap;
};

/* The real node playing virtual node v, or -1 (imaginary); its host in *host. */
static int pad_real_of(const struct pad_map *m, int v, int *host)
{
	int c[TC_MAX_DIMS], real = 1;

	tc_shape_coords(m->virt, v, c);
	for (int d = 0; d < m->virt->ndims; d++) {
		real &= pad_coord_real(c[d], m->real->dims[d], m->virt->dims[d]);
		c[d] = host_coord(c[d], m->real->dims[d], m->virt->dims[d]);
	}
	*host = tc_shape_node(m->real, c);
	return real ? *host : -1;
}

/* Virtual node v's part from the base's generator (only: its sends to w in step vs), translated into out. */
static int pad_add_virtual(const struct pad_map *m, const struct tc_algo *base, const struct pad_steps *st, int v,
			   int64_t vs, int w, struct pad_items *out, const char **why)
{
	struct tc_part *q = tc_part_new(m->virt, TC_ALLTOALL, base->name, NULL, 0, v);
	int err;

	if (!q)
		return -ENOMEM;
	if (vs >= 0)
		tc_part_only(q, (uint32_t)vs, w);
	err = base->part(q, why);
	for (uint32_t i = 0; i < q->nmsgs && !err; i++) {
		const struct tc_msg *vm = &q->msgs[i];
		struct pad_item it = { 0 };
		int vc[TC_MAX_DIMS], any = 0, dummy;

		if (st->rstep[vm->step] < 0)
			continue; /* cannot carry a real block: that step is empty machine-wide */
		tc_shape_coords(m->virt, vm->src, vc);
		for (int d = 0; d < m->virt->ndims; d++) {
			it.route[d] = (int8_t)real_hops(m, d, vc[d], vm->route[d]);
			any |= it.route[d] != 0;
		}
		pad_real_of(m, vm->src, &it.src);
		pad_real_of(m, vm->dst, &it.dst);
		if (!any || it.src == it.dst)
			continue;
		it.step = (uint32_t)st->rstep[vm->step];
		for (uint32_t k = 0; k < vm->nblk; k++) {
			const struct tc_blk *b = &q->blks[vm->blk_off + k];

			it.a = pad_real_of(m, b->a, &dummy);
			it.b = pad_real_of(m, b->b, &dummy);
			if (it.a < 0 || it.b < 0)
				continue;
			if (tc_grow((void **)&out->v, &out->cap, out->n + 1, sizeof(*out->v), 256)) {
				err = -ENOMEM;
				break;
			}
			out->v[out->n++] = it;
		}
	}
	tc_part_free(q);
	return err;
}

/* The virtual nodes real node r hosts: per dimension emb(r_d) .. emb(r_d + 1) - 1. */
static int pad_hosted_box(const struct pad_map *m, int r, int *lo, int *hi)
{
	int c[TC_MAX_DIMS], count = 1;

	tc_shape_coords(m->real, r, c);
	for (int d = 0; d < m->real->ndims; d++) {
		lo[d] = emb_coord(c[d], m->real->dims[d], m->virt->dims[d]);
		hi[d] = emb_coord(c[d] + 1, m->real->dims[d], m->virt->dims[d]);
		count *= hi[d] - lo[d];
	}
	return count;
}

/* The i-th virtual node of the box lo..hi. */
static int pad_box_node(const struct pad_map *m, const int *lo, const int *hi, int i)
{
	int c[TC_MAX_DIMS];

	for (int d = m->virt->ndims - 1; d >= 0; d--) {
		c[d] = lo[d] + i % (hi[d] - lo[d]);
		i /= hi[d] - lo[d];
	}
	return tc_shape_node(m->virt, c);
}

static int part_padded(struct tc_part *p, const struct tc_algo *base, const struct tc_shape *vsh, const char **why)
{
	struct pad_map m = { .real = &p->shape, .virt = vsh };
	struct pad_items it = { NULL, 0, 0 };
	const struct pad_steps *st;
	int lo[TC_MAX_DIMS], hi[TC_MAX_DIMS], plo[TC_MAX_DIMS], phi[TC_MAX_DIMS], nh, err;
	int64_t only = tc_part_only_step(p), vs = -1;

	if (!base->part)
		return TC_PART_WHOLE;
	err = pad_steps_get(&m, base, &st, why);
	if (err)
		return err;
	p->cite = PAD_CITE;
	p->claims = 0;
	nh = pad_hosted_box(&m, p->node, lo, hi);
	if (only >= 0 && only < st->nreal) {
		/* the local check: what r sends the peer in one step, from the base's single messages */
		int np = pad_hosted_box(&m, tc_part_only_peer(p), plo, phi);

		vs = st->vstep[only];
		for (int i = 0; i < nh && !err; i++)
			for (int j = 0; j < np && !err; j++)
				err = pad_add_virtual(&m, base, st, pad_box_node(&m, lo, hi, i), vs,
						      pad_box_node(&m, plo, phi, j), &it, why);
	} else if (only < 0) {
		for (int i = 0; i < nh && !err; i++)
			err = pad_add_virtual(&m, base, st, pad_box_node(&m, lo, hi, i), -1, -1, &it, why);
	}
	if (err) {
		free(it.v);
		if (err == -ENOMEM)
			*why = "pad: out of memory building the node's part";
		return err;
	}
	qsort(it.v, it.n, sizeof(*it.v), pad_item_cmp);
	for (uint32_t i = 0; i < it.n && !err; i++) {
		const struct pad_item *x = &it.v[i];

		if (!i || pad_item_cmp(x, x - 1)) {
			err = tc_part_at(p, x->step);
			if (!err)
				err = tc_part_msg(p, x->src, x->dst, x->route);
		}
		if (!err)
			err = tc_part_blk(p, x->a, x->b);
	}
	free(it.v);
	if (!err)
		err = tc_part_finish(p, st->nreal);
	if (err)
		*why = "pad: building the node's part failed";
	return err;
}

/*
 * Node n's part: where no node is imaginary and no side is a mesh, the
 * base's part (its generator, renamed); elsewhere from the parts of the
 * virtual nodes it hosts (part_padded).
 */
static int part(struct tc_part *p, const char **why)
{
	const struct tc_algo *base;
	struct tc_shape vsh;
	int err;

	if (p->shape.one_port) {
		*why = "pad: all-port algorithm; the one-port family handles one-port shapes";
		return -EOPNOTSUPP;
	}
	base = pad_same_as(&p->shape);
	if (!base) {
		base = pad_base(&p->shape, &vsh);
		if (!base) {
			*why = "pad: the padded shape is too large";
			return -EOPNOTSUPP;
		}
		return part_padded(p, base, &vsh, why);
	}
	if (!base->part)
		return TC_PART_WHOLE;
	err = base->part(p, why);
	if (!err) {
		p->algo = "pad";
		p->cite = PAD_CITE;
	}
	return err;
}

const struct tc_algo tc_algo_pad = {
	.name = "pad",
	.coll = TC_ALLTOALL,
	.summary = "any shape: AR/AT2/allport-kd on the padded torus, imaginary nodes hosted by real ones (Liu et al., All-Port Tori, Sec. VI)",
	.build = build,
	.part = part,
	.same_as = pad_same_as,
};
