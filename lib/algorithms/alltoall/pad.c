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
#include <stdlib.h>
#include <string.h>

#include "algorithms/algos.h"
#include "algorithms/engine/allport.h"
#include "core/part.h"

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
 * Node n's part: where no node is imaginary, the base's part (its
 * generator, renamed); elsewhere the whole schedule's, cut (a padded step
 * can be empty machine-wide, which one node cannot see alone).
 */
static int part(struct tc_part *p, const char **why)
{
	const struct tc_algo *base;
	int err;

	if (p->shape.one_port) {
		*why = "pad: all-port algorithm; the one-port family handles one-port shapes";
		return -EOPNOTSUPP;
	}
	base = pad_same_as(&p->shape);
	if (!base || !base->part)
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
