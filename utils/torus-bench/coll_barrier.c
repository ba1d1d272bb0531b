// SPDX-License-Identifier: GPL-2.0
/* torus-bench: barrier, no data (one size, 0). */
#include "bench.h"

static void bufsize(size_t size, int P, size_t *s, size_t *r)
{
	(void)size, (void)P;
	*s = *r = 0;
}

static void bw(size_t size, int P, double *bytes, double *factor)
{
	(void)size, (void)P;
	*bytes = 0;
	*factor = 0;
}

static void fill_(size_t size, int P, int rank, uint64_t call, struct bufs *B)
{
	(void)size, (void)P, (void)rank, (void)call, (void)B;
}

static long long check_(size_t size, int P, int rank, uint64_t call, const struct bufs *B)
{
	(void)size, (void)P, (void)rank, (void)call, (void)B;
	return 0;
}

static int run(tc_comm_t *comm, size_t size, struct bufs *B)
{
	(void)size, (void)B;
	return tc_barrier(comm);
}

const struct coll_ops coll_barrier = {
	.name = "barrier",
	.size_name = "size",
	.size_is = "none (no data)",
	.bufsize = bufsize, .bw = bw, .fill = fill_, .check = check_, .run = run,
};
