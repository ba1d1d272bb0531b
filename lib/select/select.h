/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The choice of algorithm and the schedule cache, above the algorithms. */
#ifndef TC_SELECT_H
#define TC_SELECT_H

#include "algorithms/algos.h"
#include "core/cost.h"

/*
 * auto.c: the library's choice ("auto"): every registered algorithm of the
 * collective whose schedule builds and verifies for the shape, priced with
 * the cost model at the transport's parameters p (NULL: the module's default
 * timing, tc_cost_params_default; p->block_bytes is ignored), the cheapest
 * wins. Decisions are cached per (collective, shape, size class, p).
 */
#define TC_AUTO_MAX_CANDS 32
/* Above this many nodes algorithms flagged TC_ALGO_DIRECT_P2 are priced only
 * from their messages, up to TC_AUTO_PRICE_DIRECT_MAX_NODES (at every size
 * every candidate is priced without its whole schedule where it can be:
 * auto.c). */
#define TC_AUTO_PRICE_MAX_NODES 256
/* Above TC_AUTO_PRICE_MAX_NODES a direct schedule (TC_ALGO_DIRECT_P2: P-1
 * steps of P messages, or P(P-1) messages in one) is priced only by its price
 * function (struct tc_algo.price: each step's messages without blocks, O(P^2)
 * time; O(P) memory for pairwise and atape, O(P^2) for all-port direct's one
 * step), and only up to this many nodes (8x8x8; not the module's 32x32,
 * whose 1024 ranks would each price about three million messages). */
#define TC_AUTO_PRICE_DIRECT_MAX_NODES 512

/* 1 if auto leaves algorithm a unpriced on sh for being direct (above). */
static inline int tc_auto_direct_unpriced(const struct tc_algo *a, const struct tc_shape *sh)
{
	return (a->flags & TC_ALGO_DIRECT_P2) && sh->nodes > TC_AUTO_PRICE_MAX_NODES &&
	       (!a->price || sh->nodes > TC_AUTO_PRICE_DIRECT_MAX_NODES);
}

struct tc_auto_cand {
	const struct tc_algo *algo;
	int err;	/* 0: priced; else -errno, not a candidate: why says why */
	char why[200];
	uint32_t steps; /* startups on the critical path */
	double us;	/* predicted time for the requested block size; err -EDOM: not
			 * priced, a lower bound another candidate's price is below */
	const char *how; /* how auto priced or dismissed it (TC_AUTO_HOW_*) */
};

/* struct tc_auto_cand.how: what auto built to price a candidate or dismiss it. */
#define TC_AUTO_HOW_PRICE "messages"	/* its price function: messages without blocks */
#define TC_AUTO_HOW_CELL "cell"		/* translation-invariant: one cell of sources */
#define TC_AUTO_HOW_PARTS "cell parts"	/* the parts of one cell of nodes */
#define TC_AUTO_HOW_DIRECT "unpriced"	/* direct, too many nodes to price */
#define TC_AUTO_HOW_REFUSED "refused"	/* refused by node 0's part or the builder */
#define TC_AUTO_HOW_BOUND "bound"	/* a lower bound another candidate beats */
#define TC_AUTO_HOW_SAME "same as"	/* another candidate's schedule on this shape */
#define TC_AUTO_HOW_WHOLE "WHOLE"	/* its whole schedule built (streamed) */

struct tc_auto_choice {
	size_t m;			/* the block size asked for */
	size_t class_lo, class_hi;	/* its size class (lo, hi], priced at both ends */
	struct tc_cost_params params;	/* what it was priced with */
	int ncand;			/* every algorithm of the collective, registry order */
	struct tc_auto_cand cand[TC_AUTO_MAX_CANDS];
	int winner, runner_up;		/* indices into cand; -1: none */
};

/* The winner for (coll, shape, m, p); NULL if no algorithm supports the shape. */
const struct tc_algo *tc_algo_auto(enum tc_coll_id coll, const struct tc_shape *shape, size_t block_bytes,
				   const struct tc_cost_params *p);
/* The same with everything the choice saw. 0, -EOPNOTSUPP (no candidate:
 * out->cand says why each failed), -EINVAL, -ENOMEM. */
int tc_auto_choose(enum tc_coll_id coll, const struct tc_shape *shape, size_t block_bytes,
		   const struct tc_cost_params *p, struct tc_auto_choice *out);
/* One line saying why the winner won (against the runner-up). */
void tc_auto_reason(const struct tc_auto_choice *c, char *buf, size_t len);
/* Test hook: candidate schedules priced so far by this process. */
unsigned long __tc_auto_pricings(void);

/* cache.c: schedules built once per (coll, algo, shape), shared by every
 * communicator of the process; *why says why a build failed. */
int tc_sched_get(enum tc_coll_id coll, const struct tc_algo *algo, const struct tc_shape *shape,
		 const struct tc_sched **out, const char **why);
/*
 * cache.c: node's part of (coll, algo, shape), built once per process and
 * shared read-only (core/part.h): generated alone when the algorithm has a
 * part generator, else cut from the whole schedule (tc_sched_get, verified).
 * 0, or -EOPNOTSUPP with *why for a shape the algorithm refuses, or -errno.
 */
int tc_part_get(enum tc_coll_id coll, const struct tc_algo *algo, const struct tc_shape *shape, int node,
		const struct tc_part **out, const char **why);
/* The same, not cached: the caller owns *out (tc_part_free). A generated
 * part is checked (tc_part_check) before it is returned. */
int tc_part_build(enum tc_coll_id coll, const struct tc_algo *algo, const struct tc_shape *shape, int node,
		  struct tc_part **out, const char **why);
/*
 * The run-time check of a generated part, before its first use: every
 * receive (all of one step from one peer together) equals what the peer's
 * generator sends to this node in that step, computed for that message
 * alone (tc_part_only: same step, route, blocks, so the same tags), and
 * every block the node owns is sent. 0, or -EPROTO with why naming the
 * algorithm, node, step and peer; -ENOMEM.
 */
int tc_part_check(const struct tc_algo *algo, const struct tc_part *p, char *why, size_t len);
/* Test hooks: parts cut from a whole schedule (the fallback), and parts generated alone, so far. */
unsigned long __tc_part_fallbacks(void);
unsigned long __tc_part_generated(void);

#endif /* TC_SELECT_H */
