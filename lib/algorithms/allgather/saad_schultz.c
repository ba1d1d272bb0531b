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

struct ss_ctx {
	struct tc_sched *s;
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
			err = tc_sched_blk(cx->s, y, 0);
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
	int err;

	route[d] = (int8_t)hops;
	err = tc_sched_msg(cx->s, x, with_coord(cx, x, d, c + hops), route);
	if (err < 0)
		return err;
	return add_set(cx, with_coord(cx, x, d, origin), part);
}

static int phase(struct ss_ctx *cx, int d)
{
	const struct tc_shape *sh = cx->sh;
	const int n = sh->dims[d], wrap = !!(sh->wrap_mask & (1u << d));
	const int nsteps = (!sh->one_port && wrap) ? n / 2 : n - 1;
	int err;

	for (int st = 1; st <= nsteps; st++) {
		err = tc_sched_step(cx->s);
		if (err < 0)
			return err;
		for (int x = 0; x < sh->nodes; x++) {
			int i = (x / cx->stride[d]) % n;

			if (sh->one_port) {
				err = send(cx, x, d, (wrap || i < n - 1) ? 1 : -(n - 1), i - (st - 1), SS_ALL);
			} else if (wrap) {
				/* the antipode's set, from both sides at once when it can be split */
				int split = !(n & 1) && st == n / 2 && cx->done;

				err = send(cx, x, d, 1, i - (st - 1), split ? SS_FIRST_HALF : SS_ALL);
				if (!err && (st <= (n - 1) / 2 || split))
					err = send(cx, x, d, -1, i + (st - 1), split ? SS_SECOND_HALF : SS_ALL);
			} else {
				err = 0;
				if (i + 1 < n && i - (st - 1) >= 0)
					err = send(cx, x, d, 1, i - (st - 1), SS_ALL);
				if (!err && i > 0 && i + (st - 1) < n)
					err = send(cx, x, d, -1, i + (st - 1), SS_ALL);
			}
			if (err < 0)
				return err;
		}
	}
	cx->done |= 1u << d;
	return 0;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	unsigned int claims = TC_CLAIM_CONTENTION_FREE | TC_CLAIM_ONE_HOP;
	struct ss_ctx cx = { .sh = shape };
	int err = 0;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "saad-schultz: shape not initialised by tc_shape_init";
		return -EINVAL;
	}

	if (shape->one_port) {
		claims |= TC_CLAIM_PERMUTATION;
		for (int d = 0; d < shape->ndims; d++)
			if (!(shape->wrap_mask & (1u << d)) && shape->dims[d] > 2)
				claims &= ~TC_CLAIM_ONE_HOP;
	}
	cx.s = tc_sched_new(shape, TC_ALLGATHER, "saad-schultz",
			    "baseline: Saad-Schultz dimension-by-dimension ring allgather (All-to-All Communication slides, previous work, comparisons)",
			    claims);
	if (!cx.s) {
		*why = "saad-schultz: cannot allocate the schedule";
		return -ENOMEM;
	}
	cx.stride[shape->ndims - 1] = 1;
	for (int d = shape->ndims - 2; d >= 0; d--)
		cx.stride[d] = cx.stride[d + 1] * shape->dims[d + 1];
	for (int d = shape->ndims - 1; d >= 0 && !err; d--)
		err = phase(&cx, d);
	return tc_sched_done(cx.s, err, out, why, "saad-schultz: building the schedule failed");
}

const struct tc_algo tc_algo_saad_schultz = {
	.name = "saad-schultz",
	.coll = TC_ALLGATHER,
	.summary = "baseline: Saad-Schultz row-then-column",
	.build = build,
};
