// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * All-to-all broadcast by the broadcast pattern, all-port 2D meshes and tori
 * (the All-to-All Communication slides, "Broadcast Pattern", cases 1-3 with U, I and
 * mod2, Theorems 2-3, Corollaries 1-2).
 *
 * A message from (x0, y0) that reaches (x, y) is relayed by a rule that only
 * depends on the offset (dx, dy) = (x - x0, y - y0):
 *   case 1, dx = dy = 0:   to all four neighbours;
 *   case 2, one of them 0: along the axis and to one side (the side alternates
 *                          with the parity of the offset);
 *   case 3, neither 0:     to one neighbour, moving away from the origin in x
 *                          or in y by the parity of dx + dy.
 * In an infinite mesh this is a spanning tree in which every node at
 * distance d hangs off one node at distance d - 1 (Theorem 2), and every
 * channel carries d messages in phase d (Theorem 3).
 *
 * Trimming: the tree's parent of an offset moves one coordinate one step
 * toward 0, so the tree restricted to any box of offsets that contains 0 is
 * again a spanning tree of that box. On a mesh the box is the mesh seen from
 * the origin ("trimmed at the boundary"). On a torus the box is the set of
 * shortest offsets; for an odd side this is exactly the slides' "additional
 * check" (drop a neighbour that is not farther from the origin), for an even
 * side it also breaks the tie at n/2 (either +n/2 or -n/2 is kept, chosen per
 * origin, see bp_sel), so the antipodal row/column is reached once, not
 * twice. The same holds for any r x c and for mixed wrap flags.
 *
 * Schedule: phase d is step d; in it every node relays the messages of its
 * (d-1)-neighbours, one combined message per output channel. Every path is a
 * shortest path; every message goes one hop; a directed link carries one
 * message per step.
 *
 * What it achieves (measured by tests/unit/test_gossip.c): diameter steps on
 * every shape; on an odd n x n torus every channel relays (n^2-1)/4 messages
 * and C_d/4 in phase d (Corollary 1, Theorem 3); on an even n x n torus
 * ceil((n^2-1)/4), the in-degree bound; on an n x n mesh ceil((n^2-1)/2), the
 * corner bound (Corollary 2). On r x c tori with r != c the pattern's
 * four-way split is uneven: 1.0x to 1.25x of ceil((rc-1)/4) on 3..16 sides.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/algos.h"
#include "core/part.h"

#define BP_CITE "All-to-All Communication slides, Broadcast Pattern (cases 1-3, torus additional check), Thm 2-3, Cor 1-2"
#define BP_CLAIMS (TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST | TC_CLAIM_ONE_HOP)

static int bp_u(int x)
{
	return x > 0;
}

static int bp_i(int x)
{
	return x > 0 ? 1 : -1;
}

static int bp_mod2(int x)
{
	return ((x % 2) + 2) % 2;
}

/*
 * The slides' rule: the offsets (relative to the current node) of the
 * neighbours a message with origin offset (dx, dy) is relayed to, in an
 * infinite mesh. Returns how many (1, 2 or 4).
 */
static int bp_children(int dx, int dy, int out[4][2])
{
	int s, u;

	if (!dx && !dy) {				/* case 1 */
		static const int all[4][2] = { { 1, 0 }, { -1, 0 }, { 0, 1 }, { 0, -1 } };

		for (int k = 0; k < 4; k++) {
			out[k][0] = all[k][0];
			out[k][1] = all[k][1];
		}
		return 4;
	}
	if (!dx) {					/* case 2.1: on the y axis */
		s = bp_i(dy);
		out[0][0] = bp_mod2(dy + bp_u(s));
		out[0][1] = s * bp_mod2(dy + 1 - bp_u(s));
		out[1][0] = -bp_mod2(dy + bp_u(-s));
		out[1][1] = s * bp_mod2(dy + 1 - bp_u(-s));
		return 2;
	}
	if (!dy) {					/* case 2.2: on the x axis */
		s = bp_i(dx);
		out[0][0] = s * bp_mod2(dx + bp_u(s));
		out[0][1] = bp_mod2(dx + 1 - bp_u(s));
		out[1][0] = s * bp_mod2(dx + bp_u(-s));
		out[1][1] = -bp_mod2(dx + 1 - bp_u(-s));
		return 2;
	}
	u = bp_u(bp_i(dx) * bp_i(dy));			/* case 3 */
	out[0][0] = bp_i(dx) * bp_mod2(dx + dy + u);
	out[0][1] = bp_i(dy) * bp_mod2(dx + dy + 1 - u);
	return 1;
}

/*
 * Tie-breaking on an even wrapping side: the node at ring distance n/2 is
 * reached from the + side (box (-n/2, n/2]) or from the - side
 * ([-n/2, n/2)). Variant (vx, vy) picks the side of dimension 0 by the
 * parity of sel(vx) and of dimension 1 by sel(vy), where sel is 0 (always
 * +), x0, y0 or x0 + y0 of the origin. (1, 1), both by x0, balances every
 * even n x n torus to ceil((n^2-1)/4) per channel; the build tries all 16
 * and keeps the one with the lowest per-channel maximum for the shape.
 */
static int bp_sel(int v, const int *oc)
{
	switch (v) {
	case 1: return oc[0] & 1;
	case 2: return oc[1] & 1;
	case 3: return (oc[0] + oc[1]) & 1;
	default: return 0;
	}
}

/* The box of offsets seen from an origin at oc in dimension d. */
static void bp_box(const struct tc_shape *sh, int d, const int *oc, int variant, int *lo, int *hi)
{
	int n = sh->dims[d];

	if (sh->wrap_mask & (1u << d)) {
		*lo = -((n - 1) / 2);
		*hi = n / 2;
		if (!(n & 1) && bp_sel(d ? variant & 3 : variant >> 2, oc)) {
			*lo = -(n / 2);
			*hi = n / 2 - 1;
		}
	} else {
		*lo = -oc[d];
		*hi = n - 1 - oc[d];
	}
}

static int bp_port(int d, int hop)
{
	return 2 * d + (hop < 0);
}

typedef int (*bp_fn)(void *arg, uint32_t step, int src, int port, int origin);

/* Every relay of every origin's message: fn(step, node, port, origin). */
static int bp_walk(const struct tc_shape *shape, int variant, bp_fn fn, void *arg)
{
	const int n0 = shape->dims[0], n1 = shape->dims[1];

	for (int o = 0; o < shape->nodes; o++) {
		int oc[2], lo[2], hi[2];

		tc_shape_coords(shape, o, oc);
		for (int d = 0; d < 2; d++)
			bp_box(shape, d, oc, variant, &lo[d], &hi[d]);
		for (int dx = lo[0]; dx <= hi[0]; dx++) {
			for (int dy = lo[1]; dy <= hi[1]; dy++) {
				int ch[4][2], nch = bp_children(dx, dy, ch);
				int x = (oc[0] + dx + n0) % n0, y = (oc[1] + dy + n1) % n1;
				int v = x * n1 + y;
				uint32_t step = (uint32_t)(abs(dx) + abs(dy));

				for (int k = 0; k < nch; k++) {
					int cx = dx + ch[k][0], cy = dy + ch[k][1], err;

					if (cx < lo[0] || cx > hi[0] || cy < lo[1] || cy > hi[1])
						continue;	/* trimmed / additional check */
					err = fn(arg, step, v, ch[k][0] ? bp_port(0, ch[k][0]) : bp_port(1, ch[k][1]), o);
					if (err)
						return err;
				}
			}
		}
	}
	return 0;
}

struct bp_load {
	int nlinks;
	int *total; /* per directed link */
	int *step;  /* per (step, directed link) */
};

static int bp_count(void *arg, uint32_t step, int src, int port, int origin)
{
	struct bp_load *l = arg;

	(void)origin;
	l->total[src * 4 + port]++;
	l->step[(size_t)step * l->nlinks + src * 4 + port]++;
	return 0;
}

/* Counting sort of the relays by (step, node, port): per key a count, then the origins. */
struct bp_bucket {
	int nodes;
	uint32_t *first; /* nkeys + 1 */
	int32_t *origin;
	int fill;
};

static size_t bp_key(int nodes, uint32_t step, int src, int port)
{
	return ((size_t)step * nodes + src) * 4 + port;
}

static int bp_bucket_count(void *arg, uint32_t step, int src, int port, int origin)
{
	struct bp_bucket *b = arg;

	(void)origin;
	b->first[bp_key(b->nodes, step, src, port) + 1]++;
	return 0;
}

static int bp_bucket_place(void *arg, uint32_t step, int src, int port, int origin)
{
	struct bp_bucket *b = arg;

	b->origin[b->first[bp_key(b->nodes, step, src, port)]++] = origin;
	return 0;
}

/*
 * The tie-breaking variant with the lowest per-channel maximum (the slides'
 * measure), then the lowest sum over steps of the busiest channel of the step
 * (what a lock-step execution waits for); (1, 1) first. Each try walks
 * every tree once (nodes^2 relays), so the search stops at 400 nodes.
 */
static int bp_best_variant(const struct tc_shape *shape, int diam)
{
	static const int order[16] = { 5, 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	struct bp_load l = { .nlinks = shape->nodes * 4 };
	long bestmax = -1, bestsum = -1;
	int best = 5, even = 0;

	for (int d = 0; d < 2; d++)
		even |= (shape->wrap_mask & (1u << d)) && !(shape->dims[d] & 1);
	/* no tie to break; beyond 400 nodes the search costs more than it is worth: (1, 1) */
	if (!even || shape->nodes > 400)
		return best;
	l.total = malloc((size_t)l.nlinks * sizeof(int));
	l.step = malloc((size_t)(diam + 1) * l.nlinks * sizeof(int));
	if (!l.total || !l.step)
		goto out;
	for (int i = 0; i < 16; i++) {
		long mx = 0, sum = 0;

		memset(l.total, 0, (size_t)l.nlinks * sizeof(int));
		memset(l.step, 0, (size_t)(diam + 1) * l.nlinks * sizeof(int));
		bp_walk(shape, order[i], bp_count, &l);
		for (int k = 0; k < l.nlinks; k++)
			if (l.total[k] > mx)
				mx = l.total[k];
		for (int st = 0; st <= diam; st++) {
			int smx = 0;

			for (int k = 0; k < l.nlinks; k++)
				if (l.step[(size_t)st * l.nlinks + k] > smx)
					smx = l.step[(size_t)st * l.nlinks + k];
			sum += smx;
		}
		if (bestmax < 0 || mx < bestmax || (mx == bestmax && sum < bestsum)) {
			bestmax = mx;
			bestsum = sum;
			best = order[i];
		}
	}
out:
	free(l.total);
	free(l.step);
	return best;
}

/* 0 if the pattern runs on shape, else -EOPNOTSUPP with *why; *diam: its steps. */
static int bp_shape(const struct tc_shape *shape, int *diam, const char **why)
{
	if (shape->ndims != 2) {
		*why = "bcast-pattern: the broadcast pattern is defined for 2D meshes and tori only";
		return -EOPNOTSUPP;
	}
	if (shape->one_port) {
		*why = "bcast-pattern: needs all-port nodes (a node relays to up to four neighbours per step)";
		return -EOPNOTSUPP;
	}
	if (shape->dims[0] < 2 || shape->dims[1] < 2) {
		*why = "bcast-pattern: each side must be at least 2";
		return -EOPNOTSUPP;
	}
	for (int d = 0; d < 2; d++)
		if ((shape->wrap_mask & (1u << d)) && shape->dims[d] < 3) {
			*why = "bcast-pattern: a wrapping side must be at least 3";
			return -EOPNOTSUPP;
		}
	*diam = 0;
	for (int d = 0; d < 2; d++)
		*diam += (shape->wrap_mask & (1u << d)) ? shape->dims[d] / 2 : shape->dims[d] - 1;
	return 0;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct bp_bucket bk = { 0 };
	struct tc_sched *s = NULL;
	int diam = 0, variant;
	size_t nkeys;
	int err;

	err = bp_shape(shape, &diam, why);
	if (err)
		return err;
	variant = bp_best_variant(shape, diam);
	bk.nodes = shape->nodes;
	nkeys = bp_key(shape->nodes, diam + 1, 0, 0);
	bk.first = calloc(nkeys + 1, sizeof(*bk.first));
	if (!bk.first)
		return -ENOMEM;
	bp_walk(shape, variant, bp_bucket_count, &bk);
	for (size_t k = 0; k < nkeys; k++)
		bk.first[k + 1] += bk.first[k];
	bk.origin = malloc(((size_t)bk.first[nkeys] + 1) * sizeof(*bk.origin));
	if (!bk.origin) {
		free(bk.first);
		return -ENOMEM;
	}
	bp_walk(shape, variant, bp_bucket_place, &bk);
	/* place advanced first[k] to the end of bucket k: the start of k is first[k-1] now */

	s = tc_sched_new(shape, TC_ALLGATHER, "bcast-pattern", BP_CITE, BP_CLAIMS);
	if (!s) {
		err = -ENOMEM;
		goto out;
	}
	for (int st = 0; st <= diam && !err; st++) {
		err = tc_sched_step(s);
		if (err < 0)
			goto out;
		err = 0;
		for (int v = 0; v < shape->nodes && !err; v++) {
			for (int port = 0; port < 4 && !err; port++) {
				size_t k = bp_key(shape->nodes, st, v, port);
				uint32_t lo = k ? bk.first[k - 1] : 0, hi = bk.first[k];
				int8_t route[TC_MAX_DIMS] = { 0 };

				if (lo == hi)
					continue;
				route[port / 2] = (port & 1) ? -1 : 1;
				err = tc_sched_msg(s, v, tc_shape_neighbor(shape, v, port), route);
				for (uint32_t i = lo; i < hi && err >= 0; i++)
					err = tc_sched_blk(s, bk.origin[i], 0);
				if (err > 0)
					err = 0;
			}
		}
	}
out:
	free(bk.first);
	free(bk.origin);
	return tc_sched_done(s, err, out, why, "bcast-pattern: building the schedule failed");
}

/*
 * The tie-breaking variant of a shape (bp_best_variant walks every tree up
 * to 400 nodes), found once per shape and kept for the process.
 */
struct bp_cache {
	struct bp_cache *next;
	struct tc_shape shape;
	int variant;
};

static pthread_mutex_t bp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bp_cache *bp_head; /* protected by bp_lock; entries never freed or changed */

static int bp_variant(const struct tc_shape *sh, int diam)
{
	struct bp_cache *c;
	int v;

	pthread_mutex_lock(&bp_lock);
	for (c = bp_head; c; c = c->next)
		if (tc_shape_equal(&c->shape, sh))
			break;
	if (!c) {
		v = bp_best_variant(sh, diam);
		c = calloc(1, sizeof(*c));
		if (c) {
			c->shape = *sh;
			c->variant = v;
			c->next = bp_head;
			bp_head = c;
		}
	} else {
		v = c->variant;
	}
	pthread_mutex_unlock(&bp_lock);
	return v;
}

/* One block node v sends (kind 0) or receives (kind 1) in step on port (v's port, either way). */
struct bp_ent {
	uint32_t key; /* (step * 2 + kind) * 4 + port */
	int32_t origin;
};

struct bp_node {
	const struct tc_shape *sh;
	int variant, v, vc[2];
	struct bp_ent *e;
	size_t n, cap;
};

static int bp_add(struct bp_node *b, uint32_t step, int kind, int port, int origin)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		struct bp_ent *e = realloc(b->e, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		b->e = e;
		b->cap = cap;
	}
	b->e[b->n].key = (step * 2 + kind) * 4 + port;
	b->e[b->n].origin = origin;
	b->n++;
	return 0;
}

static int bp_inbox(const int *off, const int *lo, const int *hi)
{
	return off[0] >= lo[0] && off[0] <= hi[0] && off[1] >= lo[1] && off[1] <= hi[1];
}

/*
 * Origin o's message at node v (offset off from o, in o's box): what v relays
 * (its children in the box), and unless v is o, the one neighbour whose
 * children include v (the tree's parent), which v receives it from.
 */
static int bp_origin(struct bp_node *b, int o, int want_recv)
{
	const struct tc_shape *sh = b->sh;
	int oc[2], lo[2], hi[2], off[2], ch[4][2], nch, err;
	uint32_t step;

	tc_shape_coords(sh, o, oc);
	for (int d = 0; d < 2; d++) {
		int n = sh->dims[d];

		bp_box(sh, d, oc, b->variant, &lo[d], &hi[d]);
		off[d] = b->vc[d] - oc[d];
		if (sh->wrap_mask & (1u << d)) {
			off[d] = ((off[d] - lo[d]) % n + n) % n + lo[d];
		}
	}
	step = (uint32_t)(abs(off[0]) + abs(off[1]));
	nch = bp_children(off[0], off[1], ch);
	for (int k = 0; k < nch; k++) {
		int c[2] = { off[0] + ch[k][0], off[1] + ch[k][1] };

		if (!bp_inbox(c, lo, hi))
			continue;
		err = bp_add(b, step, 0, ch[k][0] ? bp_port(0, ch[k][0]) : bp_port(1, ch[k][1]), o);
		if (err)
			return err;
	}
	if (!want_recv || !step)
		return 0;
	for (int d = 0; d < 2; d++)
		for (int h = -1; h <= 1; h += 2) {
			int u[2] = { off[0], off[1] };

			u[d] -= h;
			if (!bp_inbox(u, lo, hi))
				continue;
			nch = bp_children(u[0], u[1], ch);
			for (int k = 0; k < nch; k++)
				if (ch[k][d] == h && !ch[k][!d])
					/* from the neighbour on v's port against h */
					return bp_add(b, step - 1, 1, bp_port(d, -h), o);
		}
	return tc_err(-EPROTO, "bcast-pattern: node %d: no parent for origin %d", b->v, o);
}

static int bp_ent_cmp(const void *x, const void *y)
{
	const struct bp_ent *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->origin - b->origin;
}

/*
 * Node v's part: for every origin, v's offset from it in its box gives what v
 * relays and whom it receives it from (bp_origin): O(P) blocks, the node's
 * own traffic. Asked for one step's send to one peer (the local check), only
 * the origins at that distance from v are visited: O(sides).
 */
static int part(struct tc_part *pt, const char **why)
{
	const struct tc_shape *sh = &pt->shape;
	struct bp_node b = { .sh = sh, .v = pt->node };
	int64_t only = tc_part_only_step(pt);
	int diam, err;

	err = bp_shape(sh, &diam, why);
	if (err)
		return err;
	pt->cite = BP_CITE;
	pt->claims = BP_CLAIMS;
	b.variant = bp_variant(sh, diam);
	tc_shape_coords(sh, b.v, b.vc);
	if (only < 0) {
		for (int o = 0; o < sh->nodes && !err; o++)
			err = bp_origin(&b, o, 1);
	} else if (only < diam) {
		/* origins o = v - e with |e| = only, each once (its own box decides) */
		int r0 = sh->dims[0] - 1, st = (int)only;

		for (int e0 = -r0; e0 <= r0 && !err; e0++) {
			int e1 = st - abs(e0);

			if (e1 < 0 || e1 > sh->dims[1] - 1)
				continue;
			for (int sg = 1; sg >= -1 && !err; sg -= 2) {
				int oc[2] = { b.vc[0] - e0, b.vc[1] - sg * e1 }, lo[2], hi[2], e[2] = { e0, sg * e1 };
				int ok = 1;

				if (sg < 0 && !e1)
					break;
				for (int d = 0; d < 2; d++) {
					int n = sh->dims[d];

					if (sh->wrap_mask & (1u << d))
						oc[d] = (oc[d] % n + n) % n;
					ok &= oc[d] >= 0 && oc[d] < n;
				}
				if (!ok)
					continue;
				for (int d = 0; d < 2; d++)
					bp_box(sh, d, oc, b.variant, &lo[d], &hi[d]);
				if (bp_inbox(e, lo, hi))
					err = bp_add(&b, 0, 0, 0, oc[0] * sh->dims[1] + oc[1]);
			}
		}
		/* those origins, now with what v relays of them */
		for (size_t i = 0, n = b.n; i < n && !err; i++) {
			int o = b.e[i].origin;

			b.e[i].key = UINT32_MAX;
			err = bp_origin(&b, o, 0);
		}
	}
	if (!err)
		qsort(b.e, b.n, sizeof(*b.e), bp_ent_cmp);
	for (size_t i = 0; i < b.n && !err && b.e[i].key != UINT32_MAX; i++) {
		uint32_t key = b.e[i].key, step = key / 8;
		int kind = (key / 4) & 1, port = key & 3;
		int peer = tc_shape_neighbor(sh, b.v, port);
		int8_t route[TC_MAX_DIMS] = { 0 };

		if (i && key == b.e[i - 1].key) {
			err = tc_part_blk(pt, b.e[i].origin, 0);
			continue;
		}
		/* the hop of the message: v's port, or the sender's port towards v */
		route[port / 2] = (port & 1) ? -1 : 1;
		if (kind)
			route[port / 2] = (int8_t)-route[port / 2];
		err = tc_part_at(pt, step);
		if (!err)
			err = kind ? tc_part_msg(pt, peer, b.v, route) : tc_part_msg(pt, b.v, peer, route);
		if (!err)
			err = tc_part_blk(pt, b.e[i].origin, 0);
	}
	free(b.e);
	/* the whole schedule's last step (relays from the farthest nodes) is empty */
	if (!err)
		err = tc_part_finish(pt, diam);
	if (err)
		*why = "bcast-pattern: building the node's part failed";
	return err;
}

const struct tc_algo tc_algo_bcast_pattern = {
	.name = "bcast-pattern",
	.coll = TC_ALLGATHER,
	.summary = "broadcast pattern, all-port 2D mesh/torus (All-to-All Communication slides)",
	.build = build,
	.part = part,
	.price_mod = { 2, 2 },
};
