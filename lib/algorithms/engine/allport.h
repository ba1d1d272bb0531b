/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The all-port ring engine shared by the all-port complete-exchange
 * algorithms (ar, at2, allport-kd; pad through them). Private to those files.
 *
 * The engine holds, per node, the blocks that node has, and runs phases. In a
 * phase every block that still has to travel picks one dimension (a callback
 * decides), and every node runs Algorithm AR (Liu et al., All-Port Tori, Sec. III) on the ring of its
 * dimension, all dimensions in the same steps. A ring may be logical: with
 * stride g the ring of dimension d is the nodes whose coordinate d is
 * congruent mod g (AT2's rows and columns of one group, g = 2); its length is
 * L = dims[d] / g, which must be even for AR (an odd ring relays one hop a
 * step, below).
 *
 * AR on a (logical) ring of L nodes, a block at logical offset e from its
 * target (shortest, |e| <= L/2):
 *   step 0      (Stage 1) blocks with e odd go one logical hop towards the
 *               target: they land on a node of the other parity.
 *   steps 1..   (Stage 2) the even sub-ring relays towards +, the odd sub-ring
 *               towards - (the primary direction D of a node: + when its
 *               logical index is even), two logical hops per message; a node
 *               forwards everything it holds for that direction.
 *   then        (Stage 3) the same in the other direction.
 * Stage 2 lasts floor(L/4) steps, Stage 3 ceil(L/4) - 1: L/2 steps in all.
 * Ties (|e| = L/2, both directions shortest) are split by node parity, as the
 * transmission count ceil(L^2/8) requires: when L = 0 mod 4 the antipode is on
 * the same sub-ring and goes the holder's primary way (even +, odd -); when
 * L = 2 mod 4 it is on the other sub-ring and Stage 1 sends it from an even
 * node towards - and from an odd node towards +, so that it continues in the
 * receiver's primary direction (a bundle of ties alternates over the order
 * its blocks came in, or with tie_by_origin splits by their origins' parity). Every link is then used by one message per
 * step (even sub-ring + links, odd sub-ring - links, and the reverse), and the
 * messages of one step of one node have equal size on every node class.
 *
 * An odd ring (L odd: no antipode, no parity) is a one-hop relay: in each of
 * its (L-1)/2 steps every node sends, one logical hop each way, everything it
 * holds for that direction (its own blocks and those it received the step
 * before). The + links of step t carry the blocks with offset e > t, so the
 * ring carries sum_e |e| b(e) / 2 over its steps, the bound for a ring,
 * (L^2 - 1)/8 for one block per offset. An even ring may relay too (the
 * caller's relay mask): its antipodes alternate between the two directions,
 * the first + on an even node and - on an odd one. A relay's blocks may wait
 * before they leave (the caller's wait function), which shapes its steps'
 * sizes to fit beside the other rings of the phase.
 */
#ifndef TC_ALLTOALL_ALLPORT_H
#define TC_ALLTOALL_ALLPORT_H

#include <stdint.h>

#include "core/sched.h"

/*
 * 8 bytes, not 12: a 128x128 exchange keeps 2.7e8 of them. b < 2^23 nodes
 * (tc_ap_init refuses larger shapes) and |e| <= 127 (a ring of at most 254
 * logical nodes: routes are int8 hops anyway); vec_push checks both.
 */
struct tc_ap_item {
	int32_t a;	/* the block {a, b} */
	int32_t b : 24;
	int32_t e : 8;	/* remaining logical offset in the current phase */
};
#define TC_AP_MAX_NODES (1 << 23)

/*
 * On a relay, how many steps (0..TC_AP_MAX_WAIT-1) the blocks at logical
 * offset e (signed; an even ring's antipodes as +L/2 and -L/2) of dimension
 * d wait before they leave; they then hop every step. The ring's steps
 * stretch to the last arrival.
 */
typedef int (*tc_ap_wait_fn)(void *ctx, int d, int e);
/*
 * Which half (0 or 1) of the ties that node holds on dimension d block
 * {a, b} is in, where they alternate (Stage 1 of L = 2 mod 4, split
 * antipodes, relayed antipodes): the k-th tie's half is k & 1 without it.
 * A function of the block, not of the order blocks arrived in, makes the
 * schedule commute with translations (core/part_sym.c).
 */
typedef int (*tc_ap_tie_fn)(void *ctx, int node, int d, int32_t a, int32_t b);
#define TC_AP_MAX_WAIT 32

struct tc_ap_vec {
	struct tc_ap_item *v;
	uint32_t n, cap;
};

struct tc_ap {
	struct tc_sched *s;
	const struct tc_shape *sh;
	int nodes, ndims;
	int *coords;		/* nodes * ndims */
	struct tc_ap_vec *hold; /* per node: blocks held between phases */
	struct tc_ap_vec *next; /* per node: hold being built by the running phase */
	struct tc_ap_vec *work; /* per node and dimension: TC_AP_NLISTS lists */
	struct tc_ap_vec out[2];
	/* even rings (bit d) that run the one-hop relay instead of AR; set by the caller */
	unsigned int relay;
	/* 1: the ties of an L = 2 mod 4 ring split by the parity of the block's
	 * origin across the other dimensions, not alternating in the order the
	 * blocks came (the schedule is then translation invariant); set by the caller */
	int tie_by_origin;
	/* relays: when a block leaves (NULL: all at once); set by the caller */
	tc_ap_wait_fn wait;
	void *wait_ctx;
	/* ties that alternate (not tie_by_origin): which half a block is in,
	 * from the block alone (NULL: the order the blocks came in); set by the caller */
	tc_ap_tie_fn tie;
	void *tie_ctx;
	struct tc_ap_vec *waitq; /* per node, dimension and delay; allocated on first use */
};

/* Which dimension (0..ndims-1) block {a, b} held by node travels in this
 * phase, or -1 to stay. A block already at its coordinate stays anyway. */
typedef int (*tc_ap_dim_fn)(void *ctx, int node, int32_t a, int32_t b);

static inline const int *tc_ap_coords(const struct tc_ap *ap, int node)
{
	return &ap->coords[(size_t)node * ap->ndims];
}

/* Shortest signed offset from a to b on a ring of n (the tie n/2 as +n/2). */
static inline int tc_ap_delta(int n, int a, int b)
{
	int diff = b - a;

	if (diff < 0)
		diff += n;
	if (2 * diff > n)
		diff -= n;
	return diff;
}

/* allport.c */
int tc_ap_init(struct tc_ap *ap, struct tc_sched *s);
/* Node holds block {a, b}. */
int tc_ap_hold(struct tc_ap *ap, int node, int32_t a, int32_t b);
/* One phase: stride[d] > 0 for the dimensions that run AR (L = dims/stride
 * even) or the odd relay (L odd, no split or swap), 0 for the others; the
 * ring of dimension d runs its floor(L/2) steps from
 * the phase's step start[d] (start NULL: all from the first). Bit d of split
 * (L = 0 mod 4 only): the antipodes alternate between the primary and the
 * secondary direction, and Stage 3 takes one step more (L/2 + 1 in all).
 * Bit d of swap: Stage 3 runs before Stage 2 (a node still uses one link
 * per direction per step; the step that carries only antipodes comes last).
 * Returns the number of steps it added or -errno. */
int tc_ap_phase(struct tc_ap *ap, const int *stride, const int *start, unsigned int split, unsigned int swap,
		tc_ap_dim_fn fn, void *ctx);
/* 0 when every node holds exactly the blocks addressed to it, else -EPROTO. */
int tc_ap_check_done(const struct tc_ap *ap);
void tc_ap_free(struct tc_ap *ap);

#endif /* TC_ALLTOALL_ALLPORT_H */
