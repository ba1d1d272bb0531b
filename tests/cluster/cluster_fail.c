// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cluster_fail: what a rank sees when a host of its job goes away. Every
 * rank (started by srun --mpi=pmix over the verbs transport) creates its
 * communicator, runs one checked alltoall, writes DIR/ready.RANK, then runs
 * alltoalls until one fails (or LIMIT seconds pass). A rank whose call fails
 * writes DIR/fail.RANK: how long the failing call took (ms), TC_TIMEOUT_MS,
 * and tc_last_error(); a rank that never failed writes DIR/nofail.RANK.
 *
 *   cluster_fail DIR [LIMIT_S]
 *
 * The cluster suite powers one guest off once every rank is ready and checks
 * that every rank on the other guests failed within 2 x TC_TIMEOUT_MS, naming
 * a peer on the lost host.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <toruscoll.h>

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Write text to DIR/WHAT.RANK (the shared folder the suite reads). */
static void note(const char *dir, const char *what, int rank, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.%d", dir, what, rank);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	const size_t m = 4096;
	const char *dir = argc > 1 ? argv[1] : NULL, *to = getenv("TC_TIMEOUT_MS");
	double limit = argc > 2 ? atof(argv[2]) * 1e3 : 120e3, t0, t;
	unsigned char *sb, *rb;
	char line[512];
	tc_comm_t *comm;
	int me, P, ret, bad = 0;

	if (!dir) {
		fprintf(stderr, "usage: cluster_fail DIR [LIMIT_S]\n");
		return 2;
	}
	ret = tc_comm_create(NULL, &comm);
	if (ret) {
		fprintf(stderr, "cluster_fail: tc_comm_create: %s\n", tc_last_error());
		return 1;
	}
	me = tc_comm_rank(comm);
	P = tc_comm_size(comm);
	sb = malloc(P * m);
	rb = malloc(P * m);
	if (!sb || !rb)
		return 1;
	for (int d = 0; d < P; d++)
		memset(sb + d * m, me * 16 + d + 1, m);
	ret = tc_alltoall(comm, sb, rb, m);
	for (int o = 0; !ret && o < P; o++)
		for (size_t k = 0; k < m; k++)
			bad += rb[o * m + k] != (unsigned char)(o * 16 + me + 1);
	if (ret || bad) {
		fprintf(stderr, "cluster_fail: rank %d: first alltoall: %s, %d wrong bytes\n", me,
			ret ? tc_last_error() : "ok", bad);
		return 1;
	}
	note(dir, "ready", me, "ready\n");
	t0 = now_ms();
	do {
		t = now_ms();
		ret = tc_alltoall(comm, sb, rb, m);
	} while (!ret && now_ms() - t0 < limit);
	if (!ret) {
		snprintf(line, sizeof(line), "no failure in %.0f ms\n", now_ms() - t0);
		note(dir, "nofail", me, line);
		tc_comm_destroy(comm);
		return 0;
	}
	/* fail.RANK: "MS TIMEOUT_MS REASON": how long the failing call took */
	snprintf(line, sizeof(line), "%.0f %s %s\n", now_ms() - t, to ? to : "10000", tc_last_error());
	note(dir, "fail", me, line);
	fprintf(stderr, "cluster_fail: rank %d: %s\n", me, tc_last_error());
	tc_comm_destroy(comm);
	return 1;
}
