// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tc_bcast, tc_reduce and tc_barrier: dimension-wise spanning trees.
 *
 * bcast: along dimension k-1 from the root, then along dimension k-2 from
 * every node that has the data, ..., dimension 0 last. Each phase is a line
 * allgather (line.c) in which only the holder's item is non-empty: the
 * data leaves the holder in both directions and every link of the tree is
 * used once. Steps: sum over d of floor(n_d/2) on rings, n_d - 1 on paths.
 *
 * reduce: the reverse: along dimension 0 every line folds toward the
 * root's coordinate, then along dimension 1 the lines through those
 * partial results, ..., dimension k-1 last: a line reduce-scatter with the
 * root's chunk the whole vector and all other chunks empty. The root's
 * result is the fold order of coll.h with the root's coordinates as
 * centres.
 *
 * barrier: reduce of one int32 (bor) to rank 0, then bcast from rank 0: no
 * rank leaves before every rank has entered.
 *
 * On the device with programs, bcast and barrier run as one program
 * (prog.c: the barrier as a line allgather of tokens there).
 *
 * Buffer: the vector at 0; reduce adds four scratch slots of its size.
 */
#include <errno.h>
#include <string.h>

#include "colls/coll.h"

/* The node agrees with the root's coordinates on dims [lo, hi). */
static int tc_agrees(const struct tc_comm *comm, const int *rootc, int lo, int hi)
{
	for (int e = lo; e < hi; e++)
		if (comm->coords[e] != rootc[e])
			return 0;
	return 1;
}

static int tc_bcast_phases(struct tc_run *r, size_t bytes, const int *rootc, int phase0)
{
	struct tc_comm *comm = r->comm;
	uint64_t off[1024], len[1024];
	int k = comm->tp.shape.ndims, ret;

	memset(off, 0, sizeof(off));
	for (int p = 0; p < k; p++) {
		int d = k - 1 - p, n = comm->tp.shape.dims[d];

		memset(len, 0, n * sizeof(len[0]));
		if (tc_agrees(comm, rootc, 0, d))
			len[rootc[d]] = bytes;
		r->phase = phase0 + p;
		r->what = "bcast tree";
		ret = tc_line_ag(r, d, off, len);
		if (ret)
			return ret;
	}
	return 0;
}

static int tc_reduce_phases(struct tc_run *r, size_t count, enum tc_datatype dt, enum tc_op op, const int *rootc,
			    const uint64_t *slots, int phase0)
{
	struct tc_comm *comm = r->comm;
	uint64_t off[1024], cnt[1024];
	int k = comm->tp.shape.ndims, ret;

	memset(off, 0, sizeof(off));
	for (int d = 0; d < k; d++) {
		int n = comm->tp.shape.dims[d];

		memset(cnt, 0, n * sizeof(cnt[0]));
		if (tc_agrees(comm, rootc, 0, d))
			cnt[rootc[d]] = count;
		r->phase = phase0 + d;
		r->what = "reduce tree";
		ret = tc_line_rs(r, d, off, cnt, dt, op, slots);
		if (ret)
			return ret;
	}
	return 0;
}

static void tc_reduce_slots(size_t bytes, uint64_t *slots, size_t *total)
{
	size_t v = tc_align(bytes);

	for (int i = 0; i < 4; i++)
		slots[i] = v * (i + 1);
	*total = v * 5;
}

struct tc_bcast_arg {
	size_t bytes;
	const int *rootc;
};

static int tc_bcast_rec(struct tc_run *r, void *arg)
{
	const struct tc_bcast_arg *b = arg;

	return tc_bcast_phases(r, b->bytes, b->rootc, 0);
}

int tc_exec_bcast(struct tc_comm *comm, const struct tc_coll_args *a)
{
	size_t bytes = a->count * tc_dt_size(a->dt);
	int rootc[TC_MAX_DIMS];
	struct tc_bcast_arg ba = { bytes, rootc };
	struct tc_cprog *entry;
	struct tc_run r;
	int ret, ran;

	ret = tc_run_begin(&r, comm, "bcast", bytes);
	if (ret || !bytes)
		return ret;
	tc_shape_coords(&comm->tp.shape, a->root, rootc);
	if (comm->tp.rank == a->root)
		memcpy(r.base, a->recvbuf, bytes);
	ret = tc_cprog_run(&r, TC_BCAST, a->root, bytes, tc_bcast_rec, &ba, &ran, &entry);
	if (!ran && !ret) {
		ret = tc_bcast_phases(&r, bytes, rootc, 0);
		if (!ret)
			tc_cprog_warm(entry);
	}
	if (ret)
		return ret;
	if (comm->tp.rank != a->root)
		memcpy(a->recvbuf, r.base, bytes);
	return 0;
}

int tc_exec_reduce(struct tc_comm *comm, const struct tc_coll_args *a)
{
	size_t bytes = a->count * tc_dt_size(a->dt), total;
	int rootc[TC_MAX_DIMS];
	uint64_t slots[4];
	struct tc_run r;
	int ret;

	tc_reduce_slots(bytes, slots, &total);
	ret = tc_run_begin(&r, comm, "reduce", bytes ? total : 0);
	if (ret || !bytes)
		return ret;
	tc_shape_coords(&comm->tp.shape, a->root, rootc);
	memcpy(r.base, a->sendbuf, bytes);
	ret = tc_reduce_phases(&r, a->count, a->dt, a->op, rootc, slots, 0);
	if (ret)
		return ret;
	if (comm->tp.rank == a->root)
		memcpy(a->recvbuf, r.base, bytes);
	return 0;
}

/* The barrier program's phases (prog.c): along each dimension a line
 * allgather of 8-byte tokens, line coordinate j's in slot j of the
 * dimension's own area. */
#define TC_TOKEN 8

static size_t tc_token_bytes(const struct tc_comm *comm)
{
	size_t n = 0;

	for (int d = 0; d < comm->tp.shape.ndims; d++)
		n += comm->tp.shape.dims[d];
	return n * TC_TOKEN;
}

static int tc_barrier_rec(struct tc_run *r, void *arg)
{
	const struct tc_comm *comm = r->comm;
	uint64_t off[1024], len[1024], at = 0;
	int ret;

	(void)arg;
	for (int d = 0; d < comm->tp.shape.ndims; d++) {
		int n = comm->tp.shape.dims[d];

		for (int j = 0; j < n; j++) {
			off[j] = at + (uint64_t)j * TC_TOKEN;
			len[j] = TC_TOKEN;
		}
		at += (uint64_t)n * TC_TOKEN;
		r->phase = d;
		r->what = "barrier tokens";
		ret = tc_line_ag(r, d, off, len);
		if (ret)
			return ret;
	}
	return 0;
}

int tc_exec_barrier(struct tc_comm *comm)
{
	int rootc[TC_MAX_DIMS] = { 0 };
	struct tc_cprog *entry;
	uint64_t slots[4];
	struct tc_run r;
	size_t total;
	int ret, ran;

	tc_reduce_slots(sizeof(int32_t), slots, &total);
	if (total < tc_token_bytes(comm))
		total = tc_token_bytes(comm);
	ret = tc_run_begin(&r, comm, "barrier", total);
	if (ret)
		return ret;
	ret = tc_cprog_run(&r, TC_BARRIER, 0, 0, tc_barrier_rec, NULL, &ran, &entry);
	if (ran || ret)
		return ret;
	memset(r.base, 0, sizeof(int32_t));
	r.base[0] = 1;
	r.phase = 0;
	ret = tc_reduce_phases(&r, 1, TC_INT32, TC_BOR, rootc, slots, 0);
	if (ret)
		return ret;
	ret = tc_bcast_phases(&r, sizeof(int32_t), rootc, TC_MAX_DIMS);
	if (!ret)
		tc_cprog_warm(entry);
	return ret;
}
