// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Recursive all-to-all broadcast on an n x n torus with wormhole routing:
 * C. Calvin, S. Perennes, D. Trystram, "All-to-all broadcast in torus with
 * wormhole-like routing" (1995), the recursive algorithm, as the All-to-All
 * Communication slides quote it in "Comparisons": on an n x n torus,
 *     2 log5(n^2) startups, 3/2 (n-1) hops, (n^2-1)/2 blocks per channel.
 * The paper's own text is not at hand; this is a reconstruction from that
 * cost, which it meets exactly on every n = 5^j (tests/unit/test_calvin.c).
 *
 * Ring gossip. g nodes (g odd) at p + t*v, t mod g, form a ring: in step
 * st = 1 .. (g-1)/2 each node sends to p + v what it received from p - v in
 * step st-1 (its own set in step 1) and to p - v what it received from
 * p + v. After (g-1)/2 steps every node holds the sets of all g; each
 * message carries one set, and is one wormhole message of |v| hops.
 *
 * Recursion (n = 5^j; the factor 5 of the slides' log5). The torus Z_n^2
 * splits into five "diagonal" sub-tori D_c = {(x, y) : x - y = c mod 5};
 * D_0 is a subgroup, and the five classes form a ring along v = (1, 0).
 * D_0 splits again into five cosets of the sub-torus 5 Z_n^2, a ring along
 * (1, 1); and 5 Z_n^2 is an (n/5) x (n/5) torus whose links are 5 hops
 * long: the same algorithm with every vector scaled by 5. Executed bottom
 * up: level i = j-1 .. 0 runs the ring along 5^i (1, 1), then the ring along
 * 5^i (1, 0); after them a node holds the blocks of its coset of the
 * sub-torus 5^i Z_n^2. Per level of g = 5: two rings of two steps, so
 *   startups  4 j = 2 log5(n^2);
 *   hops      per ring 2 * |v|: sum over i of 2 * (2 * 5^i + 5^i) = 3/2 (n-1);
 *   blocks    the set grows five-fold per ring, 5^k blocks per message in
 *             ring k: sum of 2 * 5^k over the 2j rings = (n^2-1)/2,
 * the slides' three counts. The same recursion runs with any odd factor g
 * (a ring of g nodes takes (g-1)/2 steps): for odd n with other prime
 * factors (largest first at the top, where the sets are biggest) the hops
 * and blocks stay 3/2 (n-1) and (n^2-1)/2 and the startups are the sum of
 * (g-1) over the prime factors. Even n, r x c with r != c, meshes, one-port
 * nodes and other dimensions are refused.
 *
 * Claims. On a prime n every message is one or two hops along (1, 0) or
 * (1, 1) and every directed link carries one message per step
 * (CONTENTION_FREE). With a stride s > 1 the ring messages of one step share
 * links (s of them on each link they cross): nothing is claimed, the
 * verifier checks delivery and the cost model serialises the messages that
 * meet, so the per-channel load rises above the slides' (n^2-1)/2, which
 * counts the blocks a message carries, not the messages on a link. Paths are
 * not shortest (a block may go 2 * 5^i along dimension 0 on a diagonal ring
 * and come back on the next ring, along (1, 0)). Blocks land by origin, so
 * nothing is rearranged.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "algorithms/algos.h"
#include "core/part.h"

#define CPT_MAX_FACTORS 32
#define CPT_CITE \
	"Calvin, Perennes, Trystram, All-to-all broadcast in torus with wormhole-like routing, recursive algorithm (All-to-All Communication slides, Comparisons)"

/* The whole schedule (s), or one node's part (pt: only its sends and the sends to it). */
struct cpt_ctx {
	struct tc_sched *s;
	struct tc_part *pt;
	uint32_t step; /* part: the current step */
	int n;
	int32_t *w; /* offsets (d0, d1) whose blocks a node holds, relative to it */
	int nw;
};

static int cpt_node(int n, int c0, int c1)
{
	c0 %= n;
	c1 %= n;
	return (c0 < 0 ? c0 + n : c0) * n + (c1 < 0 ? c1 + n : c1);
}

/* Node p sends to p + dir * v the set of node p - dir * back * v. */
static int cpt_send(struct cpt_ctx *cx, int p, int dir, int back, int v0, int v1)
{
	const int n = cx->n, c0 = p / n, c1 = p % n;
	const int b0 = c0 - dir * back * v0, b1 = c1 - dir * back * v1;
	int8_t route[TC_MAX_DIMS] = { (int8_t)(dir * v0), (int8_t)(dir * v1) };
	int err;

	if (cx->pt) {
		err = tc_part_msg(cx->pt, p, cpt_node(n, c0 + dir * v0, c1 + dir * v1), route);
		for (int k = 0; k < cx->nw && !err; k++)
			err = tc_part_blk(cx->pt, cpt_node(n, b0 + cx->w[2 * k], b1 + cx->w[2 * k + 1]), 0);
		return err;
	}
	err = tc_sched_msg(cx->s, p, cpt_node(n, c0 + dir * v0, c1 + dir * v1), route);
	for (int k = 0; k < cx->nw && err >= 0; k++)
		err = tc_sched_blk(cx->s, cpt_node(n, b0 + cx->w[2 * k], b1 + cx->w[2 * k + 1]), 0);
	return err < 0 ? err : 0;
}

/*
 * One step of a ring along v = (v0, v1), v0 the stride s, v1 = s or 0: node p
 * forwards the sets of p -+ back * v. A message crosses s links of dimension
 * 0 (and s of dimension 1), each shared with the s - 1 messages of nodes
 * less than s before it on the same line; those differ in (c0 + c1) mod s,
 * so the messages go out in that order (colour 0 first): the cost model
 * serves a link in message order and every link then waits for at most s
 * messages, not for a chain round the whole line.
 */
static int cpt_step(struct cpt_ctx *cx, int back, int v0, int v1)
{
	const int n = cx->n;
	int err = 0;

	if (cx->pt) {
		/* the node's two sends, and the two it receives: from p - v going +, from p + v going - */
		const int p = cx->pt->node, c0 = p / n, c1 = p % n;

		if (!tc_part_wants(cx->pt, cx->step))
			return 0;
		err = tc_part_at(cx->pt, cx->step);
		if (!err)
			err = cpt_send(cx, p, 1, back, v0, v1);
		if (!err)
			err = cpt_send(cx, p, -1, back, v0, v1);
		if (!err && tc_part_only_peer(cx->pt) < 0)
			err = cpt_send(cx, cpt_node(n, c0 - v0, c1 - v1), 1, back, v0, v1);
		if (!err && tc_part_only_peer(cx->pt) < 0)
			err = cpt_send(cx, cpt_node(n, c0 + v0, c1 + v1), -1, back, v0, v1);
		return err;
	}
	for (int col = 0; col < v0 && !err; col++)
		for (int p = 0; p < n * n && !err; p++) {
			if ((p / n + p % n) % v0 != col)
				continue;
			err = cpt_send(cx, p, 1, back, v0, v1);
			if (!err)
				err = cpt_send(cx, p, -1, back, v0, v1);
		}
	return err;
}

/* The ring of g nodes along v = (v0, v1): (g-1)/2 steps; then W += t v, |t| <= (g-1)/2. */
static int cpt_ring(struct cpt_ctx *cx, int g, int v0, int v1)
{
	const int half = (g - 1) / 2;
	int32_t *w;
	int err, k = cx->nw;

	for (int st = 1; st <= half; st++) {
		err = cx->pt ? 0 : tc_sched_step(cx->s);
		if (err >= 0)
			err = cpt_step(cx, st - 1, v0, v1);
		if (err < 0)
			return err;
		cx->step++;
	}
	w = realloc(cx->w, (size_t)cx->nw * g * 2 * sizeof(*w));
	if (!w)
		return -ENOMEM;
	cx->w = w;
	for (int t = -half; t <= half; t++) {
		if (!t)
			continue;
		for (int i = 0; i < cx->nw; i++, k++) {
			w[2 * k] = w[2 * i] + t * v0;
			w[2 * k + 1] = w[2 * i + 1] + t * v1;
		}
	}
	cx->nw = k;
	return 0;
}

/* Prime factors of odd n, largest first; their count, or -1 if n is even or has too many. */
static int cpt_factors(int n, int *f)
{
	int nf = 0;

	if (n < 3 || !(n & 1))
		return -1;
	for (int p = 3; n > 1; p += 2) {
		if (p * p > n)
			p = n;
		while (n % p == 0) {
			if (nf == CPT_MAX_FACTORS)
				return -1;
			n /= p;
			f[nf++] = p;
		}
	}
	for (int i = 0; i < nf / 2; i++) {
		int t = f[i];

		f[i] = f[nf - 1 - i];
		f[nf - 1 - i] = t;
	}
	return nf;
}

static int cpt_shape_ok(const struct tc_shape *shape, int *f, int *nf, const char **why)
{
	const int n = shape->dims[0];

	if (shape->ndims != 2 || shape->dims[1] != n) {
		*why = "calvin: needs an n x n torus (the recursion splits both sides alike); use saad-schultz or bcast-pattern";
		return -EOPNOTSUPP;
	}
	if ((shape->wrap_mask & 3u) != 3u) {
		*why = "calvin: needs both dimensions to wrap (its rings close round the torus); use bcast-pattern";
		return -EOPNOTSUPP;
	}
	if (shape->one_port) {
		*why = "calvin: needs all-port nodes (every node sends both ways round a ring in each step)";
		return -EOPNOTSUPP;
	}
	*nf = cpt_factors(n, f);
	if (*nf < 0) {
		*why = "calvin: needs an odd side (n = 5^j in the paper, or any odd n); use saad-schultz or bcast-pattern";
		return -EOPNOTSUPP;
	}
	if (n / f[*nf - 1] > 127) {
		*why = "calvin: a ring's stride exceeds the 127 hops a route can hold";
		return -EOPNOTSUPP;
	}
	return 0;
}

/* The shape's prime factors (largest first), or -errno with *why: what build and part both refuse. */
static int cpt_plan(const struct tc_shape *shape, int *f, int *nf, const char **why)
{
	if (shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 2) {
		*why = "calvin: shape not initialised by tc_shape_init";
		return -EINVAL;
	}
	return cpt_shape_ok(shape, f, nf, why);
}

/*
 * The recursion, innermost sub-torus first (factor i has stride f[0] * ..
 * * f[i-1]): its two rings per factor, into cx's schedule or part.
 */
static int cpt_rings(struct cpt_ctx *cx, const int *f, int nf)
{
	int err;

	cx->w = calloc(2, sizeof(*cx->w));
	cx->nw = 1;
	err = cx->w ? 0 : -ENOMEM;
	for (int i = nf - 1; i >= 0 && !err; i--) {
		int stride = 1;

		for (int l = 0; l < i; l++)
			stride *= f[l];
		err = cpt_ring(cx, f[i], stride, stride);
		if (!err)
			err = cpt_ring(cx, f[i], stride, 0);
	}
	free(cx->w);
	cx->w = NULL;
	return err;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct cpt_ctx cx = { 0 };
	int f[CPT_MAX_FACTORS], nf, err;

	err = cpt_plan(shape, f, &nf, why);
	if (err)
		return err;
	cx.n = shape->dims[0];
	cx.s = tc_sched_new(shape, TC_ALLGATHER, "calvin", CPT_CITE, nf == 1 ? TC_CLAIM_CONTENTION_FREE : 0);
	err = cx.s ? cpt_rings(&cx, f, nf) : -ENOMEM;
	return tc_sched_done(cx.s, err, out, why, "calvin: building the schedule failed");
}

/*
 * Node p's part: the same rings, every step only p's two sends and the two
 * sends that reach it (from p - v and p + v). The set a message carries
 * grows as in the whole build (g-fold per ring of g nodes): what the node
 * itself sends and receives, in four messages per step.
 */
static int part(struct tc_part *pt, const char **why)
{
	struct cpt_ctx cx = { .pt = pt };
	int f[CPT_MAX_FACTORS], nf, err;

	err = cpt_plan(&pt->shape, f, &nf, why);
	if (err)
		return err;
	pt->cite = CPT_CITE;
	pt->claims = nf == 1 ? TC_CLAIM_CONTENTION_FREE : 0;
	cx.n = pt->shape.dims[0];
	err = cpt_rings(&cx, f, nf);
	if (!err)
		err = tc_part_finish(pt, cx.step);
	if (err)
		*why = "calvin: building the node's part failed";
	return err;
}

const struct tc_algo tc_algo_calvin = {
	.name = "calvin",
	.coll = TC_ALLGATHER,
	.summary = "recursive all-to-all broadcast, odd n x n torus, 2 log5(n^2) steps on n = 5^j (Calvin, Perennes, Trystram)",
	.build = build,
	.part = part,
	.price_mod = { 1, 1 },
};
