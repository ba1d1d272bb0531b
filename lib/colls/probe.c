// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The host's wall clock as the algorithm choice's price (TC_CLOCK_WALL).
 *
 * On the device the fabric's own timing (ts, tw, hop) prices what the
 * modelled torus would take. What this host takes to emulate it is another
 * matter: the port engines copy a message once, from its source's pages to
 * its destination's, whatever its route; what a step costs is waking every
 * node's process once and the host's CPUs doing all the step's copies. So
 * with TC_CLOCK_WALL the communicator measures, at creation, three figures
 * on the fabric itself and prices schedules with TC_COST_HOST (core/cost.h).
 * Each is a median of TC_PROBE_ROUNDS rounds, after TC_PROBE_WARM warm-up
 * rounds that absorb the nodes' start skew; t_all's and t_one's rounds
 * alternate:
 *
 *   t_all  one all-port exchange of TC_PROBE_SMALL bytes with every
 *          neighbour (each node sends on every port and receives on every
 *          port: x transfers);
 *   t_one  one exchange along dimension 0's + direction only (one send and
 *          one receive per node);
 *   t_big  the all-port exchange with TC_PROBE_BIG bytes per port (less on a
 *          fabric whose buffer matrix is too small for them).
 *
 * A step of k messages (sends and receives) at its busiest node is priced
 * ts + msg * log2(k) (its node waits for the last of its peers; the latest
 * of k delays grows as log k), so msg = (t_all - t_one) / (log2(x) -
 * log2(x_one)), ts = t_one - msg * log2(x_one), and tw = (t_big - t_all)
 * per byte of the whole fabric's exchange. Fitted on a 4x4 in the guest:
 * a direct alltoall's 30-message step measured 3.3 ms, bruck's 2-message
 * steps 1.1 ms each, bcast-pattern's 8-message ones 1.5 ms.
 *
 * Every node averages its figures with the others' (an allreduce), so the
 * choice, which must be the same on every node, is made from the same
 * numbers everywhere. A one-port fabric exchanges along its first dimension's
 * + direction only (one send and one receive per node at a time).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "colls/coll.h"

#define TC_PROBE_WARM 3
#define TC_PROBE_ROUNDS 5
#define TC_PROBE_SMALL 64
#define TC_PROBE_BIG (16u << 10)

/* The ports an all-port probe round uses: 2 per dimension (+ and -), or
 * dimension 0's + only on a one-port fabric. */
static int tc_probe_nports(const struct tc_comm *comm)
{
	return comm->tp.shape.one_port ? 1 : 2 * comm->tp.shape.ndims;
}

static void tc_probe_xfer(struct tc_xfer *x, struct tc_seg *seg, int op, int port, const int8_t *route, int peer,
			  uint64_t off, size_t bytes, uint64_t tag)
{
	tc_xfer_init(x, op, port, route, peer, tag);
	*seg = (struct tc_seg){ .offset = off, .length = bytes };
	x->segs = seg;
	x->nsegs = 1;
}

/*
 * One round on nports ports: on every port p in use, send bytes to the
 * neighbour behind p and receive bytes from it (its message toward us leaves
 * on its opposite port and arrives on p). One port: send + on dimension 0
 * and receive from the - neighbour, whose + message arrives on the - port.
 * *sends, *xfers: how many sends and transfers this node posted.
 */
static int tc_probe_round(struct tc_run *r, unsigned int round, int nports, size_t bytes, double *us, int *sends,
			  int *xfers)
{
	struct tc_comm *comm = r->comm;
	const int one = nports == 1;
	const uint64_t tag = tc_run_tag(r, round, 0);
	struct tc_xfer x[4 * TC_MAX_DIMS];
	struct tc_seg seg[4 * TC_MAX_DIMS];
	unsigned int n = 0;
	double t0;
	int ret;

	*sends = 0;
	for (int p = 0; p < nports; p++) {
		int8_t route[TC_MAX_DIMS] = { 0 };
		int first, last, from = one ? comm->neighbors[1] : comm->neighbors[p];

		route[p / 2] = p & 1 ? -1 : 1;
		tc_route_ports(&comm->tp.shape, route, &first, &last);
		if (comm->neighbors[p] >= 0) {
			tc_probe_xfer(&x[n], &seg[n], TC_XFER_SEND, first, route, comm->neighbors[p],
				      (uint64_t)2 * p * bytes, bytes, tag);
			n++;
			(*sends)++;
		}
		if (from >= 0) {
			tc_probe_xfer(&x[n], &seg[n], TC_XFER_RECV, one ? last : first, NULL, from,
				      (uint64_t)(2 * p + 1) * bytes, bytes, tag);
			n++;
		}
	}
	*xfers = (int)n;
	t0 = tc_now_us();
	ret = tc_step_exec(comm, r->name, "exchange", round, x, n);
	*us = tc_now_us() - t0;
	return ret;
}

/*
 * The medians of TC_PROBE_ROUNDS rounds on nports[0] and nports[1] ports,
 * alternating (so the nodes' drift between rounds weighs on both alike);
 * round counts on. *sends: the first kind's; xfers[]: each kind's.
 */
static int tc_probe_medians(struct tc_run *r, unsigned int *round, const int nports[2], size_t bytes, double us[2],
			    int *sends, int xfers[2])
{
	double t[2][TC_PROBE_ROUNDS];
	int ret = 0, s1;

	for (int i = 0; i < TC_PROBE_ROUNDS && !ret; i++) {
		ret = tc_probe_round(r, (*round)++, nports[0], bytes, &t[0][i], sends, &xfers[0]);
		if (!ret && nports[1])
			ret = tc_probe_round(r, (*round)++, nports[1], bytes, &t[1][i], &s1, &xfers[1]);
	}
	if (ret)
		return ret;
	us[0] = tc_median(t[0], TC_PROBE_ROUNDS);
	us[1] = nports[1] ? tc_median(t[1], TC_PROBE_ROUNDS) : 0;
	return 0;
}

/* What the probe measured on this node, summed over the nodes by an allreduce. */
enum { P_ALL, P_ONE, P_BIG, P_SENDS, P_XFERS, P_XONE, P_N };

/* The rounds; big: the bandwidth rounds' bytes per port. */
static int tc_probe_rounds(struct tc_comm *comm, double *mine, size_t *big)
{
	const int np = tc_probe_nports(comm);
	unsigned int round = 0;
	int sends, xfers[2] = { 0, 0 }, ret;
	struct tc_run r;
	double warm, t[2] = { 0, 0 };

	/* a fabric with a small buffer matrix (the same on every node) probes smaller */
	for (*big = TC_PROBE_BIG;; *big /= 2) {
		ret = tc_run_begin(&r, comm, "tc_comm_create: wall-clock probe", (size_t)2 * np * *big);
		if (ret != -ENOSPC || *big <= TC_PROBE_SMALL)
			break;
	}
	for (int i = 0; i < TC_PROBE_WARM && !ret; i++)
		ret = tc_probe_round(&r, round++, np, TC_PROBE_SMALL, &warm, &sends, &xfers[0]);
	if (!ret)
		ret = tc_probe_medians(&r, &round, (const int[2]){ np, 1 }, TC_PROBE_SMALL, t, &sends, xfers);
	mine[P_ALL] = t[0];
	mine[P_ONE] = t[1];
	mine[P_XFERS] = xfers[0];
	mine[P_XONE] = xfers[1];
	if (!ret)
		ret = tc_probe_medians(&r, &round, (const int[2]){ np, 0 }, *big, t, &sends, xfers);
	mine[P_BIG] = t[0];
	mine[P_SENDS] = sends;
	return ret;
}

int tc_probe_wall(struct tc_comm *comm)
{
	struct tc_coll_args a = { .kind = TC_ALLREDUCE, .count = P_N, .dt = TC_DOUBLE, .op = TC_SUM };
	struct tc_cost_params *c = &comm->tp.cost;
	double mine[P_N], sum[P_N], P = comm->tp.shape.nodes, x, x1;
	size_t big;
	int ret;

	memset(c, 0, sizeof(*c));
	c->flags = TC_COST_HOST;
	if (comm->tp.shape.nodes < 2) /* nothing to exchange, nothing to choose between */
		return 0;
	ret = tc_probe_rounds(comm, mine, &big);
	if (ret)
		return ret;
	a.sendbuf = mine;
	a.recvbuf = sum;
	ret = tc_exec_allreduce(comm, &a);
	if (ret)
		return ret;
	x = sum[P_XFERS] / P; /* transfers per node in an all-port round, and in a one-port one */
	x1 = sum[P_XONE] / P;
	if (x > x1 && x1 >= 1 && sum[P_ALL] > sum[P_ONE])
		c->msg_us = (sum[P_ALL] - sum[P_ONE]) / P / (log2(x) - log2(x1));
	c->ts_us = (x > x1 && x1 >= 1 ? sum[P_ONE] / P - c->msg_us * log2(x1) : sum[P_ALL] / P);
	if (c->ts_us < 0)
		c->ts_us = 0;
	/* the fabric moved sum[P_SENDS] * big bytes in the big rounds, * small in the small ones */
	if (sum[P_BIG] > sum[P_ALL] && sum[P_SENDS] > 0 && big > TC_PROBE_SMALL)
		c->tw_us_per_byte = (sum[P_BIG] - sum[P_ALL]) / P / (sum[P_SENDS] * (double)(big - TC_PROBE_SMALL));
	return 0;
}
