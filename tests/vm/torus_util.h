/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the guest tests of torus.ko (tests/vm/test_*.c) and the
 * device benchmark: open the control device, create a fabric and open, map
 * and query every node, build and post descriptors, reap completions,
 * compute the dimension-ordered route the ABI header describes, and fill and
 * check payload bytes. Written against include/uapi/torus.h only.
 * Every function returns 0 (or a count) on success and a negative errno.
 */
#ifndef TV_UTIL_H
#define TV_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <uapi/torus.h>

#define TV_CTL_PATH "/dev/" TORUS_CTL_NAME
#define TV_WAIT_NS (20ULL * 1000 * 1000 * 1000) /* 20 s: TCG guests are slow */

struct tv_fabric {
	int ctl;
	__u32 id;
	__u32 nodes;
	__u32 ndims;
	__u32 wrap;
	__u32 flags;
	__u32 dims[TORUS_MAX_DIMS];
	__u64 matrix_bytes;
	size_t map_len;
	int *fd;
	unsigned char **map;
	struct torus_node_query *q;
};

static inline int tv_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int tv_ctl_open(void)
{
	int fd = open(TV_CTL_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static inline void tv_node_path(char *buf, size_t len, __u32 fabric, __u32 node)
{
	char name[64];

	snprintf(name, sizeof(name), TORUS_NODE_FMT, fabric, node);
	snprintf(buf, len, "/dev/%s", name);
}

/* Open a node device; devtmpfs may need a moment after the fabric appears. */
static inline int tv_node_open(__u32 fabric, __u32 node)
{
	char path[96];
	int i, fd = -1;

	tv_node_path(path, sizeof(path), fabric, node);
	for (i = 0; i < 200; i++) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT)
			break;
		usleep(10000);
	}
	return fd < 0 ? -errno : fd;
}

static inline void tv_create_args(struct torus_fabric_create *c, __u32 ndims, const __u32 *dims,
				  __u32 wrap, __u32 flags)
{
	__u32 d;

	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->flags = flags;
	c->ndims = ndims;
	c->wrap_mask = wrap;
	for (d = 0; d < ndims && d < TORUS_MAX_DIMS; d++)
		c->dims[d] = dims[d];
}

static inline int tv_destroy(int ctl, __u32 id)
{
	struct torus_fabric_destroy x = { .size = sizeof(x), .fabric_id = id };

	return tv_ioctl(ctl, TORUS_IOC_FABRIC_DESTROY, &x);
}

static inline void tv_fabric_close_nodes(struct tv_fabric *f)
{
	__u32 n;

	for (n = 0; f->fd && n < f->nodes; n++) {
		if (f->map && f->map[n] && f->map[n] != MAP_FAILED)
			munmap(f->map[n], f->map_len);
		if (f->fd[n] >= 0)
			close(f->fd[n]);
		f->fd[n] = -1;
		if (f->map)
			f->map[n] = NULL;
	}
}

static inline void tv_fabric_free(struct tv_fabric *f)
{
	if (!f->fd)
		return;
	tv_fabric_close_nodes(f);
	tv_destroy(f->ctl, f->id);
	free(f->fd);
	free(f->map);
	free(f->q);
	f->fd = NULL;
	f->map = NULL;
	f->q = NULL;
}

/* Create a fabric from @c (filled by the caller), open, map and query every node. */
static inline int tv_fabric_new(struct tv_fabric *f, int ctl, struct torus_fabric_create *c)
{
	long page = sysconf(_SC_PAGESIZE);
	__u32 n;
	int ret;

	memset(f, 0, sizeof(*f));
	f->ctl = ctl;
	ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_CREATE, c);
	if (ret)
		return ret;
	f->id = c->fabric_id;
	f->nodes = c->nodes;
	f->ndims = c->ndims;
	f->wrap = c->wrap_mask;
	f->flags = c->flags;
	memcpy(f->dims, c->dims, sizeof(f->dims));
	f->fd = calloc(f->nodes, sizeof(*f->fd));
	f->map = calloc(f->nodes, sizeof(*f->map));
	f->q = calloc(f->nodes, sizeof(*f->q));
	if (!f->fd || !f->map || !f->q) {
		ret = -ENOMEM;
		goto err;
	}
	for (n = 0; n < f->nodes; n++)
		f->fd[n] = -1;
	for (n = 0; n < f->nodes; n++) {
		f->fd[n] = tv_node_open(f->id, n);
		if (f->fd[n] < 0) {
			ret = f->fd[n];
			goto err;
		}
		f->q[n].size = sizeof(f->q[n]);
		ret = tv_ioctl(f->fd[n], TORUS_IOC_NODE_QUERY, &f->q[n]);
		if (ret)
			goto err;
		f->matrix_bytes = f->q[n].matrix_bytes;
		f->map_len = (f->matrix_bytes + page - 1) / page * page;
		f->map[n] = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd[n], 0);
		if (f->map[n] == MAP_FAILED) {
			ret = -errno;
			f->map[n] = NULL;
			goto err;
		}
	}
	return 0;
err:
	tv_fabric_free(f);
	tv_destroy(ctl, c->fabric_id);
	return ret;
}

static inline __u32 tv_coord(const struct tv_fabric *f, __u32 node, __u32 d)
{
	__u32 stride = 1, k;

	for (k = f->ndims - 1; k > d; k--)
		stride *= f->dims[k];
	return node / stride % f->dims[d];
}

static inline __u32 tv_node_at(const struct tv_fabric *f, const __u32 *coord)
{
	__u32 node = 0, d;

	for (d = 0; d < f->ndims; d++)
		node = node * f->dims[d] + coord[d];
	return node;
}

/* The node behind @port of @node, or TORUS_NO_NODE off a mesh edge. */
static inline __u32 tv_neighbor(const struct tv_fabric *f, __u32 node, __u32 port)
{
	__u32 c[TORUS_MAX_DIMS] = { 0 }, d = port / 2, k;
	int dir = (port & 1) ? -1 : 1;

	for (k = 0; k < f->ndims; k++)
		c[k] = tv_coord(f, node, k);
	if (dir > 0 && c[d] == f->dims[d] - 1) {
		if (!(f->wrap & (1U << d)))
			return TORUS_NO_NODE;
		c[d] = 0;
	} else if (dir < 0 && c[d] == 0) {
		if (!(f->wrap & (1U << d)))
			return TORUS_NO_NODE;
		c[d] = f->dims[d] - 1;
	} else {
		c[d] += dir;
	}
	return tv_node_at(f, c);
}

/*
 * The default route of the ABI: per dimension the shortest direction, a tie
 * on an even ring goes +. Returns the number of links crossed.
 */
static inline int tv_route(const struct tv_fabric *f, __u32 src, __u32 dst, int *hops)
{
	int h = 0;
	__u32 d;

	for (d = 0; d < TORUS_MAX_DIMS; d++)
		hops[d] = 0;
	for (d = 0; d < f->ndims; d++) {
		int s = tv_coord(f, src, d), t = tv_coord(f, dst, d), n = f->dims[d];

		if (f->wrap & (1U << d)) {
			int fwd = ((t - s) % n + n) % n, bwd = n - fwd;

			hops[d] = fwd == 0 ? 0 : (fwd <= bwd ? fwd : -bwd);
		} else {
			hops[d] = t - s;
		}
		h += abs(hops[d]);
	}
	return h;
}

/* Port of the first hop and arrival port of the last hop of a route. */
static inline __u32 tv_first_port(const struct tv_fabric *f, const int *hops)
{
	__u32 d;

	for (d = 0; d < f->ndims; d++)
		if (hops[d])
			return 2 * d + (hops[d] < 0);
	return TORUS_PORT_AUTO;
}

static inline __u32 tv_arrival_port(const struct tv_fabric *f, const int *hops)
{
	int d;

	for (d = f->ndims - 1; d >= 0; d--)
		if (hops[d])
			return 2 * d + (hops[d] > 0);
	return TORUS_PORT_AUTO;
}

static inline void tv_send_desc(struct torus_desc *x, __u32 dst, __u64 tag, struct torus_seg *segs,
				__u32 nsegs, __u64 user_data)
{
	memset(x, 0, sizeof(*x));
	x->op = TORUS_OP_SEND;
	x->port = TORUS_PORT_AUTO;
	x->dst_node = dst;
	x->nsegs = nsegs;
	x->tag = tag;
	x->user_data = user_data;
	x->segs = (uintptr_t)segs;
}

/* A send along an explicit route (TORUS_SEND_ROUTE) leaving on its first hop. */
static inline void tv_route_desc(const struct tv_fabric *f, struct torus_desc *x, __u32 dst,
				 const int *hops, __u64 tag, struct torus_seg *segs, __u32 nsegs,
				 __u64 user_data)
{
	__u32 d;

	tv_send_desc(x, dst, tag, segs, nsegs, user_data);
	x->flags = TORUS_SEND_ROUTE;
	for (d = 0; d < f->ndims; d++)
		x->hops[d] = hops[d];
	x->port = tv_first_port(f, hops);
}

static inline void tv_recv_desc(struct torus_desc *x, __u32 port, __u64 tag, struct torus_seg *segs,
				__u32 nsegs, __u64 user_data)
{
	memset(x, 0, sizeof(*x));
	x->op = TORUS_OP_RECV;
	x->port = port;
	x->nsegs = nsegs;
	x->tag = tag;
	x->user_data = user_data;
	x->segs = (uintptr_t)segs;
}

/* Post @count descriptors; *@posted (may be NULL) gets how many were accepted. */
static inline int tv_post(int fd, struct torus_desc *x, __u32 count, __u32 *posted)
{
	struct torus_post p = {
		.size = sizeof(p),
		.count = count,
		.desc_size = sizeof(*x),
		.descs = (uintptr_t)x,
	};
	int ret = tv_ioctl(fd, TORUS_IOC_POST, &p);

	if (posted)
		*posted = p.posted;
	return ret;
}

/* Wait for at least @min completions (at most @max); returns the count or -errno. */
static inline int tv_wait(int fd, struct torus_cqe *e, __u32 min, __u32 max, __u64 timeout_ns)
{
	struct torus_cq_wait w = {
		.size = sizeof(w),
		.min_entries = min,
		.max_entries = max,
		.timeout_ns = timeout_ns,
		.entries = (uintptr_t)e,
		.entry_size = sizeof(*e),
	};
	int ret = tv_ioctl(fd, TORUS_IOC_CQ_WAIT, &w);

	return ret ? ret : (int)w.count;
}

/* Reap exactly @n completions (looping over partial returns). */
static inline int tv_reap(int fd, struct torus_cqe *e, __u32 n)
{
	__u32 got = 0;

	while (got < n) {
		int r = tv_wait(fd, e + got, 1, n - got, TV_WAIT_NS);

		if (r < 0)
			return r;
		if (r == 0)
			return -ETIMEDOUT;
		got += r;
	}
	return got;
}

static inline int tv_counters(int ctl, __u32 fabric, __u32 node, struct torus_counters *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->fabric_id = fabric;
	c->node_id = node;
	return tv_ioctl(ctl, TORUS_IOC_COUNTERS, c);
}

/* A byte pattern that differs per (seed, index) and is never constant. */
static inline unsigned char tv_byte(__u64 seed, size_t i)
{
	__u64 x = seed * 0x9e3779b97f4a7c15ULL + i * 0xbf58476d1ce4e5b9ULL;

	x ^= x >> 29;
	return (unsigned char)(x ^ (x >> 17));
}

static inline void tv_fill(unsigned char *p, size_t len, __u64 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = tv_byte(seed, i);
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline long tv_check(const unsigned char *p, size_t len, __u64 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != tv_byte(seed, i))
			return (long)i;
	return -1;
}

static inline double tv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * Test programs end with TV_MAIN instead of TEST_HARNESS_MAIN: without
 * /dev/torus-ctl (module not loaded) they report one SKIP and exit 4, which
 * tests/run-suite counts as a skip, never as a pass.
 */
#define TV_MAIN                                                                         \
	int main(int argc, char **argv)                                                 \
	{                                                                               \
		if (access(TV_CTL_PATH, F_OK)) {                                        \
			printf("TAP version 13\n1..1\n");                               \
			printf("ok 1 %s # SKIP %s absent: torus.ko not loaded\n",       \
			       argv[0], TV_CTL_PATH);                                   \
			return 4;                                                       \
		}                                                                       \
		return test_harness_run(argc, argv);                                    \
	}

/* In a test body: stop (as skipped) when the fixture's setup skipped. */
#define TV_SKIPPED()                      \
	do {                              \
		if (_metadata->skip)      \
			return;           \
	} while (0)

#endif /* TV_UTIL_H */
