// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Direct exchange: every block goes in its own message straight to its
 * destination, routed dimension-ordered along a shortest path through the
 * intermediate routers (the wormhole model of 000 Sec. II; the baseline of
 * 000 Sec. I (direct algorithms [3, 4]) that the torus algorithms beat).
 *
 * All-port nodes: one step, every node posts its P-1 messages at once; the
 * messages share links and the cost model serializes them (the busiest link
 * sets the transmission time).
 * One-port nodes: a permutation per step, P-1 steps. Step t moves every node
 * by the same offset vector g_t (coordinate-wise mod n_d, g_t running through
 * every non-zero offset in row-major order), so every message of a step has the
 * same route shape; on a mesh the "translation" wraps in node numbering only,
 * the message itself takes the straight mesh path.
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

static int add(struct tc_sched *s, int src, int dst)
{
	int8_t route[TC_MAX_DIMS];
	int err;

	route_split_ties(&s->shape, src, dst, route);
	err = tc_sched_msg(s, src, dst, route);

	if (err < 0)
		return err;
	return tc_sched_blk(s, src, dst);
}

static int build_all_port(struct tc_sched *s)
{
	const int p = s->shape.nodes;
	int err;

	err = tc_sched_step(s);
	if (err < 0)
		return err;
	for (int r = 0; r < p; r++)
		for (int d = 0; d < p; d++) {
			if (d == r)
				continue;
			err = add(s, r, d);
			if (err < 0)
				return err;
		}
	return 0;
}

static int build_one_port(struct tc_sched *s)
{
	const struct tc_shape *sh = &s->shape;
	int g[TC_MAX_DIMS], c[TC_MAX_DIMS];
	int err;

	for (int t = 1; t < sh->nodes; t++) {
		err = tc_sched_step(s);
		if (err < 0)
			return err;
		tc_shape_coords(sh, t, g);
		for (int r = 0; r < sh->nodes; r++) {
			tc_shape_coords(sh, r, c);
			for (int d = 0; d < sh->ndims; d++)
				c[d] += g[d];
			err = add(s, r, tc_shape_node(sh, c));
			if (err < 0)
				return err;
		}
	}
	return 0;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct tc_sched *s;
	int err;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "direct: shape not initialised by tc_shape_init";
		return -EINVAL;
	}

	if (shape->one_port)
		s = tc_sched_new(shape, TC_COLL_ALLTOALL, "direct",
				 "baseline: direct routed messages, one-port: one translation per step (000 Sec. I)",
				 TC_CLAIM_PERMUTATION | TC_CLAIM_SHORTEST);
	else
		s = tc_sched_new(shape, TC_COLL_ALLTOALL, "direct",
				 "baseline: direct routed messages, all-port: every block in one step (000 Sec. I)",
				 TC_CLAIM_SHORTEST);
	if (!s) {
		*why = "direct: cannot allocate the schedule";
		return -ENOMEM;
	}
	err = shape->one_port ? build_one_port(s) : build_all_port(s);
	if (err >= 0)
		err = tc_sched_finish(s);
	if (err < 0) {
		tc_sched_free(s);
		*why = "direct: building the schedule failed";
		return err;
	}
	*out = s;
	return 0;
}

const struct tc_algo tc_algo_direct = {
	.name = "direct",
	.coll = TC_COLL_ALLTOALL,
	.summary = "baseline: every block sent directly, routed dimension-ordered",
	.build = build,
};
