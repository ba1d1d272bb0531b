// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pairwise exchange: the direct baseline the torus papers compare against
 * (000 Sec. I, direct algorithms [3, 4]; UCC's alltoall_pairwise). In step i (1..P-1)
 * rank r sends its block for (r+i) mod P straight to that rank and receives
 * the block of (r-i) mod P. Rank order is the row-major node order, so a step
 * is a permutation but not a torus translation: its messages are routed
 * dimension-ordered along shortest paths and share links, and the cost model
 * serializes them. Works on every shape and port model (each step a node
 * sends one and receives one message).
 */
#include <errno.h>

#include "algos.h"

/*
 * Shortest dimension-ordered route from src to dst; where both directions of
 * an even ring are shortest (the antipode), a source with an even coordinate
 * goes + and an odd one goes -, so antipodal traffic is spread over both
 * directions (000 Sec. III reading note: sending it all one way costs more).
 */
static void route_split_ties(const struct tc_shape *sh, int src, int dst, int8_t *route)
{
	int cs[TC_MAX_DIMS], cd[TC_MAX_DIMS];

	tc_shape_coords(sh, src, cs);
	tc_shape_coords(sh, dst, cd);
	for (int d = 0; d < TC_MAX_DIMS; d++) {
		int delta = d < sh->ndims ? tc_shape_delta(sh, d, cs[d], cd[d]) : 0;

		if ((sh->wrap_mask & (1u << d)) && 2 * delta == sh->dims[d] && (cs[d] & 1))
			delta = -delta;
		route[d] = (int8_t)delta;
	}
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const int p = shape->nodes;
	int8_t route[TC_MAX_DIMS];
	struct tc_sched *s;
	int err;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "pairwise: shape not initialised by tc_shape_init";
		return -EINVAL;
	}

	s = tc_sched_new(shape, TC_COLL_ALLTOALL, "pairwise", "baseline: pairwise exchange, step i to rank+i (000 Sec. I)",
			 TC_CLAIM_PERMUTATION | TC_CLAIM_SHORTEST);
	if (!s) {
		*why = "pairwise: cannot allocate the schedule";
		return -ENOMEM;
	}
	for (int i = 1; i < p; i++) {
		err = tc_sched_step(s);
		if (err < 0)
			goto err_free;
		for (int r = 0; r < p; r++) {
			int d = (r + i) % p;

			route_split_ties(shape, r, d, route);
			err = tc_sched_msg(s, r, d, route);
			if (err < 0)
				goto err_free;
			err = tc_sched_blk(s, r, d);
			if (err < 0)
				goto err_free;
		}
	}
	err = tc_sched_finish(s);
	if (err < 0)
		goto err_free;
	*out = s;
	return 0;

err_free:
	tc_sched_free(s);
	*why = "pairwise: building the schedule failed";
	return err;
}

const struct tc_algo tc_algo_pairwise = {
	.name = "pairwise",
	.coll = TC_COLL_ALLTOALL,
	.summary = "baseline: pairwise exchange, step i to rank+i",
	.build = build,
};
