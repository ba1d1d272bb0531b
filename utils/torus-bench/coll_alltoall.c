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

static void fill_(size_t size, int P, int rank, int it, struct bufs *B)
{
	for (int d = 0; d < P; d++)
		for (size_t i = 0; i < size; i++)
			B->send[d * size + i] = pat(rank, d, i, it);
}

static long long check_(size_t size, int P, int rank, int it, const struct bufs *B)
{
	long long bad = 0;

	for (int s = 0; s < P; s++)
		for (size_t i = 0; i < size; i++)
			bad += B->recv[s * size + i] != pat(s, rank, i, it);
	return bad;
}

static int run(tc_comm_t *comm, size_t size, struct bufs *B)
{
	return tc_alltoall(comm, B->send, B->recv, size);
}

const struct coll_ops coll_alltoall = {
	.name = "alltoall", .bufsize = bufsize, .bw = bw, .fill = fill_, .check = check_, .run = run,
};
