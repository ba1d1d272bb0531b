// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * colls_dev: the everyday collectives over torus.ko, one process per node
 * (TAP; run in the guest by tests/vm/run-guest, or
 * `utils/torus-vm -- build/tests/vm/colls_dev`).
 *
 * For a 4x4 torus, 5x5 torus, 4x4 mesh and 3x3x3 torus it creates the
 * fabric through /dev/torus-ctl, forks one process per node, and each runs
 * the same node checks as the simulator test (tests/unit/coll_checks.h):
 * barrier, bcast, reduce, allreduce, reduce_scatter over every datatype and
 * op, allgatherv and alltoallv with zero counts, bad arguments, and nine
 * nonblocking collectives outstanding at once, overlapped with a compute
 * loop and completed out of order, with every received byte checked against
 * the reference (reductions bit-exact in the documented fold order).
 * Without /dev/torus-ctl it skips (exit 4). In TCG guests the reductions
 * run sum and one more op per datatype (min for float/double, bxor for the
 * integers); COLLS_DEV_FULL=1 runs every op as the simulator test does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "toruscoll.h"
#include "../unit/tap.h"
#include "../unit/coll_checks.h"
#include "coll_fork.h"

#define NODE_TIMEOUT_MS 60000 /* TCG guests are slow */

static const char *a2a_algo;

/*
 * One node: the alltoall inside the nonblocking checks runs a2a_algo
 * (COLLS_DEV_A2A_ALGO, default "direct"): "auto" makes every node process
 * price the candidates for itself, which on 3x3x3 in a TCG guest costs more
 * than everything else here together (tests/vm/coll_dev.c tests auto).
 */
static int colls_node(tc_comm_t *comm, void *arg)
{
	int ret = tc_comm_set_algo(comm, TC_ALLTOALL, a2a_algo);

	if (ret) {
		fprintf(stderr, "tc_comm_set_algo %s: %s\n", a2a_algo, tc_last_error());
		return ret;
	}
	return node_fn(comm, arg);
}

static const struct cf_fabric fabrics[] = {
	{ "4x4 torus", 2, 0x3, 0, { 4, 4 } },
	{ "5x5 torus", 2, 0x3, 0, { 5, 5 } },
	{ "4x4 mesh", 2, 0x0, 0, { 4, 4 } },
	{ "3x3x3 torus", 3, 0x7, 0, { 3, 3, 3 } },
};

int main(void)
{
	int ctl = tv_ctl_open();
	const char *env = getenv("COLLS_DEV_FULL");
	int light = !(env && *env == '1');

	a2a_algo = getenv("COLLS_DEV_A2A_ALGO");
	if (!a2a_algo || !*a2a_algo)
		a2a_algo = "direct";

	if (ctl < 0) {
		tap_skip("colls_dev: %s absent (%s): torus.ko not loaded", TV_CTL_PATH, strerror(-ctl));
		tap_done();
		return 4;
	}
	for (size_t i = 0; i < sizeof(fabrics) / sizeof(fabrics[0]); i++) {
		const struct cf_fabric *f = &fabrics[i];
		struct run *R = cf_shared(sizeof(*R));
		__u32 id = 0, nodes = 0;
		double wall;
		int ret, failed;

		if (!tap_ok(R != NULL, "%s: shared memory for the results", f->label))
			continue;
		R->g.k = f->ndims;
		R->g.P = 1;
		R->do_errs = i == 0;
		R->light = light;
		for (unsigned int d = 0; d < f->ndims; d++) {
			R->g.dims[d] = f->dims[d];
			R->g.wrap[d] = !!(f->wrap & (1u << d));
			R->g.P *= f->dims[d];
		}
		ret = cf_create(ctl, f, &id, &nodes);
		if (!tap_ok(!ret && (int)nodes == R->g.P, "%s: TORUS_IOC_FABRIC_CREATE: %s, %u nodes", f->label,
			    strerror(-ret), nodes)) {
			munmap(R, sizeof(*R));
			continue;
		}
		failed = cf_run(id, R->g.P, NODE_TIMEOUT_MS, colls_node, R, &wall);
		tap_ok(!failed, "%s: %d node processes ran and exited 0 (%d failed)", f->label, R->g.P, failed);
		report_run(f->label, R);
		tap_diag("%s: fork to last exit %.0f ms (alltoall: %s; reductions: %s)", f->label, wall, a2a_algo,
			 light ? "sum and one op per datatype" : "every op");
		ret = cf_destroy(ctl, id);
		if (ret)
			tap_diag("%s: destroying fabric %u: %s", f->label, id, strerror(-ret));
		munmap(R, sizeof(*R));
	}
	close(ctl);
	return tap_done();
}
