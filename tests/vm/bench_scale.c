// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_scale: one rank of the runs at scale (tests/vm/scale-run starts it
 * under torusrun on every node of a 16x16 or 32x32 fabric). It creates its
 * communicator from the environment, runs one alltoall and one allgather of
 * M-byte blocks (the algorithms TC_ALLTOALL_ALGO / TC_ALLGATHER_ALGO force,
 * or the library's choice), or the calls SCALE_ALLTOALL and SCALE_ALLGATHER
 * list (algorithm names, comma-separated, "auto" for the library's choice,
 * set by tc_comm_set_algo; e.g. SCALE_ALLTOALL=at2,auto: two alltoalls, all
 * alltoalls before the allgathers, every call after the first after a
 * barrier), checks every byte of every call against the pattern every
 * sender wrote, prints one line a call:
 *
 *   scale-call rank=R coll=alltoall|allgather algo=NAME ran=ALGO ms=.. cpu_ms=.. bad=B
 *
 * (ran: the algorithm that ran, the library's choice for auto; a named
 * algorithm that did not run fails the rank) and then one line:
 *
 *   scale rank=R nodes=P m=M create_ms=.. wait_ms=.. first_ms=.. ag_ms=.. launch_s=..
 *         start_s=.. cpu_start_ms=.. cpu_create_ms=.. cpu_first_ms=.. cpu_ag_ms=..
 *         part_ms=.. cpu_part_ms=..
 *         rss_kib=.. whole=W fallbacks=F generated=G bad=B
 *
 * first_ms: from main() to the end of the first alltoall (communicator,
 * algorithm choice, this node's part and its check, plan, the alltoall),
 * less wait_ms (SCALE_RENDEZVOUS below);
 * launch_s: from SCALE_T0 (the launcher's clock, seconds since the epoch)
 * to the same point; start_s: from SCALE_T0 to main() (the launch: torusrun
 * starting the ranks one after another, exec, the dynamic loader); the
 * cpu_*_ms: this process's CPU time (user + system, CLOCK_PROCESS_CPUTIME_ID)
 * before main() (exec, the dynamic loader, the libraries' constructors), in
 * tc_comm_create, in the first alltoall (the algorithm's choice, this
 * node's part, its check and plan, posting; the wait for the peers sleeps in
 * the module) and in the allgather, so that what a rank computes is told
 * apart from the time it waits for the emulated CPUs or its peers (the wall
 * times above include both; a list's first calls); rss_kib: the process's peak RSS at the end; whole:
 * whole schedules the process started to build; fallbacks: parts cut from a
 * whole schedule; generated: parts generated alone. The figures come from
 * the library's own counters (linked statically for them), not through a
 * collective. A rank whose part came from a whole schedule (whole or
 * fallbacks above 0) fails when SCALE_NO_WHOLE=1.
 *
 * SCALE_RENDEZVOUS=1: after creating its communicator, wait until every
 * node of the fabric is open (TORUS_IOC_FABRIC_QUERY's open_nodes, polled
 * every 100 ms, or every P/2 ms above 200 ranks), so that the collectives'
 * step timeout does not have to cover the launch of hundreds of processes;
 * wait_ms says how long.
 *
 * SCALE_PREBUILD=1: before that wait, build this node's part of every
 * algorithm the calls will run (forced, named, or the library's choice for
 * M, which prices its candidates then; tc_part_get, the same cache entry
 * the collective then finds), so that the first step's
 * timeout need not cover the other ranks' part builds, which under TCG all
 * share two emulated CPUs (at 1024 ranks, minutes) while on a machine each
 * runs on its own; part_ms and cpu_part_ms say what it took, and first_ms
 * still includes it (it is not part of wait_ms).
 *
 * SCALE_KILL=K: after both collectives and a barrier, rank K kills itself
 * (SIGKILL) and every other rank calls one more alltoall, which must fail:
 * each prints "scale-fault rank=R ms=.. end_s=.. err=..: <error>" (the time
 * the call took, and when it ended in seconds since SCALE_T0) and exits 3;
 * one whose call succeeds exits 1. Rank K prints "scale-kill rank=K at_s=.."
 * (seconds since SCALE_T0) just before it dies.
 *
 * Exit status: 0, 1 (a wrong byte, a failed call, a whole schedule built
 * under SCALE_NO_WHOLE=1), 3 (SCALE_KILL: the call failed as it should).
 *
 * bench_scale --sim DIMS [M]: the same calls on the in-process
 * simulator (every node a thread of this process, tc_sim_launch), every
 * byte of every node checked; prints the totals, the wall time of the
 * launch, the process's peak RSS and the same counters, on one line.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <time.h>

#include "toruscoll.h"
#include <uapi/torus.h>
#include "core/sched.h"
#include "select/select.h"
#include "algorithms/algos.h"
#include "runtime/comm.h"

static double mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double real_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The byte of block (src -> dst) at offset i in call c: every pair and offset differ. */
static uint8_t pat(int src, int dst, size_t i, int c)
{
	uint32_t x = (uint32_t)src * 2654435761u ^ (uint32_t)dst * 40503u ^ (uint32_t)i * 97u ^ (uint32_t)c * 131u;

	return (uint8_t)(x ^ x >> 8 ^ x >> 16);
}

static int fail(const char *what, int ret)
{
	fprintf(stderr, "scale: %s: %s: %s\n", what, tc_strerror(ret), tc_last_error());
	return 1;
}

/* What one rank measured. */
struct rank_out {
	double create_ms, wait_ms, first_ms, ag_ms, part_ms, cpu_part_ms;
	double cpu_create_ms, cpu_first_ms, cpu_ag_ms;
	size_t bad, checked;
};

/* Both collectives on comm, every byte checked; 0 or the failing call's error. */
/* Wait until all nodes of fabric TC_FABRIC are open; 0 or -errno. */
static int rendezvous(int P)
{
	const char *f = getenv("TC_FABRIC");
	int ctl = open("/dev/torus-ctl", O_RDWR | O_CLOEXEC), ret = 0;

	if (ctl < 0 || !f)
		return ctl < 0 ? -errno : -EINVAL;
	for (;;) {
		struct torus_fabric_query q = { .size = sizeof(q), .fabric_id = (__u32)atoi(f) };

		if (ioctl(ctl, TORUS_IOC_FABRIC_QUERY, &q)) {
			ret = -errno;
			break;
		}
		if ((int)q.open_nodes >= P)
			break;
		usleep(P > 200 ? 1000u * (unsigned int)P / 2 : 100000u); /* fewer wake-ups with more ranks */
	}
	close(ctl);
	return ret;
}

static int quiet_calls; /* --sim: no scale-call line a node and call */

/* SCALE_ALLTOALL / SCALE_ALLGATHER: the calls of one collective, in order. */
#define MAX_CALLS 8
struct call_list {
	int n;
	char name[MAX_CALLS][32]; /* "" : the communicator's algorithm (TC_*_ALGO or auto) */
};

/* Parse a comma-separated list of algorithm names ("auto" for the library's choice). */
static int calls_parse(const char *env, struct call_list *l)
{
	const char *s = getenv(env);

	l->n = 0;
	if (!s || !*s) {
		l->name[l->n++][0] = 0;
		return 0;
	}
	while (*s) {
		size_t len = strcspn(s, ",");

		if (l->n == MAX_CALLS || !len || len >= sizeof(l->name[0])) {
			fprintf(stderr, "scale: %s=%s: expected up to %d algorithm names, comma-separated\n", env,
				getenv(env), MAX_CALLS);
			return -EINVAL;
		}
		memcpy(l->name[l->n], s, len);
		l->name[l->n++][len] = 0;
		s += len + (s[len] == ',');
	}
	return 0;
}

/*
 * One call of coll with every byte checked against pat(.., c); the calls
 * after a run's first start after a barrier, so that each one's time is its
 * own (t0 0: after a barrier; else the time the call is measured from).
 * Prints "scale-call rank=R coll=C algo=NAME ran=ALGO ms=.. cpu_ms=..
 * bad=B": ms from the call's start (the first: from main(), less the wait
 * for every node) to its end. 0 or the failing call's error.
 */
static int one_call(tc_comm_t *comm, enum tc_coll_id coll, const char *name, int c, size_t m, uint8_t *send,
		    uint8_t *recv, double t0, double *ms, double *cpu, size_t *bad)
{
	int P = tc_comm_size(comm), me = tc_comm_rank(comm), ret;
	struct tc_coll_info info = { .size = sizeof(info) };
	const char *what = coll == TC_ALLTOALL ? "alltoall" : "allgather";
	size_t wrong = 0;
	double t;

	if (name[0]) {
		ret = tc_comm_set_algo(comm, coll, name);
		if (ret)
			return fail(name, ret);
	}
	if (!t0) {
		ret = tc_barrier(comm);
		if (ret)
			return fail("tc_barrier", ret);
		t0 = mono_ms();
	}
	for (int d = 0; d < P; d++)
		for (size_t i = 0; i < m; i++)
			send[(size_t)d * m + i] = coll == TC_ALLTOALL ? pat(me, d, i, c) : pat(me, 0, i, c);
	memset(recv, 0, (size_t)P * m);
	t = cpu_ms();
	ret = coll == TC_ALLTOALL ? tc_alltoall(comm, send, recv, m) : tc_allgather(comm, send, recv, m);
	if (ret) {
		fprintf(stderr, "scale: rank %d: %s (%s): %s: %s\n", me, what, name[0] ? name : "default",
			tc_strerror(ret), tc_last_error());
		return ret;
	}
	*cpu = cpu_ms() - t;
	*ms = mono_ms() - t0;
	for (int s = 0; s < P; s++)
		for (size_t i = 0; i < m; i++)
			wrong += recv[(size_t)s * m + i] !=
				 (coll == TC_ALLTOALL ? pat(s, me, i, c) : pat(s, 0, i, c));
	*bad += wrong;
	ret = tc_coll_last(comm, coll, &info);
	if (ret)
		return fail("tc_coll_last", ret);
	if (!quiet_calls)
		printf("scale-call rank=%d coll=%s algo=%s ran=%s ms=%.1f cpu_ms=%.1f bad=%zu\n", me, what,
		       name[0] ? name : "default", info.algo, *ms, *cpu, wrong);
	if (info.why[0]) {
		/* tc_comm_set_algo's algorithm did not run: the library's choice did */
		fprintf(stderr, "scale: rank %d: %s %s did not run: %s\n", me, what, name, info.why);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * Every call of SCALE_ALLTOALL, then of SCALE_ALLGATHER (default: one of
 * each with the communicator's algorithm); first_ms and cpu_first_ms are
 * the first alltoall's, ag_ms and cpu_ag_ms the first allgather's.
 */
static int run_colls(tc_comm_t *comm, size_t m, struct rank_out *o, double t_main)
{
	int P = tc_comm_size(comm), ret = 0, c = 0;
	uint8_t *send = malloc((size_t)P * m), *recv = malloc((size_t)P * m);
	struct call_list l[2];

	if (!send || !recv) {
		free(send);
		free(recv);
		return fail("buffers", -ENOMEM);
	}
	if (calls_parse("SCALE_ALLTOALL", &l[0]) || calls_parse("SCALE_ALLGATHER", &l[1])) {
		ret = -EINVAL;
		goto out;
	}
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < l[k].n; i++, c++) {
			/* the first call is timed from main(), less the wait for every node */
			double ms = 0, cpu = 0, t0 = c ? 0 : t_main + o->wait_ms;

			ret = one_call(comm, k ? TC_ALLGATHER : TC_ALLTOALL, l[k].name[i], c + 3, m, send, recv, t0,
				       &ms, &cpu, &o->bad);
			if (ret)
				goto out;
			if (!i && !k) {
				o->first_ms = ms;
				o->cpu_first_ms = cpu;
			} else if (!i) {
				o->ag_ms = ms;
				o->cpu_ag_ms = cpu;
			}
			o->checked += (size_t)P * m;
		}
out:
	free(send);
	free(recv);
	return ret;
}

struct sim_job {
	size_t m;
	pthread_mutex_t lock; /* protects the sums below */
	size_t bad, checked;
	double first_ms_max;
};

static int sim_rank(tc_comm_t *comm, void *arg)
{
	struct sim_job *j = arg;
	struct rank_out o = { 0 };
	int ret = run_colls(comm, j->m, &o, mono_ms());

	pthread_mutex_lock(&j->lock);
	j->bad += o.bad;
	j->checked += o.checked;
	if (o.first_ms > j->first_ms_max)
		j->first_ms_max = o.first_ms;
	pthread_mutex_unlock(&j->lock);
	return ret;
}

static int sim_main(const char *dims, size_t m)
{
	struct tc_sim_attr attr = { .size = sizeof(attr), .port_model = TC_ALL_PORT };
	struct call_list l[2];
	static struct sim_job job = { .lock = PTHREAD_MUTEX_INITIALIZER };
	size_t nodes = 1;
	double t0, t1;
	struct rusage ru;
	tc_sim_t *sim;
	char *end;
	int ret;

	for (const char *p = dims; attr.ndims < TC_MAX_DIMS; p = end + 1) {
		attr.dims[attr.ndims] = strtoul(p, &end, 10);
		nodes *= attr.dims[attr.ndims++];
		if (*end != 'x' && *end != ',')
			break;
	}
	if (*end || nodes < 2 || nodes > 4096) {
		fprintf(stderr, "scale: --sim %s: expected a shape like 64x64 of 2..4096 nodes\n", dims);
		return 2;
	}
	attr.wrap_mask = (1u << attr.ndims) - 1;
	job.m = m;
	quiet_calls = 1;
	t0 = mono_ms();
	ret = tc_sim_create(&attr, &sim);
	if (ret)
		return fail("tc_sim_create", ret);
	ret = tc_sim_launch(sim, sim_rank, &job);
	tc_sim_destroy(sim);
	t1 = mono_ms();
	getrusage(RUSAGE_SELF, &ru);
	printf("scale-sim dims=%s nodes=%zu m=%zu wall_s=%.1f first_ms_max=%.0f rss_kib=%ld whole=%lu fallbacks=%lu "
	       "generated=%lu checked=%zu bad=%zu ret=%d\n",
	       dims, nodes, m, (t1 - t0) / 1e3, job.first_ms_max, ru.ru_maxrss, __tc_sched_whole_builds(),
	       __tc_part_fallbacks(), __tc_part_generated(), job.checked, job.bad, ret);
	if (calls_parse("SCALE_ALLTOALL", &l[0]) || calls_parse("SCALE_ALLGATHER", &l[1]))
		return 2;
	return ret || job.bad || job.checked != (size_t)(l[0].n + l[1].n) * nodes * nodes * m ? 1 : 0;
}

/*
 * SCALE_PREBUILD: this node's part of every algorithm the calls will run
 * (a named one, the communicator's TC_*_ALGO, or the library's choice for
 * block size m, which prices its candidates here), cached; 0 or -errno.
 */
static int prebuild(tc_comm_t *comm, size_t m)
{
	for (int k = 0; k < 2; k++) {
		enum tc_coll_id coll = k ? TC_ALLGATHER : TC_ALLTOALL;
		struct call_list l;

		if (calls_parse(k ? "SCALE_ALLGATHER" : "SCALE_ALLTOALL", &l))
			return -EINVAL;
		for (int i = 0; i < l.n; i++) {
			const char *name = l.name[i], *why = NULL;
			const struct tc_algo *algo = NULL;
			struct tc_auto_choice choice;
			const struct tc_part *part;
			int ret;

			if (name[0] && strcmp(name, "auto")) {
				algo = tc_algo_find(coll, name);
				if (!algo) {
					fprintf(stderr, "scale: SCALE_PREBUILD: no algorithm %s\n", name);
					return -EINVAL;
				}
			} else if (!name[0]) {
				algo = comm->coll[coll].forced;
			}
			if (!algo) {
				ret = tc_auto_choose(coll, &comm->tp.shape, m, &comm->tp.cost, &choice);
				if (ret)
					return fail("SCALE_PREBUILD: the library's choice", ret);
				algo = choice.cand[choice.winner].algo;
			}
			ret = tc_part_get(coll, algo, &comm->tp.shape, comm->tp.rank, &part, &why);
			if (ret) {
				fprintf(stderr, "scale: building %s's part: %s\n", algo->name, why ? why : tc_strerror(ret));
				return ret;
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *t0s = getenv("SCALE_T0"), *kills = getenv("SCALE_KILL"), *nw = getenv("SCALE_NO_WHOLE");
	double cpu_start = cpu_ms(), t_main = mono_ms(), t_real = real_s(), launch;
	int kill_rank = kills ? atoi(kills) : -1;
	unsigned long whole, fallbacks, generated;
	struct rank_out o = { 0 };
	struct rusage ru;
	tc_comm_t *comm;
	size_t m;
	int ret, P, me;

	if (argc > 2 && !strcmp(argv[1], "--sim")) {
		m = argc > 3 ? strtoul(argv[3], NULL, 0) : 8;
		if (!m || m > 4096) {
			fprintf(stderr, "scale: block size %zu: expected 1..4096\n", m);
			return 2;
		}
		return sim_main(argv[2], m);
	}
	m = argc > 1 ? strtoul(argv[1], NULL, 0) : 8;
	if (!m || m > 4096) {
		fprintf(stderr, "scale: block size %zu: expected 1..4096\n", m);
		return 2;
	}
	o.cpu_create_ms = cpu_ms();
	ret = tc_comm_create(NULL, &comm);
	if (ret)
		return fail("tc_comm_create", ret);
	o.create_ms = mono_ms() - t_main;
	o.cpu_create_ms = cpu_ms() - o.cpu_create_ms;
	P = tc_comm_size(comm);
	me = tc_comm_rank(comm);
	if (getenv("SCALE_PREBUILD") && !strcmp(getenv("SCALE_PREBUILD"), "1")) {
		double t = mono_ms(), c = cpu_ms();

		if (prebuild(comm, m))
			return 1;
		o.part_ms = mono_ms() - t;
		o.cpu_part_ms = cpu_ms() - c;
	}
	if (getenv("SCALE_RENDEZVOUS") && !strcmp(getenv("SCALE_RENDEZVOUS"), "1")) {
		double t = mono_ms();

		ret = rendezvous(P);
		if (ret)
			return fail("waiting for every node to open", ret);
		o.wait_ms = mono_ms() - t;
	}
	if (run_colls(comm, m, &o, t_main))
		return 1;
	launch = t0s ? real_s() - strtod(t0s, NULL) - (mono_ms() - t_main - o.wait_ms - o.first_ms) / 1e3 : 0;
	whole = __tc_sched_whole_builds();
	fallbacks = __tc_part_fallbacks();
	generated = __tc_part_generated();
	getrusage(RUSAGE_SELF, &ru);
	printf("scale rank=%d nodes=%d m=%zu create_ms=%.1f wait_ms=%.1f first_ms=%.1f ag_ms=%.1f launch_s=%.3f "
	       "start_s=%.3f cpu_start_ms=%.1f cpu_create_ms=%.1f cpu_first_ms=%.1f cpu_ag_ms=%.1f "
	       "part_ms=%.1f cpu_part_ms=%.1f rss_kib=%ld whole=%lu fallbacks=%lu generated=%lu bad=%zu\n",
	       me, P, m, o.create_ms, o.wait_ms, o.first_ms, o.ag_ms, launch, t0s ? t_real - strtod(t0s, NULL) : 0,
	       cpu_start, o.cpu_create_ms, o.cpu_first_ms, o.cpu_ag_ms, o.part_ms, o.cpu_part_ms, ru.ru_maxrss, whole, fallbacks, generated, o.bad);
	fflush(stdout);
	if (o.bad) {
		fprintf(stderr, "scale: rank %d: %zu wrong bytes\n", me, o.bad);
		return 1;
	}
	if (nw && !strcmp(nw, "1") && (whole || fallbacks)) {
		fprintf(stderr, "scale: rank %d built %lu whole schedule(s) (%lu part(s) cut from one) on its way to "
				"its collectives\n", me, whole, fallbacks);
		return 1;
	}

	if (kill_rank >= 0) {
		uint8_t *send = calloc((size_t)P, m), *recv = calloc((size_t)P, m);
		double t;

		if (!send || !recv)
			return fail("buffers", -ENOMEM);
		ret = tc_barrier(comm);
		if (ret)
			return fail("tc_barrier", ret);
		if (me == kill_rank) {
			printf("scale-kill rank=%d at_s=%.3f\n", me, t0s ? real_s() - strtod(t0s, NULL) : 0);
			fflush(NULL);
			raise(SIGKILL);
		}
		for (int d = 0; d < P; d++)
			for (size_t i = 0; i < m; i++)
				send[(size_t)d * m + i] = pat(me, d, i, 2);
		t = mono_ms();
		ret = tc_alltoall(comm, send, recv, m);
		t = mono_ms() - t;
		if (!ret) {
			fprintf(stderr, "scale: rank %d: the alltoall after rank %d died succeeded\n", me, kill_rank);
			return 1;
		}
		printf("scale-fault rank=%d ms=%.0f end_s=%.3f err=%d: %s\n", me, t,
		       t0s ? real_s() - strtod(t0s, NULL) : 0, ret, tc_last_error());
		fflush(stdout);
		tc_comm_destroy(comm);
		return 3;
	}
	tc_comm_destroy(comm);
	return 0;
}
