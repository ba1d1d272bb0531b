/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Two edge-disjoint Hamiltonian cycles of a 2D torus found by square swaps
 * (engine/ham_decomp.c), run as a gossip rule on the engine of
 * engine/gossip.h: a packet leaves a PU by the other link of the cycle
 * (colour) it came in on. gossip-ham2 uses it when a side is odd, gossip-ham1
 * as its last resort on odd x odd tori.
 */
#ifndef TC_ENGINE_HAM_DECOMP_H
#define TC_ENGINE_HAM_DECOMP_H

#include "algorithms/engine/gossip.h"

/*
 * Build spec on the two Hamiltonian cycles of a square-swap decomposition of
 * the 2D torus shape (spec's rule and ctx are set here). -EOPNOTSUPP when the
 * decomposition is not found (*why untouched then), else what
 * __tc_gossip_build gives.
 */
int tc_ham_decomp_gossip(const struct tc_shape *shape, struct tc_gossip_spec *spec, struct tc_sched **out,
			 const char **why);
/* The same, built whole or prepared for parts as r says (__tc_gossip_run). */
int tc_ham_decomp_run(const struct tc_shape *shape, struct tc_gossip_spec *spec, const struct tc_gossip_run *r,
		      const char **why);

/*
 * spec->inject for one packet per PU (npackets = 1) on a decomposition
 * (ctx as tc_ham_decomp_gossip sets it): PU (i, j) injects into colour
 * (i + j) & 1.
 */
int tc_ham_decomp_inject(const void *ctx, int node);

#endif /* TC_ENGINE_HAM_DECOMP_H */
