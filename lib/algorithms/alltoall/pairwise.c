// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pairwise exchange: the direct baseline the torus papers compare against
 * (Liu et al., All-Port Tori, Sec. I, direct algorithms [3, 4]; UCC's alltoall_pairwise). In step i
 * (1..P-1) rank r sends its block for (r+i) mod P straight to that rank and
 * receives the block of (r-i) mod P. Rank order is the row-major node order,
 * so a step is a permutation but not a torus translation: its messages are
 * routed dimension-ordered along shortest paths (antipodal ties split, see
 * engine/direct.c) and share links, and the cost model serializes them.
 * Works on every shape and port model (each step a node sends one and
 * receives one message).
 */
#include <errno.h>
#include <stdlib.h>

#include "algorithms/algos.h"
#include "algorithms/engine/direct.h"
#include "core/part.h"

#define PAIRWISE_CITE "baseline: pairwise exchange, step i to rank+i (Liu et al., All-Port Tori, Sec. I)"
#define PAIRWISE_CLAIMS (TC_CLAIM_PERMUTATION | TC_CLAIM_SHORTEST)

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const int p = shape->nodes;
	struct tc_dmsg *m = NULL;
	struct tc_sched *s;
	int err = -ENOMEM;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "pairwise: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	s = tc_sched_new(shape, TC_ALLTOALL, "pairwise", PAIRWISE_CITE, PAIRWISE_CLAIMS);
	m = malloc(sizeof(*m) * p);
	if (!s || !m)
		goto err_free;
	for (int i = 1; i < p; i++) {
		for (int r = 0; r < p; r++)
			tc_direct_msg(shape, &m[r], r, r, (r + i) % p);
		err = tc_direct_emit_step(s, m, p, tc_direct_one_block, NULL);
		if (err < 0)
			goto err_free;
	}
err_free:
	return tc_direct_done(s, m, err, out, why, "pairwise: out of memory",
			       "pairwise: building the schedule failed");
}

/* Node n's part: in step i-1 it sends {n, n+i} to n+i and receives {n-i, n} from n-i. */
static int part(struct tc_part *pt, const char **why)
{
	const struct tc_shape *sh = &pt->shape;
	const int p = sh->nodes, n = pt->node;
	int8_t route[TC_MAX_DIMS];
	int err = 0;

	if (p < 2) {
		*why = "pairwise: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	pt->cite = PAIRWISE_CITE;
	pt->claims = PAIRWISE_CLAIMS;
	/* a part filtered to one step (tc_part_only) generates that step alone */
	int lo = tc_part_only_step(pt) >= 0 ? (int)tc_part_only_step(pt) + 1 : 1;
	int hi = tc_part_only_step(pt) >= 0 ? lo + 1 : p;

	for (int i = lo; i < hi && i < p && !err; i++) {
		int to = (n + i) % p, from = (n - i + p) % p;

		err = tc_part_at(pt, i - 1);
		tc_direct_route(sh, n, to, route);
		if (!err)
			err = tc_part_msg(pt, n, to, route);
		if (!err)
			err = tc_part_blk(pt, n, to);
		tc_direct_route(sh, from, n, route);
		if (!err)
			err = tc_part_msg(pt, from, n, route);
		if (!err)
			err = tc_part_blk(pt, from, n);
	}
	if (!err)
		err = tc_part_finish(pt, p - 1);
	if (err)
		*why = "pairwise: building the node's part failed";
	return err;
}

/*
 * The price without the blocks: step i-1 is every node x sending one block to
 * (x + i) mod P, priced as build() adds it (engine/direct.c), O(P) memory.
 */
static int price(const struct tc_shape *shape, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		 double *time_us, struct tc_cost *cost, const char **why)
{
	const int n = shape->nodes;
	struct tc_direct_pricer pr;
	int err;

	err = tc_direct_price_begin(&pr, tc_sched_new(shape, TC_ALLTOALL, "pairwise", PAIRWISE_CITE, PAIRWISE_CLAIMS),
				    (size_t)n, p, sizes, nsizes);
	for (int i = 1; i < n && !err; i++)
		err = tc_direct_price_shift(pr.c, shape, pr.m, pr.v, (uint32_t)(i - 1), i, 1);
	return tc_direct_price_end(&pr, err, time_us, cost, why, "pairwise: out of memory pricing the schedule",
				   "pairwise: pricing the schedule's messages failed");
}

const struct tc_algo tc_algo_pairwise = {
	.name = "pairwise",
	.coll = TC_ALLTOALL,
	.summary = "baseline: pairwise exchange, step i to rank+i",
	.build = build,
	.flags = TC_ALGO_DIRECT_P2,
	.part = part,
	.price = price,
};
