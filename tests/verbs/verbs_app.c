// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * verbs_app: an application that knows nothing of the library's insides. It
 * includes only <toruscoll.h>, takes its communicator from the environment
 * (tc_comm_create(NULL, ...)) and is started by a PMIx launcher:
 *
 *   mpirun -np 8 -x TC_TRANSPORT=verbs -x TC_DIMS=2x4 -x TC_RDMA_DEVICE=rxe0 verbs_app
 *
 * It runs alltoall and allgather (auto and several algorithms, block sizes
 * 1 B .. 64 KiB), allreduce and barrier, checks every received byte against
 * what each sender must have sent, and prints one line per rank. Exit 0 only
 * if every check on this rank passed.
 * VERBS_APP_SIZES="1 64 4096" overrides the block sizes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <toruscoll.h>

static unsigned char pat(int from, int to, size_t k, int salt)
{
	return (unsigned char)(from * 131 + to * 37 + k * 7 + salt * 11 + 1);
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(void)
{
	static const char *const a2a[] = { "auto", "direct", "pairwise", "bruck", "atape", "opt2d" };
	static const char *const ag[] = { "auto", "ring", "bruck", "saad-schultz", "bcast-pattern" };
	size_t sizes[16] = { 1, 64, 1024, 65536 };
	int nsizes = 4, me, P, bad = 0, checks = 0, skipped = 0, ret;
	const char *env = getenv("VERBS_APP_SIZES");
	unsigned char *sb, *rb;
	struct tc_coll_info info;
	const char *tname;
	tc_comm_t *comm;
	double t0 = now_ms();

	if (env && *env) {
		char *end, *p = (char *)env;

		for (nsizes = 0; nsizes < 16; nsizes++) {
			sizes[nsizes] = strtoul(p, &end, 10);
			if (end == p)
				break;
			p = end;
		}
	}
	ret = tc_comm_create(NULL, &comm);
	if (ret) {
		fprintf(stderr, "verbs_app: tc_comm_create: %s\n", tc_last_error());
		return 1;
	}
	me = tc_comm_rank(comm);
	P = tc_comm_size(comm);
	sb = malloc((size_t)P * 65536);
	rb = malloc((size_t)P * 65536);
	if (!sb || !rb)
		return 1;
	for (int s = 0; s < nsizes; s++) {
		size_t m = sizes[s];

		if (m > 65536)
			continue;
		for (size_t a = 0; a < sizeof(a2a) / sizeof(a2a[0]); a++) {
			ret = tc_comm_set_algo(comm, TC_ALLTOALL, a2a[a]);
			for (int d = 0; d < P; d++)
				for (size_t k = 0; k < m; k++)
					sb[d * m + k] = pat(me, d, k, (int)a);
			memset(rb, 0xee, P * m);
			if (!ret)
				ret = tc_alltoall(comm, sb, rb, m);
			if (ret) {
				fprintf(stderr, "rank %d: alltoall %s m=%zu: %s\n", me, a2a[a], m, tc_last_error());
				bad++;
				goto out;
			}
			info.size = sizeof(info);
			if (strcmp(a2a[a], "auto") && !tc_coll_last(comm, TC_ALLTOALL, &info) && strcmp(info.algo, a2a[a]))
				skipped++; /* the algorithm does not build on this shape: auto ran instead */
			for (int o = 0; o < P; o++)
				for (size_t k = 0; k < m; k++)
					if (rb[o * m + k] != pat(o, me, k, (int)a)) {
						if (!bad++)
							fprintf(stderr, "rank %d: alltoall %s m=%zu: byte %zu from %d wrong\n", me,
								a2a[a], m, k, o);
					}
			checks++;
		}
		for (size_t a = 0; a < sizeof(ag) / sizeof(ag[0]); a++) {
			ret = tc_comm_set_algo(comm, TC_ALLGATHER, ag[a]);
			for (size_t k = 0; k < m; k++)
				sb[k] = pat(me, 0, k, 100 + (int)a);
			memset(rb, 0xee, P * m);
			if (!ret)
				ret = tc_allgather(comm, sb, rb, m);
			if (ret) {
				fprintf(stderr, "rank %d: allgather %s m=%zu: %s\n", me, ag[a], m, tc_last_error());
				bad++;
				goto out;
			}
			info.size = sizeof(info);
			if (strcmp(ag[a], "auto") && !tc_coll_last(comm, TC_ALLGATHER, &info) && strcmp(info.algo, ag[a]))
				skipped++;
			for (int o = 0; o < P; o++)
				for (size_t k = 0; k < m; k++)
					if (rb[o * m + k] != pat(o, 0, k, 100 + (int)a)) {
						if (!bad++)
							fprintf(stderr, "rank %d: allgather %s m=%zu: byte %zu from %d wrong\n",
								me, ag[a], m, k, o);
					}
			checks++;
		}
	}
	{
		int64_t v[64], want;

		for (int e = 0; e < 64; e++)
			v[e] = (int64_t)me * 1000 + e;
		ret = tc_allreduce(comm, v, v, 64, TC_INT64, TC_SUM);
		if (ret) {
			fprintf(stderr, "rank %d: allreduce: %s\n", me, tc_last_error());
			bad++;
			goto out;
		}
		for (int e = 0; e < 64; e++) {
			want = (int64_t)P * (P - 1) / 2 * 1000 + (int64_t)P * e;
			if (v[e] != want && !bad++)
				fprintf(stderr, "rank %d: allreduce element %d: %lld, want %lld\n", me, e, (long long)v[e],
					(long long)want);
		}
		checks++;
	}
	ret = tc_barrier(comm);
	if (ret) {
		fprintf(stderr, "rank %d: barrier: %s\n", me, tc_last_error());
		bad++;
		goto out;
	}
	checks++;
out:
	tname = tc_comm_transport_name(comm); /* a static string */
	printf("verbs_app rank %d/%d transport %s: %d collectives checked, %d wrong, %d forced algorithms fell back "
	       "to auto (shape), %.0f ms\n",
	       me, P, tname, checks, bad, skipped, now_ms() - t0);
	fflush(stdout);
	tc_comm_destroy(comm);
	free(sb);
	free(rb);
	return bad || strcmp(tname, "verbs") ? 1 : 0;
}
