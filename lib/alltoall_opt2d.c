// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * opt2d: complete exchange on any 2D r x c torus or mesh (and any ring) with
 * one-hop messages along shortest paths in floor(r/2) + floor(c/2) steps.
 * architecture.md ("The algorithms"): the bound
 * ceil(max(c*floor(r^2/4), r*floor(c^2/4)) / 2) blocks is reachable on every
 * torus from 3x3 to 16x16; padding costs 1.3x to 4.3x.
 *
 * Every block travels one dimension, then the other, one hop per step along a
 * shortest path, on a fixed timetable (S = floor(r/2) + floor(c/2) steps):
 *   x first: its |dx| x-hops in steps 1..|dx|, its |dy| y-hops in the last
 *            |dy| steps S-|dy|+1..S;
 *   y first: the mirror image.
 * The two halves of a step's traffic (blocks starting, blocks finishing) thus
 * interleave, and a link of step s carries the blocks whose distance is at
 * least s plus those whose distance is at least S+1-s. Which blocks go x
 * first, and which way a tie (offset exactly half an even ring) goes, is
 * chosen per offset and per origin parity so that in every step every link of
 * the busier dimension carries the same load: see choose().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algos.h"
#include "alltoall_allport.h"

struct o2_plan {
	int8_t a, b;	/* signed hops in x (dimension 0) and y (dimension 1) */
	uint8_t xfirst; /* 1: x hops first */
};

struct o2 {
	const struct tc_shape *sh;
	int r, c, S, wrapx, wrapy;
	int rule;
};

/* Hop of a block in step s (1-based): 0 none, else port + 1. */
static int o2_hop(const struct o2 *g, const struct o2_plan *p, int s)
{
	int ax = abs(p->a), ay = abs(p->b);

	if (p->xfirst) {
		if (s <= ax)
			return 1 + (p->a > 0 ? 0 : 1);
		if (s > g->S - ay)
			return 1 + (p->b > 0 ? 2 : 3);
	} else {
		if (s <= ay)
			return 1 + (p->b > 0 ? 2 : 3);
		if (s > g->S - ax)
			return 1 + (p->a > 0 ? 0 : 1);
	}
	return 0;
}

static int o2_delta(int n, int wrap, int from, int to)
{
	return wrap ? tc_ap_delta(n, from, to) : to - from;
}

static void choose(const struct o2 *g, const int *oc, const int *tc, struct o2_plan *p)
{
	int a = o2_delta(g->r, g->wrapx, oc[0], tc[0]);
	int b = g->c > 1 ? o2_delta(g->c, g->wrapy, oc[1], tc[1]) : 0;
	int tiex = g->wrapx && !(g->r & 1) && 2 * a == g->r;
	int tiey = g->c > 1 && g->wrapy && !(g->c & 1) && 2 * b == g->c;
	int par = (oc[0] + (g->c > 1 ? oc[1] : 0)) & 1;

	switch (g->rule) {
	default:
		if (tiex && ((oc[0] + oc[1]) & 1))
			a = -a;
		if (tiey && ((oc[0] + oc[1]) & 1))
			b = -b;
		p->xfirst = ((a + b + 64) & 1) ^ par;
		break;
	}
	p->a = (int8_t)a;
	p->b = (int8_t)b;
}

static int o2_run(struct o2 *g, struct tc_sched *s)
{
	const int P = g->sh->nodes, nd = g->sh->ndims;
	struct o2_plan *plan = malloc((size_t)P * P * sizeof(*plan));
	int32_t *pos = malloc((size_t)P * P * sizeof(*pos));
	int *nb = malloc((size_t)P * 4 * sizeof(*nb));
	int *coords = malloc((size_t)P * 2 * sizeof(*coords));
	struct tc_ap_vec *bk = calloc((size_t)P * 4, sizeof(*bk));
	int err = -ENOMEM;

	if (!plan || !pos || !nb || !coords || !bk)
		goto out;
	for (int n = 0; n < P; n++) {
		int c[TC_MAX_DIMS];

		tc_shape_coords(g->sh, n, c);
		coords[2 * n] = c[0];
		coords[2 * n + 1] = nd > 1 ? c[1] : 0;
		for (int port = 0; port < 4; port++)
			nb[n * 4 + port] = port < 2 * nd ? tc_shape_neighbor(g->sh, n, port) : -1;
	}
	for (int o = 0; o < P; o++)
		for (int t = 0; t < P; t++) {
			choose(g, &coords[2 * o], &coords[2 * t], &plan[(size_t)o * P + t]);
			pos[(size_t)o * P + t] = o;
		}
	for (int st = 1; st <= g->S; st++) {
		err = tc_sched_step(s);
		if (err < 0)
			goto out;
		for (int o = 0; o < P; o++)
			for (int t = 0; t < P; t++) {
				size_t id = (size_t)o * P + t;
				int hop = t == o ? 0 : o2_hop(g, &plan[id], st);
				struct tc_ap_vec *v;

				if (!hop)
					continue;
				v = &bk[(size_t)pos[id] * 4 + hop - 1];
				if (v->n == v->cap) {
					uint32_t ncap = v->cap ? 2 * v->cap : 16;
					struct tc_ap_item *q = realloc(v->v, (size_t)ncap * sizeof(*q));

					err = -ENOMEM;
					if (!q)
						goto out;
					v->v = q;
					v->cap = ncap;
				}
				v->v[v->n].a = o;
				v->v[v->n].b = t;
				v->n++;
				pos[id] = nb[(size_t)pos[id] * 4 + hop - 1];
				err = -EPROTO;
				if (pos[id] < 0)
					goto out;
			}
		for (int n = 0; n < P; n++)
			for (int port = 0; port < 4; port++) {
				struct tc_ap_vec *v = &bk[(size_t)n * 4 + port];
				int8_t route[TC_MAX_DIMS] = { 0 };

				if (!v->n)
					continue;
				route[port / 2] = (port & 1) ? -1 : 1;
				err = tc_sched_msg(s, n, nb[n * 4 + port], route);
				if (err < 0)
					goto out;
				for (uint32_t i = 0; i < v->n; i++) {
					err = tc_sched_blk(s, v->v[i].a, v->v[i].b);
					if (err)
						goto out;
				}
				v->n = 0;
			}
	}
	err = 0;
	for (size_t id = 0; id < (size_t)P * P; id++)
		if (pos[id] != (int32_t)(id % P))
			err = -EPROTO;
out:
	for (int i = 0; bk && i < P * 4; i++)
		free(bk[i].v);
	free(bk);
	free(plan);
	free(pos);
	free(nb);
	free(coords);
	return err;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct o2 g = { .sh = shape };
	struct tc_sched *s;
	const char *env;
	int err;

	if (shape->ndims > 2) {
		*why = "opt2d: rings and 2-D shapes only; use allport-kd or pad for 3-D and up";
		return -EOPNOTSUPP;
	}
	if (shape->one_port) {
		*why = "opt2d: all-port algorithm; the one-port family handles one-port shapes";
		return -EOPNOTSUPP;
	}
	if (shape->ndims == 1 && (shape->wrap_mask & 1) && !(shape->dims[0] & 1)) {
		/* An even ring: one-hop relays cannot split the antipode; AR reaches the bound. */
		err = tc_ar_build_ring(shape, out, why);
		if (!err) {
			(*out)->algo = "opt2d";
			(*out)->cite = "000 Sec. III-A (Algorithm AR) for even rings";
		}
		return err;
	}
	g.r = shape->dims[0];
	g.c = shape->ndims > 1 ? shape->dims[1] : 1;
	g.wrapx = shape->wrap_mask & 1;
	g.wrapy = shape->ndims > 1 && (shape->wrap_mask & 2);
	g.S = (g.wrapx ? g.r / 2 : g.r - 1) + (g.c > 1 ? (g.wrapy ? g.c / 2 : g.c - 1) : 0);
	env = getenv("TC_OPT2D_RULE");
	g.rule = env ? atoi(env) : 0;
	s = tc_sched_new(shape, TC_COLL_ALLTOALL, "opt2d",
			 "architecture.md, The algorithms: one-hop shortest-path timetable reaching the bisection bound",
			 TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST | TC_CLAIM_ONE_HOP);
	if (!s)
		return -ENOMEM;
	err = o2_run(&g, s);
	if (!err)
		err = tc_sched_finish(s);
	if (err) {
		tc_sched_free(s);
		*why = "opt2d: internal error building the schedule";
		return err;
	}
	*out = s;
	return 0;
}

const struct tc_algo tc_algo_opt2d = {
	.name = "opt2d",
	.coll = TC_COLL_ALLTOALL,
	.summary = "any 2D torus or mesh, any ring: one-hop shortest-path timetable at the bisection bound",
	.build = build,
};
