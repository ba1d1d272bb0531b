// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ATAPE: all-to-all personalized exchange driven by a Latin square (All-to-All Communication slides, second
 * part of the slides, "All-to-All Personalized Exchange Algorithm Using a Latin
 * Square"; 004 is a cleaner extraction with the 8 x 8 example).
 *
 * Row i of an n x n Latin square L says where every processor sends in step i:
 * processor j sends its message for L[i][j]. Each row is a permutation, and
 * each column holds every destination once. Choosing row 0 to be the identity
 * (every processor "sends to itself", i.e. nothing moves) leaves P-1 steps,
 * each a derangement, and every block is sent exactly once, straight to its
 * destination.
 *
 * The square, following the slides' second construction (BuildBasicList /
 * BuildLatinSquare): row i+1 = phi_{k(i+1)}(row i), where the basic
 * permutations phi are applied in the order of a Gray code.
 *   - P a power of two: phi_t flips bit t-1 of the processor number, the list
 *     of basic permutations is the ruler sequence 1,2,1,3,1,2,1,..., so row i
 *     is j XOR gray(i) (exactly the slides' square with a_j = j).
 *   - any other P: the same construction over the torus' own translation
 *     group Z_n0 x ... x Z_n(k-1): a basic permutation moves every node one hop
 *     +-1 along one dimension, and the rows follow the reflected mixed-radix
 *     Gray code, so row i is "every node to node + g_i" (coordinate-wise,
 *     mod n_d). A group's table is a Latin square; g_0 = 0 is the identity.
 *     On a ring this is the cyclic square, i.e. the same steps as pairwise in
 *     another order.
 *
 * On the torus the messages are routed dimension-ordered along shortest paths
 * (antipodal ties split, see engine/direct.c) through intermediate routers
 * and share links (each step is a permutation, not contention-free); the cost
 * model serializes them. This is the direct schedule a switched cluster (the
 * verbs transport) runs unchanged.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "algorithms/algos.h"
#include "algorithms/engine/direct.h"

#define ATAPE_CITE_XOR \
	"All-to-All Communication slides, ATAPE: Latin square of basic permutations (second construction), row i = j XOR gray(i)"
#define ATAPE_CITE_GRAY \
	"All-to-All Communication slides, ATAPE: Latin square of the torus translation group, rows in reflected Gray-code order"

static int is_pow2(int p)
{
	return p > 0 && !(p & (p - 1));
}

/* Reflected mixed-radix Gray code: advance g (with per-digit directions) to the next code. */
static void gray_next(const struct tc_shape *sh, int *g, int *dir)
{
	for (int d = sh->ndims - 1; d >= 0; d--) {
		int v = g[d] + dir[d];

		if (v >= 0 && v < sh->dims[d]) {
			g[d] = v;
			return;
		}
		dir[d] = -dir[d];
	}
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const int p = shape->nodes;
	const int xor = is_pow2(p);
	int g[TC_MAX_DIMS] = { 0 }, dir[TC_MAX_DIMS];
	struct tc_dmsg *m = NULL;
	struct tc_sched *s;
	int err = -ENOMEM;

	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "atape: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	s = tc_sched_new(shape, TC_ALLTOALL, "atape", xor ? ATAPE_CITE_XOR : ATAPE_CITE_GRAY,
			 TC_CLAIM_PERMUTATION | TC_CLAIM_SHORTEST);
	m = malloc(sizeof(*m) * p);
	if (!s || !m)
		goto err_free;
	for (int d = 0; d < TC_MAX_DIMS; d++)
		dir[d] = 1;
	for (int i = 1; i < p; i++) {
		if (!xor)
			gray_next(shape, g, dir);
		for (int j = 0; j < p; j++) {
			int dst;

			if (xor) {
				dst = j ^ (i ^ (i >> 1));
			} else {
				int c[TC_MAX_DIMS];

				tc_shape_coords(shape, j, c);
				for (int d = 0; d < shape->ndims; d++)
					c[d] += g[d];
				dst = tc_shape_node(shape, c);
			}
			tc_direct_msg(shape, &m[j], j, j, dst);
		}
		/* row i of the Latin square: one step, its messages in link order */
		err = tc_direct_emit_step(s, m, p, tc_direct_one_block, NULL);
		if (err < 0)
			goto err_free;
	}
err_free:
	return tc_direct_done(s, m, err, out, why, "atape: out of memory",
			       "atape: building the schedule failed");
}

/*
 * The rows' offsets g_1 .. g_(P-1) of the translation Latin square (the
 * reflected Gray code, as build() walks it): P * ndims ints, computed once per
 * shape and kept for the process, so a node's part (and the run-time check's
 * one-message part of a peer) finds row i in O(1).
 */
struct atape_rows {
	struct atape_rows *next;
	struct tc_shape shape;
	int *g; /* g[i * ndims + d] */
};

static pthread_mutex_t atape_lock = PTHREAD_MUTEX_INITIALIZER;
static struct atape_rows *atape_head; /* protected by atape_lock; never freed */

static const int *atape_rows(const struct tc_shape *sh)
{
	struct atape_rows *r;
	int g[TC_MAX_DIMS] = { 0 }, dir[TC_MAX_DIMS];

	pthread_mutex_lock(&atape_lock);
	for (r = atape_head; r; r = r->next)
		if (tc_shape_equal(&r->shape, sh))
			break;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (r)
			r->g = calloc((size_t)sh->nodes * sh->ndims, sizeof(*r->g));
		if (r && r->g) {
			r->shape = *sh;
			for (int d = 0; d < TC_MAX_DIMS; d++)
				dir[d] = 1;
			for (int i = 1; i < sh->nodes; i++) {
				gray_next(sh, g, dir);
				for (int d = 0; d < sh->ndims; d++)
					r->g[(size_t)i * sh->ndims + d] = g[d];
			}
			r->next = atape_head;
			atape_head = r;
		} else {
			if (r)
				free(r->g);
			free(r);
			r = NULL;
		}
	}
	pthread_mutex_unlock(&atape_lock);
	return r ? r->g : NULL;
}

/* Node n's part: in step i-1 it sends to n XOR gray(i) (P a power of two) or n + g_i, and receives from
 * n XOR gray(i) or n - g_i, one block each. */
static int part(struct tc_part *pt, const char **why)
{
	const struct tc_shape *sh = &pt->shape;
	const int p = sh->nodes, n = pt->node, xor = is_pow2(p);
	const int *rows = NULL;
	int lo, hi, err = 0;

	if (p < 2) {
		*why = "atape: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	pt->cite = xor ? ATAPE_CITE_XOR : ATAPE_CITE_GRAY;
	pt->claims = TC_CLAIM_PERMUTATION | TC_CLAIM_SHORTEST;
	if (!xor) {
		rows = atape_rows(sh);
		if (!rows) {
			*why = "atape: out of memory for the Latin square's rows";
			return -ENOMEM;
		}
	}
	/* a part filtered to one step (tc_part_only) generates that step alone */
	lo = tc_part_only_step(pt) >= 0 ? (int)tc_part_only_step(pt) + 1 : 1;
	hi = tc_part_only_step(pt) >= 0 ? lo + 1 : p;
	for (int i = lo; i < hi && i < p && !err; i++) {
		int to, from;

		if (xor) {
			to = from = n ^ (i ^ (i >> 1));
		} else {
			int c[TC_MAX_DIMS], b[TC_MAX_DIMS];

			tc_shape_coords(sh, n, c);
			for (int d = 0; d < sh->ndims; d++) {
				b[d] = c[d] - rows[(size_t)i * sh->ndims + d];
				c[d] += rows[(size_t)i * sh->ndims + d];
			}
			to = tc_shape_node(sh, c);
			from = tc_shape_node(sh, b);
		}
		err = tc_part_at(pt, i - 1);
		if (!err)
			err = tc_direct_part_msg(pt, n, to);
		if (!err)
			err = tc_part_blk(pt, n, to);
		if (!err)
			err = tc_direct_part_msg(pt, from, n);
		if (!err)
			err = tc_part_blk(pt, from, n);
	}
	if (!err)
		err = tc_part_finish(pt, p - 1);
	if (err)
		*why = "atape: building the node's part failed";
	return err;
}

/*
 * The price without the blocks: row i of the square, every node j sending one
 * block to its destination, priced step by step as build() adds it
 * (engine/direct.c), O(P) memory.
 */
static int price(const struct tc_shape *shape, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		 double *time_us, struct tc_cost *cost, const char **why)
{
	const int n = shape->nodes, xor = is_pow2(n);
	int g[TC_MAX_DIMS] = { 0 }, dir[TC_MAX_DIMS];
	struct tc_direct_pricer pr;
	int err;

	err = tc_direct_price_begin(&pr,
				    tc_sched_new(shape, TC_ALLTOALL, "atape", xor ? ATAPE_CITE_XOR : ATAPE_CITE_GRAY,
						 TC_CLAIM_PERMUTATION | TC_CLAIM_SHORTEST),
				    (size_t)n, p, sizes, nsizes);
	for (int d = 0; d < TC_MAX_DIMS; d++)
		dir[d] = 1;
	for (int i = 1; i < n && !err; i++) {
		if (!xor)
			gray_next(shape, g, dir);
		for (int j = 0; j < n; j++) {
			int dst, cc[TC_MAX_DIMS];

			if (xor) {
				dst = j ^ (i ^ (i >> 1));
			} else {
				tc_shape_coords(shape, j, cc);
				for (int d = 0; d < shape->ndims; d++)
					cc[d] += g[d];
				dst = tc_shape_node(shape, cc);
			}
			tc_direct_msg(shape, &pr.m[j], j, j, dst);
		}
		err = tc_direct_price_msgs(pr.c, pr.m, pr.v, (size_t)n, (uint32_t)(i - 1), 1);
	}
	return tc_direct_price_end(&pr, err, time_us, cost, why, "atape: out of memory pricing the schedule",
				   "atape: pricing the schedule's messages failed");
}

const struct tc_algo tc_algo_atape = {
	.name = "atape",
	.coll = TC_ALLTOALL,
	.summary = "Latin-square direct exchange, each step a permutation (All-to-All Communication slides, ATAPE)",
	.build = build,
	.flags = TC_ALGO_DIRECT_P2,
	.part = part,
	.price = price,
};
