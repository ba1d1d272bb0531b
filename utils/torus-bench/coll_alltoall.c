// SPDX-License-Identifier: GPL-2.0
/* torus-bench: alltoall, size bytes from every rank to every rank. */
#include "bench.h"

static void bufsize(size_t size, int P, size_t *s, size_t *r)
{
	*s = *r = size * P;
}

static void bw(size_t size, int P, double *bytes, double *factor)
{
	*bytes = (double)size * P;
	*factor = (double)(P - 1) / P;
}

static void fill_(size_t size, int P, int rank, uint64_t call, struct bufs *B)
{
	for (int d = 0; d < P; d++)
		pat_fill(B->send + d * size, size, call, rank, d);
}

static long long check_(size_t size, int P, int rank, uint64_t call, const struct bufs *B)
{
	long long bad = 0;

	for (int s = 0; s < P; s++)
		bad += pat_bad(B->recv + s * size, size, call, s, rank);
	return bad;
}

static int run(tc_comm_t *comm, size_t size, struct bufs *B)
{
	return tc_alltoall(comm, B->send, B->recv, size);
}

const struct coll_ops coll_alltoall = {
	.name = "alltoall",
	.size_name = "block_bytes",
	.size_is = "the bytes of each block, one to each peer",
	.bufsize = bufsize, .bw = bw, .fill = fill_, .check = check_, .run = run,
};
