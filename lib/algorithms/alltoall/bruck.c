// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Bruck's log-step complete exchange (Bruck, Ho, Kipnis, Upfal, Weathersby,
 * "Efficient algorithms for all-to-all communications in multiport
 * message-passing systems", IEEE TPDS 8(11), 1997, radix 2): the
 * startup-optimal baseline the torus papers compare against (Liu et al., All-Port Tori, Sec. I, indirect
 * message-combining algorithms).
 *
 * Rank r's block for rank d has index i = (d - r) mod P. In step k
 * (0..ceil(log2 P)-1) every rank sends to rank + 2^k (mod P) one message with
 * every block it holds whose index has bit k set; a block keeps its index, so
 * after the steps of its set bits it has arrived at r + i = d. Ranks are
 * row-major node numbers, so a step is a shift permutation of the nodes; its
 * messages are routed dimension-ordered through intermediate routers
 * (antipodal ties split, link order as in engine/direct.c), share links, and
 * a block does not move along a shortest path overall.
 *
 * Rearrangement, as Bruck et al. count it: the local rotation before the first
 * step (P blocks), packing the blocks with bit k set before step k, and the
 * inverse rotation after the last step (P blocks).
 */
#include <errno.h>
#include <stdlib.h>

#include "algorithms/algos.h"
#include "algorithms/engine/direct.h"
#include "core/cost.h"

#define BRUCK_CITE "baseline: Bruck et al. 1997 radix-2 index algorithm, routed messages (Liu et al., All-Port Tori, Sec. I)"

/* The blocks x forwards in the step for bit dist: every index with that bit set. */
static int bruck_blocks(struct tc_sched *s, const struct tc_dmsg *m, void *arg)
{
	const int p = s->shape.nodes, dist = *(const int *)arg, low = dist - 1;
	int err;

	/* x holds, for every index i, the block of origin x - (i & low) */
	for (int i = 1; i < p; i++) {
		int o;

		if (!(i & dist))
			continue;
		o = (m->src - (i & low) + p) % p;
		err = tc_sched_blk(s, o, (o + i) % p);
		if (err < 0)
			return err;
	}
	return 0;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const int p = shape->nodes;
	struct tc_dmsg *m = NULL;
	int64_t packed = 0;
	struct tc_sched *s;
	int err = -ENOMEM;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "bruck: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	s = tc_sched_new(shape, TC_ALLTOALL, "bruck", BRUCK_CITE, TC_CLAIM_PERMUTATION);
	m = malloc(sizeof(*m) * p);
	if (!s || !m)
		goto err_free;
	for (int dist = 1; dist < p; dist *= 2) {
		for (int x = 0; x < p; x++)
			tc_direct_msg(shape, &m[x], x, x, (x + dist) % p);
		err = tc_direct_emit_step(s, m, p, bruck_blocks, &dist);
		if (err < 0)
			goto err_free;
		for (int i = 1; i < p; i++)
			packed += !!(i & dist);
	}
	s->rearranged_blocks = 2 * (int64_t)p + packed;
err_free:
	return tc_direct_done(s, m, err, out, why, "bruck: out of memory",
			       "bruck: building the schedule failed");
}

/* The blocks x sends in the step for bit dist, as bruck_blocks, into a part. */
static int part_blocks(struct tc_part *pt, int x, int dist)
{
	const int p = pt->shape.nodes, low = dist - 1;
	int err = 0;

	for (int i = dist; i < p && !err; i++) {
		int o;

		if (!(i & dist))
			continue;
		o = (x - (i & low) + p) % p;
		err = tc_part_blk(pt, o, (o + i) % p);
	}
	return err;
}

/* Node n's part: in step k it sends to n + 2^k and receives from n - 2^k. */
static int part(struct tc_part *pt, const char **why)
{
	const int p = pt->shape.nodes, n = pt->node;
	uint32_t k = 0;
	int err = 0;

	if (p < 2) {
		*why = "bruck: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	pt->cite = BRUCK_CITE;
	pt->claims = TC_CLAIM_PERMUTATION;
	for (int dist = 1; dist < p && !err; dist *= 2, k++) {
		if (!tc_part_wants(pt, k))
			continue;
		err = tc_part_at(pt, k);
		if (!err)
			err = tc_direct_part_msg(pt, n, (n + dist) % p);
		if (!err)
			err = part_blocks(pt, n, dist);
		if (!err)
			err = tc_direct_part_msg(pt, (n - dist + p) % p, n);
		if (!err)
			err = part_blocks(pt, (n - dist + p) % p, dist);
	}
	if (!err)
		err = tc_part_finish(pt, k);
	if (err)
		*why = "bruck: building the node's part failed";
	return err;
}

/* How many indices 1..p-1 have the bit dist set: the blocks of every message of its step. */
static int64_t bruck_count(int p, int dist)
{
	int64_t full = (int64_t)(p / (2 * dist)) * dist, rest = p % (2 * dist) - dist;

	return full + (rest > 0 ? rest : 0);
}

/*
 * The price without the blocks: every step's P messages (x -> x + 2^k, each
 * with bruck_count() blocks), routed and ordered as the build emits them,
 * handed to the cost model, with the build's rearrangement. P log P
 * messages, where the whole schedule holds about P^2 log P / 2 block moves.
 */
static int price(const struct tc_shape *shape, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		 double *time_us, struct tc_cost *cost, const char **why)
{
	const int n = shape->nodes;
	struct tc_sched *shell = tc_sched_new(shape, TC_ALLTOALL, "bruck", BRUCK_CITE, TC_CLAIM_PERMUTATION);
	struct tc_direct_pricer pr;
	int64_t packed = 0;
	uint32_t st = 0;
	int err;

	for (int dist = 1; dist < n; dist *= 2)
		packed += bruck_count(n, dist);
	if (shell)
		shell->rearranged_blocks = 2 * (int64_t)n + packed;
	err = tc_direct_price_begin(&pr, shell, (size_t)n, p, sizes, nsizes);
	for (int dist = 1; dist < n && !err; dist *= 2, st++)
		err = tc_direct_price_shift(pr.c, shape, pr.m, pr.v, st, dist, (uint32_t)bruck_count(n, dist));
	return tc_direct_price_end(&pr, err, time_us, cost, why, "bruck: out of memory pricing the schedule",
				   "bruck: pricing the schedule's messages failed");
}

const struct tc_algo tc_algo_bruck_a2a = {
	.name = "bruck",
	.coll = TC_ALLTOALL,
	.summary = "baseline: Bruck's log-step exchange",
	.build = build,
	.part = part,
	.price = price,
};
