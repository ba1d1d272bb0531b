// SPDX-License-Identifier: GPL-2.0
/*
 * torus: the port engines, the transmit DMA engines that move messages. An
 * engine is a work item on the fabric's unbound workqueue (or the poster
 * itself, see torus_engine_doorbell()); it takes the sends queued on it
 * (queue.c) in order and carries each along its route: the oldest matching
 * receive at the destination gets the message copied matrix to matrix;
 * without one the message is parked in the destination port's receive FIFO
 * if its byte credits allow, else the engine stalls until a receive is
 * posted or credits come back. A TORUS_SEND_SYNC send without a receive
 * waits in that FIFO by reference instead (no copy, no credit), and the
 * receive that takes it copies it once, sender to receiver. A receive
 * posted for a message already in a FIFO waits on the ready queue of its
 * port's engine, which scatters the message before its next send. The link
 * faults of the route (fault.c) apply here. Completions of both ends go to
 * their nodes' CQs from here, and a node's last close stops its engines.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "torus.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

void torus_engine_init(struct torus_engine *eng, struct torus_node *n)
{
	eng->node = n;
	INIT_DELAYED_WORK(&eng->dwork, torus_engine_work);
	INIT_LIST_HEAD(&eng->txq);
	INIT_LIST_HEAD(&eng->rdq);
	INIT_LIST_HEAD(&eng->wait_entry);
}

void torus_engine_kick(struct torus_engine *eng)
{
	queue_delayed_work(eng->node->fab->wq, &eng->dwork, 0);
}

/* Caller holds fab->lock. */
void __torus_wake_waiters(struct list_head *waiters)
{
	struct torus_engine *eng, *tmp;

	list_for_each_entry_safe(eng, tmp, waiters, wait_entry) {
		list_del_init(&eng->wait_entry);
		torus_engine_kick(eng);
	}
}

/*
 * Sync send @d found no receive on @rp: it waits there by reference, with
 * the times of its arrival, and its engine goes on. Caller holds fab->lock.
 */
static void __torus_park(struct torus_fabric *f, struct torus_kdesc *d, struct torus_port *rp, u64 extra_ns)
{
	struct torus_fifo_msg *msg = d->park;

	__torus_unqueue_send(d);
	__torus_charge(f, d, &f->node[d->dst], extra_ns, &msg->t_start_ns, &msg->t_end_ns);
	msg->send = d;
	msg->tag = d->tag;
	msg->src = d->node->id;
	msg->len = d->len;
	list_add_tail(&msg->list, &rp->fifo);
	list_add_tail(&msg->park_entry, &d->node->parked);
	trace_torus_start(f->id, d->node->id, d->port, d->op, d->dst, d->tag, d->len);
}

/*
 * Copy a claimed by-reference message's send straight into claimed receive
 * @r and complete both with the message's times. Frees both (and @msg,
 * which the send owns). Called without locks.
 */
static void torus_park_deliver(struct torus_fabric *f, struct torus_fifo_msg *msg, struct torus_kdesc *r)
{
	struct torus_kdesc *d = msg->send;
	int status = r->len == d->len ? 0 : -EMSGSIZE;

	if (!status)
		torus_copy_segs(r->mx->vaddr, r->segs, r->nsegs, d->mx->vaddr, d->segs, d->nsegs, d->len);
	/* the copy is over: registrations go (unpinned, if deregistered) before completing */
	torus_kdesc_drop_mrs(d);
	torus_kdesc_drop_mrs(r);
	spin_lock(&f->lock);
	__torus_complete(r, status, d->len, msg->src, d->tag, msg->t_start_ns, msg->t_end_ns);
	__torus_complete(d, status, d->len, d->dst, d->tag, msg->t_start_ns, msg->t_end_ns);
	spin_unlock(&f->lock);
	torus_kdesc_free(r);
	torus_kdesc_free(d);
}

/*
 * Scatter a claimed FIFO message into claimed receive @r, return the
 * message's credits and complete @r (a by-reference one: see above). Frees
 * both. Called without locks.
 */
static void torus_fifo_deliver(struct torus_fabric *f, struct torus_port *rp, struct torus_fifo_msg *msg,
			struct torus_kdesc *r)
{
	struct torus_kseg flat = { .mr = NULL, .offset = 0, .length = msg->len };
	int status = r->len == msg->len ? 0 : -EMSGSIZE;

	if (msg->send) {
		torus_park_deliver(f, msg, r);
		return;
	}
	if (!status)
		torus_copy_segs(r->mx->vaddr, r->segs, r->nsegs, msg->data, &flat, 1, msg->len);
	torus_kdesc_drop_mrs(r);	/* unpinned, if deregistered, before it completes */
	spin_lock(&f->lock);
	rp->fifo_used -= msg->len;
	__torus_wake_waiters(&rp->waiters);
	__torus_complete(r, status, msg->len, msg->src, msg->tag, msg->t_start_ns, msg->t_end_ns);
	spin_unlock(&f->lock);
	kvfree(msg);
	torus_kdesc_free(r);
}

/* One send between its claim and its completion (torus_engine_step()). */
struct torus_xmit {
	struct torus_kdesc *d;		/* the send */
	struct torus_kdesc *r;		/* the receive posted for it, or NULL */
	struct torus_fifo_msg *msg;	/* without one: the FIFO copy of its bytes */
	struct torus_node *dst;
	struct torus_port *rp;		/* the destination's arrival port */
	u64 t0, t1;			/* the message's model times */
	int status;
};

/*
 * The faults on @d's route: -ENOLINK if a link is down, else 0; *@drop if
 * a link is to drop it, *@delay the real latency the links add. Caller
 * holds fab->lock.
 */
static int __torus_route_faults(struct torus_fabric *f, const struct torus_kdesc *d, bool *drop, u64 *delay)
{
	int status = 0;
	u32 i;

	for (i = 0; i < d->nhops; i++) {
		struct torus_link *l = torus_link_of(f, d->route[i]);

		if (l->fault_flags & TORUS_FAULT_DOWN)
			status = -ENOLINK;
		if ((l->fault_flags & TORUS_FAULT_DROP) && l->drop_count)
			*drop = true;
		if (l->fault_flags & TORUS_FAULT_DELAY)
			*delay += l->delay_ns;
	}
	return status;
}

/*
 * Complete @d unsent: failed with @status, or dropped (status 0), using up
 * one drop of each dropping link on its route. Caller holds fab->lock.
 */
static void __torus_discard(struct torus_fabric *f, struct torus_kdesc *d, int status)
{
	u32 i;

	for (i = 0; !status && i < d->nhops; i++) {
		struct torus_link *l = torus_link_of(f, d->route[i]);

		if ((l->fault_flags & TORUS_FAULT_DROP) && l->drop_count)
			l->drop_count--;
	}
	__torus_unqueue_send(d);
	__torus_complete(d, status, d->len, d->dst, d->tag, d->clock_ns, d->clock_ns);
}

/* Copy @x's send into its receive, or into a new FIFO message. Called without locks. */
static void torus_xmit_copy(struct torus_xmit *x)
{
	struct torus_kdesc *d = x->d, *r = x->r;
	struct torus_kseg flat = { .mr = NULL, .offset = 0, .length = d->len };
	struct torus_fifo_msg *msg;

	if (r) {
		if (r->len != d->len)
			x->status = -EMSGSIZE;
		else
			torus_copy_segs(r->mx->vaddr, r->segs, r->nsegs,
					d->mx->vaddr, d->segs, d->nsegs, d->len);
	} else {
		msg = kvmalloc(struct_size(msg, data, d->len), GFP_KERNEL);
		if (msg) {
			msg->send = NULL;	/* the bytes are here: not by reference */
			msg->tag = d->tag;
			msg->t_start_ns = x->t0;
			msg->t_end_ns = x->t1;
			msg->src = d->node->id;
			msg->len = d->len;
			torus_copy_segs(msg->data, &flat, 1, d->mx->vaddr, d->segs, d->nsegs, d->len);
		} else {
			x->status = -ENOMEM;
		}
		x->msg = msg;
	}
	/* the copy is over: registrations go (unpinned, if deregistered) before completing */
	torus_kdesc_drop_mrs(d);
	if (r)
		torus_kdesc_drop_mrs(r);
}

/*
 * Complete @x's send, and its receive if one was posted; a FIFO copy joins
 * the FIFO (*@queued) unless a receive posted meanwhile, which is returned
 * for torus_fifo_deliver(). Caller holds fab->lock.
 */
static struct torus_kdesc *__torus_xmit_done(struct torus_fabric *f, struct torus_xmit *x, bool *queued)
{
	struct torus_kdesc *d = x->d, *late = NULL;
	struct torus_port *rp = x->rp;

	if (torus_one_port(f)) {
		x->dst->rx_busy = false;
		__torus_wake_waiters(&x->dst->rx_waiters);
	}
	if (x->r) {
		__torus_complete(x->r, x->status, d->len, d->node->id, d->tag, x->t0, x->t1);
	} else if (x->msg && !x->dst->active && x->dst->ever_opened) {
		/* the destination closed during the copy: nobody will take it */
		rp->fifo_used -= d->len;
		__torus_wake_waiters(&rp->waiters);
		x->status = -ECONNREFUSED;
	} else if (x->msg) {
		/* a receive posted during the copy did not see the message */
		late = __torus_claim_recv(rp, d->tag);
		if (!late)
			list_add_tail(&x->msg->list, &rp->fifo);
		*queued = !late;
	} else {
		rp->fifo_used -= d->len;
		__torus_wake_waiters(&rp->waiters);
	}
	__torus_complete(d, x->status, d->len, d->dst, d->tag, x->t0, x->t1);
	return late;
}

/*
 * One receive on @eng's ready queue (queued with the FIFO message it
 * claimed), or with @tx and none ready, one send. Returns true after
 * progress, false when idle or stalled.
 */
static bool torus_engine_step(struct torus_engine *eng, bool tx)
{
	struct torus_fabric *f = eng->node->fab;
	struct torus_xmit x = { };
	struct torus_kdesc *d, *late;
	bool drop = false, queued = false;
	u64 delay = 0;

	spin_lock(&f->lock);
	d = list_first_entry_or_null(&eng->rdq, struct torus_kdesc, list);
	if (d) {
		list_del(&d->list);
		spin_unlock(&f->lock);
		torus_fifo_deliver(f, &d->node->ports[d->port], d->match, d);
		return true;
	}
	d = tx ? list_first_entry_or_null(&eng->txq, struct torus_kdesc, list) : NULL;
	if (!d) {
		spin_unlock(&f->lock);
		return false;
	}
	x.d = d;
	x.dst = &f->node[d->dst];
	x.rp = &x.dst->ports[d->arrival];
	x.status = __torus_route_faults(f, d, &drop, &delay);
	/*
	 * Nobody has the destination open, and a process had it open before:
	 * its session is over, so the message must not wait for the next
	 * opener. A node never opened yet (processes still starting) buffers.
	 */
	if (!x.status && !x.dst->active && x.dst->ever_opened)
		x.status = -ECONNREFUSED;
	if (x.status || drop) {
		__torus_discard(f, d, x.status);
		spin_unlock(&f->lock);
		torus_kdesc_free(d);
		return true;
	}
	if (delay && !d->delayed) {
		/* real latency: the engine sleeps in a timer, not in msleep */
		d->delayed = true;
		spin_unlock(&f->lock);
		mod_delayed_work(f->wq, &eng->dwork, max(nsecs_to_jiffies(delay), 1UL));
		return false;
	}
	if (torus_one_port(f) && x.dst->rx_busy) {
		list_move_tail(&eng->wait_entry, &x.dst->rx_waiters);
		spin_unlock(&f->lock);
		return false;
	}
	x.r = __torus_claim_recv(x.rp, d->tag);
	if (!x.r && d->park) {
		__torus_park(f, d, x.rp, d->delayed ? delay : 0);
		spin_unlock(&f->lock);
		return true;
	}
	if (!x.r) {
		if (x.rp->fifo_used + d->len > f->fifo_bytes) {
			if (!d->stalled) {
				d->stalled = true;
				torus_link_of(f, d->route[0])->cnt.stalls++;
			}
			list_move_tail(&eng->wait_entry, &x.rp->waiters);
			spin_unlock(&f->lock);
			return false;
		}
		x.rp->fifo_used += d->len;
	}
	__torus_unqueue_send(d);
	__torus_charge(f, d, x.dst, d->delayed ? delay : 0, &x.t0, &x.t1);
	trace_torus_start(f->id, d->node->id, d->port, d->op, d->dst, d->tag, d->len);
	if (torus_one_port(f))
		x.dst->rx_busy = true;
	spin_unlock(&f->lock);

	torus_xmit_copy(&x);

	spin_lock(&f->lock);
	late = __torus_xmit_done(f, &x, &queued);
	spin_unlock(&f->lock);

	if (late)
		torus_fifo_deliver(f, x.rp, x.msg, late);
	else if (!queued)
		kvfree(x.msg);
	if (x.r)
		torus_kdesc_free(x.r);
	torus_kdesc_free(d);
	return true;
}

/*
 * Take up to TORUS_ENGINE_BUDGET steps of @eng. Called by the engine's work
 * item, or directly by the poster (torus_engine_doorbell()). Exactly one
 * runner at a time per engine keeps each route in order; a kick that finds
 * the engine busy makes the runner hand over to the work item.
 */
static void torus_engine_run(struct torus_engine *eng, bool from_work)
{
	struct torus_fabric *f = eng->node->fab;
	/* a pending work item may hold a DELAY fault's real latency: its sends wait for it */
	bool tx = from_work || !delayed_work_pending(&eng->dwork);
	int i;

	spin_lock(&f->lock);
	if (eng->busy) {
		eng->rekick = true;
		spin_unlock(&f->lock);
		return;
	}
	eng->busy = true;
	spin_unlock(&f->lock);
	for (i = 0; i < TORUS_ENGINE_BUDGET; i++)
		if (!torus_engine_step(eng, tx))
			break;
	spin_lock(&f->lock);
	eng->busy = false;
	if (eng->rekick || i == TORUS_ENGINE_BUDGET) {
		/* more to do, or kicked meanwhile: let the work item go on */
		eng->rekick = false;
		torus_engine_kick(eng);
	}
	spin_unlock(&f->lock);
}

void torus_engine_work(struct work_struct *work)
{
	torus_engine_run(container_of(to_delayed_work(work), struct torus_engine, dwork), true);
}

/*
 * The doorbell: start the engines of @n's ports in @kick after a post.
 * torus_engine_inline: 0 = work items only; 1 = the poster runs the last
 * engine itself and the others run as work items in parallel; 2 (default) =
 * the poster runs them all, with no worker hand-off per batch (measured:
 * docs/benchmarks.md). @may_run false (a program posted with
 * TORUS_PROG_QUEUE_ONLY): work items only, whatever torus_engine_inline
 * says, so the poster returns at once. Engines that stall or run out of
 * budget go on as work items.
 */
void torus_engine_doorbell(struct torus_node *n, u32 kick, bool may_run)
{
	int inl = may_run ? torus_engine_inline : 0;
	int last = fls(kick) - 1, i;

	if (!kick)
		return;
	if (torus_one_port(n->fab)) {
		if (inl)
			torus_engine_run(&n->eng1, false);
		else
			torus_engine_kick(&n->eng1);
		return;
	}
	for (i = 0; i <= last; i++) {
		if (!(kick & (1U << i)))
			continue;
		if (inl == 2 || (inl == 1 && i == last))
			torus_engine_run(&n->ports[i].eng, false);
		else
			torus_engine_kick(&n->ports[i].eng);
	}
}

/*
 * Last close of @n: cancel its queued descriptors and its sync sends
 * waiting elsewhere (their completions are discarded with the file), drop
 * the messages parked in its FIFOs (giving their credits back; other nodes'
 * sync sends there are refused), stop its engines and wait for descriptors
 * other engines already claimed. Caller holds torus_registry_lock.
 */
void torus_node_quiesce(struct torus_node *n)
{
	struct torus_fabric *f = n->fab;
	struct torus_fifo_msg *msg, *mtmp;
	struct torus_kdesc *d;
	LIST_HEAD(dead_msgs);
	LIST_HEAD(refused);
	LIST_HEAD(dead);
	u32 i;

	spin_lock(&f->lock);
	n->active = false;
	__torus_unqueue_all(n, &dead);
	__torus_unpark(n, NULL, &dead);
	list_del_init(&n->eng1.wait_entry);
	for (i = 0; i < f->nports; i++) {
		list_del_init(&n->ports[i].eng.wait_entry);
		__torus_fifo_drop(&n->ports[i], &dead_msgs, &refused);
	}
	list_for_each_entry(d, &dead, list)
		__torus_complete(d, -ECANCELED, 0, d->dst, d->tag, d->clock_ns, d->clock_ns);
	spin_unlock(&f->lock);

	cancel_delayed_work_sync(&n->eng1.dwork);
	for (i = 0; i < f->nports; i++)
		cancel_delayed_work_sync(&n->ports[i].eng.dwork);
	torus_kdesc_free_list(&dead);
	torus_kdesc_free_list(&refused);
	list_for_each_entry_safe(msg, mtmp, &dead_msgs, list)
		kvfree(msg);
	torus_cq_drain(n);
}

/*
 * Release of @tf (a file of a node that may stay open through other files):
 * the descriptors it posted that name its registrations and are still
 * queued, or wait at a destination as sync sends, complete with -ECANCELED (into the node's CQ while it is open), so
 * no queued descriptor keeps a closed file's memory pinned. Ones an engine
 * already claimed finish their copy and drop their holds as they complete.
 */
void torus_file_cancel(struct torus_file *tf)
{
	struct torus_node *n = tf->node;
	struct torus_fabric *f = n->fab;
	struct torus_kdesc *d;
	LIST_HEAD(dead);
	u32 i;

	spin_lock(&f->lock);
	__torus_unqueue_file_mrs(n, tf, &dead);
	__torus_unpark(n, tf, &dead);
	list_for_each_entry(d, &dead, list)
		__torus_complete(d, -ECANCELED, 0, d->dst, d->tag, d->clock_ns, d->clock_ns);
	spin_unlock(&f->lock);
	if (list_empty(&dead))
		return;
	/*
	 * A cancelled send may have been the head an engine stalled on (FIFO
	 * credit, a busy receiver): the sends behind it, the other files',
	 * can go now, and nothing else would start that engine again.
	 */
	if (torus_one_port(f))
		torus_engine_kick(&n->eng1);
	else
		for (i = 0; i < f->nports; i++)
			torus_engine_kick(&n->ports[i].eng);
	torus_kdesc_free_list(&dead);
}
