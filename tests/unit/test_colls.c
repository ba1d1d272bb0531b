// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The everyday collectives on the simulator (tc_sim_launch: one thread and
 * communicator per node): barrier, bcast, reduce, allreduce, reduce_scatter,
 * allgatherv, alltoallv for every datatype and every valid op, on a 4x4
 * torus, 5x5 torus, 4x4 mesh, 3x3x3 torus, 8-ring and one-port 4x4 torus.
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
};

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
	tap_diag("total %.0f ms", now_ms() - t_all);
	return tap_done();
}
