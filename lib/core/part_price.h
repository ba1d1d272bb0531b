/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The price of a whole schedule from the parts of one cell of nodes
 * (core/part_price.c), for an algorithm whose nodes all send alike up to a
 * translation (struct tc_algo.price_mod).
 */
#ifndef TC_PART_PRICE_H
#define TC_PART_PRICE_H

#include "core/cost.h"
#include "core/sched.h"

/* 1 if algo->price_mod is set and its cell on sh is at most a quarter of the nodes. */
int tc_algo_priced_from_parts(const struct tc_algo *algo, const struct tc_shape *sh);

/* What tc_sched_price_parts saw of the whole schedule. */
struct tc_price_totals {
	uint32_t steps;
	uint64_t msgs, blks; /* the whole schedule's messages and block moves */
	int cell_nodes;	     /* parts generated */
};

/*
 * Price algo's whole schedule on shape without building it: the parts of the
 * nodes of one cell {x : x_d < mod[d]} (mod: price_mod on the wrapping sides
 * it divides, the whole side otherwise) are generated, and every step's
 * messages of every node (each node's sends are its cell node's, translated:
 * same route and block count) go through the cost model, as
 * tc_cost_eval_sizes would price the whole schedule: time_us[k] for
 * sizes[k], *cost. Nothing is verified here (each rank's part is checked
 * against its peers' before it runs; tests/unit/test_part.c compares this
 * price with the whole schedule's). Only for schedules that claim
 * contention-free steps, whose price does not depend on the order in which
 * a link serves messages: -EOPNOTSUPP with *why otherwise, or the
 * generator's error.
 */
int tc_sched_price_parts(const struct tc_algo *algo, const struct tc_shape *shape, const struct tc_cost_params *p,
			 const size_t *sizes, int nsizes, double *time_us, struct tc_cost *cost,
			 struct tc_price_totals *tot, const char **why);

/*
 * The cost model over one node's part alone (what tc_coll_last reports): the
 * part's messages, step by step, as tc_cost_eval would see them if they were
 * the whole schedule, at p's parameters and block size: time_us and cost
 * (steps and transmission on the longest chain of this node's messages, the
 * shape's lower bound). No other node's messages are there to share a link
 * or delay a peer, so each figure is at most the whole schedule's (at2 on
 * 8x12: 120 blocks of 144). The rearrangement term (rho) is left out: a
 * part does not know the whole schedule's rearranged blocks. O(P) memory (the model's
 * per-node state), time in the part's messages.
 */
struct tc_part;
int tc_part_price(const struct tc_part *part, const struct tc_cost_params *p, double *time_us,
		  struct tc_cost *cost);

#endif /* TC_PART_PRICE_H */
