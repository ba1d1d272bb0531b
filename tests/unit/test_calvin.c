// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The recursive all-to-all broadcast of Calvin, Perennes and Trystram
 * (lib/algorithms/allgather/calvin.c) against the cost the All-to-All
 * Communication slides give it ("Comparisons"): on an n x n torus
 * 2 log5(n^2) startups, 3/2 (n-1) hops, (n^2-1)/2 blocks per channel.
 *
 * On every odd n x n torus from 3x3 to 27x27 the schedule verifies, every
 * byte arrives in the simulator, and the counts are read from the schedule
 * itself: its steps, the route length of each step's messages summed over the
 * steps (hops), and the largest message of each step summed over the steps
 * (the cost model's lockstep blocks: what a channel carries when messages do
 * not share links). For n = 5^j these are the slides' three formulas; for
 * other odd n the steps are the sum of (p - 1) over n's prime factors and the
 * hops and blocks the same formulas. The cost model's critical path is
 * checked too: on a prime n (no link shared) it equals the formula; on 25x25
 * the ring messages with stride 5 share links five at a time, and the cost
 * model, which serves a link one message at a time, gives n - 1 startups and
 * the busiest link's load as transmission. Every shape it cannot serve is
 * refused with a reason, and auto prices it as a candidate.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/sim_run.h"
#include "core/verify.h"
#include "select/select.h"
#include "tap.h"

#define BLOCK 16 /* bytes per block in the simulator runs */

static uint8_t pattern(int origin, size_t j)
{
	uint32_t x = (uint32_t)origin * 2654435761u ^ (uint32_t)j * 97u;

	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	return (uint8_t)x;
}

/* Every byte every node receives, against the reference. */
static int run_sim(const struct tc_sched *s, char *why, size_t len)
{
	const int n = s->shape.nodes;
	const size_t rbytes = (size_t)n * BLOCK;
	void **snd = calloc(n, sizeof(void *)), **rcv = calloc(n, sizeof(void *));
	int err = -ENOMEM;

	snprintf(why, len, "out of memory");
	for (int x = 0; snd && rcv && x < n; x++) {
		snd[x] = malloc(BLOCK);
		rcv[x] = malloc(rbytes);
		if (!snd[x] || !rcv[x])
			goto out;
		for (size_t j = 0; j < BLOCK; j++)
			((uint8_t *)snd[x])[j] = pattern(x, j);
		memset(rcv[x], 0xa5, rbytes);
	}
	if (!snd || !rcv)
		goto out;
	err = tc_sim_run(s, BLOCK, snd, rcv);
	snprintf(why, len, "tc_sim_run: %d", err);
	for (int d = 0; !err && d < n; d++)
		for (size_t j = 0; !err && j < rbytes; j++)
			if (((uint8_t *)rcv[d])[j] != pattern(j / BLOCK, j % BLOCK)) {
				snprintf(why, len, "node %d: byte %zu of the block from %zu is %#x, want %#x", d, j % BLOCK,
					 j / BLOCK, ((uint8_t *)rcv[d])[j], pattern(j / BLOCK, j % BLOCK));
				err = -EPROTO;
			}
out:
	for (int x = 0; snd && rcv && x < n; x++) {
		free(snd[x]);
		free(rcv[x]);
	}
	free(snd);
	free(rcv);
	return err;
}

/* j with n = 5^j, or -1. */
static int log5(int n)
{
	int j = 0;

	for (; n > 1 && n % 5 == 0; n /= 5)
		j++;
	return n == 1 ? j : -1;
}

/* Sum of (p - 1) over the prime factors of n, with multiplicity. */
static int factor_steps(int n)
{
	int sum = 0;

	for (int p = 2; n > 1; p++)
		for (; n % p == 0; n /= p)
			sum += p - 1;
	return sum;
}

static int is_prime(int n)
{
	return factor_steps(n) == n - 1;
}

/* Hops: per step the route length every message of it has, summed (-1 if a step mixes lengths). */
static long step_hops(const struct tc_sched *s)
{
	long sum = 0;

	for (uint32_t st = 0; st < s->nsteps; st++) {
		int len = -1;

		for (uint32_t i = s->step_first[st]; i < s->step_first[st + 1]; i++) {
			int h = abs(s->msgs[i].route[0]) + abs(s->msgs[i].route[1]);

			if (len >= 0 && h != len)
				return -1;
			len = h;
		}
		sum += len;
	}
	return sum;
}

/*
 * The busiest link on n = 5^j: level i (stride 5^i) runs two rings of two
 * steps whose messages carry 25^(j-1-i) and 5 * 25^(j-1-i) blocks, and 5^i of
 * them cross each link of dimension 0.
 */
static double shared_link_load(int j)
{
	double sum = 0;

	for (int i = 0; i < j; i++)
		sum += 2 * pow(5, i) * 6 * pow(25, j - 1 - i);
	return sum;
}

static void check_counts(const struct tc_sched *s, int n, const struct tc_cost *c, const struct tc_verify_report *r)
{
	const int j = log5(n);
	const double blocks = (n * n - 1) / 2.0, hops = 1.5 * (n - 1);
	const long want_steps = j > 0 ? lround(2 * log(n * n) / log(5)) : factor_steps(n);

	tap_ok(s->nsteps == want_steps, "calvin on %dx%d: %u steps, %s %ld", n, n, s->nsteps,
	       j > 0 ? "the slides' 2 log5(n^2)" : "sum of (p-1) over the prime factors", want_steps);
	tap_ok(step_hops(s) == lround(hops), "calvin on %dx%d: %ld hops over the steps, the slides' 3/2 (n-1) = %.0f", n,
	       n, step_hops(s), hops);
	tap_ok(c->lockstep_blocks == blocks,
	       "calvin on %dx%d: %.0f blocks per channel (largest message per step), the slides' (n^2-1)/2 = %.0f", n, n,
	       c->lockstep_blocks, blocks);
	if (is_prime(n)) {
		tap_ok(c->steps == s->nsteps && c->transmission_blocks == blocks && r->max_link_blocks == blocks &&
			       (s->claims & TC_CLAIM_CONTENTION_FREE),
		       "calvin on %dx%d: contention-free, cost model %u startups, %.0f blocks, busiest link %lld", n, n,
		       c->steps, c->transmission_blocks, (long long)r->max_link_blocks);
	} else if (j > 0) {
		tap_ok(c->steps == (uint32_t)n - 1 && c->transmission_blocks == shared_link_load(j) &&
			       r->max_link_blocks == shared_link_load(j) && !(s->claims & TC_CLAIM_CONTENTION_FREE),
		       "calvin on %dx%d: links shared by stride, cost model %u startups (n-1 = %d), %.0f blocks and busiest link %lld (want %.0f)",
		       n, n, c->steps, n - 1, c->transmission_blocks, (long long)r->max_link_blocks,
		       shared_link_load(j));
	} else {
		tap_ok(c->transmission_blocks >= blocks && !(s->claims & TC_CLAIM_CONTENTION_FREE),
		       "calvin on %dx%d: links shared by stride, cost model %u startups, %.0f blocks, busiest link %lld",
		       n, n, c->steps, c->transmission_blocks, (long long)r->max_link_blocks);
	}
}

static void check_shape(int n)
{
	struct tc_verify_report r;
	struct tc_sched *s = NULL;
	struct tc_shape sh;
	struct tc_cost c;
	const char *why = NULL;
	char dims[32], msg[256];
	int err;

	snprintf(dims, sizeof(dims), "%dx%d", n, n);
	err = tc_shape_parse(&sh, dims, 0, 0);
	if (!err)
		err = tc_algo_calvin.build(&sh, &s, &why);
	if (!tap_ok(!err, "calvin on %s: builds%s%s", dims, why ? ": " : "", why ? why : ""))
		return;
	err = tc_verify(s, &r);
	tap_ok(!err && r.ok, "calvin on %s: verifies%s%s", dims, r.ok ? "" : ": ", r.first_violation);
	if (!tc_cost_eval(s, NULL, &c))
		check_counts(s, n, &c, &r);
	else
		tap_ok(0, "calvin on %s: priced (%s)", dims, tc_last_error());
	tc_verify_report_free(&r);
	err = run_sim(s, msg, sizeof(msg));
	tap_ok(!err, "calvin on %s: simulator, every byte as the reference%s%s", dims, err ? ": " : "", err ? msg : "");
	tc_sched_free(s);
}

static void check_refused(const char *dims, int mesh, int one_port)
{
	struct tc_sched *s = NULL;
	struct tc_shape sh;
	const char *why = NULL;
	int err = tc_shape_parse(&sh, dims, mesh, one_port);

	if (!err)
		err = tc_algo_calvin.build(&sh, &s, &why);
	tap_ok(err == -EOPNOTSUPP && !s && why && !strncmp(why, "calvin: ", 8), "calvin refuses %s%s%s: %s", dims,
	       mesh ? " mesh" : "", one_port ? " one-port" : "", why ? why : "(no reason)");
	tc_sched_free(s);
}

/* auto prices it wherever it builds; it is no candidate, with the reason, where it does not. */
static void check_auto(const char *dims, int want)
{
	struct tc_auto_choice ch;
	struct tc_shape sh;
	int i = 0, err;

	err = tc_shape_parse(&sh, dims, 0, 0);
	if (!err)
		err = tc_auto_choose(TC_ALLGATHER, &sh, 64, NULL, &ch);
	while (!err && i < ch.ncand && ch.cand[i].algo != &tc_algo_calvin)
		i++;
	if (!tap_ok(!err && i < ch.ncand, "auto on %s: calvin is one of its candidates", dims))
		return;
	tap_ok(want ? !ch.cand[i].err && ch.cand[i].us > 0 : ch.cand[i].err && strstr(ch.cand[i].why, "calvin"),
	       "auto on %s: calvin %s (%.3f us, %s)", dims, want ? "priced" : "refused", ch.cand[i].us,
	       ch.cand[i].err ? ch.cand[i].why : "builds and verifies");
}

int main(void)
{
	static const int sides[] = { 3, 5, 7, 9, 11, 15, 21, 25, 27 };

	for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++)
		check_shape(sides[i]);
	check_refused("4x4", 0, 0);
	check_refused("10x10", 0, 0);
	check_refused("5x7", 0, 0);
	check_refused("5x5", 1, 0);
	check_refused("5x5", 0, 1);
	check_refused("25", 0, 0);
	check_refused("5x5x5", 0, 0);
	check_auto("5x5", 1);
	check_auto("25x25", 1);
	check_auto("4x4", 0);
	return tap_done();
}
