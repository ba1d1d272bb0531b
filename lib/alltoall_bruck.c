// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Bruck's log-step complete exchange (Bruck, Ho, Kipnis, Upfal, Weathersby,
 * "Efficient algorithms for all-to-all communications in multiport
 * message-passing systems", IEEE TPDS 8(11), 1997, radix 2): the
 * startup-optimal baseline the torus papers compare against (000 Sec. I, indirect
 * message-combining algorithms).
 *
 * Rank r's block for rank d has index i = (d - r) mod P. In step k
 * (0..ceil(log2 P)-1) every rank sends to rank + 2^k (mod P) one message with
 * every block it holds whose index has bit k set; a block keeps its index, so
 * after the steps of its set bits it has arrived at r + i = d. Ranks are
 * row-major node numbers, so a step is a shift permutation of the nodes; its
 * messages are routed dimension-ordered through intermediate routers, share
 * links, and a block does not move along a shortest path overall.
 *
 * Rearrangement, as Bruck et al. count it: the local rotation before the first
 * step (P blocks), packing the blocks with bit k set before step k, and the
 * inverse rotation after the last step (P blocks).
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
	int64_t packed = 0;
	int8_t route[TC_MAX_DIMS];
	struct tc_sched *s;
	int err;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "bruck: shape not initialised by tc_shape_init";
		return -EINVAL;
	}

	s = tc_sched_new(shape, TC_COLL_ALLTOALL, "bruck",
			 "baseline: Bruck et al. 1997 radix-2 index algorithm, routed messages (000 Sec. I)",
			 TC_CLAIM_PERMUTATION);
	if (!s) {
		*why = "bruck: cannot allocate the schedule";
		return -ENOMEM;
	}
	for (int k = 0; (1 << k) < p; k++) {
		const int dist = 1 << k, low = dist - 1;

		err = tc_sched_step(s);
		if (err < 0)
			goto err_free;
		for (int x = 0; x < p; x++) {
			route_split_ties(shape, x, (x + dist) % p, route);
			err = tc_sched_msg(s, x, (x + dist) % p, route);
			if (err < 0)
				goto err_free;
			/* x holds, for every index i, the block of origin x - (i & low) */
			for (int i = 1; i < p; i++) {
				int o, d;

				if (!(i & dist))
					continue;
				o = (x - (i & low) + p) % p;
				d = (o + i) % p;
				err = tc_sched_blk(s, o, d);
				if (err < 0)
					goto err_free;
				if (x == 0)
					packed++;
			}
		}
	}
	s->rearranged_blocks = 2 * (int64_t)p + packed;
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

const struct tc_algo tc_algo_bruck_a2a = {
	.name = "bruck",
	.coll = TC_COLL_ALLTOALL,
	.summary = "baseline: Bruck's log-step exchange",
	.build = build,
};
