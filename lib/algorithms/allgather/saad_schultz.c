// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Saad-Schultz all-to-all broadcast: ring allgathers dimension by dimension,
 * "each node sends the message along the horizontal ring, and then the
 * vertical ring" (All-to-All Communication slides, "Previous related work" and "Comparisons": 2 floor(n/2)
 * steps and (n^2-1)/2 blocks per channel on an n x n torus, twice the
 * broadcast pattern's transmission). Rows first: the last dimension (fastest
 * in node numbering), then the others towards dimension 0; in each later
 * phase a message carries everything its sender gathered so far (the
 * sub-box of the dimensions already done).
 *
 * One phase along dimension d of size n:
 *   - all-port, d wraps: both directions round the ring at once, floor(n/2)
 *     steps. When n is even the antipode's set arrives from both sides in the
 *     last step: a single block goes + (the first phase), a larger set is
 *     split, its first half + and its second half - (so every channel carries
 *     about (n^2-1)/2 blocks on n x n, the slides' figure for Saad-Schultz).
 *   - all-port, d is a mesh line: both directions along the line, n-1 steps,
 *     each set forwarded until it reaches the line's end.
 *   - one-port: a node sends one and receives one message per step, so one
 *     direction only, n-1 steps; on a mesh line the last node's message back
 *     to the first is routed n-1 hops along the - links, which no other
 *     message of the phase uses (contention-free, not one-hop).
 * Every directed link carries at most one message per step in every case.
 */
#include <errno.h>

#include "algorithms/algos.h"
#include "core/part.h"

#define SS_CITE \
	"baseline: Saad-Schultz dimension-by-dimension ring allgather (All-to-All Communication slides, previous work, comparisons)"

/*
 * The schedule is built whole (s) or as one node's part (pt): then only the
 * messages that node sends or receives are added, with their blocks.
 */
struct ss_ctx {
	struct tc_sched *s;
	struct tc_part *pt;
	const struct tc_shape *sh;
	int stride[TC_MAX_DIMS];
	unsigned int done; /* dimensions already gathered */
};

/* Node x with coordinate d replaced by c (mod n). */
static int with_coord(const struct ss_ctx *cx, int x, int d, int c)
{
	int n = cx->sh->dims[d], old = (x / cx->stride[d]) % n;

	c %= n;
	if (c < 0)
		c += n;
	return x + (c - old) * cx->stride[d];
}

enum ss_part { SS_ALL, SS_FIRST_HALF, SS_SECOND_HALF };

/*
 * Append the blocks z holds at the start of the phase (its sub-box of the done
 * dimensions, box blocks in all), or the first or second half of them.
 */
static int add_set(const struct ss_ctx *cx, int z, enum ss_part part)
{
	int g[TC_MAX_DIMS] = { 0 }, err, d, box = 1, t = 0;
	int base = z;

	for (d = 0; d < cx->sh->ndims; d++)
		if (cx->done & (1u << d)) {
			base = with_coord(cx, base, d, 0);
			box *= cx->sh->dims[d];
		}
	for (;; t++) {
		int y = base;

		for (d = 0; d < cx->sh->ndims; d++)
			y += g[d] * cx->stride[d];
		if (part == SS_ALL || (part == SS_FIRST_HALF) == (t < box / 2)) {
			err = cx->pt ? tc_part_blk(cx->pt, y, 0) : tc_sched_blk(cx->s, y, 0);
			if (err < 0)
				return err;
		}
		for (d = cx->sh->ndims - 1; d >= 0; d--) {
			if (!(cx->done & (1u << d)))
				continue;
			if (++g[d] < cx->sh->dims[d])
				break;
			g[d] = 0;
		}
		if (d < 0)
			return 0;
	}
}

static int send(const struct ss_ctx *cx, int x, int d, int hops, int origin, enum ss_part part)
{
	int8_t route[TC_MAX_DIMS] = { 0 };
	int c = (x / cx->stride[d]) % cx->sh->dims[d];
	int dst = with_coord(cx, x, d, c + hops), err;

	route[d] = (int8_t)hops;
	if (cx->pt) {
		if (x != cx->pt->node && dst != cx->pt->node)
			return 0;
		err = tc_part_msg(cx->pt, x, dst, route);
	} else {
		err = tc_sched_msg(cx->s, x, dst, route);
	}
	if (err < 0)
		return err;
	return add_set(cx, with_coord(cx, x, d, origin), part);
}

/* What node x sends in step st (1-based) of the phase along dimension d. */
static int node_sends(const struct ss_ctx *cx, int x, int d, int st)
{
	const struct tc_shape *sh = cx->sh;
	const int n = sh->dims[d], wrap = !!(sh->wrap_mask & (1u << d));
	int i = (x / cx->stride[d]) % n, err = 0;

	if (sh->one_port) {
		err = send(cx, x, d, (wrap || i < n - 1) ? 1 : -(n - 1), i - (st - 1), SS_ALL);
	} else if (wrap) {
		/* the antipode's set, from both sides at once when it can be split */
		int split = !(n & 1) && st == n / 2 && cx->done;

		err = send(cx, x, d, 1, i - (st - 1), split ? SS_FIRST_HALF : SS_ALL);
		if (!err && (st <= (n - 1) / 2 || split))
			err = send(cx, x, d, -1, i + (st - 1), split ? SS_SECOND_HALF : SS_ALL);
	} else {
		if (i + 1 < n && i - (st - 1) >= 0)
			err = send(cx, x, d, 1, i - (st - 1), SS_ALL);
		if (!err && i > 0 && i + (st - 1) < n)
			err = send(cx, x, d, -1, i + (st - 1), SS_ALL);
	}
	return err;
}

static int phase_steps(const struct tc_shape *sh, int d)
{
	const int n = sh->dims[d], wrap = !!(sh->wrap_mask & (1u << d));

	return (!sh->one_port && wrap) ? n / 2 : n - 1;
}

static int phase(struct ss_ctx *cx, int d)
{
	const struct tc_shape *sh = cx->sh;
	const int nsteps = phase_steps(sh, d);
	int err;

	for (int st = 1; st <= nsteps; st++) {
		err = tc_sched_step(cx->s);
		if (err < 0)
			return err;
		for (int x = 0; x < sh->nodes; x++) {
			err = node_sends(cx, x, d, st);
			if (err < 0)
				return err;
		}
	}
	cx->done |= 1u << d;
	return 0;
}

static unsigned int ss_claims(const struct tc_shape *shape)
{
	unsigned int claims = TC_CLAIM_CONTENTION_FREE | TC_CLAIM_ONE_HOP;

	if (shape->one_port) {
		claims |= TC_CLAIM_PERMUTATION;
		for (int d = 0; d < shape->ndims; d++)
			if (!(shape->wrap_mask & (1u << d)) && shape->dims[d] > 2)
				claims &= ~TC_CLAIM_ONE_HOP;
	}
	return claims;
}

static void ss_strides(struct ss_ctx *cx)
{
	const struct tc_shape *shape = cx->sh;

	cx->stride[shape->ndims - 1] = 1;
	for (int d = shape->ndims - 2; d >= 0; d--)
		cx->stride[d] = cx->stride[d + 1] * shape->dims[d + 1];
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct ss_ctx cx = { .sh = shape };
	int err = 0;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "saad-schultz: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	cx.s = tc_sched_new(shape, TC_ALLGATHER, "saad-schultz", SS_CITE, ss_claims(shape));
	if (!cx.s) {
		*why = "saad-schultz: cannot allocate the schedule";
		return -ENOMEM;
	}
	ss_strides(&cx);
	for (int d = shape->ndims - 1; d >= 0 && !err; d--)
		err = phase(&cx, d);
	return tc_sched_done(cx.s, err, out, why, "saad-schultz: building the schedule failed");
}

/*
 * Node x's part: in every step of a phase along d it sends what node_sends
 * gives it, and receives from the nodes of its own ring that can send to it
 * (its two ring neighbours, and on a one-port mesh line the line's last node,
 * whose message back to the first is routed): those nodes' sends, kept where
 * they reach x. O(ndims * n) messages, each with its sub-box of blocks.
 */
static int part(struct tc_part *pt, const char **why)
{
	const struct tc_shape *sh = &pt->shape;
	struct ss_ctx cx = { .sh = sh, .pt = pt };
	const int x = pt->node;
	uint32_t step = 0;
	int err = 0;

	if (sh->ndims < 1 || sh->ndims > TC_MAX_DIMS || sh->nodes < 2) {
		*why = "saad-schultz: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	pt->cite = SS_CITE;
	pt->claims = ss_claims(sh);
	ss_strides(&cx);
	for (int d = sh->ndims - 1; d >= 0 && !err; d--) {
		const int n = sh->dims[d], i = (x / cx.stride[d]) % n;
		int from[3], nfrom = 0;

		/* distinct senders to x along d */
		for (int k = 0; k < 3; k++) {
			int c = k == 0 ? i - 1 : k == 1 ? i + 1 : n - 1, y = with_coord(&cx, x, d, c), dup = y == x;

			for (int j = 0; j < nfrom; j++)
				dup |= from[j] == y;
			if (!dup)
				from[nfrom++] = y;
		}
		for (int st = 1; st <= phase_steps(sh, d) && !err; st++, step++) {
			if (!tc_part_wants(pt, step))
				continue;
			err = tc_part_at(pt, step);
			if (!err)
				err = node_sends(&cx, x, d, st);
			for (int j = 0; j < nfrom && !err && tc_part_only_peer(pt) < 0; j++)
				err = node_sends(&cx, from[j], d, st);
		}
		cx.done |= 1u << d;
	}
	if (!err)
		err = tc_part_finish(pt, step);
	if (err)
		*why = "saad-schultz: building the node's part failed";
	return err;
}

const struct tc_algo tc_algo_saad_schultz = {
	.name = "saad-schultz",
	.coll = TC_ALLGATHER,
	.summary = "baseline: Saad-Schultz row-then-column",
	.build = build,
	.part = part,
	.price_mod = { 1, 1, 1, 1, 1, 1 },
};
