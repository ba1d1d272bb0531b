// SPDX-License-Identifier: GPL-2.0
/*
 * torus: the descriptor queues and a descriptor's life on them. A posted
 * descriptor (post.c) is queued here: a send on the transmit queue of the
 * engine serving its first hop, a receive on its arrival port's receive
 * queue or, when a message already waits in that port's FIFO, claimed
 * together with it onto the ready queue of the port's engine. The engines
 * (engine.c) take work off these queues, park messages in FIFOs and
 * complete descriptors through the helpers below; a file's release and a
 * node's last close empty them. Nothing here copies data or sleeps, except
 * freeing a descriptor; every __function runs under fab->lock. The only
 * engine calls made from here are its doorbells (torus_engine_kick() by way
 * of __torus_wake_waiters()).
 */
#include <linux/slab.h>

#include "torus.h"
#include "trace.h"

/*
 * @d is completing: its registrations stop counting it in flight, before
 * its completion can be reaped. Any context (the completers hold fab->lock).
 */
void __torus_kdesc_mrs_done(struct torus_kdesc *d)
{
	u32 i;

	if (!d->mr_inflight)
		return;
	d->mr_inflight = false;
	for (i = 0; i < d->nsegs; i++)
		if (d->segs[i].mr)
			torus_mr_done(d->segs[i].mr);
}

/*
 * @d's copy is over: drop its registrations now (unpinning those already
 * deregistered), before it completes. May sleep.
 */
void torus_kdesc_drop_mrs(struct torus_kdesc *d)
{
	u32 i;

	if (!d->has_mr)
		return;
	__torus_kdesc_mrs_done(d);
	for (i = 0; i < d->nsegs; i++) {
		if (d->segs[i].mr) {
			torus_mr_put(d->segs[i].mr);
			d->segs[i].mr = NULL;
		}
	}
	d->has_mr = false;
}

/* Drops the last hold on a registration, which unpins it: may sleep. */
void torus_kdesc_free(struct torus_kdesc *d)
{
	might_sleep();
	torus_kdesc_drop_mrs(d);
	torus_matrix_put(d->mx);
	kfree(d->park);
	kfree(d);
}

void torus_kdesc_free_list(struct list_head *list)
{
	struct torus_kdesc *d, *tmp;

	list_for_each_entry_safe(d, tmp, list, list)
		torus_kdesc_free(d);
}

/* Complete @d into its node's CQ (its reserved slot). Caller holds fab->lock. */
void __torus_complete(struct torus_kdesc *d, int status, u64 bytes, u32 peer, u64 tag,
		      u64 t_start, u64 t_end)
{
	struct torus_cqe e = {
		.user_data = d->user_data,
		.tag = tag,
		.op = d->op,
		.port = d->port,
		.status = status,
		.bytes = status ? 0 : bytes,
		.peer = peer,
		.t_start_ns = t_start,
		.t_end_ns = t_end,
	};

	/* a caller that reaps this completion may deregister what @d named */
	__torus_kdesc_mrs_done(d);
	trace_torus_complete(d->node->fab->id, d->node->id, d->port, d->op, peer, tag, e.bytes,
			     status, t_start, t_end);
	if (status)
		trace_torus_error(d->node->fab->id, d->node->id, d->port, d->op, peer, tag, e.bytes,
				  status, t_start, t_end);
	if (d->prog)
		__torus_prog_desc_done(d, &e);
	else
		torus_cq_complete(d->node, &e);
}

/* Oldest receive on @rp matching @tag, unlinked. Caller holds fab->lock. */
struct torus_kdesc *__torus_claim_recv(struct torus_port *rp, u64 tag)
{
	struct torus_kdesc *r;

	list_for_each_entry(r, &rp->rxq, list) {
		if (torus_tag_matches(r, tag)) {
			list_del(&r->list);
			rp->rq_count--;
			return r;
		}
	}
	return NULL;
}

/* Oldest FIFO message on @rp matching receive @r, unlinked. Caller holds fab->lock. */
struct torus_fifo_msg *__torus_claim_msg(struct torus_port *rp, struct torus_kdesc *r)
{
	struct torus_fifo_msg *msg;

	list_for_each_entry(msg, &rp->fifo, list) {
		if (torus_tag_matches(r, msg->tag)) {
			list_del(&msg->list);
			if (msg->send)
				list_del_init(&msg->park_entry);
			return msg;
		}
	}
	return NULL;
}

/* Undo __torus_claim_msg(): @msg back at the head of @rp's FIFO. Caller holds fab->lock. */
static void __torus_unclaim_msg(struct torus_port *rp, struct torus_fifo_msg *msg)
{
	list_add(&msg->list, &rp->fifo);
	if (msg->send)
		list_add_tail(&msg->park_entry, &msg->send->node->parked);
}

/*
 * Queue @d, built and holding its CQ slot, on @n: a send on its engine's
 * transmit queue, a receive on its port's receive queue, or, when a
 * message for it waits in the port's FIFO, with that message on the
 * ready queue of the port's engine. -EAGAIN if the port's queue is full.
 * *@kick: the engine of d->port has work. Caller holds fab->lock.
 */
int __torus_queue(struct torus_node *n, struct torus_kdesc *d, bool *kick)
{
	struct torus_port *rp = &n->ports[d->port];
	u32 *count = d->op == TORUS_OP_SEND ? &rp->sq_count : &rp->rq_count;

	if (*count >= n->fab->sq_depth)
		return -EAGAIN;
	(*count)++;
	__torus_queue_counted(n, d, kick);
	return 0;
}

/*
 * Queue @d whose slot in its port's send or receive queue count is already
 * taken (by __torus_queue(), or by its program at post). A send is ready
 * at the node's clock, or later if @d->clock_ns (a program's dependency)
 * says so. Caller holds fab->lock.
 */
void __torus_queue_counted(struct torus_node *n, struct torus_kdesc *d, bool *kick)
{
	struct torus_port *rp = &n->ports[d->port];
	struct torus_fifo_msg *msg;

	*kick = false;
	if (d->op == TORUS_OP_SEND) {
		d->clock_ns = max_t(u64, d->clock_ns, READ_ONCE(n->clock_ns));
		list_add_tail(&d->list, &torus_node_engine(n, d->port)->txq);
		*kick = true;
		return;
	}
	msg = __torus_claim_msg(rp, d);
	if (msg) {
		rp->rq_count--;
		d->match = msg;
		list_add_tail(&d->list, &torus_node_engine(n, d->port)->rdq);
		*kick = true;
		return;
	}
	list_add_tail(&d->list, &rp->rxq);
	__torus_wake_waiters(&rp->waiters);
}

/* Take the head send off its engine's queue. Caller holds fab->lock. */
void __torus_unqueue_send(struct torus_kdesc *d)
{
	list_del(&d->list);
	d->node->ports[d->port].sq_count--;
}

/*
 * Put the receives on @eng's ready queue on @dead, their messages back at
 * the head of their FIFOs. Caller holds fab->lock.
 */
static void __torus_unqueue_ready(struct torus_engine *eng, struct list_head *dead)
{
	struct torus_kdesc *r, *tmp;

	list_for_each_entry_safe_reverse(r, tmp, &eng->rdq, list) {
		__torus_unclaim_msg(&r->node->ports[r->port], r->match);
		r->match = NULL;
		list_move(&r->list, dead);
	}
}

/*
 * Last close: move every descriptor @n still has queued (its one-port
 * engine's sends, then per port the port engine's sends and the receives)
 * to @dead, in that order; the receives that had claimed a FIFO message
 * come first, their messages back in the FIFO. Caller holds fab->lock.
 */
void __torus_unqueue_all(struct torus_node *n, struct list_head *dead)
{
	struct torus_port *p;
	u32 i;

	__torus_unqueue_ready(&n->eng1, dead);
	list_splice_tail_init(&n->eng1.txq, dead);
	for (i = 0; i < n->fab->nports; i++) {
		p = &n->ports[i];
		__torus_unqueue_ready(&p->eng, dead);
		list_splice_tail_init(&p->eng.txq, dead);
		list_splice_tail_init(&p->rxq, dead);
		p->sq_count = 0;
		p->rq_count = 0;
	}
}

static void __torus_unqueue_list_file_mrs(struct list_head *q, struct torus_file *tf,
					  struct list_head *dead, bool send)
{
	struct torus_kdesc *d, *tmp;

	list_for_each_entry_safe(d, tmp, q, list) {
		if (d->file != tf || !d->has_mr)
			continue;
		list_move_tail(&d->list, dead);
		if (send)
			d->node->ports[d->port].sq_count--;
		else
			d->node->ports[d->port].rq_count--;
	}
}

/*
 * Release of @tf while its node stays open: move the descriptors @tf posted
 * that name its registrations and are still queued to @dead (sends keep
 * their order on their engines). Receives on a ready queue have their
 * message and count as claimed: their engine was kicked and completes them.
 * Caller holds fab->lock.
 */
void __torus_unqueue_file_mrs(struct torus_node *n, struct torus_file *tf, struct list_head *dead)
{
	u32 i;

	__torus_unqueue_list_file_mrs(&n->eng1.txq, tf, dead, true);
	for (i = 0; i < n->fab->nports; i++) {
		__torus_unqueue_list_file_mrs(&n->ports[i].eng.txq, tf, dead, true);
		__torus_unqueue_list_file_mrs(&n->ports[i].rxq, tf, dead, false);
	}
}

static u32 __torus_unqueue_list_prog(struct list_head *q, struct torus_prog *p,
				     struct list_head *dead, bool count)
{
	struct torus_kdesc *d, *tmp;
	u32 moved = 0;

	list_for_each_entry_safe(d, tmp, q, list) {
		if (d->prog != p)
			continue;
		if (d->match) {
			/* a ready receive: its message goes back to its FIFO's head */
			__torus_unclaim_msg(&d->node->ports[d->port], d->match);
			d->match = NULL;
		} else if (count && d->op == TORUS_OP_SEND) {
			d->node->ports[d->port].sq_count--;
		} else if (count) {
			d->node->ports[d->port].rq_count--;
		}
		list_move_tail(&d->list, dead);
		moved++;
	}
	return moved;
}

/*
 * Take program @p's queued descriptors off @n's queues to @dead: sends on
 * the engines, receives posted or ready, and sync sends waiting by
 * reference at a destination. Returns how many. Caller holds fab->lock.
 */
u32 __torus_unqueue_prog(struct torus_node *n, struct torus_prog *p, struct list_head *dead)
{
	struct torus_fifo_msg *msg, *tmp;
	u32 i, moved;

	moved = __torus_unqueue_list_prog(&n->eng1.rdq, p, dead, false);
	moved += __torus_unqueue_list_prog(&n->eng1.txq, p, dead, true);
	for (i = 0; i < n->fab->nports; i++) {
		moved += __torus_unqueue_list_prog(&n->ports[i].eng.rdq, p, dead, false);
		moved += __torus_unqueue_list_prog(&n->ports[i].eng.txq, p, dead, true);
		moved += __torus_unqueue_list_prog(&n->ports[i].rxq, p, dead, true);
	}
	list_for_each_entry_safe(msg, tmp, &n->parked, park_entry) {
		if (msg->send->prog != p)
			continue;
		list_del(&msg->list);
		list_del_init(&msg->park_entry);
		list_add_tail(&msg->send->list, dead);
		moved++;
	}
	return moved;
}

/*
 * Move @n's sync sends waiting by reference (those posted through @tf that
 * name its registrations, or all with @tf NULL) off their FIFOs to @dead.
 * Caller holds fab->lock.
 */
void __torus_unpark(struct torus_node *n, struct torus_file *tf, struct list_head *dead)
{
	struct torus_fifo_msg *msg, *tmp;

	list_for_each_entry_safe(msg, tmp, &n->parked, park_entry) {
		if (tf && (msg->send->file != tf || !msg->send->has_mr))
			continue;
		list_del(&msg->list);
		list_del_init(&msg->park_entry);
		list_add_tail(&msg->send->list, dead);
	}
}

/*
 * Empty closing port @p's FIFO: copied messages go to @dead_msgs (their
 * credits back), other nodes' sync sends waiting by reference complete
 * refused and go to @refused. Caller holds fab->lock.
 */
void __torus_fifo_drop(struct torus_port *p, struct list_head *dead_msgs, struct list_head *refused)
{
	struct torus_fifo_msg *msg, *tmp;
	struct torus_kdesc *d;

	list_for_each_entry_safe(msg, tmp, &p->fifo, list) {
		list_del(&msg->list);
		d = msg->send;
		if (!d) {
			p->fifo_used -= msg->len;
			list_add_tail(&msg->list, dead_msgs);
			continue;
		}
		list_del_init(&msg->park_entry);
		__torus_complete(d, -ECONNREFUSED, 0, d->dst, d->tag, msg->t_start_ns, msg->t_end_ns);
		list_add_tail(&d->list, refused);
	}
	__torus_wake_waiters(&p->waiters);
}

/* Fabric release: free every parked message. */
void torus_fifo_free_all(struct torus_fabric *f)
{
	struct torus_fifo_msg *msg, *tmp;
	u32 i, j;

	if (!f->node)
		return;
	for (i = 0; i < f->nodes; i++)
		for (j = 0; j < f->nports; j++)
			list_for_each_entry_safe(msg, tmp, &f->node[i].ports[j].fifo, list)
				if (!WARN_ON_ONCE(msg->send))	/* its sender's last close took it */
					kvfree(msg);
}
