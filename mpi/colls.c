// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The collective wrappers. Each one decides, from what MPI requires to be
 * equal on every rank of the call, whether the torus serves it:
 *   - the communicator maps onto the fabric (tm_comm_lookup: group facts);
 *   - reductions: a datatype and an op libtoruscoll has (MPI requires the
 *     same datatype, count and op on every rank);
 *   - the call's vector, in bytes, is at most TORUS_MPI_MAX_BYTES (bytes
 *     sent and received match pairwise, so this size is the same on every
 *     rank; alltoallv agrees on it with one PMPI_Allreduce).
 * Byte-moving collectives take any datatype: a contiguous one is used in
 * place, a non-contiguous one is packed (PMPI_Pack) into a copy, which
 * needs no agreement (packed bytes are the data bytes in a homogeneous run).
 * Everything else goes to the PMPI_ call of the same name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torusmpi.h"

struct tm_type {
	int size;
	MPI_Aint lb, extent, tlb, textent;
	int contig;
};

static void tm_type_get(MPI_Datatype dt, struct tm_type *t)
{
	PMPI_Type_size(dt, &t->size);
	PMPI_Type_get_extent(dt, &t->lb, &t->extent);
	PMPI_Type_get_true_extent(dt, &t->tlb, &t->textent);
	t->contig = t->size == 0 || (t->textent == t->size && t->extent == t->size);
}

/*
 * A buffer of n blocks (block i: counts[i] elements at displs[i] extents)
 * as the tc call wants it: base, byte counts, byte displacements. A
 * non-contiguous send is packed into a copy; a non-contiguous receive gets
 * a copy that tm_call_finish unpacks.
 */
struct tm_view {
	char *base;
	size_t *counts;
	size_t *displs;
	size_t total;
};

static int tm_view_get(struct tm_call *c, int is_recv, const void *buf, MPI_Datatype dt, int n, const int *counts,
		       const int *displs, struct tm_view *v)
{
	struct tm_type t;
	size_t off = 0;
	int i, pos = 0;

	tm_type_get(dt, &t);
	v->counts = tm_call_alloc(c, n * sizeof(size_t));
	v->displs = tm_call_alloc(c, n * sizeof(size_t));
	if (!v->counts || !v->displs)
		return -1;
	v->total = 0;
	for (i = 0; i < n; i++) {
		v->counts[i] = (size_t)counts[i] * t.size;
		v->total += v->counts[i];
	}
	if (t.contig) {
		v->base = (char *)buf + t.tlb;
		for (i = 0; i < n; i++)
			v->displs[i] = (size_t)displs[i] * t.extent;
		return 0;
	}
	v->base = tm_call_alloc(c, v->total ? v->total : 1);
	if (!v->base)
		return -1;
	for (i = 0; i < n; i++) {
		v->displs[i] = off;
		off += v->counts[i];
		if (!is_recv && counts[i])
			PMPI_Pack((const char *)buf + (MPI_Aint)displs[i] * t.extent, counts[i], dt, v->base,
				  (int)v->total, &pos, c->comm);
	}
	if (is_recv) {
		c->unpack_from = v->base;
		c->unpack_to = (void *)buf;
		c->unpack_type = dt;
		c->unpack_n = n;
		c->unpack_counts = tm_call_alloc(c, n * sizeof(int));
		c->unpack_disp = tm_call_alloc(c, n * sizeof(MPI_Aint));
		if (!c->unpack_counts || !c->unpack_disp)
			return -1;
		for (i = 0; i < n; i++) {
			c->unpack_counts[i] = counts[i];
			c->unpack_disp[i] = (MPI_Aint)displs[i] * t.extent;
		}
	}
	return 0;
}

/* n blocks of count elements, block i at i*count: the alltoall/allgather layout. */
static int tm_view_uniform(struct tm_call *c, int is_recv, const void *buf, MPI_Datatype dt, int n, int count,
			   struct tm_view *v)
{
	int *counts = tm_call_alloc(c, n * sizeof(int));
	int *displs = tm_call_alloc(c, n * sizeof(int));
	int i;

	if (!counts || !displs)
		return -1;
	for (i = 0; i < n; i++) {
		counts[i] = count;
		displs[i] = i * count;
	}
	return tm_view_get(c, is_recv, buf, dt, n, counts, displs, v);
}

static int tm_dtype(MPI_Datatype dt, enum tc_datatype *out)
{
	if ((dt == MPI_INT && sizeof(int) == 4) || dt == MPI_INT32_T)
		*out = TC_INT32;
	else if ((dt == MPI_LONG && sizeof(long) == 8) || dt == MPI_INT64_T || dt == MPI_LONG_LONG)
		*out = TC_INT64;
	else if ((dt == MPI_UNSIGNED_LONG && sizeof(long) == 8) || dt == MPI_UINT64_T || dt == MPI_UNSIGNED_LONG_LONG)
		*out = TC_UINT64;
	else if (dt == MPI_FLOAT)
		*out = TC_FLOAT;
	else if (dt == MPI_DOUBLE)
		*out = TC_DOUBLE;
	else
		return 0;
	return 1;
}

static int tm_op(MPI_Op op, enum tc_datatype dt, enum tc_op *out)
{
	int integer = dt != TC_FLOAT && dt != TC_DOUBLE;

	if (op == MPI_SUM)
		*out = TC_SUM;
	else if (op == MPI_PROD)
		*out = TC_PROD;
	else if (op == MPI_MIN)
		*out = TC_MIN;
	else if (op == MPI_MAX)
		*out = TC_MAX;
	else if (op == MPI_BAND && integer)
		*out = TC_BAND;
	else if (op == MPI_BOR && integer)
		*out = TC_BOR;
	else if (op == MPI_BXOR && integer)
		*out = TC_BXOR;
	else
		return 0;
	return 1;
}

static size_t tm_dt_size(enum tc_datatype dt)
{
	return dt == TC_INT32 || dt == TC_FLOAT ? 4 : 8;
}

/* The tc call was issued (or failed to issue) with ret: finish it now
 * (blocking) or hand it to a generalized request (nonblocking). */
static int tm_issue(struct tm_call *c, int ret, MPI_Request *req)
{
	MPI_Comm comm = c->comm;
	int err;

	if (req && !ret)
		err = tm_request_start(c, req);
	else
		err = tm_call_finish(c, ret);
	if (err != MPI_SUCCESS)
		PMPI_Comm_call_errhandler(comm, err);
	return err;
}

/* Out of memory before anything was issued: the same decision is no longer
 * guaranteed on every rank, so stop the job rather than hang it. */
static int tm_oom(MPI_Comm comm)
{
	fprintf(stderr, "torusmpi: rank %d: out of memory preparing a collective\n", tm.world_rank);
	PMPI_Abort(comm, 1);
	return MPI_ERR_NO_MEM;
}

static tc_comm_t *tm_served(MPI_Comm comm, size_t bytes)
{
	tc_comm_t *tc = tm_comm_lookup(comm);

	return tc && bytes <= tm.max_bytes ? tc : NULL;
}

static size_t tm_bytes(int count, MPI_Datatype dt)
{
	int size = 0;

	PMPI_Type_size(dt, &size);
	return (size_t)(count < 0 ? 0 : count) * (size_t)size;
}

/* ---- alltoall ---- */

static int tm_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		       MPI_Comm comm, MPI_Request *req)
{
	tc_comm_t *tc = tm_comm_lookup(comm);
	size_t m = tc ? tm_bytes(rcount, rtype) : 0;
	struct tm_view sv, rv;
	struct tm_call *c;
	int P, ret;

	if (tc && m * tc_comm_size(tc) > tm.max_bytes)
		tc = NULL;
	if (!tc) {
		tm_count_passed(TM_ALLTOALL);
		return req ? PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req)
			   : PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
	}
	P = tc_comm_size(tc);
	c = tm_call_new(TM_ALLTOALL, tc, comm);
	if (!c || tm_view_uniform(c, 1, rbuf, rtype, P, rcount, &rv))
		return tm_oom(comm);
	if (sbuf == MPI_IN_PLACE) {
		/* the library copies the send blocks out before it writes recvbuf */
		if (tm_view_uniform(c, 0, rbuf, rtype, P, rcount, &sv))
			return tm_oom(comm);
	} else if (tm_view_uniform(c, 0, sbuf, stype, P, scount, &sv)) {
		return tm_oom(comm);
	}
	if (!m)
		ret = 0;
	else if (req)
		ret = tc_ialltoall(tc, sv.base, rv.base, m, &c->treq);
	else
		ret = tc_alltoall(tc, sv.base, rv.base, m);
	return tm_issue(c, ret, req);
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		 MPI_Comm comm)
{
	return tm_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, NULL);
}

int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		  MPI_Comm comm, MPI_Request *req)
{
	return tm_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
}

/* ---- alltoallv ---- */

static int tm_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,
			const int *rcounts, const int *rdispls, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	tc_comm_t *tc = tm_comm_lookup(comm);
	unsigned long long need = 0, s = 0, r = 0, all = 0;
	struct tm_view sv, rv;
	struct tm_call *c;
	int P = 0, i, ret;

	if (tc) {
		/* Each rank knows only its own sizes: agree on the largest. */
		P = tc_comm_size(tc);
		for (i = 0; i < P; i++) {
			r += tm_bytes(rcounts[i], rtype);
			if (sbuf != MPI_IN_PLACE)
				s += tm_bytes(scounts[i], stype);
		}
		need = s > r ? s : r;
		PMPI_Allreduce(&need, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
		if (all > tm.max_bytes)
			tc = NULL;
	}
	if (!tc) {
		tm_count_passed(TM_ALLTOALLV);
		return req ? PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req)
			   : PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
	}
	c = tm_call_new(TM_ALLTOALLV, tc, comm);
	if (!c || tm_view_get(c, 1, rbuf, rtype, P, rcounts, rdispls, &rv))
		return tm_oom(comm);
	if (sbuf == MPI_IN_PLACE) {
		if (tm_view_get(c, 0, rbuf, rtype, P, rcounts, rdispls, &sv))
			return tm_oom(comm);
	} else if (tm_view_get(c, 0, sbuf, stype, P, scounts, sdispls, &sv)) {
		return tm_oom(comm);
	}
	if (req)
		ret = tc_ialltoallv(tc, sv.base, sv.counts, sv.displs, rv.base, rv.counts, rv.displs, &c->treq);
	else
		ret = tc_alltoallv(tc, sv.base, sv.counts, sv.displs, rv.base, rv.counts, rv.displs);
	return tm_issue(c, ret, req);
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
		  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
	return tm_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, NULL);
}

int MPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
		   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	return tm_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req);
}

/* ---- allgather ---- */

static int tm_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
			MPI_Comm comm, MPI_Request *req)
{
	tc_comm_t *tc = tm_comm_lookup(comm);
	size_t m = tm_bytes(rcount, rtype);
	struct tm_view sv, rv;
	struct tm_call *c;
	int P, rank, ret;

	if (tc && m * tc_comm_size(tc) > tm.max_bytes)
		tc = NULL;
	if (!tc) {
		tm_count_passed(TM_ALLGATHER);
		return req ? PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req)
			   : PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
	}
	P = tc_comm_size(tc);
	rank = tc_comm_rank(tc);
	c = tm_call_new(TM_ALLGATHER, tc, comm);
	if (!c || tm_view_uniform(c, 1, rbuf, rtype, P, rcount, &rv))
		return tm_oom(comm);
	if (sbuf == MPI_IN_PLACE) {
		struct tm_type t;

		tm_type_get(rtype, &t);
		if (tm_view_uniform(c, 0, (char *)rbuf + (MPI_Aint)rank * rcount * t.extent, rtype, 1, rcount, &sv))
			return tm_oom(comm);
	} else if (tm_view_uniform(c, 0, sbuf, stype, 1, scount, &sv)) {
		return tm_oom(comm);
	}
	if (!m)
		ret = 0;
	else if (req)
		ret = tc_iallgather(tc, sv.base, rv.base, m, &c->treq);
	else
		ret = tc_allgather(tc, sv.base, rv.base, m);
	return tm_issue(c, ret, req);
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		  MPI_Comm comm)
{
	return tm_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, NULL);
}

int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		   MPI_Comm comm, MPI_Request *req)
{
	return tm_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
}

/* ---- allgatherv: recvcounts (in bytes) are the same on every rank ---- */

static int tm_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,
			 const int *displs, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	tc_comm_t *tc = tm_comm_lookup(comm);
	struct tm_view sv, rv;
	struct tm_call *c;
	size_t total = 0;
	int P = 0, rank, i, ret;

	if (tc) {
		P = tc_comm_size(tc);
		for (i = 0; i < P; i++)
			total += tm_bytes(rcounts[i], rtype);
		if (total > tm.max_bytes)
			tc = NULL;
	}
	if (!tc) {
		tm_count_passed(TM_ALLGATHERV);
		return req ? PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req)
			   : PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
	}
	rank = tc_comm_rank(tc);
	c = tm_call_new(TM_ALLGATHERV, tc, comm);
	if (!c || tm_view_get(c, 1, rbuf, rtype, P, rcounts, displs, &rv))
		return tm_oom(comm);
	if (sbuf == MPI_IN_PLACE) {
		if (tm_view_get(c, 0, rbuf, rtype, 1, &rcounts[rank], &displs[rank], &sv))
			return tm_oom(comm);
		sv.base += sv.displs[0];
	} else if (tm_view_uniform(c, 0, sbuf, stype, 1, scount, &sv)) {
		return tm_oom(comm);
	}
	if (req)
		ret = tc_iallgatherv(tc, sv.base, sv.total, rv.base, rv.counts, rv.displs, &c->treq);
	else
		ret = tc_allgatherv(tc, sv.base, sv.total, rv.base, rv.counts, rv.displs);
	return tm_issue(c, ret, req);
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
		   const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
	return tm_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, NULL);
}

int MPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
		    const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	return tm_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req);
}

/* ---- allreduce ---- */

static int tm_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
			MPI_Request *req)
{
	tc_comm_t *tc = tm_served(comm, tm_bytes(count, dt));
	enum tc_datatype tdt;
	enum tc_op top;
	struct tm_call *c;
	int ret;

	if (!tc || !tm_dtype(dt, &tdt) || !tm_op(op, tdt, &top)) {
		tm_count_passed(TM_ALLREDUCE);
		return req ? PMPI_Iallreduce(sbuf, rbuf, count, dt, op, comm, req)
			   : PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm);
	}
	c = tm_call_new(TM_ALLREDUCE, tc, comm);
	if (!c)
		return tm_oom(comm);
	if (sbuf == MPI_IN_PLACE)
		sbuf = rbuf;
	if (req)
		ret = tc_iallreduce(tc, sbuf, rbuf, count, tdt, top, &c->treq);
	else
		ret = tc_allreduce(tc, sbuf, rbuf, count, tdt, top);
	return tm_issue(c, ret, req);
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	return tm_allreduce(sbuf, rbuf, count, dt, op, comm, NULL);
}

int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
		   MPI_Request *req)
{
	return tm_allreduce(sbuf, rbuf, count, dt, op, comm, req);
}

/* ---- reduce_scatter_block ---- */

static int tm_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op,
				   MPI_Comm comm, MPI_Request *req)
{
	tc_comm_t *tc = tm_comm_lookup(comm);
	enum tc_datatype tdt;
	enum tc_op top;
	struct tm_call *c;
	int ret;

	if (tc && tm_bytes(rcount, dt) * tc_comm_size(tc) > tm.max_bytes)
		tc = NULL;
	if (!tc || !tm_dtype(dt, &tdt) || !tm_op(op, tdt, &top)) {
		tm_count_passed(TM_REDUCE_SCATTER_BLOCK);
		return req ? PMPI_Ireduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm, req)
			   : PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm);
	}
	c = tm_call_new(TM_REDUCE_SCATTER_BLOCK, tc, comm);
	if (!c)
		return tm_oom(comm);
	if (sbuf == MPI_IN_PLACE)
		sbuf = rbuf; /* the library copies the vector in before it writes rbuf */
	if (req)
		ret = tc_ireduce_scatter(tc, sbuf, rbuf, rcount, tdt, top, &c->treq);
	else
		ret = tc_reduce_scatter(tc, sbuf, rbuf, rcount, tdt, top);
	return tm_issue(c, ret, req);
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	return tm_reduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm, NULL);
}

int MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
			      MPI_Request *req)
{
	return tm_reduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm, req);
}

/* ---- reduce_scatter: recvcounts are the same on every rank. Equal counts
 * run as reduce_scatter_block; others as an allreduce of the whole vector
 * into a copy, of which each rank keeps its part. ---- */

static int tm_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype dt, MPI_Op op,
			     MPI_Comm comm, MPI_Request *req)
{
	tc_comm_t *tc = tm_comm_lookup(comm);
	enum tc_datatype tdt;
	enum tc_op top;
	struct tm_call *c;
	size_t total = 0, before = 0, esz;
	int P = 0, rank, i, equal = 1, ret;
	void *tmp;

	if (tc) {
		P = tc_comm_size(tc);
		for (i = 0; i < P; i++) {
			total += rcounts[i] > 0 ? rcounts[i] : 0;
			equal &= rcounts[i] == rcounts[0];
		}
		if (tm_bytes(1, dt) * total > tm.max_bytes)
			tc = NULL;
	}
	if (!tc || !tm_dtype(dt, &tdt) || !tm_op(op, tdt, &top)) {
		tm_count_passed(TM_REDUCE_SCATTER);
		return req ? PMPI_Ireduce_scatter(sbuf, rbuf, rcounts, dt, op, comm, req)
			   : PMPI_Reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm);
	}
	rank = tc_comm_rank(tc);
	esz = tm_dt_size(tdt);
	c = tm_call_new(TM_REDUCE_SCATTER, tc, comm);
	if (!c)
		return tm_oom(comm);
	if (sbuf == MPI_IN_PLACE)
		sbuf = rbuf;
	if (equal) {
		if (req)
			ret = tc_ireduce_scatter(tc, sbuf, rbuf, rcounts[0], tdt, top, &c->treq);
		else
			ret = tc_reduce_scatter(tc, sbuf, rbuf, rcounts[0], tdt, top);
		return tm_issue(c, ret, req);
	}
	tmp = tm_call_alloc(c, total * esz + 1);
	if (!tmp)
		return tm_oom(comm);
	for (i = 0; i < rank; i++)
		before += rcounts[i];
	c->copy_to = rbuf;
	c->copy_from = (char *)tmp + before * esz;
	c->copy_bytes = (size_t)rcounts[rank] * esz;
	if (req)
		ret = tc_iallreduce(tc, sbuf, tmp, total, tdt, top, &c->treq);
	else
		ret = tc_allreduce(tc, sbuf, tmp, total, tdt, top);
	return tm_issue(c, ret, req);
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	return tm_reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm, NULL);
}

int MPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op,
			MPI_Comm comm, MPI_Request *req)
{
	return tm_reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm, req);
}

/* ---- bcast: moves bytes, any datatype. The library broadcasts 4- or
 * 8-byte elements; other lengths and non-contiguous types go through a
 * padded copy. ---- */

static int tm_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req)
{
	size_t bytes = tm_bytes(count, dt);
	tc_comm_t *tc = tm_served(comm, bytes);
	struct tm_view v;
	struct tm_call *c;
	char *data;
	int ret;

	if (!tc) {
		tm_count_passed(TM_BCAST);
		return req ? PMPI_Ibcast(buf, count, dt, root, comm, req) : PMPI_Bcast(buf, count, dt, root, comm);
	}
	c = tm_call_new(TM_BCAST, tc, comm);
	if (!c)
		return tm_oom(comm);
	if (tc_comm_rank(tc) == root) {
		if (tm_view_uniform(c, 0, buf, dt, 1, count, &v))
			return tm_oom(comm);
	} else if (tm_view_uniform(c, 1, buf, dt, 1, count, &v)) {
		return tm_oom(comm);
	}
	data = v.base;
	if (bytes % 4) {
		data = tm_call_alloc(c, bytes + 4);
		if (!data)
			return tm_oom(comm);
		if (tc_comm_rank(tc) == root) {
			memcpy(data, v.base, bytes);
		} else {
			c->copy_to = v.base; /* before any unpack (tm_call_finish) */
			c->copy_from = data;
			c->copy_bytes = bytes;
		}
	}
	if (!bytes)
		ret = 0;
	else if (bytes % 8 == 0)
		ret = req ? tc_ibcast(tc, data, bytes / 8, TC_UINT64, root, &c->treq)
			  : tc_bcast(tc, data, bytes / 8, TC_UINT64, root);
	else
		ret = req ? tc_ibcast(tc, data, (bytes + 3) / 4, TC_INT32, root, &c->treq)
			  : tc_bcast(tc, data, (bytes + 3) / 4, TC_INT32, root);
	return tm_issue(c, ret, req);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
	return tm_bcast(buf, count, dt, root, comm, NULL);
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req)
{
	return tm_bcast(buf, count, dt, root, comm, req);
}

/* ---- barrier ---- */

static int tm_barrier(MPI_Comm comm, MPI_Request *req)
{
	tc_comm_t *tc = tm_comm_lookup(comm);
	struct tm_call *c;
	int ret;

	if (!tc) {
		tm_count_passed(TM_BARRIER);
		return req ? PMPI_Ibarrier(comm, req) : PMPI_Barrier(comm);
	}
	c = tm_call_new(TM_BARRIER, tc, comm);
	if (!c)
		return tm_oom(comm);
	ret = req ? tc_ibarrier(tc, &c->treq) : tc_barrier(tc);
	return tm_issue(c, ret, req);
}

int MPI_Barrier(MPI_Comm comm)
{
	return tm_barrier(comm, NULL);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
	return tm_barrier(comm, req);
}
