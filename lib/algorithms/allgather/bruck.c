// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Bruck's concatenation allgather (Bruck, Ho, Kipnis, Upfal, Weathersby,
 * IEEE TPDS 8(11), 1997; recursive doubling for any N): the log-step baseline
 * for all-to-all broadcast (001 compares against Calvin-Perennes-Trystram's
 * recursive algorithm; this is the generic log-step one).
 *
 * After step k a node y holds the blocks of y, y+1, ..., y+min(2^(k+1), N)-1
 * (ranks mod N). In step k (0..ceil(log2 N)-1) node x sends to x - 2^k the
 * min(2^k, N-2^k) blocks of x .. x+2^k-1 it holds. Ranks are row-major node
 * numbers, so each step is a shift permutation of the nodes; the messages are
 * routed dimension-ordered through intermediate routers (antipodal ties split,
 * link order as in engine/direct.c) and share links.
 *
 * No rearrangement is charged: blocks are addressed by origin and land in the
 * receiver's buffer matrix indexed by source (the All-to-All Communication slides' input/output buffer
 * algorithm), so Bruck's final local rotation is not needed.
 */
#include <errno.h>
#include <stdlib.h>

#include "algorithms/algos.h"
#include "algorithms/engine/direct.h"
#include "core/cost.h"

#define BRUCK_CITE \
	"baseline: Bruck et al. 1997 concatenation allgather, routed messages (All-to-All Communication slides, comparisons)"

/* x forwards the blocks of x .. x+cnt-1, all it holds in the step for distance dist. */
static int bruck_blocks(struct tc_sched *s, const struct tc_dmsg *m, void *arg)
{
	const int n = s->shape.nodes, dist = *(const int *)arg;
	const int cnt = dist < n - dist ? dist : n - dist;
	int err;

	for (int j = 0; j < cnt; j++) {
		err = tc_sched_blk(s, (m->src + j) % n, 0);
		if (err < 0)
			return err;
	}
	return 0;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const int n = shape->nodes;
	struct tc_dmsg *m = NULL;
	struct tc_sched *s;
	int err = -ENOMEM;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "bruck: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	s = tc_sched_new(shape, TC_ALLGATHER, "bruck", BRUCK_CITE, TC_CLAIM_PERMUTATION);
	m = malloc(sizeof(*m) * n);
	if (!s || !m)
		goto err_free;
	for (int dist = 1; dist < n; dist *= 2) {
		for (int x = 0; x < n; x++)
			tc_direct_msg(shape, &m[x], x, x, (x - dist + n) % n);
		err = tc_direct_emit_step(s, m, n, bruck_blocks, &dist);
		if (err < 0)
			goto err_free;
	}
err_free:
	return tc_direct_done(s, m, err, out, why, "bruck: out of memory",
			       "bruck: building the schedule failed");
}

/* The blocks x sends in the step for distance dist (as bruck_blocks), into a part. */
static int part_blocks(struct tc_part *pt, int x, int dist)
{
	const int n = pt->shape.nodes, cnt = dist < n - dist ? dist : n - dist;
	int err = 0;

	for (int j = 0; j < cnt && !err; j++)
		err = tc_part_blk(pt, (x + j) % n, 0);
	return err;
}

/* Node x's part: in the step for distance dist it sends to x - dist and receives from x + dist. */
static int part(struct tc_part *pt, const char **why)
{
	const int n = pt->shape.nodes, x = pt->node;
	uint32_t k = 0;
	int err = 0;

	if (n < 2) {
		*why = "bruck: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	pt->cite = BRUCK_CITE;
	pt->claims = TC_CLAIM_PERMUTATION;
	for (int dist = 1; dist < n && !err; dist *= 2, k++) {
		if (!tc_part_wants(pt, k))
			continue;
		err = tc_part_at(pt, k);
		if (!err)
			err = tc_direct_part_msg(pt, x, (x - dist + n) % n);
		if (!err)
			err = part_blocks(pt, x, dist);
		if (!err)
			err = tc_direct_part_msg(pt, (x + dist) % n, x);
		if (!err)
			err = part_blocks(pt, (x + dist) % n, dist);
	}
	if (!err)
		err = tc_part_finish(pt, k);
	if (err)
		*why = "bruck: building the node's part failed";
	return err;
}

/*
 * The price without the blocks: every step's N messages (x -> x - dist,
 * min(dist, N - dist) blocks each), routed and ordered as the build emits
 * them, handed to the cost model. O(N log N) messages in all, where the
 * whole schedule holds N(N-1) block moves.
 */
static int price(const struct tc_shape *shape, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		 double *time_us, struct tc_cost *cost, const char **why)
{
	const int n = shape->nodes;
	struct tc_direct_pricer pr;
	uint32_t st = 0;
	int err;

	err = tc_direct_price_begin(&pr, tc_sched_new(shape, TC_ALLGATHER, "bruck", BRUCK_CITE, TC_CLAIM_PERMUTATION),
				    (size_t)n, p, sizes, nsizes);
	for (int dist = 1; dist < n && !err; dist *= 2, st++)
		err = tc_direct_price_shift(pr.c, shape, pr.m, pr.v, st, n - dist,
					    (uint32_t)(dist < n - dist ? dist : n - dist));
	return tc_direct_price_end(&pr, err, time_us, cost, why, "bruck: out of memory pricing the schedule",
				   "bruck: pricing the schedule's messages failed");
}

const struct tc_algo tc_algo_bruck_ag = {
	.name = "bruck",
	.coll = TC_ALLGATHER,
	.summary = "baseline: Bruck / recursive doubling allgather",
	.build = build,
	.part = part,
	.price = price,
};
