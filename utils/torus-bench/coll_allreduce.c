// SPDX-License-Identifier: GPL-2.0
/* torus-bench: allreduce, the sum of size/4 int32 elements over the ranks. */
#include "bench.h"

static void bufsize(size_t size, int P, size_t *s, size_t *r)
{
	(void)P;
	*s = *r = size;
}

static void bw(size_t size, int P, double *bytes, double *factor)
{
	*bytes = size;
	*factor = 2 * (double)(P - 1) / P;
}

static void fill_(size_t size, int P, int rank, uint64_t call, struct bufs *B)
{
	(void)size, (void)P;
	int32_fill(rank, call, B);
}

static long long check_(size_t size, int P, int rank, uint64_t call, const struct bufs *B)
{
	(void)rank;
	return int32_check(size, P, call, 0, B);
}

static int run(tc_comm_t *comm, size_t size, struct bufs *B)
{
	return tc_allreduce(comm, B->send, B->recv, size / 4, TC_INT32, TC_SUM);
}

const struct coll_ops coll_allreduce = {
	.name = "allreduce",
	.size_name = "vector_bytes",
	.size_is = "the bytes of the int32 vector reduced",
	.bufsize = bufsize, .bw = bw, .fill = fill_, .check = check_, .run = run,
};
