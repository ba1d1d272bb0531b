// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Direct exchanges and baselines (lib/algorithms/alltoall/{atape,pairwise,bruck,direct}.c,
 * lib/algorithms/allgather/{ring,saad_schultz,bruck}.c) on a matrix of shapes: each
 * builds, verifies, has the step count of its formula, keeps the per-step
 * permutation / one-port property (checked here from the messages, not only
 * by the verifier), and runs on the simulator with every received byte
 * compared with a reference. Prints the 4x4 / 8x8 / 16x16 comparison table.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/check.h"
#include "core/sim_run.h"
#include "select/select.h"
#include "tap.h"

#define BLOCK 16 /* bytes per block in the simulator runs */

struct shape_case {
	const char *dims;
	int wrap; /* -1: every dimension wraps, else the wrap mask */
	int one_port;
};

static const struct shape_case shapes[] = {
	{ "2", -1, 0 },	    { "3", -1, 0 },	  { "4", -1, 0 },     { "5", -1, 0 },	  { "7", -1, 0 },
	{ "8", -1, 0 },	    { "12", -1, 0 },	  { "16", -1, 0 },    { "32", -1, 0 },	  { "6", 0, 0 },
	{ "2x2", -1, 0 },   { "3x3", -1, 0 },	  { "4x4", -1, 0 },   { "4x8", -1, 0 },	  { "5x7", -1, 0 },
	{ "6x6", -1, 0 },   { "6x10", -1, 0 },	  { "8x8", -1, 0 },   { "8x12", -1, 0 },  { "16x16", -1, 0 },
	{ "3x3", 0, 0 },    { "4x4", 0, 0 },	  { "5x7", 0, 0 },    { "4x6", 0, 0 },	  { "3x5", 2, 0 },
	{ "5x3", 1, 0 },    { "4x5", 1, 0 },	  { "2x3x4", -1, 0 }, { "3x3x3", -1, 0 }, { "4x4x4", -1, 0 },
	{ "3x5x3", 0, 0 },  { "3x3x5", 4, 0 },	  { "2x2x2x2", -1, 0 }, { "3x3x3x3", -1, 0 },
	{ "4", -1, 1 },	    { "7", -1, 1 },	  { "6", 0, 1 },      { "4x4", -1, 1 },	  { "5x7", -1, 1 },
	{ "4x4", 0, 1 },    { "3x3", 0, 1 },	  { "8x8", -1, 1 },   { "3x3x3", -1, 1 }, { "2x2x2x2", -1, 1 },
	{ "4x6x3", -1, 1 },
};

static int make_shape(const struct shape_case *c, struct tc_shape *sh, char *name, size_t len)
{
	int err = tc_shape_parse(sh, c->dims, c->wrap >= 0, c->one_port);

	if (!err && c->wrap > 0) {
		int dims[TC_MAX_DIMS];

		memcpy(dims, sh->dims, sizeof(dims));
		err = tc_shape_init(sh, sh->ndims, dims, (unsigned int)c->wrap, c->one_port);
	}
	snprintf(name, len, "%s%s%s", c->dims,
		 c->wrap < 0 ? "" : c->wrap == 0 ? " mesh" : " part-wrap",
		 c->one_port ? " one-port" : "");
	if (c->wrap > 0) {
		size_t off = strlen(name);

		snprintf(name + off, len - off, "(mask %d)", c->wrap);
	}
	return err;
}

static int ceil_log2(int n)
{
	int k = 0;

	while ((1 << k) < n)
		k++;
	return k;
}

/* Reference contents of byte j of block (a, b): every block distinct with overwhelming probability. */
static uint8_t pattern(int a, int b, size_t j)
{
	uint32_t x = (uint32_t)a * 2654435761u ^ (uint32_t)b * 40503u ^ (uint32_t)j * 97u;

	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	return (uint8_t)x;
}

/* Every step: does any node send or receive two messages? */
static int permutation_violation(const struct tc_sched *s, char *why, size_t len)
{
	int *snd = calloc(s->shape.nodes, sizeof(int)), *rcv = calloc(s->shape.nodes, sizeof(int));
	int bad = 0;

	if (!snd || !rcv) {
		snprintf(why, len, "out of memory");
		bad = 1;
	}
	for (uint32_t st = 0; !bad && st < s->nsteps; st++) {
		memset(snd, 0, s->shape.nodes * sizeof(int));
		memset(rcv, 0, s->shape.nodes * sizeof(int));
		for (uint32_t i = s->step_first[st]; !bad && i < s->step_first[st + 1]; i++) {
			const struct tc_msg *m = &s->msgs[i];

			if (++snd[m->src] > 1 || ++rcv[m->dst] > 1) {
				snprintf(why, len, "step %u: node %d sends or node %d receives twice", st, m->src,
					 m->dst);
				bad = 1;
			}
		}
	}
	free(snd);
	free(rcv);
	return bad;
}

static int all_one_hop(const struct tc_sched *s)
{
	for (uint32_t i = 0; i < s->nmsgs; i++) {
		int hops = 0;

		for (int d = 0; d < s->shape.ndims; d++)
			hops += abs(s->msgs[i].route[d]);
		if (hops != 1)
			return 0;
	}
	return 1;
}

static int run_sim(const struct tc_sched *s, char *why, size_t len)
{
	const int n = s->shape.nodes;
	const int a2a = s->coll == TC_ALLTOALL;
	const size_t sbytes = a2a ? (size_t)n * BLOCK : BLOCK, rbytes = (size_t)n * BLOCK;
	void **snd = calloc(n, sizeof(void *)), **rcv = calloc(n, sizeof(void *));
	int err = -ENOMEM, bad = 0;

	if (!snd || !rcv)
		goto out;
	for (int x = 0; x < n; x++) {
		snd[x] = malloc(sbytes);
		rcv[x] = malloc(rbytes);
		if (!snd[x] || !rcv[x])
			goto out;
		for (size_t j = 0; j < sbytes; j++)
			((uint8_t *)snd[x])[j] = a2a ? pattern(x, j / BLOCK, j % BLOCK) : pattern(x, -1, j);
		memset(rcv[x], 0xa5, rbytes);
	}
	err = tc_sim_run(s, BLOCK, snd, rcv);
	if (err) {
		snprintf(why, len, "tc_sim_run: %d", err);
		goto out;
	}
	/* recv[d] block o is what o sent d (alltoall) or o's contribution (allgather). */
	for (int d = 0; d < n && !bad; d++)
		for (size_t j = 0; j < rbytes && !bad; j++) {
			int o = j / BLOCK;
			uint8_t want = a2a ? pattern(o, d, j % BLOCK) : pattern(o, -1, j % BLOCK);

			if (((uint8_t *)rcv[d])[j] != want) {
				snprintf(why, len, "node %d: byte %zu of block from %d is %#x, want %#x", d,
					 j % BLOCK, o, ((uint8_t *)rcv[d])[j], want);
				bad = 1;
			}
		}
	err = bad ? -EPROTO : 0;
out:
	if (err == -ENOMEM)
		snprintf(why, len, "out of memory");
	for (int x = 0; snd && rcv && x < n; x++) {
		free(snd[x]);
		free(rcv[x]);
	}
	free(snd);
	free(rcv);
	return err;
}

/* Steps each algorithm must take on a shape. */
static uint32_t expected_steps(const struct tc_algo *al, const struct tc_shape *sh)
{
	const int n = sh->nodes;
	uint32_t steps = 0;

	if (al == &tc_algo_atape || al == &tc_algo_pairwise)
		return n - 1;
	if (al == &tc_algo_direct)
		return sh->one_port ? n - 1 : 1;
	if (al == &tc_algo_bruck_a2a || al == &tc_algo_bruck_ag)
		return ceil_log2(n);
	if (al == &tc_algo_ring_ag)
		return n - 1;
	/* saad-schultz: per dimension floor(n/2) on an all-port ring, n-1 otherwise */
	for (int d = 0; d < sh->ndims; d++)
		steps += (!sh->one_port && (sh->wrap_mask & (1u << d))) ? sh->dims[d] / 2 : sh->dims[d] - 1;
	return steps;
}

/* Does this shape have a Hamiltonian cycle of neighbours (the ring must then be one hop)? */
static int has_cycle(const struct tc_shape *sh)
{
	if (sh->ndims == 1)
		return sh->wrap_mask || sh->dims[0] == 2;
	return !(sh->nodes & 1) || sh->wrap_mask;
}

static void check_one(const struct tc_algo *al, const struct tc_shape *sh, const char *name)
{
	struct tc_verify_report r;
	struct tc_sched *s = NULL;
	const char *why = NULL;
	char msg[256] = "";
	uint32_t want;
	int err, ok;

	err = al->build(sh, &s, &why);
	if (!tap_ok(err == 0, "%s %s on %s: builds (%d %s)", al->name, al->coll == TC_ALLTOALL ? "alltoall" : "allgather", name, err,
		    why ? why : ""))
		return;
	memset(&r, 0, sizeof(r));
	err = tc_verify(s, &r);
	tap_ok(err == 0 && r.ok, "%s on %s: verifies%s%s", al->name, name, r.ok ? "" : ": ", r.first_violation);
	tc_verify_report_free(&r);

	want = expected_steps(al, sh);
	tap_ok(s->nsteps == want, "%s on %s: %u steps, formula %u", al->name, name, s->nsteps, want);

	if (s->claims & TC_CLAIM_PERMUTATION || sh->one_port) {
		ok = !permutation_violation(s, msg, sizeof(msg));
		tap_ok(ok, "%s on %s: every step a permutation / one-port %s", al->name, name, msg);
	}
	if (al == &tc_algo_atape || al == &tc_algo_pairwise || al == &tc_algo_bruck_a2a ||
	    al == &tc_algo_bruck_ag || al == &tc_algo_ring_ag || (al == &tc_algo_direct && sh->one_port))
		tap_ok(!!(s->claims & TC_CLAIM_PERMUTATION), "%s on %s: claims PERMUTATION", al->name, name);
	if (al == &tc_algo_ring_ag) {
		ok = has_cycle(sh) == all_one_hop(s) && has_cycle(sh) == !!(s->claims & TC_CLAIM_ONE_HOP);
		tap_ok(ok, "%s on %s: Hamiltonian cycle %s, messages one hop %d, claims one-hop %d", al->name, name,
		       has_cycle(sh) ? "exists" : "impossible", all_one_hop(s), !!(s->claims & TC_CLAIM_ONE_HOP));
	}
	if (al == &tc_algo_saad_schultz)
		tap_ok(!!(s->claims & TC_CLAIM_CONTENTION_FREE), "%s on %s: claims CONTENTION_FREE", al->name, name);

	err = run_sim(s, msg, sizeof(msg));
	tap_ok(err == 0, "%s on %s: simulator, every byte as the reference %s", al->name, name, msg);
	tc_sched_free(s);
}

/*
 * The 8 x 8 Latin square printed in the slides (All-to-All Communication slides, "The generated Latin
 * square", first row a_j = tau(j) = 0 2 4 6 1 3 5 7): ATAPE on 8 nodes uses the
 * same basic-permutation rows with a_j = j, so in step i (row i) the sender
 * tau(j) must address slides[i][j].
 */
static void check_slides_square(void)
{
	static const int slides[8][8] = {
		{ 0, 2, 4, 6, 1, 3, 5, 7 }, { 1, 3, 5, 7, 0, 2, 4, 6 }, { 3, 1, 7, 5, 2, 0, 6, 4 },
		{ 2, 0, 6, 4, 3, 1, 7, 5 }, { 6, 4, 2, 0, 7, 5, 3, 1 }, { 7, 5, 3, 1, 6, 4, 2, 0 },
		{ 5, 7, 1, 3, 4, 6, 0, 2 }, { 4, 6, 0, 2, 5, 7, 1, 3 },
	};
	struct tc_shape sh;
	struct tc_sched *s = NULL;
	const char *why = NULL;
	int ok;

	tc_shape_parse(&sh, "8", 0, 0);
	ok = !tc_algo_atape.build(&sh, &s, &why) && s->nsteps == 7;
	for (uint32_t st = 0; ok && st < s->nsteps; st++)
		for (uint32_t i = s->step_first[st]; i < s->step_first[st + 1]; i++) {
			const struct tc_msg *m = &s->msgs[i];
			int j = 0;

			while (slides[0][j] != m->src)
				j++;
			if (slides[st + 1][j] != m->dst)
				ok = 0;
		}
	tap_ok(ok, "atape on 8: steps are rows 1..7 of the slides' 8x8 Latin square");
	tc_sched_free(s);
}

/* Bruck's rearrangement: two rotations of P blocks plus the blocks packed before each step. */
static void check_bruck_rearranged(const char *dims, int64_t want)
{
	struct tc_shape sh;
	struct tc_sched *s = NULL;
	const char *why = NULL;

	tc_shape_parse(&sh, dims, 0, 0);
	if (tc_algo_bruck_a2a.build(&sh, &s, &why)) {
		tap_ok(0, "bruck on %s: builds (%s)", dims, why);
		return;
	}
	tap_ok(s->rearranged_blocks == want, "bruck on %s: rearranged %lld blocks, want %lld", dims,
	       (long long)s->rearranged_blocks, (long long)want);
	tc_sched_free(s);
}

/*
 * Direct routed messages with the antipode split by source parity load every
 * directed link equally; on tori whose sides are multiples of 4 that is
 * exactly Lemma 1's bound N1 * P / 8 (N1 the largest side).
 */
static void check_direct_link_load(const char *dims)
{
	struct tc_verify_report r;
	struct tc_shape sh;
	struct tc_sched *s = NULL;
	const char *why = NULL;
	int64_t n1 = 0;

	tc_shape_parse(&sh, dims, 0, 0);
	for (int d = 0; d < sh.ndims; d++)
		if (sh.dims[d] > n1)
			n1 = sh.dims[d];
	if (tc_algo_direct.build(&sh, &s, &why)) {
		tap_ok(0, "direct on %s: builds (%s)", dims, why);
		return;
	}
	memset(&r, 0, sizeof(r));
	tc_verify(s, &r);
	tap_ok(r.ok && r.max_link_blocks == n1 * sh.nodes / 8, "direct on %s: max link load %lld = N1*P/8 = %lld",
	       dims, (long long)r.max_link_blocks, (long long)(n1 * sh.nodes / 8));
	tc_verify_report_free(&r);
	tc_sched_free(s);
}

static int build_cost(const struct tc_algo *al, const char *dims, int one_port, struct tc_sched **s, struct tc_cost *c)
{
	const struct tc_cost_params p = { .ts_us = 75, .tw_us_per_byte = 0.011, .rho_us_per_byte = 0.014,
					  .block_bytes = 1024 };
	struct tc_shape sh;
	const char *why = NULL;
	int err;

	err = tc_shape_parse(&sh, dims, 0, one_port);
	if (!err)
		err = al->build(&sh, s, &why);
	if (!err)
		err = tc_cost_eval(*s, &p, c);
	return err;
}

/*
 * Cost-model transmission where a formula is known: the ring N-1 blocks (one
 * block per step along a chain); Saad-Schultz on an n x n torus the slides'
 * (n^2-1)/2 for odd n (001 "Comparisons"), n^2/2 for even n (the first
 * phase's antipodal single block cannot be split), (n-1)/2 or n/2 on a ring.
 */
static void check_allgather_formulas(void)
{
	static const struct {
		const char *dims;
		double ring, ss;
	} f[] = {
		{ "3x3", 8, 4 },      { "5x5", 24, 12 }, { "7x7", 48, 24 },  { "4x4", 15, 8 },
		{ "8x8", 63, 32 },    { "6x6", 35, 18 }, { "9", 8, 4 },	     { "8", 7, 4 },
		{ "16x16", 255, 128 },
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		struct tc_sched *s = NULL;
		struct tc_cost c;
		int err;

		err = build_cost(&tc_algo_ring_ag, f[i].dims, 0, &s, &c);
		tap_ok(!err && c.transmission_blocks == f[i].ring, "ring on %s: transmission %.1f blocks, formula %.0f",
		       f[i].dims, err ? -1 : c.transmission_blocks, f[i].ring);
		tc_sched_free(s);
		s = NULL;
		err = build_cost(&tc_algo_saad_schultz, f[i].dims, 0, &s, &c);
		tap_ok(!err && c.transmission_blocks == f[i].ss,
		       "saad-schultz on %s: transmission %.1f blocks, formula %.0f", f[i].dims,
		       err ? -1 : c.transmission_blocks, f[i].ss);
		tc_sched_free(s);
	}
}

/* The comparison table of the closing note: steps / transmission / busiest link against AT2's bound. */
static void print_table(void)
{
	const struct tc_algo *a2a[] = { &tc_algo_atape, &tc_algo_pairwise, &tc_algo_bruck_a2a, &tc_algo_direct, &tc_algo_at2 };
	const char *dims[] = { "4x4", "8x8", "16x16" };

	tap_diag("%-6s %-9s %6s %9s %12s %9s %7s %8s %11s", "shape", "algo", "steps", "cp-steps", "transmission",
		 "max-link", "bound", "ratio", "t(1KiB) us");
	for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++)
		for (size_t a = 0; a < sizeof(a2a) / sizeof(a2a[0]); a++) {
			struct tc_sched *s = NULL;
			struct tc_cost c;

			if (build_cost(a2a[a], dims[i], 0, &s, &c)) {
				tap_diag("%-6s %-9s failed", dims[i], a2a[a]->name);
				continue;
			}
			tap_diag("%-6s %-9s %6u %9u %12.1f %9lld %7.0f %8.2f %11.0f", dims[i], a2a[a]->name, s->nsteps,
				 c.steps, c.transmission_blocks, (long long)c.max_link_blocks, c.lower_bound_blocks,
				 c.ratio, c.time_us);
			tc_sched_free(s);
		}
}

static void check_bad_input(void)
{
	/* A shape struct that never went through tc_shape_init is refused with an errno. */
	struct tc_shape bad = { .ndims = 0 };
	struct tc_sched *s = NULL;
	const char *why = NULL;
	int err;

	err = tc_algo_atape.build(&bad, &s, &why);
	tap_ok(err < 0 && !s && why, "atape refuses an uninitialised shape (%d: %s)", err, why ? why : "");
	why = NULL;
	err = tc_algo_ring_ag.build(&bad, &s, &why);
	tap_ok(err < 0 && !s && why, "ring refuses an uninitialised shape (%d: %s)", err, why ? why : "");
}

/* Latin-square property of ATAPE, independent of the verifier: step i sends j to a distinct L[i][j]. */
static void check_latin(const char *dims)
{
	struct tc_shape sh;
	struct tc_sched *s = NULL;
	const char *why = NULL;
	int n, ok = 1;
	char *seen;

	tc_shape_parse(&sh, dims, 0, 0);
	n = sh.nodes;
	if (tc_algo_atape.build(&sh, &s, &why)) {
		tap_ok(0, "atape on %s: Latin square (%s)", dims, why);
		return;
	}
	seen = calloc((size_t)n * n, 1);
	/* (sender j, destination) pairs: each column j takes every destination once over the steps */
	for (uint32_t i = 0; seen && i < s->nmsgs; i++) {
		const struct tc_msg *m = &s->msgs[i];

		if (seen[m->src * n + m->dst]++ || m->nblk != 1)
			ok = 0;
	}
	for (int j = 0; seen && j < n; j++)
		for (int d = 0; d < n; d++)
			if (!!seen[j * n + d] != (j != d))
				ok = 0;
	tap_ok(seen && ok && s->nmsgs == (uint32_t)n * (n - 1), "atape on %s: rows of a Latin square, one block per message",
	       dims);
	free(seen);
	tc_sched_free(s);
}

int main(void)
{
	const struct tc_algo *algos[] = {
		&tc_algo_atape, &tc_algo_pairwise, &tc_algo_bruck_a2a,	  &tc_algo_direct,
		&tc_algo_ring_ag, &tc_algo_saad_schultz, &tc_algo_bruck_ag,
	};
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct tc_shape sh;
		char name[64];

		if (!tap_ok(make_shape(&shapes[i], &sh, name, sizeof(name)) == 0, "shape %s", shapes[i].dims))
			continue;
		for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++)
			check_one(algos[a], &sh, name);
	}
	check_latin("8");
	check_latin("4x4");
	check_latin("6x5");
	check_slides_square();
	check_bruck_rearranged("4x4", 2 * 16 + 4 * 8);	 /* bits 0..3 each set in 8 of 1..15 */
	check_bruck_rearranged("5", 2 * 5 + 2 + 2 + 1); /* 1..4: bit 0 {1,3}, bit 1 {2,3}, bit 2 {4} */
	check_direct_link_load("4x4");
	check_direct_link_load("4x8");
	check_direct_link_load("8x8");
	check_direct_link_load("16x16");
	check_direct_link_load("8");
	check_allgather_formulas();
	check_bad_input();
	print_table();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	tap_diag("wall time %.2f s", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return tap_done();
}
