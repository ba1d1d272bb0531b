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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/algos.h"
#include "core/cost.h"
#include "core/part.h"
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

#define HAM2_CITE_EVEN "Meyer and Sibeyn, Sec. 2, Theorem 1 (zigzag Hamiltonian cycles, 2 packets)"

/* The shapes gossip-ham2 runs on at all: 0, or -EOPNOTSUPP with *why. */
static int ham2_shape(const struct tc_shape *shape, const char **why)
{
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
	return 0;
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	struct ham2_ctx x = { .sh = shape };
	struct tc_gossip_spec spec = {
		.algo = "gossip-ham2",
		.cite = HAM2_CITE_EVEN,
		.npackets = 2,
		.want_cycles = 2,
		.rule = ham2_rule,
		.ctx = &x,
	};

	int err = ham2_shape(shape, why);

	if (err)
		return err;
	if ((shape->dims[0] & 1) || (shape->dims[1] & 1)) {

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

/*
 * Both sides even: the rules make two Hamiltonian cycles through every PU,
 * nothing is handed on or fed, and the engine's run (engine/gossip.c) is
 * time-independent in closed form. On a cycle of m PUs (forward m/2 hops,
 * backward m - 1 - m/2) the PU at place j sends forward in step t (0-based)
 * the packet of the PU at place j - t and backward the packet of j + t; each
 * directed link of a cycle carries one packet per step. The cycles, traced
 * as the engine traces them (from PU 0, its ports in order), are O(P) and
 * kept once per shape.
 */
struct ham2_cyc {
	struct ham2_cyc *next;
	struct tc_shape shape;
	int ok; /* two cycles through every PU */
	int *node[2], *pos[2];
	int8_t *fwd[2], *bwd[2];
};

static pthread_mutex_t ham2_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ham2_cyc *ham2_head; /* protected by ham2_lock; entries never freed or changed */

static void ham2_cyc_free(struct ham2_cyc *c)
{
	for (int k = 0; k < 2; k++) {
		free(c->node[k]);
		free(c->pos[k]);
		free(c->fwd[k]);
		free(c->bwd[k]);
	}
	free(c);
}

/* Trace the rule's cycles as g_trace does (PU 0's unseen ports in order). */
static int ham2_trace(struct ham2_cyc *c, const struct ham2_ctx *x)
{
	const int n = x->sh->nodes;
	int p0 = -1;

	for (int k = 0; k < 2; k++) {
		c->node[k] = malloc(n * sizeof(int));
		c->pos[k] = malloc(n * sizeof(int));
		c->fwd[k] = malloc(n);
		c->bwd[k] = malloc(n);
		if (!c->node[k] || !c->pos[k] || !c->fwd[k] || !c->bwd[k])
			return -ENOMEM;
		for (int i = 0; i < n; i++)
			c->pos[k][i] = -1;
	}
	for (int k = 0; k < 2; k++) {
		int u = 0, in, len = 0;

		/* the first port of PU 0 not on cycle 0 (for k = 1) */
		for (p0++; p0 < 4 && k && (p0 == c->bwd[0][0] || p0 == c->fwd[0][0]); p0++)
			;
		if (p0 >= 4 || ham2_rule(x, 0, p0) < 0)
			return 0;
		in = p0;
		do {
			int out = ham2_rule(x, u, in);

			if (out < 0 || len == n || c->pos[k][u] >= 0)
				return 0;
			c->pos[k][u] = len;
			c->node[k][len] = u;
			c->fwd[k][len] = (int8_t)out;
			c->bwd[k][len] = (int8_t)in;
			len++;
			u = tc_shape_neighbor(x->sh, u, out);
			in = out ^ 1;
		} while (u != 0 || in != p0);
		if (len != n)
			return 0;
	}
	/* edge-disjoint: PU 0's four ports are two per cycle */
	c->ok = c->fwd[0][0] != c->fwd[1][0] && c->fwd[0][0] != c->bwd[1][0] && c->bwd[0][0] != c->fwd[1][0] &&
		c->bwd[0][0] != c->bwd[1][0];
	return 0;
}

static int ham2_cycles(const struct tc_shape *sh, const struct ham2_cyc **out)
{
	struct ham2_ctx x = { .sh = sh, .rowdim = 0, .coldim = 1, .n1 = sh->dims[0], .n2 = sh->dims[1] };
	struct ham2_cyc *c;
	int err = 0;

	pthread_mutex_lock(&ham2_lock);
	for (c = ham2_head; c; c = c->next)
		if (tc_shape_equal(&c->shape, sh))
			break;
	if (!c) {
		c = calloc(1, sizeof(*c));
		err = c ? ham2_trace(c, &x) : -ENOMEM;
		if (err) {
			if (c)
				ham2_cyc_free(c);
			c = NULL;
		} else {
			c->shape = *sh;
			c->next = ham2_head;
			ham2_head = c;
		}
	}
	pthread_mutex_unlock(&ham2_lock);
	*out = c;
	return err;
}

/* One message of a cycle stream: from the PU at place a to its neighbour through port, packet of place o. */
static int ham2_msg(struct tc_part *pt, const struct ham2_cyc *c, int k, int a, int port, int o)
{
	const int n = pt->shape.nodes, src = c->node[k][((a % n) + n) % n];
	int8_t route[TC_MAX_DIMS] = { 0 };
	int err;

	route[port / 2] = (port & 1) ? -1 : 1;
	err = tc_part_msg(pt, src, tc_shape_neighbor(&pt->shape, src, port), route);
	if (!err)
		err = tc_part_blk(pt, c->node[k][((o % n) + n) % n], k);
	return err;
}

/*
 * A side odd: the square-swap decomposition's two Hamiltonian cycles
 * prepared for parts once per shape (engine/gossip.c: nothing is fed or
 * handed on, so every packet's steps are closed forms). Where no
 * decomposition is found, the partial cycles hand the packets of their
 * out-of-cycle PUs to a neighbour, and those queue into full streams in an
 * order only the whole run settles: TC_PART_WHOLE there.
 */
static struct tc_gossip_prep_cache ham2_preps = TC_GOSSIP_PREP_CACHE_INIT;

static int ham2_prepare_odd(const struct tc_shape *shape, struct tc_gossip_prep **prep, const char **why)
{
	const struct tc_gossip_run r = { .prep = prep };
	struct tc_gossip_spec spec = {
		.algo = "gossip-ham2",
		.cite = "Meyer and Sibeyn, Sec. 2, Theorem 1 with two Hamiltonian cycles from a square-swap decomposition (odd side)",
		.npackets = 2,
		.want_cycles = 2,
	};
	int err = tc_ham_decomp_run(shape, &spec, &r, why);

	return err == -EOPNOTSUPP ? TC_PART_WHOLE : err; /* the partial cycles: see above */
}

static int ham2_part_odd(struct tc_part *pt, const char **why)
{
	return __tc_gossip_part_cached(&ham2_preps, ham2_prepare_odd, pt, "gossip-ham2: out of memory preparing the cycles",
				       why);
}

/*
 * Node's part. Both sides even: the closed form above, 4 sends and 4
 * receives a step, O(P) in all. A side odd: ham2_part_odd.
 */
static int part(struct tc_part *pt, const char **why)
{
	const struct tc_shape *sh = &pt->shape;
	const int n = sh->nodes, f = n / 2, b = n - 1 - n / 2;
	const struct ham2_cyc *c;
	int err = ham2_shape(sh, why);

	if (err)
		return err;
	if ((sh->dims[0] & 1) || (sh->dims[1] & 1))
		return ham2_part_odd(pt, why);
	err = ham2_cycles(sh, &c);
	if (err) {
		*why = "gossip-ham2: out of memory tracing the cycles";
		return err;
	}
	if (!c->ok)
		return TC_PART_WHOLE;
	pt->cite = HAM2_CITE_EVEN;
	pt->claims = TC_CLAIM_CONTENTION_FREE | TC_CLAIM_ONE_HOP;
	pt->npackets = 2;
	/* asked for one step's send (the local check): only that step */
	for (int t = tc_part_only_step(pt) >= 0 ? (int)tc_part_only_step(pt) : 0; t < f && !err; t++) {
		if (!tc_part_wants(pt, t))
			break;
		err = tc_part_at(pt, t);
		for (int k = 0; k < 2 && !err; k++) {
			const int j = c->pos[k][pt->node], jm = (j - 1 + n) % n, jp = (j + 1) % n;

			err = ham2_msg(pt, c, k, j, c->fwd[k][j], j - t);
			if (!err && tc_part_only_peer(pt) < 0)
				err = ham2_msg(pt, c, k, jm, c->fwd[k][jm], jm - t);
			if (!err && t < b)
				err = ham2_msg(pt, c, k, j, c->bwd[k][j], j + t);
			if (!err && t < b && tc_part_only_peer(pt) < 0)
				err = ham2_msg(pt, c, k, jp, c->bwd[k][jp], jp + t);
		}
	}
	if (!err)
		err = tc_part_finish(pt, f);
	if (err)
		*why = "gossip-ham2: building the node's part failed";
	return err;
}

/*
 * One of the two cycles passes through every PU (both, with both sides even or
 * with the square-swap decomposition; with the partial cycles, the one the
 * PUs of column n2 - 2 lie on): its forward stream brings floor(N / 2)
 * packets through each of its links, one a step, so its PUs send in at least
 * that many steps. 0 where the construction may refuse (both sides odd: the
 * decomposition search decides).
 */
static uint64_t send_steps(const struct tc_shape *sh, int *npackets)
{
	const char *why;

	*npackets = 2;
	if (ham2_shape(sh, &why) || ((sh->dims[0] & 1) && (sh->dims[1] & 1)))
		return 0;
	return (uint64_t)sh->nodes / 2;
}

/*
 * The price without the schedule wherever two full Hamiltonian cycles run
 * (both sides even: Theorem 1's zigzag cycles; a side odd: the square-swap
 * decomposition, when found). With f = floor(N/2) and b = N - 1 - f: in
 * each step t < b every PU sends one packet forward and one backward on
 * each cycle, one hop each, so each of its four out-links and four in-links
 * carries exactly one one-packet message; in the steps b <= t < f (one, the
 * last, when N is even; none when N is odd) only the forward streams run,
 * two sends and two receives a PU. Every PU and every link is busy alike in
 * every step, so the cost model's state of one PU stands for all: the
 * schedule costs what the translation-invariant schedule costs in which
 * every node sends one one-packet message through each of its ports in
 * steps t < b and through its + port of each dimension in steps b <= t < f.
 * That one is priced from node 0's messages alone (tc_cost_cell with period
 * 1): O(N) time and memory, where the whole schedule moves about N^2 packets
 * N/2 hops each. Routers only (TC_COST_DIRECT serves a port's messages in
 * turn: -EOPNOTSUPP, priced another way). tests/unit/test_part.c compares
 * it with the whole schedule's price on every shape it applies to.
 */
static int price(const struct tc_shape *shape, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		 double *time_us, struct tc_cost *cost, const char **why)
{
	const int n = shape->nodes, f = n / 2, b = n - 1 - n / 2, one[TC_MAX_DIMS] = { 1, 1, 1, 1, 1, 1 };
	struct tc_cost_state *c = NULL;
	struct tc_msg msgs[4];
	const struct ham2_cyc *cy;
	struct tc_sched *shell;
	int err = ham2_shape(shape, why);

	if (err)
		return err;
	if (p && (p->flags & TC_COST_DIRECT)) {
		*why = "gossip-ham2: priced without its schedule only on routers (not TC_COST_DIRECT)";
		return -EOPNOTSUPP;
	}
	if ((shape->dims[0] & 1) || (shape->dims[1] & 1)) {
		/* two full cycles where the square swaps find them: node 0's part says so (not TC_PART_WHOLE) */
		struct tc_part *pt = tc_part_new(shape, TC_ALLGATHER, "gossip-ham2", NULL, 0, 0);

		if (!pt) {
			*why = "gossip-ham2: out of memory for node 0's part";
			return -ENOMEM;
		}
		err = ham2_part_odd(pt, why);
		tc_part_free(pt);
		if (err == TC_PART_WHOLE) {
			*why = "gossip-ham2: partial cycles (no Hamiltonian decomposition found): priced whole";
			return -EOPNOTSUPP;
		}
		if (err)
			return err;
	} else {
		err = ham2_cycles(shape, &cy);
		if (err) {
			*why = "gossip-ham2: out of memory tracing the cycles";
			return err;
		}
		if (!cy->ok) {
			*why = "gossip-ham2: the rules make no two Hamiltonian cycles here";
			return -EOPNOTSUPP;
		}
	}
	shell = tc_sched_new(shape, TC_ALLGATHER, "gossip-ham2", HAM2_CITE_EVEN,
			     TC_CLAIM_CONTENTION_FREE | TC_CLAIM_ONE_HOP);
	if (!shell) {
		*why = "gossip-ham2: out of memory pricing the schedule";
		return -ENOMEM;
	}
	shell->npackets = 2;
	err = tc_cost_begin(shell, p, sizes, nsizes, &c);
	if (!err)
		err = tc_cost_cell(c, one);
	for (int t = 0; t < f && !err; t++) {
		struct tc_step_view v = { .step = (uint32_t)t, .msgs = msgs };

		for (int port = 0; port < 4; port++) {
			if (t >= b && (port & 1))
				continue; /* the last step: the forward streams only, one + port a dimension */
			memset(&msgs[v.nmsgs], 0, sizeof(msgs[0]));
			msgs[v.nmsgs].src = 0;
			msgs[v.nmsgs].dst = tc_shape_neighbor(shape, 0, port);
			msgs[v.nmsgs].route[port / 2] = (port & 1) ? -1 : 1;
			msgs[v.nmsgs].step = (uint32_t)t;
			msgs[v.nmsgs].nblk = 1;
			v.nmsgs++;
		}
		err = tc_cost_step(c, &v);
	}
	if (!err) {
		err = tc_cost_end(c, shell, time_us, cost);
		c = NULL;
	}
	if (c)
		tc_cost_end(c, NULL, NULL, NULL);
	tc_sched_free(shell);
	if (err)
		*why = err == -ENOMEM ? "gossip-ham2: out of memory pricing the schedule" :
					"gossip-ham2: pricing the schedule failed";
	return err;
}

const struct tc_algo tc_algo_gossip_ham2 = {
	.name = "gossip-ham2",
	.coll = TC_ALLGATHER,
	.summary = "2-packet gossip on zigzag Hamiltonian cycles (Meyer and Sibeyn, Thm 1)",
	.build = build,
	.part = part,
	.send_steps = send_steps,
	.price = price,
};
