// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The simulator transport: a fabric whose nodes are threads of this process.
 *
 * Every node has a buffer (plain memory) and a mailbox. A send is matched to
 * the receive its destination posts with the same (source node, arrival
 * port, tag), or with TC_SIM_MATCH=device the same (arrival port, tag)
 * alone, as the device matches; whichever of the two is posted second
 * copies the bytes from the sender's buffer into the receiver's
 * (rendezvous: nothing is staged), and both complete then, so a send
 * completes when it is delivered. The
 * arrival port is computed from the route, as a router would, so a wrong
 * port in a receive never matches and shows up as a timeout.
 *
 * Locking: each node's mutex protects its mailbox (unmatched sends addressed
 * to it), its records and counters. A match is claimed under the mailbox
 * owner's mutex (never two mutexes at once); the bytes are then copied with no
 * lock held, and each side's record is completed under its own mutex. Both
 * nodes count the copy in flight (busy, atomic, raised under the claiming
 * mutex), so a node that cancels after a timeout waits until no peer is still
 * copying into or out of its buffer. Records of posted transfers live in
 * per-node arrays that grow only at the start of a post and are reused once a
 * node has reaped all its completions; the executor waits for every
 * completion before its next post, so the arrays do not move under a copy.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transport/sim.h"

static struct tc_sim *to_sim(struct tc_tp *tp)
{
	return tp->priv;
}

static int tc_sim_open(struct tc_tp *tp, const struct tc_comm_attr *attr)
{
	struct tc_sim *sim = attr->sim;

	if (!sim)
		return tc_err(-EINVAL, "transport sim: tc_comm_attr.sim is NULL (use tc_sim_launch)");
	if (attr->node >= (uint32_t)sim->shape.nodes)
		return tc_err(-EINVAL, "transport sim: node %u not in a fabric of %d nodes", attr->node, sim->shape.nodes);
	pthread_mutex_lock(&sim->nodes[attr->node].mu);
	if (sim->nodes[attr->node].bound) {
		pthread_mutex_unlock(&sim->nodes[attr->node].mu);
		return tc_err(-EBUSY, "transport sim: node %u already has a communicator", attr->node);
	}
	sim->nodes[attr->node].bound = 1;
	pthread_mutex_unlock(&sim->nodes[attr->node].mu);
	tp->priv = sim;
	tp->shape = sim->shape;
	tp->rank = attr->node;
	/* The simulator keeps no virtual time: price as the module's defaults. */
	tc_cost_params_default(&tp->cost);
	return 0;
}

/* Complete a record of node n after its copy; takes n's mutex. */
static void tc_sim_complete(struct tc_sim *sim, int n, uint32_t rec, int status, uint64_t bytes)
{
	struct tc_sim_node *nd = &sim->nodes[n];
	struct tc_sim_rec *r;

	pthread_mutex_lock(&nd->mu);
	r = &nd->recs[rec];
	r->done = 1;
	r->status = status;
	r->bytes = bytes;
	nd->ndone++;
	nd->outstanding--;
	atomic_fetch_sub(&nd->busy, 1);
	pthread_cond_broadcast(&nd->cond);
	pthread_mutex_unlock(&nd->mu);
}

/*
 * Move the bytes of the claimed send (sn, si) into the claimed receive
 * (rn, ri) and complete both. No lock held: both records are claimed, and
 * neither node moves its arrays or buffer while it has transfers outstanding.
 */
static void tc_sim_deliver(struct tc_sim *sim, int sn, uint32_t si, int rn, uint32_t ri)
{
	struct tc_sim_node *snd = &sim->nodes[sn], *rnd = &sim->nodes[rn];
	const struct tc_sim_rec *s = &snd->recs[si], *r = &rnd->recs[ri];
	const struct tc_seg *ss = snd->segs + s->seg0, *rs = rnd->segs + r->seg0;
	uint64_t slen = 0, rlen = 0, soff = 0, roff = 0;
	uint32_t i = 0, j = 0, sn_segs = s->nsegs, rn_segs = r->nsegs;
	int status = 0;

	for (uint32_t k = 0; k < sn_segs; k++)
		slen += ss[k].length;
	for (uint32_t k = 0; k < rn_segs; k++)
		rlen += rs[k].length;
	if (slen != rlen) {
		status = -EMSGSIZE;
		slen = 0;
	}
	/* Walk both segment lists in step. */
	while (slen && i < sn_segs && j < rn_segs) {
		uint64_t n = ss[i].length - soff;

		if (rs[j].length - roff < n)
			n = rs[j].length - roff;
		memcpy(rnd->buf + rs[j].offset + roff, snd->buf + ss[i].offset + soff, n);
		soff += n;
		roff += n;
		if (soff == ss[i].length) {
			i++;
			soff = 0;
		}
		if (roff == rs[j].length) {
			j++;
			roff = 0;
		}
	}
	tc_sim_complete(sim, rn, ri, status, slen);
	tc_sim_complete(sim, sn, si, status, slen);
}

/*
 * Withdraw everything node n has outstanding and wait until no peer is
 * copying into or out of it any more. Caller holds n's mutex; it is
 * released and retaken while the node's sends leave the peers' mailboxes.
 */
static void __tc_sim_cancel(struct tc_sim *sim, int n)
{
	struct tc_sim_node *nd = &sim->nodes[n];
	uint32_t nrecs = nd->nrecs;

	/* Own receives can no longer be matched. */
	for (uint32_t i = 0; i < nrecs; i++)
		nd->recs[i].claimed = 1;
	pthread_mutex_unlock(&nd->mu);
	for (uint32_t i = 0; i < nrecs; i++) {
		const struct tc_sim_rec *r = &nd->recs[i];
		struct tc_sim_node *dst;

		if (r->op != TC_XFER_SEND)
			continue;
		dst = &sim->nodes[r->peer];
		pthread_mutex_lock(&dst->mu);
		for (uint32_t k = 0; k < dst->npend; k++)
			if (dst->pend[k].node == n && dst->pend[k].rec == i) {
				dst->pend[k] = dst->pend[--dst->npend];
				break;
			}
		pthread_mutex_unlock(&dst->mu);
	}
	/* A claim made before the withdrawal has raised busy; let it finish. */
	pthread_mutex_lock(&nd->mu);
	while (atomic_load(&nd->busy))
		pthread_cond_wait(&nd->cond, &nd->mu);
	nd->nrecs = nd->nsegs = 0;
	nd->ndone = nd->outstanding = 0;
}

static void tc_sim_close(struct tc_tp *tp)
{
	struct tc_sim *sim = to_sim(tp);

	pthread_mutex_lock(&sim->nodes[tp->rank].mu);
	__tc_sim_cancel(sim, tp->rank);
	sim->nodes[tp->rank].bound = 0;
	pthread_mutex_unlock(&sim->nodes[tp->rank].mu);
}

static int tc_sim_buffer(struct tc_tp *tp, size_t bytes, void **base)
{
	struct tc_sim *sim = to_sim(tp);
	struct tc_sim_node *nd = &sim->nodes[tp->rank];
	int ret = 0;

	pthread_mutex_lock(&nd->mu);
	if (bytes > nd->buf_bytes) {
		char *p;

		if (nd->outstanding) {
			ret = tc_err(-EBUSY, "transport sim: buffer resized with transfers outstanding");
			goto out;
		}
		p = realloc(nd->buf, bytes);
		if (!p) {
			ret = tc_err(-ENOMEM, "transport sim: no memory for a %zu-byte buffer", bytes);
			goto out;
		}
		nd->buf = p;
		nd->buf_bytes = bytes;
	}
	*base = nd->buf;
out:
	pthread_mutex_unlock(&nd->mu);
	return ret;
}

/* Check one transfer as the device would; fills the arrival port of a send. */
static int tc_sim_check(struct tc_tp *tp, const struct tc_xfer *x, int *arrival)
{
	const struct tc_shape *sh = &tp->shape;
	struct tc_sim_node *nd = &to_sim(tp)->nodes[tp->rank];
	int first = -1, last = -1;

	if (x->op != TC_XFER_SEND && x->op != TC_XFER_RECV)
		return tc_err(-EINVAL, "transport sim: transfer op %u unknown", x->op);
	if (x->peer < 0 || x->peer >= sh->nodes || x->peer == tp->rank)
		return tc_err(-EINVAL, "transport sim: peer %d invalid for node %d", x->peer, tp->rank);
	if (x->port >= 2 * sh->ndims)
		return tc_err(-EINVAL, "transport sim: port %u invalid", x->port);
	if (!x->nsegs || !x->segs)
		return tc_err(-EINVAL, "transport sim: transfer without segments");
	for (uint32_t i = 0; i < x->nsegs; i++)
		if (!x->segs[i].length || x->segs[i].offset > nd->buf_bytes ||
		    x->segs[i].length > nd->buf_bytes - x->segs[i].offset)
			return tc_err(-EINVAL, "transport sim: segment [%llu, +%llu) outside the %zu-byte buffer",
				      (unsigned long long)x->segs[i].offset, (unsigned long long)x->segs[i].length,
				      nd->buf_bytes);
	if (x->op == TC_XFER_RECV) {
		*arrival = x->port;
		return 0;
	}
	for (int d = sh->ndims; d < TC_MAX_DIMS; d++)
		if (x->route[d])
			return tc_err(-EINVAL, "transport sim: route moves in dimension %d of a %d-D fabric", d, sh->ndims);
	if (tc_route_ports(sh, x->route, &first, &last) || tc_shape_walk(sh, tp->rank, x->route) != x->peer)
		return tc_err(-EINVAL, "transport sim: route from node %d does not lead to node %d", tp->rank, x->peer);
	if (x->port != first)
		return tc_err(-EINVAL, "transport sim: send on port %u but the route leaves on port %d", x->port, first);
	*arrival = last;
	return 0;
}

/* Record transfer x as node me's record; called and returns with nd->mu held. */
static uint32_t __tc_sim_record(struct tc_sim_node *nd, const struct tc_xfer *x, int arrival)
{
	uint32_t ri = nd->nrecs;

	nd->recs[ri] = (struct tc_sim_rec){
		.op = x->op,
		.port = arrival,
		.first = x->port,
		.peer = x->peer,
		.seg0 = nd->nsegs,
		.nsegs = x->nsegs,
		.tag = x->tag,
	};
	memcpy(nd->segs + nd->nsegs, x->segs, x->nsegs * sizeof(*nd->segs));
	nd->nsegs += x->nsegs;
	nd->nrecs++;
	nd->outstanding++;
	return ri;
}

/* A receive just recorded (nd->mu held, released here): a send already waiting in my mailbox? */
static void __tc_sim_match_recv(struct tc_sim *sim, int me, uint32_t ri)
{
	struct tc_sim_node *nd = &sim->nodes[me];
	struct tc_sim_rec *r = &nd->recs[ri];
	uint32_t k;

	for (k = 0; k < nd->npend; k++) {
		const struct tc_sim_ref *ref = &nd->pend[k];
		const struct tc_sim_rec *q = &sim->nodes[ref->node].recs[ref->rec];

		if ((sim->match_port_tag || ref->node == r->peer) && q->port == r->port && q->tag == r->tag)
			break;
	}
	if (k < nd->npend) {
		struct tc_sim_ref ref = nd->pend[k];

		nd->pend[k] = nd->pend[--nd->npend];
		r->claimed = 1;
		atomic_fetch_add(&nd->busy, 1);
		atomic_fetch_add(&sim->nodes[ref.node].busy, 1);
		pthread_mutex_unlock(&nd->mu);
		tc_sim_deliver(sim, ref.node, ref.rec, me, ri);
	} else {
		pthread_mutex_unlock(&nd->mu);
	}
}

/* A send just recorded (no lock held): is its receive posted at the destination? Else queue it there. */
static int tc_sim_match_send(struct tc_sim *sim, int me, uint32_t ri)
{
	const struct tc_sim_rec *r = &sim->nodes[me].recs[ri];
	struct tc_sim_node *dst = &sim->nodes[r->peer];
	int hit = -1;

	pthread_mutex_lock(&dst->mu);
	for (uint32_t k = 0; k < dst->nrecs; k++) {
		struct tc_sim_rec *q = &dst->recs[k];

		if (q->op == TC_XFER_RECV && !q->claimed && (sim->match_port_tag || q->peer == me) &&
		    q->port == r->port && q->tag == r->tag) {
			q->claimed = 1;
			hit = k;
			atomic_fetch_add(&dst->busy, 1);
			atomic_fetch_add(&sim->nodes[me].busy, 1);
			break;
		}
	}
	if (hit < 0) {
		if (tc_grow((void **)&dst->pend, &dst->cap_pend, dst->npend + 1, sizeof(*dst->pend), 16)) {
			pthread_mutex_unlock(&dst->mu);
			return tc_err(-ENOMEM, "transport sim: out of memory queueing a send");
		}
		dst->pend[dst->npend++] = (struct tc_sim_ref){ .node = me, .rec = ri };
	}
	pthread_mutex_unlock(&dst->mu);
	if (hit >= 0)
		tc_sim_deliver(sim, me, ri, r->peer, hit);
	return 0;
}

static int tc_sim_post(struct tc_tp *tp, const struct tc_xfer *x, unsigned int n)
{
	struct tc_sim *sim = to_sim(tp);
	int me = tp->rank;
	struct tc_sim_node *nd = &sim->nodes[me];
	uint32_t nsegs = 0;
	int ret = 0;

	for (unsigned int i = 0; i < n; i++)
		nsegs += x[i].nsegs;
	pthread_mutex_lock(&nd->mu);
	ret = tc_grow((void **)&nd->recs, &nd->cap_recs, nd->nrecs + n, sizeof(*nd->recs), 16) ||
	      tc_grow((void **)&nd->segs, &nd->cap_segs, nd->nsegs + nsegs, sizeof(*nd->segs), 16);
	pthread_mutex_unlock(&nd->mu);
	if (ret)
		return tc_err(-ENOMEM, "transport sim: out of memory posting %u transfers", n);

	for (unsigned int i = 0; i < n; i++) {
		int arrival = -1;
		uint32_t ri;

		ret = tc_sim_check(tp, &x[i], &arrival);
		if (ret)
			return ret;
		pthread_mutex_lock(&nd->mu);
		ri = __tc_sim_record(nd, &x[i], arrival);
		if (x[i].op == TC_XFER_RECV) {
			__tc_sim_match_recv(sim, me, ri);
			continue;
		}
		pthread_mutex_unlock(&nd->mu);
		ret = tc_sim_match_send(sim, me, ri);
		if (ret)
			return ret;
	}
	return 0;
}

static int tc_sim_wait(struct tc_tp *tp, unsigned int n, int timeout_ms, struct tc_wait_err *err)
{
	struct tc_sim *sim = to_sim(tp);
	struct tc_sim_node *nd = &sim->nodes[tp->rank];
	struct timespec dl;
	int ret = 0;

	tc_deadline(&dl, timeout_ms);
	pthread_mutex_lock(&nd->mu);
	if (n > nd->ndone + nd->outstanding) {
		ret = tc_err(-EINVAL, "transport sim: waiting for %u completions with %u posted", n,
			     nd->ndone + nd->outstanding);
		goto out;
	}
	while (nd->ndone < n) {
		int rc = pthread_cond_timedwait(&nd->cond, &nd->mu, &dl);

		if (rc == ETIMEDOUT && nd->ndone < n) {
			for (uint32_t i = 0; i < nd->nrecs; i++)
				if (!nd->recs[i].done) {
					err->port = nd->recs[i].op == TC_XFER_SEND ? nd->recs[i].first : nd->recs[i].port;
					err->peer = nd->recs[i].peer;
					err->tag = nd->recs[i].tag;
					break;
				}
			err->status = -ETIMEDOUT;
			__tc_sim_cancel(sim, tp->rank);
			ret = -ETIMEDOUT;
			goto out;
		}
	}
	nd->ndone -= n;
	/* A failed completion fails the wait. */
	for (uint32_t i = 0; i < nd->nrecs; i++)
		if (nd->recs[i].done && nd->recs[i].status) {
			err->status = nd->recs[i].status;
			err->port = nd->recs[i].op == TC_XFER_SEND ? nd->recs[i].first : nd->recs[i].port;
			err->peer = nd->recs[i].peer;
			err->tag = nd->recs[i].tag;
			ret = nd->recs[i].status;
			__tc_sim_cancel(sim, tp->rank);
			goto out;
		}
	if (!nd->ndone && !nd->outstanding)
		nd->nrecs = nd->nsegs = 0;
out:
	pthread_mutex_unlock(&nd->mu);
	return ret;
}

const struct tc_transport_ops tc_transport_sim = {
	.name = "sim",
	.open = tc_sim_open,
	.close = tc_sim_close,
	.buffer = tc_sim_buffer,
	.post = tc_sim_post,
	.wait = tc_sim_wait,
};
