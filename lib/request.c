// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The public entry points of the everyday collectives, their nonblocking
 * forms, and the per-communicator queue that runs them.
 *
 * Every call is validated on the caller's thread (bad arguments fail at
 * once, with nothing queued). Until the first nonblocking call a
 * communicator runs collectives directly on the caller's thread. The first
 * tc_i* call starts the communicator's progress thread; from then on every
 * collective of the communicator, blocking ones (tc_alltoall and
 * tc_allgather too, through tc_colls_blocking) and nonblocking ones, is
 * queued and executed by that thread in issue order, so two calls never
 * interleave on the wire and every rank executes the same sequence (the
 * call sequence number in the tags agrees). A blocking call queues and
 * waits. The progress thread works while the application computes, which is
 * what lets it overlap communication with computation.
 *
 * Locking: tc_colls.lock protects the queue, the live list and each
 * request's done/ret/err; the executing thread alone touches the transport
 * and tc_colls.seq.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

#define TC_PROGRESS_STACK (256 * 1024)

struct tc_request {
	struct tc_request *qnext;	     /* queue */
	struct tc_request *lprev, *lnext; /* live list */
	struct tc_colls *cs;
	struct tc_coll_args a;
	int done, ret;
	char err[256];
};

static const char *const tc_kind_name[] = {
	[TC_K_ALLTOALL] = "alltoall",	    [TC_K_ALLGATHER] = "allgather", [TC_K_BARRIER] = "barrier",
	[TC_K_BCAST] = "bcast",		    [TC_K_REDUCE] = "reduce",	    [TC_K_ALLREDUCE] = "allreduce",
	[TC_K_REDUCE_SCATTER] = "reduce_scatter", [TC_K_ALLGATHERV] = "allgatherv", [TC_K_ALLTOALLV] = "alltoallv",
};

/* Run one call on the calling thread. */
static int tc_coll_exec(struct tc_comm *comm, const struct tc_coll_args *a)
{
	switch (a->kind) {
	case TC_K_ALLTOALL:
		return tc_exec_coll(comm, TC_ALLTOALL, a->sendbuf, a->recvbuf, a->count);
	case TC_K_ALLGATHER:
		return tc_exec_coll(comm, TC_ALLGATHER, a->sendbuf, a->recvbuf, a->count);
	case TC_K_BARRIER:
		return tc_exec_barrier(comm);
	case TC_K_BCAST:
		return tc_exec_bcast(comm, a);
	case TC_K_REDUCE:
		return tc_exec_reduce(comm, a);
	case TC_K_ALLREDUCE:
		return tc_exec_allreduce(comm, a);
	case TC_K_REDUCE_SCATTER:
		return tc_exec_reduce_scatter(comm, a);
	case TC_K_ALLGATHERV:
		return tc_exec_allgatherv(comm, a);
	case TC_K_ALLTOALLV:
		return tc_exec_alltoallv(comm, a);
	}
	return tc_err(-EINVAL, "collective kind %d unknown", (int)a->kind);
}

static struct tc_colls *tc_colls_get(struct tc_comm *comm)
{
	struct tc_colls *cs = comm->colls;

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
	struct tc_comm *comm = p;
	struct tc_colls *cs = comm->colls;
	struct tc_request *req;
	int ret;

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
		pthread_mutex_unlock(&cs->lock);

		ret = tc_coll_exec(comm, &req->a);

		pthread_mutex_lock(&cs->lock);
		if (ret)
			snprintf(req->err, sizeof(req->err), "%s", tc_last_error());
		req->ret = ret;
		req->done = 1;
		pthread_cond_broadcast(&cs->done);
	}
	pthread_mutex_unlock(&cs->lock);
	return NULL;
}

static int tc_progress_start(struct tc_comm *comm, struct tc_colls *cs)
{
	pthread_attr_t pa;
	int ret;

	if (cs->thread_up)
		return 0;
	pthread_attr_init(&pa);
	pthread_attr_setstacksize(&pa, TC_PROGRESS_STACK);
	ret = -pthread_create(&cs->thread, &pa, tc_progress_main, comm);
	pthread_attr_destroy(&pa);
	if (ret)
		return tc_err(ret, "nonblocking collectives: cannot start the progress thread: %s", tc_strerror(ret));
	cs->thread_up = 1;
	return 0;
}

/* Queue a validated call; the progress thread must be running. */
static int tc_enqueue(struct tc_comm *comm, const struct tc_coll_args *a, struct tc_request **out)
{
	struct tc_colls *cs = comm->colls;
	struct tc_request *req = calloc(1, sizeof(*req));

	if (!req)
		return tc_err(-ENOMEM, "%s: out of memory for a request", tc_kind_name[a->kind]);
	req->cs = cs;
	req->a = *a;
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
static int tc_blocking(struct tc_comm *comm, const struct tc_coll_args *a)
{
	struct tc_colls *cs = tc_colls_get(comm);
	struct tc_request *req;
	int ret;

	if (!cs)
		return tc_err(-ENOMEM, "%s: out of memory", tc_kind_name[a->kind]);
	if (!cs->thread_up)
		return tc_coll_exec(comm, a);
	ret = tc_enqueue(comm, a, &req);
	if (ret)
		return ret;
	return tc_wait_req(req);
}

static int tc_nonblocking(struct tc_comm *comm, const struct tc_coll_args *a, tc_request_t **out)
{
	struct tc_colls *cs = tc_colls_get(comm);
	int ret;

	if (!cs)
		return tc_err(-ENOMEM, "%s: out of memory", tc_kind_name[a->kind]);
	ret = tc_progress_start(comm, cs);
	if (ret)
		return ret;
	return tc_enqueue(comm, a, out);
}

int tc_colls_queued(const struct tc_comm *comm)
{
	return comm->colls && comm->colls->thread_up;
}

int tc_colls_blocking(struct tc_comm *comm, enum tc_coll_id id, const void *sendbuf, void *recvbuf, size_t m)
{
	struct tc_coll_args a = {
		.kind = id == TC_ALLTOALL ? TC_K_ALLTOALL : TC_K_ALLGATHER,
		.sendbuf = sendbuf,
		.recvbuf = recvbuf,
		.count = m,
	};

	return tc_blocking(comm, &a);
}

void tc_colls_free(struct tc_comm *comm)
{
	struct tc_colls *cs = comm->colls;

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

/* ---- validation ---- */

static int tc_check_comm(const struct tc_comm *comm, const char *who)
{
	if (!comm)
		return tc_err(-EINVAL, "%s: comm is NULL", who);
	for (int d = 0; d < comm->shape.ndims; d++)
		if (comm->shape.dims[d] > 1024)
			return tc_err(-EOPNOTSUPP, "%s: dimension %d has %d nodes (at most 1024)", who, d,
				      comm->shape.dims[d]);
	return 0;
}

static int tc_check_root(const struct tc_comm *comm, const char *who, int root)
{
	if (root < 0 || root >= comm->shape.nodes)
		return tc_err(-EINVAL, "%s: root %d is not a rank of this %d-node communicator", who, root,
			      comm->shape.nodes);
	return 0;
}

/* count elements of dt, times mult, must fit the transport buffer's arithmetic. */
static int tc_check_count(const char *who, size_t count, size_t esz, size_t mult)
{
	if (mult && count > SIZE_MAX / 8 / esz / mult)
		return tc_err(-EINVAL, "%s: count %zu too large", who, count);
	return 0;
}

static int tc_check_buf(const char *who, const char *which, const void *p, size_t bytes)
{
	if (!p && bytes)
		return tc_err(-EINVAL, "%s: %s is NULL", who, which);
	return 0;
}

static int tc_check_bcast(struct tc_comm *comm, const struct tc_coll_args *a)
{
	const char *who = "bcast";
	size_t esz = tc_dt_size(a->dt);

	if (!esz)
		return tc_err(-EINVAL, "%s: datatype %d unknown (TC_INT32..TC_DOUBLE)", who, (int)a->dt);
	return tc_check_root(comm, who, a->root) ?: tc_check_count(who, a->count, esz, 5) ?:
	       tc_check_buf(who, "buf", a->recvbuf, a->count);
}

static int tc_check_reduce(struct tc_comm *comm, const struct tc_coll_args *a, const char *who)
{
	size_t esz = tc_dt_size(a->dt);
	size_t mult = a->kind == TC_K_REDUCE_SCATTER ? 3 * (size_t)comm->shape.nodes : 5;
	int ret;

	ret = tc_dt_op_check(who, a->dt, a->op);
	if (ret)
		return ret;
	if (a->kind == TC_K_REDUCE) {
		ret = tc_check_root(comm, who, a->root);
		if (ret)
			return ret;
	}
	return tc_check_count(who, a->count, esz, mult) ?: tc_check_buf(who, "sendbuf", a->sendbuf, a->count) ?:
	       tc_check_buf(who, "recvbuf", a->recvbuf,
			    a->kind != TC_K_REDUCE || comm->rank == a->root ? a->count : 0);
}

/* Sum of n sizes, -EINVAL on overflow. */
static int tc_check_sum(const char *who, const char *which, const size_t *v, size_t n, size_t *sum)
{
	size_t s = 0;

	if (!v)
		return tc_err(-EINVAL, "%s: %s is NULL", who, which);
	for (size_t i = 0; i < n; i++) {
		if (v[i] > SIZE_MAX / 4 - s)
			return tc_err(-EINVAL, "%s: %s sum to more than the address space", who, which);
		s += v[i];
	}
	*sum = s;
	return 0;
}

static int tc_check_allgatherv(struct tc_comm *comm, const struct tc_coll_args *a)
{
	const char *who = "allgatherv";
	size_t total;
	int ret;

	ret = tc_check_sum(who, "recvcounts", a->rcounts, comm->shape.nodes, &total);
	if (ret)
		return ret;
	if (!a->rdispls)
		return tc_err(-EINVAL, "%s: displs is NULL", who);
	if (a->rcounts[comm->rank] != a->count)
		return tc_err(-EINVAL, "%s: sendbytes %zu but recvcounts[%d] = %zu", who, a->count, comm->rank,
			      a->rcounts[comm->rank]);
	return tc_check_buf(who, "sendbuf", a->sendbuf, a->count) ?: tc_check_buf(who, "recvbuf", a->recvbuf, total);
}

static int tc_check_alltoallv(struct tc_comm *comm, const struct tc_coll_args *a)
{
	const char *who = "alltoallv";
	size_t stotal, rtotal;
	int ret;

	ret = tc_check_sum(who, "sendcounts", a->scounts, comm->shape.nodes, &stotal) ?:
	      tc_check_sum(who, "recvcounts", a->rcounts, comm->shape.nodes, &rtotal);
	if (ret)
		return ret;
	if (!a->sdispls || !a->rdispls)
		return tc_err(-EINVAL, "%s: sdispls or rdispls is NULL", who);
	if (a->scounts[comm->rank] != a->rcounts[comm->rank])
		return tc_err(-EINVAL, "%s: sendcounts[%d] = %zu but recvcounts[%d] = %zu", who, comm->rank,
			      a->scounts[comm->rank], comm->rank, a->rcounts[comm->rank]);
	return tc_check_buf(who, "sendbuf", a->sendbuf, stotal) ?: tc_check_buf(who, "recvbuf", a->recvbuf, rtotal);
}

static int tc_check_block(struct tc_comm *comm, const struct tc_coll_args *a)
{
	const char *who = tc_kind_name[a->kind];

	(void)comm;
	if (!a->sendbuf || !a->recvbuf)
		return tc_err(-EINVAL, "%s: NULL buffer", who);
	if (!a->count)
		return tc_err(-EINVAL, "%s: block_bytes is 0", who);
	return 0;
}

static int tc_check(struct tc_comm *comm, const struct tc_coll_args *a)
{
	int ret = tc_check_comm(comm, tc_kind_name[a->kind]);

	if (ret)
		return ret;
	switch (a->kind) {
	case TC_K_ALLTOALL:
	case TC_K_ALLGATHER:
		return tc_check_block(comm, a);
	case TC_K_BARRIER:
		return 0;
	case TC_K_BCAST:
		return tc_check_bcast(comm, a);
	case TC_K_REDUCE:
	case TC_K_ALLREDUCE:
	case TC_K_REDUCE_SCATTER:
		return tc_check_reduce(comm, a, tc_kind_name[a->kind]);
	case TC_K_ALLGATHERV:
		return tc_check_allgatherv(comm, a);
	case TC_K_ALLTOALLV:
		return tc_check_alltoallv(comm, a);
	}
	return tc_err(-EINVAL, "collective kind %d unknown", (int)a->kind);
}

static int tc_issue(struct tc_comm *comm, const struct tc_coll_args *a, tc_request_t **req)
{
	int ret;

	if (req)
		*req = NULL;
	ret = tc_check(comm, a);
	if (ret)
		return ret;
	if (!req)
		return tc_blocking(comm, a);
	return tc_nonblocking(comm, a, req);
}

static int tc_issue_nb(struct tc_comm *comm, const struct tc_coll_args *a, tc_request_t **req)
{
	if (!req)
		return tc_err(-EINVAL, "%s: request pointer is NULL", tc_kind_name[a->kind]);
	return tc_issue(comm, a, req);
}

/* ---- public entry points ---- */

TC_EXPORT int tc_barrier(tc_comm_t *comm)
{
	struct tc_coll_args a = { .kind = TC_K_BARRIER };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_bcast(tc_comm_t *comm, void *buf, size_t count, enum tc_datatype dt, int root)
{
	struct tc_coll_args a = { .kind = TC_K_BCAST, .recvbuf = buf, .count = count, .dt = dt, .root = root };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_reduce(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count, enum tc_datatype dt,
			enum tc_op op, int root)
{
	struct tc_coll_args a = { .kind = TC_K_REDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
				  .dt = dt, .op = op, .root = root };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_allreduce(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count, enum tc_datatype dt,
			   enum tc_op op)
{
	struct tc_coll_args a = { .kind = TC_K_ALLREDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
				  .dt = dt, .op = op };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_reduce_scatter(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t recvcount,
				enum tc_datatype dt, enum tc_op op)
{
	struct tc_coll_args a = { .kind = TC_K_REDUCE_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf,
				  .count = recvcount, .dt = dt, .op = op };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_allgatherv(tc_comm_t *comm, const void *sendbuf, size_t sendbytes, void *recvbuf,
			    const size_t *recvcounts, const size_t *displs)
{
	struct tc_coll_args a = { .kind = TC_K_ALLGATHERV, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = sendbytes,
				  .rcounts = recvcounts, .rdispls = displs };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_alltoallv(tc_comm_t *comm, const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
			   void *recvbuf, const size_t *recvcounts, const size_t *rdispls)
{
	struct tc_coll_args a = { .kind = TC_K_ALLTOALLV, .sendbuf = sendbuf, .recvbuf = recvbuf,
				  .scounts = sendcounts, .sdispls = sdispls, .rcounts = recvcounts, .rdispls = rdispls };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_ialltoall(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t block_bytes,
			   tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_K_ALLTOALL, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = block_bytes };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_iallgather(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t block_bytes,
			    tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_K_ALLGATHER, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = block_bytes };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_ibarrier(tc_comm_t *comm, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_K_BARRIER };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_ibcast(tc_comm_t *comm, void *buf, size_t count, enum tc_datatype dt, int root, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_K_BCAST, .recvbuf = buf, .count = count, .dt = dt, .root = root };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_ireduce(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count, enum tc_datatype dt,
			 enum tc_op op, int root, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_K_REDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
				  .dt = dt, .op = op, .root = root };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_iallreduce(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count, enum tc_datatype dt,
			    enum tc_op op, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_K_ALLREDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
				  .dt = dt, .op = op };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_ireduce_scatter(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t recvcount,
				 enum tc_datatype dt, enum tc_op op, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_K_REDUCE_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf,
				  .count = recvcount, .dt = dt, .op = op };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_iallgatherv(tc_comm_t *comm, const void *sendbuf, size_t sendbytes, void *recvbuf,
			     const size_t *recvcounts, const size_t *displs, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_K_ALLGATHERV, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = sendbytes,
				  .rcounts = recvcounts, .rdispls = displs };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_ialltoallv(tc_comm_t *comm, const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
			    void *recvbuf, const size_t *recvcounts, const size_t *rdispls, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_K_ALLTOALLV, .sendbuf = sendbuf, .recvbuf = recvbuf,
				  .scounts = sendcounts, .sdispls = sdispls, .rcounts = recvcounts, .rdispls = rdispls };

	return tc_issue_nb(comm, &a, req);
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
