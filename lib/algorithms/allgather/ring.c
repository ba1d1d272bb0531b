// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Ring allgather over a Hamiltonian cycle of the torus: the simplest baseline
 * the all-to-all broadcast papers compare against (All-to-All Communication slides, "Previous related
 * work"; Meyer and Sibeyn, Sec. 1). Nodes are put in cycle order c_0 .. c_(N-1); in step s
 * (0..N-2) node c_p forwards to c_(p+1) the block that originated at
 * c_(p-s): N-1 steps, one block per message.
 *
 * The cycle (boustrophedon / snake order, so consecutive nodes are
 * neighbours):
 *   - some dimension E has even size: snake the other dimensions in reflected
 *     Gray-code order R_0 .. R_(M-1) (consecutive R are neighbours); for
 *     e = 0 .. n_E-1 sweep positions 1..M-1 forward on even e and backward on
 *     odd e, then come back along position 0 from e = n_E-1 to 0. Needs no
 *     wrap-around link, so it is a cycle on meshes too.
 *   - every size odd and some dimension W wraps: recursively, a cycle C of the
 *     other dimensions with W last (a ring of W alone at the bottom); then
 *     row 0 of dimension A takes all of C, rows 1 .. n_A-1 snake over
 *     positions 1..M-1 (an even number of rows, ending at M-1), the cycle's
 *     own closing link brings it to position 0 and it climbs back along it.
 *   - a 1-D ring wraps (or has 2 nodes): the ring itself.
 *   - otherwise (an odd number of nodes and no wrap-around, or a line of 3 or
 *     more nodes) no Hamiltonian cycle exists (the grid is bipartite): the
 *     Gray-code path is used and the closing message, from the last node back
 *     to the first, is routed multi-hop. The schedule's cite says so, and it
 *     then claims only the permutation property.
 * Whether the order really is a cycle of neighbours is checked, not assumed,
 * before any claim is made.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "algorithms/algos.h"
#include "core/part.h"

#define RING_CITE_CYCLE "baseline: ring allgather over a snake Hamiltonian cycle (All-to-All Communication slides, previous work)"
#define RING_CITE_PATH                                                                                       \
	"baseline: ring allgather; no Hamiltonian cycle on this shape, the closing hop is routed (All-to-All " \
	"Communication slides, previous work)"
#define RING_CLAIMS_CYCLE (TC_CLAIM_PERMUTATION | TC_CLAIM_ONE_HOP | TC_CLAIM_CONTENTION_FREE)
#define RING_CLAIMS_PATH TC_CLAIM_PERMUTATION

struct ring_ctx {
	const struct tc_shape *sh;
	int stride[TC_MAX_DIMS];
};

/* Reflected mixed-radix Gray code over dims[0..n) (last fastest) as node-id offsets. */
static void gray_path(const struct ring_ctx *cx, const int *dims, int n, int *out)
{
	int g[TC_MAX_DIMS] = { 0 }, dir[TC_MAX_DIMS];
	int len = 1, off = 0;

	for (int i = 0; i < n; i++) {
		dir[i] = 1;
		len *= cx->sh->dims[dims[i]];
	}
	for (int t = 0; t < len; t++) {
		out[t] = off;
		for (int i = n - 1; i >= 0; i--) {
			int d = dims[i], v = g[i] + dir[i];

			if (v >= 0 && v < cx->sh->dims[d]) {
				g[i] = v;
				off += dir[i] * cx->stride[d];
				break;
			}
			dir[i] = -dir[i];
		}
	}
}

/* Even dimension e: snake the rest at positions 1..M-1, return along position 0. */
static int even_cycle(const struct ring_ctx *cx, int e, int *out)
{
	const struct tc_shape *sh = cx->sh;
	int rest[TC_MAX_DIMS], nrest = 0, m = sh->nodes / sh->dims[e], k = 0;
	int *r = malloc(sizeof(*r) * m);

	if (!r)
		return -ENOMEM;
	for (int d = 0; d < sh->ndims; d++)
		if (d != e)
			rest[nrest++] = d;
	gray_path(cx, rest, nrest, r);
	out[k++] = r[0];
	for (int i = 0; i < sh->dims[e]; i++)
		for (int j = 1; j < m; j++)
			out[k++] = i * cx->stride[e] + r[(i & 1) ? m - j : j];
	for (int i = sh->dims[e] - 1; i >= 1; i--)
		out[k++] = i * cx->stride[e] + r[0];
	free(r);
	return 0;
}

/* All of dims[0..n) odd, dims[n-1] wraps: a cycle through them (see above). */
static int odd_cycle(const struct ring_ctx *cx, const int *dims, int n, int *out)
{
	const int a = dims[0], na = cx->sh->dims[a];
	int m, k = 0, err;
	int *c;

	if (n == 1) {
		for (int i = 0; i < na; i++)
			out[i] = i * cx->stride[a];
		return 0;
	}
	m = 1;
	for (int i = 1; i < n; i++)
		m *= cx->sh->dims[dims[i]];
	c = malloc(sizeof(*c) * m);
	if (!c)
		return -ENOMEM;
	err = odd_cycle(cx, dims + 1, n - 1, c);
	if (err) {
		free(c);
		return err;
	}
	for (int j = 0; j < m; j++)
		out[k++] = c[j];
	for (int i = 1; i < na; i++)
		for (int j = 1; j < m; j++)
			out[k++] = i * cx->stride[a] + c[(i & 1) ? m - j : j];
	for (int i = na - 1; i >= 1; i--)
		out[k++] = i * cx->stride[a] + c[0];
	free(c);
	return 0;
}

static int adjacent(const struct tc_shape *sh, int a, int b)
{
	for (int port = 0; port < 2 * sh->ndims; port++)
		if (tc_shape_neighbor(sh, a, port) == b)
			return 1;
	return 0;
}

/*
 * Fill order[] with every node once, in the best ring order this file knows;
 * returns 1 if consecutive nodes (and the last and first) are neighbours, 0 if
 * not, or a negative errno.
 */
static int ring_order(const struct tc_shape *sh, int *order)
{
	struct ring_ctx cx = { .sh = sh };
	int dims[TC_MAX_DIMS], even = -1, wrap = -1, err = 0, n = 0;

	cx.stride[sh->ndims - 1] = 1;
	for (int d = sh->ndims - 2; d >= 0; d--)
		cx.stride[d] = cx.stride[d + 1] * sh->dims[d + 1];
	for (int d = 0; d < sh->ndims; d++) {
		if (even < 0 && !(sh->dims[d] & 1))
			even = d;
		if (wrap < 0 && (sh->wrap_mask & (1u << d)))
			wrap = d;
	}
	if (sh->ndims > 1 && even >= 0) {
		err = even_cycle(&cx, even, order);
	} else if (sh->ndims > 1 && wrap >= 0) {
		for (int d = 0; d < sh->ndims; d++)
			if (d != wrap)
				dims[n++] = d;
		dims[n++] = wrap;
		err = odd_cycle(&cx, dims, n, order);
	} else {
		for (int d = 0; d < sh->ndims; d++)
			dims[d] = d;
		gray_path(&cx, dims, sh->ndims, order);
	}
	if (err)
		return err;
	for (int p = 0; p < sh->nodes; p++)
		if (!adjacent(sh, order[p], order[(p + 1) % sh->nodes]))
			return 0;
	return 1;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const int n = shape->nodes;
	struct tc_sched *s = NULL;
	int *order, cycle, err;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "ring: shape not initialised by tc_shape_init";
		return -EINVAL;
	}

	order = malloc(sizeof(*order) * n);
	if (!order) {
		*why = "ring: cannot allocate the ring order";
		return -ENOMEM;
	}
	cycle = ring_order(shape, order);
	if (cycle < 0) {
		err = cycle;
		goto err_free;
	}
	if (cycle)
		s = tc_sched_new(shape, TC_ALLGATHER, "ring", RING_CITE_CYCLE, RING_CLAIMS_CYCLE);
	else
		s = tc_sched_new(shape, TC_ALLGATHER, "ring", RING_CITE_PATH, RING_CLAIMS_PATH);
	if (!s) {
		err = -ENOMEM;
		goto err_free;
	}
	for (int st = 0; st < n - 1; st++) {
		err = tc_sched_step(s);
		if (err < 0)
			goto err_free;
		for (int p = 0; p < n; p++) {
			err = tc_sched_msg(s, order[p], order[(p + 1) % n], NULL);
			if (err < 0)
				goto err_free;
			err = tc_sched_blk(s, order[(p - st + n) % n], 0);
			if (err < 0)
				goto err_free;
		}
	}
err_free:
	free(order);
	return tc_sched_done(s, err, out, why, "ring: building the schedule failed");
}

/*
 * The ring order of a shape and each node's place in it: O(P), computed once
 * per shape and kept for the process (a rank asks for one shape; the
 * simulator's threads share it).
 */
struct ring_cache {
	struct ring_cache *next;
	struct tc_shape shape;
	int cycle;
	int *order, *pos;
};

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ring_cache *ring_head; /* protected by ring_lock; never freed */

static int ring_get(const struct tc_shape *sh, const struct ring_cache **out)
{
	struct ring_cache *c;
	int err = 0;

	pthread_mutex_lock(&ring_lock);
	for (c = ring_head; c; c = c->next)
		if (tc_shape_equal(&c->shape, sh))
			break;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (c) {
			c->shape = *sh;
			c->order = malloc(sizeof(*c->order) * sh->nodes);
			c->pos = malloc(sizeof(*c->pos) * sh->nodes);
		}
		if (!c || !c->order || !c->pos) {
			err = -ENOMEM;
		} else {
			c->cycle = ring_order(sh, c->order);
			err = c->cycle < 0 ? c->cycle : 0;
		}
		if (err) {
			if (c) {
				free(c->order);
				free(c->pos);
			}
			free(c);
			c = NULL;
		} else {
			for (int p = 0; p < sh->nodes; p++)
				c->pos[c->order[p]] = p;
			c->next = ring_head;
			ring_head = c;
		}
	}
	pthread_mutex_unlock(&ring_lock);
	*out = c;
	return err;
}

/* Node n at place q of the ring: in step st it sends c_(q-st) to c_(q+1) and receives c_(q-1-st) from c_(q-1). */
static int part(struct tc_part *pt, const char **why)
{
	const struct tc_shape *sh = &pt->shape;
	const int n = sh->nodes;
	const struct ring_cache *c;
	int q, lo, hi, err;

	if (n < 2) {
		*why = "ring: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	err = ring_get(sh, &c);
	if (err) {
		*why = "ring: cannot allocate the ring order";
		return err;
	}
	pt->cite = c->cycle ? RING_CITE_CYCLE : RING_CITE_PATH;
	pt->claims = c->cycle ? RING_CLAIMS_CYCLE : RING_CLAIMS_PATH;
	q = c->pos[pt->node];
	lo = tc_part_only_step(pt) >= 0 ? (int)tc_part_only_step(pt) : 0;
	hi = tc_part_only_step(pt) >= 0 ? lo + 1 : n - 1;
	for (int st = lo; st < hi && st < n - 1 && !err; st++) {
		err = tc_part_at(pt, st);
		if (!err)
			err = tc_part_msg(pt, pt->node, c->order[(q + 1) % n], NULL);
		if (!err)
			err = tc_part_blk(pt, c->order[((q - st) % n + n) % n], 0);
		if (!err)
			err = tc_part_msg(pt, c->order[(q - 1 + n) % n], pt->node, NULL);
		if (!err)
			err = tc_part_blk(pt, c->order[((q - 1 - st) % n + n) % n], 0);
	}
	if (!err)
		err = tc_part_finish(pt, n - 1);
	if (err)
		*why = "ring: building the node's part failed";
	return err;
}

/* Every node sends in each of the N - 1 steps, one block a message. */
static uint64_t send_steps(const struct tc_shape *sh, int *npackets)
{
	*npackets = 1;
	return sh->nodes >= 2 ? (uint64_t)sh->nodes - 1 : 0;
}

const struct tc_algo tc_algo_ring_ag = {
	.name = "ring",
	.coll = TC_ALLGATHER,
	.summary = "baseline: ring allgather over a Hamiltonian ring",
	.build = build,
	.part = part,
	.send_steps = send_steps,
};
