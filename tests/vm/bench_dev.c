// SPDX-License-Identifier: GPL-2.0
/*
 * bench_dev: a benchmark of torus.ko (not a test; run-guest leaves bench_*
 * out). Run it where the module is loaded, e.g.
 *   utils/torus-vm -- build/tests/vm/bench_dev
 * It measures, in wall-clock time:
 *   1. one 64 KiB message, post of the send to its receive completion reaped
 *      (the receive already posted), on a ring of 4: min and median of N runs;
 *   2. a full all-ports exchange on every node of a 4x4 torus (every node
 *      sends M bytes out of each of its 4 ports and receives on each), from
 *      the first post to the last completion, in bytes/s, next to a plain
 *      memcpy of the same bytes (64 buffers of M bytes) in the same process.
 * Every received byte is checked once per configuration.
 * Usage: bench_dev [-m BYTES] [-r ROUNDS] [-n RUNS]
 */
#include <getopt.h>

#include "torus_util.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int die(const char *what, int err)
{
	fprintf(stderr, "bench_dev: %s: %s\n", what, strerror(-err));
	exit(1);
}

static void one_message(int ctl, int runs)
{
	const __u32 dims[1] = { 4 };
	const __u64 m = 64 << 10;
	struct torus_fabric_create c;
	struct torus_seg s = { 0, m }, r = { 1 << 20, m };
	struct tv_fabric f;
	struct torus_desc x;
	struct torus_cqe e;
	double *t = calloc(runs, sizeof(*t));
	int i, ret;

	tv_create_args(&c, 1, dims, 1, 0);
	c.matrix_bytes = 2 << 20;
	ret = tv_fabric_new(&f, ctl, &c);
	if (ret)
		die("fabric create (ring 4)", ret);
	tv_fill(f.map[0], m, 64);
	for (i = 0; i < runs; i++) {
		double t0;

		tv_recv_desc(&x, 1, i, &r, 1, 0);
		ret = tv_post(f.fd[1], &x, 1, NULL);
		if (ret)
			die("post recv", ret);
		tv_send_desc(&x, 1, i, &s, 1, 0);
		t0 = tv_now();
		ret = tv_post(f.fd[0], &x, 1, NULL);
		if (ret)
			die("post send", ret);
		ret = tv_reap(f.fd[1], &e, 1);
		t[i] = tv_now() - t0;
		if (ret != 1 || e.status)
			die("receive completion", ret < 0 ? ret : e.status ? e.status : -EIO);
		ret = tv_reap(f.fd[0], &e, 1);
		if (ret != 1)
			die("send completion", ret < 0 ? ret : -EIO);
	}
	if (tv_check(f.map[1] + r.offset, m, 64) >= 0)
		die("64 KiB message: payload", -EIO);
	qsort(t, runs, sizeof(*t), cmp_double);
	printf("one 64 KiB message, post to receive completion: min %.1f us, median %.1f us (%d runs, %.0f MB/s at the median)\n",
	       t[0] * 1e6, t[runs / 2] * 1e6, runs, m / t[runs / 2] / 1e6);
	tv_fabric_free(&f);
	free(t);
}

static void all_ports(int ctl, __u64 m, int rounds)
{
	const __u32 dims[2] = { 4, 4 };
	struct torus_fabric_create c;
	struct torus_desc x[8];
	struct torus_seg seg[8];
	struct torus_cqe e[8];
	struct tv_fabric f;
	double *tx = calloc(rounds, sizeof(*tx)), *tm = calloc(rounds, sizeof(*tm));
	unsigned char **src, **dst;
	__u64 total;
	__u32 n, p;
	int i, ret;

	tv_create_args(&c, 2, dims, 3, 0);
	c.matrix_bytes = 8 * m;
	c.fifo_bytes = m > (256 << 10) ? m : 0;
	ret = tv_fabric_new(&f, ctl, &c);
	if (ret)
		die("fabric create (4x4 torus)", ret);
	total = (__u64)f.nodes * 4 * m;
	for (n = 0; n < f.nodes; n++)
		for (p = 0; p < 4; p++)
			tv_fill(f.map[n] + p * m, m, n * 4 + p);
	for (i = 0; i < rounds; i++) {
		double t0;

		/* receives first (not timed: they are posted ahead in any real use) */
		for (n = 0; n < f.nodes; n++) {
			for (p = 0; p < 4; p++) {
				seg[p].offset = (4 + p) * m;
				seg[p].length = m;
				tv_recv_desc(&x[p], p, ((__u64)tv_neighbor(&f, n, p) << 8) | (p ^ 1), &seg[p], 1, p);
			}
			ret = tv_post(f.fd[n], x, 4, NULL);
			if (ret)
				die("post receives", ret);
		}
		t0 = tv_now();
		for (n = 0; n < f.nodes; n++) {
			for (p = 0; p < 4; p++) {
				int hops[TORUS_MAX_DIMS] = { 0 };

				hops[p / 2] = (p & 1) ? -1 : 1;
				seg[4 + p].offset = p * m;
				seg[4 + p].length = m;
				tv_route_desc(&f, &x[p], tv_neighbor(&f, n, p), hops, ((__u64)n << 8) | p,
					      &seg[4 + p], 1, 10 + p);
			}
			ret = tv_post(f.fd[n], x, 4, NULL);
			if (ret)
				die("post sends", ret);
		}
		for (n = 0; n < f.nodes; n++) {
			ret = tv_reap(f.fd[n], e, 8);
			if (ret != 8)
				die("reap", ret < 0 ? ret : -EIO);
			for (p = 0; p < 8; p++)
				if (e[p].status)
					die("completion status", e[p].status);
		}
		tx[i] = tv_now() - t0;
		if (i == 0)
			for (n = 0; n < f.nodes; n++)
				for (p = 0; p < 4; p++)
					if (tv_check(f.map[n] + (4 + p) * m, m, tv_neighbor(&f, n, p) * 4 + (p ^ 1)) >= 0)
						die("all-ports exchange: payload", -EIO);
		for (n = 0; n < f.nodes; n++)
			for (p = 0; p < 4; p++)
				memset(f.map[n] + (4 + p) * m, 0, 64);
	}
	/* the same bytes through memcpy: 64 sources to 64 destinations */
	src = calloc(f.nodes * 4, sizeof(*src));
	dst = calloc(f.nodes * 4, sizeof(*dst));
	for (n = 0; n < f.nodes * 4; n++) {
		src[n] = malloc(m);
		dst[n] = malloc(m);
		tv_fill(src[n], m, n);
		memset(dst[n], 0, m);
	}
	for (i = 0; i < rounds; i++) {
		double t0 = tv_now();

		for (n = 0; n < f.nodes * 4; n++)
			memcpy(dst[(n + 5) % (f.nodes * 4)], src[n], m);
		tm[i] = tv_now() - t0;
		__asm__ __volatile__("" : : "r"(dst) : "memory");
	}
	for (n = 0; n < f.nodes * 4; n++)
		if (tv_check(dst[(n + 5) % (f.nodes * 4)], m, n) >= 0)
			die("memcpy check", -EIO);
	qsort(tx, rounds, sizeof(*tx), cmp_double);
	qsort(tm, rounds, sizeof(*tm), cmp_double);
	printf("4x4 torus all-ports exchange, %llu B per port, %llu B per round: median %.2f ms = %.1f MB/s (best %.1f MB/s)\n",
	       (unsigned long long)m, (unsigned long long)total, tx[rounds / 2] * 1e3,
	       total / tx[rounds / 2] / 1e6, total / tx[0] / 1e6);
	printf("memcpy of the same %llu B (64 x %llu B): median %.2f ms = %.1f MB/s (best %.1f MB/s)\n",
	       (unsigned long long)total, (unsigned long long)m, tm[rounds / 2] * 1e3,
	       total / tm[rounds / 2] / 1e6, total / tm[0] / 1e6);
	printf("ratio exchange/memcpy: %.2f at the median, %.2f best to best (%d rounds)\n",
	       tm[rounds / 2] / tx[rounds / 2], tm[0] / tx[0], rounds);
	for (n = 0; n < f.nodes * 4; n++) {
		free(src[n]);
		free(dst[n]);
	}
	free(src);
	free(dst);
	free(tx);
	free(tm);
	tv_fabric_free(&f);
}

int main(int argc, char **argv)
{
	__u64 m = 64 << 10;
	int rounds = 20, runs = 200, opt, ctl;

	while ((opt = getopt(argc, argv, "m:r:n:h")) != -1) {
		switch (opt) {
		case 'm':
			m = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'n':
			runs = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-m BYTES per port] [-r ROUNDS] [-n RUNS of the 64 KiB message]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (!m || m > (8 << 20) || rounds < 1 || runs < 1) {
		fprintf(stderr, "bench_dev: -m must be 1..8 MiB, -r and -n at least 1\n");
		return 2;
	}
	ctl = tv_ctl_open();
	if (ctl < 0)
		die(TV_CTL_PATH " (is torus.ko loaded?)", ctl);
	one_message(ctl, runs);
	all_ports(ctl, m, rounds);
	close(ctl);
	return 0;
}
