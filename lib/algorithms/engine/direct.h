/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by the direct exchanges and the routed baselines (alltoall/atape.c,
 * alltoall/pairwise.c, alltoall/direct.c, alltoall/bruck.c,
 * allgather/bruck.c): routes with split antipodal ties, and the order in
 * which a step's routed messages are handed to the links.
 */
#ifndef TC_DIRECT_COMMON_H
#define TC_DIRECT_COMMON_H

#include "core/cost.h"
#include "core/part.h"
#include "core/sched.h"

/* One routed message of a step, before it is added to the schedule. */
struct tc_dmsg {
	int32_t src, dst;
	int32_t colour, hops;
	uint32_t seq;
	int8_t route[TC_MAX_DIMS];
};

/*
 * Shortest dimension-ordered route from src to dst; where both directions of
 * an even ring are shortest (the antipode), a source with an even coordinate
 * goes + and an odd one goes -.
 */
void tc_direct_route(const struct tc_shape *sh, int src, int dst, int8_t *route);

/* Fill m (route, colour, hops, seq = index) for a message src -> dst. */
void tc_direct_msg(const struct tc_shape *sh, struct tc_dmsg *m, uint32_t seq, int src, int dst);

/* Adds the blocks of message m to the schedule's last message. */
typedef int (*tc_direct_blocks_fn)(struct tc_sched *s, const struct tc_dmsg *m, void *arg);

/* The alltoall block {src, dst} of a direct message (a tc_direct_blocks_fn). */
int tc_direct_one_block(struct tc_sched *s, const struct tc_dmsg *m, void *arg);

/*
 * Open a new step and add the n messages (reordered in place, see
 * engine/direct.c), each with the blocks blocks() appends. 0 or -errno.
 */
int tc_direct_emit_step(struct tc_sched *s, struct tc_dmsg *m, size_t n, tc_direct_blocks_fn blocks, void *arg);

/*
 * The common end of a direct builder: frees the message array m, then
 * tc_sched_done() (finish s when err >= 0; on failure *why = oom_why for
 * -ENOMEM, else fail_why). Returns 0 or the negative errno.
 */
int tc_direct_done(struct tc_sched *s, struct tc_dmsg *m, int err, struct tc_sched **out, const char **why,
		   const char *oom_why, const char *fail_why);

/* Put a step's n messages in the order tc_direct_emit_step adds them. */
void tc_direct_sort(struct tc_dmsg *m, size_t n);

/*
 * Price step `step` in which every node x sends one message of nblk blocks
 * to (x + shift) mod P, routed and ordered as tc_direct_emit_step adds them,
 * without the blocks (bruck's steps, both collectives). m and v hold P
 * entries each. 0 or tc_cost_step's negative errno.
 */
int tc_direct_price_shift(struct tc_cost_state *c, const struct tc_shape *sh, struct tc_dmsg *m, struct tc_msg *v,
			  uint32_t step, int shift, uint32_t nblk);

/*
 * The same for a step of the n messages m[] (filled by tc_direct_msg; sorted
 * here into tc_direct_emit_step's order), each of nblk blocks: the price of a
 * direct schedule's step without its blocks (pairwise, atape).
 */
int tc_direct_price_msgs(struct tc_cost_state *c, struct tc_dmsg *m, struct tc_msg *v, size_t n, uint32_t step,
			 uint32_t nblk);

/*
 * What a price function (struct tc_algo.price) of a direct schedule holds
 * while it prices: the schedule's shell (its name, claims and rearrangement,
 * no steps), the cost model's state and room for one step's messages.
 */
struct tc_direct_pricer {
	struct tc_sched *shell;
	struct tc_cost_state *c;
	struct tc_dmsg *m;
	struct tc_msg *v;
};

/*
 * Take shell (NULL: -ENOMEM), make room for nmsgs messages and begin the
 * cost model. -EINVAL below two nodes. Whatever it returns, end with
 * tc_direct_price_end().
 */
int tc_direct_price_begin(struct tc_direct_pricer *pr, struct tc_sched *shell, size_t nmsgs,
			  const struct tc_cost_params *p, const size_t *sizes, int nsizes);

/*
 * When err is 0, the price into time_us and cost; then free everything the
 * pricer holds. On failure *why = oom_why for -ENOMEM, else fail_why.
 * Returns 0 or the negative errno.
 */
int tc_direct_price_end(struct tc_direct_pricer *pr, int err, double *time_us, struct tc_cost *cost,
			const char **why, const char *oom_why, const char *fail_why);

/* Add the message src -> dst, routed as tc_direct_route, to a node's part (core/part.h). */
int tc_direct_part_msg(struct tc_part *pt, int src, int dst);

#endif /* TC_DIRECT_COMMON_H */
