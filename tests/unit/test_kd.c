// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * allport-kd on 3-D and 4-D tori of every parity. For
 * each shape of the sweep the schedule is built, verified and priced in one
 * streamed pass (tc_sched_check_streamed), and:
 *   - the verifier accepts it (contention-free, shortest paths);
 *   - the bound the cost model reports is the k-D bound computed here: for
 *     dimension i of side n_i, (P/n_i)*floor(n_i^2/4)/2 blocks per link, the
 *     largest over i, rounded up (Liu et al., All-Port Tori, Lemma 1,
 *     generalised to any parity);
 *   - the critical-path transmission is within 1.10x of it on 3-D tori and
 *     1.25x on 4-D tori, and equal to it on 3-D tori with even sides of 4 or
 *     more (checked on 4x4x4 .. 12x12x12).
 * Sides of 2 are included: a ring of two runs AR's single step, its antipode
 * split over the two links; 2x2x2 alone misses the ratio (3 blocks for a
 * bound of 2: three phases of one step each carry at least one block) and
 * is checked against that count instead.
 * The default sweep takes seconds; TC_KD_SWEEP=1 adds every 3-D shape with
 * sides 2..16 and every 4-D shape with sides 2..8 up to 4096 nodes (minutes).
 * Ends with the table: shape, transmission, bound, ratio, build+verify CPU
 * seconds (CPU time: the machine is shared), and whether the orders came
 * from the search (1) or the construction (0).
 *
 * Large shapes, where a rank cannot afford the search: the construction's
 * orders (kd_construct, no search) meet the bound on 16x16x16, 8x8x8,
 * 32x32x32, 64x64x64, 8x8x8x8 and Fugaku's 24x23x24x2x3x2, priced from their
 * bundles alone (__tc_kd_cost); on Sequoia's 16x12x16x16x2 they are within
 * 0.02% of it. 16x16x16's whole schedule is verified and priced from its cell
 * (tc_sched_check_translated) at the bound, and the search does not run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/check.h"
#include "core/part_sym.h"
#include "select/select.h"
#include "tap.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The k-D bound: max over dimensions of (P/n)*floor(n^2/4)/2, rounded up, in halves to stay exact. */
static long kd_bound(const struct tc_shape *sh)
{
	long half = 0; /* twice the bound */

	for (int d = 0; d < sh->ndims; d++) {
		long n = sh->dims[d], v = (long)sh->nodes / n * (n * n / 4);

		if (v > half)
			half = v;
	}
	return (half + 1) / 2;
}

static int even_at_least_4(const struct tc_shape *sh)
{
	for (int d = 0; d < sh->ndims; d++)
		if (sh->dims[d] % 2 || sh->dims[d] < 4)
			return 0;
	return 1;
}

static double worst[2], slowest;
static char worst_shape[2][32], slowest_shape[32];

static void run_shape(const char *dims)
{
	const struct tc_algo *al = tc_algo_find(TC_ALLTOALL, "allport-kd");
	struct tc_verify_report rep;
	struct tc_shape sh;
	struct tc_cost cost;
	const char *why = NULL;
	double t0, dt, limit;
	unsigned long n0;
	long bound;
	int err, searched;

	if (!tap_ok(al && !tc_shape_parse(&sh, dims, 0, 0), "%s: shape parses, allport-kd registered", dims))
		return;
	memset(&rep, 0, sizeof(rep));
	memset(&cost, 0, sizeof(cost));
	t0 = now();
	n0 = __tc_kd_searches();
	err = tc_sched_check_streamed(al, &sh, NULL, NULL, 0, NULL, &rep, &cost, NULL, NULL, &why);
	searched = __tc_kd_searches() != n0;
	dt = now() - t0;
	if (!tap_ok(!err && rep.ok, "%s: builds and verifies (%d: %s)", dims, err,
		    rep.first_violation[0] ? rep.first_violation : why ? why : "ok")) {
		tc_verify_report_free(&rep);
		return;
	}
	tc_verify_report_free(&rep);
	bound = kd_bound(&sh);
	tap_ok(cost.lower_bound_blocks == (double)bound, "%s: the cost model's bound %.0f = the k-D bound %ld", dims,
	       cost.lower_bound_blocks, bound);
	limit = sh.ndims == 3 ? 1.10 : 1.25;
	if (sh.ndims == 3 && even_at_least_4(&sh))
		tap_ok(cost.transmission_blocks == (double)bound, "%s: transmission %.0f = bound %ld", dims,
		       cost.transmission_blocks, bound);
	else if (sh.nodes == 8)
		tap_ok(cost.transmission_blocks == 3, "%s: transmission %.0f = 3 (one block a phase)", dims,
		       cost.transmission_blocks);
	else
		tap_ok(cost.transmission_blocks <= limit * bound, "%s: transmission %.0f <= %.2f x bound %ld (%.4f)",
		       dims, cost.transmission_blocks, limit, bound, cost.transmission_blocks / bound);
	tap_diag("%-12s %10.0f %10ld %8.4f %8.2f %6d", dims, cost.transmission_blocks, bound,
		 cost.transmission_blocks / bound, dt, searched);
	if (sh.nodes > 8 && cost.transmission_blocks / bound > worst[sh.ndims - 3]) {
		worst[sh.ndims - 3] = cost.transmission_blocks / bound;
		snprintf(worst_shape[sh.ndims - 3], sizeof(worst_shape[0]), "%s", dims);
	}
	if (dt > slowest) {
		slowest = dt;
		snprintf(slowest_shape, sizeof(slowest_shape), "%s", dims);
	}
}

/*
 * The construction on a large shape, from its bundles (no schedule built, no
 * search): at the bound, or within `within` of it.
 */
static void construct_shape(const char *dims, double within)
{
	struct tc_shape sh;
	int64_t cost = 0, built = 0;
	long bound;
	double t0;
	int err;

	if (!tap_ok(!tc_shape_parse(&sh, dims, 0, 0), "%s: shape parses", dims))
		return;
	bound = kd_bound(&sh);
	t0 = now();
	err = __tc_kd_cost(&sh, 0, &cost, &built);
	if (within == 1.0)
		tap_ok(!err && cost == bound && built == bound, "%s: the construction meets the bound: %lld for %ld (%d)",
		       dims, (long long)cost, bound, err);
	else
		tap_ok(!err && cost == built && cost <= within * bound,
		       "%s: the construction is within %.4fx of the bound: %lld for %ld (%d)", dims, within,
		       (long long)cost, bound, err);
	tap_diag("%-16s construction %lld, bound %ld, %.3f s", dims, (long long)cost, bound, now() - t0);
}

/* 16x16x16 whole, verified and priced from its cell: at the bound, without the search. */
static void check_16x16x16(void)
{
	const struct tc_algo *al = tc_algo_find(TC_ALLTOALL, "allport-kd");
	struct tc_verify_report rep;
	struct tc_sym_totals tot;
	struct tc_shape sh;
	struct tc_cost cost;
	const char *why = NULL;
	unsigned long n0 = __tc_kd_searches();
	double t0 = now();
	int err;

	memset(&rep, 0, sizeof(rep));
	memset(&cost, 0, sizeof(cost));
	if (tc_shape_parse(&sh, "16x16x16", 0, 0) || !al)
		return;
	err = tc_sched_check_translated(al, &sh, NULL, NULL, 0, NULL, &rep, &cost, &tot, &why);
	tap_ok(!err && rep.ok && cost.transmission_blocks == kd_bound(&sh) && __tc_kd_searches() == n0,
	       "16x16x16: verified from a cell of %d sources, transmission %.0f = bound %ld, no search (%d: %s; searches %lu)",
	       tot.cell_nodes, cost.transmission_blocks, kd_bound(&sh), err,
	       rep.first_violation[0] ? rep.first_violation : why ? why : "ok", __tc_kd_searches() - n0);
	tap_diag("16x16x16 built, verified and priced from its cell in %.2f s", now() - t0);
	tc_verify_report_free(&rep);
}

/* Every shape of k sides in lo..hi (non-decreasing, and each rotation's order is the same
 * algorithm) with at most maxp nodes. */
static void sweep(int k, int lo, int hi, int maxp)
{
	int s[4];

	for (int i = 0; i < k; i++)
		s[i] = lo;
	for (;;) {
		long p = 1;
		char dims[32];
		int len = 0;

		for (int i = 0; i < k; i++) {
			p *= s[i];
			len += snprintf(dims + len, sizeof(dims) - len, "%s%d", i ? "x" : "", s[i]);
		}
		if (p <= maxp)
			run_shape(dims);
		int i = k - 1;

		while (i >= 0 && s[i] == hi)
			i--;
		if (i < 0)
			return;
		s[i]++;
		for (int j = i + 1; j < k; j++)
			s[j] = s[i];
	}
}

int main(void)
{
	/* mixed parity, sides of 2, both orders of unequal sides; even 3-D at the bound */
	static const char *const shapes[] = {
		"2x2x2",   "3x3x3",   "2x3x4",	 "4x3x2",   "3x4x5",	"5x4x3",   "5x5x5",   "4x5x6",	 "6x5x4",
		"5x6x6",   "6x6x7",   "7x7x7",	 "3x7x8",   "4x4x4",	"6x6x6",   "4x6x8",   "8x6x4",	 "4x8x12",
		"2x2x2x2", "3x3x3x3", "2x3x4x5", "3x4x5x6", "4x4x4x4", "5x5x5x5", "4x4x5x6", "6x5x4x3",
	};
	double t0 = now();

	tap_diag("%-12s %10s %10s %8s %8s %6s", "shape", "trans", "bound", "ratio", "build_s", "search");
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		run_shape(shapes[i]);
	construct_shape("16x16x16", 1.0);
	construct_shape("8x8x8", 1.0);
	construct_shape("32x32x32", 1.0);
	construct_shape("64x64x64", 1.0);
	construct_shape("8x8x8x8", 1.0);
	construct_shape("24x23x24x2x3x2", 1.0);
	construct_shape("16x12x16x16x2", 1.0002);
	check_16x16x16();
	if (getenv("TC_KD_SWEEP") && !strcmp(getenv("TC_KD_SWEEP"), "1")) {
		sweep(3, 2, 16, 4096);
		sweep(4, 2, 8, 4096);
	}
	tap_diag("worst ratio: 3-D %.4f (%s), 4-D %.4f (%s); slowest build %.2f s (%s); total %.1f s", worst[0],
		 worst_shape[0], worst[1], worst_shape[1], slowest, slowest_shape, now() - t0);
	return tap_done();
}
