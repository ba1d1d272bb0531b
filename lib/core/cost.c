// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Cost model: the papers' accounting of startups, transmission and
 * rearrangement, evaluated on a schedule.
 *
 * Critical path (Lemma 3 of the all-port paper: a phase lasts as long as its
 * slowest ring; rings do not wait for each other). Let done(n, s) be the time
 * node n has finished its steps 0..s (everything it sent and received), with
 * done(n, -1) = 0. A message of step s from src to dst starts at
 *     start = max(done(src, s-1), done(dst, s-1), free(l) for every link l of its route)
 * and ends at start + dur; it holds every link of its dimension-ordered route
 * for its whole duration (wormhole), so free(l) = end afterwards. Links serve
 * messages in step order (within a step, in message order). Then
 *     done(n, s) = max(done(n, s-1), end of every step-s message of n).
 * The schedule's cost is max over n of done(n, last step). Three durations:
 *   transmission_blocks  dur = b, the message's blocks (a packet of an
 *                        allgather split into npackets counts 1/npackets);
 *   steps (startups)     dur = 1 per message;
 *   time_us              dur = ts + h*hop + b*m*tw for a message crossing h
 *                        links, plus rho*m*rearranged_blocks: the device's own
 *                        timing model (include/uapi/torus.h), whose per-hop
 *                        term the papers' model leaves out (hop = 0).
 * The transport's flags (cost.h) change two rules. TC_COST_SENDER_START
 * drops done(dst, s-1) from start (the device: a message leaves at its
 * sender's clock). TC_COST_DIRECT (verbs: no routers) prices a message as
 * one transfer, dur = ts + b*m*tw whatever its torus route, holding no link;
 * instead each node's port serves its sends, and its receives, for the sum
 * of their durations, all of a step's at once (fair shares): a message ends
 * once its sender's and its receiver's ports are done with the step
 * (one-port shapes instead serialize each node's sends and receives in
 * listing order); with ts_cap a port pays ts for at most ts_cap of a
 * step's messages (their bytes all the same). Its time
 * column then adds lat, the network's latency (LogP's L: ts is the overhead
 * o + gap, what holds the ports), after the ports are free: the messages
 * of one step overlap their latencies, the steps of a chain pay one each;
 * a message of more than eager_bytes adds rdv to its latency (a rendezvous:
 * the receiver's ready-to-receive travels before the data). With big_bytes
 * set, a message's bytes beyond it cost tw_big each (tc_cost_bytes_us).
 * TC_COST_HOST (the host's wall clock emulating the device) replaces the time
 * column by a sum over the steps: ts plus tw times all the step's bytes.
 * lockstep_blocks is the sum over global steps of the largest message: what
 * a machine that synchronises all nodes at each step would pay.
 *
 * Lower bounds (lower_bound_blocks), in block units, for transmission:
 *
 *  Alltoall, cut argument. Cut dimension d of size n into two halves A (the
 *  first floor(n/2) coordinates) and B; each half holds (P/n)*its coordinate
 *  count of nodes. Every block from A to B must cross the cut from A to B:
 *  |A|*|B| = floor(n^2/4)*(P/n)^2 blocks. Directed links from A into B:
 *  on a wrapping dimension two cross sections of P/n links each (the middle
 *  and the wrap-around; for n = 2 the + and - links of each pair), 2P/n;
 *  on a mesh dimension one cross section, P/n. A link carries one block per
 *  unit, so
 *      torus dim:  P*floor(n^2/4) / (2n)      (even n = N1: P*N1/8, Lemma 1)
 *      mesh dim:   P*floor(n^2/4) / n
 *  On a torus the same value follows from Lemma 1's counting: each block
 *  covers its ring distance in each dimension, the ring distances from one
 *  node sum to floor(n^2/4), so dimension d carries P*(P/n)*floor(n^2/4)
 *  block-hops over its 2P directed links. The bound is the maximum over
 *  dimensions, rounded up (an alltoall's transmission is a whole number of
 *  blocks). It is also at least the single-node cut: a node receives P-1
 *  blocks through at most 2k links ((P-1)/(2k)), or, one-port, one message
 *  at a time (P-1).
 *
 *  Allgather, the same cut argument for broadcast: every block whose origin
 *  is outside a node set S must enter S at least once (one copy suffices,
 *  then it is copied inside S). With S the smaller half of dimension d
 *  (floor(n/2) coordinates), ceil(n/2)*P/n origins lie outside and their
 *  blocks enter S through 2P/n (torus) or P/n (mesh) links: at least
 *  ceil(n/2)/2 or ceil(n/2) units. With S one node of
 *  least in-degree g (2 per wrapping dimension, 1 per mesh dimension at a
 *  corner), N-1 blocks enter through g links: (N-1)/g, which dominates for
 *  every shape with more than a few nodes; one-port, N-1. The bound is the
 *  maximum of both, rounded up. lower_bound_steps is the same single-node
 *  bound, ceil((N-1)/g) (= ceil((N-1)/(2k)) on all-port tori), or N-1
 *  one-port: the steps needed when every message carries one block.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cost.h"

void tc_cost_params_default(struct tc_cost_params *p)
{
	memset(p, 0, sizeof(*p));
	p->ts_us = TC_COST_DEFAULT_TS_US;
	p->tw_us_per_byte = TC_COST_DEFAULT_TW_US_PER_BYTE;
	p->hop_us = TC_COST_DEFAULT_HOP_US;
	p->rho_us_per_byte = TC_COST_DEFAULT_RHO_US_PER_BYTE;
}

void tc_cost_fit_direct(const double c[3], const size_t len[3], double bk, int k, struct tc_cost_params *p)
{
	double tw = len[2] > len[1] ? (c[2] - c[1]) / (double)(len[2] - len[1]) : 0, ts, rdv;

	p->tw_us_per_byte = tw > 0 ? tw : 0;
	ts = (k > 1 ? (bk - c[0]) / (k - 1) : c[0]) - (double)len[0] * p->tw_us_per_byte;
	p->ts_us = ts > 0 ? ts : 0;
	p->lat_us = k > 1 && c[0] > p->ts_us + (double)len[0] * p->tw_us_per_byte ?
			    c[0] - p->ts_us - (double)len[0] * p->tw_us_per_byte : 0;
	rdv = c[1] - c[0] - (double)(len[1] - len[0]) * p->tw_us_per_byte;
	p->rdv_us = rdv > 0 && len[0] <= p->eager_bytes && len[1] > p->eager_bytes ? rdv : 0;
}

void tc_cost_fit_big(double c_big, size_t len_big, double c_l, size_t len_l, struct tc_cost_params *p)
{
	double tw = len_big > len_l ? (c_big - c_l) / (double)(len_big - len_l) : 0;

	p->tw_big_us_per_byte = tw > 0 ? tw : 0;
	p->big_bytes = tw > 0 ? len_l : 0;
}

void tc_cost_fit_fan(double b_all, int k_all, size_t len0, int k, struct tc_cost_params *p)
{
	const double bytes = (double)k_all * (double)len0 * p->tw_us_per_byte;
	double cap;

	p->ts_cap = 0;
	if (k_all <= k || p->ts_us <= 0 || b_all <= 0 || b_all >= bytes + p->lat_us + k_all * p->ts_us)
		return;
	cap = (b_all - p->lat_us - bytes) / p->ts_us;
	p->ts_cap = fmax(cap, (double)k);
}

double tc_cost_bytes_us(const struct tc_cost_params *p, double bytes)
{
	const double big = (double)p->big_bytes;

	if (p->big_bytes && bytes > big)
		return big * p->tw_us_per_byte + (bytes - big) * p->tw_big_us_per_byte;
	return bytes * p->tw_us_per_byte;
}

static double ceil_eps(double x)
{
	return ceil(x - 1e-9);
}

static int in_degree_min(const struct tc_shape *sh)
{
	int g = 0;

	for (int d = 0; d < sh->ndims; d++)
		g += (sh->wrap_mask & (1u << d)) ? 2 : 1;
	return g;
}

double tc_lower_bound_blocks(const struct tc_shape *sh, enum tc_coll_id coll)
{
	const double P = sh->nodes;
	double best = 0;

	if (coll == TC_ALLTOALL) {
		for (int d = 0; d < sh->ndims; d++) {
			double n = sh->dims[d];
			double q = floor(n * n / 4);
			double b = (sh->wrap_mask & (1u << d)) ? P * q / (2 * n) : P * q / n;

			if (b > best)
				best = b;
		}
		if (sh->one_port) {
			if (P - 1 > best)
				best = P - 1;
		} else if ((P - 1) / (2 * sh->ndims) > best) {
			best = (P - 1) / (2 * sh->ndims);
		}
		return ceil_eps(best);
	}
	if (coll == TC_ALLGATHER) {
		for (int d = 0; d < sh->ndims; d++) {
			int n = sh->dims[d];
			double b = (sh->wrap_mask & (1u << d)) ? ((n + 1) / 2) / 2.0 : (n + 1) / 2;

			if (b > best)
				best = b;
		}
		if (sh->one_port) {
			if (P - 1 > best)
				best = P - 1;
		} else if ((P - 1) / in_degree_min(sh) > best) {
			best = (P - 1) / in_degree_min(sh);
		}
		return ceil_eps(best);
	}
	return 0;
}

static double lower_bound_steps(const struct tc_shape *sh, enum tc_coll_id coll)
{
	if (coll != TC_ALLGATHER)
		return 0;
	if (sh->one_port)
		return sh->nodes - 1;
	return ceil_eps((double)(sh->nodes - 1) / in_degree_min(sh));
}

/*
 * The critical-path evaluations run side by side, one column each:
 * 0 blocks, 1 startups, 2.. the time for each block size.
 */
#define TC_COST_MAX_SIZES 32

struct tc_cost_state {
	struct tc_shape shape;
	enum tc_coll_id coll;
	const char *algo;
	double np;			/* packets per block of an allgather */
	struct tc_cost_params p;
	size_t sizes[TC_COST_MAX_SIZES];
	int nsizes, ncp;
	double *done, *next;		/* per node and column */
	double *lfree;			/* per link and column: when it is free */
	double *sfree, *rfree;		/* per node and column: its send and receive port free
					 * (TC_COST_DIRECT, one-port) */
	int engines;			/* serialize each node's sends and receives */
	int64_t *lblk;			/* per link: blocks carried */
	double *dur_end;		/* per message of the step and column: its end */
	uint32_t dur_cap;		/* messages dur_end has room for */
	double lockstep_blocks;
	double host_us[TC_COST_MAX_SIZES];	/* TC_COST_HOST: the sum of the steps' times */
	uint32_t *nmsg_node;			/* TC_COST_HOST: a step's messages per node, 0 between steps */
	uint32_t *nsend, *nrecv;		/* TC_COST_DIRECT with ts_cap: the step's sends and
						 * receives per node so far */
	/* tc_cost_cell: the steps handed over hold the messages of one cell's
	 * nodes, each standing for its translates by multiples of mod[] */
	int cell;
	int mod[TC_MAX_DIMS];
	double mult; /* nodes per node of the cell */
};

static void cost_free(struct tc_cost_state *c)
{
	if (!c)
		return;
	free(c->done);
	free(c->next);
	free(c->lfree);
	free(c->sfree);
	free(c->rfree);
	free(c->lblk);
	free(c->dur_end);
	free(c->nmsg_node);
	free(c->nsend);
	free(c->nrecv);
	free(c);
}

int tc_cost_begin(const struct tc_sched *s, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		  struct tc_cost_state **out)
{
	struct tc_cost_state *c;
	size_t N, nlinks;

	*out = NULL;
	if (nsizes < 0 || nsizes > TC_COST_MAX_SIZES)
		return tc_err(-EINVAL, "%s: tc_cost_eval: %d sizes (at most %d)", s->algo, nsizes,
					  TC_COST_MAX_SIZES);
	if (nsizes && (!p || !sizes))
		return tc_err(-EINVAL, "%s: tc_cost_eval: sizes without parameters", s->algo);
	c = calloc(1, sizeof(*c));
	if (!c)
		return tc_err(-ENOMEM, "%s: tc_cost_eval: out of memory", s->algo);
	c->shape = s->shape;
	c->coll = s->coll;
	c->algo = s->algo;
	c->np = s->npackets > 0 ? s->npackets : 1;
	if (p)
		c->p = *p;
	for (int k = 0; k < nsizes; k++)
		c->sizes[k] = sizes[k];
	c->nsizes = nsizes;
	c->ncp = 2 + nsizes;
	N = s->shape.nodes;
	nlinks = N * 2 * s->shape.ndims;
	c->done = calloc(N * c->ncp, sizeof(*c->done));
	c->next = calloc(N * c->ncp, sizeof(*c->next));
	c->lfree = calloc(nlinks * c->ncp, sizeof(*c->lfree));
	c->lblk = calloc(nlinks, sizeof(*c->lblk));
	c->engines = (c->p.flags & TC_COST_DIRECT) || s->shape.one_port;
	if (c->engines) {
		c->sfree = calloc(N * c->ncp, sizeof(*c->sfree));
		c->rfree = calloc(N * c->ncp, sizeof(*c->rfree));
	}
	if (c->p.flags & TC_COST_HOST)
		c->nmsg_node = calloc(N, sizeof(*c->nmsg_node));
	if ((c->p.flags & TC_COST_DIRECT) && c->p.ts_cap > 0) {
		c->nsend = calloc(N, sizeof(*c->nsend));
		c->nrecv = calloc(N, sizeof(*c->nrecv));
	}
	if (!c->done || !c->next || !c->lfree || !c->lblk || (c->engines && (!c->sfree || !c->rfree)) ||
	    ((c->p.flags & TC_COST_HOST) && !c->nmsg_node) ||
	    ((c->p.flags & TC_COST_DIRECT) && c->p.ts_cap > 0 && (!c->nsend || !c->nrecv))) {
		cost_free(c);
		return tc_err(-ENOMEM, "%s: tc_cost_eval: out of memory", s->algo);
	}
	*out = c;
	return 0;
}

int tc_cost_cell(struct tc_cost_state *c, const int *mod)
{
	int cell = 1;

	if (c->engines || (c->p.flags & TC_COST_DIRECT))
		return tc_err(-EOPNOTSUPP, "%s: priced from a cell only with routers and all-port nodes", c->algo);
	for (int d = 0; d < c->shape.ndims; d++) {
		if (mod[d] < 1 || c->shape.dims[d] % mod[d] ||
		    (mod[d] != c->shape.dims[d] && !(c->shape.wrap_mask & (1u << d))))
			return tc_err(-EINVAL, "%s: tc_cost_cell: period %d on side %d", c->algo, mod[d],
				      c->shape.dims[d]);
		c->mod[d] = mod[d];
		cell *= mod[d];
	}
	c->cell = 1;
	c->mult = (double)(c->shape.nodes / cell);
	return 0;
}

/* The node whose state stands for n's: itself, or with tc_cost_cell its cell node. */
static uint32_t cost_node(const struct tc_cost_state *c, uint32_t n)
{
	int x[TC_MAX_DIMS];

	if (!c->cell)
		return n;
	tc_shape_coords(&c->shape, (int)n, x);
	for (int d = 0; d < c->shape.ndims; d++)
		x[d] %= c->mod[d];
	return (uint32_t)tc_shape_node(&c->shape, x);
}

/*
 * When message msg can start, per column, into end[]: once its sender has
 * finished its earlier steps (and its receiver, unless TC_COST_SENDER_START),
 * every link it holds is free, and with engines its sender's send port and
 * its receiver's receive port are free.
 */
static void msg_start(const struct tc_cost_state *c, const struct tc_msg *msg, const uint32_t *links, int nheld,
		      double *end)
{
	const int NCP = c->ncp;
	const double *ds = &c->done[msg->src * NCP], *dd = &c->done[msg->dst * NCP];
	const int both = !(c->p.flags & TC_COST_SENDER_START);

	for (int k = 0; k < NCP; k++)
		end[k] = both && dd[k] > ds[k] ? dd[k] : ds[k];
	for (int l = 0; l < nheld; l++) {
		const double *lf = &c->lfree[(size_t)links[l] * NCP];

		for (int k = 0; k < NCP; k++)
			if (lf[k] > end[k])
				end[k] = lf[k];
	}
	if (c->engines && !(c->p.flags & TC_COST_DIRECT)) {
		const double *sf = &c->sfree[msg->src * NCP], *rf = &c->rfree[msg->dst * NCP];

		for (int k = 0; k < NCP; k++)
			end[k] = fmax(end[k], fmax(sf[k], rf[k]));
	}
}

/* TC_COST_HOST: a step with messages costs ts, msg_us times log2 of the
 * messages (sends and receives) of its busiest node, and tw per byte of
 * them all. */
static void cost_host_step(struct tc_cost_state *c, const struct tc_step_view *sv)
{
	uint32_t *cnt = c->nmsg_node, busiest = 0;
	double blocks = 0;

	if (!sv->nmsgs)
		return;
	for (uint32_t i = 0; i < sv->nmsgs; i++) {
		blocks += sv->msgs[i].nblk / c->np;
		cnt[sv->msgs[i].src]++;
		cnt[cost_node(c, sv->msgs[i].dst)]++;
	}
	for (uint32_t i = 0; i < sv->nmsgs; i++) {
		uint32_t dst = cost_node(c, sv->msgs[i].dst);

		busiest = cnt[sv->msgs[i].src] > busiest ? cnt[sv->msgs[i].src] : busiest;
		busiest = cnt[dst] > busiest ? cnt[dst] : busiest;
	}
	for (uint32_t i = 0; i < sv->nmsgs; i++)
		cnt[sv->msgs[i].src] = cnt[cost_node(c, sv->msgs[i].dst)] = 0;
	if (c->cell) /* every message of the cell stands for mult of the whole step */
		blocks *= c->mult;
	for (int k = 0; k < c->nsizes; k++)
		c->host_us[k] += c->p.ts_us + log2(busiest) * c->p.msg_us +
				 blocks * (double)c->sizes[k] * c->p.tw_us_per_byte;
}

/*
 * TC_COST_DIRECT: a node's NIC works on all the sends it was given at once,
 * and so on its receives. A message ready at ready[] (its ends' earlier
 * steps done) adds its duration to its sender's send port and its
 * receiver's receive port, each on its own (direct_take); once the step's
 * messages are all in, each ends when both its ports have done the step's
 * work (direct_share), not at its turn in the schedule's listing, which
 * would otherwise decide (a direct alltoall on 4x4, 15 one-startup messages
 * per node: 22 startups in listing order, 15 this way, the most work any
 * port has). Then, in time, its latency, which holds no port, and a
 * rendezvous's more above eager_bytes.
 */
/* The share of ts that a port's n-th message of a step pays (ts_cap; n from 1). */
static double ts_share(const struct tc_cost_state *c, uint32_t n)
{
	return c->p.ts_cap > 0 ? fmin(fmax(c->p.ts_cap - (double)(n - 1), 0), 1) : 1;
}

static void direct_take(struct tc_cost_state *c, const struct tc_msg *msg, const double *dur, const double *ready)
{
	const int NCP = c->ncp;
	double *sf = &c->sfree[msg->src * NCP], *rf = &c->rfree[msg->dst * NCP];
	double ss = 1, rs = 1;

	if (c->nsend) {
		ss = ts_share(c, ++c->nsend[msg->src]);
		rs = ts_share(c, ++c->nrecv[msg->dst]);
	}
	for (int k = 0; k < NCP; k++) {
		const double ts = k >= 2 ? c->p.ts_us : 0;

		sf[k] = fmax(sf[k], ready[k]) + dur[k] - ts * (1 - ss);
		rf[k] = fmax(rf[k], ready[k]) + dur[k] - ts * (1 - rs);
	}
}

static void direct_share(struct tc_cost_state *c, const struct tc_step_view *sv)
{
	const int NCP = c->ncp;

	for (uint32_t i = 0; i < sv->nmsgs; i++) {
		const struct tc_msg *msg = &sv->msgs[i];
		const double b = msg->nblk / c->np;
		const double *sf = &c->sfree[msg->src * NCP], *rf = &c->rfree[msg->dst * NCP];
		double *end = &c->dur_end[(size_t)i * NCP];

		for (int k = 0; k < NCP; k++)
			end[k] = fmax(end[k], fmax(sf[k], rf[k]));
		for (int k = 2; k < NCP; k++)
			end[k] += c->p.lat_us + (b * (double)c->sizes[k - 2] > c->p.eager_bytes ? c->p.rdv_us : 0);
	}
}

int tc_cost_step(struct tc_cost_state *c, const struct tc_step_view *sv)
{
	const int NCP = c->ncp;
	const double np = c->np;
	const int direct = !!(c->p.flags & TC_COST_DIRECT);
	double dur[2 + TC_COST_MAX_SIZES], biggest = 0;
	uint32_t links[TC_MAX_DIMS * 128];

	if (tc_grow((void **)&c->dur_end, &c->dur_cap, sv->nmsgs, NCP * sizeof(*c->dur_end), 64))
		return tc_err(-ENOMEM, "%s: tc_cost_eval: out of memory", c->algo);
	for (uint32_t i = 0; c->nsend && i < sv->nmsgs; i++)
		c->nsend[sv->msgs[i].src] = c->nrecv[sv->msgs[i].dst] = 0;
	for (uint32_t i = 0; i < sv->nmsgs; i++) {
		struct tc_msg cm = sv->msgs[i];
		const struct tc_msg *msg = &cm;
		const double b = msg->nblk / np;
		double *end = &c->dur_end[(size_t)i * NCP];
		int nl = tc_msg_links(&c->shape, msg, links);
		int held = direct ? 0 : nl; /* direct: no torus link, no hop */

		if (c->cell) {
			/* the cell's nodes stand for their translates: ends and links by their cell node */
			const uint32_t ports = 2 * (uint32_t)c->shape.ndims;

			if (cm.src < 0 || cost_node(c, (uint32_t)cm.src) != (uint32_t)cm.src)
				return tc_err(-EINVAL, "%s: tc_cost_cell: step %u: sender %d is not a node of the cell",
					      c->algo, cm.step, cm.src);
			cm.dst = (int)cost_node(c, cm.dst);
			for (int l = 0; l < nl; l++)
				links[l] = cost_node(c, links[l] / ports) * ports + links[l] % ports;
		}

		dur[0] = b;
		dur[1] = 1;
		for (int k = 0; k < c->nsizes; k++)
			dur[2 + k] = c->p.ts_us + held * c->p.hop_us + tc_cost_bytes_us(&c->p, b * (double)c->sizes[k]);
		if (b > biggest)
			biggest = b;
		msg_start(c, msg, links, held, end);
		if (direct)
			direct_take(c, msg, dur, end);
		for (int k = 0; k < NCP; k++)
			end[k] += dur[k];
		for (int l = 0; l < held; l++)
			memcpy(&c->lfree[(size_t)links[l] * NCP], end, NCP * sizeof(*end));
		for (int l = 0; l < nl; l++)
			c->lblk[links[l]] += msg->nblk;
		if (c->engines && !direct) {
			memcpy(&c->sfree[msg->src * NCP], end, NCP * sizeof(*end));
			memcpy(&c->rfree[msg->dst * NCP], end, NCP * sizeof(*end));
		}
	}
	if (direct)
		direct_share(c, sv);
	c->lockstep_blocks += biggest;
	if (c->p.flags & TC_COST_HOST)
		cost_host_step(c, sv);
	/* done(n, s) = max(done(n, s-1), ends of n's step-s messages) */
	for (uint32_t i = 0; i < sv->nmsgs; i++) {
		const size_t src = (size_t)sv->msgs[i].src, dst = cost_node(c, sv->msgs[i].dst);
		const double *end = &c->dur_end[(size_t)i * NCP];

		for (int k = 0; k < NCP; k++) {
			if (end[k] > c->next[src * NCP + k])
				c->next[src * NCP + k] = end[k];
			if (end[k] > c->next[dst * NCP + k])
				c->next[dst * NCP + k] = end[k];
		}
	}
	for (uint32_t i = 0; i < sv->nmsgs; i++) {
		const size_t src = (size_t)sv->msgs[i].src, dst = cost_node(c, sv->msgs[i].dst);

		for (int k = 0; k < NCP; k++) {
			if (c->next[src * NCP + k] > c->done[src * NCP + k])
				c->done[src * NCP + k] = c->next[src * NCP + k];
			if (c->next[dst * NCP + k] > c->done[dst * NCP + k])
				c->done[dst * NCP + k] = c->next[dst * NCP + k];
		}
	}
	return 0;
}

int tc_cost_end(struct tc_cost_state *c, const struct tc_sched *s, double *time_us, struct tc_cost *out)
{
	const size_t N = c->shape.nodes, nlinks = N * 2 * c->shape.ndims;
	const int NCP = c->ncp;
	double tcp[2 + TC_COST_MAX_SIZES] = { 0 };

	if (!out || !s) {
		cost_free(c);
		return out ? tc_err(-EINVAL, "tc_cost_end: no schedule") : 0;
	}
	memset(out, 0, sizeof(*out));
	for (size_t n = 0; n < N; n++)
		for (int k = 0; k < NCP; k++)
			if (c->done[n * NCP + k] > tcp[k])
				tcp[k] = c->done[n * NCP + k];
	for (size_t l = 0; l < nlinks; l++)
		if (c->lblk[l] > out->max_link_blocks)
			out->max_link_blocks = c->lblk[l];

	out->lockstep_blocks = c->lockstep_blocks;
	out->transmission_blocks = tcp[0];
	out->steps = (uint32_t)llround(tcp[1]);
	out->rearranged_blocks = s->rearranged_blocks;
	out->lower_bound_blocks = tc_lower_bound_blocks(&c->shape, c->coll);
	out->ratio = out->lower_bound_blocks > 0 ? out->transmission_blocks / out->lower_bound_blocks : 0;
	out->lower_bound_steps = lower_bound_steps(&c->shape, c->coll);
	for (int k = 0; k < c->nsizes; k++)
		time_us[k] = ((c->p.flags & TC_COST_HOST) ? c->host_us[k] : tcp[2 + k]) + c->p.rho_us_per_byte * (double)c->sizes[k] * (double)s->rearranged_blocks;
	cost_free(c);
	return 0;
}

static int cost_dp(const struct tc_sched *s, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		   double *time_us, struct tc_cost *out)
{
	struct tc_cost_state *c;
	struct tc_step_view sv;
	int err;

	if (!s->step_first)
		return tc_err(-EINVAL, "%s: tc_cost_eval: schedule not finished", s->algo);
	err = tc_cost_begin(s, p, sizes, nsizes, &c);
	for (uint32_t st = 0; !err && st < s->nsteps; st++) {
		tc_sched_step_view(s, st, &sv);
		err = tc_cost_step(c, &sv);
	}
	if (err) {
		if (c)
			tc_cost_end(c, NULL, NULL, NULL);
		return err;
	}
	return tc_cost_end(c, s, time_us, out);
}

int tc_cost_eval(const struct tc_sched *s, const struct tc_cost_params *p, struct tc_cost *out)
{
	double t = 0;
	int err;

	err = cost_dp(s, p, p ? &p->block_bytes : NULL, p ? 1 : 0, &t, out);
	if (!err)
		out->time_us = t;
	return err;
}

int tc_cost_eval_sizes(const struct tc_sched *s, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		       double *time_us, struct tc_cost *out)
{
	if (!p || !sizes || !time_us)
		return tc_err(-EINVAL, "tc_cost_eval_sizes: NULL parameters");
	return cost_dp(s, p, sizes, nsizes, time_us, out);
}

/* The port of a message's first hop (dimension-ordered routes, dim 0 first). */
static int first_port(const struct tc_shape *sh, const struct tc_msg *msg)
{
	for (int d = 0; d < sh->ndims; d++)
		if (msg->route[d])
			return 2 * d + (msg->route[d] < 0);
	return 0;
}

int tc_cost_prog(const struct tc_sched *s, const struct tc_cost_params *p, double *time_us)
{
	const size_t N = s->shape.nodes, nports = 2 * s->shape.ndims;
	const int one_port = s->shape.one_port, np = s->npackets > 0 ? s->npackets : 1;
	/* links shared between nodes: every transfer waits for its node's previous step (runtime/plan.c) */
	const int in_steps = one_port || !(s->claims & TC_CLAIM_ONE_HOP);
	uint32_t links[TC_MAX_DIMS * 128];
	size_t narr;
	double *arr, *lfree, *prev_end, *cur_end, *sfree, *rfree, *nprev = NULL, *ncur = NULL, span = 0;
	int64_t *cur_step, *nstep = NULL;
	int ret = 0;

	if (p->flags & (TC_COST_DIRECT | TC_COST_HOST))
		return tc_err(-EOPNOTSUPP, "%s: a program is priced on the device's timing only", s->algo);
	if (s->coll != TC_ALLTOALL && s->coll != TC_ALLGATHER)
		return tc_err(-EOPNOTSUPP, "%s: programs run alltoall and allgather only", s->algo);
	if (N > 4096)
		return tc_err(-E2BIG, "%s: %zu nodes: too many to price as programs", s->algo, N);
	/* when each block arrived where it is: alltoall blocks move (one place
	 * each), allgather packets are copied (one place per node) */
	narr = s->coll == TC_ALLTOALL ? N * N : N * N * np;
	arr = calloc(narr, sizeof(*arr));
	lfree = calloc(N * nports, sizeof(*lfree));
	prev_end = calloc(N * nports, sizeof(*prev_end));
	cur_end = calloc(N * nports, sizeof(*cur_end));
	cur_step = malloc(N * nports * sizeof(*cur_step));
	sfree = calloc(N, sizeof(*sfree));
	rfree = calloc(N, sizeof(*rfree));
	if (in_steps) {
		nprev = calloc(N, sizeof(*nprev));
		ncur = calloc(N, sizeof(*ncur));
		nstep = malloc(N * sizeof(*nstep));
	}
	if (!arr || !lfree || !prev_end || !cur_end || !cur_step || !sfree || !rfree ||
	    (in_steps && (!nprev || !ncur || !nstep))) {
		ret = tc_err(-ENOMEM, "%s: tc_cost_prog: out of memory", s->algo);
		goto out;
	}
	for (size_t i = 0; i < N * nports; i++)
		cur_step[i] = -1;
	for (size_t i = 0; in_steps && i < N; i++)
		nstep[i] = -1;
	for (uint32_t st = 0; st < s->nsteps; st++) {
		for (uint32_t i = s->step_first[st]; i < s->step_first[st + 1]; i++) {
			const struct tc_msg *msg = &s->msgs[i];
			const struct tc_blk *b = &s->blks[msg->blk_off];
			size_t q = (size_t)msg->src * nports + (one_port ? 0 : first_port(&s->shape, msg));
			int nl = tc_msg_links(&s->shape, msg, links);
			double ready = 0, end;

			if (cur_step[q] != st) {
				prev_end[q] = cur_end[q];
				cur_end[q] = 0;
				cur_step[q] = st;
			}
			ready = prev_end[q];
			if (in_steps) {
				/* a node's step: the transfers it sends or receives in that schedule step */
				for (int e = 0; e < 2; e++) {
					int v = e ? msg->dst : msg->src;

					if (nstep[v] != st) {
						nprev[v] = ncur[v];
						ncur[v] = 0;
						nstep[v] = st;
					}
				}
				ready = fmax(ready, nprev[msg->src]);
			}
			for (uint32_t k = 0; k < msg->nblk; k++) {
				if (b[k].a == msg->src)
					continue; /* its own: there from the start */
				size_t at = s->coll == TC_ALLTOALL ? (size_t)b[k].a * N + b[k].b
								   : ((size_t)msg->src * N + b[k].a) * np + b[k].b;
				ready = fmax(ready, arr[at]);
			}
			for (int l = 0; l < nl; l++)
				ready = fmax(ready, lfree[links[l]]);
			if (one_port)
				ready = fmax(ready, fmax(sfree[msg->src], rfree[msg->dst]));
			end = ready + p->ts_us + nl * p->hop_us +
			      tc_cost_bytes_us(p, (double)msg->nblk / np * (double)p->block_bytes);
			for (int l = 0; l < nl; l++)
				lfree[links[l]] = end;
			if (one_port)
				sfree[msg->src] = rfree[msg->dst] = end;
			cur_end[q] = fmax(cur_end[q], end);
			if (in_steps) {
				ncur[msg->src] = fmax(ncur[msg->src], end);
				ncur[msg->dst] = fmax(ncur[msg->dst], end);
			}
			for (uint32_t k = 0; k < msg->nblk; k++) {
				size_t at = s->coll == TC_ALLTOALL ? (size_t)b[k].a * N + b[k].b
								   : ((size_t)msg->dst * N + b[k].a) * np + b[k].b;
				arr[at] = end;
			}
			span = fmax(span, end);
		}
	}
	*time_us = span;
out:
	free(arr);
	free(lfree);
	free(prev_end);
	free(cur_end);
	free(cur_step);
	free(sfree);
	free(rfree);
	free(nprev);
	free(ncur);
	free(nstep);
	return ret;
}

double tc_cost_send_steps_us(const struct tc_cost_params *p, uint64_t steps, int npackets, size_t m)
{
	double tw = p->tw_us_per_byte;

	if (p->big_bytes && p->tw_big_us_per_byte < tw)
		tw = p->tw_big_us_per_byte;
	return (double)steps * (p->ts_us + (double)m / (npackets > 0 ? npackets : 1) * tw);
}
