// SPDX-License-Identifier: GPL-2.0
/*
 * torus-bench: the table of collectives (one file each, coll_*.c) and what
 * their files share: the buffers, the poisoned receive buffer, the
 * v-variants' uneven blocks and the int32 vectors of the reductions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

const struct coll_ops *const colls[C_NUM] = {
	[C_ALLTOALL] = &coll_alltoall,	 [C_ALLGATHER] = &coll_allgather,   [C_ALLREDUCE] = &coll_allreduce,
	[C_BCAST] = &coll_bcast,	 [C_BARRIER] = &coll_barrier,	    [C_ALLTOALLV] = &coll_alltoallv,
	[C_ALLGATHERV] = &coll_allgatherv, [C_REDUCE_SCATTER] = &coll_reduce_scatter,
};

int alloc_bufs(enum coll c, size_t size, int P, struct bufs *B)
{
	size_t s = 0, r = 0;

	memset(B, 0, sizeof(*B));
	colls[c]->bufsize(size, P, &s, &r);
	B->send = malloc(s ? s : 1);
	B->recv = malloc(r ? r : 1);
	B->sc = calloc(P, sizeof(size_t));
	B->sd = calloc(P, sizeof(size_t));
	B->rc = calloc(P, sizeof(size_t));
	B->rd = calloc(P, sizeof(size_t));
	B->sendbytes = s;
	B->recvbytes = r;
	if (!B->send || !B->recv || !B->sc || !B->sd || !B->rc || !B->rd)
		return -ENOMEM;
	return 0;
}

void free_bufs(struct bufs *B)
{
	free(B->send);
	free(B->recv);
	free(B->sc);
	free(B->sd);
	free(B->rc);
	free(B->rd);
}

/* Fill the send data of call and poison the receive buffer. */
void fill(enum coll c, size_t size, int P, int rank, uint64_t call, struct bufs *B)
{
	memset(B->recv, POISON, B->recvbytes);
	colls[c]->fill(size, P, rank, call, B);
}

long long check(enum coll c, size_t size, int P, int rank, uint64_t call, const struct bufs *B)
{
	return colls[c]->check(size, P, rank, call, B);
}

void bw_model(enum coll c, size_t size, int P, double *bytes, double *factor)
{
	colls[c]->bw(size, P, bytes, factor);
}

/* alltoallv/allgatherv: bytes from s to d (d ignored for allgatherv) */
static size_t vcount(size_t m, int s, int d)
{
	return m * (size_t)(1 + (s + 2 * d) % 3) / 3;
}

/*
 * The v-variants: rank sends vcount(size, rank, d) bytes to each d (allgatherv:
 * vcount(size, rank, 0) to all), receives each origin's packed in origin order.
 */
void vfill(size_t size, int P, int rank, uint64_t call, int alltoallv, struct bufs *B)
{
	size_t off = 0;

	if (alltoallv) {
		for (int d = 0; d < P; d++) {
			B->sc[d] = vcount(size, rank, d);
			B->sd[d] = off;
			pat_fill(B->send + off, B->sc[d], call, rank, d);
			off += B->sc[d];
		}
		off = 0;
		for (int s = 0; s < P; s++) {
			B->rc[s] = vcount(size, s, rank);
			B->rd[s] = off;
			off += B->rc[s];
		}
		return;
	}
	B->sc[0] = vcount(size, rank, 0);
	pat_fill(B->send, B->sc[0], call, rank, -1);
	for (int s = 0; s < P; s++) {
		B->rc[s] = vcount(size, s, 0);
		B->rd[s] = off;
		off += B->rc[s];
	}
}

long long vcheck(int P, int rank, uint64_t call, int alltoallv, const struct bufs *B)
{
	long long bad = 0;
	size_t end = 0;

	for (int s = 0; s < P; s++) {
		bad += pat_bad(B->recv + B->rd[s], B->rc[s], call, s, alltoallv ? rank : -1);
		end = B->rd[s] + B->rc[s];
	}
	for (size_t i = end; i < B->recvbytes; i++) /* past the data: untouched */
		bad += B->recv[i] != POISON;
	return bad;
}

/* allreduce, reduce_scatter: rank's whole send buffer as int32 elements */
void int32_fill(int rank, uint64_t call, struct bufs *B)
{
	size_t n = B->sendbytes / 4;

	for (size_t e = 0; e < n; e++) {
		uint32_t v = epat(call, rank, e);

		memcpy(B->send + 4 * e, &v, 4);
	}
}

/* size bytes received: the sums over the ranks of elements base.. */
long long int32_check(size_t size, int P, uint64_t call, size_t base, const struct bufs *B)
{
	size_t n = size / 4;
	long long bad = 0;

	for (size_t e = 0; e < n; e++) {
		uint32_t want = 0;
		uint8_t wb[4];

		for (int r = 0; r < P; r++)
			want += epat(call, r, base + e);
		memcpy(wb, &want, 4);
		for (int k = 0; k < 4; k++)
			bad += B->recv[4 * e + k] != wb[k];
	}
	for (size_t i = 4 * n; i < size; i++) /* a tail shorter than one int32 */
		bad += B->recv[i] != POISON;
	return bad;
}

/* n bytes of the data src sends dst in call (pat()), a word at a time */
void pat_fill(uint8_t *p, size_t n, uint64_t call, int src, int dst)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w = pat_word(call, src, dst, i / 8);

		memcpy(p + i, &w, 8);
	}
	for (; i < n; i++)
		p[i] = pat(call, src, dst, i);
}

/* how many of n bytes differ from the data src sends dst in call */
long long pat_bad(const uint8_t *p, size_t n, uint64_t call, int src, int dst)
{
	long long bad = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w = pat_word(call, src, dst, i / 8), got;

		memcpy(&got, p + i, 8);
		if (got != w)
			for (int k = 0; k < 8; k++)
				bad += (uint8_t)(got >> (8 * k)) != (uint8_t)(w >> (8 * k));
	}
	for (; i < n; i++)
		bad += p[i] != pat(call, src, dst, i);
	return bad;
}
