// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * All-to-all broadcast by time-independent gossip on two edge-disjoint
 * zigzag Hamiltonian cycles of a 2D torus, two packets per node: Meyer and
 * Sibeyn, "Gossiping Large Packets on Full-Port Tori", Section 2, Theorem 1
 * (ceil(n1*n2/2) steps).
 *
 * PU (i, j) is in row i and column j of an n1 x n2 torus; T, B, L, R are the
 * links up, down, left and right. Its rule pairs its four links:
 *   j even, or j = n2 - 1:  T <-> R, B <-> L
 *   j odd:                  T <-> L, B <-> R
 * which makes two edge-disjoint Hamiltonian cycles when n1 and n2 are even.
 * For odd n2 the PUs of column n2 - 2 instead pair L <-> R and lie on one
 * cycle only; for that cycle they are out-of-cycle PUs, fed through their
 * free T/B links by the on-cycle PUs above and below ("Changing Direction":
 * the two feeders choose what to pass so that every packet reaches the
 * out-of-cycle PU once and each link carries at most one packet per step).
 * For odd n1 and even n2 the same rules run on the transposed torus.
 * Packet p of every node circulates on cycle p, half the cycle forward and
 * half backward.
 *
 * With an odd side, two full Hamiltonian cycles are tried first (the paper
 * allows any Hamiltonian decomposition, citing Foregger); they are found by
 * square swaps (engine/ham_decomp.c) and give ceil((n1*n2-1)/2) steps, the optimum,
 * on every odd x odd torus and on many odd x even ones. Where the search
 * fails (e.g. 4 x 5, 6 x 7) the partial cycles above are used: those take
 * one to three steps more than Theorem 1 (a packet of an out-of-cycle PU
 * must queue into a full stream).
 *
 * The engine that traces the cycles of a rule and runs it is
 * engine/gossip.c; gossip-ham1 uses it too. This file holds the rules, the
 * choice between full and partial cycles, and the descriptor.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/algos.h"
#include "algorithms/engine/gossip.h"
#include "algorithms/engine/ham_decomp.h"

/* ---- gossip-ham2: the Section 2 rules ---- */

/* Logical view of a 2D torus: n1 rows (must be even), n2 columns, maybe transposed. */
struct ham2_ctx {
	const struct tc_shape *sh;
	int rowdim, coldim; /* physical dimension of rows (i) and of columns (j) */
	int n1, n2;
};

enum { PT, PB, PL, PR };

static int ham2_phys(const struct ham2_ctx *x, int lp)
{
	switch (lp) {
	case PT: return 2 * x->rowdim + 1;
	case PB: return 2 * x->rowdim;
	case PL: return 2 * x->coldim + 1;
	default: return 2 * x->coldim;
	}
}

static int ham2_logical(const struct ham2_ctx *x, int port)
{
	int d = port / 2, minus = port & 1;

	if (d == x->rowdim)
		return minus ? PT : PB;
	return minus ? PL : PR;
}

/* Meyer and Sibeyn, Section 2: T<->R, B<->L at even j and at j = n2-1; T<->L, B<->R at odd j; L<->R at j = n2-2 for odd n2. */
static int ham2_rule(const void *ctx, int node, int in_port)
{
	const struct ham2_ctx *x = ctx;
	int c[TC_MAX_DIMS], j, lp, lq;

	tc_shape_coords(x->sh, node, c);
	j = c[x->coldim];
	lp = ham2_logical(x, in_port);
	if ((x->n2 & 1) && j == x->n2 - 2) {
		if (lp == PT || lp == PB)
			return -1;
		lq = lp == PL ? PR : PL;
	} else if (!(j & 1) || j == x->n2 - 1) {
		static const int even[4] = { [PT] = PR, [PR] = PT, [PB] = PL, [PL] = PB };

		lq = even[lp];
	} else {
		static const int odd[4] = { [PT] = PL, [PL] = PT, [PB] = PR, [PR] = PB };

		lq = odd[lp];
	}
	return ham2_phys(x, lq);
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct ham2_ctx x = { .sh = shape };
	struct tc_gossip_spec spec = {
		.algo = "gossip-ham2",
		.cite = "Meyer and Sibeyn, Sec. 2, Theorem 1 (zigzag Hamiltonian cycles, 2 packets)",
		.npackets = 2,
		.want_cycles = 2,
		.rule = ham2_rule,
		.ctx = &x,
	};

	if (shape->ndims != 2 || shape->wrap_mask != 3u) {
		*why = "gossip-ham2: needs a 2D torus (both dimensions wrapping)";
		return -EOPNOTSUPP;
	}
	if (shape->one_port) {
		*why = "gossip-ham2: needs all-port nodes";
		return -EOPNOTSUPP;
	}
	if (shape->dims[0] < 3 || shape->dims[1] < 3) {
		*why = "gossip-ham2: each side must be at least 3";
		return -EOPNOTSUPP;
	}
	if ((shape->dims[0] & 1) || (shape->dims[1] & 1)) {
		int err;

		spec.cite = "Meyer and Sibeyn, Sec. 2, Theorem 1 with two Hamiltonian cycles from a square-swap decomposition (odd side)";
		err = tc_ham_decomp_gossip(shape, &spec, out, why);
		if (err != -EOPNOTSUPP)
			return err;
		spec.cite = "Meyer and Sibeyn, Sec. 2, Theorem 1 (zigzag partial cycles, out-of-cycle PUs, 2 packets)";
		spec.rule = ham2_rule;
		spec.ctx = &x;
	}
	if (!(shape->dims[0] & 1)) {
		x.rowdim = 0;
		x.coldim = 1;
	} else if (!(shape->dims[1] & 1)) {
		x.rowdim = 1;	/* odd n1, even n2: the transposed torus */
		x.coldim = 0;
	} else {
		*why = "gossip-ham2: both sides odd and no Hamiltonian decomposition found by square swaps";
		return -EOPNOTSUPP;
	}
	x.n1 = shape->dims[x.rowdim];
	x.n2 = shape->dims[x.coldim];
	return __tc_gossip_build(shape, &spec, out, why, NULL);
}

/* The paper's own construction for one odd side, kept reachable for tests. */
int __tc_gossip_ham2_partial(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct ham2_ctx x = { .sh = shape };
	struct tc_gossip_spec spec = {
		.algo = "gossip-ham2",
		.cite = "Meyer and Sibeyn, Sec. 2, Theorem 1 (zigzag partial cycles, out-of-cycle PUs, 2 packets)",
		.npackets = 2,
		.want_cycles = 2,
		.rule = ham2_rule,
		.ctx = &x,
	};

	if (shape->ndims != 2 || shape->wrap_mask != 3u || shape->dims[0] < 3 || shape->dims[1] < 3 ||
	    ((shape->dims[0] & 1) && (shape->dims[1] & 1))) {
		*why = "gossip-ham2 partial cycles: needs a 2D torus with an even side, sides >= 3";
		return -EOPNOTSUPP;
	}
	x.rowdim = shape->dims[0] & 1;
	x.coldim = !x.rowdim;
	x.n1 = shape->dims[x.rowdim];
	x.n2 = shape->dims[x.coldim];
	return __tc_gossip_build(shape, &spec, out, why, NULL);
}

const struct tc_algo tc_algo_gossip_ham2 = {
	.name = "gossip-ham2",
	.coll = TC_ALLGATHER,
	.summary = "2-packet gossip on zigzag Hamiltonian cycles (Meyer and Sibeyn, Thm 1)",
	.build = build,
};
