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

static void fill_(size_t size, int P, int rank, uint64_t call, struct bufs *B)
{
	(void)P;
	if (rank == 0)
		pat_fill(B->recv, size, call, 0, -1); /* -1: to every rank */
}

static long long check_(size_t size, int P, int rank, uint64_t call, const struct bufs *B)
{
	(void)P, (void)rank;
	return pat_bad(B->recv, size, call, 0, -1);
}

static int run(tc_comm_t *comm, size_t size, struct bufs *B)
{
	return tc_bcast(comm, B->recv, size / 4, TC_INT32, 0);
}

const struct coll_ops coll_bcast = {
	.name = "bcast",
	.size_name = "vector_bytes",
	.size_is = "the bytes of the int32 vector broadcast",
	.bufsize = bufsize, .bw = bw, .fill = fill_, .check = check_, .run = run,
};
