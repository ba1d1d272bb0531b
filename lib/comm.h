/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to libtoruscoll: the communicator, what the executor caches in it,
 * and the helpers comm.c, exec.c, error.c and the transports share.
 */
#ifndef TC_COMM_H
#define TC_COMM_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "toruscoll.h"
#include "sched.h"
#include "transport.h"

#define TC_EXPORT __attribute__((visibility("default")))

#define TC_DEFAULT_TIMEOUT_MS 10000
/* Plans kept per communicator (one per schedule and block size). */
#define TC_PLAN_CACHE 8

struct tc_plan;
struct tc_colls;

/* What the last call of one collective ran (tc_coll_last). */
struct tc_coll_state {
	const struct tc_algo *forced; /* NULL = the library's choice */
	int have_last;
	struct tc_coll_info last; /* last.why: why the forced algorithm did not run */
	const struct tc_sched *last_sched; /* its cost is priced when tc_coll_last asks */
};

struct tc_comm {
	const struct tc_transport_ops *ops;
	void *tp;		/* transport private */
	struct tc_shape shape;	/* filled by ops->open */
	int rank;		/* filled by ops->open */
	int coords[TC_MAX_DIMS];
	int neighbors[2 * TC_MAX_DIMS];
	uint32_t fabric_id;
	int timeout_ms;
	uint32_t max_segs;	/* most segments per transfer, 0 = no limit (set by ops->open) */
	int broken;		/* a collective failed mid-way: transfers may still be posted */
	char broken_why[160];

	struct tc_coll_state coll[2]; /* by enum tc_coll_id */

	struct tc_plan *plans[TC_PLAN_CACHE];
	unsigned int plan_clock;

	struct tc_colls *colls; /* request.c: call sequence and nonblocking queue; NULL until first used */
};

/* error.c: the calling thread's one-line reason for its last failure. */
__attribute__((format(printf, 2, 3))) int tc_err(int err, const char *fmt, ...);
void tc_deadline(struct timespec *ts, int timeout_ms);

/* exec.c */
void tc_exec_free_plans(struct tc_comm *comm);
/* The cost model's figures for a schedule, priced once per process. */
int tc_exec_cost(const struct tc_sched *s, struct tc_cost *out);
/* Run tc_alltoall/tc_allgather on the calling thread, bypassing the queue (request.c's progress thread). */
int tc_exec_coll(struct tc_comm *comm, enum tc_coll_id id, const void *sendbuf, void *recvbuf, size_t m);

/* request.c: once a communicator has a progress thread, every blocking
 * collective goes through its queue (tc_colls_queued() says so). */
int tc_colls_queued(const struct tc_comm *comm);
int tc_colls_blocking(struct tc_comm *comm, enum tc_coll_id id, const void *sendbuf, void *recvbuf, size_t m);
void tc_colls_free(struct tc_comm *comm);

/* transport_sim.c: the node a simulated communicator is bound to. */
int tc_sim_node_count(const tc_sim_t *sim);

/* comm.c, exported for tests only (not in the public header): force an
 * algorithm that need not be in the tc_algos table; NULL = auto. */
TC_EXPORT int __tc_comm_force_algo(tc_comm_t *comm, enum tc_coll_id coll, const struct tc_algo *algo);

#endif /* TC_COMM_H */
