// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one-port complete-exchange family of Liu et al., Multidimensional Tori: AR1,
 * AT2 (one-port), PT4, MT3, MTk. For every shape an algorithm claims: the
 * schedule verifies with the claims it makes, runs on the simulator with
 * every received byte checked, and its startups and transmission (critical
 * path, lib/core/cost.c) are compared with the paper's formulas (Table 1),
 * computed here from the formulas. Shapes outside the paper are rejected
 * with -EOPNOTSUPP and a reason.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/check.h"
#include "core/sim_run.h"
#include "select/select.h"
#include "tap.h"
#include "tbyte.h"

struct expect {
	int64_t steps, blocks; /* what the paper's formula gives */
	int exact;	       /* 1: must be met exactly; 0: must not be exceeded */
	const char *why;       /* where the expectation comes from */
};

static int64_t ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

static void sorted_desc(const struct tc_shape *sh, int *n)
{
	for (int i = 0; i < sh->ndims; i++)
		n[i] = sh->dims[i];
	for (int i = 0; i < sh->ndims; i++)
		for (int j = i + 1; j < sh->ndims; j++)
			if (n[j] > n[i]) {
				int t = n[i];

				n[i] = n[j];
				n[j] = t;
			}
}

/* Liu et al., Multidimensional Tori, Sec. 3: T_ring = (ceil(p/4)+1) ts + (floor(p^2/8)+p/2) m tw */
static struct expect f_ar1(int p)
{
	return (struct expect){ ceil_div(p, 4) + 1, (int64_t)p * p / 8 + p / 2, 1, "T_ring" };
}

/* Startups of AR1 on a logical ring of q nodes as the formulas count them,
 * ceil(q/4)+1, except that on q = 2 the last step is empty: 1. */
static int64_t ar1_startups(int64_t q)
{
	return q == 2 ? 1 : ceil_div(q, 4) + 1;
}

/* Liu et al., Multidimensional Tori, Sec. 4: T_2D = (2*ceil(s/8)+4) ts + (4r*floor(s^2/32)+2rs) m tw, r <= s,
 * met as a critical path also on r < s (a node's second ring waits for the
 * links the first rings of the other parity still hold). 2*ceil(s/8)+4 is
 * 2*(AR1 startups on s/2)+2: 4 on 4x4, where the last AR1 step is empty. */
static struct expect f_at2(int a, int b)
{
	int64_t r = a < b ? a : b, s = a < b ? b : a;

	return (struct expect){ 2 * ar1_startups(s / 2) + 2, 4 * r * (s * s / 32) + 2 * r * s, 1, "T_2D" };
}

/* Liu et al., Multidimensional Tori, Sec. 5.2: MT_3D = (3*ceil(N1/12)+9) ts + (9*floor(N1^2/72)*N2*N3 + 7*N1*N2*N3/2) m tw.
 * Sides of 3 (not in the paper): phase 1 is empty, phase 2 is 6 steps of N/3. */
static struct expect f_mt3(const struct tc_shape *sh)
{
	int n[3];
	int64_t P = sh->nodes;

	sorted_desc(sh, n);
	if (n[0] == 3)
		return (struct expect){ 6, 6 * P / 3, 1, "phase 2 only (3x3x3, 6 steps of N/3)" };
	/* 3*ceil(N1/12)+9 = 3*(AR1 startups on N1/3)+6 (9 on 6x6x6: empty last AR1 step) */
	return (struct expect){ 3 * ar1_startups(n[0] / 3) + 6, 9 * ((int64_t)n[0] * n[0] / 72) * n[1] * n[2] + 7 * P / 2,
				1, "MT_3D" };
}

/* Liu et al., Multidimensional Tori, Sec. 5.1: T_4D = (4*ceil(N1/16)+12) ts + (16*floor(N1^2/128)+6*N1)*N2*N3*N4 m tw.
 * 4*ceil(N1/16)+12 = 4*(AR1 startups on N1/4)+8: 12 when N1 = 8 (logical
 * rings of 2, empty last AR1 step). All sides 4 (the paper needs multiples
 * of 8): the logical AT2 of each plane is its 2x2 exchange alone: 2 planes
 * x 2 steps x N/2, then the 4-cube 4 steps x N/2: 8 steps, 4N blocks. */
static struct expect f_pt4(const struct tc_shape *sh)
{
	int n[4];
	int64_t P = sh->nodes;

	sorted_desc(sh, n);
	if (n[0] == 4)
		return (struct expect){ 8, 4 * P, 1, "phase structure (sides 4: no AR1 steps)" };
	/* met exactly when the two longest sides are equal; otherwise the
	 * shorter plane's rings finish early and the critical path is below
	 * it (16x8x4x4: 15 steps, 15360 blocks against 16 and 16384) */
	return (struct expect){ 4 * ar1_startups(n[0] / 4) + 8, (16 * ((int64_t)n[0] * n[0] / 128) + 6 * n[0]) * (P / n[0]),
				n[0] == n[1], "T_4D" };
}

/* Liu et al., Multidimensional Tori, Sec. 5.3: MT_kD = (k*ceil(N1/4k)+k^2) ts + (k^2*floor(N1^2/8k^2)+(floor(k^2/4)+k/2)*N1)*prod(N2..Nk) m tw.
 * k = 1, 2, 3 are AR1, AT2, MT3 (the same formula). */
static struct expect f_mtk(const struct tc_shape *sh)
{
	int k = sh->ndims, n[TC_MAX_DIMS];
	int64_t P = sh->nodes, k2 = (int64_t)k * k;
	struct expect e;

	sorted_desc(sh, n);
	if (k == 1)
		return f_ar1(n[0]);
	if (k == 2)
		return f_at2(n[0], n[1]);
	if (k == 3)
		return f_mt3(sh);
	if (n[0] == k)
		/* sides k: phase 1 is empty; phase 2 as the paper prices it,
		 * k dimensions of (k-1) steps and floor(k^2/4)/k*N blocks */
		return (struct expect){ k * (k - 1), (k2 / 4) * P, 1, "phase 2 only (sides k)" };
	e.steps = k * ceil_div(n[0], 4 * k) + k2;
	/* (floor(k^2/4) + k/2) * N1 with k/2 possibly a half: keep it exact */
	e.blocks = k2 * ((int64_t)n[0] * n[0] / (8 * k2)) * (P / n[0]) + (2 * (k2 / 4) + k) * P / 2;
	e.exact = 0;
	e.why = "MT_kD";
	return e;
}

static uint8_t pattern(int o, int d, size_t i)
{
	return tbyte(0, (uint32_t)o, (uint32_t)d, i);
}

/* Run on the simulator; count wrong bytes over every (origin, destination). */
static int sim_check(const struct tc_sched *sc, size_t m, int64_t *bad)
{
	int N = sc->shape.nodes, err = -ENOMEM;
	void **send = calloc(N, sizeof(void *)), **recv = calloc(N, sizeof(void *));

	*bad = 0;
	if (!send || !recv)
		goto out;
	for (int n = 0; n < N; n++) {
		uint8_t *p = send[n] = malloc((size_t)N * m);

		recv[n] = calloc(N, m);
		if (!p || !recv[n])
			goto out;
		for (int d = 0; d < N; d++)
			for (size_t i = 0; i < m; i++)
				p[(size_t)d * m + i] = pattern(n, d, i);
	}
	err = tc_sim_run(sc, m, send, recv);
	for (int d = 0; d < N && !err; d++)
		for (int o = 0; o < N; o++)
			for (size_t i = 0; i < m; i++)
				*bad += ((uint8_t *)recv[d])[(size_t)o * m + i] != pattern(o, d, i);
out:
	for (int n = 0; send && recv && n < N; n++) {
		free(send[n]);
		free(recv[n]);
	}
	free(send);
	free(recv);
	return err;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Build, verify, simulate and price one (algorithm, shape). */
static void check(const struct tc_algo *a, const char *dims, struct expect (*f)(const struct tc_shape *),
		  unsigned int want_claims)
{
	struct tc_verify_report r;
	struct tc_sched *sc = NULL;
	struct tc_shape sh;
	struct tc_cost c;
	struct expect e;
	const char *why = NULL;
	int64_t bad;
	double t0 = now();
	int err;

	if (tc_shape_parse(&sh, dims, 0, 1)) {
		tap_ok(0, "%s %s: shape parses", a->name, dims);
		return;
	}
	err = a->build(&sh, &sc, &why);
	if (!tap_ok(!err && sc, "%s %s: builds (%d%s%s)", a->name, dims, err, why ? ": " : "", why ? why : ""))
		return;
	tap_ok((sc->claims & want_claims) == want_claims && !(sc->claims & ~want_claims),
	       "%s %s: claims 0x%x (want 0x%x), cites \"%s\"", a->name, dims, sc->claims, want_claims, sc->cite);
	err = tc_verify(sc, &r);
	tap_ok(!err && r.ok, "%s %s: verifies%s%s", a->name, dims, r.ok ? "" : ": ", r.first_violation);
	tc_verify_report_free(&r);
	err = sim_check(sc, sh.nodes > 512 ? 2 : 5, &bad);
	tap_ok(!err && !bad, "%s %s: simulator moves every byte right (err %d, %lld wrong bytes)", a->name, dims, err,
	       (long long)bad);
	err = tc_cost_eval(sc, NULL, &c);
	e = f(&sh);
	if (!tap_ok(!err, "%s %s: cost model (%d)", a->name, dims, err))
		goto out;
	if (e.exact)
		tap_ok(c.steps == e.steps && c.transmission_blocks == (double)e.blocks,
		       "%s %s: %u steps, %.0f blocks = %s: %lld steps, %lld blocks", a->name, dims, c.steps,
		       c.transmission_blocks, e.why, (long long)e.steps, (long long)e.blocks);
	else
		tap_ok(c.steps <= e.steps && c.transmission_blocks <= (double)e.blocks,
		       "%s %s: %u steps, %.0f blocks <= %s: %lld steps, %lld blocks", a->name, dims, c.steps,
		       c.transmission_blocks, e.why, (long long)e.steps, (long long)e.blocks);
	tap_diag("table: %-7s %-9s steps %3u  transmission %8.0f  formula %3lld / %8lld  lockstep %8.0f  "
		 "bound %8.0f  ratio %.3f  (%.2fs)",
		 a->name, dims, c.steps, c.transmission_blocks, (long long)e.steps, (long long)e.blocks,
		 c.lockstep_blocks, c.lower_bound_blocks, c.ratio, now() - t0);
out:
	tc_sched_free(sc);
}

static void reject(const struct tc_algo *a, const char *dims, int mesh)
{
	struct tc_sched *sc = NULL;
	struct tc_shape sh;
	const char *why = NULL;
	int err;

	if (tc_shape_parse(&sh, dims, mesh, 1)) {
		tap_ok(0, "%s %s: shape parses", a->name, dims);
		return;
	}
	err = a->build(&sh, &sc, &why);
	tap_ok(err == -EOPNOTSUPP && !sc && why && *why, "%s %s%s rejected: %d (%s)", a->name, dims,
	       mesh ? " mesh" : "", err, why ? why : "no reason");
	tc_sched_free(sc);
}

/* AT2, PT4 and MT3 are not shortest-path (a block may pass its destination's
 * column by one and come back in the sub-mesh phase): the same schedule
 * with TC_CLAIM_SHORTEST added must fail verification, so the claim left
 * off is left off for a reason and the verifier does look. */
static void not_shortest(const struct tc_algo *a, const char *dims)
{
	struct tc_verify_report r;
	struct tc_sched *sc = NULL;
	struct tc_shape sh;
	const char *why = NULL;
	int err;

	if (tc_shape_parse(&sh, dims, 0, 1) || a->build(&sh, &sc, &why)) {
		tap_ok(0, "%s %s: builds", a->name, dims);
		return;
	}
	sc->claims |= TC_CLAIM_SHORTEST;
	err = tc_verify(sc, &r);
	tap_ok(err == -EPROTO && !r.ok, "%s %s: claiming shortest paths fails verification (%d: %s)", a->name, dims,
	       err, r.first_violation);
	tc_verify_report_free(&r);
	tc_sched_free(sc);
}

static struct expect e_ar1(const struct tc_shape *sh)
{
	return f_ar1(sh->dims[0]);
}

static struct expect e_at2(const struct tc_shape *sh)
{
	return f_at2(sh->dims[0], sh->dims[1]);
}

int main(void)
{
	const unsigned int cf = TC_CLAIM_CONTENTION_FREE | TC_CLAIM_PERMUTATION;
	char dims[32];

	/* AR1 on rings 4..32 */
	for (int p = 4; p <= 32; p += 2) {
		snprintf(dims, sizeof(dims), "%d", p);
		check(&tc_algo_ar1, dims, e_ar1, cf | TC_CLAIM_SHORTEST);
	}
	reject(&tc_algo_ar1, "7", 0);
	reject(&tc_algo_ar1, "8", 1);
	reject(&tc_algo_ar1, "4x4", 0);

	/* one-port AT2 on 2D tori with sides multiples of 4, 4x4 .. 16x16 */
	for (int r = 4; r <= 16; r += 4)
		for (int s = 4; s <= 16; s += 4) {
			snprintf(dims, sizeof(dims), "%dx%d", r, s);
			check(&tc_algo_at2_1p, dims, e_at2, cf);
		}
	reject(&tc_algo_at2_1p, "6x6", 0);
	reject(&tc_algo_at2_1p, "8x10", 0);
	reject(&tc_algo_at2_1p, "8x8", 1);
	reject(&tc_algo_at2_1p, "8", 0);

	/* PT4 */
	check(&tc_algo_pt4, "4x4x4x4", f_pt4, cf);
	check(&tc_algo_pt4, "8x8x4x4", f_pt4, cf);
	reject(&tc_algo_pt4, "6x6x6x6", 0);
	reject(&tc_algo_pt4, "4x4x4", 0);

	/* MT3 */
	check(&tc_algo_mt3, "3x3x3", f_mt3, cf);
	check(&tc_algo_mt3, "6x6x6", f_mt3, cf);
	check(&tc_algo_mt3, "12x6x6", f_mt3, cf);
	check(&tc_algo_mt3, "6x3x12", f_mt3, cf);
	reject(&tc_algo_mt3, "9x9x9", 0);
	reject(&tc_algo_mt3, "4x4x4", 0);
	reject(&tc_algo_mt3, "6x6x6", 1);

	/* MTk: k = 1 is AR1, k = 2 the one-port AT2, k = 3 MT3 */
	check(&tc_algo_mtk, "12", f_mtk, cf | TC_CLAIM_SHORTEST);
	check(&tc_algo_mtk, "8x8", f_mtk, cf);
	check(&tc_algo_mtk, "16x16", f_mtk, cf);
	check(&tc_algo_mtk, "6x6x6", f_mtk, cf);
	check(&tc_algo_mtk, "4x4x4x4", f_mtk, cf);
	reject(&tc_algo_mtk, "5x5", 0);
	reject(&tc_algo_mtk, "8x8x8", 0);

	not_shortest(&tc_algo_at2_1p, "8x8");
	not_shortest(&tc_algo_pt4, "4x4x4x4");
	not_shortest(&tc_algo_mt3, "6x6x6");
	not_shortest(&tc_algo_mtk, "6x6x6");

	return tap_done();
}
