// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The library's own algorithm choice ("auto"): a priced decision, in the
 * manner of UCC's score map and NCCL's tuner.
 *
 * Candidates: every algorithm of tc_algos[] of the collective. Each is built
 * and verified through the schedule cache (a shape it refuses, or a schedule
 * the verifier rejects, makes it no candidate, with the reason) and priced
 * with the cost model (core/cost.c) at the parameters of the transport that
 * will run it: the device's own ts, tw and per-hop time, TC_COST_* from the
 * environment over them, or the module's default timing. The cheapest wins;
 * predicted times within a relative 1e-9 are a tie, which goes to fewer
 * startups on the critical path, then to the earlier algorithm of the
 * registry.
 *
 * Large shapes: above TC_AUTO_PRICE_MAX_NODES nodes a candidate with a lower
 * bound (struct tc_algo.send_steps: ring, gossip-ham2 with an even side) is
 * priced last, and not at all when another candidate's price is below its
 * bound at both ends of the size class (it then carries the bound, err
 * -EDOM and the reason); one with a price function (bruck, both
 * collectives; allport-kd from the messages of one cell of nodes) is priced
 * from its messages without their blocks; another translation-invariant
 * schedule is verified and priced from its cell (core/part_sym.h), one whose
 * nodes send alike up to a translation is priced from the parts of one cell
 * of nodes (core/part_price.h: saad-schultz, bcast-pattern, calvin on a
 * prime side, opt2d on a torus); any other by a
 * streamed build (built, verified and priced step by step, not kept: only the
 * winner is then built for keeping). The direct algorithms
 * (TC_ALGO_DIRECT_P2: P(P-1) messages) are priced there only from their
 * messages without blocks (as bruck's), up to TC_AUTO_PRICE_DIRECT_MAX_NODES
 * nodes: O(P^2) time, about 262,000 messages each on 512 nodes; above, they
 * are skipped with that reason.
 *
 * At every size, a candidate whose schedule on the shape is another
 * candidate's (struct tc_algo.same_as: pad where no node is imaginary) is
 * not priced again: it gets that candidate's price, error and startups.
 *
 * Size classes: block sizes (hi/2, hi], hi a power of two (and {1}). The
 * first request of a class prices every candidate at both ends in one pass
 * (tc_cost_eval_sizes) and remembers the prices per (collective, shape,
 * class, parameters). A request of block size m takes each candidate's time
 * by linear interpolation between them: exact when the critical path is the
 * same chain over the class (the time is then affine in m), otherwise an
 * upper bound (the time is a maximum of affine functions of m, so convex).
 * After the first request of a class nothing is priced again.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/part_price.h"
#include "core/part_sym.h"
#include "select/select.h"

/* Prices of one (collective, shape, size class, parameters). */
struct tc_auto_entry {
	struct tc_auto_entry *next;
	enum tc_coll_id coll;
	struct tc_shape shape;
	size_t lo, hi;
	struct tc_cost_params params;
	int ncand;
	struct tc_auto_cand cand[TC_AUTO_MAX_CANDS]; /* us unused */
	double us_lo[TC_AUTO_MAX_CANDS], us_hi[TC_AUTO_MAX_CANDS];
};

static pthread_mutex_t tc_auto_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tc_auto_entry *tc_auto_head; /* protected by tc_auto_lock; never freed */
static unsigned long tc_auto_npriced;	   /* atomic */

unsigned long __tc_auto_pricings(void)
{
	return __atomic_load_n(&tc_auto_npriced, __ATOMIC_RELAXED);
}

static int params_equal(const struct tc_cost_params *a, const struct tc_cost_params *b)
{
	return a->ts_us == b->ts_us && a->tw_us_per_byte == b->tw_us_per_byte &&
	       a->rho_us_per_byte == b->rho_us_per_byte && a->hop_us == b->hop_us && a->flags == b->flags &&
	       a->lat_us == b->lat_us && a->rdv_us == b->rdv_us && a->eager_bytes == b->eager_bytes &&
	       a->msg_us == b->msg_us && a->tw_big_us_per_byte == b->tw_big_us_per_byte &&
	       a->big_bytes == b->big_bytes && a->ts_cap == b->ts_cap;
}

/* Price candidate c at sizes[0..n) into t[]. */
static void price(enum tc_coll_id coll, const struct tc_shape *shape, const struct tc_cost_params *p,
		  const size_t *sizes, int n, struct tc_auto_cand *c, double *t)
{
	const struct tc_algo *a = c->algo;
	const struct tc_sched *s;
	struct tc_verify_report r;
	struct tc_price_totals ptot;
	struct tc_cost cost;
	const char *why = NULL;
	int err;

	if (tc_auto_direct_unpriced(a, shape)) {
		c->err = -E2BIG;
		snprintf(c->why, sizeof(c->why),
			 "not priced: %d nodes make %lld messages; direct schedules are priced up to %d nodes (%d from their messages)",
			 shape->nodes, (long long)shape->nodes * (shape->nodes - 1), TC_AUTO_PRICE_MAX_NODES,
			 TC_AUTO_PRICE_DIRECT_MAX_NODES);
		return;
	}
	__atomic_add_fetch(&tc_auto_npriced, 1, __ATOMIC_RELAXED);
	if (shape->nodes <= TC_AUTO_PRICE_MAX_NODES) {
		err = tc_sched_get(coll, a, shape, &s, &why);
		if (!err)
			err = tc_cost_eval_sizes(s, p, sizes, n, t, &cost);
	} else if (a->price && (err = a->price(shape, p, sizes, n, t, &cost, &why)) != -EOPNOTSUPP) {
		/* the schedule's messages without their blocks (struct tc_algo.price; allport-kd's from a cell's) */
	} else if (tc_algo_translated(a, shape)) {
		/* from the cell's blocks and the whole schedule's messages (core/part_sym.h) */
		struct tc_sym_totals tot;

		why = NULL;
		err = tc_sched_check_translated(a, shape, p, sizes, n, t, &r, &cost, &tot, &why);
		if (err == -EPROTO)
			snprintf(c->why, sizeof(c->why), "%s: schedule fails verification: %.150s", a->name,
				 r.first_violation);
		tc_verify_report_free(&r);
	} else if (tc_algo_priced_from_parts(a, shape) &&
		   (err = tc_sched_price_parts(a, shape, p, sizes, n, t, &cost, &ptot, &why)) != -EOPNOTSUPP) {
		/* from the parts of one cell of nodes (core/part_price.h); nothing else is built */
	} else {
		why = NULL;
		err = tc_sched_check_streamed(a, shape, p, sizes, n, t, &r, &cost, NULL, NULL, &why);
		if (err == -EPROTO)
			snprintf(c->why, sizeof(c->why), "%s: schedule fails verification: %.150s", a->name,
				 r.first_violation);
		tc_verify_report_free(&r);
	}
	c->err = err;
	if (err) {
		if (!c->why[0])
			snprintf(c->why, sizeof(c->why), "%s", why ? why : tc_last_error());
		return;
	}
	c->steps = cost.steps;
}

static struct tc_auto_entry *price_all(enum tc_coll_id coll, const struct tc_shape *shape, size_t lo, size_t hi,
				       const struct tc_cost_params *p)
{
	const size_t sizes[2] = { lo, hi };
	int same_as[TC_AUTO_MAX_CANDS];
	struct tc_auto_entry *e;
	double t[2];

	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->coll = coll;
	e->shape = *shape;
	e->lo = lo;
	e->hi = hi;
	e->params = *p;
	for (int i = 0; tc_algos[i] && e->ncand < TC_AUTO_MAX_CANDS; i++)
		if (tc_algos[i]->coll == coll)
			e->cand[e->ncand++].algo = tc_algos[i];
	/* a candidate whose schedule on this shape is another candidate's (struct tc_algo.same_as) */
	for (int k = 0; k < e->ncand; k++) {
		const struct tc_algo *b = e->cand[k].algo->same_as ? e->cand[k].algo->same_as(shape) : NULL;

		same_as[k] = -1;
		for (int j = 0; b && j < e->ncand; j++)
			if (j != k && e->cand[j].algo == b && !b->same_as)
				same_as[k] = j;
	}
	/*
	 * Above TC_AUTO_PRICE_MAX_NODES: first the candidates priced without
	 * building them (cells, parts of a cell, no lower bound), then those
	 * that would be built whole, each only if its lower bound
	 * (send_steps) is not beaten at both ends of the class by one
	 * candidate's price already known: it cannot win anywhere in the
	 * class, so it is left unpriced, with its bound.
	 */
	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < e->ncand; k++) {
			struct tc_auto_cand *c = &e->cand[k];
			const struct tc_algo *a = c->algo;
			int big = shape->nodes > TC_AUTO_PRICE_MAX_NODES, npk = 1;
			uint64_t steps = big && a->send_steps && !tc_algo_translated(a, shape) &&
						 !tc_algo_priced_from_parts(a, shape) ?
					 a->send_steps(shape, &npk) :
					 0;

			if ((pass == 1) != (steps > 0) || same_as[k] >= 0)
				continue;
			if (steps) {
				double lb_lo = tc_cost_send_steps_us(p, steps, npk, lo);
				double lb_hi = tc_cost_send_steps_us(p, steps, npk, hi);
				int beaten = -1;

				for (int j = 0; j < e->ncand && beaten < 0; j++)
					if (j != k && e->cand[j].algo && !e->cand[j].err && e->cand[j].steps &&
					    e->us_lo[j] * (1 + 1e-9) < lb_lo && e->us_hi[j] * (1 + 1e-9) < lb_hi)
						beaten = j;
				if (beaten >= 0) {
					c->err = -EDOM;
					snprintf(c->why, sizeof(c->why),
						 "not priced: at least %llu startups, %.6g us at %zu B, more than %s's %.6g us",
						 (unsigned long long)steps, lb_hi, hi, e->cand[beaten].algo->name,
						 e->us_hi[beaten]);
					e->us_lo[k] = lb_lo;
					e->us_hi[k] = lb_hi;
					continue;
				}
			}
			t[0] = t[1] = 0;
			price(coll, shape, p, sizes, lo == hi ? 1 : 2, c, t);
			e->us_lo[k] = t[0];
			e->us_hi[k] = lo == hi ? t[0] : t[1];
		}
	}
	/* the same schedule as another candidate: its price */
	for (int k = 0; k < e->ncand; k++) {
		struct tc_auto_cand *c = &e->cand[k];
		const struct tc_auto_cand *b;

		if (same_as[k] < 0)
			continue;
		b = &e->cand[same_as[k]];
		c->err = b->err;
		c->steps = b->steps;
		if (b->err) {
			char bwhy[151]; /* b is another entry of e: copied first, as snprintf may not read what it writes */

			snprintf(bwhy, sizeof(bwhy), "%s", b->why);
			snprintf(c->why, sizeof(c->why), "%s's schedule on this shape: %s", b->algo->name, bwhy);
		}
		e->us_lo[k] = e->us_lo[same_as[k]];
		e->us_hi[k] = e->us_hi[same_as[k]];
	}
	return e;
}

/* a before b: cheaper, or a tie (relative 1e-9) with fewer startups, or earlier. */
static int better(const struct tc_auto_cand *a, int ia, const struct tc_auto_cand *b, int ib)
{
	double big = a->us > b->us ? a->us : b->us;

	if (fabs(a->us - b->us) > 1e-9 * big)
		return a->us < b->us;
	if (a->steps != b->steps)
		return a->steps < b->steps;
	return ia < ib;
}

static void decide(const struct tc_auto_entry *e, size_t m, struct tc_auto_choice *out)
{
	out->m = m;
	out->class_lo = e->lo;
	out->class_hi = e->hi;
	out->params = e->params;
	out->ncand = e->ncand;
	out->winner = out->runner_up = -1;
	for (int i = 0; i < e->ncand; i++) {
		struct tc_auto_cand *c = &out->cand[i];

		*c = e->cand[i];
		/* -EDOM: not priced, us is its lower bound */
		c->us = e->hi == e->lo ? e->us_hi[i] :
			e->us_lo[i] + (e->us_hi[i] - e->us_lo[i]) * (double)(m - e->lo) / (double)(e->hi - e->lo);
		if (c->err)
			continue;
		if (out->winner < 0 || better(c, i, &out->cand[out->winner], out->winner)) {
			out->runner_up = out->winner;
			out->winner = i;
		} else if (out->runner_up < 0 || better(c, i, &out->cand[out->runner_up], out->runner_up)) {
			out->runner_up = i;
		}
	}
}

int tc_auto_choose(enum tc_coll_id coll, const struct tc_shape *shape, size_t block_bytes,
		   const struct tc_cost_params *p, struct tc_auto_choice *out)
{
	struct tc_cost_params dflt;
	struct tc_auto_entry *e, *f;
	size_t hi = 1;

	if (!shape || !out || (coll != TC_ALLTOALL && coll != TC_ALLGATHER))
		return tc_err(-EINVAL, "auto: bad collective, shape or output");
	if (!p) {
		tc_cost_params_default(&dflt);
		p = &dflt;
	}
	if (!block_bytes)
		block_bytes = 1;
	while (hi < block_bytes && hi < ((size_t)1 << 40))
		hi <<= 1;
	pthread_mutex_lock(&tc_auto_lock);
	for (e = tc_auto_head; e; e = e->next)
		if (e->coll == coll && e->hi == hi && params_equal(&e->params, p) && tc_shape_equal(&e->shape, shape))
			break;
	pthread_mutex_unlock(&tc_auto_lock);

	if (!e) {
		/* price outside the lock: tc_sched_get has its own */
		e = price_all(coll, shape, hi > 1 ? hi / 2 : 1, hi, p);
		if (!e)
			return tc_err(-ENOMEM, "auto: out of memory");
		pthread_mutex_lock(&tc_auto_lock);
		for (f = tc_auto_head; f; f = f->next)
			if (f->coll == coll && f->hi == hi && params_equal(&f->params, p) &&
			    tc_shape_equal(&f->shape, shape))
				break;
		if (f) { /* another thread priced it meanwhile: keep one */
			free(e);
			e = f;
		} else {
			e->next = tc_auto_head;
			tc_auto_head = e;
		}
		pthread_mutex_unlock(&tc_auto_lock);
	}
	/* entries are never freed or changed once published */
	decide(e, block_bytes, out);
	if (out->winner < 0)
		return tc_err(-EOPNOTSUPP, "auto: no %s algorithm supports this shape", tc_coll_str(coll));
	return 0;
}

const struct tc_algo *tc_algo_auto(enum tc_coll_id coll, const struct tc_shape *shape, size_t block_bytes,
				   const struct tc_cost_params *p)
{
	struct tc_auto_choice c;

	if (tc_auto_choose(coll, shape, block_bytes, p, &c))
		return NULL;
	return c.cand[c.winner].algo;
}

void tc_auto_reason(const struct tc_auto_choice *c, char *buf, size_t len)
{
	const struct tc_auto_cand *w, *r;

	if (c->winner < 0) {
		snprintf(buf, len, "no candidate: no algorithm builds a verified schedule for this shape");
		return;
	}
	w = &c->cand[c->winner];
	if (c->runner_up < 0) {
		snprintf(buf, len, "%s wins: the only candidate (%.6g us)", w->algo->name, w->us);
		return;
	}
	r = &c->cand[c->runner_up];
	if (fabs(w->us - r->us) > 1e-9 * (w->us > r->us ? w->us : r->us))
		snprintf(buf, len, "%s wins: %.6g us, %.3fx less than the runner-up %s (%.6g us)", w->algo->name,
			 w->us, w->us > 0 ? r->us / w->us : 0.0, r->algo->name, r->us);
	else if (w->steps != r->steps)
		snprintf(buf, len, "%s wins: ties with %s at %.6g us, fewer startups (%u against %u)", w->algo->name,
			 r->algo->name, w->us, w->steps, r->steps);
	else
		snprintf(buf, len, "%s wins: ties with %s at %.6g us and %u startups, earlier in the registry",
			 w->algo->name, r->algo->name, w->us, w->steps);
}
