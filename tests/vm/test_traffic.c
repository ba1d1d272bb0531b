// SPDX-License-Identifier: GPL-2.0
/*
 * torus.ko traffic: multi-hop routes along each dimension and across the
 * wrap-around with pass-through counted on the intermediate links, explicit
 * routes, the timing model (an isolated message costs ts + h*hop + m*tw,
 * messages sharing a link serialize, a message ready earlier fits before one
 * charged first, also on a full calendar without overlap, one-port nodes
 * serialize), tag matching and wildcards, length mismatch, epoll wake-ups,
 * and close during DMA.
 */
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/wait.h>

#include <kselftest_harness.h>

#include "torus_util.h"

#define TS_NS 1000
#define TW_PS 500
#define HOP_NS 50

/* The isolated cost of m bytes over h links with the fixture's parameters. */
static __u64 cost(__u32 h, __u64 m)
{
	return TS_NS + (__u64)h * HOP_NS + m * TW_PS / 1000;
}

FIXTURE(traffic)
{
	int ctl;
	struct tv_fabric f;
};

FIXTURE_SETUP(traffic)
{
	self->ctl = tv_ctl_open();
	if (self->ctl == -ENOENT)
		SKIP(return, "%s absent: torus.ko not loaded", TV_CTL_PATH);
	ASSERT_LE(0, self->ctl);
}

FIXTURE_TEARDOWN(traffic)
{
	tv_fabric_free(&self->f);
	if (self->ctl >= 0)
		close(self->ctl);
}

static int make_fabric(FIXTURE_DATA(traffic) *self, __u32 ndims, const __u32 *dims, __u32 wrap,
		       __u32 flags, __u64 matrix)
{
	struct torus_fabric_create c;

	tv_fabric_free(&self->f);
	tv_create_args(&c, ndims, dims, wrap, flags);
	c.matrix_bytes = matrix;
	c.ts_ns = TS_NS;
	c.tw_ps = TW_PS;
	c.hop_ns = HOP_NS;
	return tv_fabric_new(&self->f, self->ctl, &c);
}

/*
 * Send @m bytes from @src to @dst (default route, or @route when not NULL),
 * check every byte and both completions, and return the receive's cqe in @out.
 */
static void xfer(struct __test_metadata *_metadata, struct tv_fabric *f, __u32 src, __u32 dst,
		 const int *route, __u64 m, __u64 tag, struct torus_cqe *out)
{
	int hops[TORUS_MAX_DIMS];
	struct torus_seg sseg = { 0, m }, rseg = { f->matrix_bytes / 2, m };
	struct torus_desc s, r;
	struct torus_cqe e;
	long bad;

	if (route)
		memcpy(hops, route, sizeof(hops));
	else
		tv_route(f, src, dst, hops);
	tv_fill(f->map[src], m, tag);
	memset(f->map[dst] + rseg.offset, 0, m);
	tv_recv_desc(&r, tv_arrival_port(f, hops), tag, &rseg, 1, 0);
	ASSERT_EQ(0, tv_post(f->fd[dst], &r, 1, NULL));
	if (route)
		tv_route_desc(f, &s, dst, hops, tag, &sseg, 1, 0);
	else
		tv_send_desc(&s, dst, tag, &sseg, 1, 0);
	ASSERT_EQ(0, tv_post(f->fd[src], &s, 1, NULL));
	ASSERT_EQ(1, tv_reap(f->fd[src], &e, 1));
	EXPECT_EQ(0, e.status);
	EXPECT_EQ(tv_first_port(f, hops), e.port);
	ASSERT_EQ(1, tv_reap(f->fd[dst], out, 1));
	EXPECT_EQ(0, out->status);
	EXPECT_EQ(m, out->bytes);
	EXPECT_EQ(src, out->peer);
	EXPECT_EQ(tv_arrival_port(f, hops), out->port);
	EXPECT_EQ(e.t_start_ns, out->t_start_ns);
	EXPECT_EQ(e.t_end_ns, out->t_end_ns);
	bad = tv_check(f->map[dst] + rseg.offset, m, tag);
	EXPECT_EQ(-1, bad)
		TH_LOG("%u -> %u: byte %ld of %llu differs", src, dst, bad, (unsigned long long)m);
}

/* Counters of every link equal one message of @m bytes on the route's links, 0 elsewhere. */
static void check_route_counters(struct __test_metadata *_metadata, FIXTURE_DATA(traffic) *self,
				 __u32 src, __u32 dst, const int *hops, __u64 m)
{
	struct tv_fabric *f = &self->f;
	__u64 *expect = calloc(f->nodes * TORUS_MAX_PORTS, sizeof(*expect));
	struct torus_counters c;
	__u32 cur = src, d, n, p, h = 0;
	int k;

	ASSERT_NE(NULL, expect);
	for (d = 0; d < f->ndims; d++)
		for (k = 0; k < abs(hops[d]); k++) {
			p = 2 * d + (hops[d] < 0);
			expect[cur * TORUS_MAX_PORTS + p]++;
			cur = tv_neighbor(f, cur, p);
			ASSERT_NE(TORUS_NO_NODE, cur);
			h++;
		}
	ASSERT_EQ(dst, cur);
	for (n = 0; n < f->nodes; n++) {
		ASSERT_EQ(0, tv_counters(self->ctl, f->id, n, &c));
		for (p = 0; p < 2 * f->ndims; p++) {
			__u64 x = expect[n * TORUS_MAX_PORTS + p];

			EXPECT_EQ(x, c.links[p].messages)
				TH_LOG("%u -> %u: link of node %u port %u", src, dst, n, p);
			EXPECT_EQ(x * m, c.links[p].bytes)
				TH_LOG("%u -> %u: link of node %u port %u", src, dst, n, p);
			/* a message holds every link of its route for its whole duration */
			EXPECT_EQ(x * cost(h, m), c.links[p].busy_ns)
				TH_LOG("%u -> %u: busy time of node %u port %u", src, dst, n, p);
		}
	}
	/* reset the whole fabric's counters for the next message */
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = TORUS_COUNTERS_RESET;
	c.fabric_id = f->id;
	EXPECT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_COUNTERS, &c));
	free(expect);
}

struct pair {
	__u32 src, dst;
	int hops; /* links on the default route */
};

TEST_F_TIMEOUT(traffic, multihop__each_dimension_and_the_wrap_count_pass_through, 120)
{
	static const __u32 ring[1] = { 8 }, sq[2] = { 4, 4 }, cube[3] = { 3, 3, 3 };
	/* ring of 8: forward, backward, across the wrap both ways */
	static const struct pair rp[] = { { 0, 3, 3 }, { 5, 2, 3 }, { 6, 1, 3 }, { 1, 6, 3 }, { 0, 4, 4 } };
	/* 4x4 torus (node = 4*row + col): dim 0, dim 1, both, across the wraps */
	static const struct pair tp[] = { { 0, 8, 2 }, { 0, 2, 2 }, { 12, 4, 2 }, { 3, 1, 2 },
					  { 0, 15, 2 }, { 5, 15, 4 }, { 13, 6, 3 } };
	/* 3x3x3 torus: one hop per dimension, wraps in all three */
	static const struct pair cp[] = { { 0, 13, 3 }, { 26, 0, 3 }, { 0, 26, 3 } };
	int hops[TORUS_MAX_DIMS];
	struct torus_cqe e;
	unsigned int i;

	TV_SKIPPED();
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, 0, 1 << 20));
	for (i = 0; i < sizeof(rp) / sizeof(rp[0]); i++) {
		ASSERT_EQ(rp[i].hops, tv_route(&self->f, rp[i].src, rp[i].dst, hops));
		xfer(_metadata, &self->f, rp[i].src, rp[i].dst, NULL, 3000 + i, 100 + i, &e);
		check_route_counters(_metadata, self, rp[i].src, rp[i].dst, hops, 3000 + i);
	}
	ASSERT_EQ(0, make_fabric(self, 2, sq, 3, 0, 1 << 20));
	for (i = 0; i < sizeof(tp) / sizeof(tp[0]); i++) {
		ASSERT_EQ(tp[i].hops, tv_route(&self->f, tp[i].src, tp[i].dst, hops));
		xfer(_metadata, &self->f, tp[i].src, tp[i].dst, NULL, 5000 + i, 200 + i, &e);
		check_route_counters(_metadata, self, tp[i].src, tp[i].dst, hops, 5000 + i);
	}
	ASSERT_EQ(0, make_fabric(self, 3, cube, 7, 0, 1 << 20));
	for (i = 0; i < sizeof(cp) / sizeof(cp[0]); i++) {
		ASSERT_EQ(cp[i].hops, tv_route(&self->f, cp[i].src, cp[i].dst, hops));
		xfer(_metadata, &self->f, cp[i].src, cp[i].dst, NULL, 777 + i, 300 + i, &e);
		check_route_counters(_metadata, self, cp[i].src, cp[i].dst, hops, 777 + i);
	}
}

TEST_F_TIMEOUT(traffic, route__explicit_long_way_round_and_mesh_paths, 120)
{
	static const __u32 ring[1] = { 8 }, sq[2] = { 4, 4 };
	int hops[TORUS_MAX_DIMS] = { 0 };
	struct torus_cqe e;

	TV_SKIPPED();
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, 0, 1 << 20));
	hops[0] = -7; /* 0 -> 1 the long way: 7 links */
	xfer(_metadata, &self->f, 0, 1, hops, 2048, 1, &e);
	check_route_counters(_metadata, self, 0, 1, hops, 2048);
	EXPECT_EQ(cost(7, 2048), e.t_end_ns - e.t_start_ns);
	hops[0] = 4; /* the tie on an even ring, taken the other way */
	xfer(_metadata, &self->f, 2, 6, hops, 2048, 2, &e);
	check_route_counters(_metadata, self, 2, 6, hops, 2048);
	hops[0] = -4;
	xfer(_metadata, &self->f, 2, 6, hops, 2048, 3, &e);
	check_route_counters(_metadata, self, 2, 6, hops, 2048);
	/* a mesh: corner to corner, no wrap */
	ASSERT_EQ(0, make_fabric(self, 2, sq, 0, 0, 1 << 20));
	ASSERT_EQ(6, tv_route(&self->f, 0, 15, hops));
	xfer(_metadata, &self->f, 0, 15, NULL, 4096, 4, &e);
	check_route_counters(_metadata, self, 0, 15, hops, 4096);
	ASSERT_EQ(6, tv_route(&self->f, 15, 0, hops));
	xfer(_metadata, &self->f, 15, 0, NULL, 4096, 5, &e);
	check_route_counters(_metadata, self, 15, 0, hops, 4096);
}

TEST_F(traffic, timing__isolated_message_costs_ts_plus_hops_plus_bytes)
{
	static const __u32 ring[1] = { 8 };
	struct torus_fabric_query q;
	struct torus_node_query nq;
	struct torus_cqe e;
	__u64 last = 0;
	__u32 h;

	TV_SKIPPED();
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, 0, 1 << 20));
	/* node 0 to 1, 2, 3, 4 hops away; each starts at the sender's clock */
	for (h = 1; h <= 4; h++) {
		__u64 m = 1000 * h + 24;

		xfer(_metadata, &self->f, 0, h, NULL, m, h, &e);
		EXPECT_EQ(cost(h, m), e.t_end_ns - e.t_start_ns)
			TH_LOG("%u hops, %llu bytes: %llu ns", h, (unsigned long long)m,
			       (unsigned long long)(e.t_end_ns - e.t_start_ns));
		if (h == 1)
			EXPECT_EQ(0, e.t_start_ns);
		/* node 0 reaped the previous send: its clock moved to that end */
		EXPECT_EQ(last, e.t_start_ns);
		last = e.t_end_ns;
	}
	memset(&nq, 0, sizeof(nq));
	nq.size = sizeof(nq);
	ASSERT_EQ(0, tv_ioctl(self->f.fd[0], TORUS_IOC_NODE_QUERY, &nq));
	EXPECT_EQ(last, nq.clock_ns);
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.fabric_id = self->f.id;
	ASSERT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_QUERY, &q));
	EXPECT_EQ(last, q.makespan_ns);
	EXPECT_EQ(TS_NS, q.ts_ns);
	EXPECT_EQ(TW_PS, q.tw_ps);
	EXPECT_EQ(HOP_NS, q.hop_ns);
}

/* Post two sends at once and reap: their virtual intervals in @a and @b. */
static void two_sends(struct __test_metadata *_metadata, struct tv_fabric *f, __u32 s1, __u32 d1,
		      __u32 s2, __u32 d2, __u64 m, struct torus_cqe *a, struct torus_cqe *b)
{
	int h1[TORUS_MAX_DIMS], h2[TORUS_MAX_DIMS];
	struct torus_seg seg1 = { 0, m }, seg2 = { m, m };
	struct torus_seg r1 = { f->matrix_bytes / 2, m }, r2 = { f->matrix_bytes / 2 + m, m };
	struct torus_desc x;
	struct torus_cqe e[2];
	int n;

	tv_route(f, s1, d1, h1);
	tv_route(f, s2, d2, h2);
	tv_fill(f->map[s1], m, 11);
	tv_fill(f->map[s2] + m, m, 22);
	tv_recv_desc(&x, tv_arrival_port(f, h1), 11, &r1, 1, 0);
	ASSERT_EQ(0, tv_post(f->fd[d1], &x, 1, NULL));
	tv_recv_desc(&x, tv_arrival_port(f, h2), 22, &r2, 1, 0);
	ASSERT_EQ(0, tv_post(f->fd[d2], &x, 1, NULL));
	if (s1 == s2) {
		struct torus_desc two[2];

		tv_send_desc(&two[0], d1, 11, &seg1, 1, 1);
		tv_send_desc(&two[1], d2, 22, &seg2, 1, 2);
		ASSERT_EQ(0, tv_post(f->fd[s1], two, 2, NULL));
		ASSERT_EQ(2, tv_reap(f->fd[s1], e, 2));
		*a = e[0].user_data == 1 ? e[0] : e[1];
		*b = e[0].user_data == 1 ? e[1] : e[0];
	} else {
		tv_send_desc(&x, d1, 11, &seg1, 1, 1);
		ASSERT_EQ(0, tv_post(f->fd[s1], &x, 1, NULL));
		tv_send_desc(&x, d2, 22, &seg2, 1, 2);
		ASSERT_EQ(0, tv_post(f->fd[s2], &x, 1, NULL));
		ASSERT_EQ(1, tv_reap(f->fd[s1], a, 1));
		ASSERT_EQ(1, tv_reap(f->fd[s2], b, 1));
	}
	EXPECT_EQ(0, a->status);
	EXPECT_EQ(0, b->status);
	/* receivers: both messages arrive intact */
	n = d1 == d2 ? 2 : 1;
	ASSERT_EQ(n, tv_reap(f->fd[d1], e, n));
	if (d1 != d2)
		ASSERT_EQ(1, tv_reap(f->fd[d2], e, 1));
	EXPECT_EQ(-1, tv_check(f->map[d1] + r1.offset, m, 11));
	EXPECT_EQ(-1, tv_check(f->map[d2] + r2.offset, m, 22));
}

static int overlap(const struct torus_cqe *a, const struct torus_cqe *b)
{
	__u64 s = a->t_start_ns > b->t_start_ns ? a->t_start_ns : b->t_start_ns;
	__u64 e = a->t_end_ns < b->t_end_ns ? a->t_end_ns : b->t_end_ns;

	return s < e;
}

TEST_F(traffic, timing__messages_sharing_a_link_serialize)
{
	static const __u32 ring[1] = { 8 };
	struct torus_cqe a, b;

	TV_SKIPPED();
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, 0, 1 << 20));
	/* 0 -> 2 and 1 -> 2 both need the link 1 -> 2 */
	two_sends(_metadata, &self->f, 0, 2, 1, 2, 8192, &a, &b);
	EXPECT_FALSE(overlap(&a, &b))
		TH_LOG("[%llu,%llu] and [%llu,%llu] overlap", (unsigned long long)a.t_start_ns,
		       (unsigned long long)a.t_end_ns, (unsigned long long)b.t_start_ns,
		       (unsigned long long)b.t_end_ns);
	EXPECT_EQ(cost(2, 8192), a.t_end_ns - a.t_start_ns);
	EXPECT_EQ(cost(1, 8192), b.t_end_ns - b.t_start_ns);
	/* the later one starts exactly when the earlier one frees the link */
	EXPECT_TRUE(a.t_start_ns == b.t_end_ns || b.t_start_ns == a.t_end_ns);
	/* control: 4 -> 5 and 6 -> 7 share nothing and run at the same time */
	two_sends(_metadata, &self->f, 4, 5, 6, 7, 8192, &a, &b);
	EXPECT_TRUE(overlap(&a, &b));
	EXPECT_EQ(a.t_start_ns, b.t_start_ns);
}

/*
 * Node 1's clock runs ahead (it sent 64 KiB to 7 and reaped that): its
 * message over the link 1 -> 2 is charged first in wall-clock order but
 * starts at @ahead, late in virtual time. Returns that message's cqe in @e.
 */
static void run_ahead(struct __test_metadata *_metadata, struct tv_fabric *f, __u64 *ahead,
		      struct torus_cqe *e)
{
	xfer(_metadata, f, 1, 7, NULL, 65536, 1, e);
	*ahead = e->t_end_ns;
	xfer(_metadata, f, 1, 2, NULL, 8192, 2, e);
	EXPECT_EQ(*ahead, e->t_start_ns);
}

/* A link serves messages in virtual-time order where they fit, not in charging order. */
TEST_F(traffic, timing__an_earlier_message_fits_before_one_charged_first)
{
	static const __u32 ring[1] = { 8 };
	struct torus_counters c;
	struct torus_cqe late, early, next;
	__u64 ahead;

	TV_SKIPPED();
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, 0, 1 << 20));
	run_ahead(_metadata, &self->f, &ahead, &late);
	ASSERT_EQ(cost(2, 65536), ahead);
	/* 0 -> 1 -> 2, ready at 0: the link 1 -> 2 is free until @ahead */
	xfer(_metadata, &self->f, 0, 2, NULL, 8192, 3, &early);
	EXPECT_EQ(0, early.t_start_ns);
	EXPECT_EQ(cost(2, 8192), early.t_end_ns);
	/* 6 -> 7 -> 0 -> 1 -> 2, ready at 0: after @early, still before @late */
	xfer(_metadata, &self->f, 6, 2, NULL, 8192, 4, &next);
	EXPECT_EQ(early.t_end_ns, next.t_start_ns);
	EXPECT_GE(late.t_start_ns, next.t_end_ns);
	/* the link 1 -> 2 carried three messages and delayed one, @next */
	ASSERT_EQ(0, tv_counters(self->ctl, self->f.id, 1, &c));
	EXPECT_EQ(3, c.links[0].messages);
	EXPECT_EQ(1, c.links[0].stalls);
	EXPECT_EQ(cost(1, 8192) + cost(2, 8192) + cost(4, 8192), c.links[0].busy_ns);
}

/*
 * Node 1 alternates 64 KiB to 7 (through 0) and 1 KiB to 2: its link 1 -> 2 is taken at
 * 20 intervals with gaps between them, more than a link's calendar keeps. A
 * message from 0 to 2 ready at 0 lands in one of those gaps (the first the
 * calendar still knows of), overlapping none of the 20.
 */
TEST_F(traffic, timing__a_full_calendar_still_never_overlaps)
{
	static const __u32 ring[1] = { 8 };
	struct torus_cqe e, held[20], m;
	bool in_gap = false;
	int i;

	TV_SKIPPED();
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, 0, 1 << 20));
	for (i = 0; i < 20; i++) {
		xfer(_metadata, &self->f, 1, 7, NULL, 65536, 100 + i, &e);
		xfer(_metadata, &self->f, 1, 2, NULL, 1024, 200 + i, &held[i]);
	}
	xfer(_metadata, &self->f, 0, 2, NULL, 1024, 300, &m);
	for (i = 0; i < 20; i++) {
		EXPECT_FALSE(overlap(&m, &held[i]))
			TH_LOG("[%llu,%llu] overlaps message %d's [%llu,%llu]",
			       (unsigned long long)m.t_start_ns, (unsigned long long)m.t_end_ns, i,
			       (unsigned long long)held[i].t_start_ns,
			       (unsigned long long)held[i].t_end_ns);
		in_gap |= i < 19 && m.t_start_ns == held[i].t_end_ns;
	}
	EXPECT_TRUE(in_gap) TH_LOG("starts at %llu", (unsigned long long)m.t_start_ns);
}

/* One-port: a receive engine, too, serves an earlier message first where it fits. */
TEST_F(traffic, timing__one_port_engines_fit_an_earlier_message_before)
{
	static const __u32 ring[1] = { 8 };
	struct torus_cqe late, early, next;
	__u64 ahead;

	TV_SKIPPED();
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, TORUS_FABRIC_ONE_PORT, 1 << 20));
	run_ahead(_metadata, &self->f, &ahead, &late);
	/* 3 -> 2 shares only node 2's receive engine with @late */
	xfer(_metadata, &self->f, 3, 2, NULL, 8192, 3, &early);
	EXPECT_EQ(0, early.t_start_ns);
	/* 4 -> 3 -> 2 shares the link 3 -> 2 with @early and the receive engine with both */
	xfer(_metadata, &self->f, 4, 2, NULL, 8192, 4, &next);
	EXPECT_EQ(early.t_end_ns, next.t_start_ns);
	EXPECT_GE(late.t_start_ns, next.t_end_ns);
}

TEST_F(traffic, timing__one_port_nodes_serialize_all_port_nodes_do_not)
{
	static const __u32 ring[1] = { 8 };
	struct torus_fabric_query q;
	struct torus_cqe a, b;

	TV_SKIPPED();
	/* all-port: node 0 sends to 1 and 7 (two ports) at the same time */
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, 0, 1 << 20));
	two_sends(_metadata, &self->f, 0, 1, 0, 7, 8192, &a, &b);
	EXPECT_TRUE(overlap(&a, &b));
	/* node 3 receives from 2 and 4 at the same time */
	two_sends(_metadata, &self->f, 2, 3, 4, 3, 8192, &a, &b);
	EXPECT_TRUE(overlap(&a, &b));
	/* one-port: the same sends and receives take turns */
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, TORUS_FABRIC_ONE_PORT, 1 << 20));
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.fabric_id = self->f.id;
	ASSERT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_QUERY, &q));
	EXPECT_EQ(TORUS_FABRIC_ONE_PORT, q.fabric_flags);
	two_sends(_metadata, &self->f, 0, 1, 0, 7, 8192, &a, &b);
	EXPECT_FALSE(overlap(&a, &b));
	EXPECT_EQ(cost(1, 8192), a.t_end_ns - a.t_start_ns);
	EXPECT_EQ(cost(1, 8192), b.t_end_ns - b.t_start_ns);
	two_sends(_metadata, &self->f, 2, 3, 4, 3, 8192, &a, &b);
	EXPECT_FALSE(overlap(&a, &b));
}

TEST_F(traffic, tags__match_in_order_and_wildcards_take_any)
{
	static const __u32 ring[1] = { 4 };
	struct tv_fabric *f;
	struct torus_seg sa = { 0, 1000 }, sb = { 4096, 1000 };
	struct torus_seg ra = { 65536, 1000 }, rb = { 65536 + 4096, 1000 }, rw = { 65536 + 8192, 1000 };
	struct torus_desc x[2];
	struct torus_cqe e[2];
	int i;

	TV_SKIPPED();
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, 0, 1 << 20));
	f = &self->f;
	tv_fill(f->map[0], 1000, 0xa);
	tv_fill(f->map[0] + 4096, 1000, 0xb);
	/* node 1 waits for tag 0xa then 0xb; node 0 sends 0xb first */
	tv_recv_desc(&x[0], 1, 0xa, &ra, 1, 0xa);
	tv_recv_desc(&x[1], 1, 0xb, &rb, 1, 0xb);
	ASSERT_EQ(0, tv_post(f->fd[1], x, 2, NULL));
	tv_send_desc(&x[0], 1, 0xb, &sb, 1, 0);
	tv_send_desc(&x[1], 1, 0xa, &sa, 1, 0);
	ASSERT_EQ(0, tv_post(f->fd[0], x, 2, NULL));
	ASSERT_EQ(2, tv_reap(f->fd[0], e, 2));
	ASSERT_EQ(2, tv_reap(f->fd[1], e, 2));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, e[i].status);
		EXPECT_EQ(e[i].user_data, e[i].tag);
	}
	EXPECT_EQ(-1, tv_check(f->map[1] + ra.offset, 1000, 0xa));
	EXPECT_EQ(-1, tv_check(f->map[1] + rb.offset, 1000, 0xb));
	/* a wildcard receive takes any tag and reports it */
	memset(f->map[1] + rw.offset, 0, 1000);
	tv_recv_desc(&x[0], 1, 0, &rw, 1, 7);
	x[0].flags = TORUS_RECV_ANY_TAG;
	ASSERT_EQ(0, tv_post(f->fd[1], x, 1, NULL));
	tv_send_desc(&x[0], 1, 0x1234567890ULL, &sb, 1, 0);
	ASSERT_EQ(0, tv_post(f->fd[0], x, 1, NULL));
	ASSERT_EQ(1, tv_reap(f->fd[0], e, 1));
	ASSERT_EQ(1, tv_reap(f->fd[1], e, 1));
	EXPECT_EQ(0, e[0].status);
	EXPECT_EQ(7, e[0].user_data);
	EXPECT_EQ(0x1234567890ULL, e[0].tag);
	EXPECT_EQ(-1, tv_check(f->map[1] + rw.offset, 1000, 0xb));
	/* a message that arrives first waits for its receive */
	tv_send_desc(&x[0], 1, 0xc, &sa, 1, 0);
	ASSERT_EQ(0, tv_post(f->fd[0], x, 1, NULL));
	usleep(100000);
	EXPECT_EQ(0, tv_wait(f->fd[1], e, 0, 2, 0));
	memset(f->map[1] + ra.offset, 0, 1000);
	tv_recv_desc(&x[0], 1, 0xc, &ra, 1, 0xc);
	ASSERT_EQ(0, tv_post(f->fd[1], x, 1, NULL));
	ASSERT_EQ(1, tv_reap(f->fd[1], e, 1));
	EXPECT_EQ(0, e[0].status);
	EXPECT_EQ(-1, tv_check(f->map[1] + ra.offset, 1000, 0xa));
	ASSERT_EQ(1, tv_reap(f->fd[0], e, 1));
	EXPECT_EQ(0, e[0].status);
}

TEST_F(traffic, length_mismatch__is_emsgsize_not_truncation)
{
	static const __u32 ring[1] = { 4 };
	struct tv_fabric *f;
	struct torus_seg s = { 0, 2000 }, r = { 65536, 1000 };
	struct torus_desc x;
	struct torus_cqe e;

	TV_SKIPPED();
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, 0, 1 << 20));
	f = &self->f;
	tv_fill(f->map[0], 2000, 3);
	memset(f->map[1] + r.offset, 0, 2000);
	tv_recv_desc(&x, 1, 9, &r, 1, 0);
	ASSERT_EQ(0, tv_post(f->fd[1], &x, 1, NULL));
	tv_send_desc(&x, 1, 9, &s, 1, 0);
	ASSERT_EQ(0, tv_post(f->fd[0], &x, 1, NULL));
	ASSERT_EQ(1, tv_reap(f->fd[1], &e, 1));
	EXPECT_EQ(-EMSGSIZE, e.status);
	ASSERT_EQ(1, tv_reap(f->fd[0], &e, 1));
	/* the receive was waiting: the send completes with it too */
	EXPECT_EQ(-EMSGSIZE, e.status);
	/* nothing past the receive's segment was written */
	EXPECT_EQ(0, f->map[1][r.offset + 1000]);
	/* no receive yet: the message parks in the FIFO and its send completes
	 * with 0; the receive posted later gets -EMSGSIZE and nothing */
	tv_send_desc(&x, 1, 10, &s, 1, 0);
	ASSERT_EQ(0, tv_post(f->fd[0], &x, 1, NULL));
	ASSERT_EQ(1, tv_reap(f->fd[0], &e, 1));
	EXPECT_EQ(0, e.status);
	tv_recv_desc(&x, 1, 10, &r, 1, 0);
	ASSERT_EQ(0, tv_post(f->fd[1], &x, 1, NULL));
	ASSERT_EQ(1, tv_reap(f->fd[1], &e, 1));
	EXPECT_EQ(-EMSGSIZE, e.status);
	EXPECT_EQ(0, f->map[1][r.offset]);
	EXPECT_EQ(0, f->map[1][r.offset + 1000]);
}

TEST_F(traffic, gather_scatter__segments_in_order)
{
	static const __u32 ring[1] = { 4 };
	struct tv_fabric *f;
	struct torus_seg s[3] = { { 8192, 100 }, { 0, 3000 }, { 20000, 1 } };
	struct torus_seg r[2] = { { 100000, 3001 }, { 70000, 100 } };
	unsigned char ref[3101];
	struct torus_desc x;
	struct torus_cqe e;

	TV_SKIPPED();
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, 0, 1 << 20));
	f = &self->f;
	tv_fill(f->map[2], 1 << 20, 5);
	memcpy(ref, f->map[2] + 8192, 100);
	memcpy(ref + 100, f->map[2], 3000);
	memcpy(ref + 3100, f->map[2] + 20000, 1);
	tv_recv_desc(&x, 0, 1, r, 2, 0); /* node 1 gets it from node 2 on port 0 */
	ASSERT_EQ(0, tv_post(f->fd[1], &x, 1, NULL));
	tv_send_desc(&x, 1, 1, s, 3, 0);
	ASSERT_EQ(0, tv_post(f->fd[2], &x, 1, NULL));
	ASSERT_EQ(1, tv_reap(f->fd[1], &e, 1));
	EXPECT_EQ(0, e.status);
	EXPECT_EQ(3101, e.bytes);
	EXPECT_EQ(0, memcmp(f->map[1] + 100000, ref, 3001));
	EXPECT_EQ(0, memcmp(f->map[1] + 70000, ref + 3001, 100));
	ASSERT_EQ(1, tv_reap(f->fd[2], &e, 1));
}

struct waiter {
	int epfd;
	int n;
	__u32 events;
	double waited;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	struct epoll_event ev;
	double t0 = tv_now();

	w->n = epoll_wait(w->epfd, &ev, 1, 20000);
	w->events = w->n > 0 ? ev.events : 0;
	w->waited = tv_now() - t0;
	return NULL;
}

TEST_F(traffic, epoll__wakes_a_waiter_on_completion)
{
	static const __u32 ring[1] = { 4 };
	struct epoll_event ev = { .events = EPOLLIN };
	struct torus_seg seg = { 0, 512 };
	struct waiter w = { 0 };
	struct tv_fabric *f;
	struct torus_desc x;
	struct torus_cqe e;
	pthread_t th;

	TV_SKIPPED();
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, 0, 1 << 20));
	f = &self->f;
	w.epfd = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, w.epfd);
	ASSERT_EQ(0, epoll_ctl(w.epfd, EPOLL_CTL_ADD, f->fd[1], &ev));
	/* nothing to reap: not ready */
	EXPECT_EQ(0, epoll_wait(w.epfd, &ev, 1, 0));
	ASSERT_EQ(0, pthread_create(&th, NULL, wait_thread, &w));
	usleep(300000);
	tv_fill(f->map[0], 512, 4);
	tv_recv_desc(&x, 1, 4, &seg, 1, 0);
	ASSERT_EQ(0, tv_post(f->fd[1], &x, 1, NULL));
	tv_send_desc(&x, 1, 4, &seg, 1, 0);
	ASSERT_EQ(0, tv_post(f->fd[0], &x, 1, NULL));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(1, w.n);
	EXPECT_TRUE(w.events & EPOLLIN);
	EXPECT_LT(0.2, w.waited);
	EXPECT_GT(15.0, w.waited);
	ASSERT_EQ(1, tv_reap(f->fd[1], &e, 1));
	EXPECT_EQ(-1, tv_check(f->map[1], 512, 4));
	/* reaped: not ready any more */
	EXPECT_EQ(0, epoll_wait(w.epfd, &ev, 1, 0));
	close(w.epfd);
}

TEST_F_TIMEOUT(traffic, close__during_dma_cancels_and_fabric_can_go, 120)
{
	static const __u32 ring[1] = { 4 };
	struct tv_fabric *f;
	struct torus_seg seg[64];
	struct torus_desc x[64];
	__u32 i, n;
	int ret = -EBUSY, tries;
	pid_t pid;
	int status;

	TV_SKIPPED();
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, 0, 4 << 20));
	f = &self->f;
	/* node 0 floods node 1 with 64 x 64 KiB; node 1 receives half; node 3 sends to 2 unmatched */
	for (i = 0; i < 64; i++) {
		seg[i].offset = (i % 32) * 65536;
		seg[i].length = 65536;
		tv_send_desc(&x[i], 1, i, &seg[i], 1, i);
	}
	ASSERT_EQ(0, tv_post(f->fd[0], x, 64, NULL));
	for (i = 0; i < 32; i++)
		tv_recv_desc(&x[i], 1, i, &seg[i], 1, i);
	ASSERT_EQ(0, tv_post(f->fd[1], x, 32, NULL));
	for (i = 0; i < 16; i++)
		tv_send_desc(&x[i], 2, 1000 + i, &seg[i], 1, i);
	ASSERT_EQ(0, tv_post(f->fd[3], x, 16, NULL));
	/* a child process posts on node 2 and exits without reaping */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		for (i = 0; i < 16; i++)
			tv_recv_desc(&x[i], 0, 5000 + i, &seg[i], 1, i);
		_exit(tv_post(f->fd[2], x, 16, NULL) ? 1 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* close everything at once, mid-flight */
	tv_fabric_close_nodes(f);
	for (tries = 0; tries < 500; tries++) {
		ret = tv_destroy(self->ctl, f->id);
		if (ret != -EBUSY)
			break;
		usleep(10000);
	}
	EXPECT_EQ(0, ret);
	/* the fabric is gone and a new one works */
	free(f->fd);
	free(f->map);
	free(f->q);
	memset(f, 0, sizeof(*f));
	ASSERT_EQ(0, make_fabric(self, 1, ring, 1, 0, 1 << 20));
	for (n = 0; n < 4; n++) {
		struct torus_cqe e;

		xfer(_metadata, &self->f, n, (n + 1) % 4, NULL, 4096, n, &e);
	}
}

TV_MAIN
