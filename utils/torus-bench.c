// SPDX-License-Identifier: GPL-2.0
/*
 * torus-bench: time and check libtoruscoll's collectives over a size sweep,
 * per algorithm, on the device (under torusrun), on the in-process simulator
 * (one thread per node), or over verbs. Uses only the public library header;
 * on the device it also reads the fabric's timing parameters and virtual
 * makespan through the ioctl ABI (include/uapi/torus.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
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

#include <toruscoll.h>
#include <uapi/torus.h>

#define PROG "torus-bench"
#include "tool.h"
#define MAX_ALGOS 32
#define MAX_ROUNDS 99

static const char usage_text[] =
	"usage: torus-bench [options]\n"
	"\n"
	"Times one collective of libtoruscoll over a sweep of sizes, for one\n"
	"algorithm or all of them, checking every byte every rank receives against\n"
	"a reference. Rank 0 prints one record per (algorithm, size).\n"
	"\n"
	"  -c, --coll C        alltoall (default), allgather, allreduce, bcast, barrier,\n"
	"                      alltoallv, allgatherv, reduce_scatter\n"
	"  -a, --algo A        alltoall/allgather: an algorithm (torus-sched --list),\n"
	"                      a comma-separated list of them,\n"
	"                      auto (default) or all (auto, then every algorithm of\n"
	"                      the collective); with auto and others, a closing\n"
	"                      table per size: auto's pick and measured time against\n"
	"                      the measured best (dev: the virtual makespan of one\n"
	"                      call, unless TC_AUTO_CLOCK=wall; else the median over\n"
	"                      the calls of the slowest rank's time)\n"
	"      --transport T   dev (default, or $TC_TRANSPORT): this process is one\n"
	"                      rank of a fabric (start with torusrun); sim: every node\n"
	"                      a thread of this process (needs --dims or TC_SIM_DIMS,\n"
	"                      which torusrun --transport sim sets); verbs: passed to\n"
	"                      the library as TC_TRANSPORT=verbs\n"
	"  -d, --dims DIMS     shape, 4x4 or 4,4 (sim: required; dev: checked)\n"
	"      --mesh          sim: no dimension wraps\n"
	"      --one-port      sim: one-port nodes\n"
	"  -b, --minbytes N    smallest size (default 64; K, M suffixes)\n"
	"  -e, --maxbytes N    largest size (default 1M)\n"
	"  -f, --stepfactor F  multiply the size by F each step (default 2)\n"
	"  -w, --warmup N      checked untimed iterations per size (default 1)\n"
	"  -n, --iters N       timed iterations per size (default 10)\n"
	"  -r, --rounds N      run the whole list of algorithms N times per size,\n"
	"                      interleaved (each round in its own shuffled order);\n"
	"                      each (algorithm, size) reports its median round, and\n"
	"                      the auto table how far its rounds spread and, paired,\n"
	"                      the median over rounds of auto's time over each\n"
	"                      algorithm's in the same round, the largest (default 1;\n"
	"                      at most 99)\n"
	"      --ts-ns T       startup time of the prediction (default: the fabric's\n"
	"                      on dev, else the module default 1000)\n"
	"      --tw-ps T       time per byte of the prediction, ps (default: the\n"
	"                      fabric's on dev, else 100)\n"
	"  -j, --json          one JSON document\n"
	"      --csv           comma-separated values with a header line\n"
	"      --plot FILE     also draw time and busbw against size per algorithm\n"
	"                      with gnuplot into FILE.png or FILE.svg\n"
	"  -h, --help          this text\n"
	"\n"
	"size: the bytes per peer block (alltoall, allgather, the v-variants'\n"
	"largest block), the vector bytes (allreduce, bcast), the bytes each rank\n"
	"receives (reduce_scatter). bytes = the data one rank sends or receives,\n"
	"algbw = bytes / time, busbw = algbw * factor (nccl-tests; see torus-bench(1)).\n"
	"\n"
	"Exit status: 0 ok; 1 a byte was wrong; 2 bad usage; 3 the one algorithm\n"
	"asked for does not support the shape; 4 other errors (no fabric, transport).\n";

enum coll {
	C_ALLTOALL,
	C_ALLGATHER,
	C_ALLREDUCE,
	C_BCAST,
	C_BARRIER,
	C_ALLTOALLV,
	C_ALLGATHERV,
	C_REDUCE_SCATTER,
	C_NUM
};
static const char *const coll_names[C_NUM] = { "alltoall",  "allgather", "allreduce",  "bcast",
					       "barrier",   "alltoallv", "allgatherv", "reduce_scatter" };

struct opts {
	enum coll coll;
	const char *algo;
	const char *transport;
	int ndims;
	unsigned int dims[TC_MAX_DIMS];
	int mesh, one_port;
	size_t minb, maxb;
	double factor;
	int warmup, iters, rounds;
	double ts_ns, tw_ps;
	int have_ts, have_tw;
	int json, csv;
	const char *plot;
};

struct record {
	char algo[32];
	char ran[32];
	char why[160];
	size_t size;
	double bytes;
	int supported;
	double tavg, tmin, tmax; /* us per iteration: avg/min/max over ranks */
	double tmed;		 /* not dev: median over the calls of the slowest rank's time, or -1 */
	double algbw, busbw;	 /* GB/s */
	unsigned int steps;
	double tx_blocks, lb_blocks;
	double predicted; /* us, or -1 */
	double model_us;  /* the library's cost model for what ran (tc_coll_info.predicted_us), or -1 */
	/* the path of one call (tc_coll_info), summed over the ranks, or -1: ranks that ran it
	 * zero copy, and its messages by verbs protocol */
	double zcopy_ranks, eager_sends, rdv_sends;
	double makespan;  /* virtual us per call (dev: the median of per-call makespans), or -1 */
	double wall;	  /* dev: median per-call wall time, first rank in to last out, or -1 */
	long long errors;
	int rounds;		     /* rounds this record's median is over (-r) */
	double round_min, round_max; /* the least and the largest round's time compared */
	double round_t[MAX_ROUNDS];  /* -r: each round's time compared, in round order; -1: not run */
};

struct bench {
	struct opts o;
	int nalgos;
	char algos[MAX_ALGOS][32];
	struct record *recs;
	int nrecs, caprecs;
	int progress;
	double barrier_ms; /* dev: virtual time of one barrier, us */
	int fail; /* negative errno of the first failure */
	int bad_algo;
	char failmsg[256];
	pthread_mutex_t lock;
	int ctl_fd; /* dev: /dev/torus-ctl for the makespan, or -1 */
	pthread_barrier_t *obar; /* dev: a barrier of all ranks outside the fabric (shared file), or NULL */
	unsigned int fabric_id;
	/* the shape, as rank 0's communicator reports it */
	int P, ndims, dims[TC_MAX_DIMS], one_port;
	unsigned int wrap;
};

static void parse_dims_opt(const char *s, struct opts *o)
{
	uint32_t d[TC_MAX_DIMS];

	o->ndims = tool_parse_dims("--dims", s, d, TC_MAX_DIMS, 4096);
	for (int i = 0; i < o->ndims; i++)
		o->dims[i] = (int)d[i];
}

static size_t parse_size(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		die(2, "%s %s: not a size (e.g. 64, 4K, 1M)", opt, s);
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		v <<= 30, end++;
	if (*end)
		die(2, "%s %s: not a size (e.g. 64, 4K, 1M)", opt, s);
	return v;
}

static int parse_int(const char *opt, const char *s, int min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > INT_MAX)
		die(2, "%s %s: expected an integer >= %d", opt, s, min);
	return v;
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* ---- the algorithms to run ---- */

/* The public API has no list of algorithm names: torus-sched --list has it.
 * Look for torus-sched next to this program, then on PATH. */
static int list_algos(struct bench *b)
{
	char self[PATH_MAX], cmd[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char line[512], coll[32], name[64];
	FILE *f;
	int st;

	cmd[0] = 0;
	if (n > 0) {
		char *slash;

		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(cmd, sizeof(cmd), "%s/torus-sched", self);
			if (access(cmd, X_OK))
				cmd[0] = 0;
		}
	}
	if (!cmd[0])
		snprintf(cmd, sizeof(cmd), "torus-sched");
	strncat(cmd, " --list 2>/dev/null", sizeof(cmd) - strlen(cmd) - 1);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	/* auto first: the sweep then compares the library's choice with every candidate */
	snprintf(b->algos[0], sizeof(b->algos[0]), "auto");
	b->nalgos = 1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %63s", coll, name) == 2 && !strcmp(coll, coll_names[b->o.coll]) &&
		    b->nalgos < MAX_ALGOS)
			snprintf(b->algos[b->nalgos++], sizeof(b->algos[0]), "%.31s", name);
	st = pclose(f);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) || b->nalgos < 2)
		return -ENOENT;
	return 0;
}

/* ---- data patterns and checks ---- */

static inline uint8_t pat(int src, int dst, size_t i, int it)
{
	return (uint8_t)(src * 131 + dst * 29 + i * 7 + (i >> 8) * 3 + it * 53 + 1);
}

static inline uint32_t epat(int rank, size_t e, int it)
{
	return (uint32_t)rank * 2654435761u + (uint32_t)e * 40503u + (uint32_t)it * 977u;
}

/* alltoallv/allgatherv: bytes from s to d (d ignored for allgatherv) */
static size_t vcount(size_t m, int s, int d)
{
	return m * (size_t)(1 + (s + 2 * d) % 3) / 3;
}

struct bufs {
	uint8_t *send, *recv;
	size_t *sc, *sd, *rc, *rd;
	size_t sendbytes, recvbytes; /* allocated */
};

/* Per-rank data bytes (for algbw) and busbw factor, nccl-tests style. */
static void bw_model(enum coll c, size_t size, int P, double *bytes, double *factor)
{
	double p = P;

	switch (c) {
	case C_ALLTOALL:
	case C_ALLGATHER:
	case C_ALLTOALLV:
	case C_ALLGATHERV:
		*bytes = (double)size * P; /* alltoallv/allgatherv: the nominal P*size */
		*factor = (p - 1) / p;
		break;
	case C_REDUCE_SCATTER:
		*bytes = (double)size * P;
		*factor = (p - 1) / p;
		break;
	case C_ALLREDUCE:
		*bytes = size;
		*factor = 2 * (p - 1) / p;
		break;
	case C_BCAST:
		*bytes = size;
		*factor = 1;
		break;
	default:
		*bytes = 0;
		*factor = 0;
	}
}

static int alloc_bufs(enum coll c, size_t size, int P, struct bufs *B)
{
	size_t s = 0, r = 0;

	memset(B, 0, sizeof(*B));
	switch (c) {
	case C_ALLTOALL:
	case C_ALLTOALLV:
		s = r = size * P;
		break;
	case C_ALLGATHER:
	case C_ALLGATHERV:
		s = size;
		r = size * P;
		break;
	case C_ALLREDUCE:
	case C_BCAST:
		s = r = size;
		break;
	case C_REDUCE_SCATTER:
		s = size * P;
		r = size;
		break;
	default:
		break;
	}
	B->send = malloc(s ? s : 1);
	B->recv = malloc(r ? r : 1);
	B->sc = calloc(P, sizeof(size_t));
	B->sd = calloc(P, sizeof(size_t));
	B->rc = calloc(P, sizeof(size_t));
	B->rd = calloc(P, sizeof(size_t));
	B->sendbytes = s;
	B->recvbytes = r;
	if (!B->send || !B->recv || !B->sc || !B->sd || !B->rc || !B->rd)
		return -ENOMEM;
	return 0;
}

static void free_bufs(struct bufs *B)
{
	free(B->send);
	free(B->recv);
	free(B->sc);
	free(B->sd);
	free(B->rc);
	free(B->rd);
}

/* Fill the send data of iteration it and poison the receive buffer. */
static void fill(enum coll c, size_t size, int P, int rank, int it, struct bufs *B)
{
	size_t off = 0;

	memset(B->recv, 0xee, B->recvbytes);
	switch (c) {
	case C_ALLTOALL:
		for (int d = 0; d < P; d++)
			for (size_t i = 0; i < size; i++)
				B->send[d * size + i] = pat(rank, d, i, it);
		break;
	case C_ALLGATHER:
		for (size_t i = 0; i < size; i++)
			B->send[i] = pat(rank, 0, i, it);
		break;
	case C_ALLTOALLV:
		for (int d = 0; d < P; d++) {
			B->sc[d] = vcount(size, rank, d);
			B->sd[d] = off;
			for (size_t i = 0; i < B->sc[d]; i++)
				B->send[off + i] = pat(rank, d, i, it);
			off += B->sc[d];
		}
		off = 0;
		for (int s = 0; s < P; s++) {
			B->rc[s] = vcount(size, s, rank);
			B->rd[s] = off;
			off += B->rc[s];
		}
		break;
	case C_ALLGATHERV:
		B->sc[0] = vcount(size, rank, 0);
		for (size_t i = 0; i < B->sc[0]; i++)
			B->send[i] = pat(rank, 0, i, it);
		for (int s = 0; s < P; s++) {
			B->rc[s] = vcount(size, s, 0);
			B->rd[s] = off;
			off += B->rc[s];
		}
		break;
	case C_ALLREDUCE:
	case C_REDUCE_SCATTER: {
		size_t n = B->sendbytes / 4;

		for (size_t e = 0; e < n; e++) {
			uint32_t v = epat(rank, e, it);

			memcpy(B->send + 4 * e, &v, 4);
		}
		break;
	}
	case C_BCAST:
		if (rank == 0)
			for (size_t i = 0; i < size; i++)
				B->recv[i] = pat(0, 0, i, it);
		break;
	default:
		break;
	}
}

static long long check(enum coll c, size_t size, int P, int rank, int it, const struct bufs *B)
{
	long long bad = 0;

	switch (c) {
	case C_ALLTOALL:
		for (int s = 0; s < P; s++)
			for (size_t i = 0; i < size; i++)
				bad += B->recv[s * size + i] != pat(s, rank, i, it);
		break;
	case C_ALLGATHER:
		for (int s = 0; s < P; s++)
			for (size_t i = 0; i < size; i++)
				bad += B->recv[s * size + i] != pat(s, 0, i, it);
		break;
	case C_ALLTOALLV:
	case C_ALLGATHERV: {
		size_t end = 0;

		for (int s = 0; s < P; s++) {
			int d = c == C_ALLTOALLV ? rank : 0;

			for (size_t i = 0; i < B->rc[s]; i++)
				bad += B->recv[B->rd[s] + i] != pat(s, d, i, it);
			end = B->rd[s] + B->rc[s];
		}
		for (size_t i = end; i < B->recvbytes; i++) /* past the data: untouched */
			bad += B->recv[i] != 0xee;
		break;
	}
	case C_ALLREDUCE:
	case C_REDUCE_SCATTER: {
		size_t n = size / 4, base = c == C_REDUCE_SCATTER ? (size_t)rank * n : 0;

		for (size_t e = 0; e < n; e++) {
			uint32_t want = 0;
			uint8_t wb[4];

			for (int r = 0; r < P; r++)
				want += epat(r, base + e, it);
			memcpy(wb, &want, 4);
			for (int k = 0; k < 4; k++)
				bad += B->recv[4 * e + k] != wb[k];
		}
		for (size_t i = 4 * n; i < size; i++) /* a tail shorter than one int32 */
			bad += B->recv[i] != 0xee;
		break;
	}
	case C_BCAST:
		for (size_t i = 0; i < size; i++)
			bad += B->recv[i] != pat(0, 0, i, it);
		break;
	default:
		break;
	}
	return bad;
}

static int run_once(tc_comm_t *comm, enum coll c, size_t size, struct bufs *B)
{
	switch (c) {
	case C_ALLTOALL:
		return tc_alltoall(comm, B->send, B->recv, size);
	case C_ALLGATHER:
		return tc_allgather(comm, B->send, B->recv, size);
	case C_ALLREDUCE:
		return tc_allreduce(comm, B->send, B->recv, size / 4, TC_INT32, TC_SUM);
	case C_BCAST:
		return tc_bcast(comm, B->recv, size / 4, TC_INT32, 0);
	case C_BARRIER:
		return tc_barrier(comm);
	case C_ALLTOALLV:
		return tc_alltoallv(comm, B->send, B->sc, B->sd, B->recv, B->rc, B->rd);
	case C_ALLGATHERV:
		return tc_allgatherv(comm, B->send, B->sc[0], B->recv, B->rc, B->rd);
	case C_REDUCE_SCATTER:
		return tc_reduce_scatter(comm, B->send, B->recv, size / 4, TC_INT32, TC_SUM);
	default:
		return -EINVAL;
	}
}

/* ---- the per-rank loop ---- */

static void set_fail(struct bench *b, int rank, int err, const char *what)
{
	pthread_mutex_lock(&b->lock);
	if (!b->fail) {
		b->fail = err ? err : -EIO;
		snprintf(b->failmsg, sizeof(b->failmsg), "rank %d: %s: %s%s%s", rank, what, tc_strerror(err),
			 *tc_last_error() ? ": " : "", tc_last_error());
	}
	pthread_mutex_unlock(&b->lock);
}

static int add_record(struct bench *b, const struct record *r)
{
	if (b->nrecs == b->caprecs) {
		int n = b->caprecs ? 2 * b->caprecs : 32;
		struct record *p = realloc(b->recs, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		b->recs = p;
		b->caprecs = n;
	}
	b->recs[b->nrecs++] = *r;
	return 0;
}

/*
 * Virtual makespan of the device fabric (the latest virtual end time of any
 * message). It is read, never reset: a reset while another rank still has
 * completions to reap would let their old end times push its clock back up.
 */
static int makespan(struct bench *b, double *us)
{
	struct torus_fabric_query q;

	if (b->ctl_fd < 0)
		return -ENODEV;
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.fabric_id = b->fabric_id;
	if (ioctl(b->ctl_fd, TORUS_IOC_FABRIC_QUERY, &q))
		return -errno;
	*us = q.makespan_ns / 1e3;
	return 0;
}

/*
 * Dev: a barrier of all ranks that sends nothing over the fabric, so the
 * virtual clocks can be reset between calls and one call's makespan read
 * alone (what the cost model predicts: every node starts at 0). A
 * process-shared pthread barrier in a file under /tmp named after the fabric
 * and the launcher (torusrun, every rank's parent). NULL when any rank could
 * not map it (then the makespan is read across the timed calls).
 */
static pthread_barrier_t *obar_open(struct bench *b, tc_comm_t *comm, int rank, int P)
{
	pthread_barrier_t *m = MAP_FAILED;
	pthread_barrierattr_t ba;
	char path[96];
	int32_t ok, all = 0;
	int fd = -1;

	snprintf(path, sizeof(path), "/tmp/torus-bench.%u.%d", b->fabric_id, (int)getppid());
	if (rank == 0) {
		unlink(path);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 && !ftruncate(fd, sizeof(*m)))
			m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			pthread_barrierattr_init(&ba);
			pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
			if (pthread_barrier_init(m, &ba, P)) {
				munmap(m, sizeof(*m));
				m = MAP_FAILED;
			}
			pthread_barrierattr_destroy(&ba);
		}
	}
	if (tc_barrier(comm)) /* rank 0's barrier is in place */
		return NULL;
	if (rank) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0)
			m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	}
	if (fd >= 0)
		close(fd);
	ok = m != MAP_FAILED;
	if (tc_allreduce(comm, &ok, &all, 1, TC_INT32, TC_MIN))
		all = 0;
	if (rank == 0)
		unlink(path); /* every rank has it open (or gave up) */
	if (!all) {
		if (m != MAP_FAILED)
			munmap(m, sizeof(*m));
		return NULL;
	}
	return m;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A query of the fabric's makespan, resetting it and every clock to 0 with reset. */
static int fabric_span(struct bench *b, int reset, double *us)
{
	struct torus_fabric_query q = { .size = sizeof(q), .fabric_id = b->fabric_id };

	q.flags = reset ? TORUS_QUERY_RESET_STATS : 0;
	if (ioctl(b->ctl_fd, TORUS_IOC_FABRIC_QUERY, &q))
		return -errno;
	*us = q.makespan_ns / 1e3;
	return 0;
}

/*
 * Dev with the outside barrier: each timed call alone, its virtual clocks
 * reset before it; r->makespan and r->wall the medians over the calls (rank
 * 0 fills them), *t this rank's mean time in the call.
 */
static int timed_calls_dev(struct bench *b, tc_comm_t *comm, int rank, size_t size, struct bufs *B,
			   struct record *r, double *t)
{
	const struct opts *o = &b->o;
	double span[o->iters], wall[o->iters], sum = 0, t0, t1, x;
	int ret = 0, n = 0;

	/* every rank takes every barrier, even after a failed call */
	for (int i = 0; i < o->iters; i++) {
		pthread_barrier_wait(b->obar);
		if (rank == 0 && fabric_span(b, 1, &x))
			r->makespan = -2; /* a failed query: no makespan for this size */
		pthread_barrier_wait(b->obar);
		t0 = now_us();
		if (!ret)
			ret = run_once(comm, o->coll, size, B);
		t1 = now_us();
		sum += t1 - t0;
		pthread_barrier_wait(b->obar);
		if (rank == 0 && !ret) {
			wall[n] = now_us() - t0;
			if (fabric_span(b, 0, &span[n]))
				r->makespan = -2;
			n++;
		}
		/* after the last call too: what the ranks send next must not count */
		pthread_barrier_wait(b->obar);
	}
	*t = sum / o->iters;
	if (rank == 0 && n && r->makespan > -2) {
		r->makespan = median(span, n);
		r->wall = median(wall, n);
	} else if (rank == 0) {
		r->makespan = -1;
	}
	return ret;
}

/*
 * Not on the device: each timed call between barriers, r->tmed the median
 * over the calls of the slowest rank's time in it (every rank fills it), *t
 * this rank's mean. A loaded host stretches single calls by several times;
 * the median of per-call maxima keeps one stall from deciding a comparison.
 */
static int timed_calls_wall(struct bench *b, tc_comm_t *comm, size_t size, struct bufs *B, struct record *r,
			    double *t)
{
	const struct opts *o = &b->o;
	double per[o->iters], slow[o->iters], sum = 0, t0;
	int ret = 0;

	for (int i = 0; i < o->iters && !ret; i++) {
		ret = tc_barrier(comm);
		t0 = now_us();
		if (!ret)
			ret = run_once(comm, o->coll, size, B);
		per[i] = now_us() - t0;
		sum += per[i];
	}
	if (!ret)
		ret = tc_allreduce(comm, per, slow, o->iters, TC_DOUBLE, TC_MAX);
	if (!ret)
		r->tmed = median(slow, o->iters);
	*t = sum / o->iters;
	return ret;
}

/*
 * One point of the sweep: algo (when the collective has algorithms) at size,
 * a warm-up and the timed calls, reduced over the ranks into *r; every rank
 * calls it with the same arguments.
 */
static int bench_point(struct bench *b, tc_comm_t *comm, const char *algo, size_t size, int use_ms, struct record *r)
{
	const struct opts *o = &b->o;
	const int P = tc_comm_size(comm), rank = tc_comm_rank(comm);
	int is_a2a = o->coll == C_ALLTOALL, has_algo = is_a2a || o->coll == C_ALLGATHER;
	int ret = 0;
	struct bufs B;
	double t0, t, v[3], g[3], bytes, factor, ms0 = 0, ms1 = 0;
	/* summed over the ranks at the end: wrong bytes, then the call's path (tc_coll_info
	 * zero_copy, eager_sends, rendezvous_sends) */
	long long bad = 0, sums[4] = { 0 }, gsums[4];
	int it = 0;

	if (has_algo) {
		ret = tc_comm_set_algo(comm, is_a2a ? TC_ALLTOALL : TC_ALLGATHER, algo);
		if (ret) {
			set_fail(b, rank, ret, "tc_comm_set_algo");
			b->bad_algo = ret == -ENOENT; /* a name no collective has: bad usage */
			return ret;
		}
	}
	memset(r, 0, sizeof(*r));
	snprintf(r->algo, sizeof(r->algo), "%s", algo);
	r->size = size;
	r->predicted = -1;
	r->model_us = -1;
	r->zcopy_ranks = r->eager_sends = r->rdv_sends = -1;
	r->tmed = -1;
	r->makespan = -1;
	r->wall = -1;
	ret = alloc_bufs(o->coll, size, P, &B);
	if (ret) {
		set_fail(b, rank, ret, "allocating buffers");
		free_bufs(&B);
		return ret;
	}
	if (rank == 0 && b->progress) {
		fprintf(stderr, "\r" PROG ": %s %s size %zu ...        ", coll_names[o->coll], algo, size);
		fflush(stderr);
	}
	/* warmup: every iteration checked; the first tells what ran */
	for (; it < (o->warmup ? o->warmup : 1) && !ret; it++) {
		fill(o->coll, size, P, rank, it, &B);
		ret = run_once(comm, o->coll, size, &B);
		if (!ret)
			bad += check(o->coll, size, P, rank, it, &B);
	}
	if (ret) {
		set_fail(b, rank, ret, coll_names[o->coll]);
		free_bufs(&B);
		return ret;
	}
	r->supported = 1;
	snprintf(r->ran, sizeof(r->ran), "%s", algo);
	if (has_algo) {
		struct tc_coll_info info = { .size = sizeof(info) };

		if (!tc_coll_last(comm, is_a2a ? TC_ALLTOALL : TC_ALLGATHER, &info)) {
			sums[1] = info.zero_copy;
			sums[2] = info.eager_sends;
			sums[3] = info.rendezvous_sends;
			snprintf(r->ran, sizeof(r->ran), "%s", info.algo);
			snprintf(r->why, sizeof(r->why), "%s", info.why);
			r->supported = !info.why[0];
			r->steps = info.steps;
			r->tx_blocks = info.transmission_blocks;
			r->lb_blocks = info.lower_bound_blocks;
			r->predicted = (info.steps * o->ts_ns + info.transmission_blocks * size * o->tw_ps / 1e3) /
				      1e3;
			r->model_us = info.predicted_us;
		}
	}
	if (r->supported && b->obar) {
		fill(o->coll, size, P, rank, it, &B);
		ret = timed_calls_dev(b, comm, rank, size, &B, r, &t);
		if (ret) {
			set_fail(b, rank, ret, coll_names[o->coll]);
			free_bufs(&B);
			return ret;
		}
		bad += check(o->coll, size, P, rank, it, &B);
	} else if (r->supported) {
		if (use_ms) {
			ret = tc_barrier(comm);
			if (!ret && rank == 0 && makespan(b, &ms0))
				ms0 = -1;
		}
		if (!ret)
			ret = tc_barrier(comm);
		fill(o->coll, size, P, rank, it, &B);
		t0 = now_us();
		if (use_ms) {
			for (int i = 0; i < o->iters && !ret; i++)
				ret = run_once(comm, o->coll, size, &B);
			t = (now_us() - t0) / o->iters;
		} else if (!ret) {
			ret = timed_calls_wall(b, comm, size, &B, r, &t);
		}
		if (ret) {
			set_fail(b, rank, ret, coll_names[o->coll]);
			free_bufs(&B);
			return ret;
		}
		bad += check(o->coll, size, P, rank, it, &B);
		if (use_ms) {
			ret = tc_barrier(comm);
			if (!ret && rank == 0 && ms0 >= 0 && !makespan(b, &ms1))
				r->makespan = fmax(0, ms1 - ms0 - 2 * b->barrier_ms) / o->iters;
		}
	}
	if (r->supported) {
		/* avg, min, max over ranks with the library's own allreduce */
		v[0] = t;
		if (!ret)
			ret = tc_allreduce(comm, v, g, 1, TC_DOUBLE, TC_SUM);
		if (!ret)
			ret = tc_allreduce(comm, v, g + 1, 1, TC_DOUBLE, TC_MIN);
		if (!ret)
			ret = tc_allreduce(comm, v, g + 2, 1, TC_DOUBLE, TC_MAX);
		if (ret) {
			set_fail(b, rank, ret, "reducing the times");
			free_bufs(&B);
			return ret;
		}
		r->tavg = g[0] / P;
		r->tmin = g[1];
		r->tmax = g[2];
		bw_model(o->coll, size, P, &bytes, &factor);
		r->bytes = bytes;
		r->algbw = r->tavg > 0 ? bytes / r->tavg / 1e3 : 0;
		r->busbw = r->algbw * factor;
	}
	sums[0] = bad;
	ret = tc_allreduce(comm, sums, gsums, 4, TC_INT64, TC_SUM);
	free_bufs(&B);
	if (ret) {
		set_fail(b, rank, ret, "reducing the error count and the path");
		return ret;
	}
	r->errors = gsums[0];
	if (has_algo) {
		r->zcopy_ranks = gsums[1];
		r->eager_sends = gsums[2];
		r->rdv_sends = gsums[3];
	}
	return ret;
}

static double measured(const struct record *r);

/* The sizes of the sweep into sizes[] (at most max), their count. */
static int sweep_sizes(const struct opts *o, size_t *sizes, int max)
{
	int n = 0;

	for (size_t size = o->minb; n < max; size = (size_t)ceil(size * o->factor)) {
		if (o->coll == C_BARRIER)
			size = 0;
		else if (o->coll == C_ALLREDUCE || o->coll == C_BCAST || o->coll == C_REDUCE_SCATTER)
			size &= ~(size_t)3; /* int32 elements */
		sizes[n++] = size;
		if (o->coll == C_BARRIER || size >= o->maxb || (size_t)ceil(size * o->factor) > o->maxb)
			break;
	}
	return n;
}

/*
 * Rank 0: each (algorithm, size) of res (rounds records each, algorithm
 * major) that ran in at least one round becomes one record: its median
 * round (the lower one of an even count) by the time compared, with the
 * least and the largest round.
 */
static int sweep_record(struct bench *b, const struct record *res, int nalgos, int nsizes)
{
	const int R = b->o.rounds;
	int ret = 0;

	for (int i = 0; i < nalgos * nsizes && !ret; i++) {
		const struct record *p = &res[(size_t)i * R], *by[R];
		struct record r;
		int n = 0;

		for (int k = 0; k < R; k++)
			if (p[k].rounds) {
				int j = n++;

				for (; j > 0 && measured(by[j - 1]) > measured(&p[k]); j--)
					by[j] = by[j - 1];
				by[j] = &p[k];
			}
		if (!n)
			continue;
		r = *by[(n - 1) / 2];
		for (int k = 0; k < R; k++)
			r.round_t[k] = p[k].rounds ? measured(&p[k]) : -1;
		r.rounds = n;
		r.round_min = measured(by[0]);
		r.round_max = measured(by[n - 1]);
		pthread_mutex_lock(&b->lock);
		ret = add_record(b, &r);
		pthread_mutex_unlock(&b->lock);
	}
	return ret;
}

/*
 * Round k of size s (-r): the algorithms in an order of their own, the same
 * on every rank (a Fisher-Yates shuffle seeded by s and k), so neither a
 * place in the round nor the algorithm run before is always the same one's.
 */
static void round_order(int s, int k, int nalgos, int *order)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(s * 1000 + k + 1);

	for (int i = 0; i < nalgos; i++)
		order[i] = i;
	for (int i = nalgos - 1; i > 0; i--) {
		int j, t;

		x ^= x >> 30; /* splitmix64's mix of a counter */
		x *= 0xbf58476d1ce4e5b9ull;
		x ^= x >> 27;
		x *= 0x94d049bb133111ebull;
		x ^= x >> 31;
		j = (int)(x % (uint64_t)(i + 1));
		t = order[i];
		order[i] = order[j];
		order[j] = t;
		x += 0x9e3779b97f4a7c15ull;
	}
}

/*
 * Every point of the sweep. One round: each algorithm over every size in
 * turn. Several (-r): per size, the whole list of algorithms once a round,
 * each round in its own order (round_order()), so a slow spell of the host
 * falls on every algorithm alike rather than on the ones run during it.
 */
static int sweep(struct bench *b, tc_comm_t *comm, int use_ms, int nalgos)
{
	const struct opts *o = &b->o;
	const int R = o->rounds, has_algo = o->coll == C_ALLTOALL || o->coll == C_ALLGATHER;
	size_t sizes[64];
	int nsizes = sweep_sizes(o, sizes, 64), ret = 0, n = R == 1 ? nalgos * nsizes : nsizes * R * nalgos;
	int order[MAX_ALGOS];
	struct record *res = calloc((size_t)nalgos * nsizes * R, sizeof(*res));

	if (!res) {
		set_fail(b, tc_comm_rank(comm), -ENOMEM, "allocating the records");
		return -ENOMEM;
	}
	for (int i = 0; i < n && !ret; i++) {
		/* one round: algorithm major; several: size, round, algorithm */
		int s = R == 1 ? i % nsizes : i / (R * nalgos), k = R == 1 ? 0 : i / nalgos % R;
		struct record *r;
		int a;

		if (R > 1 && i % nalgos == 0)
			round_order(s, k, nalgos, order);
		a = R == 1 ? i / nsizes : order[i % nalgos];
		r = &res[((size_t)a * nsizes + s) * R + k];

		ret = bench_point(b, comm, has_algo ? b->algos[a] : "-", sizes[s], use_ms, r);
		r->rounds = !ret;
	}
	if (tc_comm_rank(comm) == 0) {
		int r2 = sweep_record(b, res, nalgos, nsizes);

		if (r2) {
			set_fail(b, 0, r2, "recording");
			ret = ret ? ret : r2;
		}
	}
	free(res);
	return ret;
}

static int bench_rank(tc_comm_t *comm, void *arg)
{
	struct bench *b = arg;
	const struct opts *o = &b->o;
	const int P = tc_comm_size(comm), rank = tc_comm_rank(comm);
	int is_a2a = o->coll == C_ALLTOALL, has_algo = is_a2a || o->coll == C_ALLGATHER;
	int nalgos = has_algo ? b->nalgos : 1;
	int ret = 0, use_ms = 0;

	if (rank == 0) {
		b->P = P;
		b->ndims = tc_comm_ndims(comm);
		tc_comm_dims(comm, b->dims, &b->wrap);
		b->one_port = tc_comm_port_model(comm) == TC_ONE_PORT;
	}
	if (b->ctl_fd >= 0) {
		/* the makespan needs every rank's barriers: agree on it */
		int32_t mine = 1, all = 0;

		ret = tc_allreduce(comm, &mine, &all, 1, TC_INT32, TC_MIN);
		if (ret) {
			set_fail(b, rank, ret, "tc_allreduce");
			return ret;
		}
		use_ms = all == 1;
	}
	if (use_ms)
		b->obar = obar_open(b, comm, rank, P);
	if (use_ms && !b->obar) {
		/* the virtual time of one barrier (the least of 3): each size's
		 * makespan growth has one before the timed calls and one after */
		double m0 = 0, m1 = 0, best = -1;

		for (int k = 0; k < 4 && !ret; k++) {
			ret = tc_barrier(comm);
			if (!ret && rank == 0 && !makespan(b, &m1) && k && (best < 0 || m1 - m0 < best))
				best = m1 - m0;
			m0 = m1;
		}
		if (ret) {
			set_fail(b, rank, ret, "tc_barrier");
			return ret;
		}
		if (rank == 0)
			b->barrier_ms = best > 0 ? best : 0;
	}
	ret = sweep(b, comm, use_ms, nalgos);
	return ret;
}

/* ---- output ---- */


static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (v < 0 || !isfinite(v))
		fprintf(f, "null");
	else
		fprintf(f, "%.6g", v);
}

/* One field of a JSON record: , "name": value (null when negative) */
static void json_field(const char *name, double v)
{
	printf(", \"%s\": ", name);
	json_num(stdout, v);
}

static void print_vs_auto_json(const struct bench *b);

static void print_json(const struct bench *b, const char *transport)
{
	const struct opts *o = &b->o;
	const int *dims = b->dims, nd = b->ndims, P = b->P;
	const unsigned int wrap = b->wrap;

	printf("{\"tool\": \"torus-bench\", \"coll\": \"%s\", \"transport\": \"%s\", \"dims\": [", coll_names[o->coll],
	       transport);
	for (int d = 0; d < nd; d++)
		printf("%s%d", d ? ", " : "", dims[d]);
	printf("], \"wrap_mask\": %u, \"port_model\": \"%s\", \"nodes\": %d, \"warmup\": %d, \"iters\": %d,\n", wrap,
	       b->one_port ? "one-port" : "all-port", P, o->warmup, o->iters);
	printf(" \"model\": {\"ts_ns\": %g, \"tw_ps\": %g},", o->ts_ns, o->tw_ps);
	if (b->ctl_fd >= 0)
		printf(" \"barrier_makespan_us\": %.6g,", b->barrier_ms);
	printf("\n \"records\": [");
	for (int i = 0; i < b->nrecs; i++) {
		const struct record *r = &b->recs[i];

		printf("%s\n  {\"algo\": ", i ? "," : "");
		json_str(stdout, r->algo);
		printf(", \"size\": %zu, \"supported\": %s", r->size, r->supported ? "true" : "false");
		if (!r->supported) {
			printf(", \"ran\": ");
			json_str(stdout, r->ran);
			printf(", \"why\": ");
			json_str(stdout, r->why);
			printf(", \"errors\": %lld}", r->errors);
			continue;
		}
		if (strcmp(r->ran, "-")) {
			printf(", \"ran\": ");
			json_str(stdout, r->ran);
		}
		printf(", \"bytes\": %.0f, \"time_us\": ", r->bytes);
		json_num(stdout, r->tavg);
		json_field("time_min_us", r->tmin);
		json_field("time_max_us", r->tmax);
		json_field("algbw_GBps", r->algbw);
		json_field("busbw_GBps", r->busbw);
		if (r->predicted >= 0) {
			printf(", \"steps\": %u, \"transmission_blocks\": ", r->steps);
			json_num(stdout, r->tx_blocks);
			json_field("lower_bound_blocks", r->lb_blocks);
		}
		json_field("predicted_us", r->predicted);
		json_field("ratio", r->predicted > 0 ? r->tavg / r->predicted : -1);
		json_field("time_med_us", r->tmed);
		json_field("makespan_us", r->makespan);
		json_field("model_us", r->model_us);
		json_field("zero_copy_ranks", r->zcopy_ranks);
		json_field("eager_sends", r->eager_sends);
		json_field("rendezvous_sends", r->rdv_sends);
		json_field("wall_us", r->wall);
		if (r->rounds > 1) {
			printf(", \"rounds\": %d, \"round_min_us\": ", r->rounds);
			json_num(stdout, r->round_min);
			json_field("round_max_us", r->round_max);
			printf(", \"round_us\": [");
			for (int k = 0; k < b->o.rounds; k++) {
				printf(k ? ", " : "");
				json_num(stdout, r->round_t[k]);
			}
			printf("]");
		}
		printf(", \"errors\": %lld}", r->errors);
	}
	printf("\n ]");
	print_vs_auto_json(b);
	printf("}\n");
}

static void fmt_opt(char *buf, size_t n, double v, const char *fmt)
{
	if (v < 0 || !isfinite(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, fmt, v);
}

/* ---- auto against the measured best ---- */

/*
 * What a record's comparison uses: on the device the virtual makespan of a
 * call (the fabric's timing model, what the cost model predicts), unless
 * auto was told to minimise the wall clock (TC_AUTO_CLOCK=wall); elsewhere
 * the median over the calls of the slowest rank's wall time.
 */
static int wall_clock_asked(void)
{
	const char *v = getenv("TC_AUTO_CLOCK");

	return v && !strcmp(v, "wall");
}

static double measured(const struct record *r)
{
	if (r->makespan >= 0 && !wall_clock_asked())
		return r->makespan;
	if (r->tmed < 0 && r->wall > 0) /* dev: the median call, from its start to the last rank's end */
		return r->wall;
	return r->tmed >= 0 ? r->tmed : r->tmax;
}

struct vs_auto {
	size_t size;
	const struct record *autor, *pick, *best, *model_best;
	double ratio; /* measured auto / measured best */
	const struct record *paired_vs; /* -r: the algorithm auto lost to most, round by round */
	double paired;			/* the median over rounds of auto's time / its (0: one round) */
};

/*
 * With rounds: the median over the rounds both ran of a's time over b's in
 * the same round (each round runs every algorithm of a size back to back,
 * so a slow spell of the host weighs on both), or 0.
 */
static double paired_ratio(const struct record *a, const struct record *b, int R)
{
	double v[MAX_ROUNDS];
	int n = 0;

	for (int k = 0; k < R && R > 1; k++)
		if (a->round_t[k] > 0 && b->round_t[k] > 0)
			v[n++] = a->round_t[k] / b->round_t[k];
	return n ? median(v, n) : 0;
}

/*
 * Per size where auto and at least one other algorithm ran: auto's record,
 * the forced run of the algorithm auto picked, the measured best and the
 * cost model's best of the forced runs. A forced algorithm that did not run
 * (the shape refused it) is no candidate.
 */
static int vs_auto(const struct bench *b, struct vs_auto *out, int max)
{
	int n = 0;

	for (int i = 0; i < b->nrecs && n < max; i++) {
		const struct record *a = &b->recs[i];
		struct vs_auto v = { .size = a->size, .autor = a };

		if (strcmp(a->algo, "auto") || !a->supported)
			continue;
		for (int j = 0; j < b->nrecs; j++) {
			const struct record *r = &b->recs[j];
			double pr;

			if (r->size != a->size || !strcmp(r->algo, "auto") || !r->supported || strcmp(r->ran, r->algo))
				continue;
			if (!strcmp(r->algo, a->ran))
				v.pick = r;
			if (!v.best || measured(r) < measured(v.best))
				v.best = r;
			if (r->model_us >= 0 && (!v.model_best || r->model_us < v.model_best->model_us))
				v.model_best = r;
			pr = paired_ratio(a, r, b->o.rounds);
			if (pr > v.paired) {
				v.paired = pr;
				v.paired_vs = r;
			}
		}
		if (!v.best)
			continue;
		v.ratio = measured(v.best) > 0 ? measured(a) / measured(v.best) : 0;
		out[n++] = v;
	}
	return n;
}

static const char *metric_name(const struct bench *b)
{
	return b->ctl_fd >= 0 && !wall_clock_asked() ? "makespan" : "wall";
}

static void print_vs_auto_json(const struct bench *b)
{
	struct vs_auto v[64];
	int n = vs_auto(b, v, 64);

	printf(",\n \"metric\": \"%s\",\n \"auto_vs_best\": [", metric_name(b));
	for (int i = 0; i < n; i++) {
		printf("%s\n  {\"size\": %zu, \"pick\": ", i ? "," : "", v[i].size);
		json_str(stdout, v[i].autor->ran);
		json_field("auto_us", measured(v[i].autor));
		json_field("auto_model_us", v[i].autor->model_us);
		json_field("pick_us", v[i].pick ? measured(v[i].pick) : -1);
		printf(", \"best\": ");
		json_str(stdout, v[i].best->algo);
		json_field("best_us", measured(v[i].best));
		json_field("best_model_us", v[i].best->model_us);
		printf(", \"model_best\": ");
		json_str(stdout, v[i].model_best ? v[i].model_best->algo : "");
		json_field("ratio", v[i].ratio);
		if (v[i].paired_vs) {
			json_field("paired", v[i].paired);
			printf(", \"paired_vs\": ");
			json_str(stdout, v[i].paired_vs->algo);
		}
		printf("}");
	}
	printf("\n ]");
}

/* How far a record's rounds spread: its largest round over its least (1 for one round). */
static double spread(const struct record *r)
{
	return r->rounds > 1 && r->round_min > 0 ? r->round_max / r->round_min : 1;
}

/* With several rounds: how much the same schedule's time varied from round to round. */
static void print_spread(const struct bench *b)
{
	double v[b->nrecs > 0 ? b->nrecs : 1];
	const struct record *worst = NULL;
	int n = 0;

	for (int i = 0; i < b->nrecs; i++)
		if (b->recs[i].supported && b->recs[i].rounds > 1) {
			v[n++] = spread(&b->recs[i]);
			if (!worst || spread(&b->recs[i]) > spread(worst))
				worst = &b->recs[i];
		}
	if (!n)
		return;
	printf("# the same (algorithm, size) across rounds, largest round / least: median %.2f, largest %.2f (%s at %zu);\n"
	       "# the times above are each one's median round (%d rounds)\n",
	       median(v, n), spread(worst), worst->algo, worst->size, b->o.rounds);
}

static void print_vs_auto_table(const struct bench *b)
{
	struct vs_auto v[64];
	int n = vs_auto(b, v, 64), R = b->o.rounds > 1;
	char pk[32];

	if (!n)
		return;
	printf("# auto against the measured best (measured = %s%s); model = the library's cost model\n",
	       metric_name(b), b->ctl_fd >= 0 && !wall_clock_asked() ? " of one call, the fabric's timing model"
			       : b->ctl_fd >= 0 ? ": the median call's wall time to its last rank (TC_AUTO_CLOCK=wall)"
						: ": median over the calls of the slowest rank's time");
	printf("%10s %-14s %12s %12s %12s %-14s %12s %12s %-14s %9s", "size", "auto_pick", "auto_us", "model_us",
	       "pick_us", "best", "best_us", "model_us", "model_best", "auto/best");
	printf(R ? " %9s %9s %9s %7s %-14s\n" : "\n", "pick/best", "auto_sprd", "best_sprd", "paired", "paired_vs");
	for (int i = 0; i < n; i++) {
		fmt_opt(pk, sizeof(pk), v[i].pick ? measured(v[i].pick) : -1, "%.3f");
		printf("%10zu %-14s %12.3f %12.3f %12s %-14s %12.3f %12.3f %-14s %9.3f", v[i].size, v[i].autor->ran,
		       measured(v[i].autor), v[i].autor->model_us, pk, v[i].best->algo, measured(v[i].best),
		       v[i].best->model_us, v[i].model_best ? v[i].model_best->algo : "-", v[i].ratio);
		if (R)
			printf(" %9.3f %9.2f %9.2f %7.3f %-14s", v[i].pick ? measured(v[i].pick) / measured(v[i].best) : -1,
			       spread(v[i].autor), spread(v[i].best), v[i].paired,
			       v[i].paired_vs ? v[i].paired_vs->algo : "-");
		printf("\n");
	}
	if (R) {
		print_spread(b);
		printf("# paired: the median over the rounds of auto's time over an algorithm's in the same round,\n"
		       "# for the algorithm where that is largest (paired_vs): how much faster it ran, round by round\n");
	}
}

static void print_table(const struct bench *b, const char *transport, int csv)
{
	const struct opts *o = &b->o;
	const int *dims = b->dims, nd = b->ndims, P = b->P;
	const unsigned int wrap = b->wrap;

	if (csv) {
		printf("coll,algo,size,bytes,time_us,time_min_us,time_max_us,algbw_GBps,busbw_GBps,steps,"
		       "transmission_blocks,predicted_us,ratio,makespan_us,errors,supported,why\n");
		for (int i = 0; i < b->nrecs; i++) {
			const struct record *r = &b->recs[i];
			char pr[32], ra[32], ms[32];

			fmt_opt(pr, sizeof(pr), r->predicted, "%.3f");
			fmt_opt(ra, sizeof(ra), r->predicted > 0 ? r->tavg / r->predicted : -1, "%.3f");
			fmt_opt(ms, sizeof(ms), r->makespan, "%.3f");
			if (!r->supported) {
				printf("%s,%s,%zu,,,,,,,,,,,,%lld,0,\"%s\"\n", coll_names[o->coll], r->algo, r->size,
				       r->errors, r->why);
				continue;
			}
			char st[16] = "", tx[32] = "";

			if (r->predicted >= 0) {
				snprintf(st, sizeof(st), "%u", r->steps);
				snprintf(tx, sizeof(tx), "%g", r->tx_blocks);
			}
			printf("%s,%s,%zu,%.0f,%.3f,%.3f,%.3f,%.4f,%.4f,%s,%s,%s,%s,%s,%lld,1,\n", coll_names[o->coll],
			       r->algo, r->size, r->bytes, r->tavg, r->tmin, r->tmax, r->algbw, r->busbw, st, tx,
			       pr[0] == '-' ? "" : pr, ra[0] == '-' ? "" : ra, ms[0] == '-' ? "" : ms,
			       r->errors);
		}
		return;
	}
	printf("# torus-bench: %s on ", coll_names[o->coll]);
	for (int d = 0; d < nd; d++)
		printf("%s%d", d ? "x" : "", dims[d]);
	printf(" (%d nodes, %s, %s, transport %s), %d warmup, %d timed iterations\n", P,
	       wrap == (1u << nd) - 1 ? "torus" : wrap ? "partly wrapping" : "mesh",
	       b->one_port ? "one-port" : "all-port", transport, o->warmup, o->iters);
	printf("# times in us per call (avg/min/max over ranks); bandwidths in GB/s; predicted =\n"
	       "# steps*ts + transmission_blocks*size*tw with ts %g ns, tw %g ps/B\n", o->ts_ns, o->tw_ps);
	printf("%-14s %10s %12s %12s %12s %12s %9s %9s %12s %8s %12s %12s %7s\n", "algo", "size", "bytes",
	       "time_us", "min_us", "max_us", "algbw", "busbw", "predicted_us", "ratio", "makespan_us", "model_us",
	       "errors");
	for (int i = 0; i < b->nrecs; i++) {
		const struct record *r = &b->recs[i];
		char pr[32], ra[32], ms[32], mo[32];

		if (!r->supported) {
			printf("%-14s %10zu  not supported on this shape (ran %s instead: %s)\n", r->algo, r->size,
			       r->ran, r->why);
			continue;
		}
		fmt_opt(pr, sizeof(pr), r->predicted, "%.3f");
		fmt_opt(ra, sizeof(ra), r->predicted > 0 ? r->tavg / r->predicted : -1, "%.3f");
		fmt_opt(ms, sizeof(ms), r->makespan, "%.3f");
		fmt_opt(mo, sizeof(mo), r->model_us, "%.3f");
		printf("%-14s %10zu %12.0f %12.3f %12.3f %12.3f %9.4f %9.4f %12s %8s %12s %12s %7lld\n", r->algo,
		       r->size, r->bytes, r->tavg, r->tmin, r->tmax, r->algbw, r->busbw, pr, ra, ms, mo, r->errors);
	}
	print_vs_auto_table(b);
}

static int plot(const struct bench *b, const char *file)
{
	const char *ext = strrchr(file, '.');
	char data[] = "/tmp/torus-bench-XXXXXX";
	int fd, st;
	FILE *f, *g;

	if (!ext || (strcmp(ext, ".png") && strcmp(ext, ".svg")))
		return -EINVAL;
	fd = mkstemp(data);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(data);
		return -errno;
	}
	/* one gnuplot data block per algorithm, separated by two blank lines */
	int nblocks = 0;
	char names[MAX_ALGOS][32];
	for (int i = 0; i < b->nrecs; i++) {
		const struct record *r = &b->recs[i];

		if (!r->supported)
			continue;
		if (!nblocks || strcmp(names[nblocks - 1], r->algo)) {
			if (nblocks == MAX_ALGOS)
				break;
			if (nblocks)
				fprintf(f, "\n\n");
			snprintf(names[nblocks++], sizeof(names[0]), "%s", r->algo);
		}
		fprintf(f, "%zu %.6g %.6g\n", r->size ? r->size : 1, r->tavg, r->busbw);
	}
	fclose(f);
	if (!nblocks) {
		unlink(data);
		return -ENODATA;
	}
	g = popen("gnuplot", "w");
	if (!g) {
		unlink(data);
		return -errno;
	}
	if (!strcmp(ext, ".png"))
		fprintf(g, "set terminal png size 1200,500\n");
	else
		fprintf(g, "set terminal svg size 1200,500\n");
	fprintf(g, "set output '%s'\nset multiplot layout 1,2 title '%s'\nset logscale x 2\nset key left top\n"
		   "set xlabel 'size (bytes)'\nset grid\n",
		file, coll_names[b->o.coll]);
	fprintf(g, "set logscale y\nset ylabel 'time (us)'\nplot ");
	for (int i = 0; i < nblocks; i++)
		fprintf(g, "%s'%s' index %d using 1:2 with linespoints title '%s'", i ? ", " : "", data, i, names[i]);
	fprintf(g, "\nunset logscale y\nset ylabel 'busbw (GB/s)'\nplot ");
	for (int i = 0; i < nblocks; i++)
		fprintf(g, "%s'%s' index %d using 1:3 with linespoints title '%s'", i ? ", " : "", data, i, names[i]);
	fprintf(g, "\nunset multiplot\n");
	st = pclose(g);
	unlink(data);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -EIO;
	return 0;
}

/* ---- main ---- */

static void parse(int argc, char **argv, struct opts *o)
{
	enum { O_TRANSPORT = 256, O_MESH, O_ONE_PORT, O_TS, O_TW, O_CSV, O_PLOT };
	static const struct option lo[] = {
		{ "coll", required_argument, 0, 'c' },	   { "algo", required_argument, 0, 'a' },
		{ "transport", required_argument, 0, O_TRANSPORT },
		{ "dims", required_argument, 0, 'd' },	   { "mesh", no_argument, 0, O_MESH },
		{ "one-port", no_argument, 0, O_ONE_PORT }, { "minbytes", required_argument, 0, 'b' },
		{ "maxbytes", required_argument, 0, 'e' }, { "stepfactor", required_argument, 0, 'f' },
		{ "warmup", required_argument, 0, 'w' },   { "iters", required_argument, 0, 'n' },
		{ "rounds", required_argument, 0, 'r' },
		{ "ts-ns", required_argument, 0, O_TS },   { "tw-ps", required_argument, 0, O_TW },
		{ "json", no_argument, 0, 'j' },	   { "csv", no_argument, 0, O_CSV },
		{ "plot", required_argument, 0, O_PLOT },  { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c, i;
	char *end;

	memset(o, 0, sizeof(*o));
	o->algo = "auto";
	o->minb = 64;
	o->maxb = 1 << 20;
	o->factor = 2;
	o->warmup = 1;
	o->iters = 10;
	o->rounds = 1;
	o->ts_ns = 1000;
	o->tw_ps = 100;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:a:d:b:e:f:w:n:r:jh", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			for (i = 0; i < C_NUM && strcmp(optarg, coll_names[i]); i++)
				;
			if (i == C_NUM)
				die(2, "-c %s: unknown collective (alltoall, allgather, allreduce, bcast, barrier, "
				       "alltoallv, allgatherv, reduce_scatter)",
				    optarg);
			o->coll = i;
			break;
		case 'a':
			o->algo = optarg;
			break;
		case O_TRANSPORT:
			if (strcmp(optarg, "dev") && strcmp(optarg, "sim") && strcmp(optarg, "verbs"))
				die(2, "--transport %s: expected dev, sim or verbs", optarg);
			o->transport = optarg;
			break;
		case 'd':
			parse_dims_opt(optarg, o);
			break;
		case O_MESH:
			o->mesh = 1;
			break;
		case O_ONE_PORT:
			o->one_port = 1;
			break;
		case 'b':
			o->minb = parse_size("-b", optarg);
			break;
		case 'e':
			o->maxb = parse_size("-e", optarg);
			break;
		case 'f':
			errno = 0;
			o->factor = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->factor > 1) || o->factor > 1024)
				die(2, "-f %s: expected a factor > 1", optarg);
			break;
		case 'w':
			o->warmup = parse_int("-w", optarg, 0);
			break;
		case 'n':
			o->iters = parse_int("-n", optarg, 1);
			break;
		case 'r':
			o->rounds = parse_int("-r", optarg, 1);
			if (o->rounds > MAX_ROUNDS)
				die(2, "-r %s: at most %d rounds", optarg, MAX_ROUNDS);
			break;
		case O_TS:
			o->ts_ns = parse_int("--ts-ns", optarg, 0);
			o->have_ts = 1;
			break;
		case O_TW:
			o->tw_ps = parse_int("--tw-ps", optarg, 0);
			o->have_tw = 1;
			break;
		case 'j':
			o->json = 1;
			break;
		case O_CSV:
			o->csv = 1;
			break;
		case O_PLOT:
			o->plot = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case ':':
			die(2, "%s needs a value (see --help)", argv[optind - 1]);
		default:
			die(2, "unknown option %s (see --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		die(2, "unexpected argument %s (see --help)", argv[optind]);
	if (o->json && o->csv)
		die(2, "--json and --csv exclude each other");
	if (!o->minb && o->coll != C_BARRIER)
		die(2, "-b 0: sizes start at 1 byte");
	if (o->minb > o->maxb)
		die(2, "-b %zu is larger than -e %zu", o->minb, o->maxb);
	if (o->plot) {
		const char *ext = strrchr(o->plot, '.');

		if (!ext || (strcmp(ext, ".png") && strcmp(ext, ".svg")))
			die(2, "--plot %s: the file name must end in .png or .svg", o->plot);
	}
	if (strcmp(o->algo, "auto") && o->coll != C_ALLTOALL && o->coll != C_ALLGATHER)
		die(2, "-a %s: only alltoall and allgather have a choice of algorithm", o->algo);
	if ((o->coll == C_ALLREDUCE || o->coll == C_REDUCE_SCATTER) && o->minb < 4)
		die(2, "-b %zu: %s sums int32 elements, sizes start at 4", o->minb, coll_names[o->coll]);
}

int main(int argc, char **argv)
{
	struct bench b;
	const char *transport;
	tc_comm_t *comm = NULL;
	tc_sim_t *sim = NULL;
	int ret, rank = 0, any_unsupported = 0;
	long long errors = 0;

	memset(&b, 0, sizeof(b));
	pthread_mutex_init(&b.lock, NULL);
	b.ctl_fd = -1;
	parse(argc, argv, &b.o);
	transport = b.o.transport;
	if (!transport) {
		transport = getenv("TC_TRANSPORT");
		if (!transport || !*transport)
			transport = "dev";
		if (strcmp(transport, "dev") && strcmp(transport, "sim") && strcmp(transport, "verbs"))
			die(2, "TC_TRANSPORT=%s: expected dev, sim or verbs", transport);
	}
	if (!strcmp(transport, "sim") && !b.o.ndims) {
		/* torusrun --transport sim --dims D passes the shape on */
		const char *v = getenv("TC_SIM_DIMS");

		if (!v || !*v)
			die(2, "--transport sim needs --dims (e.g. --dims 4x4)");
		parse_dims_opt(v, &b.o);
		b.o.mesh |= getenv("TC_SIM_MESH") != NULL;
		b.o.one_port |= getenv("TC_SIM_ONE_PORT") != NULL;
	}
	if (strcmp(transport, "sim") && (b.o.mesh || b.o.one_port))
		die(2, "--mesh and --one-port shape the simulator only; on %s the fabric has its shape", transport);

	if (b.o.coll == C_ALLTOALL || b.o.coll == C_ALLGATHER) {
		if (!strcmp(b.o.algo, "all")) {
			if (list_algos(&b))
				die(4, "-a all: could not list the algorithms (torus-sched --list, next to torus-bench "
				       "or on PATH)");
		} else {
			/* one name or a comma-separated list, run in that order */
			const char *p = b.o.algo, *end;

			for (b.nalgos = 0; *p; p = *end ? end + 1 : end) {
				end = p + strcspn(p, ",");
				if (end == p || end - p >= (int)sizeof(b.algos[0]))
					die(2, "-a %s: an empty or too long algorithm name", b.o.algo);
				if (b.nalgos == MAX_ALGOS)
					die(2, "-a %s: at most %d algorithms", b.o.algo, MAX_ALGOS);
				snprintf(b.algos[b.nalgos++], sizeof(b.algos[0]), "%.*s", (int)(end - p), p);
				if (*end && !end[1])
					die(2, "-a %s: an empty or too long algorithm name", b.o.algo);
			}
		}
	}
	b.progress = isatty(2);

	if (!strcmp(transport, "sim")) {
		struct tc_sim_attr sa = { .size = sizeof(sa) };

		sa.ndims = b.o.ndims;
		memcpy(sa.dims, b.o.dims, sizeof(sa.dims));
		sa.wrap_mask = b.o.mesh ? 0 : (1u << b.o.ndims) - 1;
		sa.port_model = b.o.one_port ? TC_ONE_PORT : TC_ALL_PORT;
		ret = tc_sim_create(&sa, &sim);
		if (ret)
			die(4, "simulator: %s: %s", tc_strerror(ret), tc_last_error());
		ret = tc_sim_launch(sim, bench_rank, &b);
	} else {
		if (setenv("TC_TRANSPORT", transport, 1))
			die(4, "setenv: %s", strerror(errno));
		ret = tc_comm_create(NULL, &comm);
		if (ret)
			die(4, "%s transport: %s: %s", transport, tc_strerror(ret), tc_last_error());
		rank = tc_comm_rank(comm);
		if (b.o.ndims) {
			int dims[TC_MAX_DIMS], nd = tc_comm_ndims(comm), same = nd == b.o.ndims;

			tc_comm_dims(comm, dims, NULL);
			for (int d = 0; same && d < nd; d++)
				same = dims[d] == (int)b.o.dims[d];
			if (!same)
				die(2, "--dims does not match the fabric's shape (%d dimensions, first %d)", nd, dims[0]);
		}
		if (!strcmp(transport, "dev")) {
			const char *f = getenv("TC_FABRIC");
			struct torus_fabric_query q = { .size = sizeof(q) };

			b.fabric_id = f && *f ? (unsigned int)atoi(f) : 0;
			b.ctl_fd = open("/dev/" TORUS_CTL_NAME, O_RDWR | O_CLOEXEC);
			q.fabric_id = b.fabric_id;
			if (b.ctl_fd >= 0 && !ioctl(b.ctl_fd, TORUS_IOC_FABRIC_QUERY, &q)) {
				if (!b.o.have_ts)
					b.o.ts_ns = q.ts_ns;
				if (!b.o.have_tw)
					b.o.tw_ps = q.tw_ps;
			} else if (b.ctl_fd >= 0) {
				close(b.ctl_fd);
				b.ctl_fd = -1;
			}
		}
		ret = bench_rank(comm, &b);
	}
	if (b.progress && rank == 0)
		fprintf(stderr, "\r%60s\r", "");
	if (b.fail || ret) {
		fprintf(stderr, PROG ": %s\n", b.failmsg[0] ? b.failmsg : tc_strerror(ret));
		if (sim)
			tc_sim_destroy(sim);
		else
			tc_comm_destroy(comm);
		return b.bad_algo ? 2 : 4;
	}
	for (int i = 0; i < b.nrecs; i++) {
		errors += b.recs[i].errors;
		any_unsupported |= !b.recs[i].supported;
	}
	if (rank == 0) {
		if (b.o.json)
			print_json(&b, transport);
		else
			print_table(&b, transport, b.o.csv);
		fflush(stdout);
		if (b.o.plot && (ret = plot(&b, b.o.plot))) {
			fprintf(stderr, PROG ": --plot %s: %s (is gnuplot installed?)\n", b.o.plot, tc_strerror(ret));
			ret = 4;
		}
	}
	if (sim)
		tc_sim_destroy(sim);
	else
		tc_comm_destroy(comm);
	if (errors) {
		fprintf(stderr, PROG ": %lld wrong bytes\n", errors);
		return 1;
	}
	if (ret)
		return ret;
	if (any_unsupported && b.nalgos == 1 && strcmp(b.o.algo, "auto"))
		return 3;
	return 0;
}
