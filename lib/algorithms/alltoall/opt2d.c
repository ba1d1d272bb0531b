// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * opt2d: complete exchange on any 2D r x c torus or mesh (and any ring) with
 * one-hop messages along shortest paths in floor(r/2) + floor(c/2) steps (the
 * diameter; on a mesh (r-1) + (c-1)). On every torus it reaches the lower
 * bound ceil(max(c*floor(r^2/4), r*floor(c^2/4)) / 2) blocks of critical-path
 * transmission (Liu et al., All-Port Tori, Lemma 1, generalised to any
 * parity; cost.c derives the same from the bisection), where padding costs
 * 1.3x to 4.3x.
 *
 * A block's route is a timetable: for each of the S steps, a hop (+x, -x, +y,
 * -y) or a wait, with |a| x-hops and |b| y-hops for offset (a, b) in the
 * directions of a shortest path (either way round for a tie, half an even
 * ring). On a torus every node sees the same offsets, so the timetable is
 * chosen per offset and per origin class (the origin's parity on each even
 * side). When every link of a dimension carries the same load in a step, the
 * lock-step cost (sum over steps of the busiest link's load) is the critical
 * path; the construction makes it so, and then balances the steps:
 *
 * Units. An offset (a, b) and its antipode (-a, -b) share one timetable, the
 * same for every origin class. At a step where it has an x-hop, the blocks of
 * (a, b) from all origins are on all nodes, one each, and go the same way, and
 * their antipodes go the other way: every +x and every -x link carries one
 * block (every y-link for a y-hop). Ties keep this: (r/2, b) and (r/2, -b) go
 * opposite ways from one origin and swap ways with its x-parity, so that the
 * + goers of the pair leave nodes of both parities (likewise (a, c/2) with the
 * y-parity). The self-antipodal ties of an even x even torus, (r/2, 0),
 * (0, c/2) and (r/2, c/2), form one unit laid out as (r/2, c/2): (r/2, 0)
 * takes its x-steps, going + from even origins, (r/2, c/2) from odd ones, and
 * (0, c/2) its y-steps likewise. A step's loads are then two numbers, x(t) on
 * every x-link and y(t) on every y-link, the cost is the sum over steps of
 * max(x(t), y(t)), and the bound is met when the loads of the dimension with
 * the larger total are never below the other's (r = c: equal).
 *
 * The ring part. On an even x odd torus the self-antipodal tie (n/2, 0) of the
 * even side n is alone: going + from even and - from odd origins, it loads
 * one parity class of links per step. The n - 1 offsets along that side (the
 * other coordinate 0) are therefore timetabled as a ring on their own, with a
 * timetable per origin parity, by a construction at the ring's bound
 * ceil((n/2)^2 / 2) (r_build: offset floor(n/4) hops from odd and from even
 * origins in interleaved steps that load the parity the tie leaves free); its
 * per-step maximum is added to every link of that dimension. The other rows
 * pair up into units whose share of the bound is whole, so the torus meets
 * the bound when both parts meet theirs.
 *
 * Search. Units start x first (x-hops in steps 1..|a|, y-hops in the last |b|)
 * when |a| > |b| or (|a| = |b| and the signs agree), else y first: exact on
 * odd x odd tori with r = c (x and y loads equal step by step by the
 * (a,b) <-> (b,a) symmetry). Then simulated annealing on the units' timetables
 * (move a hop to another step, or swap an x- and a y-hop: each move changes
 * two steps' loads), energy the cost weighted against the sum of squared
 * loads. Deterministic (fixed seeds), it stops at the bound; further rounds
 * from other seeds if a round misses (on 2..32 the first round always meets
 * it, 18 shapes need no move at all). 2x2 is the one exception to one-hop:
 * its diagonal needs two one-hop steps (critical path 2, bound 1), so it goes
 * in one step as a two-hop message.
 *
 * Measured (tests/unit/test_opt2d_bound; make check-opt2d-sweep for all of
 * them): all 961 tori 2x2..32x32 at the bound, verified. The timetables take
 * at most 1.3 ms (32x32; 0.15 s for all 961); the build is writing the
 * schedule, at most 0.5 CPU s (32x32, 1.7e7 block hops).
 * Meshes (and partly wrapping shapes) run the same kind of annealing on every
 * block's own timetable against the real per-link loads (o2_block_search):
 * against cost.c's mesh bisection bound, lines reach it, 5x7 1.05, 8x8 1.07,
 * 6x10 1.03 (padding: 1.98, 1.38, 2.15).
 * An even ring is Algorithm AR (Liu et al., All-Port Tori, Sec. III); odd
 * rings are one-hop relays at the bound (units with no y-hops).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/algos.h"
#include "algorithms/engine/allport.h"
#include "core/cost.h"
#include "core/part.h"
#include "core/part_sym.h"

/*
 * A timetable: per route variable (origin class, offset) and step, the hop:
 * 0 none, else port + 1 (port 0 +x, 1 -x, 2 +y, 3 -y).
 */
struct o2 {
	const struct tc_shape *sh;
	int r, c, S, wrapx, wrapy;
	int ncx, ncy;	/* origin parity classes: 2 on an even torus side, else 1 */
	int wx, wy;	/* offsets per dimension: n on a torus, 2n-1 on a mesh */
	int nvars;
	uint8_t *seq;	/* per variable: S hops */
};

static int o2_var(const struct o2 *g, int cx, int cy, int ix, int iy)
{
	return ((cx * g->ncy + cy) * g->wx + ix) * g->wy + iy;
}

/* The starting timetable of variable v on a mesh (see the top comment; a
 * torus's comes from its units). */
static void o2_init_var(struct o2 *g, int cx, int cy, int ix, int iy)
{
	int v = o2_var(g, cx, cy, ix, iy);
	int a = g->wrapx ? (2 * ix > g->r ? ix - g->r : ix) : ix - (g->r - 1);
	int b = g->c < 2 ? 0 : g->wrapy ? (2 * iy > g->c ? iy - g->c : iy) : iy - (g->c - 1);
	uint8_t *q = &g->seq[(size_t)v * g->S];
	int px, py, xfirst;

	/* Ties (half an even ring): split by the origin's parity. */
	if (g->wrapx && !(g->r & 1) && 2 * a == g->r && ((cx + cy) & 1))
		a = -a;
	if (g->c > 1 && g->wrapy && !(g->c & 1) && 2 * b == g->c && ((cx + cy) & 1))
		b = -b;
	xfirst = abs(a) > abs(b) || (abs(a) == abs(b) && a * b > 0);
	px = a > 0 ? 1 : 2;
	py = b > 0 ? 3 : 4;
	memset(q, 0, g->S);
	for (int s = 0; s < g->S; s++) {
		if (xfirst) {
			if (s < abs(a))
				q[s] = (uint8_t)px;
			else if (s >= g->S - abs(b))
				q[s] = (uint8_t)py;
		} else {
			if (s < abs(b))
				q[s] = (uint8_t)py;
			else if (s >= g->S - abs(a))
				q[s] = (uint8_t)px;
		}
	}
}

static uint64_t o2_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A draw in [0, 1) for the annealing's acceptance test. */
static double o2_uniform(uint64_t *x)
{
	return (double)(o2_rand(x) >> 11) * 0x1.0p-53;
}

/* The units' annealing: weight of the cost against the sum of squared
 * loads, and the temperatures it starts and ends at. */
#define O2_W 16
#define O2_T0 2.0
#define O2_T1 0.05

/* A ring offset i of an n-ring as a signed shortest offset (a tie, n/2, is +). */
static int o2_signed(int i, int n)
{
	return 2 * i <= n ? i : i - n;
}

/*
 * Tori, units (see the top comment): a unit's timetable; each of its x-hops
 * puts one block on every x-link of the torus, each y-hop one on every y-link.
 */
struct o2u {
	int S, n;
	uint8_t *seq;	 /* per unit and step: 0 wait, 1 x-hop, 2 y-hop */
	int32_t *ld;	 /* per step: the load of every x-link, of every y-link */
	int32_t *fix;	 /* per step: the ring part's loads (its per-link maximum) */
};

static int32_t u_max(const int32_t *l)
{
	return l[0] > l[1] ? l[0] : l[1];
}

static int64_t u_energy(const int32_t *l)
{
	return O2_W * u_max(l) + (int64_t)l[0] * l[0] + (int64_t)l[1] * l[1];
}

static int64_t u_loads(struct o2u *u)
{
	int64_t f = 0;

	memcpy(u->ld, u->fix, 2 * u->S * sizeof(*u->ld));
	for (int v = 0; v < u->n; v++)
		for (int t = 0; t < u->S; t++)
			if (u->seq[(size_t)v * u->S + t])
				u->ld[2 * t + u->seq[(size_t)v * u->S + t] - 1]++;
	for (int t = 0; t < u->S; t++)
		f += u_max(&u->ld[2 * t]);
	return f;
}

/* Swap what timetable q does in steps t1 and t2 (twice: undone). */
static void u_move(struct o2u *u, uint8_t *q, int t1, int t2)
{
	uint8_t h1 = q[t1], h2 = q[t2];

	if (h1) {
		u->ld[2 * t1 + h1 - 1]--;
		u->ld[2 * t2 + h1 - 1]++;
	}
	if (h2) {
		u->ld[2 * t2 + h2 - 1]--;
		u->ld[2 * t1 + h2 - 1]++;
	}
	q[t1] = h2;
	q[t2] = h1;
}

/*
 * Simulated annealing on the units' timetables: move a hop to another step
 * (or swap an x- and a y-hop), energy the cost (sum over steps of the larger
 * load) weighted against the sum of squared loads. Deterministic (seed rng);
 * stops at target. Leaves the best timetables in u; returns their cost.
 */
static int64_t u_anneal(struct o2u *u, int64_t target, uint64_t rng, long budget, uint8_t *best)
{
	double T = O2_T0, decay = pow(O2_T1 / O2_T0, 1.0 / (double)budget);
	int64_t f = u_loads(u), bestf = f;

	memcpy(best, u->seq, (size_t)u->n * u->S);
	for (long it = 0; it < budget && bestf > target; it++, T *= decay) {
		int v = (int)(o2_rand(&rng) % (uint64_t)u->n);
		int t1 = (int)(o2_rand(&rng) % (uint64_t)u->S), t2 = (int)(o2_rand(&rng) % (uint64_t)u->S);
		uint8_t *q = &u->seq[(size_t)v * u->S];
		const int32_t *l1 = &u->ld[2 * t1], *l2 = &u->ld[2 * t2];
		int64_t e0, f0, d;

		if (q[t1] == q[t2])
			continue;
		e0 = u_energy(l1) + u_energy(l2);
		f0 = u_max(l1) + u_max(l2);
		u_move(u, q, t1, t2);
		d = u_energy(l1) + u_energy(l2) - e0;
		if (d > 0 && o2_uniform(&rng) >= exp(-(double)d / T)) {
			u_move(u, q, t1, t2);
			continue;
		}
		f += u_max(l1) + u_max(l2) - f0;
		if (f < bestf) {
			bestf = f;
			memcpy(best, u->seq, (size_t)u->n * u->S);
		}
	}
	memcpy(u->seq, best, (size_t)u->n * u->S);
	return u_loads(u);
}

/*
 * The ring part of an even x odd torus: the offsets along the even side n
 * (the other coordinate 0), each origin parity c its own timetable (var
 * c * n + i for offset i), loads per step and link class (direction * 2 +
 * the parity of the node the link leaves).
 */
struct o2r {
	int n, m, S;
	uint8_t *seq; /* per var and step: 1 a hop */
	int32_t *ld;  /* per step: 4 link classes */
};

/* 0: +, 1: -; a tie goes + from even origins. */
static int r_dir(const struct o2r *r, int c, int i)
{
	return i < r->m ? 0 : i > r->m ? 1 : c;
}

/* Add (d = 1) or remove (-1) the loads of var v in steps t0..t1: its k-th
 * hop leaves a node of parity c + k whichever way it goes. */
static void r_add(struct o2r *r, int v, int t0, int t1, int d)
{
	const int c = v / r->n, dir = r_dir(r, c, v % r->n);
	const uint8_t *q = &r->seq[(size_t)v * r->S];

	for (int t = 0, k = 0; t <= t1; t++) {
		if (!q[t])
			continue;
		if (t >= t0)
			r->ld[t * 4 + dir * 2 + ((c + k) & 1)] += d;
		k++;
	}
}

static int32_t r_max(const int32_t *l)
{
	int32_t m = 0;

	for (int k = 0; k < 4; k++)
		if (l[k] > m)
			m = l[k];
	return m;
}

/* Var v hops in steps t, t + 1, ..., t + len - 1 (and nowhere else). */
static void r_window(struct o2r *r, int v, int t, int len)
{
	memset(&r->seq[(size_t)v * r->S], 0, r->S);
	memset(&r->seq[(size_t)v * r->S + t], 1, len);
}

/*
 * The ring part, constructed at the ring's bound ceil(m^2 / 2). The tie goes
 * + from even origins in steps 0..m-1, its k-th hop leaving a node of parity
 * k, so it loads the + links of parity t in step t. Offset q = floor(m/2)
 * makes up the other parity: from odd origins it hops in the steps t < 2q
 * with t mod 4 in {0, 3}, from even origins in those with t mod 4 in {1, 2}
 * (its k-th hop leaves parity c + k = t + 1 either way). Every other offset
 * hops in the same steps from both origin parities (one block on every +
 * link), in the window where the load so far is least (longest first). The
 * - direction mirrors it: offset n - a from origin parity c as a from 1 - c.
 * Every step then loads all four link classes alike, but step m - 1 when m is
 * odd (the tie alone).
 */
static void r_build(struct o2r *r)
{
	const int n = r->n, m = r->m, q = m / 2, S = r->S;
	int32_t *prof = r->ld; /* per step: the load so far (r->ld's first S entries) */

	memset(r->seq, 0, (size_t)2 * n * S);
	memset(prof, 0, (size_t)S * sizeof(*prof));
	r_window(r, m, 0, m);		/* the tie, + from even origins */
	r_window(r, n + m, 0, m);	/* and - from odd origins */
	for (int c = 0; q && c < 2; c++) {
		uint8_t *p = &r->seq[(size_t)(c * n + q) * S], *mir = &r->seq[(size_t)((1 - c) * n + n - q) * S];

		memset(p, 0, S);
		for (int t = 0; t < 2 * q; t++)
			p[t] = ((t & 3) == 0 || (t & 3) == 3) == (c == 1);
		memcpy(mir, p, S);
	}
	for (int t = 0; t < m; t++)
		prof[t] = 1;
	for (int a = m - 1; a >= 1; a--) {
		int best = 0;
		int64_t bl = -1;

		if (a == q)
			continue;
		for (int t = 0; t + a <= S; t++) {
			int64_t l = 0;

			for (int k = t; k < t + a; k++)
				l += prof[k];
			if (bl < 0 || l < bl) {
				bl = l;
				best = t;
			}
		}
		for (int k = best; k < best + a; k++)
			prof[k]++;
		for (int c = 0; c < 2; c++) {
			r_window(r, c * n + a, best, a);
			r_window(r, c * n + n - a, best, a);
		}
	}
	memset(r->ld, 0, (size_t)S * 4 * sizeof(*r->ld));
	for (int v = 0; v < 2 * n; v++)
		r_add(r, v, 0, S - 1, 1);
}

/* Seeds of the annealing rounds (fixed: the construction is deterministic). */
static const uint64_t o2_seeds[] = { 0x9e3779b97f4a7c15ull, 0x5851f42d4c957f2dull, 0x2545f4914f6cdd1dull,
				     0xd1b54a32d192ed03ull, 0xbf58476d1ce4e5b9ull, 0x94d049bb133111ebull };
#define O2_NSEEDS ((int)(sizeof(o2_seeds) / sizeof(o2_seeds[0])))

/* The torus construction: units, ring part, and each offset's unit. */
struct o2t {
	struct o2u u;
	struct o2r r;
	int ringdim;  /* the ring part's dimension (the even side of an even x odd torus), or -1 */
	int32_t *uid; /* per offset ix * c + iy: its unit, -1 none (0, 0), -2 the ring part */
};

static void t_free(struct o2t *t)
{
	free(t->u.seq);
	free(t->u.ld);
	free(t->u.fix);
	free(t->r.seq);
	free(t->r.ld);
	free(t->uid);
}

/* Unit v for offset (a, b), starting x first when |a| > |b| or (|a| = |b| and
 * the signs agree), else y first: exact on odd x odd tori with r = c (x and y
 * loads equal step by step by the (a,b) <-> (b,a) symmetry). */
static void u_layout(struct o2u *u, int v, int a, int b)
{
	const int xa = abs(a), yb = abs(b), xfirst = xa > yb || (xa == yb && a * b > 0);
	uint8_t *q = &u->seq[(size_t)v * u->S];

	for (int t = 0; t < u->S; t++) {
		if (xfirst)
			q[t] = t < xa ? 1 : t >= u->S - yb ? 2 : 0;
		else
			q[t] = t < yb ? 2 : t >= u->S - xa ? 1 : 0;
	}
}

/* Offsets to units: an antipodal pair shares one; the self-antipodal offsets
 * (r/2, 0), (0, c/2), (r/2, c/2) of an even x even torus share one, laid out
 * as (r/2, c/2); an even x odd torus's offsets along its even side are the
 * ring part. */
static int t_setup(const struct o2 *g, struct o2t *t)
{
	const int R = g->r, C = g->c, S = g->S, nring = t->ringdim < 0 ? 0 : t->ringdim ? C : R;
	int super = -1;

	t->u.S = S;
	t->u.seq = malloc((size_t)R * C * S);
	t->u.ld = malloc((size_t)2 * S * sizeof(*t->u.ld));
	t->u.fix = calloc((size_t)2 * S, sizeof(*t->u.fix));
	t->uid = malloc((size_t)R * C * sizeof(*t->uid));
	t->r = (struct o2r){ .n = nring, .m = nring / 2, .S = S };
	t->r.seq = malloc((size_t)2 * nring * S + 1);
	t->r.ld = calloc((size_t)4 * S, sizeof(*t->r.ld));
	if (!t->u.seq || !t->u.ld || !t->u.fix || !t->uid || !t->r.seq || !t->r.ld)
		return -ENOMEM;
	for (int id = 0; id < R * C; id++) {
		const int ix = id / C, iy = id % C, jd = (R - ix) % R * C + (C - iy) % C;

		if (!id) {
			t->uid[id] = -1;
		} else if ((t->ringdim == 0 && !iy) || (t->ringdim == 1 && !ix)) {
			t->uid[id] = -2;
		} else if (jd < id || (jd == id && super >= 0)) {
			t->uid[id] = jd < id ? t->uid[jd] : super;
		} else {
			if (jd == id)
				super = t->u.n;
			t->uid[id] = t->u.n;
			u_layout(&t->u, t->u.n++, jd == id ? R / 2 : o2_signed(ix, R), jd == id ? C / 2 : o2_signed(iy, C));
		}
	}
	return 0;
}

/* The ring part (constructed), then the units, annealed towards the bound
 * (target); returns the cost reached or -ENOMEM. */
static int64_t t_search(struct o2t *t, int64_t target)
{
	struct o2u *u = &t->u;
	uint8_t *best = malloc((size_t)u->n * u->S + 1);
	const long budget = 100000 + 100L * u->n * u->S;
	int64_t f;

	if (!best)
		return -ENOMEM;
	if (t->ringdim >= 0) {
		r_build(&t->r);
		for (int s = 0; s < u->S; s++)
			u->fix[2 * s + t->ringdim] = r_max(&t->r.ld[4 * s]);
	}
	f = u_loads(u);
	for (int k = 0; k < O2_NSEEDS && f > target && u->n; k++)
		f = u_anneal(u, target, o2_seeds[k], budget, best);
	free(best);
	return f;
}

/* Does offset (a, b) go + in x from origin class cx? Ties by the pairing of
 * the top comment. */
static int o2_xplus(const struct o2 *g, int a, int b, int cx)
{
	if (2 * a != g->r)
		return a > 0;
	if (!b)
		return cx == 0;
	if (2 * b == g->c)
		return cx == 1;
	return !((cx + (b > 0)) & 1);
}

static int o2_yplus(const struct o2 *g, int a, int b, int cy)
{
	if (2 * b != g->c)
		return b > 0;
	if (!a)
		return cy == 0;
	if (2 * a == g->r)
		return cy == 1;
	return !((cy + (a > 0)) & 1);
}

/* Every variable's timetable from its unit's (or the ring part's). */
static void t_expand(struct o2 *g, const struct o2t *t)
{
	const int S = g->S;

	for (int v = 0; v < g->nvars; v++) {
		const int cl = v / (g->wx * g->wy), cx = cl / g->ncy, cy = cl % g->ncy;
		const int ix = v / g->wy % g->wx, iy = v % g->wy, id = ix * g->c + iy, w = t->uid[id];
		const int a = o2_signed(ix, g->r), b = o2_signed(iy, g->c);
		uint8_t *q = &g->seq[(size_t)v * S];

		memset(q, 0, S);
		if (w == -2) {
			const int c = t->ringdim ? cy : cx, i = t->ringdim ? iy : ix, dir = r_dir(&t->r, c, i);

			for (int s = 0; s < S; s++)
				if (t->r.seq[(size_t)(c * t->r.n + i) * S + s])
					q[s] = (uint8_t)(2 * t->ringdim + dir + 1);
			continue;
		}
		for (int s = 0; w >= 0 && s < S; s++) {
			const uint8_t h = t->u.seq[(size_t)w * S + s];

			if (h == 1 && a)
				q[s] = o2_xplus(g, a, b, cx) ? 1 : 2;
			else if (h == 2 && b)
				q[s] = o2_yplus(g, a, b, cy) ? 3 : 4;
		}
	}
}

/* A torus (or an odd ring): timetables from units; returns 0 or -ENOMEM. */
static int o2_torus(struct o2 *g)
{
	struct o2t t = { .ringdim = !(g->r & 1) && (g->c & 1) ? 0 : (g->r & 1) && g->c > 1 && !(g->c & 1) ? 1 : -1 };
	int64_t f;
	int err = t_setup(g, &t);

	if (!err) {
		f = t_search(&t, (int64_t)tc_lower_bound_blocks(g->sh, TC_ALLTOALL));
		err = f < 0 ? (int)f : 0;
	}
	if (!err)
		t_expand(g, &t);
	t_free(&t);
	return err;
}


/*
 * Meshes (and partly wrapping shapes): nodes do not all see the same offsets,
 * so the search works on every block's own timetable and the real per-link
 * loads (S * P * 4 counters, with per-step maxima kept incrementally). Same
 * moves and energy as on the torus, minus the ties.
 */
struct o2m {
	int P, S;
	const int *nb;
	uint8_t *seq;	 /* per block: S hops */
	int32_t *load;	 /* per step, link (node * 4 + port) */
	int32_t *mx, *at; /* per step: the largest load, and how many links carry it */
	int64_t sum_mx, sq;
};

static void m_rescan(struct o2m *m, int s)
{
	const int32_t *l = &m->load[(size_t)s * m->P * 4];

	m->sum_mx -= m->mx[s];
	m->mx[s] = 0;
	m->at[s] = 0;
	for (int i = 0; i < m->P * 4; i++) {
		if (l[i] > m->mx[s]) {
			m->mx[s] = l[i];
			m->at[s] = 1;
		} else if (l[i] == m->mx[s]) {
			m->at[s]++;
		}
	}
	m->sum_mx += m->mx[s];
}

static void m_add(struct o2m *m, int s, int link, int d)
{
	int32_t *l = &m->load[(size_t)s * m->P * 4 + link];
	int32_t old = *l;

	*l += d;
	m->sq += (int64_t)*l * *l - (int64_t)old * old;
	if (d > 0) {
		if (*l > m->mx[s]) {
			m->sum_mx += *l - m->mx[s];
			m->mx[s] = *l;
			m->at[s] = 1;
		} else if (*l == m->mx[s]) {
			m->at[s]++;
		}
	} else if (old == m->mx[s] && !--m->at[s]) {
		m_rescan(m, s);
	} else if (*l == m->mx[s]) {
		m->at[s]++;
	}
}

static void m_block(struct o2m *m, int o, const uint8_t *q, int d)
{
	int node = o;

	for (int s = 0; s < m->S; s++) {
		if (!q[s])
			continue;
		m_add(m, s, node * 4 + q[s] - 1, d);
		node = m->nb[node * 4 + q[s] - 1];
	}
}

static int o2_block_search(struct o2 *g, int P, const int *nb, const int32_t *var, uint8_t *bseq)
{
	const int S = g->S;
	struct o2m m = { .P = P, .S = S, .nb = nb, .seq = bseq };
	long budget = 200000 + 20L * P * P > 2000000 ? 2000000 : 200000 + 20L * P * P;
	uint64_t rng = 0x5851f42d4c957f2dull;
	double T = 1.0, decay = pow(0.05, 1.0 / (double)budget);
	uint8_t *best = malloc((size_t)P * P * S), tmp[256];
	int64_t cur, bestc;
	const int64_t W = 64;

	m.load = calloc((size_t)S * P * 4, sizeof(*m.load));
	m.mx = calloc(S, sizeof(*m.mx));
	m.at = calloc(S, sizeof(*m.at));
	if (!best || !m.load || !m.mx || !m.at || S > 256) {
		free(best);
		free(m.load);
		free(m.mx);
		free(m.at);
		return -ENOMEM;
	}
	for (int o = 0; o < P; o++)
		for (int t = 0; t < P; t++) {
			size_t id = (size_t)o * P + t;

			if (t == o) {
				memset(&bseq[id * S], 0, S);
				continue;
			}
			memcpy(&bseq[id * S], &g->seq[(size_t)var[id] * S], S);
			m_block(&m, o, &bseq[id * S], 1);
		}
	for (int s = 0; s < S; s++)
		m_rescan(&m, s);
	cur = W * m.sum_mx + m.sq;
	bestc = m.sum_mx;
	memcpy(best, bseq, (size_t)P * P * S);
	for (long it = 0; it < budget; it++, T *= decay) {
		size_t id = o2_rand(&rng) % ((uint64_t)P * P);
		int o = (int)(id / P), p = (int)(o2_rand(&rng) % (uint64_t)S), r = (int)(o2_rand(&rng) % (uint64_t)S);
		uint8_t *q = &bseq[id * S], x;
		int64_t c;

		if ((int)(id % P) == o || q[p] == q[r])
			continue;
		memcpy(tmp, q, S);
		x = tmp[p];
		tmp[p] = tmp[r];
		tmp[r] = x;
		m_block(&m, o, q, -1);
		m_block(&m, o, tmp, 1);
		c = W * m.sum_mx + m.sq;
		if (c <= cur || (double)(o2_rand(&rng) % 1000000) / 1e6 < exp(-(double)(c - cur) / T)) {
			memcpy(q, tmp, S);
			cur = c;
			if (m.sum_mx < bestc) {
				bestc = m.sum_mx;
				memcpy(best, bseq, (size_t)P * P * S);
			}
		} else {
			m_block(&m, o, tmp, -1);
			m_block(&m, o, q, 1);
		}
	}
	memcpy(bseq, best, (size_t)P * P * S);
	free(best);
	free(m.load);
	free(m.mx);
	free(m.at);
	return 0;
}

/* Every block (o * P + t, origin o, target t) on its way while the schedule is written. */
struct o2_blocks {
	int P;
	int32_t *var;	      /* per block: its route variable */
	int32_t *pos;	      /* per block: the node holding it */
	int *nb;	      /* per node and port (4): the neighbour, or -1 */
	int *coords;	      /* per node: x, y */
	struct tc_ap_vec *bk; /* per node and port: the blocks of this step's message */
	uint8_t *bseq;	      /* per block: its own timetable (meshes), or NULL */
};

static void o2_blocks_free(struct o2_blocks *b)
{
	for (int i = 0; b->bk && i < b->P * 4; i++)
		free(b->bk[i].v);
	free(b->bk);
	free(b->var);
	free(b->pos);
	free(b->nb);
	free(b->coords);
	free(b->bseq);
}

/* Neighbours and coordinates of every node, each block's variable, every block at its origin. */
static int o2_blocks_init(const struct o2 *g, struct o2_blocks *b)
{
	const int P = b->P, nd = g->sh->ndims;

	b->var = malloc((size_t)P * P * sizeof(*b->var));
	b->pos = malloc((size_t)P * P * sizeof(*b->pos));
	b->nb = malloc((size_t)P * 4 * sizeof(*b->nb));
	b->coords = malloc((size_t)P * 2 * sizeof(*b->coords));
	b->bk = calloc((size_t)P * 4, sizeof(*b->bk));
	if (!b->var || !b->pos || !b->nb || !b->coords || !b->bk)
		return -ENOMEM;
	for (int n = 0; n < P; n++) {
		int c[TC_MAX_DIMS];

		tc_shape_coords(g->sh, n, c);
		b->coords[2 * n] = c[0];
		b->coords[2 * n + 1] = nd > 1 ? c[1] : 0;
		for (int port = 0; port < 4; port++)
			b->nb[n * 4 + port] = port < 2 * nd ? tc_shape_neighbor(g->sh, n, port) : -1;
	}
	for (int o = 0; o < P; o++) {
		const int *oc = &b->coords[2 * o];

		for (int t = 0; t < P; t++) {
			const int *tc = &b->coords[2 * t];
			int ix = g->wrapx ? (tc[0] - oc[0] + g->r) % g->r : tc[0] - oc[0] + g->r - 1;
			int iy = g->c < 2 ? 0 : g->wrapy ? (tc[1] - oc[1] + g->c) % g->c : tc[1] - oc[1] + g->c - 1;

			b->var[(size_t)o * P + t] = o2_var(g, oc[0] % g->ncx, oc[1] % g->ncy, ix, iy);
			b->pos[(size_t)o * P + t] = o;
		}
	}
	return 0;
}

/* Move every block that hops in step st one link on, listing it for its link's message. */
static int o2_hops(const struct o2 *g, struct o2_blocks *b, int st)
{
	const int P = b->P;

	for (int o = 0; o < P; o++)
		for (int t = 0; t < P; t++) {
			size_t id = (size_t)o * P + t;
			int hop = t == o ? 0 : b->bseq ? b->bseq[id * g->S + st] : g->seq[(size_t)b->var[id] * g->S + st];
			struct tc_ap_vec *v;

			if (!hop)
				continue;
			v = &b->bk[(size_t)b->pos[id] * 4 + hop - 1];
			if (tc_grow((void **)&v->v, &v->cap, v->n + 1, sizeof(*v->v), 16))
				return -ENOMEM;
			v->v[v->n].a = o;
			v->v[v->n].b = t;
			v->n++;
			b->pos[id] = b->nb[(size_t)b->pos[id] * 4 + hop - 1];
			if (b->pos[id] < 0)
				return -EPROTO;
		}
	return 0;
}

/* One message per node and port that has blocks listed, and empty the lists. */
static int o2_messages(struct tc_sched *s, struct o2_blocks *b)
{
	int err;

	for (int n = 0; n < b->P; n++)
		for (int port = 0; port < 4; port++) {
			struct tc_ap_vec *v = &b->bk[(size_t)n * 4 + port];
			int8_t route[TC_MAX_DIMS] = { 0 };

			if (!v->n)
				continue;
			route[port / 2] = (port & 1) ? -1 : 1;
			err = tc_sched_msg(s, n, b->nb[n * 4 + port], route);
			if (err < 0)
				return err;
			for (uint32_t i = 0; i < v->n; i++) {
				err = tc_sched_blk(s, v->v[i].a, v->v[i].b);
				if (err)
					return err;
			}
			v->n = 0;
		}
	return 0;
}

static int o2_run(struct o2 *g, struct tc_sched *s)
{
	struct o2_blocks b = { .P = g->sh->nodes };
	const int P = b.P;
	int err = o2_blocks_init(g, &b);

	if (!err && (!g->wrapx || (g->c > 1 && !g->wrapy))) {
		b.bseq = malloc((size_t)P * P * g->S);
		err = b.bseq ? o2_block_search(g, P, b.nb, b.var, b.bseq) : -ENOMEM;
	}
	for (int st = 0; st < g->S && !err; st++) {
		err = tc_sched_step(s);
		if (err < 0)
			break;
		err = o2_hops(g, &b, st);
		if (!err)
			err = o2_messages(s, &b);
	}
	for (size_t id = 0; id < (size_t)P * P && !err; id++)
		if (b.pos[id] != (int32_t)(id % P))
			err = -EPROTO;
	o2_blocks_free(&b);
	return err;
}

static void o2_free(struct o2 *g)
{
	free(g->seq);
}

/* Dimensions, variables and starting timetables of a 2-D (or 1-D: c = 1) shape. */
static int o2_setup(struct o2 *g, int r, int c, int wrapx, int wrapy)
{
	g->r = r;
	g->c = c;
	g->wrapx = wrapx;
	g->wrapy = c > 1 && wrapy;
	g->S = (wrapx ? r / 2 : r - 1) + (c > 1 ? (g->wrapy ? c / 2 : c - 1) : 0);
	g->ncx = wrapx && !(r & 1) ? 2 : 1;
	g->ncy = c > 1 && g->wrapy && !(c & 1) ? 2 : 1;
	g->wx = wrapx ? r : 2 * r - 1;
	g->wy = c < 2 ? 1 : g->wrapy ? c : 2 * c - 1;
	g->nvars = g->ncx * g->ncy * g->wx * g->wy;
	g->seq = malloc((size_t)g->nvars * g->S);
	if (!g->seq)
		return -ENOMEM;
	for (int cx = 0; cx < g->ncx; cx++)
		for (int cy = 0; cy < g->ncy; cy++)
			for (int ix = 0; ix < g->wx; ix++)
				for (int iy = 0; iy < g->wy; iy++)
					o2_init_var(g, cx, cy, ix, iy);
	return 0;
}

/*
 * 2x2: every one-hop timetable takes two steps for the diagonal, so the
 * critical path is 2 blocks against a bound of 1; instead one step in which
 * every node sends its x-neighbour's block on -x, its y-neighbour's on -y and
 * the diagonal's on +x then +y (a two-hop message through the x-neighbour,
 * whose +y link nothing else uses): every directed link carries one block.
 */
static int o2_build_2x2(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	static const int8_t routes[3][TC_MAX_DIMS] = { { -1, 0 }, { 0, -1 }, { 1, 1 } };
	struct tc_sched *s = tc_sched_new(shape, TC_ALLTOALL, "opt2d",
					  "one step on 2x2 at the bisection bound (Liu et al., All-Port Tori, Lemma 1)",
					  TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST);
	int err = s ? tc_sched_step(s) : -ENOMEM;

	for (int n = 0; n < 4 && err >= 0; n++)
		for (int k = 0; k < 3 && err >= 0; k++) {
			int dst = tc_shape_walk(shape, n, routes[k]);

			err = tc_sched_msg(s, n, dst, routes[k]);
			if (err >= 0)
				err = tc_sched_blk(s, n, dst);
		}
	return tc_sched_done(s, err, out, why, "opt2d: internal error building the 2x2 schedule");
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct o2 g = { .sh = shape };
	struct tc_sched *s;
	int err;

	if (shape->ndims > 2) {
		*why = "opt2d: rings and 2-D shapes only; use allport-kd or pad for 3-D and up";
		return -EOPNOTSUPP;
	}
	if (shape->one_port) {
		*why = "opt2d: all-port algorithm; the one-port family handles one-port shapes";
		return -EOPNOTSUPP;
	}
	if (shape->ndims == 1 && (shape->wrap_mask & 1) && !(shape->dims[0] & 1)) {
		/* An even ring: AR reaches the bound. */
		err = tc_ar_build_ring(shape, out, why);
		if (!err) {
			(*out)->algo = "opt2d";
			(*out)->cite = "Liu et al., All-Port Tori, Sec. III-A (Algorithm AR) for even rings";
		}
		return err;
	}
	if (shape->ndims == 2 && shape->wrap_mask == 3 && shape->dims[0] == 2 && shape->dims[1] == 2)
		return o2_build_2x2(shape, out, why);
	err = o2_setup(&g, shape->dims[0], shape->ndims > 1 ? shape->dims[1] : 1, shape->wrap_mask & 1,
		       shape->ndims > 1 && (shape->wrap_mask & 2));
	if (!err && g.wrapx && (g.c < 2 || g.wrapy))
		err = o2_torus(&g);
	if (err) {
		o2_free(&g);
		return err;
	}
	s = tc_sched_new(shape, TC_ALLTOALL, "opt2d",
			 "one-hop shortest-path timetable reaching the bisection bound (Liu et al., All-Port Tori, Lemma 1, generalised to any parity)",
			 TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST | TC_CLAIM_ONE_HOP);
	if (!s) {
		o2_free(&g);
		return -ENOMEM;
	}
	err = o2_run(&g, s);
	o2_free(&g);
	return tc_sched_done(s, err, out, why, "opt2d: internal error building the schedule");
}

/*
 * One node's part on a torus (or an odd ring). A block's hops are its
 * variable's timetable (origin class, offset), so the blocks node n sends in
 * step st are, for every variable that hops in st, the one whose origin is
 * n minus the variable's displacement before st, if that origin is of the
 * variable's class; what n receives, likewise with the displacement after
 * st. The timetables (the search) and, per variable and step, the hops made
 * before it are kept once per shape; a node's part then walks the
 * variables once (ncx * ncy * P * S, its traffic times a small factor), and
 * one message of a peer (the local check) one step of them.
 */
struct o2_shape {
	struct tc_shape sh;
	struct o2 g;
	uint16_t *pre; /* per variable and step: x-hops (low byte) and y-hops made before it */
	uint8_t *sgn;  /* per variable: 1 its x-hops go -, 2 its y-hops go - */
	/* per step st and port: the variables that hop there, hops[first[4st+port] .. first[4st+port+1]) */
	uint32_t *first, *hops;
	int err;
	uint64_t used;
};

#define O2_CACHE 4
static pthread_mutex_t o2_lock = PTHREAD_MUTEX_INITIALIZER;
static struct o2_shape o2_cache[O2_CACHE]; /* protected by o2_lock */
static uint64_t o2_clock;		    /* protected by o2_lock */

static int o2_prefix(struct o2_shape *e)
{
	const struct o2 *g = &e->g;

	e->pre = malloc((size_t)g->nvars * g->S * sizeof(*e->pre) + 1);
	e->sgn = calloc((size_t)g->nvars + 1, 1);
	if (!e->pre || !e->sgn)
		return -ENOMEM;
	e->first = calloc((size_t)4 * g->S + 2, sizeof(*e->first));
	if (!e->first)
		return -ENOMEM;
	for (size_t i = 0; i < (size_t)g->nvars * g->S; i++)
		if (g->seq[i])
			e->first[i % g->S * 4 + g->seq[i] - 1 + 2]++;
	for (int k = 0; k < 4 * g->S; k++)
		e->first[k + 2] += e->first[k + 1];
	e->hops = malloc((size_t)e->first[4 * g->S + 1] * sizeof(*e->hops) + 1);
	if (!e->hops)
		return -ENOMEM;
	for (int v = 0; v < g->nvars; v++) {
		const uint8_t *q = &g->seq[(size_t)v * g->S];
		uint16_t *w = &e->pre[(size_t)v * g->S];
		int x = 0, y = 0;

		for (int st = 0; st < g->S; st++)
			if (q[st])
				e->hops[e->first[st * 4 + q[st] - 1 + 1]++] = (uint32_t)v;

		for (int st = 0; st < g->S; st++) {
			w[st] = (uint16_t)(x | y << 8);
			x += q[st] == 1 || q[st] == 2;
			y += q[st] == 3 || q[st] == 4;
			if (q[st] == 2)
				e->sgn[v] |= 1;
			if (q[st] == 4)
				e->sgn[v] |= 2;
		}
	}
	return 0;
}

/* The timetables of torus sh, built once; o2_lock held. */
static struct o2_shape *o2_get(const struct tc_shape *sh)
{
	struct o2_shape *e, *victim = &o2_cache[0];

	for (int i = 0; i < O2_CACHE; i++) {
		e = &o2_cache[i];
		if (e->used && tc_shape_equal(&e->sh, sh)) {
			e->used = ++o2_clock;
			return e;
		}
		if (e->used < victim->used)
			victim = e;
	}
	e = victim;
	o2_free(&e->g);
	free(e->pre);
	free(e->sgn);
	free(e->first);
	free(e->hops);
	memset(e, 0, sizeof(*e));
	e->sh = *sh;
	e->g.sh = &e->sh;
	e->used = ++o2_clock;
	e->err = o2_setup(&e->g, sh->dims[0], sh->ndims > 1 ? sh->dims[1] : 1, 1, 1);
	if (!e->err)
		e->err = o2_torus(&e->g);
	if (!e->err)
		e->err = o2_prefix(e);
	return e;
}

struct o2_item {
	uint32_t step;
	uint8_t recv, port;
	int32_t a, b;
};

/* A message's place in a part: step, sends first, port. */
#define O2_KEY(x) ((x)->step * 8u + (x)->recv * 4u + (x)->port)

static int o2_mod(int x, int n)
{
	return ((x % n) + n) % n;
}

/* Node n's blocks (sends, and unless only >= 0 receives: then only step only's sends to peer); o2_lock held. */
static int o2_items(const struct o2_shape *e, int n, int64_t only, int peer, struct o2_item **out, uint32_t *cnt)
{
	const struct o2 *g = &e->g;
	const int S = g->S, R = g->r, C = g->c, nd = e->sh.ndims;
	int nc[TC_MAX_DIMS] = { 0 };
	struct o2_item *v = NULL;
	uint32_t nv = 0, cap = 0;

	tc_shape_coords(&e->sh, n, nc);
	for (int sp = only >= 0 ? 4 * (int)only : 0; sp < (only >= 0 ? 4 * (int)only + 4 : 4 * S); sp++)
		for (uint32_t k = e->first[sp]; k < e->first[sp + 1]; k++) {
			const int st = sp / 4;

			/* the local check asks for the sends to one peer: other ports' are not kept */
			if (peer >= 0 && tc_shape_neighbor(&e->sh, n, sp % 4) != peer)
				break;
			const int var = (int)e->hops[k];
			const int cl = var / (g->wx * g->wy), cx = cl / g->ncy, cy = cl % g->ncy;
			const int ix = var / g->wy % g->wx, iy = var % g->wy;
			const int h = g->seq[(size_t)var * S + st], pw = e->pre[(size_t)var * S + st];
			const int dx = pw & 0xff, dy = pw >> 8;
			int sx, sy;

			/* every x-hop of a variable goes one way, every y-hop too */
			sx = e->sgn[var] & 1 ? -1 : 1;
			sy = e->sgn[var] & 2 ? -1 : 1;
			for (int recv = 0; recv < (only >= 0 ? 1 : 2); recv++) {
				int ox, oy, c[TC_MAX_DIMS] = { 0 };

				/* the origin: n less the hops made before st (after it: recv) */
				ox = o2_mod(nc[0] - sx * (dx + (recv && h <= 2)), R);
				oy = C < 2 ? 0 : o2_mod(nc[1] - sy * (dy + (recv && h > 2)), C);
				if (ox % g->ncx != cx || oy % g->ncy != cy)
					continue;
				if (tc_grow((void **)&v, &cap, nv + 1, sizeof(*v), 1024)) {
					free(v);
					return -ENOMEM;
				}
				c[0] = ox;
				if (nd > 1)
					c[1] = oy;
				v[nv].a = tc_shape_node(&e->sh, c);
				c[0] = (ox + ix) % R;
				if (nd > 1)
					c[1] = (oy + iy) % C;
				v[nv].b = tc_shape_node(&e->sh, c);
				v[nv].step = (uint32_t)st;
				v[nv].recv = (uint8_t)recv;
				v[nv].port = (uint8_t)(h - 1);
				nv++;
			}
		}
	*out = v;
	*cnt = nv;
	return 0;
}
/* 2x2: the one step of o2_build_2x2, node n's three sends and three receives. */
static int o2_part_2x2(struct tc_part *p)
{
	static const int8_t routes[3][TC_MAX_DIMS] = { { -1, 0 }, { 0, -1 }, { 1, 1 } };
	const int n = p->node;
	int err = tc_part_at(p, 0);

	p->cite = "one step on 2x2 at the bisection bound (Liu et al., All-Port Tori, Lemma 1)";
	p->claims = TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST;
	for (int k = 0; k < 3 && !err; k++) {
		int8_t back[TC_MAX_DIMS] = { 0 };
		int dst = tc_shape_walk(&p->shape, n, routes[k]), src;

		for (int d = 0; d < 2; d++)
			back[d] = (int8_t)-routes[k][d];
		src = tc_shape_walk(&p->shape, n, back);
		err = tc_part_msg(p, n, dst, routes[k]);
		if (!err)
			err = tc_part_blk(p, n, dst);
		if (!err)
			err = tc_part_msg(p, src, n, routes[k]);
		if (!err)
			err = tc_part_blk(p, src, n);
	}
	return err ? err : tc_part_finish(p, 1);
}

static int part(struct tc_part *p, const char **why)
{
	const struct tc_shape *sh = &p->shape;
	const int n = p->node;
	struct o2_item *it = NULL, *srt = NULL;
	struct o2_shape *e;
	uint32_t nit = 0, nsteps = 0;
	int err;

	if (sh->ndims > 2) {
		*why = "opt2d: rings and 2-D shapes only; use allport-kd or pad for 3-D and up";
		return -EOPNOTSUPP;
	}
	if (sh->one_port) {
		*why = "opt2d: all-port algorithm; the one-port family handles one-port shapes";
		return -EOPNOTSUPP;
	}
	if (sh->ndims == 1 && (sh->wrap_mask & 1) && !(sh->dims[0] & 1)) {
		/* An even ring is AR's schedule (build): its part from AR's cell. */
		err = tc_part_translate(p, &tc_algo_ar, why);
		if (!err) {
			p->algo = "opt2d";
			p->cite = "Liu et al., All-Port Tori, Sec. III-A (Algorithm AR) for even rings";
		}
		return err;
	}
	if (sh->ndims == 2 && sh->wrap_mask == 3 && sh->dims[0] == 2 && sh->dims[1] == 2)
		return o2_part_2x2(p);
	/* Meshes search every block's timetable (o2_block_search): no part alone. */
	if (sh->wrap_mask != (1u << sh->ndims) - 1)
		return TC_PART_WHOLE;
	p->cite = "one-hop shortest-path timetable reaching the bisection bound (Liu et al., All-Port Tori, Lemma 1, generalised to any parity)";
	p->claims = TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST | TC_CLAIM_ONE_HOP;
	pthread_mutex_lock(&o2_lock);
	e = o2_get(sh);
	err = e->err;
	if (!err) {
		nsteps = (uint32_t)e->g.S;
		err = o2_items(e, n, tc_part_only_step(p), tc_part_only_peer(p), &it, &nit);
	}
	pthread_mutex_unlock(&o2_lock);
	if (err) {
		*why = "opt2d: out of memory for the timetables";
		return err;
	}
	/* by step, sends before receives, port: a counting sort (tc_part_finish orders the blocks) */
	if (nit) {
		uint32_t *at = calloc((size_t)8 * nsteps + 1, sizeof(*at));

		srt = malloc(nit * sizeof(*srt));
		if (!at || !srt) {
			free(at);
			free(it);
			free(srt);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < nit; i++)
			at[O2_KEY(&it[i]) + 1]++;
		for (uint32_t k = 1; k < 8 * nsteps; k++)
			at[k] += at[k - 1];
		for (uint32_t i = 0; i < nit; i++)
			srt[at[O2_KEY(&it[i])]++] = it[i];
		free(at);
	}
	for (uint32_t i = 0; i < nit && !err; i++) {
		const struct o2_item *x = &srt[i];

		if (!i || O2_KEY(x) != O2_KEY(&srt[i - 1])) {
			int8_t route[TC_MAX_DIMS] = { 0 };
			int peer = tc_shape_neighbor(sh, n, x->recv ? x->port ^ 1 : x->port);

			route[x->port / 2] = (int8_t)(x->port & 1 ? -1 : 1);
			err = tc_part_at(p, x->step);
			if (!err)
				err = x->recv ? tc_part_msg(p, peer, n, route) : tc_part_msg(p, n, peer, route);
		}
		if (!err)
			err = tc_part_blk(p, x->a, x->b);
	}
	free(it);
	free(srt);
	return err ? err : tc_part_finish(p, nsteps);
}

/*
 * The price on a torus (not 2x2, not an even ring) without the blocks: node
 * n sends on port q in step st one message with one block for every
 * variable that hops there then and whose origin, n less the variable's
 * displacement before st, is of the variable's class; whether it is depends
 * only on n's class (its parity on the even sides). So the block counts per
 * (class, step, port) come from one walk of the timetables, and every
 * step's P * 4 one-hop messages go to the cost model in the build's order
 * (by node, then port): what tc_cost_eval_sizes gives the whole schedule,
 * without its blocks. -EOPNOTSUPP on the other shapes (priced from the parts
 * of a cell, or whole).
 */
static int price(const struct tc_shape *sh, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		 double *time_us, struct tc_cost *cost, const char **why)
{
	struct tc_cost_state *c = NULL;
	struct tc_sched *shell = NULL;
	struct tc_msg *v = NULL;
	uint32_t *cnt = NULL, st_out = 0;
	int S, ncx, ncy, err;
	struct o2_shape *e;

	if (sh->ndims > 2 || sh->one_port || sh->wrap_mask != (1u << sh->ndims) - 1 ||
	    (sh->ndims == 1 && !(sh->dims[0] & 1)) || (sh->ndims == 2 && sh->dims[0] == 2 && sh->dims[1] == 2)) {
		*why = "opt2d: no price function on this shape";
		return -EOPNOTSUPP;
	}
	pthread_mutex_lock(&o2_lock);
	e = o2_get(sh);
	err = e->err;
	S = e->g.S;
	ncx = e->g.ncx;
	ncy = e->g.ncy;
	if (!err) {
		cnt = calloc((size_t)ncx * ncy * 4 * S, sizeof(*cnt));
		err = cnt ? 0 : -ENOMEM;
	}
	for (int sp = 0; !err && sp < 4 * S; sp++)
		for (uint32_t k = e->first[sp]; k < e->first[sp + 1]; k++) {
			const struct o2 *g = &e->g;
			const int st = sp / 4, var = (int)e->hops[k];
			const int cl = var / (g->wx * g->wy), cx = cl / g->ncy, cy = cl % g->ncy;
			const int pw = e->pre[(size_t)var * S + st], dx = pw & 0xff, dy = pw >> 8;
			const int sx = e->sgn[var] & 1 ? -1 : 1, sy = e->sgn[var] & 2 ? -1 : 1;

			/* the sender's class (px, py) holds the block if its origin is of class (cx, cy) */
			for (int px = 0; px < ncx; px++)
				for (int py = 0; py < ncy; py++)
					if (o2_mod(px - sx * dx, ncx) == cx && o2_mod(py - sy * dy, ncy) == cy)
						cnt[((size_t)(px * ncy + py) * S + st) * 4 + sp % 4]++;
		}
	pthread_mutex_unlock(&o2_lock);
	if (!err) {
		shell = tc_sched_new(sh, TC_ALLTOALL, "opt2d", "opt2d", TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST | TC_CLAIM_ONE_HOP);
		v = malloc((size_t)sh->nodes * 4 * sizeof(*v));
		err = shell && v ? 0 : -ENOMEM;
	}
	if (!err)
		err = tc_cost_begin(shell, p, sizes, nsizes, &c);
	for (int st = 0; st < S && !err; st++) {
		struct tc_step_view view = { .step = st_out, .msgs = v, .blks = NULL };
		uint32_t nm = 0;

		for (int x = 0; x < sh->nodes; x++) {
			int xc[TC_MAX_DIMS] = { 0 };
			const uint32_t *q;

			tc_shape_coords(sh, x, xc);
			q = &cnt[((size_t)((xc[0] % ncx) * ncy + (sh->ndims > 1 ? xc[1] % ncy : 0)) * S + st) * 4];
			for (int port = 0; port < 4; port++) {
				struct tc_msg *m = &v[nm];

				if (!q[port])
					continue;
				memset(m, 0, sizeof(*m));
				m->src = x;
				m->dst = tc_shape_neighbor(sh, x, port);
				m->route[port / 2] = (int8_t)(port & 1 ? -1 : 1);
				m->step = st_out;
				m->nblk = q[port];
				m->op = TC_MSG_COPY;
				nm++;
			}
		}
		if (!nm)
			continue;
		view.nmsgs = nm;
		err = tc_cost_step(c, &view);
		st_out++;
	}
	if (!err) {
		err = tc_cost_end(c, shell, time_us, cost);
		c = NULL;
	}
	if (c)
		tc_cost_end(c, NULL, NULL, NULL);
	if (err)
		*why = err == -ENOMEM ? "opt2d: out of memory pricing the schedule" : "opt2d: pricing the schedule failed";
	tc_sched_free(shell);
	free(cnt);
	free(v);
	return err;
}

/*
 * What a node sends commutes with the translations that keep the parity of
 * its coordinates on the even sides (a route is chosen per offset and per
 * origin class): 2 on an even side, 1 on an odd one. On a torus auto prices
 * the schedule from the parts of that cell of at most 4 nodes
 * (core/part_price.h); a mesh's part is the whole schedule's, priced whole.
 */
static void price_period(const struct tc_shape *sh, int *mod)
{
	for (int d = 0; d < sh->ndims; d++)
		mod[d] = sh->dims[d] % 2 ? 1 : 2;
}

const struct tc_algo tc_algo_opt2d = {
	.name = "opt2d",
	.coll = TC_ALLTOALL,
	.summary = "any 2D torus or mesh, any ring: one-hop shortest-path timetable at the bisection bound",
	.build = build,
	.part = part,
	.price_mod = { 1 }, /* the period is price_period()'s */
	.price_period = price_period,
	.price = price,
};
