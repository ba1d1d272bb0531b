// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Two edge-disjoint Hamiltonian cycles of a 2D torus by square swaps
 * (engine/ham_decomp.h): the decomposition gossip-ham2 uses on a torus with
 * an odd side and gossip-ham1 falls back to on odd x odd tori. Meyer and
 * Sibeyn, "Gossiping Large Packets on Full-Port Tori" (Section 2) allow any
 * such decomposition: "one might use the scheme in [3] for the construction
 * of two edge-disjoint Hamiltonian cycles on any two-dimensional torus", [3]
 * being Foregger, "Hamiltonian Decomposition of Products of Cycles". This is
 * not Foregger's construction, it is the classical switching argument.
 *
 * Start from rows (colour A) and columns (colour B); a unit square whose
 * horizontal edges have one colour and vertical edges the other can swap
 * them, which joins the two cycles its edges of each colour lie on. Swap
 * while that joins cycles of both colours, else take any swap that lowers
 * the total number of cycles; when none does, continue with a seeded random
 * walk (hd_search). Stop with one cycle per colour, or give up after 64
 * moves per node (the caller falls back to the partial cycles).
 * Deterministic: squares in row-major order, a fixed seed.
 */
#include <errno.h>
#include <stdlib.h>

#include "algorithms/engine/ham_decomp.h"

/* One decomposition: every edge's colour, and union-find scratch for both colours. */
struct ham_dec {
	const struct tc_shape *sh;
	int n1, n2;
	unsigned char *col; /* 2 * nodes: [2u] edge u -> right, [2u+1] edge u -> down; 0 = A, 1 = B */
	int *uf;	    /* 2 * nodes: colour A's forest, then colour B's */
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
static int hd_comps(const struct ham_dec *h, int c, int *uf)
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
static void hd_square(const struct ham_dec *h, int i, int j, int e[4])
{
	e[0] = 2 * (i * h->n2 + j);
	e[1] = 2 * (((i + 1) % h->n1) * h->n2 + j);
	e[2] = 2 * (i * h->n2 + j) + 1;
	e[3] = 2 * (i * h->n2 + (j + 1) % h->n2) + 1;
}

static int hd_alternating(const struct ham_dec *h, const int e[4])
{
	return h->col[e[0]] == h->col[e[1]] && h->col[e[2]] == h->col[e[3]] && h->col[e[0]] != h->col[e[2]];
}

static void hd_swap(struct ham_dec *h, const int e[4])
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
static int hd_search(struct ham_dec *h)
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

static int hd_decompose(struct ham_dec *h)
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
static void hd_colours(const struct ham_dec *h, int node, int *c)
{
	int i = node / h->n2, j = node % h->n2;

	c[0] = h->col[2 * node + 1];					/* down: edge (i,j)-(i+1,j) */
	c[1] = h->col[2 * (((i - 1 + h->n1) % h->n1) * h->n2 + j) + 1];	/* up: edge (i-1,j)-(i,j) */
	c[2] = h->col[2 * node];					/* right: edge (i,j)-(i,j+1) */
	c[3] = h->col[2 * (i * h->n2 + (j - 1 + h->n2) % h->n2)];	/* left: edge (i,j-1)-(i,j) */
}

/* The rule of a decomposition: leave by the other port of the in-port's colour. */
static int hd_rule(const void *ctx, int node, int in_port)
{
	int c[4];

	hd_colours(ctx, node, c);
	for (int q = 0; q < 4; q++)
		if (q != in_port && c[q] == c[in_port])
			return q;
	return -1;
}

/* One packet per PU on a decomposition: PU (i, j) injects into colour (i + j) & 1. */
int tc_ham_decomp_inject(const void *ctx, int node)
{
	const struct ham_dec *h = ctx;
	int c[4], want = (node / h->n2 + node % h->n2) & 1;

	hd_colours(h, node, c);
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
int tc_ham_decomp_gossip(const struct tc_shape *shape, struct tc_gossip_spec *spec, struct tc_sched **out,
			 const char **why)
{
	const struct tc_gossip_run r = { .out = out };

	return tc_ham_decomp_run(shape, spec, &r, why);
}

int tc_ham_decomp_run(const struct tc_shape *shape, struct tc_gossip_spec *spec, const struct tc_gossip_run *r,
		      const char **why)
{
	struct ham_dec h = { .sh = shape, .n1 = shape->dims[0], .n2 = shape->dims[1] };
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
		spec->rule = hd_rule;
		spec->ctx = &h;
		err = __tc_gossip_run(shape, spec, r, why);
	}
	free(h.col);
	free(h.uf);
	return err;
}
