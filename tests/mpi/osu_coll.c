// SPDX-License-Identifier: GPL-2.0
/*
 * OSU-style collective latency: alltoall, allgather or barrier over message
 * sizes (bytes per peer), average / min / max latency across ranks in
 * microseconds. A plain MPI program: compare plain Open MPI with the same
 * run under LD_PRELOAD=libtorusmpi.so.
 *
 *   osu_coll [-t alltoall|allgather|barrier] [-m MIN:MAX] [-f FACTOR] [-i ITERS] [-w WARMUP] [-c]
 *
 * Sizes go from MIN to MAX, multiplied by FACTOR (default 2) each time.
 *
 * -c validates every iteration: each rank fills its send buffer with a
 * pattern of (rank, peer, iteration) and checks every received byte; rank 0
 * then prints one TAP point per size.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char pat(int src, int dst, int it, size_t k)
{
	return (unsigned char)(src * 31 + dst * 7 + it * 13 + k * 3 + (k >> 8));
}

static void usage(void)
{
	fprintf(stderr, "usage: osu_coll [-t alltoall|allgather|barrier] [-m MIN:MAX] [-f FACTOR] [-i ITERS] [-w WARMUP] [-c]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *type = "alltoall";
	size_t minb = 1, maxb = 65536;
	int iters = 20, warm = 3, check = 0, factor = 2, opt, rank, n, tapn = 0, tapfail = 0;
	unsigned char *s, *r;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	while ((opt = getopt(argc, argv, "t:m:f:i:w:c")) != -1) {
		switch (opt) {
		case 't':
			type = optarg;
			break;
		case 'm':
			if (sscanf(optarg, "%zu:%zu", &minb, &maxb) != 2)
				usage();
			break;
		case 'f':
			factor = atoi(optarg);
			if (factor < 2)
				usage();
			break;
		case 'i':
			iters = atoi(optarg);
			break;
		case 'w':
			warm = atoi(optarg);
			break;
		case 'c':
			check = 1;
			break;
		default:
			usage();
		}
	}
	if (strcmp(type, "alltoall") && strcmp(type, "allgather") && strcmp(type, "barrier"))
		usage();
	if (!strcmp(type, "barrier"))
		minb = maxb = 0;
	s = malloc(maxb * n + 1);
	r = malloc(maxb * n + 1);
	if (rank == 0)
		printf("# osu_coll %s, %d ranks, %d iterations%s\n# %-10s %12s %12s %12s\n", type, n, iters,
		       check ? ", validated" : "", "bytes", "avg(us)", "min(us)", "max(us)");
	for (size_t m = minb; m <= maxb; m = m ? m * factor : 1) {
		double t = 0, sum, mn, mx;
		long bad = 0, allbad = 0;

		for (int it = -warm; it < iters; it++) {
			double t0;

			if (check) {
				for (int d = 0; d < n; d++)
					for (size_t k = 0; k < m; k++)
						s[d * m + k] = pat(rank, !strcmp(type, "alltoall") ? d : -1, it, k);
				memset(r, 0xee, m * n);
			}
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
			if (!strcmp(type, "alltoall"))
				MPI_Alltoall(s, m, MPI_BYTE, r, m, MPI_BYTE, MPI_COMM_WORLD);
			else if (!strcmp(type, "allgather"))
				MPI_Allgather(s, m, MPI_BYTE, r, m, MPI_BYTE, MPI_COMM_WORLD);
			else
				MPI_Barrier(MPI_COMM_WORLD);
			if (it >= 0)
				t += MPI_Wtime() - t0;
			if (check)
				for (int src = 0; src < n; src++)
					for (size_t k = 0; k < m; k++)
						bad += r[src * m + k] !=
						       pat(src, !strcmp(type, "alltoall") ? rank : -1, it, k);
		}
		t = t / iters * 1e6;
		PMPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		PMPI_Reduce(&t, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
		PMPI_Reduce(&t, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		PMPI_Reduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
		if (rank == 0) {
			printf("  %-10zu %12.2f %12.2f %12.2f\n", m, sum / n, mn, mx);
			if (check) {
				printf("%sok %d - %s %zu B x %d ranks: every byte checked%s\n", allbad ? "not " : "", ++tapn,
				       type, m, n, allbad ? " (wrong bytes)" : "");
				tapfail += allbad != 0;
			}
		}
		if (!m || m == maxb)
			break;
	}
	if (rank == 0 && check)
		printf("1..%d\n", tapn);
	free(s);
	free(r);
	MPI_Finalize();
	return tapfail ? 1 : 0;
}
