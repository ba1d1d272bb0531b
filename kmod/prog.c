// SPDX-License-Identifier: GPL-2.0
/*
 * torus: programs, triggered descriptors posted in one call (PROG_POST).
 * A program is checked whole before anything is queued: each descriptor as
 * TORUS_IOC_POST checks it (post.c builds the kernel copies), counters in
 * range, each threshold reachable by the descriptors before it (so no
 * cycle), bounded fan-out; its CQ slots and its port queue slots are
 * reserved up front and its memory is charged to the caller and capped per
 * file. Descriptors without a counter are queued at once (queue.c); the
 * others wait on their counter's list in the program. A descriptor's
 * completion (queue.c's __torus_complete(), under fab->lock, from an engine
 * or a cancel) comes here: a success adds to its counter and moves the
 * descriptors whose threshold is reached onto their queues, kicking their
 * engines (list moves and work-item kicks only: nothing is copied or
 * completed recursively, and only the program's own node is touched); a
 * failure writes its completion and schedules the program's abort. The
 * abort (timeout, failure, the posting file's close) takes the program's
 * descriptors off the queues; the program ends when none is moving any
 * more, writes its completion, gives back what it reserved and is freed in
 * a work item.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "torus.h"

static void torus_prog_free(struct torus_prog *p)
{
	torus_kdesc_free_list(&p->held);
	torus_kdesc_free_list(&p->spent);
	kfree(p->mrs);
	kfree(p->waiters);
	kfree(p->count);
	kfree(p->ready_ns);
	kfree(p);
}

/* After its end: free @p, then let its file's release go on (torus_prog_cancel_file()). */
static void torus_prog_free_work(struct work_struct *work)
{
	struct torus_prog *p = container_of(work, struct torus_prog, free_work);
	struct torus_node *n = p->node;
	struct torus_file *tf = p->file;

	cancel_delayed_work_sync(&p->abort_work);
	torus_prog_free(p);
	if (atomic_dec_and_test(&tf->progs))
		wake_up(&n->cq.wq);
}

/*
 * @p has nothing queued or moving: write its completion, give back the CQ
 * slots and queue slots still reserved, release its file and free it
 * later. Caller holds fab->lock.
 */
static void __torus_prog_end(struct torus_prog *p)
{
	struct torus_node *n = p->node;
	struct torus_fabric *f = n->fab;
	struct torus_kdesc *d;
	struct torus_cqe e = {
		.user_data = p->user_data,
		.op = TORUS_OP_PROG,
		.status = p->status,
		.bytes = p->done,
		.peer = p->status ? p->failed_index : TORUS_NO_NODE,
		.t_start_ns = p->t_start_ns == U64_MAX ? 0 : p->t_start_ns,
		.t_end_ns = p->t_end_ns,
	};

	p->ended = true;
	/* descriptors it never ran: their registrations are free again */
	list_for_each_entry(d, &p->held, list)
		__torus_kdesc_mrs_done(d);
	list_del_init(&p->entry);
	p->file->prog_bytes -= p->bytes;
	__torus_cq_release(n, p->slots - 1);
	p->slots = 0;
	torus_cq_complete(n, &e);
	cancel_delayed_work(&p->abort_work);
	queue_work(f->wq, &p->free_work);
}

/*
 * Take everything of @p off the queues and its counters' lists to
 * p->held; it ends now if no engine is moving one of its descriptors,
 * else when the last of those completes. Caller holds fab->lock.
 */
static void __torus_prog_abort(struct torus_prog *p, int status)
{
	struct torus_node *n = p->node;
	struct torus_kdesc *d, *tmp;
	bool named = p->status;
	u32 c;

	if (p->aborted)
		return;
	p->aborted = true;
	if (!named)
		p->status = status;
	for (c = 0; c < p->ncounters; c++) {
		list_for_each_entry_safe(d, tmp, &p->waiters[c], list) {
			/* its queue slot, reserved at post, goes back */
			if (d->op == TORUS_OP_SEND)
				n->ports[d->port].sq_count--;
			else if (d->op == TORUS_OP_RECV)
				n->ports[d->port].rq_count--;
			list_move_tail(&d->list, &p->held);
			p->unqueued--;
		}
	}
	p->out -= __torus_unqueue_prog(n, p, &p->held);
	if (!named) {
		/* timeout or cancel: name the first descriptor it still waited for */
		p->failed_index = TORUS_NO_NODE;
		list_for_each_entry(d, &p->held, list)
			p->failed_index = min(p->failed_index, d->prog_index);
	}
	/* a send taken off may have been the head an engine stalled on */
	if (torus_one_port(n->fab)) {
		torus_engine_kick(&n->eng1);
	} else {
		for (c = 0; c < n->fab->nports; c++)
			torus_engine_kick(&n->ports[c].eng);
	}
	if (!p->out)
		__torus_prog_end(p);
}

static void torus_prog_abort_work(struct work_struct *work)
{
	struct torus_prog *p = container_of(to_delayed_work(work), struct torus_prog, abort_work);
	struct torus_fabric *f = p->node->fab;

	spin_lock(&f->lock);
	if (!p->ended)
		__torus_prog_abort(p, p->status ?: -ETIMEDOUT);
	spin_unlock(&f->lock);
}

/*
 * Queue @d (its program's, its counter reached): a send no earlier in
 * virtual time than @ready_ns. @kick NULL: kick its engine now (the work
 * item), else collect the port in *@kick. Caller holds fab->lock.
 */
static void __torus_prog_fire(struct torus_kdesc *d, u64 ready_ns, u32 *kick)
{
	struct torus_node *n = d->node;
	bool more;

	d->clock_ns = ready_ns;
	d->prog->out++;
	__torus_queue_counted(n, d, &more);
	if (!more)
		return;
	if (kick)
		*kick |= 1U << d->port;
	else
		torus_engine_kick(torus_node_engine(n, d->port));
}

/*
 * Counter @c of @p gets a signal that ended at @t_ns: queue the descriptors
 * whose threshold is reached; a TORUS_OP_SIGNAL among them completes at
 * once and signals its own counter, in this loop (a chain of them is
 * bounded by the program's size and uses no stack). Caller holds fab->lock.
 */
static void __torus_prog_count(struct torus_prog *p, u32 c, u64 t_ns)
{
	LIST_HEAD(relay);
	struct torus_kdesc *w, *tmp;

	for (;;) {
		p->count[c]++;
		p->ready_ns[c] = max(p->ready_ns[c], t_ns);
		list_for_each_entry_safe(w, tmp, &p->waiters[c], list) {
			if (w->wait_threshold > p->count[c])
				continue;
			p->unqueued--;
			if (w->op == TORUS_OP_SIGNAL) {
				w->clock_ns = p->ready_ns[c];
				list_move_tail(&w->list, &relay);
			} else {
				list_del(&w->list);
				__torus_prog_fire(w, p->ready_ns[c], NULL);
			}
		}
		w = list_first_entry_or_null(&relay, struct torus_kdesc, list);
		if (!w)
			return;
		list_move_tail(&w->list, &p->spent);
		p->done++;
		c = w->signal_counter;
		t_ns = w->clock_ns;
	}
}

/*
 * Descriptor @d of a program completed with @e (not yet in any CQ). Caller
 * holds fab->lock (queue.c's __torus_complete()).
 */
void __torus_prog_desc_done(struct torus_kdesc *d, const struct torus_cqe *e)
{
	struct torus_prog *p = d->prog;
	struct torus_cqe fe;
	u32 c = d->signal_counter;

	p->out--;
	if (e->status) {
		fe = *e;
		fe.flags |= TORUS_CQE_PROG;
		p->slots--;
		torus_cq_complete(p->node, &fe);
		if (!p->status) {
			p->status = e->status;
			p->failed_index = d->prog_index;
			/* not here: the caller may be walking a list the abort edits */
			mod_delayed_work(p->node->fab->wq, &p->abort_work, 0);
		}
	} else {
		p->slots--;
		__torus_cq_release(p->node, 1);
		p->done++;
		p->t_start_ns = min(p->t_start_ns, e->t_start_ns);
		p->t_end_ns = max(p->t_end_ns, e->t_end_ns);
		if (c != TORUS_PROG_NO_COUNTER && !p->aborted)
			__torus_prog_count(p, c, e->t_end_ns);
	}
	if (!p->out && (p->aborted || !p->unqueued))
		__torus_prog_end(p);
}

/*
 * The checks on the program as a whole, in descriptor order: counters in
 * range, thresholds reachable from earlier signals only, fan-out. @sig
 * and @fan are zeroed scratch arrays of ncounters entries.
 */
static int torus_prog_check(const struct torus_prog_desc *pd, u32 ncounters, u32 *sig, u32 *fan)
{
	static const struct torus_desc zero = { .op = TORUS_OP_SIGNAL };
	u32 w = pd->wait_counter, s = pd->signal_counter;

	if (pd->__reserved)
		return -EINVAL;
	/* a signal moves nothing: it waits on one counter and signals one */
	if (pd->desc.op == TORUS_OP_SIGNAL &&
	    (memcmp(&pd->desc, &zero, sizeof(zero)) || w == TORUS_PROG_NO_COUNTER ||
	     s == TORUS_PROG_NO_COUNTER))
		return -EINVAL;
	if (s != TORUS_PROG_NO_COUNTER && s >= ncounters)
		return -EINVAL;
	if (w == TORUS_PROG_NO_COUNTER) {
		if (pd->wait_threshold)
			return -EINVAL;
	} else {
		if (w >= ncounters || !pd->wait_threshold || pd->wait_threshold > sig[w])
			return -EINVAL;
		if (++fan[w] > TORUS_MAX_PROG_FANOUT)
			return -EINVAL;
	}
	if (s != TORUS_PROG_NO_COUNTER)
		sig[s]++;
	return 0;
}

/* Note the registrations @d names in @p (MR_DEREG finds the programs holding one). */
static int torus_prog_note_mrs(struct torus_prog *p, const struct torus_kdesc *d)
{
	struct torus_mr **mrs;
	u32 i, k;

	for (i = 0; i < d->nsegs; i++) {
		if (!d->segs[i].mr)
			continue;
		for (k = 0; k < p->nmrs && p->mrs[k] != d->segs[i].mr; k++)
			;
		if (k < p->nmrs)
			continue;
		if (p->nmrs == p->cap_mrs) {
			mrs = krealloc_array(p->mrs, max(2 * p->cap_mrs, 4U), sizeof(*mrs),
					     GFP_KERNEL_ACCOUNT);
			if (!mrs)
				return -ENOMEM;
			p->bytes += (max(2 * p->cap_mrs, 4U) - p->cap_mrs) * sizeof(*mrs);
			p->cap_mrs = max(2 * p->cap_mrs, 4U);
			p->mrs = mrs;
		}
		p->mrs[p->nmrs++] = d->segs[i].mr;
	}
	return 0;
}

int torus_prog_post(struct torus_file *tf, struct torus_prog_post *pp)
{
	struct torus_node *n = tf->node;
	struct torus_fabric *f = n->fab;
	u32 nq[TORUS_MAX_PORTS][2] = { };
	struct torus_kdesc *d, *tmp;
	struct torus_prog_desc pd;
	struct torus_prog *p;
	u32 *sig = NULL, i, kick = 0, nsig = 0;
	size_t bytes;
	int ret;

	pp->error_index = TORUS_NO_NODE;
	if (!pp->count || pp->count > TORUS_MAX_PROG_DESCS ||
	    pp->ncounters > TORUS_MAX_PROG_COUNTERS || pp->timeout_ns > TORUS_MAX_PROG_TIMEOUT_NS)
		return -EINVAL;
	if (pp->desc_size < sizeof(struct torus_prog_desc))
		return -EINVAL;
	if (pp->desc_size > PAGE_SIZE)
		return -E2BIG;

	p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return -ENOMEM;
	INIT_LIST_HEAD(&p->entry);
	INIT_LIST_HEAD(&p->held);
	INIT_LIST_HEAD(&p->spent);
	INIT_DELAYED_WORK(&p->abort_work, torus_prog_abort_work);
	INIT_WORK(&p->free_work, torus_prog_free_work);
	p->node = n;
	p->file = tf;
	p->ncounters = pp->ncounters;
	p->ndescs = pp->count;
	p->user_data = pp->user_data;
	p->t_start_ns = U64_MAX;
	p->bytes = sizeof(*p);
	ret = -ENOMEM;
	if (p->ncounters) {
		p->waiters = kcalloc(p->ncounters, sizeof(*p->waiters), GFP_KERNEL_ACCOUNT);
		p->count = kcalloc(p->ncounters, sizeof(*p->count), GFP_KERNEL_ACCOUNT);
		p->ready_ns = kcalloc(p->ncounters, sizeof(*p->ready_ns), GFP_KERNEL_ACCOUNT);
		sig = kcalloc(2 * p->ncounters, sizeof(*sig), GFP_KERNEL);
		if (!p->waiters || !p->count || !p->ready_ns || !sig)
			goto err_free;
		p->bytes += p->ncounters * (sizeof(*p->waiters) + sizeof(*p->count) +
					    sizeof(*p->ready_ns));
		for (i = 0; i < p->ncounters; i++)
			INIT_LIST_HEAD(&p->waiters[i]);
	}

	/* build every descriptor (on p->held, in order) before queueing any */
	for (i = 0; i < pp->count; i++) {
		ret = copy_struct_from_user(&pd, sizeof(pd),
					    u64_to_user_ptr(pp->descs) + (u64)i * pp->desc_size,
					    pp->desc_size);
		if (ret)
			goto err_index;
		ret = torus_prog_check(&pd, p->ncounters, sig, sig ? sig + p->ncounters : NULL);
		if (ret)
			goto err_index;
		if (pd.desc.op == TORUS_OP_SIGNAL)
			d = torus_kdesc_signal_new(tf, &bytes);
		else
			d = torus_kdesc_new(tf, &pd.desc, &bytes);
		if (IS_ERR(d)) {
			ret = PTR_ERR(d);
			goto err_index;
		}
		list_add_tail(&d->list, &p->held);
		if (d->has_mr) {
			ret = torus_prog_note_mrs(p, d);
			if (ret)
				goto err_free;
		}
		d->prog = p;
		d->prog_index = i;
		d->wait_counter = pd.wait_counter;
		d->wait_threshold = pd.wait_threshold;
		d->signal_counter = pd.signal_counter;
		d->mx = n->mx;
		torus_matrix_get(d->mx);
		if (d->op == TORUS_OP_SIGNAL)
			nsig++;
		else
			nq[d->port][d->op == TORUS_OP_SEND]++;
		p->bytes += bytes;
		if (p->bytes > TORUS_MAX_PROG_BYTES) {
			ret = -ENOSPC;
			goto err_free;
		}
	}
	kfree(sig);
	sig = NULL;

	/* one slot per data descriptor and one for the program */
	ret = torus_cq_reserve_n(n, pp->count - nsig + 1);
	if (ret)
		goto err_free;
	p->slots = pp->count - nsig + 1;
	spin_lock(&f->lock);
	ret = -ENOSPC;
	if (tf->prog_bytes + p->bytes > TORUS_MAX_PROG_BYTES)
		goto err_unlock;
	ret = -EAGAIN;
	for (i = 0; i < f->nports; i++)
		if (n->ports[i].sq_count + nq[i][1] > f->sq_depth ||
		    n->ports[i].rq_count + nq[i][0] > f->sq_depth)
			goto err_unlock;
	for (i = 0; i < f->nports; i++) {
		n->ports[i].sq_count += nq[i][1];
		n->ports[i].rq_count += nq[i][0];
	}
	atomic_inc(&tf->progs);
	tf->prog_bytes += p->bytes;
	list_add_tail(&p->entry, &n->progs);
	list_for_each_entry_safe(d, tmp, &p->held, list) {
		list_del(&d->list);
		if (d->wait_counter == TORUS_PROG_NO_COUNTER) {
			__torus_prog_fire(d, 0, &kick);
		} else {
			list_add_tail(&d->list, &p->waiters[d->wait_counter]);
			p->unqueued++;
		}
	}
	if (pp->timeout_ns)
		queue_delayed_work(f->wq, &p->abort_work,
				   max(nsecs_to_jiffies(pp->timeout_ns), 1UL));
	spin_unlock(&f->lock);
	torus_engine_doorbell(n, kick, !(pp->flags & TORUS_PROG_QUEUE_ONLY));
	return 0;

err_unlock:
	spin_unlock(&f->lock);
	spin_lock(&n->cq.lock);
	n->cq.reserved -= p->slots;
	n->cnt.posted -= p->slots;
	spin_unlock(&n->cq.lock);
	wake_up(&n->cq.wq);
	goto err_free;
err_index:
	pp->error_index = i;
err_free:
	kfree(sig);
	torus_prog_free(p);
	return ret;
}

/*
 * Release of @tf: abort its programs (-ECANCELED) and wait until each has
 * ended and is freed, so nothing of them (pinned pages, memory, slots)
 * outlives the file.
 */
void torus_prog_cancel_file(struct torus_file *tf)
{
	struct torus_node *n = tf->node;
	struct torus_fabric *f = n->fab;
	struct torus_prog *p, *tmp;

	spin_lock(&f->lock);
	list_for_each_entry_safe(p, tmp, &n->progs, entry)
		if (p->file == tf)
			__torus_prog_abort(p, -ECANCELED);
	spin_unlock(&f->lock);
	wait_event(n->cq.wq, !atomic_read(&tf->progs));
}

/* @tf has a program not yet ended that names @mr. Caller holds fab->lock. */
static bool __torus_prog_holds(struct torus_file *tf, struct torus_mr *mr)
{
	struct torus_prog *p;
	u32 k;

	list_for_each_entry(p, &tf->node->progs, entry)
		for (k = 0; p->file == tf && k < p->nmrs; k++)
			if (p->mrs[k] == mr)
				return true;
	return false;
}

/*
 * MR_DEREG of @mr (the caller holds a reference) while descriptors use it:
 * abort @tf's programs that name it (-ECANCELED) and wait until each has
 * ended, so their holds on it are gone. Returns how many it aborted (0:
 * what holds @mr is no program, and MR_DEREG stays EBUSY).
 */
int torus_prog_cancel_mr(struct torus_file *tf, struct torus_mr *mr)
{
	struct torus_node *n = tf->node;
	struct torus_fabric *f = n->fab;
	struct torus_prog *p, *tmp;
	int k = 0;
	u32 i;

	spin_lock(&f->lock);
	list_for_each_entry_safe(p, tmp, &n->progs, entry) {
		if (p->file != tf)
			continue;
		for (i = 0; i < p->nmrs; i++)
			if (p->mrs[i] == mr)
				break;
		if (i < p->nmrs) {
			__torus_prog_abort(p, -ECANCELED);
			k++;
		}
	}
	spin_unlock(&f->lock);
	if (k)
		wait_event(n->cq.wq, ({
			bool held;

			spin_lock(&f->lock);
			held = __torus_prog_holds(tf, mr);
			spin_unlock(&f->lock);
			!held;
		}));
	return k;
}
