// SPDX-License-Identifier: GPL-2.0
/*
 * torus.ko ioctl ABI: handshake, argument sizes (min_size - 1 is EINVAL,
 * sizeof + 1 with a non-zero tail is E2BIG), unknown commands (ENOTTY),
 * unknown flags (EOPNOTSUPP), bad pointers (EFAULT), reserved fields,
 * bad shapes, out-of-bounds segments and routes off a mesh edge (EINVAL),
 * commands on the wrong device (ENOTTY), fabric ids running out (EBUSY), a
 * node whose fabric is gone (ENXIO), and the link-fault checks shared by the
 * ioctl and debugfs.
 * Runs in the guest (utils/torus-vm) against the loaded module.
 */
#include <limits.h>
#include <stddef.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <kselftest_harness.h>

#include "torus_util.h"

#define KERNEL_PTR ((void *)0xffffffff81000000UL)

FIXTURE(abi)
{
	int ctl;
	struct tv_fabric f; /* a ring of 4, 64 KiB matrices */
	struct tv_fabric m; /* a 4x4 mesh */
	void *unmapped;
};

FIXTURE_SETUP(abi)
{
	struct torus_fabric_create c;
	__u32 ring[1] = { 4 }, mesh[2] = { 4, 4 };
	long page = sysconf(_SC_PAGESIZE);

	self->ctl = tv_ctl_open();
	if (self->ctl == -ENOENT)
		SKIP(return, "%s absent: torus.ko not loaded", TV_CTL_PATH);
	ASSERT_LE(0, self->ctl);
	tv_create_args(&c, 1, ring, 1, 0);
	c.matrix_bytes = 64 << 10;
	ASSERT_EQ(0, tv_fabric_new(&self->f, self->ctl, &c));
	tv_create_args(&c, 2, mesh, 0, 0);
	c.matrix_bytes = 64 << 10;
	ASSERT_EQ(0, tv_fabric_new(&self->m, self->ctl, &c));
	/* A page that was mapped and is not any more. */
	self->unmapped = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->unmapped);
	ASSERT_EQ(0, munmap(self->unmapped, page));
}

FIXTURE_TEARDOWN(abi)
{
	tv_fabric_free(&self->f);
	tv_fabric_free(&self->m);
	if (self->ctl >= 0)
		close(self->ctl);
}

/* One ioctl of the ABI, with a valid argument for the fixture's fabric. */
struct ioc {
	const char *name;
	unsigned long cmd;
	size_t size;
	int on_node; /* 0: ctl device, 1: node device */
	int side_effect_free; /* can be repeated with a valid argument */
	size_t min_size;      /* the smallest size accepted; 0: size */
};

static const struct ioc iocs[] = {
	/* the handshake grew (max_mrs, max_mr_bytes): an older caller's size still works */
	{ "handshake/ctl", TORUS_IOC_HANDSHAKE, sizeof(struct torus_handshake), 0, 1,
	  offsetof(struct torus_handshake, max_mrs) },
	{ "handshake/node", TORUS_IOC_HANDSHAKE, sizeof(struct torus_handshake), 1, 1,
	  offsetof(struct torus_handshake, max_mrs) },
	{ "fabric_create", TORUS_IOC_FABRIC_CREATE, sizeof(struct torus_fabric_create), 0, 0, 0 },
	{ "fabric_destroy", TORUS_IOC_FABRIC_DESTROY, sizeof(struct torus_fabric_destroy), 0, 0, 0 },
	{ "fabric_query/ctl", TORUS_IOC_FABRIC_QUERY, sizeof(struct torus_fabric_query), 0, 1, 0 },
	{ "fabric_query/node", TORUS_IOC_FABRIC_QUERY, sizeof(struct torus_fabric_query), 1, 1, 0 },
	{ "node_query", TORUS_IOC_NODE_QUERY, sizeof(struct torus_node_query), 1, 1, 0 },
	{ "post", TORUS_IOC_POST, sizeof(struct torus_post), 1, 0, 0 },
	{ "cq_wait", TORUS_IOC_CQ_WAIT, sizeof(struct torus_cq_wait), 1, 1, 0 },
	{ "counters/ctl", TORUS_IOC_COUNTERS, sizeof(struct torus_counters), 0, 1, 0 },
	{ "counters/node", TORUS_IOC_COUNTERS, sizeof(struct torus_counters), 1, 1, 0 },
	{ "link_fault", TORUS_IOC_LINK_FAULT, sizeof(struct torus_link_fault), 0, 1, 0 },
	{ "mr_reg", TORUS_IOC_MR_REG, sizeof(struct torus_mr_reg), 1, 0, 0 },
	{ "mr_dereg", TORUS_IOC_MR_DEREG, sizeof(struct torus_mr_dereg), 1, 0, 0 },
	{ "prog_post", TORUS_IOC_PROG_POST, sizeof(struct torus_prog_post), 1, 0, 0 },
};

#define ARGBUF 1024
static struct torus_desc valid_desc;
static struct torus_prog_desc valid_pdesc;
static struct torus_seg valid_seg;
static struct torus_cqe cqe_buf[4];
static unsigned char mr_buf[256];

/* Fill @buf with a valid argument for @i (size field set by the caller). */
static void valid_arg(const struct ioc *i, const struct tv_fabric *f, void *buf)
{
	static const __u32 dims8[1] = { 8 };

	memset(buf, 0, ARGBUF);
	switch (_IOC_NR(i->cmd)) {
	case TORUS_CMD_FABRIC_CREATE:
		tv_create_args(buf, 1, dims8, 1, 0);
		break;
	case TORUS_CMD_FABRIC_DESTROY:
		((struct torus_fabric_destroy *)buf)->fabric_id = f->id;
		break;
	case TORUS_CMD_FABRIC_QUERY:
		((struct torus_fabric_query *)buf)->fabric_id = f->id;
		break;
	case TORUS_CMD_POST: {
		struct torus_post *p = buf;

		valid_seg.offset = 0;
		valid_seg.length = 64;
		tv_recv_desc(&valid_desc, 0, 1, &valid_seg, 1, 0);
		p->count = 1;
		p->desc_size = sizeof(valid_desc);
		p->descs = (uintptr_t)&valid_desc;
		break;
	}
	case TORUS_CMD_CQ_WAIT: {
		struct torus_cq_wait *w = buf;

		w->max_entries = 4;
		w->entries = (uintptr_t)cqe_buf;
		w->entry_size = sizeof(cqe_buf[0]);
		break;
	}
	case TORUS_CMD_COUNTERS:
		((struct torus_counters *)buf)->fabric_id = f->id;
		break;
	case TORUS_CMD_LINK_FAULT:
		((struct torus_link_fault *)buf)->fabric_id = f->id; /* flags 0: clear */
		break;
	case TORUS_CMD_MR_REG:
		((struct torus_mr_reg *)buf)->addr = (uintptr_t)mr_buf;
		((struct torus_mr_reg *)buf)->length = sizeof(mr_buf);
		break;
	case TORUS_CMD_MR_DEREG:
		((struct torus_mr_dereg *)buf)->key = 1; /* ENOENT or a registration above */
		break;
	case TORUS_CMD_PROG_POST: {
		struct torus_prog_post *p = buf;

		/* one receive nobody sends to: the program times out after 1 ms */
		valid_seg.offset = 0;
		valid_seg.length = 64;
		memset(&valid_pdesc, 0, sizeof(valid_pdesc));
		tv_recv_desc(&valid_pdesc.desc, 0, 1, &valid_seg, 1, 0);
		valid_pdesc.wait_counter = TORUS_PROG_NO_COUNTER;
		valid_pdesc.signal_counter = TORUS_PROG_NO_COUNTER;
		p->count = 1;
		p->desc_size = sizeof(valid_pdesc);
		p->descs = (uintptr_t)&valid_pdesc;
		p->timeout_ns = 1000000;
		break;
	}
	}
}

static int ioc_fd(FIXTURE_DATA(abi) *self, const struct ioc *i)
{
	return i->on_node ? self->f.fd[0] : self->ctl;
}

TEST_F(abi, handshake__reports_version_limits_and_ioctls)
{
	struct torus_handshake h;
	int fd, k;

	TV_SKIPPED();
	for (k = 0; k < 2; k++) {
		fd = k ? self->f.fd[0] : self->ctl;
		memset(&h, 0, sizeof(h));
		h.size = sizeof(h);
		ASSERT_EQ(0, tv_ioctl(fd, TORUS_IOC_HANDSHAKE, &h));
		EXPECT_EQ(TORUS_ABI_VERSION, h.abi_version);
		EXPECT_EQ(TORUS_MAX_DIMS, h.max_dims);
		/* every command of the ABI is supported */
		EXPECT_EQ((1ULL << (TORUS_CMD_LAST - TORUS_CMD_BASE)) - 1, h.ioctls);
		EXPECT_EQ(4096, h.max_nodes);
		EXPECT_EQ(64, h.max_dim_size);
		EXPECT_LE(1, h.max_segs);
		EXPECT_LE(1, h.max_batch);
		EXPECT_LE(1 << 20, h.max_matrix_bytes);
		EXPECT_EQ(0, h.features & ~(__u64)(TORUS_FEAT_ONE_PORT | TORUS_FEAT_ROUTE |
						 TORUS_FEAT_LINK_FAULT | TORUS_FEAT_EPOLL |
						 TORUS_FEAT_MR | TORUS_FEAT_CQ_WAKE_ONCE |
						 TORUS_FEAT_SEND_SYNC | TORUS_FEAT_PROGRAM |
						 TORUS_FEAT_PROG_SIGNAL | TORUS_FEAT_PROG_QUEUE_ONLY));
		EXPECT_TRUE(h.features & TORUS_FEAT_MR);
		EXPECT_LE(1, h.max_mrs);
		EXPECT_LE(1 << 20, h.max_mr_bytes);
		EXPECT_TRUE(h.features & TORUS_FEAT_ONE_PORT);
		EXPECT_TRUE(h.features & TORUS_FEAT_ROUTE);
		EXPECT_TRUE(h.features & TORUS_FEAT_EPOLL);
	}
}

TEST_F(abi, ioctl__size_below_minimum_is_einval)
{
	unsigned char buf[ARGBUF];
	const struct ioc *i;

	TV_SKIPPED();
	for (i = iocs; i < iocs + sizeof(iocs) / sizeof(iocs[0]); i++) {
		size_t min = i->min_size ? i->min_size : i->size;

		valid_arg(i, &self->f, buf);
		*(__u32 *)buf = min - 1;
		EXPECT_EQ(-EINVAL, tv_ioctl(ioc_fd(self, i), i->cmd, buf))
			TH_LOG("%s at size %zu", i->name, min - 1);
		*(__u32 *)buf = 0;
		EXPECT_EQ(-EINVAL, tv_ioctl(ioc_fd(self, i), i->cmd, buf))
			TH_LOG("%s at size 0", i->name);
	}
	/* the fabric survived the destroy attempts */
	EXPECT_EQ(-EBUSY, tv_destroy(self->ctl, self->f.id));
}

TEST_F(abi, ioctl__size_above_sizeof_with_nonzero_tail_is_e2big)
{
	unsigned char buf[ARGBUF];
	const struct ioc *i;

	TV_SKIPPED();
	for (i = iocs; i < iocs + sizeof(iocs) / sizeof(iocs[0]); i++) {
		valid_arg(i, &self->f, buf);
		*(__u32 *)buf = i->size + 1;
		buf[i->size] = 0x5a;
		EXPECT_EQ(-E2BIG, tv_ioctl(ioc_fd(self, i), i->cmd, buf))
			TH_LOG("%s at size %zu, tail 0x5a", i->name, i->size + 1);
		valid_arg(i, &self->f, buf);
		*(__u32 *)buf = i->size + 64;
		buf[i->size + 63] = 1;
		EXPECT_EQ(-E2BIG, tv_ioctl(ioc_fd(self, i), i->cmd, buf))
			TH_LOG("%s at size %zu, last byte 1", i->name, i->size + 64);
	}
	/* the fabric is still there, its nodes still open */
	EXPECT_EQ(-EBUSY, tv_destroy(self->ctl, self->f.id));
}

/* Above a page the tail is not scanned: E2BIG even when it is all zero. */
TEST_F(abi, ioctl__size_above_a_page_is_e2big_whatever_the_tail)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *buf = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct torus_seg seg = { 0, 64 };
	struct torus_post p;
	const struct ioc *i;

	TV_SKIPPED();
	ASSERT_NE(MAP_FAILED, buf);
	for (i = iocs; i < iocs + sizeof(iocs) / sizeof(iocs[0]); i++) {
		memset(buf, 0, 2 * pg);
		valid_arg(i, &self->f, buf);
		*(__u32 *)buf = pg + 8;
		EXPECT_EQ(-E2BIG, tv_ioctl(ioc_fd(self, i), i->cmd, buf))
			TH_LOG("%s at size %ld, zero tail", i->name, pg + 8);
	}
	memset(buf, 0, 2 * pg);
	tv_recv_desc((struct torus_desc *)buf, 0, 1, &seg, 1, 0);
	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.count = 1;
	p.desc_size = pg + 8;
	p.descs = (uintptr_t)buf;
	EXPECT_EQ(-E2BIG, tv_ioctl(self->f.fd[0], TORUS_IOC_POST, &p));
	EXPECT_EQ(0, p.posted);
	EXPECT_EQ(-EBUSY, tv_destroy(self->ctl, self->f.id));
	munmap(buf, 2 * pg);
}

TEST_F(abi, ioctl__size_above_sizeof_with_zero_tail_is_accepted)
{
	unsigned char buf[ARGBUF];
	const struct ioc *i;

	TV_SKIPPED();
	for (i = iocs; i < iocs + sizeof(iocs) / sizeof(iocs[0]); i++) {
		if (!i->side_effect_free)
			continue;
		valid_arg(i, &self->f, buf);
		*(__u32 *)buf = i->size + 16;
		EXPECT_EQ(0, tv_ioctl(ioc_fd(self, i), i->cmd, buf))
			TH_LOG("%s at size %zu, zero tail", i->name, i->size + 16);
		/* and at exactly sizeof */
		valid_arg(i, &self->f, buf);
		*(__u32 *)buf = i->size;
		EXPECT_EQ(0, tv_ioctl(ioc_fd(self, i), i->cmd, buf))
			TH_LOG("%s at size %zu", i->name, i->size);
	}
}

TEST_F(abi, ioctl__unknown_command_is_enotty)
{
	unsigned char buf[ARGBUF];
	int k;

	TV_SKIPPED();
	memset(buf, 0, sizeof(buf));
	*(__u32 *)buf = 64;
	for (k = 0; k < 2; k++) {
		int fd = k ? self->f.fd[0] : self->ctl;

		EXPECT_EQ(-ENOTTY, tv_ioctl(fd, _IO(TORUS_TYPE, TORUS_CMD_LAST), buf));
		EXPECT_EQ(-ENOTTY, tv_ioctl(fd, _IO(TORUS_TYPE, TORUS_CMD_BASE - 1), buf));
		EXPECT_EQ(-ENOTTY, tv_ioctl(fd, _IO(TORUS_TYPE, 0xff), buf));
		EXPECT_EQ(-ENOTTY, tv_ioctl(fd, _IO('X', TORUS_CMD_HANDSHAKE), buf));
		EXPECT_EQ(-ENOTTY, tv_ioctl(fd, _IOWR(TORUS_TYPE, TORUS_CMD_HANDSHAKE, struct torus_handshake), buf));
		/* ENOTTY is checked before the argument is read */
		EXPECT_EQ(-ENOTTY, tv_ioctl(fd, _IO(TORUS_TYPE, TORUS_CMD_LAST), NULL));
	}
}

TEST_F(abi, ioctl__unknown_flags_are_eopnotsupp)
{
	unsigned char buf[ARGBUF];
	struct torus_seg seg = { 0, 64 };
	const struct ioc *i;
	struct torus_desc d;
	__u32 posted = 99;

	TV_SKIPPED();
	for (i = iocs; i < iocs + sizeof(iocs) / sizeof(iocs[0]); i++) {
		valid_arg(i, &self->f, buf);
		((__u32 *)buf)[0] = i->size;
		((__u32 *)buf)[1] = 1U << 31;
		EXPECT_EQ(-EOPNOTSUPP, tv_ioctl(ioc_fd(self, i), i->cmd, buf))
			TH_LOG("%s with flags bit 31", i->name);
	}
	/* a descriptor's unknown flag */
	tv_recv_desc(&d, 0, 1, &seg, 1, 0);
	d.flags = 1U << 30;
	EXPECT_EQ(-EOPNOTSUPP, tv_post(self->f.fd[0], &d, 1, &posted));
	EXPECT_EQ(0, posted);
}

TEST_F(abi, ioctl__bad_argument_pointer_is_efault)
{
	const struct ioc *i;
	void *bad[3];
	int k;

	TV_SKIPPED();
	bad[0] = NULL;
	bad[1] = self->unmapped;
	bad[2] = KERNEL_PTR;
	for (i = iocs; i < iocs + sizeof(iocs) / sizeof(iocs[0]); i++)
		for (k = 0; k < 3; k++) {
			EXPECT_EQ(-EFAULT, tv_ioctl(ioc_fd(self, i), i->cmd, bad[k]))
				TH_LOG("%s with argument %p", i->name, bad[k]);
		}
}

TEST_F(abi, post__bad_user_pointers_are_efault)
{
	struct torus_seg seg = { 0, 64 };
	struct torus_desc d;
	struct torus_post p;
	__u32 posted = 99;
	int k;

	TV_SKIPPED();
	for (k = 0; k < 3; k++) {
		__u64 ptr = k == 0 ? 0 : k == 1 ? (uintptr_t)self->unmapped : (uintptr_t)KERNEL_PTR;

		memset(&p, 0, sizeof(p));
		p.size = sizeof(p);
		p.count = 1;
		p.desc_size = sizeof(d);
		p.descs = ptr;
		EXPECT_EQ(-EFAULT, tv_ioctl(self->f.fd[0], TORUS_IOC_POST, &p));
		EXPECT_EQ(0, p.posted);
		/* the descriptor's segment list */
		tv_recv_desc(&d, 0, 1, &seg, 1, 0);
		d.segs = ptr;
		EXPECT_EQ(-EFAULT, tv_post(self->f.fd[0], &d, 1, &posted));
		EXPECT_EQ(0, posted);
	}
}

TEST_F(abi, cq_wait__bad_entries_pointer_is_efault)
{
	unsigned char *m0 = self->f.map[0], *m1 = self->f.map[1];
	struct torus_seg seg = { 0, 128 };
	struct pollfd pfd = { .fd = self->f.fd[1], .events = POLLIN };
	struct torus_cqe e[2];
	struct torus_desc d;
	int ret;

	TV_SKIPPED();
	tv_fill(m0, 128, 7);
	memset(m1, 0, 128);
	tv_recv_desc(&d, 1, 5, &seg, 1, 0); /* node 1 receives on port 1 from node 0 */
	ASSERT_EQ(0, tv_post(self->f.fd[1], &d, 1, NULL));
	tv_send_desc(&d, 1, 5, &seg, 1, 0);
	ASSERT_EQ(0, tv_post(self->f.fd[0], &d, 1, NULL));
	ASSERT_EQ(1, tv_reap(self->f.fd[0], e, 1));
	/* node 1 has a completion ready (poll says so): a bad entries pointer cannot take it */
	ASSERT_EQ(1, poll(&pfd, 1, 20000));
	ASSERT_TRUE(pfd.revents & POLLIN);
	ret = tv_wait(self->f.fd[1], NULL, 1, 1, 1000000000ULL);
	EXPECT_EQ(-EFAULT, ret);
	ret = tv_wait(self->f.fd[1], KERNEL_PTR, 1, 1, 1000000000ULL);
	EXPECT_EQ(-EFAULT, ret);
	/* the completion is still there for a good pointer */
	EXPECT_EQ(1, tv_wait(self->f.fd[1], e, 1, 1, TV_WAIT_NS));
	EXPECT_EQ(-1, tv_check(m1, 128, 7));
}

TEST_F(abi, fabric_create__reserved_field_and_bad_shapes_are_einval)
{
	struct torus_fabric_create c;
	__u32 d2[2] = { 4, 4 }, big[3] = { 64, 64, 2 }, seven[7] = { 2, 2, 2, 2, 2, 2, 2 };
	__u32 one[1] = { 1 }, wide[1] = { 65 };

	TV_SKIPPED();
	tv_create_args(&c, 2, d2, 3, 0);
	c.__reserved = 1;
	EXPECT_EQ(-EINVAL, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_CREATE, &c));
	tv_create_args(&c, 0, d2, 0, 0);
	EXPECT_EQ(-EINVAL, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_CREATE, &c));
	tv_create_args(&c, 6, seven, 0, 0);
	c.ndims = 7;
	EXPECT_EQ(-EINVAL, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_CREATE, &c));
	tv_create_args(&c, 1, one, 1, 0);
	EXPECT_EQ(-EINVAL, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_CREATE, &c));
	tv_create_args(&c, 1, wide, 1, 0);
	EXPECT_EQ(-EINVAL, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_CREATE, &c));
	tv_create_args(&c, 3, big, 7, 0); /* 8192 nodes > 4096 */
	EXPECT_EQ(-EINVAL, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_CREATE, &c));
	tv_create_args(&c, 2, d2, 3, 0);
	c.dims[2] = 4; /* entries >= ndims must be 0 */
	EXPECT_EQ(-EINVAL, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_CREATE, &c));
}

/* How many fabrics exist: walk next_fabric_id from id 0. */
static int count_fabrics(int ctl)
{
	struct torus_fabric_query q;
	__u32 id = 0;
	int n = 0, ret;

	for (;;) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.fabric_id = id;
		ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_QUERY, &q);
		if (!ret)
			n++;
		else if (ret != -ENOENT)
			return ret;
		if (q.next_fabric_id == TORUS_NO_NODE || q.next_fabric_id <= id)
			return n;
		id = q.next_fabric_id;
	}
}

TEST_F(abi, fabric_create__unwritable_argument_is_efault_and_leaves_no_fabric)
{
	long page = sysconf(_SC_PAGESIZE);
	struct torus_fabric_create *c;
	__u32 d2[2] = { 3, 3 };
	int before;

	TV_SKIPPED();
	c = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	tv_create_args(c, 2, d2, 3, 0);
	ASSERT_EQ(0, mprotect(c, page, PROT_READ));
	before = count_fabrics(self->ctl);
	ASSERT_LE(2, before);
	/* readable, so the kernel creates the fabric, but the id cannot be returned */
	EXPECT_EQ(-EFAULT, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_CREATE, c));
	EXPECT_EQ(before, count_fabrics(self->ctl));
	munmap(c, page);
}

TEST_F(abi, fabric__unknown_id_is_enoent_and_open_fabric_is_ebusy)
{
	struct torus_fabric_query q = { .size = sizeof(q), .fabric_id = 0x7fffffff };

	TV_SKIPPED();
	EXPECT_EQ(-ENOENT, tv_destroy(self->ctl, 0x7fffffff));
	EXPECT_EQ(-ENOENT, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_QUERY, &q));
	/* its nodes are open */
	EXPECT_EQ(-EBUSY, tv_destroy(self->ctl, self->f.id));
	q.fabric_id = self->f.id;
	EXPECT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_QUERY, &q));
	EXPECT_EQ(self->f.nodes, q.open_nodes);
}

TEST_F(abi, post__reserved_fields_and_bad_batches_are_einval)
{
	struct torus_seg seg = { 0, 64 };
	struct torus_desc d[2];
	struct torus_post p;
	__u32 posted = 99;
	struct torus_handshake h = { .size = sizeof(h) };

	TV_SKIPPED();
	ASSERT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_HANDSHAKE, &h));
	tv_recv_desc(&d[0], 0, 1, &seg, 1, 0);
	d[0].__reserved = 1;
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 1, &posted));
	EXPECT_EQ(0, posted);
	tv_recv_desc(&d[0], 0, 1, &seg, 1, 0);
	d[0].__reserved2 = 1;
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 1, &posted));
	tv_recv_desc(&d[0], 0, 1, &seg, 1, 0);
	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.count = 1;
	p.desc_size = sizeof(d[0]);
	p.descs = (uintptr_t)d;
	p.__reserved = 1;
	EXPECT_EQ(-EINVAL, tv_ioctl(self->f.fd[0], TORUS_IOC_POST, &p));
	p.__reserved = 0;
	p.count = 0;
	EXPECT_EQ(-EINVAL, tv_ioctl(self->f.fd[0], TORUS_IOC_POST, &p));
	p.count = h.max_batch + 1;
	EXPECT_EQ(-EINVAL, tv_ioctl(self->f.fd[0], TORUS_IOC_POST, &p));
	p.count = 1;
	p.desc_size = sizeof(d[0]) - 1;
	EXPECT_EQ(-EINVAL, tv_ioctl(self->f.fd[0], TORUS_IOC_POST, &p));
	/* op, port, nsegs, dst of a receive */
	d[0].op = 3;
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 1, &posted));
	tv_recv_desc(&d[0], 2, 1, &seg, 1, 0); /* a ring has ports 0 and 1 */
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 1, &posted));
	tv_recv_desc(&d[0], 0, 1, &seg, 0, 0);
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 1, &posted));
	tv_recv_desc(&d[0], 0, 1, &seg, h.max_segs + 1, 0);
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 1, &posted));
	tv_recv_desc(&d[0], 0, 1, &seg, 1, 0);
	d[0].dst_node = 1;
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 1, &posted));
	/* a send to itself, to a node that does not exist, on the wrong port */
	tv_send_desc(&d[0], 0, 1, &seg, 1, 0);
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 1, &posted));
	tv_send_desc(&d[0], self->f.nodes, 1, &seg, 1, 0);
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 1, &posted));
	tv_send_desc(&d[0], 1, 1, &seg, 1, 0);
	d[0].port = 1; /* node 1 is behind port 0 */
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 1, &posted));
	tv_send_desc(&d[0], 1, 1, &seg, 1, 0);
	d[0].port = 2;
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 1, &posted));
	/* an explicit route that does not lead to dst */
	tv_send_desc(&d[0], 1, 1, &seg, 1, 0);
	d[0].flags = TORUS_SEND_ROUTE;
	d[0].hops[0] = 2;
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 1, &posted));
	/* hops without TORUS_SEND_ROUTE */
	tv_send_desc(&d[0], 1, 1, &seg, 1, 0);
	d[0].hops[0] = 1;
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 1, &posted));
	/* a batch stops at its first invalid descriptor, keeping the ones before */
	tv_recv_desc(&d[0], 0, 1, &seg, 1, 0);
	tv_recv_desc(&d[1], 0, 1, &seg, 1, 0);
	d[1].__reserved = 1;
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], d, 2, &posted));
	EXPECT_EQ(1, posted);
}

TEST_F(abi, post__desc_size_larger_needs_zero_tail)
{
	struct {
		struct torus_desc d;
		__u64 tail;
	} big;
	struct torus_seg seg = { 0, 64 };
	struct torus_post p;

	TV_SKIPPED();
	tv_recv_desc(&big.d, 0, 1, &seg, 1, 0);
	big.tail = 0xff;
	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.count = 1;
	p.desc_size = sizeof(big);
	p.descs = (uintptr_t)&big;
	EXPECT_EQ(-E2BIG, tv_ioctl(self->f.fd[0], TORUS_IOC_POST, &p));
	EXPECT_EQ(0, p.posted);
	big.tail = 0;
	EXPECT_EQ(0, tv_ioctl(self->f.fd[0], TORUS_IOC_POST, &p));
	EXPECT_EQ(1, p.posted);
}

TEST_F(abi, post__segments_outside_the_matrix_are_einval)
{
	__u64 mb = self->f.matrix_bytes;
	struct torus_seg bad[] = {
		{ mb, 1 },		 /* starts at the end */
		{ mb - 8, 16 },		 /* crosses the end */
		{ 0, mb + 1 },		 /* longer than the matrix */
		{ ~0ULL - 7, 16 },	 /* offset + length wraps around */
		{ 8, ~0ULL },		 /* length wraps around */
	};
	struct torus_seg two[2] = { { 0, 64 }, { mb - 32, 64 } };
	struct torus_desc d;
	__u32 posted = 99;
	unsigned int k;

	TV_SKIPPED();
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		tv_recv_desc(&d, 0, 1, &bad[k], 1, 0);
		EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], &d, 1, &posted));
		EXPECT_EQ(0, posted);
		tv_send_desc(&d, 1, 1, &bad[k], 1, 0);
		EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], &d, 1, &posted));
		EXPECT_EQ(0, posted);
	}
	/* the second segment of a gather list is checked too */
	tv_send_desc(&d, 1, 1, two, 2, 0);
	EXPECT_EQ(-EINVAL, tv_post(self->f.fd[0], &d, 1, &posted));
	EXPECT_EQ(0, posted);
}

TEST_F(abi, post__route_off_a_mesh_edge_is_einval)
{
	struct torus_seg seg = { 0, 64 };
	struct torus_desc d;
	__u32 posted = 99;
	int hops[TORUS_MAX_DIMS] = { 0 };

	TV_SKIPPED();
	/* node 0 = (0,0) of a 4x4 mesh: -1 in dimension 0 would wrap to (3,0) */
	hops[0] = -1;
	tv_route_desc(&self->m, &d, 12, hops, 1, &seg, 1, 0);
	EXPECT_EQ(-EINVAL, tv_post(self->m.fd[0], &d, 1, &posted));
	EXPECT_EQ(0, posted);
	hops[0] = 0;
	hops[1] = -1; /* to (0,3) */
	tv_route_desc(&self->m, &d, 3, hops, 1, &seg, 1, 0);
	EXPECT_EQ(-EINVAL, tv_post(self->m.fd[0], &d, 1, &posted));
	/* the port off the edge, even with the default route */
	tv_send_desc(&d, 4, 1, &seg, 1, 0);
	d.port = 1;
	EXPECT_EQ(-EINVAL, tv_post(self->m.fd[0], &d, 1, &posted));
	/* a receive on a port with no neighbour */
	tv_recv_desc(&d, 1, 1, &seg, 1, 0);
	EXPECT_EQ(-EINVAL, tv_post(self->m.fd[0], &d, 1, &posted));
	/* the mesh's own path (+3 in dimension 0) is fine */
	hops[0] = 3;
	hops[1] = 0;
	tv_route_desc(&self->m, &d, 12, hops, 1, &seg, 1, 0);
	EXPECT_EQ(0, tv_post(self->m.fd[0], &d, 1, &posted));
	EXPECT_EQ(1, posted);
}

TEST_F(abi, link_fault__bad_link_is_rejected)
{
	struct torus_link_fault lf = { .size = sizeof(lf) };

	TV_SKIPPED();
	lf.fabric_id = self->f.id;
	lf.port = 2; /* a ring has ports 0 and 1 */
	EXPECT_EQ(-EINVAL, tv_ioctl(self->ctl, TORUS_IOC_LINK_FAULT, &lf));
	lf.port = 0;
	lf.node_id = self->f.nodes;
	EXPECT_EQ(-ENOENT, tv_ioctl(self->ctl, TORUS_IOC_LINK_FAULT, &lf));
	lf.node_id = 0;
	lf.fabric_id = 0x7fffffff;
	EXPECT_EQ(-ENOENT, tv_ioctl(self->ctl, TORUS_IOC_LINK_FAULT, &lf));
}

/*
 * The node commands on /dev/torus-ctl and the control commands on a node
 * device are ENOTTY, with a valid argument (only the device is wrong) and
 * with none at all (the argument is not read), and change nothing.
 */
TEST_F(abi, ioctl__command_on_the_wrong_device_is_enotty)
{
	unsigned char buf[ARGBUF];
	int before, wrong = 0;
	size_t k, j;

	TV_SKIPPED();
	before = count_fabrics(self->ctl);
	ASSERT_LE(2, before);
	for (k = 0; k < sizeof(iocs) / sizeof(iocs[0]); k++) {
		const struct ioc *i = &iocs[k];
		int both = 0, fd = i->on_node ? self->ctl : self->f.fd[0];

		for (j = 0; j < sizeof(iocs) / sizeof(iocs[0]); j++)
			both |= j != k && iocs[j].cmd == i->cmd;
		if (both)
			continue;
		wrong++;
		valid_arg(i, &self->f, buf);
		*(__u32 *)buf = i->size;
		EXPECT_EQ(-ENOTTY, tv_ioctl(fd, i->cmd, buf)) TH_LOG("%s on the other device", i->name);
		EXPECT_EQ(-ENOTTY, tv_ioctl(fd, i->cmd, NULL)) TH_LOG("%s, NULL argument", i->name);
	}
	/*
	 * node_query, post, cq_wait, mr_reg, mr_dereg, prog_post; fabric_create,
	 * fabric_destroy, link_fault
	 */
	EXPECT_EQ(9, wrong);
	EXPECT_EQ(before, count_fabrics(self->ctl));
	EXPECT_EQ(-EBUSY, tv_destroy(self->ctl, self->f.id));
}

/*
 * A device node of a destroyed fabric (here made again with mknod, as a
 * stale node or an open racing the destroy would find it) opens with ENXIO.
 */
TEST_F(abi, node_open__fabric_destroyed_is_enxio)
{
	char path[96], stale[] = "/tmp/torus-abi-XXXXXX", node[PATH_MAX];
	struct torus_fabric_create c;
	__u32 ring[1] = { 2 };
	struct stat st;
	int fd;

	TV_SKIPPED();
	tv_create_args(&c, 1, ring, 1, 0);
	ASSERT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_CREATE, &c));
	fd = tv_node_open(c.fabric_id, 1); /* waits for devtmpfs */
	ASSERT_LE(0, fd) TH_LOG("open node 1 of fabric %u: %s", c.fabric_id, strerror(-fd));
	close(fd);
	tv_node_path(path, sizeof(path), c.fabric_id, 1);
	ASSERT_EQ(0, stat(path, &st));
	ASSERT_TRUE(S_ISCHR(st.st_mode));
	ASSERT_EQ(0, tv_destroy(self->ctl, c.fabric_id));
	ASSERT_NE(NULL, mkdtemp(stale));
	snprintf(node, sizeof(node), "%s/node", stale);
	ASSERT_EQ(0, mknod(node, S_IFCHR | 0600, st.st_rdev)) TH_LOG("mknod: %s", strerror(errno));
	fd = open(node, O_RDWR | O_CLOEXEC);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(ENXIO, errno);
	if (fd >= 0)
		close(fd);
	unlink(node);
	rmdir(stale);
}

/* 256 fabric ids: the next create is EBUSY; one destroyed frees one. */
TEST_F(abi, fabric_create__out_of_fabric_ids_is_ebusy)
{
	static __u32 ids[300];
	struct torus_fabric_create c;
	__u32 ring[1] = { 2 };
	int before, n = 0, ret = 0, k;

	TV_SKIPPED();
	before = count_fabrics(self->ctl);
	ASSERT_LE(2, before);
	while (n < 300) {
		tv_create_args(&c, 1, ring, 1, 0);
		ret = tv_ioctl(self->ctl, TORUS_IOC_FABRIC_CREATE, &c);
		if (ret)
			break;
		ids[n++] = c.fabric_id;
	}
	EXPECT_EQ(-EBUSY, ret);
	EXPECT_EQ(256 - before, n);
	EXPECT_EQ(256, count_fabrics(self->ctl));
	if (n > 0) {
		EXPECT_EQ(0, tv_destroy(self->ctl, ids[n - 1]));
		tv_create_args(&c, 1, ring, 1, 0);
		EXPECT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_CREATE, &c));
		ids[n - 1] = c.fabric_id;
		tv_create_args(&c, 1, ring, 1, 0);
		EXPECT_EQ(-EBUSY, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_CREATE, &c));
	}
	for (k = 0; k < n; k++)
		EXPECT_EQ(0, tv_destroy(self->ctl, ids[k]));
	EXPECT_EQ(before, count_fabrics(self->ctl));
}

/* Write @s to a debugfs file: 0 or -errno. */
static int dbg_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* The "fault 0x.. drop .. delay_ns .." of @port in a node's debugfs state. */
static int dbg_fault_of(const char *state, __u32 port, char *out, size_t len)
{
	char line[512], want[32];
	FILE *fp = fopen(state, "r");
	int ret = -ENOENT;

	if (!fp)
		return -errno;
	snprintf(want, sizeof(want), "port %u ", port);
	while (fgets(line, sizeof(line), fp)) {
		char *f = strstr(line, " fault ");

		if (strncmp(line, want, strlen(want)) || !f)
			continue;
		snprintf(out, len, "%s", f + 1);
		out[strcspn(out, "\n")] = 0;
		ret = 0;
		break;
	}
	fclose(fp);
	return ret;
}

/*
 * One setter serves TORUS_IOC_LINK_FAULT and debugfs' node<N>/fault: both
 * reject the same bad links and delays with EINVAL, and what one sets the
 * other clears.
 */
TEST_F(abi, link_fault__ioctl_and_debugfs_share_checks)
{
	struct torus_link_fault lf = { .size = sizeof(lf) };
	char dir[128], fault[192], state[192], got[128];
	static const struct {
		__u32 port, flags;
		__u64 delay_ns;
	} bad[] = {
		{ 2, 0, 0 },				/* a ring has ports 0 and 1 */
		{ 0, TORUS_FAULT_DELAY, 1000000001ULL },	/* above 1 s */
		{ 0, 0, 1000000001ULL },		/* checked without the flag too */
	};
	size_t k;

	TV_SKIPPED();
	if (access("/sys/kernel/debug/torus", F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	snprintf(dir, sizeof(dir), "/sys/kernel/debug/torus/fabric%u/node0", self->f.id);
	if (access(dir, F_OK))
		SKIP(return, "%s absent (no debugfs)", dir);
	snprintf(fault, sizeof(fault), "%s/fault", dir);
	snprintf(state, sizeof(state), "%s/state", dir);
	lf.fabric_id = self->f.id;
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char line[64];

		lf.port = bad[k].port;
		lf.flags = bad[k].flags;
		lf.delay_ns = bad[k].delay_ns;
		EXPECT_EQ(-EINVAL, tv_ioctl(self->ctl, TORUS_IOC_LINK_FAULT, &lf)) TH_LOG("case %zu", k);
		snprintf(line, sizeof(line), "%u %x 0 %llu", bad[k].port, bad[k].flags,
			 (unsigned long long)bad[k].delay_ns);
		EXPECT_EQ(-EINVAL, dbg_write(fault, line)) TH_LOG("debugfs \"%s\"", line);
	}
	/* unknown flags: EOPNOTSUPP at the ioctl's dispatch, EINVAL in debugfs */
	lf.port = 0;
	lf.flags = 1U << 3;
	lf.delay_ns = 0;
	EXPECT_EQ(-EOPNOTSUPP, tv_ioctl(self->ctl, TORUS_IOC_LINK_FAULT, &lf));
	EXPECT_EQ(-EINVAL, dbg_write(fault, "0 8 0 0"));
	/* a mesh edge: node 0 of the 4x4 mesh has no neighbour behind port 1 */
	lf.fabric_id = self->m.id;
	lf.port = 1;
	lf.flags = TORUS_FAULT_DOWN;
	EXPECT_EQ(-EINVAL, tv_ioctl(self->ctl, TORUS_IOC_LINK_FAULT, &lf));
	snprintf(got, sizeof(got), "/sys/kernel/debug/torus/fabric%u/node0/fault", self->m.id);
	EXPECT_EQ(-EINVAL, dbg_write(got, "1 1 0 0"));
	/* nothing was set by any of the above */
	ASSERT_EQ(0, dbg_fault_of(state, 0, got, sizeof(got)));
	EXPECT_STREQ("fault 0x0 drop 0 delay_ns 0", got);
	/* debugfs sets (drop only kept with DROP, delay only with DELAY) ... */
	EXPECT_EQ(0, dbg_write(fault, "0 6 3 5000"));
	ASSERT_EQ(0, dbg_fault_of(state, 0, got, sizeof(got)));
	EXPECT_STREQ("fault 0x6 drop 3 delay_ns 5000", got);
	EXPECT_EQ(0, dbg_write(fault, "0 1 3 5000"));
	ASSERT_EQ(0, dbg_fault_of(state, 0, got, sizeof(got)));
	EXPECT_STREQ("fault 0x1 drop 0 delay_ns 0", got);
	/* ... the ioctl sets and clears the same link */
	lf.fabric_id = self->f.id;
	lf.port = 0;
	lf.flags = TORUS_FAULT_DROP;
	lf.drop_count = 2;
	lf.delay_ns = 7;
	EXPECT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_LINK_FAULT, &lf));
	ASSERT_EQ(0, dbg_fault_of(state, 0, got, sizeof(got)));
	EXPECT_STREQ("fault 0x2 drop 2 delay_ns 0", got);
	lf.flags = 0;
	EXPECT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_LINK_FAULT, &lf));
	ASSERT_EQ(0, dbg_fault_of(state, 0, got, sizeof(got)));
	EXPECT_STREQ("fault 0x0 drop 0 delay_ns 0", got);
}

/* The node device's calls besides ioctl: mmap, read, write, lseek. */
TEST_F(abi, node_device__mmap_read_write_lseek_errnos)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = self->f.fd[0];
	char c = 0;
	void *p;

	TV_SKIPPED();
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, page);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno) TH_LOG("mmap at offset %ld", page);
	p = mmap(NULL, self->f.map_len + page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno) TH_LOG("mmap of %zu bytes", self->f.map_len + page);
	EXPECT_EQ(-1, read(fd, &c, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, write(fd, &c, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
}

/*
 * A receive still queued at its node's last close completes with
 * -ECANCELED: counted in the node's errors (seen on the ctl device), while
 * its entry goes with the file (the next opener's CQ is empty).
 */
TEST_F(abi, close__queued_descriptor_is_ecanceled_and_only_counted)
{
	struct torus_seg seg = { 0, 64 };
	struct torus_fabric_create c;
	struct torus_counters cnt;
	struct torus_cqe e[2];
	struct torus_desc x;
	__u32 ring[1] = { 4 };
	int fd;

	TV_SKIPPED();
	tv_create_args(&c, 1, ring, 1, 0);
	c.matrix_bytes = 64 << 10;
	ASSERT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_CREATE, &c));
	fd = tv_node_open(c.fabric_id, 0);
	ASSERT_LE(0, fd);
	tv_recv_desc(&x, 0, 1, &seg, 1, 0);
	EXPECT_EQ(0, tv_post(fd, &x, 1, NULL));
	ASSERT_EQ(0, tv_counters(self->ctl, c.fabric_id, 0, &cnt));
	EXPECT_EQ(1, cnt.node.posted);
	EXPECT_EQ(0, cnt.node.completed);
	EXPECT_EQ(0, cnt.node.errors);
	close(fd);
	ASSERT_EQ(0, tv_counters(self->ctl, c.fabric_id, 0, &cnt));
	EXPECT_EQ(1, cnt.node.posted);
	EXPECT_EQ(1, cnt.node.completed);
	EXPECT_EQ(1, cnt.node.errors);
	fd = tv_node_open(c.fabric_id, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, tv_wait(fd, e, 0, 2, 0));
	close(fd);
	EXPECT_EQ(0, tv_destroy(self->ctl, c.fabric_id));
}

TV_MAIN
