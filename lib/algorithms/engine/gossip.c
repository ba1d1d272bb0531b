// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The time-independent gossip engine (engine/gossip.h has the spec): Meyer
 * and Sibeyn, "Gossiping Large Packets on Full-Port Tori" (Sections 2 and
 * 3), run as a simulation. An algorithm gives a per-node rule that pairs
 * in-ports with out-ports; the engine checks and caches the rule, traces the
 * cycles it makes, injects every packet into its cycle (handing it to a
 * neighbour when its origin is off that cycle), binds the PUs a cycle misses
 * to relay segments or to one or two one-hop feeders and chooses which
 * feeder passes which packet (forward/backward switching), then runs the
 * rules step by step and turns the recorded sends into schedule steps.
 * gossip-ham2 and gossip-ham1 (2D, 3D and d-D) build on it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/engine/gossip.h"

#define TC_GOSSIP_MAX_CYCLES (2 * TC_MAX_DIMS)

enum { EV_CYC, EV_FEED, EV_HAND };

struct g_ev {
	int32_t node, port, item, hops;
	int8_t type, cyc;
	uint32_t ready; /* the step it became sendable */
};

struct g_send {
	uint32_t step;
	int32_t src, port, item;
};

struct g_feed {
	int cyc, feeder, port, target;
};

/*
 * A feeding group: the one-hop feeders of one out-of-cycle (node, cycle),
 * or the two ends of one relay segment (seg_off: its offset in the spec's
 * seg[], else -1). Which feeder passes which packet is decided per group,
 * from the group's feeds and the cycle's arrival times alone.
 */
struct g_group {
	int f0, nf, c, seg_off;
};

struct g_state {
	const struct tc_shape *sh;
	const struct tc_gossip_spec *spec;
	int n, np, ncyc, nitems;
	int *pair;			  /* n*np: the rule, cached */
	int *nb;			  /* n*np: the neighbour behind each port, cached */
	int *pos;			  /* ncyc*n: position on cycle or -1 */
	int *cnode[TC_GOSSIP_MAX_CYCLES]; /* per cycle: nodes in order */
	int *cfwd[TC_GOSSIP_MAX_CYCLES];  /* per cycle: forward out port */
	int *cbwd[TC_GOSSIP_MAX_CYCLES];  /* per cycle: backward out port */
	int clen[TC_GOSSIP_MAX_CYCLES];
	unsigned char *used;		  /* n*np: directed link used by a cycle or a feed */
	int *item_cyc, *item_at, *item_t0, *item_port; /* injection; port: handoff port */
	struct g_feed *feeds;
	int nfeeds;
	struct g_group *groups;
	int ngroups;
	int *relay;			  /* n*np: out port for a feed arriving on this in-port, or -1 */
	unsigned char *covered;		  /* ncyc*n: (cycle, node) fed by a relay segment */
	unsigned char *pass;		  /* nfeeds*nitems: 0 no, 1 pass it, 2 pass it one step after it arrives */
	int *feed_first;		  /* n+1, feeds sorted by feeder */
	struct g_send *sends;
	uint32_t nsends, capsends;
	uint64_t *recv;			  /* n*nitems bits: node received item (g_run) */
	int twice;			  /* some node received some item twice */
};

static int g_push_send(struct g_state *g, uint32_t step, int src, int port, int item)
{
	if (tc_grow((void **)&g->sends, &g->capsends, g->nsends + 1, sizeof(*g->sends), 4096))
		return -ENOMEM;
	g->sends[g->nsends].step = step;
	g->sends[g->nsends].src = src;
	g->sends[g->nsends].port = port;
	g->sends[g->nsends].item = item;
	g->nsends++;
	return 0;
}

/* Cache and check the rule: an involution on ports, only toward neighbours. */
static int g_rules(struct g_state *g, const char **why)
{
	for (int u = 0; u < g->n; u++) {
		for (int p = 0; p < g->np; p++) {
			int q = g->spec->rule(g->spec->ctx, u, p);

			if (q < -1 || q >= g->np || q == p) {
				*why = "gossip: the rule maps a port outside the node's ports";
				return -EINVAL;
			}
			g->pair[u * g->np + p] = q;
		}
	}
	for (int u = 0; u < g->n; u++) {
		for (int p = 0; p < g->np; p++) {
			int q = g->pair[u * g->np + p];

			if (q < 0)
				continue;
			if (g->pair[u * g->np + q] != p) {
				*why = "gossip: the rule is not symmetric (in -> out but not out -> in)";
				return -EINVAL;
			}
			if (tc_shape_neighbor(g->sh, u, q) < 0) {
				*why = "gossip: the rule leaves the shape";
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* Follow the rule from every unvisited pair of ports: the cycles. */
static int g_trace(struct g_state *g, const char **why)
{
	unsigned char *seen = calloc((size_t)g->n * g->np, 1);
	int err = 0;

	if (!seen)
		return -ENOMEM;
	g->ncyc = 0;
	for (int u0 = 0; u0 < g->n && !err; u0++) {
		for (int p0 = 0; p0 < g->np && !err; p0++) {
			int c = g->ncyc, len = 0, u = u0, in = p0;

			if (g->pair[u0 * g->np + p0] < 0 || seen[u0 * g->np + p0])
				continue;
			if (c == TC_GOSSIP_MAX_CYCLES || c >= g->spec->want_cycles) {
				*why = "gossip: the rules make more cycles than the construction has on this shape";
				err = -EOPNOTSUPP;
				break;
			}
			g->cnode[c] = malloc(g->n * sizeof(int));
			g->cfwd[c] = malloc(g->n * sizeof(int));
			g->cbwd[c] = malloc(g->n * sizeof(int));
			if (!g->cnode[c] || !g->cfwd[c] || !g->cbwd[c]) {
				err = -ENOMEM;
				break;
			}
			g->ncyc++;
			do {
				int outp = g->pair[u * g->np + in];

				if (g->pos[c * g->n + u] >= 0 || len == g->n) {
					*why = "gossip: a cycle of the rules visits a node twice on this shape";
					err = -EOPNOTSUPP;
					break;
				}
				seen[u * g->np + in] = 1;
				seen[u * g->np + outp] = 1;
				g->pos[c * g->n + u] = len;
				g->cnode[c][len] = u;
				g->cfwd[c][len] = outp;
				g->cbwd[c][len] = in;
				g->used[u * g->np + outp] = 1;
				g->used[u * g->np + in] = 1;
				len++;
				u = tc_shape_neighbor(g->sh, u, outp);
				in = outp ^ 1;
			} while (u != u0 || in != p0);
			g->clen[c] = len;
		}
	}
	free(seen);
	if (!err && g->ncyc != g->spec->want_cycles) {
		*why = "gossip: the rules make fewer cycles than the construction has on this shape";
		err = -EOPNOTSUPP;
	}
	return err;
}

static int g_half_fwd(int m)
{
	return m / 2;
}

/* Time (steps after the start) at which the cycle copies of item pass node u on its cycle. */
static int g_arrival(const struct g_state *g, int item, int u)
{
	int c = g->item_cyc[item], m = g->clen[c];
	int i = g->pos[c * g->n + g->item_at[item]], j = g->pos[c * g->n + u];
	int k = j - i < 0 ? j - i + m : j - i; /* both positions lie in 0..m-1 */

	return g->item_t0[item] + (k <= g_half_fwd(m) ? k : m - k);
}

/* Where every packet enters a cycle; a packet whose origin is off its cycle is handed to a neighbour on it. */
static int g_inject(struct g_state *g, struct tc_gossip_info *info, const char **why)
{
	const int npk = g->spec->npackets;

	for (int o = 0; o < g->n; o++) {
		for (int p = 0; p < npk; p++) {
			int it = o * npk + p, c = -1, best = -1;

			if (npk > 1) {
				c = p;
			} else {
				int q = g->spec->inject ? g->spec->inject(g->spec->ctx, o) : -1;

				/* the cycle leaving o through port q, else the first through o */
				for (int k = 0; k < g->ncyc && c < 0 && q >= 0; k++)
					if (g->pos[k * g->n + o] >= 0 &&
					    (g->cfwd[k][g->pos[k * g->n + o]] == q || g->cbwd[k][g->pos[k * g->n + o]] == q))
						c = k;
				for (int k = 0; k < g->ncyc && c < 0; k++)
					if (g->pos[k * g->n + o] >= 0)
						c = k;
				if (c < 0)
					c = 0;
			}
			g->item_cyc[it] = c;
			g->item_at[it] = o;
			g->item_t0[it] = 0;
			g->item_port[it] = -1;
			if (g->pos[c * g->n + o] >= 0)
				continue;
			/* hand it to a neighbour on cycle c, on a free link if there is one */
			for (int q = 0; q < g->np; q++) {
				int v = tc_shape_neighbor(g->sh, o, q);

				if (v < 0 || g->pos[c * g->n + v] < 0)
					continue;
				if (best < 0 || (!g->used[o * g->np + q] && g->used[o * g->np + best]))
					best = q;
			}
			if (best < 0) {
				*why = "gossip: an origin is neither on nor next to a cycle";
				return -EOPNOTSUPP;
			}
			g->item_at[it] = tc_shape_neighbor(g->sh, o, best);
			g->item_t0[it] = 1;
			g->item_port[it] = best;
			if (info)
				info->handoffs++;
		}
	}
	return 0;
}

/* Kuhn's augmenting path over (feeder, time) slots of capacity one; vis[s] == stamp: seen in this search. */
static int g_augment(int item, const int *opt, int nopt, int *slot_item, int *item_slot, uint32_t *vis, uint32_t stamp)
{
	for (int k = 0; k < nopt; k++) {
		int s = opt[item * nopt + k];

		if (s < 0 || vis[s] == stamp)
			continue;
		vis[s] = stamp;
		if (slot_item[s] < 0 || g_augment(slot_item[s], opt, nopt, slot_item, item_slot, vis, stamp)) {
			slot_item[s] = item;
			item_slot[item] = s;
			return 1;
		}
	}
	return 0;
}

/*
 * g_augment for packets of two options, without recursion and with the same
 * result: a packet displaced from a slot (seen, so skipped) can only try its
 * other option, so each search is a chain from one of the root's options;
 * a chain that ends on a free slot is walked again to move every packet on it.
 */
static int g_augment2(int item, const int *opt, int *slot_item, int *item_slot, uint32_t *vis, uint32_t stamp)
{
	for (int k = 0; k < 2; k++) {
		int s = opt[2 * item + k];

		if (s < 0 || vis[s] == stamp)
			continue;
		vis[s] = stamp;
		for (int at = s;;) {
			int y = slot_item[at], o;

			if (y < 0) { /* free: shift the chain from the root */
				for (int x = item, t = s;;) {
					int prev = slot_item[t];

					slot_item[t] = x;
					item_slot[x] = t;
					if (prev < 0)
						return 1;
					t = opt[2 * prev] == t ? opt[2 * prev + 1] : opt[2 * prev];
					x = prev;
				}
			}
			o = opt[2 * y] == at ? opt[2 * y + 1] : opt[2 * y];
			if (o < 0 || vis[o] == stamp)
				break;
			vis[o] = stamp;
			at = o;
		}
	}
	return 0;
}

/*
 * Scratch for placing packets on feeding slots: slot e * (tmax + 1) + t is
 * the link of feeder (or segment end) e in step t, of capacity one.
 */
struct g_match {
	int *items;	/* the packets to place */
	int *opt;	/* nopt candidate slots per packet, -1 for none */
	int *item_slot; /* the slot a packet got, or -1 */
	int *pick;	/* g_feed_match: the feeder (0 or 1) that passes each packet */
	int *slot_item; /* 2 * (tmax + 1): the packet a slot holds, or -1 */
	uint32_t *vis;	/* 2 * (tmax + 1): the search that last saw a slot (stamp), so none is cleared per packet */
	uint32_t stamp;
	int tmax;
	/* g_match2's graph: slots are vertices, a packet of two options an edge */
	int *adj_first; /* 2 * (tmax + 1) + 1: CSR of the packets each slot can take */
	int *adj;	/* 2 * nitems */
	int *deg;	/* 2 * (tmax + 1): packets a slot can still take, not yet placed */
	int *comp;	/* 2 * (tmax + 1): the slots of one component */
	int *peel;	/* 4 * (tmax + 1): slots left with one packet to take */
};

static int g_match_init(struct g_match *mt, const struct g_state *g)
{
	const int nit = g->nitems;

	mt->tmax = 2;
	for (int c = 0; c < g->ncyc; c++)
		if (g->clen[c] / 2 + 2 > mt->tmax)
			mt->tmax = g->clen[c] / 2 + 2;
	mt->items = malloc(nit * sizeof(int));
	mt->opt = malloc(4 * nit * sizeof(int));
	mt->item_slot = malloc(nit * sizeof(int));
	mt->pick = malloc(nit * sizeof(int));
	mt->slot_item = malloc(2 * (mt->tmax + 1) * sizeof(int));
	mt->vis = calloc(2 * (mt->tmax + 1), sizeof(*mt->vis));
	mt->stamp = 0;
	mt->adj_first = malloc((2 * (mt->tmax + 1) + 1) * sizeof(int));
	mt->adj = malloc(2 * nit * sizeof(int));
	mt->deg = malloc(2 * (mt->tmax + 1) * sizeof(int));
	mt->comp = malloc(2 * (mt->tmax + 1) * sizeof(int));
	mt->peel = malloc(4 * (mt->tmax + 1) * sizeof(int));
	if (!mt->items || !mt->opt || !mt->item_slot || !mt->pick || !mt->slot_item || !mt->vis || !mt->adj_first ||
	    !mt->adj || !mt->deg || !mt->comp || !mt->peel)
		return -ENOMEM;
	return 0;
}

static void g_match_free(struct g_match *mt)
{
	free(mt->items);
	free(mt->opt);
	free(mt->item_slot);
	free(mt->pick);
	free(mt->slot_item);
	free(mt->vis);
	free(mt->adj_first);
	free(mt->adj);
	free(mt->deg);
	free(mt->comp);
	free(mt->peel);
}

/* The slot of packet x other than s (s itself for a packet of one option), or -1. */
static int g_other(const int *opt, int x, int s)
{
	int a = opt[2 * x], b = opt[2 * x + 1];

	if (a < 0 || b < 0 || a == b)
		return a < 0 ? b : a;
	return a == s ? b : a;
}

/* Place packet x on slot s and take it out of the graph. */
static void g_place2(struct g_match *mt, int x, int s)
{
	int o = g_other(mt->opt, x, s);

	mt->slot_item[s] = x;
	mt->item_slot[x] = s;
	mt->deg[s]--;
	if (o != s)
		mt->deg[o]--;
}

/* A packet slot s can still take (not yet placed), or -1. */
static int g_live(const struct g_match *mt, int s)
{
	for (int i = mt->adj_first[s]; i < mt->adj_first[s + 1]; i++)
		if (mt->item_slot[mt->adj[i]] < 0)
			return mt->adj[i];
	return -1;
}

/*
 * One component of g_match2 (slots comp[0..nv-1], ne packets). A slot left
 * with one packet to take gets it (some maximum matching does so). What
 * remains of a tree is its root: its earliest slot (the paper's step counts;
 * the latest would leave the last step free and end one step sooner, see
 * docs/benchmarks.md); what remains of a component with one cycle is that
 * cycle, each packet placed on the next slot round it. Denser components are
 * left to g_augment2.
 */
static void g_match2_comp(struct g_match *mt, int nv, int ne)
{
	const int tlen = mt->tmax + 1;
	int root = -1, np = 0;

	if (ne == nv - 1)
		for (int i = 0; i < nv; i++)
			if (root < 0 || mt->comp[i] % tlen < root % tlen ||
			    (mt->comp[i] % tlen == root % tlen && mt->comp[i] < root))
				root = mt->comp[i];
	for (int i = 0; i < nv; i++)
		if (mt->deg[mt->comp[i]] == 1 && mt->comp[i] != root)
			mt->peel[np++] = mt->comp[i];
	while (np) {
		int s = mt->peel[--np], x, o;

		if (mt->deg[s] != 1 || mt->slot_item[s] >= 0)
			continue;
		x = g_live(mt, s);
		o = g_other(mt->opt, x, s);
		g_place2(mt, x, s);
		if (o != s && mt->deg[o] == 1 && o != root && mt->slot_item[o] < 0)
			mt->peel[np++] = o;
	}
	if (ne != nv)
		return;
	for (int i = 0; i < nv; i++) {
		int at = mt->comp[i], x;

		while (mt->deg[at] > 0 && (x = g_live(mt, at)) >= 0) {
			int o = g_other(mt->opt, x, at);

			g_place2(mt, x, o);
			at = o;
		}
	}
}

/*
 * A maximum matching of ni packets of at most two options each to slots, in
 * time linear in ni and the slots (g_augment2 alone, packet after packet,
 * walks chains as long as the cycle on some groups). A packet is an edge
 * between its two slots (a loop for one option); a connected component can
 * place all its packets exactly when it has no more packets than slots.
 */
static int g_match2(struct g_match *mt, int ni)
{
	const int ns = 2 * (mt->tmax + 1);
	int all = 1;

	memset(mt->adj_first, 0, (ns + 1) * sizeof(int));
	for (int s = 0; s < ns; s++)
		mt->slot_item[s] = -1;
	for (int x = 0; x < ni; x++) {
		int a = mt->opt[2 * x], b = mt->opt[2 * x + 1];

		mt->item_slot[x] = -1;
		if (a >= 0)
			mt->adj_first[a + 1]++;
		if (b >= 0 && b != a) /* one slot twice is one option */
			mt->adj_first[b + 1]++;
	}
	for (int s = 0; s < ns; s++) {
		mt->deg[s] = mt->adj_first[s + 1];
		mt->adj_first[s + 1] += mt->adj_first[s];
	}
	for (int x = 0, cur; x < ni; x++)
		for (int k = 0; k < 2; k++)
			if ((cur = mt->opt[2 * x + k]) >= 0 && (!k || cur != mt->opt[2 * x]))
				mt->adj[mt->adj_first[cur] + --mt->deg[cur]] = x;
	for (int s = 0; s < ns; s++) /* the fill above counted deg down to 0 */
		mt->deg[s] = mt->adj_first[s + 1] - mt->adj_first[s];
	if (++mt->stamp == 0) {
		memset(mt->vis, 0, ns * sizeof(*mt->vis));
		mt->stamp = 1;
	}
	for (int s0 = 0; s0 < ns; s0++) {
		int nv = 0, ne = 0;

		if (mt->vis[s0] == mt->stamp || !mt->deg[s0])
			continue;
		mt->vis[s0] = mt->stamp;
		mt->comp[nv++] = s0;
		for (int h = 0; h < nv; h++) {
			int s = mt->comp[h];

			for (int i = mt->adj_first[s]; i < mt->adj_first[s + 1]; i++) {
				int x = mt->adj[i], o = g_other(mt->opt, x, s);

				if (o == s || s < o) /* a packet counted at its lower slot */
					ne++;
				if (o != s && mt->vis[o] != mt->stamp) {
					mt->vis[o] = mt->stamp;
					mt->comp[nv++] = o;
				}
			}
		}
		g_match2_comp(mt, nv, ne);
	}
	for (int x = 0; x < ni; x++) {
		if (mt->item_slot[x] >= 0)
			continue;
		if (++mt->stamp == 0) {
			memset(mt->vis, 0, ns * sizeof(*mt->vis));
			mt->stamp = 1;
		}
		all &= g_augment2(x, mt->opt, mt->slot_item, mt->item_slot, mt->vis, mt->stamp);
	}
	return all;
}

/* Match the first ni packets to slots (nopt options each); 1 if every one got a slot. */
static int g_match_all(struct g_match *mt, int ni, int nopt)
{
	int all = 1;

	for (int s = 0; s < 2 * (mt->tmax + 1); s++)
		mt->slot_item[s] = -1;
	for (int x = 0; x < ni; x++) {
		mt->item_slot[x] = -1;
		if (++mt->stamp == 0) { /* wrapped: clear once */
			memset(mt->vis, 0, 2 * (mt->tmax + 1) * sizeof(*mt->vis));
			mt->stamp = 1;
		}
		all &= g_augment(x, mt->opt, nopt, mt->slot_item, mt->item_slot, mt->vis, mt->stamp);
	}
	return all;
}

/* The packets of cycle c whose origin is not skip (-1: all of them) into items; their number. */
static int g_cycle_items(const struct g_state *g, int c, int skip, int *items)
{
	int ni = 0;

	for (int it = 0; it < g->nitems; it++)
		if (g->item_cyc[it] == c && it / g->spec->npackets != skip)
			items[ni++] = it;
	return ni;
}

/* Check a segment N_0..N_m and find its ports: pt[i] leads from N_i to N_i+1. */
static int g_seg_ports(const struct g_state *g, const int *nd, int m, int *pt, const char **why)
{
	for (int i = 0; i <= m; i++) {
		if (nd[i] < 0 || nd[i] >= g->n) {
			*why = "gossip: a relay segment names a node outside the shape";
			return -EINVAL;
		}
	}
	for (int i = 0; i < m; i++) {
		pt[i] = -1;
		for (int q = 0; q < g->np && pt[i] < 0; q++)
			if (tc_shape_neighbor(g->sh, nd[i], q) == nd[i + 1])
				pt[i] = q;
		if (pt[i] < 0) {
			*why = "gossip: a relay segment joins two nodes that are not neighbours";
			return -EINVAL;
		}
	}
	return 0;
}

/* The first cycle through both ends of a segment and none of its inner PUs (nor an earlier segment's), or -1. */
static int g_seg_cycle(const struct g_state *g, const int *nd, int m)
{
	const int n = g->n;

	for (int cc = 0; cc < g->ncyc; cc++) {
		int ok = g->pos[cc * n + nd[0]] >= 0 && g->pos[cc * n + nd[m]] >= 0;

		for (int i = 1; i < m && ok; i++)
			ok = g->pos[cc * n + nd[i]] < 0 && !g->covered[cc * n + nd[i]];
		if (ok)
			return cc;
	}
	return -1;
}

/* Claim a segment's links for cycle c, fill its relay table and add a feed at each end. */
static int g_seg_bind(struct g_state *g, const int *nd, int m, const int *pt, int c, const char **why)
{
	const int np = g->np;

	/* forward stream N_i -> N_i+1 (i < m-1), backward N_i+1 -> N_i (i >= 1) */
	for (int i = 0; i < m - 1; i++) {
		int a = nd[i] * np + pt[i], b = nd[i + 2] * np + (pt[i + 1] ^ 1);

		if (g->used[a] || g->used[b]) {
			*why = "gossip: a relay segment uses a link a cycle or another segment uses";
			return -EOPNOTSUPP;
		}
		g->used[a] = g->used[b] = 1;
	}
	for (int i = 1; i < m; i++) {
		if (i < m - 1)
			g->relay[nd[i] * np + (pt[i - 1] ^ 1)] = pt[i];
		if (i > 1)
			g->relay[nd[i] * np + pt[i]] = pt[i - 1] ^ 1;
		g->covered[c * g->n + nd[i]] = 1;
	}
	g->feeds[g->nfeeds++] = (struct g_feed){ c, nd[0], pt[0], nd[1] };
	g->feeds[g->nfeeds++] = (struct g_feed){ c, nd[m], pt[m - 1] ^ 1, nd[m - 1] };
	return 0;
}

/*
 * The smallest deadline from base on by which the ni packets of a segment of
 * m links (end feeds f0, f0 + 1) all reach its far inner PU, each end's link
 * carrying one packet per step; mt holds the last matching tried.
 */
static int g_seg_deadline(const struct g_state *g, struct g_match *mt, int f0, int m, int ni, int base, int *complete)
{
	const int tmax = mt->tmax;
	int dl;

	for (dl = base;; dl++) {
		/* options: end 0, end 1 at arrival; then the same one step later */
		for (int x = 0; x < ni; x++) {
			for (int o = 0; o < 4; o++) {
				int e = o & 1, t = g_arrival(g, mt->items[x], g->feeds[f0 + e].feeder) + (o >> 1);

				mt->opt[4 * x + o] = t + m - 1 <= dl && t <= tmax ? e * (tmax + 1) + t : -1;
			}
		}
		*complete = g_match_all(mt, ni, 4);
		if (*complete || dl >= tmax + m)
			break;
	}
	return dl;
}

/* Which end of a segment (N_0, N_m; feeds f0, f0 + 1) passes each packet, and whether it holds it first. */
static void g_seg_pass(const struct g_state *g, const struct g_match *mt, int f0, const int *nd, int m, int ni,
		       unsigned char *rows)
{
	const int tmax = mt->tmax;

	for (int x = 0; x < ni; x++) {
		int e, held = 0, it = mt->items[x];

		if (mt->item_slot[x] >= 0) {
			e = mt->item_slot[x] / (tmax + 1);
			held = mt->item_slot[x] % (tmax + 1) > g_arrival(g, it, g->feeds[f0 + e].feeder);
		} else { /* no free slot: the end it reaches first passes it, and it queues */
			e = g_arrival(g, it, nd[m]) < g_arrival(g, it, nd[0]);
		}
		rows[(size_t)e * g->nitems + it] = 1 + held;
	}
}

/*
 * Relay segments (spec->seg): check them, mark their links, fill the relay
 * table and add a feed at each end, one group per segment (g_group_pass
 * then chooses which end passes which packet).
 */
static int g_bind_segments(struct g_state *g, const char **why)
{
	const int *sg = g->spec->seg;

	for (int k = 0, off = 0; k < g->spec->nseg; k++) {
		const int *nd = sg + off + 1;
		int m = sg[off], c, pt[4 * TC_MAX_DIMS], f0 = g->nfeeds, err;

		if (m < 2 || m > 4 * TC_MAX_DIMS) {
			*why = "gossip: a relay segment must have 2 to 24 links";
			return -EINVAL;
		}
		err = g_seg_ports(g, nd, m, pt, why);
		if (err)
			return err;
		c = g_seg_cycle(g, nd, m);
		if (c < 0) {
			*why = "gossip: a relay segment does not join two PUs of a cycle through PUs off it";
			return -EOPNOTSUPP;
		}
		err = g_seg_bind(g, nd, m, pt, c, why);
		if (err)
			return err;
		g->groups[g->ngroups++] = (struct g_group){ f0, 2, c, off };
		off += m + 2;
	}
	return 0;
}

/*
 * Which of the nf feeders (feeds f0..) passes each of the ni packets: each
 * packet once, each feeding link at most one packet per step.
 */
static int g_feed_match(const struct g_state *g, struct g_match *mt, int f0, int nf, int ni)
{
	const int tmax = mt->tmax;
	int all;

	for (int x = 0; x < ni; x++)
		for (int k = 0; k < 2; k++)
			mt->opt[2 * x + k] = k < nf ? k * (tmax + 1) + g_arrival(g, mt->items[x], g->feeds[f0 + k].feeder)
						    : -1;
	all = g_match2(mt, ni);
	for (int x = 0; x < ni; x++) {
		if (mt->item_slot[x] >= 0)
			mt->pick[x] = mt->item_slot[x] / (tmax + 1);
		else /* no free slot: the earlier feeder passes it in a combined message */
			mt->pick[x] = nf > 1 && mt->opt[2 * x + 1] - (tmax + 1) < mt->opt[2 * x] ? 1 : 0;
	}
	return all;
}

/* The same, as one row of nitems per feeder (1: it passes the packet when it arrives). */
static int g_feed_pass(const struct g_state *g, struct g_match *mt, int f0, int nf, int ni, unsigned char *rows)
{
	int all = g_feed_match(g, mt, f0, nf, ni);

	for (int x = 0; x < ni; x++)
		rows[(size_t)mt->pick[x] * g->nitems + mt->items[x]] = 1;
	return all;
}

/*
 * PU t if it is out of cycle c and on no segment of it: bind up to two
 * on-cycle neighbours whose links to t are free as its feeders, and choose
 * which passes which packet.
 */
static int g_feed_ooc(struct g_state *g, struct tc_gossip_info *info, int c, int t, const char **why)
{
	int fq[2], nf = 0, f0;

	if (g->pos[c * g->n + t] >= 0 || g->covered[c * g->n + t])
		return 0;
	for (int q = 0; q < g->np && nf < 2; q++) {
		int u = tc_shape_neighbor(g->sh, t, q);

		if (u < 0 || g->pos[c * g->n + u] < 0 || g->used[u * g->np + (q ^ 1)])
			continue;
		fq[nf++] = q;
		g->used[u * g->np + (q ^ 1)] = 1;
	}
	if (!nf) {
		*why = "gossip: an out-of-cycle PU has no free link from its cycle";
		return -EOPNOTSUPP;
	}
	if (info)
		info->ooc_nodes++;
	f0 = g->nfeeds;
	for (int k = 0; k < nf; k++) {
		g->feeds[g->nfeeds].cyc = c;
		g->feeds[g->nfeeds].feeder = tc_shape_neighbor(g->sh, t, fq[k]);
		g->feeds[g->nfeeds].port = fq[k] ^ 1;
		g->feeds[g->nfeeds].target = t;
		g->nfeeds++;
	}
	g->groups[g->ngroups++] = (struct g_group){ f0, nf, c, -1 };
	return 0;
}

/*
 * Which feeder of group gr passes which packet (rows: one row of nitems
 * per feed of the group, zeroed; 1 pass it, 2 pass it one step after it
 * arrives). A segment's deadline starts at the longest cycle's half plus
 * one (base) and grows until every packet is placed. 1 if every packet got
 * a step of its own on its feeder's link (nothing queues), else 0.
 */
static int g_group_pass(const struct g_state *g, struct g_match *mt, const struct g_group *gr, int base,
			unsigned char *rows, struct tc_gossip_info *info)
{
	int ni, complete = 1;

	if (gr->seg_off < 0) {
		ni = g_cycle_items(g, gr->c, g->feeds[gr->f0].target, mt->items);
		return g_feed_pass(g, mt, gr->f0, gr->nf, ni, rows);
	}
	{
		const int *nd = g->spec->seg + gr->seg_off + 1, m = g->spec->seg[gr->seg_off];
		int dl;

		ni = g_cycle_items(g, gr->c, -1, mt->items);
		dl = g_seg_deadline(g, mt, gr->f0, m, ni, base, &complete);
		g_seg_pass(g, mt, gr->f0, nd, m, ni, rows);
		if (info) {
			info->segments++;
			if (dl - base > info->seg_extra)
				info->seg_extra = dl - base;
		}
	}
	return complete;
}

/* The longest cycle's half plus one: where a segment's deadline search starts. */
static int g_seg_base(const struct g_state *g)
{
	int base = 0;

	for (int c = 0; c < g->ncyc; c++)
		if (g->clen[c] / 2 + 1 > base)
			base = g->clen[c] / 2 + 1;
	return base;
}

/* Sort the feeds (and their pass rows) by feeder; feed_first indexes them. */
static int g_index_feeds(struct g_state *g)
{
	const int nit = g->nitems;
	struct g_feed *sorted = malloc((g->nfeeds ? g->nfeeds : 1) * sizeof(*sorted));
	unsigned char *psorted = malloc((size_t)(g->nfeeds ? g->nfeeds : 1) * nit);
	int k = 0;

	if (!sorted || !psorted) {
		free(sorted);
		free(psorted);
		return -ENOMEM;
	}
	for (int u = 0; u < g->n; u++) {
		g->feed_first[u] = k;
		for (int f = 0; f < g->nfeeds; f++) {
			if (g->feeds[f].feeder != u)
				continue;
			sorted[k] = g->feeds[f];
			memcpy(psorted + (size_t)k * nit, g->pass + (size_t)f * nit, nit);
			k++;
		}
	}
	g->feed_first[g->n] = k;
	free(g->feeds);
	free(g->pass);
	g->feeds = sorted;
	g->pass = psorted;
	return 0;
}

/* Bind the relay segments, then every out-of-cycle (node, cycle) to its feeders: the groups. */
static int g_bind(struct g_state *g, struct tc_gossip_info *info, const char **why)
{
	int maxf = 2 * g->n * g->ncyc + 2 * g->spec->nseg, err;

	g->groups = calloc(maxf ? maxf : 1, sizeof(*g->groups));
	if (!g->groups)
		return -ENOMEM;
	err = g_bind_segments(g, why);
	for (int c = 0; c < g->ncyc && !err; c++)
		for (int t = 0; t < g->n && !err; t++)
			err = g_feed_ooc(g, info, c, t, why);
	return err;
}

/*
 * Bind every out-of-cycle PU to (up to) two on-cycle neighbours with free
 * links, and decide which feeder passes which packet: each packet once, each
 * feeding link at most one packet per step when two feeders exist. Relay
 * segments, if the construction gives any, are bound first.
 */
static int g_feeds(struct g_state *g, struct tc_gossip_info *info, const char **why)
{
	int maxf = 2 * g->n * g->ncyc + 2 * g->spec->nseg;
	struct g_match mt;
	int err;

	g->feeds = calloc(maxf ? maxf : 1, sizeof(*g->feeds));
	g->pass = calloc((size_t)(maxf ? maxf : 1) * g->nitems, 1);
	err = g_match_init(&mt, g);
	if (!err && (!g->feeds || !g->pass))
		err = -ENOMEM;
	if (!err)
		err = g_bind(g, info, why);
	for (int k = 0; k < g->ngroups && !err; k++)
		g_group_pass(g, &mt, &g->groups[k], g_seg_base(g), g->pass + (size_t)g->groups[k].f0 * g->nitems, info);
	if (!err)
		err = g_index_feeds(g);
	g_match_free(&mt);
	return err;
}

/* Events waiting to be sent. */
struct g_evq {
	struct g_ev *v;
	uint32_t n, cap;
};

static int g_evpush(struct g_evq *q, struct g_ev e)
{
	if (tc_grow((void **)&q->v, &q->cap, q->n + 1, sizeof(*q->v), 1024))
		return -ENOMEM;
	q->v[q->n++] = e;
	return 0;
}

/* What node v does with item it holds from time 'now': cycle sends and feeds at step now+1. */
static int g_emit(struct g_state *g, struct g_evq *nx, int v, int it, int c, int hops, int outp, int inject,
		  uint32_t now)
{
	int err = 0;

	if (inject) {
		int pv = g->pos[c * g->n + v], m = g->clen[c];
		int f = g_half_fwd(m), b = m - 1 - f;

		if (f > 0)
			err = g_evpush(nx, (struct g_ev){ v, g->cfwd[c][pv], it, f - 1, EV_CYC, (int8_t)c, now });
		if (!err && b > 0)
			err = g_evpush(nx, (struct g_ev){ v, g->cbwd[c][pv], it, b - 1, EV_CYC, (int8_t)c, now });
	} else if (outp >= 0) {
		err = g_evpush(nx, (struct g_ev){ v, outp, it, hops - 1, EV_CYC, (int8_t)c, now });
	}
	for (int f = g->feed_first[v]; f < g->feed_first[v + 1] && !err; f++) {
		int ps = g->pass[(size_t)f * g->nitems + it];

		if (g->feeds[f].cyc == c && ps) /* ps = 2: held one step */
			err = g_evpush(nx, (struct g_ev){ v, g->feeds[f].port, it, 0, EV_FEED, (int8_t)c, now + (ps - 1) });
	}
	return err;
}

/* Step 0: every packet enters its cycle at its origin, or is handed to a neighbour on it. */
static int g_start(struct g_state *g, struct g_evq *pend)
{
	int err = 0;

	for (int it = 0; it < g->nitems && !err; it++) {
		int c = g->item_cyc[it];

		if (g->item_t0[it])
			err = g_evpush(pend, (struct g_ev){ it / g->spec->npackets, g->item_port[it], it, 0, EV_HAND,
							    (int8_t)c, 0 });
		else
			err = g_emit(g, pend, g->item_at[it], it, c, 0, -1, 1, 0);
	}
	return err;
}

/* best[l]: the pending event link l sends in step (the oldest sendable, cycle traffic first), or -1. */
static void g_pick(const struct g_state *g, const struct g_evq *pend, long *best, uint32_t step)
{
	for (int l = 0; l < g->n * g->np; l++)
		best[l] = -1;
	for (size_t i = 0; i < pend->n; i++) {
		const struct g_ev *e = &pend->v[i];
		int l = e->node * g->np + e->port;
		const struct g_ev *b = best[l] >= 0 ? &pend->v[best[l]] : NULL;

		if (e->ready >= step) /* held: not sendable before step index ready */
			continue;
		if (!b || e->ready < b->ready || (e->ready == b->ready && e->type < b->type))
			best[l] = (long)i;
	}
}

/* Event e reached v in step: mark the receipt, then what v does with the packet next. */
static int g_arrive(struct g_state *g, struct g_evq *nx, const struct g_ev *e, int v, uint32_t step)
{
	size_t b = (size_t)v * g->nitems + e->item;

	if (g->recv[b / 64] & (1ull << (b % 64)))
		g->twice = 1;
	g->recv[b / 64] |= 1ull << (b % 64);
	if (e->type == EV_FEED) {
		int r = g->relay[v * g->np + (e->port ^ 1)];

		if (r >= 0) /* a relay segment: pass it on */
			return g_evpush(nx, (struct g_ev){ v, r, e->item, 0, EV_FEED, e->cyc, step });
		return 0;
	}
	if (e->type == EV_HAND)
		return g_emit(g, nx, v, e->item, e->cyc, 0, -1, 1, step);
	return g_emit(g, nx, v, e->item, e->cyc, e->hops, e->hops > 0 ? g->pair[v * g->np + (e->port ^ 1)] : -1, 0,
		      step);
}

/* Send what best[] picked in step (recorded, and its arrival into nx); the rest stays in pend. */
static int g_send_step(struct g_state *g, struct g_evq *pend, struct g_evq *nx, const long *best, uint32_t step)
{
	size_t keep = 0;
	int err = 0;

	for (size_t i = 0; i < pend->n && !err; i++) {
		struct g_ev e = pend->v[i];
		int v = g->nb[e.node * g->np + e.port];

		if (best[e.node * g->np + e.port] != (long)i) {
			pend->v[keep++] = e;	/* waits for its link */
			continue;
		}
		err = g_push_send(g, step - 1, e.node, e.port, e.item);
		if (err)
			break;
		err = g_arrive(g, nx, &e, v, step);
	}
	pend->n = keep;
	return err;
}

/*
 * Run the rules step by step; every send is recorded. A directed link sends
 * one packet per step: when two want the same link in a step (only where an
 * out-of-cycle origin hands its packet on), the later one waits in the
 * link's queue (oldest first, cycle traffic before feeds).
 * g->recv: one bit per (node, item), set when the node receives the item; a
 * second receipt sets g->twice (bits, not counters: 8x less memory to touch).
 */
static int g_run(struct g_state *g)
{
	struct g_evq pend = { 0 }, nx = { 0 };
	long *best = malloc(g->n * g->np * sizeof(long));
	uint32_t step = 0;
	int err = 0;

	if (!best)
		return -ENOMEM;
	err = g_start(g, &pend);
	while (pend.n && !err) {
		step++;
		nx.n = 0;
		g_pick(g, &pend, best, step);
		err = g_send_step(g, &pend, &nx, best, step);
		for (size_t i = 0; i < nx.n && !err; i++)
			err = g_evpush(&pend, nx.v[i]);
		if (step > (uint32_t)(4 * g->n + 8)) {
			err = -ELOOP;
			break;
		}
	}
	free(pend.v);
	free(nx.v);
	free(best);
	return err;
}

/*
 * Order the sends by (step, src, port, item). g_run records them step by
 * step, so each step's sends are sorted on their own: counted into buckets
 * by directed link (src * np + port), then by item inside a bucket (one or
 * two sends as a rule).
 */
static int g_sort_sends(struct g_state *g)
{
	const int nl = g->n * g->np;
	size_t most = 1;
	int *at = malloc((nl + 1) * sizeof(int));
	struct g_send *tmp;

	for (size_t i = 0, j; i < g->nsends; i = j) {
		for (j = i + 1; j < g->nsends && g->sends[j].step == g->sends[i].step; j++)
			;
		if (j - i > most)
			most = j - i;
	}
	tmp = malloc(most * sizeof(*tmp));
	if (!at || !tmp) {
		free(at);
		free(tmp);
		return -ENOMEM;
	}
	for (size_t i = 0, j; i < g->nsends; i = j) {
		for (j = i + 1; j < g->nsends && g->sends[j].step == g->sends[i].step; j++)
			;
		memset(at, 0, (nl + 1) * sizeof(int));
		for (size_t k = i; k < j; k++)
			at[g->sends[k].src * g->np + g->sends[k].port + 1]++;
		for (int l = 0; l < nl; l++)
			at[l + 1] += at[l];
		for (size_t k = i; k < j; k++) {
			const struct g_send *e = &g->sends[k];

			tmp[at[e->src * g->np + e->port]++] = *e;
		}
		/* by item inside a bucket (insertion: buckets hold one or two) */
		for (size_t k = 1; k < j - i; k++) {
			struct g_send v = tmp[k], *t = tmp + k;

			while (t > tmp && t[-1].src == v.src && t[-1].port == v.port && t[-1].item > v.item) {
				t[0] = t[-1];
				t--;
			}
			*t = v;
		}
		memcpy(g->sends + i, tmp, (j - i) * sizeof(*tmp));
	}
	free(at);
	free(tmp);
	return 0;
}

static int g_emit_sched(struct g_state *g, struct tc_sched *s, struct tc_gossip_info *info)
{
	const int npk = g->spec->npackets;
	uint32_t st = 0;
	int err = 0, inmsg = 0;

	err = g_sort_sends(g);
	if (err)
		return err;
	for (size_t i = 0; i < g->nsends; i++) {
		const struct g_send *e = &g->sends[i];

		while (st <= e->step) {
			err = tc_sched_step(s);
			if (err < 0)
				return err;
			st++;
		}
		if (!i || e->step != e[-1].step || e->src != e[-1].src || e->port != e[-1].port) {
			int8_t route[TC_MAX_DIMS] = { 0 };

			route[e->port / 2] = (e->port & 1) ? -1 : 1;
			err = tc_sched_msg(s, e->src, g->nb[e->src * g->np + e->port], route);
			if (err < 0)
				return err;
			inmsg = 0;
		}
		err = tc_sched_blk(s, e->item / npk, e->item % npk);
		if (err < 0)
			return err;
		if (info && ++inmsg > info->max_msg_blocks)
			info->max_msg_blocks = inmsg;
	}
	return tc_sched_finish(s);
}

static void g_free(struct g_state *g)
{
	for (int c = 0; c < TC_GOSSIP_MAX_CYCLES; c++) {
		free(g->cnode[c]);
		free(g->cfwd[c]);
		free(g->cbwd[c]);
	}
	free(g->pair);
	free(g->nb);
	free(g->pos);
	free(g->used);
	free(g->item_cyc);
	free(g->item_at);
	free(g->item_t0);
	free(g->item_port);
	free(g->feeds);
	free(g->groups);
	free(g->pass);
	free(g->relay);
	free(g->covered);
	free(g->feed_first);
	free(g->sends);
	free(g->recv);
}

/* The state's arrays for shape and spec (g->sh, spec, n, np, nitems set), initialised; 0 or -ENOMEM. */
static int g_alloc(struct g_state *g, int with_recv)
{
	g->pair = malloc((size_t)g->n * g->np * sizeof(int));
	g->nb = malloc((size_t)g->n * g->np * sizeof(int));
	g->pos = malloc((size_t)TC_GOSSIP_MAX_CYCLES * g->n * sizeof(int));
	g->used = calloc((size_t)g->n * g->np, 1);
	g->item_cyc = malloc(g->nitems * sizeof(int));
	g->item_at = malloc(g->nitems * sizeof(int));
	g->item_t0 = malloc(g->nitems * sizeof(int));
	g->item_port = malloc(g->nitems * sizeof(int));
	g->feed_first = calloc(g->n + 1, sizeof(int));
	g->relay = malloc((size_t)g->n * g->np * sizeof(int));
	g->covered = calloc((size_t)TC_GOSSIP_MAX_CYCLES * g->n, 1);
	g->recv = with_recv ? calloc(((size_t)g->n * g->nitems + 63) / 64, sizeof(uint64_t)) : NULL;
	if (!g->pair || !g->pos || !g->used || !g->item_cyc || !g->item_at || !g->item_t0 || !g->item_port ||
	    !g->feed_first || !g->relay || !g->covered || !g->nb || (with_recv && !g->recv))
		return -ENOMEM;
	for (int i = 0; i < TC_GOSSIP_MAX_CYCLES * g->n; i++)
		g->pos[i] = -1;
	for (int i = 0; i < g->n * g->np; i++) {
		g->relay[i] = -1;
		g->nb[i] = tc_shape_neighbor(g->sh, i / g->np, i % g->np);
	}
	return 0;
}

/* Check the rule, trace its cycles, inject, bind the feeds and run it. */
static int g_simulate(struct g_state *g, struct tc_gossip_info *info, const char **why)
{
	int err = g_rules(g, why);

	if (!err)
		err = g_trace(g, why);
	if (!err)
		err = g_inject(g, info, why);
	if (!err)
		err = g_feeds(g, info, why);
	if (!err)
		err = g_run(g);
	if (err == -ELOOP)
		*why = "gossip: the rules do not terminate";
	return err;
}

/* Every node received every packet but its own, each once. */
static int g_check_delivery(const struct g_state *g, const char **why)
{
	for (int v = 0; v < g->n; v++) {
		for (int it = 0; it < g->nitems; it++) {
			int want = it / g->spec->npackets != v;
			size_t b = (size_t)v * g->nitems + it;

			if (g->twice || !(g->recv[b / 64] & (1ull << (b % 64))) != !want) {
				*why = "gossip: the rules deliver a packet twice or never on this shape";
				return -EOPNOTSUPP;
			}
		}
	}
	return 0;
}

/* The schedule of the recorded sends into *out. */
static int g_make_sched(struct g_state *g, struct tc_gossip_info *info, struct tc_sched **out, const char **why)
{
	const struct tc_gossip_spec *spec = g->spec;
	struct tc_sched *s;
	int err;

	s = tc_sched_new(g->sh, TC_ALLGATHER, spec->algo, spec->cite, TC_CLAIM_CONTENTION_FREE | TC_CLAIM_ONE_HOP);
	if (!s)
		return -ENOMEM;
	s->npackets = spec->npackets;
	err = g_emit_sched(g, s, info);
	if (err < 0) {
		*why = "gossip: building the schedule failed";
		tc_sched_free(s);
		return err;
	}
	*out = s;
	return 0;
}

/* g zeroed and set up for spec on shape; -EINVAL for a construction the engine has not. */
static int g_init(struct g_state *g, const struct tc_shape *shape, const struct tc_gossip_spec *spec)
{
	memset(g, 0, sizeof(*g));
	if (spec->want_cycles < 1 || spec->want_cycles > TC_GOSSIP_MAX_CYCLES ||
	    (spec->npackets != 1 && spec->npackets != spec->want_cycles))
		return -EINVAL;
	g->sh = shape;
	g->spec = spec;
	g->n = shape->nodes;
	g->np = 2 * shape->ndims;
	g->nitems = g->n * spec->npackets;
	return 0;
}

int __tc_gossip_build(const struct tc_shape *shape, const struct tc_gossip_spec *spec, struct tc_sched **out,
		      const char **why, struct tc_gossip_info *info)
{
	struct g_state g;
	int err;

	if (info)
		memset(info, 0, sizeof(*info));
	if (g_init(&g, shape, spec)) {
		*why = "gossip: bad construction (packets must be 1 or one per cycle)";
		return -EINVAL;
	}
	err = g_alloc(&g, 1);
	if (!err)
		err = g_simulate(&g, info, why);
	if (!err)
		err = g_check_delivery(&g, why);
	if (!err && info) {
		info->ncycles = g.ncyc;
		for (int c = 0; c < g.ncyc; c++)
			info->cycle_len[c] = g.clen[c];
	}
	if (!err)
		err = g_make_sched(&g, info, out, why);
	if (err == -ENOMEM)
		*why = "gossip: out of memory";
	g_free(&g);
	return err;
}

/*
 * A lower bound for the cost model (struct tc_algo.send_steps): the rule's
 * cycles and where every packet enters them, without running anything. A
 * packet entering cycle c (length m) at place i passes the forward links of
 * places i .. i + floor(m/2) - 1 and the backward links of i .. i - (m - 2 -
 * floor(m/2)), each as its own event, and a link sends one event a step, so
 * the PU whose forward (or backward) link the most packets pass sends in at
 * least that many steps. O(N) time and memory.
 */
int __tc_gossip_send_steps(const struct tc_shape *shape, const struct tc_gossip_spec *spec, uint64_t *steps)
{
	struct g_state g;
	const char *why = NULL;
	int *cnt = NULL, err;

	*steps = 0;
	if (g_init(&g, shape, spec))
		return -EINVAL;
	g.pair = malloc((size_t)g.n * g.np * sizeof(int));
	g.pos = malloc((size_t)TC_GOSSIP_MAX_CYCLES * g.n * sizeof(int));
	g.used = calloc((size_t)g.n * g.np, 1);
	g.item_cyc = malloc(g.nitems * sizeof(int));
	g.item_at = malloc(g.nitems * sizeof(int));
	g.item_t0 = malloc(g.nitems * sizeof(int));
	g.item_port = malloc(g.nitems * sizeof(int));
	cnt = malloc((size_t)g.n * sizeof(int));
	err = g.pair && g.pos && g.used && g.item_cyc && g.item_at && g.item_t0 && g.item_port && cnt ? 0 : -ENOMEM;
	for (int i = 0; !err && i < TC_GOSSIP_MAX_CYCLES * g.n; i++)
		g.pos[i] = -1;
	if (!err)
		err = g_rules(&g, &why);
	if (!err)
		err = g_trace(&g, &why);
	if (!err)
		err = g_inject(&g, NULL, &why);
	for (int c = 0; !err && c < g.ncyc; c++) {
		const int m = g.clen[c], f = g_half_fwd(m), b = m - 1 - f;

		memset(cnt, 0, (size_t)m * sizeof(int));
		for (int it = 0; it < g.nitems; it++)
			if (g.item_cyc[it] == c)
				cnt[g.pos[c * g.n + g.item_at[it]]]++;
		/* sliding windows round the cycle: entries at j - f + 1 .. j (forward), j .. j + b - 1 (backward) */
		for (int dir = 0; dir < 2; dir++) {
			const int w = dir ? b : f;
			uint64_t sum = 0;

			if (w <= 0)
				continue;
			for (int k = 0; k < w; k++)
				sum += cnt[k % m];
			for (int j = 0; j < m; j++) {
				if (sum > *steps)
					*steps = sum;
				sum += cnt[(j + w) % m];
				sum -= cnt[j];
			}
		}
	}
	free(cnt);
	for (int c = 0; c < TC_GOSSIP_MAX_CYCLES; c++) {
		free(g.cnode[c]);
		free(g.cfwd[c]);
		free(g.cbwd[c]);
	}
	free(g.pair);
	free(g.pos);
	free(g.used);
	free(g.item_cyc);
	free(g.item_at);
	free(g.item_t0);
	free(g.item_port);
	if (err)
		*steps = 0;
	return err;
}

int __tc_gossip_run(const struct tc_shape *shape, const struct tc_gossip_spec *spec, const struct tc_gossip_run *r,
		    const char **why)
{
	if (r->prep)
		return __tc_gossip_prepare(shape, spec, r->prep, why);
	return __tc_gossip_build(shape, spec, r->out, why, r->info);
}

/* ---- One node's part, without running the whole fabric ---- */

#define GP_CACHE 16

/* One feeding group's passes as a table: slot[k * tlen + t], the packet feed f0 + k sends in step t, or -1. */
struct gp_slot {
	int gid;
	uint64_t used;
	int *slot;
};

/*
 * What __tc_gossip_part needs of a construction on a shape: the engine's
 * state up to the bound feeds (rules, cycles, injections, feeds, relay
 * table; O(P)), never run, and the step numbers the whole run would use.
 * See __tc_gossip_prepare.
 */
struct tc_gossip_prep {
	struct g_state g;
	struct tc_shape shape;
	struct tc_gossip_spec spec; /* rule, ctx and inject cleared once prepared */
	int *seg;		    /* spec->seg, copied */
	int ok;			    /* 1: nothing is handed off or queues (parts exact) */
	uint32_t nsteps;	    /* the whole schedule's steps */
	uint32_t tfull;		    /* steps 0 .. tfull-1 all carry a cycle send */
	uint32_t ntail;
	int32_t *tail; /* step t >= tfull of the run: its number in the schedule, or -1 (nothing sent) */
	int tlen, base;
	int *ff_first, *ff; /* feeds by feeder */
	int *grp_of_feed;
	int *tg_first, *tg;   /* one-hop groups by target */
	int *in_first, *in;   /* relay segments by inner PU: gid * (4 * TC_MAX_DIMS + 1) + place */
	pthread_mutex_t lock; /* protects cache, clock, mt and rows */
	struct gp_slot cache[GP_CACHE];
	uint64_t clock;
	struct g_match mt;
	unsigned char *rows;
};

void __tc_gossip_prep_free(struct tc_gossip_prep *x)
{
	if (!x)
		return;
	g_free(&x->g);
	g_match_free(&x->mt);
	for (int i = 0; i < GP_CACHE; i++)
		free(x->cache[i].slot);
	pthread_mutex_destroy(&x->lock);
	free(x->seg);
	free(x->tail);
	free(x->ff_first);
	free(x->ff);
	free(x->grp_of_feed);
	free(x->tg_first);
	free(x->tg);
	free(x->in_first);
	free(x->in);
	free(x->rows);
	free(x);
}

/* Group gid's slot table into out (nf * tlen ints); lock held. 1 if no two packets share a slot. */
static int gp_fill(struct tc_gossip_prep *x, int gid, int *out)
{
	const struct g_state *g = &x->g;
	const struct g_group *gr = &g->groups[gid];
	const struct g_match *mt = &x->mt;
	int ok = 1;

	for (int i = 0; i < gr->nf * x->tlen; i++)
		out[i] = -1;
	if (gr->seg_off < 0) {
		/* one-hop feeds: a packet leaves at the step it reaches its feeder (its option's slot) */
		int ni = g_cycle_items(g, gr->c, g->feeds[gr->f0].target, x->mt.items);

		ok = g_feed_match(g, &x->mt, gr->f0, gr->nf, ni);
		for (int k = 0; k < gr->nf; k++)
			for (int i = 0; i < ni; i++) {
				int t = mt->opt[2 * i + k] - k * (mt->tmax + 1);

				if (mt->pick[i] != k)
					continue;
				if (t >= x->tlen || out[k * x->tlen + t] >= 0) {
					ok = 0;
					continue;
				}
				out[k * x->tlen + t] = mt->items[i];
			}
		return ok;
	}
	memset(x->rows, 0, (size_t)gr->nf * g->nitems);
	ok = g_group_pass(g, &x->mt, gr, x->base, x->rows, NULL);
	for (int k = 0; k < gr->nf; k++)
		for (int it = 0; it < g->nitems; it++) {
			int ps = x->rows[(size_t)k * g->nitems + it], t;

			if (!ps)
				continue;
			t = g_arrival(g, it, g->feeds[gr->f0 + k].feeder) + ps - 1;
			if (t >= x->tlen || out[k * x->tlen + t] >= 0) {
				ok = 0;
				continue;
			}
			out[k * x->tlen + t] = it;
		}
	return ok;
}

/* Group gid's slot table, copied into out (2 * tlen ints), from the cache or computed. */
static void gp_slots(struct tc_gossip_prep *x, int gid, int *out)
{
	const int nf = x->g.groups[gid].nf;
	struct gp_slot *e, *victim = &x->cache[0];

	pthread_mutex_lock(&x->lock);
	for (int i = 0; i < GP_CACHE; i++) {
		e = &x->cache[i];
		if (e->slot && e->gid == gid) {
			e->used = ++x->clock;
			memcpy(out, e->slot, (size_t)nf * x->tlen * sizeof(int));
			pthread_mutex_unlock(&x->lock);
			return;
		}
		if (e->used < victim->used)
			victim = e;
	}
	gp_fill(x, gid, out);
	if (!victim->slot)
		victim->slot = malloc(2 * (size_t)x->tlen * sizeof(int));
	if (victim->slot) {
		victim->gid = gid;
		victim->used = ++x->clock;
		memcpy(victim->slot, out, (size_t)nf * x->tlen * sizeof(int));
	}
	pthread_mutex_unlock(&x->lock);
}

/* The packet of origin o on cycle c, or -1 (o's packet runs on another cycle). */
static int gp_item(const struct g_state *g, int c, int o)
{
	if (g->spec->npackets > 1)
		return o * g->spec->npackets + c;
	return g->item_cyc[o] == c ? o : -1;
}

/* Counting sort of ids 0..n-1 by key[id] in 0..nk-1 into first (nk + 1) and ids; 0 or -ENOMEM. */
static int gp_csr(const int *key, int n, int nk, int **first, int **ids)
{
	int *cur;

	*first = calloc((size_t)nk + 1, sizeof(int));
	*ids = malloc(((size_t)n + 1) * sizeof(int));
	cur = malloc(((size_t)nk + 1) * sizeof(int));
	if (!*first || !*ids || !cur) {
		free(cur);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		if (key[i] >= 0)
			(*first)[key[i] + 1]++;
	for (int k = 0; k < nk; k++)
		(*first)[k + 1] += (*first)[k];
	memcpy(cur, *first, ((size_t)nk + 1) * sizeof(int));
	for (int i = 0; i < n; i++)
		if (key[i] >= 0)
			(*ids)[cur[key[i]]++] = i;
	free(cur);
	return 0;
}

/* The indexes a node's part reads: feeds by feeder, one-hop groups by target, segments by inner PU. */
static int gp_index(struct tc_gossip_prep *x)
{
	struct g_state *g = &x->g;
	int *key, err;
	const int span = 4 * TC_MAX_DIMS + 1;

	x->grp_of_feed = malloc(((size_t)g->nfeeds + 1) * sizeof(int));
	key = malloc(((size_t)g->nfeeds + (size_t)g->ngroups * span + 1) * sizeof(int));
	if (!x->grp_of_feed || !key) {
		free(key);
		return -ENOMEM;
	}
	for (int k = 0; k < g->ngroups; k++)
		for (int f = 0; f < g->groups[k].nf; f++)
			x->grp_of_feed[g->groups[k].f0 + f] = k;
	for (int f = 0; f < g->nfeeds; f++)
		key[f] = g->feeds[f].feeder;
	err = gp_csr(key, g->nfeeds, g->n, &x->ff_first, &x->ff);
	for (int k = 0; k < g->ngroups && !err; k++)
		key[k] = g->groups[k].seg_off < 0 ? g->feeds[g->groups[k].f0].target : -1;
	if (!err)
		err = gp_csr(key, g->ngroups, g->n, &x->tg_first, &x->tg);
	/* segment memberships: key indexed by gid * span + place */
	for (int k = 0; k < g->ngroups * span && !err; k++)
		key[k] = -1;
	for (int k = 0; k < g->ngroups && !err; k++) {
		const int so = g->groups[k].seg_off;

		if (so < 0)
			continue;
		for (int i = 1; i < x->seg[so]; i++) {
			key[k * span + i] = x->seg[so + 1 + i];
		}
	}
	if (!err)
		err = gp_csr(key, g->ngroups * span, g->n, &x->in_first, &x->in);
	free(key);
	return err;
}

/*
 * Every group's passes once: whether any packet would queue (x->ok), and
 * which steps after the cycles' last the whole run sends in (x->tail,
 * x->nsteps). O(P) memory; time O(P) per group.
 */
static int gp_steps(struct tc_gossip_prep *x)
{
	struct g_state *g = &x->g;
	const int span = x->tlen + 4 * TC_MAX_DIMS + 2;
	unsigned char *use = calloc((size_t)span, 1);
	int *slot = malloc(2 * (size_t)x->tlen * sizeof(int)), last = -1;

	if (!use || !slot) {
		free(use);
		free(slot);
		return -ENOMEM;
	}
	for (int c = 0; c < g->ncyc; c++) {
		int any = 0;

		for (int i = 0; i < g->clen[c] && !any; i++)
			any = gp_item(g, c, g->cnode[c][i]) >= 0;
		if (any && g->clen[c] / 2 - 1 > last)
			last = g->clen[c] / 2 - 1;
	}
	x->tfull = (uint32_t)(last + 1);
	for (int k = 0; k < g->ngroups; k++) {
		const struct g_group *gr = &g->groups[k];
		const int m = gr->seg_off < 0 ? 1 : x->seg[gr->seg_off];

		if (!gp_fill(x, k, slot))
			x->ok = 0;
		for (int f = 0; f < gr->nf; f++)
			for (int t = 0; t < x->tlen; t++)
				if (slot[f * x->tlen + t] >= 0)
					for (int h = 0; h < (m > 1 ? m - 1 : 1); h++)
						use[t + h] = 1; /* the end's send and its relays' */
	}
	x->ntail = 0;
	for (int t = span - 1; t >= (int)x->tfull && !x->ntail; t--)
		if (use[t])
			x->ntail = (uint32_t)(t + 1 - (int)x->tfull);
	x->tail = malloc(((size_t)x->ntail + 1) * sizeof(*x->tail));
	if (!x->tail) {
		free(use);
		free(slot);
		return -ENOMEM;
	}
	x->nsteps = x->tfull;
	for (uint32_t i = 0; i < x->ntail; i++)
		x->tail[i] = use[x->tfull + i] ? (int32_t)x->nsteps++ : -1;
	free(use);
	free(slot);
	return 0;
}

int __tc_gossip_prepare(const struct tc_shape *shape, const struct tc_gossip_spec *spec, struct tc_gossip_prep **out,
			const char **why)
{
	struct tc_gossip_prep *x = calloc(1, sizeof(*x));
	struct tc_gossip_info info = { 0 };
	struct g_state *g;
	size_t seglen = 0;
	int err, maxf;

	if (!x)
		return -ENOMEM;
	pthread_mutex_init(&x->lock, NULL);
	x->shape = *shape;
	x->spec = *spec;
	for (int k = 0; k < spec->nseg; k++)
		seglen += (size_t)spec->seg[seglen] + 2;
	x->seg = malloc((seglen + 1) * sizeof(int));
	if (!x->seg) {
		__tc_gossip_prep_free(x);
		return -ENOMEM;
	}
	if (seglen)
		memcpy(x->seg, spec->seg, seglen * sizeof(int));
	x->spec.seg = x->seg;
	g = &x->g;
	if (g_init(g, &x->shape, &x->spec)) {
		*why = "gossip: bad construction (packets must be 1 or one per cycle)";
		__tc_gossip_prep_free(x);
		return -EINVAL;
	}
	err = g_alloc(g, 0);
	if (!err)
		err = g_rules(g, why);
	if (!err)
		err = g_trace(g, why);
	if (!err)
		err = g_inject(g, &info, why);
	if (!err) {
		maxf = 2 * g->n * g->ncyc + 2 * spec->nseg;
		g->feeds = calloc(maxf ? maxf : 1, sizeof(*g->feeds));
		err = g->feeds ? g_bind(g, &info, why) : -ENOMEM;
	}
	x->spec.rule = NULL;
	x->spec.ctx = NULL;
	x->spec.inject = NULL;
	if (!err)
		err = g_match_init(&x->mt, g);
	if (!err) {
		x->tlen = x->mt.tmax + 2;
		x->base = g_seg_base(g);
		x->ok = !info.handoffs;
		x->rows = malloc(2 * (size_t)g->nitems + 1);
		err = x->rows ? gp_index(x) : -ENOMEM;
	}
	if (!err)
		err = gp_steps(x);
	if (err) {
		if (err == -ENOMEM)
			*why = "gossip: out of memory";
		__tc_gossip_prep_free(x);
		return err;
	}
	*out = x;
	return 0;
}

/* One one-hop message of run step t (the schedule's number for it), packet it, from src through port. */
static int gp_msg(const struct tc_gossip_prep *x, struct tc_part *p, int t, int src, int port, int it)
{
	const int npk = x->spec.npackets;
	int8_t route[TC_MAX_DIMS] = { 0 };
	uint32_t st;
	int err;

	if (it < 0)
		return 0;
	if (t < (int)x->tfull)
		st = (uint32_t)t;
	else if ((uint32_t)(t - (int)x->tfull) < x->ntail && x->tail[t - x->tfull] >= 0)
		st = (uint32_t)x->tail[t - x->tfull];
	else
		return tc_err(-EPROTO, "%s: a send in step %d, where the run sends nothing", x->spec.algo, t);
	route[port / 2] = (port & 1) ? -1 : 1;
	err = tc_part_at(p, st);
	if (!err)
		err = tc_part_msg(p, src, x->g.nb[src * x->g.np + port], route);
	if (!err)
		err = tc_part_blk(p, it / npk, it % npk);
	return err;
}

/* The port from node a to its neighbour b. */
static int gp_port(const struct g_state *g, int a, int b)
{
	for (int q = 0; q < g->np; q++)
		if (g->nb[a * g->np + q] == b)
			return q;
	return -1;
}

int __tc_gossip_part(struct tc_gossip_prep *x, struct tc_part *p, const char **why)
{
	const struct g_state *g = &x->g;
	const int v = p->node, span = 4 * TC_MAX_DIMS + 1;
	int64_t only = tc_part_only_step(p);
	int T = -1, err = 0, *slot;

	if (!x->ok)
		return TC_PART_WHOLE;
	if (only >= 0) {
		/* the local check: v's sends in one step only */
		if (only < x->tfull)
			T = (int)only;
		for (uint32_t i = 0; i < x->ntail && T < 0; i++)
			if (x->tail[i] == only)
				T = (int)(x->tfull + i);
		if (T < 0)
			return tc_part_finish(p, x->nsteps);
	}
	slot = malloc(2 * (size_t)x->tlen * sizeof(int));
	if (!slot)
		return -ENOMEM;
	p->cite = x->spec.cite;
	p->claims = TC_CLAIM_CONTENTION_FREE | TC_CLAIM_ONE_HOP;
	p->npackets = x->spec.npackets;
	/* the cycles through v: packets of place j - s forward and j + s backward in step s */
	for (int c = 0; c < g->ncyc && !err; c++) {
		const int m = g->clen[c], f = m / 2, b = m - 1 - m / 2, j = g->pos[c * g->n + v];

		if (j < 0)
			continue;
		for (int s = only >= 0 ? T : 0; s < f && (only < 0 || s == T) && !err; s++)
			err = gp_msg(x, p, s, v, g->cfwd[c][j], gp_item(g, c, g->cnode[c][((j - s) % m + m) % m]));
		for (int s = only >= 0 ? T : 0; s < b && (only < 0 || s == T) && !err; s++)
			err = gp_msg(x, p, s, v, g->cbwd[c][j], gp_item(g, c, g->cnode[c][(j + s) % m]));
		if (only >= 0)
			continue;
		{
			const int jm = (j - 1 + m) % m, jp = (j + 1) % m, um = g->cnode[c][jm], up = g->cnode[c][jp];

			for (int s = 0; s < f && !err; s++)
				err = gp_msg(x, p, s, um, g->cfwd[c][jm], gp_item(g, c, g->cnode[c][((jm - s) % m + m) % m]));
			for (int s = 0; s < b && !err; s++)
				err = gp_msg(x, p, s, up, g->cbwd[c][jp], gp_item(g, c, g->cnode[c][(jp + s) % m]));
		}
	}
	/* v feeds: what each of its feeds passes, in the step it passes it */
	for (int i = x->ff_first[v]; i < x->ff_first[v + 1] && !err; i++) {
		const int fid = x->ff[i], gid = x->grp_of_feed[fid], k = fid - g->groups[gid].f0;
		const int port = g->feeds[fid].port;

		if (only >= 0 && g->nb[v * g->np + port] != tc_part_only_peer(p))
			continue;
		gp_slots(x, gid, slot);
		for (int t = only >= 0 ? T : 0; t < x->tlen && (only < 0 || t == T) && !err; t++)
			err = gp_msg(x, p, t, v, port, slot[k * x->tlen + t]);
	}
	/* v is fed: what its feeders pass it */
	for (int i = x->tg_first[v]; i < x->tg_first[v + 1] && only < 0 && !err; i++) {
		const struct g_group *gr = &g->groups[x->tg[i]];

		gp_slots(x, x->tg[i], slot);
		for (int k = 0; k < gr->nf && !err; k++)
			for (int t = 0; t < x->tlen && !err; t++)
				err = gp_msg(x, p, t, g->feeds[gr->f0 + k].feeder, g->feeds[gr->f0 + k].port,
					     slot[k * x->tlen + t]);
	}
	/* v relays for segments: N_0's packets pass N_i in step t + i, N_m's in step t + m - i */
	for (int i = x->in_first[v]; i < x->in_first[v + 1] && !err; i++) {
		const int gid = x->in[i] / span, at = x->in[i] % span;
		const int so = g->groups[gid].seg_off, m = x->seg[so], *nd = x->seg + so + 1;
		const int pin = gp_port(g, nd[at - 1], v), pout = gp_port(g, v, nd[at + 1]);

		if (only >= 0 && nd[at - 1] != tc_part_only_peer(p) && nd[at + 1] != tc_part_only_peer(p))
			continue;
		gp_slots(x, gid, slot);
		for (int t = 0; t < x->tlen && !err; t++) {
			const int fw = slot[t], bw = slot[x->tlen + t];

			if (only < 0) {
				err = gp_msg(x, p, t + at - 1, nd[at - 1], pin, fw);
				if (!err)
					err = gp_msg(x, p, t + m - 1 - at, nd[at + 1], pout ^ 1, bw);
			}
			if (!err && at < m - 1 && (only < 0 || (t + at == T && nd[at + 1] == tc_part_only_peer(p))))
				err = gp_msg(x, p, t + at, v, pout, fw);
			if (!err && at > 1 && (only < 0 || (t + m - at == T && nd[at - 1] == tc_part_only_peer(p))))
				err = gp_msg(x, p, t + m - at, v, pin ^ 1, bw);
		}
	}
	free(slot);
	if (!err)
		err = tc_part_finish(p, x->nsteps);
	if (err)
		*why = "gossip: building the node's part failed";
	return err;
}

struct tc_gossip_prep_entry {
	struct tc_gossip_prep_entry *next;
	struct tc_shape shape;
	struct tc_gossip_prep *prep; /* NULL when err */
	int err;
	const char *why;
};

int __tc_gossip_part_cached(struct tc_gossip_prep_cache *c, tc_gossip_prepare_fn prepare, struct tc_part *p,
			    const char *oom_why, const char **why)
{
	struct tc_gossip_prep_entry *e;

	pthread_mutex_lock(&c->lock);
	for (e = c->head; e; e = e->next)
		if (tc_shape_equal(&e->shape, &p->shape))
			break;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (e) {
			e->shape = p->shape;
			e->err = prepare(&p->shape, &e->prep, &e->why);
			if (e->err == -ENOMEM) {
				__tc_gossip_prep_free(e->prep);
				free(e);
				e = NULL;
			} else {
				e->next = c->head;
				c->head = e;
			}
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (!e) {
		*why = oom_why;
		return -ENOMEM;
	}
	if (e->err) {
		*why = e->why;
		return e->err;
	}
	return __tc_gossip_part(e->prep, p, why);
}
