// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_verbs: tc_alltoall and tc_allgather over the verbs transport, one
 * process per rank under mpirun (a benchmark, not a test: tests/verbs/bench
 * runs it in a guest next to Open MPI and ib_write_bw).
 *
 *   mpirun -np 16 -x TC_TRANSPORT=verbs -x TC_DIMS=4x4 -x TC_RDMA_DEVICE=rxe0 \
 *       bench_verbs [--sizes "64 1024 ..."] [--algos "auto at2 ..."] [--max-algo-bytes N]
 *                   [--colls alltoall,allgather] [--iters N]
 *
 * Per collective, algorithm and block size m (bytes per peer): one warm-up
 * call whose every received byte is checked against the reference (a
 * wrong byte ends the run with exit status 1), then iterations (--iters, or
 * 10, 3 or 1 by size) timed between barriers; the time of a call is the
 * slowest rank's (max over ranks). Rank 0 prints one line each with algbw
 * and busbw as nccl-tests defines them: S = m * P bytes (the whole receive
 * buffer of a rank), algbw = S / t, busbw = algbw * (P - 1) / P for both
 * alltoall and allgather. An algorithm that does not build on the shape is
 * left out; algorithms other than auto run only up to --max-algo-bytes per
 * block (default 16384), auto up to the largest size. BENCH_ITERS=N is
 * --iters N.
 *
 * BENCH_RXE=DEV (tests/cluster/profile): the first rank on each host prints
 * what DEV's port 1 counted (packets sent and received, retransmissions)
 * during each phase of the job: tc_comm_create (connections and the cost
 * probe), each point's checked call, its timed calls, each phase closed by
 * a barrier, the counters read, and a second barrier (so the barriers'
 * few packets are in the phases too).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf_ctl.h"
#include <time.h>

#include <toruscoll.h>

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Byte k of the block that rank src sends to rank dst (dst = 0 in an allgather). */
static unsigned char ref(int src, int dst, size_t k)
{
	return (unsigned char)(src * 31 + dst * 7 + k * 13 + (k >> 8));
}

static void fill(char *sb, int me, int nblk, size_t m, int a2a)
{
	for (int j = 0; j < nblk; j++)
		for (size_t k = 0; k < m; k++)
			sb[j * m + k] = ref(me, a2a ? j : 0, k);
}

/* Every received byte against the reference; 0 if all match. */
static int check(const char *rb, int me, int P, size_t m, int a2a)
{
	for (int i = 0; i < P; i++)
		for (size_t k = 0; k < m; k++)
			if ((unsigned char)rb[i * m + k] != ref(i, a2a ? me : 0, k))
				return -1;
	return 0;
}

/* BENCH_RXE: the counters one host's ranks share, read by its first rank. */
static const char *const rxe_name[] = { "sent_pkts", "rcvd_pkts", "completer_retry_err", "rcvd_seq_err",
					 "duplicate_request", "out_of_seq_request" };
#define RXE_N (sizeof(rxe_name) / sizeof(rxe_name[0]))
static const char *rxe_dev;
static int rxe_reader = 1; /* this rank reads (the first on its host); before create: every rank */
static char rxe_host[64];
static long long rxe_last[RXE_N];

static void rxe_read(long long *v)
{
	for (size_t i = 0; i < RXE_N; i++) {
		char path[160];
		FILE *f;

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s", rxe_dev, rxe_name[i]);
		v[i] = -1;
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%lld", &v[i]) != 1)
				v[i] = -1;
			fclose(f);
		}
	}
}

/* Close a phase: barrier, read and print what moved since the last one, barrier. */
static int rxe_phase(tc_comm_t *comm, const char *what)
{
	long long v[RXE_N];
	int ret;

	if (!rxe_dev)
		return 0;
	ret = tc_barrier(comm);
	if (ret)
		return ret;
	if (rxe_reader) {
		rxe_read(v);
		fprintf(stderr, "# rxe %s on %s: %s:", rxe_dev, rxe_host, what);
		for (size_t i = 0; i < RXE_N; i++)
			fprintf(stderr, " %s %lld", rxe_name[i], v[i] - rxe_last[i]);
		fprintf(stderr, "\n");
		memcpy(rxe_last, v, sizeof(v));
	}
	return tc_barrier(comm);
}

/* After create: the first rank of each host (by rank) is its reader. */
static int rxe_readers(tc_comm_t *comm, int me, int P)
{
	char *all;
	int ret;

	if (!rxe_dev)
		return 0;
	all = malloc((size_t)P * sizeof(rxe_host));
	if (!all)
		return -ENOMEM;
	ret = tc_allgather(comm, rxe_host, all, sizeof(rxe_host));
	for (int r = 0; r < me && !ret; r++)
		if (!strcmp(all + (size_t)r * sizeof(rxe_host), rxe_host))
			rxe_reader = 0;
	free(all);
	return ret;
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
	int nsz, nal, me, P, ret, want_iters = 0, colls = 3;
	tc_comm_t *comm;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--sizes"))
			sizes_s = argv[i + 1];
		else if (!strcmp(argv[i], "--algos"))
			algos_s = argv[i + 1];
		else if (!strcmp(argv[i], "--max-algo-bytes"))
			max_algo = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--iters"))
			want_iters = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--colls"))
			colls = (strstr(argv[i + 1], "alltoall") ? 1 : 0) | (strstr(argv[i + 1], "allgather") ? 2 : 0);
	}
	if (!want_iters && getenv("BENCH_ITERS"))
		want_iters = atoi(getenv("BENCH_ITERS"));
	rxe_dev = getenv("BENCH_RXE");
	if (rxe_dev && !*rxe_dev)
		rxe_dev = NULL;
	if (rxe_dev) {
		gethostname(rxe_host, sizeof(rxe_host) - 1);
		rxe_read(rxe_last); /* nothing of this job on the wire yet: no rank is past create */
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
	ret = rxe_readers(comm, me, P);
	if (!ret)
		ret = rxe_phase(comm, "tc_comm_create (connections, the cost probe)");
	if (ret) {
		fprintf(stderr, "bench_verbs: BENCH_RXE: %s\n", tc_strerror(ret));
		return 1;
	}
	if (!me)
		printf("# %d ranks, transport %s; t = slowest rank, S = m * P, busbw = algbw * (P-1)/P\n"
		       "# %-9s %-14s %10s %6s %12s %12s %12s\n",
		       P, tc_comm_transport_name(comm), "coll", "algo", "m (B)", "iters", "time (us)", "algbw MB/s",
		       "busbw MB/s");
	for (int c = 0; c < 2; c++) {
		enum tc_coll_id id = c ? TC_ALLGATHER : TC_ALLTOALL;

		if (!(colls & (1 << c)))
			continue;
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
				iters = want_iters > 0 ? want_iters : S * P <= (1u << 20) ? 10 : S * P <= (16u << 20) ? 3 : 1;
				sb = malloc(id == TC_ALLTOALL ? S : m);
				rb = malloc(S);
				if (!sb || !rb)
					return 1;
				fill(sb, me, id == TC_ALLTOALL ? P : 1, m, id == TC_ALLTOALL);
				memset(rb, 0xee, S);
				ret = id == TC_ALLTOALL ? tc_alltoall(comm, sb, rb, m) : tc_allgather(comm, sb, rb, m);
				if (!ret && check(rb, me, P, m, id == TC_ALLTOALL)) {
					fprintf(stderr, "rank %d: %s m=%zu: wrong bytes received\n", me, al[a], m);
					return 1;
				}
				if (!ret && !tc_coll_last(comm, id, &info) && strcmp(al[a], "auto") && strcmp(info.algo, al[a])) {
					free(sb);
					free(rb);
					break; /* not for this shape */
				}
				if (!ret && rxe_dev) {
					char what[96];

					snprintf(what, sizeof(what), "%s %s %zu B: the checked call", c ? "allgather" : "alltoall",
						 al[a], m);
					ret = rxe_phase(comm, what);
				}
				ret = ret ? ret : tc_barrier(comm);
				perf_ctl(me, "enable");
				bench_mark(me, "begin", c ? "allgather" : "alltoall", al[a], m, iters);
				t0 = now_us();
				for (int i = 0; i < iters && !ret; i++)
					ret = id == TC_ALLTOALL ? tc_alltoall(comm, sb, rb, m) : tc_allgather(comm, sb, rb, m);
				t = (now_us() - t0) / iters;
				bench_mark(me, "end", c ? "allgather" : "alltoall", al[a], m, iters);
				perf_ctl(me, "disable");
				if (!ret && rxe_dev) {
					char what[96];

					snprintf(what, sizeof(what), "%s %s %zu B: %d timed calls", c ? "allgather" : "alltoall",
						 al[a], m, iters);
					ret = rxe_phase(comm, what);
				}
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
	if (rxe_dev && rxe_reader) { /* no barrier left: read 2 s after this rank's destroy */
		long long v[RXE_N];

		sleep(2);
		rxe_read(v);
		fprintf(stderr, "# rxe %s on %s: the last allreduce and tc_comm_destroy (2 s after this rank's):", rxe_dev,
			rxe_host);
		for (size_t i = 0; i < RXE_N; i++)
			fprintf(stderr, " %s %lld", rxe_name[i], v[i] - rxe_last[i]);
		fprintf(stderr, "\n");
	}
	return 0;
}
