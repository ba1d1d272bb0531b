// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * All-to-all broadcast by time-independent gossip on partial Hamiltonian
 * cycles, one packet per node (Meyer and Sibeyn, "Gossiping Large Packets on Full-Port Tori", Section 3).
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
 * even sides the smaller one is used as n1 (fewer steps).
 *
 * Both sides odd (the paper: "inserting one special row"). Every PU must lie
 * on a cycle, and every PU on one cycle only must have both free links
 * leading to PUs of the other cycle (else it has one feeder and the feeding
 * rate halves): PUs are X (cycle A), Y (cycle B) or D (both), X-Y links are
 * the free (feeding) links. With p rows and q columns: the cycles run down
 * the columns as strips; each row has one defect (two equal neighbours
 * joined by a cycle link) where the strips jog one column right, the defect
 * moving one column left per row (a staircase: the only slope the local
 * rules allow, and it never turns). A band row holds k D PUs just left of
 * the defect above it and moves the staircase k + 1 columns; each band flips
 * the X/Y phase once more than a plain row would, so the staircase closes
 * around the torus with an odd number of bands whose sizes add up to
 * D = R (R = (-p) mod q odd: one band) or R + q (R even: three bands, rows 1
 * to 3). The sizes and the orientation are found by trying the candidates
 * (first fit; the types force every link's colour), and 3 x 3 uses a square
 * pattern (PU (0,0) and row p-1 D but one PU). Each cycle then holds
 * m = (p*q + D)/2 PUs and the engine takes floor(m/2) + 1 steps, e.g. 8 on
 * 5x5, 15 on 7x7, 23 on 9x9, 61 on 15x15, against ceil(Theorem 2) = 10, 17,
 * 26, 65; every odd shape from 3x3 to 15x15 is at or under ceil(Theorem 2)
 * except 5x11 (19 = ceil + 1). With q = 5 and p >= 11 no band layout
 * closes, so 5x13 and 5x15 would take ceil + 2 and ceil + 3 steps. Where
 * that happens, layouts with several staircases (k odd, their defects at
 * least two columns apart) and one band are searched: the staircases then
 * close up to a rotation of their order, and 5x13 gets five staircases and
 * a single D (17 steps). 5x15 finds none of either family; it takes a
 * layout from a table (ho_5x15, found offline by a SAT solver: D = 5, two
 * cycles of 40 PUs, 21 steps against ceil(Theorem 2) = 23; 20 steps, which
 * needs D <= 3, is unsatisfiable under the same local rules). On any other
 * odd x odd shape where no layout within ceil(Theorem 2) + 1 closes (none
 * from 3x3 to 15x15), gossip-ham1 falls back to one packet on gossip-ham2's
 * two full Hamiltonian cycles (__tc_gossip_ham1_full_cycles), about N/2 steps.
 *
 * d-D, d >= 3 (Theorems 3 and 4, the "reactor" cycles): see
 * gossip_ham1_kd.c.
 * Every packet is injected into one cycle through its origin.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/algos.h"
#include "algorithms/engine/gossip.h"
#include "algorithms/engine/ham_decomp.h"

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

/* ---- 2D, both sides odd: staircase strips and bands ---- */

enum { HO_X, HO_Y, HO_D };
enum { HO_A, HO_B, HO_F, HO_NONE };

/*
 * Logical view: n1 rows (r, along rdim) and n2 columns (j, along cdim).
 * type[r * n2 + j] is X (cycle A only), Y (cycle B only) or D (both);
 * hcol[u] colours the edge from u to its right neighbour, vcol[u] the edge
 * from u to the node below: A, B, or F (free: the feeding link of an X and
 * a Y node).
 */
struct ham1_odd {
	const struct tc_shape *sh;
	int rdim, cdim, n1, n2;
	unsigned char *type, *hcol, *vcol;
	int len[2]; /* cycle lengths (A, B) of the layout found */
};

static int ho_at(const struct ham1_odd *h, int r, int j)
{
	r %= h->n1;
	j %= h->n2;
	return (r < 0 ? r + h->n1 : r) * h->n2 + (j < 0 ? j + h->n2 : j);
}

/* The alternating row with its one defect (two equal neighbours) at (c, c + 1), both of type s. */
static void ho_row(struct ham1_odd *h, int r, int c, int s)
{
	for (int k = 0; k < h->n2; k++)
		h->type[ho_at(h, r, c + 1 + k)] = (k & 1) ? !s : s;
}

/*
 * Rows without a band carry one defect each, one column further left per
 * row (a staircase of slope -1); a band row holds band[r] D nodes in the
 * columns just left of the defect above it and shifts the staircase by
 * band[r] + 1 columns. Returns 0 when the staircase closes around the torus.
 */
static int ho_bands(struct ham1_odd *h, const int *band)
{
	int c = h->n2 - 1, s = HO_Y;

	for (int r = 0; r < h->n1; r++) {
		int dn = band[r];

		if (!dn) {
			if (r) {
				c = (c - 1 + h->n2) % h->n2;
				s = !s;
			}
			ho_row(h, r, c, s);
			continue;
		}
		for (int k = 0; k < dn; k++)
			h->type[ho_at(h, r, c - dn + k)] = HO_D;
		for (int k = 0; k < h->n2 - dn; k++)
			h->type[ho_at(h, r, c + k)] = (k & 1) ? s : !s;
		c = ((c - dn - 1) % h->n2 + h->n2) % h->n2;
	}
	return (c - 1 + h->n2) % h->n2 == h->n2 - 1 && s == HO_X ? 0 : -1;
}

/*
 * The other pattern (n1 a multiple of n2, used where no band layout closes,
 * e.g. 3 x 3): PU (0, 0) is D, rows 1 .. n1-2 carry the staircase from
 * column n2-2 down, and row n1-1 is D except below the staircase's end.
 */
static void ho_square(struct ham1_odd *h, unsigned char *ph)
{
	memset(ph, 0, h->n2);
	for (int j = 0; j < h->n2; j++)
		h->type[ho_at(h, 0, j)] = j == 0 ? HO_D : (j & 1) ? HO_X : HO_Y;
	for (int r = 1; r < h->n1 - 1; r++) {
		/* the staircase's defect moves from (c, c+1) to (c-1, c): column c flips */
		ph[ho_at(h, 0, h->n2 - r)] ^= 1;
		for (int j = 0; j < h->n2; j++)
			h->type[ho_at(h, r, j)] = ((j + ph[j]) & 1) ? HO_X : HO_Y;
	}
	for (int j = 0; j < h->n2; j++)
		h->type[ho_at(h, h->n1 - 1, j)] = HO_D;
	h->type[ho_at(h, h->n1 - 1, h->n2 - 1 - (h->n1 - 2))] = HO_Y;
}

/* Colour the edges the types force; D-D edges so that each D has two A and two B. 0 when consistent. */
static int ho_color(struct ham1_odd *h)
{
	const int n = h->n1 * h->n2;
	int changed = 1;

	for (int u = 0; u < n; u++) {
		int r = u / h->n2, j = u % h->n2;
		int nb[2] = { ho_at(h, r, j + 1), ho_at(h, r + 1, j) };
		unsigned char *col[2] = { &h->hcol[u], &h->vcol[u] };

		for (int e = 0; e < 2; e++) {
			int a = h->type[u], b = h->type[nb[e]];

			if (a == HO_D && b == HO_D)
				*col[e] = HO_NONE;
			else if (a != HO_D && b != HO_D && a != b)
				*col[e] = HO_F;
			else
				*col[e] = (a == HO_Y || b == HO_Y) ? HO_B : HO_A;
		}
	}
	while (changed) {
		changed = 0;
		for (int u = 0; u < n; u++) {
			int r = u / h->n2, j = u % h->n2, cnt[4] = { 0 };
			unsigned char *e[4] = { &h->hcol[u], &h->hcol[ho_at(h, r, j - 1)], &h->vcol[u],
						&h->vcol[ho_at(h, r - 1, j)] };

			if (h->type[u] != HO_D)
				continue;
			for (int k = 0; k < 4; k++)
				cnt[*e[k]]++;
			if (!cnt[HO_NONE])
				continue;
			if (cnt[HO_A] != 2 && cnt[HO_B] != 2)
				continue;
			for (int k = 0; k < 4; k++)
				if (*e[k] == HO_NONE)
					*e[k] = cnt[HO_A] == 2 ? HO_B : HO_A;
			changed = 1;
		}
	}
	for (int u = 0; u < n; u++) {
		int r = u / h->n2, j = u % h->n2, cnt[4] = { 0 };
		const unsigned char e[4] = { h->hcol[u], h->hcol[ho_at(h, r, j - 1)], h->vcol[u],
					     h->vcol[ho_at(h, r - 1, j)] };
		static const int need[3][3] = { [HO_X] = { 2, 0, 2 }, [HO_Y] = { 0, 2, 2 }, [HO_D] = { 2, 2, 0 } };

		for (int k = 0; k < 4; k++)
			cnt[e[k]]++;
		if (cnt[HO_NONE] || cnt[HO_A] != need[h->type[u]][HO_A] || cnt[HO_B] != need[h->type[u]][HO_B])
			return -1;
	}
	return 0;
}

static int ho_find(int *uf, int x)
{
	while (uf[x] != x) {
		uf[x] = uf[uf[x]];
		x = uf[x];
	}
	return x;
}

/* 1 when the A edges make one cycle and the B edges make one; fills h->len. */
static int ho_single(struct ham1_odd *h, int *uf)
{
	const int n = h->n1 * h->n2;

	for (int c = HO_A; c <= HO_B; c++) {
		int comps = 0;

		h->len[c] = 0;
		for (int u = 0; u < n; u++)
			uf[u] = u;
		for (int u = 0; u < n; u++) {
			int r = u / h->n2, j = u % h->n2;

			if (h->hcol[u] == c)
				uf[ho_find(uf, u)] = ho_find(uf, ho_at(h, r, j + 1));
			if (h->vcol[u] == c)
				uf[ho_find(uf, u)] = ho_find(uf, ho_at(h, r + 1, j));
		}
		for (int u = 0; u < n; u++) {
			if (h->type[u] != HO_D && h->type[u] != (c == HO_A ? HO_X : HO_Y))
				continue;
			h->len[c]++;
			comps += ho_find(uf, u) == u;
		}
		if (comps != 1)
			return 0;
	}
	return 1;
}

/*
 * Find a layout for this orientation: the staircase closes only when the
 * band D counts add up to tot = R (R odd) or R + n2 (R even), R = (-n1) mod n2,
 * in an odd number of bands (each band flips the X/Y phase once more than a
 * plain row would). Try one band, then three, then five, in rows 1, 2, ...,
 * each of odd size at most n2 - 2, first fit wins; then the square pattern.
 * The work is capped so that huge shapes give up rather than stall.
 */
static int ho_layout(struct ham1_odd *h, int *uf, int *band)
{
	const int n = h->n1 * h->n2, r0 = (h->n2 - h->n1 % h->n2) % h->n2;
	const int tot = (r0 & 1) ? r0 : r0 + h->n2;
	long budget = 20000000L; /* node visits: big shapes give up rather than stall */

	for (int b = 1; b <= 5 && b < h->n1; b += 2) {
		int part[5], k;

		for (k = 0; k < b; k++)
			part[k] = 1;
		for (;;) {
			int sum = 0;

			/* the first b-1 sizes run an odometer, the last one makes the sum */
			for (k = 0; k < b - 1; k++)
				sum += part[k];
			part[b - 1] = tot - sum;
			if (--budget < 0)
				return -1;
			if (part[b - 1] >= 1 && part[b - 1] <= h->n2 - 2) {
				budget -= 4L * n;
				memset(band, 0, h->n1 * sizeof(int));
				for (k = 0; k < b; k++)
					band[1 + k] = part[k];
				if (!ho_bands(h, band) && !ho_color(h) && ho_single(h, uf))
					return 0;
			}
			for (k = b - 2; k >= 0; k--) {
				part[k] += 2;
				if (part[k] <= h->n2 - 2)
					break;
				part[k] = 1;
			}
			if (k < 0)
				break;
		}
	}
	if (h->n1 % h->n2 == 0) {
		ho_square(h, (unsigned char *)band);
		if (!ho_color(h) && ho_single(h, uf))
			return 0;
	}
	return -1;
}

/*
 * Several staircases (k odd, k >= 3, their defects g[0], g[1], ... columns
 * apart in row 0) and one band of dn D PUs in row 1 on staircase gi: the
 * staircases close into themselves up to a rotation of their order, which
 * one band can reach where the single staircase needs three (5 x 13: five
 * staircases, one D). Returns 0 when the rows close around the torus.
 */
static int ho_multi(struct ham1_odd *h, int k, const int *s0, int gi, int dn, int *st, unsigned char *mark)
{
	const int q = h->n2;
	unsigned char *t = h->type, *prev;
	int a, c, cc, last;

	memset(mark, 0, q);
	for (int i = 0; i < k; i++) {
		st[i] = s0[i];
		mark[s0[i]] = 1;
	}
	/* row 0: alternate, equal across each defect */
	a = (s0[0] + 1) % q;
	t[a] = HO_Y;
	for (int x = 1, j = a; x < q; x++, j = (j + 1) % q)
		t[(j + 1) % q] = mark[j] ? t[j] : !t[j];
	last = s0[0];
	if (t[last] != t[a])
		return -1;
	/* row 1: every staircase steps, then the band of staircase gi */
	c = s0[gi];
	memcpy(t + q, t, q);
	for (int i = 0; i < k; i++)
		t[q + st[i]] ^= 1;
	for (int x = 0; x < dn; x++) {
		int col = ((c - dn + x) % q + q) % q;

		if ((mark[col] && col != c) || (mark[(col + 1) % q] && (col + 1) % q != c))
			return -1;
		t[q + col] = HO_D;
	}
	/* row 2: the other staircases step again, the band's staircase lands dn + 1 further left */
	prev = t + q;
	memcpy(t + 2 * q, prev, q);
	for (int i = 0; i < k; i++)
		if (i != gi)
			t[2 * q + ((st[i] - 1 + q) % q)] ^= 1;
	cc = ((c - dn - 1) % q + q) % q;
	t[2 * q + cc] ^= 1;
	for (int x = 1; x <= dn; x++)
		t[2 * q + (cc + x) % q] = !t[2 * q + (cc + x - 1) % q];
	for (int i = 0; i < k; i++)
		st[i] = i == gi ? ((c - dn - 2) % q + q) % q : ((st[i] - 2) % q + q) % q;
	/* rows 3 .. n1-1, then one more step must give row 0 again */
	for (int r = 3; r <= h->n1; r++) {
		unsigned char *row = r < h->n1 ? t + r * q : mark;

		memcpy(row, t + (r - 1) * q, q);
		for (int i = 0; i < k; i++) {
			row[st[i]] ^= 1;
			st[i] = (st[i] - 1 + q) % q;
		}
		if (r == h->n1 && memcmp(row, t, q))
			return -1;
	}
	return 0;
}

/* The fewest D over staircase counts, spacings and band positions; work capped like ho_layout. */
static int ho_multi_layout(struct ham1_odd *h, int *uf, int *scratch, unsigned char *mark)
{
	const int q = h->n2, n = h->n1 * h->n2;
	int *g = scratch, *s0 = scratch + q, *st = scratch + 2 * q;
	long budget = 20000000L;

	if (h->n1 < 3)
		return -1;
	for (int dn = 1; dn <= q - 2; dn += 2) {
		for (int k = 3; 2 * k <= q; k += 2) {
			int i;

			for (i = 0; i < k - 1; i++)
				g[i] = 2;
			for (;;) {
				int sum = 0;

				for (i = 0; i < k - 1; i++)
					sum += g[i];
				g[k - 1] = q - sum;
				if (--budget < 0)
					return -1;
				if (g[k - 1] >= 2) {
					s0[0] = 0;
					for (i = 1; i < k; i++)
						s0[i] = s0[i - 1] + g[i - 1];
					for (int gi = 0; gi < k; gi++) {
						budget -= 4L * n;
						if (!ho_multi(h, k, s0, gi, dn, st, mark) && !ho_color(h) && ho_single(h, uf))
							return 0;
					}
				}
				for (i = k - 2; i >= 0; i--) {
					g[i]++;
					if (g[i] <= q)
						break;
					g[i] = 2;
				}
				if (i < 0)
					break;
			}
		}
	}
	return -1;
}

/*
 * 5 x 15 (rows of 15): no staircase/band layout closes there, so this one
 * comes from a table. It was found offline by a SAT solver (minisat): one
 * variable per PU type (X, Y, D) and per link colour (A, B, F), clauses for
 * the local rules ho_color checks (X: two A, two F links to Y; Y: two B,
 * two F; D: two A, two B; no two D adjacent, so the types force every
 * colour), sequential-counter bounds D <= 19 and |X| + D, |Y| + D <= 47,
 * and, lazily, one blocking clause per closed sub-cycle of A or B edges
 * until both colours made a single cycle. Regenerate with that encoding on
 * a 5 x 15 torus; any solution that passes ho_color and ho_single works.
 * This one has D = 5 and two cycles of 40 PUs (21 steps); D <= 3 with cycles
 * of at most 39 (20 steps) is unsatisfiable.
 */
static const char ho_5x15[5][16] = {
	"XXYXXYXXYXYYXXY",
	"XYYXYDXYYXYXXYD",
	"YYXXYXYDXDYXYYX",
	"YXXYDXYXYYXXYXX",
	"YXYYXYYXYXXYYXY",
};

static int ho_table(struct ham1_odd *h, int *uf)
{
	if (h->n1 != 5 || h->n2 != 15)
		return -1;
	for (int r = 0; r < 5; r++)
		for (int j = 0; j < 15; j++)
			h->type[ho_at(h, r, j)] = ho_5x15[r][j] == 'X' ? HO_X : ho_5x15[r][j] == 'Y' ? HO_Y : HO_D;
	return !ho_color(h) && ho_single(h, uf) ? 0 : -1;
}

static int ham1_odd_rule(const void *ctx, int node, int in_port)
{
	const struct ham1_odd *h = ctx;
	int c[TC_MAX_DIMS], r, j, col[4], port[4];

	tc_shape_coords(h->sh, node, c);
	r = c[h->rdim];
	j = c[h->cdim];
	port[0] = 2 * h->cdim;		/* right */
	port[1] = 2 * h->cdim + 1;	/* left */
	port[2] = 2 * h->rdim;		/* down */
	port[3] = 2 * h->rdim + 1;	/* up */
	col[0] = h->hcol[ho_at(h, r, j)];
	col[1] = h->hcol[ho_at(h, r, j - 1)];
	col[2] = h->vcol[ho_at(h, r, j)];
	col[3] = h->vcol[ho_at(h, r - 1, j)];
	for (int k = 0; k < 4; k++) {
		if (port[k] != in_port)
			continue;
		if (col[k] == HO_F)
			return -1;
		for (int q = 0; q < 4; q++)
			if (q != k && col[q] == col[k])
				return port[q];
	}
	return -1;
}

static void ho_free(struct ham1_odd *h)
{
	free(h->type);
	free(h->hcol);
	free(h->vcol);
	h->type = h->hcol = h->vcol = NULL;
}

/*
 * Lay out orientation rdim (multi: 0 band layouts, 1 several staircases,
 * 2 the 5 x 15 table); 0 and h filled, or -1 (no layout), or -ENOMEM.
 */
static int ho_try(const struct tc_shape *shape, int rdim, int multi, struct ham1_odd *h)
{
	const int n = shape->nodes;
	int *uf, *band, err;

	memset(h, 0, sizeof(*h));
	h->sh = shape;
	h->rdim = rdim;
	h->cdim = !rdim;
	h->n1 = shape->dims[rdim];
	h->n2 = shape->dims[!rdim];
	h->type = malloc(n);
	h->hcol = malloc(n);
	h->vcol = malloc(n);
	uf = malloc(n * sizeof(int));
	/* band sizes; the square pattern's phase bytes; the staircase spacings and the check row */
	band = malloc((h->n1 + 4 * h->n2) * sizeof(int));
	if (!h->type || !h->hcol || !h->vcol || !uf || !band)
		err = -ENOMEM;
	else if (multi == 2)
		err = ho_table(h, uf);
	else if (multi)
		err = ho_multi_layout(h, uf, band, (unsigned char *)(band + 3 * h->n2));
	else
		err = ho_layout(h, uf, band);
	free(uf);
	free(band);
	if (err)
		ho_free(h);
	return err;
}

static int ho_max(const struct ham1_odd *h)
{
	return h->len[0] > h->len[1] ? h->len[0] : h->len[1];
}

static int build_odd(const struct tc_shape *shape, struct tc_gossip_spec *spec, const struct tc_gossip_run *r,
		     const char **why)
{
	/* band layouts (rows along dim 0, dim 1), several staircases, the 5 x 15 table */
	struct ham1_odd h[6];
	int ok[6] = { -1, -1, -1, -1, -1, -1 }, best = -1, mn, err = 0;
	long thm;

	/* 4 * Theorem 2 with n1 the smaller side; the engine takes floor(m/2) + 1 steps */
	mn = shape->dims[0] < shape->dims[1] ? shape->dims[0] : shape->dims[1];
	thm = ((long)shape->nodes + 2L * mn + 4 + 3) / 4;
	/* the table first (5 x 15 only: no search finds a layout there) */
	for (int t = 4; t < 6 && err != -ENOMEM && best < 0; t++) {
		ok[t] = ho_try(shape, t & 1, 2, &h[t]);
		if (ok[t] == -ENOMEM)
			err = -ENOMEM;
		else if (!ok[t])
			best = t;
	}
	/* several staircases only where the band layouts exceed ceil(Thm 2) + 1 or fail */
	for (int t = 0; t < 4 && err != -ENOMEM && best < 4; t++) {
		if (t == 2 && best >= 0 && ho_max(&h[best]) / 2 + 1 <= thm + 1)
			break;
		ok[t] = ho_try(shape, t & 1, t >> 1, &h[t]);
		if (ok[t] == -ENOMEM)
			err = -ENOMEM;
		else if (!ok[t] && (best < 0 || ho_max(&h[t]) < ho_max(&h[best])))
			best = t;
	}
	if (err == -ENOMEM) {
		*why = "gossip: out of memory";
	} else if (best < 0) {
		*why = "gossip-ham1: no staircase/band layout closes into two cycles on this odd x odd torus";
		err = -EOPNOTSUPP;
	} else if (ho_max(&h[best]) / 2 + 1 > thm + 1) {
		*why = "gossip-ham1: the only layout on this odd x odd torus takes more than ceil(Thm 2) + 1 steps";
		err = -EOPNOTSUPP;
	} else {
		spec->rule = ham1_odd_rule;
		spec->ctx = &h[best];
		spec->cite = best < 2	? "Meyer and Sibeyn, Sec. 3, Theorem 2 (odd x odd: staircase strips, band rows of PUs on both cycles)"
			     : best < 4 ? "Meyer and Sibeyn, Sec. 3, Theorem 2 (odd x odd: several staircases, one band of PUs on both cycles)"
					: "Meyer and Sibeyn, Sec. 3, Theorem 2 (odd x odd 5 x 15: a solver-found layout, 5 PUs on both cycles)";
		err = __tc_gossip_run(shape, spec, r, why);
	}
	for (int t = 0; t < 6; t++)
		if (!ok[t])
			ho_free(&h[t]);
	return err;
}

/*
 * The last resort on odd x odd tori: one packet per PU on the two full
 * Hamiltonian cycles of a square-swap decomposition (engine/ham_decomp.c).
 */
static int ham1_full_cycles(const struct tc_shape *shape, const struct tc_gossip_run *r, const char **why)
{
	struct tc_gossip_spec spec = {
		.algo = "gossip-ham1",
		.cite = "Meyer and Sibeyn, Sec. 3 fallback: 1 packet on two full Hamiltonian cycles (square-swap decomposition)",
		.npackets = 1,
		.want_cycles = 2,
		.inject = tc_ham_decomp_inject,
	};
	const char *w = NULL;
	int err = tc_ham_decomp_run(shape, &spec, r, &w);

	if (err)
		*why = w ? w : "gossip-ham1: no partial-cycle layout closes and no Hamiltonian decomposition was found on this torus";
	return err;
}

int __tc_gossip_ham1_full_cycles(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const struct tc_gossip_run r = { .out = out };

	return ham1_full_cycles(shape, &r, why);
}

/* What every construction of gossip-ham1 needs: an all-port torus, sides at least 3, 2D or more. */
static int ham1_shape_ok(const struct tc_shape *shape, const char **why)
{
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
	if (shape->ndims < 2) {
		*why = "gossip-ham1: needs a 2D or higher torus";
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * 2D with an even side: the partial cycles of ham1_2d_rule. n1 (rows, laps
 * of two) must be even; of two even sides take the smaller.
 */
static void ham1_2d_spec(const struct tc_shape *shape, struct ham1_2d *x, struct tc_gossip_spec *spec)
{
	const int a = shape->dims[0], b = shape->dims[1];

	x->sh = shape;
	x->rowdim = !(!(a & 1) && ((b & 1) || a <= b));
	x->coldim = !x->rowdim;
	*spec = (struct tc_gossip_spec){
		.algo = "gossip-ham1",
		.cite = "Meyer and Sibeyn, Sec. 3, Theorem 2 (partial Hamiltonian cycles, 1 packet)",
		.npackets = 1,
		.want_cycles = 2,
		.rule = ham1_2d_rule,
		.ctx = x,
	};
}

/* The construction for a checked shape, built whole or prepared for parts (r). */
static int ham1_run(const struct tc_shape *shape, const struct tc_gossip_run *r, const char **why)
{
	struct ham1_2d x;
	struct tc_gossip_spec spec;
	int err;

	if (shape->ndims >= 3)
		return __tc_gossip_ham1_kd_run(shape, r, why);
	ham1_2d_spec(shape, &x, &spec);
	if ((shape->dims[0] & 1) && (shape->dims[1] & 1)) {
		err = build_odd(shape, &spec, r, why);

		/* no layout within ceil(Thm 2) + 1 (5 x 15): full cycles, about N/2 steps */
		return err == -EOPNOTSUPP ? ham1_full_cycles(shape, r, why) : err;
	}
	return __tc_gossip_run(shape, &spec, r, why);
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const struct tc_gossip_run r = { .out = out };
	int err = ham1_shape_ok(shape, why);

	return err ? err : ham1_run(shape, &r, why);
}

/*
 * 2D with an even side (the partial cycles of ham1_2d_rule): the packets
 * the busiest cycle link passes (__tc_gossip_send_steps). 0 elsewhere (3D
 * and up, both sides odd: layouts found by search) and on shapes build
 * refuses.
 */
static uint64_t send_steps(const struct tc_shape *shape, int *npackets)
{
	struct ham1_2d x;
	struct tc_gossip_spec spec;
	const char *why;
	uint64_t steps = 0;

	*npackets = 1;
	if (ham1_shape_ok(shape, &why) || shape->ndims != 2 || ((shape->dims[0] & 1) && (shape->dims[1] & 1)))
		return 0;
	ham1_2d_spec(shape, &x, &spec);
	if (__tc_gossip_send_steps(shape, &spec, &steps))
		return 0;
	return steps;
}

/*
 * The construction build() chooses, prepared for parts once per shape
 * (engine/gossip.c: cycles, injections, feeds and relay segments, O(P), and
 * the run's step count from every feeding group's passes), the full-cycles
 * last resort included, kept in ham1_preps.
 */
static struct tc_gossip_prep_cache ham1_preps = TC_GOSSIP_PREP_CACHE_INIT;

static int ham1_prepare(const struct tc_shape *shape, struct tc_gossip_prep **prep, const char **why)
{
	const struct tc_gossip_run r = { .prep = prep };

	return ham1_run(shape, &r, why);
}

/* Node's part: from the construction prepared once per shape (engine/gossip.c says how). */
static int part(struct tc_part *p, const char **why)
{
	int err = ham1_shape_ok(&p->shape, why);

	if (err)
		return err;
	return __tc_gossip_part_cached(&ham1_preps, ham1_prepare, p, "gossip-ham1: out of memory preparing the cycles",
				       why);
}

const struct tc_algo tc_algo_gossip_ham1 = {
	.name = "gossip-ham1",
	.coll = TC_ALLGATHER,
	.summary = "1-packet gossip on partial Hamiltonian cycles, 2D/3D/d-D (Meyer and Sibeyn, Thm 2-4)",
	.build = build,
	.part = part,
	.send_steps = send_steps,
};
