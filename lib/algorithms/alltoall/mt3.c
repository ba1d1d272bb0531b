// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * MT3: complete exchange on a one-port N1 x N2 x N3 torus, every side a
 * multiple of 6 (Liu et al., Multidimensional Tori, Sec. 5.2). A side of 3 is also
 * taken: its logical rings have one node and phase 1 has nothing to do
 * along it (3x3x3 is phase 2 alone).
 *
 * Groups G_i = {(x+y+z) mod 3 = i}. Phase 1 (3 steps): G0 runs AR1 along
 * x, y, z in turn on the logical rings of every third node, G1 along y, z,
 * x and G2 along z, x, y, so each step every line carries exactly one
 * ring. A block then sits in its destination's 3x3x3 sub-mesh at the node
 * congruent to its origin mod 3. Phase 2 (6 steps): along x, y, z in
 * turn, every node sends to its cyclic successor, then to its predecessor,
 * in its 3-node line.
 * Cost: 3*ceil(N1/12)+9 startups, 9*floor(N1^2/72)*N2*N3 + 7*N1*N2*N3/2
 * blocks. Contention-free, not shortest-path. No rearrangement charged.
 */
#include <errno.h>

#include "algorithms/algos.h"
#include "algorithms/engine/oneport.h"
#include "core/part_sym.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct tc_op_mt mt;

	if (shape->ndims != 3) {
		*why = "mt3: needs a 3D torus; use mtk for other dimensions";
		return -EOPNOTSUPP;
	}
	if (!tc_op_all_wrap(shape)) {
		*why = "mt3: needs a torus (every dimension wraps); meshes: pad (all-port), atape (one-port)";
		return -EOPNOTSUPP;
	}
	if (tc_op_mt_init(&mt, shape, 0)) {
		*why = "mt3: every side must be a multiple of 6 (Liu et al., Multidimensional Tori, Sec. 5.2) or 3; "
		       "other shapes: pad (all-port), atape (one-port)";
		return -EOPNOTSUPP;
	}
	return tc_op_emit(shape, "mt3", "Liu et al., Multidimensional Tori, Sec. 5.2 Algorithm MT3", TC_CLAIM_CONTENTION_FREE | TC_CLAIM_PERMUTATION,
			  tc_op_mt_nsteps(&mt), mt.max_hops, tc_op_mt_plan, &mt, out);
}

/*
 * Node n's part: every block's hops are its own (the one-port engine's plan),
 * and the group (sum of coordinates mod 3), the position in the 3-node sub-mesh and AR1's parity on the stride-3 rings: translations by 6, so it comes from the blocks of one cell (core/part_sym.c).
 */
static int part(struct tc_part *p, const char **why)
{
	return tc_part_translate(p, &tc_algo_mt3, why);
}

const struct tc_algo tc_algo_mt3 = {
	.name = "mt3",
	.coll = TC_ALLTOALL,
	.summary = "one-port 3D torus, sides multiples of 6: 3*ceil(N1/12)+9 steps (Liu et al., Multidimensional Tori, Sec. 5.2, Algorithm MT3)",
	.build = build,
	.part = part,
	.sym_mod = { 6, 6, 6 },
};
