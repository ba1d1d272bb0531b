// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Sub-communicators (tc_comm_create_sub) on the simulator: boxes of a 4x4
 * torus (the whole torus reversed, rows, rows reversed, columns, 4x2
 * halves, 3-paths across the wrap-around, a reversed 2x2 corner), of a
 * 4x4x2 torus (planes, a 4x2 box on dimensions 0 and 2, pairs along the
 * 2-ring) and of a 3x5 fabric whose dimension 1 alone wraps (reversed
 * columns: 3-paths against a mesh dimension; 3-paths across the ring's
 * wrap-around) and of a one-port 4x4 (reversed, columns, 3-paths: a sub
 * keeps its parent's port model). On every sub: the logical shape and rank it must have, then
 * every everyday collective and the nonblocking mix of coll_checks.h, and
 * alltoall and allgather at two block sizes, every received byte checked
 * against the reference for the sub's own logical shape. Between subs the
 * whole parent runs an allreduce, and a parent iallreduce stays
 * outstanding while each sub runs.
 *
 * Then, on the 4x4: a row (context 1) and a column (context 2) alive at
 * once with the parent, nonblocking calls of all three outstanding
 * together; a sub of the row (the row reversed, which is a sub of the
 * root); the cases that must fail: one rank and {0, 5, 10} (-ENOTSUP), bad
 * lists and contexts (-EINVAL), a taken context (-EBUSY); and a sub left
 * alive after its parent was destroyed (-EIO, still destroyable); a
 * timeout in a sub, reported in the sub's own ranks and ports, breaking its
 * parent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>

#include "toruscoll.h"
#include "tap.h"

#include "coll_checks.h"
/* the transports under a communicator, for the tag test (mix_tags) */
#include "runtime/comm.h"
#include "transport/transport.h"

#define MAXCASES 8
#define MAXINST 8

struct subcase {
	const char *label;
	int ninst, n;		  /* instances (disjoint subs) and ranks per sub */
	int (*rank)(int inst, int i); /* parent rank of member i of instance inst */
	int k, dims[TC_MAX_DIMS]; /* the logical shape it must get */
	unsigned int wrap;
};

struct parent {
	const char *label;
	int k, dims[TC_MAX_DIMS];
	unsigned int wrap;
	struct subcase cases[MAXCASES];
	int ncases;
	int one_port;
};

/* 4x4: rank = 4x + y */
static int rev16(int inst, int i) { (void)inst; return 15 - i; }
static int row4(int inst, int i) { return 4 * inst + i; }
static int rowrev4(int inst, int i) { return 4 * inst + 3 - i; }
static int col4(int inst, int i) { return 4 * i + inst; }
static int half4(int inst, int i) { return (i / 2) * 4 + inst * 2 + i % 2; }
static int path3(int inst, int i) { return 4 * inst + (3 + i) % 4; }
static int corner(int inst, int i) { (void)inst; return (1 - i / 2) * 4 + (1 - i % 2); }
/* 4x4x2: rank = 8x + 2y + z */
static int plane(int inst, int i) { return 2 * i + inst; }
static int xz(int inst, int i) { return (i / 2) * 8 + inst * 2 + i % 2; }
static int zpair(int inst, int i) { return 2 * inst + i; }
/* 3x5, dimension 1 wraps: rank = 5x + y */
static int colrev3(int inst, int i) { return (2 - i) * 5 + inst; }
static int ring3(int inst, int i) { return 5 * (inst % 3) + (4 + i + (inst / 3)) % 5; }

static const struct parent parents[] = {
	{ "4x4", 2, { 4, 4 }, 0x3, {
		{ "reversed", 1, 16, rev16, 2, { 4, 4 }, 0x3 },
		{ "rows", 4, 4, row4, 1, { 4 }, 0x1 },
		{ "rows reversed", 4, 4, rowrev4, 1, { 4 }, 0x1 },
		{ "columns", 4, 4, col4, 1, { 4 }, 0x1 },
		{ "4x2 halves", 2, 8, half4, 2, { 4, 2 }, 0x1 },
		{ "3-paths across the wrap", 4, 3, path3, 1, { 3 }, 0x0 },
		{ "2x2 corner reversed", 1, 4, corner, 2, { 2, 2 }, 0x0 },
	}, 7, 0 },
	{ "4x4x2", 3, { 4, 4, 2 }, 0x7, {
		{ "planes", 2, 16, plane, 2, { 4, 4 }, 0x3 },
		{ "4x2 on dims 0, 2", 4, 8, xz, 2, { 4, 2 }, 0x3 },
		{ "z pairs", 8, 2, zpair, 1, { 2 }, 0x1 },
	}, 3, 0 },
	{ "3x5 (dim 1 wraps)", 2, { 3, 5 }, 0x2, {
		{ "columns reversed", 5, 3, colrev3, 1, { 3 }, 0x0 },
		{ "3-paths across the wrap", 3, 3, ring3, 1, { 3 }, 0x0 },
	}, 2, 0 },
	{ "4x4 one-port", 2, { 4, 4 }, 0x3, {
		{ "reversed", 1, 16, rev16, 2, { 4, 4 }, 0x3 },
		{ "columns", 4, 4, col4, 1, { 4 }, 0x1 },
		{ "3-paths across the wrap", 4, 3, path3, 1, { 3 }, 0x0 },
	}, 3, 1 },
};

struct prun {
	const struct parent *pc;
	struct run *R[MAXCASES][MAXINST]; /* per sub, indexed by its logical rank */
	struct nres shape[MAXCASES];	  /* creation and logical shape, all ranks */
	struct nres a2a[MAXCASES];	  /* alltoall / allgather, all ranks */
	struct nres par[MAXCASES];	  /* the parent's calls around the subs */
	char algos[MAXCASES][160];	  /* what logical rank 0 of instance 0 ran */
	long par_calls[MAXCASES], par_bad[MAXCASES];
};

static void nrec(struct nres *n, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void nrec(struct nres *n, int ok, const char *fmt, ...)
{
	va_list ap;

	__atomic_fetch_add(&n->calls, 1, __ATOMIC_RELAXED);
	if (ok)
		return;
	if (__atomic_fetch_add(&n->bad, 1, __ATOMIC_RELAXED) == 0) {
		va_start(ap, fmt);
		vsnprintf(n->first, sizeof(n->first), fmt, ap);
		va_end(ap);
	}
}

/* My instance and index in case sc, or -1. */
static int member(const struct subcase *sc, int me, int *inst)
{
	for (int s = 0; s < sc->ninst; s++)
		for (int i = 0; i < sc->n; i++)
			if (sc->rank(s, i) == me) {
				*inst = s;
				return i;
			}
	return -1;
}

static int make_sub(tc_comm_t *parent, const struct subcase *sc, int inst, unsigned int ctx, tc_comm_t **sub)
{
	int ranks[64];

	for (int i = 0; i < sc->n; i++)
		ranks[i] = sc->rank(inst, i);
	return tc_comm_create_sub(parent, ranks, sc->n, ctx, sub);
}

/* The logical shape and rank the sub must have. */
static void check_shape(tc_comm_t *sub, const struct subcase *sc, int idx, struct nres *n)
{
	int dims[TC_MAX_DIMS];
	unsigned int wrap;
	int k = tc_comm_dims(sub, dims, &wrap), ok = k == sc->k && wrap == sc->wrap;

	for (int d = 0; ok && d < k; d++)
		ok = dims[d] == sc->dims[d];
	nrec(n, ok && tc_comm_rank(sub) == idx && tc_comm_size(sub) == sc->n,
	     "%s: rank %d size %d, %d dims (%d x %d, wrap %#x); want rank %d", sc->label, tc_comm_rank(sub),
	     tc_comm_size(sub), k, dims[0], k > 1 ? dims[1] : 1, wrap, idx);
}

/* Blocking alltoall and allgather at two block sizes; every byte checked. */
static void check_a2a(tc_comm_t *c, struct nres *n, char *algos)
{
	int me = tc_comm_rank(c), P = tc_comm_size(c);
	static const size_t ms[2] = { 8, 1000 };

	for (int t = 0; t < 2; t++) {
		size_t m = ms[t];
		unsigned char *s = malloc(P * m), *r = malloc(P * m), *g = malloc(P * m);
		struct tc_coll_info info = { .size = sizeof(info) };
		long bad = 0;
		int ret;

		for (size_t k = 0; k < P * m; k++)
			s[k] = bpat(CALL_SUB + t, me, (int)(k / m), k % m);
		memset(r, 0, P * m);
		ret = tc_alltoall(c, s, r, m);
		for (size_t k = 0; k < P * m; k++)
			bad += r[k] != bpat(CALL_SUB + t, (int)(k / m), me, k % m);
		tc_coll_last(c, TC_ALLTOALL, &info);
		nrec(n, !ret && !bad, "alltoall m=%zu (%s): %s, %ld bad bytes", m, info.algo, tc_strerror(ret), bad);
		memset(g, 0, P * m);
		ret = tc_allgather(c, s + (size_t)me * m, g, m);
		bad = 0;
		for (size_t k = 0; k < P * m; k++)
			bad += g[k] != bpat(CALL_SUB + t, (int)(k / m), (int)(k / m), k % m);
		if (algos)
			snprintf(algos + strlen(algos), 160 - strlen(algos), "%salltoall %s", t ? ", " : "", info.algo);
		tc_coll_last(c, TC_ALLGATHER, &info);
		nrec(n, !ret && !bad, "allgather m=%zu (%s): %s, %ld bad bytes", m, info.algo, tc_strerror(ret), bad);
		if (algos)
			snprintf(algos + strlen(algos), 160 - strlen(algos), ", allgather %s", info.algo);
		free(s);
		free(r);
		free(g);
	}
}

/* The parent's allreduce: the sum over ranks of (me + salt). */
static int parent_sum_ok(tc_comm_t *p, int salt)
{
	int P = tc_comm_size(p), me = tc_comm_rank(p), in = me + salt, out = -1;

	return !tc_allreduce(p, &in, &out, 1, TC_INT32, TC_SUM) && out == P * (P - 1) / 2 + P * salt;
}

static void run_case(tc_comm_t *parent, struct prun *pr, int ci)
{
	const struct subcase *sc = &pr->pc->cases[ci];
	int me = tc_comm_rank(parent), P = tc_comm_size(parent), inst = -1, idx = member(sc, me, &inst);
	double in = me, out = -1;
	tc_request_t *req = NULL;
	tc_comm_t *sub = NULL;
	int ret;

	/* a parent call outstanding while the sub runs (every rank issues it first) */
	ret = tc_iallreduce(parent, &in, &out, 1, TC_DOUBLE, TC_MAX, &req);
	if (idx >= 0) {
		ret = make_sub(parent, sc, inst, 1, &sub);
		nrec(&pr->shape[ci], !ret, "%s: tc_comm_create_sub: %s (%s)", sc->label, tc_strerror(ret), tc_last_error());
	}
	if (sub) {
		struct run *R = pr->R[ci][inst];

		check_shape(sub, sc, idx, &pr->shape[ci]);
		node_fn(sub, R);
		check_a2a(sub, &pr->a2a[ci], inst == 0 && idx == 0 ? pr->algos[ci] : NULL);
		tc_comm_destroy(sub);
	}
	ret = tc_wait(&req);
	nrec(&pr->par[ci], !ret && out == P - 1, "%s: parent iallreduce around the sub: %s, %g", sc->label,
	     tc_strerror(ret), out);
	nrec(&pr->par[ci], parent_sum_ok(parent, ci), "%s: parent allreduce after the sub", sc->label);
}

static int parent_fn(tc_comm_t *parent, void *arg)
{
	struct prun *pr = arg;

	for (int ci = 0; ci < pr->pc->ncases; ci++)
		run_case(parent, pr, ci);
	return 0;
}

static void report_parent(struct prun *pr)
{
	for (int ci = 0; ci < pr->pc->ncases; ci++) {
		const struct subcase *sc = &pr->pc->cases[ci];
		char label[96];
		struct nres *ns[3] = { &pr->shape[ci], &pr->a2a[ci], &pr->par[ci] };
		static const char *const what[3] = { "created with its logical shape and rank",
						      "alltoall and allgather, 2 block sizes",
						      "parent calls around it" };

		snprintf(label, sizeof(label), "%s: %s", pr->pc->label, sc->label);
		for (int w = 0; w < 3; w++) {
			tap_ok(ns[w]->calls > 0 && !ns[w]->bad, "%s: %s: %ld checks", label, what[w], ns[w]->calls);
			if (ns[w]->bad)
				tap_diag("%ld failed; first: %s", ns[w]->bad, ns[w]->first);
		}
		tap_diag("%s ran (m = 8, 1000): %s", label, pr->algos[ci]);
		for (int s = 0; s < sc->ninst; s++) {
			char l2[128];

			snprintf(l2, sizeof(l2), "%s #%d", label, s);
			report_run(l2, pr->R[ci][s]);
		}
	}
}

static void run_parent(const struct parent *pc)
{
	struct tc_sim_attr a = { .size = sizeof(a), .ndims = pc->k, .wrap_mask = pc->wrap,
				 .port_model = pc->one_port ? TC_ONE_PORT : TC_ALL_PORT };
	struct prun *pr = calloc(1, sizeof(*pr));
	tc_sim_t *sim;
	double t0 = now_ms();
	int ret;

	pr->pc = pc;
	for (int d = 0; d < pc->k; d++)
		a.dims[d] = pc->dims[d];
	for (int ci = 0; ci < pc->ncases; ci++) {
		const struct subcase *sc = &pc->cases[ci];

		for (int s = 0; s < sc->ninst; s++) {
			struct run *R = calloc(1, sizeof(*R));

			R->g.k = sc->k;
			R->g.P = sc->n;
			R->light = 1;
			R->do_errs = ci == 0; /* the bad-argument checks once per parent */
			for (int d = 0; d < sc->k; d++) {
				R->g.dims[d] = sc->dims[d];
				R->g.wrap[d] = !!(sc->wrap & (1u << d));
			}
			pr->R[ci][s] = R;
		}
	}
	ret = tc_sim_create(&a, &sim);
	if (tap_ok(!ret, "%s: tc_sim_create", pc->label)) {
		ret = tc_sim_launch(sim, parent_fn, pr);
		tap_ok(!ret, "%s: every node ran (%s)", pc->label, ret ? tc_last_error() : "ok");
		report_parent(pr);
		tc_sim_destroy(sim);
	}
	tap_diag("%s: %.0f ms", pc->label, now_ms() - t0);
	for (int ci = 0; ci < pc->ncases; ci++)
		for (int s = 0; s < pc->cases[ci].ninst; s++)
			free(pr->R[ci][s]);
	free(pr);
}

/* ---- a row, a column and the parent at once; errors; an orphan --------- */

struct mix {
	struct nres live, nested, errs, tags;
	pthread_barrier_t bar; /* the 16 node threads, between the steps of mix_tags */
	tc_comm_t *orphan[16]; /* row subs left alive when the parent goes */
};

/*
 * A parent's and its sub's messages in flight together with the same tag,
 * port and source: node 0 sends node 1 (its row neighbour, one hop + in
 * dimension 1) one message on the row sub and one on the parent, both with
 * tag T, after node 1 posted the parent's receive and then the row's, both
 * with tag T. Only the row's context in the tag's high bits (transport/
 * sub.c) sends each message to its own receive: on the device, and on the
 * simulator with TC_SIM_MATCH=device, a receive matches by (port, tag);
 * without the context the row's message, sent first, lands in the parent's
 * receive. Raw transfers on the communicators' transports, between
 * collectives (nothing else is posted meanwhile).
 */
static void mix_tags(tc_comm_t *p, tc_comm_t *row, struct mix *mx)
{
	struct tc_tp *ptp = &p->tp, *rtp = row ? &row->tp : NULL;
	int me = tc_comm_rank(p), ret = row ? 0 : -EINVAL;
	const uint64_t T = 0x1234; /* step 0, message 0x1234: a schedule's tag */
	struct tc_wait_err err = { 0 };
	unsigned char *buf = NULL;
	void *base = NULL;

	if (me <= 1) {
		ret = ptp->ops->buffer(ptp, 64, &base);
		buf = base;
	}
	if (me == 1 && !ret) {
		/* the parent's receive from node 0, then the row's from row rank 0: both arrive on port 3 (+ in dim 1) */
		const struct tc_seg seg[2] = { { 0, 8 }, { 8, 8 } };
		struct tc_xfer pr = { .op = TC_XFER_RECV, .port = 3, .peer = 0, .nsegs = 1, .segs = &seg[0], .tag = T };
		struct tc_xfer rr = { .op = TC_XFER_RECV, .port = 1, .peer = 0, .nsegs = 1, .segs = &seg[1], .tag = T };

		memset(buf, 0, 16);
		ret = ptp->ops->post(ptp, &pr, 1) ?: rtp->ops->post(rtp, &rr, 1);
	}
	pthread_barrier_wait(&mx->bar);
	if (me == 0 && !ret) {
		/* the row's message first, then the parent's: + in dim 1 leaves on port 2 (the row's port 0) */
		const struct tc_seg seg[2] = { { 16, 8 }, { 24, 8 } };
		struct tc_xfer rs = { .op = TC_XFER_SEND, .port = 0, .route = { 1 }, .peer = 1, .nsegs = 1,
				      .segs = &seg[0], .tag = T };
		struct tc_xfer ps = { .op = TC_XFER_SEND, .port = 2, .route = { 0, 1 }, .peer = 1, .nsegs = 1,
				      .segs = &seg[1], .tag = T };

		memcpy(buf + 16, "row msg", 8);
		memcpy(buf + 24, "parent!", 8);
		ret = rtp->ops->post(rtp, &rs, 1) ?: ptp->ops->post(ptp, &ps, 1);
	}
	if (me <= 1 && !ret)
		ret = ptp->ops->wait(ptp, 2, 10000, &err);
	if (me == 1)
		nrec(&mx->tags, !ret && !memcmp(buf, "parent!", 8) && !memcmp(buf + 8, "row msg", 8),
		     "node 1: the parent's receive got \"%.7s\", the row's \"%.7s\" (want \"parent!\", \"row msg\"): %s %s",
		     ret ? "" : (char *)buf, ret ? "" : (char *)buf + 8, tc_strerror(ret), ret ? tc_last_error() : "");
	else if (me == 0)
		nrec(&mx->tags, !ret, "node 0: both sends complete: %s %s", tc_strerror(ret), ret ? tc_last_error() : "");
	pthread_barrier_wait(&mx->bar);
}

/* Nonblocking calls of the parent, the row and the column outstanding together. */
static void mix_live(tc_comm_t *p, tc_comm_t *row, tc_comm_t *col, struct nres *n)
{
	int me = tc_comm_rank(p), x = me / 4, y = me % 4;
	unsigned char ps[16 * 8], pr[16 * 8], cg[4 * 8], ra_s[4 * 8], ra_r[4 * 8];
	int64_t rin = me, rout = -1;
	int bc = me == 6 ? 4242 : 0;
	tc_request_t *rq[4];
	long bad = 0;
	int ret;

	for (int k = 0; k < 16 * 8; k++)
		ps[k] = bpat(CALL_SUB + 10, me, k / 8, k % 8);
	for (int k = 0; k < 4 * 8; k++)
		ra_s[k] = bpat(CALL_SUB + 11, me, k / 8, k % 8);
	ret = tc_ialltoall(p, ps, pr, 8, &rq[0]);
	ret = ret ?: tc_iallreduce(row, &rin, &rout, 1, TC_INT64, TC_SUM, &rq[1]);
	ret = ret ?: tc_iallgather(col, ps, cg, 8, &rq[2]);
	ret = ret ?: tc_ibcast(p, &bc, 1, TC_INT32, 6, &rq[3]);
	ret = ret ?: tc_alltoall(row, ra_s, ra_r, 8);
	for (int i = 3; i >= 0; i--)
		ret = ret ?: tc_wait(&rq[i]);
	for (int k = 0; k < 16 * 8; k++)
		bad += pr[k] != bpat(CALL_SUB + 10, k / 8, me, k % 8);
	for (int k = 0; k < 4 * 8; k++) {
		bad += cg[k] != bpat(CALL_SUB + 10, 4 * (k / 8) + y, 0, k % 8);
		bad += ra_r[k] != bpat(CALL_SUB + 11, 4 * x + k / 8, y, k % 8);
	}
	bad += rout != 4 * (4 * x) + 6;
	bad += bc != 4242;
	nrec(n, !ret && !bad, "rank %d: parent ialltoall + ibcast, row iallreduce + alltoall, column iallgather: %s, %ld bad",
	     me, tc_strerror(ret), bad);
}
/* A sub of the row: the row reversed, which becomes a sub of the root. */
static void mix_nested(tc_comm_t *row, struct nres *n)
{
	static const int rev[4] = { 3, 2, 1, 0 };
	int r = tc_comm_rank(row), in = r + 1, out = -1, ret;
	tc_comm_t *sub = NULL;

	ret = tc_comm_create_sub(row, rev, 4, 3, &sub);
	nrec(n, !ret && tc_comm_rank(sub) == 3 - r && tc_comm_size(sub) == 4, "sub of a sub: %s, rank %d of %d",
	     tc_strerror(ret), sub ? tc_comm_rank(sub) : -1, sub ? tc_comm_size(sub) : -1);
	if (!sub)
		return;
	ret = tc_allreduce(sub, &in, &out, 1, TC_INT32, TC_SUM);
	nrec(n, !ret && out == 10, "allreduce on the sub of a sub: %s, %d", tc_strerror(ret), out);
	in = tc_comm_rank(sub) == 1 ? 77 : 0;
	ret = tc_bcast(sub, &in, 1, TC_INT32, 1);
	nrec(n, !ret && in == 77, "bcast from its rank 1 (row rank 2): %s, %d", tc_strerror(ret), in);
	tc_comm_destroy(sub);
}

struct bad_case {
	const char *what;
	int ranks[16], n;
	unsigned int ctx;
	int want;
};

/* Lists that must fail, checked on every rank of the 4x4 (each case uses
 * the caller's own rank where the list must contain it). */
static void mix_errors(tc_comm_t *p, tc_comm_t *row, struct nres *n)
{
	int me = tc_comm_rank(p), o = (me + 1) % 16;
	const struct bad_case c[] = {
		{ "one rank", { me }, 1, 5, -ENOTSUP },
		{ "{me, me+5, me+10}: not a box", { me, (me + 5) % 16, (me + 10) % 16 }, 3, 5, -ENOTSUP },
		{ "n = 0", { me }, 0, 5, -EINVAL },
		{ "n = 17", { me }, 17, 5, -EINVAL },
		{ "a rank twice", { me, o, me }, 3, 5, -EINVAL },
		{ "rank 16", { me, 16 }, 2, 5, -EINVAL },
		{ "rank -1", { -1, me }, 2, 5, -EINVAL },
		{ "caller not listed", { o }, 1, 5, -EINVAL },
		{ "context 0", { me, o }, 2, 0, -EINVAL },
		{ "context 128", { me, o }, 2, 128, -EINVAL },
		{ "context 1, taken by the row", { me, o }, 2, 1, -EBUSY },
	};
	tc_comm_t *sub = (tc_comm_t *)1;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int ret = tc_comm_create_sub(p, c[i].ranks, c[i].n, c[i].ctx, &sub);

		nrec(n, ret == c[i].want && !sub && *tc_last_error(), "%s: got %d (%s: %s), want %d", c[i].what, ret,
		     tc_strerror(ret), tc_last_error(), c[i].want);
	}
	nrec(n, tc_comm_create_sub(NULL, c[0].ranks, 1, 1, &sub) == -EINVAL, "NULL parent");
	nrec(n, tc_comm_create_sub(p, NULL, 1, 1, &sub) == -EINVAL, "NULL ranks");
	nrec(n, tc_comm_create_sub(p, c[1].ranks, 2, 1, NULL) == -EINVAL, "NULL sub pointer");
	(void)row;
}

static int mix_fn(tc_comm_t *p, void *arg)
{
	struct mix *mx = arg;
	int me = tc_comm_rank(p), ranks[4];
	tc_comm_t *row = NULL, *col = NULL;

	for (int i = 0; i < 4; i++)
		ranks[i] = 4 * (me / 4) + i;
	nrec(&mx->live, !tc_comm_create_sub(p, ranks, 4, 1, &row), "row: %s", tc_last_error());
	for (int i = 0; i < 4; i++)
		ranks[i] = 4 * i + me % 4;
	nrec(&mx->live, !tc_comm_create_sub(p, ranks, 4, 2, &col), "column: %s", tc_last_error());
	mix_tags(p, row, mx);
	if (!row || !col)
		return 1;
	for (int rep = 0; rep < 3; rep++)
		mix_live(p, row, col, &mx->live);
	mix_nested(row, &mx->nested);
	mix_errors(p, row, &mx->errs);
	nrec(&mx->live, parent_sum_ok(p, 3), "parent allreduce after it all");
	tc_comm_destroy(col);
	mx->orphan[me] = row; /* destroyed after its parent */
	return 0;
}

static void run_mix(void)
{
	struct tc_sim_attr a = { .size = sizeof(a), .ndims = 2, .dims = { 4, 4 }, .wrap_mask = 3 };
	struct mix *mx = calloc(1, sizeof(*mx));
	struct nres *ns[4] = { &mx->live, &mx->nested, &mx->errs, &mx->tags };
	static const char *const what[4] = {
		"a row, a column and the parent: nonblocking calls of all three outstanding at once, 3 rounds",
		"a sub of a sub (the row reversed)", "bad lists and contexts: exact errnos, *sub NULL, a reason",
		"a row's and the parent's message with the same tag, port and source in flight together: each reaches its "
		"own receive (the row's context in the tag; TC_SIM_MATCH=device)"
	};
	int eio = 0, ret;
	tc_sim_t *sim;

	if (!tap_ok(!tc_sim_create(&a, &sim), "4x4 mix: tc_sim_create"))
		return;
	pthread_barrier_init(&mx->bar, NULL, 16);
	ret = tc_sim_launch(sim, mix_fn, mx);
	pthread_barrier_destroy(&mx->bar);
	tap_ok(!ret, "4x4 mix: every node ran (%s)", ret ? tc_last_error() : "ok");
	for (int w = 0; w < 4; w++) {
		tap_ok(ns[w]->calls > 0 && !ns[w]->bad, "4x4: %s: %ld checks", what[w], ns[w]->calls);
		if (ns[w]->bad)
			tap_diag("%ld failed; first: %s", ns[w]->bad, ns[w]->first);
	}
	for (int r = 0; r < 16; r++) {
		int x = 1;

		if (!mx->orphan[r])
			continue;
		eio += tc_barrier(mx->orphan[r]) == -EIO && tc_allreduce(mx->orphan[r], &x, &x, 1, TC_INT32, TC_SUM) == -EIO &&
		       tc_comm_size(mx->orphan[r]) == 4;
		tc_comm_destroy(mx->orphan[r]);
	}
	tap_ok(eio == 16, "a sub whose parent was destroyed: calls fail -EIO on %d of 16, queries work, destroy works",
	       eio);
	tc_sim_destroy(sim);
	free(mx);
}

/*
 * Timeout in a sub: rank 2 of row 2 (node 10) never joins an allreduce on
 * its row. The other three fail with -ETIMEDOUT naming the sub's own
 * (logical) rank and port: a node below 4 on port 0 or 1, where the parent's
 * would be nodes 8..11 on ports 2 and 3. The failure breaks the parent too
 * (one transport): its next call fails with -EIO.
 */
struct to_res {
	int ret, node, port, next;
	char msg[256];
};

static int timeout_fn(tc_comm_t *p, void *arg)
{
	struct to_res *res = arg;
	int me = tc_comm_rank(p), ranks[4], in = 1, out;
	tc_comm_t *row = NULL;

	if (me / 4 != 2)
		return 0;
	for (int i = 0; i < 4; i++)
		ranks[i] = 8 + i;
	if (tc_comm_create_sub(p, ranks, 4, 1, &row))
		return 1;
	if (me != 10) {
		res[me].ret = tc_allreduce(row, &in, &out, 1, TC_INT32, TC_SUM);
		snprintf(res[me].msg, sizeof(res[me].msg), "%s", tc_last_error());
		if (sscanf(strstr(res[me].msg, "for node ") ?: "", "for node %d on port %d", &res[me].node,
			   &res[me].port) != 2)
			res[me].node = res[me].port = -1;
		res[me].next = tc_barrier(p);
	}
	tc_comm_destroy(row);
	return 0;
}

static void run_timeout(void)
{
	struct tc_sim_attr a = { .size = sizeof(a), .ndims = 2, .dims = { 4, 4 }, .wrap_mask = 3 };
	struct to_res res[16];
	int timeouts = 0, logical = 0, eio = 0;
	tc_sim_t *sim;

	memset(res, 0, sizeof(res));
	setenv("TC_TIMEOUT_MS", "300", 1);
	if (!tap_ok(!tc_sim_create(&a, &sim), "timeout: tc_sim_create"))
		return;
	tc_sim_launch(sim, timeout_fn, res);
	for (int r = 8; r < 12; r++) {
		if (r == 10)
			continue;
		timeouts += res[r].ret == -ETIMEDOUT;
		logical += res[r].node >= 0 && res[r].node < 4 && res[r].node != r - 8 && (res[r].port == 0 || res[r].port == 1);
		eio += res[r].next == -EIO;
	}
	tap_ok(timeouts == 3 && logical == 3, "row 2 without its rank 2: %d of 3 -ETIMEDOUT, %d name a logical rank and port",
	       timeouts, logical);
	tap_diag("%s", res[8].msg);
	tap_ok(eio == 3, "the parent after its sub failed: -EIO on %d of 3", eio);
	tc_sim_destroy(sim);
	unsetenv("TC_TIMEOUT_MS");
}

int main(void)
{
	double t_all = now_ms();
	struct tc_sim_attr bad = { .size = sizeof(bad), .ndims = 1, .dims = { 4 }, .wrap_mask = 1 };
	tc_sim_t *sim = NULL;

	/*
	 * The simulator matches a receive as the device does, by (arrival port,
	 * tag) alone: by default it also matches the source, which keeps a
	 * sub's messages apart from its parent's even when the sub's context
	 * is missing from the tags (transport.h). So here the context is what
	 * keeps the parent's and the subs' traffic apart, as on torus.ko.
	 */
	setenv("TC_SIM_MATCH", "bogus", 1);
	tap_ok(tc_sim_create(&bad, &sim) == -EINVAL && !sim, "TC_SIM_MATCH=bogus: tc_sim_create fails -EINVAL (%s)",
	       tc_last_error());
	setenv("TC_SIM_MATCH", "device", 1);

	for (size_t p = 0; p < sizeof(parents) / sizeof(parents[0]); p++)
		run_parent(&parents[p]);
	run_mix();
	run_timeout();
	tap_diag("total %.0f ms", now_ms() - t_all);
	return tap_done();
}
