/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Schedules as data: the contract between algorithms, the verifier, the cost
 * model and the executors.
 *
 * A schedule is global: a list of steps, each a list of messages. A message
 * goes from node src to node dst along route[] (signed hops per dimension,
 * dimension 0 first: wormhole, dimension-ordered) and carries a set of blocks.
 * A node starts step s once it has finished step s-1 (everything it sent and
 * received in steps < s); what it sends in step s it must hold at the start of
 * step s (its own data or received in an earlier step).
 *
 * Blocks: struct tc_blk {a, b}. Their meaning depends on sched->coll:
 *   TC_ALLTOALL   a = origin node, b = final destination node.
 *                      Initially node n holds {n, d} for every d != n.
 *                      At the end node d must hold {o, d} for every o != d, each
 *                      received exactly once (the block {n, n} never moves).
 *   TC_ALLGATHER  a = origin node, b = packet index (0..npackets-1); a node's
 *                      contribution is split into npackets equal packets.
 *                      Broadcast semantics: a node may send a block it holds in
 *                      several messages; every node must receive each {o, p},
 *                      o != node, exactly once.
 *   TC_REDUCE_SCATTER / TC_ALLREDUCE / TC_BCAST / ...: see
 *                      the files of lib/colls/; they reuse the same layout.
 *
 * Node numbering is row-major (last coordinate fastest), as in the driver ABI
 * (include/uapi/torus.h); port p = 2*d + dir, dir 0 = +, 1 = -.
 */
#ifndef TC_SCHED_H
#define TC_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "toruscoll.h"

#include "base/base.h"
#include "core/shape.h"

/* The collectives are the public enum tc_coll_id (include/toruscoll.h); the
 * schedules and the cost model know every one of them, the public calls that
 * take an id (tc_coll_last, tc_comm_set_algo) only TC_ALLTOALL and TC_ALLGATHER. */
#define TC_COLL_NR (TC_ALLTOALLV + 1)

/* The collective's name ("alltoall", "reduce_scatter", ...); "?" if unknown. */
const char *tc_coll_str(enum tc_coll_id coll);

/* What an algorithm claims; the verifier checks exactly what is claimed. */
#define TC_CLAIM_CONTENTION_FREE (1u << 0) /* no directed link carries two messages in one step */
#define TC_CLAIM_SHORTEST (1u << 1)	   /* every block moves along a shortest path */
#define TC_CLAIM_PERMUTATION (1u << 2)	   /* each step: every node sends <= 1 and receives <= 1 message */
#define TC_CLAIM_ONE_HOP (1u << 3)	   /* every message goes to a neighbour */

/* Message receive semantics (tc_msg.op) */
#define TC_MSG_COPY 0	/* blocks overwrite the receiver's copy */
#define TC_MSG_REDUCE 1 /* blocks are combined into the receiver's copy (reductions) */

struct tc_blk {
	int32_t a, b;
};

struct tc_msg {
	int32_t src, dst;
	int8_t route[TC_MAX_DIMS]; /* signed hops per dimension, dim 0 first */
	uint8_t op;		   /* TC_MSG_* */
	uint8_t flags;
	uint32_t step;
	uint32_t blk_off, nblk; /* sched->blks[blk_off .. blk_off+nblk) */
};

struct tc_sched {
	struct tc_shape shape;
	enum tc_coll_id coll;
	const char *algo; /* static string, e.g. "at2" */
	const char *cite; /* paper section, e.g. "Liu et al., All-Port Tori, Sec. 3.2 Algorithm AT2" */
	unsigned int claims;
	int npackets; /* allgather: packets per node's data (1 or 2); 1 otherwise */

	uint32_t nsteps;
	uint32_t *step_first; /* nsteps+1 entries: messages of step s are msgs[step_first[s]..step_first[s+1]) */
	uint32_t nmsgs, cap_msgs;
	struct tc_msg *msgs;
	uint32_t nblks, cap_blks;
	struct tc_blk *blks;

	/*
	 * Rearrangement the paper's model charges (rho per byte): the most
	 * blocks one node moves in its memory between phases, as the paper
	 * counts it (e.g. AT2: 3*r*c). Set by the algorithm; 0 if none.
	 */
	int64_t rearranged_blocks;

	/* Per-node views, built by tc_sched_finish(): for node n and step s,
	 * node_msgs[node_first[n*nsteps+s] .. node_first[n*nsteps+s+1]) are the
	 * indices (into msgs) of the messages n sends or receives in step s,
	 * sends first. */
	uint32_t *node_first; /* nodes*nsteps+1 */
	uint32_t *node_msgs;

	/* Set by tc_sched_stream(): the steps go to a sink as they are built
	 * (private to sched.c); NULL for a schedule kept whole. */
	struct tc_sched_stream *stream;

	/* Set by tc_sched_build_sources(): only the blocks whose origin has
	 * every coordinate d below src_mod[d] are built (tc_sched_src_kept);
	 * all 0 for a whole schedule. */
	int src_mod[TC_MAX_DIMS];
};

/* Building. All return 0 / index >= 0 or a negative errno (-ENOMEM, -EINVAL). */
struct tc_sched *tc_sched_new(const struct tc_shape *shape, enum tc_coll_id coll, const char *algo, const char *cite,
			      unsigned int claims);
/* Begin a new step; returns its index. Empty steps are allowed while
 * building and removed by tc_sched_finish(). */
int tc_sched_step(struct tc_sched *s);
/* Add a message in the current step; route may be NULL for "shortest
 * dimension-ordered" (ties +). Returns the message index. */
int tc_sched_msg(struct tc_sched *s, int src, int dst, const int8_t *route);
/* Append a block to the last message added. */
int tc_sched_blk(struct tc_sched *s, int a, int b);
/* Drop empty messages and steps, sort, build per-node views. 0 or -errno. */
int tc_sched_finish(struct tc_sched *s);
void tc_sched_free(struct tc_sched *s);
/*
 * The end of an algorithm's build(): with err >= 0 (building went well)
 * finishes s and hands it to *out; otherwise, or if finishing fails, frees s
 * (NULL is fine) and sets *why to fail_why. Returns 0 or the negative errno.
 */
int tc_sched_done(struct tc_sched *s, int err, struct tc_sched **out, const char **why, const char *fail_why);
/*
 * Streaming: a schedule too large to keep whole goes to a sink step by step.
 * After tc_sched_stream(s, sink, arg), each time the builder begins a step
 * (tc_sched_step) or finishes (tc_sched_finish, tc_sched_done), the step just
 * completed is checked and compacted as tc_sched_finish would (empty messages
 * and steps dropped, steps renumbered, the same validation), handed to
 * sink(arg, s, view) as a one-step view (view->step: its number in the
 * finished schedule; msgs[i].step the same), and its messages and blocks are
 * dropped. A sink error stops the build: tc_sched_step / tc_sched_finish
 * return it. The finished schedule is a shell: nsteps the number of steps
 * streamed, no messages, no per-node views (tc_verify, tc_cost_eval and the
 * executors refuse it: step_first stays NULL); tc_sched_streamed_totals()
 * gives its message and block counts. Call before the first tc_sched_step;
 * 0 or -EINVAL.
 *
 * Builders need no change to be streamed, as long as they never read back
 * their own messages or blocks (tc_sched_blk after a tc_sched_step that
 * followed the message fails with a reason instead of adding to a dropped
 * message).
 */
struct tc_step_view;
struct tc_algo;
struct tc_verify_report;
struct tc_cost_params;
struct tc_cost;
struct tc_part;
typedef int (*tc_step_sink_fn)(void *arg, const struct tc_sched *s, const struct tc_step_view *view);
int tc_sched_stream(struct tc_sched *s, tc_step_sink_fn sink, void *arg);
/* Messages and blocks a streamed schedule has handed over (0 if not streamed). */
void tc_sched_streamed_totals(const struct tc_sched *s, uint64_t *msgs, uint64_t *blks);
/*
 * Run algo->build(shape) with its schedule streamed to sink: the first
 * schedule the builder creates for this shape and collective in this thread
 * is streamed (tc_sched_stream). 0 with *out the finished shell (free it with
 * tc_sched_free), or the builder's error (-EOPNOTSUPP with *why for a shape it
 * does not support), or -EOPNOTSUPP with *why set if what the builder returned
 * is not the schedule that was streamed (the sink's results are then void).
 * Nests: a builder may stream another builder's schedule into its own.
 */
int tc_sched_build_streamed(const struct tc_algo *algo, const struct tc_shape *shape, tc_step_sink_fn sink,
			    void *arg, struct tc_sched **out, const char **why);
/*
 * Whole schedules this process has built (every node's traffic: the
 * schedule cache's builds and streamed builds; a source-restricted build is
 * not one), counted when the builder creates its schedule, so a shape the
 * builder refuses before that is not counted. A rank whose algorithms
 * generate its part alone reaches and runs its collectives with this at 0:
 * the scale tests assert it (tests/vm/scale-run).
 */
unsigned long __tc_sched_whole_builds(void);
/* algo->build(shape, out, why), counted as above when it creates its schedule. */
int tc_sched_build_whole(const struct tc_algo *algo, const struct tc_shape *shape, struct tc_sched **out,
			 const char **why);
/* 1 if the last whole build of this thread (tc_sched_build_whole, streamed or not) was counted. */
int tc_sched_whole_built(void);
/*
 * Run algo->build(shape) keeping only the blocks that start at the nodes
 * whose coordinates are all below mod[d] (a fundamental cell of the
 * translations by multiples of mod): the first schedule the builder creates
 * for this shape and collective in this thread gets src_mod. A builder that
 * supports it asks tc_sched_src_kept() before it places a source's blocks,
 * and its decisions for one block must not depend on the others (core/
 * part_sym.c uses the result). 0 with *out, or the builder's error.
 */
int tc_sched_build_sources(const struct tc_algo *algo, const struct tc_shape *shape, const int *mod,
			   struct tc_sched **out, const char **why);
/* 1 if node o's blocks are built (always, unless tc_sched_build_sources). */
int tc_sched_src_kept(const struct tc_sched *s, int o);
/* An algorithm: builds the schedule for a shape or says why not. */
struct tc_algo {
	const char *name; /* torus-sched --algo name */
	enum tc_coll_id coll;
	const char *summary;
	/* 0 and *out set, or -EOPNOTSUPP with *why set to a one-line reason
	 * (static string) when the shape is not supported, or another -errno. */
	int (*build)(const struct tc_shape *shape, struct tc_sched **out, const char **why);
	unsigned int flags; /* TC_ALGO_* */
	/*
	 * One node's part (core/part.h), generated alone: p comes from
	 * tc_part_new(shape, coll, name, ..., node), perhaps with a filter
	 * (tc_part_only); the generator sets cite, claims and npackets, adds
	 * the node's messages and finishes p with the whole schedule's step
	 * count. 0, or -EOPNOTSUPP with *why (the shapes build refuses), or
	 * another -errno; the caller frees p. NULL: not converted yet, the
	 * runtime cuts the part from the whole schedule (tc_part_get).
	 */
	int (*part)(struct tc_part *p, const char **why);
	/*
	 * Non-zero: the schedule commutes with the translations by multiples
	 * of sym_mod[d] on every shape those divide (core/part_sym.h): a
	 * node's part, and the whole schedule's verification and price, come
	 * from the blocks of one cell of sources.
	 */
	int sym_mod[TC_MAX_DIMS];
	/*
	 * Non-zero: what a node sends (per step: routes and blocks per message,
	 * not which blocks) commutes with the translations by multiples of
	 * price_mod[d] on the wrapping sides those divide, and the algorithm
	 * has a part generator: the whole schedule is priced from the parts of
	 * one cell of nodes (core/part_price.h), not built.
	 */
	int price_mod[TC_MAX_DIMS];
	/*
	 * Optional: S > 0 such that on shape some node sends in at least S
	 * distinct steps, each message carrying at least one of the
	 * npackets packets of a node's data (allgather) or one block; 0 when
	 * not known. The cost model charges every such step at least ts and a
	 * packet's bytes on that node's chain, so S bounds the time from below
	 * (auto skips a candidate whose bound another candidate's price beats).
	 */
	uint64_t (*send_steps)(const struct tc_shape *shape, int *npackets);
	/*
	 * Optional: hand the whole schedule's messages, step by step, without
	 * their blocks (nblk set), in the builder's order, to the cost model
	 * (tc_cost_begin on a shell of shape, coll and npackets; time_us[k] for
	 * sizes[k] and *cost as tc_cost_eval_sizes): the price without the
	 * P(P-1) block moves. 0, or -EOPNOTSUPP with *why, or another -errno.
	 */
	int (*price)(const struct tc_shape *shape, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		     double *time_us, struct tc_cost *cost, const char **why);
	/*
	 * Where the period depends on the shape (mtk: 2k on k dimensions):
	 * sets mod[d] for every dimension of sh, and sym_mod[0] only says
	 * that there is one. NULL: sym_mod is the period.
	 */
	void (*sym_period)(const struct tc_shape *sh, int *mod);
	/* As sym_period, for price_mod (opt2d: 2 on an even side, 1 on an odd one). */
	void (*price_period)(const struct tc_shape *sh, int *mod);
	/*
	 * Optional: on shapes where this algorithm's schedule is another's,
	 * message for message in the same order (pad where no node is
	 * imaginary: its base algorithm's), that algorithm, else NULL. auto
	 * prices the other once and gives both its price.
	 */
	const struct tc_algo *(*same_as)(const struct tc_shape *sh);
};
/* Every block its own message straight to its destination: P(P-1) messages,
 * too many for the algorithm choice to build and price on large P. */
#define TC_ALGO_DIRECT_P2 (1u << 0)

/*
 * One step of a schedule as the verifier and the cost model consume it: the
 * nmsgs messages of step `step` (numbered as in the finished schedule: empty
 * steps dropped), msgs[i].blk_off indexing blks. tc_sched_step_view() gives
 * step st of a finished schedule; a streamed build (tc_sched_stream) hands
 * its steps over in this form.
 */
struct tc_step_view {
	uint32_t step;
	uint32_t nmsgs;
	const struct tc_msg *msgs;
	const struct tc_blk *blks;
};
void tc_sched_step_view(const struct tc_sched *s, uint32_t st, struct tc_step_view *v);

/* Blocks a directed link carries in one step, for reports: calls fn for every
 * (step, link, msg) occupation. */
typedef void (*tc_link_visit_fn)(void *arg, uint32_t step, int node, int port, const struct tc_msg *m);
void tc_sched_visit_links(const struct tc_sched *s, tc_link_visit_fn fn, void *arg);
/* Internal: the directed links (node*2*ndims + port) m occupies, in route
 * order; links[] needs room for TC_MAX_DIMS*128 entries. Returns the count. */
int tc_msg_links(const struct tc_shape *shape, const struct tc_msg *m, uint32_t *links);

#endif /* TC_SCHED_H */
