// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ATAPE: all-to-all personalized exchange driven by a Latin square (All-to-All Communication slides, second
 * part of the slides, "All-to-All Personalized Exchange Algorithm Using a Latin
 * Square"; 004 is a cleaner extraction with the 8 x 8 example).
 *
 * Row i of an n x n Latin square L says where every processor sends in step i:
 * processor j sends its message for L[i][j]. Each row is a permutation, and
 * each column holds every destination once. Choosing row 0 to be the identity
 * (every processor "sends to itself", i.e. nothing moves) leaves P-1 steps,
 * each a derangement, and every block is sent exactly once, straight to its
 * destination.
 *
 * The square, following the slides' second construction (BuildBasicList /
 * BuildLatinSquare): row i+1 = phi_{k(i+1)}(row i), where the basic
 * permutations phi are applied in the order of a Gray code.
 *   - P a power of two: phi_t flips bit t-1 of the processor number, the list
 *     of basic permutations is the ruler sequence 1,2,1,3,1,2,1,..., so row i
 *     is j XOR gray(i) (exactly the slides' square with a_j = j).
 *   - any other P: the same construction over the torus' own translation
 *     group Z_n0 x ... x Z_n(k-1): a basic permutation moves every node one hop
 *     +-1 along one dimension, and the rows follow the reflected mixed-radix
 *     Gray code, so row i is "every node to node + g_i" (coordinate-wise,
 *     mod n_d). A group's table is a Latin square; g_0 = 0 is the identity.
 *     On a ring this is the cyclic square, i.e. the same steps as pairwise in
 *     another order.
 *
 * On the torus the messages are routed dimension-ordered along shortest paths
 * (antipodal ties split, see engine/direct.c) through intermediate routers
 * and share links (each step is a permutation, not contention-free); the cost
 * model serializes them. This is the direct schedule a switched cluster (the
 * verbs transport) runs unchanged.
 */
#include <errno.h>
#include <stdlib.h>

#include "algorithms/algos.h"
#include "algorithms/engine/direct.h"

static int is_pow2(int p)
{
	return p > 0 && !(p & (p - 1));
}

/* Reflected mixed-radix Gray code: advance g (with per-digit directions) to the next code. */
static void gray_next(const struct tc_shape *sh, int *g, int *dir)
{
	for (int d = sh->ndims - 1; d >= 0; d--) {
		int v = g[d] + dir[d];

		if (v >= 0 && v < sh->dims[d]) {
			g[d] = v;
			return;
		}
		dir[d] = -dir[d];
	}
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const int p = shape->nodes;
	const int xor = is_pow2(p);
	int g[TC_MAX_DIMS] = { 0 }, dir[TC_MAX_DIMS];
	struct tc_dmsg *m = NULL;
	struct tc_sched *s;
	int err = -ENOMEM;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "atape: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	s = tc_sched_new(shape, TC_ALLTOALL, "atape",
			 xor ? "All-to-All Communication slides, ATAPE: Latin square of basic permutations (second construction), row i = j XOR gray(i)"
			     : "All-to-All Communication slides, ATAPE: Latin square of the torus translation group, rows in reflected Gray-code order",
			 TC_CLAIM_PERMUTATION | TC_CLAIM_SHORTEST);
	m = malloc(sizeof(*m) * p);
	if (!s || !m)
		goto err_free;
	for (int d = 0; d < TC_MAX_DIMS; d++)
		dir[d] = 1;
	for (int i = 1; i < p; i++) {
		if (!xor)
			gray_next(shape, g, dir);
		for (int j = 0; j < p; j++) {
			int dst;

			if (xor) {
				dst = j ^ (i ^ (i >> 1));
			} else {
				int c[TC_MAX_DIMS];

				tc_shape_coords(shape, j, c);
				for (int d = 0; d < shape->ndims; d++)
					c[d] += g[d];
				dst = tc_shape_node(shape, c);
			}
			tc_direct_msg(shape, &m[j], j, j, dst);
		}
		/* row i of the Latin square: one step, its messages in link order */
		err = tc_direct_emit_step(s, m, p, tc_direct_one_block, NULL);
		if (err < 0)
			goto err_free;
	}
err_free:
	return tc_direct_done(s, m, err, out, why, "atape: out of memory",
			       "atape: building the schedule failed");
}

const struct tc_algo tc_algo_atape = {
	.name = "atape",
	.coll = TC_ALLTOALL,
	.summary = "Latin-square direct exchange, each step a permutation (All-to-All Communication slides, ATAPE)",
	.build = build,
	.flags = TC_ALGO_DIRECT_P2,
};
