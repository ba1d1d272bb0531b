// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * MTk: complete exchange on a one-port k-dimensional torus, every side a
 * multiple of 2k (Liu et al., Multidimensional Tori, Sec. 5.3). A side equal to k is
 * also taken (its logical rings have one node).
 *
 * Groups G_i = {sum of coordinates mod k = i}. Phase 1 (k steps): in step
 * t group i runs AR1 along dimension (i + t) mod k on the logical rings of
 * every k-th node. Phase 2 completes the exchange inside the k x ... x k
 * sub-meshes, one dimension after another. k = 1 is AR1, k = 2 the
 * one-port AT2 and k = 3 MT3.
 *
 * The paper prices each phase-2 dimension at (k-1) startups and
 * floor(k^2/4)/k * prod(Ni) blocks with Gu's linear-array exchange [14],
 * which it does not describe. We reach exactly that with k-1 cyclic shifts
 * of the k-node line (engine/oneport.c, mt_sub_hops): floor(k/2) shifts +1
 * then the rest -1, the shift's wrap-around sent back along the line.
 * Contention-free; shortest-path only for k = 1. No rearrangement charged.
 */
#include <errno.h>

#include "algorithms/algos.h"
#include "algorithms/engine/oneport.h"
#include "core/part_sym.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	unsigned int claims = TC_CLAIM_CONTENTION_FREE | TC_CLAIM_PERMUTATION;
	struct tc_op_mt mt;

	if (!tc_op_all_wrap(shape)) {
		*why = "mtk: needs a torus (every dimension wraps); meshes: pad (all-port), atape (one-port)";
		return -EOPNOTSUPP;
	}
	if (tc_op_mt_init(&mt, shape, 0)) {
		*why = "mtk: every side must be a multiple of 2k (Liu et al., Multidimensional Tori, Sec. 5.3) or k; "
		       "other shapes: pad (all-port), atape (one-port)";
		return -EOPNOTSUPP;
	}
	if (shape->ndims == 1)
		claims |= TC_CLAIM_SHORTEST;
	return tc_op_emit(shape, "mtk", "Liu et al., Multidimensional Tori, Sec. 5.3 Algorithm MTk", claims, tc_op_mt_nsteps(&mt), mt.max_hops,
			  tc_op_mt_plan, &mt, out);
}

/*
 * The period: every block's hops are its own (the one-port engine's plan),
 * and what decides them commutes with the translations by 2k in every
 * dimension: the group (sum of coordinates mod k), the position in the k x
 * ... x k sub-mesh (coordinates mod k) and AR1's parity on the stride-k
 * rings (ring index mod 2). A side of k (one-node rings) stays whole.
 */
static void period(const struct tc_shape *sh, int *mod)
{
	for (int d = 0; d < sh->ndims; d++)
		mod[d] = 2 * sh->ndims;
}

/*
 * Node n's part, from the blocks of one cell of (2k)^k sources
 * (core/part_sym.c): 2 nodes on a ring (AR1), 16 on 2-D (the one-port AT2),
 * 216 on 3-D (MT3); 4096 on 4-D, where it is that many times the node's own
 * traffic.
 */
static int part(struct tc_part *p, const char **why)
{
	return tc_part_translate(p, &tc_algo_mtk, why);
}

const struct tc_algo tc_algo_mtk = {
	.name = "mtk",
	.coll = TC_ALLTOALL,
	.summary = "one-port k-D torus, sides multiples of 2k: k*ceil(N1/4k)+k^2 steps (Liu et al., Multidimensional Tori, Sec. 5.3, Algorithm MTk)",
	.build = build,
	.part = part,
	.sym_mod = { 1 }, /* the period is period()'s */
	.sym_period = period,
};
