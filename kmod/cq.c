// SPDX-License-Identifier: GPL-2.0
/*
 * torus: the per-node completion queue. A slot is reserved when a
 * descriptor is posted, so a completion always finds room; the wait ioctl
 * reaps entries (advancing the node's virtual clock) and poll()/epoll report
 * readiness.
 */
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "torus.h"

int torus_cq_init(struct torus_cq *cq, u32 depth)
{
	struct torus_cqe *ring;

	ring = kvcalloc(depth, sizeof(*ring), GFP_KERNEL);
	if (!ring)
		return -ENOMEM;
	spin_lock(&cq->lock);
	cq->ring = ring;
	cq->depth = depth;
	cq->head = 0;
	cq->count = 0;
	cq->reserved = 0;
	cq->overflow = false;
	spin_unlock(&cq->lock);
	return 0;
}

void torus_cq_free(struct torus_cq *cq)
{
	struct torus_cqe *ring;

	spin_lock(&cq->lock);
	ring = cq->ring;
	cq->ring = NULL;
	cq->count = 0;
	spin_unlock(&cq->lock);
	kvfree(ring);
}

/* Promise a slot to a descriptor being posted: -EAGAIN if the CQ could overflow. */
int torus_cq_reserve(struct torus_node *n)
{
	struct torus_cq *cq = &n->cq;
	int ret = 0;

	spin_lock(&cq->lock);
	if (cq->count + cq->reserved >= cq->depth)
		ret = -EAGAIN;
	else
		cq->reserved++, n->cnt.posted++;
	spin_unlock(&cq->lock);
	return ret;
}

/* Promise @k slots at once (a program): -EAGAIN unless all fit. */
int torus_cq_reserve_n(struct torus_node *n, u32 k)
{
	struct torus_cq *cq = &n->cq;
	int ret = 0;

	spin_lock(&cq->lock);
	if ((u64)cq->count + cq->reserved + k > cq->depth)
		ret = -EAGAIN;
	else
		cq->reserved += k, n->cnt.posted += k;
	spin_unlock(&cq->lock);
	return ret;
}

/*
 * Give back @k promised slots that will write no entry (a program's
 * descriptors that succeeded or never ran): counted as completed. Caller
 * holds n->fab->lock, as for torus_cq_complete().
 */
void __torus_cq_release(struct torus_node *n, u32 k)
{
	lockdep_assert_held(&n->fab->lock);
	if (!k)
		return;
	spin_lock(&n->cq.lock);
	n->cq.reserved -= k;
	n->cnt.completed += k;
	spin_unlock(&n->cq.lock);
	wake_up(&n->cq.wq);
}

void torus_cq_unreserve(struct torus_node *n)
{
	spin_lock(&n->cq.lock);
	n->cq.reserved--;
	n->cnt.posted--;
	spin_unlock(&n->cq.lock);
	wake_up(&n->cq.wq);
}

/*
 * Deliver a completion into its reserved slot. Caller holds n->fab->lock, so
 * n->active is stable: a closed node's completions are counted and dropped.
 */
void torus_cq_complete(struct torus_node *n, const struct torus_cqe *e)
{
	struct torus_cq *cq = &n->cq;
	struct torus_cqe *slot;

	lockdep_assert_held(&n->fab->lock);
	spin_lock(&cq->lock);
	cq->reserved--;
	n->cnt.completed++;
	if (e->status)
		n->cnt.errors++;
	if (n->active) {
		if (WARN_ON_ONCE(cq->count == cq->depth)) {
			n->cnt.cq_overflows++;
			cq->overflow = true;
		} else {
			slot = &cq->ring[(cq->head + cq->count) % cq->depth];
			*slot = *e;
			if (cq->overflow) {
				slot->flags |= TORUS_CQE_OVERFLOW;
				cq->overflow = false;
			}
			cq->count++;
		}
	}
	spin_unlock(&cq->lock);
	wake_up(&cq->wq);
}

static u32 torus_cq_reserved(struct torus_cq *cq)
{
	u32 r;

	spin_lock(&cq->lock);
	r = cq->reserved;
	spin_unlock(&cq->lock);
	return r;
}

/* Last close: wait until every descriptor of the node has completed. */
void torus_cq_drain(struct torus_node *n)
{
	wait_event(n->cq.wq, !torus_cq_reserved(&n->cq));
	spin_lock(&n->cq.lock);
	n->cq.head = 0;
	n->cq.count = 0;
	n->cq.overflow = false;
	spin_unlock(&n->cq.lock);
}

static u32 torus_cq_ready(struct torus_cq *cq)
{
	return READ_ONCE(cq->count);
}

/* A CQ_WAIT sleeper: woken only once its cq holds @min ready entries. */
struct torus_cq_waiter {
	struct wait_queue_entry wqe;
	struct torus_cq *cq;
	u32 min;
};

/*
 * Wake function of a CQ_WAIT sleeper, called under cq->wq's lock for every
 * wake_up() (each completion, an unreserve). Completions arriving one by one
 * do not wake the sleeper each time: only the one that makes @min ready does
 * (as io_uring's io_wake_function). poll() and close-drain waiters on the
 * same queue keep the default wake function.
 */
static int torus_cq_wake(struct wait_queue_entry *wqe, unsigned int mode, int sync, void *key)
{
	struct torus_cq_waiter *w = container_of(wqe, struct torus_cq_waiter, wqe);

	if (READ_ONCE(w->cq->count) < w->min)
		return 0;
	return autoremove_wake_function(wqe, mode, sync, key);
}

/*
 * Sleep until @min entries are ready, a signal (-EINTR) or @timeout_ns
 * (U64_MAX: none) passed (0 returned; the caller counts what is ready).
 */
static int torus_cq_sleep(struct torus_cq *cq, u32 min, u64 timeout_ns)
{
	struct torus_cq_waiter w = { .cq = cq, .min = min };
	ktime_t expires = 0;
	int ret = 0;

	if (timeout_ns != U64_MAX)
		expires = ktime_add_safe(ktime_get(), ns_to_ktime(min_t(u64, timeout_ns, KTIME_MAX)));
	init_waitqueue_func_entry(&w.wqe, torus_cq_wake);
	w.wqe.private = current;
	INIT_LIST_HEAD(&w.wqe.entry);	/* not queued yet: prepare_to_wait() adds it */
	for (;;) {
		prepare_to_wait(&cq->wq, &w.wqe, TASK_INTERRUPTIBLE);
		if (torus_cq_ready(cq) >= min)
			break;
		if (signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (timeout_ns == U64_MAX)
			schedule();
		else if (!schedule_hrtimeout(&expires, HRTIMER_MODE_ABS))
			break;	/* timed out */
	}
	finish_wait(&cq->wq, &w.wqe);
	return ret;
}

int torus_cq_wait(struct torus_node *n, struct torus_cq_wait *w)
{
	struct torus_cqe buf[TORUS_CQ_REAP_CHUNK];
	struct torus_cq *cq = &n->cq;
	u8 __user *out = u64_to_user_ptr(w->entries);
	u32 got = 0, done, k, i;
	bool fault = false;
	int ret = 0;

	if (w->entry_size < sizeof(struct torus_cqe) || w->min_entries > w->max_entries ||
	    w->min_entries > cq->depth)
		return -EINVAL;
	/* already ready (a step whose messages all completed in its POST): no sleep */
	if (w->min_entries && w->timeout_ns && torus_cq_ready(cq) < w->min_entries)
		ret = torus_cq_sleep(cq, w->min_entries, w->timeout_ns);
	/*
	 * Entries are copied out before they leave the ring, so a bad pointer
	 * loses nothing: EFAULT if the first chunk faults, else the count so far.
	 */
	mutex_lock(&cq->reap_lock);
	while (got < w->max_entries && !fault) {
		spin_lock(&cq->lock);
		k = min3(cq->count, (u32)TORUS_CQ_REAP_CHUNK, w->max_entries - got);
		for (i = 0; i < k; i++)
			buf[i] = cq->ring[(cq->head + i) % cq->depth];
		spin_unlock(&cq->lock);
		if (!k)
			break;
		for (done = 0; done < k; done++) {
			u8 __user *dst = out + (u64)(got + done) * w->entry_size;

			if (copy_to_user(dst, &buf[done], sizeof(buf[done])) ||
			    (w->entry_size > sizeof(buf[done]) &&
			     clear_user(dst + sizeof(buf[done]), w->entry_size - sizeof(buf[done])))) {
				fault = true;
				break;
			}
		}
		spin_lock(&cq->lock);
		cq->head = (cq->head + done) % cq->depth;
		cq->count -= done;
		for (i = 0; i < done; i++)
			if (buf[i].t_end_ns > n->clock_ns)
				n->clock_ns = buf[i].t_end_ns;
		spin_unlock(&cq->lock);
		got += done;
	}
	mutex_unlock(&cq->reap_lock);
	if (fault && !got)
		return -EFAULT;
	w->count = got;
	if (!ret && got < w->min_entries)
		ret = -ETIMEDOUT;
	return ret;
}

__poll_t torus_cq_poll(struct torus_node *n, struct file *file, poll_table *pt)
{
	poll_wait(file, &n->cq.wq, pt);
	return torus_cq_ready(&n->cq) ? EPOLLIN | EPOLLRDNORM : 0;
}
