/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runtime layer: the communicator (its transport handle, what the
 * executor caches in it) and the executors every collective runs on.
 */
#ifndef TC_COMM_H
#define TC_COMM_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "toruscoll.h"
#include "base/base.h"
#include "core/cost.h"
#include "select/select.h"
#include "transport/transport.h"

#define TC_DEFAULT_TIMEOUT_MS 10000
/* The TC_COST_* variables a communicator reads (api/comm.c). */
#define TC_COST_ENV_MAX 6
/* Blocks from this size up run zero copy on a transport that registers memory (umem.c). */
#define TC_ZCOPY_MIN_DEFAULT 1024
/* Plans kept per communicator (one per schedule and block size). */
#define TC_PLAN_CACHE 8

struct tc_plan;
struct tc_colls;

/* What the last call of one collective ran (tc_coll_last). */
/* Where a call's data lives (umem.c): the transport buffer, or also the
 * caller's send and receive buffers, registered for the call. */
enum { TC_UREG_BUF, TC_UREG_SEND, TC_UREG_RECV, TC_UREG_N };
struct tc_umem {
	int on;			  /* zero copy: the user's buffers are registered */
	uint32_t key[TC_UREG_N];  /* TC_KEY_BUFFER: not registered */
	char *ptr[TC_UREG_N];	  /* ptr[TC_UREG_BUF]: set by the caller */
};

struct tc_coll_state {
	const struct tc_algo *forced; /* NULL = the library's choice */
	/* the variable that forced it (TC_ALLTOALL_ALGO, TC_ALLGATHER_ALGO),
	 * NULL when tc_comm_set_algo did: an algorithm forced by the
	 * environment that cannot run on the shape is an error, one forced by
	 * the call falls back to the library's choice (last.why says why) */
	const char *forced_by;
	int have_last;
	struct tc_coll_info last; /* last.why: why the forced algorithm did not run */
	/* the part that ran (part cache: lives as long as the process); tc_coll_last prices it when asked */
	const struct tc_part *last_part;
	/* A call ran to the end: every peer of the collective has its node
	 * open (a send to a node not yet open again is refused; the stepped
	 * executor posts it again, a program would fail), so the next call
	 * may run as one program. */
	int warm;
};

struct tc_comm {
	struct tc_tp tp;	/* the transport: ops, shape, rank, limits, timeout */
	int coords[TC_MAX_DIMS];
	int neighbors[2 * TC_MAX_DIMS];
	int broken;		/* a collective failed mid-way: transfers may still be posted */
	char broken_why[160];

	struct tc_coll_state coll[2]; /* by enum tc_coll_id */

	/* What the algorithm choice prices with (tp.cost): the clock it is
	 * for, the transport's own figures (the fabric clock's, before
	 * TC_COST_*) and the TC_COST_* read at creation (< 0: unset), so
	 * tc_comm_set_clock can price again (api/comm.c). */
	uint32_t transport; /* enum tc_transport */
	uint32_t clock;	    /* enum tc_clock */
	struct tc_cost_params fabric_cost;
	double cost_env[TC_COST_ENV_MAX];

	struct tc_plan *plans[TC_PLAN_CACHE];
	unsigned int plan_clock;

	int offloaded;		/* the running call ran as one program (runtime/exec.c, colls/prog.c) */
	/* A call completed whose completion means every node of the
	 * communicator has its node open (barrier, alltoall, allgather,
	 * allreduce): a program may send to any of them (colls/prog.c). */
	int all_open;
	struct tc_cprogs *cprogs; /* colls/prog.c: barrier and bcast programs; NULL until first used */
	/* tc_coll_last of the collectives without a choice of algorithm
	 * (api/request.c): by enum tc_coll_id, [0] and [1] unused */
	struct tc_coll_info line_last[TC_ALLTOALLV + 1];
	size_t zcopy_min;	/* blocks of at least this many bytes run zero copy (TC_ZCOPY_MIN) */
	uint32_t coll_seq;	/* line collectives run (their tags); touched only by the executing thread */
	struct tc_colls *colls; /* api/request.c: the nonblocking queue; NULL until first used (a sub uses its root's) */

	/* Sub-communicators (tc_comm_create_sub): a sub runs on a box of its
	 * root's torus over the root's transport (transport/sub.c) and through
	 * the root's queue. The root keeps its live subs in a list; destroying
	 * the root detaches them (root NULL, orphan 1: their calls fail -EIO). */
	struct tc_comm *root;		    /* a sub: the communicator that owns the transport; else NULL */
	struct tc_comm *subs;		    /* the root: its live subs */
	struct tc_comm *sub_prev, *sub_next; /* a sub: in its root's list */
	uint32_t context;		    /* a sub: its tag context (1..TC_TAG_CTX_MAX) */
	int orphan;			    /* a sub whose root was destroyed */
};

/* step.c: the one post/wait/fail path of every collective. */
/* -EIO with the first failure's reason if an earlier call broke comm. */
int tc_comm_usable(const struct tc_comm *comm, const char *name);
/* The transport buffer, at least bytes (tc_err names name on failure). */
int tc_comm_buffer(struct tc_comm *comm, const char *name, size_t bytes, char **base);
/* Mark comm broken with tc_last_error() as the reason; returns ret. */
int tc_comm_fail(struct tc_comm *comm, int ret);
/* Post n transfers as one submission and wait for their n completions. On
 * failure tc_last_error() names name, what, the step, the port and the peer,
 * and comm is broken. */
int tc_step_exec(struct tc_comm *comm, const char *name, const char *what, unsigned int step,
		 const struct tc_xfer *x, unsigned int n);

/* umem.c: a call runs zero copy when the transport registers memory, the
 * block is at least comm->zcopy_min and the buffers do not overlap; then
 * u->on is set and send (slen bytes, read-only) and recv (rlen, written)
 * are registered until tc_umem_end. Otherwise, or if registering fails,
 * the call stages through the transport buffer. */
void tc_umem_begin(struct tc_comm *comm, struct tc_umem *u, const void *send, size_t slen, void *recv, size_t rlen,
		   size_t block);
void tc_umem_end(struct tc_comm *comm, struct tc_umem *u);

/* colls/prog.c: free the barrier and bcast programs. */
void tc_cprog_free_all(struct tc_comm *comm);

/* exec.c: the schedule executor (alltoall, allgather). */
void tc_exec_free_plans(struct tc_comm *comm);
/* Run one tc_alltoall/tc_allgather (validated by the caller) on the calling thread. */
int tc_exec_coll(struct tc_comm *comm, enum tc_coll_id id, const void *sendbuf, void *recvbuf, size_t m);

#endif /* TC_COMM_H */
