// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_allgather: a benchmark of tc_allgather over torus.ko (not a test;
 * run-guest leaves bench_* out). Run it where the module is loaded, e.g.
 *   utils/torus-vm -- build/tests/vm/bench_allgather
 *
 * For each shape (default 4x4 and 5x5 torus; -s adds e.g. 8x8:16384, the
 * number after the colon capping m) and each allgather algorithm
 * (bcast-pattern, gossip-ham2, gossip-ham1, ring, saad-schultz, calvin, bruck;
 * a shape an algorithm refuses, such as calvin on 4x4, is a "not run" row) it
 * prints, for block sizes m = 64 B .. 64 KiB (powers of two):
 *   - the schedule's steps and the startups on its critical path;
 *   - the cost model's prediction (tc_cost_eval_sizes on the schedule) with
 *     the Intel Paragon parameters (ts 75 us, tw 0.011 us/B, rho 0.014 us/B);
 *   - the same with the fabric's own parameters: ts, tw and the per-hop
 *     time, which the cost model charges per link crossed as the driver
 *     does (ts + h*hop + m*tw);
 *   - the device's virtual makespan for one call (TORUS_IOC_FABRIC_QUERY
 *     makespan_ns, reset with TORUS_QUERY_RESET_STATS before each call):
 *     median over the timed calls;
 *   - the guest wall time of one call, first node entering to last node
 *     leaving tc_allgather: median over the timed calls;
 *   - the bytes checked: every node checks every byte of its receive buffer
 *     against the reference after every call (the warm-up call included).
 *     A wrong byte, a failed call or a different algorithm running than the
 *     one forced aborts the row with an error; no figure is printed for it.
 *
 * One process per node (fork), each with a TC_TRANSPORT_DEV communicator;
 * the nodes meet at a process-shared barrier (no device traffic) around
 * every call, so the makespan counts the allgather alone. The first call
 * per (algorithm, m) is a warm-up (schedule and plan built), not timed.
 *
 * Usage: bench_allgather [-s SHAPES] [-a ALGOS] [-m MIN] [-M MAX] [-n ITERS]
 *                        [-t TS_NS] [-w TW_PS] [-H HOP_NS] [-x]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uapi/torus.h>

#include "toruscoll.h"
#include "core/check.h"
#include "core/sim_run.h"
#include "select/select.h"

#define BA_CTL_PATH "/dev/" TORUS_CTL_NAME
#define BA_MAX_NODES 256
#define BA_MAX_SIZES 16
#define BA_MAX_ITERS 64
#define BA_TIMEOUT_MS 30000 /* per step: TCG guests on a shared host are slow */

static const char *const ba_default_algos[] = {
	"bcast-pattern", "gossip-ham2", "gossip-ham1", "ring", "saad-schultz", "calvin", "bruck", NULL,
};

struct ba_row {
	int err;		/* 0, or -errno of the row */
	char why[240];		/* the reason when err */
	int iters;		/* timed calls */
	double wall_us;		/* median */
	double span_us;		/* median makespan */
	double span_min_us, span_max_us;
	uint64_t checked;	/* bytes checked OK */
};

/* Shared by the node processes of one (shape, algorithm). */
struct ba_shared {
	pthread_barrier_t bar;
	int failed;		/* set (first error wins) during a call or its check */
	int dead;		/* a call failed: the communicators are unusable */
	char why[240];
	uint64_t checked;
	double t0[BA_MAX_NODES], t1[BA_MAX_NODES];
	struct ba_row rows[BA_MAX_SIZES];
};

struct ba_run {
	int ctl;
	__u32 fabric;
	int nodes;
	const char *algo;
	int nsizes;
	int corrupt;		/* -x: flip one received byte of node 0 in the first call */
	size_t sizes[BA_MAX_SIZES];
	int iters[BA_MAX_SIZES];
	struct ba_shared *sh;
};

static double ba_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int ba_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double ba_median(double *v, int n)
{
	qsort(v, n, sizeof(*v), ba_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* 64-bit words of the block of origin o in call c of size m: differs per word, origin and call. */
static uint64_t ba_word(uint64_t seed, size_t j)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + (j + 1) * 0xbf58476d1ce4e5b9ULL;

	x ^= x >> 31;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 29;
	return x;
}

static uint64_t ba_seed(int origin, size_t m, int call)
{
	return ((uint64_t)origin << 40) ^ ((uint64_t)m << 8) ^ (uint64_t)call;
}

static void ba_fill(uint64_t *p, size_t words, uint64_t seed)
{
	for (size_t j = 0; j < words; j++)
		p[j] = ba_word(seed, j);
}

/* Index of the first wrong word, or -1. */
static long ba_check(const uint64_t *p, size_t words, uint64_t seed)
{
	for (size_t j = 0; j < words; j++)
		if (p[j] != ba_word(seed, j))
			return (long)j;
	return -1;
}

static void ba_fail(struct ba_shared *sh, int dead, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ba_fail(struct ba_shared *sh, int dead, const char *fmt, ...)
{
	int zero = 0;
	va_list ap;

	if (dead)
		__atomic_store_n(&sh->dead, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_compare_exchange_n(&sh->failed, &zero, 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return;
	va_start(ap, fmt);
	vsnprintf(sh->why, sizeof(sh->why), fmt, ap);
	va_end(ap);
}

static int ba_query(int ctl, __u32 fabric, int reset, struct torus_fabric_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->fabric_id = fabric;
	q->flags = reset ? TORUS_QUERY_RESET_STATS : 0;
	return ioctl(ctl, TORUS_IOC_FABRIC_QUERY, q) ? -errno : 0;
}

/* One node: every size of one algorithm. Returns the exit status. */
static int ba_node(const struct ba_run *r, int rank)
{
	struct ba_shared *sh = r->sh;
	struct tc_comm_attr attr = {
		.size = sizeof(attr),
		.transport = TC_TRANSPORT_DEV,
		.fabric_id = r->fabric,
		.node = rank,
		.timeout_ms = BA_TIMEOUT_MS,
	};
	size_t maxm = r->sizes[r->nsizes - 1];
	double wall[BA_MAX_ITERS], span[BA_MAX_ITERS];
	uint64_t *send, *recv;
	tc_comm_t *comm = NULL;
	int ret;

	send = malloc(maxm);
	recv = malloc(maxm * r->nodes);
	ret = tc_comm_create(&attr, &comm);
	if (ret)
		ba_fail(sh, 1, "node %d: tc_comm_create: %s", rank, tc_last_error());
	else if ((ret = tc_comm_set_algo(comm, TC_ALLGATHER, r->algo)))
		ba_fail(sh, 1, "node %d: tc_comm_set_algo(%s): %s", rank, r->algo, tc_last_error());
	if (!send || !recv)
		ba_fail(sh, 1, "node %d: out of memory", rank);

	for (int si = 0; si < r->nsizes; si++) {
		size_t m = r->sizes[si], words = m / 8;
		struct ba_row *row = &sh->rows[si];
		int timed = 0;

		for (int it = 0; it <= r->iters[si]; it++) {
			struct torus_fabric_query q;

			pthread_barrier_wait(&sh->bar);
			if (__atomic_load_n(&sh->dead, __ATOMIC_SEQ_CST) || sh->failed)
				break;
			ba_fill(send, words, ba_seed(rank, m, it));
			memset(recv, 0xa5, m * r->nodes);
			if (rank == 0 && (ret = ba_query(r->ctl, r->fabric, 1, &q)))
				ba_fail(sh, 0, "reset of the fabric's statistics: %s", strerror(-ret));
			pthread_barrier_wait(&sh->bar);
			sh->t0[rank] = ba_now();
			ret = tc_allgather(comm, send, recv, m);
			sh->t1[rank] = ba_now();
			if (ret)
				ba_fail(sh, 1, "node %d: tc_allgather: %s", rank, tc_last_error());
			pthread_barrier_wait(&sh->bar);
			/* only dead is read here: failed may be set by a faster node's check */
			if (__atomic_load_n(&sh->dead, __ATOMIC_SEQ_CST))
				break;
			if (it == 0) {
				struct tc_coll_info info = { .size = sizeof(info) };

				ret = tc_coll_last(comm, TC_ALLGATHER, &info);
				if (ret)
					ba_fail(sh, 0, "node %d: tc_coll_last: %s", rank, tc_strerror(ret));
				else if (strcmp(info.algo, r->algo))
					ba_fail(sh, 0, "%s ran instead: %s", info.algo, info.why);
			}
			if (rank == 0 && it > 0) {
				double lo = sh->t0[0], hi = sh->t1[0];

				for (int n = 1; n < r->nodes; n++) {
					lo = sh->t0[n] < lo ? sh->t0[n] : lo;
					hi = sh->t1[n] > hi ? sh->t1[n] : hi;
				}
				wall[timed] = (hi - lo) * 1e6;
				ret = ba_query(r->ctl, r->fabric, 0, &q);
				if (ret)
					ba_fail(sh, 0, "fabric query: %s", strerror(-ret));
				span[timed] = q.makespan_ns / 1e3;
				timed++;
			}
			if (r->corrupt && rank == 0 && si == 0 && it == 0)
				((unsigned char *)recv)[m * r->nodes - 1] ^= 1;
			for (int o = 0; o < r->nodes; o++) {
				long bad = ba_check(recv + o * words, words, ba_seed(o, m, it));

				if (bad >= 0) {
					ba_fail(sh, 0, "call %d: node %d: block of node %d wrong from byte %ld", it, rank, o,
						bad * 8);
					break;
				}
			}
			if (!sh->failed)
				__atomic_fetch_add(&sh->checked, (uint64_t)m * r->nodes, __ATOMIC_SEQ_CST);
		}
		pthread_barrier_wait(&sh->bar);
		if (rank == 0) {
			if (sh->failed) {
				row->err = -EIO;
				snprintf(row->why, sizeof(row->why), "%s", sh->why);
			} else {
				row->iters = timed;
				row->checked = sh->checked;
				row->span_min_us = row->span_max_us = span[0];
				for (int i = 1; i < timed; i++) {
					row->span_min_us = span[i] < row->span_min_us ? span[i] : row->span_min_us;
					row->span_max_us = span[i] > row->span_max_us ? span[i] : row->span_max_us;
				}
				row->wall_us = ba_median(wall, timed);
				row->span_us = ba_median(span, timed);
			}
			sh->failed = 0;
			sh->checked = 0;
			sh->why[0] = 0;
		}
		pthread_barrier_wait(&sh->bar);
		if (__atomic_load_n(&sh->dead, __ATOMIC_SEQ_CST)) {
			/* a failed call left the communicators unusable: the other rows are not run */
			if (rank == 0)
				for (int k = si + 1; k < r->nsizes; k++) {
					sh->rows[k].err = -ECANCELED;
					snprintf(sh->rows[k].why, sizeof(sh->rows[k].why),
						 "not run: an earlier call of this algorithm failed");
				}
			break;
		}
	}
	if (comm)
		tc_comm_destroy(comm);
	free(send);
	free(recv);
	return 0;
}

/* Fork the nodes of one algorithm and wait for them; 0 or -errno. */
static int ba_fork(struct ba_run *r, int limit_s)
{
	pthread_barrierattr_t ba;
	int failed = 0, forked = 0, ret;

	memset(r->sh, 0, sizeof(*r->sh));
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	ret = pthread_barrier_init(&r->sh->bar, &ba, r->nodes);
	pthread_barrierattr_destroy(&ba);
	if (ret)
		return -ret;
	fflush(stdout);
	for (int n = 0; n < r->nodes; n++) {
		pid_t pid = fork();

		if (pid < 0) {
			/* the others wait at the barrier until their alarm ends them */
			fprintf(stderr, "bench_allgather: fork: %s\n", strerror(errno));
			failed++;
			break;
		}
		forked++;
		if (pid == 0) {
			alarm(limit_s);
			_exit(ba_node(r, n));
		}
	}
	for (;;) {
		int st;

		if (wait(&st) < 0)
			break;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
	}
	pthread_barrier_destroy(&r->sh->bar);
	return failed || forked < r->nodes ? -ECHILD : 0;
}

static void ba_human(char *buf, size_t len, double bytes)
{
	if (bytes >= 1 << 20)
		snprintf(buf, len, "%.1f MiB", bytes / (1 << 20));
	else
		snprintf(buf, len, "%.1f KiB", bytes / 1024);
}

struct ba_shape_arg {
	struct tc_shape shape;
	char label[64];
	size_t maxm;
};

static int ba_shape_parse(const char *tok, struct ba_shape_arg *a, size_t maxm)
{
	char buf[64], *colon;

	snprintf(buf, sizeof(buf), "%s", tok);
	a->maxm = maxm;
	colon = strchr(buf, ':');
	if (colon) {
		*colon = 0;
		a->maxm = strtoull(colon + 1, NULL, 0);
	}
	snprintf(a->label, sizeof(a->label), "%s", buf);
	if (tc_shape_parse(&a->shape, buf, 0, 0))
		return -EINVAL;
	return a->shape.nodes > BA_MAX_NODES || a->shape.nodes < 2 ? -EINVAL : 0;
}

static int ba_iters(size_t m, int iters)
{
	if (m >= 32768)
		return iters < 3 ? iters : 3;
	if (m >= 8192)
		return iters < 5 ? iters : 5;
	return iters;
}

/* One shape: fabric, predictions, a run per algorithm, the table. */
static int ba_shape(int ctl, const struct ba_shape_arg *sa, const char *const *algos, size_t minm, size_t maxm,
		    int iters, int corrupt, const struct torus_fabric_create *tmpl, struct ba_shared *sh)
{
	const struct tc_cost_params paragon = { .ts_us = 75, .tw_us_per_byte = 0.011, .rho_us_per_byte = 0.014 };
	struct tc_cost_params fab = { 0 };
	struct torus_fabric_create c = *tmpl;
	struct torus_fabric_query q;
	struct ba_run r = { .ctl = ctl, .sh = sh, .corrupt = corrupt };
	int bad = 0, ret;

	if (sa->maxm < maxm)
		maxm = sa->maxm;
	for (size_t m = minm; m <= maxm && r.nsizes < BA_MAX_SIZES; m *= 2) {
		r.sizes[r.nsizes] = m;
		r.iters[r.nsizes] = ba_iters(m, iters);
		r.nsizes++;
	}
	if (!r.nsizes) {
		fprintf(stderr, "bench_allgather: %s: no block size in %zu..%zu\n", sa->label, minm, maxm);
		return -EINVAL;
	}
	c.ndims = sa->shape.ndims;
	c.wrap_mask = sa->shape.wrap_mask;
	for (int d = 0; d < sa->shape.ndims; d++)
		c.dims[d] = sa->shape.dims[d];
	/* the receive buffer of P blocks plus the executor's staging: 3 P m, 1..64 MiB */
	c.matrix_bytes = 3ULL * sa->shape.nodes * maxm;
	c.matrix_bytes = (c.matrix_bytes + 4095) / 4096 * 4096;
	if (c.matrix_bytes < (1 << 20))
		c.matrix_bytes = 1 << 20;
	if (c.matrix_bytes > (64 << 20))
		c.matrix_bytes = 64 << 20;
	if (ioctl(ctl, TORUS_IOC_FABRIC_CREATE, &c)) {
		ret = -errno;
		fprintf(stderr, "bench_allgather: %s: fabric create (%llu B matrix per node): %s\n", sa->label,
			(unsigned long long)c.matrix_bytes, strerror(-ret));
		return ret;
	}
	r.fabric = c.fabric_id;
	r.nodes = c.nodes;
	ret = ba_query(ctl, r.fabric, 0, &q);
	if (ret) {
		fprintf(stderr, "bench_allgather: %s: fabric query: %s\n", sa->label, strerror(-ret));
		goto out;
	}
	fab.ts_us = q.ts_ns / 1e3;
	fab.tw_us_per_byte = q.tw_ps / 1e6;
	fab.hop_us = q.hop_ns / 1e3;
	printf("\n%s torus (%d nodes): fabric ts %llu ns, tw %llu ps/B, hop %llu ns, matrix %llu KiB per node\n",
	       sa->label, r.nodes, (unsigned long long)q.ts_ns, (unsigned long long)q.tw_ps,
	       (unsigned long long)q.hop_ns, (unsigned long long)q.matrix_bytes >> 10);
	printf("| algo | m (B) | steps/crit. | pred. Paragon (us) | pred. fabric (us) | makespan (us) | span min..max (us) | wall/call (us) | calls | checked OK |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	fflush(stdout);
	for (int a = 0; algos[a]; a++) {
		const struct tc_algo *algo = tc_algo_find(TC_ALLGATHER, algos[a]);
		double tp[BA_MAX_SIZES], tf[BA_MAX_SIZES];
		const struct tc_sched *s = NULL;
		const char *why = NULL;
		struct tc_cost cost;

		if (!algo) {
			printf("| %s | - | - | no such allgather algorithm | | | | | | |\n", algos[a]);
			bad++;
			continue;
		}
		ret = tc_sched_get(TC_ALLGATHER, algo, &sa->shape, &s, &why);
		if (ret) {
			/* a refused shape is the algorithm's documented limit, not a failure */
			printf("| %s | all | - | not run: %s | | | | | | |\n", algos[a],
			       why ? why : tc_last_error());
			fflush(stdout);
			if (ret != -EOPNOTSUPP)
				bad++;
			continue;
		}
		ret = tc_cost_eval_sizes(s, &paragon, r.sizes, r.nsizes, tp, &cost);
		if (!ret)
			ret = tc_cost_eval_sizes(s, &fab, r.sizes, r.nsizes, tf, &cost);
		if (ret) {
			printf("| %s | all | - | cost model: %s | | | | | | |\n", algos[a], tc_last_error());
			bad++;
			continue;
		}
		r.algo = algo->name;
		ret = ba_fork(&r, 900);
		if (ret)
			fprintf(stderr, "bench_allgather: %s %s: a node process failed or was killed (%s)\n",
				sa->label, algos[a], strerror(-ret));
		for (int i = 0; i < r.nsizes; i++) {
			const struct ba_row *row = &sh->rows[i];
			char chk[32];

			if (ret || row->err || !row->iters) {
				printf("| %s | %zu | %u/%u | %.1f | %.2f | ERROR: %s | | | | |\n", algos[a], r.sizes[i],
				       s->nsteps, cost.steps, tp[i], tf[i],
				       row->err ? row->why : "node processes failed (see stderr)");
				bad++;
				continue;
			}
			ba_human(chk, sizeof(chk), (double)row->checked);
			printf("| %s | %zu | %u/%u | %.1f | %.2f | %.2f | %.2f..%.2f | %.0f | %d | %s |\n", algos[a],
			       r.sizes[i], s->nsteps, cost.steps, tp[i], tf[i], row->span_us, row->span_min_us,
			       row->span_max_us, row->wall_us, row->iters, chk);
		}
		fflush(stdout);
	}
	ret = bad ? -EIO : 0;
out:
	for (int i = 0; i < 50; i++) {
		struct torus_fabric_destroy x = { .size = sizeof(x), .fabric_id = r.fabric };

		if (!ioctl(ctl, TORUS_IOC_FABRIC_DESTROY, &x) || errno != EBUSY)
			break;
		usleep(100000);
	}
	return ret;
}

static const char ba_usage[] =
	"usage: bench_allgather [-s 4x4,5x5[,8x8:16384]] [-a ALGO,...] [-m MIN] [-M MAX] [-n ITERS]\n"
	"                       [-t TS_NS] [-w TW_PS] [-H HOP_NS]\n"
	"  -s  shapes (tori); SHAPE:BYTES caps m for that shape (default 4x4,5x5)\n"
	"  -a  allgather algorithms (default bcast-pattern,gossip-ham2,gossip-ham1,ring,saad-schultz,calvin,bruck)\n"
	"  -m, -M  smallest and largest block size, powers of two from MIN (default 64, 65536)\n"
	"  -n  timed calls per row (default 7; 5 from 8 KiB, 3 from 32 KiB), after one warm-up call\n"
	"  -t, -w, -H  the fabric's ts (ns), tw (ps per byte), hop (ns); default 1000, 100, 20\n"
	"  -x  flip one received byte (node 0, first call of the smallest m) after the call:\n"
	"      shows that the check aborts that row\n";

int main(int argc, char **argv)
{
	struct torus_fabric_create tmpl = { .size = sizeof(tmpl), .ts_ns = 1000, .tw_ps = 100, .hop_ns = 20 };
	const char *algos[16] = { NULL };
	char *shapes = strdup("4x4,5x5"), *alist = NULL;
	struct ba_shape_arg sa[8];
	size_t minm = 64, maxm = 65536;
	int nshapes = 0, iters = 7, corrupt = 0, opt, ctl, bad = 0;
	struct ba_shared *sh;
	char load[128] = "";
	FILE *f;

	while ((opt = getopt(argc, argv, "s:a:m:M:n:t:w:H:xh")) != -1) {
		switch (opt) {
		case 's':
			free(shapes);
			shapes = strdup(optarg);
			break;
		case 'a':
			alist = optarg;
			break;
		case 'm':
			minm = strtoull(optarg, NULL, 0);
			break;
		case 'M':
			maxm = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			iters = atoi(optarg);
			break;
		case 't':
			tmpl.ts_ns = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			tmpl.tw_ps = strtoull(optarg, NULL, 0);
			break;
		case 'H':
			tmpl.hop_ns = strtoull(optarg, NULL, 0);
			break;
		case 'x':
			corrupt = 1;
			break;
		default:
			fputs(ba_usage, opt == 'h' ? stdout : stderr);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (minm < 8 || minm % 8 || maxm < minm || maxm > (1 << 20) || iters < 1 || iters >= BA_MAX_ITERS) {
		fprintf(stderr, "bench_allgather: -m must be a multiple of 8, -m <= -M <= 1 MiB, -n 1..%d\n",
			BA_MAX_ITERS - 1);
		return 2;
	}
	for (char *save = NULL, *tok = strtok_r(shapes, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (nshapes == 8 || ba_shape_parse(tok, &sa[nshapes], maxm)) {
			fprintf(stderr, "bench_allgather: bad shape '%s' (at most 8 shapes of 2..%d nodes)\n", tok,
				BA_MAX_NODES);
			return 2;
		}
		nshapes++;
	}
	if (alist) {
		int n = 0;

		for (char *save = NULL, *tok = strtok_r(alist, ",", &save); tok && n < 15;
		     tok = strtok_r(NULL, ",", &save))
			algos[n++] = tok;
	} else {
		memcpy(algos, ba_default_algos, sizeof(ba_default_algos));
	}
	ctl = open(BA_CTL_PATH, O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		fprintf(stderr, "bench_allgather: %s: %s (is torus.ko loaded?)\n", BA_CTL_PATH, strerror(errno));
		return 1;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("bench_allgather: mmap");
		return 1;
	}
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (!fgets(load, sizeof(load), f))
			load[0] = 0;
		fclose(f);
	}
	printf("bench_allgather: %ld CPUs online, load average %s", sysconf(_SC_NPROCESSORS_ONLN),
	       load[0] ? load : "unknown\n");
	for (int i = 0; i < nshapes; i++) {
		double t0 = ba_now();

		if (ba_shape(ctl, &sa[i], algos, minm, maxm, iters, corrupt, &tmpl, sh))
			bad++;
		printf("(%s: %.1f s)\n", sa[i].label, ba_now() - t0);
	}
	munmap(sh, sizeof(*sh));
	close(ctl);
	free(shapes);
	return bad ? 1 : 0;
}
