// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * overlap_mpi: how much of Open MPI's MPI_Ialltoall overlaps with the
 * application's computation, measured exactly as tests/vm/bench_overlap
 * measures tc_ialltoall (a benchmark, not a test; built with mpicc when it
 * is installed). tests/vm/bench-offload runs it over shared memory in the
 * same guest:
 *   mpirun --allow-run-as-root --oversubscribe -np 16 --mca pml ob1 --mca btl self,vader \
 *       build/tests/verbs/overlap_mpi [ITERS] [busy]
 *
 * For m = 64 KiB and 1 MiB per peer, after two warmup calls and three
 * calls alone, ITERS triplets of:
 *   t_coll: MPI_Ialltoall and its MPI_Wait alone;
 *   t_comp: computation of length L (the median of every call alone so
 *           far) with no MPI call inside it (a sleep by default, "busy" spins);
 *   t_both: start the call, compute L, MPI_Test once, then MPI_Wait.
 * The three interleaved, their order turning; each the slowest
 * rank's time (the ranks meet at MPI_Barrier before each); every received
 * byte is checked (tests/vm/bench_data.h).
 * overlap = (t_coll + t_comp - t_both) / min(t_coll, t_comp). Rank 0 prints
 * one line per m, medians over ITERS, the fields of bench_overlap's:
 *   overlap mpi-ialltoall M t_coll_us t_comp_us t_both_us overlap - \
 *       overlap_per_iter post_us wait_us done_at_end L_us
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../vm/bench_data.h"

#define MAX_ITERS 100

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

static double median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* slowest over ranks of: time, post, wait; 1 if any rank's call was not done when its computation ended */
enum { M_T, M_POST, M_WAIT, M_NOTDONE, M_N };

/*
 * One measurement: mode 'c' the call alone, 'p' the computation alone, 'b'
 * both (call, compute L, MPI_Test, MPI_Wait). The slowest rank's figures in out.
 */
static int one(const unsigned char *base, const unsigned char *ref, unsigned char *s, unsigned char *r, size_t m,
	       char mode, double L, uint32_t call, double out[M_N], long *bad)
{
	uint64_t key = bd_key(call);
	double t0, t1, t2, t3, v[M_N] = { 0 };
	MPI_Request req;
	int P, done = 1;

	MPI_Comm_size(MPI_COMM_WORLD, &P);
	if (mode != 'p') {
		bd_xor(s, base, (size_t)P * m, key);
		memset(r, 0, (size_t)P * m);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now_us();
	if (mode == 'p') {
		compute(L);
		t3 = t2 = t1 = now_us();
	} else {
		if (MPI_Ialltoall(s, (int)m, MPI_BYTE, r, (int)m, MPI_BYTE, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
			return 1;
		t1 = now_us();
		if (mode == 'b') {
			compute(L);
			if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
				return 1;
		}
		t2 = now_us();
		if (MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return 1;
		t3 = now_us();
		*bad += bd_bad(r, ref, (size_t)P * m, key);
	}
	v[M_T] = t3 - t0;
	v[M_POST] = t1 - t0;
	v[M_WAIT] = t3 - t2;
	v[M_NOTDONE] = !done;
	return MPI_Allreduce(v, out, M_N, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 64 << 10, 1 << 20 };
	int iters, me, P, ret = 0;
	uint32_t call = 1;

	MPI_Init(&argc, &argv);
	iters = argc > 1 ? atoi(argv[1]) : 5;
	busy = argc > 2 && !strcmp(argv[2], "busy");
	if (iters < 1 || iters > MAX_ITERS) {
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &P);
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]) && !ret; si++) {
		size_t m = sizes[si], n = (size_t)P * m;
		unsigned char *base = malloc(n), *ref = malloc(n), *s = malloc(n), *r = malloc(n);
		double callc[MAX_ITERS + 3], lc[MAX_ITERS + 3], Ls[MAX_ITERS], tc[MAX_ITERS], tp[MAX_ITERS],
			tb[MAX_ITERS], ov[MAX_ITERS], post[MAX_ITERS], wait[MAX_ITERS], x[M_N], c[M_N], p[M_N], bo[M_N], L, med_c, med_p, med_b;
		long bad = 0, gbad = 0;
		int notdone = 0, nc = 0;

		if (!base || !ref || !s || !r)
			MPI_Abort(MPI_COMM_WORLD, 4);
		for (int k = 0; k < P; k++) {
			bd_block(base + (size_t)k * m, me, k, m);
			bd_block(ref + (size_t)k * m, k, me, m);
		}
		for (int w = 0; w < 2 && !ret; w++)
			ret = one(base, ref, s, r, m, 'c', 0, call++, x, &bad);
		for (int i = 0; i < 3 && !ret; i++) {
			ret = one(base, ref, s, r, m, 'c', 0, call++, x, &bad);
			callc[i] = x[M_T];
		}
		nc = 3;
		for (int i = 0; i < iters && !ret; i++) {
			/* the computation's length: the median of every call alone so far */
			memcpy(lc, callc, nc * sizeof(double));
			L = median(lc, nc);
			Ls[i] = L;
			for (int k = 0; k < 3 && !ret; k++) {
				char mode = "cpb"[(i + k) % 3];

				ret = one(base, ref, s, r, m, mode, L, call++, mode == 'c' ? c : mode == 'p' ? p : bo, &bad);
			}
			if (ret)
				break;
			tc[i] = c[M_T];
			callc[nc++] = c[M_T];
			tp[i] = p[M_T];
			tb[i] = bo[M_T];
			ov[i] = (c[M_T] + p[M_T] - bo[M_T]) / (c[M_T] < p[M_T] ? c[M_T] : p[M_T]);
			post[i] = bo[M_POST];
			wait[i] = bo[M_WAIT];
			notdone += bo[M_NOTDONE] > 0;
		}
		MPI_Allreduce(&bad, &gbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		if (ret || gbad) {
			if (me == 0)
				fprintf(stderr, "overlap_mpi: m=%zu: %s (%ld wrong bytes)\n", m,
					ret ? "an MPI call failed" : "wrong bytes", gbad);
			ret = 1;
		} else {
			med_c = median(tc, iters);
			med_p = median(tp, iters);
			med_b = median(tb, iters);
			if (me == 0)
				printf("overlap mpi-ialltoall %zu %.0f %.0f %.0f %.2f - %.2f %.0f %.0f %.2f %.0f\n", m, med_c,
				       med_p, med_b, (med_c + med_p - med_b) / (med_c < med_p ? med_c : med_p),
				       median(ov, iters), median(post, iters), median(wait, iters),
				       (double)(iters - notdone) / iters, median(Ls, iters));
			fflush(stdout);
		}
		free(base);
		free(ref);
		free(s);
		free(r);
	}
	MPI_Finalize();
	return ret;
}
