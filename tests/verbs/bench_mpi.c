// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_mpi: Open MPI's MPI_Alltoall and MPI_Allgather timed exactly as
 * bench_verbs times libtoruscoll (same sizes, iterations, slowest rank,
 * nccl-tests' algbw and busbw), to run over the same rxe device with UCX:
 *
 *   mpirun -np 16 --mca pml ucx --mca pml_ucx_devices any --mca pml_ucx_tls any \
 *       -x UCX_NET_DEVICES=rxe0:1 -x UCX_TLS=rc_verbs,ud_verbs,self \
 *       -x UCX_UD_VERBS_ETH_DGID_CHECK=n bench_mpi [--sizes "64 1024 ..."] \
 *       [--colls alltoall,allgather] [--iters N]
 *
 * Built with mpicc when it is installed (a benchmark, not a test).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_ctl.h"


int main(int argc, char **argv)
{
	static char def_sizes[] = "64 1024 16384 65536 262144 1048576";
	char *sizes_s = def_sizes;
	int me, P, want_iters = 0, colls = 3;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &P);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--sizes"))
			sizes_s = argv[i + 1];
		else if (!strcmp(argv[i], "--iters"))
			want_iters = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--colls"))
			colls = (strstr(argv[i + 1], "alltoall") ? 1 : 0) | (strstr(argv[i + 1], "allgather") ? 2 : 0);
	}
	if (!me)
		printf("# %d ranks, Open MPI; t = slowest rank, S = m * P, busbw = algbw * (P-1)/P\n"
		       "# %-9s %-14s %10s %6s %12s %12s %12s\n",
		       P, "coll", "algo", "m (B)", "iters", "time (us)", "algbw MB/s", "busbw MB/s");
	for (int c = 0; c < 2; c++) {
		char list[256], *tok;

		if (!(colls & (1 << c)))
			continue;
		snprintf(list, sizeof(list), "%s", sizes_s);
		for (tok = strtok(list, " ,"); tok; tok = strtok(NULL, " ,")) {
			size_t m = strtoul(tok, NULL, 10), S = m * P;
			char *sb = malloc(c ? m : S), *rb = malloc(S);
			int iters = want_iters > 0 ? want_iters : S * P <= (1u << 20) ? 10 : S * P <= (16u << 20) ? 3 : 1;
			double t0, t, tmax;

			if (!sb || !rb)
				MPI_Abort(MPI_COMM_WORLD, 1);
			memset(sb, me, c ? m : S);
			if (c)
				MPI_Allgather(sb, (int)m, MPI_BYTE, rb, (int)m, MPI_BYTE, MPI_COMM_WORLD);
			else
				MPI_Alltoall(sb, (int)m, MPI_BYTE, rb, (int)m, MPI_BYTE, MPI_COMM_WORLD);
			MPI_Barrier(MPI_COMM_WORLD);
			perf_ctl(me, "enable");
			t0 = MPI_Wtime();
			for (int i = 0; i < iters; i++) {
				if (c)
					MPI_Allgather(sb, (int)m, MPI_BYTE, rb, (int)m, MPI_BYTE, MPI_COMM_WORLD);
				else
					MPI_Alltoall(sb, (int)m, MPI_BYTE, rb, (int)m, MPI_BYTE, MPI_COMM_WORLD);
			}
			t = (MPI_Wtime() - t0) / iters * 1e6;
			perf_ctl(me, "disable");
			MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
			for (size_t k = 0; k < S; k++) /* what each sender put in */
				if (rb[k] != (char)(k / m)) {
					fprintf(stderr, "rank %d: %s m=%zu: byte %zu wrong\n", me, c ? "allgather" : "alltoall",
						m, k);
					MPI_Abort(MPI_COMM_WORLD, 1);
				}
			if (!me) {
				printf("  %-9s %-14s %10zu %6d %12.0f %12.2f %12.2f\n", c ? "allgather" : "alltoall", "ompi",
				       m, iters, tmax, S / tmax, S / tmax * (P - 1) / P);
				fflush(stdout);
			}
			free(sb);
			free(rb);
		}
	}
	MPI_Finalize();
	return 0;
}
