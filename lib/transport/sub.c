// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The sub transport: a communicator on a box of its parent's torus
 * (core/embed.h), run over the parent's own transport.
 *
 * The device's buffer matrix and completion queue belong to the node, not
 * to an open file, so a sub cannot open the node again: it posts on the
 * parent's transport, shares its buffer, registrations and completions, and
 * the communicator layer runs its calls and the parent's one at a time
 * (api/request.c). What a sub changes is only what its transfers say:
 *   port  logical port 2j + dir is parent port 2 * pdim[j] + dir, dir
 *         flipped where sign[j] is -1 (a box laid against a dimension);
 *   route hop j goes to parent dimension pdim[j], times sign[j]; pdim is
 *         increasing, so routers take the hops in the order the schedule's
 *         verifier and cost model assumed, over links of the box only;
 *   peer  logical rank -> parent node;
 *   tag   the sub's context in bits 56..62 (transport.h says why).
 * A failed wait is mapped back: its port and peer are the sub's logical
 * ones (-1 for a port outside the box), the tag without the context.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/embed.h"
#include "transport/transport.h"

struct tc_sub {
	struct tc_tp *ptp;	 /* the parent's transport */
	struct tc_embed e;
	int *node;		 /* logical rank -> parent node */
	uint64_t ctx;		 /* context << TC_TAG_CTX_SHIFT */
	struct tc_xfer *x;	 /* the batch as the parent posts it */
	uint32_t cap;
};

static struct tc_sub *to_sub(const struct tc_tp *tp)
{
	return tp->priv;
}

int tc_sub_node(const struct tc_tp *tp, int r)
{
	return to_sub(tp)->node[r];
}

/* A logical port and its parent port: the direction flips against the box. */
static int tc_sub_port(const struct tc_embed *e, int port)
{
	int j = port / 2;

	return 2 * e->pdim[j] + ((port & 1) ^ (e->sign[j] < 0));
}

static int tc_sub_post(struct tc_tp *tp, const struct tc_xfer *x, unsigned int n)
{
	struct tc_sub *s = to_sub(tp);
	const struct tc_embed *e = &s->e;
	uint64_t e0, r0;
	int ret;

	if (tc_grow((void **)&s->x, &s->cap, n, sizeof(*s->x), 16))
		return tc_err(-ENOMEM, "transport sub: out of memory posting %u transfers", n);
	for (unsigned int i = 0; i < n; i++) {
		const struct tc_xfer *a = &x[i];
		struct tc_xfer *b = &s->x[i];

		if (a->peer < 0 || a->peer >= tp->shape.nodes || a->port >= 2 * e->k || (a->tag & TC_TAG_CTX_MASK))
			return tc_err(-EINVAL, "transport sub: transfer to rank %d on port %u, tag %#llx, invalid", a->peer,
				      a->port, (unsigned long long)a->tag);
		/* a route off the box would reach a node that is not the peer's */
		if (a->op == TC_XFER_SEND && tc_shape_walk(&tp->shape, tp->rank, a->route) != a->peer)
			return tc_err(-EINVAL, "transport sub: the route from rank %d leaves the box or misses rank %d",
				      tp->rank, a->peer);
		*b = *a;
		b->peer = s->node[a->peer];
		b->port = tc_sub_port(e, a->port);
		memset(b->route, 0, sizeof(b->route));
		for (int j = 0; j < e->k; j++)
			b->route[e->pdim[j]] = (int8_t)(e->sign[j] * a->route[j]);
		b->tag = a->tag | s->ctx;
	}
	e0 = s->ptp->sends_eager;
	r0 = s->ptp->sends_rdv;
	ret = s->ptp->ops->post(s->ptp, s->x, n);
	/* the parent's transport counted them: the sub's calls report their own */
	tp->sends_eager += s->ptp->sends_eager - e0;
	tp->sends_rdv += s->ptp->sends_rdv - r0;
	return ret;
}

static int tc_sub_wait(struct tc_tp *tp, unsigned int n, int timeout_ms, struct tc_wait_err *err)
{
	struct tc_sub *s = to_sub(tp);
	int ret = s->ptp->ops->wait(s->ptp, n, timeout_ms, err);
	int port = -1, peer = -1;

	if (!ret)
		return 0;
	for (int j = 0; j < s->e.k && err->port >= 0; j++)
		if (err->port / 2 == s->e.pdim[j])
			port = 2 * j + ((err->port & 1) ^ (s->e.sign[j] < 0));
	for (int r = 0; r < tp->shape.nodes && err->peer >= 0; r++)
		if (s->node[r] == err->peer)
			peer = r;
	err->port = port;
	err->peer = peer;
	err->tag &= ~TC_TAG_CTX_MASK;
	return ret;
}

static int tc_sub_buffer(struct tc_tp *tp, size_t bytes, void **base)
{
	struct tc_tp *ptp = to_sub(tp)->ptp;

	return ptp->ops->buffer(ptp, bytes, base);
}

static int tc_sub_reg(struct tc_tp *tp, const void *addr, size_t len, int write, uint32_t *key)
{
	struct tc_tp *ptp = to_sub(tp)->ptp;

	return ptp->ops->reg(ptp, addr, len, write, key);
}

static int tc_sub_dereg(struct tc_tp *tp, uint32_t key)
{
	struct tc_tp *ptp = to_sub(tp)->ptp;

	return ptp->ops->dereg(ptp, key);
}

static void tc_sub_close(struct tc_tp *tp)
{
	struct tc_sub *s = to_sub(tp);

	free(s->node);
	free(s->x);
	free(s);
}

/* Not a transport of its own: tc_sub_open makes one. */
static int tc_sub_no_open(struct tc_tp *tp, const struct tc_comm_attr *attr)
{
	(void)tp;
	(void)attr;
	return tc_err(-EINVAL, "transport sub: made by tc_comm_create_sub");
}

static const struct tc_transport_ops tc_transport_sub = {
	.name = "sub",
	.open = tc_sub_no_open,
	.close = tc_sub_close,
	.buffer = tc_sub_buffer,
	.post = tc_sub_post,
	.wait = tc_sub_wait,
	.reg = tc_sub_reg,
	.dereg = tc_sub_dereg,
};

/* Over a parent that registers no memory (reg NULL: the calls stage). */
static const struct tc_transport_ops tc_transport_sub_noreg = {
	.name = "sub",
	.open = tc_sub_no_open,
	.close = tc_sub_close,
	.buffer = tc_sub_buffer,
	.post = tc_sub_post,
	.wait = tc_sub_wait,
};

int tc_sub_open(struct tc_tp *tp, struct tc_tp *ptp, const struct tc_embed *e, const int *nodes, int rank,
		uint32_t ctx)
{
	struct tc_sub *s;

	if (!ctx || ctx > TC_TAG_CTX_MAX)
		return tc_err(-EINVAL, "transport sub: context %u outside 1..%u", ctx, TC_TAG_CTX_MAX);
	s = calloc(1, sizeof(*s));
	if (s)
		s->node = malloc(e->shape.nodes * sizeof(*s->node));
	if (!s || !s->node) {
		free(s);
		return tc_err(-ENOMEM, "transport sub: out of memory");
	}
	memcpy(s->node, nodes, e->shape.nodes * sizeof(*s->node));
	s->ptp = ptp;
	s->e = *e;
	s->ctx = (uint64_t)ctx << TC_TAG_CTX_SHIFT;
	tp->ops = ptp->ops->reg ? &tc_transport_sub : &tc_transport_sub_noreg;
	tp->priv = s;
	tp->shape = e->shape;
	tp->rank = rank;
	tp->max_segs = ptp->max_segs;
	tp->max_reg_bytes = ptp->max_reg_bytes;
	tp->timeout_ms = ptp->timeout_ms;
	tp->fabric_id = ptp->fabric_id;
	tp->cost = ptp->cost;
	return 0;
}
