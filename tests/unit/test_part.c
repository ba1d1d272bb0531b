// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One node's part (core/part.h), generated alone, against the whole
 * schedule: for every algorithm with a part generator, on every 2D torus up
 * to 16x16, one-port and mesh 2D shapes, 3D and 4D shapes of both parities,
 * rings,
 * the whole schedule passes the verifier (or the shape is refused by both),
 * and every node's part generated alone is identical to that node's part
 * cut from the whole schedule. Every receive of a generated part is then
 * found again in the sender's part generated for that one message
 * (tc_part_only), as the run-time check does. A translation-invariant
 * schedule verified and priced from its cell gives what the whole one gives;
 * so do one priced from the parts of a cell of nodes, one priced by its own
 * function from its messages, and one priced as the other algorithm whose
 * schedule it is on the shape (pad where no node is imaginary).
 * The shapes that take the fallback (whole schedule, cut) are counted and
 * listed per algorithm, and one outside the few where it is still allowed
 * (may_take_whole) fails.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cost.h"
#include "core/part.h"
#include "core/part_price.h"
#include "core/part_sym.h"
#include "core/verify.h"
#include "select/select.h"
#include "tap.h"

struct shape_case {
	const char *dims;
	int mesh;
	int one_port;
};

/* Beyond every 2D torus r x c, 2 <= r, c <= 16 (all-port). */
static const struct shape_case more[] = {
	{ "2x2", 0, 1 },     { "3x3", 0, 1 },	  { "4x4", 0, 1 },     { "5x7", 0, 1 },	    { "6x6", 0, 1 },
	{ "8x8", 0, 1 },     { "4x12", 0, 1 },	  { "16x16", 0, 1 },   { "3x3", 1, 0 },	    { "4x4", 1, 0 },
	{ "5x6", 1, 0 },     { "8x8", 1, 0 },	  { "4x4", 1, 1 },     { "2x3x4", 0, 0 },   { "3x3x3", 0, 0 },
	{ "4x4x4", 0, 0 },   { "3x5x3", 0, 0 },	  { "4x6x8", 0, 0 },   { "5x5x5", 0, 0 },   { "6x6x6", 0, 0 },
	{ "3x3x3", 1, 0 },   { "4x4x4", 0, 1 },	  { "3x3x3", 0, 1 },   { "2x2x2x2", 0, 0 }, { "3x3x3x3", 0, 0 },
	{ "2x3x2x3", 0, 0 }, { "4x4x2x2", 0, 0 }, { "2x2x2x2", 0, 1 }, { "3x3x3x3", 0, 1 },
	{ "2", 0, 0 },	     { "4", 0, 0 },	  { "6", 0, 0 },       { "7", 0, 0 },	    { "10", 0, 0 },
	{ "16", 0, 0 },	     { "8", 1, 0 },	  { "8", 0, 1 },
	/* mt3's period (6) below a whole side */
	{ "12x6x6", 0, 1 },
	/* mtk and pt4 on 4-D (sides 4 or multiples of 8); pt4's period (8) below a whole side */
	{ "4x4x4x4", 0, 1 }, { "8x4x4x4", 0, 1 }, { "16x4x4x4", 0, 1 },
};

/*
 * Shapes for one algorithm beyond the shapes above. gossip-ham1's reactor
 * cycles: 4-D (sides but one multiples of 4) and a 3-D shape whose walk
 * changes plane by position. allport-kd's ring variants, which its part
 * generator derives per block (kd_path): split antipodes, Stage 3 first and
 * later starts (4x8x12), even rings relayed with waits (4x6x10, 6x6x10),
 * sides of 2 only (2x2x2).
 */
static const struct {
	const char *algo;
	struct shape_case sh;
} algo_more[] = {
	{ "gossip-ham1", { "4x4x4x4", 0, 0 } }, { "gossip-ham1", { "5x4x4x4", 0, 0 } },
	{ "gossip-ham1", { "4x6x9", 0, 0 } },	{ "allport-kd", { "4x8x12", 0, 0 } },
	{ "allport-kd", { "4x6x10", 0, 0 } },	{ "allport-kd", { "6x6x10", 0, 0 } },
	{ "allport-kd", { "2x2x2", 0, 0 } },	{ "gossip-ham2", { "18x18", 0, 0 } },
	{ "gossip-ham2", { "32x32", 0, 0 } },	{ "gossip-ham2", { "17x20", 0, 0 } },
};

/* Shapes of the current algorithm whose parts its generator leaves to the fallback (TC_PART_WHOLE). */
static int nwhole;
static char whole_shapes[512];

/*
 * The shapes where a generator may still leave a node's part to the
 * fallback (docs/library.md lists them): opt2d's meshes (every block's
 * timetable is searched). gossip-ham2 would on an odd side where no
 * square-swap decomposition is found (its partial cycles' queues are
 * settled by running the whole fabric), but one is found on every shape
 * here. Anywhere else the fallback is a failure.
 */
static int may_take_whole(const struct tc_algo *a, const struct tc_shape *sh)
{
	if (!strcmp(a->name, "opt2d"))
		return sh->wrap_mask != (1u << sh->ndims) - 1;
	return 0;
}

/* Compare every node's generated part with its cut from s; local-check each receive. */
static int check_nodes(const struct tc_algo *a, const struct tc_sched *s, char *why, size_t len)
{
	for (int n = 0; n < s->shape.nodes; n++) {
		struct tc_part *gen = NULL, *cut = NULL;
		const char *w = NULL;
		int err, same;

		err = tc_part_build(a->coll, a, &s->shape, n, &gen, &w);
		if (err) {
			snprintf(why, len, "node %d: part generator fails: %s", n, w ? w : tc_last_error());
			return 0;
		}
		err = tc_part_extract(s, n, &cut);
		if (err) {
			tc_part_free(gen);
			snprintf(why, len, "node %d: cutting the whole schedule fails: %s", n, tc_last_error());
			return 0;
		}
		/* tc_part_build checked gen against its peers (tc_part_check) */
		if (!n && gen->extracted)
			nwhole++;
		same = tc_part_equal(gen, cut, why, len);
		tc_part_free(cut);
		tc_part_free(gen);
		if (!same)
			return 0;
	}
	return 1;
}

/*
 * A translation-invariant algorithm: its whole schedule verified and priced
 * from the cell (tc_sched_check_translated) must give what the whole
 * schedule gives: verdict, messages, block moves, every cost column.
 */
static void check_translated(const struct tc_algo *a, const struct tc_sched *s, const char *name)
{
	struct tc_cost_params p;
	struct tc_verify_report r;
	struct tc_cost whole, cell;
	struct tc_sym_totals tot;
	const char *why = NULL;
	double t = 0;
	int err, ok;

	tc_cost_params_default(&p);
	p.block_bytes = 64;
	if (tc_cost_eval(s, &p, &whole)) {
		tap_ok(0, "%s %s: pricing the whole schedule fails: %s", a->name, name, tc_last_error());
		return;
	}
	err = tc_sched_check_translated(a, &s->shape, &p, &p.block_bytes, 1, &t, &r, &cell, &tot, &why);
	ok = !err && r.ok && tot.msgs == s->nmsgs && tot.blks == s->nblks && tot.steps == s->nsteps &&
	     cell.transmission_blocks == whole.transmission_blocks && cell.steps == whole.steps &&
	     cell.lockstep_blocks == whole.lockstep_blocks && cell.max_link_blocks == whole.max_link_blocks &&
	     t == whole.time_us;
	tap_ok(ok, "%s %s: verified and priced from a cell of %d sources as whole (%d: %s; messages %llu/%u, block moves %llu/%u, transmission %g/%g, startups %u/%u, time %g/%g us)",
	       a->name, name, tot.cell_nodes, err, err ? (err == -EPROTO ? r.first_violation : why) : "ok",
	       (unsigned long long)tot.msgs, s->nmsgs, (unsigned long long)tot.blks, s->nblks,
	       cell.transmission_blocks, whole.transmission_blocks, cell.steps, whole.steps, t, whole.time_us);
	tc_verify_report_free(&r);
}

/*
 * An algorithm priced from its cell's parts (tc_sched_price_parts) must be
 * priced as its whole schedule is: every cost column the model computes from
 * messages, at two block sizes, for the router, direct (verbs) and host
 * (simulator) models.
 */
static void check_priced(const struct tc_algo *a, const struct tc_sched *s, const char *name)
{
	static const unsigned int flags[3] = { 0, TC_COST_DIRECT, TC_COST_HOST };
	const size_t sizes[2] = { 8, 4096 };
	struct tc_price_totals tot;
	const char *why = NULL;
	int ok = 1, err = 0;
	char msg[300] = "";

	for (int f = 0; f < 3 && ok; f++) {
		struct tc_cost_params p;
		struct tc_cost whole, part;
		double tw[2], tp[2];

		tc_cost_params_default(&p);
		p.flags = flags[f];
		p.lat_us = flags[f] ? 2.0 : 0;
		p.msg_us = flags[f] ? 0.5 : 0;
		if (tc_cost_eval_sizes(s, &p, sizes, 2, tw, &whole)) {
			snprintf(msg, sizeof(msg), "pricing the whole schedule fails: %s", tc_last_error());
			ok = 0;
			break;
		}
		err = tc_sched_price_parts(a, &s->shape, &p, sizes, 2, tp, &part, &tot, &why);
		if (err == -EOPNOTSUPP && why && strstr(why, "leaves this shape to the whole schedule")) {
			/* no part alone on this shape (opt2d's meshes): refused, priced whole */
			snprintf(msg, sizeof(msg), "no part alone: refused (%s)", why);
			break;
		}
		if (!(s->claims & TC_CLAIM_CONTENTION_FREE)) {
			/* messages that share links: refused, priced whole */
			ok = err == -EOPNOTSUPP;
			snprintf(msg, sizeof(msg), "links shared: refused (%d: %s)", err, why ? why : "");
			break;
		}
		ok = !err && tot.msgs == s->nmsgs && tot.blks == s->nblks && part.steps == whole.steps &&
		     part.transmission_blocks == whole.transmission_blocks &&
		     part.lockstep_blocks == whole.lockstep_blocks && part.max_link_blocks == whole.max_link_blocks &&
		     fabs(tp[0] - tw[0]) <= 1e-9 * tw[0] && fabs(tp[1] - tw[1]) <= 1e-9 * tw[1];
		snprintf(msg, sizeof(msg),
			 "flags %u: %d: %s; messages %llu/%u, block moves %llu/%u, startups %u/%u, transmission %g/%g, time %g/%g and %g/%g us",
			 flags[f], err, err ? why : "ok", (unsigned long long)tot.msgs, s->nmsgs,
			 (unsigned long long)tot.blks, s->nblks, part.steps, whole.steps, part.transmission_blocks,
			 whole.transmission_blocks, tp[0], tw[0], tp[1], tw[1]);
	}
	tap_ok(ok, "%s %s: priced from the parts of a cell as whole, or refused where links are shared (%s)", a->name,
	       name, msg);
}

/*
 * An algorithm's lower bound (send_steps): some node of the whole schedule
 * sends in at least that many steps, every message carries a block, and
 * the bound is at most the whole schedule's price under the router, direct
 * and host models.
 */
static void check_bound(const struct tc_algo *a, const struct tc_sched *s, const char *name)
{
	static const unsigned int flags[3] = { 0, TC_COST_DIRECT, TC_COST_HOST };
	const size_t sizes[2] = { 1, 65536 };
	int npk = 0, ok;
	uint64_t steps = a->send_steps(&s->shape, &npk), most = 0;
	double worst = 0;

	for (int n = 0; n < s->shape.nodes; n++) {
		uint64_t k = 0;

		for (uint32_t st = 0; st < s->nsteps; st++) {
			uint32_t lo = s->node_first[(size_t)n * s->nsteps + st], hi = s->node_first[(size_t)n * s->nsteps + st + 1];

			k += lo < hi && s->msgs[s->node_msgs[lo]].src == n;
		}
		most = k > most ? k : most;
	}
	ok = steps > 0 && most >= steps && npk == s->npackets;
	for (int f = 0; f < 3 && ok; f++) {
		struct tc_cost_params p;
		struct tc_cost c;
		double t[2];

		tc_cost_params_default(&p);
		p.flags = flags[f];
		p.msg_us = flags[f] ? 0.5 : 0;
		ok = !tc_cost_eval_sizes(s, &p, sizes, 2, t, &c);
		for (int k = 0; k < 2 && ok; k++) {
			double lb = tc_cost_send_steps_us(&p, steps, npk, sizes[k]);

			ok = lb <= t[k] * (1 + 1e-12);
			worst = lb / t[k] > worst ? lb / t[k] : worst;
		}
	}
	tap_ok(ok, "%s %s: lower bound: some node sends in %llu steps (bound %llu), %d packets (%d); the bound is at most the price (up to %.3f of it)",
	       a->name, name, (unsigned long long)most, (unsigned long long)steps, s->npackets, npk, worst);
}

/* Shapes the current algorithm's price function priced, and refused. */
static int nprice_ok, nprice_refused;

/* An algorithm's own price without blocks (struct tc_algo.price) against the whole schedule's. */
static void check_price_fn(const struct tc_algo *a, const struct tc_sched *s, const char *name)
{
	static const unsigned int flags[3] = { 0, TC_COST_DIRECT, TC_COST_HOST };
	const size_t sizes[2] = { 8, 4096 };
	char msg[300] = "", refused[200] = "";
	int ok = 1, priced = 0;

	for (int f = 0; f < 3 && ok; f++) {
		struct tc_cost_params p;
		struct tc_cost whole, c;
		const char *why = NULL;
		double tw[2], tp[2];
		int err;

		tc_cost_params_default(&p);
		p.flags = flags[f];
		p.lat_us = flags[f] ? 2.0 : 0;
		p.msg_us = flags[f] ? 0.5 : 0;
		ok = !tc_cost_eval_sizes(s, &p, sizes, 2, tw, &whole);
		err = a->price(&s->shape, &p, sizes, 2, tp, &c, &why);
		if (ok && err == -EOPNOTSUPP) {
			/* not this shape (opt2d's meshes, even rings, 2x2) or not this model (allport-kd
			 * under TC_COST_DIRECT): priced another way */
			snprintf(refused, sizeof(refused), "flags %u refused: %s", flags[f], why ? why : "");
			continue;
		}
		ok = ok && !err && c.steps == whole.steps && c.transmission_blocks == whole.transmission_blocks &&
		     c.lockstep_blocks == whole.lockstep_blocks && c.max_link_blocks == whole.max_link_blocks &&
		     fabs(tp[0] - tw[0]) <= 1e-9 * tw[0] && fabs(tp[1] - tw[1]) <= 1e-9 * tw[1];
		priced += ok;
		snprintf(msg, sizeof(msg), "flags %u: %d: %s; startups %u/%u, transmission %g/%g, time %g/%g and %g/%g us",
			 flags[f], err, err ? why : "ok", c.steps, whole.steps, c.transmission_blocks,
			 whole.transmission_blocks, tp[0], tw[0], tp[1], tw[1]);
	}
	if (ok && !priced)
		snprintf(msg, sizeof(msg), "%s", refused);
	else if (refused[0])
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "; %s", refused);
	nprice_ok += ok && priced;
	nprice_refused += ok && !priced;
	tap_ok(ok, "%s %s: its price without blocks is the whole schedule's, or it refuses the shape (%s)", a->name,
	       name, msg);
}

/*
 * An algorithm whose schedule on this shape is another's (struct
 * tc_algo.same_as; auto gives it the other's price): the same messages and
 * block moves, and the same price, every cost column, at two block sizes,
 * under the router, direct (verbs) and host (simulator) models.
 */
static void check_same_as(const struct tc_algo *a, const struct tc_algo *b, const struct tc_sched *s,
			  const char *name)
{
	static const unsigned int flags[3] = { 0, TC_COST_DIRECT, TC_COST_HOST };
	const size_t sizes[2] = { 8, 4096 };
	struct tc_sched *o = NULL;
	const char *why = NULL;
	char msg[300] = "";
	int ok;

	ok = !b->build(&s->shape, &o, &why) && o->nmsgs == s->nmsgs && o->nblks == s->nblks &&
	     o->nsteps == s->nsteps && o->claims == s->claims && o->rearranged_blocks == s->rearranged_blocks;
	snprintf(msg, sizeof(msg), "%s: %s; messages %u/%u, block moves %u/%u, claims %#x/%#x", b->name,
		 o ? "built" : why, o ? o->nmsgs : 0, s->nmsgs, o ? o->nblks : 0, s->nblks, o ? o->claims : 0,
		 s->claims);
	for (int f = 0; f < 3 && ok; f++) {
		struct tc_cost_params p;
		struct tc_cost cs, co;
		double ts[2], to[2];

		tc_cost_params_default(&p);
		p.flags = flags[f];
		p.lat_us = flags[f] ? 2.0 : 0;
		p.msg_us = flags[f] ? 0.5 : 0;
		p.rho_us_per_byte = 0.001;
		ok = !tc_cost_eval_sizes(s, &p, sizes, 2, ts, &cs) && !tc_cost_eval_sizes(o, &p, sizes, 2, to, &co) &&
		     cs.steps == co.steps && cs.transmission_blocks == co.transmission_blocks &&
		     cs.lockstep_blocks == co.lockstep_blocks && cs.max_link_blocks == co.max_link_blocks &&
		     ts[0] == to[0] && ts[1] == to[1];
		snprintf(msg, sizeof(msg), "flags %u: startups %u/%u, transmission %g/%g, time %g/%g and %g/%g us",
			 flags[f], cs.steps, co.steps, cs.transmission_blocks, co.transmission_blocks, ts[0], to[0],
			 ts[1], to[1]);
	}
	tap_ok(ok, "%s %s: the same schedule as %s, priced alike (%s)", a->name, name, b->name, msg);
	tc_sched_free(o);
}

static void check_shape(const struct tc_algo *a, const struct tc_shape *sh, const char *name, int *npoints)
{
	struct tc_verify_report r;
	struct tc_sched *s = NULL;
	struct tc_part *p = NULL;
	const char *why = NULL, *pwhy = NULL;
	char msg[512] = "";
	int err, perr, npk;

	err = a->build(sh, &s, &why);
	perr = tc_part_build(a->coll, a, sh, 0, &p, &pwhy);
	tc_part_free(p);
	if (err == -EOPNOTSUPP) {
		/* refused whole: the part generator must refuse too, and no lower bound be given */
		if (perr != -EOPNOTSUPP)
			tap_ok(0, "%s %s: the whole build refuses (%s) but node 0's part gives %d", a->name, name, why,
			       perr);
		if (a->send_steps && a->send_steps(sh, &npk))
			tap_ok(0, "%s %s: the whole build refuses (%s) but a lower bound is given", a->name, name, why);
		return;
	}
	(*npoints)++;
	if (err) {
		tap_ok(0, "%s %s: whole build fails: %s", a->name, name, why ? why : tc_last_error());
		return;
	}
	err = tc_verify(s, &r);
	if (err) {
		tap_ok(0, "%s %s: whole schedule fails verification: %s", a->name, name,
		       err == -EPROTO ? r.first_violation : tc_last_error());
	} else {
		int before = nwhole, ok = check_nodes(a, s, msg, sizeof(msg));

		if (nwhole > before) {
			size_t off = strlen(whole_shapes);

			snprintf(whole_shapes + off, sizeof(whole_shapes) - off, "%s%s", off ? " " : "", name);
		}
		tap_ok(ok, "%s %s: verified whole; every node's part (%d) %s equals its cut%s%s%s", a->name, name,
		       sh->nodes, nwhole > before ? "taken from the whole schedule (the generator's fallback)" : "alone",
		       nwhole > before ? "" : " and checks against its peers", ok ? "" : ": ", ok ? "" : msg);
		if (nwhole > before && !may_take_whole(a, sh))
			tap_ok(0, "%s %s: node 0's part is taken from the whole schedule, where its generator should build it alone",
			       a->name, name);
		if (tc_algo_translated(a, sh))
			check_translated(a, s, name);
		/* the direct schedules' P(P-1) messages priced six times cost minutes on the largest shapes: up to 64 nodes */
		if (a->price && (!(a->flags & TC_ALGO_DIRECT_P2) || sh->nodes <= 64))
			check_price_fn(a, s, name);
		if (a->send_steps && a->send_steps(sh, &npk)) /* 0: no bound known on this shape */
			check_bound(a, s, name);
		if (a->price_mod[0] && ((s->claims & TC_CLAIM_CONTENTION_FREE) || tc_algo_priced_from_parts(a, sh)))
			check_priced(a, s, name);
		if (a->same_as && a->same_as(sh))
			check_same_as(a, a->same_as(sh), s, name);
	}
	tc_verify_report_free(&r);
	tc_sched_free(s);
}

/*
 * The run-time check must fail when one side's generator is wrong: the
 * algorithm's part for bad_node with one block of one of its receives
 * changed (the first receive in step 1 or later), refused naming the
 * algorithm, that step and that peer.
 */
static const struct tc_algo *bad_base;
static int bad_node, bad_step, bad_peer;

static int bad_part(struct tc_part *p, const char **why)
{
	int err = bad_base->part(p, why);

	if (!err && p->node == bad_node)
		for (uint32_t k = 0; k < p->nmsgs; k++)
			if (p->msgs[k].dst == bad_node && p->msgs[k].step >= 1 && p->msgs[k].nblk) {
				struct tc_blk *b = &p->blks[p->msgs[k].blk_off];

				b->a = (b->a + 1) % p->shape.nodes;
				bad_step = (int)p->msgs[k].step;
				bad_peer = p->msgs[k].src;
				break;
			}
	return err;
}

static void check_detects(const struct tc_algo *a, const char *dims, int node)
{
	const struct tc_algo bad = { .name = a->name, .coll = a->coll, .summary = "test", .build = a->build,
				     .part = bad_part };
	char step[32], peer[32];
	struct tc_shape sh;
	struct tc_part *p = NULL;
	const char *why = NULL;
	int err;

	bad_base = a;
	bad_node = node;
	bad_step = bad_peer = -1;
	tc_shape_parse(&sh, dims, 0, 0);
	err = tc_part_build(a->coll, &bad, &sh, node - 1, &p, &why);
	tap_ok(!err, "run-time check: %s %s: an unchanged part (node %d) passes (%d: %s)", a->name, dims, node - 1, err,
	       why ? why : "");
	tc_part_free(p);
	p = NULL;
	err = tc_part_build(a->coll, &bad, &sh, node, &p, &why);
	snprintf(step, sizeof(step), "step %d", bad_step);
	snprintf(peer, sizeof(peer), "peer %d", bad_peer);
	tap_ok(bad_step >= 0 && err == -EPROTO && why && strstr(why, a->name) && strstr(why, step) && strstr(why, peer),
	       "run-time check: %s %s: node %d's receive in step %d from %d with a wrong block is refused naming algorithm, step and peer (%d: %s)",
	       a->name, dims, node, bad_step, bad_peer, err, why ? why : "");
	tc_part_free(p);
}

int main(void)
{
	struct timespec t0, t1;
	int nfall = 0, nconv = 0;
	char fall[1024] = "";

	clock_gettime(CLOCK_MONOTONIC, &t0);
	check_detects(&tc_algo_pairwise, "4x4", 5);
	check_detects(&tc_algo_saad_schultz, "4x6", 5);
	check_detects(&tc_algo_bcast_pattern, "4x6", 5);
	check_detects(&tc_algo_calvin, "9x9", 5);
	check_detects(&tc_algo_gossip_ham2, "4x6", 5);
	check_detects(&tc_algo_gossip_ham1, "4x6", 5);
	for (int i = 0; tc_algos[i]; i++) {
		const struct tc_algo *a = tc_algos[i];
		struct tc_shape sh;
		char name[64];
		int npoints = 0;

		/* TC_PART_ALGO=name: only that algorithm (for working on one) */
		if (getenv("TC_PART_ALGO") && strcmp(getenv("TC_PART_ALGO"), a->name))
			continue;
		if (!a->part && a->send_steps) {
			/* no part generator, but a lower bound: check it on every 2D torus */
			int nb = 0;

			for (int r = 3; r <= 16; r++)
				for (int c = 3; c <= 16; c++) {
					int dims[2] = { r, c }, npk;
					struct tc_sched *s = NULL;
					const char *w = NULL;

					if (tc_shape_init(&sh, 2, dims, 3, 0) || !a->send_steps(&sh, &npk))
						continue;
					snprintf(name, sizeof(name), "%dx%d", r, c);
					if (a->build(&sh, &s, &w)) {
						tap_ok(0, "%s %s: a lower bound is given but the build fails: %s", a->name, name, w);
						continue;
					}
					check_bound(a, s, name);
					tc_sched_free(s);
					nb++;
				}
			tap_ok(nb > 0, "%s (%s): lower bound checked on %d shapes", a->name, tc_coll_str(a->coll), nb);
		}
		if (!a->part) {
			size_t off = strlen(fall);

			snprintf(fall + off, sizeof(fall) - off, "%s%s(%s)", nfall ? " " : "", a->name, tc_coll_str(a->coll));
			nfall++;
			continue;
		}
		nconv++;
		nwhole = 0;
		whole_shapes[0] = 0;
		nprice_ok = nprice_refused = 0;
		for (int r = 2; r <= 16; r++)
			for (int c = 2; c <= 16; c++) {
				int dims[2] = { r, c };

				if (tc_shape_init(&sh, 2, dims, 3, 0))
					continue;
				snprintf(name, sizeof(name), "%dx%d", r, c);
				check_shape(a, &sh, name, &npoints);
			}
		for (size_t k = 0; k < sizeof(more) / sizeof(more[0]); k++) {
			if (tc_shape_parse(&sh, more[k].dims, more[k].mesh, more[k].one_port)) {
				tap_ok(0, "%s: listed shape %s does not parse", a->name, more[k].dims);
				continue;
			}
			snprintf(name, sizeof(name), "%s%s%s", more[k].dims, more[k].mesh ? " mesh" : "",
				 more[k].one_port ? " one-port" : "");
			check_shape(a, &sh, name, &npoints);
		}
		for (size_t k = 0; k < sizeof(algo_more) / sizeof(algo_more[0]); k++) {
			const struct shape_case *c = &algo_more[k].sh;

			if (strcmp(a->name, algo_more[k].algo))
				continue;
			if (tc_shape_parse(&sh, c->dims, c->mesh, c->one_port)) {
				tap_ok(0, "%s: listed shape %s does not parse", a->name, c->dims);
				continue;
			}
			check_shape(a, &sh, c->dims, &npoints);
		}
		tap_ok(npoints > 0 && nwhole < npoints, "%s (%s): part generator checked on %d shapes", a->name,
		       tc_coll_str(a->coll), npoints);
		if (a->price)
			tap_ok(nprice_ok > nprice_refused, "%s (%s): its price function priced %d shapes as whole, refused %d",
			       a->name, tc_coll_str(a->coll), nprice_ok, nprice_refused);
		/* Not a failure where may_take_whole allows it (check_shape fails the others). */
		if (nwhole)
			tap_diag("%s (%s): %d of %d shapes take the fallback (whole schedule, cut): %s%s", a->name,
				 tc_coll_str(a->coll), nwhole, npoints, whole_shapes,
				 strlen(whole_shapes) >= sizeof(whole_shapes) - 1 ? " ..." : "");
	}
	/* Not a failure: the honest list of what still builds whole on a rank's way to its first call. */
	tap_diag("%d algorithms generate a node's part alone; %d still take the fallback (whole schedule, cut): %s",
		 nconv, nfall, nfall ? fall : "none");
	tap_ok(nconv > 0, "part generators: %d of %d algorithms", nconv, nconv + nfall);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	tap_diag("total %.2f s", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
	return tap_done();
}
