// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gossip-ham1 (Meyer and Sibeyn, Theorem 3) on the 3D tori where no order of the sides
 * has n2 | n3, so the paper's reactor laps do not close and the walk takes
 * kpc plane changes per gcd(n2, n3)/3 laps (lib/algorithms/allgather/gossip_ham1_kd.c),
 * and on shapes where that lets the rod run along a longer side than
 * before. Every schedule is verified (tc_verify), run on the simulator with
 * every received byte compared with its origin's data, and its step count
 * compared with Theorem 3's P/6 + P/(2*n1) + 1 for the longest side n1
 * whose two others are multiples of 3 (computed here from the shape).
 * Kept apart from test_gossip.c, which is near its time budget.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/sim_run.h"
#include "select/select.h"
#include "algorithms/engine/gossip.h"
#include "tap.h"
#include "tbyte.h"

static unsigned char byte_of(int origin, size_t k)
{
	return tbyte(0, (uint32_t)origin, 0, k);
}

/* 1 when the simulator leaves every origin's m exact bytes at every node; else a reason in msg. */
static int sim_all_bytes(const struct tc_sched *s, size_t m, char *msg, size_t len)
{
	const int n = s->shape.nodes;
	unsigned char *in = malloc((size_t)n * m), *out = malloc((size_t)n * n * m);
	void **sp = calloc(n, sizeof(void *)), **rp = calloc(n, sizeof(void *));
	int ok = in && out && sp && rp, err;

	for (int v = 0; ok && v < n; v++) {
		sp[v] = in + (size_t)v * m;
		rp[v] = out + (size_t)v * n * m;
		for (size_t k = 0; k < m; k++)
			in[(size_t)v * m + k] = byte_of(v, k);
	}
	if (ok) {
		memset(out, 0x5a, (size_t)n * n * m);
		err = tc_sim_run(s, m, sp, rp);
		if (err) {
			snprintf(msg, len, "tc_sim_run: %d (%s)", err, tc_last_error());
			ok = 0;
		}
	} else {
		snprintf(msg, len, "out of memory");
	}
	for (int v = 0; ok && v < n; v++)
		for (int o = 0; ok && o < n; o++)
			for (size_t k = 0; ok && k < m; k++) {
				unsigned char got = out[((size_t)v * n + o) * m + k];

				if (got != byte_of(o, k)) {
					snprintf(msg, len, "node %d: byte %zu of origin %d is %#x, want %#x", v, k, o, got,
						 byte_of(o, k));
					ok = 0;
				}
			}
	free(in);
	free(out);
	free(sp);
	free(rp);
	return ok;
}

struct link_load {
	int nlinks, ndims;
	int *blocks; /* nsteps * nlinks */
};

static void count_link(void *arg, uint32_t step, int node, int port, const struct tc_msg *m)
{
	struct link_load *l = arg;

	l->blocks[(size_t)step * l->nlinks + node * 2 * l->ndims + port] += m->nblk;
}

/* Most blocks one directed link carries in one step (-1: out of memory). */
static int max_link_step_blocks(const struct tc_sched *s)
{
	struct link_load l = { .nlinks = s->shape.nodes * 2 * s->shape.ndims, .ndims = s->shape.ndims };
	size_t cells = (size_t)l.nlinks * (s->nsteps ? s->nsteps : 1);
	int mx = 0;

	l.blocks = calloc(cells, sizeof(int));
	if (!l.blocks)
		return -1;
	tc_sched_visit_links(s, count_link, &l);
	for (size_t i = 0; i < cells; i++)
		if (l.blocks[i] > mx)
			mx = l.blocks[i];
	free(l.blocks);
	return mx;
}

/*
 * Build dims (an all-port 3D torus) through the d-D entry point and the
 * algorithm's, or with perm (paper dimension e on physical perm[e - 1]) and
 * kpc forced when perm is not NULL; want_steps is the count expected,
 * checked against Theorem 3's formula here too (n1 = the rod).
 */
static void test_one(int a, int b, int c, const int *perm, int kpc, long want_steps)
{
	const struct tc_algo *al = &tc_algo_gossip_ham1;
	const int dims[3] = { a, b, c };
	struct tc_gossip_info info;
	struct tc_verify_report r;
	struct tc_shape sh;
	struct tc_sched *s = NULL, *s2 = NULL;
	const char *why = "";
	char name[32], msg[256] = "";
	long p, n1 = -1, num, den, cyc;
	int err, mb, cyc_ok;

	if (perm)
		snprintf(name, sizeof(name), "%dx%dx%d walk %d%d%d kpc %d", a, b, c, perm[0], perm[1], perm[2], kpc);
	else
		snprintf(name, sizeof(name), "%dx%dx%d", a, b, c);
	tc_shape_init(&sh, 3, dims, 7u, 0);
	p = sh.nodes;
	for (int i = 0; i < 3; i++)
		if (dims[(i + 1) % 3] % 3 == 0 && dims[(i + 2) % 3] % 3 == 0 && dims[i] > n1)
			n1 = dims[i];
	if (perm) {
		n1 = dims[perm[0]];
		err = __tc_gossip_ham1_3d_walk(&sh, perm, kpc, &s, &why, &info);
	} else {
		err = __tc_gossip_ham1_kd_info(&sh, &s, &why, &info);
	}
	if (!tap_ok(!err && s, "gossip-ham1 %s: builds (%d: %s)", name, err, err ? why : "ok"))
		return;
	err = tc_verify(s, &r);
	if (!tap_ok(!err && r.ok, "gossip-ham1 %s: verifies (%s)", name,
		    err ? "error" : r.ok ? "ok" : r.first_violation)) {
		tc_verify_report_free(&r);
		tc_sched_free(s);
		return;
	}
	tap_ok(sim_all_bytes(s, 3, msg, sizeof(msg)), "gossip-ham1 %s: simulator delivers every byte (m=3) %s", name,
	       msg);
	/* Theorem 3: P/6 + P/(2 n1) + 1, exact on these shapes */
	den = 6 * n1;
	num = p * n1 + 3 * p + den;
	tap_ok(num % den == 0 && num / den == want_steps && s->nsteps == (uint32_t)want_steps,
	       "gossip-ham1 %s: %u steps = P/6 + P/(2 n1) + 1 = %ld/%ld (n1 = %ld; want %ld)", name, s->nsteps, num,
	       den, n1, want_steps);
	mb = max_link_step_blocks(s);
	tap_ok(mb == 1, "gossip-ham1 %s: at most one packet per link per step (%d)", name, mb);
	/* three cycles of n2*n3/3 laps, each n1 + 3 links long: P/3 + n2*n3 */
	cyc = p / 3 + p / n1;
	cyc_ok = info.ncycles == 3 && info.segments == 0;
	for (int j = 0; j < info.ncycles && j < 3; j++)
		cyc_ok &= info.cycle_len[j] == cyc;
	tap_ok(cyc_ok, "gossip-ham1 %s: 3 cycles of %ld links, no relay segments (%d cycles: %d %d %d; %d segments)",
	       name, cyc, info.ncycles, info.cycle_len[0], info.cycle_len[1], info.cycle_len[2], info.segments);
	if (!perm) {
		err = al->build(&sh, &s2, &why);
		tap_ok(!err && s2 && s2->nsteps == s->nsteps && s2->nmsgs == s->nmsgs,
		       "gossip-ham1 %s: the algorithm's entry point builds the same schedule size", name);
	}
	tap_diag("TABLE %-14s %-14s steps %4u thm_steps %4ld max_link_blocks %5lld", al->name, name, s->nsteps,
		 want_steps, (long long)r.max_link_blocks);
	tc_sched_free(s2);
	tc_verify_report_free(&r);
	tc_sched_free(s);
}

/* A forced walk that must be refused with err and a reason. */
static void test_refused(int a, int b, int c, const int *perm, int kpc, int want_err, const char *what)
{
	const int dims[3] = { a, b, c };
	struct tc_shape sh;
	struct tc_sched *s = NULL;
	const char *why = NULL;
	int err;

	tc_shape_init(&sh, 3, dims, 7u, 0);
	err = __tc_gossip_ham1_3d_walk(&sh, perm, kpc, &s, &why, NULL);
	tap_ok(err == want_err && !s && why && *why, "gossip-ham1 %dx%dx%d walk %d%d%d kpc %d: %s: %d (%s)", a, b, c,
	       perm[0], perm[1], perm[2], kpc, what, err, why ? why : "");
	tc_sched_free(s);
}

int main(void)
{
	static const int p012[3] = { 0, 1, 2 }, p021[3] = { 0, 2, 1 }, bad[3] = { 0, 0, 2 };

	/* refused before: no order of the sides with 3 | n2 and n2 | n3 */
	test_one(4, 6, 9, NULL, 0, 64);
	test_one(6, 9, 4, NULL, 0, 64);
	test_one(5, 6, 9, NULL, 0, 73);
	test_one(7, 6, 9, NULL, 0, 91);
	test_one(5, 9, 12, NULL, 0, 145);
	/* built before with the rod along 6 (122 and 145 steps); now along 9 and 12 */
	test_one(9, 6, 9, NULL, 0, 109);
	test_one(12, 6, 9, NULL, 0, 136);
	/*
	 * The walks themselves. 4x6x9 with n2 = 6, n3 = 9: the paper's laps
	 * end 9 = 3 (mod 6) behind the start, and one plane change per lap
	 * moves by T = (2, 1), which generates only 9 of the 18 positions of
	 * a class; with n2 = 9, n3 = 6 it generates all 18 (the search's pick).
	 */
	test_refused(4, 6, 9, p012, 0, -EOPNOTSUPP, "the paper's walk does not close");
	test_refused(4, 6, 9, p012, 1, -EOPNOTSUPP, "kpc 1 with n2 = 6, n3 = 9 does not close");
	test_one(4, 6, 9, p021, 1, 64);
	/* 5x9x9 (g = 9): kpc 1 is the paper's walk; kpc 2 (T = (7, 2)) closes too, kpc 3 (T = (6, 3)) does not */
	test_one(5, 9, 9, p012, 0, 109);
	test_one(5, 9, 9, p012, 2, 109);
	test_refused(5, 9, 9, p012, 3, -EOPNOTSUPP, "kpc 3 does not close");
	/* bad requests */
	test_refused(5, 9, 9, p012, 4, -EINVAL, "kpc > gcd(n2, n3)/3");
	test_refused(5, 9, 9, bad, 1, -EINVAL, "not a permutation");
	test_refused(9, 5, 9, p012, 1, -EINVAL, "n2 not a multiple of 3");
	return tap_done();
}
