/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What one node checks in the everyday-collectives tests, shared by the
 * simulator test (tests/unit/test_colls.c, a thread per node) and the device
 * test (tests/vm/colls_dev.c, a process per node): inputs, the reference
 * reduction in the fold order documented in toruscoll.h, and node_fn(),
 * which runs every collective on one communicator and records each check in
 * a struct run (plain data, so it can live in shared memory).
 */
#ifndef TC_COLL_CHECKS_H
#define TC_COLL_CHECKS_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "toruscoll.h"
#include "tap.h"
#include "tbyte.h"

#define NDT 5
#define MAXP 64

static const enum tc_datatype dts[NDT] = { TC_INT32, TC_INT64, TC_UINT64, TC_FLOAT, TC_DOUBLE };
static const char *const dt_names[] = { "?", "int32", "int64", "uint64", "float", "double" };
static const char *const op_names[] = { "?", "sum", "prod", "min", "max", "band", "bor", "bxor" };

static __attribute__((unused)) double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* ---- values and the reference reduction -------------------------------- */

union val {
	int32_t i32;
	int64_t i64;
	uint64_t u64;
	float f;
	double d;
	unsigned char b[8];
};

static size_t dt_size(enum tc_datatype dt)
{
	return dt == TC_INT32 || dt == TC_FLOAT ? 4 : 8;
}

static int is_float(enum tc_datatype dt)
{
	return dt == TC_FLOAT || dt == TC_DOUBLE;
}

static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	x *= 0x846ca68b;
	x ^= x >> 16;
	return x;
}

/* Rank q's element e for (dt, op, salt). */
static union val input(enum tc_datatype dt, enum tc_op op, int q, size_t e, int salt)
{
	uint32_t h = mix(q * 7919u + (uint32_t)e * 104729u + dt * 131u + op * 17u + salt * 1000003u);
	uint64_t h2 = (uint64_t)mix(h) << 32 | h;
	union val v;

	memset(&v, 0, sizeof(v));
	switch (dt) {
	case TC_INT32:
		v.i32 = op == TC_PROD ? (int32_t)(h % 7) - 3 : (int32_t)h;
		break;
	case TC_INT64:
		v.i64 = op == TC_PROD ? (int64_t)(h % 9) - 4 : (int64_t)h2;
		break;
	case TC_UINT64:
		v.u64 = op == TC_PROD ? h % 5 + 1 : h2;
		break;
	case TC_FLOAT:
		v.f = op == TC_PROD ? 1.0f + ((int)(h % 2001) - 1000) / 3000.0f : ((int)(h % 200001) - 100000) / 97.3f;
		break;
	case TC_DOUBLE:
		v.d = op == TC_PROD ? 1.0 + ((int)(h % 2001) - 1000) / 3000.0 : ((int)(h % 200001) - 100000) / 9.73;
		break;
	}
	return v;
}

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* a op b, integer sum and prod wrapping as documented. */
static union val apply(enum tc_datatype dt, enum tc_op op, union val a, union val b)
{
	union val r;

	memset(&r, 0, sizeof(r));
#define INT_CASE(F, U)                                         \
	switch (op) {                                          \
	case TC_SUM: r.F = (U)a.F + (U)b.F; break;             \
	case TC_PROD: r.F = (U)a.F * (U)b.F; break;            \
	case TC_MIN: r.F = MIN(a.F, b.F); break;               \
	case TC_MAX: r.F = MAX(a.F, b.F); break;               \
	case TC_BAND: r.F = (U)a.F & (U)b.F; break;            \
	case TC_BOR: r.F = (U)a.F | (U)b.F; break;             \
	case TC_BXOR: r.F = (U)a.F ^ (U)b.F; break;            \
	}
#define FLT_CASE(F)                                            \
	switch (op) {                                          \
	case TC_SUM: r.F = a.F + b.F; break;                   \
	case TC_PROD: r.F = a.F * b.F; break;                  \
	case TC_MIN: r.F = MIN(a.F, b.F); break;               \
	case TC_MAX: r.F = MAX(a.F, b.F); break;               \
	default: break;                                        \
	}
	switch (dt) {
	case TC_INT32:
		INT_CASE(i32, uint32_t)
		break;
	case TC_INT64:
		INT_CASE(i64, uint64_t)
		break;
	case TC_UINT64:
		INT_CASE(u64, uint64_t)
		break;
	case TC_FLOAT:
		FLT_CASE(f)
		break;
	case TC_DOUBLE:
		FLT_CASE(d)
		break;
	}
	return r;
}

struct geo {
	int k, dims[TC_MAX_DIMS], wrap[TC_MAX_DIMS], P;
};

static int rank_of(const struct geo *g, const int *c)
{
	int r = 0;

	for (int d = 0; d < g->k; d++)
		r = r * g->dims[d] + c[d];
	return r;
}

static void coords_of(const struct geo *g, int r, int *c)
{
	for (int d = g->k - 1; d >= 0; d--) {
		c[d] = r % g->dims[d];
		r /= g->dims[d];
	}
}

/* The line fold of toruscoll.h: (L op v[c]) op R. */
static union val line_fold(enum tc_datatype dt, enum tc_op op, int n, int ring, int c, const union val *v)
{
	union val res = v[c], acc;
	int u;

	if (ring) {
		int hp = n / 2, hm = (n - 1) / 2;

		if (hp >= 1) {
			acc = v[((c - hp) % n + n) % n];
			for (u = hp - 1; u >= 1; u--)
				acc = apply(dt, op, acc, v[((c - u) % n + n) % n]);
			res = apply(dt, op, acc, res);
		}
		if (hm >= 1) {
			acc = v[(c + hm) % n];
			for (u = hm - 1; u >= 1; u--)
				acc = apply(dt, op, acc, v[(c + u) % n]);
			res = apply(dt, op, res, acc);
		}
	} else {
		if (c >= 1) {
			acc = v[0];
			for (u = 1; u < c; u++)
				acc = apply(dt, op, acc, v[u]);
			res = apply(dt, op, acc, res);
		}
		if (c <= n - 2) {
			acc = v[n - 1];
			for (u = n - 2; u > c; u--)
				acc = apply(dt, op, acc, v[u]);
			res = apply(dt, op, res, acc);
		}
	}
	return res;
}

struct rctx {
	const struct geo *g;
	enum tc_datatype dt;
	enum tc_op op;
	int salt;
	const int *centre;
	size_t e;	 /* element index in each rank's send vector */
};

/* Fold over dims 0..d of the values at the ranks with coordinates c (dims > d fixed). */
static union val hier(const struct rctx *x, int d, int *c)
{
	union val v[1024];
	int n, save;

	if (d < 0)
		return input(x->dt, x->op, rank_of(x->g, c), x->e, x->salt);
	n = x->g->dims[d];
	save = c[d];
	for (int j = 0; j < n; j++) {
		c[d] = j;
		v[j] = hier(x, d - 1, c);
	}
	c[d] = save;
	return line_fold(x->dt, x->op, n, x->g->wrap[d], x->centre[d], v);
}

/* The reduced value of element e with the given centres. */
static union val ref_reduce(const struct geo *g, enum tc_datatype dt, enum tc_op op, int salt, const int *centre,
			    size_t e)
{
	struct rctx x = { .g = g, .dt = dt, .op = op, .salt = salt, .centre = centre, .e = e };
	int c[TC_MAX_DIMS] = { 0 };

	return hier(&x, g->k - 1, c);
}

/* Chunk centres of element e of an N-element vector (allreduce, reduce_scatter). */
static void chunk_centres(const struct geo *g, size_t N, size_t e, int *centre)
{
	size_t lo = 0, hi = N;

	for (int d = 0; d < g->k; d++) {
		size_t n = g->dims[d], L = hi - lo;

		for (size_t j = 0; j < n; j++) {
			size_t a = lo + L * j / n, b = lo + L * (j + 1) / n;

			if (e >= a && e < b) {
				centre[d] = j;
				lo = a;
				hi = b;
				break;
			}
		}
	}
}

/* ---- per-node checks ---------------------------------------------------- */

enum { C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_RS, C_AGV, C_A2AV, C_ERRS, C_NB, NCOLL };
static const char *const coll_names[NCOLL] = { "barrier", "bcast", "reduce", "allreduce", "reduce_scatter",
					       "allgatherv", "alltoallv", "bad arguments", "nonblocking" };

struct nres {
	long calls, bad;
	char first[200];
};

struct run {
	struct geo g;
	struct nres res[MAXP][NCOLL];
	int do_errs;
	int light; /* reductions: sum and one more op per datatype, one count (slow guests) */
};

__attribute__((format(printf, 5, 6))) static void rec(struct run *R, int rank, int c, int ok, const char *fmt, ...)
{
	struct nres *n = &R->res[rank][c];
	va_list ap;

	n->calls++;
	if (ok)
		return;
	if (!n->bad++) {
		va_start(ap, fmt);
		vsnprintf(n->first, sizeof(n->first), fmt, ap);
		va_end(ap);
	}
}

static void fill(void *buf, enum tc_datatype dt, enum tc_op op, int q, size_t n, int salt)
{
	size_t esz = dt_size(dt);

	for (size_t e = 0; e < n; e++) {
		union val v = input(dt, op, q, e, salt);

		memcpy((char *)buf + e * esz, v.b, esz);
	}
}

static int valid(enum tc_datatype dt, enum tc_op op)
{
	return !(is_float(dt) && op >= TC_BAND);
}

/* Compare n elements of got with the reference; returns the first bad index or -1. */
static long cmp_ref(const void *got, enum tc_datatype dt, size_t n, const union val *want)
{
	size_t esz = dt_size(dt);

	for (size_t e = 0; e < n; e++)
		if (memcmp((const char *)got + e * esz, want[e].b, esz))
			return e;
	return -1;
}

static void check_reductions(tc_comm_t *comm, struct run *R)
{
	const struct geo *g = &R->g;
	int me = tc_comm_rank(comm), P = g->P, root = (2 * P) / 3;
	size_t counts[2] = { (size_t)P + 3, 3 }; /* not divisible by P; fewer than P */
	size_t maxn = (size_t)P * 5;
	unsigned char *snd = malloc(maxn * 8), *rcv = malloc(maxn * 8);
	union val *want = malloc(maxn * sizeof(*want));
	int centre[TC_MAX_DIMS], rc[TC_MAX_DIMS];
	int salt = 0;

	coords_of(g, root, rc);
	for (int t = 0; t < NDT; t++) {
		enum tc_datatype dt = dts[t];

		for (enum tc_op op = TC_SUM; op <= TC_BXOR; op++) {
			if (!valid(dt, op))
				continue;
			if (R->light && op != TC_SUM && op != (is_float(dt) ? TC_MIN : TC_BXOR))
				continue;
			for (int ci = 0; ci < (R->light ? 1 : 2); ci++) {
				size_t N = counts[ci];
				long bad;
				int ret;

				salt++;
				/* reduce to a root other than 0 */
				fill(snd, dt, op, me, N, salt);
				memset(rcv, 0xa5, N * 8);
				ret = tc_reduce(comm, snd, me == root ? rcv : NULL, N, dt, op, root);
				bad = -1;
				if (!ret && me == root) {
					for (size_t e = 0; e < N; e++)
						want[e] = ref_reduce(g, dt, op, salt, rc, e);
					bad = cmp_ref(rcv, dt, N, want);
				}
				rec(R, me, C_REDUCE, !ret && bad < 0, "%s %s n=%zu root %d: %s%s element %ld",
				    dt_names[dt], op_names[op], N, root, ret ? tc_strerror(ret) : "ok",
				    ret ? tc_last_error() : "", bad);

				/* allreduce, sendbuf == recvbuf once */
				salt++;
				fill(snd, dt, op, me, N, salt);
				memset(rcv, 0xa5, N * 8);
				if (ci)
					ret = tc_allreduce(comm, snd, snd, N, dt, op);
				else
					ret = tc_allreduce(comm, snd, rcv, N, dt, op);
				bad = -1;
				if (!ret) {
					for (size_t e = 0; e < N; e++) {
						chunk_centres(g, N, e, centre);
						want[e] = ref_reduce(g, dt, op, salt, centre, e);
					}
					bad = cmp_ref(ci ? snd : rcv, dt, N, want);
				}
				rec(R, me, C_ALLREDUCE, !ret && bad < 0, "%s %s n=%zu: %s %s element %ld", dt_names[dt],
				    op_names[op], N, ret ? tc_strerror(ret) : "ok", ret ? tc_last_error() : "", bad);

				/* reduce_scatter: recvcount 2 or 1 */
				{
					size_t rcnt = ci ? 1 : 2, NT = (size_t)P * rcnt;

					salt++;
					fill(snd, dt, op, me, NT, salt);
					memset(rcv, 0xa5, rcnt * 8 + 8);
					ret = tc_reduce_scatter(comm, snd, rcv, rcnt, dt, op);
					bad = -1;
					if (!ret) {
						for (size_t e = 0; e < rcnt; e++) {
							size_t ge = (size_t)me * rcnt + e;

							chunk_centres(g, NT, ge, centre);
							want[e] = ref_reduce(g, dt, op, salt, centre, ge);
						}
						bad = cmp_ref(rcv, dt, rcnt, want);
						/* nothing past the block was written */
						if (bad < 0 && rcv[rcnt * dt_size(dt)] != 0xa5)
							bad = rcnt;
					}
					rec(R, me, C_RS, !ret && bad < 0, "%s %s recvcount %zu: %s %s element %ld",
					    dt_names[dt], op_names[op], rcnt, ret ? tc_strerror(ret) : "ok",
					    ret ? tc_last_error() : "", bad);
				}
			}
		}
	}
	free(snd);
	free(rcv);
	free(want);
}

/*
 * The byte k that origin sends to destination in call (tbyte.h: a hash of
 * the four, so a block from another call, origin or destination, or at
 * another offset, does not match). Each call below has a number of its own.
 */
static unsigned char bpat(int call, int origin, int dest, size_t k)
{
	return tbyte((uint32_t)call, (uint32_t)origin, (uint32_t)dest, k);
}

/* The call numbers: one a collective call, so no two calls share bytes. */
enum {
	CALL_BCAST = 100,	/* + 2 * datatype + root index */
	CALL_AGV = 200,		/* + layout */
	CALL_A2AV = 300,	/* + layout */
	CALL_NB_A2A = 400,
	CALL_NB_A2A2,
	CALL_NB_AG,
	CALL_NB_BCAST,
	CALL_NB_AGV,
	CALL_NB_A2AV,
	CALL_SUB = 500,		/* test_sub.c's own calls */
};

static void check_bcast_barrier(tc_comm_t *comm, struct run *R)
{
	int me = tc_comm_rank(comm), P = R->g.P;
	size_t n = 301;
	unsigned char *buf = malloc(n * 8);
	int ret;

	for (int t = 0; t < NDT; t++) {
		enum tc_datatype dt = dts[t];
		int roots[2] = { P - 1, P / 2 + 1 };

		for (int ri = 0; ri < 2; ri++) {
			int root = roots[ri] % P;
			size_t bytes = n * dt_size(dt);
			long bad = 0;

			for (size_t k = 0; k < bytes; k++)
				buf[k] = me == root ? bpat(CALL_BCAST + 2 * t + ri, root, 0, k) : 0x5a;
			ret = tc_bcast(comm, buf, n, dt, root);
			for (size_t k = 0; !ret && k < bytes; k++)
				bad += buf[k] != bpat(CALL_BCAST + 2 * t + ri, root, 0, k);
			rec(R, me, C_BCAST, !ret && !bad, "%s root %d: %s %s, %ld bad bytes", dt_names[dt], root,
			    tc_strerror(ret), ret ? tc_last_error() : "", bad);
		}
	}
	/* bcast of 0 elements is a no-op */
	ret = tc_bcast(comm, buf, 0, TC_INT32, 0);
	rec(R, me, C_BCAST, !ret, "count 0: %s", tc_strerror(ret));
	for (int i = 0; i < 3; i++) {
		ret = tc_barrier(comm);
		rec(R, me, C_BARRIER, !ret, "barrier %d: %s %s", i, tc_strerror(ret), ret ? tc_last_error() : "");
	}
	free(buf);
}

/* allgatherv: rank r sends agv_count(r) bytes (some 0); displacements reversed with gaps. */
static size_t agv_count(int r, int salt)
{
	return (r + salt) % 5 == 2 ? 0 : (size_t)((r * 7 + 3 + salt) % 11);
}

static void agv_layout(int P, int salt, size_t *counts, size_t *displs, size_t *total)
{
	size_t pos = 0;

	for (int r = P - 1; r >= 0; r--) {
		counts[r] = agv_count(r, salt);
		displs[r] = pos;
		pos += counts[r] + 3; /* gaps stay untouched */
	}
	*total = pos;
}

static void check_allgatherv(tc_comm_t *comm, struct run *R)
{
	int me = tc_comm_rank(comm), P = R->g.P;
	size_t counts[MAXP], displs[MAXP], total;
	unsigned char snd[32], *rcv;

	for (int salt = 0; salt < 3; salt++) {
		long bad = 0;
		int ret;

		agv_layout(P, salt, counts, displs, &total);
		rcv = malloc(total + 1);
		memset(rcv, 0xcc, total);
		for (size_t k = 0; k < counts[me]; k++)
			snd[k] = bpat(CALL_AGV + salt, me, 0, k);
		ret = tc_allgatherv(comm, snd, counts[me], rcv, counts, displs);
		if (!ret) {
			unsigned char *want = malloc(total + 1);

			memset(want, 0xcc, total);
			for (int r = 0; r < P; r++)
				for (size_t k = 0; k < counts[r]; k++)
					want[displs[r] + k] = bpat(CALL_AGV + salt, r, 0, k);
			for (size_t k = 0; k < total; k++)
				bad += rcv[k] != want[k];
			free(want);
		}
		rec(R, me, C_AGV, !ret && !bad, "layout %d: %s %s, %ld bad bytes", salt, tc_strerror(ret),
		    ret ? tc_last_error() : "", bad);
		free(rcv);
	}
}

/* alltoallv: s sends a2a_count(s, d) bytes to d (some 0). */
static size_t a2a_count(int s, int d, int salt)
{
	return (s * 5 + d * 3 + salt) % 9 == 4 ? 0 : (size_t)((s * 5 + d * 3 + salt) % 9) + (salt == 2 ? 40 : 0);
}

static void a2a_layout(int P, int me, int salt, size_t *sc, size_t *sd, size_t *rc, size_t *rd, size_t *stot,
		       size_t *rtot)
{
	size_t sp = 0, rp = 0;

	for (int d = P - 1; d >= 0; d--) {
		sc[d] = a2a_count(me, d, salt);
		sd[d] = sp;
		sp += sc[d];
	}
	for (int s = 0; s < P; s++) {
		rc[s] = a2a_count(s, me, salt);
		rd[s] = rp;
		rp += rc[s] + 2;
	}
	*stot = sp;
	*rtot = rp;
}

static unsigned char a2a_byte(int s, int d, size_t k, int salt)
{
	return bpat(CALL_A2AV + salt, s, d, k);
}

static void check_alltoallv(tc_comm_t *comm, struct run *R)
{
	int me = tc_comm_rank(comm), P = R->g.P;
	size_t sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP], stot, rtot;

	for (int salt = 0; salt < 3; salt++) {
		unsigned char *snd, *rcv;
		long bad = 0;
		int ret;

		a2a_layout(P, me, salt, sc, sd, rc, rd, &stot, &rtot);
		snd = malloc(stot + 1);
		rcv = malloc(rtot + 1);
		for (int d = 0; d < P; d++)
			for (size_t k = 0; k < sc[d]; k++)
				snd[sd[d] + k] = a2a_byte(me, d, k, salt);
		memset(rcv, 0xcc, rtot);
		ret = tc_alltoallv(comm, snd, sc, sd, rcv, rc, rd);
		for (int s = 0; !ret && s < P; s++) {
			for (size_t k = 0; k < rc[s]; k++)
				bad += rcv[rd[s] + k] != a2a_byte(s, me, k, salt);
			bad += rcv[rd[s] + rc[s]] != 0xcc || rcv[rd[s] + rc[s] + 1] != 0xcc;
		}
		rec(R, me, C_A2AV, !ret && !bad, "layout %d: %s %s, %ld bad bytes", salt, tc_strerror(ret),
		    ret ? tc_last_error() : "", bad);
		free(snd);
		free(rcv);
	}
}

static void check_errors(tc_comm_t *comm, struct run *R)
{
	int me = tc_comm_rank(comm), P = R->g.P;
	size_t counts[MAXP] = { 0 }, displs[MAXP] = { 0 };
	int buf[64] = { 0 }, out[64];
	tc_request_t *req = (tc_request_t *)1;
	struct {
		const char *what;
		int got, want;
	} c[] = {
		{ "bcast NULL comm", tc_bcast(NULL, buf, 1, TC_INT32, 0), -EINVAL },
		{ "bcast datatype 0", tc_bcast(comm, buf, 1, 0, 0), -EINVAL },
		{ "bcast datatype 99", tc_bcast(comm, buf, 1, 99, 0), -EINVAL },
		{ "bcast root -1", tc_bcast(comm, buf, 1, TC_INT32, -1), -EINVAL },
		{ "bcast root P", tc_bcast(comm, buf, 1, TC_INT32, P), -EINVAL },
		{ "bcast NULL buf", tc_bcast(comm, NULL, 1, TC_INT32, 0), -EINVAL },
		{ "reduce root P", tc_reduce(comm, buf, out, 1, TC_INT32, TC_SUM, P), -EINVAL },
		{ "reduce NULL recvbuf at root", tc_reduce(comm, buf, NULL, 1, TC_INT32, TC_SUM, me), -EINVAL },
		{ "allreduce float band", tc_allreduce(comm, buf, out, 1, TC_FLOAT, TC_BAND), -EINVAL },
		{ "allreduce double bxor", tc_allreduce(comm, buf, out, 1, TC_DOUBLE, TC_BXOR), -EINVAL },
		{ "allreduce double bor", tc_allreduce(comm, buf, out, 1, TC_DOUBLE, TC_BOR), -EINVAL },
		{ "allreduce op 0", tc_allreduce(comm, buf, out, 1, TC_INT32, 0), -EINVAL },
		{ "allreduce op 8", tc_allreduce(comm, buf, out, 1, TC_INT64, 8), -EINVAL },
		{ "allreduce NULL sendbuf", tc_allreduce(comm, NULL, out, 1, TC_INT32, TC_SUM), -EINVAL },
		{ "allreduce huge count", tc_allreduce(comm, buf, out, SIZE_MAX / 2, TC_INT32, TC_SUM), -EINVAL },
		{ "reduce_scatter NULL recvbuf", tc_reduce_scatter(comm, buf, NULL, 1, TC_INT32, TC_SUM), -EINVAL },
		{ "reduce_scatter float bor", tc_reduce_scatter(comm, buf, out, 1, TC_FLOAT, TC_BOR), -EINVAL },
		{ "allgatherv NULL counts", tc_allgatherv(comm, buf, 0, out, NULL, displs), -EINVAL },
		{ "allgatherv sendbytes != recvcounts[me]", tc_allgatherv(comm, buf, 4, out, counts, displs), -EINVAL },
		{ "alltoallv NULL recvcounts", tc_alltoallv(comm, buf, counts, displs, out, NULL, displs), -EINVAL },
		{ "alltoallv NULL sdispls", tc_alltoallv(comm, buf, counts, NULL, out, counts, displs), -EINVAL },
		{ "ibarrier NULL request", tc_ibarrier(comm, NULL), -EINVAL },
		{ "iallreduce float band", tc_iallreduce(comm, buf, out, 1, TC_FLOAT, TC_BAND, &req), -EINVAL },
		{ "ialltoall block 0", tc_ialltoall(comm, buf, out, 0, &req), -EINVAL },
		{ "tc_wait(NULL)", tc_wait(NULL), -EINVAL },
		{ "tc_test(NULL)", tc_test(NULL), -EINVAL },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		rec(R, me, C_ERRS, c[i].got == c[i].want, "%s: got %d (%s), want %d", c[i].what, c[i].got,
		    tc_strerror(c[i].got), c[i].want);
	rec(R, me, C_ERRS, req == NULL, "a failed tc_i* call leaves *req NULL");
	rec(R, me, C_ERRS, tc_wait(&req) == 0 && tc_test(&req) == 1, "a NULL request completes at once");
	/* the failed reduce_scatter etc. must not have consumed anything: a good call still works */
	buf[0] = me + 1;
	out[0] = 0;
	rec(R, me, C_ERRS, !tc_allreduce(comm, buf, out, 1, TC_INT32, TC_MAX) && out[0] == P,
	    "allreduce after the bad calls: %d, want %d (%s)", out[0], P, tc_last_error());
}

/* ---- nonblocking ---------------------------------------------------------- */

static __thread volatile double sink __attribute__((unused)); /* per thread: no race */

static void compute(int iters)
{
	double s = 0;

	for (int i = 1; i <= iters; i++)
		s += sqrt((double)i);
	sink += s;
}

static void check_nonblocking(tc_comm_t *comm, struct run *R)
{
	const struct geo *g = &R->g;
	int me = tc_comm_rank(comm), P = g->P, root = P / 3 + 1;
	size_t N = (size_t)P + 5, m = 24;
	int centre[TC_MAX_DIMS], rc[TC_MAX_DIMS];
	double ar_in[MAXP + 8], ar_out[MAXP + 8];
	int64_t rs_in[MAXP * 2], rs_out[2];
	float rd_in[MAXP + 8], rd_out[MAXP + 8];
	unsigned char *a2a_s = malloc(P * m), *a2a_r = malloc(P * m), *ag_r = malloc(P * m), ag_s[24];
	unsigned char bc[100], *a2a2_s = malloc(P * m), *a2a2_r = malloc(P * m);
	size_t agc[MAXP], agd[MAXP], agtot, sc[MAXP], sd[MAXP], vrc[MAXP], vrd[MAXP], stot, rtot;
	unsigned char agv_s[32], *agv_r, *v_s, *v_r;
	tc_request_t *rq[9];
	int ret, polled = 0, tests = 0;
	long bad;

	const int s_ar = 901, s_rs = 902, s_rd = 903;

	fill(ar_in, TC_DOUBLE, TC_SUM, me, N, s_ar);
	fill(rs_in, TC_INT64, TC_BXOR, me, 2 * P, s_rs);
	fill(rd_in, TC_FLOAT, TC_MIN, me, N, s_rd);
	for (size_t k = 0; k < P * m; k++) {
		a2a_s[k] = bpat(CALL_NB_A2A, me, (int)(k / m), k % m);
		a2a2_s[k] = bpat(CALL_NB_A2A2, me, (int)(k / m), k % m);
	}
	for (size_t k = 0; k < m; k++)
		ag_s[k] = bpat(CALL_NB_AG, me, 0, k);
	for (size_t k = 0; k < sizeof(bc); k++)
		bc[k] = me == root ? bpat(CALL_NB_BCAST, root, 0, k) : 0;
	agv_layout(P, 1, agc, agd, &agtot);
	agv_r = malloc(agtot + 1);
	memset(agv_r, 0xcc, agtot);
	for (size_t k = 0; k < agc[me]; k++)
		agv_s[k] = bpat(CALL_NB_AGV, me, 0, k);
	a2a_layout(P, me, 1, sc, sd, vrc, vrd, &stot, &rtot);
	v_s = malloc(stot + 1);
	v_r = malloc(rtot + 1);
	for (int d = 0; d < P; d++)
		for (size_t k = 0; k < sc[d]; k++)
			v_s[sd[d] + k] = bpat(CALL_NB_A2AV, me, d, k);
	memset(v_r, 0xcc, rtot);

	/* Nine outstanding at once. */
	ret = tc_ialltoall(comm, a2a_s, a2a_r, m, &rq[0]);
	ret = ret ?: tc_iallreduce(comm, ar_in, ar_out, N, TC_DOUBLE, TC_SUM, &rq[1]);
	ret = ret ?: tc_ibcast(comm, bc, sizeof(bc) / 4, TC_INT32, root, &rq[2]);
	ret = ret ?: tc_iallgatherv(comm, agv_s, agc[me], agv_r, agc, agd, &rq[3]);
	ret = ret ?: tc_ireduce_scatter(comm, rs_in, rs_out, 2, TC_INT64, TC_BXOR, &rq[4]);
	ret = ret ?: tc_ibarrier(comm, &rq[5]);
	ret = ret ?: tc_ialltoallv(comm, v_s, sc, sd, v_r, vrc, vrd, &rq[6]);
	ret = ret ?: tc_iallgather(comm, ag_s, ag_r, m, &rq[7]);
	ret = ret ?: tc_ireduce(comm, rd_in, rd_out, N, TC_FLOAT, TC_MIN, root, &rq[8]);
	rec(R, me, C_NB, !ret, "issuing nine nonblocking collectives: %s %s", tc_strerror(ret), tc_last_error());
	if (ret)
		goto out;
	/* A blocking alltoall while they are outstanding goes through the same queue. */
	ret = tc_alltoall(comm, a2a2_s, a2a2_r, m);
	bad = 0;
	for (size_t k = 0; !ret && k < P * m; k++)
		bad += a2a2_r[k] != bpat(CALL_NB_A2A2, (int)(k / m), me, k % m);
	rec(R, me, C_NB, !ret && !bad, "blocking tc_alltoall behind 9 requests: %s %s, %ld bad bytes",
	    tc_strerror(ret), ret ? tc_last_error() : "", bad);
	/* Overlap: compute, polling the allreduce with tc_test between slices. */
	for (;;) {
		compute(2000);
		tests++;
		ret = tc_test(&rq[1]);
		if (ret) {
			polled = ret == 1;
			break;
		}
	}
	rec(R, me, C_NB, polled && rq[1] == NULL, "tc_test completes the iallreduce during a compute loop (%d polls): %d",
	    tests, ret);
	/* Wait for the rest out of issue order. */
	{
		static const int order[] = { 8, 6, 0, 7, 3, 5, 2, 4 };

		for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
			ret = tc_wait(&rq[order[i]]);
			rec(R, me, C_NB, !ret && rq[order[i]] == NULL, "tc_wait request %d: %s %s", order[i],
			    tc_strerror(ret), ret ? tc_last_error() : "");
		}
	}
	/* Check every result. */
	bad = 0;
	for (size_t k = 0; k < P * m; k++)
		bad += a2a_r[k] != bpat(CALL_NB_A2A, (int)(k / m), me, k % m);
	rec(R, me, C_NB, !bad, "ialltoall: %ld bad bytes", bad);
	bad = 0;
	for (size_t k = 0; k < P * m; k++)
		bad += ag_r[k] != bpat(CALL_NB_AG, (int)(k / m), 0, k % m);
	rec(R, me, C_NB, !bad, "iallgather: %ld bad bytes", bad);
	bad = 0;
	for (size_t k = 0; k < sizeof(bc); k++)
		bad += bc[k] != bpat(CALL_NB_BCAST, root, 0, k);
	rec(R, me, C_NB, !bad, "ibcast: %ld bad bytes", bad);
	{
		union val want[MAXP + 8];

		for (size_t e = 0; e < N; e++) {
			chunk_centres(g, N, e, centre);
			want[e] = ref_reduce(g, TC_DOUBLE, TC_SUM, s_ar, centre, e);
		}
		rec(R, me, C_NB, cmp_ref(ar_out, TC_DOUBLE, N, want) < 0, "iallreduce double sum: bits differ");
		for (size_t e = 0; e < 2; e++) {
			chunk_centres(g, 2 * P, me * 2 + e, centre);
			want[e] = ref_reduce(g, TC_INT64, TC_BXOR, s_rs, centre, me * 2 + e);
		}
		rec(R, me, C_NB, cmp_ref(rs_out, TC_INT64, 2, want) < 0, "ireduce_scatter int64 bxor differs");
		if (me == root) {
			coords_of(g, root, rc);
			for (size_t e = 0; e < N; e++)
				want[e] = ref_reduce(g, TC_FLOAT, TC_MIN, s_rd, rc, e);
			rec(R, me, C_NB, cmp_ref(rd_out, TC_FLOAT, N, want) < 0, "ireduce float min at root differs");
		}
	}
	/* every byte of the receive buffers: the blocks, and the gaps between them left as they were */
	{
		unsigned char *want = malloc((agtot > rtot ? agtot : rtot) + 1);

		memset(want, 0xcc, agtot);
		for (int r = 0; r < P; r++)
			for (size_t k = 0; k < agc[r]; k++)
				want[agd[r] + k] = bpat(CALL_NB_AGV, r, 0, k);
		bad = 0;
		for (size_t k = 0; k < agtot; k++)
			bad += agv_r[k] != want[k];
		rec(R, me, C_NB, !bad, "iallgatherv: %ld bad bytes (blocks and gaps)", bad);
		memset(want, 0xcc, rtot);
		for (int s = 0; s < P; s++)
			for (size_t k = 0; k < vrc[s]; k++)
				want[vrd[s] + k] = bpat(CALL_NB_A2AV, s, me, k);
		bad = 0;
		for (size_t k = 0; k < rtot; k++)
			bad += v_r[k] != want[k];
		rec(R, me, C_NB, !bad, "ialltoallv: %ld bad bytes (blocks and gaps)", bad);
		free(want);
	}
	/* Blocking calls keep working through the queue afterwards. */
	{
		int32_t one = me, sum = -1;

		ret = tc_allreduce(comm, &one, &sum, 1, TC_INT32, TC_SUM);
		rec(R, me, C_NB, !ret && sum == P * (P - 1) / 2, "blocking allreduce after the requests: %d (%s)", sum,
		    tc_strerror(ret));
	}
out:
	free(a2a_s);
	free(a2a_r);
	free(a2a2_s);
	free(a2a2_r);
	free(ag_r);
	free(agv_r);
	free(v_s);
	free(v_r);
}

static int node_fn(tc_comm_t *comm, void *arg)
{
	struct run *R = arg;

	check_bcast_barrier(comm, R);
	check_reductions(comm, R);
	check_allgatherv(comm, R);
	check_alltoallv(comm, R);
	if (R->do_errs)
		check_errors(comm, R);
	check_nonblocking(comm, R);
	return 0;
}

/* One TAP point per collective: every check on every rank passed. */
static void report_run(const char *label, struct run *R)
{
	for (int c = 0; c < NCOLL; c++) {
		long calls = 0, bad = 0;
		const char *first = NULL;
		int bad_rank = -1;

		if (c == C_ERRS && !R->do_errs)
			continue;
		for (int r = 0; r < R->g.P; r++) {
			calls += R->res[r][c].calls;
			bad += R->res[r][c].bad;
			if (R->res[r][c].bad && !first) {
				first = R->res[r][c].first;
				bad_rank = r;
			}
		}
		tap_ok(calls > 0 && !bad, "%s: %s: %ld checks on %d ranks, every byte matches the reference",
		       label, coll_names[c], calls, R->g.P);
		if (bad)
			tap_diag("%ld failed; first at rank %d: %s", bad, bad_rank, first);
	}
}

#endif /* TC_COLL_CHECKS_H */
