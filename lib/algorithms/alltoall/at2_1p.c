// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * AT2 for one-port r x s tori, r and s multiples of 4
 * (Liu et al., Multidimensional Tori, Sec. 4; the odd/even partition of Gu [14]).
 *
 * A node is even when x + y is even. Phase 1, step 1: in every row the s/2
 * even nodes form a logical ring (every second node) and run AR1, while in
 * every column the r/2 odd nodes run AR1; step 2: odd nodes in rows, even
 * nodes in columns. Each logical ring node stands for a pair of rows or
 * columns, so after phase 1 every block is in the 2 x 2 sub-mesh of its
 * destination, at the node of its origin's parity. Phase 2: two exchanges
 * inside the 2 x 2 sub-meshes (x, then y).
 * Cost: 2*ceil(s/8)+4 startups, 4r*floor(s^2/32)+2rs blocks (r <= s) as a
 * critical path. Contention-free, but not shortest-path (a block may pass
 * its column by one and come back in phase 2). No rearrangement charged.
 */
#include <errno.h>

#include "algorithms/algos.h"
#include "algorithms/engine/oneport.h"
#include "core/part_sym.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct tc_op_mt mt;

	if (shape->ndims != 2) {
		*why = "at2-1p: needs a 2D torus; use ar1 for rings, pt4/mt3/mtk for more dimensions";
		return -EOPNOTSUPP;
	}
	if (!tc_op_all_wrap(shape)) {
		*why = "at2-1p: needs a torus (both dimensions wrap); meshes: pad (all-port), atape (one-port)";
		return -EOPNOTSUPP;
	}
	if (shape->dims[0] % 4 || shape->dims[1] % 4) {
		*why = "at2-1p: both sides must be multiples of 4 (Liu et al., Multidimensional Tori, Sec. 4); "
		       "other shapes: pad/opt2d (all-port), atape (one-port)";
		return -EOPNOTSUPP;
	}
	/* Group 0 (x + y even) rings along y (its row) first. */
	if (tc_op_mt_init(&mt, shape, 1)) {
		*why = "at2-1p: both sides must be multiples of 4 (Liu et al., Multidimensional Tori, Sec. 4)";
		return -EOPNOTSUPP;
	}
	return tc_op_emit(shape, "at2-1p", "Liu et al., Multidimensional Tori, Sec. 4 Algorithm AT2 (one-port, odd/even partition)",
			  TC_CLAIM_CONTENTION_FREE | TC_CLAIM_PERMUTATION, tc_op_mt_nsteps(&mt), mt.max_hops,
			  tc_op_mt_plan, &mt, out);
}

/*
 * Node n's part: every block's hops are its own (the one-port engine's plan),
 * and AR1 on the stride-2 rings of the odd/even partition, whose steps alternate with the logical index: translations by 4, so it comes from the blocks of one cell (core/part_sym.c).
 */
static int part(struct tc_part *p, const char **why)
{
	return tc_part_translate(p, &tc_algo_at2_1p, why);
}

const struct tc_algo tc_algo_at2_1p = {
	.name = "at2-1p",
	.coll = TC_ALLTOALL,
	.summary = "one-port 2D torus, sides multiples of 4: 2*ceil(s/8)+4 steps (Liu et al., Multidimensional Tori, Sec. 4, Algorithm AT2)",
	.build = build,
	.part = part,
	.sym_mod = { 4, 4 },
};
