// SPDX-License-Identifier: GPL-2.0
/*
 * demo_dev: the device half of `make demo` (utils/torus-demo runs it where
 * torus.ko is loaded; run-guest leaves demo_* out). It uses the module's
 * default fabric (insmod torus.ko dims=4,4), or creates a 4x4 torus when
 * there is none, and:
 *   1. sends a message out of every port of every node at once, checks every
 *      received byte, and prints the per-link counters, the virtual times and
 *      the makespan next to the timing model's ts + hop + m*tw;
 *   2. sends one message corner to centre (several hops) and shows the
 *      pass-through traffic on the intermediate links.
 * Exit status 0 only if every byte and every figure checked out.
 */
#include "torus_util.h"

#define M (16 << 10)

static int failed;

#define CHECK(cond, ...)                                  \
	do {                                              \
		if (!(cond)) {                            \
			printf("FAILED: " __VA_ARGS__);   \
			printf("\n");                     \
			failed = 1;                       \
		}                                         \
	} while (0)

static int find_or_create(int ctl, struct torus_fabric_create *c)
{
	struct torus_fabric_query q = { .size = sizeof(q), .fabric_id = 0 };
	static const __u32 dims[2] = { 4, 4 };
	int ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_QUERY, &q);

	if (ret == -ENOENT && q.next_fabric_id != TORUS_NO_NODE) {
		q.fabric_id = q.next_fabric_id;
		ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_QUERY, &q);
	}
	if (!ret && q.ndims == 2 && q.matrix_bytes >= 8 * M) {
		printf("default fabric %u from the module parameters: %ux%u %s, %u nodes\n", q.fabric_id,
		       q.dims[0], q.dims[1], q.wrap_mask == 3 ? "torus" : "mesh/torus mix", q.nodes);
		return q.fabric_id;
	}
	tv_create_args(c, 2, dims, 3, 0);
	c->matrix_bytes = 1 << 20;
	ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_CREATE, c);
	if (ret)
		return ret;
	printf("no usable default fabric: created fabric %u, a 4x4 torus\n", c->fabric_id);
	return c->fabric_id;
}

/* Open, map and query the nodes of an existing fabric. */
static int attach(struct tv_fabric *f, int ctl, __u32 id)
{
	struct torus_fabric_query q = { .size = sizeof(q), .fabric_id = id };
	long page = sysconf(_SC_PAGESIZE);
	__u32 n;
	int ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_QUERY, &q);

	if (ret)
		return ret;
	memset(f, 0, sizeof(*f));
	f->ctl = ctl;
	f->id = id;
	f->nodes = q.nodes;
	f->ndims = q.ndims;
	f->wrap = q.wrap_mask;
	memcpy(f->dims, q.dims, sizeof(f->dims));
	f->matrix_bytes = q.matrix_bytes;
	f->map_len = (q.matrix_bytes + page - 1) / page * page;
	f->fd = calloc(f->nodes, sizeof(*f->fd));
	f->map = calloc(f->nodes, sizeof(*f->map));
	f->q = calloc(f->nodes, sizeof(*f->q));
	if (!f->fd || !f->map || !f->q)
		return -ENOMEM;
	for (n = 0; n < f->nodes; n++) {
		f->fd[n] = tv_node_open(id, n);
		if (f->fd[n] < 0)
			return f->fd[n];
		f->map[n] = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd[n], 0);
		if (f->map[n] == MAP_FAILED)
			return -errno;
	}
	return 0;
}

int main(void)
{
	struct torus_fabric_create c;
	struct torus_fabric_query q = { .size = sizeof(q) };
	struct torus_counters cnt;
	struct torus_desc x[8];
	struct torus_seg seg[8];
	struct torus_cqe e[8];
	struct tv_fabric f;
	__u64 model, tmax = 0, bytes = 0;
	__u32 n, p, nports;
	int ctl, id, ret, hops[TORUS_MAX_DIMS];
	double t0, t1;

	memset(&c, 0, sizeof(c));
	ctl = tv_ctl_open();
	if (ctl < 0) {
		printf("demo: %s: %s (is torus.ko loaded?)\n", TV_CTL_PATH, strerror(-ctl));
		return 1;
	}
	id = find_or_create(ctl, &c);
	if (id < 0 || (ret = attach(&f, ctl, id))) {
		printf("demo: fabric: %s\n", strerror(id < 0 ? -id : -ret));
		return 1;
	}
	q.fabric_id = id;
	tv_ioctl(ctl, TORUS_IOC_FABRIC_QUERY, &q);
	printf("timing model: ts %llu ns per message, tw %llu ps per byte, %llu ns per hop; matrix %llu B per node\n",
	       (unsigned long long)q.ts_ns, (unsigned long long)q.tw_ps, (unsigned long long)q.hop_ns,
	       (unsigned long long)q.matrix_bytes);
	nports = 2 * f.ndims;

	/* 1. every port of every node at once */
	memset(&cnt, 0, sizeof(cnt));
	cnt.size = sizeof(cnt);
	cnt.flags = TORUS_COUNTERS_RESET;
	cnt.fabric_id = id;
	tv_ioctl(ctl, TORUS_IOC_COUNTERS, &cnt);
	for (n = 0; n < f.nodes; n++) {
		for (p = 0; p < nports; p++) {
			seg[p].offset = (nports + p) * (__u64)M;
			seg[p].length = M;
			memset(f.map[n] + seg[p].offset, 0, M);
			tv_recv_desc(&x[p], p, ((__u64)tv_neighbor(&f, n, p) << 8) | (p ^ 1), &seg[p], 1, 0);
		}
		ret = tv_post(f.fd[n], x, nports, NULL);
		CHECK(!ret, "node %u: post receives: %s", n, strerror(-ret));
	}
	t0 = tv_now();
	for (n = 0; n < f.nodes; n++) {
		for (p = 0; p < nports; p++) {
			int h[TORUS_MAX_DIMS] = { 0 };

			h[p / 2] = (p & 1) ? -1 : 1;
			seg[p].offset = p * (__u64)M;
			seg[p].length = M;
			tv_fill(f.map[n] + seg[p].offset, M, n * 16 + p);
			tv_route_desc(&f, &x[p], tv_neighbor(&f, n, p), h, ((__u64)n << 8) | p, &seg[p], 1, 0);
		}
		ret = tv_post(f.fd[n], x, nports, NULL);
		CHECK(!ret, "node %u: post sends: %s", n, strerror(-ret));
	}
	for (n = 0; n < f.nodes; n++) {
		__u32 i;

		ret = tv_reap(f.fd[n], e, 2 * nports);
		CHECK(ret == (int)(2 * nports), "node %u: %d of %u completions", n, ret, 2 * nports);
		for (i = 0; ret > 0 && i < (__u32)ret; i++) {
			CHECK(!e[i].status, "node %u: completion status %d", n, e[i].status);
			if (e[i].t_end_ns > tmax)
				tmax = e[i].t_end_ns;
			if (e[i].op == TORUS_OP_RECV)
				bytes += e[i].bytes;
		}
	}
	t1 = tv_now();
	for (n = 0; n < f.nodes; n++)
		for (p = 0; p < nports; p++) {
			long bad = tv_check(f.map[n] + (nports + p) * (__u64)M, M,
					    tv_neighbor(&f, n, p) * 16 + (p ^ 1));

			CHECK(bad < 0, "node %u port %u: byte %ld differs", n, p, bad);
		}
	printf("\n1. all %u ports of all %u nodes at once: %u messages of %u B, %llu B received, every byte checked: %s\n",
	       nports, f.nodes, f.nodes * nports, M, (unsigned long long)bytes, failed ? "MISMATCH" : "ok");
	printf("   wall time %.2f ms (%.1f MB/s in this VM)\n", (t1 - t0) * 1e3, bytes / (t1 - t0) / 1e6);
	printf("   per-link bytes (rows: nodes; columns: ports +d0 -d0 +d1 -d1 ...):\n");
	for (n = 0; n < f.nodes; n++) {
		tv_counters(ctl, id, n, &cnt);
		printf("   node %2u (%u,%u):", n, tv_coord(&f, n, 0), f.ndims > 1 ? tv_coord(&f, n, 1) : 0);
		for (p = 0; p < nports; p++) {
			printf(" %7llu", (unsigned long long)cnt.links[p].bytes);
			CHECK(cnt.links[p].bytes == M && cnt.links[p].messages == 1,
			      "node %u link %u: %llu B in %llu messages", n, p,
			      (unsigned long long)cnt.links[p].bytes, (unsigned long long)cnt.links[p].messages);
		}
		printf("   posted %llu completed %llu\n", (unsigned long long)cnt.node.posted,
		       (unsigned long long)cnt.node.completed);
	}
	model = q.ts_ns + q.hop_ns + (__u64)M * q.tw_ps / 1000;
	printf("   virtual time: every message ends by %llu ns; model ts + hop + m*tw = %llu ns (links disjoint, all-port): %s\n",
	       (unsigned long long)tmax, (unsigned long long)model, tmax == model ? "equal" : "DIFFERENT");
	CHECK(tmax == model, "makespan %llu != model %llu", (unsigned long long)tmax, (unsigned long long)model);

	/* 2. a multi-hop message, corner (0,0) to the centre (2,2) */
	if (f.nodes >= 16 && f.ndims == 2) {
		__u32 dst = 2 * f.dims[1] + 2, cur = 0, d;
		int h = tv_route(&f, 0, dst, hops), k;
		struct torus_seg s1 = { 0, M }, r1 = { 8 * (__u64)M - M, M };
		__u64 before[64][TORUS_MAX_PORTS] = { { 0 } };

		for (n = 0; n < f.nodes && n < 64; n++) {
			tv_counters(ctl, id, n, &cnt);
			for (p = 0; p < nports; p++)
				before[n][p] = cnt.links[p].bytes;
		}
		tv_fill(f.map[0], M, 99);
		tv_recv_desc(&x[0], tv_arrival_port(&f, hops), 99, &r1, 1, 0);
		tv_post(f.fd[dst], x, 1, NULL);
		tv_send_desc(&x[0], dst, 99, &s1, 1, 0);
		tv_post(f.fd[0], x, 1, NULL);
		ret = tv_reap(f.fd[dst], e, 1);
		CHECK(ret == 1 && !e[0].status, "multi-hop receive");
		tv_reap(f.fd[0], e + 1, 1);
		CHECK(tv_check(f.map[dst] + r1.offset, M, 99) < 0, "multi-hop payload");
		printf("\n2. node 0 -> node %u, %d hops (dimension 0 first): virtual %llu..%llu ns = %llu ns; model ts + %d*hop + m*tw = %llu ns\n",
		       dst, h, (unsigned long long)e[0].t_start_ns, (unsigned long long)e[0].t_end_ns,
		       (unsigned long long)(e[0].t_end_ns - e[0].t_start_ns), h,
		       (unsigned long long)(q.ts_ns + h * q.hop_ns + (__u64)M * q.tw_ps / 1000));
		CHECK(e[0].t_end_ns - e[0].t_start_ns == q.ts_ns + h * q.hop_ns + (__u64)M * q.tw_ps / 1000,
		      "multi-hop virtual time");
		printf("   links it crossed (bytes added to each link's counter):");
		for (d = 0; d < f.ndims; d++)
			for (k = 0; k < abs(hops[d]); k++) {
				p = 2 * d + (hops[d] < 0);
				tv_counters(ctl, id, cur, &cnt);
				printf(" node %u port %u +%llu%s", cur, p,
				       (unsigned long long)(cnt.links[p].bytes - before[cur][p]),
				       cur == 0 ? " (sender)" : " (pass-through)");
				CHECK(cnt.links[p].bytes - before[cur][p] == M, "link counter");
				cur = tv_neighbor(&f, cur, p);
			}
		printf("\n");
	}
	tv_fabric_close_nodes(&f);
	if (c.size) /* we created it */
		tv_destroy(ctl, id);
	printf("\ndemo: %s\n", failed ? "FAILED" : "every byte and every figure checked out");
	return failed;
}
