// SPDX-License-Identifier: GPL-2.0
/*
 * torus.ko programs (PROG_POST): triggered descriptors posted in one call.
 * A relay along a ring forwards a block from the receive that carried it,
 * with no process step, every byte checked, one completion per node, and
 * a virtual makespan of the chain of dependencies (each send starts at the
 * end of the receive it waited for), whichever order the programs were
 * posted in; the whole-program checks (cycles, unreachable thresholds,
 * counters out of range, fan-out, sizes) with nothing queued after a
 * rejected program; a failed descriptor reports itself and fails the
 * program; a program whose dependencies never fire fails at its timeout
 * naming the descriptor it waited for and holds nothing after; closing the
 * posting file cancels its programs and gives back queue slots, CQ slots
 * and pinned pages, also over 1000 post/close cycles. TORUS_OP_SIGNAL
 * descriptors let a send wait for two receives exactly (and it starts, in
 * virtual time, at the later of their ends); a malformed signal is refused.
 */
#include <signal.h>
#include <sys/wait.h>

#include <kselftest_harness.h>

#include "torus_util.h"

#define TS_NS 1000
#define TW_PS 500
#define HOP_NS 50
#define NODES 4
#define BLOCK 4096

static __u64 cost(__u32 h, __u64 m)
{
	return TS_NS + (__u64)h * HOP_NS + m * TW_PS / 1000;
}

FIXTURE(prog)
{
	int ctl;
	struct tv_fabric f;
};

FIXTURE_SETUP(prog)
{
	static const __u32 dims[1] = { NODES };
	struct torus_fabric_create c;

	self->f.fd = NULL;
	self->ctl = tv_ctl_open();
	if (self->ctl == -ENOENT)
		SKIP(return, "%s absent: torus.ko not loaded", TV_CTL_PATH);
	ASSERT_LE(0, self->ctl);
	tv_create_args(&c, 1, dims, 1, 0);
	c.ts_ns = TS_NS;
	c.tw_ps = TW_PS;
	c.hop_ns = HOP_NS;
	c.sq_depth = 16;
	c.cq_depth = 64;
	ASSERT_EQ(0, tv_fabric_new(&self->f, self->ctl, &c));
}

FIXTURE_TEARDOWN(prog)
{
	tv_fabric_free(&self->f);
	if (self->ctl >= 0)
		close(self->ctl);
}

static void pdesc(struct torus_prog_desc *p, __u32 wait, __u32 thr, __u32 sig)
{
	p->wait_counter = wait;
	p->wait_threshold = thr;
	p->signal_counter = sig;
	p->__reserved = 0;
}

static int prog_post_flags(int fd, struct torus_prog_desc *d, __u32 count, __u32 ncounters,
			   __u64 user_data, __u64 timeout_ns, __u32 *error_index, __u32 flags)
{
	struct torus_prog_post pp = {
		.size = sizeof(pp),
		.flags = flags,
		.count = count,
		.desc_size = sizeof(*d),
		.descs = (uintptr_t)d,
		.ncounters = ncounters,
		.user_data = user_data,
		.timeout_ns = timeout_ns,
	};
	int ret = tv_ioctl(fd, TORUS_IOC_PROG_POST, &pp);

	if (error_index)
		*error_index = pp.error_index;
	return ret;
}

static int prog_post(int fd, struct torus_prog_desc *d, __u32 count, __u32 ncounters,
		     __u64 user_data, __u64 timeout_ns, __u32 *error_index)
{
	return prog_post_flags(fd, d, count, ncounters, user_data, timeout_ns, error_index, 0);
}

/* Node @i's part of the relay 0 -> 1 -> 2 -> 3: receive from i-1, then forward. */
static __u32 relay_prog(struct torus_prog_desc *d, struct torus_seg *seg, __u32 i)
{
	__u32 n = 0;

	seg->offset = 0;
	seg->length = BLOCK;
	if (i > 0) {
		/* arrives from node i-1 travelling +: port 1 */
		tv_recv_desc(&d[n].desc, 1, 7, seg, 1, 100 + i);
		pdesc(&d[n++], TORUS_PROG_NO_COUNTER, 0, 0);
	}
	if (i < NODES - 1) {
		tv_send_desc(&d[n].desc, i + 1, 7, seg, 1, 200 + i);
		if (i > 0)
			pdesc(&d[n++], 0, 1, TORUS_PROG_NO_COUNTER);
		else
			pdesc(&d[n++], TORUS_PROG_NO_COUNTER, 0, TORUS_PROG_NO_COUNTER);
	}
	return n;
}

static void run_relay(struct __test_metadata *_metadata, FIXTURE_DATA(prog) *self,
		      const __u32 *order, __u32 flags)
{
	struct torus_prog_desc d[NODES][2];
	struct torus_seg seg[NODES];
	struct torus_fabric_query q = { .size = sizeof(q) };
	struct torus_cqe e;
	__u32 k, i, n[NODES];

	memset(d, 0, sizeof(d));
	tv_fill(self->f.map[0], BLOCK, 42);
	for (i = 1; i < NODES; i++)
		memset(self->f.map[i], 0, BLOCK);
	q.flags = TORUS_QUERY_RESET_STATS;
	ASSERT_EQ(0, tv_ioctl(self->f.fd[0], TORUS_IOC_FABRIC_QUERY, &q));
	for (k = 0; k < NODES; k++) {
		i = order[k];
		n[i] = relay_prog(d[i], &seg[i], i);
		ASSERT_EQ(0, prog_post_flags(self->f.fd[i], d[i], n[i], 1, 1000 + i, 0, NULL, flags));
	}
	for (i = 0; i < NODES; i++) {
		/* one completion per node: the program's, nothing per descriptor */
		ASSERT_EQ(1, tv_reap(self->f.fd[i], &e, 1));
		EXPECT_EQ(TORUS_OP_PROG, e.op);
		EXPECT_EQ(0, e.status);
		EXPECT_EQ(1000 + i, e.user_data);
		EXPECT_EQ(n[i], e.bytes);
		EXPECT_EQ(TORUS_NO_NODE, e.peer);
		/* the relay's chain: node i's last message ends after i + 1 hops of it */
		EXPECT_EQ((i < NODES - 1 ? i + 1 : i) * cost(1, BLOCK), e.t_end_ns);
		EXPECT_EQ(0, tv_wait(self->f.fd[i], &e, 0, 1, 0));
	}
	for (i = 1; i < NODES; i++)
		EXPECT_EQ(-1, tv_check(self->f.map[i], BLOCK, 42)) TH_LOG("node %u", i);
	q.flags = 0;
	ASSERT_EQ(0, tv_ioctl(self->f.fd[0], TORUS_IOC_FABRIC_QUERY, &q));
	EXPECT_EQ((NODES - 1) * cost(1, BLOCK), q.makespan_ns);
}

TEST_F(prog, handshake__reports_the_feature_and_its_limits)
{
	struct torus_handshake h;

	TV_SKIPPED();
	memset(&h, 0, sizeof(h));
	h.size = sizeof(h);
	ASSERT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_HANDSHAKE, &h));
	EXPECT_TRUE(h.features & TORUS_FEAT_PROGRAM);
	EXPECT_TRUE(h.ioctls & (1ULL << (TORUS_CMD_PROG_POST - TORUS_CMD_BASE)));
	EXPECT_LE(256, h.max_prog_descs);
	EXPECT_LE(64, h.max_prog_counters);
	EXPECT_LE(12, h.max_prog_fanout);
	EXPECT_LE(1 << 20, h.max_prog_bytes);
	EXPECT_LE(60ULL * 1000000000ULL, h.max_prog_timeout_ns);
	EXPECT_TRUE(h.features & TORUS_FEAT_PROG_QUEUE_ONLY);
	EXPECT_EQ(0, h.__reserved2);
}

TEST_F(prog, relay__forwards_from_the_receive_receivers_first)
{
	static const __u32 order[NODES] = { 3, 2, 1, 0 };

	TV_SKIPPED();
	run_relay(_metadata, self, order, 0);
}

TEST_F(prog, relay__forwards_from_the_receive_sender_first)
{
	/* node 0 first: its message waits in node 1's FIFO for node 1's program */
	static const __u32 order[NODES] = { 0, 1, 2, 3 };

	TV_SKIPPED();
	run_relay(_metadata, self, order, 0);
}

/*
 * TORUS_PROG_QUEUE_ONLY: the posters run no engine, the work items carry
 * the whole relay; the same completions, bytes and virtual times.
 */
TEST_F(prog, relay__queue_only_receivers_first)
{
	static const __u32 order[NODES] = { 3, 2, 1, 0 };

	TV_SKIPPED();
	run_relay(_metadata, self, order, TORUS_PROG_QUEUE_ONLY);
}

TEST_F(prog, relay__queue_only_sender_first)
{
	static const __u32 order[NODES] = { 0, 1, 2, 3 };

	TV_SKIPPED();
	run_relay(_metadata, self, order, TORUS_PROG_QUEUE_ONLY);
}

/*
 * Node 1 forwards to node 0 what it received from nodes 0 and 2, in one
 * send that waits for both receives: each receive signals its own counter,
 * a SIGNAL per receive relays it to the send's counter (threshold 2).
 */
TEST_F(prog, signal__a_send_waits_for_two_receives)
{
	struct torus_seg s0 = { 0, BLOCK }, s2 = { 0, 2 * BLOCK }, ra = { 0, BLOCK }, rb = { BLOCK, 2 * BLOCK };
	struct torus_seg fw = { 0, 3 * BLOCK }, back = { 4 * BLOCK, 3 * BLOCK };
	struct torus_prog_desc d1[5], d0[2], d2[1];
	struct torus_handshake h = { .size = sizeof(h) };
	struct torus_cqe e;

	TV_SKIPPED();
	ASSERT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_HANDSHAKE, &h));
	if (!(h.features & TORUS_FEAT_PROG_SIGNAL))
		SKIP(return, "no TORUS_FEAT_PROG_SIGNAL");
	memset(d1, 0, sizeof(d1));
	memset(d0, 0, sizeof(d0));
	memset(d2, 0, sizeof(d2));
	tv_fill(self->f.map[0], BLOCK, 42);
	tv_fill(self->f.map[2], 2 * BLOCK, 43);
	memset(self->f.map[1], 0, 3 * BLOCK);
	memset(self->f.map[0] + 4 * BLOCK, 0, 3 * BLOCK);
	/* node 1: from 0 (travelling +, port 1), from 2 (travelling -, port 0) */
	tv_recv_desc(&d1[0].desc, 1, 5, &ra, 1, 10);
	pdesc(&d1[0], TORUS_PROG_NO_COUNTER, 0, 0);
	tv_recv_desc(&d1[1].desc, 0, 6, &rb, 1, 11);
	pdesc(&d1[1], TORUS_PROG_NO_COUNTER, 0, 1);
	d1[2].desc.op = TORUS_OP_SIGNAL;
	pdesc(&d1[2], 0, 1, 2);
	d1[3].desc.op = TORUS_OP_SIGNAL;
	pdesc(&d1[3], 1, 1, 2);
	tv_send_desc(&d1[4].desc, 0, 7, &fw, 1, 12);
	pdesc(&d1[4], 2, 2, TORUS_PROG_NO_COUNTER);
	ASSERT_EQ(0, prog_post(self->f.fd[1], d1, 5, 3, 1001, 0, NULL));
	/* nothing arrived: the send waits */
	EXPECT_EQ(0, tv_wait(self->f.fd[1], &e, 0, 1, 0));
	tv_recv_desc(&d0[0].desc, 0, 7, &back, 1, 20);
	pdesc(&d0[0], TORUS_PROG_NO_COUNTER, 0, TORUS_PROG_NO_COUNTER);
	tv_send_desc(&d0[1].desc, 1, 5, &s0, 1, 21);
	pdesc(&d0[1], TORUS_PROG_NO_COUNTER, 0, TORUS_PROG_NO_COUNTER);
	ASSERT_EQ(0, prog_post(self->f.fd[0], d0, 2, 0, 1000, 0, NULL));
	/* one of two receives done: still waiting */
	usleep(20000);
	EXPECT_EQ(0, tv_wait(self->f.fd[1], &e, 0, 1, 0));
	tv_send_desc(&d2[0].desc, 1, 6, &s2, 1, 30);
	pdesc(&d2[0], TORUS_PROG_NO_COUNTER, 0, TORUS_PROG_NO_COUNTER);
	ASSERT_EQ(0, prog_post(self->f.fd[2], d2, 1, 0, 1002, 0, NULL));

	ASSERT_EQ(1, tv_reap(self->f.fd[1], &e, 1));
	EXPECT_EQ(TORUS_OP_PROG, e.op);
	EXPECT_EQ(0, e.status);
	EXPECT_EQ(5, e.bytes); /* the two signals count as completed descriptors */
	/* the send started at the later receive's end (2 blocks), not at post */
	EXPECT_EQ(cost(1, 2 * BLOCK) + cost(1, 3 * BLOCK), e.t_end_ns);
	ASSERT_EQ(1, tv_reap(self->f.fd[0], &e, 1));
	EXPECT_EQ(0, e.status);
	EXPECT_EQ(cost(1, 2 * BLOCK) + cost(1, 3 * BLOCK), e.t_end_ns);
	ASSERT_EQ(1, tv_reap(self->f.fd[2], &e, 1));
	EXPECT_EQ(0, e.status);
	EXPECT_EQ(-1, tv_check(self->f.map[0] + 4 * BLOCK, BLOCK, 42));
	EXPECT_EQ(-1, tv_check(self->f.map[0] + 5 * BLOCK, 2 * BLOCK, 43));
}

TEST_F(prog, signal__a_malformed_signal_is_refused)
{
	struct torus_seg seg = { 0, 64 };
	struct torus_prog_desc d[2];
	struct torus_handshake h = { .size = sizeof(h) };
	__u32 idx;

	TV_SKIPPED();
	ASSERT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_HANDSHAKE, &h));
	if (!(h.features & TORUS_FEAT_PROG_SIGNAL))
		SKIP(return, "no TORUS_FEAT_PROG_SIGNAL");
	memset(d, 0, sizeof(d));
	tv_recv_desc(&d[0].desc, 1, 1, &seg, 1, 1);
	pdesc(&d[0], TORUS_PROG_NO_COUNTER, 0, 0);
	/* no signal counter */
	d[1].desc.op = TORUS_OP_SIGNAL;
	pdesc(&d[1], 0, 1, TORUS_PROG_NO_COUNTER);
	EXPECT_EQ(-EINVAL, prog_post(self->f.fd[1], d, 2, 2, 0, 0, &idx));
	EXPECT_EQ(1, idx);
	/* no wait counter */
	pdesc(&d[1], TORUS_PROG_NO_COUNTER, 0, 1);
	EXPECT_EQ(-EINVAL, prog_post(self->f.fd[1], d, 2, 2, 0, 0, &idx));
	EXPECT_EQ(1, idx);
	/* a segment on a signal */
	pdesc(&d[1], 0, 1, 1);
	d[1].desc.nsegs = 1;
	EXPECT_EQ(-EINVAL, prog_post(self->f.fd[1], d, 2, 2, 0, 0, &idx));
	EXPECT_EQ(1, idx);
	/* well formed: accepted, and the fd's close cancels it */
	d[1].desc.nsegs = 0;
	EXPECT_EQ(0, prog_post(self->f.fd[1], d, 2, 2, 0, 0, &idx));
}

TEST_F(prog, post__rejects_a_bad_program_whole)
{
	struct torus_prog_desc d[300];
	struct torus_seg seg = { .offset = 0, .length = 64 };
	struct torus_counters before, after;
	struct torus_prog_post pp;
	struct torus_cqe e;
	__u32 idx, i;

	TV_SKIPPED();
	memset(d, 0, sizeof(d));
	for (i = 0; i < 300; i++) {
		tv_recv_desc(&d[i].desc, 1, i, &seg, 1, i);
		pdesc(&d[i], TORUS_PROG_NO_COUNTER, 0, TORUS_PROG_NO_COUNTER);
	}
	ASSERT_EQ(0, tv_counters(self->ctl, self->f.id, 1, &before));

	EXPECT_EQ(-EINVAL, prog_post(self->f.fd[1], d, 0, 1, 0, 0, NULL));
	/* a cycle: 0 waits on counter 0, which only 1 (after it) signals */
	pdesc(&d[0], 0, 1, 1);
	pdesc(&d[1], 1, 1, 0);
	EXPECT_EQ(-EINVAL, prog_post(self->f.fd[1], d, 2, 2, 0, 0, &idx));
	EXPECT_EQ(0, idx);
	/* a threshold above what the descriptors before it signal */
	pdesc(&d[0], TORUS_PROG_NO_COUNTER, 0, 0);
	pdesc(&d[1], 0, 2, TORUS_PROG_NO_COUNTER);
	EXPECT_EQ(-EINVAL, prog_post(self->f.fd[1], d, 2, 1, 0, 0, &idx));
	EXPECT_EQ(1, idx);
	/* counters out of range, a threshold 0 on a counter, one without a counter */
	pdesc(&d[1], 1, 1, TORUS_PROG_NO_COUNTER);
	EXPECT_EQ(-EINVAL, prog_post(self->f.fd[1], d, 2, 1, 0, 0, &idx));
	pdesc(&d[1], TORUS_PROG_NO_COUNTER, 0, 1);
	EXPECT_EQ(-EINVAL, prog_post(self->f.fd[1], d, 2, 1, 0, 0, &idx));
	pdesc(&d[1], 0, 0, TORUS_PROG_NO_COUNTER);
	EXPECT_EQ(-EINVAL, prog_post(self->f.fd[1], d, 2, 1, 0, 0, &idx));
	pdesc(&d[1], TORUS_PROG_NO_COUNTER, 1, TORUS_PROG_NO_COUNTER);
	EXPECT_EQ(-EINVAL, prog_post(self->f.fd[1], d, 2, 1, 0, 0, &idx));
	d[1].__reserved = 1;
	pdesc(&d[1], TORUS_PROG_NO_COUNTER, 0, TORUS_PROG_NO_COUNTER);
	d[1].__reserved = 1;
	EXPECT_EQ(-EINVAL, prog_post(self->f.fd[1], d, 2, 1, 0, 0, &idx));
	EXPECT_EQ(1, idx);
	d[1].__reserved = 0;
	/* a bad descriptor late in the program: nothing before it is queued */
	d[1].desc.port = 99;
	EXPECT_EQ(-EINVAL, prog_post(self->f.fd[1], d, 2, 1, 0, 0, &idx));
	EXPECT_EQ(1, idx);
	d[1].desc.port = 1;
	/* fan-out: 299 descriptors wait on one counter */
	for (i = 1; i < 300; i++)
		pdesc(&d[i], 0, 1, TORUS_PROG_NO_COUNTER);
	EXPECT_EQ(-EINVAL, prog_post(self->f.fd[1], d, 300, 1, 0, 0, NULL));
	/* more receives than the port's queue holds: EAGAIN, before anything runs */
	for (i = 0; i < 300; i++)
		pdesc(&d[i], TORUS_PROG_NO_COUNTER, 0, TORUS_PROG_NO_COUNTER);
	EXPECT_EQ(-EAGAIN, prog_post(self->f.fd[1], d, 17, 0, 0, 0, NULL));
	/* sizes and limits */
	memset(&pp, 0, sizeof(pp));
	pp.size = sizeof(pp);
	pp.count = 1;
	pp.descs = (uintptr_t)d;
	pp.desc_size = sizeof(d[0]) - 4;
	EXPECT_EQ(-EINVAL, tv_ioctl(self->f.fd[1], TORUS_IOC_PROG_POST, &pp));
	pp.desc_size = sizeof(d[0]);
	pp.timeout_ns = ~0ULL;
	EXPECT_EQ(-EINVAL, tv_ioctl(self->f.fd[1], TORUS_IOC_PROG_POST, &pp));
	pp.timeout_ns = 0;
	pp.ncounters = ~0U;
	EXPECT_EQ(-EINVAL, tv_ioctl(self->f.fd[1], TORUS_IOC_PROG_POST, &pp));
	pp.ncounters = 0;
	pp.flags = TORUS_PROG_QUEUE_ONLY << 1;
	EXPECT_EQ(-EOPNOTSUPP, tv_ioctl(self->f.fd[1], TORUS_IOC_PROG_POST, &pp));
	pp.flags = 0;
	pp.descs = 0;
	EXPECT_EQ(-EFAULT, tv_ioctl(self->f.fd[1], TORUS_IOC_PROG_POST, &pp));

	/* nothing was queued or reserved: the node's counters did not move, no completion */
	ASSERT_EQ(0, tv_counters(self->ctl, self->f.id, 1, &after));
	EXPECT_EQ(before.node.posted, after.node.posted);
	EXPECT_EQ(0, tv_wait(self->f.fd[1], &e, 0, 1, 0));
	/* and the queue is whole: 16 receives fit */
	EXPECT_EQ(0, prog_post(self->f.fd[1], d, 16, 0, 5, 20000000, NULL));
	ASSERT_EQ(1, tv_reap(self->f.fd[1], &e, 1));
	EXPECT_EQ(TORUS_OP_PROG, e.op);
	EXPECT_EQ(-ETIMEDOUT, e.status);
}

TEST_F(prog, fail__a_failed_descriptor_reports_itself_and_fails_the_program)
{
	struct torus_link_fault lf = { .size = sizeof(lf) };
	struct torus_prog_desc d[2];
	struct torus_seg seg = { .offset = 0, .length = 64 };
	struct torus_cqe e[2];

	TV_SKIPPED();
	memset(d, 0, sizeof(d));
	lf.fabric_id = self->f.id;
	lf.node_id = 0;
	lf.port = 0;
	lf.flags = TORUS_FAULT_DOWN;
	ASSERT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_LINK_FAULT, &lf));
	/* 0 goes down a dead link; 1 would follow it */
	tv_send_desc(&d[0].desc, 1, 3, &seg, 1, 77);
	pdesc(&d[0], TORUS_PROG_NO_COUNTER, 0, 0);
	tv_send_desc(&d[1].desc, 1, 4, &seg, 1, 78);
	pdesc(&d[1], 0, 1, TORUS_PROG_NO_COUNTER);
	ASSERT_EQ(0, prog_post(self->f.fd[0], d, 2, 1, 9, 0, NULL));
	ASSERT_EQ(2, tv_reap(self->f.fd[0], e, 2));
	EXPECT_EQ(TORUS_OP_SEND, e[0].op);
	EXPECT_TRUE(e[0].flags & TORUS_CQE_PROG);
	EXPECT_EQ(-ENOLINK, e[0].status);
	EXPECT_EQ(77, e[0].user_data);
	EXPECT_EQ(TORUS_OP_PROG, e[1].op);
	EXPECT_EQ(-ENOLINK, e[1].status);
	EXPECT_EQ(9, e[1].user_data);
	EXPECT_EQ(0, e[1].peer);
	EXPECT_EQ(0, e[1].bytes);
	lf.flags = 0;
	ASSERT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_LINK_FAULT, &lf));
}

TEST_F(prog, timeout__fails_naming_the_waited_descriptor_and_frees_all)
{
	struct torus_prog_desc d[3];
	struct torus_seg seg = { .offset = 0, .length = 64 };
	struct torus_counters before, after;
	struct torus_cqe e;
	double t0;
	__u32 i;

	TV_SKIPPED();
	memset(d, 0, sizeof(d));
	ASSERT_EQ(0, tv_counters(self->ctl, self->f.id, 2, &before));
	/* a send that completes, a receive nobody sends to, a send waiting on it */
	tv_send_desc(&d[0].desc, 3, 1, &seg, 1, 0);
	pdesc(&d[0], TORUS_PROG_NO_COUNTER, 0, TORUS_PROG_NO_COUNTER);
	tv_recv_desc(&d[1].desc, 1, 2, &seg, 1, 0);
	pdesc(&d[1], TORUS_PROG_NO_COUNTER, 0, 0);
	tv_send_desc(&d[2].desc, 3, 3, &seg, 1, 0);
	pdesc(&d[2], 0, 1, TORUS_PROG_NO_COUNTER);
	t0 = tv_now();
	ASSERT_EQ(0, prog_post(self->f.fd[2], d, 3, 1, 11, 50000000, NULL));
	ASSERT_EQ(1, tv_reap(self->f.fd[2], &e, 1));
	EXPECT_LE(0.04, tv_now() - t0);
	EXPECT_EQ(TORUS_OP_PROG, e.op);
	EXPECT_EQ(-ETIMEDOUT, e.status);
	EXPECT_EQ(11, e.user_data);
	EXPECT_EQ(1, e.peer);	/* the receive it waited for */
	EXPECT_EQ(1, e.bytes);	/* the first send completed */
	ASSERT_EQ(0, tv_counters(self->ctl, self->f.id, 2, &after));
	EXPECT_EQ(after.node.posted, after.node.completed);
	/* its queue slots are back: a full queue of receives and of sends fits */
	for (i = 0; i < 3; i++)
		pdesc(&d[i], TORUS_PROG_NO_COUNTER, 0, TORUS_PROG_NO_COUNTER);
	{
		struct torus_prog_desc q[16];

		memset(q, 0, sizeof(q));
		for (i = 0; i < 16; i++) {
			tv_recv_desc(&q[i].desc, 1, 50 + i, &seg, 1, 0);
			pdesc(&q[i], TORUS_PROG_NO_COUNTER, 0, TORUS_PROG_NO_COUNTER);
		}
		ASSERT_EQ(0, prog_post(self->f.fd[2], q, 16, 0, 12, 20000000, NULL));
		ASSERT_EQ(1, tv_reap(self->f.fd[2], &e, 1));
		EXPECT_EQ(-ETIMEDOUT, e.status);
		EXPECT_EQ(0, e.peer);
	}
	/* node 3 got the first send's message, parked in its FIFO: drain it */
	tv_recv_desc(&d[0].desc, 1, 1, &seg, 1, 0);
	ASSERT_EQ(0, tv_post(self->f.fd[3], &d[0].desc, 1, NULL));
	ASSERT_EQ(1, tv_reap(self->f.fd[3], &e, 1));
	EXPECT_EQ(0, e.status);
}

static long vm_pin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* 1000 cycles: about 20 s on the stock kernel, more under KASAN on a loaded host */
TEST_F_TIMEOUT(prog, close__cancels_programs_and_gives_back_what_they_held, 240)
{
	static unsigned char buf[16 * 4096] __attribute__((aligned(4096)));
	struct torus_sge sge = { .key = 0, .offset = 0, .length = 4096 };
	struct torus_prog_desc d[2];
	struct torus_mr_reg r;
	struct torus_counters c;
	struct torus_cqe e;
	long pin0 = vm_pin_kb();
	int fd, k;

	TV_SKIPPED();
	memset(d, 0, sizeof(d));
	for (k = 0; k < 1000; k++) {
		fd = tv_node_open(self->f.id, 1);
		ASSERT_LE(0, fd);
		memset(&r, 0, sizeof(r));
		r.size = sizeof(r);
		r.addr = (uintptr_t)buf;
		r.length = sizeof(buf);
		r.flags = TORUS_MR_WRITE;
		ASSERT_EQ(0, tv_ioctl(fd, TORUS_IOC_MR_REG, &r));
		sge.key = r.key;
		/* a receive into pinned memory nobody sends to, a send waiting on it */
		tv_recv_desc(&d[0].desc, 1, 1000 + k, (struct torus_seg *)&sge, 1, 0);
		d[0].desc.flags = TORUS_DESC_SGE;
		pdesc(&d[0], TORUS_PROG_NO_COUNTER, 0, 0);
		tv_send_desc(&d[1].desc, 2, 1, (struct torus_seg *)&sge, 1, 0);
		d[1].desc.flags = TORUS_DESC_SGE;
		pdesc(&d[1], 0, 1, TORUS_PROG_NO_COUNTER);
		ASSERT_EQ(0, prog_post(fd, d, 2, 1, 0, 0, NULL));
		if (k == 0)
			EXPECT_LT(pin0, vm_pin_kb());
		ASSERT_EQ(0, close(fd));
		/* closed: its pages are unpinned already, nothing waits for a free */
		ASSERT_EQ(pin0, vm_pin_kb()) TH_LOG("cycle %d", k);
		/* the node stays open (the fixture's file): the cancel reaches its CQ */
		ASSERT_EQ(1, tv_wait(self->f.fd[1], &e, 0, 1, 0)) TH_LOG("cycle %d", k);
		ASSERT_EQ(TORUS_OP_PROG, e.op);
		ASSERT_EQ(-ECANCELED, e.status);
		ASSERT_EQ(0, e.peer);
	}
	ASSERT_EQ(0, tv_counters(self->ctl, self->f.id, 1, &c));
	EXPECT_EQ(c.node.posted, c.node.completed);
	EXPECT_EQ(0, tv_wait(self->f.fd[1], &e, 0, 1, 0));
}

/* Post on @fd a program that pins @buf: a receive nobody sends to, a send waiting on it. */
static int pin_prog(int fd, unsigned char *buf, size_t len, __u32 tag, __u32 *key)
{
	struct torus_sge sge = { .offset = 0, .length = 4096 };
	struct torus_prog_desc d[2];
	struct torus_mr_reg r = { .size = sizeof(r), .flags = TORUS_MR_WRITE };
	int ret;

	r.addr = (uintptr_t)buf;
	r.length = len;
	ret = tv_ioctl(fd, TORUS_IOC_MR_REG, &r);
	if (ret)
		return ret;
	*key = sge.key = r.key;
	memset(d, 0, sizeof(d));
	tv_recv_desc(&d[0].desc, 1, tag, (struct torus_seg *)&sge, 1, 0);
	d[0].desc.flags = TORUS_DESC_SGE;
	pdesc(&d[0], TORUS_PROG_NO_COUNTER, 0, 0);
	tv_send_desc(&d[1].desc, 2, 1, (struct torus_seg *)&sge, 1, 0);
	d[1].desc.flags = TORUS_DESC_SGE;
	pdesc(&d[1], 0, 1, TORUS_PROG_NO_COUNTER);
	return prog_post(fd, d, 2, 1, 77, 0, NULL);
}

/* VmPin back to @want within a second (the last unpin may be in a work item). */
static long pin_settles(long want)
{
	long kb = vm_pin_kb();

	for (int i = 0; i < 100 && kb != want; i++) {
		usleep(10000);
		kb = vm_pin_kb();
	}
	return kb;
}

TEST_F_TIMEOUT(prog, mr_dereg__cancels_the_programs_that_hold_it, 240)
{
	static unsigned char buf[4 * 4096] __attribute__((aligned(4096)));
	struct torus_sge sge = { .offset = 0, .length = 4096 };
	struct torus_mr_dereg dr = { .size = sizeof(dr) };
	struct torus_desc rd;
	struct torus_post post = { .size = sizeof(post), .count = 1, .desc_size = sizeof(rd) };
	struct torus_counters c;
	struct torus_cqe e;
	long pin0 = vm_pin_kb();
	__u32 key;
	int k;

	TV_SKIPPED();
	for (k = 0; k < 300; k++) {
		ASSERT_EQ(0, pin_prog(self->f.fd[1], buf, sizeof(buf), 5000 + k, &key)) TH_LOG("cycle %d", k);
		if (k == 0)
			EXPECT_LT(pin0, vm_pin_kb());
		dr.key = key;
		/* not EBUSY: the program holding it is cancelled first */
		ASSERT_EQ(0, tv_ioctl(self->f.fd[1], TORUS_IOC_MR_DEREG, &dr)) TH_LOG("cycle %d", k);
		ASSERT_EQ(1, tv_wait(self->f.fd[1], &e, 1, 1, 1000000000ULL)) TH_LOG("cycle %d", k);
		ASSERT_EQ(TORUS_OP_PROG, e.op);
		ASSERT_EQ(77, e.user_data);
		ASSERT_EQ(-ECANCELED, e.status);
		ASSERT_EQ(0, e.peer); /* the receive it still waited for */
		ASSERT_EQ(pin0, pin_settles(pin0)) TH_LOG("cycle %d", k);
	}
	ASSERT_EQ(0, tv_counters(self->ctl, self->f.id, 1, &c));
	EXPECT_EQ(c.node.posted, c.node.completed);

	/* a plain receive holding it: still EBUSY, nothing cancelled */
	ASSERT_EQ(0, pin_prog(self->f.fd[1], buf, sizeof(buf), 9000, &key));
	dr.key = key;
	ASSERT_EQ(0, tv_ioctl(self->f.fd[1], TORUS_IOC_MR_DEREG, &dr));
	ASSERT_EQ(1, tv_wait(self->f.fd[1], &e, 1, 1, 1000000000ULL));
	{
		struct torus_mr_reg r = { .size = sizeof(r), .flags = TORUS_MR_WRITE };

		r.addr = (uintptr_t)buf;
		r.length = sizeof(buf);
		ASSERT_EQ(0, tv_ioctl(self->f.fd[1], TORUS_IOC_MR_REG, &r));
		sge.key = r.key;
		tv_recv_desc(&rd, 1, 9999, (struct torus_seg *)&sge, 1, 0);
		rd.flags = TORUS_DESC_SGE;
		post.descs = (uintptr_t)&rd;
		ASSERT_EQ(0, tv_ioctl(self->f.fd[1], TORUS_IOC_POST, &post));
		dr.key = r.key;
		EXPECT_EQ(-EBUSY, tv_ioctl(self->f.fd[1], TORUS_IOC_MR_DEREG, &dr));
	}
}

TEST_F_TIMEOUT(prog, kill__cancels_programs_and_gives_back_what_they_held, 120)
{
	static unsigned char buf[4 * 4096] __attribute__((aligned(4096)));
	struct torus_counters c;
	struct torus_cqe e;
	int k;

	TV_SKIPPED();
	for (k = 0; k < 20; k++) {
		int pfd[2], st;
		char ok = 0;
		pid_t pid;

		ASSERT_EQ(0, pipe(pfd));
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			int fd = tv_node_open(self->f.id, 1);
			__u32 key;

			close(pfd[0]);
			ok = fd >= 0 && !pin_prog(fd, buf, sizeof(buf), 7000 + k, &key) && vm_pin_kb() > 0;
			if (write(pfd[1], &ok, 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		close(pfd[1]);
		ASSERT_EQ(1, read(pfd[0], &ok, 1));
		close(pfd[0]);
		ASSERT_EQ(1, ok) TH_LOG("cycle %d: the child could not post its program", k);
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		/* the fixture keeps the node open: the cancel reaches its CQ */
		ASSERT_EQ(1, tv_wait(self->f.fd[1], &e, 1, 1, 1000000000ULL)) TH_LOG("cycle %d", k);
		ASSERT_EQ(TORUS_OP_PROG, e.op);
		ASSERT_EQ(-ECANCELED, e.status);
	}
	ASSERT_EQ(0, tv_counters(self->ctl, self->f.id, 1, &c));
	EXPECT_EQ(c.node.posted, c.node.completed);
}

TV_MAIN
