// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_offload_time: time per call, the device running each collective as
 * one program (offload) against step by step, measured in one process so
 * that the host's noise falls on both alike (not a test; run-guest leaves
 * bench_* out). One rank per node under torusrun, with a second fabric of
 * the same shape and parameters:
 *   torusctl fabric create 4x4 --matrix-bytes 33554432     (prints F)
 *   torusrun --fabric 0 -- build/tests/vm/bench_offload_time F [ROUNDS [MAXBYTES]]
 * (tests/vm/bench-offload runs it.)
 *
 * Each rank opens two communicators: "on" over torusrun's fabric (offload
 * as the module and TC_DEV_OFFLOAD allow) and "off" over fabric F
 * (tc_comm_attr.offload = TC_OFFLOAD_OFF: step by step). For alltoall,
 * allgather and allreduce (int64 sum) at 8 B .. MAXBYTES (default 1 MiB) x8,
 * and 1 MiB, and barrier, after two warmup calls on each: ROUNDS (default
 * 9) rounds of three blocks, "on", "off" and "on" again ("on2": the same
 * mode timed twice in the same rounds, the noise any ratio carries), their
 * order turning from round to round. A block is B calls (B = 8 up to 4 KiB,
 * 4 to 32 KiB, 2 to 256 KiB, else 1), each after a tc_barrier of its
 * communicator (not timed) and checked byte by byte after it (not timed);
 * the block's figure is the slowest rank's summed call time over B.
 *
 * Rank 0 prints one line per (collective, m):
 *   time COLL M on_us off_us on2_us off/on q1 q3 on2/on q1 q3 offloaded posts waits regs posts_off waits_off
 * with the medians over rounds of each mode's block figure, off/on the
 * ratio of the medians (above 1: offload is faster) and the lower and
 * upper quartiles of the rounds' own ratios, on2/on the same for the mode
 * timed twice; offloaded, posts, waits and regs of the "on" communicator's
 * last call (tc_coll_last, this rank), posts and waits of the "off" one's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "toruscoll.h"
#include "bench_data.h"

#define MAX_ROUNDS 64

enum { K_A2A, K_AG, K_AR, K_BAR };
static const char *const kname[] = { "alltoall", "allgather", "allreduce", "barrier" };
static const enum tc_coll_id kid[] = { TC_ALLTOALL, TC_ALLGATHER, TC_ALLREDUCE, TC_BARRIER };

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of n values, v sorted in place. */
static double quant(double *v, int n, double q)
{
	double at = q * (n - 1);
	int i = (int)at;

	qsort(v, n, sizeof(double), cmp);
	return i + 1 < n ? v[i] + (at - i) * (v[i + 1] - v[i]) : v[i];
}

struct point {
	int kind, P, me;
	size_t m, n;	     /* block bytes; the buffers' bytes */
	unsigned char *s, *r;  /* send (base XOR the call's key) and receive */
	unsigned char *ref;    /* alltoall / allgather: the reference before the key */
	int64_t *base, *sum;   /* allreduce: this rank's values and the sums over ranks, before the call */
	uint64_t key;	     /* the key s holds now */
};

static int point_init(struct point *pt, int kind, int me, int P, size_t m)
{
	memset(pt, 0, sizeof(*pt));
	pt->kind = kind;
	pt->me = me;
	pt->P = P;
	pt->m = m;
	if (kind == K_BAR)
		return 0;
	pt->n = kind == K_AR ? m : (size_t)P * m;
	pt->s = malloc(pt->n);
	pt->r = malloc(pt->n);
	if (!pt->s || !pt->r)
		return -ENOMEM;
	if (kind == K_AR) {
		size_t c = m / 8;

		pt->base = malloc(m);
		pt->sum = calloc(c, 8);
		if (!pt->base || !pt->sum)
			return -ENOMEM;
		for (int o = 0; o < P; o++)
			for (size_t i = 0; i < c; i++) {
				int64_t v = (int64_t)(tbyte_mix((uint64_t)o << 32 ^ i) >> 8);

				pt->sum[i] += v;
				if (o == me)
					pt->base[i] = v;
			}
		return 0;
	}
	pt->ref = malloc(pt->n);
	if (!pt->ref)
		return -ENOMEM;
	for (int k = 0; k < P; k++) {
		/* allgather: this rank sends one block, the first m bytes of s */
		if (kind == K_A2A || k == 0)
			bd_block(pt->s + (size_t)k * m, me, kind == K_A2A ? k : 0, m);
		bd_block(pt->ref + (size_t)k * m, k, kind == K_A2A ? me : 0, m);
	}
	return 0;
}

static void point_free(struct point *pt)
{
	free(pt->s);
	free(pt->r);
	free(pt->ref);
	free(pt->base);
	free(pt->sum);
}

/* Make s the send data of call c. */
static void point_send(struct point *pt, uint32_t c)
{
	uint64_t key = bd_key(c);

	if (pt->kind == K_AR) {
		int64_t *s = (int64_t *)pt->s;

		for (size_t i = 0; i < pt->m / 8; i++)
			s[i] = pt->base[i] + c;
	} else {
		/* s holds base XOR the last key: turn it into base XOR this one */
		bd_xor(pt->s, pt->s, pt->kind == K_A2A ? pt->n : pt->m, pt->key ^ key);
		pt->key = key;
	}
	memset(pt->r, 0, pt->n);
}

/* Wrong bytes of call c's result. */
static long point_bad(const struct point *pt, uint32_t c)
{
	long bad = 0;

	if (pt->kind == K_AR) {
		const int64_t *r = (const int64_t *)pt->r;

		for (size_t i = 0; i < pt->m / 8; i++)
			bad += r[i] != pt->sum[i] + (int64_t)pt->P * c ? 8 : 0;
		return bad;
	}
	return bd_bad(pt->r, pt->ref, pt->n, bd_key(c));
}

static int point_call(tc_comm_t *comm, struct point *pt)
{
	switch (pt->kind) {
	case K_A2A:
		return tc_alltoall(comm, pt->s, pt->r, pt->m);
	case K_AG:
		return tc_allgather(comm, pt->s, pt->r, pt->m);
	case K_AR:
		return tc_allreduce(comm, pt->s, pt->r, pt->m / 8, TC_INT64, TC_SUM);
	default:
		return tc_barrier(comm);
	}
}

/* B calls on comm; *out: the slowest rank's summed call time over B. */
static int block(tc_comm_t *comm, struct point *pt, int B, uint32_t *call, double *out, long *bad)
{
	double sum = 0;
	int ret;

	for (int j = 0; j < B; j++) {
		uint32_t c = (*call)++;
		double t0;

		if (pt->kind != K_BAR)
			point_send(pt, c);
		ret = tc_barrier(comm);
		if (ret)
			return ret;
		t0 = now_us();
		ret = point_call(comm, pt);
		sum += now_us() - t0;
		if (ret)
			return ret;
		if (pt->kind != K_BAR)
			*bad += point_bad(pt, c);
	}
	ret = tc_allreduce(comm, &sum, out, 1, TC_DOUBLE, TC_MAX);
	*out /= B;
	return ret;
}

int main(int argc, char **argv)
{
	struct tc_comm_attr attr = { .size = sizeof(attr), .transport = TC_TRANSPORT_DEV, .offload = TC_OFFLOAD_OFF };
	int rounds = argc > 2 ? atoi(argv[2]) : 9, ret, me, P;
	unsigned long maxb = argc > 3 ? strtoul(argv[3], NULL, 0) : 1 << 20;
	tc_comm_t *comm[2];
	uint32_t call = 1;
	char *end;

	if (argc < 2 || rounds < 1 || rounds > MAX_ROUNDS || maxb < 8) {
		fprintf(stderr, "usage: bench_offload_time FABRIC [ROUNDS (1..%d) [MAXBYTES]]\n", MAX_ROUNDS);
		return 2;
	}
	attr.fabric_id = (uint32_t)strtoul(argv[1], &end, 0);
	if (*end || !getenv("TC_NODE")) {
		fprintf(stderr, "bench_offload_time: FABRIC is a number, and TC_NODE must be set (run under torusrun)\n");
		return 2;
	}
	attr.node = (uint32_t)strtoul(getenv("TC_NODE"), NULL, 0);
	ret = tc_comm_create(NULL, &comm[0]);
	if (!ret)
		ret = tc_comm_create(&attr, &comm[1]);
	if (ret) {
		fprintf(stderr, "node %u: tc_comm_create: %s\n", attr.node, tc_last_error());
		return 4;
	}
	me = tc_comm_rank(comm[0]);
	P = tc_comm_size(comm[0]);
	if (tc_comm_size(comm[1]) != P || tc_comm_rank(comm[1]) != me) {
		fprintf(stderr, "node %d: fabric %u is not the shape of torusrun's\n", me, attr.fabric_id);
		return 4;
	}
	for (int kind = K_A2A; kind <= K_BAR; kind++) {
		for (size_t m = 8; m <= maxb; m = m < (256 << 10) ? m * 8 : m * 4) {
			struct tc_coll_info on = { .size = sizeof(on) }, off = { .size = sizeof(off) };
			double t[3][MAX_ROUNDS], roff[MAX_ROUNDS], ron2[MAX_ROUNDS], med[3];
			int B = m <= 4096 ? 8 : m <= 32768 ? 4 : m <= (256 << 10) ? 2 : 1;
			struct point pt;
			long bad = 0;
			double x;

			if (kind == K_BAR && m > 8)
				break;
			if (point_init(&pt, kind, me, P, m)) {
				fprintf(stderr, "node %d: out of memory for %s of %zu B\n", me, kname[kind], m);
				return 4;
			}
			/* warmup: the first call of a plan runs step by step */
			ret = 0;
			for (int c = 0; c < 2 && !ret; c++)
				for (int w = 0; w < 2 && !ret; w++)
					ret = block(comm[c], &pt, 1, &call, &x, &bad);
			for (int r = 0; r < rounds && !ret; r++)
				for (int k = 0; k < 3 && !ret; k++) {
					int which = (r + k) % 3; /* 0 on, 1 off, 2 on2 */

					ret = block(comm[which == 1], &pt, B, &call, &t[which][r], &bad);
				}
			if (ret) {
				fprintf(stderr, "node %d: %s of %zu B: %s\n", me, kname[kind], m, tc_last_error());
				return 1;
			}
			if (bad) {
				fprintf(stderr, "node %d: %s of %zu B: %ld wrong bytes\n", me, kname[kind], m, bad);
				return 1;
			}
			for (int r = 0; r < rounds; r++) {
				roff[r] = t[1][r] / t[0][r];
				ron2[r] = t[2][r] / t[0][r];
			}
			tc_coll_last(comm[0], kid[kind], &on);
			tc_coll_last(comm[1], kid[kind], &off);
			for (int i = 0; i < 3; i++)
				med[i] = quant(t[i], rounds, 0.5);
			if (me == 0)
				printf("time %s %zu %.0f %.0f %.0f %.2f %.2f %.2f %.2f %.2f %.2f %u %u %u %u %u %u\n",
				       kname[kind], kind == K_BAR ? (size_t)0 : m, med[0], med[1], med[2], med[1] / med[0],
				       quant(roff, rounds, 0.25), quant(roff, rounds, 0.75), med[2] / med[0],
				       quant(ron2, rounds, 0.25), quant(ron2, rounds, 0.75), on.offloaded, on.posts, on.waits,
				       on.regs, off.posts, off.waits);
			fflush(stdout);
			point_free(&pt);
		}
	}
	tc_comm_destroy(comm[1]);
	tc_comm_destroy(comm[0]);
	return 0;
}
