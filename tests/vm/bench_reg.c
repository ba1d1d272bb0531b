// SPDX-License-Identifier: GPL-2.0
/*
 * bench_reg: what a zero-copy collective call pays against what staging
 * pays, per call of one process, with no other process in the way (not a
 * test; run-guest leaves bench_* out). Run it where the module is loaded:
 *   utils/torus-vm -- build/tests/vm/bench_reg
 * For a block of m bytes per peer on P = 16 nodes (buffers of 16 m bytes):
 *   zero copy: TORUS_IOC_MR_REG of the send buffer (read-only) and of the
 *	receive buffer (TORUS_MR_WRITE), then MR_DEREG of both, as
 *	libtoruscoll does around every zero-copy call;
 *   staged: memcpy of the send buffer into the node's buffer matrix and of
 *	the result out of it, as the staging path does.
 * Median of N rounds per size (each round touches the buffers first, as an
 * application that just wrote its send data does). The smallest m where
 * zero copy costs less is the crossover libtoruscoll's TC_ZCOPY_MIN default
 * is taken from.
 * Usage: bench_reg [-n ROUNDS]
 */
#include <getopt.h>

#include "torus_util.h"

#define P 16

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int die(const char *what, int err)
{
	fprintf(stderr, "bench_reg: %s: %s\n", what, strerror(-err));
	exit(1);
}

static double reg_round(int fd, unsigned char *s, unsigned char *r, size_t len)
{
	struct torus_mr_reg a = { .size = sizeof(a), .addr = (uintptr_t)s, .length = len };
	struct torus_mr_reg b = { .size = sizeof(b), .flags = TORUS_MR_WRITE, .addr = (uintptr_t)r, .length = len };
	struct torus_mr_dereg d = { .size = sizeof(d) };
	double t0 = tv_now();
	int ret;

	ret = tv_ioctl(fd, TORUS_IOC_MR_REG, &a) ?: tv_ioctl(fd, TORUS_IOC_MR_REG, &b);
	if (ret)
		die("MR_REG", ret);
	d.key = a.key;
	ret = tv_ioctl(fd, TORUS_IOC_MR_DEREG, &d);
	d.key = b.key;
	ret = ret ?: tv_ioctl(fd, TORUS_IOC_MR_DEREG, &d);
	if (ret)
		die("MR_DEREG", ret);
	return tv_now() - t0;
}

static double copy_round(unsigned char *matrix, unsigned char *s, unsigned char *r, size_t len)
{
	double t0 = tv_now();

	memcpy(matrix, s, len);
	memcpy(r, matrix + len, len);
	return tv_now() - t0;
}

int main(int argc, char **argv)
{
	const __u32 dims[1] = { 2 };
	struct torus_fabric_create c;
	struct tv_fabric f;
	int runs = 21, opt, ctl, ret;
	double *tr, *tc;

	while ((opt = getopt(argc, argv, "n:h")) != -1) {
		if (opt != 'n' || (runs = atoi(optarg)) < 1) {
			fprintf(stderr, "usage: %s [-n ROUNDS]\n", argv[0]);
			return 2;
		}
	}
	ctl = tv_ctl_open();
	if (ctl < 0)
		die(TV_CTL_PATH, ctl);
	tv_create_args(&c, 1, dims, 1, 0);
	c.matrix_bytes = 2ull * P << 20;
	ret = tv_fabric_new(&f, ctl, &c);
	if (ret)
		die("fabric create (ring 2, 32 MiB matrices)", ret);
	tr = calloc(runs, sizeof(*tr));
	tc = calloc(runs, sizeof(*tc));
	printf("block m   buffers   register+deregister (us)   copy in+out (us)   zero copy / staged\n");
	for (size_t m = 64; m <= (1 << 20); m *= 4) {
		size_t len = P * m;
		unsigned char *s = malloc(len), *r = malloc(len);

		for (int i = 0; i < runs; i++) {
			memset(s, i, len);
			memset(r, i, len);
			tr[i] = reg_round(f.fd[0], s, r, len);
			tc[i] = copy_round(f.map[0], s, r, len);
		}
		qsort(tr, runs, sizeof(*tr), cmp_double);
		qsort(tc, runs, sizeof(*tc), cmp_double);
		printf("%7zu B %7zu KiB %22.1f %20.1f %15.2f\n", m, len >> 10, tr[runs / 2] * 1e6, tc[runs / 2] * 1e6,
		       tr[runs / 2] / tc[runs / 2]);
		free(s);
		free(r);
	}
	free(tr);
	free(tc);
	tv_fabric_free(&f);
	return 0;
}
