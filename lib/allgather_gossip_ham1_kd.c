// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gossip-ham1 on d-D tori, d >= 3: the "reactor" partial Hamiltonian cycles
 * of 002_9f9f7262e49e6508.txt, Section 3 (Theorems 3 and 4). The 2D rules and
 * the algorithm's entry point live in allgather_gossip_ham1.c, which calls
 * __tc_gossip_ham1_kd() for d >= 3 once the shape passed the common checks.
 * See the comment there for the construction and its known limits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algos.h"
#include "allgather_gossip.h"

/* ---- d-D: the reactor cycles, traced into a table ---- */

struct ham1_kd {
	const struct tc_shape *sh;
	int *pair; /* nodes * 2 * ndims */
};

static int ham1_kd_rule(const void *ctx, int node, int in_port)
{
	const struct ham1_kd *x = ctx;

	return x->pair[node * 2 * x->sh->ndims + in_port];
}

/* The paper's zigzag(d, k) as a list of (1-based) paper dimensions; returns its length 2d. */
static int zigzag(int d, int k, int *mv)
{
	int n = 0;

	if (k == 1) {
		for (int r = 0; r < d; r++) {
			mv[n++] = 2;
			mv[n++] = 1;
		}
		return n;
	}
	mv[n++] = 2;
	mv[n++] = 1;
	for (int e = 2; e <= k + 1; e++) {
		mv[n++] = e;
		mv[n++] = 1;
	}
	for (int r = 0; r < d - k - 1; r++) {
		mv[n++] = 2;
		mv[n++] = 1;
	}
	return n;
}

/*
 * Walk the d cycles with paper dimension e (1-based) on physical dimension
 * perm[e - 1]; fill x->pair. 0, or -EOPNOTSUPP when the walk does not give d
 * closed, node-simple, edge-disjoint cycles on this shape.
 */
static int reactor_walk(struct ham1_kd *x, const int *perm)
{
	const struct tc_shape *sh = x->sh;
	const int d = sh->ndims, np = 2 * d, n = sh->nodes, n1 = sh->dims[perm[0]];
	int *in = malloc(n * sizeof(int)), *outp = malloc(n * sizeof(int));
	long laps = sh->dims[perm[1]] / d;
	int err = 0;

	if (!in || !outp) {
		free(in);
		free(outp);
		return -ENOMEM;
	}
	for (int e = 2; e < d; e++)
		laps *= sh->dims[perm[e]];
	for (int i = 0; i < n * np; i++)
		x->pair[i] = -1;
	for (int j = 0; j < d && !err; j++) {
		int c[TC_MAX_DIMS] = { 0 }, start, cur;

		for (int i = 0; i < n; i++)
			in[i] = outp[i] = -1;
		c[perm[1]] = j;
		start = cur = tc_shape_node(sh, c);
		for (long lap = 1; lap <= laps && !err; lap++) {
			int mv[4 * TC_MAX_DIMS], nm, k = 1, crossed = 0;
			long prod = sh->dims[perm[1]] / d;

			for (int kk = 2; kk <= d - 1; kk++) {
				if (kk > 2)
					prod *= sh->dims[perm[kk - 1]];
				if (lap % prod == 0)
					k = kk;
			}
			nm = zigzag(d, k, mv);
			for (int s = 0; !err; s++) {
				int dim = s < nm ? perm[mv[s] - 1] : perm[0], nxt;
				int cc[TC_MAX_DIMS];

				if (s >= nm && crossed)
					break;
				if (s > n1 + nm) {
					err = -EOPNOTSUPP;
					break;
				}
				tc_shape_coords(sh, cur, cc);
				if (s >= nm - 1 && dim == perm[0] && cc[dim] == n1 - 1)
					crossed = 1;
				if (outp[cur] >= 0) {
					err = -EOPNOTSUPP;
					break;
				}
				outp[cur] = 2 * dim;
				nxt = tc_shape_neighbor(sh, cur, 2 * dim);
				if (in[nxt] >= 0) {
					err = -EOPNOTSUPP;
					break;
				}
				in[nxt] = 2 * dim + 1;
				cur = nxt;
				if (s >= nm - 1 && crossed)
					break;
			}
		}
		if (!err && cur != start)
			err = -EOPNOTSUPP;
		for (int u = 0; u < n && !err; u++) {
			if ((in[u] < 0) != (outp[u] < 0)) {
				err = -EOPNOTSUPP;
				break;
			}
			if (in[u] < 0)
				continue;
			if (x->pair[u * np + in[u]] >= 0 || x->pair[u * np + outp[u]] >= 0) {
				err = -EOPNOTSUPP;	/* two cycles share a link */
				break;
			}
			x->pair[u * np + in[u]] = outp[u];
			x->pair[u * np + outp[u]] = in[u];
		}
	}
	free(in);
	free(outp);
	return err;
}

static int next_perm(int *a, int n)
{
	int i = n - 2, j = n - 1, t;

	while (i >= 0 && a[i] >= a[i + 1])
		i--;
	if (i < 0)
		return 0;
	while (a[j] <= a[i])
		j--;
	t = a[i];
	a[i] = a[j];
	a[j] = t;
	for (int l = i + 1, r = n - 1; l < r; l++, r--) {
		t = a[l];
		a[l] = a[r];
		a[r] = t;
	}
	return 1;
}

int __tc_gossip_ham1_kd(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const int d = shape->ndims;
	struct ham1_kd x = { .sh = shape };
	struct tc_gossip_spec spec = {
		.algo = "gossip-ham1",
		.cite = "002 Sec. 3, Theorems 3-4 (reactor partial Hamiltonian cycles, 1 packet)",
		.npackets = 1,
		.want_cycles = d,
		.rule = ham1_kd_rule,
		.ctx = &x,
	};
	int perm[TC_MAX_DIMS], best_rod = -1, err = -EOPNOTSUPP, tried = 0;
	const char *w = "gossip-ham1: the reactor cycles need all sides but one to be multiples of the dimension count";

	x.pair = malloc((size_t)shape->nodes * 2 * d * sizeof(int));
	if (!x.pair)
		return -ENOMEM;
	/*
	 * Try the rod (paper dimension 1) along the longest side first (fewer
	 * steps), every order of the other sides; the walk only closes when
	 * the sides line up (e.g. n2 | n3 in 3D: 6 and 9 never do).
	 */
	for (int i = 0; i < d; i++)
		if (shape->dims[i] > best_rod)
			best_rod = shape->dims[i];
	for (int rodsz = best_rod; rodsz > d && err; rodsz--) {
		for (int i = 0; i < d; i++)
			perm[i] = i;
		do {
			int ok = shape->dims[perm[0]] == rodsz;

			for (int e = 1; e < d; e++)
				ok &= shape->dims[perm[e]] % d == 0;
			if (!ok)
				continue;
			tried = 1;
			if (reactor_walk(&x, perm)) {
				w = "gossip-ham1: the reactor walk does not close into d disjoint cycles on this shape";
				continue;
			}
			err = __tc_gossip_build(shape, &spec, out, &w, NULL);
			if (err != -EOPNOTSUPP)
				break;
		} while (next_perm(perm, d));
	}
	free(x.pair);
	if (err == -EOPNOTSUPP && d >= 4 && tried)
		w = "gossip-ham1: d >= 4: the reactor cycles leave PUs with no neighbour on the cycle two indices away (no one-hop feeder)";
	if (err)
		*why = w;
	return err;
}
