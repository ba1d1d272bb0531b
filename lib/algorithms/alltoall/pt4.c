// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * PT4: complete exchange on a one-port N1 x N2 x N3 x N4 torus as the
 * product of two 2D tori, the XY plane (dims 0, 1) and the ST plane
 * (dims 2, 3); every side a multiple of 8 (Liu et al., Multidimensional Tori,
 * Sec. 5.1). A side of 4 is also taken (its logical rings have one node).
 *
 * A node is even when x + y + s + t is even. Phase 1, step 1: even nodes
 * run the 2D algorithm in their XY plane, odd nodes in their ST plane;
 * step 2 the other way round. In a plane the nodes of one parity are the
 * two sublattices {coordinates congruent mod 2}; each is an (Na/2) x (Nb/2)
 * logical torus whose node stands for a 2 x 2 block of the plane, and runs
 * the one-port AT2 (Sec. 4) on it: AR1 on logical rows and columns of
 * every second logical node (4 links apart), then the logical 2 x 2
 * exchange (2 links apart). After phase 1 a block is in the 2x2x2x2
 * sub-cube of its destination, at the node congruent to its origin mod 2.
 * Phase 2: the binary 4-cube exchange, one dimension per step.
 * Cost: 4*ceil(N1/16)+12 startups, (16*floor(N1^2/128)+6*N1)*N2*N3*N4
 * blocks. Contention-free, not shortest-path. No rearrangement charged.
 */
#include <errno.h>

#include "algorithms/algos.h"
#include "algorithms/engine/oneport.h"
#include "core/part_sym.h"

struct pt4 {
	int ar1_len;   /* steps of one AR1 sub-step of a plane stage */
	int stage_len; /* steps of one plane stage: 2 AR1 + 2 exchanges */
};

static int pt4_plan(const void *ctx, const struct tc_shape *shape, int o, int d, struct tc_op_hop *hops)
{
	const struct pt4 *p = ctx;
	int co[TC_MAX_DIMS], cd[TC_MAX_DIMS];
	int par, n = 0;

	tc_shape_coords(shape, o, co);
	tc_shape_coords(shape, d, cd);
	par = (co[0] + co[1] + co[2] + co[3]) & 1;
	for (int st = 0; st < 2; st++) {
		int a = 2 * ((par + st) & 1), dims[2] = { a, a + 1 };
		int base = st * p->stage_len;
		/* logical AT2 parity: logical coordinates are coords / 2 */
		int lgrp = ((co[a] >> 1) + (co[a + 1] >> 1)) & 1;

		for (int t = 0; t < 2; t++) {
			/* logical-even nodes ring along the second dimension first */
			int pd = dims[(1 + lgrp + t) & 1], len = shape->dims[pd];
			int i = co[pd] >> 2, j = cd[pd] >> 2;

			n += tc_op_ar1_hops(len / 4, i, j, pd, 4, base + t * p->ar1_len, hops + n);
			co[pd] = 4 * j + (co[pd] & 3);
		}
		for (int t = 0; t < 2; t++) {
			int pd = dims[t], lpos = (co[pd] >> 1) & 1;

			if (lpos == ((cd[pd] >> 1) & 1))
				continue;
			hops[n++] = (struct tc_op_hop){ base + 2 * p->ar1_len + t, pd, lpos ? -2 : 2 };
			co[pd] += lpos ? -2 : 2;
		}
	}
	for (int dim = 0; dim < 4; dim++) {
		if ((co[dim] & 1) == (cd[dim] & 1))
			continue;
		hops[n++] = (struct tc_op_hop){ 2 * p->stage_len + dim, dim, (co[dim] & 1) ? -1 : 1 };
	}
	return n;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct pt4 p = { 0, 0 };
	int max_hops = 4;

	if (shape->ndims != 4) {
		*why = "pt4: needs a 4D torus; use mtk for other dimensions";
		return -EOPNOTSUPP;
	}
	if (!tc_op_all_wrap(shape)) {
		*why = "pt4: needs a torus (every dimension wraps); meshes: pad (all-port), atape (one-port)";
		return -EOPNOTSUPP;
	}
	for (int d = 0; d < 4; d++) {
		int n = shape->dims[d];

		if (n != 4 && n % 8) {
			*why = "pt4: every side must be a multiple of 8 (Liu et al., Multidimensional Tori, Sec. 5.1) or 4; "
			       "other shapes: pad (all-port), atape (one-port)";
			return -EOPNOTSUPP;
		}
		if (tc_op_ar1_steps(n / 4) > p.ar1_len)
			p.ar1_len = tc_op_ar1_steps(n / 4);
		max_hops += tc_op_ar1_max_hops(n / 4) + 1;
	}
	p.stage_len = 2 * p.ar1_len + 2;
	return tc_op_emit(shape, "pt4", "Liu et al., Multidimensional Tori, Sec. 5.1 Algorithm PT4", TC_CLAIM_CONTENTION_FREE | TC_CLAIM_PERMUTATION,
			  2 * p.stage_len + 4, max_hops, pt4_plan, &p, out);
}

/*
 * Node n's part: every block's hops are its own (pt4_plan), decided by the
 * node's parity (period 2), the logical AT2 group and 2x2 position
 * (coordinates / 2, period 4) and AR1's ring index parity on the rings of
 * every fourth node (coordinates / 4 mod 2): period 8 in every dimension
 * (4 is not: the AR1 parity differs), so the part comes from the blocks of
 * one 8x8x8x8 cell of sources (core/part_sym.c); a side of 4 stays whole.
 * That cell is 4096 sources, that many times the node's own traffic.
 */
static int part(struct tc_part *p, const char **why)
{
	return tc_part_translate(p, &tc_algo_pt4, why);
}

const struct tc_algo tc_algo_pt4 = {
	.name = "pt4",
	.coll = TC_ALLTOALL,
	.summary = "one-port 4D torus as two 2D tori, sides multiples of 8: 4*ceil(N1/16)+12 steps "
		   "(Liu et al., Multidimensional Tori, Sec. 5.1, Algorithm PT4)",
	.build = build,
	.part = part,
	.sym_mod = { 8, 8, 8, 8 },
};
