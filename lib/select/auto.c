// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The library's own algorithm choice ("auto"): a priced decision, in the
 * manner of UCC's score map and NCCL's tuner.
 *
 * Candidates: every algorithm of tc_algos[] of the collective. Each is
 * verified (a shape it refuses, or a schedule the verifier rejects, makes it
 * no candidate, with the reason) and priced, as below, with the cost model
 * (core/cost.c) at the parameters of the transport that
 * will run it: the device's own ts, tw and per-hop time, TC_COST_* from the
 * environment over them, or the module's default timing. The cheapest wins;
 * predicted times within a relative 1e-9 are a tie, which goes to fewer
 * startups on the critical path, then to the earlier algorithm of the
 * registry.
 *
 * Pricing without whole schedules, at every size: one with a price function
 * (bruck, both collectives, the direct ones; allport-kd from the messages of
 * one cell of nodes) from its messages without their blocks; another
 * translation-invariant schedule is verified and priced from its cell
 * (core/part_sym.h), one whose nodes send alike up to a translation from
 * the parts of one cell of nodes (core/part_price.h: saad-schultz,
 * bcast-pattern, calvin on a prime side, opt2d on a torus). The direct
 * algorithms (TC_ALGO_DIRECT_P2: P(P-1) messages) are priced only up to
 * TC_AUTO_PRICE_DIRECT_MAX_NODES nodes above TC_AUTO_PRICE_MAX_NODES
 * (O(P^2) time, about 262,000 messages each on 512 nodes); above, they are
 * skipped with that reason. Any other candidate comes last: node 0's part,
 * generated alone, refuses a shape the algorithm refuses (no whole build),
 * and the steps it sends in, with struct tc_algo.send_steps, bound the
 * candidate's time from below; when another candidate's price is below that
 * bound at both ends of the size class it cannot win anywhere in the class
 * and is left unpriced (err -EDOM, the bound as its price, the reason).
 * Only a candidate no bound rules out is built whole, streamed (built,
 * verified and priced step by step, not kept).
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
#include "core/part.h"
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

/*
 * Node 0's part of a's schedule on shape, generated alone (struct
 * tc_algo.part), for what it says of the whole schedule without building
 * it: -EOPNOTSUPP with *why when a refuses the shape (the part generators
 * refuse the shapes build refuses: tests/unit/test_auto.c checks it), and
 * otherwise *steps, the distinct steps node 0 sends in, and *npackets: a
 * lower bound on the whole schedule's time (tc_cost_send_steps_us), as
 * struct tc_algo.send_steps gives one. 0 with *steps = 0 when a has no part
 * generator or leaves the shape to the whole schedule (TC_PART_WHOLE).
 */
static int part0_bound(const struct tc_algo *a, const struct tc_shape *shape, uint64_t *steps, int *npackets,
		       const char **why)
{
	struct tc_part *part;
	int err;

	*steps = 0;
	*npackets = 1;
	if (a->sym_mod[0] && !tc_algo_translated(a, shape)) {
		/*
		 * A translation-invariant schedule whose cell is not small: its
		 * part would come from the blocks of that cell's sources, so
		 * build the schedule of node 0's blocks alone (core/sched.h:
		 * tc_sched_build_sources with period 1); node 0 sends its own
		 * blocks in at least the steps counted.
		 */
		int mod[TC_MAX_DIMS];
		struct tc_sched *s;

		for (int d = 0; d < TC_MAX_DIMS; d++)
			mod[d] = 1;
		err = tc_sched_build_sources(a, shape, mod, &s, why);
		if (err)
			return err == -EOPNOTSUPP || err == -ENOMEM ? err : 0;
		for (uint32_t st = 0; st < s->nsteps; st++) {
			struct tc_step_view v;

			tc_sched_step_view(s, st, &v);
			for (uint32_t i = 0; i < v.nmsgs; i++)
				if (v.msgs[i].src == 0 && v.msgs[i].nblk) {
					++*steps;
					break;
				}
		}
		*npackets = s->npackets >= 1 ? s->npackets : 1;
		tc_sched_free(s);
		return 0;
	}
	if (!a->part)
		return 0;
	part = tc_part_new(shape, a->coll, a->name, NULL, 0, 0);
	if (!part) {
		*why = "out of memory for one node's part";
		return -ENOMEM;
	}
	err = a->part(part, why);
	if (!err && part->npackets >= 1) {
		for (uint32_t i = 0; i < part->nact; i++)
			for (uint32_t j = part->act_first[i]; j < part->act_first[i + 1]; j++)
				if (part->msgs[j].src == part->node && part->msgs[j].nblk) {
					++*steps;
					break;
				}
		*npackets = part->npackets;
	}
	tc_part_free(part);
	return err == -EOPNOTSUPP || err == -ENOMEM ? err : 0;
}

/* c's error and its reason (why, or the library's last error, unless c->why is set). */
static void cand_done(struct tc_auto_cand *c, int err, const char *why, const struct tc_cost *cost)
{
	c->err = err;
	if (err) {
		if (!c->why[0])
			snprintf(c->why, sizeof(c->why), "%s", why ? why : tc_last_error());
		return;
	}
	c->steps = cost->steps;
}

/*
 * Price candidate c at sizes[0..n) into t[] without building its whole
 * schedule: from its cell, its price function or the parts of one cell of
 * nodes. 1 if one of them applied (c->err set), 0 if none does.
 */
static int price_alone(const struct tc_shape *shape, const struct tc_cost_params *p, const size_t *sizes, int n,
		       struct tc_auto_cand *c, double *t)
{
	const struct tc_algo *a = c->algo;
	struct tc_verify_report r;
	struct tc_price_totals ptot;
	struct tc_cost cost;
	const char *why = NULL;
	int err;

	if (tc_auto_direct_unpriced(a, shape)) {
		c->err = -E2BIG;
		c->how = TC_AUTO_HOW_DIRECT;
		snprintf(c->why, sizeof(c->why),
			 "not priced: %d nodes make %lld messages; direct schedules are priced up to %d nodes (%d from their messages)",
			 shape->nodes, (long long)shape->nodes * (shape->nodes - 1), TC_AUTO_PRICE_MAX_NODES,
			 TC_AUTO_PRICE_DIRECT_MAX_NODES);
		return 1;
	}
	if (a->price && (err = a->price(shape, p, sizes, n, t, &cost, &why)) != -EOPNOTSUPP) {
		/* the schedule's messages without their blocks (struct tc_algo.price; allport-kd's from a cell's) */
		c->how = TC_AUTO_HOW_PRICE;
		__atomic_add_fetch(&tc_auto_npriced, 1, __ATOMIC_RELAXED);
	} else if (tc_algo_translated(a, shape)) {
		/* from the cell's blocks and the whole schedule's messages (core/part_sym.h) */
		struct tc_sym_totals tot;

		c->how = TC_AUTO_HOW_CELL;
		__atomic_add_fetch(&tc_auto_npriced, 1, __ATOMIC_RELAXED);
		why = NULL;
		err = tc_sched_check_translated(a, shape, p, sizes, n, t, &r, &cost, &tot, &why);
		if (err == -EPROTO)
			snprintf(c->why, sizeof(c->why), "%s: schedule fails verification: %.150s", a->name,
				 r.first_violation);
		tc_verify_report_free(&r);
	} else if (tc_algo_priced_from_parts(a, shape) &&
		   (err = tc_sched_price_parts(a, shape, p, sizes, n, t, &cost, &ptot, &why)) != -EOPNOTSUPP) {
		/* from the parts of one cell of nodes (core/part_price.h); nothing else is built */
		c->how = TC_AUTO_HOW_PARTS;
		__atomic_add_fetch(&tc_auto_npriced, 1, __ATOMIC_RELAXED);
	} else {
		return 0;
	}
	cand_done(c, err, why, &cost);
	return 1;
}

/* The last resort: c's whole schedule streamed (built, verified and priced step by step, not kept). */
static void price_streamed(const struct tc_shape *shape, const struct tc_cost_params *p, const size_t *sizes, int n,
			   struct tc_auto_cand *c, double *t)
{
	struct tc_verify_report r;
	struct tc_cost cost;
	const char *why = NULL;
	int err;

	c->how = TC_AUTO_HOW_WHOLE;
	__atomic_add_fetch(&tc_auto_npriced, 1, __ATOMIC_RELAXED);
	err = tc_sched_check_streamed(c->algo, shape, p, sizes, n, t, &r, &cost, NULL, NULL, &why);
	if (!tc_sched_whole_built())
		c->how = TC_AUTO_HOW_REFUSED; /* the builder refused before it built */
	if (err == -EPROTO)
		snprintf(c->why, sizeof(c->why), "%s: schedule fails verification: %.150s", c->algo->name,
			 r.first_violation);
	tc_verify_report_free(&r);
	cand_done(c, err, why, &cost);
}

/*
 * A candidate other than k already priced (every one priced alone, and those
 * before k) whose price is below the lower bound [lb_lo, lb_hi] at both ends
 * of the class, or -1.
 */
static int beaten_by(const struct tc_auto_entry *e, const int *done, const int *same_as, int k, double lb_lo,
		     double lb_hi)
{
	for (int j = 0; j < e->ncand; j++)
		if (j != k && (done[j] || j < k) && same_as[j] < 0 && !e->cand[j].err && e->cand[j].steps &&
		    e->us_lo[j] * (1 + 1e-9) < lb_lo && e->us_hi[j] * (1 + 1e-9) < lb_hi)
			return j;
	return -1;
}

static struct tc_auto_entry *price_all(enum tc_coll_id coll, const struct tc_shape *shape, size_t lo, size_t hi,
				       const struct tc_cost_params *p)
{
	const size_t sizes[2] = { lo, hi };
	int same_as[TC_AUTO_MAX_CANDS], done[TC_AUTO_MAX_CANDS];
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
	 * First every candidate that is priced without building its whole
	 * schedule (cells, price functions, parts of a cell). Then the others,
	 * each only if a lower bound on its time (struct tc_algo.send_steps,
	 * and node 0's part: the steps that node sends in) is not beaten at
	 * both ends of the class by one candidate's price already known: it
	 * cannot win anywhere in the class, so it is left unpriced, with its
	 * bound. A shape node 0's part refuses is refused without a build.
	 */
	for (int k = 0; k < e->ncand; k++) {
		done[k] = same_as[k] >= 0;
		if (!done[k]) {
			t[0] = t[1] = 0;
			done[k] = price_alone(shape, p, sizes, lo == hi ? 1 : 2, &e->cand[k], t);
			e->us_lo[k] = t[0];
			e->us_hi[k] = lo == hi ? t[0] : t[1];
		}
	}
	for (int k = 0; k < e->ncand; k++) {
		struct tc_auto_cand *c = &e->cand[k];
		const struct tc_algo *a = c->algo;
		double lb_lo = 0, lb_hi = 0;
		uint64_t steps = 0;
		const char *why = NULL;
		int npk = 1, beaten = -1, err;

		if (done[k])
			continue;
		/* the algorithm's own bound first: node 0's part is only generated if it is not beaten */
		if (a->send_steps && (steps = a->send_steps(shape, &npk)) > 0) {
			lb_lo = tc_cost_send_steps_us(p, steps, npk, lo);
			lb_hi = tc_cost_send_steps_us(p, steps, npk, hi);
			beaten = beaten_by(e, done, same_as, k, lb_lo, lb_hi);
		}
		if (beaten < 0) {
			err = part0_bound(a, shape, &steps, &npk, &why);
			if (err) {
				c->err = err;
				c->how = TC_AUTO_HOW_REFUSED;
				snprintf(c->why, sizeof(c->why), "%s", why ? why : tc_last_error());
				continue;
			}
			if (steps) {
				double l = tc_cost_send_steps_us(p, steps, npk, lo);
				double h = tc_cost_send_steps_us(p, steps, npk, hi);

				lb_lo = l > lb_lo ? l : lb_lo;
				lb_hi = h > lb_hi ? h : lb_hi;
				beaten = beaten_by(e, done, same_as, k, lb_lo, lb_hi);
			}
		}
		if (beaten >= 0) {
			c->err = -EDOM;
			c->how = TC_AUTO_HOW_BOUND;
			snprintf(c->why, sizeof(c->why), "not priced: %.6g us at %zu B at least, more than %s's %.6g us",
				 lb_hi, hi, e->cand[beaten].algo->name, e->us_hi[beaten]);
			e->us_lo[k] = lb_lo;
			e->us_hi[k] = lb_hi;
			continue;
		}
		t[0] = t[1] = 0;
		price_streamed(shape, p, sizes, lo == hi ? 1 : 2, c, t);
		e->us_lo[k] = t[0];
		e->us_hi[k] = lo == hi ? t[0] : t[1];
	}
	/* the same schedule as another candidate: its price */
	for (int k = 0; k < e->ncand; k++) {
		struct tc_auto_cand *c = &e->cand[k];
		const struct tc_auto_cand *b;

		if (same_as[k] < 0)
			continue;
		b = &e->cand[same_as[k]];
		c->how = TC_AUTO_HOW_SAME;
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
