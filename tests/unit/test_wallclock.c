// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The wall-clock choice (TC_AUTO_CLOCK=wall, tc_comm_attr.clock,
 * lib/colls/probe.c) and its pricing (TC_COST_HOST, lib/core/cost.c):
 *
 *  - The model: a schedule costs, per step that has messages, ts, msg times
 *    log2 of the busiest node's sends and receives, and tw times the bytes
 *    of all its messages; recomputed here from the steps of several
 *    schedules and compared with tc_cost_eval_sizes.
 *  - At fixed figures like the guest's (ts 1 ms, msg 0.6 ms): a 4x4's
 *    alltoall is direct, its allgather bruck; at the module's default
 *    fabric timing the alltoall is not direct.
 *  - On a simulated 4x4 and a 3x5 mesh: every node's communicator measured
 *    the same figures, prices with TC_COST_HOST, and auto's alltoall is the
 *    cheapest at them: judged by brute force, every algorithm that builds
 *    priced from its steps here (host_price), not by auto (that
 *    tc_algo_auto agrees is a plumbing point); every received byte is
 *    checked. With the
 *    fabric clock the same call does not pick direct.
 *  - Bad input: TC_AUTO_CLOCK=sundial, attr.clock 7, attr.offload 2.
 *  - tc_comm_set_clock on a simulated 4x4 made with the fabric clock: the
 *    wall clock measured afterwards (the same figures on every node,
 *    TC_COST_HOST, auto's pick the cheapest at them by the same brute force,
 *    every byte right: a hash of (call, origin, destination, byte)), back
 *    to the fabric's own figures exactly, TC_COST_TS_US applied again over
 *    both; clock 3 -EINVAL, a sub -EOPNOTSUPP, an outstanding ibarrier
 *    -EBUSY, NULL -EINVAL.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/comm.h"
#include "select/select.h"
#include "tap.h"
#include "tbyte.h"

/*
 * The alltoall's bytes: block d of rank r's send buffer is
 * tbyte(call, r, d, i), a hash of (call, origin, destination, byte), so a
 * block delivered to the wrong place or from the other test's call does
 * not pass. The two alltoalls of this program use their own call numbers.
 */
enum { CALL_WALL = 1, CALL_SET_CLOCK = 2 };

static void a2a_fill(unsigned char *sb, uint32_t call, int r, int n, size_t m)
{
	for (int d = 0; d < n; d++)
		for (size_t i = 0; i < m; i++)
			sb[(size_t)d * m + i] = tbyte(call, (uint32_t)r, (uint32_t)d, i);
}

/* The wrong bytes rank r received: block s must be tbyte(call, s, r, i). */
static int a2a_bad(const unsigned char *rb, uint32_t call, int r, int n, size_t m)
{
	int bad = 0;

	for (int s = 0; s < n; s++)
		for (size_t i = 0; i < m; i++)
			bad += rb[(size_t)s * m + i] != tbyte(call, (uint32_t)s, (uint32_t)r, i);
	return bad;
}

/*
 * The host model, evaluated here from a schedule's steps (not with the
 * library's cost code): per step that has messages, ts + log2(the busiest
 * node's sends and receives) * msg + the bytes of all its messages * tw.
 */
static double host_price(const struct tc_sched *s, const struct tc_cost_params *p, size_t m)
{
	struct tc_step_view sv;
	double t = 0;

	for (uint32_t st = 0; st < s->nsteps; st++) {
		int per_node[256] = { 0 }, busiest = 0;
		double blocks = 0;

		tc_sched_step_view(s, st, &sv);
		for (uint32_t i = 0; i < sv.nmsgs; i++) {
			blocks += sv.msgs[i].nblk;
			per_node[sv.msgs[i].src]++;
			per_node[sv.msgs[i].dst]++;
		}
		for (int n = 0; n < s->shape.nodes && n < 256; n++)
			busiest = per_node[n] > busiest ? per_node[n] : busiest;
		if (sv.nmsgs)
			t += p->ts_us + log2(busiest) * p->msg_us + blocks * m * p->tw_us_per_byte;
	}
	return t;
}

/*
 * The cheapest alltoall at figures p, by brute force: every algorithm of
 * the registry that builds on the shape, priced by host_price. Returns the
 * least price; *best its algorithm, *n how many were priced.
 */
static double brute_best(const struct tc_shape *sh, const struct tc_cost_params *p, size_t m, const char **best,
			 int *n)
{
	double least = INFINITY;

	*best = "none";
	*n = 0;
	for (int i = 0; tc_algos[i]; i++) {
		const struct tc_sched *s;
		const char *why;
		double t;

		if (tc_algos[i]->coll != TC_ALLTOALL || tc_sched_get(TC_ALLTOALL, tc_algos[i], sh, &s, &why))
			continue;
		t = host_price(s, p, m);
		(*n)++;
		if (t < least) {
			least = t;
			*best = tc_algos[i]->name;
		}
	}
	return least;
}

static void check_model(const char *algo, const char *dims)
{
	const size_t sizes[2] = { 1024, 65536 };
	struct tc_cost_params p = { .ts_us = 700, .tw_us_per_byte = 0.0007, .hop_us = 5, .msg_us = 300,
				    .flags = TC_COST_HOST };
	const struct tc_algo *a = tc_algo_find(TC_ALLTOALL, algo);
	const struct tc_sched *s;
	struct tc_shape sh;
	struct tc_cost cost;
	const char *why;
	double t[2], want[2] = { 0, 0 };

	tc_shape_parse(&sh, dims, 0, 0);
	if (!a || tc_sched_get(TC_ALLTOALL, a, &sh, &s, &why) ||
	    tc_cost_eval_sizes(s, &p, sizes, 2, t, &cost)) {
		tap_ok(0, "host pricing of %s on %s: %s", algo, dims, tc_last_error());
		return;
	}
	for (int k = 0; k < 2; k++)
		want[k] = host_price(s, &p, sizes[k]);
	tap_ok(fabs(t[0] - want[0]) < 1e-6 * want[0] && fabs(t[1] - want[1]) < 1e-6 * want[1],
	       "host pricing of %s on %s: %.1f and %.1f us = sum over steps of ts + log2(msgs) * msg + bytes * tw "
	       "(%.1f, %.1f)", algo,
	       dims, t[0], t[1], want[0], want[1]);
}

#define MAXN 16
struct wall_run {
	size_t m;
	struct tc_cost_params cost[MAXN];
	char algo[MAXN][32];
	int bad_bytes, err;
	char first_err[256];
	pthread_mutex_t lock;
};

static int wall_main(tc_comm_t *comm, void *arg)
{
	struct wall_run *w = arg;
	int n = tc_comm_size(comm), r = tc_comm_rank(comm);
	size_t m = w->m;
	unsigned char *sb = malloc(n * m), *rb = malloc(n * m);
	struct tc_coll_info info = { .size = sizeof(info) };
	int ret, bad = 0;

	if (!sb || !rb) {
		free(sb);
		free(rb);
		return -ENOMEM;
	}
	a2a_fill(sb, CALL_WALL, r, n, m);
	ret = tc_alltoall(comm, sb, rb, m);
	if (!ret)
		bad = a2a_bad(rb, CALL_WALL, r, n, m);
	if (!ret)
		ret = tc_coll_last(comm, TC_ALLTOALL, &info);
	pthread_mutex_lock(&w->lock);
	w->cost[r] = comm->tp.cost;
	snprintf(w->algo[r], sizeof(w->algo[r]), "%s", info.algo);
	w->bad_bytes += bad;
	if (ret && !w->err) {
		w->err = ret;
		snprintf(w->first_err, sizeof(w->first_err), "%s", tc_last_error());
	}
	pthread_mutex_unlock(&w->lock);
	free(sb);
	free(rb);
	return ret;
}

static int same_everywhere(const struct wall_run *w, int n)
{
	for (int r = 1; r < n; r++)
		if (memcmp(&w->cost[r], &w->cost[0], sizeof(w->cost[0])) || strcmp(w->algo[r], w->algo[0]))
			return 0;
	return 1;
}

static void check_sim(const char *dims, int mesh)
{
	struct tc_sim_attr sa = { .size = sizeof(sa) };
	struct tc_shape sh;
	tc_sim_t *sim;
	int ret;

	tc_shape_parse(&sh, dims, mesh, 0);
	sa.ndims = sh.ndims;
	for (int d = 0; d < sh.ndims; d++)
		sa.dims[d] = sh.dims[d];
	sa.wrap_mask = sh.wrap_mask;
	if (tc_sim_create(&sa, &sim)) {
		tap_ok(0, "simulated %s: %s", dims, tc_last_error());
		return;
	}
	for (size_t m = 64; m <= 4096; m *= 64) {
		struct wall_run w = { .m = m, .lock = PTHREAD_MUTEX_INITIALIZER };

		setenv("TC_AUTO_CLOCK", "wall", 1);
		ret = tc_sim_launch(sim, wall_main, &w);
		unsetenv("TC_AUTO_CLOCK");
		tap_ok(!ret && !w.bad_bytes, "%s%s wall clock, %zu B: every byte right (%d, %s)", dims,
		       mesh ? " mesh" : "", m, ret, w.first_err);
		tap_ok(same_everywhere(&w, sh.nodes) && w.cost[0].flags == TC_COST_HOST &&
			       w.cost[0].ts_us + w.cost[0].msg_us > 0,
		       "%s: every node measured the same: ts %.1f us, msg %.1f us, tw %.6f us/B, priced TC_COST_HOST", dims,
		       w.cost[0].ts_us, w.cost[0].msg_us, w.cost[0].tw_us_per_byte);
		{
			const struct tc_algo *want = tc_algo_auto(TC_ALLTOALL, &sh, m, &w.cost[0]);
			const struct tc_algo *got = tc_algo_find(TC_ALLTOALL, w.algo[0]);
			const struct tc_sched *gs = NULL;
			const char *best, *why;
			double least, mine = INFINITY;
			int n;

			/* plumbing: the communicator asked auto with the figures it measured */
			tap_ok(want && !strcmp(w.algo[0], want->name),
			       "plumbing: %s %zu B: the wall clock's pick %s is tc_algo_auto's at the measured figures (%s)",
			       dims, m, w.algo[0], want ? want->name : "none");
			/* the property, judged independently: no algorithm is cheaper by host_price */
			least = brute_best(&sh, &w.cost[0], m, &best, &n);
			if (got && !tc_sched_get(TC_ALLTOALL, got, &sh, &gs, &why))
				mine = host_price(gs, &w.cost[0], m);
			tap_ok(n > 1 && mine <= 1.05 * least,
			       "%s %zu B: the wall clock's pick %s costs %.1f us at the measured figures, the least of %d "
			       "algorithms priced from their steps here is %.1f us (%s): within 1.05x",
			       dims, m, w.algo[0], mine, n, least, best);
		}
		w = (struct wall_run){ .m = m, .lock = PTHREAD_MUTEX_INITIALIZER };
		ret = tc_sim_launch(sim, wall_main, &w);
		tap_ok(!ret && !w.bad_bytes && strcmp(w.algo[0], "direct") && !(w.cost[0].flags & TC_COST_HOST),
		       "%s %zu B: the fabric clock (default) picks %s", dims, m, w.algo[0]);
	}
	tc_sim_destroy(sim);
}

static int idle_main(tc_comm_t *comm, void *arg)
{
	(void)comm;
	(void)arg;
	return 0;
}

static void check_bad_input(void)
{
	struct tc_sim_attr sa = { .size = sizeof(sa), .ndims = 1, .dims = { 4 }, .wrap_mask = 1 };
	struct tc_comm_attr a = { .size = sizeof(a), .transport = TC_TRANSPORT_SIM };
	tc_comm_t *comm = NULL;
	tc_sim_t *sim;
	int ret;

	if (tc_sim_create(&sa, &sim)) {
		tap_ok(0, "simulated ring: %s", tc_last_error());
		return;
	}
	setenv("TC_AUTO_CLOCK", "sundial", 1);
	ret = tc_sim_launch(sim, idle_main, NULL);
	unsetenv("TC_AUTO_CLOCK");
	tap_ok(ret == -EINVAL && strstr(tc_last_error(), "TC_AUTO_CLOCK=sundial"),
	       "TC_AUTO_CLOCK=sundial -> -EINVAL (%s)", tc_last_error());
	a.sim = sim;
	a.clock = 7;
	ret = tc_comm_create(&a, &comm);
	tap_ok(ret == -EINVAL && !comm && strstr(tc_last_error(), "clock 7"), "attr.clock 7 -> -EINVAL (%s)",
	       tc_last_error());
	a.clock = TC_CLOCK_WALL;
	a.offload = 2;
	ret = tc_comm_create(&a, &comm);
	tap_ok(ret == -EINVAL && !comm && strstr(tc_last_error(), "offload 2"),
	       "attr.offload 2 -> -EINVAL (%s)", tc_last_error());
	tc_sim_destroy(sim);
}

struct clock_run {
	size_t m;
	struct tc_cost_params fabric[MAXN], wall[MAXN], back[MAXN];
	char algo[MAXN][32];
	int bad_bytes, bad3, busy, sub, err;
	char first_err[256];
	pthread_mutex_t lock;
	pthread_barrier_t ibarrier_seen; /* rank 0 tried tc_comm_set_clock with its ibarrier outstanding */
};

static void clock_fail(struct clock_run *w, int ret, const char *what)
{
	pthread_mutex_lock(&w->lock);
	if (!w->err) {
		w->err = ret ? ret : -EPROTO;
		snprintf(w->first_err, sizeof(w->first_err), "%s: %s", what, ret ? tc_last_error() : "wrong answer");
	}
	pthread_mutex_unlock(&w->lock);
}

static int clock_main(tc_comm_t *comm, void *arg)
{
	struct clock_run *w = arg;
	int n = tc_comm_size(comm), r = tc_comm_rank(comm), row[4];
	size_t m = w->m;
	unsigned char *sb = malloc(n * m), *rb = malloc(n * m);
	struct tc_coll_info info = { .size = sizeof(info) };
	tc_request_t *req = NULL;
	tc_comm_t *sub = NULL;
	int ret, bad = 0;

	if (!sb || !rb) {
		free(sb);
		free(rb);
		return -ENOMEM;
	}
	w->fabric[r] = comm->tp.cost;
	if (tc_comm_set_clock(comm, 3) == -EINVAL && strstr(tc_last_error(), "clock 3"))
		__atomic_fetch_add(&w->bad3, 1, __ATOMIC_RELAXED);
	ret = tc_comm_set_clock(comm, TC_CLOCK_WALL);
	if (ret)
		clock_fail(w, ret, "tc_comm_set_clock(TC_CLOCK_WALL)");
	w->wall[r] = comm->tp.cost;
	a2a_fill(sb, CALL_SET_CLOCK, r, n, m);
	if (!ret)
		ret = tc_alltoall(comm, sb, rb, m);
	if (!ret)
		bad = a2a_bad(rb, CALL_SET_CLOCK, r, n, m);
	if (!ret)
		ret = tc_coll_last(comm, TC_ALLTOALL, &info);
	if (ret)
		clock_fail(w, ret, "alltoall after the wall clock");
	snprintf(w->algo[r], sizeof(w->algo[r]), "%s", info.algo);
	__atomic_fetch_add(&w->bad_bytes, bad, __ATOMIC_RELAXED);

	/* Rank 0's ibarrier cannot complete before the others start theirs,
	 * which they do only after rank 0 tried to change the clock. Every
	 * rank passes the pthread barrier, failed or not: none hangs there. */
	if (r == 0) {
		if (!ret)
			ret = tc_ibarrier(comm, &req);
		if (!ret && tc_comm_set_clock(comm, TC_CLOCK_FABRIC) == -EBUSY)
			w->busy = 1;
		pthread_barrier_wait(&w->ibarrier_seen);
	} else {
		pthread_barrier_wait(&w->ibarrier_seen);
		if (!ret)
			ret = tc_ibarrier(comm, &req);
	}
	if (!ret)
		ret = tc_wait(&req);
	if (ret) {
		clock_fail(w, ret, "ibarrier");
		goto out;
	}
	ret = tc_comm_set_clock(comm, TC_CLOCK_FABRIC);
	if (ret) {
		clock_fail(w, ret, "tc_comm_set_clock(TC_CLOCK_FABRIC)");
		goto out;
	}
	w->back[r] = comm->tp.cost;

	for (int i = 0; i < 4; i++)
		row[i] = r / 4 * 4 + i;
	ret = tc_comm_create_sub(comm, row, 4, 1, &sub);
	if (ret) {
		clock_fail(w, ret, "tc_comm_create_sub");
		goto out;
	}
	if (tc_comm_set_clock(sub, TC_CLOCK_WALL) == -EOPNOTSUPP && strstr(tc_last_error(), "sub-communicator"))
		__atomic_fetch_add(&w->sub, 1, __ATOMIC_RELAXED);
	tc_comm_destroy(sub);
	ret = 0;
out:
	free(sb);
	free(rb);
	return ret;
}

static int cost_same(const struct tc_cost_params *a, const struct tc_cost_params *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static void check_set_clock(const char *ts_env)
{
	struct tc_sim_attr sa = { .size = sizeof(sa), .ndims = 2, .dims = { 4, 4 }, .wrap_mask = 3 };
	struct clock_run w = { .m = 64, .lock = PTHREAD_MUTEX_INITIALIZER };
	const char *tag = ts_env ? " with TC_COST_TS_US" : "";
	struct tc_cost_params dflt;
	const struct tc_algo *want;
	struct tc_shape sh;
	tc_sim_t *sim;
	int ret, same = 1, fabric_ok = 1;

	tc_shape_parse(&sh, "4x4", 0, 0);
	if (tc_sim_create(&sa, &sim)) {
		tap_ok(0, "simulated 4x4: %s", tc_last_error());
		return;
	}
	pthread_barrier_init(&w.ibarrier_seen, NULL, sh.nodes);
	if (ts_env)
		setenv("TC_COST_TS_US", ts_env, 1);
	ret = tc_sim_launch(sim, clock_main, &w);
	unsetenv("TC_COST_TS_US");
	pthread_barrier_destroy(&w.ibarrier_seen);
	tc_sim_destroy(sim);
	tap_ok(!ret && !w.err && !w.bad_bytes, "set_clock%s: every node ran; every byte right after the change (%d, %s)",
	       tag, ret, w.first_err);
	if (ret || w.err)
		return;
	tc_cost_params_default(&dflt);
	if (ts_env)
		dflt.ts_us = atof(ts_env);
	for (int r = 0; r < sh.nodes; r++) {
		same &= cost_same(&w.wall[r], &w.wall[0]) && !strcmp(w.algo[r], w.algo[0]);
		fabric_ok &= cost_same(&w.fabric[r], &dflt) && cost_same(&w.back[r], &dflt);
	}
	tap_ok(fabric_ok, "set_clock%s: created with the fabric's figures, TC_CLOCK_FABRIC restores them exactly (ts %.3f us)",
	       tag, w.back[0].ts_us);
	tap_ok(same && w.wall[0].flags == TC_COST_HOST && w.wall[0].msg_us + w.wall[0].ts_us > 0 &&
		       (!ts_env || w.wall[0].ts_us == atof(ts_env)),
	       "set_clock%s: TC_CLOCK_WALL measured the same figures on every node: ts %.1f us, msg %.1f us, "
	       "priced TC_COST_HOST", tag, w.wall[0].ts_us, w.wall[0].msg_us);
	want = tc_algo_auto(TC_ALLTOALL, &sh, w.m, &w.wall[0]);
	tap_ok(want && !strcmp(w.algo[0], want->name),
	       "plumbing: set_clock%s: auto's pick after the change (%s) is tc_algo_auto's at the measured figures (%s)",
	       tag, w.algo[0], want ? want->name : "none");
	{
		/* the property, judged independently: no algorithm is cheaper by host_price */
		const struct tc_algo *got = tc_algo_find(TC_ALLTOALL, w.algo[0]);
		const struct tc_sched *gs;
		const char *best, *why;
		double least, mine = INFINITY;
		int n;

		least = brute_best(&sh, &w.wall[0], w.m, &best, &n);
		if (got && !tc_sched_get(TC_ALLTOALL, got, &sh, &gs, &why))
			mine = host_price(gs, &w.wall[0], w.m);
		tap_ok(n > 1 && mine <= 1.05 * least,
		       "set_clock%s: the pick after the change %s costs %.1f us at the measured figures, the least of %d "
		       "algorithms priced from their steps here is %.1f us (%s): within 1.05x",
		       tag, w.algo[0], mine, n, least, best);
	}
	tap_ok(w.bad3 == sh.nodes, "set_clock: clock 3 -> -EINVAL on every node (%d of %d)", w.bad3, sh.nodes);
	tap_ok(w.busy, "set_clock: with an ibarrier outstanding -> -EBUSY");
	tap_ok(w.sub == sh.nodes, "set_clock: on a sub-communicator -> -EOPNOTSUPP on every node (%d of %d)", w.sub,
	       sh.nodes);
	ret = tc_comm_set_clock(NULL, TC_CLOCK_WALL);
	tap_ok(ret == -EINVAL, "set_clock: NULL comm -> -EINVAL (%d)", ret);
}

/* Figures of the shape the guest measured: direct's one step of 30 messages
 * beats every schedule of more steps on a 4x4. */
static void check_choice(void)
{
	struct tc_cost_params p = { .ts_us = 1000, .msg_us = 600, .tw_us_per_byte = 0.0005, .flags = TC_COST_HOST };
	struct tc_shape sh;
	const struct tc_algo *a, *f;

	tc_shape_parse(&sh, "4x4", 0, 0);
	a = tc_algo_auto(TC_ALLTOALL, &sh, 64, &p);
	tap_ok(a && !strcmp(a->name, "direct"), "4x4 alltoall, ts 1000 us, msg 600 us: direct (%s)",
	       a ? a->name : "none");
	a = tc_algo_auto(TC_ALLGATHER, &sh, 64, &p);
	tap_ok(a && !strcmp(a->name, "bruck"), "4x4 allgather, the same figures: bruck, 2 messages a step (%s)",
	       a ? a->name : "none");
	tc_cost_params_default(&p);
	f = tc_algo_auto(TC_ALLTOALL, &sh, 64, &p);
	tap_ok(f && strcmp(f->name, "direct"), "4x4 alltoall at the module's default timing: not direct (%s)",
	       f ? f->name : "none");
}

int main(void)
{
	check_choice();
	check_model("direct", "4x4");
	check_model("opt2d", "4x4");
	check_model("at2", "8x8");
	check_model("pairwise", "3x5");
	check_sim("4x4", 0);
	check_sim("3x5", 1);
	check_bad_input();
	check_set_clock(NULL);
	check_set_clock("250");
	return tap_done();
}
