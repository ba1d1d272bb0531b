// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Complete exchange on an all-port ring: Algorithm AR (000 Sec. III-A,
 * Fig. 2; Lemma 2: p/2 startups, ceil(p^2/8) blocks of transmission), and the
 * ring engine the other all-port algorithms run their phases on (see
 * alltoall_allport.h for the stages and the tie rules).
 *
 * The engine is a step-by-step relay: each node keeps, per dimension, the
 * blocks of Stage 1, of its primary and of its secondary direction, and sends
 * a whole list as one message. Every block is touched once per message that
 * carries it, so building costs O(blocks in the schedule).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/algos.h"
#include "algorithms/engine/allport.h"

enum { AP_S1, AP_PRI, AP_SEC, AP_INC, TC_AP_NLISTS };

static int vec_push(struct tc_ap_vec *v, int32_t a, int32_t b, int32_t e)
{
	if (b < 0 || b >= TC_AP_MAX_NODES || e < -128 || e > 127)
		return -EOVERFLOW;
	if (v->n == v->cap) {
		/* 1.5x: the lists together hold every block of the exchange */
		uint32_t ncap = v->cap ? v->cap + v->cap / 2 : 16;
		struct tc_ap_item *p;

		if (ncap < v->cap)
			return -ENOMEM;
		p = realloc(v->v, (size_t)ncap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		v->v = p;
		v->cap = ncap;
	}
	v->v[v->n].a = a;
	v->v[v->n].b = b;
	v->v[v->n].e = e;
	v->n++;
	return 0;
}

/*
 * An emptied list gives its memory back: the blocks of a 128x128 exchange
 * (2.7e8) pass through many lists, and lists that kept their largest
 * capacity held five times the blocks alive.
 */
static void vec_release(struct tc_ap_vec *v)
{
	free(v->v);
	v->v = NULL;
	v->n = 0;
	v->cap = 0;
}

static struct tc_ap_vec *ap_list(struct tc_ap *ap, int node, int d, int which)
{
	return &ap->work[((size_t)node * ap->ndims + d) * TC_AP_NLISTS + which];
}

int tc_ap_init(struct tc_ap *ap, struct tc_sched *s)
{
	const struct tc_shape *sh = &s->shape;

	memset(ap, 0, sizeof(*ap));
	if (sh->nodes >= TC_AP_MAX_NODES)
		return -EINVAL;
	ap->s = s;
	ap->sh = sh;
	ap->nodes = sh->nodes;
	ap->ndims = sh->ndims;
	ap->coords = malloc((size_t)sh->nodes * sh->ndims * sizeof(*ap->coords));
	ap->hold = calloc(sh->nodes, sizeof(*ap->hold));
	ap->next = calloc(sh->nodes, sizeof(*ap->next));
	ap->work = calloc((size_t)sh->nodes * sh->ndims * TC_AP_NLISTS, sizeof(*ap->work));
	if (!ap->coords || !ap->hold || !ap->next || !ap->work) {
		tc_ap_free(ap);
		return -ENOMEM;
	}
	for (int n = 0; n < sh->nodes; n++)
		tc_shape_coords(sh, n, &ap->coords[(size_t)n * sh->ndims]);
	return 0;
}

void tc_ap_free(struct tc_ap *ap)
{
	if (ap->hold)
		for (int n = 0; n < ap->nodes; n++)
			free(ap->hold[n].v);
	if (ap->next)
		for (int n = 0; n < ap->nodes; n++)
			free(ap->next[n].v);
	if (ap->work)
		for (size_t i = 0; i < (size_t)ap->nodes * ap->ndims * TC_AP_NLISTS; i++)
			free(ap->work[i].v);
	free(ap->out[0].v);
	free(ap->out[1].v);
	free(ap->coords);
	free(ap->hold);
	free(ap->next);
	free(ap->work);
	memset(ap, 0, sizeof(*ap));
}

int tc_ap_hold(struct tc_ap *ap, int node, int32_t a, int32_t b)
{
	return vec_push(&ap->hold[node], a, b, 0);
}

/* Logical index parity of node on the ring of dimension d with stride g. */
static int ap_parity(const struct tc_ap *ap, int node, int d, int g)
{
	return (ap->coords[(size_t)node * ap->ndims + d] / g) & 1;
}

/*
 * Emit one message of node along dimension d carrying v (hops logical hops of
 * stride g) and file every block at the receiver: delivered for this phase
 * (remaining offset 0), else in list which (relays: AP_INC), or for Stage 1
 * (which < 0) in the receiver's primary or secondary list by direction.
 */
static int ap_emit(struct tc_ap *ap, int node, int d, int g, int hops, struct tc_ap_vec *v, int which)
{
	int8_t route[TC_MAX_DIMS] = { 0 };
	struct tc_ap_vec *done, *pos, *neg;
	int dst, err;

	if (!v->n)
		return 0;
	route[d] = (int8_t)(hops * g);
	dst = tc_shape_walk(ap->sh, node, route);
	if (dst < 0)
		return -EINVAL;
	err = tc_sched_msg(ap->s, node, dst, route);
	if (err < 0)
		return err;
	done = &ap->next[dst];
	if (which >= 0) {
		pos = neg = ap_list(ap, dst, d, which);
	} else {
		int even = !ap_parity(ap, dst, d, g); /* primary direction + */

		pos = ap_list(ap, dst, d, even ? AP_PRI : AP_SEC);
		neg = ap_list(ap, dst, d, even ? AP_SEC : AP_PRI);
	}
	for (uint32_t i = 0; i < v->n; i++) {
		const struct tc_ap_item *it = &v->v[i];
		int32_t e = it->e - hops;

		err = tc_sched_blk(ap->s, it->a, it->b);
		if (!err)
			err = vec_push(!e ? done : e > 0 ? pos : neg, it->a, it->b, e);
		if (err)
			return err;
	}
	vec_release(v);
	return 0;
}

int tc_ap_phase(struct tc_ap *ap, const int *stride, const int *start, unsigned int split, unsigned int swap,
		 tc_ap_dim_fn fn, void *ctx)
{
	const int nd = ap->ndims;
	int L[TC_MAX_DIMS], first[TC_MAX_DIMS], len[TC_MAX_DIMS], n2[TC_MAX_DIMS], steps = 0, err;

	for (int d = 0; d < nd; d++) {
		L[d] = 0;
		if (!stride[d])
			continue;
		if (stride[d] < 0 || ap->sh->dims[d] % stride[d] || (ap->sh->dims[d] / stride[d]) % 2 ||
		    !(ap->sh->wrap_mask & (1u << d)))
			return -EINVAL;
		L[d] = ap->sh->dims[d] / stride[d];
		first[d] = start ? start[d] : 0;
		if (first[d] < 0 || ((split >> d) & 1 && L[d] % 4))
			return -EINVAL;
		/* split ties: Stage 3 carries half the antipodes, one step more */
		len[d] = L[d] / 2 + ((split >> d) & 1);
		/* steps of the first relay stage: the primary one, or the secondary when swapped */
		n2[d] = (swap >> d) & 1 ? len[d] - 1 - L[d] / 4 : L[d] / 4;
		if (first[d] + len[d] > steps)
			steps = first[d] + len[d];
	}

	/* Sort what every node holds into Stage 1 lists (or keep it). */
	for (int n = 0; n < ap->nodes; n++) {
		struct tc_ap_vec *h = &ap->hold[n];

		for (uint32_t i = 0; i < h->n; i++) {
			const struct tc_ap_item *it = &h->v[i];
			int d = fn(ctx, n, it->a, it->b);
			int cur, to, diff, e;

			if (d >= 0 && (d >= nd || !stride[d]))
				return -EINVAL;
			if (d >= 0) {
				cur = ap->coords[(size_t)n * nd + d];
				to = ap->coords[(size_t)it->b * nd + d];
				diff = ((to - cur) % ap->sh->dims[d] + ap->sh->dims[d]) % ap->sh->dims[d];
				if (diff % stride[d])
					return -EINVAL;
				e = diff / stride[d];
				if (2 * e > L[d])
					e -= L[d];
				if (e) {
					err = vec_push(ap_list(ap, n, d, AP_S1), it->a, it->b, e);
					if (err)
						return err;
					continue;
				}
			}
			err = vec_push(&ap->next[n], it->a, it->b, 0);
			if (err)
				return err;
		}
		vec_release(h);
	}

	for (int t = 0; t < steps; t++) {
		err = tc_sched_step(ap->s);
		if (err < 0)
			return err;
		for (int n = 0; n < ap->nodes; n++) {
			for (int d = 0; d < nd; d++) {
				int g = stride[d], tt = t - first[d], par, prim;
				struct tc_ap_vec *v;

				if (!g || tt < 0 || tt >= len[d])
					continue;
				par = ap_parity(ap, n, d, g);
				prim = par ? -1 : 1;
				if (tt == 0) {
					/* Stage 1: odd offsets one logical hop; ties by parity. */
					int ties = 0;

					v = ap_list(ap, n, d, AP_S1);
					for (uint32_t i = 0; i < v->n; i++) {
						struct tc_ap_item it = v->v[i];

						/* L = 2 mod 4: a bundle of ties alternates, the odd one out by parity. */
						if (2 * it.e == L[d] && L[d] % 4 == 0)
							it.e = ((split >> d) & 1 && (ties++ & 1)) ? -prim * it.e : prim * it.e;
						else if (2 * it.e == L[d])
							it.e = (par ^ (ties++ & 1)) ? it.e : -it.e;
						if (it.e & 1)
							err = vec_push(&ap->out[it.e > 0 ? 0 : 1], it.a, it.b, it.e);
						else
							err = vec_push(ap_list(ap, n, d, (it.e > 0) == (prim > 0) ? AP_PRI : AP_SEC),
								       it.a, it.b, it.e);
						if (err)
							return err;
					}
					vec_release(v);
					err = ap_emit(ap, n, d, g, 1, &ap->out[0], -1);
					if (!err)
						err = ap_emit(ap, n, d, g, -1, &ap->out[1], -1);
				} else if ((tt <= n2[d]) != ((swap >> d) & 1)) {
					/* Stage 2: primary direction, arrivals wait in AP_INC. */
					err = ap_emit(ap, n, d, g, 2 * prim, ap_list(ap, n, d, AP_PRI), AP_INC);
				} else {
					/* Stage 3: secondary direction. */
					err = ap_emit(ap, n, d, g, -2 * prim, ap_list(ap, n, d, AP_SEC), AP_INC);
				}
				if (err)
					return err;
			}
		}
		/* Arrivals of a relay step are sent in the next one. */
		for (int n = 0; n < ap->nodes; n++) {
			for (int d = 0; d < nd; d++) {
				struct tc_ap_vec tmp, *act, *inc;
				int tt = t - first[d];

				if (!stride[d] || tt < 1 || tt >= len[d])
					continue;
				act = ap_list(ap, n, d, (tt <= n2[d]) != ((swap >> d) & 1) ? AP_PRI : AP_SEC);
				inc = ap_list(ap, n, d, AP_INC);
				tmp = *act;
				*act = *inc;
				*inc = tmp;
			}
		}
	}

	/* Whatever a ring did not deliver is a bug in the caller's strides. */
	for (int n = 0; n < ap->nodes; n++)
		for (int d = 0; d < nd; d++)
			for (int w = 0; w < TC_AP_NLISTS; w++)
				if (ap_list(ap, n, d, w)->n)
					return -EPROTO;
	for (int n = 0; n < ap->nodes; n++) {
		struct tc_ap_vec tmp = ap->hold[n];

		ap->hold[n] = ap->next[n];
		ap->next[n] = tmp;
	}
	return steps;
}

int tc_ap_check_done(const struct tc_ap *ap)
{
	for (int n = 0; n < ap->nodes; n++) {
		const struct tc_ap_vec *h = &ap->hold[n];

		for (uint32_t i = 0; i < h->n; i++)
			if (h->v[i].b != n)
				return -EPROTO;
	}
	return 0;
}

static int ar_dim0(void *ctx, int node, int32_t a, int32_t b)
{
	(void)ctx;
	(void)node;
	(void)a;
	(void)b;
	return 0;
}

int tc_ar_build_ring(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const int stride[TC_MAX_DIMS] = { 1 };
	struct tc_sched *s;
	struct tc_ap ap;
	int p, err;

	if (shape->ndims != 1 || !(shape->wrap_mask & 1)) {
		*why = "ar: needs a ring (1-D torus); use opt2d or pad for other shapes";
		return -EOPNOTSUPP;
	}
	if (shape->one_port) {
		*why = "ar: all-port algorithm; use ar1 on one-port rings";
		return -EOPNOTSUPP;
	}
	p = shape->dims[0];
	if (p % 2) {
		*why = "ar: ring size must be even (000 Sec. III); use opt2d or pad for odd rings";
		return -EOPNOTSUPP;
	}
	s = tc_sched_new(shape, TC_COLL_ALLTOALL, "ar", "000 Sec. III-A, Fig. 2 (Algorithm AR), Lemma 2",
			 TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST);
	if (!s)
		return -ENOMEM;
	err = tc_ap_init(&ap, s);
	if (err)
		return tc_sched_done(s, err, out, why, "ar: internal error building the schedule");
	for (int n = 0; n < p && !err; n++)
		for (int t = 0; t < p && !err; t++)
			if (t != n)
				err = tc_ap_hold(&ap, n, n, t);
	if (!err)
		err = tc_ap_phase(&ap, stride, NULL, 0, 0, ar_dim0, NULL);
	if (err >= 0)
		err = tc_ap_check_done(&ap);
	tc_ap_free(&ap);
	return tc_sched_done(s, err, out, why, "ar: internal error building the schedule");
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	return tc_ar_build_ring(shape, out, why);
}

const struct tc_algo tc_algo_ar = {
	.name = "ar",
	.coll = TC_COLL_ALLTOALL,
	.summary = "all-port ring complete exchange (000 Sec. III-A, Algorithm AR): ceil(p^2/8) blocks in p/2 steps",
	.build = build,
};
