// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The device transport: one node of a torus.ko fabric, /dev/torus<F>n<N>.
 *
 * open: handshake (the commands and features we need: tc_dev_check_handshake,
 * not a version number), node query (shape,
 * coordinates, neighbours), fabric query (the fabric's timing: ts, tw and
 * per-hop latency, which the algorithm choice prices with), mmap of the
 * node's buffer matrix, which is the transport buffer; with TORUS_FEAT_MR,
 * reg/dereg are TORUS_IOC_MR_REG/MR_DEREG and a transfer naming tc_sge
 * segments is posted with TORUS_DESC_SGE. post: the whole batch in one TORUS_IOC_POST, sends with
 * an explicit route (TORUS_SEND_ROUTE); a send from registered memory is synchronous
 * (TORUS_SEND_SYNC, where the module has it): arriving before its receive it waits at the
 * destination by reference rather than being copied into the receive FIFO and out, so every
 * message is copied once. TC_DEV_SYNC_MIN=N keeps sends below N bytes buffered (eager),
 * "off" all of them (how the two compare: docs/benchmarks.md, zero copy). A
 * step posts its receives with its sends and then waits for both, so a sender
 * waiting for its receiver is no deadlock. wait: TORUS_IOC_CQ_WAIT until the
 * wanted number of completions arrived; a completion with a non-zero status
 * fails the wait with that status. Every posted descriptor carries its index
 * in a table of outstanding transfers as user_data, so a timeout can say
 * which port and peer never completed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <uapi/torus.h>

#include "transport/transport.h"

_Static_assert(sizeof(struct tc_seg) == sizeof(struct torus_seg), "tc_seg must match torus_seg");
_Static_assert(offsetof(struct tc_seg, offset) == offsetof(struct torus_seg, offset), "tc_seg.offset");
_Static_assert(offsetof(struct tc_seg, length) == offsetof(struct torus_seg, length), "tc_seg.length");
_Static_assert(TC_MAX_DIMS == TORUS_MAX_DIMS, "dimension limits differ");
_Static_assert(sizeof(struct tc_sge) == sizeof(struct torus_sge), "tc_sge must match torus_sge");
_Static_assert(offsetof(struct tc_sge, key) == offsetof(struct torus_sge, key), "tc_sge.key");
_Static_assert(offsetof(struct tc_sge, offset) == offsetof(struct torus_sge, offset), "tc_sge.offset");
_Static_assert(offsetof(struct tc_sge, length) == offsetof(struct torus_sge, length), "tc_sge.length");
_Static_assert(TC_KEY_BUFFER == TORUS_KEY_MATRIX, "the buffer's key");

#define TC_DEV_MR_IOCTLS ((1ull << (TORUS_CMD_MR_REG - TORUS_CMD_BASE)) | (1ull << (TORUS_CMD_MR_DEREG - TORUS_CMD_BASE)))

struct tc_dev_out {
	uint8_t op, port, done;
	uint8_t refused; /* a send the destination refused at least once */
	int32_t peer;
	uint64_t tag;
	struct torus_desc desc; /* as posted, to post a refused send again */
};

struct tc_dev {
	int fd;
	void *matrix;
	size_t matrix_bytes;
	uint32_t max_segs, max_batch;
	uint64_t sync_min; /* registered-memory sends of at least this many bytes are TORUS_SEND_SYNC */
	struct torus_desc *descs; /* max_batch */
	struct torus_cqe *cqes;	  /* cap */
	struct tc_dev_out *out;	  /* outstanding transfers, indexed by user_data */
	uint32_t cap, nout, ndone, nreaped;
	/* Programs (TORUS_FEAT_PROGRAM): the module's limits, and scratch
	 * kept between calls (grown to the largest program). */
	int prog_signal; /* TORUS_FEAT_PROG_SIGNAL: a transfer may wait for several */
	int prog_queue_only; /* TORUS_FEAT_PROG_QUEUE_ONLY: a post may leave the engines to the module */
	uint32_t max_prog_descs, max_prog_counters, max_prog_fanout;
	uint64_t max_prog_timeout_ns;
	uint32_t *ctr;			/* xcap: per transfer, the counter it signals, or none */
	uint32_t xcap;
};

static struct tc_dev *to_dev(struct tc_tp *tp)
{
	return tp->priv;
}

static int tc_dev_grow(struct tc_dev *dev, uint32_t need)
{
	uint32_t ccap = dev->cap, ocap = dev->cap;

	/* Completions and their sends grow together; cap is the smaller. */
	if (tc_grow((void **)&dev->cqes, &ccap, need, sizeof(*dev->cqes), 64) ||
	    tc_grow((void **)&dev->out, &ocap, need, sizeof(*dev->out), 64))
		return -ENOMEM;
	dev->cap = ccap < ocap ? ccap : ocap;
	return 0;
}

/*
 * The fabric's own timing in the cost model's units. A module that cannot
 * answer the fabric query on a node device leaves the defaults (its own
 * defaults, the ones the library knows).
 */
static void tc_dev_timing(int fd, const struct torus_handshake *hs, struct tc_cost_params *p)
{
	struct torus_fabric_query fq = { .size = sizeof(fq) };

	tc_cost_params_default(p);
	p->flags = TC_COST_SENDER_START; /* the driver starts a message at its sender's clock */
	if (!(hs->ioctls & (1ull << (TORUS_CMD_FABRIC_QUERY - TORUS_CMD_BASE))) ||
	    ioctl(fd, TORUS_IOC_FABRIC_QUERY, &fq) < 0)
		return;
	p->ts_us = fq.ts_ns / 1e3;
	p->tw_us_per_byte = fq.tw_ps / 1e6;
	p->hop_us = fq.hop_ns / 1e3;
	p->rho_us_per_byte = 0; /* the device charges no time for local copies */
}

static void tc_dev_limits(struct tc_dev *dev, struct tc_tp *tp, const struct torus_handshake *hs)
{
	dev->max_segs = hs->max_segs ? hs->max_segs : 1;
	dev->max_batch = hs->max_batch ? hs->max_batch : 1;
	tp->max_segs = dev->max_segs;
	/* an older module without registration: every call stages through the matrix */
	if ((hs->features & TORUS_FEAT_MR) && (hs->ioctls & TC_DEV_MR_IOCTLS) == TC_DEV_MR_IOCTLS)
		tp->max_reg_bytes = hs->max_mr_bytes;
}

/*
 * Programs: used when the module has TORUS_FEAT_PROGRAM and PROG_POST,
 * unless TC_DEV_OFFLOAD=off or tc_comm_attr.offload says TC_OFFLOAD_OFF
 * (then every collective runs step by step, as on an older module).
 */
static int tc_dev_offload_init(struct tc_dev *dev, struct tc_tp *tp, const struct torus_handshake *hs,
			       const struct tc_comm_attr *attr)
{
	const char *v = getenv("TC_DEV_OFFLOAD");
	int want = 1;

	if (v && *v) {
		if (!strcmp(v, "off") || !strcmp(v, "0"))
			want = 0;
		else if (strcmp(v, "on") && strcmp(v, "1") && strcmp(v, "auto"))
			return tc_err(-EINVAL, "TC_DEV_OFFLOAD=%s: expected on, off or auto", v);
	}
	if (attr->size >= offsetofend(struct tc_comm_attr, offload) && attr->offload == TC_OFFLOAD_OFF)
		want = 0;
	if (!(hs->features & TORUS_FEAT_PROGRAM) || !(hs->ioctls & (1ull << (TORUS_CMD_PROG_POST - TORUS_CMD_BASE))) ||
	    hs->size < offsetofend(struct torus_handshake, max_prog_timeout_ns) || !hs->max_prog_descs)
		want = 0;
	tp->offload = want;
	tp->prog_links = 1;
	dev->prog_signal = !!(hs->features & TORUS_FEAT_PROG_SIGNAL);
	dev->prog_queue_only = !!(hs->features & TORUS_FEAT_PROG_QUEUE_ONLY);
	dev->max_prog_descs = hs->max_prog_descs;
	dev->max_prog_counters = hs->max_prog_counters;
	dev->max_prog_fanout = hs->max_prog_fanout;
	dev->max_prog_timeout_ns = hs->max_prog_timeout_ns;
	return 0;
}

#define TC_DEV_SYNC_MIN_DEFAULT 0

/*
 * TC_DEV_SYNC_MIN: registered-memory sends of at least this many bytes are
 * synchronous, "off" none (nor any without TORUS_FEAT_SEND_SYNC).
 */
static int tc_dev_sync_env(struct tc_dev *dev, const struct torus_handshake *hs)
{
	const char *v = getenv("TC_DEV_SYNC_MIN");
	unsigned int u = TC_DEV_SYNC_MIN_DEFAULT;
	int off = v && !strcmp(v, "off");

	if (v && *v && !off && tc_parse_uint("TC_DEV_SYNC_MIN", v, &u))
		return -EINVAL;
	dev->sync_min = off || !(hs->features & TORUS_FEAT_SEND_SYNC) ? UINT64_MAX : u;
	return 0;
}

/* The flags of a send or receive from registered memory. */
static uint32_t tc_dev_sge_flags(const struct tc_dev *dev, const struct tc_xfer *xf)
{
	uint64_t len = 0;

	if (xf->op != TC_XFER_SEND || dev->sync_min == UINT64_MAX)
		return TORUS_DESC_SGE;
	for (unsigned int k = 0; k < xf->nsegs; k++)
		len += xf->sges[k].length;
	return TORUS_DESC_SGE | (len >= dev->sync_min ? TORUS_SEND_SYNC : 0);
}

/*
 * What the library needs of the module, from its handshake: the features
 * and commands it uses, not an ABI version number. The ABI grows by size
 * (structs carry their size) and by new commands and feature bits, so a
 * newer module (a higher abi_version, more features and commands) serves
 * this library as its own version did; only a version below the first, or
 * a missing command or feature, is refused. Optional ones (registration,
 * synchronous sends, the fabric query) are looked up where they are used.
 */
static const struct {
	uint64_t bit;
	const char *what;
} tc_dev_needs[] = {
	{ 1ull << (TORUS_CMD_NODE_QUERY - TORUS_CMD_BASE), "TORUS_IOC_NODE_QUERY" },
	{ 1ull << (TORUS_CMD_POST - TORUS_CMD_BASE), "TORUS_IOC_POST" },
	{ 1ull << (TORUS_CMD_CQ_WAIT - TORUS_CMD_BASE), "TORUS_IOC_CQ_WAIT" },
	{ 0, "TORUS_FEAT_ROUTE (explicit routes)" },
};

int tc_dev_check_handshake(const struct torus_handshake *hs, const char *path)
{
	char missing[160] = "";
	size_t len = 0;

	if (hs->abi_version < 1)
		return tc_err(-EPROTO, "transport dev: %s reports ABI version %u (the first is 1)", path,
			      hs->abi_version);
	for (size_t i = 0; i < sizeof(tc_dev_needs) / sizeof(tc_dev_needs[0]); i++) {
		int have = tc_dev_needs[i].bit ? !!(hs->ioctls & tc_dev_needs[i].bit)
					       : !!(hs->features & TORUS_FEAT_ROUTE);

		if (!have && len < sizeof(missing))
			len += snprintf(missing + len, sizeof(missing) - len, "%s%s", len ? ", " : "",
					tc_dev_needs[i].what);
	}
	if (len)
		return tc_err(-EOPNOTSUPP, "transport dev: %s (ABI version %u) lacks %s, which this library needs", path,
			      hs->abi_version, missing);
	return 0;
}

static int tc_dev_open(struct tc_tp *tp, const struct tc_comm_attr *attr)
{
	struct torus_handshake hs = { .size = sizeof(hs) };
	struct torus_node_query q = { .size = sizeof(q) };
	char path[64];
	struct tc_dev *dev;
	int dims[TC_MAX_DIMS];
	int ret;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return tc_err(-ENOMEM, "transport dev: out of memory");
	snprintf(path, sizeof(path), "/dev/" TORUS_NODE_FMT, attr->fabric_id, attr->node);
	dev->fd = open(path, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0) {
		ret = -errno;
		tc_err(ret, "transport dev: open %s: %s%s", path, tc_strerror(ret),
		       ret == -ENOENT ? " (is torus.ko loaded and the fabric created?)" : "");
		goto err_free;
	}
	if (ioctl(dev->fd, TORUS_IOC_HANDSHAKE, &hs) < 0) {
		ret = -errno;
		tc_err(ret, "transport dev: %s: handshake failed: %s", path, tc_strerror(ret));
		goto err_close;
	}
	ret = tc_dev_check_handshake(&hs, path);
	if (ret)
		goto err_close;
	tc_dev_limits(dev, tp, &hs);
	ret = tc_dev_sync_env(dev, &hs);
	if (!ret)
		ret = tc_dev_offload_init(dev, tp, &hs, attr);
	if (ret)
		goto err_close;
	if (ioctl(dev->fd, TORUS_IOC_NODE_QUERY, &q) < 0) {
		ret = -errno;
		tc_err(ret, "transport dev: %s: node query failed: %s", path, tc_strerror(ret));
		goto err_close;
	}
	if (q.ndims < 1 || q.ndims > TC_MAX_DIMS) {
		ret = tc_err(-EPROTO, "transport dev: %s reports %u dimensions", path, q.ndims);
		goto err_close;
	}
	for (unsigned int d = 0; d < q.ndims; d++)
		dims[d] = q.dims[d];
	ret = tc_shape_init(&tp->shape, q.ndims, dims, q.wrap_mask, !!(q.fabric_flags & TORUS_FABRIC_ONE_PORT));
	if (ret) {
		tc_err(ret, "transport dev: %s reports a shape the library rejects", path);
		goto err_close;
	}
	tp->rank = q.node_id;
	tc_dev_timing(dev->fd, &hs, &tp->cost);
	dev->matrix_bytes = q.matrix_bytes;
	dev->matrix = mmap(NULL, dev->matrix_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd, 0);
	if (dev->matrix == MAP_FAILED) {
		ret = -errno;
		tc_err(ret, "transport dev: %s: mmap of %zu bytes: %s", path, dev->matrix_bytes, tc_strerror(ret));
		goto err_close;
	}
	dev->descs = calloc(dev->max_batch, sizeof(*dev->descs));
	if (!dev->descs || tc_dev_grow(dev, 256)) {
		ret = tc_err(-ENOMEM, "transport dev: out of memory");
		goto err_unmap;
	}
	tp->priv = dev;
	return 0;

err_unmap:
	munmap(dev->matrix, dev->matrix_bytes);
	free(dev->descs);
	free(dev->cqes);
	free(dev->out);
err_close:
	close(dev->fd);
err_free:
	free(dev);
	return ret;
}

static void tc_dev_close(struct tc_tp *tp)
{
	struct tc_dev *dev = to_dev(tp);

	munmap(dev->matrix, dev->matrix_bytes);
	close(dev->fd);
	free(dev->descs);
	free(dev->cqes);
	free(dev->out);
	free(dev->ctr);
	free(dev);
}

static int tc_dev_buffer(struct tc_tp *tp, size_t bytes, void **base)
{
	struct tc_dev *dev = to_dev(tp);

	if (bytes > dev->matrix_bytes)
		return tc_err(-ENOSPC, "transport dev: needs %zu bytes of buffer matrix, node has %zu", bytes,
			      dev->matrix_bytes);
	*base = dev->matrix;
	return 0;
}

/* The descriptor of transfer xf. */
static void tc_dev_desc(const struct tc_dev *dev, const struct tc_xfer *xf, struct torus_desc *d, uint64_t user_data)
{
	memset(d, 0, sizeof(*d));
	d->op = xf->op == TC_XFER_SEND ? TORUS_OP_SEND : TORUS_OP_RECV;
	d->port = xf->port;
	d->nsegs = xf->nsegs;
	d->tag = xf->tag;
	d->user_data = user_data;
	d->segs = (uintptr_t)xf->segs;
	if (xf->sges) {
		d->flags = tc_dev_sge_flags(dev, xf);
		d->segs = (uintptr_t)xf->sges;
	}
	if (xf->op == TC_XFER_SEND) {
		d->flags |= TORUS_SEND_ROUTE;
		d->dst_node = xf->peer;
		for (int k = 0; k < TC_MAX_DIMS; k++)
			d->hops[k] = xf->route[k];
	}
	/* recv: the source is implied by (port, tag); dst_node must be 0 */
}

static int tc_dev_post(struct tc_tp *tp, const struct tc_xfer *x, unsigned int n)
{
	struct tc_dev *dev = to_dev(tp);
	unsigned int done = 0;

	if (tc_dev_grow(dev, dev->nout + n))
		return tc_err(-ENOMEM, "transport dev: out of memory posting %u transfers", n);
	while (done < n) {
		unsigned int batch = n - done < dev->max_batch ? n - done : dev->max_batch;
		struct torus_post post = {
			.size = sizeof(post),
			.count = batch,
			.desc_size = sizeof(struct torus_desc),
			.descs = (uintptr_t)dev->descs,
		};

		for (unsigned int i = 0; i < batch; i++) {
			const struct tc_xfer *xf = &x[done + i];
			struct torus_desc *d = &dev->descs[i];
			struct tc_dev_out *o = &dev->out[dev->nout + i];

			if (xf->nsegs > dev->max_segs)
				return tc_err(-E2BIG, "transport dev: a message to node %d has %u segments, device takes %u",
					      xf->peer, xf->nsegs, dev->max_segs);
			tc_dev_desc(dev, xf, d, dev->nout + i);
			*o = (struct tc_dev_out){ .op = xf->op, .port = xf->port, .peer = xf->peer, .tag = xf->tag, .desc = *d };
		}
		tp->n_posts++;
		if (ioctl(dev->fd, TORUS_IOC_POST, &post) < 0) {
			int ret = -errno;

			dev->nout += post.posted;
			return tc_err(ret, "transport dev: post of %u descriptors stopped after %u: %s", batch, post.posted,
				      tc_strerror(ret));
		}
		dev->nout += batch;
		done += batch;
	}
	return 0;
}

/*
 * The driver refuses (-ECONNREFUSED) a send to a node whose previous session
 * ended and that nobody has opened again: a peer that died, or, when a fabric
 * is used by one run after another, a peer of this run that has not opened
 * its node yet. Sending again during the first half of the step's time covers
 * the second case; after that the refusal fails the step naming that peer,
 * so a dead peer is reported well within the timeout.
 */
static int tc_dev_resend(struct tc_dev *dev, uint64_t idx)
{
	struct torus_post post = {
		.size = sizeof(post),
		.count = 1,
		.desc_size = sizeof(struct torus_desc),
		.descs = (uintptr_t)&dev->out[idx].desc,
	};

	dev->out[idx].refused = 1;
	if (ioctl(dev->fd, TORUS_IOC_POST, &post) < 0)
		return tc_err(-errno, "transport dev: posting a refused send to node %d again: %s", dev->out[idx].peer,
			      tc_strerror(-errno));
	return 0;
}

static void tc_dev_fill_err(struct tc_wait_err *err, int status, int port, int peer, uint64_t tag)
{
	err->status = status;
	err->port = port;
	err->peer = peer;
	err->tag = tag;
}

/* The transfer a timed-out step was waiting for: a refused send first (its
 * destination is the node missing), else the first one not done. */
static const struct tc_dev_out *tc_dev_pending(const struct tc_dev *dev)
{
	const struct tc_dev_out *first = NULL;

	for (uint32_t i = 0; i < dev->nout; i++) {
		if (dev->out[i].done)
			continue;
		if (dev->out[i].refused)
			return &dev->out[i];
		if (!first)
			first = &dev->out[i];
	}
	return first;
}

static int tc_dev_wait(struct tc_tp *tp, unsigned int n, int timeout_ms, struct tc_wait_err *err)
{
	struct tc_dev *dev = to_dev(tp);
	struct timespec end;
	unsigned int got = 0;
	int ret = 0;

	tc_deadline(&end, timeout_ms);
	while (got < n) {
		struct torus_cq_wait w = {
			.size = sizeof(w),
			.min_entries = n - got,
			.max_entries = n - got,
			.entries = (uintptr_t)dev->cqes,
			.entry_size = sizeof(struct torus_cqe),
		};
		unsigned int resent = 0;
		int64_t left;

		left = tc_ns_left(&end);
		w.timeout_ns = left > 0 ? (uint64_t)left : 1;
		tp->n_waits++;
		if (ioctl(dev->fd, TORUS_IOC_CQ_WAIT, &w) < 0)
			ret = -errno;
		if (w.count > n - got)
			w.count = n - got;
		for (uint32_t i = 0; i < w.count; i++) {
			const struct torus_cqe *c = &dev->cqes[i];

			/* send a refused message again during the first half of the step's time */
			if (c->status == -ECONNREFUSED && c->op == TORUS_OP_SEND && c->user_data < dev->nout &&
			    left > (int64_t)timeout_ms * 500000LL && !err->status) {
				int r;

				if (!resent)
					usleep(1000);
				r = tc_dev_resend(dev, c->user_data);
				if (!r) {
					resent++;
					continue;
				}
				if (!ret)
					ret = r;
			}
			if (c->user_data < dev->nout)
				dev->out[c->user_data].done = 1;
			if ((c->flags & TORUS_CQE_OVERFLOW) && !err->status)
				tc_dev_fill_err(err, -EOVERFLOW, c->port, c->peer, c->tag);
			if (c->status && (!err->status || err->status == -EOVERFLOW))
				tc_dev_fill_err(err, c->status, c->port, c->peer, c->tag);
		}
		got += w.count - resent;
		/* A failed transfer fails the step now: its partners may never complete. */
		if (err->status && !ret)
			break;
		if (ret == -EINTR) {
			ret = 0;
			continue;
		}
		if (ret == -ETIMEDOUT || (!ret && got < n && left <= 0)) {
			const struct tc_dev_out *o = tc_dev_pending(dev);

			if (o)
				tc_dev_fill_err(err, -ETIMEDOUT, o->port, o->peer, o->tag);
			else
				err->status = -ETIMEDOUT;
			ret = -ETIMEDOUT;
			break;
		}
		if (ret) {
			tc_err(ret, "transport dev: completion wait: %s", tc_strerror(ret));
			break;
		}
	}
	dev->ndone += got;
	if (dev->ndone >= dev->nout)
		dev->nout = dev->ndone = 0;
	if (ret)
		return ret;
	return err->status;
}

static int tc_dev_reg(struct tc_tp *tp, const void *addr, size_t len, int write, uint32_t *key)
{
	struct torus_mr_reg r = {
		.size = sizeof(r),
		.flags = write ? TORUS_MR_WRITE : 0,
		.addr = (uintptr_t)addr,
		.length = len,
	};

	int ret;

	tp->n_regs++;
	ret = ioctl(to_dev(tp)->fd, TORUS_IOC_MR_REG, &r) < 0 ? -errno : 0;

	if (ret)
		return tc_err(ret, "transport dev: registering %zu bytes at %p%s: %s", len, addr,
			      write ? " for receives" : "", tc_strerror(ret));
	*key = r.key;
	return 0;
}

static int tc_dev_dereg(struct tc_tp *tp, uint32_t key)
{
	struct torus_mr_dereg r = { .size = sizeof(r), .key = key };
	int ret;

	tp->n_regs++;
	ret = ioctl(to_dev(tp)->fd, TORUS_IOC_MR_DEREG, &r) < 0 ? -errno : 0;

	if (ret)
		return tc_err(ret, "transport dev: deregistering key %u: %s", key, tc_strerror(ret));
	return 0;
}

/*
 * A plan as one program. Every transfer that another waits for signals a
 * counter of its own; a transfer that waits for one other waits on that
 * counter (threshold 1); one that waits for several gets a counter of its
 * own, which one TORUS_OP_SIGNAL per member feeds, and waits for all of
 * them (threshold = their number). Nothing but these dependencies orders
 * the transfers: no step barrier. The kernel checks the program whole, so
 * a refusal (a limit) posted nothing. Built once per plan into *b (its
 * own arrays, sized to the program): later calls post it unchanged.
 */
static int tc_dev_prog_build(struct tc_dev *dev, const struct tc_prog *pg, struct tc_prog_built *b)
{
	uint32_t nd = 0, nc = 0, need = pg->n, xcap = dev->xcap;
	struct torus_prog_desc *pdescs;

	for (unsigned int i = 0; i < pg->n; i++) {
		uint32_t nk = pg->dep_first[i + 1] - pg->dep_first[i];

		if (nk > 1) {
			if (!dev->prog_signal)
				return tc_err(-EOPNOTSUPP, "transport dev: a transfer waits for %u others and the module "
					      "has no TORUS_FEAT_PROG_SIGNAL", nk);
			need += nk;
		}
	}
	if (need > dev->max_prog_descs)
		return tc_err(-E2BIG, "transport dev: the program needs %u descriptors, the module takes %u", need,
			      dev->max_prog_descs);
	if (tc_grow((void **)&dev->ctr, &xcap, pg->n, sizeof(*dev->ctr), 64))
		return tc_err(-ENOMEM, "transport dev: out of memory for a program of %u descriptors", need);
	dev->xcap = xcap;
	b->descs = pdescs = calloc(need, sizeof(*pdescs));
	b->map = malloc(need * sizeof(*b->map));
	if (!b->descs || !b->map)
		return tc_err(-ENOMEM, "transport dev: out of memory for a program of %u descriptors", need);
	/* ctr[j]: first the number of transfers waiting for j, then j's counter */
	memset(dev->ctr, 0, pg->n * sizeof(*dev->ctr));
	for (unsigned int i = 0; i < pg->n; i++)
		for (uint32_t k = pg->dep_first[i]; k < pg->dep_first[i + 1]; k++)
			if (++dev->ctr[pg->deps[k]] > dev->max_prog_fanout)
				return tc_err(-E2BIG, "transport dev: more than %u transfers wait for one",
					      dev->max_prog_fanout);
	for (unsigned int j = 0; j < pg->n; j++)
		dev->ctr[j] = dev->ctr[j] ? nc++ : TORUS_PROG_NO_COUNTER;
	for (unsigned int i = 0; i < pg->n; i++) {
		uint32_t k0 = pg->dep_first[i], nk = pg->dep_first[i + 1] - k0, own = TORUS_PROG_NO_COUNTER;
		struct torus_prog_desc *pd;

		if (nk > 1) {
			own = nc++;
			for (uint32_t k = 0; k < nk; k++) {
				pd = &pdescs[nd];
				pd->desc.op = TORUS_OP_SIGNAL;
				pd->wait_counter = dev->ctr[pg->deps[k0 + k]];
				pd->wait_threshold = 1;
				pd->signal_counter = own;
				b->map[nd++] = i;
			}
		}
		pd = &pdescs[nd];
		tc_dev_desc(dev, &pg->x[i], &pd->desc, i);
		pd->__reserved = 0;
		pd->wait_counter = nk > 1 ? own : nk ? dev->ctr[pg->deps[k0]] : TORUS_PROG_NO_COUNTER;
		pd->wait_threshold = nk;
		pd->signal_counter = dev->ctr[i];
		b->map[nd++] = i;
	}
	if (nc > dev->max_prog_counters)
		return tc_err(-E2BIG, "transport dev: the program needs %u counters, the module takes %u", nc,
			      dev->max_prog_counters);
	b->count = nd;
	b->ncounters = nc;
	return 0;
}

/* The program of pg: the one kept in *pg->built, else built there now. */
static int tc_dev_prog_get(struct tc_dev *dev, const struct tc_prog *pg, const struct tc_prog_built **out)
{
	struct tc_prog_built *b = *pg->built;
	int ret;

	if (b && b->x == pg->x) {
		*out = b;
		if (b->err)
			return tc_err(b->err, "transport dev: the plan's program was refused at its first call");
		return 0;
	}
	if (b) {
		free(b->descs);
		free(b->map);
	} else {
		b = malloc(sizeof(*b));
		if (!b)
			return tc_err(-ENOMEM, "transport dev: out of memory for a program");
		*pg->built = b;
	}
	memset(b, 0, sizeof(*b));
	b->x = pg->x;
	ret = tc_dev_prog_build(dev, pg, b);
	if (ret) {
		free(b->descs);
		free(b->map);
		b->descs = NULL;
		b->map = NULL;
		/* out of memory may pass; a limit of the module does not */
		b->err = ret == -ENOMEM ? 0 : ret;
		if (!b->err)
			b->x = NULL;
		return ret;
	}
	*out = b;
	return 0;
}

static void tc_dev_prog_err(struct tc_wait_err *err, const struct tc_prog *pg, int status, uint32_t xfer)
{
	if (xfer < pg->n) {
		const struct tc_xfer *x = &pg->x[xfer];

		tc_dev_fill_err(err, status, x->port, x->peer, x->tag);
		err->xfer = (int)xfer;
	} else {
		err->status = status;
	}
}

static int tc_dev_prog(struct tc_tp *tp, const struct tc_prog *pg, int timeout_ms, struct tc_wait_err *err,
		       int *posted)
{
	struct tc_dev *dev = to_dev(tp);
	struct torus_prog_post pp = { .size = sizeof(pp), .desc_size = sizeof(struct torus_prog_desc) };
	const struct tc_prog_built *b = NULL;
	uint64_t tmo = timeout_ms > 0 ? (uint64_t)timeout_ms * 1000000ull : 0;
	struct timespec end;
	int ret;

	*posted = 0;
	err->xfer = -1;
	if (!pg->n)
		return 0;
	if (tc_dev_grow(dev, 64))
		return tc_err(-ENOMEM, "transport dev: out of memory");
	ret = tc_dev_prog_get(dev, pg, &b);
	if (ret)
		return ret;
	pp.count = b->count;
	pp.ncounters = b->ncounters;
	pp.descs = (uintptr_t)b->descs;
	pp.timeout_ns = tmo < dev->max_prog_timeout_ns ? tmo : dev->max_prog_timeout_ns;
	/* a detached call (tc_i*): the module's work items run the engines,
	 * and this thread goes to its completion wait at once */
	if (tp->detached && dev->prog_queue_only)
		pp.flags = TORUS_PROG_QUEUE_ONLY;
	tp->n_posts++;
	if (ioctl(dev->fd, TORUS_IOC_PROG_POST, &pp) < 0) {
		ret = -errno;
		if (pp.error_index < pp.count)
			return tc_err(ret, "transport dev: program of %u descriptors refused at %u (transfer %u): %s",
				      pp.count, pp.error_index, b->map[pp.error_index], tc_strerror(ret));
		return tc_err(ret, "transport dev: program of %u descriptors refused: %s", pp.count, tc_strerror(ret));
	}
	*posted = 1;
	/*
	 * The module ends the program at its timeout with a completion naming the
	 * transfer it waited for; wait longer than the timeout for it: 2 s, or half
	 * the timeout when that is more (so a call still fails within 1.5x the
	 * timeout). Under load that completion came later than 2 s: a 64-rank fault
	 * run under TCG (20 s timeout) had 9 of 63 survivors give up on their own
	 * deadline first, with an error naming no step, port or peer.
	 */
	memset(&end, 0, sizeof(end));
	if (timeout_ms > 0)
		tc_deadline(&end, timeout_ms + (timeout_ms / 2 > 2000 ? timeout_ms / 2 : 2000));
	for (;;) {
		struct torus_cq_wait w = {
			.size = sizeof(w),
			.min_entries = 1,
			.max_entries = dev->cap,
			.entries = (uintptr_t)dev->cqes,
			.entry_size = sizeof(struct torus_cqe),
		};
		int64_t left = timeout_ms > 0 ? tc_ns_left(&end) : -1;

		w.timeout_ns = timeout_ms > 0 ? (left > 0 ? (uint64_t)left : 1) : ~0ull;
		tp->n_waits++;
		ret = ioctl(dev->fd, TORUS_IOC_CQ_WAIT, &w) < 0 ? -errno : 0;
		for (uint32_t i = 0; i < w.count && i < dev->cap; i++) {
			const struct torus_cqe *c = &dev->cqes[i];

			if (c->op != TORUS_OP_PROG) {
				/* a failed descriptor of the program: the first names the failure */
				if (c->status && !err->status)
					tc_dev_prog_err(err, pg, c->status, (uint32_t)c->user_data);
				continue;
			}
			if (!c->status)
				return 0;
			if (!err->status || c->status == -ETIMEDOUT || c->status == -ECANCELED)
				tc_dev_prog_err(err, pg, c->status, c->peer < pp.count ? b->map[c->peer] : UINT32_MAX);
			return c->status;
		}
		if (ret == -EINTR)
			continue;
		if (ret == -ETIMEDOUT || (timeout_ms > 0 && left <= 0)) {
			err->status = -ETIMEDOUT;
			return -ETIMEDOUT;
		}
		if (ret)
			return tc_err(ret, "transport dev: completion wait: %s", tc_strerror(ret));
	}
}

const struct tc_transport_ops tc_transport_dev = {
	.name = "dev",
	.open = tc_dev_open,
	.close = tc_dev_close,
	.buffer = tc_dev_buffer,
	.post = tc_dev_post,
	.wait = tc_dev_wait,
	.reg = tc_dev_reg,
	.dereg = tc_dev_dereg,
	.prog = tc_dev_prog,
};
