// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_overlap: how much of tc_ialltoall / tc_iallgather overlaps with the
 * application's computation (not a test; run-guest leaves bench_* out).
 * One rank per node under torusrun, e.g.
 *   torusrun --fabric 0 -- build/tests/vm/bench_overlap [ITERS] [busy]
 * (tests/vm/bench-offload runs it with TC_DEV_OFFLOAD on and off).
 *
 * For m = 64 KiB and 1 MiB per peer and each of the two calls, after two
 * blocking warmup calls (the first of a communicator runs step by step):
 *   t_coll: the nonblocking call and its tc_wait alone;
 *   t_comp: computation of the same length, with no library call inside
 *           (a sleep by default: a guest has fewer vCPUs than 16 ranks, and
 *           busy ranks would starve the kernel engines that model the NIC;
 *           "busy" spins instead);
 *   t_both: start the call, compute t_comp, then tc_wait.
 * overlap = (t_coll + t_comp - t_both) / min(t_coll, t_comp): 1 when the
 * call completed entirely during the computation, 0 when nothing of it did.
 * Each figure is the median over ITERS (default 5) of the slowest rank's
 * time (the ranks meet at tc_barrier before each); every byte of every call
 * is checked. Rank 0 prints one line per (call, m):
 *   overlap COLL M t_coll_us t_comp_us t_both_us overlap offloaded
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "toruscoll.h"
#include "../unit/tbyte.h"

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int busy;

static void compute(double us)
{
	if (!busy) {
		usleep((useconds_t)us);
		return;
	}
	for (double t0 = now_us(); now_us() - t0 < us;)
		;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static long check(int a2a, const unsigned char *r, int me, int P, size_t m, int salt)
{
	long bad = 0;

	for (size_t k = 0; k < (size_t)P * m; k++)
		bad += r[k] != (a2a ? tbyte(salt, k / m, me, k % m) : tbyte(salt, k / m, 0, k % m));
	return bad;
}

static void fill(int a2a, unsigned char *s, int me, int P, size_t m, int salt)
{
	for (size_t k = 0; k < (a2a ? (size_t)P * m : m); k++)
		s[k] = a2a ? tbyte(salt, me, k / m, k % m) : tbyte(salt, me, 0, k);
}

/* One call, nonblocking, with compute_us of computation before tc_wait; the slowest rank's time. */
static int one(tc_comm_t *comm, int a2a, unsigned char *s, unsigned char *r, size_t m, double compute_us,
	       int salt, double *slowest, long *bad)
{
	int me = tc_comm_rank(comm), P = tc_comm_size(comm), ret;
	tc_request_t *req;
	double t0, t;

	fill(a2a, s, me, P, m, salt);
	memset(r, 0, (size_t)P * m);
	ret = tc_barrier(comm);
	if (ret)
		return ret;
	t0 = now_us();
	if (compute_us >= 0) {
		ret = a2a ? tc_ialltoall(comm, s, r, m, &req) : tc_iallgather(comm, s, r, m, &req);
		if (ret)
			return ret;
		if (compute_us > 0)
			compute(compute_us);
		ret = tc_wait(&req);
	} else {
		compute(-compute_us);
		ret = 0;
	}
	t = now_us() - t0;
	if (ret)
		return ret;
	if (compute_us >= 0)
		*bad += check(a2a, r, me, P, m, salt);
	return tc_allreduce(comm, &t, slowest, 1, TC_DOUBLE, TC_MAX);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 64 << 10, 1 << 20 };
	int iters = argc > 1 ? atoi(argv[1]) : 5, ret, me, P;
	tc_comm_t *comm;

	busy = argc > 2 && !strcmp(argv[2], "busy");
	if (iters < 1 || iters > 100)
		return 2;
	ret = tc_comm_create(NULL, &comm);
	if (ret) {
		fprintf(stderr, "tc_comm_create: %s\n", tc_last_error());
		return 4;
	}
	me = tc_comm_rank(comm);
	P = tc_comm_size(comm);
	for (int a2a = 1; a2a >= 0; a2a--) {
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			size_t m = sizes[si];
			unsigned char *s = malloc((size_t)P * m), *r = malloc((size_t)P * m);
			double tc[100], tp[100], tb[100], x, med_c, med_p, med_b;
			struct tc_coll_info info = { .size = sizeof(info) };
			long bad = 0;
			int salt = 1;

			if (!s || !r)
				return 4;
			for (int w = 0; w < 2 && !ret; w++)
				ret = one(comm, a2a, s, r, m, 0, salt++, &x, &bad);
			for (int i = 0; i < iters && !ret; i++)
				ret = one(comm, a2a, s, r, m, 0, salt++, &tc[i], &bad);
			qsort(tc, iters, sizeof(double), cmp);
			med_c = tc[iters / 2];
			for (int i = 0; i < iters && !ret; i++)
				ret = one(comm, a2a, s, r, m, -med_c, salt++, &tp[i], &bad);
			for (int i = 0; i < iters && !ret; i++)
				ret = one(comm, a2a, s, r, m, med_c, salt++, &tb[i], &bad);
			if (ret) {
				fprintf(stderr, "rank %d: %s\n", me, tc_last_error());
				return 1;
			}
			if (bad) {
				fprintf(stderr, "rank %d: %ld wrong bytes\n", me, bad);
				return 1;
			}
			qsort(tp, iters, sizeof(double), cmp);
			qsort(tb, iters, sizeof(double), cmp);
			med_p = tp[iters / 2];
			med_b = tb[iters / 2];
			tc_coll_last(comm, a2a ? TC_ALLTOALL : TC_ALLGATHER, &info);
			if (me == 0)
				printf("overlap %s %zu %.0f %.0f %.0f %.2f %u\n", a2a ? "ialltoall" : "iallgather", m, med_c,
				       med_p, med_b, (med_c + med_p - med_b) / (med_c < med_p ? med_c : med_p),
				       info.offloaded);
			free(s);
			free(r);
		}
	}
	tc_comm_destroy(comm);
	return 0;
}
