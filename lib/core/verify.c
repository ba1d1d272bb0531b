// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The verifier: replays a finished schedule step by step and checks what the
 * collective demands plus what the algorithm claims (sched->claims).
 *
 * Alltoall blocks move: the sender loses a block it sends; a node may only
 * send a block it holds at the start of the step; a block never leaves its
 * destination; at the end node d holds {o, d} for every o != d.
 * Allgather blocks are copied (broadcast semantics): the sender keeps them;
 * every node receives each {o, p}, o != node, exactly once and never its own.
 *
 * A message occupies every directed link of its dimension-ordered route
 * (dimension 0 first), a link being (node, port) of the node it leaves.
 *
 * Memory: alltoall keeps 4 bytes per block (+1 with SHORTEST), allgather one
 * bit per (node, block) (+1 byte with SHORTEST); link arrays are per link.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verify.h"

/* Walk the directed links of m's route; returns the number written to links[]. */
int tc_msg_links(const struct tc_shape *sh, const struct tc_msg *m, uint32_t *links)
{
	int c[TC_MAX_DIMS], stride[TC_MAX_DIMS];
	int node = m->src, n = 0, ports = 2 * sh->ndims;

	stride[sh->ndims - 1] = 1;
	for (int d = sh->ndims - 2; d >= 0; d--)
		stride[d] = stride[d + 1] * sh->dims[d + 1];
	tc_shape_coords(sh, node, c);
	for (int d = 0; d < sh->ndims; d++) {
		int hops = m->route[d], dir = hops < 0, size = sh->dims[d];

		for (int h = 0; h < abs(hops); h++) {
			links[n++] = (uint32_t)node * ports + 2 * d + dir;
			if (!dir) {
				if (++c[d] == size) {
					c[d] = 0;
					node -= (size - 1) * stride[d];
				} else {
					node += stride[d];
				}
			} else {
				if (--c[d] < 0) {
					c[d] = size - 1;
					node += (size - 1) * stride[d];
				} else {
					node -= stride[d];
				}
			}
		}
	}
	return n;
}

void tc_sched_visit_links(const struct tc_sched *s, tc_link_visit_fn fn, void *arg)
{
	uint32_t links[TC_MAX_DIMS * 128];
	int ports = 2 * s->shape.ndims;

	for (uint32_t i = 0; i < s->nmsgs; i++) {
		const struct tc_msg *m = &s->msgs[i];
		int n = tc_msg_links(&s->shape, m, links);

		for (int l = 0; l < n; l++)
			fn(arg, m->step, (int)(links[l] / ports), (int)(links[l] % ports), m);
	}
}

/*
 * Shortest-path hop counts between nodes, from tables: the coordinates of
 * every node and, per dimension, the ring/line distance of every coordinate
 * difference (indexed by difference + n).
 */
struct dist_tab {
	int ndims;
	uint8_t *coords;		/* nodes * ndims */
	uint8_t *ring[TC_MAX_DIMS];	/* 2n entries each */
};

static int dist_tab_init(struct dist_tab *t, const struct tc_shape *sh)
{
	int c[TC_MAX_DIMS];

	memset(t, 0, sizeof(*t));
	t->ndims = sh->ndims;
	t->coords = malloc((size_t)sh->nodes * sh->ndims);
	if (!t->coords)
		return -ENOMEM;
	for (int n = 0; n < sh->nodes; n++) {
		tc_shape_coords(sh, n, c);
		for (int d = 0; d < sh->ndims; d++)
			t->coords[(size_t)n * sh->ndims + d] = (uint8_t)c[d];
	}
	for (int d = 0; d < sh->ndims; d++) {
		int n = sh->dims[d];

		t->ring[d] = malloc(2 * n);
		if (!t->ring[d])
			return -ENOMEM;
		/* differences run from -(n-1) to n-1; a mesh distance is |x| */
		for (int x = -n; x < n; x++) {
			int dist = abs(x);

			if (sh->wrap_mask & (1u << d))
				dist = abs(tc_shape_delta(sh, d, 0, x < 0 ? x + n : x));
			t->ring[d][x + n] = (uint8_t)dist;
		}
	}
	return 0;
}

static void dist_tab_free(struct dist_tab *t)
{
	free(t->coords);
	for (int d = 0; d < TC_MAX_DIMS; d++)
		free(t->ring[d]);
}

static inline int node_dist(const struct tc_shape *sh, const struct dist_tab *t, int a, int b)
{
	const uint8_t *ca = t->coords + (size_t)a * t->ndims, *cb = t->coords + (size_t)b * t->ndims;
	int dist = 0;

	for (int d = 0; d < t->ndims; d++)
		dist += t->ring[d][cb[d] - ca[d] + sh->dims[d]];
	return dist;
}

static int route_len(const struct tc_shape *sh, const struct tc_msg *m)
{
	int len = 0;

	for (int d = 0; d < sh->ndims; d++)
		len += abs(m->route[d]);
	return len;
}

struct tc_verify_state {
	/* what begin copied from the schedule: the steps are not read from it */
	struct tc_shape shape;
	enum tc_coll_id coll;
	const char *algo;
	unsigned int claims;
	int npackets;

	struct tc_verify_report *r;
	int failed;	  /* some violation recorded */
	uint32_t step;	  /* the step of the recorded violation (UINT32_MAX: at the end) */
	int data_failed;  /* the block replay stopped */
	int started;	  /* a step has been seen; last_step is valid */
	uint32_t last_step;
	struct dist_tab dt; /* filled when SHORTEST is claimed */

	/* links: owner[l] = index + 1 in the current step of the message holding l */
	uint32_t *owner, *sendc, *recvc;
	int one_port;
	/* alltoall */
	struct a2a_state *bs;
	/* a source-restricted schedule (src_mod): row of bs per kept origin, -1 none */
	int32_t *row;
	size_t nrows;
	int links_only; /* tc_verify_begin_links: no block replay */
	/* allgather: have[n] bitmap of blocks {o,p} (bit o*np+p) node n holds */
	uint64_t *have;
	uint8_t *dist;
	size_t words, B;
};

/*
 * Record a violation found in step (UINT32_MAX for the final state). Within a
 * step the link checks run before the block replay, steps in order, so the
 * earliest step wins; within a step, the first found.
 */
__attribute__((format(printf, 3, 4))) static void violation(struct tc_verify_state *v, uint32_t step,
							     const char *fmt, ...)
{
	va_list ap;
	int n;

	if (v->failed && step >= v->step)
		return;
	v->failed = 1;
	v->step = step;
	n = snprintf(v->r->first_violation, sizeof(v->r->first_violation), "%s: ", v->algo);
	if (n < 0 || (size_t)n >= sizeof(v->r->first_violation))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(v->r->first_violation + n, sizeof(v->r->first_violation) - n, fmt, ap);
	va_end(ap);
}

/* Structure of one step: link loads, contention, one-port / permutation, one hop. */
static void check_links(struct tc_verify_state *v, const struct tc_step_view *sv)
{
	const struct tc_shape *sh = &v->shape;
	const uint32_t st = sv->step;
	uint32_t links[TC_MAX_DIMS * 128];

	for (uint32_t i = 0; i < sv->nmsgs; i++) {
		const struct tc_msg *m = &sv->msgs[i];
		int n = tc_msg_links(sh, m, links);

		if ((v->claims & TC_CLAIM_ONE_HOP) && n != 1)
			violation(v, st, "step %u: message %d -> %d crosses %d links (ONE_HOP claimed)",
				  st, m->src, m->dst, n);
		if (v->one_port) {
			if (v->sendc[m->src] == st)
				violation(v, st, "step %u: node %d sends two messages (%s)", st, m->src,
					  sh->one_port ? "one-port shape" : "PERMUTATION claimed");
			if (v->recvc[m->dst] == st)
				violation(v, st, "step %u: node %d receives two messages (%s)", st, m->dst,
					  sh->one_port ? "one-port shape" : "PERMUTATION claimed");
			v->sendc[m->src] = st;
			v->recvc[m->dst] = st;
		}
		for (int l = 0; l < n; l++) {
			v->r->link_blocks[links[l]] += m->nblk;
			v->r->link_msgs[links[l]]++;
			if (!(v->claims & TC_CLAIM_CONTENTION_FREE))
				continue;
			if (v->owner[links[l]]) {
				const struct tc_msg *o = &sv->msgs[v->owner[links[l]] - 1];

				violation(v, st, "step %u: link (node %u, port %u) carries messages %d -> %d and %d -> %d (CONTENTION_FREE claimed)",
					  st, links[l] / (2 * sh->ndims), links[l] % (2 * sh->ndims),
					  o->src, o->dst, m->src, m->dst);
			}
			v->owner[links[l]] = i + 1;
		}
	}
	if (v->claims & TC_CLAIM_CONTENTION_FREE) {
		for (uint32_t i = 0; i < sv->nmsgs; i++) {
			int n = tc_msg_links(sh, &sv->msgs[i], links);

			for (int l = 0; l < n; l++)
				v->owner[links[l]] = 0;
		}
	}
}

/*
 * Alltoall state per block {o,d}, one cache line access per block move:
 * node holding it, and a tag = (step it arrived there + 1) in the low 24 bits
 * (0: never moved; steps beyond 2^24-1 are refused) and the hops it
 * has travelled (SHORTEST) in the high 8.
 */
struct a2a_state {
	uint32_t node;
	uint32_t tag;
};

#define TAG_STEP(t) ((t) & 0xffffffu)
#define TAG_HOPS(t) ((t) >> 24)
#define TAG_MAX_STEPS 0xffffffu

static int alltoall_begin(struct tc_verify_state *v, const struct tc_sched *s)
{
	const size_t N = v->shape.nodes;

	/* every origin its row, or (source-restricted) only the kept ones */
	v->row = malloc(N * sizeof(*v->row));
	if (!v->row)
		return -ENOMEM;
	for (size_t o = 0; o < N; o++)
		v->row[o] = tc_sched_src_kept(s, (int)o) ? (int32_t)v->nrows++ : -1;
	v->bs = malloc(v->nrows * N * sizeof(*v->bs));
	if (!v->bs)
		return -ENOMEM;
	for (size_t o = 0; o < N; o++) {
		if (v->row[o] < 0)
			continue;
		for (size_t d = 0; d < N; d++) {
			v->bs[v->row[o] * N + d].node = (uint32_t)o;
			v->bs[v->row[o] * N + d].tag = 0;
		}
	}
	return 0;
}

/* A block may only be sent by its holder at the start of the step. */
static void alltoall_step(struct tc_verify_state *v, const struct tc_step_view *sv)
{
	const struct tc_shape *sh = &v->shape;
	const size_t N = sh->nodes;
	const uint32_t st = sv->step;
	int shortest = !!(v->claims & TC_CLAIM_SHORTEST);
	struct a2a_state *bs = v->bs;

	for (uint32_t i = 0; i < sv->nmsgs && !v->data_failed; i++) {
		const struct tc_msg *m = &sv->msgs[i];
		int len = shortest ? route_len(sh, m) : 0;

		for (uint32_t k = 0; k < m->nblk; k++) {
			const struct tc_blk *b = &sv->blks[m->blk_off + k];
			struct a2a_state *e;
			int moved_now;
			uint32_t hops;

			if (v->row[b->a] < 0) {
				violation(v, st, "step %u: message %d -> %d carries block {%d,%d}, whose origin is not built",
					  st, m->src, m->dst, b->a, b->b);
				v->data_failed = 1;
				break;
			}
			e = &bs[(size_t)v->row[b->a] * N + b->b];
			moved_now = TAG_STEP(e->tag) == st + 1;
			hops = TAG_HOPS(e->tag);
			if (b->a == b->b) {
				violation(v, st, "step %u: message %d -> %d carries block {%d,%d}, which never moves",
					  st, m->src, m->dst, b->a, b->b);
				v->data_failed = 1;
				break;
			}
			if (moved_now && e->node == (uint32_t)m->src) {
				violation(v, st, "step %u: message %d -> %d: block {%d,%d} sent in the step node %d receives it",
					  st, m->src, m->dst, b->a, b->b, m->src);
				v->data_failed = 1;
				break;
			}
			if (moved_now) {
				violation(v, st, "step %u: message %d -> %d: block {%d,%d} sent twice in one step (already on its way to node %u)",
					  st, m->src, m->dst, b->a, b->b, e->node);
				v->data_failed = 1;
				break;
			}
			if (e->node != (uint32_t)m->src) {
				violation(v, st, "step %u: message %d -> %d: block {%d,%d} sent but held by node %u at the start of the step",
					  st, m->src, m->dst, b->a, b->b, e->node);
				v->data_failed = 1;
				break;
			}
			if (b->b == m->src) {
				violation(v, st, "step %u: message %d -> %d: block {%d,%d} leaves its destination",
					  st, m->src, m->dst, b->a, b->b);
				v->data_failed = 1;
				break;
			}
			if (shortest) {
				uint32_t want = node_dist(sh, &v->dt, b->a, b->b);

				hops += len;
				if (hops + node_dist(sh, &v->dt, m->dst, b->b) != want) {
					violation(v, st, "step %u: message %d -> %d: block {%d,%d} leaves a shortest path (SHORTEST claimed)",
						  st, m->src, m->dst, b->a, b->b);
					v->data_failed = 1;
					break;
				}
			}
			e->node = (uint32_t)m->dst;
			e->tag = (st + 1) | hops << 24;
		}
	}
}

static void alltoall_end(struct tc_verify_state *v)
{
	const size_t N = v->shape.nodes;

	for (size_t o = 0; o < N && !v->data_failed; o++)
		for (size_t d = 0; d < N && v->row[o] >= 0; d++)
			if (v->bs[v->row[o] * N + d].node != d && o != d) {
				violation(v, UINT32_MAX, "end: block {%zu,%zu} is at node %u, not at its destination", o, d,
					  v->bs[v->row[o] * N + d].node);
				v->data_failed = 1;
				break;
			}
}

#define HAVE(v, n, blk) ((v)->have[(size_t)(n) * (v)->words + (blk) / 64] >> ((blk) % 64) & 1)
#define SET(v, n, blk) ((v)->have[(size_t)(n) * (v)->words + (blk) / 64] |= 1ull << ((blk) % 64))

/* Allgather: a block is sendable from the step after it arrives. */
static int allgather_begin(struct tc_verify_state *v)
{
	const size_t N = v->shape.nodes;
	const int np = v->npackets;

	v->B = N * np;
	v->words = (v->B + 63) / 64;
	v->have = calloc(N * v->words, sizeof(*v->have));
	if (v->claims & TC_CLAIM_SHORTEST)
		v->dist = calloc(N * v->B, 1);
	if (!v->have || ((v->claims & TC_CLAIM_SHORTEST) && !v->dist))
		return -ENOMEM;
	for (size_t n = 0; n < N; n++)
		for (int p = 0; p < np; p++)
			SET(v, n, n * np + p);
	return 0;
}

static void allgather_step(struct tc_verify_state *v, const struct tc_step_view *sv)
{
	const struct tc_shape *sh = &v->shape;
	const uint32_t st = sv->step;
	const size_t B = v->B;
	int shortest = !!(v->claims & TC_CLAIM_SHORTEST);
	int np = v->npackets;

	for (uint32_t i = 0; i < sv->nmsgs && !v->data_failed; i++) {
		const struct tc_msg *m = &sv->msgs[i];

		for (uint32_t k = 0; k < m->nblk; k++) {
			const struct tc_blk *b = &sv->blks[m->blk_off + k];
			size_t id = (size_t)b->a * np + b->b;

			if (!HAVE(v, m->src, id)) {
				violation(v, st, "step %u: message %d -> %d: block {%d,%d} sent before node %d holds it",
					  st, m->src, m->dst, b->a, b->b, m->src);
				v->data_failed = 1;
				break;
			}
		}
	}
	for (uint32_t i = 0; i < sv->nmsgs && !v->data_failed; i++) {
		const struct tc_msg *m = &sv->msgs[i];
		int len = shortest ? route_len(sh, m) : 0;

		for (uint32_t k = 0; k < m->nblk; k++) {
			const struct tc_blk *b = &sv->blks[m->blk_off + k];
			size_t id = (size_t)b->a * np + b->b;

			if (b->a == m->dst) {
				violation(v, st, "step %u: message %d -> %d: block {%d,%d} sent back to its origin",
					  st, m->src, m->dst, b->a, b->b);
				v->data_failed = 1;
				break;
			}
			if (HAVE(v, m->dst, id)) {
				violation(v, st, "step %u: message %d -> %d: block {%d,%d} delivered to node %d twice",
					  st, m->src, m->dst, b->a, b->b, m->dst);
				v->data_failed = 1;
				break;
			}
			if (shortest) {
				int done = (m->src == b->a ? 0 : v->dist[(size_t)m->src * B + id]) + len;

				if (done != node_dist(sh, &v->dt, b->a, m->dst)) {
					violation(v, st, "step %u: message %d -> %d: block {%d,%d} reaches node %d after %d hops, shortest is %d (SHORTEST claimed)",
						  st, m->src, m->dst, b->a, b->b, m->dst, done,
						  node_dist(sh, &v->dt, b->a, m->dst));
					v->data_failed = 1;
					break;
				}
				v->dist[(size_t)m->dst * B + id] = (uint8_t)done;
			}
			SET(v, m->dst, id);
		}
	}
}

static void allgather_end(struct tc_verify_state *v)
{
	const size_t N = v->shape.nodes, B = v->B;
	const int np = v->npackets;

	for (size_t n = 0; n < N && !v->data_failed; n++)
		for (size_t id = 0; id < B; id++)
			if (!HAVE(v, n, id)) {
				violation(v, UINT32_MAX, "end: node %zu never receives block {%zu,%zu}", n, id / np, id % np);
				v->data_failed = 1;
				break;
			}
}

#undef HAVE
#undef SET

static void state_free(struct tc_verify_state *v)
{
	if (!v)
		return;
	dist_tab_free(&v->dt);
	free(v->owner);
	free(v->sendc);
	free(v->recvc);
	free(v->bs);
	free(v->row);
	free(v->have);
	free(v->dist);
	free(v);
}

/* An error of begin: the state and r are freed, *out is NULL. */
static int verify_fail(struct tc_verify_state **out, struct tc_verify_report *r, int err, const char *algo,
		       int nodes)
{
	state_free(*out);
	*out = NULL;
	tc_verify_report_free(r);
	return tc_err(err, "%s: tc_verify: out of memory (%d nodes)", algo, nodes);
}

static int verify_begin(const struct tc_sched *s, struct tc_verify_report *r, struct tc_verify_state **out,
			int links_only)
{
	const struct tc_shape *sh;
	struct tc_verify_state *v;
	size_t nlinks;
	int err;

	*out = NULL;
	memset(r, 0, sizeof(*r));
	if (!s)
		return tc_err(-EINVAL, "tc_verify: no schedule");
	sh = &s->shape;
	if (s->claims & TC_CLAIM_SHORTEST) {
		int diam = 0;

		for (int d = 0; d < sh->ndims; d++)
			diam += (sh->wrap_mask & (1u << d)) ? sh->dims[d] / 2 : sh->dims[d] - 1;
		if (diam > 255)
			return tc_err(-EOVERFLOW, "%s: tc_verify: diameter %d too large to check SHORTEST",
						  s->algo, diam);
	}
	v = calloc(1, sizeof(*v));
	if (!v)
		return verify_fail(out, r, -ENOMEM, s->algo, sh->nodes);
	*out = v;
	v->shape = *sh;
	v->coll = s->coll;
	v->algo = s->algo;
	v->claims = s->claims;
	v->npackets = s->npackets;
	v->r = r;
	v->one_port = sh->one_port || (s->claims & TC_CLAIM_PERMUTATION);
	v->links_only = links_only;
	nlinks = (size_t)sh->nodes * 2 * sh->ndims;
	r->link_blocks = calloc(nlinks, sizeof(*r->link_blocks));
	r->link_msgs = calloc(nlinks, sizeof(*r->link_msgs));
	v->owner = calloc(nlinks, sizeof(*v->owner));
	v->sendc = malloc((size_t)sh->nodes * sizeof(*v->sendc));
	v->recvc = malloc((size_t)sh->nodes * sizeof(*v->recvc));
	if (!r->link_blocks || !r->link_msgs || !v->owner || !v->sendc || !v->recvc)
		return verify_fail(out, r, -ENOMEM, s->algo, sh->nodes);
	memset(v->sendc, 0xff, (size_t)sh->nodes * sizeof(*v->sendc));
	memset(v->recvc, 0xff, (size_t)sh->nodes * sizeof(*v->recvc));
	if (s->claims & TC_CLAIM_SHORTEST) {
		err = dist_tab_init(&v->dt, sh);
		if (err)
			return verify_fail(out, r, err, s->algo, sh->nodes);
	}
	err = 0;
	if (links_only)
		return 0;
	if (s->src_mod[0] && s->coll != TC_ALLTOALL)
		return verify_fail(out, r, -EOPNOTSUPP, s->algo, sh->nodes);
	if (s->coll == TC_ALLTOALL)
		err = alltoall_begin(v, s);
	else if (s->coll == TC_ALLGATHER)
		err = allgather_begin(v);
	/* other collectives: structure and claims only (their data checks live with them) */
	if (err)
		return verify_fail(out, r, err, s->algo, sh->nodes);
	return 0;
}

int tc_verify_begin(const struct tc_sched *s, struct tc_verify_report *r, struct tc_verify_state **out)
{
	return verify_begin(s, r, out, 0);
}

int tc_verify_begin_links(const struct tc_sched *s, struct tc_verify_report *r, struct tc_verify_state **out)
{
	return verify_begin(s, r, out, 1);
}

int tc_verify_step(struct tc_verify_state *v, const struct tc_step_view *sv)
{
	if (v->started && sv->step <= v->last_step)
		return tc_err(-EINVAL, "%s: tc_verify_step: step %u after step %u", v->algo, sv->step,
					  v->last_step);
	if (v->coll == TC_ALLTOALL && sv->step >= TAG_MAX_STEPS - 1)
		return tc_err(-EOVERFLOW, "%s: tc_verify: step %u: at most %u steps can be checked",
					  v->algo, sv->step, TAG_MAX_STEPS - 1);
	v->started = 1;
	v->last_step = sv->step;
	check_links(v, sv);
	if (v->data_failed || v->links_only)
		return 0;
	if (v->coll == TC_ALLTOALL)
		alltoall_step(v, sv);
	else if (v->coll == TC_ALLGATHER)
		allgather_step(v, sv);
	return 0;
}

int tc_verify_end(struct tc_verify_state *v)
{
	struct tc_verify_report *r;
	size_t nlinks;

	if (!v)
		return -EINVAL;
	r = v->r;
	nlinks = (size_t)v->shape.nodes * 2 * v->shape.ndims;
	for (size_t l = 0; l < nlinks; l++)
		if (r->link_blocks[l] > r->max_link_blocks)
			r->max_link_blocks = r->link_blocks[l];
	if (v->coll == TC_ALLTOALL && v->bs)
		alltoall_end(v);
	else if (v->coll == TC_ALLGATHER && v->have)
		allgather_end(v);
	r->ok = !v->failed;
	state_free(v);
	if (!r->ok)
		return tc_err(-EPROTO, "%s", r->first_violation);
	return 0;
}

void tc_sched_step_view(const struct tc_sched *s, uint32_t st, struct tc_step_view *v)
{
	v->step = st;
	v->nmsgs = s->step_first[st + 1] - s->step_first[st];
	v->msgs = &s->msgs[s->step_first[st]];
	v->blks = s->blks;
}

int tc_verify(const struct tc_sched *s, struct tc_verify_report *r)
{
	struct tc_verify_state *v;
	struct tc_step_view sv;
	int err;

	memset(r, 0, sizeof(*r));
	if (!s || !s->step_first)
		return tc_err(-EINVAL, "tc_verify: schedule not finished (call tc_sched_finish)");
	if (s->coll == TC_ALLTOALL && s->nsteps >= TAG_MAX_STEPS)
		return tc_err(-EOVERFLOW, "%s: tc_verify: %u steps, at most %u can be checked", s->algo,
					  s->nsteps, TAG_MAX_STEPS - 1);
	err = tc_verify_begin(s, r, &v);
	for (uint32_t st = 0; !err && st < s->nsteps; st++) {
		tc_sched_step_view(s, st, &sv);
		err = tc_verify_step(v, &sv);
	}
	if (err) {
		state_free(v); /* NULL after an error of begin */
		tc_verify_report_free(r);
		return err;
	}
	return tc_verify_end(v);
}

void tc_verify_report_free(struct tc_verify_report *r)
{
	if (!r)
		return;
	free(r->link_blocks);
	free(r->link_msgs);
	r->link_blocks = NULL;
	r->link_msgs = NULL;
}
