// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * allport-kd: complete exchange on an all-port k-D torus (k >= 3) of any
 * parity, sides 2..64: the all-port paper's open future work (Liu, Gu, Bi,
 * Tu and Dong, "Optimal All-to-All Personalized Communication in All-Port
 * Tori", Sec. VI). Every block gets a dimension order, chosen by its offset;
 * the schedule has k phases, and in phase i every node runs a ring exchange
 * on its ring of every dimension at once (the rings of different dimensions
 * use different links), each block travelling the i-th dimension of its
 * order: Algorithm AR (Sec. III-A) on an even ring, or the one-hop relay of
 * engine/allport.h (an odd ring always; an even ring when that fits the phase
 * better), whose blocks may wait before they leave. k*floor(max(N)/2) steps.
 *
 * The target is the k-D bound (Lemma 1 generalised to any parity, cost.c):
 * dimension i of side n_i carries at least (P/n_i)*floor(n_i^2/4)/2 blocks
 * per link, the bound is the largest; with even sides N1*P/8. Measured
 * (critical-path transmission, the cost model's; test_kd, TC_KD_SWEEP=1 for
 * every 3-D shape with sides 2..16 and every 4-D shape with sides 2..8 up to
 * 4096 nodes): every even 3-D shape with sides 4..12 at the bound, as the
 * issue asks; the other shapes at the bound or a few blocks over it (worst
 * measured: 3-D 3x13x14, 959 for 956; 4-D 5x5x5x5, 376 for 375).
 * Sides of 2 are rings of two nodes: AR's single step, the antipodes split
 * over the + and - links (both lead to the same neighbour); shapes with sides
 * of 2 reach the bound too, but for 2x2x2, where each of the three phases
 * carries at least one block (3 for a bound of 2).
 *
 * The choice of orders. Orders: the k rotations of (0..k-1) and of its
 * reverse (all six for k = 3). By symmetry a ring's per-step message sizes
 * depend only on how many blocks each node holds per ring offset (its
 * bundles, the same on every node), so the choice is a problem on the P
 * offsets, not the P^2 blocks, priced on the lock-step cost (per phase, the
 * sum over steps of the largest message of any ring; every node's steps are
 * alike, so the cost model's critical path equals it). kd_choose() first
 * tries a construction (kd_construct: rotations by the sum of the offset's
 * coordinates, the offsets on an axis placed apart), taken when it meets the
 * bound: 16x16x16 and 24x23x24x2x3x2 among others, in O(P) and no search
 * (16x16x16 took 8 s of search before). Otherwise it searches: from orders
 * rotating with the sum of the offset's coordinates, it improves them
 * greedily (AR alone on the even rings, then with their relays too: a phase
 * has fewer options to price without them), then by simulated annealing,
 * stopping at the bound; deterministic. In the search offsets o and -o
 * always share their order: the bundles are then symmetric (as many blocks
 * at +e as at -e), which AR needs on a ring of L = 2 mod 4 nodes to meet its
 * bound (its steps are (b1+b3+..+bA/2, ...) with the antipodes bA split; an
 * asymmetric bundle pays the larger side every step: 10x10x10 cost 1252 for
 * 1250 without it). The construction's bundles are symmetric where it is
 * taken: flat.
 *
 * Shorter rings need not keep the longest ring's rhythm. Per phase and ring,
 * kd_phase_cost() also picks, for an even ring: the step the ring starts at
 * (its L/2 steps anywhere in the phase's floor(max(N)/2)); whether Stage 3
 * runs before Stage 2 (the step of Stage 2 that carries only antipodes then
 * comes last); when L = 0 mod 4 and there is room, splitting the antipodes
 * between both stages (L/2 + 1 steps) (4x8x12 needs all three: with AR's
 * plain rhythm the 8-ring's antipodes cannot fit under the 12-ring's
 * antipode-only step, 599 for 576); or the relay instead of AR. The relays
 * are placed last, against the profile of the AR rings: kd_place() gives
 * each bundle the wait that raises the phase's cost least. AR's profile is
 * fixed by its bundles (on 10 nodes (A, B, C, B, C), C the smallest), and a
 * 6-ring's AR cannot fit under it (4x6x10: 323 for 300); relayed, with
 * waits, it can.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/algos.h"
#include "algorithms/engine/allport.h"
#include "core/cost.h"
#include "core/part_sym.h"

#define KD_MAX_ORDERS (2 * TC_MAX_DIMS)
#define KD_MAX_JUMPS 130 /* rings up to 254 nodes: at most 64 sub-ring jumps */
#define KD_MAX_STEPS 128
#define KD_STALE 8 /* greedy passes without gain (a walk on the plateau) before giving up */
#define KD_MAX_L 64 /* sides the odd relay's waits cover (TC_AP_MAX_WAIT) */
#define KD_SEARCH_MAX_NODES 4096 /* above: the construction, no search (kd_choose) */
#define KD_CITE \
	"Liu et al., All-Port Tori, Sec. III (AR) or one-hop relays per dimension, k phases (Liu et al., All-Port Tori, Sec. VI: future work)"
#define KD_CLAIMS (TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST)

struct kd {
	const struct tc_shape *sh;
	int k, norders, noffs;
	int order[KD_MAX_ORDERS][TC_MAX_DIMS];
	uint16_t *choice; /* per offset (mixed radix of (t - o) mod N): order index */
	int sym;	  /* offsets o and -o share their order (neg: the index of -o) */
	int even_relays;  /* even rings may relay (else AR only) */
	int *neg;
	int *off;	  /* per offset: its coordinates, noffs * k */
	/* bundles: per phase i, dimension d, ring offset e (index e mod N): blocks per node */
	int32_t *bundle;
	int64_t *phase_cost; /* per phase: sum over steps of the largest message */
	uint8_t *delay;	     /* per phase, dimension, ring offset: an odd ring's wait */
	int start[TC_MAX_DIMS][TC_MAX_DIMS]; /* per phase, dimension: first step of its ring */
	unsigned int split[TC_MAX_DIMS]; /* per phase: rings whose antipodes are split */
	unsigned int swap[TC_MAX_DIMS];	 /* per phase: rings that run Stage 3 first */
	unsigned int relay[TC_MAX_DIMS]; /* per phase: rings that relay (odd ones always) */
	/* per phase, dimension, variant (swap*2 + split): AR step sizes */
	int64_t sz[TC_MAX_DIMS][TC_MAX_DIMS][4][KD_MAX_STEPS];
#define KD_RELAY 4 /* the variant after AR's four: the one-hop relay */
	uint8_t dirty[TC_MAX_DIMS][TC_MAX_DIMS];
	int maxL;
	int64_t bound; /* the k-D bound, blocks */
	int64_t constructed; /* kd_construct's cost */
	int no_search;	     /* __tc_kd_cost: keep the construction whatever it costs */
	/* engine callback state */
	const struct tc_ap *ap;
	int phase;
	int32_t *tie_rank; /* per offset: its rank among the phase's ties on its dimension */
};

static int32_t *kd_bundle(struct kd *g, int i, int d)
{
	return &g->bundle[((size_t)i * g->k + d) * g->maxL];
}

static uint8_t *kd_delay(struct kd *g, int i, int d)
{
	return &g->delay[((size_t)i * g->k + d) * g->maxL];
}

static int kd_wait(void *arg, int d, int e)
{
	struct kd *g = arg;
	int n = g->sh->dims[d];

	return kd_delay(g, g->phase, d)[(e + n) % n];
}

/*
 * AR's message sizes on a ring of L nodes when every node holds b[e mod L]
 * blocks at offset e (e in (-L/2, L/2]): the largest message of each of the
 * L/2 steps over both node parities and both directions, into out[].
 * Mirrors tc_ap_phase() (engine/allport.c), ties included.
 */
static void ar_sizes(int L, const int32_t *b, int split, int swap, int64_t *out)
{
	int64_t s1[2][2] = { { 0 } }, launch[2][2][KD_MAX_JUMPS];
	int h = L / 2, len = h + split, n2 = swap ? len - 1 - L / 4 : L / 4;

	/* only jumps 0..h are used: zeroing all KD_MAX_JUMPS was most of the search's time */
	for (int par = 0; par < 2; par++)
		for (int dir = 0; dir < 2; dir++)
			memset(launch[par][dir], 0, (size_t)(h + 1) * sizeof(launch[0][0][0]));
	for (int par = 0; par < 2; par++) {
		int prim = par ? -1 : 1;

		for (int e = -h + 1; e <= h; e++) {
			int64_t cnt = b[(e + L) % L], parts[2][2];
			int np = 0;

			if (!cnt || !e)
				continue;
			if (e == h) {
				if (L % 4 == 0) {
					/* split: the first, third, ... go primary */
					parts[0][0] = prim * h;
					parts[0][1] = split ? (cnt + 1) / 2 : cnt;
					parts[1][0] = -prim * h;
					parts[1][1] = split ? cnt / 2 : 0;
					np = 2;
				} else {
					/* default direction gets the odd one out */
					parts[0][0] = par ? h : -h;
					parts[0][1] = (cnt + 1) / 2;
					parts[1][0] = -parts[0][0];
					parts[1][1] = cnt / 2;
					np = 2;
				}
			} else {
				parts[0][0] = e;
				parts[0][1] = cnt;
				np = 1;
			}
			for (int p = 0; p < np; p++) {
				int64_t ee = parts[p][0], c = parts[p][1];
				int holder = par, dir;

				if (!c)
					continue;
				if (ee & 1) {
					s1[par][ee > 0 ? 0 : 1] += c;
					holder = 1 - par;
					ee -= ee > 0 ? 1 : -1;
					if (!ee)
						continue;
				}
				dir = (ee > 0) == (holder == 0) ? 0 : 1; /* 0: holder's primary */
				launch[holder][dir][(ee > 0 ? ee : -ee) / 2] += c;
			}
		}
	}
	for (int t = 0; t < len; t++)
		out[t] = 0;
	for (int par = 0; par < 2; par++) {
		for (int dir = 0; dir < 2; dir++)
			if (s1[par][dir] > out[0])
				out[0] = s1[par][dir];
		for (int dir = 0; dir < 2; dir++) {
			int64_t tail = 0;

			for (int j = h; j >= 1; j--) {
				int t;

				tail += launch[par][dir][j];
				t = (dir == 0) != swap ? j : n2 + j;
				if (t < len && tail > out[t])
					out[t] = tail;
			}
		}
	}
}

/*
 * An odd ring's relay against the phase's profile M (per step, the largest
 * message of the rings placed so far): the bundle of each signed offset e,
 * longest first, waits the delay (0..H-|e|) that raises sum_t M[t] least
 * (then hops |e| steps in a row; ties: the earliest). M takes the ring's
 * messages; the delays go to delay[e mod L]. With every delay 0 this is the
 * plain relay of engine/allport.h, front-loaded; the waits let a ring shorter
 * than the phase, or one beside AR's uneven steps, fill the phase evenly.
 */
static void kd_place(int L, const int32_t *b, int H, int64_t *M, uint8_t *delay)
{
	int64_t load[2][KD_MAX_STEPS];

	memset(load[0], 0, (size_t)H * sizeof(load[0][0]));
	memset(load[1], 0, (size_t)H * sizeof(load[0][0]));

	for (int e = L / 2; e >= 1; e--) {
		/* an even ring's antipodes: half each way (the odd one out by node parity), one delay */
		int tie = 2 * e == L;

		for (int dir = 0; dir < 2 - tie; dir++) {
			int idx = dir ? L - e : e, best = 0;
			int64_t cnt = tie ? (b[idx] + 1) / 2 : b[idx], bestc = -1;

			for (int w = 0; w + e <= H && cnt; w++) {
				int64_t c = 0;

				for (int t = w; t < w + e; t++) {
					int64_t now = load[dir][t] > load[!dir][t] ? load[dir][t] : load[!dir][t];
					int64_t then = load[dir][t] + cnt;

					then = then > load[!dir][t] + tie * cnt ? then : load[!dir][t] + tie * cnt;
					c += (then > M[t] ? then : M[t]) - (now > M[t] ? now : M[t]);
				}
				if (bestc < 0 || c < bestc) {
					bestc = c;
					best = w;
				}
			}
			delay[idx] = (uint8_t)best;
			for (int t = best; t < best + e && cnt; t++) {
				load[dir][t] += cnt;
				load[!dir][t] += tie * cnt;
			}
		}
	}
	for (int t = 0; t < H; t++) {
		int64_t m = load[0][t] > load[1][t] ? load[0][t] : load[1][t];

		if (m > M[t])
			M[t] = m;
	}
}

/* Per dimension of phase i, the AR variants it may run: (swap*2 + split) * KD_MAX_STEPS + start. */
static int kd_options(struct kd *g, int i, int d, int H, int *opt)
{
	int h = g->sh->dims[d] / 2, n = 0;

	if (g->sh->dims[d] % 2) { /* an odd ring: a relay placed by kd_place */
		opt[n++] = KD_RELAY * KD_MAX_STEPS;
		return n;
	}
	for (int v = 0; v < 4; v++) {
		int sp = v & 1, len = h + sp;

		if (sp && (g->sh->dims[d] % 4 || len > H))
			continue;
		if (g->dirty[i][d])
			ar_sizes(g->sh->dims[d], kd_bundle(g, i, d), sp, v >> 1, g->sz[i][d][v]);
		opt[n++] = v * KD_MAX_STEPS;
		if (len < H)
			opt[n++] = v * KD_MAX_STEPS + H - len;
	}
	if (g->even_relays)
		opt[n++] = KD_RELAY * KD_MAX_STEPS; /* last: on a tie, AR (fewer block moves) */
	return n;
}

/* Phase i's cost with option o[d] for every even ring, the odd rings placed after them. */
static int64_t kd_comb_cost(struct kd *g, int i, const int *o, uint8_t *delay)
{
	int64_t M[KD_MAX_STEPS], cost = 0;
	int H = g->maxL / 2;

	memset(M, 0, (size_t)H * sizeof(M[0]));

	for (int d = 0; d < g->k; d++) {
		int v = o[d] / KD_MAX_STEPS, st = o[d] % KD_MAX_STEPS;

		if (v == KD_RELAY)
			continue;
		for (int tt = 0; tt < g->sh->dims[d] / 2 + (v & 1); tt++)
			if (g->sz[i][d][v][tt] > M[st + tt])
				M[st + tt] = g->sz[i][d][v][tt];
	}
	for (int d = 0; d < g->k; d++)
		if (o[d] / KD_MAX_STEPS == KD_RELAY)
			kd_place(g->sh->dims[d], kd_bundle(g, i, d), H, M, &delay[d * g->maxL]);
	for (int t = 0; t < H; t++)
		cost += M[t];
	return cost;
}

/* Phase i's choice so far (kd_phase_cost): the best combination and its cost. */
struct kd_search {
	struct kd *g;
	int i, H;
	const int *nopt;
	const int (*opt)[9];
	int o[TC_MAX_DIMS];
	int64_t best, lb;
	uint8_t tmp[TC_MAX_DIMS * KD_MAX_L];
};

static void kd_keep(struct kd_search *q, int64_t cost)
{
	struct kd *g = q->g;
	int i = q->i;

	q->best = cost;
	memcpy(kd_delay(g, i, 0), q->tmp, (size_t)g->k * g->maxL);
	g->split[i] = 0;
	g->swap[i] = 0;
	g->relay[i] = 0;
	for (int d = 0; d < g->k; d++) {
		int v = q->o[d] / KD_MAX_STEPS;

		g->start[i][d] = q->o[d] % KD_MAX_STEPS;
		if (v == KD_RELAY) {
			g->relay[i] |= 1u << d;
			continue;
		}
		g->split[i] |= (unsigned int)(v & 1) << d;
		g->swap[i] |= (unsigned int)(v >> 1) << d;
	}
}

/*
 * Every combination of the options of dimensions d..0, those of k-1..d+1
 * fixed in q->o, whose AR rings' profile so far is M. In the order of a
 * counter whose last dimension is the most significant digit, so the first
 * combination of least cost wins, as in a plain enumeration. Pruned: the
 * phase's cost is the sum over steps of the largest message, and further
 * rings (AR or relays) only raise M, so a prefix whose M already sums to the
 * best cost so far cannot win; and the search stops at the lower bound.
 */
static void kd_search(struct kd_search *q, int d, const int64_t *M)
{
	struct kd *g = q->g;

	if (d < 0) {
		int64_t cost = kd_comb_cost(g, q->i, q->o, q->tmp);

		if (q->best < 0 || cost < q->best)
			kd_keep(q, cost);
		return;
	}
	for (int j = 0; j < q->nopt[d] && q->best != q->lb; j++) {
		int64_t M2[KD_MAX_STEPS], sum = 0;
		int v, st;

		q->o[d] = q->opt[d][j];
		v = q->o[d] / KD_MAX_STEPS;
		st = q->o[d] % KD_MAX_STEPS;
		memcpy(M2, M, (size_t)q->H * sizeof(*M2));
		if (v != KD_RELAY)
			for (int tt = 0; tt < g->sh->dims[d] / 2 + (v & 1); tt++)
				if (g->sz[q->i][d][v][tt] > M2[st + tt])
					M2[st + tt] = g->sz[q->i][d][v][tt];
		for (int t = 0; t < q->H; t++)
			sum += M2[t];
		if (q->best >= 0 && sum >= q->best)
			continue;
		kd_search(q, d - 1, M2);
	}
}

/*
 * Lock-step cost of phase i from the bundles, with the best alignment of the
 * shorter even rings inside the phase (a ring of L nodes takes L/2 of the
 * phase's floor(max(N)/2) steps; it may start later so that its big first
 * steps meet the busiest ring's big steps), Stage 3 first or not, the
 * antipodes split or not; the odd rings then placed by kd_place. The choice
 * is kept in g->start[i], split[i], swap[i] and the phase's delays.
 *
 * The options multiply (up to 9 per ring: 3^5 = 243 combinations a phase on
 * 4x4x4x4x4), and the search prices a phase after every move it tries
 * (kd_greedy, kd_anneal): kd_search prunes the combinations that cannot win
 * and finds the same choice as trying them all.
 */
static int64_t kd_phase_cost(struct kd *g, int i)
{
	int nopt[TC_MAX_DIMS], opt[TC_MAX_DIMS][9];
	struct kd_search q = { .g = g, .i = i, .H = g->maxL / 2, .nopt = nopt, .opt = (const int (*)[9])opt, .best = -1 };
	int64_t M[KD_MAX_STEPS] = { 0 };

	for (int d = 0; d < g->k; d++) {
		const int32_t *b = kd_bundle(g, i, d);
		int64_t hops = 0;

		nopt[d] = kd_options(g, i, d, q.H, opt[d]);
		g->dirty[i][d] = 0;
		/* every step costs at least the mean of a node's two links of d: a phase, half its hops */
		for (int e = 1; e < g->sh->dims[d]; e++)
			hops += (int64_t)b[e] * (2 * e > g->sh->dims[d] ? g->sh->dims[d] - e : e);
		if ((hops + 1) / 2 > q.lb)
			q.lb = (hops + 1) / 2;
	}
	kd_search(&q, g->k - 1, M);
	return q.best;
}

static void kd_apply1(struct kd *g, int o, int ord, int sign)
{
	const int *off = &g->off[(size_t)o * g->k];

	for (int i = 0; i < g->k; i++) {
		int d = g->order[ord][i];

		if (off[d]) {
			kd_bundle(g, i, d)[off[d]] += sign;
			g->dirty[i][d] = 1;
		}
	}
}

static int64_t kd_total(struct kd *g)
{
	int64_t t = 0;

	for (int i = 0; i < g->k; i++) {
		int dirty = 0;

		for (int d = 0; d < g->k; d++)
			dirty |= g->dirty[i][d];
		if (dirty)
			g->phase_cost[i] = kd_phase_cost(g, i);
		t += g->phase_cost[i];
	}
	return t;
}

/* Offset o's order (and, symmetric, its negation's) leaves (sign -1) or joins (1) the bundles. */
static void kd_apply(struct kd *g, int o, int ord, int sign)
{
	kd_apply1(g, o, ord, sign);
	if (g->sym && g->neg[o] != o)
		kd_apply1(g, g->neg[o], ord, sign);
}

static void kd_set(struct kd *g, int o, int ord)
{
	g->choice[o] = (uint16_t)ord;
	if (g->sym)
		g->choice[g->neg[o]] = (uint16_t)ord;
}

/* Whether offset o is one the search moves (symmetric: the smaller of o and -o). */
static int kd_mover(const struct kd *g, int o)
{
	return !g->sym || g->neg[o] >= o;
}

static uint64_t kd_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Simulated annealing from the greedy result: random single-offset moves,
 * uphill ones accepted with probability exp(-delta/T); keeps the best.
 */
static void kd_anneal(struct kd *g, int64_t bound, int64_t cur, uint64_t *rng)
{
	uint16_t *best = malloc((size_t)g->noffs * sizeof(*best));
	int64_t bestc = cur;
	long budget = 30000 + 200L * g->noffs;
	const double T0 = 1.5, T1 = 0.05;
	double T = T0, decay;

	decay = pow(T1 / T0, 1.0 / (double)budget);

	if (!best)
		return;
	memcpy(best, g->choice, (size_t)g->noffs * sizeof(*best));
	for (long it = 0; it < budget && bestc > bound; it++) {
		int o = 1 + (int)(kd_rand(rng) % (uint64_t)(g->noffs - 1));
		int old, ord = (int)(kd_rand(rng) % (uint64_t)g->norders);
		int64_t c;

		if (!kd_mover(g, o))
			o = g->neg[o];
		old = g->choice[o];
		if (ord == old)
			continue;
		kd_apply(g, o, old, -1);
		kd_apply(g, o, ord, 1);
		c = kd_total(g);
		if (c <= cur || (double)(kd_rand(rng) % 1000000) / 1e6 < exp(-(double)(c - cur) / T)) {
			kd_set(g, o, ord);
			cur = c;
			if (c < bestc) {
				bestc = c;
				memcpy(best, g->choice, (size_t)g->noffs * sizeof(*best));
			}
		} else {
			kd_apply(g, o, ord, -1);
			kd_apply(g, o, old, 1);
		}
		T *= decay;
	}
	/* Restore the best and its bundles. */
	for (int o = 1; o < g->noffs; o++)
		kd_apply1(g, o, g->choice[o], -1);
	memcpy(g->choice, best, (size_t)g->noffs * sizeof(*best));
	for (int o = 1; o < g->noffs; o++)
		kd_apply1(g, o, g->choice[o], 1);
	free(best);
}

/*
 * Greedy passes: each offset in turn moves to the order that lowers the
 * lock-step cost most (a random one of the best on a tie), until the bound,
 * a pass without gain, or 60 passes. Returns the cost.
 */
static int64_t kd_greedy(struct kd *g, int64_t bound, int64_t cur, uint64_t *rng)
{
	for (int pass = 0, stale = 0; pass < 60 && cur > bound && stale <= KD_STALE; pass++) {
		int improved = 0;

		for (int o = 1; o < g->noffs && cur > bound; o++) {
			int best = g->choice[o], nbest = 1;
			int64_t bestc = cur;

			if (!kd_mover(g, o))
				continue;
			kd_apply(g, o, g->choice[o], -1);
			for (int ord = 0; ord < g->norders; ord++) {
				int64_t c;

				if (ord == g->choice[o])
					continue;
				kd_apply(g, o, ord, 1);
				c = kd_total(g);
				kd_apply(g, o, ord, -1);
				if (c < bestc) {
					bestc = c;
					best = ord;
					nbest = 1;
				} else if (c == bestc && !(kd_rand(rng) % ++nbest)) {
					best = ord;
				}
			}
			if (bestc < cur)
				improved = 1;
			kd_set(g, o, best);
			kd_apply(g, o, best, 1);
			cur = bestc;
		}
		stale = improved ? 0 : stale + 1;
	}
	return cur;
}

/*
 * The constructive order, tried before any search. Every offset with two or
 * more non-zero coordinates takes the rotation r = (sum of its coordinates)
 * mod k, which puts dimension d in phase (d - r) mod k. On the slice of the
 * offsets whose coordinate d is e (e != 0), the other coordinates then
 * spread the phase of d evenly: exactly when another side is a multiple of
 * k (24x23x24x2x3x2: P/n_d/k blocks of every ring offset in every phase);
 * when every side is prime to k = 3 (16x16x16) the sum of the other two
 * coordinates is 0 mod 3 once more often than the other residues, that once
 * being where they are both 0, i.e. the offset on d's axis. So the offsets
 * on an axis (one non-zero coordinate, whose order only decides the phase
 * of that dimension) are left out of the rule and each goes to the phase
 * its slice has fewest blocks in, the first on a tie. On 16x16x16 every
 * phase's bundles are then flat, the same on the three dimensions (86, 85
 * and 85 blocks at every ring offset), and each phase costs what AR costs on
 * its bundle: together the bound. A side n = 2 mod 3 has one coordinate
 * fewer at residue 2 than at 0 and 1, and two such sides put the excess at
 * residue 1; with relabel (k = 3), kd_label3 counts its coordinate n - 2 as
 * 2 instead of 0, the counts become (m, m + 1, m + 1) and the excess of two
 * such sides returns to 0 (8x8x8, 20x20x20, 32x32x32 at the bound). Which
 * shapes can be made flat this way is a matter of these residue counts
 * (their product over the other sides must be flat but for one more at 0);
 * on the others the construction is a few blocks over (4x4x4x4x4: 520 for
 * 512; 10x10x10, where an odd bundle on a ring of 2 mod 4 nodes splits its
 * antipodes unevenly: 1251 for 1250). Priced with AR alone on the even
 * rings, then with their relays too (24x23x24x2x3x2 meets the bound only
 * relayed: AR's uneven steps leave no room for the 23-ring beside its
 * 24-rings). Returns the cost (-1: out of memory); g holds the orders and
 * bundles.
 */
/* kd_construct's relabelling on k = 3: a side n = 2 mod 3 (5 or more) counts its coordinate n - 2 as 2, not 0. */
static int kd_label3(int n, int c)
{
	return n % 3 == 2 && n >= 5 && c == n - 2 ? 2 : c % 3;
}

static int64_t kd_construct(struct kd *g, int relabel)
{
	int64_t *cnt, cost;
	int k = g->k;

	cnt = calloc((size_t)k * g->maxL * k, sizeof(*cnt));
	if (!cnt)
		return -1;
	for (int o = 1; o < g->noffs; o++) {
		const int *off = &g->off[(size_t)o * k];
		int sum = 0, nz = 0;

		for (int d = 0; d < k; d++) {
			sum += !relabel ? off[d] : kd_label3(g->sh->dims[d], off[d]);
			nz += off[d] != 0;
		}
		g->choice[o] = (uint16_t)(sum % k); /* rotation r: order[r][i] = (r + i) mod k */
		if (nz < 2)
			continue;
		for (int d = 0; d < k; d++)
			if (off[d])
				cnt[((size_t)d * g->maxL + off[d]) * k + (d - g->choice[o] + k) % k]++;
	}
	for (int o = 1; o < g->noffs; o++) {
		const int *off = &g->off[(size_t)o * k];
		int nz = 0, d = 0, best = 0;
		const int64_t *c;

		for (int j = 0; j < k; j++)
			if (off[j]) {
				nz++;
				d = j;
			}
		if (nz != 1)
			continue;
		c = &cnt[((size_t)d * g->maxL + off[d]) * k];
		for (int i = 1; i < k; i++)
			if (c[i] < c[best])
				best = i;
		g->choice[o] = (uint16_t)((d - best + k) % k);
	}
	free(cnt);
	for (int o = 1; o < g->noffs; o++)
		kd_apply1(g, o, g->choice[o], 1);
	g->even_relays = 0;
	cost = kd_total(g);
	if (cost > g->bound) {
		g->even_relays = 1;
		memset(g->dirty, 1, sizeof(g->dirty));
		cost = kd_total(g);
	}
	return cost;
}

/* Back to no orders at all: the state kd_choose's search starts from. */
static void kd_reset(struct kd *g)
{
	memset(g->bundle, 0, (size_t)g->k * g->k * g->maxL * sizeof(*g->bundle));
	memset(g->delay, 0, (size_t)g->k * g->k * g->maxL * sizeof(*g->delay));
	memset(g->phase_cost, 0, (size_t)g->k * sizeof(*g->phase_cost));
	memset(g->choice, 0, (size_t)g->noffs * sizeof(*g->choice));
	memset(g->start, 0, sizeof(g->start));
	memset(g->split, 0, sizeof(g->split));
	memset(g->swap, 0, sizeof(g->swap));
	memset(g->relay, 0, sizeof(g->relay));
	memset(g->dirty, 0, sizeof(g->dirty));
	g->even_relays = 0;
}

static unsigned long kd_nsearches; /* atomic */

unsigned long __tc_kd_searches(void)
{
	return __atomic_load_n(&kd_nsearches, __ATOMIC_RELAXED);
}

/*
 * The orders: kd_construct's when they meet the bound (plain labels, then,
 * on a 3-D torus, relabelled). Otherwise, up to KD_SEARCH_MAX_NODES nodes,
 * a search from scratch (the same on every call: its random numbers come
 * from a fixed seed), kept if it ends below the construction: offsets o and
 * -o share one order (g->neg: the index of -o); start: orders rotating with
 * the sum of the offset's coordinates; then greedy passes with AR alone on
 * the even rings (cheap: few options a phase), then, short of the bound,
 * with the relay allowed on them too, then annealing. So no shape of that
 * size costs more than before the construction came. Above it the
 * construction stays whatever it costs: the search is O(P) per move and
 * needs O(P) moves (16x16x16 took 8 s to reach the bound; 16x12x16x16x2
 * would take hours), while the construction is a few blocks over there
 * (16x12x16x16x2, Sequoia's shape: 196623 for 196608).
 */
static void kd_choose(struct kd *g, int64_t bound)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	int64_t cur;
	int relabel = 0;

	g->bound = bound;
	g->constructed = kd_construct(g, 0);
	if (g->constructed != bound && g->k == 3) {
		int64_t c;

		kd_reset(g);
		c = kd_construct(g, 1);
		if (c >= 0 && (g->constructed < 0 || c <= g->constructed)) {
			g->constructed = c;
			relabel = 1;
		} else {
			kd_reset(g);
			kd_construct(g, 0);
		}
	}
	if (g->constructed == bound || g->no_search || g->noffs > KD_SEARCH_MAX_NODES)
		return;
	kd_reset(g);
	__atomic_add_fetch(&kd_nsearches, 1, __ATOMIC_RELAXED);
	g->neg = malloc((size_t)g->noffs * sizeof(*g->neg));
	g->sym = g->neg != NULL;
	for (int o = 0; g->neg && o < g->noffs; o++) {
		int idx = 0;

		for (int d = 0; d < g->k; d++)
			idx = idx * g->sh->dims[d] + (g->sh->dims[d] - g->off[(size_t)o * g->k + d]) % g->sh->dims[d];
		g->neg[o] = idx;
	}
	for (int o = 0; o < g->noffs; o++) {
		const int *off = &g->off[(size_t)o * g->k];
		int sum = 0;

		for (int d = 0; d < g->k; d++)
			sum += off[d];
		g->choice[o] = (uint16_t)(sum % g->norders);
		if (!kd_mover(g, o))
			g->choice[o] = g->choice[g->neg[o]];
		kd_apply1(g, o, g->choice[o], 1);
	}
	g->even_relays = 0;
	cur = kd_greedy(g, bound, kd_total(g), &rng);
	if (cur > bound) {
		g->even_relays = 1;
		memset(g->dirty, 1, sizeof(g->dirty));
		cur = kd_greedy(g, bound, kd_total(g), &rng);
	}
	if (cur > bound) {
		kd_anneal(g, bound, cur, &rng);
		cur = kd_total(g);
	}
	free(g->neg);
	g->neg = NULL;
	g->sym = 0;
	if (g->constructed >= 0 && cur > g->constructed) {
		kd_reset(g);
		kd_construct(g, relabel);
	}
}

static int kd_dim(void *arg, int node, int32_t a, int32_t b)
{
	const struct kd *g = arg;
	const int *oc = tc_ap_coords(g->ap, a), *tc = tc_ap_coords(g->ap, b);
	int idx = 0;

	(void)node;
	for (int d = 0; d < g->k; d++) {
		int n = g->sh->dims[d], diff = tc[d] - oc[d];

		idx = idx * n + (diff < 0 ? diff + n : diff);
	}
	return g->order[g->choice[idx]][g->phase];
}

/*
 * The ties of a phase: the offsets whose dimension in it is d and that are
 * half of that ring away. Every node holds one block of each offset, so
 * alternating them by their rank in offset order, not in the order they
 * reached the node, gives every node the same halves as before (the message
 * sizes and so the cost are unchanged) and makes the schedule commute with
 * the translations that keep coordinate parities: a node's part then comes
 * from a cell (part()).
 */
static void kd_ties(struct kd *g)
{
	int cnt[TC_MAX_DIMS] = { 0 };

	for (int o = 0; o < g->noffs; o++) {
		int d = g->order[g->choice[o]][g->phase];

		g->tie_rank[o] = 2 * g->off[(size_t)o * g->k + d] == g->sh->dims[d] ? cnt[d]++ : 0;
	}
}

static int kd_tie(void *arg, int node, int d, int32_t a, int32_t b)
{
	const struct kd *g = arg;
	const int *oc = tc_ap_coords(g->ap, a), *tc = tc_ap_coords(g->ap, b);
	int idx = 0;

	(void)node;
	(void)d;
	for (int k = 0; k < g->k; k++) {
		int n = g->sh->dims[k], diff = tc[k] - oc[k];

		idx = idx * n + (diff < 0 ? diff + n : diff);
	}
	return g->tie_rank[idx] & 1;
}

static void kd_free(struct kd *g)
{
	free(g->choice);
	free(g->off);
	free(g->bundle);
	free(g->phase_cost);
	free(g->delay);
	free(g->tie_rank);
}

/* The shape's checks, g's arrays and the orders (kd_choose), their phases' options set. */
static int kd_setup(const struct tc_shape *shape, struct kd *g, const char **why)
{
	if (shape->ndims < 3 || shape->wrap_mask != (1u << shape->ndims) - 1) {
		*why = "allport-kd: needs a torus of 3 or more dimensions; use ar, at2, opt2d or pad";
		return -EOPNOTSUPP;
	}
	if (shape->one_port) {
		*why = "allport-kd: all-port algorithm; use mt3/mtk on one-port tori";
		return -EOPNOTSUPP;
	}
	for (int d = 0; d < shape->ndims; d++) {
		if (shape->dims[d] < 2 || shape->dims[d] > KD_MAX_L) {
			*why = "allport-kd: every side must be 2..64";
			return -EOPNOTSUPP;
		}
		if (shape->dims[d] > g->maxL)
			g->maxL = shape->dims[d];
	}
	/* Orders: the k rotations of (0, 1, ..., k-1) and of its reverse (all 6 when k = 3). */
	g->norders = 2 * g->k;
	for (int r = 0; r < g->k; r++)
		for (int i = 0; i < g->k; i++) {
			g->order[r][i] = (r + i) % g->k;
			g->order[g->k + r][i] = (r + g->k - i) % g->k;
		}
	g->noffs = shape->nodes;
	g->choice = calloc(g->noffs, sizeof(*g->choice));
	g->off = malloc((size_t)g->noffs * g->k * sizeof(*g->off));
	g->bundle = calloc((size_t)g->k * g->k * g->maxL, sizeof(*g->bundle));
	g->phase_cost = calloc(g->k, sizeof(*g->phase_cost));
	g->delay = calloc((size_t)g->k * g->k * g->maxL, sizeof(*g->delay));
	g->tie_rank = malloc((size_t)g->noffs * sizeof(*g->tie_rank));
	if (!g->choice || !g->off || !g->bundle || !g->phase_cost || !g->delay || !g->tie_rank) {
		*why = "allport-kd: out of memory";
		return -ENOMEM;
	}
	for (int o = 0; o < g->noffs; o++)
		tc_shape_coords(shape, o, &g->off[(size_t)o * g->k]);
	kd_choose(g, (int64_t)tc_lower_bound_blocks(shape, TC_ALLTOALL));
	kd_total(g); /* g->start for the chosen orders */
	return 0;
}

static int build_kd(const struct tc_shape *shape, struct kd *g, struct tc_sched **out, const char **why)
{
	int stride[TC_MAX_DIMS];
	struct tc_sched *s = NULL;
	struct tc_ap ap;
	int err;

	err = kd_setup(shape, g, why);
	if (err) {
		kd_free(g);
		return err;
	}
	err = -ENOMEM;
	for (int d = 0; d < shape->ndims; d++)
		stride[d] = 1;
	s = tc_sched_new(shape, TC_ALLTOALL, "allport-kd", KD_CITE, KD_CLAIMS);
	if (!s)
		goto out;
	/* As AT2 (Liu et al., All-Port Tori, Sec. IV-D): a rearrangement at the start of each phase. */
	s->rearranged_blocks = (int64_t)g->k * shape->nodes;
	err = tc_ap_init(&ap, s);
	if (err)
		goto out;
	g->ap = &ap;
	ap.wait = kd_wait;
	ap.wait_ctx = g;
	ap.tie = kd_tie;
	ap.tie_ctx = g;
	for (int o = 0; o < shape->nodes && !err; o++)
		for (int t = 0; t < shape->nodes && !err && tc_sched_src_kept(s, o); t++)
			if (t != o)
				err = tc_ap_hold(&ap, o, o, t);
	for (g->phase = 0; g->phase < g->k && err >= 0; g->phase++) {
		kd_ties(g);
		ap.relay = g->relay[g->phase];
		err = tc_ap_phase(&ap, stride, g->start[g->phase], g->split[g->phase], g->swap[g->phase], kd_dim, g);
	}
	if (err >= 0)
		err = tc_ap_check_done(&ap);
	tc_ap_free(&ap);
out:
	kd_free(g);
	return tc_sched_done(s, err, out, why, "allport-kd: internal error building the schedule");
}

/* struct kd is about 145 KiB (its step sizes per phase and dimension): on
 * the heap, since a schedule may be built on a thread with a small stack
 * (the communicator's progress thread has 256 KiB). */
static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct kd *g = calloc(1, sizeof(*g));
	int err;

	if (!g)
		return tc_sched_done(NULL, -ENOMEM, out, why, "allport-kd: out of memory");
	g->sh = shape;
	g->k = shape->ndims;
	err = build_kd(shape, g, out, why);
	free(g);
	return err;
}

int __tc_kd_cost(const struct tc_shape *shape, int search, int64_t *cost, int64_t *constructed)
{
	struct kd *g = calloc(1, sizeof(*g));
	const char *why = NULL;
	int err;

	if (!g)
		return -ENOMEM;
	g->sh = shape;
	g->k = shape->ndims;
	g->no_search = !search;
	err = kd_setup(shape, g, &why);
	*cost = 0;
	for (int i = 0; !err && i < g->k; i++)
		*cost += g->phase_cost[i];
	*constructed = g->constructed;
	kd_free(g);
	free(g);
	return err;
}

/*
 * The period: AR's primary direction is a node's parity on an even ring
 * (its ties alternate by offset, kd_ties), an odd ring's relay has no
 * parity, and a block's order and waits follow its offset: translations by
 * 2 on even sides, by 1 on odd ones.
 */
static void period(const struct tc_shape *sh, int *mod)
{
	for (int d = 0; d < sh->ndims; d++)
		mod[d] = sh->dims[d] % 2 ? 1 : 2;
}

/*
 * Node n's part, generated for n alone. In phase i a block of offset o
 * (its destination minus its origin) travels dimension d = order[choice[o]][i]
 * by o's coordinate d, from the node it reached in the earlier phases, and
 * what the engine does with it there (engine/allport.h) depends only on o
 * (its ring offset, its tie half kd_tie, its relay wait kd_wait) and on the
 * parity of the ring position it starts from: not on the other blocks. So
 * each (phase, dimension, ring offset, tie half) gives one path per starting
 * parity, a list of hops (step, position from the start, hop), kd_path();
 * node n sends a block of that group in a hop exactly when the block started
 * the phase |from| positions behind n on its ring, and receives one when it
 * started |from + hop| behind. The orders, ties, waits and step layout are
 * the shape's (kd_setup, O(P), built once and cached); node n then visits
 * each group once per hop and each of its blocks once per message that
 * carries it: time and memory proportional to n's traffic, where the cell
 * of 2^k sources (core/part_sym.c) cost 16x that on 24x23x24x2x3x2 (20 s,
 * 826 MiB). tests/unit/test_part.c compares it with the whole schedule's cut.
 */
struct kd_hop {
	int tt;	  /* step of the ring, from the ring's first step in the phase */
	int from; /* position the hop leaves, relative to the block's start */
	int hop;  /* signed hops */
};

#define KD_PATH_MAX (KD_MAX_L + 2)

struct kd_plan {
	struct tc_shape shape;
	struct kd *g; /* orders, per phase starts, splits, swaps, relays and waits */
	int err;
	const char *why;
	uint8_t *tie; /* per phase i and offset o: kd_tie's half, [i * P + o] */
	unsigned int relay[TC_MAX_DIMS]; /* per phase: relayed rings (odd ones too) */
	int base[TC_MAX_DIMS];		 /* per phase: its first raw step */
	uint32_t nraw, nsteps;
	uint32_t *remap; /* raw step -> the schedule's step (empty steps removed), UINT32_MAX empty */
	/* the offsets that travel d in phase i by ring offset r with tie half t:
	 * grp[grp_first[key] .. grp_first[key + 1]), key ((i * k + d) * maxL + r) * 2 + t */
	uint32_t *grp_first, *grp;
	uint64_t used;
	int refs; /* readers outside kd_plan_lock (kd_plan_get to kd_plan_put); kd_plan_lock */
	int heap; /* not one of kd_plans (all were in use): freed by the last kd_plan_put */
};

static size_t kd_key(const struct kd *g, int i, int d, int r, int t)
{
	return (((size_t)i * g->k + d) * g->maxL + r) * 2 + t;
}

/*
 * The hops of a block of phase i on dimension d, at ring offset r (0 < r <
 * L, as kd_dim's index) with tie half tie, from a node of ring parity px:
 * what tc_ap_phase (engine/allport.c) does with it. The count, or -EPROTO
 * when it would not arrive within its stage (the engine fails then too).
 */
static int kd_path(const struct kd *g, int i, int d, int r, int tie, int px, const unsigned int *relay,
		   struct kd_hop *h)
{
	const int L = g->sh->dims[d];
	int e = 2 * r > L ? r - L : r, n = 0, pos = 0, s;

	if ((relay[i] >> d) & 1) {
		/* ap_file_relay: an even ring's antipode goes - when its half differs from the node's parity */
		int w;

		if (2 * e == L && (tie ^ px))
			e = -e;
		w = kd_delay((struct kd *)g, i, d)[(e + L) % L];
		s = e > 0 ? 1 : -1;
		for (int j = 0; j < abs(e); j++)
			h[n++] = (struct kd_hop){ w + j, s * j, s };
		return n;
	}
	{
		const int split = (g->split[i] >> d) & 1, swap = (g->swap[i] >> d) & 1;
		const int len = L / 2 + split, n2 = swap ? len - 1 - L / 4 : L / 4;
		int prim = px ? -1 : 1, first, last;

		/* ap_stage1's ties */
		if (2 * e == L && L % 4 == 0)
			e = split && tie ? -prim * e : prim * e;
		else if (2 * e == L)
			e = (px ^ tie) ? e : -e;
		if (e & 1) { /* Stage 1: one hop, onto the other parity */
			s = e > 0 ? 1 : -1;
			h[n++] = (struct kd_hop){ 0, 0, s };
			pos = s;
			e -= s;
			prim = -prim;
			if (!e)
				return n;
		}
		/* the primary list runs in Stage 2 (first, unless swapped), the secondary in Stage 3 */
		first = ((e > 0) == (prim > 0)) != swap ? 1 : n2 + 1;
		last = first == 1 ? n2 : len - 1;
		s = e > 0 ? 2 : -2;
		if (first + abs(e) / 2 - 1 > last)
			return -EPROTO;
		for (int j = 0; j < abs(e) / 2; j++)
			h[n++] = (struct kd_hop){ first + j, pos + s * j, s };
		return n;
	}
}

static void kd_plan_clear(struct kd_plan *pl)
{
	if (pl->g) {
		kd_free(pl->g);
		free(pl->g);
	}
	free(pl->tie);
	free(pl->remap);
	free(pl->grp_first);
	free(pl->grp);
	memset(pl, 0, sizeof(*pl));
}

/* The shape's orders, ties, groups and steps; 0 or -errno with pl->why. */
static int kd_plan_build(struct kd_plan *pl, const struct tc_shape *shape)
{
	struct kd_hop h[KD_PATH_MAX];
	struct kd *g;
	const int P = shape->nodes;
	size_t nkeys;
	uint8_t *mark = NULL;
	int err;

	pl->shape = *shape;
	g = pl->g = calloc(1, sizeof(*g));
	if (!g)
		goto nomem;
	g->sh = &pl->shape;
	g->k = shape->ndims;
	err = kd_setup(&pl->shape, g, &pl->why);
	if (err)
		return err;
	nkeys = kd_key(g, g->k - 1, g->k - 1, g->maxL - 1, 1) + 1;
	pl->tie = malloc((size_t)g->k * P);
	pl->grp_first = calloc(nkeys + 1, sizeof(*pl->grp_first));
	pl->grp = malloc((size_t)g->k * P * sizeof(*pl->grp));
	if (!pl->tie || !pl->grp_first || !pl->grp)
		goto nomem;
	for (g->phase = 0; g->phase < g->k; g->phase++) {
		int i = g->phase;

		kd_ties(g);
		pl->relay[i] = g->relay[i];
		for (int d = 0; d < g->k; d++)
			if (shape->dims[d] % 2)
				pl->relay[i] |= 1u << d;
		for (int o = 0; o < P; o++) {
			int d = g->order[g->choice[o]][i], r = g->off[(size_t)o * g->k + d];

			pl->tie[(size_t)i * P + o] = g->tie_rank[o] & 1;
			if (r)
				pl->grp_first[kd_key(g, i, d, r, g->tie_rank[o] & 1) + 1]++;
		}
	}
	for (size_t x = 0; x < nkeys; x++)
		pl->grp_first[x + 1] += pl->grp_first[x];
	{
		uint32_t *fill = malloc(nkeys * sizeof(*fill));

		if (!fill)
			goto nomem;
		memcpy(fill, pl->grp_first, nkeys * sizeof(*fill));
		for (int i = 0; i < g->k; i++)
			for (int o = 0; o < P; o++) {
				int d = g->order[g->choice[o]][i], r = g->off[(size_t)o * g->k + d];

				if (r)
					pl->grp[fill[kd_key(g, i, d, r, pl->tie[(size_t)i * P + o])]++] = (uint32_t)o;
			}
		free(fill);
	}
	/* the phases' steps as ap_phase_setup lays them out, relays stretched to their last arrival */
	for (int i = 0; i < g->k; i++) {
		int steps = 0;

		pl->base[i] = (int)pl->nraw;
		for (int d = 0; d < g->k; d++) {
			int L = shape->dims[d], len = L / 2 + ((g->split[i] >> d) & 1);

			for (int r = 1; r < L && (pl->relay[i] >> d) & 1; r++)
				for (int t = 0; t < 2; t++)
					for (int px = 0; px < 2; px++) {
						int nh;

						if (pl->grp_first[kd_key(g, i, d, r, t)] == pl->grp_first[kd_key(g, i, d, r, t) + 1])
							continue;
						nh = kd_path(g, i, d, r, t, px, pl->relay, h);
						if (nh > 0 && h[nh - 1].tt + 1 > len)
							len = h[nh - 1].tt + 1;
					}
			if (g->start[i][d] + len > steps)
				steps = g->start[i][d] + len;
		}
		pl->nraw += (uint32_t)steps;
	}
	/* the steps some block moves in: the others are dropped, as tc_sched_done drops them */
	mark = calloc(pl->nraw + 1, 1);
	pl->remap = malloc((pl->nraw + 1) * sizeof(*pl->remap));
	if (!mark || !pl->remap)
		goto nomem;
	for (int i = 0; i < g->k; i++)
		for (int d = 0; d < g->k; d++)
			for (int r = 1; r < shape->dims[d]; r++)
				for (int t = 0; t < 2; t++)
					for (int px = 0; px < 2; px++) {
						int nh;

						if (pl->grp_first[kd_key(g, i, d, r, t)] == pl->grp_first[kd_key(g, i, d, r, t) + 1])
							continue;
						nh = kd_path(g, i, d, r, t, px, pl->relay, h);
						if (nh < 0) {
							free(mark);
							pl->why = "allport-kd: a block does not arrive within its ring's steps";
							return -EPROTO;
						}
						for (int j = 0; j < nh; j++)
							mark[pl->base[i] + g->start[i][d] + h[j].tt] = 1;
					}
	for (uint32_t x = 0; x < pl->nraw; x++)
		pl->remap[x] = mark[x] ? pl->nsteps++ : UINT32_MAX;
	free(mark);
	return 0;
nomem:
	free(mark);
	pl->why = "allport-kd: out of memory for the shape's part plan";
	return -ENOMEM;
}

static pthread_mutex_t kd_plan_lock = PTHREAD_MUTEX_INITIALIZER;
#define KD_PLANS 2
static struct kd_plan kd_plans[KD_PLANS]; /* protected by kd_plan_lock */
static uint64_t kd_plan_clock;		  /* protected by kd_plan_lock */

/*
 * The plan of shape, cached, with a reference the caller drops with
 * kd_plan_put: a plan is read-only once built, so parts and prices read it
 * without the lock while no other shape can evict it. When every cached
 * plan is in use, a plan of the caller's own (heap). NULL when out of memory.
 */
static struct kd_plan *kd_plan_get(const struct tc_shape *shape)
{
	struct kd_plan *pl, *victim = NULL;

	pthread_mutex_lock(&kd_plan_lock);
	for (int i = 0; i < KD_PLANS; i++) {
		pl = &kd_plans[i];
		if (pl->used && tc_shape_equal(&pl->shape, shape)) {
			pl->used = ++kd_plan_clock;
			pl->refs++;
			pthread_mutex_unlock(&kd_plan_lock);
			return pl;
		}
		if (!pl->refs && (!victim || pl->used < victim->used))
			victim = pl;
	}
	if (victim) {
		kd_plan_clear(victim);
	} else {
		victim = calloc(1, sizeof(*victim));
		if (!victim) {
			pthread_mutex_unlock(&kd_plan_lock);
			return NULL;
		}
		victim->heap = 1;
	}
	pl = victim;
	pl->err = kd_plan_build(pl, shape);
	if (pl->err && pl->g) {
		kd_free(pl->g);
		free(pl->g);
		pl->g = NULL;
	}
	pl->used = ++kd_plan_clock;
	pl->refs = 1;
	pthread_mutex_unlock(&kd_plan_lock);
	return pl;
}

static void kd_plan_put(struct kd_plan *pl)
{
	int last;

	pthread_mutex_lock(&kd_plan_lock);
	last = !--pl->refs && pl->heap;
	pthread_mutex_unlock(&kd_plan_lock);
	if (last) {
		kd_plan_clear(pl);
		free(pl);
	}
}

/* Node n's messages: one per (step, dimension, direction, send or receive). */
struct kd_box {
	struct tc_blk *v;
	uint32_t n, cap;
	int hop;
};

/* Append the blocks of group grp[lo..hi) that start phase i at x (n's coordinates, d's set to xd). */
static int kd_emit(const struct kd_plan *pl, int i, int d, int xd, const int *nc, uint32_t lo, uint32_t hi,
		   struct kd_box *box)
{
	const struct kd *g = pl->g;
	const struct tc_shape *sh = &pl->shape;
	const int k = g->k;

	if (tc_grow((void **)&box->v, &box->cap, box->n + (hi - lo), sizeof(*box->v), 64))
		return -ENOMEM;
	for (uint32_t j = lo; j < hi; j++) {
		uint32_t o = pl->grp[j];
		const int *off = &g->off[(size_t)o * k], *ord = g->order[g->choice[o]];
		int oc[TC_MAX_DIMS], a = 0, b = 0;

		for (int c = 0; c < k; c++)
			oc[c] = c == d ? xd : nc[c];
		for (int q = 0; q < i; q++) /* back over the dimensions travelled in the earlier phases */
			oc[ord[q]] -= off[ord[q]];
		for (int c = 0; c < k; c++) {
			int n = sh->dims[c], ov = oc[c] < 0 ? oc[c] + n : oc[c], tv = ov + off[c];

			a = a * n + ov;
			b = b * n + (tv >= n ? tv - n : tv);
		}
		box->v[box->n].a = a;
		box->v[box->n].b = b;
		box->n++;
	}
	return 0;
}

/*
 * Node n's messages into box[] (index ((step * k + d) * 2 + (hop > 0)) * 2 +
 * receive): their blocks, or with count only how many. only >= 0: just its
 * sends to peer in step only; recv 0: no receives.
 */
static int kd_node(const struct kd_plan *pl, int n, int64_t only, int peer, int recv, int count, struct kd_box *box,
		   size_t nbox)
{
	const struct kd *g = pl->g;
	const struct tc_shape *sh = &pl->shape;
	const int k = g->k;
	struct kd_hop h[KD_PATH_MAX];
	int nc[TC_MAX_DIMS], err = 0;

	tc_shape_coords(sh, n, nc);
	for (int i = 0; i < k && !err; i++)
		for (int d = 0; d < k && !err; d++) {
			const int L = sh->dims[d];

			for (int r = 1; r < L && !err; r++)
				for (int t = 0; t < 2 && !err; t++) {
					size_t key = kd_key(g, i, d, r, t);
					uint32_t lo = pl->grp_first[key], hi = pl->grp_first[key + 1];

					for (int px = 0; px < 2 - L % 2 && lo < hi && !err; px++) {
						int nh = kd_path(g, i, d, r, t, px, pl->relay, h);

						if (nh < 0)
							return nh;
						for (int j = 0; j < nh && !err; j++) {
							uint32_t st = pl->remap[pl->base[i] + g->start[i][d] + h[j].tt];
							/* n sends it when it started at xs (of parity px), receives it when at xr */
							int xs = ((nc[d] - h[j].from) % L + L) % L;
							int xr = ((nc[d] - h[j].from - h[j].hop) % L + L) % L;
							size_t bx = (((size_t)st * k + d) * 2 + (h[j].hop > 0)) * 2;

							if (only >= 0 && (int64_t)st != only)
								continue;
							if (bx + 1 >= nbox)
								return -EPROTO;
							if (only >= 0) {
								int pc[TC_MAX_DIMS];

								memcpy(pc, nc, sizeof(pc));
								pc[d] += h[j].hop;
								if (tc_shape_node(sh, pc) != peer)
									continue;
							}
							for (int rv = 0; rv <= recv && !err; rv++) {
								struct kd_box *x = &box[bx + rv];
								int xd = rv ? xr : xs;

								if (L % 2 == 0 && (xd & 1) != px)
									continue;
								if (x->n && x->hop != h[j].hop)
									return -EPROTO;
								x->hop = h[j].hop;
								if (count)
									x->n += hi - lo;
								else
									err = kd_emit(pl, i, d, xd, nc, lo, hi, x);
							}
						}
					}
				}
		}
	return err;
}

static int kd_part_gen(const struct kd_plan *pl, struct tc_part *p, struct kd_box *box, size_t nbox)
{
	const struct tc_shape *sh = &pl->shape;
	const int k = pl->g->k, n = p->node;
	const int64_t only = tc_part_only_step(p);
	int err = kd_node(pl, n, only, tc_part_only_peer(p), only < 0, 0, box, nbox);

	/* the messages in step order, each box one message */
	for (size_t bx = 0; bx < nbox && !err; bx++) {
		int8_t route[TC_MAX_DIMS] = { 0 };
		int d = (int)(bx / 4 % k), other;

		if (!box[bx].n)
			continue;
		route[d] = (int8_t)(bx % 2 ? -box[bx].hop : box[bx].hop);
		other = tc_shape_walk(sh, n, route);
		route[d] = (int8_t)box[bx].hop;
		err = tc_part_at(p, (uint32_t)(bx / 4 / k));
		if (!err)
			err = bx % 2 ? tc_part_msg(p, other, n, route) : tc_part_msg(p, n, other, route);
		for (uint32_t j = 0; j < box[bx].n && !err; j++)
			err = tc_part_blk(p, box[bx].v[j].a, box[bx].v[j].b);
	}
	return err;
}

static int part(struct tc_part *p, const char **why)
{
	struct kd_box *box = NULL;
	struct kd_plan *pl;
	size_t nbox = 0;
	uint32_t nsteps = 0;
	int err;

	pl = kd_plan_get(&p->shape);
	err = pl ? pl->err : -ENOMEM;
	if (!pl) {
		*why = "allport-kd: out of memory for the shape's part plan";
	} else if (err) {
		*why = pl->why;
	} else {
		nsteps = pl->nsteps;
		nbox = (size_t)nsteps * pl->g->k * 4;
		box = calloc(nbox + 1, sizeof(*box));
		err = box ? kd_part_gen(pl, p, box, nbox) : -ENOMEM;
		if (err)
			*why = err == -ENOMEM ? "allport-kd: out of memory building the node's part" :
						"allport-kd: internal error building the node's part";
	}
	if (pl)
		kd_plan_put(pl);
	for (size_t bx = 0; box && bx < nbox; bx++)
		free(box[bx].v);
	free(box);
	if (err)
		return err;
	p->cite = KD_CITE;
	p->claims = KD_CLAIMS;
	err = tc_part_finish(p, nsteps);
	if (err)
		*why = "allport-kd: the node's part failed its checks";
	return err;
}

/*
 * The whole schedule's price without its blocks (struct tc_algo.price): the
 * sends of the nodes of one cell of the period (at most 2^k nodes), counted
 * from the plan without building a block (kd_node), go through the cost
 * model each for its translates from every node of its class
 * (tc_cost_cell): the steps are contention free and every node sends what
 * its cell node sends, translated, so the model sees what the whole
 * schedule's 72 million messages on 24x23x24x2x3x2 would show it. Where a
 * node's ports serve its messages in order (TC_COST_DIRECT) -EOPNOTSUPP:
 * auto then prices it from the cell's blocks (core/part_sym.h).
 */
static int price(const struct tc_shape *shape, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		 double *time_us, struct tc_cost *cost, const char **why)
{
	int mod[TC_MAX_DIMS], ncell = 0, *cell = NULL, k = shape->ndims, err;
	struct tc_sched *shell = tc_sched_new(shape, TC_ALLTOALL, "allport-kd", KD_CITE, KD_CLAIMS);
	struct tc_cost_state *c = NULL;
	struct kd_box *box = NULL;
	struct tc_msg *msgs = NULL;
	uint32_t nsteps = 0;
	size_t nbox = 0;

	*why = "allport-kd: out of memory pricing the schedule";
	if (!shell)
		return -ENOMEM;
	shell->rearranged_blocks = (int64_t)k * shape->nodes; /* as build_kd */
	period(shape, mod);
	err = tc_cost_begin(shell, p, sizes, nsizes, &c);
	if (!err)
		err = tc_cost_cell(c, mod);
	if (err) {
		*why = err == -EOPNOTSUPP ? "allport-kd: priced from a cell's messages only with routers and all-port nodes (not TC_COST_DIRECT)" :
					    "allport-kd: the cost model refused the shape";
		goto out;
	}
	cell = malloc((size_t)shape->nodes * sizeof(*cell));
	if (!cell) {
		err = -ENOMEM;
		goto out;
	}
	for (int x = 0; x < shape->nodes; x++) {
		int xc[TC_MAX_DIMS], in = 1;

		tc_shape_coords(shape, x, xc);
		for (int d = 0; d < k; d++)
			in &= xc[d] < mod[d];
		if (in)
			cell[ncell++] = x;
	}
	{
		struct kd_plan *pl = kd_plan_get(shape);

		err = pl ? pl->err : -ENOMEM;
		if (!pl) {
			*why = "allport-kd: out of memory for the shape's part plan";
		} else if (err) {
			*why = pl->why;
		} else {
			nsteps = pl->nsteps;
			nbox = (size_t)nsteps * k * 4;
			box = calloc((size_t)ncell * nbox + 1, sizeof(*box));
			err = box ? 0 : -ENOMEM;
			for (int j = 0; j < ncell && !err; j++)
				err = kd_node(pl, cell[j], -1, -1, 0, 1, &box[(size_t)j * nbox], nbox);
			if (err && err != -ENOMEM)
				*why = "allport-kd: internal error counting a node's sends";
		}
		if (pl)
			kd_plan_put(pl);
	}
	msgs = err ? NULL : calloc((size_t)ncell * k * 2 + 1, sizeof(*msgs));
	if (!err && !msgs)
		err = -ENOMEM;
	for (uint32_t st = 0; st < nsteps && !err; st++) {
		struct tc_step_view v = { .step = st, .msgs = msgs };

		for (int j = 0; j < ncell; j++)
			for (int d = 0; d < k; d++)
				for (int sg = 0; sg < 2; sg++) {
					const struct kd_box *x = &box[(size_t)j * nbox + (((size_t)st * k + d) * 2 + sg) * 2];
					struct tc_msg *m = &msgs[v.nmsgs];

					if (!x->n)
						continue;
					memset(m, 0, sizeof(*m));
					m->src = cell[j];
					m->route[d] = (int8_t)x->hop;
					m->dst = tc_shape_walk(shape, cell[j], m->route);
					m->step = st;
					m->nblk = x->n;
					m->op = TC_MSG_COPY;
					v.nmsgs++;
				}
		err = tc_cost_step(c, &v);
		if (err)
			*why = "allport-kd: pricing the schedule's messages failed";
	}
out:
	if (!err) {
		err = tc_cost_end(c, shell, time_us, cost);
		c = NULL;
	}
	if (c)
		tc_cost_end(c, NULL, NULL, NULL);
	free(cell);
	free(box);
	free(msgs);
	tc_sched_free(shell);
	return err;
}

const struct tc_algo tc_algo_allport_kd = {
	.name = "allport-kd",
	.coll = TC_ALLTOALL,
	.summary = "all-port k-D torus, any parity: AR or one-hop relays on every dimension's rings at once, k phases, orders by offset",
	.build = build,
	.part = part,
	.price = price,
	.sym_mod = { 1 }, /* the period is period()'s */
	.sym_period = period,
};
