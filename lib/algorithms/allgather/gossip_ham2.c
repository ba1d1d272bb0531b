// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * All-to-all broadcast by time-independent gossip on two edge-disjoint
 * zigzag Hamiltonian cycles of a 2D torus, two packets per node
 * (002_9f9f7262e49e6508.txt, Section 2, Theorem 1: ceil(n1*n2/2) steps).
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
 * allows any Hamiltonian decomposition, citing [3]); they are found by square
 * swaps (hd_decompose below) and give ceil((n1*n2-1)/2) steps, the optimum,
 * on every odd x odd torus and on many odd x even ones. Where the search
 * fails (e.g. 4 x 5, 6 x 7) the partial cycles above are used: those take
 * one to three steps more than Theorem 1 (a packet of an out-of-cycle PU
 * must queue into a full stream).
 *
 * The engine that traces the cycles of a rule and runs it is
 * engine/gossip.c; gossip-ham1 uses it too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/algos.h"
#include "algorithms/engine/gossip.h"

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

/* 002 Section 2: T<->R, B<->L at even j and at j = n2-1; T<->L, B<->R at odd j; L<->R at j = n2-2 for odd n2. */
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

/*
 * Any other 2D torus: two edge-disjoint Hamiltonian cycles found by square
 * swaps (the paper: "one might use the scheme in [3] for the construction of
 * two edge-disjoint Hamiltonian cycles on any two-dimensional torus"; this is
 * not [3]'s construction, it is the classical switching argument). Start
 * from rows (colour A) and columns (colour B); a unit square whose
 * horizontal edges have one colour and vertical edges the other can swap
 * them, which joins the two cycles its edges of each colour lie on. Swap
 * while that joins cycles of both colours, else take any swap that lowers
 * the total number of cycles; when none does, continue with a seeded random
 * walk (hd_search). Stop with one cycle per colour, or give up after 64
 * moves per node (the caller falls back to the partial cycles).
 * Deterministic: squares in row-major order, a fixed seed.
 */
struct ham2_dec {
	const struct tc_shape *sh;
	int n1, n2;
	unsigned char *col; /* 2 * nodes: [2u] edge u -> right, [2u+1] edge u -> down; 0 = A, 1 = B */
	int *uf;
};

static int hd_find(int *uf, int x)
{
	while (uf[x] != x) {
		uf[x] = uf[uf[x]];
		x = uf[x];
	}
	return x;
}

/* Union-find of colour c into uf; returns the number of cycles of colour c. */
static int hd_comps(const struct ham2_dec *h, int c, int *uf)
{
	const int n = h->n1 * h->n2;
	int k = n;

	for (int u = 0; u < n; u++)
		uf[u] = u;
	for (int u = 0; u < n; u++) {
		int i = u / h->n2, j = u % h->n2;

		for (int e = 0; e < 2; e++) {
			int v = e ? ((i + 1) % h->n1) * h->n2 + j : i * h->n2 + (j + 1) % h->n2;
			int ru, rv;

			if (h->col[2 * u + e] != c)
				continue;
			ru = hd_find(uf, u);
			rv = hd_find(uf, v);
			if (ru != rv) {
				uf[ru] = rv;
				k--;
			}
		}
	}
	return k;
}

/* The square at (i, j): its top, bottom (horizontal) and left, right (vertical) edge slots. */
static void hd_square(const struct ham2_dec *h, int i, int j, int e[4])
{
	e[0] = 2 * (i * h->n2 + j);
	e[1] = 2 * (((i + 1) % h->n1) * h->n2 + j);
	e[2] = 2 * (i * h->n2 + j) + 1;
	e[3] = 2 * (i * h->n2 + (j + 1) % h->n2) + 1;
}

static int hd_alternating(const struct ham2_dec *h, const int e[4])
{
	return h->col[e[0]] == h->col[e[1]] && h->col[e[2]] == h->col[e[3]] && h->col[e[0]] != h->col[e[2]];
}

static void hd_swap(struct ham2_dec *h, const int e[4])
{
	for (int k = 0; k < 4; k++)
		h->col[e[k]] ^= 1;
}

static uint32_t hd_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/*
 * When no swap lowers the count: a seeded random walk over swaps. Try the
 * alternating squares in a shuffled order and take the first that lowers the
 * number of cycles; if none does, swap a random one. The seed is fixed, so
 * the result is the same on every run.
 */
static int hd_search(struct ham2_dec *h)
{
	const int n = h->n1 * h->n2;
	int *ufb = h->uf + n, *sq = malloc(n * sizeof(int)), err = -EOPNOTSUPP;
	uint32_t seed = 0x9e3779b9u;

	if (!sq)
		return -ENOMEM;
	for (int iter = 0; iter < 64 * n; iter++) {
		int cur = hd_comps(h, 0, h->uf) + hd_comps(h, 1, ufb), nsq = 0, done = 0;

		if (cur == 2) {
			err = 0;
			break;
		}
		for (int u = 0; u < n; u++) {
			int e[4];

			hd_square(h, u / h->n2, u % h->n2, e);
			if (hd_alternating(h, e))
				sq[nsq++] = u;
		}
		if (!nsq)
			break;
		for (int k = nsq - 1; k > 0; k--) {
			int r = (int)(hd_rand(&seed) % (uint32_t)(k + 1)), t = sq[k];

			sq[k] = sq[r];
			sq[r] = t;
		}
		for (int k = 0; k < nsq && !done; k++) {
			int e[4];

			hd_square(h, sq[k] / h->n2, sq[k] % h->n2, e);
			hd_swap(h, e);
			if (hd_comps(h, 0, h->uf) + hd_comps(h, 1, ufb) < cur)
				done = 1;
			else
				hd_swap(h, e);
		}
		if (!done) {
			int e[4], u = sq[hd_rand(&seed) % (uint32_t)nsq];

			hd_square(h, u / h->n2, u % h->n2, e);
			hd_swap(h, e);
		}
	}
	free(sq);
	return err;
}

static int hd_decompose(struct ham2_dec *h)
{
	const int n = h->n1 * h->n2;
	int *ufb = h->uf + n;

	for (int u = 0; u < n; u++) {
		h->col[2 * u] = 0;
		h->col[2 * u + 1] = 1;
	}
	for (int iter = 0; iter < 4 * n; iter++) {
		int na = hd_comps(h, 0, h->uf), nb = hd_comps(h, 1, ufb), any = 0, done = 0;

		if (na == 1 && nb == 1)
			return 0;
		for (int i = 0; i < h->n1 && !done; i++) {
			for (int j = 0; j < h->n2 && !done; j++) {
				int e[4], hu, hv, vu, vv, *ufh, *ufv, mh, mv;

				hd_square(h, i, j, e);
				if (!hd_alternating(h, e))
					continue;
				ufh = h->col[e[0]] ? ufb : h->uf;
				ufv = h->col[e[2]] ? ufb : h->uf;
				hu = i * h->n2 + j;
				hv = ((i + 1) % h->n1) * h->n2 + j;
				vu = i * h->n2 + j;
				vv = i * h->n2 + (j + 1) % h->n2;
				mh = hd_find(ufh, hu) != hd_find(ufh, hv);
				mv = hd_find(ufv, vu) != hd_find(ufv, vv);
				if (mh && mv) {
					hd_swap(h, e);
					done = 1;
				}
				any |= mh || mv;
			}
		}
		if (done)
			continue;
		if (!any)
			break;
		for (int i = 0; i < h->n1 && !done; i++) {
			for (int j = 0; j < h->n2 && !done; j++) {
				int e[4];

				hd_square(h, i, j, e);
				if (!hd_alternating(h, e))
					continue;
				hd_swap(h, e);
				if (hd_comps(h, 0, h->uf) + hd_comps(h, 1, ufb) < na + nb)
					done = 1;
				else
					hd_swap(h, e);
			}
		}
		if (!done)
			break;
	}
	return hd_search(h);
}

/* The colour (cycle) of the link behind each port of node. */
static void ham2_dec_colours(const struct ham2_dec *h, int node, int *c)
{
	int i = node / h->n2, j = node % h->n2;

	c[0] = h->col[2 * node + 1];					/* down: edge (i,j)-(i+1,j) */
	c[1] = h->col[2 * (((i - 1 + h->n1) % h->n1) * h->n2 + j) + 1];	/* up: edge (i-1,j)-(i,j) */
	c[2] = h->col[2 * node];					/* right: edge (i,j)-(i,j+1) */
	c[3] = h->col[2 * (i * h->n2 + (j - 1 + h->n2) % h->n2)];	/* left: edge (i,j-1)-(i,j) */
}

/* The rule of a decomposition: leave by the other port of the in-port's colour. */
static int ham2_dec_rule(const void *ctx, int node, int in_port)
{
	int c[4];

	ham2_dec_colours(ctx, node, c);
	for (int q = 0; q < 4; q++)
		if (q != in_port && c[q] == c[in_port])
			return q;
	return -1;
}

/* One packet per PU on a decomposition: PU (i, j) injects into colour (i + j) & 1. */
static int ham2_dec_inject(const void *ctx, int node)
{
	const struct ham2_dec *h = ctx;
	int c[4], want = (node / h->n2 + node % h->n2) & 1;

	ham2_dec_colours(h, node, c);
	for (int q = 0; q < 4; q++)
		if (c[q] == want)
			return q;
	return -1;
}

/*
 * Build spec on the two Hamiltonian cycles of a square-swap decomposition of
 * the 2D torus (spec's rule and ctx are set here). -EOPNOTSUPP when the
 * decomposition is not found (*why untouched then), else what the build gives.
 */
static int ham2_dec_build(const struct tc_shape *shape, struct tc_gossip_spec *spec, struct tc_sched **out,
			  const char **why)
{
	struct ham2_dec h = { .sh = shape, .n1 = shape->dims[0], .n2 = shape->dims[1] };
	int err;

	h.col = malloc(2 * (size_t)shape->nodes);
	h.uf = malloc(2 * (size_t)shape->nodes * sizeof(int));
	if (!h.col || !h.uf) {
		err = -ENOMEM;
		*why = "gossip: out of memory";
	} else {
		err = hd_decompose(&h);
	}
	if (!err) {
		spec->rule = ham2_dec_rule;
		spec->ctx = &h;
		err = __tc_gossip_build(shape, spec, out, why, NULL);
	}
	free(h.col);
	free(h.uf);
	return err;
}

int __tc_gossip_ham1_full_cycles(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct tc_gossip_spec spec = {
		.algo = "gossip-ham1",
		.cite = "002 Sec. 3 fallback: 1 packet on two full Hamiltonian cycles (square-swap decomposition)",
		.npackets = 1,
		.want_cycles = 2,
		.inject = ham2_dec_inject,
	};
	const char *w = NULL;
	int err = ham2_dec_build(shape, &spec, out, &w);

	if (err)
		*why = w ? w : "gossip-ham1: no partial-cycle layout closes and no Hamiltonian decomposition was found on this torus";
	return err;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct ham2_ctx x = { .sh = shape };
	struct tc_gossip_spec spec = {
		.algo = "gossip-ham2",
		.cite = "002 Sec. 2, Theorem 1 (zigzag Hamiltonian cycles, 2 packets)",
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

		spec.cite = "002 Sec. 2, Theorem 1 with two Hamiltonian cycles from a square-swap decomposition (odd side)";
		err = ham2_dec_build(shape, &spec, out, why);
		if (err != -EOPNOTSUPP)
			return err;
		spec.cite = "002 Sec. 2, Theorem 1 (zigzag partial cycles, out-of-cycle PUs, 2 packets)";
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
		.cite = "002 Sec. 2, Theorem 1 (zigzag partial cycles, out-of-cycle PUs, 2 packets)",
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
	.coll = TC_COLL_ALLGATHER,
	.summary = "2-packet gossip on zigzag Hamiltonian cycles (002 Thm 1)",
	.build = build,
};
