// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gossip-ham1 on d-D tori, d >= 3: the "reactor" partial Hamiltonian
 * cycles of Meyer and Sibeyn, "Gossiping Large Packets on Full-Port Tori", Section 3 (Theorems 3 and 4: P/(2d) +
 * P/(2*n1) + 1 steps when n2..nd are multiples of d). The 2D rules and the
 * algorithm's entry point live in gossip_ham1.c, which calls
 * __tc_gossip_ham1_kd_run() for d >= 3 once the shape passed the common checks.
 *
 * Cycles. Cycle j starts at (0, j, 0, ..., 0); it is made of laps, each a
 * zigzag followed by moves in direction 1 until a wrap-around link is
 * crossed; lap i uses zigzag(d, k) for the highest k with
 * i mod (n2/d * n3 * ... * nk) = 0:
 *   zigzag(d, 1) = (2, 1) repeated d times
 *   zigzag(d, k) = (2, 1, 2, 1, 3, 1, ..., k+1, 1, then (2, 1) d-k-1 times).
 * The walk of each cycle is precomputed once into a per-node table of port
 * pairs (O(P) words, not the paper's O(d) arithmetic), and the rule is a
 * lookup in it. The rod (paper dimension 1) is the longest side whose
 * others are multiples of d and for which the walk closes; n1 = d is allowed
 * (no rods then). In 3D the paper's walk closes only when n2 divides n3: a
 * lap that changes plane moves 2 instead of 3 along dimension 2, so after
 * the n3 planes the walk stands n3 (mod n2) behind its start (4x6x9,
 * 5x9x12, 6x9x15 have no order where it closes).
 *
 * 3D plane changes by position. A lap of cycle j starts at a rod end
 * (0, y, z) with y + z = j (mod 3), and both zigzags add 3 to y + z, so
 * v = (y + z - j) mod g, g = gcd(n2, n3), runs through 0, 3, ..., g - 3
 * over and over. The lap is zigzag(3, 2) when v >= g - 3 * kpc, else
 * zigzag(3, 1): kpc plane changes in every g/3 laps, a function of the
 * node only (kpc = 1 with n2 | n3 is the paper's walk). Every column of the
 * zigzags stays a bijection (a lap's choice at column 2 is the same for
 * (y, z) and (y - 1, z + 1), the only two that could reach one node), so
 * the cycles stay node-simple; the three cycles use links between classes
 * (y + z) mod 3 = {c, c+1} for different c, so they stay edge-disjoint; and
 * each rod PU keeps its neighbours along dimensions 2 and 3 on the other
 * two cycles, so the feeders are as before. g/3 laps move by
 * T = (g - kpc, kpc) in (y, z), and the walk is one cycle when T generates
 * the (cyclic, order lcm(n2, n3)) group of moves that keep y + z mod g:
 * writing T = (kpc + m) * (-1, 1), m = 0 (mod n3), m = -g (mod n2), when
 * gcd(kpc + m, lcm(n2, n3)) = 1. Some order of n2, n3 and some kpc in
 * 1..g/3 meets that for every pair of multiples of 3 up to 120 (checked
 * by a script, not proved); e.g. 4x6x9 takes n2 = 9, n3 = 6, kpc = 1 (every lap
 * changes plane). kpc = 1 in one of the two orders suffices for sides up to
 * 18; the smallest pairs that need more are like 30 and 105 (the tests
 * force kpc = 2 on 5x9x9 through __tc_gossip_ham1_3d_walk()). The paper's walk is tried first for each rod, then these,
 * so the rod can be the longest eligible side where it could not before
 * (9x6x9: rod 9, 109 steps, was rod 6, 122). Of the 336 shapes n1 = 3..18,
 * n2 <= n3 multiples of 3 up to 18 (79 refused before), all 336 were built
 * and passed tc_verify (by a scratch program; the simulator ran on the ones
 * in the tests), each in floor(P/6 + P/(2*n1) + 1) steps for the longest
 * eligible rod n1 (3x3x3 10 .. 18x18x18 1135); 3D shapes are refused
 * (-EOPNOTSUPP) only when fewer than two sides are multiples of 3.
 *
 * Feeding. PUs at rod coordinates 0..d-1 (the zigzags) lie on two cycles
 * j - 1 and j and inject their packet into j (every cycle then carries P/d
 * packets); the other PUs (rod PUs) lie on one cycle. In a cross-section of
 * the rods the PU at (y2, ..., yd) lies on cycle (y2 + ... + yd) mod d up to
 * orientation, so its 2(d-1) free links lead to PUs on the cycles one above
 * and one below: for d = 3 those are both other cycles and the engine binds
 * two one-hop feeders per cycle (forward/backward switching). For d = 4 the
 * cycle two away has no neighbour, and the link budget is exact (2(d-1)
 * free links in, 2(d-1) streams wanted), so the rod PUs are fed through
 * relay segments: from every rod PU S of cycle c the segment steps to the
 * cycle below along paper dimensions 2, 3, ..., d and once more along 2,
 * N_k on cycle c - k and N_d = S' on c again. S's chosen packets run
 * S -> N_1 -> ... -> N_(d-1), S''s the other way; each inner PU keeps what
 * it receives and passes it on (a fixed in-port -> out-port table). Each
 * free link of a rod PU then carries exactly one stream in each direction
 * (the ends of a segment use the links along paper dimension 2 that the
 * inner PUs of other segments leave unused); the engine checks that no
 * link carries two. The engine chooses which end passes which packet, and
 * whether it holds it one step first (forward/backward switching; every
 * link carries one packet per step), so that the inner PU farthest from
 * the passing end has it by P/(2d) + P/(2*n1) + 1. PUs on two cycles j - 1
 * and j ("upper cycle" j) need d - 2 other cycles and have 2(d-2) free
 * links, which lead to PUs of upper cycle j - 1 and j + 1; for d = 4 one-hop
 * feeders suffice there. For d >= 5 they get segments of d - 1 links too:
 * from S of upper cycle c down through upper cycles c - 1, ..., c - (d-2)
 * to S' of upper cycle c + 1 (on c). Which free link a segment takes at
 * each hop comes from colouring the "down" links 1..d-2 so that no PU has
 * two of one colour leaving or arriving (d - 2 perfect matchings of a
 * regular bipartite graph): hop k takes colour k, the last hop colour 1.
 *
 * What it reaches (tests/unit/test_gossip.c, test_gossip3d.c): Theorem 3's
 * count P/6 + P/(2*n1) + 1 (rounded down where not whole) on every 3D
 * shape built, and exactly Theorem 4's count, P/8 + P/(2*n1) + 1, on
 * every 4D shape tried (n1 = 4..8, n2..n4 in {4, 8, 12}, P <= 3072; e.g.
 * 4x4x4x4 65, 5x4x4x4 73, 6x4x4x8 161, 8x4x4x4 97), with the rod on the
 * longest side; and on 5x5x5x5x5 (626 = P/10 + P/10 + 1; all its PUs are
 * zigzag PUs; building it takes a few seconds: P^2 = 9.8M sends) and
 * 6x5x5x5x5 (688 = floor(375 + 312.5 + 1), by hand).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/algos.h"
#include "algorithms/engine/gossip.h"

/* ---- d-D: the reactor cycles, traced into a table ---- */

struct ham1_kd {
	const struct tc_shape *sh;
	int *pair;	   /* nodes * 2 * ndims */
	int *cport;	   /* nodes * ndims: a port reactor cycle j leaves node by, or -1 */
	int *seg;	   /* relay segments for the engine: { m, N_0, ..., N_m } each */
	int nseg;
	size_t seglen;	   /* ints used in seg */
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

static int gcd(int a, int b)
{
	while (b) {
		int t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * The k of the zigzag(d, k) that lap number lap of cycle j takes, starting
 * at node cur (see reactor_walk for kpc).
 */
static int reactor_lap_k(const struct tc_shape *sh, const int *perm, int kpc, int j, int cur, long lap)
{
	const int d = sh->ndims;
	long prod = sh->dims[perm[1]] / d;
	int k = 1;

	if (kpc) {
		int g = gcd(sh->dims[perm[1]], sh->dims[perm[2]]), cc[TC_MAX_DIMS], v;

		tc_shape_coords(sh, cur, cc);
		v = ((cc[perm[1]] + cc[perm[2]] - j) % g + g) % g;
		return v >= g - 3 * kpc ? 2 : 1;
	}
	for (int kk = 2; kk <= d - 1; kk++) {
		if (kk > 2)
			prod *= sh->dims[perm[kk - 1]];
		if (lap % prod == 0)
			k = kk;
	}
	return k;
}

/*
 * One lap from *cur: the zigzag mv[0..nm-1], then moves along paper
 * dimension 1 until a wrap-around link is crossed; in[] and outp[] get the
 * ports by which the cycle enters and leaves each node. 0, or -EOPNOTSUPP
 * when the cycle meets itself or the lap does not close.
 */
static int reactor_lap(const struct tc_shape *sh, const int *perm, const int *mv, int nm, int *in, int *outp,
		       int *cur)
{
	const int n1 = sh->dims[perm[0]];
	int crossed = 0;

	for (int s = 0;; s++) {
		int dim = s < nm ? perm[mv[s] - 1] : perm[0], nxt;
		int cc[TC_MAX_DIMS];

		if (s >= nm && crossed)
			return 0;
		if (s > n1 + nm)
			return -EOPNOTSUPP;
		tc_shape_coords(sh, *cur, cc);
		if (s >= nm - 1 && dim == perm[0] && cc[dim] == n1 - 1)
			crossed = 1;
		if (outp[*cur] >= 0)
			return -EOPNOTSUPP;
		outp[*cur] = 2 * dim;
		nxt = tc_shape_neighbor(sh, *cur, 2 * dim);
		if (in[nxt] >= 0)
			return -EOPNOTSUPP;
		in[nxt] = 2 * dim + 1;
		*cur = nxt;
		if (s >= nm - 1 && crossed)
			return 0;
	}
}

/* Trace cycle j, laps laps from (0, j, 0, ..., 0), into in[] and outp[]; -EOPNOTSUPP when it does not close. */
static int reactor_cycle(const struct tc_shape *sh, const int *perm, int kpc, int j, long laps, int *in, int *outp)
{
	int c[TC_MAX_DIMS] = { 0 }, start, cur, err = 0;

	for (int i = 0; i < sh->nodes; i++)
		in[i] = outp[i] = -1;
	c[perm[1]] = j;
	start = cur = tc_shape_node(sh, c);
	for (long lap = 1; lap <= laps && !err; lap++) {
		int mv[4 * TC_MAX_DIMS], nm = zigzag(sh->ndims, reactor_lap_k(sh, perm, kpc, j, cur, lap), mv);

		err = reactor_lap(sh, perm, mv, nm, in, outp, &cur);
	}
	if (!err && cur != start)
		err = -EOPNOTSUPP;
	return err;
}

/* Record traced cycle j in x->cport and x->pair; -EOPNOTSUPP when it is not closed or shares a link. */
static int reactor_commit(struct ham1_kd *x, int j, const int *in, const int *outp)
{
	const int d = x->sh->ndims, np = 2 * d;

	for (int u = 0; u < x->sh->nodes; u++) {
		if ((in[u] < 0) != (outp[u] < 0))
			return -EOPNOTSUPP;
		if (in[u] < 0)
			continue;
		x->cport[u * d + j] = outp[u];
		if (x->pair[u * np + in[u]] >= 0 || x->pair[u * np + outp[u]] >= 0)
			return -EOPNOTSUPP;	/* two cycles share a link */
		x->pair[u * np + in[u]] = outp[u];
		x->pair[u * np + outp[u]] = in[u];
	}
	return 0;
}

/*
 * Walk the d cycles with paper dimension e (1-based) on physical dimension
 * perm[e - 1]; fill x->pair. kpc = 0: the paper's laps (lap i uses
 * zigzag(d, k) by i, as in the file comment). kpc > 0 (d = 3 only): the lap
 * of cycle j that starts at rod end (0, y, z) is a plane change,
 * zigzag(3, 2), when (y + z - j) mod g >= g - 3 * kpc, g = gcd(n2, n3), and
 * zigzag(3, 1) otherwise (kpc plane changes per g/3 laps; kpc = 1 is the
 * paper's walk when n2 | n3). 0, or -EOPNOTSUPP when the walk does not give
 * d closed, node-simple, edge-disjoint cycles on this shape.
 */
static int reactor_walk(struct ham1_kd *x, const int *perm, int kpc)
{
	const struct tc_shape *sh = x->sh;
	const int d = sh->ndims, n = sh->nodes;
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
	for (int i = 0; i < n * 2 * d; i++)
		x->pair[i] = -1;
	for (int i = 0; i < n * d; i++)
		x->cport[i] = -1;
	for (int j = 0; j < d && !err; j++) {
		err = reactor_cycle(sh, perm, kpc, j, laps, in, outp);
		if (!err)
			err = reactor_commit(x, j, in, outp);
	}
	free(in);
	free(outp);
	return err;
}

/*
 * A PU on two reactor cycles j - 1 and j (mod d) injects its packet into
 * cycle j: every cycle then carries the packets of as many PUs (P/d on the
 * shapes tried), where the first cycle would otherwise carry more than the
 * feeding links of its segments can pass by Theorem 4's count.
 */
/* The upper cycle j of a PU on exactly the two reactor cycles j - 1 and j (mod d), else -1. */
static int zig_cycle(const struct ham1_kd *x, int u)
{
	const int d = x->sh->ndims;
	int k = 0, c = -1;

	for (int j = 0; j < d; j++) {
		if (x->cport[u * d + j] < 0)
			continue;
		k++;
		if (x->cport[u * d + (j + d - 1) % d] >= 0)
			c = j;
	}
	return k == 2 ? c : -1;
}

static int ham1_kd_inject(const void *ctx, int node)
{
	const struct ham1_kd *x = ctx;
	int c = zig_cycle(x, node);

	return c < 0 ? -1 : x->cport[node * x->sh->ndims + c];
}

/* The cycle of a rod PU (on one cycle, which runs straight through it along paper dimension 1), else -1. */
static int rod_cycle(const struct ham1_kd *x, const int *perm, int u)
{
	const int d = x->sh->ndims;
	int c = -1;

	for (int j = 0; j < d; j++) {
		if (x->cport[u * d + j] < 0)
			continue;
		if (c >= 0)
			return -1;
		c = j;
	}
	if (c < 0 || x->pair[u * 2 * d + 2 * perm[0]] != 2 * perm[0] + 1)
		return -1;
	return c;
}

/* Kuhn's augmenting path from zigzag PU y over its uncoloured down links (zig_segments). */
static int zig_augment(int y, int w, const int *dv, const int *dc, int *ml, int *mr, int *vis, int stamp)
{
	for (int k = 0; k < w; k++) {
		int z = dv[y * w + k];

		if (dc[y * w + k] || vis[z] == stamp)
			continue;
		vis[z] = stamp;
		if (mr[z] < 0 || zig_augment(mr[z] / w, w, dv, dc, ml, mr, vis, stamp)) {
			mr[z] = y * w + k;
			ml[y] = y * w + k;
			return 1;
		}
	}
	return 0;
}

/*
 * d >= 5: relay segments for the zigzag PUs (see the file comment). The
 * links from a zigzag PU of upper cycle j to its neighbours of upper cycle
 * j - 1 that carry no cycle ("down" links) number d - 2 at every such PU,
 * and as many arrive at every one; colour them 1..d-2 so that no PU has two
 * down links of one colour leaving it or arriving at it (a regular bipartite
 * graph: d - 2 perfect matchings). The segment of a PU S of upper cycle c
 * follows colours 1, 2, ..., d-2 down (N_k has upper cycle c - k, off c)
 * and colour 1 once more to S', whose lower cycle is c. Appends to x->seg;
 * 0 (no segments when the PUs do not have that form), or -ENOMEM.
 */
static int zig_segments(struct ham1_kd *x, const int *perm)
{
	const struct tc_shape *sh = x->sh;
	const int d = sh->ndims, n = sh->nodes, np = 2 * d, w = d - 2;
	int *dv = malloc((size_t)n * w * sizeof(int)), *dc = calloc((size_t)n * w, sizeof(int));
	int *ml = malloc(n * sizeof(int)), *mr = malloc(n * sizeof(int)), *vis = calloc(n, sizeof(int));
	int *indeg = calloc(n, sizeof(int)), err = -ENOMEM, ok = 1, stamp = 0;
	size_t base = x->seglen;
	int nbase = x->nseg;

	if (!dv || !dc || !ml || !mr || !vis || !indeg)
		goto out;
	err = 0;
	for (int y = 0; y < n && ok; y++) {
		int c = zig_cycle(x, y), k = 0;

		if (c < 0)
			continue;
		for (int e = 1; e < d; e++) {
			for (int dir = 0; dir < 2; dir++) {
				int q = 2 * perm[e] + dir, z = tc_shape_neighbor(sh, y, q);

				if (zig_cycle(x, z) != (c + d - 1) % d || x->pair[y * np + q] >= 0 ||
				    x->pair[z * np + (q ^ 1)] >= 0)
					continue;
				if (k == w) {
					ok = 0;
					break;
				}
				dv[y * w + k++] = z;
				indeg[z]++;
			}
		}
		ok &= k == w;
	}
	for (int z = 0; z < n && ok; z++)
		ok = zig_cycle(x, z) < 0 || indeg[z] == w;
	for (int col = 1; col <= w && ok; col++) {
		for (int z = 0; z < n; z++)
			mr[z] = -1;
		for (int y = 0; y < n && ok; y++) {
			if (zig_cycle(x, y) < 0)
				continue;
			ml[y] = -1;
			ok = zig_augment(y, w, dv, dc, ml, mr, vis, ++stamp);
		}
		for (int y = 0; y < n && ok; y++)
			if (zig_cycle(x, y) >= 0)
				dc[ml[y]] = col;
	}
	for (int s = 0; s < n && ok; s++) {
		int *sg = x->seg + x->seglen, cur = s;

		if (zig_cycle(x, s) < 0)
			continue;
		sg[0] = d - 1;
		sg[1] = s;
		for (int h = 1; h <= d - 1; h++) {
			int want = h < d - 1 ? h : 1, nx = -1;

			for (int k = 0; k < w; k++)
				if (dc[cur * w + k] == want)
					nx = dv[cur * w + k];
			sg[1 + h] = cur = nx;
		}
		x->nseg++;
		x->seglen += d + 1;
	}
	if (!ok) { /* not of that form: no zigzag segments */
		x->nseg = nbase;
		x->seglen = base;
	}
out:
	free(dv);
	free(dc);
	free(ml);
	free(mr);
	free(vis);
	free(indeg);
	return err;
}

/*
 * The relay segments of the rods (d >= 4, see the file comment): from every
 * rod PU S of cycle c, step to the neighbour on cycle c - 1 along paper
 * dimension 2, then to cycle c - 2 along dimension 3, ..., to cycle
 * c - (d - 1) along dimension d, and once more along dimension 2 to S', back
 * on cycle c. A segment is kept only if its PUs are rod PUs on the cycles
 * said, its links carry no cycle and no kept segment uses them; the PUs
 * left over (outside the rods) are fed by one-hop feeders. 0 or -ENOMEM.
 */
static int reactor_segments(struct ham1_kd *x, const int *perm)
{
	const struct tc_shape *sh = x->sh;
	const int d = sh->ndims, n = sh->nodes, np = 2 * d;
	unsigned char *busy = calloc((size_t)n * np, 1);

	free(x->seg);
	x->nseg = 0;
	x->seglen = 0;
	x->seg = malloc((size_t)n * (d + 2) * sizeof(int));
	if (!x->seg || !busy) {
		free(busy);
		return -ENOMEM;
	}
	for (int s = 0; s < n; s++) {
		int c = rod_cycle(x, perm, s), cur = s, ok = c >= 0;
		int *w = x->seg + x->seglen, pt[TC_MAX_DIMS + 1];

		w[0] = d;
		w[1] = s;
		for (int h = 1; h <= d && ok; h++) {
			int dim = perm[h < d ? h : 1], want = ((c - h) % d + d) % d, nx = -1;

			for (int dir = 0; dir < 2; dir++) {
				int v = tc_shape_neighbor(sh, cur, 2 * dim + dir);

				if (rod_cycle(x, perm, v) == want && x->pair[cur * np + 2 * dim + dir] < 0 &&
				    x->pair[v * np + (2 * dim + (dir ^ 1))] < 0) {
					nx = v;
					pt[h - 1] = 2 * dim + dir;
				}
			}
			ok = nx >= 0;
			w[1 + h] = cur = nx;
		}
		/* forward links N_i -> N_i+1 (i < d-1), backward N_i+1 -> N_i (i >= 1) */
		for (int i = 0; i < d - 1 && ok; i++)
			ok = !busy[w[1 + i] * np + pt[i]] && !busy[w[3 + i] * np + (pt[i + 1] ^ 1)];
		if (!ok)
			continue;
		for (int i = 0; i < d - 1; i++)
			busy[w[1 + i] * np + pt[i]] = busy[w[3 + i] * np + (pt[i + 1] ^ 1)] = 1;
		x->nseg++;
		x->seglen += d + 2;
	}
	free(busy);
	return d >= 5 ? zig_segments(x, perm) : 0;
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

/*
 * One rod and side order (perm) and kpc (reactor_walk): walk, segments
 * (d >= 4), build; forced: the reason names this one walk.
 */
static int ham1_kd_try(struct ham1_kd *x, struct tc_gossip_spec *spec, const int *perm, int kpc, int forced,
		       const struct tc_gossip_run *r, const char **w)
{
	int err;

	if (reactor_walk(x, perm, kpc)) {
		if (forced)
			*w = "gossip-ham1: this reactor walk (rod, side order, kpc) makes no 3 closed, disjoint cycles";
		else
			*w = "gossip-ham1: the reactor walk closes for no choice of rod, side order and plane changes";
		return -EOPNOTSUPP;
	}
	if (x->sh->ndims >= 4) {
		err = reactor_segments(x, perm);
		if (err)
			return err;
		spec->seg = x->seg;
		spec->nseg = x->nseg;
	}
	return __tc_gossip_run(x->sh, spec, r, w);
}

/*
 * fperm NULL: search rods, side orders and kpc (below). Else (tests, 3D
 * only) build with paper dimension e on physical dimension fperm[e - 1]
 * and kpc = fkpc (0: the paper's laps).
 */
static int ham1_kd(const struct tc_shape *shape, const struct tc_gossip_run *r, const char **why, const int *fperm,
		   int fkpc)
{
	const int d = shape->ndims;
	struct ham1_kd x = { .sh = shape };
	struct tc_gossip_spec spec = {
		.algo = "gossip-ham1",
		.cite = "Meyer and Sibeyn, Sec. 3, Theorems 3-4 (reactor partial Hamiltonian cycles, 1 packet)",
		.npackets = 1,
		.want_cycles = d,
		.rule = ham1_kd_rule,
		.ctx = &x,
		.inject = ham1_kd_inject,
	};
	int perm[TC_MAX_DIMS], best_rod = -1, err = -EOPNOTSUPP;
	const char *w = "gossip-ham1: the reactor cycles need all sides but one to be multiples of the dimension count";

	if (fperm) {
		int seen = 0;

		for (int e = 0; e < d && d == 3; e++)
			if (fperm[e] >= 0 && fperm[e] < d)
				seen |= 1 << fperm[e];
		if (d != 3 || seen != 7 || shape->dims[fperm[1]] % 3 || shape->dims[fperm[2]] % 3 || fkpc < 0 ||
		    fkpc > gcd(shape->dims[fperm[1]], shape->dims[fperm[2]]) / 3) {
			*why = "gossip-ham1: a forced walk needs 3D, a permutation, 3 | n2, n3, 0 <= kpc <= gcd(n2, n3)/3";
			return -EINVAL;
		}
	}
	x.pair = malloc((size_t)shape->nodes * 2 * d * sizeof(int));
	x.cport = malloc((size_t)shape->nodes * d * sizeof(int));
	if (!x.pair || !x.cport) {
		free(x.pair);
		free(x.cport);
		return -ENOMEM;
	}
	if (fperm) {
		err = ham1_kd_try(&x, &spec, fperm, fkpc, 1, r, &w);
		goto out;
	}
	/*
	 * Try the rod (paper dimension 1) along the longest side first (fewer
	 * steps), every order of the other sides, with the paper's laps; they
	 * only close when the sides line up (n2 | n3 in 3D: 6 and 9 never do).
	 * Then, in 3D, the same rod with kpc = 1..g/3 plane changes per g/3
	 * laps (reactor_walk), which closes where n2 and n3 do not divide.
	 */
	for (int i = 0; i < d; i++)
		if (shape->dims[i] > best_rod)
			best_rod = shape->dims[i];
	for (int rodsz = best_rod; rodsz >= d && err == -EOPNOTSUPP; rodsz--) {
		for (int pass = 0; pass < (d == 3 ? 2 : 1) && err == -EOPNOTSUPP; pass++) {
			for (int i = 0; i < d; i++)
				perm[i] = i;
			do {
				int ok = shape->dims[perm[0]] == rodsz, kmax = 0;

				for (int e = 1; e < d; e++)
					ok &= shape->dims[perm[e]] % d == 0;
				if (!ok)
					continue;
				if (pass)
					kmax = gcd(shape->dims[perm[1]], shape->dims[perm[2]]) / 3;
				for (int kpc = pass; kpc <= kmax && err == -EOPNOTSUPP; kpc++) {
					if (kpc == 1 && shape->dims[perm[2]] % shape->dims[perm[1]] == 0)
						continue; /* the paper's walk, tried in pass 0 */
					err = ham1_kd_try(&x, &spec, perm, kpc, 0, r, &w);
				}
				if (err != -EOPNOTSUPP)
					break;
			} while (next_perm(perm, d));
		}
	}
out:
	if (err)
		*why = w;
	free(x.pair);
	free(x.cport);
	free(x.seg);
	return err;
}

int __tc_gossip_ham1_kd_run(const struct tc_shape *shape, const struct tc_gossip_run *r, const char **why)
{
	return ham1_kd(shape, r, why, NULL, 0);
}

int __tc_gossip_ham1_kd_info(const struct tc_shape *shape, struct tc_sched **out, const char **why,
			     struct tc_gossip_info *info)
{
	const struct tc_gossip_run r = { .out = out, .info = info };

	return ham1_kd(shape, &r, why, NULL, 0);
}

int __tc_gossip_ham1_3d_walk(const struct tc_shape *shape, const int *perm, int kpc, struct tc_sched **out,
			     const char **why, struct tc_gossip_info *info)
{
	const struct tc_gossip_run r = { .out = out, .info = info };

	return ham1_kd(shape, &r, why, perm, kpc);
}
