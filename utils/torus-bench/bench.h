/* SPDX-License-Identifier: GPL-2.0 */
/*
 * torus-bench: what its files share. One file per job, as UCC's tools/perf:
 *
 *   main.c       the program: options, then the transport, then the output
 *   options.c    the command line (--help) and the list of algorithms to run
 *   comm.c       the communicator on each transport and each rank's setup
 *   fabric.c     dev: the fabric's timing and virtual makespan, read through
 *                the ioctl ABI (include/uapi/torus.h); the only file that
 *                speaks to the module rather than to the library
 *   benchmark.c  the sweep: sizes, rounds, one point's warm-up, timed calls
 *                and reduction over the ranks
 *   colls.c      the table of collectives and what their files share
 *   coll_*.c     one collective each: its buffers, data, check and call
 *   output.c     the table, CSV and JSON records
 *   vs_auto.c    the closing comparison of auto with the measured best
 *   plot.c       --plot: time and busbw against size with gnuplot
 *
 * Declarations below are grouped by the file that defines them.
 */
#ifndef TORUS_BENCH_H
#define TORUS_BENCH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <toruscoll.h>

#define PROG "torus-bench"
#include "../tool.h"

#define MAX_ALGOS 32
#define MAX_ROUNDS 99
#define MAX_SIZES 64

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
	/* the last timed call (tc_coll_info), summed over the ranks, or -1: ranks
	 * that ran it as one program on the device, and its device system calls */
	double offl_ranks, posts, waits, regs;
	double makespan;  /* virtual us per call (dev: the median of per-call makespans), or -1 */
	double wall;	  /* dev: median per-call wall time, first rank in to last out, or -1 */
	long long errors; /* wrong bytes (struct bench's bad) */
	int cell;	  /* its (algorithm, size): algorithm * MAX_SIZES + size's index */
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
	/* wrong bytes per (algorithm, size) cell (record.cell), every call of every round
	 * checked, counted by this process without the library: on sim every rank's
	 * (under lock), on dev and verbs this rank's */
	long long bad[MAX_ALGOS * MAX_SIZES];
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

/* One call's buffers: send and receive data, the v-variants' counts and displacements. */
struct bufs {
	uint8_t *send, *recv;
	size_t *sc, *sd, *rc, *rd;
	size_t sendbytes, recvbytes; /* allocated */
};

/* options.c */
void parse(int argc, char **argv, struct opts *o);
void parse_dims_opt(const char *s, struct opts *o);
void parse_algos(struct bench *b);

/* comm.c */
struct bench_run {
	tc_sim_t *sim;	 /* sim: the simulator, or NULL */
	tc_comm_t *comm; /* dev, verbs: this process's communicator, or NULL */
	int rank;	 /* this process's rank (sim: 0, the one that prints) */
};
int bench_rank(tc_comm_t *comm, void *arg);
int bench_start(struct bench *b, const char *transport, struct bench_run *r);
void bench_stop(struct bench_run *r);

/* fabric.c */
void fabric_open(struct bench *b);
int makespan(struct bench *b, double *us);
int fabric_span(struct bench *b, int reset, double *us);

/* benchmark.c */
double now_us(void);
double median(double *v, int n);
void set_fail(struct bench *b, int rank, int err, const char *what);
int sweep_sizes(const struct opts *o, size_t *sizes, int max);
int sweep(struct bench *b, tc_comm_t *comm, int use_ms, int nalgos);

/*
 * colls.c and coll_*.c: one collective. size is the sweep's size (see
 * --help); call identifies the call (call_id()), each with data of its own.
 */
struct coll_ops {
	const char *name;
	/* what a size is: the column's name in the table and CSV, and in words */
	const char *size_name, *size_is;
	/* the bytes to allocate for the send and the receive buffer */
	void (*bufsize)(size_t size, int P, size_t *send, size_t *recv);
	/* per-rank data bytes (for algbw) and busbw factor, nccl-tests style */
	void (*bw)(size_t size, int P, double *bytes, double *factor);
	/* the send data of call (the receive buffer is poisoned already) */
	void (*fill)(size_t size, int P, int rank, uint64_t call, struct bufs *B);
	/* the wrong bytes received in call, against a reference computed here */
	long long (*check)(size_t size, int P, int rank, uint64_t call, const struct bufs *B);
	int (*run)(tc_comm_t *comm, size_t size, struct bufs *B);
};

extern const struct coll_ops coll_alltoall, coll_allgather, coll_allreduce, coll_bcast, coll_barrier,
	coll_alltoallv, coll_allgatherv, coll_reduce_scatter;
extern const struct coll_ops *const colls[C_NUM];

#define POISON 0xee

int alloc_bufs(enum coll c, size_t size, int P, struct bufs *B);
void free_bufs(struct bufs *B);
void fill(enum coll c, size_t size, int P, int rank, uint64_t call, struct bufs *B);
long long check(enum coll c, size_t size, int P, int rank, uint64_t call, const struct bufs *B);
void bw_model(enum coll c, size_t size, int P, double *bytes, double *factor);
void vfill(size_t size, int P, int rank, uint64_t call, int alltoallv, struct bufs *B);
long long vcheck(int P, int rank, uint64_t call, int alltoallv, const struct bufs *B);
void int32_fill(int rank, uint64_t call, struct bufs *B);
long long int32_check(size_t size, int P, uint64_t call, size_t base, const struct bufs *B);

/*
 * The data: every 8-byte word a hash of (call, origin, destination, word),
 * so that a byte from another call, origin, destination or offset differs
 * from the one expected (but with probability 1/256), unlike a linear
 * pattern whose shifted copies alias. call is unique over the run
 * (call_id()): every call of every point has data of its own.
 */
static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30; /* splitmix64's finaliser */
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint64_t pat_word(uint64_t call, int src, int dst, size_t w)
{
	return mix64(mix64(mix64(call + 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(uint32_t)src << 32 | (uint32_t)dst)) ^ w);
}

/* the byte at offset i of the data src sends dst in call */
static inline uint8_t pat(uint64_t call, int src, int dst, size_t i)
{
	return (uint8_t)(pat_word(call, src, dst, i / 8) >> (8 * (i % 8)));
}

/* element e of rank's int32 vector in call */
static inline uint32_t epat(uint64_t call, int rank, size_t e)
{
	return (uint32_t)pat_word(call, rank, -1, e);
}

/* call it of the sweep's point-th point, unique over the run */
static inline uint64_t call_id(int point, int it)
{
	return (uint64_t)point << 32 | (uint32_t)it;
}

void pat_fill(uint8_t *p, size_t n, uint64_t call, int src, int dst);
long long pat_bad(const uint8_t *p, size_t n, uint64_t call, int src, int dst);

/* output.c */
void json_str(FILE *f, const char *s);
void json_field(const char *name, double v);
void fmt_opt(char *buf, size_t n, double v, const char *fmt);
void print_json(const struct bench *b, const char *transport);
void print_table(const struct bench *b, const char *transport);
void print_csv(const struct bench *b);
double ratio(const struct record *r);

/* vs_auto.c */
double measured(const struct record *r);
void print_vs_auto_json(const struct bench *b);
void print_vs_auto_table(const struct bench *b);
void print_vs_auto_csv(const struct bench *b);

/* plot.c */
int plot(const struct bench *b, const char *file, const char *transport);

#endif /* TORUS_BENCH_H */
