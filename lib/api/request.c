// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The per-communicator queue that runs collectives, and tc_test / tc_wait.
 *
 * Every call is validated on the caller's thread before it gets here
 * (api/colls.c: bad arguments fail at once, with nothing queued). Until the first nonblocking call a
 * communicator runs collectives directly on the caller's thread. The first
 * tc_i* call starts the communicator's progress thread; from then on every
 * collective of the communicator, blocking and nonblocking ones, is
 * queued and executed by that thread in issue order, so two calls never
 * interleave on the wire and every rank executes the same sequence (the
 * call sequence number in the tags agrees). A blocking call queues and
 * waits. The progress thread works while the application computes, which is
 * what lets it overlap communication with computation.
 *
 * A sub-communicator (tc_comm_create_sub) shares its root's transport, so
 * it shares the root's queue too: a request names its communicator, the
 * root's progress thread runs the calls of the root and of all its subs in
 * the process's issue order, and before it starts a blocking call of any of
 * them runs on the caller's thread, as for one communicator. Nothing of two
 * of them ever interleaves on the shared transport.
 *
 * Locking: tc_colls.lock protects the queue, the live list, running and each
 * request's done/ret/err; the executing thread alone touches the transport
 * and the communicators' call sequence numbers.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

#define TC_PROGRESS_STACK (256 * 1024)

struct tc_request {
	struct tc_request *qnext;	     /* queue */
	struct tc_request *lprev, *lnext; /* live list */
	struct tc_colls *cs;
	struct tc_comm *comm; /* the root or one of its subs */
	struct tc_coll_args a;
	int detached; /* a tc_i* call: the application is not waiting in it */
	int done, ret;
	char err[256];
};

static int tc_coll_exec_kind(struct tc_comm *comm, const struct tc_coll_args *a);

/* Run one call on the calling thread; a collective other than alltoall
 * and allgather (exec.c records those) leaves its tc_coll_last record. */
static int tc_coll_exec(struct tc_comm *comm, const struct tc_coll_args *a)
{
	uint64_t p0 = comm->tp.n_posts, w0 = comm->tp.n_waits, g0 = comm->tp.n_regs;
	struct tc_coll_info *li;
	int ret;

	if (a->kind == TC_ALLTOALL || a->kind == TC_ALLGATHER || (unsigned int)a->kind > TC_ALLTOALLV)
		return tc_coll_exec_kind(comm, a);
	comm->offloaded = 0;
	ret = tc_coll_exec_kind(comm, a);
	if (ret)
		return ret;
	if (a->kind == TC_BARRIER || a->kind == TC_ALLREDUCE)
		comm->all_open = 1;
	li = &comm->line_last[a->kind];
	memset(li, 0, sizeof(*li));
	li->size = sizeof(*li);
	snprintf(li->algo, sizeof(li->algo), "%s",
		 !comm->offloaded ? "lines" : a->kind == TC_BARRIER ? "lines-tokens" : "lines-program");
	if (a->kind == TC_BCAST || a->kind == TC_REDUCE || a->kind == TC_ALLREDUCE || a->kind == TC_REDUCE_SCATTER)
		li->block_bytes = a->count * tc_dt_size(a->dt);
	li->offloaded = comm->offloaded;
	li->posts = (uint32_t)(comm->tp.n_posts - p0);
	li->waits = (uint32_t)(comm->tp.n_waits - w0);
	li->regs = (uint32_t)(comm->tp.n_regs - g0);
	return 0;
}

static int tc_coll_exec_kind(struct tc_comm *comm, const struct tc_coll_args *a)
{
	switch (a->kind) {
	case TC_ALLTOALL:
		return tc_exec_coll(comm, TC_ALLTOALL, a->sendbuf, a->recvbuf, a->count);
	case TC_ALLGATHER:
		return tc_exec_coll(comm, TC_ALLGATHER, a->sendbuf, a->recvbuf, a->count);
	case TC_BARRIER:
		return tc_exec_barrier(comm);
	case TC_BCAST:
		return tc_exec_bcast(comm, a);
	case TC_REDUCE:
		return tc_exec_reduce(comm, a);
	case TC_ALLREDUCE:
		return tc_exec_allreduce(comm, a);
	case TC_REDUCE_SCATTER:
		return tc_exec_reduce_scatter(comm, a);
	case TC_ALLGATHERV:
		return tc_exec_allgatherv(comm, a);
	case TC_ALLTOALLV:
		return tc_exec_alltoallv(comm, a);
	default:
		break;
	}
	return tc_err(-EINVAL, "collective kind %d unknown", (int)a->kind);
}

/* The queue of comm: its own, or its root's for a sub. */
static struct tc_colls *tc_colls_get(struct tc_comm *comm)
{
	struct tc_colls *cs;

	if (comm->root)
		comm = comm->root;
	cs = comm->colls;

	if (cs)
		return cs;
	cs = calloc(1, sizeof(*cs));
	if (!cs)
		return NULL;
	pthread_mutex_init(&cs->lock, NULL);
	pthread_cond_init(&cs->work, NULL);
	pthread_cond_init(&cs->done, NULL);
	comm->colls = cs;
	return cs;
}


static void *tc_progress_main(void *p)
{
	struct sched_param sp = { 0 };
	struct tc_colls *cs = p;
	struct tc_request *req;
	int ret;

	/*
	 * SCHED_BATCH: woken by a tc_i* call, this thread does not preempt the
	 * application thread that queued it (the kernel's wakeup preemption
	 * skips batch tasks), so the call returns at once even on a busy CPU
	 * and this thread runs when a CPU is free; it keeps its fair share.
	 * Not allowed (a seccomp filter, say): it runs as before.
	 */
	(void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
	pthread_mutex_lock(&cs->lock);
	for (;;) {
		while (!cs->qhead && !cs->stop)
			pthread_cond_wait(&cs->work, &cs->lock);
		if (!cs->qhead)
			break;
		req = cs->qhead;
		cs->qhead = req->qnext;
		if (!cs->qhead)
			cs->qtail = NULL;
		cs->running = req;
		pthread_mutex_unlock(&cs->lock);

		req->comm->tp.detached = req->detached;
		ret = tc_coll_exec(req->comm, &req->a);
		req->comm->tp.detached = 0;

		pthread_mutex_lock(&cs->lock);
		cs->running = NULL;
		if (ret)
			snprintf(req->err, sizeof(req->err), "%s", tc_last_error());
		req->ret = ret;
		req->done = 1;
		pthread_cond_broadcast(&cs->done);
	}
	pthread_mutex_unlock(&cs->lock);
	return NULL;
}

static int tc_progress_start(struct tc_colls *cs)
{
	pthread_attr_t pa;
	int ret;

	if (cs->thread_up)
		return 0;
	pthread_attr_init(&pa);
	pthread_attr_setstacksize(&pa, TC_PROGRESS_STACK);
	ret = -pthread_create(&cs->thread, &pa, tc_progress_main, cs);
	pthread_attr_destroy(&pa);
	if (ret)
		return tc_err(ret, "nonblocking collectives: cannot start the progress thread: %s", tc_strerror(ret));
	cs->thread_up = 1;
	return 0;
}

/* Queue a validated call; the progress thread must be running. */
static int tc_enqueue(struct tc_colls *cs, struct tc_comm *comm, const struct tc_coll_args *a, int detached,
		      struct tc_request **out)
{
	struct tc_request *req = calloc(1, sizeof(*req));

	if (!req)
		return tc_err(-ENOMEM, "%s: out of memory for a request", tc_coll_str(a->kind));
	req->cs = cs;
	req->comm = comm;
	req->a = *a;
	req->detached = detached;
	pthread_mutex_lock(&cs->lock);
	req->lnext = cs->live;
	if (cs->live)
		cs->live->lprev = req;
	cs->live = req;
	if (cs->qtail)
		cs->qtail->qnext = req;
	else
		cs->qhead = req;
	cs->qtail = req;
	pthread_cond_signal(&cs->work);
	pthread_mutex_unlock(&cs->lock);
	*out = req;
	return 0;
}

/* Reap a done request: unlink, free; returns its result (setting this thread's error). Caller holds the lock. */
static int __tc_reap(struct tc_request *req)
{
	struct tc_colls *cs = req->cs;
	int ret = req->ret;

	if (req->lprev)
		req->lprev->lnext = req->lnext;
	else
		cs->live = req->lnext;
	if (req->lnext)
		req->lnext->lprev = req->lprev;
	if (ret)
		tc_err(ret, "%s", req->err);
	free(req);
	return ret;
}

static int tc_wait_req(struct tc_request *req)
{
	struct tc_colls *cs = req->cs;
	int ret;

	pthread_mutex_lock(&cs->lock);
	while (!req->done)
		pthread_cond_wait(&cs->done, &cs->lock);
	ret = __tc_reap(req);
	pthread_mutex_unlock(&cs->lock);
	return ret;
}

/* A blocking call: through the queue once the progress thread runs, directly before. */
int tc_req_blocking(struct tc_comm *comm, const struct tc_coll_args *a)
{
	struct tc_colls *cs = tc_colls_get(comm);
	struct tc_request *req;
	int ret;

	if (!cs)
		return tc_err(-ENOMEM, "%s: out of memory", tc_coll_str(a->kind));
	if (!cs->thread_up)
		return tc_coll_exec(comm, a);
	ret = tc_enqueue(cs, comm, a, 0, &req);
	if (ret)
		return ret;
	return tc_wait_req(req);
}

int tc_req_nonblocking(struct tc_comm *comm, const struct tc_coll_args *a, tc_request_t **out)
{
	struct tc_colls *cs = tc_colls_get(comm);
	int ret;

	if (!cs)
		return tc_err(-ENOMEM, "%s: out of memory", tc_coll_str(a->kind));
	ret = tc_progress_start(cs);
	if (ret)
		return ret;
	return tc_enqueue(cs, comm, a, 1, out);
}

/* Has the sub comm a call queued or running? Caller holds cs->lock. */
static int __tc_colls_busy(const struct tc_colls *cs, const struct tc_comm *comm)
{
	if (cs->running && cs->running->comm == comm)
		return 1;
	for (const struct tc_request *r = cs->qhead; r; r = r->qnext)
		if (r->comm == comm)
			return 1;
	return 0;
}

int tc_colls_idle(struct tc_comm *comm)
{
	struct tc_colls *cs = comm->root ? comm->root->colls : comm->colls;
	int idle;

	if (!cs)
		return 1;
	pthread_mutex_lock(&cs->lock);
	idle = !cs->qhead && !cs->running;
	pthread_mutex_unlock(&cs->lock);
	return idle;
}

void tc_colls_free(struct tc_comm *comm)
{
	struct tc_colls *cs = comm->colls;

	if (comm->root) {
		/* a sub: its calls in the root's queue finish first; the
		 * requests stay the root's until waited for or the root goes */
		cs = comm->root->colls;
		if (!cs)
			return;
		pthread_mutex_lock(&cs->lock);
		while (__tc_colls_busy(cs, comm))
			pthread_cond_wait(&cs->done, &cs->lock);
		pthread_mutex_unlock(&cs->lock);
		return;
	}
	if (!cs)
		return;
	if (cs->thread_up) {
		/* The thread drains the queue, then exits. */
		pthread_mutex_lock(&cs->lock);
		cs->stop = 1;
		pthread_cond_signal(&cs->work);
		pthread_mutex_unlock(&cs->lock);
		pthread_join(cs->thread, NULL);
	}
	while (cs->live) {
		struct tc_request *req = cs->live;

		cs->live = req->lnext;
		free(req);
	}
	pthread_cond_destroy(&cs->work);
	pthread_cond_destroy(&cs->done);
	pthread_mutex_destroy(&cs->lock);
	free(cs);
	comm->colls = NULL;
}

TC_EXPORT int tc_test(tc_request_t **reqp)
{
	struct tc_request *req;
	struct tc_colls *cs;
	int ret;

	if (!reqp)
		return tc_err(-EINVAL, "tc_test: request pointer is NULL");
	req = *reqp;
	if (!req)
		return 1;
	cs = req->cs;
	pthread_mutex_lock(&cs->lock);
	if (!req->done) {
		pthread_mutex_unlock(&cs->lock);
		return 0;
	}
	ret = __tc_reap(req);
	pthread_mutex_unlock(&cs->lock);
	*reqp = NULL;
	return ret ? ret : 1;
}

TC_EXPORT int tc_wait(tc_request_t **reqp)
{
	int ret;

	if (!reqp)
		return tc_err(-EINVAL, "tc_wait: request pointer is NULL");
	if (!*reqp)
		return 0;
	ret = tc_wait_req(*reqp);
	*reqp = NULL;
	return ret;
}
