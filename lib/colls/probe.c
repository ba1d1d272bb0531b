// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The host's wall clock as the algorithm choice's price (TC_CLOCK_WALL).
 *
 * On the device the fabric's own timing (ts, tw, hop) prices what the
 * modelled torus would take. What this host takes to emulate it is another
 * matter: the port engines copy a message once, from its source's pages to
 * its destination's, whatever its route; what a step costs is waking every
 * node's process once and the host's CPUs doing all the step's copies. So
 * with TC_CLOCK_WALL the communicator measures, at creation, two figures on
 * the fabric itself and prices schedules with TC_COST_HOST (core/cost.h):
 *
 *   ts  the time of one all-port exchange of TC_PROBE_SMALL bytes with every
 *       neighbour (each node sends on every port and receives on every port),
 *       the median of TC_PROBE_ROUNDS rounds after one warm-up round that
 *       absorbs the nodes' start skew;
 *   tw  what TC_PROBE_BIG bytes per port (less on a fabric whose buffer
 *       matrix is too small for them) add to that round (median of
 *       TC_PROBE_ROUNDS), per byte of the whole fabric's exchange.
 *
 * Every node averages its figures with the others' (an allreduce), so the
 * choice, which must be the same on every node, is made from the same
 * numbers everywhere. A one-port fabric exchanges along its first dimension's
 * + direction only (one send and one receive per node at a time).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "colls/coll.h"

#define TC_PROBE_ROUNDS 5
#define TC_PROBE_SMALL 64
#define TC_PROBE_BIG (16u << 10)

static double tc_now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int tc_dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The ports a probe round uses: 2 per dimension (+ and -), or dimension 0's +
 * only on a one-port fabric. */
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
 * One round: on every port p in use, send bytes to the neighbour behind p
 * and receive bytes from it (its message toward us leaves on its opposite
 * port and arrives on p). One-port: send + on dimension 0 and receive from
 * the - neighbour, whose + message arrives on the - port. *sends: how many
 * sends this node posted.
 */
static int tc_probe_round(struct tc_run *r, unsigned int round, size_t bytes, double *us, int *sends)
{
	struct tc_comm *comm = r->comm;
	const int one = comm->tp.shape.one_port;
	const uint64_t tag = tc_run_tag(r, round, 0);
	struct tc_xfer x[4 * TC_MAX_DIMS];
	struct tc_seg seg[4 * TC_MAX_DIMS];
	unsigned int n = 0;
	double t0;
	int ret;

	*sends = 0;
	for (int p = 0; p < tc_probe_nports(comm); p++) {
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
	t0 = tc_now_us();
	ret = tc_step_exec(comm, r->name, "exchange", round, x, n);
	*us = tc_now_us() - t0;
	return ret;
}

/* The median of TC_PROBE_ROUNDS rounds of bytes per port; round counts on. */
static int tc_probe_median(struct tc_run *r, unsigned int *round, size_t bytes, double *us, int *sends)
{
	double t[TC_PROBE_ROUNDS];
	int ret = 0;

	for (int i = 0; i < TC_PROBE_ROUNDS && !ret; i++)
		ret = tc_probe_round(r, (*round)++, bytes, &t[i], sends);
	if (ret)
		return ret;
	qsort(t, TC_PROBE_ROUNDS, sizeof(t[0]), tc_dbl_cmp);
	*us = t[TC_PROBE_ROUNDS / 2];
	return 0;
}

int tc_probe_wall(struct tc_comm *comm)
{
	struct tc_run r;
	struct tc_coll_args a = { .kind = TC_COLL_ALLREDUCE, .count = 3, .dt = TC_DOUBLE, .op = TC_SUM };
	double mine[3], sum[3], warm;
	unsigned int round = 0;
	size_t big;
	int sends, ret;

	if (comm->tp.shape.nodes < 2) { /* nothing to exchange, nothing to choose between */
		memset(&comm->tp.cost, 0, sizeof(comm->tp.cost));
		comm->tp.cost.flags = TC_COST_HOST;
		return 0;
	}
	/* a fabric with a small buffer matrix (the same on every node) probes smaller */
	for (big = TC_PROBE_BIG;; big /= 2) {
		ret = tc_run_begin(&r, comm, "tc_comm_create: wall-clock probe", (size_t)2 * tc_probe_nports(comm) * big);
		if (ret != -ENOSPC || big <= TC_PROBE_SMALL)
			break;
	}
	if (!ret)
		ret = tc_probe_round(&r, round++, TC_PROBE_SMALL, &warm, &sends);
	if (!ret)
		ret = tc_probe_median(&r, &round, TC_PROBE_SMALL, &mine[0], &sends);
	if (!ret)
		ret = tc_probe_median(&r, &round, big, &mine[1], &sends);
	if (ret)
		return ret;
	mine[2] = sends;
	a.sendbuf = mine;
	a.recvbuf = sum;
	ret = tc_exec_allreduce(comm, &a);
	if (ret)
		return ret;
	memset(&comm->tp.cost, 0, sizeof(comm->tp.cost));
	comm->tp.cost.flags = TC_COST_HOST;
	comm->tp.cost.ts_us = sum[0] / comm->tp.shape.nodes;
	/* the fabric moved sum[2] * big bytes in the big rounds, sum[2] * small in the small ones */
	if (sum[1] > sum[0] && sum[2] > 0 && big > TC_PROBE_SMALL)
		comm->tp.cost.tw_us_per_byte =
			(sum[1] - sum[0]) / comm->tp.shape.nodes / (sum[2] * (double)(big - TC_PROBE_SMALL));
	return 0;
}
