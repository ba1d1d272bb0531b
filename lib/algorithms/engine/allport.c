// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The all-port ring engine (engine/allport.h has the stages and the tie
 * rules): Algorithm AR of Liu, Gu, Bi, Tu and Dong, "Optimal All-to-All
 * Personalized Communication in All-Port Tori" (Sec. III), run on every
 * dimension's (logical) rings in the same steps. ar, at2 and allport-kd (and
 * pad through them) build on it.
 *
 * The engine is a step-by-step relay: each node keeps, per dimension, the
 * blocks of Stage 1, of its primary and of its secondary direction, and sends
 * a whole list as one message. Every block is touched once per message that
 * carries it, so building costs O(blocks in the schedule).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	if (ap->waitq)
		for (size_t i = 0; i < (size_t)ap->nodes * ap->ndims * TC_AP_MAX_WAIT; i++)
			free(ap->waitq[i].v);
	free(ap->waitq);
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

/* One phase's geometry per dimension (tc_ap_phase's arguments, checked). */
struct ap_phase {
	const int *stride;
	unsigned int split, swap;
	int L[TC_MAX_DIMS];	/* logical ring length, 0: dimension idle */
	int first[TC_MAX_DIMS]; /* step the dimension starts in */
	int len[TC_MAX_DIMS];	/* its steps */
	int n2[TC_MAX_DIMS];	/* steps of its first relay stage */
	int end[TC_MAX_DIMS];	/* relays: the last arrival (wait + |e|) */
	unsigned int relay;	/* dimensions that relay one hop a step: odd rings and ap->relay */
	int ties[TC_MAX_DIMS];	/* relays: the node's antipodes filed so far */
};

/* Check the arguments and lay out every dimension's steps; the phase's steps or -EINVAL. */
static int ap_phase_setup(const struct tc_ap *ap, struct ap_phase *ph, const int *start)
{
	const int *stride = ph->stride;
	int steps = 0;

	for (int d = 0; d < ap->ndims; d++) {
		ph->L[d] = 0;
		if (!stride[d])
			continue;
		if (stride[d] < 0 || ap->sh->dims[d] % stride[d] || ap->sh->dims[d] / stride[d] < 2 ||
		    !(ap->sh->wrap_mask & (1u << d)))
			return -EINVAL;
		ph->L[d] = ap->sh->dims[d] / stride[d];
		ph->first[d] = start ? start[d] : 0;
		if (ph->L[d] % 2)
			ph->relay |= 1u << d;
		if (ph->first[d] < 0 || ((ph->split >> d) & 1 && ph->L[d] % 4) ||
		    ((ph->relay >> d) & 1 && ((ph->split | ph->swap) >> d) & 1))
			return -EINVAL;
		/* split ties: Stage 3 carries half the antipodes, one step more */
		ph->len[d] = ph->L[d] / 2 + ((ph->split >> d) & 1);
		/* steps of the first relay stage: the primary one, or the secondary when swapped */
		ph->n2[d] = (ph->swap >> d) & 1 ? ph->len[d] - 1 - ph->L[d] / 4 : ph->L[d] / 4;
		if (ph->first[d] + ph->len[d] > steps)
			steps = ph->first[d] + ph->len[d];
	}
	return steps;
}

/* The half of node n's ties on dimension d block {a, b} is in (struct tc_ap.tie), else the
 * next of *count's alternation. */
static int ap_tie(const struct tc_ap *ap, int n, int d, int32_t a, int32_t b, int *count)
{
	return ap->tie ? ap->tie(ap->tie_ctx, n, d, a, b) & 1 : (*count)++ & 1;
}

/*
 * A relayed block: to its direction's list, or to wait (ap->wait) before it
 * leaves. An even ring's antipodes alternate between the directions, the
 * first one + on an even node and - on an odd one.
 */
static int ap_file_relay(struct tc_ap *ap, struct ap_phase *ph, int n, int d, const struct tc_ap_item *it, int e)
{
	int w;

	if (2 * e == ph->L[d] && (ap_tie(ap, n, d, it->a, it->b, &ph->ties[d]) ^ ap_parity(ap, n, d, ph->stride[d])))
		e = -e;
	w = ap->wait ? ap->wait(ap->wait_ctx, d, e) : 0;

	if (w < 0 || w >= TC_AP_MAX_WAIT)
		return -EINVAL;
	if (w + abs(e) > ph->end[d])
		ph->end[d] = w + abs(e);
	if (!w)
		return vec_push(ap_list(ap, n, d, e > 0 ? AP_PRI : AP_SEC), it->a, it->b, e);
	if (!ap->waitq) {
		ap->waitq = calloc((size_t)ap->nodes * ap->ndims * TC_AP_MAX_WAIT, sizeof(*ap->waitq));
		if (!ap->waitq)
			return -ENOMEM;
	}
	return vec_push(&ap->waitq[((size_t)n * ap->ndims + d) * TC_AP_MAX_WAIT + w], it->a, it->b, e);
}

/* Blocks of node n whose wait on relay d ends at its step tt join it. */
static int ap_depart(struct tc_ap *ap, int n, int d, int tt)
{
	struct tc_ap_vec *q;

	if (!ap->waitq || tt >= TC_AP_MAX_WAIT)
		return 0;
	q = &ap->waitq[((size_t)n * ap->ndims + d) * TC_AP_MAX_WAIT + tt];
	for (uint32_t i = 0; i < q->n; i++) {
		int err = vec_push(ap_list(ap, n, d, q->v[i].e > 0 ? AP_PRI : AP_SEC), q->v[i].a, q->v[i].b, q->v[i].e);

		if (err)
			return err;
	}
	vec_release(q);
	return 0;
}

/* File one held block of node n: into dimension d's Stage 1 list, or kept (-1: stays). */
static int ap_phase_file(struct tc_ap *ap, struct ap_phase *ph, int n, int d, const struct tc_ap_item *it)
{
	const int nd = ap->ndims;
	int cur, to, diff, e;

	if (d >= 0 && (d >= nd || !ph->stride[d]))
		return -EINVAL;
	if (d >= 0) {
		cur = ap->coords[(size_t)n * nd + d];
		to = ap->coords[(size_t)it->b * nd + d];
		diff = ((to - cur) % ap->sh->dims[d] + ap->sh->dims[d]) % ap->sh->dims[d];
		if (diff % ph->stride[d])
			return -EINVAL;
		e = diff / ph->stride[d];
		if (2 * e > ph->L[d])
			e -= ph->L[d];
		/* a relay hops from its first step: straight to its direction's list (or waits) */
		if (e && (ph->relay >> d) & 1)
			return ap_file_relay(ap, ph, n, d, it, e);
		if (e)
			return vec_push(ap_list(ap, n, d, AP_S1), it->a, it->b, e);
	}
	return vec_push(&ap->next[n], it->a, it->b, 0);
}

/* Sort what every node holds into Stage 1 lists (or keep it). */
static int ap_phase_sort(struct tc_ap *ap, struct ap_phase *ph, tc_ap_dim_fn fn, void *ctx)
{
	for (int n = 0; n < ap->nodes; n++) {
		struct tc_ap_vec *h = &ap->hold[n];

		memset(ph->ties, 0, sizeof(ph->ties));
		for (uint32_t i = 0; i < h->n; i++) {
			int err = ap_phase_file(ap, ph, n, fn(ctx, n, h->v[i].a, h->v[i].b), &h->v[i]);

			if (err)
				return err;
		}
		vec_release(h);
	}
	return 0;
}

/*
 * Which half of a bundle of ties (blocks held by node n at half an L = 2
 * mod 4 ring of dimension d) block {a, .} belongs to: the parity of a's
 * offset from n summed over the other dimensions. A function of the block
 * and the node alone, so a node's choice does not depend on the order its
 * blocks arrived in and the schedule commutes with the translations that
 * keep parities (core/part_sym.c builds a node's part from that). In AT2's
 * Phase 2 the r ties of a node come from r sources, half an odd offset
 * away across the row, in Phase 3 the c ties from the c sources of a
 * column: both halves equal, as the alternation does. allport-kd's bundles
 * are not split evenly by it (6x6x6: 191 blocks for 162), so it alternates.
 */
static int ap_tie_parity(const struct tc_ap *ap, int n, int d, int32_t a)
{
	const int *nc = tc_ap_coords(ap, n), *ac = tc_ap_coords(ap, a);
	int h = 0;

	for (int k = 0; k < ap->ndims; k++)
		if (k != d)
			h ^= (nc[k] ^ ac[k]) & 1;
	return h;
}

/* Stage 1 of node n on dimension d: odd offsets one logical hop; ties by parity. */
static int ap_stage1(struct tc_ap *ap, const struct ap_phase *ph, int n, int d, int par, int prim)
{
	struct tc_ap_vec *v = ap_list(ap, n, d, AP_S1);
	const int L = ph->L[d], g = ph->stride[d];
	int ties = 0, err;

	for (uint32_t i = 0; i < v->n; i++) {
		struct tc_ap_item it = v->v[i];

		/* L = 2 mod 4: a bundle of ties alternates, the odd one out by
		 * parity; or (tie_by_origin) splits by the parity of the block's
		 * origin across the other dimensions (ap_tie_parity), then the node's. */
		if (2 * it.e == L && L % 4 == 0)
			it.e = ((ph->split >> d) & 1 && ap_tie(ap, n, d, it.a, it.b, &ties)) ? -prim * it.e : prim * it.e;
		else if (2 * it.e == L && ap->tie_by_origin)
			it.e = (par ^ ap_tie_parity(ap, n, d, it.a)) ? it.e : -it.e;
		else if (2 * it.e == L)
			it.e = (par ^ ap_tie(ap, n, d, it.a, it.b, &ties)) ? it.e : -it.e;
		if (it.e & 1)
			err = vec_push(&ap->out[it.e > 0 ? 0 : 1], it.a, it.b, it.e);
		else
			err = vec_push(ap_list(ap, n, d, (it.e > 0) == (prim > 0) ? AP_PRI : AP_SEC), it.a, it.b,
				       it.e);
		if (err)
			return err;
	}
	vec_release(v);
	err = ap_emit(ap, n, d, g, 1, &ap->out[0], -1);
	return err ? err : ap_emit(ap, n, d, g, -1, &ap->out[1], -1);
}

/* Relay step tt of a dimension: in its first relay stage (primary, unless swapped)? */
static int ap_in_first_relay(const struct ap_phase *ph, int d, int tt)
{
	return (tt <= ph->n2[d]) != ((ph->swap >> d) & 1);
}

/* Step t of the phase: every node's messages on every active dimension. */
static int ap_phase_step(struct tc_ap *ap, const struct ap_phase *ph, int t)
{
	int err = tc_sched_step(ap->s);

	if (err < 0)
		return err;
	for (int n = 0; n < ap->nodes; n++) {
		for (int d = 0; d < ap->ndims; d++) {
			int g = ph->stride[d], tt = t - ph->first[d], par, prim;

			if (!g || tt < 0 || tt >= ph->len[d])
				continue;
			par = ap_parity(ap, n, d, g);
			prim = par ? -1 : 1;
			if ((ph->relay >> d) & 1) /* relay: one hop each way; - arrivals wait in AP_S1 */
				err = ap_depart(ap, n, d, tt) ?: ap_emit(ap, n, d, g, 1, ap_list(ap, n, d, AP_PRI), AP_INC) ?:
				      ap_emit(ap, n, d, g, -1, ap_list(ap, n, d, AP_SEC), AP_S1);
			else if (tt == 0) /* Stage 1 */
				err = ap_stage1(ap, ph, n, d, par, prim);
			else if (ap_in_first_relay(ph, d, tt)) /* Stage 2: primary direction, arrivals wait in AP_INC */
				err = ap_emit(ap, n, d, g, 2 * prim, ap_list(ap, n, d, AP_PRI), AP_INC);
			else /* Stage 3: secondary direction */
				err = ap_emit(ap, n, d, g, -2 * prim, ap_list(ap, n, d, AP_SEC), AP_INC);
			if (err)
				return err;
		}
	}
	return 0;
}

static void ap_swap_lists(struct tc_ap_vec *x, struct tc_ap_vec *y)
{
	struct tc_ap_vec tmp = *x;

	*x = *y;
	*y = tmp;
}

/* Arrivals of a relay step are sent in the next one. */
static void ap_phase_rotate(struct tc_ap *ap, const struct ap_phase *ph, int t)
{
	for (int n = 0; n < ap->nodes; n++) {
		for (int d = 0; d < ap->ndims; d++) {
			int tt = t - ph->first[d];

			if (!ph->stride[d] || tt < 0 || tt >= ph->len[d])
				continue;
			if ((ph->relay >> d) & 1) {
				ap_swap_lists(ap_list(ap, n, d, AP_PRI), ap_list(ap, n, d, AP_INC));
				ap_swap_lists(ap_list(ap, n, d, AP_SEC), ap_list(ap, n, d, AP_S1));
				continue;
			}
			if (tt < 1)
				continue;
			ap_swap_lists(ap_list(ap, n, d, ap_in_first_relay(ph, d, tt) ? AP_PRI : AP_SEC),
				      ap_list(ap, n, d, AP_INC));
		}
	}
}

int tc_ap_phase(struct tc_ap *ap, const int *stride, const int *start, unsigned int split, unsigned int swap,
		 tc_ap_dim_fn fn, void *ctx)
{
	struct ap_phase ph = { .stride = stride, .split = split, .swap = swap, .relay = ap->relay };
	int steps = ap_phase_setup(ap, &ph, start), err;

	if (steps < 0)
		return steps;
	err = ap_phase_sort(ap, &ph, fn, ctx);
	/* relays with waits stretch to their last arrival */
	for (int d = 0; d < ap->ndims; d++) {
		if (!ph.L[d] || !((ph.relay >> d) & 1) || ph.end[d] <= ph.len[d])
			continue;
		ph.len[d] = ph.end[d];
		if (ph.first[d] + ph.len[d] > steps)
			steps = ph.first[d] + ph.len[d];
	}
	for (int t = 0; !err && t < steps; t++) {
		err = ap_phase_step(ap, &ph, t);
		if (!err)
			ap_phase_rotate(ap, &ph, t);
	}
	if (err)
		return err;
	/* Whatever a ring did not deliver is a bug in the caller's strides. */
	for (int n = 0; n < ap->nodes; n++)
		for (int d = 0; d < ap->ndims; d++)
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
