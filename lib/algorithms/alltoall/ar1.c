// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * AR1: complete exchange on a one-port ring of p nodes, p even
 * (Liu et al., Multidimensional Tori, Sec. 3, Fig. 2).
 *
 * Odd nodes and the even nodes each form a one-way logical ring: even
 * nodes carry blocks in the + direction, odd nodes in the - direction.
 *   step 0:        node 2i hands its - blocks to 2i-1, 2i-1 its + blocks
 *                  to 2i (the antipodal block goes - from an even node and
 *                  + from an odd one);
 *   steps 1..K:    K = ceil(p/4) - 1 ring steps; even nodes send to +2,
 *                  odd nodes to -2, each time dropping what has arrived;
 *   last step:     2i gives 2i+1 its blocks, 2i+1 gives 2i its blocks.
 * We follow the listing's orientation (the prose's "left"/"right" contradict
 * it); with it every block moves along a shortest path and no directed link
 * carries two messages in a step. Cost: ceil(p/4)+1 startups,
 * floor(p^2/8)+p/2 blocks. The paper charges no rearrangement.
 */
#include <errno.h>

#include "algorithms/algos.h"
#include "algorithms/engine/oneport.h"
#include "core/part_sym.h"

static int ar1_plan(const void *ctx, const struct tc_shape *shape, int o, int d, struct tc_op_hop *hops)
{
	(void)ctx;
	return tc_op_ar1_hops(shape->dims[0], o, d, 0, 1, 0, hops);
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	if (shape->ndims != 1) {
		*why = "ar1: needs a ring (one dimension); use at2-1p, pt4, mt3 or mtk for tori";
		return -EOPNOTSUPP;
	}
	if (!tc_op_all_wrap(shape)) {
		*why = "ar1: needs a ring with wrap-around, not a linear array";
		return -EOPNOTSUPP;
	}
	if (shape->dims[0] < 2 || shape->dims[0] % 2) {
		*why = "ar1: needs an even number of nodes (Liu et al., Multidimensional Tori, Sec. 3); other rings: pad (all-port), atape (one-port)";
		return -EOPNOTSUPP;
	}
	return tc_op_emit(shape, "ar1", "Liu et al., Multidimensional Tori, Sec. 3 Algorithm AR1 (Fig. 2)",
			  TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST | TC_CLAIM_PERMUTATION,
			  tc_op_ar1_steps(shape->dims[0]), tc_op_ar1_max_hops(shape->dims[0]), ar1_plan, NULL, out);
}

/*
 * Node n's part: every block's hops are its own (the one-port engine's plan),
 * and the antipode splits by the sender's parity and the ring's steps alternate with it: translations by 2, so it comes from the blocks of one cell (core/part_sym.c).
 */
static int part(struct tc_part *p, const char **why)
{
	return tc_part_translate(p, &tc_algo_ar1, why);
}

const struct tc_algo tc_algo_ar1 = {
	.name = "ar1",
	.coll = TC_ALLTOALL,
	.summary = "one-port ring, p even: ceil(p/4)+1 steps, floor(p^2/8)+p/2 blocks (Liu et al., Multidimensional Tori, Sec. 3, Algorithm AR1)",
	.build = build,
	.part = part,
	.sym_mod = { 2 },
};
