/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The benchmarks' switch for a perf recording of their timed calls alone. */
#ifndef TESTS_VERBS_PERF_CTL_H
#define TESTS_VERBS_PERF_CTL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * BENCH_PERF_CTL names the control fifo of a `perf record -D -1 --control
 * fifo:CTL,ACK` (tests/verbs/profile): rank 0 enables the recording just
 * before the timed iterations and disables it after them, so the profile
 * holds those alone (not the start, the connections or the probe).
 */
static inline void perf_ctl(int me, const char *cmd)
{
	const char *ctl = getenv("BENCH_PERF_CTL"), *ack = getenv("BENCH_PERF_ACK");
	char buf[8];
	FILE *f;

	if (me || !ctl || !*ctl || !(f = fopen(ctl, "w")))
		return;
	fprintf(f, "%s\n", cmd);
	fclose(f);
	if (ack && *ack && (f = fopen(ack, "r"))) { /* perf's answer: the change is in effect */
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
}

/*
 * BENCH_MARKS=1: rank 0 writes a line on stderr just before and after the
 * timed iterations, so a trace the library writes there (TC_VERBS_TRACE)
 * can be cut to those calls (tests/cluster/profile).
 */
static inline void bench_mark(int me, const char *what, const char *coll, const char *algo, size_t m, int iters)
{
	const char *env = getenv("BENCH_MARKS");

	if (me || !env || strcmp(env, "1"))
		return;
	fprintf(stderr, "# bench %s: %s %s m=%zu iters %d\n", what, coll, algo, m, iters);
	fflush(stderr);
}

#endif
