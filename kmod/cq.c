// SPDX-License-Identifier: GPL-2.0
/*
 * torus: the per-node completion queue. A slot is reserved when a
 * descriptor is posted, so a completion always finds room; the wait ioctl
 * reaps entries (advancing the node's virtual clock) and poll()/epoll report
 * readiness.
 */
#include <linux/ktime.h>
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

int torus_cq_wait(struct torus_node *n, struct torus_cq_wait *w)
{
	struct torus_cqe buf[TORUS_CQ_REAP_CHUNK];
	struct torus_cq *cq = &n->cq;
	u8 __user *out = u64_to_user_ptr(w->entries);
	u32 got = 0, done, k, i;
	bool fault = false;
	long r;
	int ret = 0;

	if (w->entry_size < sizeof(struct torus_cqe) || w->min_entries > w->max_entries ||
	    w->min_entries > cq->depth)
		return -EINVAL;
	if (w->min_entries && w->timeout_ns && torus_cq_ready(cq) < w->min_entries) {
		if (w->timeout_ns == U64_MAX)
			r = wait_event_interruptible(cq->wq, torus_cq_ready(cq) >= w->min_entries);
		else
			r = wait_event_interruptible_hrtimeout(cq->wq,
				torus_cq_ready(cq) >= w->min_entries,
				ns_to_ktime(min_t(u64, w->timeout_ns, KTIME_MAX)));
		if (r == -ERESTARTSYS)
			ret = -EINTR;
	}
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
