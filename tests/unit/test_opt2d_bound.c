// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * opt2d at the lower bound on every 2-D torus. For each
 * r x c torus the schedule is built, verified by the verifier (streamed:
 * tc_sched_check_streamed) and priced by the cost model, and this program
 * checks:
 *   - the verifier accepts it, with the claims opt2d makes: contention-free
 *     steps, shortest paths, one-hop messages (2x2 excepted: there the
 *     diagonal needs a two-hop message, see opt2d.c);
 *   - the critical-path transmission is ceil(max(c*floor(r^2/4),
 *     r*floor(c^2/4)) / 2) blocks, computed here from the shape, and equals
 *     the cost model's lower bound (Liu et al., All-Port Tori, Lemma 1,
 *     generalised to any parity);
 *   - it takes floor(r/2) + floor(c/2) steps (1 on 2x2).
 * Default: every r, c in 2..16 and a spread of larger shapes up to 32x32.
 * With --all or TC_OPT2D_SWEEP=all in the environment (make
 * check-opt2d-sweep): every r, c in 2..32, 961 tori.
 * Ends with the slowest build and the total, in CPU seconds.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "algorithms/algos.h"
#include "core/check.h"
#include "tap.h"

/* CPU seconds of this process (the machine may be shared: wall time is not the build's). */
static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* ceil(max(c*floor(r^2/4), r*floor(c^2/4)) / 2) */
static long bound(long r, long c)
{
	long x = c * (r * r / 4), y = r * (c * c / 4);

	return ((x > y ? x : y) + 1) / 2;
}

static double slowest;
static char slowest_shape[16];

static void run(const struct tc_algo *al, int r, int c)
{
	const unsigned int claims = TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST | (r == 2 && c == 2 ? 0 : TC_CLAIM_ONE_HOP);
	const long steps = r == 2 && c == 2 ? 1 : r / 2 + c / 2;
	struct tc_verify_report rep;
	struct tc_sched *s = NULL;
	struct tc_shape sh;
	struct tc_cost cost;
	const char *why = NULL;
	int dims[2] = { r, c }, err;
	unsigned int got = 0;
	double t0;

	if (tc_shape_init(&sh, 2, dims, 3, 0)) {
		tap_ok(0, "opt2d %dx%d: shape", r, c);
		return;
	}
	t0 = now();
	err = al->build(&sh, &s, &why);
	if (now() - t0 > slowest) {
		slowest = now() - t0;
		snprintf(slowest_shape, sizeof(slowest_shape), "%dx%d", r, c);
	}
	if (!err)
		got = s->claims;
	tc_sched_free(s);
	memset(&rep, 0, sizeof(rep));
	memset(&cost, 0, sizeof(cost));
	if (!err)
		err = tc_sched_check_streamed(al, &sh, NULL, NULL, 0, NULL, &rep, &cost, NULL, NULL, &why);
	tap_ok(!err && rep.ok && (got & claims) == claims && cost.transmission_blocks == bound(r, c) &&
		       cost.lower_bound_blocks == bound(r, c) && cost.steps == steps,
	       "opt2d %dx%d: %s%s, claims 0x%x, transmission %.1f = bound %ld (cost model %.1f), %u steps = %ld", r, c,
	       err ? "error: " : rep.ok ? "verified" : rep.first_violation, err && why ? why : "", got,
	       cost.transmission_blocks, bound(r, c), cost.lower_bound_blocks, cost.steps, steps);
	tc_verify_report_free(&rep);
}

int main(int argc, char **argv)
{
	static const int big[][2] = { { 17, 17 }, { 2, 32 }, { 32, 2 }, { 3, 32 }, { 31, 4 }, { 18, 19 }, { 20, 21 },
				       { 22, 22 }, { 25, 24 }, { 30, 7 }, { 32, 31 }, { 32, 32 } };
	const struct tc_algo *al = tc_algo_find(TC_ALLTOALL, "opt2d");
	const char *env = getenv("TC_OPT2D_SWEEP");
	const int all = (argc > 1 && !strcmp(argv[1], "--all")) || (env && !strcmp(env, "all"));
	double t0 = now();

	if (!tap_ok(al != NULL, "opt2d is registered"))
		return tap_done();
	for (int r = 2; r <= (all ? 32 : 16); r++)
		for (int c = 2; c <= (all ? 32 : 16); c++)
			run(al, r, c);
	for (int i = 0; !all && i < (int)(sizeof(big) / sizeof(big[0])); i++)
		run(al, big[i][0], big[i][1]);
	tap_diag("slowest build %s %.3f CPU s; total (build, verify, price) %.1f CPU s", slowest_shape, slowest,
		 now() - t0);
	return tap_done();
}
