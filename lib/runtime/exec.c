// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The executor: runs any schedule (lib/sched.h) on any transport
 * (lib/transport.h) for the calling node.
 *
 * Per (schedule, block size) a node computes a plan once and keeps it in its
 * communicator:
 *   - the layout of its transport buffer. Alltoall: the send region (P blocks
 *     in MPI order, block d goes to node d), the receive region (P blocks,
 *     block o came from node o), then transit slots for blocks that pass
 *     through this node; a slot is reused by receives after the step that
 *     sends its block on. Allgather: one region of P blocks in MPI order;
 *     the node's own block sits in its slot and is sent from there, packets
 *     of other nodes land in their slots and are forwarded from there.
 *   - per step, the transfer list: a send per outgoing message (gather
 *     segments in the message's block order, merged where contiguous; the
 *     route; port = the first hop's port) and a receive per incoming message
 *     (scatter segments in the same order; port = the port the last hop
 *     arrives on: + in dimension d arrives on port 2*d+1). The tag is
 *     (step << 32 | message index), so matching is exact.
 * Running a plan allocates nothing: copy in, per step one post and one wait,
 * copy out.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/comm.h"

struct tc_stage {
	uint32_t xfer;	     /* index into xfers */
	uint32_t seg0, nsegs; /* the message's own segments in segs */
	uint64_t off;	     /* its place in the staging area */
};

struct tc_plan {
	const struct tc_sched *sched;
	size_t m;
	unsigned int used; /* comm->plan_clock at last use */

	size_t buf_bytes;
	size_t send_off, recv_off; /* alltoall; allgather uses recv_off = 0 */
	uint32_t nslots;	   /* alltoall transit slots */

	uint32_t nsteps;      /* steps in which this node sends or receives */
	uint32_t *step_first; /* nsteps + 1 entries into xfers */
	uint32_t *step_id;    /* schedule step of each */
	struct tc_xfer *xfers;
	struct tc_seg *segs;
	uint32_t nsegs;

	/* Messages with more segments than the transport takes go through a
	 * staging area at stage_off: packed before the post, unpacked after
	 * the wait. stages[stage_first[i] .. stage_first[i+1]) for step i. */
	uint32_t max_segs;
	size_t stage_off;
	uint32_t *stage_first;
	struct tc_stage *stages;
};

static void tc_plan_free(struct tc_plan *p)
{
	if (!p)
		return;
	free(p->step_first);
	free(p->step_id);
	free(p->xfers);
	free(p->segs);
	free(p->stage_first);
	free(p->stages);
	free(p);
}

void tc_exec_free_plans(struct tc_comm *comm)
{
	for (int i = 0; i < TC_PLAN_CACHE; i++) {
		tc_plan_free(comm->plans[i]);
		comm->plans[i] = NULL;
	}
}

/* Blocks held in transit by one node (alltoall): a small open-addressing map. */
struct tc_inst {
	int32_t recv_step; /* schedule step it arrived in */
	int32_t last_send; /* last step it is sent in, -1 never */
	int32_t slot;	   /* transit slot, -1: receive region */
};

struct tc_blkmap {
	uint32_t cap;	 /* power of two */
	uint64_t *keys;	 /* (a << 32 | b) + 1, 0 = empty */
	int32_t *inst;
};

static int tc_blkmap_init(struct tc_blkmap *h, uint32_t n)
{
	h->cap = 16;
	while (h->cap < 2 * n + 16)
		h->cap <<= 1;
	h->keys = calloc(h->cap, sizeof(*h->keys));
	h->inst = malloc(h->cap * sizeof(*h->inst));
	return h->keys && h->inst ? 0 : -ENOMEM;
}

static void tc_blkmap_free(struct tc_blkmap *h)
{
	free(h->keys);
	free(h->inst);
}

static uint64_t tc_blk_key(const struct tc_blk *b)
{
	return ((uint64_t)(uint32_t)b->a << 32 | (uint32_t)b->b) + 1;
}

/* Slot of key: its entry, or the empty entry where it would go. */
static uint32_t tc_blkmap_slot(const struct tc_blkmap *h, const struct tc_blk *b)
{
	uint64_t key = tc_blk_key(b);
	uint32_t i = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (h->cap - 1);

	while (h->keys[i] && h->keys[i] != key)
		i = (i + 1) & (h->cap - 1);
	return i;
}

struct tc_plan_ctx {
	const struct tc_sched *s;
	int node;
	size_t m;
	int coll_ag; /* allgather layout */
	int np;	     /* packets per block */
	/* alltoall: per block occurrence (in walk order) its instance, -2 own, -3 final */
	int32_t *occ;
	struct tc_inst *inst;
	uint32_t ninst;
};

/* Byte range of packet p of a block of m bytes split in np packets. */
static void tc_packet(size_t m, int np, int p, size_t *off, size_t *len)
{
	size_t lo = m * (size_t)p / (size_t)np, hi = m * (size_t)(p + 1) / (size_t)np;

	*off = lo;
	*len = hi - lo;
}

/* Walk the node's messages: sends of a step before its receives. */
#define for_each_node_msg(s, node, st, k, pass)                                                          \
	for (pass = 0; pass < 2; pass++)                                                                 \
		for (k = (s)->node_first[(size_t)(node) * (s)->nsteps + (st)];                           \
		     k < (s)->node_first[(size_t)(node) * (s)->nsteps + (st) + 1]; k++)                  \
			if (((s)->msgs[(s)->node_msgs[k]].src == (node)) == (pass == 0))

/*
 * Alltoall pass 1: follow every block through the node, creating an instance
 * per reception of a block that is not for this node, and recording for every
 * block occurrence where it is.
 */
static int tc_plan_track(struct tc_plan_ctx *c, uint32_t nocc)
{
	const struct tc_sched *s = c->s;
	struct tc_blkmap h;
	uint32_t o = 0, k, st, i;
	int pass, ret;

	ret = tc_blkmap_init(&h, nocc);
	if (ret)
		return ret;
	for (st = 0; st < s->nsteps; st++) {
		for_each_node_msg(s, c->node, st, k, pass)
		{
			const struct tc_msg *msg = &s->msgs[s->node_msgs[k]];

			for (i = 0; i < msg->nblk; i++, o++) {
				const struct tc_blk *b = &s->blks[msg->blk_off + i];
				uint32_t e = tc_blkmap_slot(&h, b);

				if (pass == 0) {
					if (h.keys[e]) {
						c->occ[o] = h.inst[e];
						if (c->occ[o] >= 0)
							c->inst[c->occ[o]].last_send = st;
					} else if (b->a == c->node) {
						c->occ[o] = -2;
					} else {
						ret = tc_err(-EINVAL,
									 "step %u: node %d sends block {%d,%d} it does not hold",
									 st, c->node, b->a, b->b);
						goto out;
					}
					continue;
				}
				if (b->b == c->node) {
					c->occ[o] = -3;
					h.keys[e] = tc_blk_key(b);
					h.inst[e] = -3;
					continue;
				}
				c->inst[c->ninst] = (struct tc_inst){ .recv_step = st, .last_send = -1, .slot = -1 };
				h.keys[e] = tc_blk_key(b);
				h.inst[e] = c->ninst;
				c->occ[o] = c->ninst++;
			}
		}
	}
	ret = 0;
out:
	tc_blkmap_free(&h);
	return ret;
}

/* Alltoall pass 2: give instances transit slots, reusing a slot after the step that sends it on. */
static int tc_plan_slots(struct tc_plan_ctx *c, uint32_t *nslots)
{
	const struct tc_sched *s = c->s;
	uint32_t *free_first, *free_list, *stack, nstack = 0, i, st;
	int ret = -ENOMEM;

	*nslots = 0;
	free_first = calloc(s->nsteps + 1, sizeof(*free_first));
	free_list = malloc((c->ninst + 1) * sizeof(*free_list));
	stack = malloc((c->ninst + 1) * sizeof(*stack));
	if (!free_first || !free_list || !stack)
		goto out;
	/* Bucket instances by the step after which their slot is free. */
	for (i = 0; i < c->ninst; i++)
		if (c->inst[i].last_send >= 0)
			free_first[c->inst[i].last_send + 1]++;
	for (st = 0; st < s->nsteps; st++)
		free_first[st + 1] += free_first[st];
	{
		uint32_t *cur = malloc((s->nsteps + 1) * sizeof(*cur));

		if (!cur)
			goto out;
		memcpy(cur, free_first, (s->nsteps + 1) * sizeof(*cur));
		for (i = 0; i < c->ninst; i++)
			if (c->inst[i].last_send >= 0)
				free_list[cur[c->inst[i].last_send]++] = i;
		free(cur);
	}
	/* Instances are in arrival order; interleave allocation and release by step. */
	i = 0;
	for (st = 0; st < s->nsteps; st++) {
		for (; i < c->ninst && (uint32_t)c->inst[i].recv_step == st; i++)
			c->inst[i].slot = nstack ? stack[--nstack] : (*nslots)++;
		for (uint32_t f = free_first[st]; f < free_first[st + 1]; f++)
			stack[nstack++] = c->inst[free_list[f]].slot;
	}
	ret = 0;
out:
	free(free_first);
	free(free_list);
	free(stack);
	return ret;
}

static int tc_plan_build(const struct tc_sched *s, int node, size_t m, uint32_t max_segs, struct tc_plan **out)
{
	uint32_t nstage = 0;
	uint64_t stage_pos = 0, stage_max = 0;
	struct tc_plan_ctx c = { .s = s, .node = node, .m = m };
	uint32_t nocc = 0, nx = 0, nsteps = 0, st, k, o, x, i, nseg;
	size_t P = s->shape.nodes;
	struct tc_plan *p;
	int pass, ret = -ENOMEM;

	if (!s->node_first || !s->node_msgs)
		return tc_err(-EINVAL, "schedule %s is not finished", s->algo);
	c.coll_ag = s->coll == TC_COLL_ALLGATHER;
	c.np = s->npackets > 0 ? s->npackets : 1;
	if (s->coll != TC_COLL_ALLTOALL && s->coll != TC_COLL_ALLGATHER)
		return tc_err(-EOPNOTSUPP, "executor: collective %d not supported", s->coll);

	for (st = 0; st < s->nsteps; st++) {
		uint32_t a = s->node_first[(size_t)node * s->nsteps + st];
		uint32_t b = s->node_first[(size_t)node * s->nsteps + st + 1];

		nx += b - a;
		nsteps += b > a;
		for (k = a; k < b; k++)
			nocc += s->msgs[s->node_msgs[k]].nblk;
	}

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->sched = s;
	p->m = m;
	p->nsteps = nsteps;
	p->step_first = calloc(nsteps + 1, sizeof(*p->step_first));
	p->step_id = calloc(nsteps + 1, sizeof(*p->step_id));
	p->xfers = calloc(nx + 1, sizeof(*p->xfers));
	p->segs = calloc(nocc + nx + 1, sizeof(*p->segs));
	p->max_segs = max_segs;
	p->stage_first = calloc(p->nsteps + 1, sizeof(*p->stage_first));
	p->stages = calloc(nx + 1, sizeof(*p->stages));
	c.occ = malloc((nocc + 1) * sizeof(*c.occ));
	c.inst = malloc((nocc + 1) * sizeof(*c.inst));
	if (!p->step_first || !p->step_id || !p->xfers || !p->segs || !c.occ || !c.inst || !p->stage_first ||
	    !p->stages)
		goto err;

	if (c.coll_ag) {
		p->recv_off = 0;
		p->buf_bytes = P * m;
	} else {
		ret = tc_plan_track(&c, nocc);
		if (ret)
			goto err;
		ret = tc_plan_slots(&c, &p->nslots);
		if (ret)
			goto err;
		p->send_off = 0;
		p->recv_off = P * m;
		p->buf_bytes = (2 * P + p->nslots) * m;
	}
	p->stage_off = p->buf_bytes;

	/* Pass 3: transfers and segments. */
	o = 0;
	x = 0;
	nseg = 0;
	nsteps = 0;
	for (st = 0; st < s->nsteps; st++) {
		uint32_t x0 = x;

		for_each_node_msg(s, node, st, k, pass)
		{
			uint32_t mi = s->node_msgs[k];
			const struct tc_msg *msg = &s->msgs[mi];
			struct tc_xfer *xf = &p->xfers[x++];
			uint32_t seg0 = nseg;
			int first, last;

			if (tc_route_ports(&s->shape, msg->route, &first, &last)) {
				ret = tc_err(-EINVAL, "step %u: message %u from %d to %d has an empty route",
							 st, mi, msg->src, msg->dst);
				goto err;
			}
			xf->op = pass == 0 ? TC_XFER_SEND : TC_XFER_RECV;
			xf->port = pass == 0 ? first : last;
			memcpy(xf->route, msg->route, sizeof(xf->route));
			xf->peer = pass == 0 ? msg->dst : msg->src;
			xf->tag = (uint64_t)st << 32 | mi;
			for (i = 0; i < msg->nblk; i++, o++) {
				const struct tc_blk *b = &s->blks[msg->blk_off + i];
				size_t off, len;

				if (c.coll_ag) {
					tc_packet(m, c.np, b->b, &off, &len);
					off += (size_t)b->a * m;
				} else {
					len = m;
					if (c.occ[o] == -2)
						off = p->send_off + (size_t)b->b * m;
					else if (c.occ[o] == -3)
						off = p->recv_off + (size_t)b->a * m;
					else
						off = (2 * P + c.inst[c.occ[o]].slot) * m;
				}
				if (!len)
					continue;
				if (nseg > seg0 && p->segs[nseg - 1].offset + p->segs[nseg - 1].length == off) {
					p->segs[nseg - 1].length += len;
				} else {
					p->segs[nseg].offset = off;
					p->segs[nseg].length = len;
					nseg++;
				}
			}
			xf->nsegs = nseg - seg0;
			/* segs fixed up below, once the array is final */
			xf->segs = (const struct tc_seg *)(uintptr_t)seg0;
			/* Only allgather packets of a tiny block can be empty;
			 * both ends drop the message. */
			if (!xf->nsegs) {
				x--;
				continue;
			}
			if (max_segs && xf->nsegs > max_segs) {
				uint64_t bytes = 0;

				for (uint32_t q = seg0; q < nseg; q++)
					bytes += p->segs[q].length;
				p->stages[nstage++] = (struct tc_stage){ .xfer = x - 1, .seg0 = seg0, .nsegs = xf->nsegs,
									 .off = stage_pos };
				p->segs[nseg].offset = p->stage_off + stage_pos;
				p->segs[nseg].length = bytes;
				xf->segs = (const struct tc_seg *)(uintptr_t)nseg;
				xf->nsegs = 1;
				nseg++;
				stage_pos += bytes;
			}
		}
		if (x > x0) {
			p->step_first[nsteps] = x0;
			p->step_id[nsteps] = st;
			p->stage_first[nsteps + 1] = nstage;
			nsteps++;
		}
		if (stage_pos > stage_max)
			stage_max = stage_pos;
		stage_pos = 0;
	}
	p->nsteps = nsteps;
	p->step_first[nsteps] = x;
	p->buf_bytes += stage_max;
	p->nsegs = nseg;
	for (x = 0; x < p->step_first[nsteps]; x++)
		p->xfers[x].segs = p->segs + (uintptr_t)p->xfers[x].segs;
	free(c.occ);
	free(c.inst);
	*out = p;
	return 0;

err:
	free(c.occ);
	free(c.inst);
	tc_plan_free(p);
	return ret;
}

/*
 * The cost model's figures for tc_coll_last(), computed on first request and
 * kept per schedule (schedules live as long as the process): pricing every
 * node's schedule at every call would cost each of 1024 simulated nodes
 * 10 ms on 32x32. Steps and blocks do not depend on the block size.
 */
struct tc_cost_memo {
	struct tc_cost_memo *next;
	const struct tc_sched *s;
	int err;
	struct tc_cost cost;
};

static pthread_mutex_t tc_cost_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tc_cost_memo *tc_cost_head; /* protected by tc_cost_lock; never freed */

int tc_exec_cost(const struct tc_sched *s, struct tc_cost *out)
{
	struct tc_cost_params cp = { .block_bytes = 1 };
	struct tc_cost_memo *e;
	int err;

	pthread_mutex_lock(&tc_cost_lock);
	for (e = tc_cost_head; e; e = e->next)
		if (e->s == s)
			break;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			pthread_mutex_unlock(&tc_cost_lock);
			return -ENOMEM;
		}
		e->s = s;
		e->err = tc_cost_eval(s, &cp, &e->cost);
		e->next = tc_cost_head;
		tc_cost_head = e;
	}
	err = e->err;
	if (!err)
		*out = e->cost;
	pthread_mutex_unlock(&tc_cost_lock);
	return err;
}

/* The plan for (s, m) from the communicator's cache, built on first use. */
static int tc_plan_get(struct tc_comm *comm, const struct tc_sched *s, size_t m, struct tc_plan **out)
{
	struct tc_plan *p;
	int victim = 0, ret;

	for (int i = 0; i < TC_PLAN_CACHE; i++) {
		p = comm->plans[i];
		if (p && p->sched == s && p->m == m && p->max_segs == comm->tp.max_segs) {
			p->used = ++comm->plan_clock;
			*out = p;
			return 0;
		}
		if (!p)
			victim = i;
		else if (comm->plans[victim] && p->used < comm->plans[victim]->used)
			victim = i;
	}
	ret = tc_plan_build(s, comm->tp.rank, m, comm->tp.max_segs, &p);
	if (ret)
		return ret;
	tc_plan_free(comm->plans[victim]);
	comm->plans[victim] = p;
	p->used = ++comm->plan_clock;
	*out = p;
	return 0;
}

/* Pack a staged message before its post (pack = 1) or unpack it after the wait. */
static void tc_stage_copy(const struct tc_plan *p, const struct tc_stage *st, char *base, int pack)
{
	char *stage = base + p->stage_off + st->off;

	for (uint32_t q = 0; q < st->nsegs; q++) {
		const struct tc_seg *g = &p->segs[st->seg0 + q];

		if (pack)
			memcpy(stage, base + g->offset, g->length);
		else
			memcpy(base + g->offset, stage, g->length);
		stage += g->length;
	}
}

/*
 * tc_algo_auto() prices candidates the first time it sees a shape; with the
 * simulator every node thread asks at once, and pricing them all in parallel
 * on a few cores takes longer than the peers' step timeout.
 */
static pthread_mutex_t tc_auto_serial = PTHREAD_MUTEX_INITIALIZER;

/* Choose the algorithm (forced or auto) and get its schedule. */
static int tc_coll_sched(struct tc_comm *comm, enum tc_coll_id id, size_t m, const struct tc_sched **out,
			 char *fallback, size_t flen)
{
	struct tc_coll_state *cs = &comm->coll[id];
	enum tc_coll coll = id == TC_ALLTOALL ? TC_COLL_ALLTOALL : TC_COLL_ALLGATHER;
	const struct tc_algo *algo;
	const char *why = NULL;
	int ret;

	fallback[0] = 0;
	if (cs->forced) {
		algo = cs->forced;
		ret = tc_sched_get(coll, algo, &comm->tp.shape, out, &why);
		if (!ret)
			return 0;
		why = why ? why : *tc_last_error() ? tc_last_error() : tc_strerror(ret);
		/* Reasons of algorithms already start with their name ("ar: ..."). */
		if (!strncmp(why, algo->name, strlen(algo->name)) && why[strlen(algo->name)] == ':')
			snprintf(fallback, flen, "%s", why);
		else
			snprintf(fallback, flen, "%s: %s", algo->name, why);
	}
	/* One thread prices the candidates; the others then find its choice cached. */
	pthread_mutex_lock(&tc_auto_serial);
	algo = tc_algo_auto(coll, &comm->tp.shape, m);
	pthread_mutex_unlock(&tc_auto_serial);
	if (!algo)
		return tc_err(-EOPNOTSUPP, "%s: no algorithm supports this shape", tc_coll_str((enum tc_coll)id));
	why = NULL;
	ret = tc_sched_get(coll, algo, &comm->tp.shape, out, &why);
	if (ret)
		return tc_err(ret, "%s %s: %s", tc_coll_str((enum tc_coll)id), algo->name,
			      why ? why : *tc_last_error() ? tc_last_error() : tc_strerror(ret));
	return 0;
}

static int tc_coll_run(struct tc_comm *comm, enum tc_coll_id id, const void *sendbuf, void *recvbuf, size_t m)
{
	struct tc_coll_state *cs = &comm->coll[id];
	const struct tc_sched *s;
	struct tc_plan *p;
	size_t P = comm->tp.shape.nodes;
	char fallback[sizeof(cs->last.why)];
	char *base;
	int ret;

	ret = tc_comm_usable(comm, tc_coll_str((enum tc_coll)id));
	if (ret)
		return ret;
	ret = tc_coll_sched(comm, id, m, &s, fallback, sizeof(fallback));
	if (ret)
		return ret;
	ret = tc_plan_get(comm, s, m, &p);
	if (ret)
		return tc_err(ret, "%s %s: plan for node %d: %s", tc_coll_str((enum tc_coll)id), s->algo, comm->tp.rank,
			      *tc_last_error() ? tc_last_error() : tc_strerror(ret));
	ret = tc_comm_buffer(comm, tc_coll_str((enum tc_coll)id), p->buf_bytes, &base);
	if (ret)
		return ret;

	if (id == TC_ALLTOALL)
		memcpy(base + p->send_off, sendbuf, P * m);
	else
		memcpy(base + (size_t)comm->tp.rank * m, sendbuf, m);

	for (uint32_t i = 0; i < p->nsteps; i++) {
		const struct tc_xfer *x = p->xfers + p->step_first[i];
		unsigned int n = p->step_first[i + 1] - p->step_first[i];

		for (uint32_t k = p->stage_first[i]; k < p->stage_first[i + 1]; k++)
			if (p->xfers[p->stages[k].xfer].op == TC_XFER_SEND)
				tc_stage_copy(p, &p->stages[k], base, 1);
		ret = tc_step_exec(comm, tc_coll_str((enum tc_coll)id), s->algo, p->step_id[i], x, n);
		if (ret)
			return ret;
		for (uint32_t k = p->stage_first[i]; k < p->stage_first[i + 1]; k++)
			if (p->xfers[p->stages[k].xfer].op == TC_XFER_RECV)
				tc_stage_copy(p, &p->stages[k], base, 0);
	}

	if (id == TC_ALLTOALL) {
		memcpy(recvbuf, base + p->recv_off, P * m);
		memcpy((char *)recvbuf + (size_t)comm->tp.rank * m, base + p->send_off + (size_t)comm->tp.rank * m, m);
	} else {
		memcpy(recvbuf, base, P * m);
	}

	cs->have_last = 1;
	cs->last.size = sizeof(cs->last);
	snprintf(cs->last.algo, sizeof(cs->last.algo), "%s", s->algo);
	snprintf(cs->last.why, sizeof(cs->last.why), "%s", fallback);
	cs->last.block_bytes = m;
	cs->last_sched = s;
	return 0;
}

int tc_exec_coll(struct tc_comm *comm, enum tc_coll_id id, const void *sendbuf, void *recvbuf, size_t m)
{
	return tc_coll_run(comm, id, sendbuf, recvbuf, m);
}
