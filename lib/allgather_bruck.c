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
 * routed dimension-ordered through intermediate routers and share links.
 *
 * No rearrangement is charged: blocks are addressed by origin and land in the
 * receiver's buffer matrix indexed by source (001's input/output buffer
 * algorithm), so Bruck's final local rotation is not needed.
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
	const int n = shape->nodes;
	int8_t route[TC_MAX_DIMS];
	struct tc_sched *s;
	int err;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "bruck: shape not initialised by tc_shape_init";
		return -EINVAL;
	}

	s = tc_sched_new(shape, TC_COLL_ALLGATHER, "bruck",
			 "baseline: Bruck et al. 1997 concatenation allgather, routed messages (001 comparisons)",
			 TC_CLAIM_PERMUTATION);
	if (!s) {
		*why = "bruck: cannot allocate the schedule";
		return -ENOMEM;
	}
	for (int dist = 1; dist < n; dist *= 2) {
		const int cnt = dist < n - dist ? dist : n - dist;

		err = tc_sched_step(s);
		if (err < 0)
			goto err_free;
		for (int x = 0; x < n; x++) {
			route_split_ties(shape, x, (x - dist + n) % n, route);
			err = tc_sched_msg(s, x, (x - dist + n) % n, route);
			if (err < 0)
				goto err_free;
			for (int j = 0; j < cnt; j++) {
				err = tc_sched_blk(s, (x + j) % n, 0);
				if (err < 0)
					goto err_free;
			}
		}
	}
	err = tc_sched_finish(s);
	if (err < 0)
		goto err_free;
	*out = s;
	return 0;

err_free:
	tc_sched_free(s);
	*why = "bruck: building the schedule failed";
	return err;
}

const struct tc_algo tc_algo_bruck_ag = {
	.name = "bruck",
	.coll = TC_COLL_ALLGATHER,
	.summary = "baseline: Bruck / recursive doubling allgather",
	.build = build,
};
