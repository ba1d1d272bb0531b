// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_overlap: how much of tc_ialltoall / tc_iallgather overlaps with the
 * application's computation (not a test; run-guest leaves bench_* out).
 * One rank per node under torusrun, e.g.
 *   torusrun --fabric 0 -- build/tests/vm/bench_overlap [ITERS] [busy]
 * (tests/vm/bench-offload runs it with TC_DEV_OFFLOAD on and off).
 *
 * For m = 64 KiB and 1 MiB per peer and each of the two calls, after two
 * warmup calls (the first of a communicator runs step by step) and three
 * calls alone, ITERS triplets of:
 *   t_coll: the nonblocking call and its tc_wait alone;
 *   t_comp: computation of length L (the median of every call alone so
 *           far: it follows the call's own time as the load drifts), with
 *           no library call inside it (a sleep by default: a guest has
 *           fewer vCPUs than 16 ranks, and busy ranks would starve the
 *           kernel engines that model the NIC; "busy" spins instead);
 *   t_both: start the call, compute L, then tc_wait.
 * The three are measured interleaved, their order turning, so that a
 * change of the host's load between them falls on all three alike. Each
 * figure is the slowest rank's time (the ranks meet at tc_barrier before
 * each); every byte of every call is checked (bench_data.h).
 * overlap = (t_coll + t_comp - t_both) / min(t_coll, t_comp): 1 when the
 * call completed entirely during the computation, 0 when nothing of it did.
 *
 * Where the time of t_both goes, per call: post (tc_i* until it returns),
 * whether every rank found its call complete when its computation ended
 * (tc_test, after the computation), and the wait left after it (tc_wait).
 * And a fourth call per iteration, t_seen: the call, then sleeps of L/20
 * with a tc_test after each until it is complete (tc_test only reads the
 * request: the progress thread and the NIC do the work), i.e. how long the
 * call takes while its rank sleeps, against t_coll, where the rank blocks
 * in tc_wait.
 *
 * Rank 0 prints one line per (call, m), medians over ITERS:
 *   overlap COLL M t_coll_us t_comp_us t_both_us overlap offloaded \
 *       overlap_per_iter post_us wait_us done_at_end L_us t_seen_us
 * (overlap from the medians; overlap_per_iter the median of each
 * iteration's own overlap; done_at_end the share of iterations in which
 * every rank's call was complete when its computation ended; L_us the
 * median L).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "toruscoll.h"
#include "bench_data.h"

#define MAX_ITERS 100

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int busy;

static void compute(double us)
{
	if (!busy) {
		usleep((useconds_t)us);
		return;
	}
	for (double t0 = now_us(); now_us() - t0 < us;)
		;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct buf {
	int a2a;
	size_t m, n;	  /* block, whole buffer (P * m) */
	unsigned char *base; /* what this rank sends, before the call's key */
	unsigned char *ref;  /* what it must receive, before the key */
	unsigned char *s, *r;
};

static int buf_init(struct buf *b, int a2a, int me, int P, size_t m)
{
	b->a2a = a2a;
	b->m = m;
	b->n = (size_t)P * m;
	b->base = malloc(b->n);
	b->ref = malloc(b->n);
	b->s = malloc(b->n);
	b->r = malloc(b->n);
	if (!b->base || !b->ref || !b->s || !b->r)
		return -ENOMEM;
	for (int k = 0; k < P; k++) {
		bd_block(b->base + (size_t)k * m, me, a2a ? k : 0, m);
		bd_block(b->ref + (size_t)k * m, k, a2a ? me : 0, m);
	}
	return 0;
}

static void buf_free(struct buf *b)
{
	free(b->base);
	free(b->ref);
	free(b->s);
	free(b->r);
}

/* slowest over ranks of: time, post, wait; and 1 if any rank's call was not done when its computation ended */
enum { M_T, M_POST, M_WAIT, M_NOTDONE, M_N };

/*
 * One measurement: mode 'c' the call alone, 'p' the computation alone,
 * 'b' both (call, compute L, test, wait), 'q' the call's completion seen
 * while sleeping (call, then sleep L/20 and tc_test until it is done: the
 * time the call takes while its rank sleeps, within L/20). The slowest
 * rank's figures in out.
 */
static int one(tc_comm_t *comm, struct buf *b, char mode, double L, uint32_t call, double out[M_N], long *bad)
{
	uint64_t key = bd_key(call);
	double t0, t1 = 0, t2 = 0, t3, v[M_N] = { 0 };
	tc_request_t *req = NULL;
	int ret, done = 1;

	if (mode != 'p') {
		bd_xor(b->s, b->base, b->a2a ? b->n : b->m, key);
		memset(b->r, 0, b->n);
	}
	ret = tc_barrier(comm);
	if (ret)
		return ret;
	t0 = now_us();
	if (mode == 'p') {
		compute(L);
		t3 = t2 = t1 = now_us();
	} else {
		ret = b->a2a ? tc_ialltoall(comm, b->s, b->r, b->m, &req) : tc_iallgather(comm, b->s, b->r, b->m, &req);
		if (ret)
			return ret;
		t1 = now_us();
		if (mode == 'q') {
			/* when did the call complete while the rank slept? (tc_test drives nothing) */
			while (!(ret = tc_test(&req)))
				compute(L / 20);
			if (ret < 0)
				return ret;
		} else if (mode == 'b') {
			compute(L);
			ret = tc_test(&req);
			if (ret < 0)
				return ret;
			done = ret == 1;
		}
		t2 = now_us();
		ret = tc_wait(&req);
		t3 = now_us();
		if (ret)
			return ret;
		*bad += bd_bad(b->r, b->ref, b->n, key);
	}
	v[M_T] = t3 - t0;
	v[M_POST] = t1 - t0;
	v[M_WAIT] = t3 - t2;
	v[M_NOTDONE] = !done;
	return tc_allreduce(comm, v, out, M_N, TC_DOUBLE, TC_MAX);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 64 << 10, 1 << 20 };
	int iters = argc > 1 ? atoi(argv[1]) : 5, ret = 0, me, P;
	uint32_t call = 1;
	tc_comm_t *comm;

	busy = argc > 2 && !strcmp(argv[2], "busy");
	if (iters < 1 || iters > MAX_ITERS)
		return 2;
	ret = tc_comm_create(NULL, &comm);
	if (ret) {
		fprintf(stderr, "tc_comm_create: %s\n", tc_last_error());
		return 4;
	}
	me = tc_comm_rank(comm);
	P = tc_comm_size(comm);
	for (int a2a = 1; a2a >= 0; a2a--) {
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			double callc[MAX_ITERS + 3], lc[MAX_ITERS + 3], Ls[MAX_ITERS], tc[MAX_ITERS], tp[MAX_ITERS],
				tb[MAX_ITERS], ov[MAX_ITERS], post[MAX_ITERS], wait[MAX_ITERS], seen[MAX_ITERS], x[M_N], c[M_N], p[M_N], bo[M_N], L, med_c, med_p, med_b;
			struct tc_coll_info info = { .size = sizeof(info) };
			int notdone = 0, nc = 0;
			struct buf b;
			long bad = 0;

			if (buf_init(&b, a2a, me, P, sizes[si]))
				return 4;
			for (int w = 0; w < 2 && !ret; w++)
				ret = one(comm, &b, 'c', 0, call++, x, &bad);
			for (int i = 0; i < 3 && !ret; i++) {
				ret = one(comm, &b, 'c', 0, call++, x, &bad);
				callc[i] = x[M_T];
			}
			nc = 3;
			for (int i = 0; i < iters && !ret; i++) {
				/* the computation's length: the median of every call alone so far */
				memcpy(lc, callc, nc * sizeof(double));
				L = median(lc, nc);
				Ls[i] = L;
				/* the order of the three turns with i */
				for (int k = 0; k < 3 && !ret; k++) {
					char mode = "cpb"[(i + k) % 3];

					ret = one(comm, &b, mode, L, call++, mode == 'c' ? c : mode == 'p' ? p : bo, &bad);
				}
				if (!ret)
					ret = one(comm, &b, 'q', L, call++, x, &bad);
				if (ret)
					break;
				seen[i] = x[M_T];
				tc[i] = c[M_T];
				callc[nc++] = c[M_T];
				tp[i] = p[M_T];
				tb[i] = bo[M_T];
				ov[i] = (c[M_T] + p[M_T] - bo[M_T]) / (c[M_T] < p[M_T] ? c[M_T] : p[M_T]);
				post[i] = bo[M_POST];
				wait[i] = bo[M_WAIT];
				notdone += bo[M_NOTDONE] > 0;
			}
			if (ret) {
				fprintf(stderr, "rank %d: %s\n", me, tc_last_error());
				return 1;
			}
			if (bad) {
				fprintf(stderr, "rank %d: %ld wrong bytes\n", me, bad);
				return 1;
			}
			med_c = median(tc, iters);
			med_p = median(tp, iters);
			med_b = median(tb, iters);
			tc_coll_last(comm, a2a ? TC_ALLTOALL : TC_ALLGATHER, &info);
			if (me == 0)
				printf("overlap %s %zu %.0f %.0f %.0f %.2f %u %.2f %.0f %.0f %.2f %.0f %.0f\n",
				       a2a ? "ialltoall" : "iallgather", b.m, med_c, med_p, med_b,
				       (med_c + med_p - med_b) / (med_c < med_p ? med_c : med_p), info.offloaded,
				       median(ov, iters), median(post, iters), median(wait, iters),
				       (double)(iters - notdone) / iters, median(Ls, iters), median(seen, iters));
			fflush(stdout);
			buf_free(&b);
		}
	}
	tc_comm_destroy(comm);
	return 0;
}
