// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Plans: what one node does of a schedule for one block size, computed once
 * from the node's part alone (core/part.h) and kept in its communicator
 * (runtime/exec.c runs them):
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
 *     (step << 32 | source << 8 | k), k counting the messages from that
 *     source to that destination in the step in the part's canonical order,
 *     which both ends' parts share: matching is exact without any global
 *     message number; the step stays below TC_TAG_STEP_LIMIT, clear of a
 *     sub-communicator's context bits (transport/transport.h).
 * Running a plan allocates nothing: copy in, per step one post and one wait,
 * copy out.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/plan.h"

void tc_plan_free(struct tc_plan *p)
{
	if (!p)
		return;
	free(p->step_first);
	free(p->step_id);
	free(p->xfers);
	free(p->segs);
	free(p->stage_first);
	free(p->stages);
	free(p->uxfers);
	free(p->sges);
	free(p->sreg);
	free(p->dep_first);
	free(p->deps);
	for (int i = 0; i < 2; i++) {
		if (p->built[i]) {
			free(p->built[i]->descs);
			free(p->built[i]->map);
			free(p->built[i]);
		}
	}
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
	const struct tc_part *s;
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

/* Walk the node's messages of its active step st: sends before receives (the part's order). */
#define for_each_node_msg(s, node, st, k, pass)                                        \
	for (pass = 0; pass < 2; pass++)                                               \
		for (k = (s)->act_first[(st)]; k < (s)->act_first[(st) + 1]; k++)     \
			if (((s)->msgs[k].src == (node)) == (pass == 0))

/*
 * Alltoall pass 1: follow every block through the node, creating an instance
 * per reception of a block that is not for this node, and recording for every
 * block occurrence where it is.
 */
static int tc_plan_track(struct tc_plan_ctx *c, uint32_t nocc)
{
	const struct tc_part *s = c->s;
	struct tc_blkmap h;
	uint32_t o = 0, k, st, i;
	int pass, ret;

	ret = tc_blkmap_init(&h, nocc);
	if (ret)
		return ret;
	for (st = 0; st < s->nact; st++) {
		for_each_node_msg(s, c->node, st, k, pass)
		{
			const struct tc_msg *msg = &s->msgs[k];

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
						  s->act_step[st], c->node, b->a, b->b);
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
	const struct tc_part *s = c->s;
	uint32_t *free_first, *free_list, *stack, nstack = 0, i, st;
	int ret = -ENOMEM;

	*nslots = 0;
	free_first = calloc(s->nact + 1, sizeof(*free_first));
	free_list = malloc((c->ninst + 1) * sizeof(*free_list));
	stack = malloc((c->ninst + 1) * sizeof(*stack));
	if (!free_first || !free_list || !stack)
		goto out;
	/* Bucket instances by the step after which their slot is free. */
	for (i = 0; i < c->ninst; i++)
		if (c->inst[i].last_send >= 0)
			free_first[c->inst[i].last_send + 1]++;
	for (st = 0; st < s->nact; st++)
		free_first[st + 1] += free_first[st];
	{
		uint32_t *cur = malloc((s->nact + 1) * sizeof(*cur));

		if (!cur)
			goto out;
		memcpy(cur, free_first, (s->nact + 1) * sizeof(*cur));
		for (i = 0; i < c->ninst; i++)
			if (c->inst[i].last_send >= 0)
				free_list[cur[c->inst[i].last_send]++] = i;
		free(cur);
	}
	/* Instances are in arrival order; interleave allocation and release by step. */
	i = 0;
	for (st = 0; st < s->nact; st++) {
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


static struct tc_plan *tc_plan_alloc(struct tc_plan_ctx *c, uint32_t nx, uint32_t nsteps, uint32_t nocc,
				     uint32_t max_segs)
{
	struct tc_plan *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->part = c->s;
	p->m = c->m;
	p->nsteps = nsteps;
	p->max_segs = max_segs;
	p->step_first = calloc(nsteps + 1, sizeof(*p->step_first));
	p->step_id = calloc(nsteps + 1, sizeof(*p->step_id));
	p->xfers = calloc(nx + 1, sizeof(*p->xfers));
	p->segs = calloc(nocc + nx + 1, sizeof(*p->segs));
	p->stage_first = calloc(nsteps + 1, sizeof(*p->stage_first));
	p->stages = calloc(nx + 1, sizeof(*p->stages));
	c->occ = malloc((nocc + 1) * sizeof(*c->occ));
	c->inst = malloc((nocc + 1) * sizeof(*c->inst));
	if (!p->step_first || !p->step_id || !p->xfers || !p->segs || !c->occ || !c->inst || !p->stage_first ||
	    !p->stages) {
		tc_plan_free(p);
		return NULL;
	}
	return p;
}

/* The buffer's regions: allgather's P blocks, or alltoall's send, receive and transit slots. */
static int tc_plan_layout(struct tc_plan_ctx *c, struct tc_plan *p, uint32_t nocc)
{
	size_t P = c->s->shape.nodes, m = c->m;
	int ret;


	if (c->coll_ag) {
		p->recv_off = 0;
		p->buf_bytes = P * m;
		p->user_end = P * m;
	} else {
		ret = tc_plan_track(c, nocc);
		if (ret)
			return ret;
		ret = tc_plan_slots(c, &p->nslots);
		if (ret)
			return ret;
		p->send_off = 0;
		p->recv_off = P * m;
		p->buf_bytes = (2 * P + p->nslots) * m;
		p->user_end = 2 * P * m;
	}
	p->stage_off = p->buf_bytes;
	return 0;
}

/* Where occurrence o (block b of a message) lives in the buffer. */
static void tc_plan_place(const struct tc_plan_ctx *c, const struct tc_plan *p, const struct tc_blk *b, uint32_t o,
			  size_t *off, size_t *len)
{
	size_t P = c->s->shape.nodes, m = c->m;

	if (c->coll_ag) {
		tc_packet(m, c->np, b->b, off, len);
		*off += (size_t)b->a * m;
		return;
	}
	*len = m;
	if (c->occ[o] == -2)
		*off = p->send_off + (size_t)b->b * m;
	else if (c->occ[o] == -3)
		*off = p->recv_off + (size_t)b->a * m;
	else
		*off = (2 * P + c->inst[c->occ[o]].slot) * m;
}

/* Pass 3's cursor: what has been filled in so far. */
struct tc_plan_fill {
	uint32_t o, x, nseg, nstage;
	uint64_t stage_pos;
};

/* The segments of message msg, merged where contiguous; returns how many. */
static uint32_t tc_plan_segs(const struct tc_plan_ctx *c, struct tc_plan *p, struct tc_plan_fill *f,
			     const struct tc_msg *msg)
{
	uint32_t seg0 = f->nseg;

	for (uint32_t i = 0; i < msg->nblk; i++, f->o++) {
		uint64_t roff;
		size_t off, len;

		tc_plan_place(c, p, &c->s->blks[msg->blk_off + i], f->o, &off, &len);
		if (!len)
			continue;
		/* merged only within one region: a zero-copy call names each region apart */
		if (f->nseg > seg0 && p->segs[f->nseg - 1].offset + p->segs[f->nseg - 1].length == off &&
		    tc_plan_region(p, off - 1, &roff) == tc_plan_region(p, off, &roff)) {
			p->segs[f->nseg - 1].length += len;
		} else {
			p->segs[f->nseg].offset = off;
			p->segs[f->nseg].length = len;
			f->nseg++;
		}
	}
	return f->nseg - seg0;
}

/* A message with more segments than the transport takes goes through the staging area as one segment. */
static void tc_plan_stage(struct tc_plan *p, struct tc_plan_fill *f, struct tc_xfer *xf, uint32_t seg0)
{
	uint64_t bytes = 0;

	for (uint32_t q = seg0; q < f->nseg; q++)
		bytes += p->segs[q].length;
	p->stages[f->nstage++] =
		(struct tc_stage){ .xfer = f->x - 1, .seg0 = seg0, .nsegs = xf->nsegs, .off = f->stage_pos };
	p->segs[f->nseg].offset = p->stage_off + f->stage_pos;
	p->segs[f->nseg].length = bytes;
	xf->segs = (const struct tc_seg *)(uintptr_t)f->nseg;
	xf->nsegs = 1;
	f->nseg++;
	f->stage_pos += bytes;
}

/* The transfer of message mi in step st (a send on pass 0, a receive on pass 1). */
static int tc_plan_xfer(const struct tc_plan_ctx *c, struct tc_plan *p, struct tc_plan_fill *f, uint32_t st,
			uint32_t mi, int pass)
{
	const struct tc_part *s = c->s;
	const struct tc_msg *msg = &s->msgs[mi];
	uint32_t k = 0;
	struct tc_xfer *xf = &p->xfers[f->x++];
	uint32_t seg0 = f->nseg;
	int first, last;

	if (tc_route_ports(&s->shape, msg->route, &first, &last))
		return tc_err(-EINVAL, "step %u: message %u from %d to %d has an empty route", st, mi, msg->src,
			      msg->dst);
	xf->op = pass == 0 ? TC_XFER_SEND : TC_XFER_RECV;
	xf->port = pass == 0 ? first : last;
	memcpy(xf->route, msg->route, sizeof(xf->route));
	xf->peer = pass == 0 ? msg->dst : msg->src;
	/* k: earlier messages between the same two nodes in this step (adjacent in the part) */
	while (k < mi - s->act_first[st] && msg[-(int)k - 1].src == msg->src && msg[-(int)k - 1].dst == msg->dst)
		k++;
	if (k > 255 || (uint32_t)msg->src >= (1u << 24))
		return tc_err(-E2BIG, "step %u: %u messages from %d to %d, or a node number past 2^24: the tag holds neither",
			      s->act_step[st], k + 1, msg->src, msg->dst);
	xf->tag = (uint64_t)s->act_step[st] << 32 | (uint32_t)msg->src << 8 | k;
	xf->nsegs = tc_plan_segs(c, p, f, msg);
	/* segs fixed up at the end, once the array is final */
	xf->segs = (const struct tc_seg *)(uintptr_t)seg0;
	/* Only allgather packets of a tiny block can be empty; both ends drop the message. */
	if (!xf->nsegs)
		f->x--;
	else if (p->max_segs && xf->nsegs > p->max_segs)
		tc_plan_stage(p, f, xf, seg0);
	return 0;
}

/* Pass 3: per step, the node's transfers and their segments. */
static int tc_plan_fill(const struct tc_plan_ctx *c, struct tc_plan *p)
{
	const struct tc_part *s = c->s;
	struct tc_plan_fill f = { 0 };
	uint64_t stage_max = 0;
	uint32_t nsteps = 0, st, k;
	int pass, ret;

	for (st = 0; st < s->nact; st++) {
		uint32_t x0 = f.x;

		for_each_node_msg(s, c->node, st, k, pass)
		{
			ret = tc_plan_xfer(c, p, &f, st, k, pass);
			if (ret)
				return ret;
		}
		if (f.x > x0) {
			p->step_first[nsteps] = x0;
			p->step_id[nsteps] = s->act_step[st];
			p->stage_first[nsteps + 1] = f.nstage;
			nsteps++;
		}
		if (f.stage_pos > stage_max)
			stage_max = f.stage_pos;
		f.stage_pos = 0;
	}
	p->nsteps = nsteps;
	p->step_first[nsteps] = f.x;
	p->buf_bytes += stage_max;
	p->nsegs = f.nseg;
	for (uint32_t x = 0; x < f.x; x++)
		p->xfers[x].segs = p->segs + (uintptr_t)p->xfers[x].segs;
	return 0;
}

int tc_plan_build(const struct tc_part *s, size_t m, uint32_t max_segs, struct tc_plan **out)
{
	struct tc_plan_ctx c = { .s = s, .node = s->node, .m = m };
	uint32_t nx, nsteps, nocc;
	struct tc_plan *p;
	int ret;

	if (!s->act_first)
		return tc_err(-EINVAL, "node %d's part of %s is not finished", s->node, s->algo);
	if (s->coll != TC_ALLTOALL && s->coll != TC_ALLGATHER)
		return tc_err(-EOPNOTSUPP, "executor: collective %d not supported", s->coll);
	if (s->nsteps >= TC_TAG_STEP_LIMIT)
		return tc_err(-E2BIG, "schedule %s has %u steps; tags hold fewer than %u", s->algo, s->nsteps,
			      TC_TAG_STEP_LIMIT);
	c.coll_ag = s->coll == TC_ALLGATHER;
	c.np = s->npackets > 0 ? s->npackets : 1;
	nx = s->nmsgs;
	nsteps = s->nact;
	nocc = s->nblks;
	p = tc_plan_alloc(&c, nx, nsteps, nocc, max_segs);
	ret = p ? tc_plan_layout(&c, p, nocc) : -ENOMEM;
	if (!ret)
		ret = tc_plan_fill(&c, p);
	free(c.occ);
	free(c.inst);
	if (ret) {
		tc_plan_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

int tc_plan_region(const struct tc_plan *p, uint64_t off, uint64_t *roff)
{
	uint64_t Pm = (uint64_t)p->part->shape.nodes * p->m;

	if (p->part->coll == TC_ALLTOALL && off >= p->send_off && off < p->send_off + Pm) {
		*roff = off - p->send_off;
		return TC_UREG_SEND;
	}
	if (off >= p->recv_off && off < p->recv_off + Pm) {
		*roff = off - p->recv_off;
		return TC_UREG_RECV;
	}
	*roff = off - p->user_end;
	return TC_UREG_BUF;
}

int tc_plan_user(struct tc_plan *p)
{
	uint32_t nx = p->step_first[p->nsteps];

	if (p->uxfers)
		return 0;
	p->sges = calloc(p->nsegs + 1, sizeof(*p->sges));
	p->sreg = calloc(p->nsegs + 1, sizeof(*p->sreg));
	p->uxfers = calloc(nx + 1, sizeof(*p->uxfers));
	if (!p->sges || !p->sreg || !p->uxfers) {
		free(p->sges);
		free(p->sreg);
		free(p->uxfers);
		p->sges = NULL;
		p->sreg = NULL;
		p->uxfers = NULL;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < p->nsegs; i++) {
		p->sreg[i] = tc_plan_region(p, p->segs[i].offset, &p->sges[i].offset);
		p->sges[i].length = p->segs[i].length;
	}
	for (uint32_t x = 0; x < nx; x++) {
		p->uxfers[x] = p->xfers[x];
		p->uxfers[x].sges = p->sges + (p->xfers[x].segs - p->segs);
	}
	return 0;
}

void tc_plan_keys(struct tc_plan *p, const struct tc_umem *u)
{
	for (uint32_t i = 0; i < p->nsegs; i++)
		p->sges[i].key = u->key[p->sreg[i]];
}

/* The plan for (s, m) from the communicator's cache, built on first use. */
int tc_plan_get(struct tc_comm *comm, const struct tc_part *s, size_t m, struct tc_plan **out)
{
	struct tc_plan *p;
	int victim = 0, ret;

	for (int i = 0; i < TC_PLAN_CACHE; i++) {
		p = comm->plans[i];
		if (p && p->part == s && p->m == m && p->max_segs == comm->tp.max_segs) {
			p->used = ++comm->plan_clock;
			*out = p;
			return 0;
		}
		if (!p)
			victim = i;
		else if (comm->plans[victim] && p->used < comm->plans[victim]->used)
			victim = i;
	}
	if (s->node != comm->tp.rank)
		return tc_err(-EINVAL, "plan: node %d's part given to rank %d", s->node, comm->tp.rank);
	ret = tc_plan_build(s, m, comm->tp.max_segs, &p);
	if (ret)
		return ret;
	tc_plan_free(comm->plans[victim]);
	comm->plans[victim] = p;
	p->used = ++comm->plan_clock;
	*out = p;
	return 0;
}


/*
 * The plan as one program (runtime/exec.c, the device's TORUS_IOC_PROG_POST):
 * what each transfer must wait for, derived from the buffer ranges the
 * transfers touch, in schedule order (the steps say which came first; the
 * algorithm need not say more):
 *   - a send waits for the earlier receives that wrote what it reads (the
 *     blocks it forwards: a packet is forwarded from the receive that
 *     carried it, as the gossip and broadcast-pattern rules say);
 *   - a receive waits for the earlier sends that read what it overwrites (a
 *     transit slot is reused only after the send that forwarded its block)
 *     and the earlier receives that wrote it;
 *   - a send waits for the sends of the previous step that sent on its port
 *     (on a one-port node, of the node): a port's engine moves its queue in
 *     order, and a later step's message at its head, waiting for FIFO
 *     credit that only an earlier step's receive gives back, could wait
 *     forever; in step order every head depends only on earlier steps;
 *   - where links are shared between nodes (a message that passes through
 *     other nodes' routers: the part does not claim TC_CLAIM_ONE_HOP; or a
 *     one-port fabric, where a node's receive engine takes messages from
 *     every neighbour), every transfer also waits for all transfers of the
 *     node's previous step, as the stepped executor does. The schedule keeps
 *     a link to one message per step, but the fabric gives a link to the
 *     message whose sender fires first: without this, a later step's message
 *     freed early takes the link that an earlier step's message passing
 *     through needs, and delays it (at2 on 4x4, 64 B: 5084 ns against
 *     4063 ns stepped; which message waited changed from run to run).
 * The last two rules are the fabric's (links: the device); over verbs each
 * message has its peer's QP to itself and only the first two hold.
 * Transfers of one step never depend on each other (the stepped executor
 * posts them together), and nothing else orders them: on a one-hop
 * all-port schedule a send leaves as soon as its own blocks are there, not
 * when its whole step's are.
 */
static int tc_xfer_overlap(const struct tc_xfer *a, const struct tc_xfer *b)
{
	for (uint32_t i = 0; i < a->nsegs; i++)
		for (uint32_t k = 0; k < b->nsegs; k++)
			if (a->segs[i].offset < b->segs[k].offset + b->segs[k].length &&
			    b->segs[k].offset < a->segs[i].offset + a->segs[i].length)
				return 1;
	return 0;
}

int tc_plan_deps(struct tc_plan *p, int links)
{
	uint32_t n = p->step_first[p->nsteps], cap = 0, nd = 0;
	uint32_t *step = NULL, *deps = NULL, *first = NULL;
	/* per port: the step of its sends being walked, and the one before */
	int64_t cur[2 * TC_MAX_DIMS], prev[2 * TC_MAX_DIMS];
	int one_port = links && p->part->shape.one_port;
	int in_steps = links && (one_port || !(p->part->claims & TC_CLAIM_ONE_HOP));

	if (p->dep_err)
		return p->dep_err < 0 ? p->dep_err : 0;
	if (p->stage_first[p->nsteps]) {
		p->dep_err = -EOPNOTSUPP;
		return tc_err(p->dep_err, "%u messages are packed by the process between steps",
			      p->stage_first[p->nsteps]);
	}
	step = malloc((n + 1) * sizeof(*step));
	first = malloc((n + 1) * sizeof(*first));
	if (!step || !first)
		goto err_nomem;
	for (uint32_t i = 0; i < p->nsteps; i++)
		for (uint32_t k = p->step_first[i]; k < p->step_first[i + 1]; k++)
			step[k] = i;
	for (int q = 0; q < 2 * TC_MAX_DIMS; q++)
		cur[q] = prev[q] = -1;
	for (uint32_t i = 0; i < n; i++) {
		const struct tc_xfer *xi = &p->xfers[i];
		int send = xi->op == TC_XFER_SEND, q = one_port ? 0 : xi->port;

		if (send && cur[q] != step[i]) {
			prev[q] = cur[q];
			cur[q] = step[i];
		}
		first[i] = nd;
		for (uint32_t j = 0; j < p->step_first[step[i]]; j++) {
			const struct tc_xfer *xj = &p->xfers[j];
			int chain = links && send && xj->op == TC_XFER_SEND && (one_port || xj->port == xi->port) &&
				    step[j] == prev[q];

			if (in_steps && step[j] + 1 == step[i])
				chain = 1;
			if (!chain && ((send && xj->op == TC_XFER_SEND) || !tc_xfer_overlap(xi, xj)))
				continue;
			if (nd == cap && tc_grow((void **)&deps, &cap, nd + 1, sizeof(*deps), 64))
				goto err_nomem;
			deps[nd++] = j;
		}
	}
	first[n] = nd;
	free(step);
	p->dep_first = first;
	p->deps = deps;
	p->ndeps = nd;
	p->dep_err = 1;
	return 0;

err_nomem:
	free(step);
	free(first);
	free(deps);
	return tc_err(-ENOMEM, "out of memory for the dependencies of %u transfers", n);
}
