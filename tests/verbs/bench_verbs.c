// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_verbs: tc_alltoall and tc_allgather over the verbs transport, one
 * process per rank under mpirun (a benchmark, not a test: tests/verbs/bench
 * runs it in a guest next to Open MPI and ib_write_bw).
 *
 *   mpirun -np 16 -x TC_TRANSPORT=verbs -x TC_DIMS=4x4 -x TC_RDMA_DEVICE=rxe0 \
 *       bench_verbs [--sizes "64 1024 ..."] [--algos "auto at2 ..."] [--max-algo-bytes N]
 *
 * Per collective, algorithm and block size m (bytes per peer): one warm-up
 * call, then iterations timed between barriers; the time of a call is the
 * slowest rank's (max over ranks). Rank 0 prints one line each with algbw
 * and busbw as nccl-tests defines them: S = m * P bytes (the whole receive
 * buffer of a rank), algbw = S / t, busbw = algbw * (P - 1) / P for both
 * alltoall and allgather. An algorithm that does not build on the shape is
 * left out; algorithms other than auto run only up to --max-algo-bytes per
 * block (default 16384), auto up to the largest size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <toruscoll.h>

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int parse_list(char *s, char **out, int max)
{
	int n = 0;

	for (char *tok = strtok(s, " ,"); tok && n < max; tok = strtok(NULL, " ,"))
		out[n++] = tok;
	return n;
}

int main(int argc, char **argv)
{
	static char def_sizes[] = "64 1024 16384 65536 262144 1048576";
	static char def_algos[] = "auto direct pairwise bruck atape opt2d at2 pad ring saad-schultz bcast-pattern "
				  "gossip-ham1 gossip-ham2";
	char *sizes_s = def_sizes, *algos_s = def_algos, *sz[32], *al[32];
	size_t max_algo = 16384;
	int nsz, nal, me, P, ret;
	tc_comm_t *comm;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--sizes"))
			sizes_s = argv[i + 1];
		else if (!strcmp(argv[i], "--algos"))
			algos_s = argv[i + 1];
		else if (!strcmp(argv[i], "--max-algo-bytes"))
			max_algo = strtoul(argv[i + 1], NULL, 10);
	}
	nsz = parse_list(sizes_s, sz, 32);
	nal = parse_list(algos_s, al, 32);
	ret = tc_comm_create(NULL, &comm);
	if (ret) {
		fprintf(stderr, "bench_verbs: tc_comm_create: %s\n", tc_last_error());
		return 1;
	}
	me = tc_comm_rank(comm);
	P = tc_comm_size(comm);
	if (!me)
		printf("# %d ranks, transport %s; t = slowest rank, S = m * P, busbw = algbw * (P-1)/P\n"
		       "# %-9s %-14s %10s %6s %12s %12s %12s\n",
		       P, tc_comm_transport_name(comm), "coll", "algo", "m (B)", "iters", "time (us)", "algbw MB/s",
		       "busbw MB/s");
	for (int c = 0; c < 2; c++) {
		enum tc_coll_id id = c ? TC_ALLGATHER : TC_ALLTOALL;

		for (int a = 0; a < nal; a++) {
			struct tc_coll_info info = { .size = sizeof(info) };

			if (tc_comm_set_algo(comm, id, al[a]))
				continue; /* not an algorithm of this collective */
			for (int s = 0; s < nsz; s++) {
				size_t m = strtoul(sz[s], NULL, 10), S = m * P;
				char *sb, *rb;
				double t0, t, tmax;
				int iters;

				if (!m || (strcmp(al[a], "auto") && m > max_algo))
					continue;
				iters = S * P <= (1u << 20) ? 10 : S * P <= (16u << 20) ? 3 : 1;
				sb = malloc(id == TC_ALLTOALL ? S : m);
				rb = malloc(S);
				if (!sb || !rb)
					return 1;
				memset(sb, me, id == TC_ALLTOALL ? S : m);
				ret = id == TC_ALLTOALL ? tc_alltoall(comm, sb, rb, m) : tc_allgather(comm, sb, rb, m);
				if (!ret && !tc_coll_last(comm, id, &info) && strcmp(al[a], "auto") && strcmp(info.algo, al[a])) {
					free(sb);
					free(rb);
					break; /* not for this shape */
				}
				ret = ret ? ret : tc_barrier(comm);
				t0 = now_us();
				for (int i = 0; i < iters && !ret; i++)
					ret = id == TC_ALLTOALL ? tc_alltoall(comm, sb, rb, m) : tc_allgather(comm, sb, rb, m);
				t = (now_us() - t0) / iters;
				if (!ret)
					ret = tc_allreduce(comm, &t, &tmax, 1, TC_DOUBLE, TC_MAX);
				free(sb);
				free(rb);
				if (ret) {
					fprintf(stderr, "rank %d: %s %s m=%zu: %s\n", me, c ? "allgather" : "alltoall", al[a], m,
						tc_last_error());
					tc_comm_destroy(comm);
					return 1;
				}
				if (!me) {
					char name[48];

					snprintf(name, sizeof(name), "%s%s%s", al[a], strcmp(al[a], "auto") ? "" : "=",
						 strcmp(al[a], "auto") ? "" : info.algo);
					printf("  %-9s %-14s %10zu %6d %12.0f %12.2f %12.2f\n", c ? "allgather" : "alltoall",
					       name, m, iters, tmax, S / tmax, S / tmax * (P - 1) / P);
					fflush(stdout);
				}
			}
		}
	}
	tc_comm_destroy(comm);
	return 0;
}
