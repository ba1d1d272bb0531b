// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The public collectives: tc_alltoall ... tc_alltoallv and their nonblocking
 * forms. Every one goes through the same door: tc_issue() validates the
 * call with the one validator (tc_check: the same rules for a blocking and
 * a nonblocking call of a collective), then runs it or queues it
 * (api/request.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "api/api.h"

/* ---- validation ---- */

static int tc_check_comm(const struct tc_comm *comm, const char *who)
{
	if (!comm)
		return tc_err(-EINVAL, "%s: comm is NULL", who);
	for (int d = 0; d < comm->tp.shape.ndims; d++)
		if (comm->tp.shape.dims[d] > 1024)
			return tc_err(-EOPNOTSUPP, "%s: dimension %d has %d nodes (at most 1024)", who, d,
				      comm->tp.shape.dims[d]);
	return 0;
}

static int tc_check_root(const struct tc_comm *comm, const char *who, int root)
{
	if (root < 0 || root >= comm->tp.shape.nodes)
		return tc_err(-EINVAL, "%s: root %d is not a rank of this %d-node communicator", who, root,
			      comm->tp.shape.nodes);
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
	size_t mult = a->kind == TC_REDUCE_SCATTER ? 3 * (size_t)comm->tp.shape.nodes : 5;
	int ret;

	ret = tc_dt_op_check(who, a->dt, a->op);
	if (ret)
		return ret;
	if (a->kind == TC_REDUCE) {
		ret = tc_check_root(comm, who, a->root);
		if (ret)
			return ret;
	}
	return tc_check_count(who, a->count, esz, mult) ?: tc_check_buf(who, "sendbuf", a->sendbuf, a->count) ?:
	       tc_check_buf(who, "recvbuf", a->recvbuf,
			    a->kind != TC_REDUCE || comm->tp.rank == a->root ? a->count : 0);
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

	ret = tc_check_sum(who, "recvcounts", a->rcounts, comm->tp.shape.nodes, &total);
	if (ret)
		return ret;
	if (!a->rdispls)
		return tc_err(-EINVAL, "%s: displs is NULL", who);
	if (a->rcounts[comm->tp.rank] != a->count)
		return tc_err(-EINVAL, "%s: sendbytes %zu but recvcounts[%d] = %zu", who, a->count, comm->tp.rank,
			      a->rcounts[comm->tp.rank]);
	return tc_check_buf(who, "sendbuf", a->sendbuf, a->count) ?: tc_check_buf(who, "recvbuf", a->recvbuf, total);
}

static int tc_check_alltoallv(struct tc_comm *comm, const struct tc_coll_args *a)
{
	const char *who = "alltoallv";
	size_t stotal, rtotal;
	int ret;

	ret = tc_check_sum(who, "sendcounts", a->scounts, comm->tp.shape.nodes, &stotal) ?:
	      tc_check_sum(who, "recvcounts", a->rcounts, comm->tp.shape.nodes, &rtotal);
	if (ret)
		return ret;
	if (!a->sdispls || !a->rdispls)
		return tc_err(-EINVAL, "%s: sdispls or rdispls is NULL", who);
	if (a->scounts[comm->tp.rank] != a->rcounts[comm->tp.rank])
		return tc_err(-EINVAL, "%s: sendcounts[%d] = %zu but recvcounts[%d] = %zu", who, comm->tp.rank,
			      a->scounts[comm->tp.rank], comm->tp.rank, a->rcounts[comm->tp.rank]);
	return tc_check_buf(who, "sendbuf", a->sendbuf, stotal) ?: tc_check_buf(who, "recvbuf", a->recvbuf, rtotal);
}

static int tc_check_block(struct tc_comm *comm, const struct tc_coll_args *a)
{
	const char *who = tc_coll_str(a->kind);

	if (!a->sendbuf || !a->recvbuf)
		return tc_err(-EINVAL, "%s: NULL buffer", who);
	if (!a->count)
		return tc_err(-EINVAL, "%s: block_bytes is 0", who);
	if (a->count > SIZE_MAX / 4 / (size_t)comm->tp.shape.nodes)
		return tc_err(-EINVAL, "%s: block_bytes %zu too large", who, a->count);
	return 0;
}

static int tc_check(struct tc_comm *comm, const struct tc_coll_args *a)
{
	int ret = tc_check_comm(comm, tc_coll_str(a->kind));

	if (ret)
		return ret;
	switch (a->kind) {
	case TC_ALLTOALL:
	case TC_ALLGATHER:
		return tc_check_block(comm, a);
	case TC_BARRIER:
		return 0;
	case TC_BCAST:
		return tc_check_bcast(comm, a);
	case TC_REDUCE:
	case TC_ALLREDUCE:
	case TC_REDUCE_SCATTER:
		return tc_check_reduce(comm, a, tc_coll_str(a->kind));
	case TC_ALLGATHERV:
		return tc_check_allgatherv(comm, a);
	case TC_ALLTOALLV:
		return tc_check_alltoallv(comm, a);
	default:
		break;
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
		return tc_req_blocking(comm, a);
	return tc_req_nonblocking(comm, a, req);
}

static int tc_issue_nb(struct tc_comm *comm, const struct tc_coll_args *a, tc_request_t **req)
{
	if (!req)
		return tc_err(-EINVAL, "%s: request pointer is NULL", tc_coll_str(a->kind));
	return tc_issue(comm, a, req);
}

/* ---- public entry points ---- */

TC_EXPORT int tc_alltoall(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t block_bytes)
{
	struct tc_coll_args a = { .kind = TC_ALLTOALL, .sendbuf = sendbuf, .recvbuf = recvbuf,
				  .count = block_bytes };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_allgather(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t block_bytes)
{
	struct tc_coll_args a = { .kind = TC_ALLGATHER, .sendbuf = sendbuf, .recvbuf = recvbuf,
				  .count = block_bytes };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_barrier(tc_comm_t *comm)
{
	struct tc_coll_args a = { .kind = TC_BARRIER };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_bcast(tc_comm_t *comm, void *buf, size_t count, enum tc_datatype dt, int root)
{
	struct tc_coll_args a = { .kind = TC_BCAST, .recvbuf = buf, .count = count, .dt = dt, .root = root };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_reduce(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count, enum tc_datatype dt,
			enum tc_op op, int root)
{
	struct tc_coll_args a = { .kind = TC_REDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
				  .dt = dt, .op = op, .root = root };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_allreduce(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count, enum tc_datatype dt,
			   enum tc_op op)
{
	struct tc_coll_args a = { .kind = TC_ALLREDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
				  .dt = dt, .op = op };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_reduce_scatter(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t recvcount,
				enum tc_datatype dt, enum tc_op op)
{
	struct tc_coll_args a = { .kind = TC_REDUCE_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf,
				  .count = recvcount, .dt = dt, .op = op };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_allgatherv(tc_comm_t *comm, const void *sendbuf, size_t sendbytes, void *recvbuf,
			    const size_t *recvcounts, const size_t *displs)
{
	struct tc_coll_args a = { .kind = TC_ALLGATHERV, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = sendbytes,
				  .rcounts = recvcounts, .rdispls = displs };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_alltoallv(tc_comm_t *comm, const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
			   void *recvbuf, const size_t *recvcounts, const size_t *rdispls)
{
	struct tc_coll_args a = { .kind = TC_ALLTOALLV, .sendbuf = sendbuf, .recvbuf = recvbuf,
				  .scounts = sendcounts, .sdispls = sdispls, .rcounts = recvcounts, .rdispls = rdispls };

	return tc_issue(comm, &a, NULL);
}

TC_EXPORT int tc_ialltoall(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t block_bytes,
			   tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_ALLTOALL, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = block_bytes };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_iallgather(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t block_bytes,
			    tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_ALLGATHER, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = block_bytes };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_ibarrier(tc_comm_t *comm, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_BARRIER };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_ibcast(tc_comm_t *comm, void *buf, size_t count, enum tc_datatype dt, int root, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_BCAST, .recvbuf = buf, .count = count, .dt = dt, .root = root };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_ireduce(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count, enum tc_datatype dt,
			 enum tc_op op, int root, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_REDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
				  .dt = dt, .op = op, .root = root };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_iallreduce(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count, enum tc_datatype dt,
			    enum tc_op op, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_ALLREDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
				  .dt = dt, .op = op };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_ireduce_scatter(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t recvcount,
				 enum tc_datatype dt, enum tc_op op, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_REDUCE_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf,
				  .count = recvcount, .dt = dt, .op = op };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_iallgatherv(tc_comm_t *comm, const void *sendbuf, size_t sendbytes, void *recvbuf,
			     const size_t *recvcounts, const size_t *displs, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_ALLGATHERV, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = sendbytes,
				  .rcounts = recvcounts, .rdispls = displs };

	return tc_issue_nb(comm, &a, req);
}

TC_EXPORT int tc_ialltoallv(tc_comm_t *comm, const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
			    void *recvbuf, const size_t *recvcounts, const size_t *rdispls, tc_request_t **req)
{
	struct tc_coll_args a = { .kind = TC_ALLTOALLV, .sendbuf = sendbuf, .recvbuf = recvbuf,
				  .scounts = sendcounts, .sdispls = sdispls, .rcounts = recvcounts, .rdispls = rdispls };

	return tc_issue_nb(comm, &a, req);
}

