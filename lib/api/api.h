/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The top layer: every public tc_* entry point. comm.c (communicators),
 * colls.c (the collectives and their one validator), request.c (the
 * nonblocking queue and its progress thread), sim.c (simulator launch).
 */
#ifndef TC_API_H
#define TC_API_H

#include <pthread.h>

#include "colls/coll.h"

/* Per root communicator: the nonblocking queue (request.c), shared by its subs. */
struct tc_colls {
	pthread_mutex_t lock; /* protects everything below */
	pthread_cond_t work;  /* the progress thread sleeps on it */
	pthread_cond_t done;  /* waiters sleep on it */
	struct tc_request *qhead, *qtail; /* queued, not yet executed, in issue order */
	struct tc_request *live;	  /* every request not yet freed */
	struct tc_request *running;	  /* taken off the queue, executing */
	int thread_up, stop;
	pthread_t thread;
};

/* request.c: run a validated call now (or through the queue once the
 * progress thread runs), or queue it and hand back a request. */
int tc_req_blocking(struct tc_comm *comm, const struct tc_coll_args *a);
int tc_req_nonblocking(struct tc_comm *comm, const struct tc_coll_args *a, tc_request_t **out);
/* Drain the queue, stop the progress thread, free every request; for a
 * sub: wait until none of its calls is queued or running. */
void tc_colls_free(struct tc_comm *comm);
/* 1 if no call of comm's root or of any of its subs is queued or running. */
int tc_colls_idle(struct tc_comm *comm);

/* comm.c, for tests (they link the static library; the shared one does not
 * export it): force an algorithm that need not be in the tc_algos table;
 * NULL = auto. */
int __tc_comm_force_algo(tc_comm_t *comm, enum tc_coll_id coll, const struct tc_algo *algo);

#endif /* TC_API_H */
