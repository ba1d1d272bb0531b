// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Complete exchange on an all-port 2D r x c torus, r and c multiples of 4:
 * Algorithm AT2 (Liu et al., All-Port Tori, Sec. IV-B, Fig. 5, Table I; Lemmas 3-4). Transmission
 * r*c^2/8 blocks (c the larger side), the lower bound of Lemma 1, in c/2 + 2
 * steps.
 *
 * Nodes fall into four groups G_ij = {(x, y) : x mod 2 = i, y mod 2 = j}.
 * Phase 1 (2 steps) moves every block to a node of its destination's group,
 * one hop towards the destination in each dimension where the offset is odd:
 * step 1 sends to the four neighbours, step 2 forwards the blocks whose both
 * offsets are odd to the diagonal node. Which dimension such a block takes
 * first rotates with its quadrant (Table I: x first when the signs of the two
 * offsets agree), so each port carries rc/8 + rc/16 blocks in step 1 and
 * rc/16 in step 2. Phases 2 and 3 run AR (Liu et al., All-Port Tori, Sec. III) on the logical rings
 * of one group, nodes two hops apart (AR's sub-rings are then four hops
 * apart; a message occupies every link of its route): G00 and G11 along rows
 * (dimension 1) then columns, G01 and G10 along columns then rows, so every
 * row and every column is used by one group at a time.
 *
 * Every block moves along a shortest path: the Phase 1 hop goes towards the
 * destination and leaves an even remaining offset, and offsets of exactly half
 * a ring are even (r, c multiples of 4) so they never move in Phase 1.
 */
#include <errno.h>
#include <stdlib.h>

#include "algorithms/algos.h"
#include "algorithms/engine/allport.h"
#include "core/part_sym.h"

/* Phase 2 (phase = 0) and 3 (phase = 1): the dimension the block travels. */
struct at2_ctx {
	const struct tc_ap *ap;
	int phase;
};

static int at2_dim(void *arg, int node, int32_t a, int32_t b)
{
	const struct at2_ctx *c = arg;
	const int *tc = tc_ap_coords(c->ap, b);
	int rows_first;

	(void)node;
	(void)a;
	rows_first = (tc[0] & 1) == (tc[1] & 1); /* G00, G11 */
	return rows_first ^ c->phase ? 1 : 0;
}

struct at2_list {
	int32_t *v; /* pairs a, b */
	uint32_t n, cap;
};

static int list_push(struct at2_list *l, int32_t a, int32_t b)
{
	if (tc_grow((void **)&l->v, &l->cap, l->n + 1, 2 * sizeof(*l->v), 64))
		return -ENOMEM;
	l->v[2 * l->n] = a;
	l->v[2 * l->n + 1] = b;
	l->n++;
	return 0;
}

/* Port p = 2*d + dir as a one-hop route. */
static void port_route(int port, int8_t *route)
{
	for (int d = 0; d < TC_MAX_DIMS; d++)
		route[d] = 0;
	route[port / 2] = (port & 1) ? -1 : 1;
}

/*
 * Phase 1's first hops: every block (o, t) is held where it is when both
 * offsets are even, else listed in first[] under the port of its first hop.
 */
static int at2_first_hops(struct tc_ap *ap, const struct tc_shape *sh, struct at2_list *first)
{
	const int P = sh->nodes;
	int err;

	for (int o = 0; o < P; o++) {
		const int *oc = tc_ap_coords(ap, o);

		if (!tc_sched_src_kept(ap->s, o))
			continue;
		for (int t = 0; t < P; t++) {
			const int *tcc = tc_ap_coords(ap, t);
			int dx, dy, port;

			if (t == o)
				continue;
			dx = tc_ap_delta(sh->dims[0], oc[0], tcc[0]);
			dy = tc_ap_delta(sh->dims[1], oc[1], tcc[1]);
			if (!(dx & 1) && !(dy & 1)) {
				err = tc_ap_hold(ap, o, o, t);
			} else if (!(dy & 1)) {
				err = list_push(&first[o * 4 + (dx > 0 ? 0 : 1)], o, t);
			} else if (!(dx & 1)) {
				err = list_push(&first[o * 4 + (dy > 0 ? 2 : 3)], o, t);
			} else {
				/* Table I: x first when the signs agree (QI, QIII), else y first. */
				port = ((dx > 0) == (dy > 0)) ? (dx > 0 ? 0 : 1) : (dy > 0 ? 2 : 3);
				err = list_push(&first[o * 4 + port], o, t);
			}
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * Send list l of node n on port as one message in Phase 1's step (0 or 1);
 * a block still an odd offset away in the other dimension after step 0 is
 * listed in second[], every other one is held where it arrives. l is freed.
 */
static int at2_send_list(struct tc_ap *ap, const struct tc_shape *sh, struct at2_list *l, int n, int port, int step,
			 struct at2_list *second)
{
	int8_t route[TC_MAX_DIMS];
	int dst, err;

	port_route(port, route);
	dst = tc_shape_walk(sh, n, route);
	err = tc_sched_msg(ap->s, n, dst, route);
	if (err < 0)
		return err;
	for (uint32_t i = 0; i < l->n; i++) {
		int32_t a = l->v[2 * i], b = l->v[2 * i + 1];
		int rest = 1 - port / 2;
		int dl = tc_ap_delta(sh->dims[rest], tc_ap_coords(ap, dst)[rest], tc_ap_coords(ap, b)[rest]);

		err = tc_sched_blk(ap->s, a, b);
		if (err)
			return err;
		/* Still an odd offset in the other dimension? */
		if (!step && (dl & 1)) {
			err = list_push(&second[dst * 4 + 2 * rest + (dl > 0 ? 0 : 1)], a, b);
		} else {
			err = tc_ap_hold(ap, dst, a, b);
		}
		if (err)
			return err;
	}
	/* emitted: give the memory back (128x128: 1.6 GB of first-step lists) */
	free(l->v);
	l->v = NULL;
	l->n = 0;
	l->cap = 0;
	return 0;
}

/*
 * Phase 1. Step 1: every node sends on each port the blocks whose first hop
 * is that port; step 2: forwards the diagonal ones. Blocks end up in ap.
 */
static int at2_phase1(struct tc_ap *ap, const struct tc_shape *sh)
{
	const int P = sh->nodes;
	struct at2_list *first, *second; /* per node, per port */
	int err = -ENOMEM;

	first = calloc((size_t)P * 4, sizeof(*first));
	second = calloc((size_t)P * 4, sizeof(*second));
	if (!first || !second)
		goto out;
	err = at2_first_hops(ap, sh, first);
	for (int step = 0; step < 2 && !err; step++) {
		struct at2_list *lists = step ? second : first;

		err = tc_sched_step(ap->s);
		if (err < 0)
			break;
		err = 0;
		for (int n = 0; n < P && !err; n++)
			for (int port = 0; port < 4 && !err; port++)
				if (lists[n * 4 + port].n)
					err = at2_send_list(ap, sh, &lists[n * 4 + port], n, port, step, second);
	}
out:
	for (int i = 0; first && second && i < P * 4; i++) {
		free(first[i].v);
		free(second[i].v);
	}
	free(first);
	free(second);
	return err;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const int stride[TC_MAX_DIMS] = { 2, 2 };
	struct at2_ctx ctx = { .ap = NULL };
	struct tc_sched *s;
	struct tc_ap ap;
	int err;

	if (shape->ndims != 2 || shape->wrap_mask != 3) {
		*why = "at2: needs a 2-D torus; use opt2d or pad for other shapes";
		return -EOPNOTSUPP;
	}
	if (shape->one_port) {
		*why = "at2: all-port algorithm; use at2-1p on one-port tori";
		return -EOPNOTSUPP;
	}
	if (shape->dims[0] % 4 || shape->dims[1] % 4) {
		*why = "at2: both sides must be multiples of 4 (Liu et al., All-Port Tori, Sec. IV); use opt2d or pad";
		return -EOPNOTSUPP;
	}
	s = tc_sched_new(shape, TC_ALLTOALL, "at2", "Liu et al., All-Port Tori, Sec. IV-B, Fig. 5, Table I (Algorithm AT2), Lemmas 3-4",
			 TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST);
	if (!s)
		return -ENOMEM;
	/* Sec. IV-D: messages are rearranged at the beginning of each phase. */
	s->rearranged_blocks = 3LL * shape->dims[0] * shape->dims[1];
	err = tc_ap_init(&ap, s);
	if (err)
		return tc_sched_done(s, err, out, why, "at2: internal error building the schedule");
	ctx.ap = &ap;
	ap.tie_by_origin = 1; /* translation invariant: a node's part is made from a cell (part()) */
	err = at2_phase1(&ap, shape);
	for (ctx.phase = 0; ctx.phase < 2 && err >= 0; ctx.phase++)
		err = tc_ap_phase(&ap, stride, NULL, 0, 0, at2_dim, &ctx);
	if (err >= 0)
		err = tc_ap_check_done(&ap);
	tc_ap_free(&ap);
	return tc_sched_done(s, err, out, why, "at2: internal error building the schedule");
}

/*
 * Node n's part: the schedule commutes with the translations by multiples
 * of 4 (groups are coordinate parities, the rings of Phases 2 and 3 have
 * stride 2 and their primary directions alternate along them), so it comes
 * from the blocks of the 16 nodes of one 4x4 cell (core/part_sym.c).
 */
static int part(struct tc_part *p, const char **why)
{
	return tc_part_translate(p, &tc_algo_at2, why);
}

const struct tc_algo tc_algo_at2 = {
	.name = "at2",
	.coll = TC_ALLTOALL,
	.summary = "all-port 2D torus complete exchange (Liu et al., All-Port Tori, Sec. IV, Algorithm AT2): r*c^2/8 blocks in c/2+2 steps",
	.build = build,
	.part = part,
	.sym_mod = { 4, 4 },
};
