// SPDX-License-Identifier: GPL-2.0
/*
 * torus-bench: alltoallv, uneven blocks of at most size bytes from every rank
 * to every rank (vfill() in colls.c), packed in origin order.
 */
#include "bench.h"

static void bufsize(size_t size, int P, size_t *s, size_t *r)
{
	*s = *r = size * P;
}

static void bw(size_t size, int P, double *bytes, double *factor)
{
	*bytes = (double)size * P; /* the nominal P*size */
	*factor = (double)(P - 1) / P;
}

static void fill_(size_t size, int P, int rank, uint64_t call, struct bufs *B)
{
	vfill(size, P, rank, call, 1, B);
}

static long long check_(size_t size, int P, int rank, uint64_t call, const struct bufs *B)
{
	(void)size;
	return vcheck(P, rank, call, 1, B);
}

static int run(tc_comm_t *comm, size_t size, struct bufs *B)
{
	(void)size;
	return tc_alltoallv(comm, B->send, B->sc, B->sd, B->recv, B->rc, B->rd);
}

const struct coll_ops coll_alltoallv = {
	.name = "alltoallv",
	.size_name = "max_block_bytes",
	.size_is = "the bytes of the largest block, one to each peer",
	.bufsize = bufsize, .bw = bw, .fill = fill_, .check = check_, .run = run,
};
