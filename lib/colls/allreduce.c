// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tc_allreduce and tc_reduce_scatter: dimension-wise reduce-scatter, then
 * (allreduce) dimension-wise allgather.
 *
 * Reduce-scatter along dimension 0 splits the vector into n_0 chunks and
 * leaves chunk j reduced over its dimension-0 line at the node with
 * coordinate j; along dimension 1 that chunk is split into n_1 chunks, and
 * so on (the classic multi-dimensional reduce-scatter). Each phase is a
 * line reduce-scatter (line.c): every chunk's contributions come from
 * both sides of the line, so on a ring both directions of every link carry
 * about half the line's data and each link carries one chunk per step
 * (floor(n/2) steps on a ring, n - 1 on a path). The allgather phases run
 * in the reverse dimension order and move the reduced chunks back out,
 * unchanged, so every rank ends with the same bits. The fold order is the
 * one documented in toruscoll.h and coll.h.
 *
 * With ranks row-major over coordinates, the final piece of the node at
 * coordinates c is block rank(c) when the vector is size*recvcount
 * elements: that is tc_reduce_scatter (MPI_Reduce_scatter_block).
 *
 * Buffer: the vector, then four scratch slots of the largest chunk.
 */
#include <errno.h>
#include <string.h>

#include "colls/coll.h"

struct tc_pieces {
	size_t lo[TC_MAX_DIMS], hi[TC_MAX_DIMS]; /* the node's piece before splitting in dim d */
};

static void tc_chunks(const struct tc_comm *comm, int d, size_t lo, size_t hi, size_t esz, uint64_t *off,
		      uint64_t *cnt)
{
	size_t n = comm->tp.shape.dims[d], L = hi - lo;

	for (size_t j = 0; j < n; j++) {
		size_t a = lo + L * j / n, b = lo + L * (j + 1) / n;

		off[j] = a * esz;
		cnt[j] = b - a;
	}
}

static void tc_rs_layout(const struct tc_comm *comm, size_t count, size_t esz, uint64_t *slots, size_t *total)
{
	size_t v = tc_align(count * esz), s = tc_align(((count + 1) / 2) * esz);

	for (int i = 0; i < 4; i++)
		slots[i] = v + s * i;
	*total = v + 4 * s;
	(void)comm;
}

static int tc_rs_phases(struct tc_run *r, size_t count, enum tc_datatype dt, enum tc_op op, const uint64_t *slots,
			struct tc_pieces *pc)
{
	struct tc_comm *comm = r->comm;
	size_t esz = tc_dt_size(dt), lo = 0, hi = count;
	uint64_t off[1024], cnt[1024];
	int ret;

	for (int d = 0; d < comm->tp.shape.ndims; d++) {
		int i = comm->coords[d];

		pc->lo[d] = lo;
		pc->hi[d] = hi;
		tc_chunks(comm, d, lo, hi, esz, off, cnt);
		r->phase = d;
		r->what = "reduce-scatter";
		ret = tc_line_rs(r, d, off, cnt, dt, op, slots);
		if (ret)
			return ret;
		lo = off[i] / esz;
		hi = lo + cnt[i];
	}
	return 0;
}

int tc_exec_allreduce(struct tc_comm *comm, const struct tc_coll_args *a)
{
	size_t esz = tc_dt_size(a->dt), bytes = a->count * esz, total;
	uint64_t slots[4], off[1024], cnt[1024], len[1024];
	struct tc_pieces pc;
	struct tc_run r;
	int k = comm->tp.shape.ndims, ret;

	tc_rs_layout(comm, a->count, esz, slots, &total);
	ret = tc_run_begin(&r, comm, "allreduce", bytes ? total : 0);
	if (ret || !bytes)
		return ret;
	memcpy(r.base, a->sendbuf, bytes);
	ret = tc_rs_phases(&r, a->count, a->dt, a->op, slots, &pc);
	if (ret)
		return ret;
	for (int d = k - 1; d >= 0; d--) {
		int n = comm->tp.shape.dims[d];

		tc_chunks(comm, d, pc.lo[d], pc.hi[d], esz, off, cnt);
		for (int j = 0; j < n; j++)
			len[j] = cnt[j] * esz;
		r.phase = k + (k - 1 - d);
		r.what = "allgather";
		ret = tc_line_ag(&r, d, off, len);
		if (ret)
			return ret;
	}
	memcpy(a->recvbuf, r.base, bytes);
	return 0;
}

int tc_exec_reduce_scatter(struct tc_comm *comm, const struct tc_coll_args *a)
{
	size_t esz = tc_dt_size(a->dt), P = comm->tp.shape.nodes, count = P * a->count, total;
	uint64_t slots[4];
	struct tc_pieces pc;
	struct tc_run r;
	int ret;

	tc_rs_layout(comm, count, esz, slots, &total);
	ret = tc_run_begin(&r, comm, "reduce_scatter", a->count ? total : 0);
	if (ret || !a->count)
		return ret;
	memcpy(r.base, a->sendbuf, count * esz);
	ret = tc_rs_phases(&r, count, a->dt, a->op, slots, &pc);
	if (ret)
		return ret;
	memcpy(a->recvbuf, r.base + (size_t)comm->tp.rank * a->count * esz, a->count * esz);
	return 0;
}
