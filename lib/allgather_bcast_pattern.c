// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * All-to-all broadcast by the broadcast pattern, all-port 2D meshes and tori
 * (001_5d5eed7140d282e9.txt, "Broadcast Pattern", cases 1-3 with U, I and
 * mod2, Theorems 2-3, Corollaries 1-2).
 *
 * A message from (x0, y0) that reaches (x, y) is relayed by a rule that only
 * depends on the offset (dx, dy) = (x - x0, y - y0):
 *   case 1, dx = dy = 0:   to all four neighbours;
 *   case 2, one of them 0: along the axis and to one side (the side alternates
 *                          with the parity of the offset);
 *   case 3, neither 0:     to one neighbour, moving away from the origin in x
 *                          or in y by the parity of dx + dy.
 * In an infinite mesh this is a spanning tree in which every node at
 * distance d hangs off one node at distance d - 1 (Theorem 2), and every
 * channel carries d messages in phase d (Theorem 3).
 *
 * Trimming: the tree's parent of an offset moves one coordinate one step
 * toward 0, so the tree restricted to any box of offsets that contains 0 is
 * again a spanning tree of that box. On a mesh the box is the mesh seen from
 * the origin ("trimmed at the boundary"). On a torus the box is the set of
 * shortest offsets; for an odd side this is exactly the slides' "additional
 * check" (drop a neighbour that is not farther from the origin), for an even
 * side it also breaks the tie at n/2 (offset +n/2 is kept, -n/2 dropped), so
 * the antipodal row/column is reached once, not twice. The same holds for any
 * r x c and for mixed wrap flags.
 *
 * Schedule: phase d is step d; in it every node relays the messages of its
 * (d-1)-neighbours, one combined message per output channel. Every path is a
 * shortest path; every message goes one hop; a directed link carries one
 * message per step.
 */
#include <errno.h>
#include <stdlib.h>

#include "algos.h"

static int bp_u(int x)
{
	return x > 0;
}

static int bp_i(int x)
{
	return x > 0 ? 1 : -1;
}

static int bp_mod2(int x)
{
	return ((x % 2) + 2) % 2;
}

/*
 * The slides' rule: the offsets (relative to the current node) of the
 * neighbours a message with origin offset (dx, dy) is relayed to, in an
 * infinite mesh. Returns how many (1, 2 or 4).
 */
static int bp_children(int dx, int dy, int out[4][2])
{
	int s, u;

	if (!dx && !dy) {				/* case 1 */
		static const int all[4][2] = { { 1, 0 }, { -1, 0 }, { 0, 1 }, { 0, -1 } };

		for (int k = 0; k < 4; k++) {
			out[k][0] = all[k][0];
			out[k][1] = all[k][1];
		}
		return 4;
	}
	if (!dx) {					/* case 2.1: on the y axis */
		s = bp_i(dy);
		out[0][0] = bp_mod2(dy + bp_u(s));
		out[0][1] = s * bp_mod2(dy + 1 - bp_u(s));
		out[1][0] = -bp_mod2(dy + bp_u(-s));
		out[1][1] = s * bp_mod2(dy + 1 - bp_u(-s));
		return 2;
	}
	if (!dy) {					/* case 2.2: on the x axis */
		s = bp_i(dx);
		out[0][0] = s * bp_mod2(dx + bp_u(s));
		out[0][1] = bp_mod2(dx + 1 - bp_u(s));
		out[1][0] = s * bp_mod2(dx + bp_u(-s));
		out[1][1] = -bp_mod2(dx + 1 - bp_u(-s));
		return 2;
	}
	u = bp_u(bp_i(dx) * bp_i(dy));			/* case 3 */
	out[0][0] = bp_i(dx) * bp_mod2(dx + dy + u);
	out[0][1] = bp_i(dy) * bp_mod2(dx + dy + 1 - u);
	return 1;
}

/* The box of offsets seen from an origin at coordinate c0 in dimension d. */
static void bp_box(const struct tc_shape *sh, int d, int c0, int *lo, int *hi)
{
	int n = sh->dims[d];

	if (sh->wrap_mask & (1u << d)) {
		*lo = -((n - 1) / 2);
		*hi = n / 2;
	} else {
		*lo = -c0;
		*hi = n - 1 - c0;
	}
}

struct bp_send {
	uint32_t step;
	int32_t src;
	int32_t port;
	int32_t origin;
};

static int bp_cmp(const void *pa, const void *pb)
{
	const struct bp_send *a = pa, *b = pb;

	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	if (a->port != b->port)
		return a->port < b->port ? -1 : 1;
	return a->origin < b->origin ? -1 : a->origin > b->origin;
}

static int bp_port(int d, int hop)
{
	return 2 * d + (hop < 0);
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const int n0 = shape->dims[0], n1 = shape->ndims == 2 ? shape->dims[1] : 0;
	const int nodes = shape->nodes;
	struct bp_send *sends;
	struct tc_sched *s;
	size_t ns = 0, cap;
	uint32_t maxstep = 0;
	int err = 0;

	if (shape->ndims != 2) {
		*why = "bcast-pattern: the broadcast pattern is defined for 2D meshes and tori only";
		return -EOPNOTSUPP;
	}
	if (shape->one_port) {
		*why = "bcast-pattern: needs all-port nodes (a node relays to up to four neighbours per step)";
		return -EOPNOTSUPP;
	}
	if (n0 < 2 || n1 < 2) {
		*why = "bcast-pattern: each side must be at least 2";
		return -EOPNOTSUPP;
	}
	for (int d = 0; d < 2; d++)
		if ((shape->wrap_mask & (1u << d)) && shape->dims[d] < 3) {
			*why = "bcast-pattern: a wrapping side must be at least 3";
			return -EOPNOTSUPP;
		}

	/* Every node but the origin's farthest ones relays; at most 4 per (origin, node). */
	cap = (size_t)nodes * nodes * 2 + 16;
	sends = malloc(cap * sizeof(*sends));
	if (!sends)
		return -ENOMEM;

	for (int o = 0; o < nodes; o++) {
		int oc[2], lo[2], hi[2];

		tc_shape_coords(shape, o, oc);
		for (int d = 0; d < 2; d++)
			bp_box(shape, d, oc[d], &lo[d], &hi[d]);
		for (int dx = lo[0]; dx <= hi[0]; dx++) {
			for (int dy = lo[1]; dy <= hi[1]; dy++) {
				int ch[4][2], nch = bp_children(dx, dy, ch);
				int c[2] = { oc[0] + dx, oc[1] + dy };
				int v = tc_shape_node(shape, c);
				uint32_t step = (uint32_t)(abs(dx) + abs(dy));

				for (int k = 0; k < nch; k++) {
					int cx = dx + ch[k][0], cy = dy + ch[k][1];

					if (cx < lo[0] || cx > hi[0] || cy < lo[1] || cy > hi[1])
						continue;	/* trimmed / additional check */
					if (ns == cap) {
						struct bp_send *t;

						cap *= 2;
						t = realloc(sends, cap * sizeof(*sends));
						if (!t) {
							free(sends);
							return -ENOMEM;
						}
						sends = t;
					}
					sends[ns].step = step;
					sends[ns].src = v;
					sends[ns].port = ch[k][0] ? bp_port(0, ch[k][0]) : bp_port(1, ch[k][1]);
					sends[ns].origin = o;
					ns++;
					if (step > maxstep)
						maxstep = step;
				}
			}
		}
	}
	qsort(sends, ns, sizeof(*sends), bp_cmp);

	s = tc_sched_new(shape, TC_COLL_ALLGATHER, "bcast-pattern",
			 "001 Broadcast Pattern (cases 1-3, torus additional check), Thm 2-3, Cor 1-2",
			 TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST | TC_CLAIM_ONE_HOP);
	if (!s) {
		free(sends);
		return -ENOMEM;
	}
	for (size_t i = 0, st = 0; i < ns && !err; i++) {
		const struct bp_send *e = &sends[i];

		while (st <= e->step) {
			err = tc_sched_step(s);
			if (err < 0)
				goto out;
			err = 0;
			st++;
		}
		if (!i || e->step != sends[i - 1].step || e->src != sends[i - 1].src ||
		    e->port != sends[i - 1].port) {
			int8_t route[TC_MAX_DIMS] = { 0 };

			route[e->port / 2] = (e->port & 1) ? -1 : 1;
			err = tc_sched_msg(s, e->src, tc_shape_neighbor(shape, e->src, e->port), route);
			if (err < 0)
				goto out;
		}
		err = tc_sched_blk(s, e->origin, 0);
	}
	if (!err)
		err = tc_sched_finish(s);
out:
	free(sends);
	if (err < 0) {
		tc_sched_free(s);
		*why = "bcast-pattern: building the schedule failed";
		return err;
	}
	*out = s;
	return 0;
}

const struct tc_algo tc_algo_bcast_pattern = {
	.name = "bcast-pattern",
	.coll = TC_COLL_ALLGATHER,
	.summary = "broadcast pattern, all-port 2D mesh/torus (001)",
	.build = build,
};
