// SPDX-License-Identifier: GPL-2.0
/*
 * OSU-style collective latency: alltoall, allgather or barrier over message
 * sizes (bytes per peer), average / min / max latency across ranks in
 * microseconds. A plain MPI program: compare plain Open MPI with the same
 * run under LD_PRELOAD=libtorusmpi.so.
 *
 *   osu_coll [-t alltoall|allgather|barrier[,...]] [-m MIN:MAX] [-f FACTOR] [-i ITERS] [-w WARMUP] [-c]
 *
 * Sizes go from MIN to MAX, multiplied by FACTOR (default 2) each time. A
 * list of collectives runs them one after the other in one job.
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
	fprintf(stderr,
		"usage: osu_coll [-t alltoall|allgather|barrier[,...]] [-m MIN:MAX] [-f FACTOR] [-i ITERS] [-w WARMUP] [-c]\n");
	exit(2);
}

struct osu {
	size_t minb, maxb;
	int iters, warm, check, factor, rank, n, tapn, tapfail;
	unsigned char *s, *r;
};

/* One collective over every size; TAP points continue o->tapn. */
static void run(struct osu *o, const char *type)
{
	int a2a = !strcmp(type, "alltoall"), bar = !strcmp(type, "barrier");
	size_t minb = bar ? 0 : o->minb, maxb = bar ? 0 : o->maxb;
	unsigned char *s = o->s, *r = o->r;
	int n = o->n, rank = o->rank;

	if (rank == 0)
		printf("# osu_coll %s, %d ranks, %d iterations%s\n# %-10s %12s %12s %12s\n", type, n, o->iters,
		       o->check ? ", validated" : "", "bytes", "avg(us)", "min(us)", "max(us)");
	for (size_t m = minb; m <= maxb; m = m ? m * o->factor : 1) {
		double t = 0, sum, mn, mx;
		long bad = 0, allbad = 0;

		for (int it = -o->warm; it < o->iters; it++) {
			double t0;

			if (o->check) {
				for (int d = 0; d < n; d++)
					for (size_t k = 0; k < m; k++)
						s[d * m + k] = pat(rank, a2a ? d : -1, it, k);
				memset(r, 0xee, m * n);
			}
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
			if (a2a)
				MPI_Alltoall(s, m, MPI_BYTE, r, m, MPI_BYTE, MPI_COMM_WORLD);
			else if (!bar)
				MPI_Allgather(s, m, MPI_BYTE, r, m, MPI_BYTE, MPI_COMM_WORLD);
			else
				MPI_Barrier(MPI_COMM_WORLD);
			if (it >= 0)
				t += MPI_Wtime() - t0;
			if (o->check)
				for (int src = 0; src < n; src++)
					for (size_t k = 0; k < m; k++)
						bad += r[src * m + k] != pat(src, a2a ? rank : -1, it, k);
		}
		t = t / o->iters * 1e6;
		PMPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		PMPI_Reduce(&t, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
		PMPI_Reduce(&t, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		PMPI_Reduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
		if (rank == 0) {
			printf("  %-10zu %12.2f %12.2f %12.2f\n", m, sum / n, mn, mx);
			if (o->check) {
				printf("%sok %d - %s %zu B x %d ranks: every byte checked%s\n", allbad ? "not " : "",
				       ++o->tapn, type, m, n, allbad ? " (wrong bytes)" : "");
				o->tapfail += allbad != 0;
			}
		}
		if (!m || m == maxb)
			break;
	}
}

int main(int argc, char **argv)
{
	struct osu o = { .minb = 1, .maxb = 65536, .iters = 20, .warm = 3, .factor = 2 };
	char types[128] = "alltoall", list[128], *type, *save;
	int opt;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &o.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &o.n);
	while ((opt = getopt(argc, argv, "t:m:f:i:w:c")) != -1) {
		switch (opt) {
		case 't':
			snprintf(types, sizeof(types), "%s", optarg);
			break;
		case 'm':
			if (sscanf(optarg, "%zu:%zu", &o.minb, &o.maxb) != 2)
				usage();
			break;
		case 'f':
			o.factor = atoi(optarg);
			if (o.factor < 2)
				usage();
			break;
		case 'i':
			o.iters = atoi(optarg);
			break;
		case 'w':
			o.warm = atoi(optarg);
			break;
		case 'c':
			o.check = 1;
			break;
		default:
			usage();
		}
	}
	snprintf(list, sizeof(list), "%s", types);
	for (type = strtok_r(list, ",", &save); type; type = strtok_r(NULL, ",", &save))
		if (strcmp(type, "alltoall") && strcmp(type, "allgather") && strcmp(type, "barrier"))
			usage();
	o.s = malloc(o.maxb * o.n + 1);
	o.r = malloc(o.maxb * o.n + 1);
	for (type = strtok_r(types, ",", &save); type; type = strtok_r(NULL, ",", &save))
		run(&o, type);
	if (o.rank == 0 && o.check)
		printf("1..%d\n", o.tapn);
	free(o.s);
	free(o.r);
	MPI_Finalize();
	return o.tapfail ? 1 : 0;
}
