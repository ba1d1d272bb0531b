// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tc_alltoall / tc_allgather through the simulator transport (tc_sim_launch:
 * one thread and one communicator per node), on several shapes, with every
 * algorithm that builds for the shape plus three executor exercises defined
 * here (store-and-forward through transit slots, multi-hop wormhole messages,
 * a two-packet allgather), every received byte checked against the MPI
 * reference. Then the error paths: attribute checks, unknown transport,
 * unknown algorithm, fallback, timeout.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "toruscoll.h"
#include "core/check.h"
#include "core/sim_run.h"
#include "select/select.h"
#include "api/api.h"
#include "tap.h"
#include "tbyte.h"

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* ---- executor exercises: schedules built here ---------------------------- */

/*
 * Store and forward, dimension by dimension, one hop per step: every block
 * waits in transit slots of the nodes on its path. One-port shapes get the
 * + and - moves in separate steps.
 */
static int build_hops(const struct tc_shape *sh, struct tc_sched **out, const char **why)
{
	int P = sh->nodes, *pos, ret = -ENOMEM;
	int cp[TC_MAX_DIMS], cd[TC_MAX_DIMS];
	struct tc_sched *s;

	s = tc_sched_new(sh, TC_ALLTOALL, "t-hops", "test: store and forward", TC_CLAIM_CONTENTION_FREE |
			 TC_CLAIM_SHORTEST | TC_CLAIM_ONE_HOP);
	pos = malloc(sizeof(*pos) * P * P);
	if (!s || !pos)
		goto err;
	for (int i = 0; i < P * P; i++)
		pos[i] = i / P; /* block {a, b} = a * P + b starts at a */
	for (int d = 0; d < sh->ndims; d++) {
		int wrap = sh->wrap_mask >> d & 1;
		int maxh = wrap ? sh->dims[d] / 2 : sh->dims[d] - 1;

		for (int h = 0; h < maxh; h++) {
			for (int half = 0; half < (sh->one_port ? 2 : 1); half++) {
				uint32_t m0 = s->nmsgs;

				tc_sched_step(s);
				for (int n = 0; n < P; n++) {
					for (int dir = 0; dir < 2; dir++) {
						int8_t route[TC_MAX_DIMS] = { 0 };
						int started = 0;

						if (sh->one_port && dir != half)
							continue;
						route[d] = dir ? -1 : 1;
						for (int b = 0; b < P * P; b++) {
							int delta;

							if (pos[b] != n || b / P == b % P)
								continue;
							tc_shape_coords(sh, n, cp);
							tc_shape_coords(sh, b % P, cd);
							delta = tc_shape_delta(sh, d, cp[d], cd[d]);
							if (!delta || (delta > 0) != (dir == 0))
								continue;
							if (!started) {
								ret = tc_sched_msg(s, n, tc_shape_walk(sh, n, route), route);
								if (ret < 0)
									goto err;
								started = 1;
							}
							ret = tc_sched_blk(s, b / P, b % P);
							if (ret < 0)
								goto err;
						}
					}
				}
				/* move after the step: what was sent arrives */
				for (uint32_t m = m0; m < s->nmsgs; m++) {
					const struct tc_msg *msg = &s->msgs[m];

					for (uint32_t k = 0; k < msg->nblk; k++)
						pos[s->blks[msg->blk_off + k].a * P + s->blks[msg->blk_off + k].b] = msg->dst;
				}
			}
		}
	}
	ret = tc_sched_finish(s);
	if (ret)
		goto err;
	free(pos);
	*out = s;
	return 0;
err:
	*why = "t-hops: build failed";
	free(pos);
	tc_sched_free(s);
	return ret < 0 ? ret : -ENOMEM;
}

/* Step k: node n sends its block for node (n+k) mod P straight there (multi-hop wormhole). */
static int build_worm(const struct tc_shape *sh, struct tc_sched **out, const char **why)
{
	int P = sh->nodes, ret = -ENOMEM;
	struct tc_sched *s = tc_sched_new(sh, TC_ALLTOALL, "t-worm", "test: direct multi-hop", 0);

	if (!s)
		goto err;
	for (int k = 1; k < P; k++) {
		tc_sched_step(s);
		for (int n = 0; n < P; n++) {
			ret = tc_sched_msg(s, n, (n + k) % P, NULL);
			if (ret < 0)
				goto err;
			ret = tc_sched_blk(s, n, (n + k) % P);
			if (ret < 0)
				goto err;
		}
	}
	ret = tc_sched_finish(s);
	if (ret)
		goto err;
	*out = s;
	return 0;
err:
	*why = "t-worm: build failed";
	tc_sched_free(s);
	return ret < 0 ? ret : -ENOMEM;
}

/*
 * Allgather in two packets per node, ring by ring: in dimension d, node x
 * passes to its successor (route +1, or back across the line on a mesh)
 * what it received in the previous step of the phase.
 */
static int build_ag2(const struct tc_shape *sh, struct tc_sched **out, const char **why)
{
	int P = sh->nodes, ret = -ENOMEM;
	int cx[TC_MAX_DIMS], co[TC_MAX_DIMS];
	struct tc_sched *s = tc_sched_new(sh, TC_ALLGATHER, "t-ag2", "test: two-packet ring allgather", 0);

	if (!s)
		goto err;
	s->npackets = 2;
	for (int d = 0; d < sh->ndims; d++) {
		int nd = sh->dims[d];

		for (int h = 1; h < nd; h++) {
			tc_sched_step(s);
			for (int x = 0; x < P; x++) {
				int8_t route[TC_MAX_DIMS] = { 0 };

				tc_shape_coords(sh, x, cx);
				route[d] = cx[d] == nd - 1 ? -(nd - 1) : 1;
				ret = tc_sched_msg(s, x, tc_shape_walk(sh, x, route), route);
				if (ret < 0)
					goto err;
				for (int o = 0; o < P; o++) {
					int e, ok = 1;

					tc_shape_coords(sh, o, co);
					for (e = d + 1; e < sh->ndims; e++)
						ok &= co[e] == cx[e];
					if (!ok || co[d] != ((cx[d] - (h - 1)) % nd + nd) % nd)
						continue;
					for (int p = 0; p < 2; p++) {
						ret = tc_sched_blk(s, o, p);
						if (ret < 0)
							goto err;
					}
				}
			}
		}
	}
	ret = tc_sched_finish(s);
	if (ret)
		goto err;
	*out = s;
	return 0;
err:
	*why = "t-ag2: build failed";
	tc_sched_free(s);
	return ret < 0 ? ret : -ENOMEM;
}

static const struct tc_algo t_hops = { .name = "t-hops", .coll = TC_ALLTOALL, .summary = "test", .build = build_hops };
static const struct tc_algo t_worm = { .name = "t-worm", .coll = TC_ALLTOALL, .summary = "test", .build = build_worm };
static const struct tc_algo t_ag2 = { .name = "t-ag2", .coll = TC_ALLGATHER, .summary = "test", .build = build_ag2 };

/* ---- running a collective on every node ---------------------------------- */

struct run {
	enum tc_coll_id coll;
	const char *name;	   /* tc_comm_set_algo, NULL = auto */
	const struct tc_algo *algo; /* or a test algorithm */
	size_t m[3];		   /* block sizes, run in turn (plan cache) */
	int expect_fallback;
	uint32_t max_segs; /* pretend the transport takes this few segments (staging) */
	int keep_env;	   /* leave the choice to TC_*_ALGO */
	int reps;	   /* timing: calls per block size (default 1) */
	/* results */
	struct tc_coll_info info0; /* node 0's tc_coll_last */
	double max_ms;		   /* slowest node's mean time per call */
	atomic_long bad_bytes;
	atomic_int bad_node;
	atomic_int bad_query;
	atomic_int fallback_seen;
	char ran[32];
	char first_err[320];
	atomic_int have_err;
	atomic_int nerr; /* nodes whose call failed */
};

static unsigned char pattern(int o, int d, size_t k, size_t m)
{
	return tbyte((uint32_t)m, (uint32_t)o, (uint32_t)d, k);
}

static int check_queries(tc_comm_t *comm)
{
	int dims[TC_MAX_DIMS], coords[TC_MAX_DIMS], nb[2 * TC_MAX_DIMS];
	unsigned int wrap;
	int r = tc_comm_rank(comm), nd = tc_comm_ndims(comm), node = 0;

	if (tc_comm_dims(comm, dims, &wrap) != nd || tc_comm_coords(comm, coords) || tc_comm_neighbors(comm, nb))
		return 1;
	for (int d = 0; d < nd; d++)
		node = node * dims[d] + coords[d];
	if (node != r)
		return 1;
	for (int p = 0; p < 2 * nd; p++) {
		int d = p / 2, c = coords[d] + (p & 1 ? -1 : 1), expect;

		if (c < 0 || c >= dims[d]) {
			if (!(wrap >> d & 1)) {
				if (nb[p] != -1)
					return 1;
				continue;
			}
			c = (c + dims[d]) % dims[d];
		}
		expect = node;
		{
			int stride = 1;

			for (int e = nd - 1; e > d; e--)
				stride *= dims[e];
			expect = r + (c - coords[d]) * stride;
		}
		if (nb[p] != expect)
			return 1;
	}
	for (int p = 2 * nd; p < 2 * TC_MAX_DIMS; p++)
		if (nb[p] != -1)
			return 1;
	return strcmp(tc_comm_transport_name(comm), "sim") != 0;
}

static void note_err(struct run *run, tc_comm_t *comm, int ret)
{
	atomic_fetch_add(&run->nerr, 1);
	if (!atomic_exchange(&run->have_err, 1))
		snprintf(run->first_err, sizeof(run->first_err), "node %d: %s: %s", tc_comm_rank(comm),
			 tc_strerror(ret), tc_last_error());
}

static int node_main(tc_comm_t *comm, void *arg)
{
	struct run *run = arg;
	int P = tc_comm_size(comm), me = tc_comm_rank(comm), ret;

	if (check_queries(comm))
		atomic_fetch_add(&run->bad_query, 1);
	comm->tp.max_segs = run->max_segs;
	if (run->algo)
		ret = __tc_comm_force_algo(comm, run->coll, run->algo);
	else if (!run->keep_env)
		ret = tc_comm_set_algo(comm, run->coll, run->name);
	else
		ret = 0;
	if (ret) {
		note_err(run, comm, ret);
		return ret;
	}
	for (int i = 0; i < 3 && run->m[i]; i++) {
		size_t m = run->m[i], bad = 0;
		size_t sbytes = run->coll == TC_ALLTOALL ? P * m : m;
		unsigned char *snd = malloc(sbytes), *rcv = malloc(P * m);
		struct tc_coll_info info = { .size = sizeof(info) };

		if (!snd || !rcv) {
			free(snd);
			free(rcv);
			return -ENOMEM;
		}
		for (size_t k = 0; k < sbytes; k++)
			snd[k] = run->coll == TC_ALLTOALL ? pattern(me, k / m, k % m, m) : pattern(me, 0, k, m);
		memset(rcv, 0xee, P * m);
		ret = tc_coll_last(comm, run->coll, &info);
		if (i == 0 && ret != -ENODATA)
			atomic_fetch_add(&run->bad_query, 1);
		{
			int reps = run->reps ? run->reps : 1;
			double t0 = now_ms(), t;

			for (int r = 0; r < reps; r++) {
				ret = run->coll == TC_ALLTOALL ? tc_alltoall(comm, snd, rcv, m) :
								 tc_allgather(comm, snd, rcv, m);
				if (ret)
					break;
			}
			t = (now_ms() - t0) / reps;
			if (run->reps && !ret) {
				static pthread_mutex_t max_lock = PTHREAD_MUTEX_INITIALIZER;

				pthread_mutex_lock(&max_lock);
				if (t > run->max_ms)
					run->max_ms = t;
				pthread_mutex_unlock(&max_lock);
			}
		}
		if (ret) {
			note_err(run, comm, ret);
			free(snd);
			free(rcv);
			return ret;
		}
		for (size_t k = 0; k < P * m; k++) {
			int o = k / m;
			unsigned char want = run->coll == TC_ALLTOALL ? pattern(o, me, k % m, m) : pattern(o, 0, k % m, m);

			bad += rcv[k] != want;
		}
		if (bad) {
			atomic_fetch_add(&run->bad_bytes, bad);
			atomic_store(&run->bad_node, me + 1);
		}
		if (tc_coll_last(comm, run->coll, &info) || info.block_bytes != m)
			atomic_fetch_add(&run->bad_query, 1);
		if (me == 0) {
			snprintf(run->ran, sizeof(run->ran), "%s", info.algo);
			run->info0 = info;
		}
		if (info.why[0])
			atomic_store(&run->fallback_seen, 1);
		free(snd);
		free(rcv);
	}
	return 0;
}

struct shape_case {
	const char *label;
	struct tc_sim_attr attr;
};

static const struct shape_case shapes[] = {
	{ "ring 8", { sizeof(struct tc_sim_attr), 1, { 8 }, 0x1, TC_ALL_PORT } },
	{ "4x4", { sizeof(struct tc_sim_attr), 2, { 4, 4 }, 0x3, TC_ALL_PORT } },
	{ "8x8", { sizeof(struct tc_sim_attr), 2, { 8, 8 }, 0x3, TC_ALL_PORT } },
	{ "4x4 mesh", { sizeof(struct tc_sim_attr), 2, { 4, 4 }, 0x0, TC_ALL_PORT } },
	{ "4x4 one-port", { sizeof(struct tc_sim_attr), 2, { 4, 4 }, 0x3, TC_ONE_PORT } },
	{ "5x5", { sizeof(struct tc_sim_attr), 2, { 5, 5 }, 0x3, TC_ALL_PORT } },
	{ "3x3x3", { sizeof(struct tc_sim_attr), 3, { 3, 3, 3 }, 0x7, TC_ALL_PORT } },
};

static void run_case(tc_sim_t *sim, const char *label, struct run *run)
{
	const char *an = run->algo ? run->algo->name : run->name ? run->name : "auto";
	const char *cn = run->coll == TC_ALLTOALL ? "alltoall" : "allgather";
	double t0 = now_ms(), t;
	int ret;

	ret = tc_sim_launch(sim, node_main, run);
	t = now_ms() - t0;
	if (!tap_ok(!ret && !run->bad_bytes && !run->bad_query, "%s %s %s%s: m=%zu,%zu,%zu every byte matches (%.1f ms)",
		    label, cn, an, run->max_segs ? " (staged, max 2 segments)" : "", run->m[0], run->m[1], run->m[2], t)) {
		tap_diag("ret %d (%s), bad bytes %ld (node %d), bad queries %d; %s", ret, tc_strerror(ret),
			 (long)run->bad_bytes, run->bad_node - 1, run->bad_query, run->first_err);
		return;
	}
	if (run->name && strcmp(run->name, "auto") && !run->expect_fallback)
		tap_ok(!strcmp(run->ran, run->name) && !run->fallback_seen && run->info0.steps > 0 &&
			       run->info0.transmission_blocks > 0,
		       "%s %s %s: tc_coll_last names %s, %u steps, %.1f blocks (bound %.1f)", label, cn, an, run->ran,
		       run->info0.steps, run->info0.transmission_blocks, run->info0.lower_bound_blocks);
}

/* Does the algorithm build for the shape? (What the library would run.) */
static int builds(const struct tc_algo *a, const struct tc_shape *sh, const char **why)
{
	const struct tc_sched *s;

	*why = NULL;
	return tc_sched_get(a->coll, a, sh, &s, why) == 0;
}

static void test_shapes(void)
{
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct shape_case *sc = &shapes[i];
		struct tc_shape sh;
		tc_sim_t *sim;
		int dims[TC_MAX_DIMS];

		for (unsigned int d = 0; d < sc->attr.ndims; d++)
			dims[d] = sc->attr.dims[d];
		if (tc_shape_init(&sh, sc->attr.ndims, dims, sc->attr.wrap_mask, sc->attr.port_model == TC_ONE_PORT) ||
		    tc_sim_create(&sc->attr, &sim)) {
			tap_ok(0, "%s: create simulated fabric: %s", sc->label, tc_last_error());
			continue;
		}
		/* The executor exercises defined here. */
		{
			const struct tc_algo *mine[] = { &t_hops, &t_worm, &t_ag2 };

			for (int k = 0; k < 6; k++) {
				struct run run = { .coll = mine[k % 3]->coll == TC_ALLTOALL ? TC_ALLTOALL : TC_ALLGATHER,
						   .algo = mine[k % 3], .m = { 8, 13, 1 }, .max_segs = k < 3 ? 0 : 2 };

				run_case(sim, sc->label, &run);
			}
		}
		/* Every library algorithm that builds for the shape, and auto. */
		for (int k = 0; tc_algos[k]; k++) {
			const struct tc_algo *a = tc_algos[k];
			const char *why;
			struct run run = { .name = a->name, .m = { 16, 5, 0 } };

			if (a->coll != TC_ALLTOALL && a->coll != TC_ALLGATHER)
				continue;
			run.coll = a->coll == TC_ALLTOALL ? TC_ALLTOALL : TC_ALLGATHER;
			if (!builds(a, &sh, &why)) {
				tap_diag("%s: %s does not build: %s", sc->label, a->name, why ? why : "?");
				continue;
			}
			run_case(sim, sc->label, &run);
			/* The seed algorithms' combined messages, through the staging area. */
			if (!strcmp(a->name, "at2") || !strcmp(a->name, "at2-1p") || !strcmp(a->name, "ar")) {
				struct run st = { .coll = run.coll, .name = a->name, .m = { 16, 5, 0 }, .max_segs = 2 };

				run_case(sim, sc->label, &st);
			}
		}
		for (int c = 0; c < 2; c++) {
			struct run run = { .coll = c, .name = "auto", .m = { 24, 0, 0 } };

			run_case(sim, sc->label, &run);
		}
		tc_sim_destroy(sim);
	}
}

/* ---- error paths ---------------------------------------------------------- */

static int idle_main(tc_comm_t *comm, void *arg)
{
	(void)comm;
	(void)arg;
	return 0;
}

struct to_run {
	atomic_int timeouts, named, others, refused;
	char msg[256];
};

/* Node 0 never joins; everyone who needs it times out. */
static int timeout_main(tc_comm_t *comm, void *arg)
{
	struct to_run *tr = arg;
	int P = tc_comm_size(comm), ret;
	unsigned char *b;

	if (tc_comm_rank(comm) == 0)
		return 0;
	b = calloc(2, P * 4);
	if (!b)
		return -ENOMEM;
	ret = tc_alltoall(comm, b, b + P * 4, 4);
	if (ret == -ETIMEDOUT) {
		atomic_fetch_add(&tr->timeouts, 1);
		if (strstr(tc_last_error(), "step") && strstr(tc_last_error(), "port") &&
		    strstr(tc_last_error(), "node 0")) {
			if (!atomic_fetch_add(&tr->named, 1))
				snprintf(tr->msg, sizeof(tr->msg), "%s", tc_last_error());
		}
		/* The communicator refuses further calls. */
		if (tc_alltoall(comm, b, b + P * 4, 4) == -EIO && strstr(tc_last_error(), "timed out"))
			atomic_fetch_add(&tr->refused, 1);
		ret = 0;
	}
	free(b);
	if (ret)
		atomic_fetch_add(&tr->others, 1);
	return 0;
}

/* Node 3 makes a bad call (a root outside the communicator); the others return at once. */
static int refuse_main(tc_comm_t *comm, void *arg)
{
	int32_t v = 0;

	(void)arg;
	if (tc_comm_rank(comm) != 3)
		return 0;
	return tc_bcast(comm, &v, 1, TC_INT32, 99);
}

/* A one-process stand-in for a runtime's exchange: every rank "sent" what we did. */
static int fake_calls;
static int fake_allgather(void *ctx, const void *sendbuf, void *recvbuf, size_t bytes)
{
	(void)ctx;
	fake_calls++;
	for (int r = 0; r < 4; r++)
		memcpy((char *)recvbuf + r * bytes, sendbuf, bytes);
	return 0;
}

static void test_errors(void)
{
	struct tc_sim_attr sa = { sizeof(sa), 2, { 4, 4 }, 0x3, TC_ALL_PORT };
	struct {
		struct tc_comm_attr a;
		uint64_t tail;
	} big;
	struct tc_comm_attr attr;
	tc_comm_t *comm = (tc_comm_t *)&attr;
	tc_sim_t *sim;
	int ret, verbs;

	memset(&attr, 0, sizeof(attr));
	attr.size = 8;
	attr.transport = TC_TRANSPORT_SIM;
	ret = tc_comm_create(&attr, &comm);
	tap_ok(ret == -EINVAL && !comm, "attr.size 8 -> -EINVAL (%s)", tc_last_error());

	/* a 1.0 caller's struct ends at sim: accepted, the newer fields read as 0 */
	memset(&attr, 0, sizeof(attr));
	attr.size = offsetof(struct tc_comm_attr, sim) + sizeof(attr.sim);
	attr.transport = TC_TRANSPORT_SIM;
	ret = tc_comm_create(&attr, &comm);
	tap_ok(ret == -EINVAL && strstr(tc_last_error(), "sim is NULL"),
	       "attr.size of version 1.0 (%u) accepted: fails only on the missing fabric (%s)", attr.size, tc_last_error());

	memset(&big, 0, sizeof(big));
	big.a.size = sizeof(big);
	big.a.transport = TC_TRANSPORT_SIM;
	big.tail = 1;
	ret = tc_comm_create(&big.a, &comm);
	tap_ok(ret == -E2BIG, "attr.size larger with a non-zero tail -> -E2BIG (%s)", tc_last_error());

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.transport = 99;
	ret = tc_comm_create(&attr, &comm);
	tap_ok(ret == -EINVAL && strstr(tc_last_error(), "transport"), "transport 99 -> -EINVAL (%s)",
	       tc_last_error());

	/* verbs: built without it, -EOPNOTSUPP; with it, no launcher here: -ENOTCONN saying how to start */
	attr.transport = TC_TRANSPORT_VERBS;
	ret = tc_comm_create(&attr, &comm);
	verbs = ret != -EOPNOTSUPP;
	tap_ok((ret == -EOPNOTSUPP && strstr(tc_last_error(), "without verbs support")) ||
		       (ret == -ENOTCONN && strstr(tc_last_error(), "mpirun") && strstr(tc_last_error(), "srun --mpi=pmix")),
	       "transport verbs without a launcher -> one line saying how to launch (%s)", tc_last_error());
	if (verbs) {
		/* the out-of-band hook: checked before any device is touched */
		attr.oob_allgather = fake_allgather;
		attr.oob_rank = 4;
		attr.oob_size = 4;
		ret = tc_comm_create(&attr, &comm);
		tap_ok(ret == -EINVAL && strstr(tc_last_error(), "oob_rank"), "verbs oob_rank 4 of 4 -> -EINVAL (%s)",
		       tc_last_error());
		attr.oob_rank = 1;
		attr.dims = "3x3";
		ret = tc_comm_create(&attr, &comm);
		tap_ok(ret == -EINVAL && strstr(tc_last_error(), "dims 3x3 make 9 ranks but the job has 4") && !fake_calls,
		       "verbs dims 3x3 on 4 ranks -> -EINVAL before any exchange (%s)", tc_last_error());
		attr.dims = "2x2";
		attr.rdma_device = "no-such-rdma-device";
		ret = tc_comm_create(&attr, &comm);
		tap_ok(ret == -ENODEV && strstr(tc_last_error(), "no-such-rdma-device") && fake_calls == 1 && !comm,
		       "verbs on a device that does not exist -> -ENODEV naming it, after taking part in the exchange "
		       "(%d calls: %s)", fake_calls, tc_last_error());
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
	}

	attr.transport = TC_TRANSPORT_SIM;
	ret = tc_comm_create(&attr, &comm);
	tap_ok(ret == -EINVAL, "sim transport without a fabric -> -EINVAL (%s)", tc_last_error());

	setenv("TC_TRANSPORT", "carrier-pigeon", 1);
	ret = tc_comm_create(NULL, &comm);
	tap_ok(ret == -EINVAL && strstr(tc_last_error(), "carrier-pigeon"), "TC_TRANSPORT=carrier-pigeon -> -EINVAL (%s)",
	       tc_last_error());
	setenv("TC_TRANSPORT", "dev", 1);
	unsetenv("TC_NODE");
	ret = tc_comm_create(NULL, &comm);
	tap_ok(ret == -EINVAL && strstr(tc_last_error(), "TC_NODE"), "dev without TC_NODE -> -EINVAL (%s)",
	       tc_last_error());
	setenv("TC_NODE", "x7", 1);
	ret = tc_comm_create(NULL, &comm);
	tap_ok(ret == -EINVAL, "TC_NODE=x7 -> -EINVAL (%s)", tc_last_error());
	setenv("TC_NODE", "0", 1);
	setenv("TC_FABRIC", "4000", 1);
	ret = tc_comm_create(NULL, &comm);
	if (ret == 0) {
		tap_ok(0, "dev fabric 4000 node 0 unexpectedly opened");
		tc_comm_destroy(comm);
	} else {
		tap_ok(ret < 0 && strstr(tc_last_error(), "/dev/torus4000n0"), "dev fabric 4000 absent -> %d (%s)", ret,
		       tc_last_error());
	}
	unsetenv("TC_TRANSPORT");
	unsetenv("TC_NODE");
	unsetenv("TC_FABRIC");

	tap_ok(tc_sim_create(&(struct tc_sim_attr){ 4, 0, { 0 }, 0, 0 }, &sim) == -EINVAL,
	       "tc_sim_create with a short attr -> -EINVAL");
	tap_ok(tc_sim_create(&(struct tc_sim_attr){ sizeof(sa), 2, { 4, 1 }, 0x3, 0 }, &sim) == -EINVAL,
	       "tc_sim_create 4x1 -> -EINVAL (%s)", tc_last_error());
	tap_ok(tc_sim_create(&(struct tc_sim_attr){ sizeof(sa), 2, { 4, 4 }, 0x3, 7 }, &sim) == -EINVAL,
	       "tc_sim_create port model 7 -> -EINVAL (%s)", tc_last_error());

	if (tc_sim_create(&sa, &sim)) {
		tap_ok(0, "4x4 simulated fabric: %s", tc_last_error());
		return;
	}
	/* Unknown algorithm names: by call and by environment. */
	{
		struct run run = { .coll = TC_ALLTOALL, .name = "no-such-algo", .m = { 8 } };

		ret = tc_sim_launch(sim, node_main, &run);
		tap_ok(ret == -ENOENT && strstr(run.first_err, "no-such-algo"), "tc_comm_set_algo(no-such-algo) -> -ENOENT (%s)",
		       run.first_err);
	}
	setenv("TC_ALLGATHER_ALGO", "nope", 1);
	ret = tc_sim_launch(sim, idle_main, NULL);
	tap_ok(ret == -ENOENT, "TC_ALLGATHER_ALGO=nope -> tc_comm_create fails -ENOENT in every node (%d)", ret);
	unsetenv("TC_ALLGATHER_ALGO");
	/* An algorithm that cannot build for the shape: the library's choice runs, and says why. */
	{
		struct run run = { .coll = TC_ALLTOALL, .name = "ar", .m = { 8 }, .expect_fallback = 1 };
		struct tc_shape sh;
		const char *why;

		tc_shape_parse(&sh, "4x4", 0, 0);
		if (builds(tc_algo_find(TC_ALLTOALL, "ar"), &sh, &why)) {
			tap_skip("fallback: ar unexpectedly builds on 4x4");
		} else {
			ret = tc_sim_launch(sim, node_main, &run);
			tap_ok(!ret && !run.bad_bytes && run.fallback_seen && strcmp(run.ran, "ar"),
			       "forced ar on 4x4 falls back to %s, correct bytes, tc_coll_last says why (%s)", run.ran,
			       run.first_err);
			tap_ok(!strncmp(run.info0.why, "ar: ", 4) && !strstr(run.info0.why, "ar: ar:"),
			       "the fallback reason names ar once (%s)", run.info0.why);
		}
	}
	/* Timeout: node 0 never calls; the others fail with -ETIMEDOUT naming step, port and node 0. */
	{
		struct to_run tr = { 0 };
		double t0 = now_ms(), t;

		setenv("TC_TIMEOUT_MS", "150", 1);
		ret = tc_sim_launch(sim, timeout_main, &tr);
		t = now_ms() - t0;
		unsetenv("TC_TIMEOUT_MS");
		tap_ok(!ret && tr.timeouts > 0 && tr.named > 0 && !tr.others && t < 3000,
		       "node 0 absent: %d nodes time out (%d name step/port/node 0), %.0f ms", (int)tr.timeouts,
		       (int)tr.named, t);
		tap_ok(tr.refused == tr.timeouts, "after a timeout the communicator refuses calls with -EIO (%d of %d)",
		       (int)tr.refused, (int)tr.timeouts);
		tap_diag("timeout message: %s", tr.msg);
	}
	/* A node that fails: tc_sim_launch returns its error and the caller's thread gets its reason. */
	ret = tc_sim_launch(sim, refuse_main, NULL);
	tap_ok(ret == -EINVAL && strstr(tc_last_error(), "node 3") && strstr(tc_last_error(), "root 99"),
	       "a failing node: tc_sim_launch -> %d, the caller's tc_last_error() has its reason (%s)", ret,
	       tc_last_error());
	/* After a timeout the fabric is usable again. */
	{
		struct run run = { .coll = TC_ALLTOALL, .algo = &t_worm, .m = { 8 } };

		ret = tc_sim_launch(sim, node_main, &run);
		tap_ok(!ret && !run.bad_bytes, "after the timeout a new launch runs clean (%s)", run.first_err);
	}
	tc_sim_destroy(sim);

	tap_ok(tc_alltoall(NULL, "", (char[1]){ 0 }, 1) == -EINVAL, "tc_alltoall(NULL comm) -> -EINVAL");
	tap_ok(!strcmp(tc_strerror(-ETIMEDOUT), "timed out waiting for a step's completions") &&
		       strcmp(tc_strerror(-12345), "") && strcmp(tc_strerror(5), ""),
	       "tc_strerror names errnos (and non-errors)");
}

/* TC_ALLTOALL_ALGO / TC_ALLGATHER_ALGO, read at tc_comm_create. */
static void test_env_override(void)
{
	struct tc_sim_attr sa = { sizeof(sa), 2, { 4, 4 }, 0x3, TC_ALL_PORT };
	const char *names[2] = { "pairwise", "bruck" };
	tc_sim_t *sim;

	if (tc_sim_create(&sa, &sim)) {
		tap_ok(0, "4x4 simulated fabric: %s", tc_last_error());
		return;
	}
	setenv("TC_ALLTOALL_ALGO", names[0], 1);
	setenv("TC_ALLGATHER_ALGO", names[1], 1);
	for (int c = 0; c < 2; c++) {
		struct run run = { .coll = c, .keep_env = 1, .m = { 12, 0, 0 } };
		int ret = tc_sim_launch(sim, node_main, &run);

		tap_ok(!ret && !run.bad_bytes && !strcmp(run.ran, names[c]), "TC_%s_ALGO=%s: %s ran, every byte matches",
		       c ? "ALLGATHER" : "ALLTOALL", names[c], run.ran);
	}
	unsetenv("TC_ALLTOALL_ALGO");
	unsetenv("TC_ALLGATHER_ALGO");
	tc_sim_destroy(sim);

	/* Forced by the environment but unable to run on the shape: an error
	 * naming the variable, the algorithm and the shape, on every node (not
	 * the library's choice in its place, as tc_comm_set_algo gets). */
	sa.dims[0] = sa.dims[1] = 3;
	if (tc_sim_create(&sa, &sim)) {
		tap_ok(0, "3x3 simulated fabric: %s", tc_last_error());
		return;
	}
	setenv("TC_ALLTOALL_ALGO", "at2", 1);
	{
		struct run run = { .coll = TC_ALLTOALL, .keep_env = 1, .m = { 12, 0, 0 } };
		int ret = tc_sim_launch(sim, node_main, &run);

		tap_ok(ret == -EOPNOTSUPP && run.nerr == 9 && !run.bad_bytes &&
			       strstr(run.first_err, "TC_ALLTOALL_ALGO=at2 does not run on this communicator's 3x3 torus: "),
		       "TC_ALLTOALL_ALGO=at2 on a 3x3 torus: tc_alltoall fails -EOPNOTSUPP on %d of 9 nodes, naming the "
		       "variable, algorithm and shape (%d: %s)",
		       (int)run.nerr, ret, run.first_err);
	}
	unsetenv("TC_ALLTOALL_ALGO");
	tc_sim_destroy(sim);
}

/* sendbuf == recvbuf: the executor copies in before any byte comes out. */
static int inplace_main(tc_comm_t *comm, void *arg)
{
	int P = tc_comm_size(comm), me = tc_comm_rank(comm), bad = 0, ret;
	size_t m = 6;
	unsigned char *b = malloc(P * m);

	(void)arg;
	if (!b)
		return -ENOMEM;
	for (size_t k = 0; k < P * m; k++)
		b[k] = pattern(me, k / m, k % m, m);
	ret = tc_alltoall(comm, b, b, m);
	for (size_t k = 0; !ret && k < P * m; k++)
		bad += b[k] != pattern(k / m, me, k % m, m);
	for (size_t k = 0; k < m; k++)
		b[me * m + k] = pattern(me, 0, k, m);
	if (!ret)
		ret = tc_allgather(comm, b + me * m, b, m);
	for (size_t k = 0; !ret && k < P * m; k++)
		bad += b[k] != pattern(k / m, 0, k % m, m);
	free(b);
	return ret ? ret : bad ? -EPROTO : 0;
}

static void test_inplace(void)
{
	struct tc_sim_attr sa = { sizeof(sa), 2, { 4, 4 }, 0x3, TC_ALL_PORT };
	tc_sim_t *sim;
	int ret;

	if (tc_sim_create(&sa, &sim)) {
		tap_ok(0, "4x4 simulated fabric: %s", tc_last_error());
		return;
	}
	ret = tc_sim_launch(sim, inplace_main, NULL);
	tap_ok(!ret, "4x4 in place (sendbuf == recvbuf, and allgather from its own slot): every byte matches (%d)", ret);
	tc_sim_destroy(sim);
}

/* Figures: warm tc_alltoall time per call on the simulator (not a pass/fail criterion). */
static void test_timing(void)
{
	static const struct tc_sim_attr t[] = {
		{ sizeof(struct tc_sim_attr), 1, { 8 }, 0x1, TC_ALL_PORT },
		{ sizeof(struct tc_sim_attr), 2, { 4, 4 }, 0x3, TC_ALL_PORT },
		{ sizeof(struct tc_sim_attr), 2, { 8, 8 }, 0x3, TC_ALL_PORT },
		{ sizeof(struct tc_sim_attr), 2, { 4, 4 }, 0x0, TC_ALL_PORT },
		{ sizeof(struct tc_sim_attr), 2, { 4, 4 }, 0x3, TC_ONE_PORT },
		{ sizeof(struct tc_sim_attr), 3, { 3, 3, 3 }, 0x7, TC_ALL_PORT },
	};
	static const char *const label[] = { "ring 8", "4x4", "8x8", "4x4 mesh", "4x4 one-port", "3x3x3" };

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct run run = { .coll = TC_ALLTOALL, .name = "auto", .m = { 1024, 0, 0 }, .reps = 10 };
		tc_sim_t *sim;
		int ret;

		if (tc_sim_create(&t[i], &sim)) {
			tap_ok(0, "%s: %s", label[i], tc_last_error());
			continue;
		}
		ret = tc_sim_launch(sim, node_main, &run);
		tap_ok(!ret && !run.bad_bytes, "timing %s: auto (%s) m=1024, 10 calls, every byte of the last matches",
		       label[i], run.ran);
		tap_diag("sim %s alltoall %s m=1024: %.3f ms per call (slowest node, warm), %u steps, %.0f blocks, bound %.0f",
			 label[i], run.ran, run.max_ms, run.info0.steps, run.info0.transmission_blocks,
			 run.info0.lower_bound_blocks);
		tc_sim_destroy(sim);
	}
}

/* tc_coll_algos: the registry's names of each collective, in its order. */
static void test_coll_algos(void)
{
	const char *names[64], *few[2];
	int ret;

	for (int c = TC_ALLTOALL; c <= TC_ALLGATHER; c++) {
		int n = tc_coll_algos(c, NULL, 0), got = tc_coll_algos(c, names, 64), k = 0, same = 1;

		for (int i = 0; tc_algos[i]; i++)
			if (tc_algos[i]->coll == (enum tc_coll_id)c)
				same &= k < got && k < 64 && !strcmp(names[k++], tc_algos[i]->name);
		tap_ok(n > 1 && got == n && k == n && same && tc_coll_algos(c, few, 2) == n,
		       "tc_coll_algos(%s): %d names, the registry's in its order (first %s, last %s); 2 asked: the "
		       "count all the same",
		       tc_coll_str(c), n, n > 0 ? names[0] : "-", n > 0 && n <= 64 ? names[n - 1] : "-");
	}
	ret = tc_coll_algos(7, names, 64);
	tap_ok(ret == -EINVAL, "tc_coll_algos(collective 7) -> -EINVAL (%d)", ret);
	ret = tc_coll_algos(TC_ALLTOALL, NULL, 3);
	tap_ok(ret == -EINVAL, "tc_coll_algos(NULL, 3) -> -EINVAL (%d)", ret);
	ret = tc_coll_algos(TC_ALLTOALL, names, -1);
	tap_ok(ret == -EINVAL, "tc_coll_algos(max -1) -> -EINVAL (%d)", ret);
}

int main(void)
{
	double t0 = now_ms();

	test_coll_algos();
	test_shapes();
	test_errors();
	test_env_override();
	test_inplace();
	test_timing();
	tap_diag("total %.0f ms", now_ms() - t0);
	return tap_done();
}
