// SPDX-License-Identifier: GPL-2.0
/* torus-bench: bcast, size/4 int32 elements from rank 0, in place. */
#include "bench.h"

static void bufsize(size_t size, int P, size_t *s, size_t *r)
{
	(void)P;
	*s = *r = size;
}

static void bw(size_t size, int P, double *bytes, double *factor)
{
	(void)P;
	*bytes = size;
	*factor = 1;
}

static void fill_(size_t size, int P, int rank, int it, struct bufs *B)
{
	(void)P;
	if (rank == 0)
		for (size_t i = 0; i < size; i++)
			B->recv[i] = pat(0, 0, i, it);
}

static long long check_(size_t size, int P, int rank, int it, const struct bufs *B)
{
	long long bad = 0;

	(void)P, (void)rank;
	for (size_t i = 0; i < size; i++)
		bad += B->recv[i] != pat(0, 0, i, it);
	return bad;
}

static int run(tc_comm_t *comm, size_t size, struct bufs *B)
{
	return tc_bcast(comm, B->recv, size / 4, TC_INT32, 0);
}

const struct coll_ops coll_bcast = {
	.name = "bcast", .bufsize = bufsize, .bw = bw, .fill = fill_, .check = check_, .run = run,
};
