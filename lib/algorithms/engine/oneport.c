// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Shared engine of the one-port complete-exchange family (Liu et al., Multidimensional Tori): turns block
 * itineraries into a schedule, and the AR1 itinerary every member uses on
 * its logical rings. See oneport.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "algorithms/engine/oneport.h"

/* One (step, sender) pair: where its message goes and how many blocks. */
struct op_slot {
	int32_t dst;
	int16_t dim;
	int16_t delta;
	uint32_t cnt;
};

int tc_op_all_wrap(const struct tc_shape *shape)
{
	for (int d = 0; d < shape->ndims; d++)
		if (!(shape->wrap_mask & (1u << d)))
			return 0;
	return 1;
}

int tc_op_ar1_steps(int q)
{
	if (q <= 1)
		return 0;
	/* first exchange, ceil(q/4) - 1 ring steps, last exchange */
	return (q + 3) / 4 + 1;
}

int tc_op_ar1_hops(int q, int i, int j, int dim, int sigma, int base, struct tc_op_hop *h)
{
	int half = q / 2, last = tc_op_ar1_steps(q) - 1;
	int r, dist, dir, n = 0;

	if (q <= 1)
		return 0;
	r = ((j - i) % q + q) % q;
	if (!r)
		return 0;
	/*
	 * Even ring indices carry blocks in the + direction, odd ones in the -
	 * direction (the listing's orientation, Fig. 2). The antipode (r = q/2)
	 * is split by the sender's parity: even senders send it -, odd +.
	 */
	if (r < half || (r == half && (i & 1))) {
		dir = 1;
		dist = r;
	} else {
		dir = -1;
		dist = q - r;
	}
	/* Step 0: an odd node hands its + blocks to its right (even)
	 * neighbour, an even node its - blocks to its left (odd) one. */
	if ((dir > 0) == (i & 1)) {
		h[n++] = (struct tc_op_hop){ base, dim, dir * sigma };
		dist--;
	}
	/* Ring steps 1..: even nodes send two ring places +, odd ones -. */
	for (int k = 1; k <= dist / 2; k++)
		h[n++] = (struct tc_op_hop){ base + k, dim, 2 * dir * sigma };
	/* Last step: one ring place to an odd destination (+) or an even one (-). */
	if (dist & 1)
		h[n++] = (struct tc_op_hop){ base + last, dim, dir * sigma };
	return n;
}

/* Plan block {o, d}, check its hops, and record in path[k] the node hop k
 * arrives at. Returns the number of hops or -errno. */
static int plan_one(const struct tc_shape *sh, const int *stride, tc_op_plan_fn plan, const void *ctx, int o, int d,
		    struct tc_op_hop *hops, int *path, int nsteps, int max_hops, const char *algo)
{
	int n = plan(ctx, sh, o, d, hops), prev = -1, at = o;

	if (n < 0)
		return n;
	if (n > max_hops)
		return tc_err(-EINVAL, "%s: block {%d,%d}: %d hops", algo, o, d, n);
	for (int k = 0; k < n; k++) {
		const struct tc_op_hop *hp = &hops[k];
		int len, c;

		if (hp->step <= prev || hp->step >= nsteps || hp->dim < 0 || hp->dim >= sh->ndims)
			return tc_err(-EINVAL, "%s: block {%d,%d}: bad hop %d (step %d, dim %d)", algo,
						  o, d, k, hp->step, hp->dim);
		len = sh->dims[hp->dim];
		if (!hp->delta || abs(hp->delta) >= len || abs(hp->delta) > 127)
			return tc_err(-EINVAL, "%s: block {%d,%d}: bad hop length %d", algo, o, d,
						  hp->delta);
		prev = hp->step;
		c = at / stride[hp->dim] % len;
		at += (((c + hp->delta) % len + len) % len - c) * stride[hp->dim];
		path[k] = at;
	}
	if (at != d)
		return tc_err(-EINVAL, "%s: block {%d,%d} ends at node %d", algo, o, d, at);
	return n;
}

/* The working state of tc_op_emit: per (step, sender) slot its message. */
struct op_emit {
	const struct tc_shape *shape;
	const char *algo;
	int nsteps, max_hops;
	tc_op_plan_fn plan;
	const void *ctx;
	struct tc_sched *s; /* the schedule being built */
	int stride[TC_MAX_DIMS];
	struct tc_op_hop *hops;
	int *path;
	struct op_slot *slot;
	uint32_t *pos;
	struct tc_blk *blk;
	size_t nslots, total;
};

/* Record the hops of the block from o to d in the slots (at: where it is). */
static int op_emit_slots(struct op_emit *e, int o, int d)
{
	const int nodes = e->shape->nodes;
	int n = plan_one(e->shape, e->stride, e->plan, e->ctx, o, d, e->hops, e->path, e->nsteps, e->max_hops,
			 e->algo);

	for (int k = 0, at = o; k < n; k++) {
		struct op_slot *sl = &e->slot[(size_t)e->hops[k].step * nodes + at];
		int next = e->path[k];

		if (!sl->cnt) {
			sl->dst = next;
			sl->dim = (int16_t)e->hops[k].dim;
			sl->delta = (int16_t)e->hops[k].delta;
		} else if (sl->dst != next || sl->dim != e->hops[k].dim || sl->delta != e->hops[k].delta) {
			return tc_err(-EINVAL, "%s: step %d: node %d sends to both %d and %d", e->algo, e->hops[k].step,
				      at, sl->dst, next);
		}
		if (sl->cnt == UINT32_MAX || e->total >= UINT32_MAX)
			return tc_err(-EOVERFLOW, "%s: too many blocks", e->algo);
		sl->cnt++;
		e->total++;
		at = next;
	}
	return n < 0 ? n : 0;
}

/* Pass 2: place each block of each message, in (step, sender) order. */
static int op_emit_place(struct op_emit *e)
{
	const int nodes = e->shape->nodes;

	for (size_t i = 0, acc = 0; i < e->nslots; i++) {
		e->pos[i] = (uint32_t)acc;
		acc += e->slot[i].cnt;
	}
	e->blk = malloc((e->total ? e->total : 1) * sizeof(*e->blk));
	if (!e->blk)
		return tc_err(-ENOMEM, "%s: out of memory for %zu block moves", e->algo, e->total);
	for (int o = 0; o < nodes; o++) {
		for (int d = 0; d < nodes && tc_sched_src_kept(e->s, o); d++) {
			int n, at = o;

			if (d == o)
				continue;
			n = e->plan(e->ctx, e->shape, o, d, e->hops);
			for (int k = 0; k < n; k++) {
				size_t i = (size_t)e->hops[k].step * nodes + at;

				e->blk[e->pos[i]++] = (struct tc_blk){ o, d };
				at = e->slot[i].dst;
			}
		}
	}
	return 0;
}

/* Pass 3: the schedule, one message per used slot. */
static int op_emit_sched(const struct op_emit *e, struct tc_sched *s)
{
	const int nodes = e->shape->nodes;
	int err;

	for (int st = 0, i = 0; st < e->nsteps; st++) {
		err = tc_sched_step(s);
		if (err < 0)
			return err;
		for (int src = 0; src < nodes; src++, i++) {
			const struct op_slot *sl = &e->slot[i];
			int8_t route[TC_MAX_DIMS] = { 0 };
			uint32_t first = e->pos[i] - sl->cnt;

			if (!sl->cnt)
				continue;
			route[sl->dim] = (int8_t)sl->delta;
			err = tc_sched_msg(s, src, sl->dst, route);
			if (err < 0)
				return err;
			for (uint32_t b = 0; b < sl->cnt; b++) {
				err = tc_sched_blk(s, e->blk[first + b].a, e->blk[first + b].b);
				if (err)
					return err;
			}
		}
	}
	return tc_sched_finish(s);
}

static void op_emit_free(struct op_emit *e)
{
	free(e->hops);
	free(e->path);
	free(e->slot);
	free(e->pos);
	free(e->blk);
}

int tc_op_emit(const struct tc_shape *shape, const char *algo, const char *cite, unsigned int claims, int nsteps,
	       int max_hops, tc_op_plan_fn plan, const void *ctx, struct tc_sched **out)
{
	struct op_emit e = { .shape = shape, .algo = algo, .nsteps = nsteps, .max_hops = max_hops, .plan = plan,
			     .ctx = ctx, .nslots = (size_t)nsteps * shape->nodes };
	struct tc_sched *s = NULL;
	int err = 0;

	e.stride[shape->ndims - 1] = 1;
	for (int d = shape->ndims - 2; d >= 0; d--)
		e.stride[d] = e.stride[d + 1] * shape->dims[d + 1];
	/* first: a source-restricted build (tc_sched_build_sources) keeps some origins only */
	s = tc_sched_new(shape, TC_ALLTOALL, algo, cite, claims);
	if (!s)
		return -ENOMEM;
	e.s = s;
	e.slot = calloc(e.nslots + 1, sizeof(*e.slot));
	e.pos = calloc(e.nslots + 1, sizeof(*e.pos));
	e.hops = calloc((size_t)max_hops + 1, sizeof(*e.hops));
	e.path = calloc((size_t)max_hops + 1, sizeof(*e.path));
	if (!e.slot || !e.pos || !e.hops || !e.path)
		err = tc_err(-ENOMEM, "%s: out of memory for %zu slots", algo, e.nslots);
	/* Pass 1: who sends where in which step, and how many blocks. */
	for (int o = 0; !err && o < shape->nodes; o++)
		for (int d = 0; !err && d < shape->nodes && tc_sched_src_kept(s, o); d++)
			if (d != o)
				err = op_emit_slots(&e, o, d);
	if (!err)
		err = op_emit_place(&e);
	if (!err)
		err = op_emit_sched(&e, s);
	op_emit_free(&e);
	if (err) {
		tc_sched_free(s);
		return err;
	}
	*out = s;
	return 0;
}

int tc_op_mt_init(struct tc_op_mt *mt, const struct tc_shape *shape, int first)
{
	int k = shape->ndims;

	mt->k = k;
	mt->first = first;
	mt->ar1_len = 0;
	mt->max_hops = 0;
	for (int d = 0; d < k; d++) {
		int n = shape->dims[d];

		if (n != k && n % (2 * k))
			return -EOPNOTSUPP;
		if (tc_op_ar1_steps(n / k) > mt->ar1_len)
			mt->ar1_len = tc_op_ar1_steps(n / k);
		mt->max_hops += tc_op_ar1_max_hops(n / k) + k;
	}
	mt->sub_len = k - 1;
	return 0;
}

int tc_op_mt_nsteps(const struct tc_op_mt *mt)
{
	return mt->k * (mt->ar1_len + mt->sub_len);
}

/*
 * Phase 2 in one dimension of the sub-mesh: from position a to b of the
 * k-node line. The line is used as a one-way ring each step: a cyclic
 * shift by +1 (position k-1 sends back to 0 along the line's - links, which
 * the shift leaves free; on a k-ring through the wrap link) is a
 * contention-free permutation, and so is the shift by -1. The first
 * f = floor(k/2) steps shift +1 and carry every block whose cyclic distance
 * d = (b - a) mod k is at most f, leaving in step f - d so all arrive at
 * step f; the last g = k-1-f steps shift -1 for the rest. Step t of the +
 * part carries t blocks per node and origin, so a dimension costs
 * f(f+1)/2 + g(g+1)/2 = floor(k^2/4) units of N/k in k-1 steps: the
 * paper's linear-array figure. For k = 3 it is Sec. 5.2's pair of cyclic
 * shifts, for k = 2 one exchange.
 */
static int mt_sub_hops(const struct tc_op_mt *mt, int len, int a, int b, int dim, int base, struct tc_op_hop *h)
{
	int k = mt->k, f = k / 2, g = k - 1 - f, dist = ((b - a) % k + k) % k, n = 0;

	if (!dist)
		return 0;
	if (dist <= f) {
		for (int t = f - dist; t < f; t++, a = (a + 1) % k)
			h[n++] = (struct tc_op_hop){ base + t, dim, a == k - 1 ? (len == k ? 1 : 1 - k) : 1 };
	} else {
		dist = k - dist;
		for (int t = f + g - dist; t < f + g; t++, a = (a + k - 1) % k)
			h[n++] = (struct tc_op_hop){ base + t, dim, a == 0 ? (len == k ? -1 : k - 1) : -1 };
	}
	return n;
}

int tc_op_mt_plan(const void *ctx, const struct tc_shape *shape, int o, int d, struct tc_op_hop *hops)
{
	const struct tc_op_mt *mt = ctx;
	int co[TC_MAX_DIMS], cd[TC_MAX_DIMS];
	int k = mt->k, grp = 0, n = 0, base;

	tc_shape_coords(shape, o, co);
	tc_shape_coords(shape, d, cd);
	for (int i = 0; i < k; i++)
		grp += co[i];
	grp %= k;
	for (int t = 0; t < k; t++) {
		int dim = (grp + t + mt->first) % k, len = shape->dims[dim];
		int i = co[dim] / k, j = cd[dim] / k;

		n += tc_op_ar1_hops(len / k, i, j, dim, k, t * mt->ar1_len, hops + n);
		co[dim] = j * k + co[dim] % k;
	}
	base = k * mt->ar1_len;
	for (int dim = 0; dim < k; dim++)
		n += mt_sub_hops(mt, shape->dims[dim], co[dim] % k, cd[dim] % k, dim, base + dim * mt->sub_len,
				 hops + n);
	return n;
}
