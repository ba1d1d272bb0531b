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
 * For m = 64 KiB and 1 MiB per peer, after two warmup calls:
 *   t_coll: MPI_Ialltoall and its MPI_Wait alone;
 *   t_comp: computation of the same length with no MPI call inside it (a
 *           sleep by default, "busy" spins);
 *   t_both: start the call, compute t_comp, then MPI_Wait.
 * overlap = (t_coll + t_comp - t_both) / min(t_coll, t_comp). Each figure is
 * the median over ITERS (default 5) of the slowest rank's time (the ranks
 * meet at MPI_Barrier before each); every received byte is checked. Rank 0
 * prints one line per m:
 *   overlap mpi-ialltoall M t_coll_us t_comp_us t_both_us overlap -
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* Byte k of the block rank o sends to rank d in call salt. */
static unsigned char byte_of(int salt, int o, int d, size_t k)
{
	return (unsigned char)(salt * 131 + o * 31 + d * 7 + k * 13 + (k >> 8));
}

/* One call with compute_us of computation before MPI_Wait (< 0: the
 * computation alone); the slowest rank's time. */
static int one(unsigned char *s, unsigned char *r, size_t m, double compute_us, int salt, double *slowest,
	       long *bad)
{
	int me, P;
	MPI_Request req;
	double t0, t;

	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &P);
	for (size_t k = 0; k < (size_t)P * m; k++)
		s[k] = byte_of(salt, me, (int)(k / m), k % m);
	memset(r, 0, (size_t)P * m);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now_us();
	if (compute_us >= 0) {
		if (MPI_Ialltoall(s, (int)m, MPI_BYTE, r, (int)m, MPI_BYTE, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
			return 1;
		if (compute_us > 0)
			compute(compute_us);
		if (MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return 1;
	} else {
		compute(-compute_us);
	}
	t = now_us() - t0;
	if (compute_us >= 0)
		for (size_t k = 0; k < (size_t)P * m; k++)
			*bad += r[k] != byte_of(salt, (int)(k / m), me, k % m);
	return MPI_Allreduce(&t, slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 64 << 10, 1 << 20 };
	int iters, me, P, ret = 0;

	MPI_Init(&argc, &argv);
	iters = argc > 1 ? atoi(argv[1]) : 5;
	busy = argc > 2 && !strcmp(argv[2], "busy");
	if (iters < 1 || iters > 100) {
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &P);
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]) && !ret; si++) {
		size_t m = sizes[si];
		unsigned char *s = malloc((size_t)P * m), *r = malloc((size_t)P * m);
		double tc[100], tp[100], tb[100], x, med_c, med_p, med_b;
		long bad = 0, gbad = 0;
		int salt = 1;

		if (!s || !r)
			MPI_Abort(MPI_COMM_WORLD, 4);
		for (int w = 0; w < 2 && !ret; w++)
			ret = one(s, r, m, 0, salt++, &x, &bad);
		for (int i = 0; i < iters && !ret; i++)
			ret = one(s, r, m, 0, salt++, &tc[i], &bad);
		qsort(tc, iters, sizeof(double), cmp);
		med_c = tc[iters / 2];
		for (int i = 0; i < iters && !ret; i++)
			ret = one(s, r, m, -med_c, salt++, &tp[i], &bad);
		for (int i = 0; i < iters && !ret; i++)
			ret = one(s, r, m, med_c, salt++, &tb[i], &bad);
		MPI_Allreduce(&bad, &gbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		if (ret || gbad) {
			if (me == 0)
				fprintf(stderr, "overlap_mpi: m=%zu: %s (%ld wrong bytes)\n", m,
					ret ? "an MPI call failed" : "wrong bytes", gbad);
			ret = 1;
		} else {
			qsort(tp, iters, sizeof(double), cmp);
			qsort(tb, iters, sizeof(double), cmp);
			med_p = tp[iters / 2];
			med_b = tb[iters / 2];
			if (me == 0)
				printf("overlap mpi-ialltoall %zu %.0f %.0f %.0f %.2f -\n", m, med_c, med_p, med_b,
				       (med_c + med_p - med_b) / (med_c < med_p ? med_c : med_p));
		}
		free(s);
		free(r);
	}
	MPI_Finalize();
	return ret;
}
