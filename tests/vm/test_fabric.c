// SPDX-License-Identifier: GPL-2.0
/*
 * torus.ko fabrics, per shape (FIXTURE_VARIANT): a ring of 8, a 4x4 torus, a
 * 4x4 mesh, a 3x3x3 torus and a 2x4 torus (a size-2 dimension). Create,
 * query, neighbours, a message over every port of every node with every byte
 * checked, all ports of all nodes at once with the link counters equal to the
 * bytes sent, EBUSY while open, and create/destroy cycles.
 */
#include <sys/stat.h>

#include <kselftest_harness.h>

#include "torus_util.h"

#define MSG 4096 /* bytes per message */

FIXTURE(fabric)
{
	int ctl;
	struct tv_fabric f;
};

FIXTURE_VARIANT(fabric)
{
	__u32 ndims;
	__u32 dims[TORUS_MAX_DIMS];
	__u32 wrap;
};

FIXTURE_VARIANT_ADD(fabric, ring8)
{
	.ndims = 1, .dims = { 8 }, .wrap = 1,
};

FIXTURE_VARIANT_ADD(fabric, torus4x4)
{
	.ndims = 2, .dims = { 4, 4 }, .wrap = 3,
};

FIXTURE_VARIANT_ADD(fabric, mesh4x4)
{
	.ndims = 2, .dims = { 4, 4 }, .wrap = 0,
};

FIXTURE_VARIANT_ADD(fabric, torus3x3x3)
{
	.ndims = 3, .dims = { 3, 3, 3 }, .wrap = 7,
};

FIXTURE_VARIANT_ADD(fabric, torus2x4)
{
	.ndims = 2, .dims = { 2, 4 }, .wrap = 3,
};

FIXTURE_SETUP(fabric)
{
	struct torus_fabric_create c;

	self->ctl = tv_ctl_open();
	if (self->ctl == -ENOENT)
		SKIP(return, "%s absent: torus.ko not loaded", TV_CTL_PATH);
	ASSERT_LE(0, self->ctl);
	tv_create_args(&c, variant->ndims, variant->dims, variant->wrap, 0);
	c.matrix_bytes = 4 * TORUS_MAX_PORTS * MSG;
	ASSERT_EQ(0, tv_fabric_new(&self->f, self->ctl, &c));
}

FIXTURE_TEARDOWN(fabric)
{
	tv_fabric_free(&self->f);
	if (self->ctl >= 0)
		close(self->ctl);
}

/* Tag of the message leaving @src on @port. */
static __u64 msg_tag(__u32 src, __u32 port)
{
	return ((__u64)src << 8) | port | (0xabcdULL << 32);
}

TEST_F(fabric, create__query_reports_the_shape_and_neighbours)
{
	const struct tv_fabric *f = &self->f;
	struct torus_fabric_query q;
	__u32 n, d, p, expect = 1;
	char path[96];
	struct stat st;

	TV_SKIPPED();
	for (d = 0; d < variant->ndims; d++)
		expect *= variant->dims[d];
	EXPECT_EQ(expect, f->nodes);
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.fabric_id = f->id;
	ASSERT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_QUERY, &q));
	EXPECT_EQ(variant->ndims, q.ndims);
	EXPECT_EQ(variant->wrap, q.wrap_mask);
	EXPECT_EQ(0, memcmp(variant->dims, q.dims, sizeof(q.dims)));
	EXPECT_EQ(expect, q.nodes);
	EXPECT_EQ(expect, q.open_nodes);
	EXPECT_EQ(4 * TORUS_MAX_PORTS * MSG, q.matrix_bytes);
	EXPECT_EQ(0, q.makespan_ns);
	/* the same from a node device, which fills in the fabric id */
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	ASSERT_EQ(0, tv_ioctl(f->fd[0], TORUS_IOC_FABRIC_QUERY, &q));
	EXPECT_EQ(f->id, q.fabric_id);
	EXPECT_EQ(expect, q.nodes);
	for (n = 0; n < f->nodes; n++) {
		const struct torus_node_query *nq = &f->q[n];

		tv_node_path(path, sizeof(path), f->id, n);
		EXPECT_EQ(0, stat(path, &st));
		EXPECT_TRUE(S_ISCHR(st.st_mode));
		EXPECT_EQ(f->id, nq->fabric_id);
		EXPECT_EQ(n, nq->node_id);
		EXPECT_EQ(variant->ndims, nq->ndims);
		EXPECT_EQ(variant->wrap, nq->wrap_mask);
		for (d = 0; d < variant->ndims; d++)
			EXPECT_EQ(tv_coord(f, n, d), nq->coords[d]);
		for (p = 0; p < 2 * variant->ndims; p++)
			EXPECT_EQ(tv_neighbor(f, n, p), nq->neighbors[p])
				TH_LOG("node %u port %u", n, p);
		for (; p < TORUS_MAX_PORTS; p++)
			EXPECT_EQ(TORUS_NO_NODE, nq->neighbors[p]);
		EXPECT_EQ(0, nq->clock_ns);
	}
}

/* One message from @src out of @port to its neighbour, every byte checked. */
static int one_link(struct __test_metadata *_metadata, struct tv_fabric *f, __u32 src, __u32 port)
{
	__u32 dst = tv_neighbor(f, src, port), d = port / 2;
	int hops[TORUS_MAX_DIMS] = { 0 };
	struct torus_seg sseg = { port * MSG, MSG }, rseg = { (TORUS_MAX_PORTS + port) * MSG, MSG };
	struct torus_desc s, r;
	struct torus_cqe e;
	__u64 tag = msg_tag(src, port);
	long bad;

	hops[d] = (port & 1) ? -1 : 1;
	tv_fill(f->map[src] + sseg.offset, MSG, tag);
	memset(f->map[dst] + rseg.offset, 0, MSG);
	tv_recv_desc(&r, tv_arrival_port(f, hops), tag, &rseg, 1, 2);
	tv_route_desc(f, &s, dst, hops, tag, &sseg, 1, 1);
	EXPECT_EQ(0, tv_post(f->fd[dst], &r, 1, NULL));
	EXPECT_EQ(0, tv_post(f->fd[src], &s, 1, NULL));
	EXPECT_EQ(1, tv_reap(f->fd[src], &e, 1));
	EXPECT_EQ(0, e.status);
	EXPECT_EQ(TORUS_OP_SEND, e.op);
	EXPECT_EQ(1, e.user_data);
	EXPECT_EQ(port, e.port);
	EXPECT_EQ(dst, e.peer);
	EXPECT_EQ(MSG, e.bytes);
	EXPECT_EQ(1, tv_reap(f->fd[dst], &e, 1));
	EXPECT_EQ(0, e.status);
	EXPECT_EQ(TORUS_OP_RECV, e.op);
	EXPECT_EQ(2, e.user_data);
	EXPECT_EQ(tag, e.tag);
	EXPECT_EQ(tv_arrival_port(f, hops), e.port);
	EXPECT_EQ(src, e.peer);
	EXPECT_EQ(MSG, e.bytes);
	bad = tv_check(f->map[dst] + rseg.offset, MSG, tag);
	if (bad >= 0)
		TH_LOG("node %u port %u -> node %u: byte %ld differs", src, port, dst, bad);
	EXPECT_EQ(-1, bad);
	return bad < 0;
}

TEST_F_TIMEOUT(fabric, message__over_every_port_of_every_node, 300)
{
	struct tv_fabric *f = &self->f;
	__u32 n, p, links = 0;

	TV_SKIPPED();
	for (n = 0; n < f->nodes; n++)
		for (p = 0; p < 2 * f->ndims; p++) {
			if (tv_neighbor(f, n, p) == TORUS_NO_NODE)
				continue;
			ASSERT_TRUE(one_link(_metadata, f, n, p));
			links++;
		}
	TH_LOG("%u links carried a message", links);
	ASSERT_LT(0, links);
}

TEST_F_TIMEOUT(fabric, all_ports_at_once__deliver_and_count_every_byte, 300)
{
	struct tv_fabric *f = &self->f;
	__u32 n, p, nports = 2 * f->ndims, total = 0;
	struct torus_desc *x = calloc(2 * nports, sizeof(*x));
	struct torus_seg *seg = calloc(2 * nports, sizeof(*seg));
	struct torus_cqe *e = calloc(2 * nports, sizeof(*e));
	__u32 *expect = calloc(f->nodes, sizeof(*expect));
	struct torus_counters c;

	TV_SKIPPED();
	ASSERT_TRUE(x && seg && e && expect);
	/* every node: receives on every port that has a neighbour, then sends */
	for (n = 0; n < f->nodes; n++) {
		__u32 k = 0;

		for (p = 0; p < nports; p++) {
			__u32 from = tv_neighbor(f, n, p);

			if (from == TORUS_NO_NODE)
				continue;
			/* arriving on p = sent by `from` out of port p ^ 1 */
			seg[k].offset = (TORUS_MAX_PORTS + p) * MSG;
			seg[k].length = MSG;
			memset(f->map[n] + seg[k].offset, 0, MSG);
			tv_recv_desc(&x[k], p, msg_tag(from, p ^ 1), &seg[k], 1, 100 + p);
			k++;
		}
		ASSERT_EQ(0, tv_post(f->fd[n], x, k, NULL));
		expect[n] = 2 * k;
	}
	for (n = 0; n < f->nodes; n++) {
		__u32 k = 0;

		for (p = 0; p < nports; p++) {
			int hops[TORUS_MAX_DIMS] = { 0 };
			__u32 to = tv_neighbor(f, n, p);

			if (to == TORUS_NO_NODE)
				continue;
			hops[p / 2] = (p & 1) ? -1 : 1;
			seg[k].offset = p * MSG;
			seg[k].length = MSG;
			tv_fill(f->map[n] + seg[k].offset, MSG, msg_tag(n, p));
			tv_route_desc(f, &x[k], to, hops, msg_tag(n, p), &seg[k], 1, p);
			k++;
		}
		ASSERT_EQ(0, tv_post(f->fd[n], x, k, NULL));
		total += k;
	}
	for (n = 0; n < f->nodes; n++) {
		__u32 i;

		ASSERT_EQ(expect[n], tv_reap(f->fd[n], e, expect[n]));
		for (i = 0; i < expect[n]; i++) {
			EXPECT_EQ(0, e[i].status);
			EXPECT_EQ(MSG, e[i].bytes);
		}
		for (p = 0; p < nports; p++) {
			__u32 from = tv_neighbor(f, n, p);
			long bad;

			if (from == TORUS_NO_NODE)
				continue;
			bad = tv_check(f->map[n] + (TORUS_MAX_PORTS + p) * MSG, MSG, msg_tag(from, p ^ 1));
			if (bad >= 0)
				TH_LOG("node %u port %u (from %u): byte %ld differs", n, p, from, bad);
			EXPECT_EQ(-1, bad);
		}
	}
	/* every link carried exactly one message of MSG bytes */
	for (n = 0; n < f->nodes; n++) {
		ASSERT_EQ(0, tv_counters(self->ctl, f->id, n, &c));
		EXPECT_EQ(expect[n], c.node.posted);
		EXPECT_EQ(expect[n], c.node.completed);
		EXPECT_EQ(0, c.node.errors);
		for (p = 0; p < nports; p++) {
			__u64 m = tv_neighbor(f, n, p) == TORUS_NO_NODE ? 0 : 1;

			EXPECT_EQ(m, c.links[p].messages)
				TH_LOG("node %u link %u", n, p);
			EXPECT_EQ(m * MSG, c.links[p].bytes)
				TH_LOG("node %u link %u", n, p);
		}
	}
	TH_LOG("%u messages of %u bytes", total, MSG);
	free(x);
	free(seg);
	free(e);
	free(expect);
}

TEST_F(fabric, destroy__refused_while_a_node_is_open)
{
	struct tv_fabric *f = &self->f;
	char path[96];
	__u32 n;
	int i;

	TV_SKIPPED();
	EXPECT_EQ(-EBUSY, tv_destroy(self->ctl, f->id));
	/* close all but the last node: still busy */
	for (n = 0; n + 1 < f->nodes; n++) {
		munmap(f->map[n], f->map_len);
		f->map[n] = NULL;
		close(f->fd[n]);
		f->fd[n] = -1;
	}
	EXPECT_EQ(-EBUSY, tv_destroy(self->ctl, f->id));
	/* a mapping alone (fd closed) still holds the node */
	close(f->fd[n]);
	f->fd[n] = -1;
	if (tv_destroy(self->ctl, f->id) == 0) {
		TH_LOG("destroyed while node %u was still mapped", n);
		EXPECT_TRUE(0);
	}
	munmap(f->map[n], f->map_len);
	f->map[n] = NULL;
	EXPECT_EQ(0, tv_destroy(self->ctl, f->id));
	EXPECT_EQ(-ENOENT, tv_destroy(self->ctl, f->id));
	tv_node_path(path, sizeof(path), f->id, 0);
	for (i = 0; i < 100 && access(path, F_OK) == 0; i++)
		usleep(10000);
	EXPECT_NE(0, access(path, F_OK));
}

TEST_F_TIMEOUT(fabric, create_destroy__cycles_leave_nothing_behind, 120)
{
	struct torus_fabric_create c;
	struct torus_fabric_query q;
	struct tv_fabric g;
	int i;

	TV_SKIPPED();
	for (i = 0; i < 10; i++) {
		tv_create_args(&c, variant->ndims, variant->dims, variant->wrap, 0);
		c.matrix_bytes = 64 << 10;
		ASSERT_EQ(0, tv_fabric_new(&g, self->ctl, &c));
		ASSERT_NE(self->f.id, g.id);
		tv_fabric_close_nodes(&g);
		ASSERT_EQ(0, tv_destroy(self->ctl, g.id));
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.fabric_id = g.id;
		EXPECT_EQ(-ENOENT, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_QUERY, &q));
		free(g.fd);
		free(g.map);
		free(g.q);
	}
}

TV_MAIN
