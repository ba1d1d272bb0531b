// SPDX-License-Identifier: GPL-2.0
/*
 * Every collective libtorusmpi serves, blocking and nonblocking, with and
 * without MPI_IN_PLACE, on MPI_COMM_WORLD, a dup of it, its halves, a
 * reversed order (split with key = -rank) and an odd-sized part, at counts
 * 0, 1, small and large (over the shim's default size limit at 16 ranks);
 * every element of every receive buffer (gaps included) is compared with a
 * reference computed here. A plain MPI program: run it with and without
 * LD_PRELOAD=libtorusmpi.so, the results must be the same.
 *
 * With a square number of ranks (a 4x4 fabric at 16), also on the rows,
 * the columns and the first side-1 ranks of each row (a path of an odd
 * number of ranks at 16), each named for its kind (MPI_Comm_set_name), so
 * the shim's statistics (TORUS_MPI_STATS=1) say where each one ran.
 *
 * MPI_COLLS_COMMS=world,dup,... limits the communicators (slow guests).
 * MPI_COLLS_BRIEF=rows,cols,... runs on those only alltoall, ialltoallv,
 * allgather, iallreduce, bcast and ibarrier, once each, not in place.
 * MPI_COLLS_LIGHT=1 keeps every (collective, blocking or not, in place or
 * not) point but runs each at two sizes (no empty and no over-the-limit
 * vector) and reductions with one (datatype, op) per size: the 16-rank
 * runs of the guest suite, where each call takes 0.1-0.5 s; the 4-rank
 * runs cover the rest.
 *
 * Output: TAP from rank 0, one point per (communicator, collective, mode);
 * a point fails if any rank saw a wrong element. The failure counts are
 * summed with PMPI_Reduce, which the shim does not serve.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXP 512
#define SENTINEL (-77777)

static int wrank, wsize;
static int npoints;
static char names[MAXP][96];
static long fails[MAXP];
static int verbose;
static int light;

static void point(long nfail, const char *fmt, ...)
{
	va_list ap;

	if (npoints == MAXP)
		return;
	va_start(ap, fmt);
	vsnprintf(names[npoints], sizeof(names[0]), fmt, ap);
	va_end(ap);
	if (nfail && verbose)
		fprintf(stderr, "rank %d: %s: %ld wrong\n", wrank, names[npoints], nfail);
	fails[npoints++] += nfail;
}

/* The element rank a sends toward b at index k. */
static int val(int a, int b, int k)
{
	uint32_t h = (uint32_t)a * 2654435761u ^ (uint32_t)(b + 1) * 40503u ^ (uint32_t)k * 2246822519u;

	h ^= h >> 13;
	h *= 0x5bd1e995u;
	h ^= h >> 15;
	return (int)(h % 20001) - 10000;
}

static int *ibuf(size_t n)
{
	int *p = malloc((n ? n : 1) * sizeof(int));

	for (size_t i = 0; i < n; i++)
		p[i] = SENTINEL;
	return p;
}

/* Complete a collective's request together with a ring exchange of PMPI
 * point-to-point requests, by one of several completion calls in turn. */
static long complete(MPI_Request *coll, MPI_Comm comm)
{
	static int how;
	MPI_Request r[3];
	int n, me, token = -1, mine, flag = 0, idx, out, ind[3], i, done = 0;
	long bad = 0;

	MPI_Comm_size(comm, &n);
	MPI_Comm_rank(comm, &me);
	mine = 1000 + me;
	r[0] = *coll;
	MPI_Irecv(&token, 1, MPI_INT, (me + n - 1) % n, 99, comm, &r[1]);
	MPI_Isend(&mine, 1, MPI_INT, (me + 1) % n, 99, comm, &r[2]);
	switch (how++ % 6) {
	case 0:
		for (i = 0; i < 3; i++)
			MPI_Wait(&r[i], MPI_STATUS_IGNORE);
		break;
	case 1:
		MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
		break;
	case 2:
		while (!flag)
			MPI_Testall(3, r, &flag, MPI_STATUSES_IGNORE);
		break;
	case 3:
		for (i = 0; i < 3; i++)
			MPI_Waitany(3, r, &idx, MPI_STATUS_IGNORE);
		break;
	case 4:
		while (done < 3) {
			MPI_Waitsome(3, r, &out, ind, MPI_STATUSES_IGNORE);
			done += out;
		}
		break;
	default:
		while (!flag)
			MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
		MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
		break;
	}
	for (i = 0; i < 3; i++)
		bad += r[i] != MPI_REQUEST_NULL;
	bad += token != 1000 + (me + n - 1) % n;
	*coll = MPI_REQUEST_NULL;
	return bad;
}

static const int counts[] = { 0, 1, 5, 500, 3000 };
#define NCOUNTS (int)(sizeof(counts) / sizeof(counts[0]))

static long t_alltoall(MPI_Comm comm, int nb, int inplace)
{
	int n, me;
	long bad = 0;

	MPI_Comm_size(comm, &n);
	MPI_Comm_rank(comm, &me);
	for (int ci = 0; ci < NCOUNTS; ci++) {
		int c = counts[ci];
		int *s, *r;
		MPI_Request req;

		if (light && ci != 1 && ci != 3)
			continue;
		s = ibuf((size_t)n * c);
		r = ibuf((size_t)n * c);
		for (int d = 0; d < n; d++)
			for (int k = 0; k < c; k++)
				(inplace ? r : s)[(size_t)d * c + k] = val(me, d, k);
		if (nb) {
			MPI_Ialltoall(inplace ? MPI_IN_PLACE : s, c, MPI_INT, r, c, MPI_INT, comm, &req);
			bad += complete(&req, comm);
		} else {
			MPI_Alltoall(inplace ? MPI_IN_PLACE : s, c, MPI_INT, r, c, MPI_INT, comm);
		}
		for (int src = 0; src < n; src++)
			for (int k = 0; k < c; k++)
				bad += r[(size_t)src * c + k] != val(src, me, k);
		free(s);
		free(r);
	}
	return bad;
}

/* Rank a sends (a + b + scale) % 4 * scale elements to b (some zero); blocks
 * are laid out with one-element gaps that must stay untouched. */
static int vcount(int a, int b, int scale)
{
	return (a + 2 * b) % 4 * scale;
}

static long t_alltoallv(MPI_Comm comm, int nb, int inplace)
{
	int n, me;
	long bad = 0;

	MPI_Comm_size(comm, &n);
	MPI_Comm_rank(comm, &me);
	for (int scale = light; scale <= 300; scale = scale ? scale * 100 : 1) {
		int *sc = calloc(n, sizeof(int)), *sd = calloc(n, sizeof(int));
		int *rc = calloc(n, sizeof(int)), *rd = calloc(n, sizeof(int));
		int stot = 0, rtot = 0;
		MPI_Request req;
		int *s, *r;

		for (int p = 0; p < n; p++) {
			/* in place: MPI requires symmetric counts, so use a symmetric pattern */
			sc[p] = inplace ? (me + p) % 3 * scale : vcount(me, p, scale);
			rc[p] = inplace ? (me + p) % 3 * scale : vcount(p, me, scale);
			sd[p] = stot + 1;
			stot += sc[p] + 1;
			rd[p] = rtot + 1;
			rtot += rc[p] + 1;
		}
		s = ibuf(stot);
		r = ibuf(rtot);
		for (int p = 0; p < n; p++)
			for (int k = 0; k < sc[p]; k++)
				(inplace ? r : s)[(inplace ? rd : sd)[p] + k] = val(me, p, k);
		if (nb) {
			MPI_Ialltoallv(inplace ? MPI_IN_PLACE : s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, comm, &req);
			bad += complete(&req, comm);
		} else {
			MPI_Alltoallv(inplace ? MPI_IN_PLACE : s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, comm);
		}
		for (int p = 0; p < n; p++) {
			bad += r[rd[p] - 1] != SENTINEL;
			for (int k = 0; k < rc[p]; k++)
				bad += r[rd[p] + k] != val(p, me, k);
		}
		free(s), free(r), free(sc), free(sd), free(rc), free(rd);
	}
	return bad;
}

static long t_allgather(MPI_Comm comm, int nb, int inplace)
{
	int n, me;
	long bad = 0;

	MPI_Comm_size(comm, &n);
	MPI_Comm_rank(comm, &me);
	for (int ci = 0; ci < NCOUNTS; ci++) {
		int c = counts[ci] * 2;
		int *s, *r;
		MPI_Request req;

		if (light && ci != 1 && ci != 3)
			continue;
		s = ibuf(c);
		r = ibuf((size_t)n * c);

		for (int k = 0; k < c; k++)
			(inplace ? r + (size_t)me * c : s)[k] = val(me, -1, k);
		if (nb) {
			MPI_Iallgather(inplace ? MPI_IN_PLACE : s, c, MPI_INT, r, c, MPI_INT, comm, &req);
			bad += complete(&req, comm);
		} else {
			MPI_Allgather(inplace ? MPI_IN_PLACE : s, c, MPI_INT, r, c, MPI_INT, comm);
		}
		for (int src = 0; src < n; src++)
			for (int k = 0; k < c; k++)
				bad += r[(size_t)src * c + k] != val(src, -1, k);
		free(s);
		free(r);
	}
	return bad;
}

static long t_allgatherv(MPI_Comm comm, int nb, int inplace)
{
	int n, me;
	long bad = 0;

	MPI_Comm_size(comm, &n);
	MPI_Comm_rank(comm, &me);
	for (int scale = light; scale <= (light ? 40 : 2000); scale = scale ? scale * 40 : 1) {
		int *rc = calloc(n, sizeof(int)), *rd = calloc(n, sizeof(int)), tot = 0;
		int *s, *r;
		MPI_Request req;

		for (int p = 0; p < n; p++) {
			rc[p] = (p % 3) * scale;
			rd[p] = tot + 2;
			tot += rc[p] + 2;
		}
		s = ibuf(rc[me]);
		r = ibuf(tot);
		for (int k = 0; k < rc[me]; k++)
			(inplace ? r + rd[me] : s)[k] = val(me, -2, k);
		if (nb) {
			MPI_Iallgatherv(inplace ? MPI_IN_PLACE : s, rc[me], MPI_INT, r, rc, rd, MPI_INT, comm, &req);
			bad += complete(&req, comm);
		} else {
			MPI_Allgatherv(inplace ? MPI_IN_PLACE : s, rc[me], MPI_INT, r, rc, rd, MPI_INT, comm);
		}
		for (int p = 0; p < n; p++) {
			bad += (r[rd[p] - 1] != SENTINEL) + (r[rd[p] - 2] != SENTINEL);
			for (int k = 0; k < rc[p]; k++)
				bad += r[rd[p] + k] != val(p, -2, k);
		}
		free(s), free(r), free(rc), free(rd);
	}
	return bad;
}

/* ---- reductions: values chosen so every order gives the same result ---- */

struct red {
	MPI_Datatype dt;
	MPI_Op op;
	const char *name;
};
static const struct red reds[] = {
	{ MPI_INT, MPI_SUM, "int sum" },       { MPI_INT, MPI_PROD, "int prod" },
	{ MPI_INT, MPI_MIN, "int min" },       { MPI_INT, MPI_MAX, "int max" },
	{ MPI_INT, MPI_BAND, "int band" },     { MPI_INT, MPI_BOR, "int bor" },
	{ MPI_INT, MPI_BXOR, "int bxor" },     { MPI_INT32_T, MPI_SUM, "int32 sum" },
	{ MPI_LONG, MPI_SUM, "long sum" },     { MPI_INT64_T, MPI_MAX, "int64 max" },
	{ MPI_UINT64_T, MPI_BXOR, "uint64 bxor" }, { MPI_UNSIGNED_LONG, MPI_PROD, "ulong prod" },
	{ MPI_FLOAT, MPI_SUM, "float sum" },   { MPI_FLOAT, MPI_MIN, "float min" },
	{ MPI_DOUBLE, MPI_SUM, "double sum" }, { MPI_DOUBLE, MPI_PROD, "double prod" },
	{ MPI_DOUBLE, MPI_MAX, "double max" }, { MPI_SHORT, MPI_SUM, "short sum (passed)" },
};
#define NREDS (int)(sizeof(reds) / sizeof(reds[0]))

/* Element k of rank a, as a double that every datatype holds exactly. */
static double rval(const struct red *rd, int a, int k)
{
	int v = val(a, -3, k);

	if (rd->op == MPI_PROD)
		return (v & 3) == 0 ? 2 : (v & 3) == 1 ? -1 : 1; /* small powers of two */
	if (rd->dt == MPI_SHORT)
		return v % 1000;
	return v;
}

static void store(const struct red *rd, void *buf, size_t i, double x)
{
	if (rd->dt == MPI_INT || rd->dt == MPI_INT32_T)
		((int32_t *)buf)[i] = (int32_t)x;
	else if (rd->dt == MPI_LONG || rd->dt == MPI_INT64_T)
		((int64_t *)buf)[i] = (int64_t)x;
	else if (rd->dt == MPI_UINT64_T || rd->dt == MPI_UNSIGNED_LONG)
		((uint64_t *)buf)[i] = (uint64_t)(int64_t)x;
	else if (rd->dt == MPI_FLOAT)
		((float *)buf)[i] = (float)x;
	else if (rd->dt == MPI_DOUBLE)
		((double *)buf)[i] = x;
	else
		((short *)buf)[i] = (short)x;
}

static size_t dtsize(const struct red *rd)
{
	int s;

	MPI_Type_size(rd->dt, &s);
	return s;
}

/* The reduced element k over ranks 0..n-1, stored into ref[i]. */
static void reference(const struct red *rd, int n, int k, void *ref, size_t i)
{
	uint64_t u = 0;
	double d = 0;

	for (int a = 0; a < n; a++) {
		double x = rval(rd, a, k);
		uint64_t xu = (uint64_t)(int64_t)x;

		if (rd->op == MPI_SUM)
			d = a ? d + x : x;
		else if (rd->op == MPI_PROD)
			d = a ? d * x : x;
		else if (rd->op == MPI_MIN)
			d = a && d < x ? d : x;
		else if (rd->op == MPI_MAX)
			d = a && d > x ? d : x;
		else if (rd->op == MPI_BAND)
			u = a ? u & xu : xu;
		else if (rd->op == MPI_BOR)
			u = a ? u | xu : xu;
		else
			u = a ? u ^ xu : xu;
	}
	if (rd->op == MPI_BAND || rd->op == MPI_BOR || rd->op == MPI_BXOR)
		d = (double)(int64_t)u;
	store(rd, ref, i, d);
}

static const int rcounts_list[] = { 0, 1, 7, 1000, 40000 };
#define NRCOUNTS (int)(sizeof(rcounts_list) / sizeof(rcounts_list[0]))

/* kind 0: allreduce, 1: reduce_scatter_block, 2: reduce_scatter (uneven) */
static long t_reduce(MPI_Comm comm, int nb, int inplace, int kind)
{
	int n, me;
	long bad = 0;

	MPI_Comm_size(comm, &n);
	MPI_Comm_rank(comm, &me);
	for (int ri = 0; ri < NREDS; ri++) {
		const struct red *rd = &reds[ri];
		size_t es = dtsize(rd);

		for (int ci = 0; ci < NRCOUNTS; ci++) {
			int c = rcounts_list[ci];
			/* every (datatype, op) at count 7 blocking; three per count elsewhere */
			int want = (ci == 2 && !nb && !inplace) || ri % 6 == (ci + kind + 2 * nb + 3 * inplace) % 6;

			/* light: sizes 1 and 1000, one (datatype, op) each, all in turn */
			if (light)
				want = (ci == 1 || ci == 3) && ri == (ci + 3 * kind + 6 * nb + 9 * inplace) % NREDS;
			int *rc;
			size_t total, mine = 0, before = 0, rlen;
			char *s, *r, *ref;
			MPI_Request req;

			if (!want)
				continue;
			rc = calloc(n, sizeof(int));
			if (kind && c > 3000)
				c /= n; /* keep the vector the same order of size */
			if (kind == 1) {
				for (int p = 0; p < n; p++)
					rc[p] = c;
			} else if (kind == 2) {
				for (int p = 0; p < n; p++)
					rc[p] = c ? (p * 7 + c) % (c + 2) : 0;
			}
			total = kind ? 0 : (size_t)c;
			for (int p = 0; kind && p < n; p++) {
				if (p < me)
					before += rc[p];
				total += rc[p];
			}
			mine = kind ? (size_t)rc[me] : total;
			rlen = inplace ? total : mine;
			s = malloc(total * es + 1);
			r = malloc(rlen * es + 8);
			ref = malloc(total * es + 1);
			memset(r, 0xa5, rlen * es + 8);
			for (size_t k = 0; k < total; k++) {
				store(rd, inplace ? r : s, k, rval(rd, me, k));
				reference(rd, n, k, ref, k);
			}
			if (kind == 0) {
				if (nb)
					MPI_Iallreduce(inplace ? MPI_IN_PLACE : s, r, c, rd->dt, rd->op, comm, &req);
				else
					MPI_Allreduce(inplace ? MPI_IN_PLACE : s, r, c, rd->dt, rd->op, comm);
			} else if (kind == 1) {
				if (nb)
					MPI_Ireduce_scatter_block(inplace ? MPI_IN_PLACE : s, r, c, rd->dt, rd->op, comm, &req);
				else
					MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : s, r, c, rd->dt, rd->op, comm);
			} else {
				if (nb)
					MPI_Ireduce_scatter(inplace ? MPI_IN_PLACE : s, r, rc, rd->dt, rd->op, comm, &req);
				else
					MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : s, r, rc, rd->dt, rd->op, comm);
			}
			if (nb)
				bad += complete(&req, comm);
			bad += memcmp(r, ref + before * es, mine * es) != 0;
			/* past the result: untouched unless in place (the input stays there) */
			for (size_t b = (inplace ? total : mine) * es; b < (inplace ? total : mine) * es + 8; b++)
				bad += (unsigned char)r[b] != 0xa5;
			if (verbose && memcmp(r, ref + before * es, mine * es))
				fprintf(stderr, "rank %d: %s kind %d count %d nb %d inplace %d wrong\n", me, rd->name, kind,
					c, nb, inplace);
			free(s), free(r), free(ref), free(rc);
		}
	}
	return bad;
}

static long t_bcast(MPI_Comm comm, int nb)
{
	static const int bc[] = { 0, 1, 3, 1000, 40001 };
	int n, me;
	long bad = 0;

	MPI_Comm_size(comm, &n);
	MPI_Comm_rank(comm, &me);
	for (int ci = 0; ci < 5; ci++) {
		if (light && ci != 2 && ci != 3)
			continue;
		for (int root = 0; root < n; root += n > 1 ? n - 1 : 1) {
			/* chars: lengths that are not a multiple of 4 */
			int c = bc[ci];
			char *b = malloc(c + 1);
			MPI_Request req;

			for (int k = 0; k <= c; k++)
				b[k] = me == root ? (char)val(root, -4, k) : (char)0x5a;
			b[c] = 0x11;
			if (nb) {
				MPI_Ibcast(b, c, MPI_CHAR, root, comm, &req);
				bad += complete(&req, comm);
			} else {
				MPI_Bcast(b, c, MPI_CHAR, root, comm);
			}
			for (int k = 0; k < c; k++)
				bad += b[k] != (char)val(root, -4, k);
			bad += b[c] != 0x11;
			free(b);
			if (n == 1)
				break;
		}
	}
	return bad;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* No rank leaves the barrier before the last one (which sleeps) entered:
 * the latest entry time is not after the earliest exit time. */
static long t_barrier(MPI_Comm comm, int nb)
{
	int n, me;
	double t[2], *all;
	double maxin = 0, minout = 1e30;
	MPI_Request req;

	MPI_Comm_size(comm, &n);
	MPI_Comm_rank(comm, &me);
	all = malloc(2 * n * sizeof(double));
	if (me == n - 1) {
		struct timespec ts = { 0, 30 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	t[0] = now();
	if (nb) {
		MPI_Ibarrier(comm, &req);
		if (complete(&req, comm))
			return 1;
	} else {
		MPI_Barrier(comm);
	}
	t[1] = now();
	PMPI_Allgather(t, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, comm);
	for (int p = 0; p < n; p++) {
		maxin = all[2 * p] > maxin ? all[2 * p] : maxin;
		minout = all[2 * p + 1] < minout ? all[2 * p + 1] : minout;
	}
	free(all);
	return maxin > minout;
}

/* A non-contiguous send type (every other int) against contiguous receives,
 * and a user-defined op (always passed to MPI). */
static long t_types(MPI_Comm comm)
{
	int n, me;
	long bad = 0;
	MPI_Datatype vec;

	MPI_Comm_size(comm, &n);
	MPI_Comm_rank(comm, &me);
	MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	{
		int *s = ibuf((size_t)n * 8), *r = ibuf((size_t)n * 4);

		/* the vector's extent is 7 ints: blocks of the send buffer start 7 apart */
		for (int d = 0; d < n; d++)
			for (int k = 0; k < 4; k++)
				s[d * 7 + 2 * k] = val(me, d, k);
		MPI_Alltoall(s, 1, vec, r, 4, MPI_INT, comm);
		for (int src = 0; src < n; src++)
			for (int k = 0; k < 4; k++)
				bad += r[src * 4 + k] != val(src, me, k);
		/* and the other way round: contiguous send, vector receive */
		for (int d = 0; d < n; d++)
			for (int k = 0; k < 4; k++)
				r[d * 4 + k] = val(me, d, k + 10);
		for (int i = 0; i < n * 8; i++)
			s[i] = SENTINEL;
		MPI_Allgather(r + me * 4, 4, MPI_INT, s, 1, vec, comm);
		for (int src = 0; src < n; src++)
			for (int k = 0; k < 7; k++)
				bad += s[src * 7 + k] != (k % 2 ? SENTINEL : val(src, src, k / 2 + 10));
		free(s);
		free(r);
	}
	MPI_Type_free(&vec);
	return bad;
}

static void umax(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] = ((int *)in)[i] > ((int *)inout)[i] ? ((int *)in)[i] : ((int *)inout)[i];
}

/*
 * MPI_Comm_free with a collective outstanding on the communicator: the
 * collective completes normally, waited for after the free (MPI-3.1 Sec.
 * 6.4.3), whatever the shim does with the communicator's own transport
 * (over verbs a split's tc_comm goes with the free). Frees *comm.
 */
static long t_free_outstanding(MPI_Comm *comm)
{
	const int m = 32;
	int n, me, *s, *r;
	MPI_Request req;
	long bad = 0;

	MPI_Comm_size(*comm, &n);
	MPI_Comm_rank(*comm, &me);
	s = ibuf(m);
	r = ibuf((size_t)n * m);
	for (int k = 0; k < m; k++)
		s[k] = val(me, 0, k);
	MPI_Iallgather(s, m, MPI_INT, r, m, MPI_INT, *comm, &req);
	MPI_Comm_free(comm);
	if (MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		bad++;
	for (int p = 0; p < n; p++)
		for (int k = 0; k < m; k++)
			bad += r[p * m + k] != val(p, 0, k);
	free(s);
	free(r);
	return bad;
}

static long t_userop(MPI_Comm comm)
{
	int n, me, x[3], y[3];
	long bad = 0;
	MPI_Op op;
	MPI_Request reqs[2];
	int a[2], b[2];

	MPI_Comm_size(comm, &n);
	MPI_Comm_rank(comm, &me);
	MPI_Op_create(umax, 1, &op);
	for (int i = 0; i < 3; i++)
		x[i] = val(me, -5, i);
	MPI_Allreduce(x, y, 3, MPI_INT, op, comm);
	for (int i = 0; i < 3; i++) {
		int m = val(0, -5, i);

		for (int p = 1; p < n; p++)
			m = val(p, -5, i) > m ? val(p, -5, i) : m;
		bad += y[i] != m;
	}
	MPI_Op_free(&op);
	/* two outstanding nonblocking collectives, completed in reverse order */
	a[0] = me;
	a[1] = 1;
	MPI_Iallreduce(&a[0], &b[0], 1, MPI_INT, MPI_SUM, comm, &reqs[0]);
	MPI_Iallreduce(&a[1], &b[1], 1, MPI_INT, MPI_SUM, comm, &reqs[1]);
	MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
	MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
	bad += b[0] != n * (n - 1) / 2;
	bad += b[1] != n;
	return bad;
}

typedef long (*coll_fn)(MPI_Comm, int, int);
static long t_allreduce(MPI_Comm c, int nb, int ip)
{
	return t_reduce(c, nb, ip, 0);
}
static long t_rsb(MPI_Comm c, int nb, int ip)
{
	return t_reduce(c, nb, ip, 1);
}
static long t_rs(MPI_Comm c, int nb, int ip)
{
	return t_reduce(c, nb, ip, 2);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		coll_fn fn;
	} colls[] = {
		{ "alltoall", t_alltoall },	  { "alltoallv", t_alltoallv },
		{ "allgather", t_allgather },	  { "allgatherv", t_allgatherv },
		{ "allreduce", t_allreduce },	  { "reduce_scatter_block", t_rsb },
		{ "reduce_scatter", t_rs },
	};
	const char *kinds[] = { "world", "dup", "halves", "reversed", "odd", "rows", "cols", "path" };
	const int nkinds = sizeof(kinds) / sizeof(kinds[0]);
	long *sum;
	int side;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &wsize);
	verbose = getenv("MPI_COLLS_VERBOSE") != NULL;
	light = getenv("MPI_COLLS_LIGHT") && strcmp(getenv("MPI_COLLS_LIGHT"), "0");
	for (side = 1; (side + 1) * (side + 1) <= wsize; side++)
		;
	for (int k = 0; k < nkinds; k++) {
		MPI_Comm comm = MPI_COMM_NULL;
		int own = 1, brief;
		const char *only = getenv("MPI_COLLS_COMMS"); /* e.g. "world,dup,odd" */
		const char *b = getenv("MPI_COLLS_BRIEF");

		if (only && !strstr(only, kinds[k]))
			continue;
		if (k >= 5 && side * side != wsize)
			continue; /* rows and columns of a square only */
		brief = own && b && strstr(b, kinds[k]);

		switch (k) {
		case 0:
			comm = MPI_COMM_WORLD;
			own = 0;
			break;
		case 1:
			MPI_Comm_dup(MPI_COMM_WORLD, &comm);
			break;
		case 2:
			MPI_Comm_split(MPI_COMM_WORLD, wrank < wsize / 2, wrank, &comm);
			break;
		case 3:
			MPI_Comm_split(MPI_COMM_WORLD, 0, -wrank, &comm);
			break;
		case 4: /* odd size: all but the last rank (or all, if that is odd) */
			MPI_Comm_split(MPI_COMM_WORLD, wsize % 2 == 0 && wrank == wsize - 1 ? MPI_UNDEFINED : 0, wrank,
				       &comm);
			break;
		case 5:
			MPI_Comm_split(MPI_COMM_WORLD, wrank / side, wrank, &comm);
			break;
		case 6:
			MPI_Comm_split(MPI_COMM_WORLD, wrank % side, wrank, &comm);
			break;
		default: /* the first side-1 ranks of each row */
			MPI_Comm_split(MPI_COMM_WORLD, wrank % side < side - 1 ? wrank / side : MPI_UNDEFINED, wrank, &comm);
			break;
		}
		if (comm != MPI_COMM_NULL && own)
			MPI_Comm_set_name(comm, kinds[k]);
		if (brief) {
			static const int bc[] = { 0, 1, 2, 4 }; /* alltoall(v), allgather, allreduce */

			for (int i = 0; i < 4; i++)
				point(comm == MPI_COMM_NULL ? 0 : colls[bc[i]].fn(comm, i % 2, 0), "%s %s%s", kinds[k],
				      i % 2 ? "i" : "", colls[bc[i]].name);
			point(comm == MPI_COMM_NULL ? 0 : t_bcast(comm, 0), "%s bcast", kinds[k]);
			point(comm == MPI_COMM_NULL ? 0 : t_barrier(comm, 1), "%s ibarrier", kinds[k]);
			if (comm != MPI_COMM_NULL)
				MPI_Comm_free(&comm);
			continue;
		}
		for (int nb = 0; nb < 2; nb++) {
			for (unsigned int c = 0; c < sizeof(colls) / sizeof(colls[0]); c++)
				for (int ip = 0; ip < 2; ip++) {
					if (verbose && wrank == 0)
						fprintf(stderr, "running %s %s nb %d ip %d\n", kinds[k], colls[c].name, nb, ip);
					point(comm == MPI_COMM_NULL ? 0 : colls[c].fn(comm, nb, ip), "%s %s%s%s", kinds[k],
					      nb ? "i" : "", colls[c].name, ip ? " in place" : "");
				}
			point(comm == MPI_COMM_NULL ? 0 : t_bcast(comm, nb), "%s %sbcast", kinds[k], nb ? "i" : "");
			point(comm == MPI_COMM_NULL ? 0 : t_barrier(comm, nb), "%s %sbarrier", kinds[k], nb ? "i" : "");
		}
		/* Open MPI 4.1.4's own alltoall (bruck) and allgather (recursive doubling)
		 * crash on this vector type at 16 plain ranks: run it where they do not. */
		if (wsize <= 4)
			point(comm == MPI_COMM_NULL ? 0 : t_types(comm), "%s non-contiguous datatypes", kinds[k]);
		point(comm == MPI_COMM_NULL ? 0 : t_userop(comm), "%s user op, two outstanding requests", kinds[k]);
		if (own)
			point(comm == MPI_COMM_NULL ? 0 : t_free_outstanding(&comm),
			      "%s freed with an iallgather outstanding", kinds[k]);
	}
	sum = calloc(npoints, sizeof(long));
	PMPI_Reduce(fails, sum, npoints, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (wrank == 0) {
		printf("1..%d\n", npoints);
		for (int i = 0; i < npoints; i++)
			printf("%sok %d - %d ranks: %s%s\n", sum[i] ? "not " : "", i + 1, wsize, names[i],
			       sum[i] ? " (wrong elements on some rank)" : "");
	}
	free(sum);
	MPI_Finalize();
	return 0;
}
