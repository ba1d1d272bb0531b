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
 *   TC_COLL_ALLTOALL   a = origin node, b = final destination node.
 *                      Initially node n holds {n, d} for every d != n.
 *                      At the end node d must hold {o, d} for every o != d, each
 *                      received exactly once (the block {n, n} never moves).
 *   TC_COLL_ALLGATHER  a = origin node, b = packet index (0..npackets-1); a node's
 *                      contribution is split into npackets equal packets.
 *                      Broadcast semantics: a node may send a block it holds in
 *                      several messages; every node must receive each {o, p},
 *                      o != node, exactly once.
 *   TC_COLL_REDUCE_SCATTER / TC_COLL_ALLREDUCE / TC_COLL_BCAST / ...: see
 *                      lib/coll_*.c; they reuse the same layout.
 *
 * Node numbering is row-major (last coordinate fastest), as in the driver ABI
 * (include/uapi/torus.h); port p = 2*d + dir, dir 0 = +, 1 = -.
 */
#ifndef TC_SCHED_H
#define TC_SCHED_H

#include <stddef.h>
#include <stdint.h>

#define TC_MAX_DIMS 6

struct tc_shape {
	int ndims;
	int dims[TC_MAX_DIMS];
	unsigned int wrap_mask; /* bit d: dimension d wraps */
	int one_port;		/* 1: a node sends at most one and receives at most one message per step */
	int nodes;		/* product of dims (filled by tc_shape_init) */
};

/* Fill nodes; validate. Returns 0 or -EINVAL. */
int tc_shape_init(struct tc_shape *s, int ndims, const int *dims, unsigned int wrap_mask, int one_port);
/* Parse "8x8" / "4x4x4" / "8"; wrap all dims unless mesh. 0 or -EINVAL. */
int tc_shape_parse(struct tc_shape *s, const char *dims, int mesh, int one_port);
/* Same dims, wrap mask and port model (nodes follows). */
int tc_shape_equal(const struct tc_shape *a, const struct tc_shape *b);
void tc_shape_coords(const struct tc_shape *s, int node, int *coords);
int tc_shape_node(const struct tc_shape *s, const int *coords); /* coords reduced mod dims */
/* Node reached from node by route (signed hops per dim); -1 if it leaves a mesh. */
int tc_shape_walk(const struct tc_shape *s, int node, const int8_t *route);
/* Ring/line distance helpers for dimension d: shortest signed offset from
 * coordinate a to coordinate b (coordinates in dimension d, not node ids).
 * On a wrapping even ring the tie (n/2) is returned as +n/2. */
int tc_shape_delta(const struct tc_shape *s, int d, int a, int b);
/*
 * The ports of a message with this route (dimension 0 first): it leaves on
 * the first hop's port (+ in dimension d: 2d, -: 2d+1) and arrives on the
 * last hop's (+ in d: 2d+1, -: 2d). 0, or -EINVAL for an empty route.
 */
int tc_route_ports(const struct tc_shape *s, const int8_t *route, int *first, int *last);
/* Neighbour of node on port (2*d+dir), -1 off a mesh edge. */
int tc_shape_neighbor(const struct tc_shape *s, int node, int port);
/* "8x8", "4x4 mesh", "8x8 wrap=1,0", "+ one-port": 0 or -ENOSPC. */
int tc_shape_str(const struct tc_shape *s, char *buf, size_t len);

enum tc_coll {
	TC_COLL_ALLTOALL = 0,
	TC_COLL_ALLGATHER,
	TC_COLL_REDUCE_SCATTER,
	TC_COLL_ALLREDUCE,
	TC_COLL_BCAST,
	TC_COLL_REDUCE,
	TC_COLL_BARRIER,
	TC_COLL_NR,
};

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
	enum tc_coll coll;
	const char *algo; /* static string, e.g. "at2" */
	const char *cite; /* paper section, e.g. "000 Sec. 3.2 Algorithm AT2" */
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
};

/* Building. All return 0 / index >= 0 or a negative errno (-ENOMEM, -EINVAL). */
struct tc_sched *tc_sched_new(const struct tc_shape *shape, enum tc_coll coll, const char *algo, const char *cite,
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
 * Build, verify and price algo's schedule for shape without keeping it: a
 * streamed build whose sink runs tc_verify_step and tc_cost_step. Fills *r
 * as tc_verify does and *cost, time_us[k] as tc_cost_eval_sizes(p, sizes,
 * nsizes) does (p may be NULL with nsizes 0), and *nsteps / *nblks (may
 * be NULL) with the schedule's steps and block moves. Returns what
 * tc_verify returns (0, -EPROTO with r->first_violation; cost and r's link
 * totals filled either way), or the build's error (with *why) or -ENOMEM
 * etc.; always call tc_verify_report_free(r).
 */
int tc_sched_check_streamed(const struct tc_algo *algo, const struct tc_shape *shape, const struct tc_cost_params *p,
			    const size_t *sizes, int nsizes, double *time_us, struct tc_verify_report *r,
			    struct tc_cost *cost, uint32_t *nsteps, uint64_t *nblks, const char **why);
/* One-line reason for the last error of tc_sched_new/step/msg/blk/finish,
 * tc_verify, tc_sim_run, tc_cost_eval or tc_sched_get in this thread; ""
 * when there has been none. */
const char *tc_sched_last_error(void);
/* Internal: record the reason and return err. */
int tc_sched_set_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An algorithm: builds the schedule for a shape or says why not. */
struct tc_algo {
	const char *name; /* torus-sched --algo name */
	enum tc_coll coll;
	const char *summary;
	/* 0 and *out set, or -EOPNOTSUPP with *why set to a one-line reason
	 * (static string) when the shape is not supported, or another -errno. */
	int (*build)(const struct tc_shape *shape, struct tc_sched **out, const char **why);
};

/* lib/algos.c: the table of every algorithm, and lookup. */
extern const struct tc_algo *const tc_algos[];
const struct tc_algo *tc_algo_find(enum tc_coll coll, const char *name);
/* The library's choice for shape/size/transport (name "auto"). */
const struct tc_algo *tc_algo_auto(enum tc_coll coll, const struct tc_shape *shape, size_t block_bytes);

/* Verifier (lib/verify.c) */
struct tc_verify_report {
	int ok;
	char first_violation[256]; /* one line, empty when ok */
	int64_t max_link_blocks;   /* most blocks any directed link carries over the whole schedule */
	/* Per directed link (node*2*ndims + port) total blocks carried, length
	 * nodes*2*ndims; allocated by tc_verify, freed by tc_verify_report_free. */
	int64_t *link_blocks;
	int64_t *link_msgs;
};
/* Returns 0 when the schedule is correct (r->ok = 1), -EPROTO with
 * r->first_violation set when it is not (link totals still filled), or
 * -EINVAL / -ENOMEM / -EOVERFLOW (r freed). Always call tc_verify_report_free(). */
int tc_verify(const struct tc_sched *s, struct tc_verify_report *r);
void tc_verify_report_free(struct tc_verify_report *r);
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

/*
 * The verifier one step at a time; tc_verify() is begin, a step per step of
 * the finished schedule, end. begin reads s's shape, coll, claims, algo and
 * npackets only (not its steps) and fills r as tc_verify does; steps must
 * come in increasing step order. step returns 0 (a violation is recorded,
 * not returned) or -EINVAL / -EOVERFLOW; end frees the state and returns
 * what tc_verify returns (with r->ok, r->first_violation, the link totals).
 * An error of begin frees everything (*out NULL, r freed); after an error of
 * step, call end (it frees; ignore its verdict) and tc_verify_report_free(r).
 */
struct tc_verify_state;
int tc_verify_begin(const struct tc_sched *s, struct tc_verify_report *r, struct tc_verify_state **out);
int tc_verify_step(struct tc_verify_state *v, const struct tc_step_view *st);
int tc_verify_end(struct tc_verify_state *v);
/* Blocks a directed link carries in one step, for reports: calls fn for every
 * (step, link, msg) occupation. */
typedef void (*tc_link_visit_fn)(void *arg, uint32_t step, int node, int port, const struct tc_msg *m);
void tc_sched_visit_links(const struct tc_sched *s, tc_link_visit_fn fn, void *arg);
/* Internal: the directed links (node*2*ndims + port) m occupies, in route
 * order; links[] needs room for TC_MAX_DIMS*128 entries. Returns the count. */
int tc_msg_links(const struct tc_shape *shape, const struct tc_msg *m, uint32_t *links);

/* Cost model (lib/cost.c) */
struct tc_cost_params {
	double ts_us, tw_us_per_byte, rho_us_per_byte;
	size_t block_bytes; /* m */
};
struct tc_cost {
	uint32_t steps;		    /* startups on the longest chain */
	double transmission_blocks; /* critical path in blocks (packets count 1/npackets) */
	double lockstep_blocks;	    /* sum over steps of the largest message */
	int64_t max_link_blocks;
	int64_t rearranged_blocks;
	double lower_bound_blocks;  /* 0 when no bound is known for the collective */
	double ratio;		    /* transmission_blocks / lower_bound_blocks */
	double lower_bound_steps;   /* allgather: ceil((N-1)/(2k)) on all-port tori */
	double time_us;		    /* with params: critical path of ts + b*m*tw, plus rho*m*rearranged */
};
int tc_cost_eval(const struct tc_sched *s, const struct tc_cost_params *p, struct tc_cost *out);
/* The same for several block sizes in one pass (p->block_bytes ignored):
 * time_us[k] for sizes[k], k < nsizes <= 32; out->time_us is 0. */
int tc_cost_eval_sizes(const struct tc_sched *s, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		       double *time_us, struct tc_cost *out);
/*
 * The cost model one step at a time; tc_cost_eval() and tc_cost_eval_sizes()
 * are begin, a step per step, end. begin reads s's shape, coll and npackets
 * (p and sizes as tc_cost_eval_sizes; p may be NULL with nsizes 0); end
 * takes rearranged_blocks from s (the finished schedule, or the shell a
 * streamed build returns), fills time_us[k] and *out as
 * tc_cost_eval_sizes does, and frees the state. With out NULL, end only frees.
 */
struct tc_cost_state;
int tc_cost_begin(const struct tc_sched *s, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		  struct tc_cost_state **out);
int tc_cost_step(struct tc_cost_state *c, const struct tc_step_view *st);
int tc_cost_end(struct tc_cost_state *c, const struct tc_sched *s, double *time_us, struct tc_cost *out);
double tc_lower_bound_blocks(const struct tc_shape *shape, enum tc_coll coll);

/* Schedule cache (lib/cache.c): built once per (coll, algo, shape). */
int tc_sched_get(enum tc_coll coll, const struct tc_algo *algo, const struct tc_shape *shape,
		 const struct tc_sched **out, const char **why);

/* Whole-fabric simulator (lib/sim.c): runs every node of the schedule in
 * this process moving real bytes. For alltoall: send[n] holds nodes blocks of
 * block_bytes (MPI_Alltoall layout), recv[n] receives them. For allgather:
 * send[n] holds block_bytes, recv[n] nodes*block_bytes. Returns 0 or -errno. */
int tc_sim_run(const struct tc_sched *s, size_t block_bytes, void *const *send, void *const *recv);

#endif /* TC_SCHED_H */
