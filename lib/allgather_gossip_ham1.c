// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * All-to-all broadcast by time-independent gossip on partial Hamiltonian
 * cycles, one packet per node (002_9f9f7262e49e6508.txt, Section 3).
 *
 * 2D (Theorem 2, n1*n2/4 + n1/2 + 1 steps): on an n1 x n2 torus (n1 even)
 * PU (i, j) pairs its links
 *   j = 0 and j = 1:  T <-> R, B <-> L
 *   2 <= j < n2:      L <-> R
 * (the paper prints T <-> L, B <-> R for j = 1, which closes every lap on
 * itself; see the seeds' reading notes). This makes two partial cycles of
 * n1*n2/2 + n1 PUs: the rows of one parity run on one cycle, joined through
 * columns 0 and 1. A PU in a column j >= 2 lies on one cycle and is fed the
 * other cycle's packets by the PUs above and below it over their free
 * vertical links; the two feeders choose what to pass (forward/backward
 * switching) so that every packet reaches it once and each link carries one
 * packet per step. Odd n1 with even n2 runs on the transposed torus; of two
 * even sides the smaller one is used as n1 (fewer steps). Both sides odd (the
 * paper's "inserting one special row") is not implemented: the row that
 * keeps columns 0 and 1 connected leaves its other PUs with a single feeder
 * per cycle, which halves the feeding rate; -EOPNOTSUPP (gossip-ham2 covers
 * odd x odd tori optimally with two half packets).
 *
 * d-D, d >= 3 (Theorems 3 and 4, the "reactor" cycles): see
 * allgather_gossip_ham1_kd.c.
 * Every packet is injected into one cycle through its origin.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algos.h"
#include "allgather_gossip.h"

/* ---- 2D: the Section 3 rules ---- */

struct ham1_2d {
	const struct tc_shape *sh;
	int rowdim, coldim;
};

static int ham1_2d_rule(const void *ctx, int node, int in_port)
{
	const struct ham1_2d *x = ctx;
	int c[TC_MAX_DIMS], d = in_port / 2, minus = in_port & 1;
	int T = 2 * x->rowdim + 1, B = 2 * x->rowdim, L = 2 * x->coldim + 1, R = 2 * x->coldim;

	tc_shape_coords(x->sh, node, c);
	if (c[x->coldim] >= 2) {
		if (d != x->coldim)
			return -1;
		return minus ? R : L;
	}
	if (in_port == T)
		return R;
	if (in_port == R)
		return T;
	if (in_port == B)
		return L;
	return B;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct ham1_2d x = { .sh = shape };
	struct tc_gossip_spec spec = {
		.algo = "gossip-ham1",
		.cite = "002 Sec. 3, Theorem 2 (partial Hamiltonian cycles, 1 packet)",
		.npackets = 1,
		.want_cycles = 2,
		.rule = ham1_2d_rule,
		.ctx = &x,
	};
	int a, b;

	if (shape->wrap_mask != (1u << shape->ndims) - 1) {
		*why = "gossip-ham1: needs a torus (every dimension wrapping)";
		return -EOPNOTSUPP;
	}
	if (shape->one_port) {
		*why = "gossip-ham1: needs all-port nodes";
		return -EOPNOTSUPP;
	}
	for (int i = 0; i < shape->ndims; i++)
		if (shape->dims[i] < 3) {
			*why = "gossip-ham1: each side must be at least 3";
			return -EOPNOTSUPP;
		}
	if (shape->ndims >= 3)
		return __tc_gossip_ham1_kd(shape, out, why);
	if (shape->ndims != 2) {
		*why = "gossip-ham1: needs a 2D or higher torus";
		return -EOPNOTSUPP;
	}
	a = shape->dims[0];
	b = shape->dims[1];
	if ((a & 1) && (b & 1)) {
		*why = "gossip-ham1: both sides odd is not implemented (one side must be even)";
		return -EOPNOTSUPP;
	}
	/* n1 (rows, laps of two) must be even; of two even sides take the smaller */
	if (!(a & 1) && ((b & 1) || a <= b)) {
		x.rowdim = 0;
		x.coldim = 1;
	} else {
		x.rowdim = 1;
		x.coldim = 0;
	}
	return __tc_gossip_build(shape, &spec, out, why, NULL);
}

const struct tc_algo tc_algo_gossip_ham1 = {
	.name = "gossip-ham1",
	.coll = TC_COLL_ALLGATHER,
	.summary = "1-packet gossip on partial Hamiltonian cycles, 2D/3D/d-D (002 Thm 2-4)",
	.build = build,
};
