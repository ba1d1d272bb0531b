// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * prog_dev: alltoall and allgather run by the device as one program per
 * node (TORUS_FEAT_PROGRAM), one process per node (TAP; run in the guest by
 * tests/vm/run-guest, or `utils/torus-vm -- build/tests/vm/prog_dev`).
 *
 *   - Timing, for every alltoall and allgather algorithm of the library on
 *     4x4 and on 2x2x4 at 64 B (an algorithm without a schedule for the
 *     shape is skipped), and a few more sizes and rings: a call run step by
 *     step, then the same call as one program, the fabric's statistics reset
 *     before each (the nodes meet at a process-shared barrier between calls,
 *     no device traffic). For a schedule that claims contention-free steps,
 *     the stepped makespan must equal the step model's (tc_cost_eval) and
 *     the program's the program model's (tc_cost_prog: each message waits
 *     for the receives that brought its blocks; where links are shared
 *     between nodes, for its node's previous step too), never longer than
 *     stepped; both up to the module's rounding of each message's byte time
 *     down to whole ns. The direct baselines (pairwise, bruck, direct) put
 *     several messages on one link in one step by design: the fabric gives
 *     the link to whichever sender fires first, so neither mode's makespan
 *     is a function of the schedule and both are printed, not checked.
 *     Every byte of every call is checked.
 *   - Faults on a program: after a first call, node 0 never posts its
 *     second (it stays open): every other node's program fails with
 *     ETIMEDOUT within twice the timeout, naming the step, the transfer,
 *     the node and the port, and node 0's neighbours name node 0; a
 *     dropped message (TORUS_FAULT_DROP on one link) fails the programs
 *     waiting for it the same way and no other call returns a wrong byte.
 *   - Barrier and bcast (lib/colls/prog.c) on 4x4, 2x2x4 and an 8-ring: a
 *     first call step by step, a second as one program (1 post and 1 wait
 *     on every node, from tc_coll_last); no node leaves a barrier before a
 *     node entering 100 ms late has entered, every bcast byte right; the
 *     program's makespan equals the longest chain's price (sum over d of
 *     floor(n_d/2) one-hop messages, the barrier's of 8 bytes) and is never
 *     longer than stepped.
 * Without /dev/torus-ctl it skips (exit 4); on a module without programs
 * (or TC_DEV_OFFLOAD=off) both calls must run step by step and the fault
 * checks are skipped.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_fork.h"
#include "core/cost.h"
#include "select/select.h"
#include "../unit/tap.h"
#include "../unit/tbyte.h"

#define MAXP 64
#define FAULT_TIMEOUT_MS 3000

struct shared {
	pthread_barrier_t bar;
	__u32 fabric;
	int ctl_fd;
	enum tc_coll_id coll;
	char algo[32];
	size_t m;
	int fault; /* 0 none, 1 node 0 never posts, 2 a dropped message */
	unsigned long long span[2]; /* makespan of the stepped call, of the program */
	int off[2][MAXP];
	long bad[MAXP];
	int ret[MAXP];
	double ms[MAXP];
	char err[MAXP][200];
	int done; /* nodes through their second call (atomic) */
};

static struct shared *S;

static unsigned char pat(int call, int o, int d, size_t k)
{
	return tbyte((uint32_t)call, (uint32_t)o, (uint32_t)d, k);
}

static void fabric_reset_read(int reset, unsigned long long *span)
{
	struct torus_fabric_query q = { .size = sizeof(q), .fabric_id = S->fabric };

	q.flags = reset ? TORUS_QUERY_RESET_STATS : 0;
	if (!tv_ioctl(S->ctl_fd, TORUS_IOC_FABRIC_QUERY, &q) && span)
		*span = q.makespan_ns;
}

static int one_call(tc_comm_t *comm, int call, unsigned char *snd, unsigned char *rcv, long *bad)
{
	int me = tc_comm_rank(comm), P = tc_comm_size(comm), ret;
	size_t m = S->m, sb = S->coll == TC_ALLTOALL ? P * m : m;

	for (size_t k = 0; k < sb; k++)
		snd[k] = S->coll == TC_ALLTOALL ? pat(call, me, k / m, k % m) : pat(call, me, 0, k);
	memset(rcv, 0xee, P * m);
	ret = S->coll == TC_ALLTOALL ? tc_alltoall(comm, snd, rcv, m) : tc_allgather(comm, snd, rcv, m);
	if (ret)
		return ret;
	for (size_t k = 0; k < P * m; k++)
		*bad += rcv[k] != (S->coll == TC_ALLTOALL ? pat(call, k / m, me, k % m) : pat(call, k / m, 0, k % m));
	return 0;
}

static int node_fn(tc_comm_t *comm, void *arg)
{
	int me = tc_comm_rank(comm), P = tc_comm_size(comm), ret;
	struct tc_coll_info info = { .size = sizeof(info) };
	unsigned char *snd = malloc(P * S->m), *rcv = malloc(P * S->m);
	double t0;

	(void)arg;
	if (!snd || !rcv || tc_comm_set_algo(comm, S->coll, S->algo))
		return 1;
	/* 1: step by step (a communicator's first call) */
	pthread_barrier_wait(&S->bar);
	if (me == 0)
		fabric_reset_read(1, NULL);
	pthread_barrier_wait(&S->bar);
	ret = one_call(comm, 1, snd, rcv, &S->bad[me]);
	if (!ret && !tc_coll_last(comm, S->coll, &info))
		S->off[0][me] = info.offloaded;
	pthread_barrier_wait(&S->bar);
	if (me == 0) {
		fabric_reset_read(0, &S->span[0]);
		fabric_reset_read(1, NULL);
		if (S->fault == 2) {
			struct torus_link_fault lf = {
				.size = sizeof(lf), .flags = TORUS_FAULT_DROP, .fabric_id = S->fabric,
				.node_id = 0, .port = 0, .drop_count = 1,
			};

			tv_ioctl(S->ctl_fd, TORUS_IOC_LINK_FAULT, &lf);
		}
	}
	pthread_barrier_wait(&S->bar);
	if (ret) {
		S->ret[me] = ret;
		snprintf(S->err[me], sizeof(S->err[me]), "first call: %s", tc_last_error());
		goto out;
	}
	/* 2: one program (node 0 stays out of it with fault 1, open) */
	if (S->fault == 1 && me == 0) {
		while (__atomic_load_n(&S->done, __ATOMIC_SEQ_CST) < P - 1)
			usleep(10000);
		goto out;
	}
	t0 = tv_now();
	ret = one_call(comm, 2, snd, rcv, &S->bad[me]);
	S->ms[me] = (tv_now() - t0) * 1e3;
	S->ret[me] = ret;
	if (ret)
		snprintf(S->err[me], sizeof(S->err[me]), "%s", tc_last_error());
	else if (!tc_coll_last(comm, S->coll, &info))
		S->off[1][me] = info.offloaded;
	__atomic_fetch_add(&S->done, 1, __ATOMIC_SEQ_CST);
	if (S->fault)
		goto out;
	pthread_barrier_wait(&S->bar);
	if (me == 0)
		fabric_reset_read(0, &S->span[1]);
out:
	free(snd);
	free(rcv);
	return 0;
}

static int run(int ctl, const struct cf_fabric *f, enum tc_coll_id coll, const char *algo, size_t m, int fault,
	       int timeout_ms, int *P_out)
{
	__u32 id, nodes;
	double wall;
	pthread_barrierattr_t ba;
	int ret = cf_create(ctl, f, &id, &nodes);

	if (ret)
		return ret;
	memset(S, 0, sizeof(*S));
	S->fabric = id;
	S->ctl_fd = ctl;
	S->coll = coll;
	snprintf(S->algo, sizeof(S->algo), "%s", algo);
	S->m = m;
	S->fault = fault;
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&S->bar, &ba, nodes);
	*P_out = nodes;
	ret = cf_run(id, nodes, timeout_ms, node_fn, NULL, &wall);
	pthread_barrier_destroy(&S->bar);
	cf_destroy(ctl, id);
	return ret ? -ECHILD : 0;
}

/* The two models' prices, in ns, for the whole schedule. */
static int predict(const struct cf_fabric *f, enum tc_coll_id coll, const char *algo, size_t m, double *step_ns,
		   double *prog_ns, unsigned int *nsteps, int *cfree)
{
	struct tc_cost_params cp = { .ts_us = 1.0, .tw_us_per_byte = 1e-5, .hop_us = 0.01,
				     .flags = TC_COST_SENDER_START, .block_bytes = m };
	int dims[TC_MAX_DIMS];
	const struct tc_sched *s;
	const struct tc_algo *a = tc_algo_find(coll, algo);
	struct tc_shape sh;
	struct tc_cost c;
	double us;
	const char *why = NULL;
	int ret;

	for (unsigned int d = 0; d < f->ndims; d++)
		dims[d] = f->dims[d];
	if (!a || tc_shape_init(&sh, f->ndims, dims, f->wrap, !!(f->flags & TORUS_FABRIC_ONE_PORT)))
		return -EINVAL;
	ret = tc_sched_get(coll, a, &sh, &s, &why);
	if (ret)
		return ret; /* -EOPNOTSUPP: the algorithm has no schedule for the shape */
	if (tc_cost_eval(s, &cp, &c) || tc_cost_prog(s, &cp, &us))
		return -EINVAL;
	*step_ns = c.time_us * 1e3;
	*prog_ns = us * 1e3;
	*nsteps = s->nsteps;
	*cfree = !!(s->claims & TC_CLAIM_CONTENTION_FREE);
	return 0;
}

/* The module charges each message whole nanoseconds (its byte time rounded
 * down): a chain of k messages may end up to k ns before the model's. */
static int near(unsigned long long span, double model_ns, unsigned int nsteps)
{
	return (double)span <= model_ns + 0.5 && (double)span >= model_ns - nsteps - 0.5;
}

/*
 * One algorithm at one size: every byte right both times; the stepped
 * makespan equals the step model's, the program's equals the program
 * model's and is never longer than the stepped one. An algorithm that has
 * no schedule for the shape is a diagnostic line, not a test point.
 */
static void timing_case(int ctl, int have_prog, const struct cf_fabric *f, enum tc_coll_id coll, const char *algo,
			size_t m)
{
	unsigned int nsteps = 0;
	const char *cname = coll == TC_ALLTOALL ? "alltoall" : "allgather";
	double step_ns = 0, prog_ns = 0;
	long bad = 0;
	int P = 0, failed = 0, off_ok = 1, cfree = 0, ret;
	char first[240] = "";

	ret = predict(f, coll, algo, m, &step_ns, &prog_ns, &nsteps, &cfree);
	if (ret == -EOPNOTSUPP) {
		/* not a check left out: the algorithm does not run on this shape */
		tap_diag("%s %s %s: no schedule for this shape", f->label, cname, algo);
		return;
	}
	if (ret) {
		tap_ok(0, "%s %s %s: the schedule was built and priced (%s)", f->label, cname, algo, strerror(-ret));
		return;
	}
	ret = run(ctl, f, coll, algo, m, 0, 60000, &P);
	for (int n = 0; n < P; n++) {
		bad += S->bad[n];
		if (S->ret[n] && !failed++)
			snprintf(first, sizeof(first), "node %d: %s", n, S->err[n]);
		off_ok &= !S->off[0][n] && S->off[1][n] == have_prog;
	}
	tap_ok(!ret && !failed && !bad && off_ok, "%s %s %s m=%zu: stepped, then %s, every byte right (%ld wrong)%s%s",
	       f->label, cname, algo, m, have_prog ? "one program" : "stepped again", bad, first[0] ? "; " : "", first);
	if (ret || failed || !have_prog)
		return;
	if (!cfree) {
		tap_diag("%s %s %s m=%zu: links shared within a step: stepped makespan %llu ns (step model %.1f ns), "
			 "program %llu ns (program model %.1f ns), %.2fx",
			 f->label, cname, algo, m, S->span[0], step_ns, S->span[1], prog_ns,
			 S->span[1] ? (double)S->span[0] / (double)S->span[1] : 0);
		return;
	}
	tap_ok(near(S->span[0], step_ns, nsteps),
	       "%s %s %s m=%zu: stepped makespan %llu ns == step model %.1f ns (less up to %u ns of rounding)", f->label,
	       cname, algo, m, S->span[0], step_ns, nsteps);
	tap_ok(near(S->span[1], prog_ns, nsteps) && S->span[1] <= S->span[0],
	       "%s %s %s m=%zu: program makespan %llu ns == program model %.1f ns, <= stepped %llu ns (%.2fx)",
	       f->label, cname, algo, m, S->span[1], prog_ns, S->span[0],
	       S->span[1] ? (double)S->span[0] / (double)S->span[1] : 0);
}

/* Every algorithm of both collectives on @f at @m. */
static void every_algo(int ctl, int have_prog, const struct cf_fabric *f, size_t m)
{
	static const enum tc_coll_id colls[] = { TC_ALLTOALL, TC_ALLGATHER };
	const char *names[64];

	for (int c = 0; c < 2; c++) {
		int n = tc_coll_algos(colls[c], names, 64);

		for (int i = 0; i < n && i < 64; i++)
			timing_case(ctl, have_prog, f, colls[c], names[i], m);
	}
}

/*
 * Barrier and bcast (the collectives without a schedule): call 1 runs step
 * by step (a communicator's first), call 2 as one program; the fabric's
 * makespan of each. Barrier: one node enters 100 ms late; every node
 * checks, after its barrier returned, that every node had entered (a
 * process-shared count). Bcast: every byte every node received checked.
 */
struct line_shared {
	enum tc_coll_id kind;
	int root;
	size_t bytes;
	int entered[2];	   /* nodes that entered call 1, call 2 (atomic) */
	int early[2];	   /* nodes that left a barrier before every node entered */
	int posts[MAXP], waits[MAXP];
};

static struct line_shared *L;

static int line_call(tc_comm_t *comm, int call, unsigned char *buf, long *bad)
{
	int me = tc_comm_rank(comm), P = tc_comm_size(comm), ret;

	if (L->kind == TC_BARRIER) {
		if (me == P / 2 + 1)
			usleep(100000);
		__atomic_fetch_add(&L->entered[call - 1], 1, __ATOMIC_SEQ_CST);
		ret = tc_barrier(comm);
		if (!ret && __atomic_load_n(&L->entered[call - 1], __ATOMIC_SEQ_CST) != P)
			__atomic_fetch_add(&L->early[call - 1], 1, __ATOMIC_SEQ_CST);
		return ret;
	}
	for (size_t k = 0; k < L->bytes; k++)
		buf[k] = me == L->root ? pat(call, L->root, 0, k) : 0xee;
	ret = tc_bcast(comm, buf, L->bytes / 4, TC_INT32, L->root); /* bytes: a multiple of 4 */
	for (size_t k = 0; !ret && k < L->bytes; k++)
		*bad += buf[k] != pat(call, L->root, 0, k);
	return ret;
}

static int line_node_fn(tc_comm_t *comm, void *arg)
{
	int me = tc_comm_rank(comm), ret;
	struct tc_coll_info info = { .size = sizeof(info) };
	unsigned char *buf = malloc(L->bytes ? L->bytes : 1);

	(void)arg;
	if (!buf)
		return 1;
	for (int call = 1; call <= 2; call++) {
		pthread_barrier_wait(&S->bar);
		if (me == 0)
			fabric_reset_read(1, NULL);
		pthread_barrier_wait(&S->bar);
		ret = line_call(comm, call, buf, &S->bad[me]);
		S->ret[me] = ret;
		if (ret) {
			snprintf(S->err[me], sizeof(S->err[me]), "call %d: %s", call, tc_last_error());
			break;
		}
		if (!tc_coll_last(comm, L->kind, &info)) {
			S->off[call - 1][me] = info.offloaded;
			L->posts[me] = info.posts;
			L->waits[me] = info.waits;
		} else {
			S->off[call - 1][me] = -1;
		}
		pthread_barrier_wait(&S->bar);
		if (me == 0)
			fabric_reset_read(0, &S->span[call - 1]);
	}
	free(buf);
	return 0;
}

/* Messages on the longest chain of either mode on a torus: along each
 * dimension a line's farthest node is floor(n/2) hops away (coll.h). */
static unsigned int line_chain(const struct cf_fabric *f)
{
	unsigned int c = 0;

	for (unsigned int d = 0; d < f->ndims; d++)
		c += f->dims[d] / 2;
	return c;
}

static void line_case(int ctl, int have_prog, const struct cf_fabric *f, enum tc_coll_id kind, int root, size_t bytes)
{
	const char *name = kind == TC_BARRIER ? "barrier" : "bcast";
	unsigned int chain = line_chain(f);
	size_t len = kind == TC_BARRIER ? 8 : bytes; /* the barrier program's tokens */
	double msg_ns = 1000.0 + 10.0 + len * 0.01, model_ns = chain * msg_ns; /* cf_create's ts, hop, tw */
	__u32 id, nodes;
	double wall;
	pthread_barrierattr_t ba;
	int ret, failed = 0, off_ok = 1, calls_ok = 1;
	long bad = 0;
	char first[240] = "", lbl[96];

	snprintf(lbl, sizeof(lbl), "%s %s", f->label, name);
	if (kind == TC_BCAST)
		snprintf(lbl + strlen(lbl), sizeof(lbl) - strlen(lbl), " root %d m=%zu", root, bytes);
	ret = cf_create(ctl, f, &id, &nodes);
	if (ret) {
		tap_ok(0, "%s: fabric: %s", lbl, strerror(-ret));
		return;
	}
	memset(S, 0, sizeof(*S));
	memset(L, 0, sizeof(*L));
	S->fabric = id;
	S->ctl_fd = ctl;
	L->kind = kind;
	L->root = root;
	L->bytes = bytes;
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&S->bar, &ba, nodes);
	ret = cf_run(id, nodes, 60000, line_node_fn, NULL, &wall);
	pthread_barrier_destroy(&S->bar);
	cf_destroy(ctl, id);
	for (unsigned int n = 0; n < nodes; n++) {
		bad += S->bad[n];
		if (S->ret[n] && !failed++)
			snprintf(first, sizeof(first), "node %u: %s", n, S->err[n]);
		off_ok &= !S->off[0][n] && S->off[1][n] == have_prog;
		calls_ok &= have_prog ? L->posts[n] == 1 && L->waits[n] == 1 : L->posts[n] >= 1;
	}
	if (kind == TC_BARRIER)
		tap_ok(!ret && !failed && off_ok && !L->early[0] && !L->early[1],
		       "%s: stepped, then %s, no node left before all entered (%d+%d left early)%s%s", lbl,
		       have_prog ? "one program" : "stepped again", L->early[0], L->early[1], first[0] ? "; " : "",
		       first);
	else
		tap_ok(!ret && !failed && !bad && off_ok, "%s: stepped, then %s, every byte right (%ld wrong)%s%s", lbl,
		       have_prog ? "one program" : "stepped again", bad, first[0] ? "; " : "", first);
	if (ret || failed)
		return;
	tap_ok(calls_ok, "%s: the second call made %d post(s) and %d wait(s) on node 0 (%s)", lbl, L->posts[0],
	       L->waits[0], have_prog ? "1 and 1 on every node" : "stepped: a post per step");
	if (!have_prog)
		return;
	tap_ok(near(S->span[1], model_ns, chain) && S->span[1] <= S->span[0],
	       "%s: program makespan %llu ns == model %.1f ns (%u messages of %zu B on the longest chain), <= "
	       "stepped %llu ns (%.2fx)",
	       lbl, S->span[1], model_ns, chain, len, S->span[0],
	       S->span[1] ? (double)S->span[0] / (double)S->span[1] : 0);
}

static void fault_case(int ctl, const struct cf_fabric *f, int fault)
{
	int P = 0, timeouts = 0, named = 0, named0 = 0, other = 0, ok = 0, late = 0;
	long bad = 0;
	char msg[240] = "", oth[240] = "";
	int ret = run(ctl, f, TC_ALLTOALL, "at2", 64, fault, FAULT_TIMEOUT_MS, &P);

	for (int n = fault == 1 ? 1 : 0; n < P; n++) {
		bad += S->bad[n];
		if (S->ret[n] == -ETIMEDOUT) {
			timeouts++;
			late += S->ms[n] > 2 * FAULT_TIMEOUT_MS;
			if (strstr(S->err[n], "step") && strstr(S->err[n], "port") && strstr(S->err[n], "node") &&
			    (strstr(S->err[n], "send") || strstr(S->err[n], "receive")))
				named++;
			named0 += !!strstr(S->err[n], "node 0 ");
			if (!msg[0])
				snprintf(msg, sizeof(msg), "node %d: %s", n, S->err[n]);
		} else if (!S->ret[n]) {
			ok++;
		} else if (!other++) {
			snprintf(oth, sizeof(oth), "node %d: %s", n, S->err[n]);
		}
	}
	if (fault == 1)
		tap_ok(!ret && timeouts == P - 1 && named == timeouts && named0 > 0 && !late && !other,
		       "node 0 never posts: %d of %d programs fail with ETIMEDOUT within 2x %d ms (%d late), %d name step, "
		       "transfer, node and port, %d name node 0; %d other errors%s%s; first: %s",
		       timeouts, P - 1, FAULT_TIMEOUT_MS, late, named, named0, other, oth[0] ? ": " : "", oth, msg);
	else
		tap_ok(!ret && timeouts > 0 && named == timeouts && !late && !other && !bad,
		       "a dropped message: %d programs fail with ETIMEDOUT within 2x %d ms naming step, transfer, node "
		       "and port (%d), %d succeed with every byte right (%ld wrong), %d other errors%s%s; first: %s",
		       timeouts, FAULT_TIMEOUT_MS, named, ok, bad, other, oth[0] ? ": " : "", oth, msg);
}

int main(void)
{
	static const struct cf_fabric t44 = { "4x4", 2, 0x3, 0, { 4, 4 } };
	static const struct cf_fabric t224 = { "2x2x4", 3, 0x7, 0, { 2, 2, 4 } };
	static const struct cf_fabric r8 = { "ring 8", 1, 0x1, 0, { 8 } };
	struct torus_handshake h = { .size = sizeof(h) };
	const char *v = getenv("TC_DEV_OFFLOAD");
	int ctl = tv_ctl_open(), have_prog;

	if (ctl == -ENOENT) {
		printf("1..0 # SKIP %s absent: torus.ko not loaded\n", TV_CTL_PATH);
		return 4;
	}
	S = cf_shared(sizeof(*S));
	L = cf_shared(sizeof(*L));
	if (ctl < 0 || !S || !L || tv_ioctl(ctl, TORUS_IOC_HANDSHAKE, &h)) {
		tap_ok(0, "setup: %s", strerror(ctl < 0 ? -ctl : errno));
		return tap_done();
	}
	have_prog = (h.features & TORUS_FEAT_PROGRAM) && !(v && !strcmp(v, "off"));
	every_algo(ctl, have_prog, &t44, 64);
	every_algo(ctl, have_prog, &t224, 64);
	timing_case(ctl, have_prog, &t44, TC_ALLTOALL, "at2", 4096);
	timing_case(ctl, have_prog, &t44, TC_ALLGATHER, "bcast-pattern", 4096);
	timing_case(ctl, have_prog, &r8, TC_ALLTOALL, "ar", 1024);
	timing_case(ctl, have_prog, &r8, TC_ALLGATHER, "ring", 1024);
	line_case(ctl, have_prog, &t44, TC_BARRIER, 0, 0);
	line_case(ctl, have_prog, &t224, TC_BARRIER, 0, 0);
	line_case(ctl, have_prog, &r8, TC_BARRIER, 0, 0);
	line_case(ctl, have_prog, &t44, TC_BCAST, 0, 64);
	line_case(ctl, have_prog, &t44, TC_BCAST, 6, 4096);
	line_case(ctl, have_prog, &t224, TC_BCAST, 13, 1000);
	if (have_prog) {
		fault_case(ctl, &t44, 1);
		fault_case(ctl, &t44, 2);
	} else {
		tap_skip("faults on programs: the module runs none (or TC_DEV_OFFLOAD=off)");
	}
	close(ctl);
	return tap_done();
}
