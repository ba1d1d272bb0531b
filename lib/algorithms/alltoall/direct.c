// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Direct exchange: every block goes in its own message straight to its
 * destination, routed dimension-ordered along a shortest path through the
 * intermediate routers (the wormhole model of Liu et al., All-Port Tori, Sec. II; the baseline of
 * Liu et al., All-Port Tori, Sec. I, direct algorithms [3, 4], that the torus algorithms beat).
 *
 * All-port nodes: one step, every node posts its P-1 messages at once; the
 * messages share links and the cost model serializes them (the busiest link,
 * N1*P/8 blocks with the antipodal ties split, bounds the transmission from
 * below; the link order of engine/direct.c gets within about 3x of it).
 * One-port nodes: a permutation per step, P-1 steps. Step t moves every node
 * by the same offset vector g_t (coordinate-wise mod n_d, g_t running through
 * every non-zero offset in row-major order), so every message of a step has
 * the same route shape; on a mesh the "translation" wraps in node numbering
 * only, the message itself takes the straight mesh path.
 */
#include <errno.h>
#include <stdlib.h>

#include "algorithms/algos.h"
#include "algorithms/engine/direct.h"
#include "core/part.h"

#define DIRECT_CITE_1P "baseline: direct routed messages, one-port: one translation per step (Liu et al., All-Port Tori, Sec. I)"
#define DIRECT_CITE_AP "baseline: direct routed messages, all-port: every block in one step (Liu et al., All-Port Tori, Sec. I)"

/* Node r moved by offset g (coordinate-wise, mod n_d). */
static int translate(const struct tc_shape *sh, int r, const int *g)
{
	int c[TC_MAX_DIMS];

	tc_shape_coords(sh, r, c);
	for (int d = 0; d < sh->ndims; d++)
		c[d] += g[d];
	return tc_shape_node(sh, c);
}

/*
 * Messages listed offset by offset (every node's message for offset g, then
 * the next g) before the colour sort: within a colour the links then serve
 * whole translations in turn (16x16: 3678 -> 1535 blocks against node order).
 */
static int build_all_port(struct tc_sched *s, struct tc_dmsg *m)
{
	const struct tc_shape *sh = &s->shape;
	int g[TC_MAX_DIMS];
	size_t n = 0;

	for (int t = 1; t < sh->nodes; t++) {
		tc_shape_coords(sh, t, g);
		for (int r = 0; r < sh->nodes; r++) {
			tc_direct_msg(sh, &m[n], n, r, translate(sh, r, g));
			n++;
		}
	}
	return tc_direct_emit_step(s, m, n, tc_direct_one_block, NULL);
}

static int build_one_port(struct tc_sched *s, struct tc_dmsg *m)
{
	const struct tc_shape *sh = &s->shape;
	int g[TC_MAX_DIMS];
	int err;

	for (int t = 1; t < sh->nodes; t++) {
		tc_shape_coords(sh, t, g);
		for (int r = 0; r < sh->nodes; r++)
			tc_direct_msg(sh, &m[r], r, r, translate(sh, r, g));
		err = tc_direct_emit_step(s, m, sh->nodes, tc_direct_one_block, NULL);
		if (err < 0)
			return err;
	}
	return 0;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct tc_dmsg *m = NULL;
	struct tc_sched *s;
	int err = -ENOMEM;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "direct: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	if (shape->one_port)
		s = tc_sched_new(shape, TC_ALLTOALL, "direct", DIRECT_CITE_1P, TC_CLAIM_PERMUTATION | TC_CLAIM_SHORTEST);
	else
		s = tc_sched_new(shape, TC_ALLTOALL, "direct", DIRECT_CITE_AP, TC_CLAIM_SHORTEST);
	m = malloc(sizeof(*m) * (shape->one_port ? (size_t)shape->nodes : (size_t)shape->nodes * (shape->nodes - 1)));
	if (!s || !m)
		goto err_free;
	err = shape->one_port ? build_one_port(s, m) : build_all_port(s, m);
err_free:
	return tc_direct_done(s, m, err, out, why, "direct: out of memory",
			       "direct: building the schedule failed");
}

/* The message src -> dst (block {src, dst}) in node pt's part. */
static int part_msg(struct tc_part *pt, int src, int dst)
{
	int8_t route[TC_MAX_DIMS];
	int err;

	tc_direct_route(&pt->shape, src, dst, route);
	err = tc_part_msg(pt, src, dst, route);
	return err ? err : tc_part_blk(pt, src, dst);
}

/*
 * Node n's part. All-port: one step, a message to and from every other node
 * (a filtered part, tc_part_only, just the one peer's). One-port: in step t-1
 * it sends to n + g_t and receives from n - g_t.
 */
static int part(struct tc_part *pt, const char **why)
{
	const struct tc_shape *sh = &pt->shape;
	const int n = pt->node, peer = tc_part_only_peer(pt);
	int g[TC_MAX_DIMS], c[TC_MAX_DIMS], err = 0;

	if (sh->nodes < 2) {
		*why = "direct: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	pt->cite = sh->one_port ? DIRECT_CITE_1P : DIRECT_CITE_AP;
	pt->claims = sh->one_port ? TC_CLAIM_PERMUTATION | TC_CLAIM_SHORTEST : TC_CLAIM_SHORTEST;
	if (!sh->one_port) {
		err = tc_part_at(pt, 0);
		if (peer >= 0 && tc_part_wants(pt, 0) && peer != n && !err)
			err = part_msg(pt, n, peer); /* the one message the check asks for: O(1), not O(P) */
		for (int r = 0; peer < 0 && r < sh->nodes && !err; r++) {
			if (r == n)
				continue;
			err = part_msg(pt, n, r);
			if (!err)
				err = part_msg(pt, r, n);
		}
	} else {
		/* a part filtered to one step (tc_part_only) generates that step alone */
		int lo = tc_part_only_step(pt) >= 0 ? (int)tc_part_only_step(pt) + 1 : 1;
		int hi = tc_part_only_step(pt) >= 0 ? lo + 1 : sh->nodes;

		for (int t = lo; t < hi && t < sh->nodes && !err; t++) {
			tc_shape_coords(sh, t, g);
			tc_shape_coords(sh, n, c);
			for (int d = 0; d < sh->ndims; d++)
				c[d] -= g[d];
			err = tc_part_at(pt, t - 1);
			if (!err)
				err = part_msg(pt, n, translate(sh, n, g));
			if (!err)
				err = part_msg(pt, tc_shape_node(sh, c), n);
		}
	}
	if (!err)
		err = tc_part_finish(pt, sh->one_port ? sh->nodes - 1 : 1);
	if (err)
		*why = "direct: building the node's part failed";
	return err;
}

/*
 * The price without the blocks: the messages build() adds, step by step,
 * priced as engine/direct.c adds them. One-port: P-1 steps of P messages,
 * O(P) memory; all-port: its one step of P(P-1) messages, O(P^2) memory
 * (auto prices it only up to TC_AUTO_PRICE_DIRECT_MAX_NODES).
 */
static int price(const struct tc_shape *shape, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		 double *time_us, struct tc_cost *cost, const char **why)
{
	const int n = shape->nodes;
	const size_t nm = shape->one_port ? (size_t)(n > 0 ? n : 1) : (size_t)(n > 1 ? n : 2) * (size_t)(n > 1 ? n - 1 : 1);
	struct tc_direct_pricer pr;
	struct tc_sched *shell;
	int g[TC_MAX_DIMS], err;
	size_t k = 0;

	if (shape->one_port)
		shell = tc_sched_new(shape, TC_ALLTOALL, "direct", DIRECT_CITE_1P, TC_CLAIM_PERMUTATION | TC_CLAIM_SHORTEST);
	else
		shell = tc_sched_new(shape, TC_ALLTOALL, "direct", DIRECT_CITE_AP, TC_CLAIM_SHORTEST);
	err = tc_direct_price_begin(&pr, shell, nm, p, sizes, nsizes);
	for (int t = 1; t < n && !err; t++) {
		tc_shape_coords(shape, t, g);
		if (shape->one_port)
			k = 0;
		for (int r = 0; r < n; r++, k++)
			tc_direct_msg(shape, &pr.m[k], (uint32_t)k, r, translate(shape, r, g));
		if (shape->one_port)
			err = tc_direct_price_msgs(pr.c, pr.m, pr.v, k, (uint32_t)(t - 1), 1);
	}
	if (!err && !shape->one_port)
		err = tc_direct_price_msgs(pr.c, pr.m, pr.v, k, 0, 1);
	return tc_direct_price_end(&pr, err, time_us, cost, why, "direct: out of memory pricing the schedule",
				   "direct: pricing the schedule's messages failed");
}

const struct tc_algo tc_algo_direct = {
	.name = "direct",
	.coll = TC_ALLTOALL,
	.summary = "baseline: every block sent directly, routed dimension-ordered",
	.build = build,
	.flags = TC_ALGO_DIRECT_P2,
	.part = part,
	.price = price,
};
