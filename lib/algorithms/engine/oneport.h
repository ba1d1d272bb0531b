/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared engine of the one-port complete-exchange family of
 * Liu et al., "Efficient and Scalable Algorithms for All-to-All Personalized
 * Communication on Multidimensional Tori" (AR1, AT2, PT4, MT3, MTk).
 *
 * Every algorithm of the family moves each block along a fixed itinerary:
 * a list of hops, each a move of a signed number of links along one
 * dimension in one global step. The algorithms only say where a block goes;
 * tc_op_emit() turns the itineraries of all blocks into a schedule, checking
 * on the way that no node sends two messages (to different places) in one
 * step and that every block ends at its destination.
 */
#ifndef TC_ONEPORT_H
#define TC_ONEPORT_H

#include "core/sched.h"

struct tc_op_hop {
	int step;  /* global step index */
	int dim;   /* dimension moved along */
	int delta; /* signed links moved */
};

/*
 * Itinerary of block {o, d} (o != d): fill hops[] (in step order, at most
 * the max_hops given to tc_op_emit) and return their number, or -errno.
 */
typedef int (*tc_op_plan_fn)(const void *ctx, const struct tc_shape *shape, int o, int d, struct tc_op_hop *hops);

/*
 * Build the schedule of every block's itinerary: nsteps global steps, one
 * message per (step, sender); max_hops bounds any itinerary's length. On
 * success *out is finished and 0 returned.
 */
int tc_op_emit(const struct tc_shape *shape, const char *algo, const char *cite, unsigned int claims, int nsteps,
	       int max_hops, tc_op_plan_fn plan, const void *ctx, struct tc_sched **out);

/*
 * AR1 (Liu et al., Multidimensional Tori, Sec. 3, Fig. 2) on a logical ring of q nodes (q = 1 or even)
 * whose members are sigma links apart along dimension dim.
 * tc_op_ar1_steps(): global steps AR1 needs (0 when q = 1).
 * tc_op_ar1_hops(): append to h the hops carrying a block from ring index
 * i to ring index j, AR1 step t being global step base + t; returns the
 * number appended.
 */
int tc_op_ar1_steps(int q);
int tc_op_ar1_hops(int q, int i, int j, int dim, int sigma, int base, struct tc_op_hop *h);

/* Hops an AR1 itinerary on a ring of q nodes may take, at most. */
static inline int tc_op_ar1_max_hops(int q)
{
	return q / 4 + 2;
}

/*
 * The group-rotation scheme of MT3/MTk (Liu et al., Multidimensional Tori, Sec. 5.2-5.3), of which the
 * one-port AT2 (Sec. 4) is the case k = 2 and AR1 the case k = 1.
 * Nodes are grouped by (sum of coordinates) mod k. Phase 1 has k steps:
 * in step t group c runs AR1 along dimension (c + t + first) mod k on the
 * logical ring of every k-th node, so a block reaches the k x ... x k
 * sub-mesh of its destination at the node whose coordinates are congruent
 * to its origin's mod k. Phase 2 finishes inside the sub-meshes, one
 * dimension after another, in k-1 steps of cyclic shifts along each k-node
 * line (floor(k/2) shifts +1, then the rest -1): floor(k^2/4)*N/k blocks
 * per dimension. k = 2 is one exchange, k = 3 the two shifts of Sec. 5.2.
 * Every dimension must be k or a multiple of 2k, and wrap.
 */
struct tc_op_mt {
	int k;	      /* dimensions = groups = sub-mesh side */
	int first;    /* dimension offset of group 0's first ring */
	int ar1_len;  /* steps reserved for each phase-1 step */
	int sub_len;  /* steps of phase 2 per dimension */
	int max_hops; /* bound on one itinerary */
};

/* 0, or -EOPNOTSUPP when a dimension is not k or a multiple of 2k. */
int tc_op_mt_init(struct tc_op_mt *mt, const struct tc_shape *shape, int first);
int tc_op_mt_nsteps(const struct tc_op_mt *mt);
int tc_op_mt_plan(const void *ctx, const struct tc_shape *shape, int o, int d, struct tc_op_hop *hops);

/* Dimensions all wrap? */
int tc_op_all_wrap(const struct tc_shape *shape);

#endif /* TC_ONEPORT_H */
