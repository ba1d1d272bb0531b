// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pairwise exchange: the direct baseline the torus papers compare against
 * (Liu et al., All-Port Tori, Sec. I, direct algorithms [3, 4]; UCC's alltoall_pairwise). In step i
 * (1..P-1) rank r sends its block for (r+i) mod P straight to that rank and
 * receives the block of (r-i) mod P. Rank order is the row-major node order,
 * so a step is a permutation but not a torus translation: its messages are
 * routed dimension-ordered along shortest paths (antipodal ties split, see
 * engine/direct.c) and share links, and the cost model serializes them.
 * Works on every shape and port model (each step a node sends one and
 * receives one message).
 */
#include <errno.h>
#include <stdlib.h>

#include "algorithms/algos.h"
#include "algorithms/engine/direct.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const int p = shape->nodes;
	struct tc_dmsg *m = NULL;
	struct tc_sched *s;
	int err = -ENOMEM;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "pairwise: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	s = tc_sched_new(shape, TC_ALLTOALL, "pairwise", "baseline: pairwise exchange, step i to rank+i (Liu et al., All-Port Tori, Sec. I)",
			 TC_CLAIM_PERMUTATION | TC_CLAIM_SHORTEST);
	m = malloc(sizeof(*m) * p);
	if (!s || !m)
		goto err_free;
	for (int i = 1; i < p; i++) {
		for (int r = 0; r < p; r++)
			tc_direct_msg(shape, &m[r], r, r, (r + i) % p);
		err = tc_direct_emit_step(s, m, p, tc_direct_one_block, NULL);
		if (err < 0)
			goto err_free;
	}
err_free:
	return tc_direct_done(s, m, err, out, why, "pairwise: out of memory",
			       "pairwise: building the schedule failed");
}

const struct tc_algo tc_algo_pairwise = {
	.name = "pairwise",
	.coll = TC_ALLTOALL,
	.summary = "baseline: pairwise exchange, step i to rank+i",
	.build = build,
	.flags = TC_ALGO_DIRECT_P2,
};
