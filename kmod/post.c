// SPDX-License-Identifier: GPL-2.0
/*
 * torus: descriptor posting. TORUS_IOC_POST validates each user descriptor
 * at the edge (flags, reserved fields, segments inside the poster's matrix
 * or inside registrations of the posting file and process, route), copies
 * it into a torus_kdesc holding a matrix reference, a hold on every
 * registration a segment names and a reserved CQ slot, and queues it
 * (queue.c). Then it rings the doorbell of the engines it fed (engine.c
 * moves the messages). Posting only queues and kicks: it never copies a
 * message or completes a descriptor itself.
 */
#include <linux/err.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "torus.h"
#include "trace.h"

static bool torus_hops_zero(const s16 *hops)
{
	int d;

	for (d = 0; d < TORUS_MAX_DIMS; d++)
		if (hops[d])
			return false;
	return true;
}

/* Check the fields of a user descriptor that need no allocation. */
static int torus_desc_check(struct torus_node *n, const struct torus_desc *ud)
{
	struct torus_fabric *f = n->fab;

	if (ud->flags & ~TORUS_DESC_ALL_FLAGS)
		return -EOPNOTSUPP;
	if (ud->__reserved || ud->__reserved2)
		return -EINVAL;
	if (!ud->nsegs || ud->nsegs > TORUS_MAX_SEGS)
		return -EINVAL;
	switch (ud->op) {
	case TORUS_OP_SEND:
		if (ud->flags & TORUS_RECV_ANY_TAG)
			return -EINVAL;
		if (ud->dst_node >= f->nodes || ud->dst_node == n->id)
			return -EINVAL;
		if (!(ud->flags & TORUS_SEND_ROUTE) && !torus_hops_zero(ud->hops))
			return -EINVAL;
		if (ud->port != TORUS_PORT_AUTO && ud->port >= f->nports)
			return -EINVAL;
		return 0;
	case TORUS_OP_RECV:
		if (ud->flags & (TORUS_SEND_ROUTE | TORUS_SEND_SYNC))
			return -EINVAL;
		if (ud->dst_node || !torus_hops_zero(ud->hops))
			return -EINVAL;
		if (ud->port >= f->nports || n->ports[ud->port].neighbor == TORUS_NO_NODE)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

/* struct torus_kseg overlays struct torus_sge: converted in place below */
static_assert(sizeof(struct torus_kseg) == sizeof(struct torus_sge));
static_assert(offsetof(struct torus_kseg, offset) == offsetof(struct torus_sge, offset));
static_assert(offsetof(struct torus_kseg, length) == offsetof(struct torus_sge, length));
static_assert(sizeof(struct torus_seg) == 16 && sizeof(struct torus_kseg) == 24);

/* Check one segment and take its hold (d->nsegs counts the ones taken). */
static int torus_seg_resolve(struct torus_file *tf, struct torus_kdesc *d, u32 key, u64 off,
			     u64 len, bool recv)
{
	struct torus_kseg *ks = &d->segs[d->nsegs];
	struct torus_mr *mr = NULL;
	u64 end, size;

	if (!len)
		return -EINVAL;
	if (key != TORUS_KEY_MATRIX) {
		mr = torus_mr_hold(tf, key);
		if (!mr)
			return -ENOENT;
		d->has_mr = true;
		d->mr_inflight = true;
	}
	ks->mr = mr;
	ks->offset = off;
	ks->length = len;
	d->nsegs++;	/* the hold is @d's now: its free drops it */
	size = mr ? mr->length : tf->node->mx->size;
	if (check_add_overflow(off, len, &end) || end > size)
		return -EINVAL;
	if (mr && recv && !mr->writable)
		return -EACCES;
	d->len += len;
	if (d->len > TORUS_MAX_MSG_BYTES)
		return -EINVAL;
	return 0;
}

/*
 * Read @ud's gather or scatter list into d->segs: struct torus_seg (matrix
 * offsets) or, with TORUS_DESC_SGE, struct torus_sge (keyed). Both are read
 * with one copy_from_user into the kseg array and converted in place: sges
 * have the ksegs' layout; 16-byte segs are read into the array's last two
 * thirds, where kseg i (bytes [24i, 24i+24)) never reaches seg j > i (from
 * byte 8n + 16j on), so each is read before it is overwritten.
 */
static int torus_segs_from_user(struct torus_file *tf, struct torus_kdesc *d,
				const struct torus_desc *ud)
{
	bool sge = ud->flags & TORUS_DESC_SGE, recv = ud->op == TORUS_OP_RECV;
	u32 n = ud->nsegs, i;
	void *raw = sge ? (void *)d->segs : (void *)d->segs + 8 * n;
	int ret;

	if (copy_from_user(raw, u64_to_user_ptr(ud->segs),
			   n * (sge ? sizeof(struct torus_sge) : sizeof(struct torus_seg))))
		return -EFAULT;
	for (i = 0; i < n; i++) {
		if (sge) {
			struct torus_sge e = ((struct torus_sge *)raw)[i];

			if (e.__reserved)
				return -EINVAL;
			ret = torus_seg_resolve(tf, d, e.key, e.offset, e.length, recv);
		} else {
			struct torus_seg e = ((struct torus_seg *)raw)[i];

			ret = torus_seg_resolve(tf, d, TORUS_KEY_MATRIX, e.offset, e.length, recv);
		}
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A kernel descriptor for checked @ud: its segments resolved, a send's route
 * and (sync) FIFO entry set. ERR_PTR on error, with nothing held.
 */
static struct torus_kdesc *torus_kdesc_build(struct torus_file *tf, const struct torus_desc *ud,
					     size_t *bytes, gfp_t gfp)
{
	struct torus_node *n = tf->node;
	struct torus_fabric *f = n->fab;
	struct torus_kdesc *d;
	bool send = ud->op == TORUS_OP_SEND;
	u32 maxh = 0;
	int ret;

	if (send)
		maxh = torus_route_max_hops(f, ud->flags & TORUS_SEND_ROUTE);
	*bytes = struct_size(d, segs, ud->nsegs) + maxh * sizeof(u32);
	d = kmalloc(*bytes, gfp);
	if (!d)
		return ERR_PTR(-ENOMEM);
	/* the error paths below free @d with torus_kdesc_free(): no holds yet */
	d->mx = NULL;
	d->nsegs = 0;
	d->len = 0;
	d->has_mr = false;
	d->mr_inflight = false;
	d->park = NULL;
	d->match = NULL;
	d->prog = NULL;
	d->prog_index = 0;
	d->wait_counter = TORUS_PROG_NO_COUNTER;
	d->wait_threshold = 0;
	d->signal_counter = TORUS_PROG_NO_COUNTER;
	ret = torus_segs_from_user(tf, d, ud);
	if (ret)
		goto err_free_desc;
	d->node = n;
	d->file = tf;
	d->clock_ns = 0;	/* a send's is set when it is queued */
	d->tag = ud->tag;
	d->user_data = ud->user_data;
	d->op = ud->op;
	d->flags = ud->flags;
	d->nhops = 0;
	d->stalled = false;
	d->delayed = false;
	d->route = (u32 *)&d->segs[ud->nsegs];
	if (!send) {
		d->dst = n->id;
		d->arrival = ud->port;
		d->port = ud->port;
		return d;
	}
	d->dst = ud->dst_node;
	ret = torus_route(f, n->id, d->dst, ud->flags & TORUS_SEND_ROUTE ? ud->hops : NULL,
			  d->route, &d->nhops, &d->arrival);
	if (ret)
		goto err_free_desc;
	d->port = d->route[0] % TORUS_MAX_PORTS;
	if (ud->port != TORUS_PORT_AUTO && ud->port != d->port) {
		ret = -EINVAL;
		goto err_free_desc;
	}
	/* its FIFO entry if it arrives first: allocated here, not under the lock */
	if (d->flags & TORUS_SEND_SYNC) {
		d->park = kzalloc(sizeof(*d->park), gfp);
		*bytes += sizeof(*d->park);
		if (!d->park) {
			ret = -ENOMEM;
			goto err_free_desc;
		}
	}
	return d;

err_free_desc:
	torus_kdesc_free(d);
	return ERR_PTR(ret);
}

/*
 * A checked kernel copy of @ud for a program (memory charged to the
 * caller's cgroup; *@bytes: its size), or an ERR_PTR.
 */
struct torus_kdesc *torus_kdesc_new(struct torus_file *tf, const struct torus_desc *ud,
				    size_t *bytes)
{
	int ret = torus_desc_check(tf->node, ud);

	if (ret)
		return ERR_PTR(ret);
	return torus_kdesc_build(tf, ud, bytes, GFP_KERNEL_ACCOUNT);
}

/*
 * A program's TORUS_OP_SIGNAL descriptor (prog.c checked it): no segments,
 * no route, never on a queue; it only carries its counters.
 */
struct torus_kdesc *torus_kdesc_signal_new(struct torus_file *tf, size_t *bytes)
{
	struct torus_kdesc *d;

	*bytes = sizeof(*d);
	d = kzalloc(*bytes, GFP_KERNEL_ACCOUNT);
	if (!d)
		return ERR_PTR(-ENOMEM);
	d->node = tf->node;
	d->file = tf;
	d->op = TORUS_OP_SIGNAL;
	d->wait_counter = TORUS_PROG_NO_COUNTER;
	d->signal_counter = TORUS_PROG_NO_COUNTER;
	return d;
}

/* Validate, copy and queue one descriptor; @kick collects engines to start. */
static int torus_post_one(struct torus_file *tf, const struct torus_desc *ud, u32 *kick)
{
	struct torus_node *n = tf->node;
	struct torus_fabric *f = n->fab;
	struct torus_kdesc *d;
	bool send = ud->op == TORUS_OP_SEND, more;
	size_t bytes;
	int ret;

	ret = torus_desc_check(n, ud);
	if (ret)
		return ret;
	d = torus_kdesc_build(tf, ud, &bytes, GFP_KERNEL);
	if (IS_ERR(d))
		return PTR_ERR(d);
	ret = torus_cq_reserve(n);
	if (ret)
		goto err_free_desc;
	d->mx = n->mx;
	torus_matrix_get(d->mx);

	spin_lock(&f->lock);
	ret = __torus_queue(n, d, &more);
	if (ret) {
		spin_unlock(&f->lock);
		goto err_unreserve;
	}
	if (more)
		*kick |= 1U << d->port;
	/* under the lock: once it is dropped an engine may complete and free @d */
	trace_torus_post(f->id, n->id, d->port, d->op, send ? d->dst : 0, d->tag, d->len);
	spin_unlock(&f->lock);
	return 0;

err_unreserve:
	torus_cq_unreserve(n);
err_free_desc:
	torus_kdesc_free(d);
	return ret;
}

int torus_post(struct torus_file *tf, struct torus_post *p)
{
	struct torus_node *n = tf->node;
	struct torus_desc ud;
	u32 kick = 0, i;
	int ret = 0;

	p->posted = 0;
	if (!p->count || p->count > TORUS_MAX_BATCH)
		return -EINVAL;
	if (p->desc_size < offsetofend(struct torus_desc, segs))
		return -EINVAL;
	if (p->desc_size > PAGE_SIZE)
		return -E2BIG;
	for (i = 0; i < p->count; i++) {
		ret = copy_struct_from_user(&ud, sizeof(ud),
					    u64_to_user_ptr(p->descs) + (u64)i * p->desc_size,
					    p->desc_size);
		if (ret)
			break;
		ret = torus_post_one(tf, &ud, &kick);
		if (ret)
			break;
		p->posted++;
	}
	torus_engine_doorbell(n, kick, true);
	return ret;
}
