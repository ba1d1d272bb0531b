// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The everyday collectives on the simulator (tc_sim_launch: one thread and
 * communicator per node): barrier, bcast, reduce, allreduce, reduce_scatter,
 * allgatherv, alltoallv for every datatype and every valid op, on a 4x4
 * torus, 5x5 torus, 4x4 mesh, 3x3x3 torus, 8-ring and one-port 4x4 torus
 * (plus a 2x4 torus, a 6x3 with one wrapping dimension and a one-port 7-path).
 * Every received byte is checked against a reference computed here; for
 * reductions the reference folds the ranks' values in the order documented
 * in toruscoll.h (line fold order around centres), so the comparison is
 * bit-exact for floating point too. Roots other than 0, counts not
 * divisible by the node count and smaller than it, zero counts in the
 * v-variants. Then bad arguments (exact errnos) and the nonblocking forms:
 * several outstanding at once, completed out of order, overlapped with a
 * compute loop, blocking calls (tc_alltoall included) issued while requests
 * are outstanding.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "toruscoll.h"
#include "tap.h"

#include "coll_checks.h"

struct shape_case {
	const char *label;
	int k, dims[TC_MAX_DIMS];
	unsigned int wrap;
	int one_port, errs;
};

static const struct shape_case cases[] = {
	{ "4x4 torus", 2, { 4, 4 }, 0x3, 0, 1 },
	{ "5x5 torus", 2, { 5, 5 }, 0x3, 0, 0 },
	{ "4x4 mesh", 2, { 4, 4 }, 0x0, 0, 1 },
	{ "3x3x3 torus", 3, { 3, 3, 3 }, 0x7, 0, 0 },
	{ "8-ring", 1, { 8 }, 0x1, 0, 0 },
	{ "4x4 one-port torus", 2, { 4, 4 }, 0x3, 1, 0 },
	/* edges of the line patterns: 2-node rings, mixed wrap, 4-D, one-port path */
	{ "2x4 torus", 2, { 2, 4 }, 0x3, 0, 0 },
	{ "6x3, only dim 1 wraps", 2, { 6, 3 }, 0x2, 0, 0 },
	{ "7-path one-port", 1, { 7 }, 0x0, 1, 0 },
};

/*
 * Timeout: rank 5 of a 4x4 torus never joins an iallreduce. Every other
 * rank's tc_wait fails with -ETIMEDOUT naming the step, port and peer, and
 * the next call on that communicator fails with -EIO (transfers of the
 * failed call may still be posted).
 */
struct to_res {
	int ret, next;
	char msg[256];
};

static int timeout_fn(tc_comm_t *comm, void *arg)
{
	struct to_res *res = arg;
	int me = tc_comm_rank(comm);
	double in[20] = { 1 }, out[20];
	tc_request_t *req;

	if (me == 5)
		return 0;
	res[me].ret = tc_iallreduce(comm, in, out, 20, TC_DOUBLE, TC_SUM, &req);
	if (!res[me].ret)
		res[me].ret = tc_wait(&req);
	snprintf(res[me].msg, sizeof(res[me].msg), "%s", tc_last_error());
	res[me].next = tc_barrier(comm);
	return 0;
}

static void check_timeout(void)
{
	struct tc_sim_attr a = { .size = sizeof(a), .ndims = 2, .dims = { 4, 4 }, .wrap_mask = 3 };
	struct to_res res[16];
	int timeouts = 0, named = 0, eio = 0;
	const char *first = "";
	tc_sim_t *sim;
	double t0;

	memset(res, 0, sizeof(res));
	setenv("TC_TIMEOUT_MS", "300", 1);
	if (tc_sim_create(&a, &sim)) {
		tap_ok(0, "timeout: tc_sim_create");
		return;
	}
	t0 = now_ms();
	tc_sim_launch(sim, timeout_fn, res);
	for (int r = 0; r < 16; r++) {
		if (r == 5)
			continue;
		timeouts += res[r].ret == -ETIMEDOUT;
		if (res[r].ret == -ETIMEDOUT && strstr(res[r].msg, "allreduce") && strstr(res[r].msg, "step") &&
		    strstr(res[r].msg, "port") && strstr(res[r].msg, "node")) {
			if (!named++)
				first = res[r].msg;
		}
		eio += res[r].next == -EIO;
	}
	tap_ok(timeouts == 15 && named == 15, "4x4, rank 5 absent: %d of 15 tc_wait -ETIMEDOUT, %d name step, port, node",
	       timeouts, named);
	tap_diag("%s (%.0f ms)", first, now_ms() - t0);
	tap_ok(eio == 15, "the next call after the failure: -EIO on %d of 15 ranks", eio);
	tc_sim_destroy(sim);
	unsetenv("TC_TIMEOUT_MS");
}

int main(void)
{
	double t_all = now_ms();

	for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
		const struct shape_case *sc = &cases[ci];
		struct tc_sim_attr a = { .size = sizeof(a), .ndims = sc->k, .wrap_mask = sc->wrap,
					 .port_model = sc->one_port ? TC_ONE_PORT : TC_ALL_PORT };
		struct run *R = calloc(1, sizeof(*R));
		tc_sim_t *sim;
		double t0;
		int ret;

		R->g.k = sc->k;
		R->g.P = 1;
		R->do_errs = sc->errs;
		for (int d = 0; d < sc->k; d++) {
			a.dims[d] = sc->dims[d];
			R->g.dims[d] = sc->dims[d];
			R->g.wrap[d] = !!(sc->wrap & (1u << d));
			R->g.P *= sc->dims[d];
		}
		ret = tc_sim_create(&a, &sim);
		if (!tap_ok(!ret, "%s: tc_sim_create: %s", sc->label, tc_strerror(ret))) {
			free(R);
			continue;
		}
		t0 = now_ms();
		ret = tc_sim_launch(sim, node_fn, R);
		tap_ok(!ret, "%s: tc_sim_launch ran every node (%s)", sc->label, ret ? tc_last_error() : "ok");
		report_run(sc->label, R);
		tap_diag("%s: %.0f ms", sc->label, now_ms() - t0);
		tc_sim_destroy(sim);
		free(R);
	}
	check_timeout();
	tap_diag("total %.0f ms", now_ms() - t_all);
	return tap_done();
}
