// SPDX-License-Identifier: GPL-2.0
/*
 * torus-bench: reduce_scatter, each rank receiving the sum over the ranks of
 * its own size/4 int32 elements of a vector of P*size bytes.
 */
#include "bench.h"

static void bufsize(size_t size, int P, size_t *s, size_t *r)
{
	*s = size * P;
	*r = size;
}

static void bw(size_t size, int P, double *bytes, double *factor)
{
	*bytes = (double)size * P;
	*factor = (double)(P - 1) / P;
}

static void fill_(size_t size, int P, int rank, uint64_t call, struct bufs *B)
{
	(void)size, (void)P;
	int32_fill(rank, call, B);
}

static long long check_(size_t size, int P, int rank, uint64_t call, const struct bufs *B)
{
	return int32_check(size, P, call, (size_t)rank * (size / 4), B);
}

static int run(tc_comm_t *comm, size_t size, struct bufs *B)
{
	return tc_reduce_scatter(comm, B->send, B->recv, size / 4, TC_INT32, TC_SUM);
}

const struct coll_ops coll_reduce_scatter = {
	.name = "reduce_scatter",
	.size_name = "recv_bytes",
	.size_is = "the bytes each rank receives (int32 sums)",
	.bufsize = bufsize, .bw = bw, .fill = fill_, .check = check_, .run = run,
};
