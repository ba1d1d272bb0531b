// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Routes and message order for the direct exchanges and routed baselines.
 *
 * Ties. On an even ring both directions to the antipode are shortest; sending
 * every antipodal message + loads the + links 1.5x (4x4 direct: 12 blocks on
 * the busiest link instead of Lemma 1's 8). Splitting by the parity of the
 * source coordinate (even +, odd -) makes every link carry the same load on
 * sides that are multiples of 4 (splitting ties is what Liu et al., All-Port Tori's counts need, applied to
 * routed messages).
 *
 * Order. In the wormhole model (Liu et al., All-Port Tori, Sec. II) a message holds every link of its
 * route at once, and the cost model serves a link's messages in schedule
 * order. A step whose routes overlap head to tail - every node shifting by the
 * same offset h along a ring - handed to the links in node order forms one
 * chain round the whole ring: message x waits for x-1, which waits for x-2...
 * and the step lasts n units where its busiest link carries only |h| blocks.
 * So the messages of a step are sorted by a colouring of their conflicts:
 *     colour = (sum over dims d with h_d != 0 of (c_d mod |h_d|)) mod max|h_d|
 * (c the source coordinates, h the route). Two messages with the same route
 * vector that share a link differ in exactly one coordinate by less than that
 * dimension's |h_d| (the dim-d segments of one column, or later segments of
 * one line), so they get different colours; messages of one colour run side by
 * side, and a translation step costs about its busiest link. Within a colour,
 * longer routes go first. Measured on 16x16 (cost model transmission,
 * 1-block units): direct all-port 3667 -> 1535, pairwise 6131 -> ~2200, ATAPE
 * 1575 -> ~1460.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/engine/direct.h"

void tc_direct_route(const struct tc_shape *sh, int src, int dst, int8_t *route)
{
	tc_route_nodes(sh, src, dst, TC_ROUTE_SPLIT_TIES, route);
}

void tc_direct_msg(const struct tc_shape *sh, struct tc_dmsg *m, uint32_t seq, int src, int dst)
{
	int c[TC_MAX_DIMS], most = 1, sum = 0, hops = 0;

	tc_direct_route(sh, src, dst, m->route);
	tc_shape_coords(sh, src, c);
	for (int d = 0; d < sh->ndims; d++) {
		int h = abs(m->route[d]);

		if (!h)
			continue;
		hops += h;
		sum += c[d] % h;
		if (h > most)
			most = h;
	}
	m->src = src;
	m->dst = dst;
	m->colour = sum % most;
	m->hops = hops;
	m->seq = seq;
}

static int cmp_dmsg(const void *pa, const void *pb)
{
	const struct tc_dmsg *a = pa, *b = pb;

	if (a->colour != b->colour)
		return a->colour < b->colour ? -1 : 1;
	if (a->hops != b->hops)
		return a->hops > b->hops ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void tc_direct_sort(struct tc_dmsg *m, size_t n)
{
	qsort(m, n, sizeof(*m), cmp_dmsg);
}

int tc_direct_price_msgs(struct tc_cost_state *c, struct tc_dmsg *m, struct tc_msg *v, size_t n, uint32_t step,
			 uint32_t nblk)
{
	struct tc_step_view view = { .step = step, .nmsgs = (uint32_t)n, .msgs = v, .blks = NULL };

	tc_direct_sort(m, n);
	for (size_t i = 0; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].src = m[i].src;
		v[i].dst = m[i].dst;
		memcpy(v[i].route, m[i].route, sizeof(v[i].route));
		v[i].step = step;
		v[i].nblk = nblk;
		v[i].op = TC_MSG_COPY;
	}
	return tc_cost_step(c, &view);
}

int tc_direct_price_shift(struct tc_cost_state *c, const struct tc_shape *sh, struct tc_dmsg *m, struct tc_msg *v,
			  uint32_t step, int shift, uint32_t nblk)
{
	const int n = sh->nodes;

	for (int x = 0; x < n; x++)
		tc_direct_msg(sh, &m[x], x, x, (x + shift) % n);
	return tc_direct_price_msgs(c, m, v, (size_t)n, step, nblk);
}

int tc_direct_price_begin(struct tc_direct_pricer *pr, struct tc_sched *shell, size_t nmsgs,
			  const struct tc_cost_params *p, const size_t *sizes, int nsizes)
{
	const size_t room = nmsgs ? nmsgs : 1;

	pr->shell = shell;
	pr->c = NULL;
	pr->m = malloc(sizeof(*pr->m) * room);
	pr->v = malloc(sizeof(*pr->v) * room);
	if (!shell || !pr->m || !pr->v)
		return -ENOMEM;
	if (shell->shape.nodes < 2)
		return -EINVAL;
	return tc_cost_begin(shell, p, sizes, nsizes, &pr->c);
}

int tc_direct_price_end(struct tc_direct_pricer *pr, int err, double *time_us, struct tc_cost *cost,
			const char **why, const char *oom_why, const char *fail_why)
{
	if (!err && pr->c) {
		err = tc_cost_end(pr->c, pr->shell, time_us, cost);
		pr->c = NULL;
	}
	if (pr->c)
		tc_cost_end(pr->c, NULL, NULL, NULL);
	if (err)
		*why = err == -ENOMEM ? oom_why : fail_why;
	tc_sched_free(pr->shell);
	free(pr->m);
	free(pr->v);
	memset(pr, 0, sizeof(*pr));
	return err;
}

int tc_direct_one_block(struct tc_sched *s, const struct tc_dmsg *m, void *arg)
{
	(void)arg;
	return tc_sched_blk(s, m->src, m->dst);
}

int tc_direct_emit_step(struct tc_sched *s, struct tc_dmsg *m, size_t n, tc_direct_blocks_fn blocks, void *arg)
{
	int err = tc_sched_step(s);

	if (err < 0)
		return err;
	tc_direct_sort(m, n);
	for (size_t i = 0; i < n; i++) {
		err = tc_sched_msg(s, m[i].src, m[i].dst, m[i].route);
		if (err < 0)
			return err;
		err = blocks(s, &m[i], arg);
		if (err < 0)
			return err;
	}
	return 0;
}

int tc_direct_part_msg(struct tc_part *pt, int src, int dst)
{
	int8_t route[TC_MAX_DIMS];

	tc_direct_route(&pt->shape, src, dst, route);
	return tc_part_msg(pt, src, dst, route);
}

int tc_direct_done(struct tc_sched *s, struct tc_dmsg *m, int err, struct tc_sched **out, const char **why,
		   const char *oom_why, const char *fail_why)
{
	free(m);
	return tc_sched_done(s, err, out, why, err == -ENOMEM ? oom_why : fail_why);
}
