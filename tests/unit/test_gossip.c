// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * All-to-all broadcast (allgather) schedules from the papers:
 *   bcast-pattern  All-to-All Communication slides, broadcast pattern, all-port 2D meshes and tori
 *   gossip-ham2    Meyer and Sibeyn, Theorem 1, 2 packets on zigzag Hamiltonian cycles
 *   gossip-ham1    Meyer and Sibeyn, Theorems 2-4, 1 packet on partial Hamiltonian cycles
 * Every schedule is verified (tc_verify), run on the simulator with every
 * received byte compared with the sender's data, and its step and per-channel
 * counts are compared with the numbers the theorems give, computed here from
 * the shape.
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

static unsigned char pattern(int origin, size_t k)
{
	return tbyte(0, (uint32_t)origin, 0, k);
}

/* Run s on the simulator; 1 when every node holds every origin's exact bytes. */
static int sim_bytes_ok(const struct tc_sched *s, size_t m, char *msg, size_t msglen)
{
	const int n = s->shape.nodes;
	void **send = calloc(n, sizeof(void *)), **recv = calloc(n, sizeof(void *));
	int ok = send && recv, err;

	for (int v = 0; ok && v < n; v++) {
		send[v] = malloc(m);
		recv[v] = malloc(m * n);
		if (!send[v] || !recv[v]) {
			ok = 0;
			break;
		}
		for (size_t k = 0; k < m; k++)
			((unsigned char *)send[v])[k] = pattern(v, k);
		memset(recv[v], 0xee, m * n);
	}
	if (ok) {
		err = tc_sim_run(s, m, send, recv);
		if (err) {
			snprintf(msg, msglen, "tc_sim_run: %d (%s)", err, tc_last_error());
			ok = 0;
		}
	}
	for (int v = 0; ok && v < n; v++)
		for (int o = 0; ok && o < n; o++)
			for (size_t k = 0; k < m; k++)
				if (((unsigned char *)recv[v])[o * m + k] != pattern(o, k)) {
					snprintf(msg, msglen, "node %d: byte %zu of origin %d is %#x, want %#x", v, k, o,
						 ((unsigned char *)recv[v])[o * m + k], pattern(o, k));
					ok = 0;
					break;
				}
	for (int v = 0; v < n; v++) {
		if (send)
			free(send[v]);
		if (recv)
			free(recv[v]);
	}
	free(send);
	free(recv);
	return ok;
}

/* Blocks per (step, directed link); a directed link is node * 2 * ndims + port. */
struct step_load {
	int nlinks, nsteps, ndims;
	int *blocks; /* nsteps * nlinks */
};

static void load_visit(void *arg, uint32_t step, int node, int port, const struct tc_msg *m)
{
	struct step_load *l = arg;

	l->blocks[(size_t)step * l->nlinks + node * 2 * l->ndims + port] += m->nblk;
}

static int max_blocks_per_link_step(const struct tc_sched *s)
{
	struct step_load l = { .nlinks = s->shape.nodes * 2 * s->shape.ndims, .nsteps = (int)s->nsteps,
			       .ndims = s->shape.ndims };
	int mx = 0;

	l.blocks = calloc((size_t)l.nlinks * (l.nsteps ? l.nsteps : 1), sizeof(int));
	if (!l.blocks)
		return -1;
	tc_sched_visit_links(s, load_visit, &l);
	for (size_t i = 0; i < (size_t)l.nlinks * l.nsteps; i++)
		if (l.blocks[i] > mx)
			mx = l.blocks[i];
	free(l.blocks);
	return mx;
}

static const char *shape_str(const struct tc_shape *sh, char *buf, size_t len)
{
	size_t o = 0;

	for (int d = 0; d < sh->ndims; d++)
		o += snprintf(buf + o, len - o, "%s%d", d ? "x" : "", sh->dims[d]);
	snprintf(buf + o, len - o, "%s", sh->wrap_mask ? " torus" : " mesh");
	return buf;
}

static long lower_bound_steps(const struct tc_shape *sh)
{
	long k2 = 2L * sh->ndims;

	return (sh->nodes - 1 + k2 - 1) / k2;
}

static struct tc_sched *check_built(const struct tc_algo *a, const struct tc_shape *sh, struct tc_sched *s, int err,
				    const char *why, struct tc_verify_report *r);

/* Build, verify and simulate; returns the schedule (or NULL after a failed point). */
static struct tc_sched *build_checked(const struct tc_algo *a, const struct tc_shape *sh, struct tc_verify_report *r)
{
	struct tc_sched *s = NULL;
	const char *why = "";
	int err;

	err = a->build(sh, &s, &why);
	return check_built(a, sh, s, err, why, r);
}

/* Verify and simulate what a build gave; the schedule, or NULL after a failed point. */
static struct tc_sched *check_built(const struct tc_algo *a, const struct tc_shape *sh, struct tc_sched *s, int err,
				    const char *why, struct tc_verify_report *r)
{
	char buf[64], msg[256] = "";

	shape_str(sh, buf, sizeof(buf));
	if (!tap_ok(!err && s, "%s %s: builds (%d: %s)", a->name, buf, err, err ? why : "ok"))
		return NULL;
	err = tc_verify(s, r);
	if (!tap_ok(!err && r->ok, "%s %s: verifies (%s)", a->name, buf, err ? r->first_violation : "ok")) {
		tc_verify_report_free(r);
		tc_sched_free(s);
		return NULL;
	}
	tap_ok(sim_bytes_ok(s, 5, msg, sizeof(msg)), "%s %s: simulator delivers every byte (m=5) %s", a->name, buf,
	       msg);
	return s;
}

static int mkshape(struct tc_shape *sh, int ndims, const int *dims, unsigned int wrap)
{
	return tc_shape_init(sh, ndims, dims, wrap, 0);
}

/* ---- broadcast pattern (All-to-All Communication slides) ---- */

/* Perimeter C_d of the circle of radius d on a (2k+1) x (2k+1) torus (All-to-All Communication slides, "Properties"). */
static int perimeter_odd(int k, int d)
{
	if (d == 0)
		return 1;
	return d <= k ? 4 * d : 4 * (2 * k + 1 - d);
}

static void test_bcast_one(const struct tc_shape *sh)
{
	const struct tc_algo *a = &tc_algo_bcast_pattern;
	struct tc_verify_report r;
	struct tc_sched *s;
	char buf[64];
	int r0 = sh->dims[0], c0 = sh->dims[1], torus = sh->wrap_mask == 3u;
	long diam, thm_links = -1, lb_links = (sh->nodes - 1 + 3) / 4;

	if (!sh->wrap_mask)
		lb_links = (sh->nodes - 1 + 1) / 2; /* a corner has two in-channels */

	s = build_checked(a, sh, &r);
	if (!s)
		return;
	shape_str(sh, buf, sizeof(buf));
	diam = 0;
	for (int d = 0; d < 2; d++)
		diam += (sh->wrap_mask & (1u << d)) ? sh->dims[d] / 2 : sh->dims[d] - 1;
	/* phase d is step d: as many steps as the diameter */
	tap_ok(s->nsteps == (uint32_t)diam, "%s %s: %u steps = diameter %ld", a->name, buf, s->nsteps, diam);
	if (torus && r0 == c0 && (r0 & 1)) {
		/* Corollary 1: every channel relays (n^2-1)/4 messages; Theorem 3: C_d/4 in phase d */
		int k = r0 / 2, ok = 1, okstep = 1;
		struct step_load l = { .nlinks = sh->nodes * 4, .nsteps = (int)s->nsteps, .ndims = 2 };

		thm_links = ((long)r0 * r0 - 1) / 4;
		for (int i = 0; i < sh->nodes * 4; i++)
			ok &= r.link_blocks[i] == thm_links;
		tap_ok(ok && r.max_link_blocks == thm_links,
		       "%s %s: every channel relays (n^2-1)/4 = %ld messages (Cor. 1), max %lld", a->name, buf,
		       thm_links, (long long)r.max_link_blocks);
		l.blocks = calloc((size_t)l.nlinks * l.nsteps, sizeof(int));
		if (l.blocks) {
			tc_sched_visit_links(s, load_visit, &l);
			for (int st = 0; st < l.nsteps; st++)
				for (int i = 0; i < l.nlinks; i++)
					okstep &= l.blocks[(size_t)st * l.nlinks + i] * 4 == perimeter_odd(k, st + 1);
		}
		tap_ok(l.blocks && okstep, "%s %s: in phase d every channel carries C_d/4 messages (Thm 3)", a->name,
		       buf);
		free(l.blocks);
	} else if (torus && r0 == c0) {
		/* even n: (n^2-1)/4 is not an integer; the tie-breaking at n/2 reaches the in-degree bound */
		thm_links = lb_links;
		tap_ok(r.max_link_blocks == thm_links,
		       "%s %s: max channel load %lld = ceil((n^2-1)/4) = %ld (Cor. 1 rounded up, even n)", a->name,
		       buf, (long long)r.max_link_blocks, thm_links);
	} else if (!sh->wrap_mask && r0 == c0) {
		/*
		 * Corollary 2: at most (n^2-1)/2 per channel on a mesh. A corner takes
		 * n^2-1 messages over two channels, so ceil((n^2-1)/2) is also a lower
		 * bound: the pattern must meet it exactly (for even n the slides'
		 * (n^2-1)/2 is not an integer and is rounded up).
		 */
		thm_links = ((long)r0 * r0 - 1 + 1) / 2;
		tap_ok(r.max_link_blocks == thm_links,
		       "%s %s: max channel load %lld = ceil((n^2-1)/2) = %ld (Cor. 2, tight at the corners)", a->name,
		       buf, (long long)r.max_link_blocks, thm_links);
	}
	/* any shape: a node takes N-1 messages through its in-channels, a channel can't beat the average */
	tap_ok(r.max_link_blocks >= lb_links || (sh->wrap_mask && !torus), "%s %s: max channel load %lld >= in-degree bound %ld",
	       a->name, buf, (long long)r.max_link_blocks, lb_links);
	tap_diag("TABLE %-14s %-14s steps %4u thm_steps %4ld max_link_blocks %5lld thm %5ld lb_links %5ld lower_bound_steps %4ld",
		 a->name, buf, s->nsteps, diam, (long long)r.max_link_blocks, thm_links, lb_links,
		 lower_bound_steps(sh));
	tc_verify_report_free(&r);
	tc_sched_free(s);
}

static void test_bcast(void)
{
	static const int rc[][2] = { { 3, 5 }, { 4, 7 }, { 5, 8 }, { 6, 9 }, { 7, 16 }, { 16, 9 }, { 10, 3 },
				     { 12, 5 }, { 2, 6 }, { 8, 12 }, { 4, 6 }, { 5, 7 }, { 7, 9 }, { 3, 11 },
				     { 9, 15 }, { 11, 13 }, { 4, 16 } };
	struct tc_shape sh;

	for (int n = 3; n <= 16; n++) {
		int dims[2] = { n, n };

		mkshape(&sh, 2, dims, 3u);
		test_bcast_one(&sh);
		mkshape(&sh, 2, dims, 0u);
		test_bcast_one(&sh);
	}
	for (size_t i = 0; i < sizeof(rc) / sizeof(rc[0]); i++) {
		int dims[2] = { rc[i][0], rc[i][1] };

		if (dims[0] >= 3 && dims[1] >= 3) {
			mkshape(&sh, 2, dims, 3u);
			test_bcast_one(&sh);
		}
		mkshape(&sh, 2, dims, 0u);
		test_bcast_one(&sh);
	}
	/* one wrapping dimension, one not */
	{
		int dims[2] = { 5, 6 };

		mkshape(&sh, 2, dims, 1u);
		test_bcast_one(&sh);
	}
}

/* ---- gossip (Meyer and Sibeyn) ---- */

static void test_ham2_one(int n1, int n2)
{
	const struct tc_algo *a = &tc_algo_gossip_ham2;
	int dims[2] = { n1, n2 };
	struct tc_verify_report r;
	struct tc_shape sh;
	struct tc_sched *s;
	char buf[64];
	long thm = ((long)n1 * n2 + 1) / 2; /* Theorem 1: ceil(n1*n2/2) */
	int mb;

	mkshape(&sh, 2, dims, 3u);
	s = build_checked(a, &sh, &r);
	if (!s)
		return;
	shape_str(&sh, buf, sizeof(buf));
	tap_ok(s->npackets == 2, "%s %s: 2 packets per node", a->name, buf);
	mb = max_blocks_per_link_step(s);
	if (strstr(s->cite, "decomposition")) {
		/* two Hamiltonian cycles found by square swaps: half a cycle each way */
		long want = ((long)n1 * n2 - 1 + 1) / 2;

		tap_ok(s->nsteps == (uint32_t)want && want <= thm,
		       "%s %s: %u steps = ceil((n1*n2-1)/2) = %ld <= ceil(n1*n2/2) = %ld (Thm 1, Hamiltonian decomposition)",
		       a->name, buf, s->nsteps, want, thm);
		tap_ok(mb == 1, "%s %s: at most one packet per link per step (%d)", a->name, buf, mb);
	} else if (!(n1 & 1) && !(n2 & 1)) {
		/* two full Hamiltonian cycles: exactly the theorem, one packet per link per step */
		tap_ok(s->nsteps == (uint32_t)thm, "%s %s: %u steps = ceil(n1*n2/2) = %ld (Thm 1)", a->name, buf,
		       s->nsteps, thm);
		tap_ok(mb == 1, "%s %s: at most one packet per link per step (%d)", a->name, buf, mb);
	} else {
		/*
		 * One odd side: partial cycles; an out-of-cycle PU hands its packet for
		 * the other cycle to a neighbour, which queues it into a full stream.
		 * Theorem 1 is not met here: each handed packet costs at most one
		 * step of a link's queue, so allow ceil(n1*n2/2) + neven/2.
		 */
		long slack = (n1 & 1 ? n2 : n1) / 2;

		tap_ok(s->nsteps <= (uint32_t)(thm + slack), "%s %s: %u steps <= ceil(n1*n2/2) + neven/2 = %ld + %ld",
		       a->name, buf, s->nsteps, thm, slack);
		tap_ok(mb == 1, "%s %s: at most one packet per link per step (%d)", a->name, buf, mb);
	}
	tap_diag("TABLE %-14s %-14s steps %4u thm_steps %4ld max_link_blocks %5lld thm %5s lb_links %5ld lower_bound_steps %4ld  (blocks are half packets; max per link-step %d)",
		 a->name, buf, s->nsteps, thm, (long long)r.max_link_blocks, "-", (long)(sh.nodes * 2 - 2 + 3) / 4,
		 lower_bound_steps(&sh), mb);
	tc_verify_report_free(&r);
	tc_sched_free(s);
}

/*
 * gossip-ham1's last resort (no partial-cycle layout closes; no shape from
 * 3x3 to 15x15 needs it now): one packet on gossip-ham2's two full
 * Hamiltonian cycles, (N-1)/2 steps on odd x odd tori.
 */
static void test_ham1_full_cycles_one(int n1, int n2)
{
	struct tc_algo a = { .name = "gossip-ham1(full cycles)", .coll = TC_ALLGATHER,
			     .build = __tc_gossip_ham1_full_cycles };
	int dims[2] = { n1, n2 }, mb;
	struct tc_verify_report r;
	struct tc_shape sh;
	struct tc_sched *s;
	char buf[64];

	mkshape(&sh, 2, dims, 3u);
	s = build_checked(&a, &sh, &r);
	if (!s)
		return;
	shape_str(&sh, buf, sizeof(buf));
	tap_ok(s->nsteps == (uint32_t)(sh.nodes - 1) / 2, "%s %s: %u steps = (N-1)/2 = %d", a.name, buf, s->nsteps,
	       (sh.nodes - 1) / 2);
	mb = max_blocks_per_link_step(s);
	tap_ok(mb == 1, "%s %s: at most one packet per link per step (%d)", a.name, buf, mb);
	tc_verify_report_free(&r);
	tc_sched_free(s);
}

/* The paper's partial cycles for one odd side (the library prefers full cycles there). */
static void test_ham2_partial_one(int n1, int n2)
{
	struct tc_algo a = { .name = "gossip-ham2(partial)", .coll = TC_ALLGATHER,
			     .build = __tc_gossip_ham2_partial };
	int dims[2] = { n1, n2 };
	struct tc_verify_report r;
	struct tc_shape sh;
	struct tc_sched *s;
	char buf[64];
	long thm = ((long)n1 * n2 + 1) / 2, slack = (n1 & 1 ? n2 : n1) / 2;
	int mb;

	mkshape(&sh, 2, dims, 3u);
	s = build_checked(&a, &sh, &r);
	if (!s)
		return;
	shape_str(&sh, buf, sizeof(buf));
	mb = max_blocks_per_link_step(s);
	/*
	 * Partial cycles: an out-of-cycle PU hands its packet for the other cycle
	 * to a neighbour, which queues it into a full stream. Theorem 1 is not met
	 * here; each handed packet costs at most one step of a link's queue, so
	 * allow ceil(n1*n2/2) + neven/2, and report.
	 */
	tap_ok(s->nsteps <= (uint32_t)(thm + slack), "%s %s: %u steps <= ceil(n1*n2/2) + neven/2 = %ld + %ld", a.name,
	       buf, s->nsteps, thm, slack);
	tap_ok(mb == 1, "%s %s: at most one packet per link per step (%d)", a.name, buf, mb);
	tap_diag("TABLE %-14s %-14s steps %4u thm_steps %4ld max_link_blocks %5lld", a.name, buf, s->nsteps, thm,
		 (long long)r.max_link_blocks);
	tc_verify_report_free(&r);
	tc_sched_free(s);
}

static void test_ham1_2d_one(int a0, int b0)
{
	const struct tc_algo *a = &tc_algo_gossip_ham1;
	int dims[2] = { a0, b0 };
	struct tc_verify_report r;
	struct tc_shape sh;
	struct tc_sched *s;
	char buf[64];
	long num = -1; /* 4 * (n1*n2/4 + n1/2 + 1), minimised over the admissible orientations (n1 even) */
	int mb;

	for (int t = 0; t < 2; t++) {
		long n1 = t ? b0 : a0, n2 = t ? a0 : b0, v = n1 * n2 + 2 * n1 + 4;

		if (!(n1 & 1) && (num < 0 || v < num))
			num = v;
	}
	mkshape(&sh, 2, dims, 3u);
	s = build_checked(a, &sh, &r);
	if (!s)
		return;
	shape_str(&sh, buf, sizeof(buf));
	mb = max_blocks_per_link_step(s);
	if (num % 4 == 0)
		tap_ok(s->nsteps == (uint32_t)(num / 4), "%s %s: %u steps = n1*n2/4 + n1/2 + 1 = %ld (Thm 2)", a->name,
		       buf, s->nsteps, num / 4);
	else
		tap_ok(s->nsteps <= (uint32_t)((num + 3) / 4), "%s %s: %u steps <= ceil(n1*n2/4 + n1/2 + 1) = %ld (Thm 2)",
		       a->name, buf, s->nsteps, (num + 3) / 4);
	tap_ok(mb == 1, "%s %s: at most one packet per link per step (%d)", a->name, buf, mb);
	tap_diag("TABLE %-14s %-14s steps %4u thm_steps %4.2f max_link_blocks %5lld thm %5s lb_links %5ld lower_bound_steps %4ld",
		 a->name, buf, s->nsteps, num / 4.0, (long long)r.max_link_blocks, "-", (long)(sh.nodes - 1 + 3) / 4,
		 lower_bound_steps(&sh));
	tc_verify_report_free(&r);
	tc_sched_free(s);
}

/*
 * Both sides odd (lib/algorithms/allgather/gossip_ham1.c): with p rows along the strips and
 * q columns, the band layout has D = R PUs on both cycles when R = (-p) mod q
 * is odd (one band), else D = R + q (three bands, which need p > 3). Each
 * cycle then holds (p*q + D)/2 PUs and the engine takes floor(m/2) + 1 steps.
 * With q = 5 and p >= 11 no band layout of the family closes (searched
 * exhaustively), and 3 x 3 uses the square pattern (D = 3, same count). The
 * library takes the orientation with the smaller D; where that count exceeds
 * ceil(Theorem 2) + 1 (n1 = the smaller side) it searches layouts with
 * several staircases and one band, which on 5 x 13 finds five staircases
 * and a single D (so D = 1 there); the rest (5 x 15) falls back to one packet
 * on two full Hamiltonian cycles, (N-1)/2 steps.
 */
static int odd_avail(int p, int q)
{
	int r = (q - p % q) % q;

	return (r & 1) || (p > 3 && !(q == 5 && p >= 11)) || (p == 3 && q == 3);
}

static int odd_d(int p, int q)
{
	int r = (q - p % q) % q;

	return (r & 1) ? r : r + q;
}

static void test_ham1_odd_one(int a0, int b0)
{
	const struct tc_algo *a = &tc_algo_gossip_ham1;
	int dims[2] = { a0, b0 }, d = -1, mn = a0 < b0 ? a0 : b0;
	struct tc_verify_report r;
	struct tc_shape sh;
	struct tc_sched *s;
	char buf[64];
	long m, want, thm = ((long)a0 * b0 + 2L * mn + 4 + 3) / 4; /* ceil(n1*n2/4 + n1/2 + 1) */
	int mb;

	for (int t = 0; t < 2; t++) {
		int p = t ? b0 : a0, q = t ? a0 : b0;

		if (odd_avail(p, q) && (d < 0 || odd_d(p, q) < d))
			d = odd_d(p, q);
	}
	if (a0 * b0 == 75)
		d = 5; /* 5 x 15: no band layout; the solver-found table, five D PUs, two cycles of 40 */
	mkshape(&sh, 2, dims, 3u);
	shape_str(&sh, buf, sizeof(buf));
	m = ((long)a0 * b0 + d) / 2;
	if (d >= 0 && m / 2 + 1 > thm + 1 && a0 * b0 == 65) {
		d = 1; /* 5 x 13: five staircases, one band of one D PU */
		m = ((long)a0 * b0 + d) / 2;
	}
	want = m / 2 + 1;
	if (d < 0 || want > thm + 1) {
		/* no layout: one packet on two full Hamiltonian cycles, (N-1)/2 steps */
		s = build_checked(a, &sh, &r);
		if (!s)
			return;
		tap_ok(s->nsteps == (uint32_t)(sh.nodes - 1) / 2 && strstr(s->cite, "fallback"),
		       "%s %s: no partial-cycle layout; full-cycle fallback in %u steps = (N-1)/2 = %d (ceil(Thm 2) = %ld)",
		       a->name, buf, s->nsteps, (sh.nodes - 1) / 2, thm);
		mb = max_blocks_per_link_step(s);
		tap_ok(mb == 1, "%s %s: at most one packet per link per step (%d)", a->name, buf, mb);
		tc_verify_report_free(&r);
		tc_sched_free(s);
		return;
	}
	s = build_checked(a, &sh, &r);
	if (!s)
		return;
	tap_ok(s->nsteps == (uint32_t)want,
	       "%s %s: %u steps = floor(m/2) + 1 = %ld, m = (n1*n2 + D)/2 = %ld, D = %d (ceil(Thm 2) = %ld)", a->name,
	       buf, s->nsteps, want, m, d, thm);
	tap_ok(s->nsteps <= (uint32_t)(thm + 1), "%s %s: %u steps <= ceil(n1*n2/4 + n1/2 + 1) + 1 = %ld", a->name, buf,
	       s->nsteps, thm + 1);
	mb = max_blocks_per_link_step(s);
	tap_ok(mb == 1, "%s %s: at most one packet per link per step (%d)", a->name, buf, mb);
	tap_diag("TABLE %-14s %-14s steps %4u thm_steps %4ld max_link_blocks %5lld thm %5s lb_links %5ld lower_bound_steps %4ld  (odd x odd, D %d)",
		 a->name, buf, s->nsteps, thm, (long long)r.max_link_blocks, "-", (long)(sh.nodes - 1 + 3) / 4,
		 lower_bound_steps(&sh), d);
	tc_verify_report_free(&r);
	tc_sched_free(s);
}

/*
 * d-D reactor (Theorems 3 and 4): P/(2d) + P/(2*n1) + 1 steps with n2..nd
 * multiples of d, n1 the rod side (the longest admissible); for d >= 4 the
 * rod PUs are fed through relay segments of d links, for d >= 5 the zigzag
 * PUs through segments of d - 1 links. Built once through the engine's
 * report; the algorithm's entry point must give the same schedule size
 * (checked on the smaller shapes).
 */
static void test_ham1_kd_one(int ndims, const int *dims)
{
	const struct tc_algo *a = &tc_algo_gossip_ham1;
	struct tc_gossip_info info;
	struct tc_verify_report r;
	struct tc_shape sh;
	struct tc_sched *s = NULL, *s2 = NULL;
	const char *why = "";
	char buf[64];
	long best = -1, p, n1, den, num, thm, rods;
	int mb, err;

	mkshape(&sh, ndims, dims, (1u << ndims) - 1);
	for (int rod = 0; rod < ndims; rod++) {
		int ok = dims[rod] >= ndims;

		for (int e = 0; e < ndims; e++)
			if (e != rod && dims[e] % ndims)
				ok = 0;
		if (ok && (best < 0 || dims[rod] > dims[best]))
			best = rod;
	}
	err = __tc_gossip_ham1_kd_info(&sh, &s, &why, &info);
	s = check_built(a, &sh, s, err, why, &r);
	if (!s)
		return;
	shape_str(&sh, buf, sizeof(buf));
	p = sh.nodes;
	n1 = dims[best];
	den = 2L * ndims * n1;
	num = p * n1 + p * ndims + den; /* (P/(2d) + P/(2 n1) + 1) * den */
	thm = (num + den - 1) / den;
	if (num % den == 0)
		tap_ok(s->nsteps == (uint32_t)thm, "%s %s: %u steps = P/(2d) + P/(2 n1) + 1 = %ld (Thm %d)", a->name,
		       buf, s->nsteps, thm, ndims == 3 ? 3 : 4);
	else
		tap_ok(s->nsteps <= (uint32_t)thm, "%s %s: %u steps <= ceil(P/(2d) + P/(2 n1) + 1) = %ld (Thm %d)",
		       a->name, buf, s->nsteps, thm, ndims == 3 ? 3 : 4);
	mb = max_blocks_per_link_step(s);
	tap_ok(mb == 1, "%s %s: at most one packet per link per step (%d)", a->name, buf, mb);
	/* relay segments: one from each rod PU (P * (n1 - d) / n1) in d >= 4, from each zigzag PU too in d >= 5 */
	rods = ndims >= 5 ? p : ndims == 4 ? p * (n1 - ndims) / n1 : 0;
	tap_ok(info.ncycles == ndims && info.segments == rods, "%s %s: %d cycles, %d relay segments (want %d, %ld)",
	       a->name, buf, info.ncycles, info.segments, ndims, rods);
	if (p <= 1000) {
		err = a->build(&sh, &s2, &why);
		tap_ok(!err && s2 && s2->nsteps == s->nsteps && s2->nmsgs == s->nmsgs,
		       "%s %s: the algorithm's entry point builds the same schedule size", a->name, buf);
		tc_sched_free(s2);
	}
	tap_diag("TABLE %-14s %-14s steps %4u thm_steps %4ld max_link_blocks %5lld thm %5s lb_links %5ld lower_bound_steps %4ld",
		 a->name, buf, s->nsteps, thm, (long long)r.max_link_blocks, "-",
		 (long)(sh.nodes - 1 + 2 * ndims - 1) / (2 * ndims), lower_bound_steps(&sh));
	tc_verify_report_free(&r);
	tc_sched_free(s);
}

static void test_gossip(void)
{
	static const int ham2[][2] = { { 4, 4 }, { 6, 6 }, { 8, 8 }, { 10, 10 }, { 12, 12 }, { 16, 16 }, { 4, 8 },
				       { 6, 10 }, { 16, 4 }, { 4, 5 }, { 6, 7 }, { 8, 3 }, { 16, 15 }, { 10, 9 },
				       { 5, 4 }, { 3, 8 }, { 7, 6 }, { 15, 16 }, { 9, 12 }, { 3, 3 }, { 5, 5 },
				       { 7, 7 }, { 9, 9 }, { 11, 11 }, { 13, 13 }, { 15, 15 }, { 3, 5 }, { 5, 7 },
				       { 7, 9 }, { 9, 15 }, { 6, 5 }, { 8, 7 } };
	static const int ham1[][2] = { { 4, 4 }, { 6, 6 }, { 8, 8 }, { 12, 12 }, { 16, 16 }, { 4, 8 }, { 8, 4 },
				       { 6, 10 }, { 16, 6 }, { 4, 5 }, { 6, 7 }, { 8, 3 }, { 10, 9 }, { 16, 15 },
				       { 5, 4 }, { 3, 8 }, { 7, 6 }, { 9, 12 } };
	/* odd x odd with the longer side first (the other orientation of the loop below) */
	static const int odd[][2] = { { 5, 3 }, { 7, 5 }, { 9, 7 }, { 11, 5 }, { 13, 5 }, { 15, 9 }, { 15, 7 }, { 15, 5 } };
	static const int kd3[][3] = { { 4, 3, 3 }, { 5, 3, 3 }, { 8, 3, 3 }, { 4, 6, 6 }, { 6, 6, 6 },
				      { 3, 3, 7 }, { 6, 3, 6 }, { 7, 6, 6 }, { 3, 3, 3 } };
	static const int kd4[][4] = { { 4, 4, 4, 4 }, { 5, 4, 4, 4 }, { 6, 4, 4, 8 }, { 8, 4, 4, 4 },
				      { 4, 4, 4, 8 }, { 7, 4, 4, 4 }, { 5, 4, 4, 8 }, { 6, 4, 4, 4 } };

	for (size_t i = 0; i < sizeof(ham2) / sizeof(ham2[0]); i++) {
		test_ham2_one(ham2[i][0], ham2[i][1]);
		if ((ham2[i][0] & 1) != (ham2[i][1] & 1))
			test_ham2_partial_one(ham2[i][0], ham2[i][1]);
	}
	for (size_t i = 0; i < sizeof(ham1) / sizeof(ham1[0]); i++)
		test_ham1_2d_one(ham1[i][0], ham1[i][1]);
	for (int a0 = 3; a0 <= 15; a0 += 2)
		for (int b0 = a0; b0 <= 15; b0 += 2)
			test_ham1_odd_one(a0, b0);
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		test_ham1_odd_one(odd[i][0], odd[i][1]);
	test_ham1_full_cycles_one(5, 15);
	test_ham1_full_cycles_one(7, 9);
	for (size_t i = 0; i < sizeof(kd3) / sizeof(kd3[0]); i++)
		test_ham1_kd_one(3, kd3[i]);
	for (size_t i = 0; i < sizeof(kd4) / sizeof(kd4[0]); i++)
		test_ham1_kd_one(4, kd4[i]);
	{
		static const int kd5[5] = { 5, 5, 5, 5, 5 };

		test_ham1_kd_one(5, kd5);
	}
}

/* ---- bad input: a clear -errno and a reason ---- */

static void test_errors(void)
{
	struct tc_shape sh;
	struct tc_sched *s = NULL;
	const char *why = NULL;
	int err;
	int d3[3] = { 4, 4, 4 }, d2[2] = { 4, 4 };

	mkshape(&sh, 3, d3, 7u);
	err = tc_algo_bcast_pattern.build(&sh, &s, &why);
	tap_ok(err == -EOPNOTSUPP && why && *why, "bcast-pattern 4x4x4: -EOPNOTSUPP (%s)", why ? why : "");
	why = NULL;
	mkshape(&sh, 2, d2, 0u);
	err = tc_algo_gossip_ham2.build(&sh, &s, &why);
	tap_ok(err == -EOPNOTSUPP && why && *why, "gossip-ham2 4x4 mesh: -EOPNOTSUPP (%s)", why ? why : "");
	why = NULL;
	err = tc_algo_gossip_ham1.build(&sh, &s, &why);
	tap_ok(err == -EOPNOTSUPP && why && *why, "gossip-ham1 4x4 mesh: -EOPNOTSUPP (%s)", why ? why : "");
	why = NULL;
	mkshape(&sh, 3, d3, 7u);
	err = tc_algo_gossip_ham2.build(&sh, &s, &why);
	tap_ok(err == -EOPNOTSUPP && why && *why, "gossip-ham2 4x4x4: -EOPNOTSUPP (%s)", why ? why : "");
	why = NULL;
	tc_shape_init(&sh, 2, d2, 3u, 1);
	err = tc_algo_bcast_pattern.build(&sh, &s, &why);
	tap_ok(err == -EOPNOTSUPP && why && *why, "bcast-pattern one-port: -EOPNOTSUPP (%s)", why ? why : "");
	why = NULL;
	{
		int d[3] = { 4, 4, 5 };

		mkshape(&sh, 3, d, 7u);
		err = tc_algo_gossip_ham1.build(&sh, &s, &why);
		tap_ok(err == -EOPNOTSUPP && why && *why, "gossip-ham1 4x4x5: -EOPNOTSUPP (%s)", why ? why : "");
	}
	why = NULL;
	{
		/* one side a multiple of 3 only: no rod has the two others multiples of 3 (4x6x9 builds: test_gossip3d) */
		int d[3] = { 6, 4, 5 };

		mkshape(&sh, 3, d, 7u);
		err = tc_algo_gossip_ham1.build(&sh, &s, &why);
		tap_ok(err == -EOPNOTSUPP && why && *why, "gossip-ham1 6x4x5: -EOPNOTSUPP (%s)", why ? why : "");
	}

}

int main(void)
{
	test_errors();
	test_bcast();
	test_gossip();
	return tap_done();
}
