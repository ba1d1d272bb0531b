/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One node's part of a translation-invariant schedule, from the blocks of
 * one fundamental cell (core/part_sym.c says how and when it is exact).
 */
#ifndef TC_PART_SYM_H
#define TC_PART_SYM_H

#include "core/part.h"

/*
 * Generate p's node's part of algo's schedule, which must commute with the
 * translations by multiples of algo->sym_mod[d] (in the dimensions it
 * divides; the others keep their whole side in the cell) and support
 * tc_sched_build_sources. Sets p's cite, claims and npackets and finishes
 * it. 0, or the builder's -EOPNOTSUPP with *why, or another -errno.
 */
int tc_part_translate(struct tc_part *p, const struct tc_algo *algo, const char **why);

/*
 * The node of x's class in the cell of periods mod[] (x's coordinates mod
 * mod[d]), and in g the translation that takes x to it.
 */
int tc_sym_rep(const struct tc_shape *sh, const int *mod, int x, int *g);

/*
 * Call fn with algo's restricted schedule on sh (every node's messages with
 * the blocks of one cell of sources only, as tc_part_translate reads it;
 * finished, the whole schedule's step numbering) and the periods of that
 * cell. It runs under this file's cache lock: fn must not call back into
 * this file. 0, fn's answer, or the builder's error with *why.
 */
int tc_sym_cell_visit(const struct tc_algo *algo, const struct tc_shape *sh,
		      int (*fn)(void *arg, const struct tc_sched *cell, const int *mod), void *arg, const char **why);

/* 1 if algo->sym_mod is set and its cell on sh is at most a quarter of the nodes. */
int tc_algo_translated(const struct tc_algo *algo, const struct tc_shape *sh);

/*
 * *m: the message of step st that node x sends, the translate of its cell
 * node's (x's class, tc_sym_rep(sh, mod, x, g) with this g) message to dst
 * by route with nblk blocks; no blocks are attached (the cost model and the
 * link checks read only their number).
 */
void tc_sym_msg_translate(const struct tc_shape *sh, const int *g, int x, uint32_t st, int dst, const int8_t *route,
			  uint32_t nblk, int op, struct tc_msg *m);

struct tc_cost_params;
struct tc_cost;
struct tc_verify_report;

/* What tc_sched_check_translated saw of the whole schedule. */
struct tc_sym_totals {
	uint32_t steps;
	uint64_t msgs, blks;	/* the whole schedule's messages and block moves */
	uint64_t cell_blks;	/* block moves kept: the cell's sources' */
	int cell_nodes;		/* sources in the cell */
	const char *cite;	/* the schedule's, as in struct tc_sched */
	unsigned int claims;
};

/*
 * Verify and price algo's whole schedule on shape from its cell (algo's
 * sym_mod; worth it where tc_algo_translated), as tc_sched_check_streamed does from the whole build:
 * every block of the cell's sources replayed (delivery, holding, shortest
 * paths), the whole schedule's messages (the translates of the cell's,
 * merged per step, sender, receiver and route, without their blocks)
 * checked for links (loads into r, contention, one-port, one hop) and
 * priced. The schedule checked is the one the parts of tc_part_translate
 * make, so what runs is what was verified. 0, -EPROTO with
 * r->first_violation, or another -errno with *why.
 */
int tc_sched_check_translated(const struct tc_algo *algo, const struct tc_shape *shape,
			      const struct tc_cost_params *p, const size_t *sizes, int nsizes, double *time_us,
			      struct tc_verify_report *r, struct tc_cost *cost, struct tc_sym_totals *tot,
			      const char **why);

#endif /* TC_PART_SYM_H */
