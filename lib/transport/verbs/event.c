// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Events: rdma_cm events (connection requests, established, disconnect),
 * completions (control messages, eager data, writes with immediate),
 * progress without blocking, and sleeping on both channels.
 */
#include "transport/verbs/verbs.h"

static int tc_vb_rank_of(struct tc_vb *vb, struct rdma_cm_id *id)
{
	struct tc_vb_peer *pe = id->context;

	if (!pe)
		return -1;
	return pe - vb->peers;
}

/* A connection request (its event already acknowledged; h its private data or NULL). */
static void tc_vb_on_request(struct tc_vb *vb, struct rdma_cm_event *ev, const struct tc_vb_hello *h)
{
	struct rdma_conn_param cp;
	int rank, ret;

	if (!h || h->magic != TC_VB_MAGIC || h->seq != vb->seq || h->rank <= vb->rank || h->rank >= vb->size ||
	    vb->peers[h->rank].state != TC_VB_IDLE) {
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		return;
	}
	rank = h->rank;
	ev->id->context = &vb->peers[rank];
	ret = tc_vb_make_qp(vb, rank, ev->id);
	if (ret) {
		if (ev->id->qp)
			rdma_destroy_qp(ev->id);
		vb->peers[rank].id = NULL;
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		tc_vb_peer_fail(vb, rank, ret, "setting up its QP failed: %s", tc_strerror(ret));
		return;
	}
	tc_vb_conn_param(vb, &cp, NULL);
	if (rdma_accept(ev->id, &cp)) {
		tc_vb_peer_fail(vb, rank, -errno, "accepting its connection failed: %s", tc_strerror(-errno));
		return;
	}
	vb->peers[rank].state = TC_VB_ACCEPTING;
}

/* TC_VERBS_TRACE: what the QP to rank came up with (the retransmit timer, the MTU). */
static void tc_vb_trace_qp(struct tc_vb *vb, int rank)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(vb->peers[rank].id->qp, &a, IBV_QP_TIMEOUT | IBV_QP_PATH_MTU | IBV_QP_RETRY_CNT, &ia))
		return;
	fprintf(stderr,
		"libtoruscoll: verbs trace rank %d: QP to rank %d up: local ACK timeout %u (%.3g ms), retry count %u, "
		"path MTU %d B\n",
		vb->rank, rank, a.timeout, a.timeout ? 4.096e-3 * (double)(1ull << a.timeout) : 0.0, a.retry_cnt,
		128 << a.path_mtu);
}

static void tc_vb_on_cm(struct tc_vb *vb, struct rdma_cm_event *ev, const struct tc_vb_hello *hello)
{
	int rank = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ? -1 : tc_vb_rank_of(vb, ev->id);
	struct tc_vb_peer *pe = rank >= 0 ? &vb->peers[rank] : NULL;
	struct rdma_conn_param cp;
	struct tc_vb_hello h;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		tc_vb_on_request(vb, ev, hello);
		break;
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (pe && rdma_resolve_route(ev->id, TC_VB_RESOLVE_MS))
			tc_vb_peer_fail(vb, rank, -errno, "resolving the route to it failed: %s", tc_strerror(-errno));
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (!pe)
			break;
		ret = tc_vb_make_qp(vb, rank, ev->id);
		if (ret) {
			tc_vb_peer_fail(vb, rank, ret, "setting up its QP failed: %s", tc_strerror(ret));
			break;
		}
		tc_vb_conn_param(vb, &cp, &h);
		if (rdma_connect(ev->id, &cp))
			tc_vb_peer_fail(vb, rank, -errno, "rdma_connect failed: %s", tc_strerror(-errno));
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (pe && (pe->state == TC_VB_CONNECTING || pe->state == TC_VB_ACCEPTING)) {
			pe->state = TC_VB_UP;
			if (vb->trace)
				tc_vb_trace_qp(vb, rank);
			tc_vb_flush(vb, rank);
		}
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		if (pe)
			tc_vb_peer_fail(vb, rank, -ECONNREFUSED, "connecting to it failed (%s, status %d): is it alive?",
					rdma_event_str(ev->event), ev->status);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (pe)
			tc_vb_peer_down(vb, rank, -ECONNRESET, "it disconnected (exited or died)");
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		for (int r = 0; r < vb->size; r++)
			if (r != vb->rank)
				tc_vb_peer_fail(vb, r, -ENODEV, "RDMA device %s was removed", vb->dev_name);
		break;
	default:
		break;
	}
}

static int tc_vb_cm_events(struct tc_vb *vb)
{
	struct rdma_cm_event *ev;
	int n = 0;

	/* Acknowledge first (destroying an id waits for its events' acks), keeping a copy. */
	while (!rdma_get_cm_event(vb->ch, &ev)) {
		struct rdma_cm_event copy = *ev;
		struct tc_vb_hello hello;
		int have = 0;

		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && ev->param.conn.private_data &&
		    ev->param.conn.private_data_len >= sizeof(hello)) {
			memcpy(&hello, ev->param.conn.private_data, sizeof(hello));
			have = 1;
		}
		rdma_ack_cm_event(ev);
		tc_vb_on_cm(vb, &copy, have ? &hello : NULL);
		n++;
	}
	return n;
}

/*
 * The peer destroyed its communicator (its goodbye came after everything it
 * sent us): what we still expect from it will not come. Our writes and
 * eager sends already posted are still acknowledged (it keeps the QP until
 * our goodbye, see tc_vb_linger); everything else with it fails now.
 */
static void tc_vb_peer_closed(struct tc_vb *vb, int rank)
{
	struct tc_vb_peer *pe = &vb->peers[rank];

	pe->bye_rcvd = 1;
	for (uint32_t i = 0; i < vb->nrecs; i++) {
		struct tc_vb_rec *r = &vb->recs[i];

		if (r->peer != rank || r->done || (r->op == TC_XFER_SEND && r->matched && !r->queued))
			continue;
		r->done = 1;
		r->status = -ECONNRESET;
		r->closed = 1;
		vb->ndone++;
	}
}

/* An eager message's bytes into its receive (lengths checked). */
void tc_vb_eager_deliver(struct tc_vb *vb, uint32_t rec, const char *slot, uint64_t len)
{
	struct tc_vb_rec *r = &vb->recs[rec];

	if (len != r->len)
		r->status = -EMSGSIZE;
	else
		memcpy(vb->buf + r->off, slot + sizeof(struct tc_vb_msg), len);
	r->done = 1;
	vb->ndone++;
}

/* A message in receive slot idx; returns 1 if the slot stays held (an
 * eager message whose receive is not posted yet). */
static int tc_vb_on_ctrl(struct tc_vb *vb, int rank, uint32_t idx, uint32_t byte_len)
{
	struct tc_vb_peer *pe = &vb->peers[rank];
	const char *slot = tc_vb_slot(vb, idx);
	struct tc_vb_msg mm, *m = &mm;
	struct tc_vb_rtr t;
	uint32_t i;

	memcpy(m, slot, sizeof(*m));
	pe->credits += m->credits;
	if (m->type == TC_VB_MSG_EAGER) {
		if (byte_len != sizeof(*m) + m->len || m->len > vb->eager) {
			tc_vb_peer_down(vb, rank, -EPROTO, "it sent a malformed eager message");
			return 0;
		}
		for (i = 0; i < vb->nrecs; i++) {
			struct tc_vb_rec *r = &vb->recs[i];

			if (r->op == TC_XFER_RECV && !r->done && r->peer == rank && r->tag == m->tag)
				break;
		}
		if (i < vb->nrecs) {
			tc_vb_eager_deliver(vb, i, slot, m->len);
			return 0;
		}
		if (tc_grow((void **)&pe->unexp, &pe->cap_unexp, pe->nunexp + 1, sizeof(*pe->unexp), 16)) {
			tc_vb_peer_down(vb, rank, -ENOMEM, "out of memory keeping its early message");
			return 0;
		}
		pe->unexp[pe->nunexp++] = (struct tc_vb_unexp){ .tag = m->tag, .len = m->len, .slot = idx };
		return 1;
	}
	if (m->type == TC_VB_MSG_BYE) {
		tc_vb_peer_closed(vb, rank);
		return 0;
	}
	if (m->type != TC_VB_MSG_RTR)
		return 0;
	t = (struct tc_vb_rtr){ .tag = m->tag, .addr = m->addr, .len = m->len, .rkey = m->rkey, .rid = m->rid };
	for (i = 0; i < vb->nrecs; i++) {
		struct tc_vb_rec *r = &vb->recs[i];

		if (r->op == TC_XFER_SEND && !r->matched && !r->done && r->peer == rank && r->tag == t.tag)
			break;
	}
	if (i < vb->nrecs) {
		if (tc_vb_match(vb, i, &t))
			tc_vb_peer_fail(vb, rank, -ENOMEM, "out of memory queueing a write");
		return 0;
	}
	if (tc_grow((void **)&pe->rtr, &pe->cap_rtr, pe->nrtr + 1, sizeof(*pe->rtr), 16)) {
		tc_vb_peer_fail(vb, rank, -ENOMEM, "out of memory keeping its ready-to-receive");
		return 0;
	}
	pe->rtr[pe->nrtr++] = t;
	return 0;
}

/* A receive slot back to the SRQ; a failure there fails every peer: the
 * windows no longer fit what is posted. */
static void tc_vb_repost(struct tc_vb *vb, uint32_t idx)
{
	int ret = tc_vb_post_recv_slot(vb, idx);

	if (ret)
		for (int r = 0; r < vb->size; r++)
			if (r != vb->rank && vb->peers[r].id)
				tc_vb_peer_down(vb, r, ret, "reposting a shared receive failed");
}

static void tc_vb_on_wc(struct tc_vb *vb, const struct ibv_wc *wc)
{
	unsigned int kind = wc->wr_id >> 56;
	int rank = kind == TC_VB_WR_RECV ? tc_vb_qp_rank(vb, wc->qp_num) : (int)((wc->wr_id >> 32) & 0xffffff);
	uint32_t idx = (uint32_t)wc->wr_id;
	struct tc_vb_peer *pe;

	if (kind == TC_VB_WR_RECV)
		vb->srq_posted--;
	if (rank < 0 || rank >= vb->size) {
		if (kind == TC_VB_WR_RECV && wc->status == IBV_WC_SUCCESS)
			tc_vb_repost(vb, idx); /* from no QP of ours: cannot happen; keep the slot */
		return;
	}
	pe = &vb->peers[rank];
	if (kind != TC_VB_WR_RECV)
		pe->sq_used--;
	if (kind == TC_VB_WR_WRITE)
		vb->writes_out--; /* done or flushed: another may start */
	if (wc->status != IBV_WC_SUCCESS) {
		char why[96];

		if (wc->status == IBV_WC_WR_FLUSH_ERR)
			snprintf(why, sizeof(why), "its connection went to the error state");
		else
			snprintf(why, sizeof(why), "a %s completed with %s", kind == TC_VB_WR_RECV ? "receive" : "send",
				 ibv_wc_status_str(wc->status));
		tc_vb_peer_down(vb, rank, wc->status == IBV_WC_WR_FLUSH_ERR ? -ECONNRESET :
					  wc->status == IBV_WC_RNR_RETRY_EXC_ERR ? -ENOBUFS : -EIO, why);
		if (kind == TC_VB_WR_RECV)
			tc_vb_repost(vb, idx);
		tc_vb_drained(vb, rank);
		return;
	}
	switch (kind) {
	case TC_VB_WR_CTRL:
		break;
	case TC_VB_WR_DATA:
	case TC_VB_WR_WRITE:
		if (idx < vb->nrecs && !vb->recs[idx].done) {
			vb->recs[idx].done = 1;
			vb->ndone++;
		}
		break;
	case TC_VB_WR_RECV: {
		struct tc_vb_msg m;

		if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
			uint32_t imm = ntohl(wc->imm_data);
			uint32_t rid = imm & TC_VB_IMM_RID_MASK;

			pe->credits += imm >> TC_VB_IMM_CREDIT_SHIFT;
			if (rid < vb->nrecs && vb->recs[rid].op == TC_XFER_RECV && vb->recs[rid].peer == rank &&
			    !vb->recs[rid].done) {
				vb->recs[rid].done = 1;
				vb->recs[rid].status = imm & TC_VB_IMM_ERR ? -EMSGSIZE : 0;
				vb->ndone++;
			}
		} else {
			memcpy(&m, tc_vb_slot(vb, idx), sizeof(m));
			if (tc_vb_on_ctrl(vb, rank, idx, wc->byte_len))
				break; /* held until its receive is posted */
		}
		/* the slot is the pool's, not the peer's: back to the SRQ even if the peer failed */
		tc_vb_repost(vb, idx);
		if (pe->state != TC_VB_FAILED && pe->state != TC_VB_DRAINING)
			pe->owed++; /* every message spends a credit */
		break;
	}
	default:
		break;
	}
	tc_vb_drained(vb, rank);
}

/*
 * Reap what is there (no blocking); returns how many events were handled.
 * The CQ and the credit words are read from memory the device shares with
 * us (a credit write makes no completion: a sender waiting for credits
 * keeps polling, see tc_vb_wait), the rdma_cm channel
 * only by a system call: that one is read when something may be there (a
 * connection being made, poll() saw it readable) and otherwise every
 * TC_VB_CM_EVERY calls, so a busy poll costs no system call while a
 * disconnect or a peer's connection request is still seen within
 * microseconds.
 */
int tc_vb_progress(struct tc_vb *vb)
{
	struct ibv_wc wc[32];
	int n, total = 0;

	vb->n_progress++;
	if (vb->cm_check || ++vb->cm_tick >= TC_VB_CM_EVERY) {
		vb->cm_check = 0;
		vb->cm_tick = 0;
		vb->n_cm_reads++;
		total = tc_vb_cm_events(vb);
	}
	while ((n = ibv_poll_cq(vb->cq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++)
			tc_vb_on_wc(vb, &wc[i]);
		total += n;
	}
	vb->starved = 0;
	for (int r = 0; r < vb->size; r++) {
		struct tc_vb_peer *pe = &vb->peers[r];
		uint32_t had = pe->credits;

		if (pe->state == TC_VB_CONNECTING || pe->state == TC_VB_ACCEPTING) {
			vb->cm_check = 1;
		} else if (pe->state == TC_VB_UP && (pe->qhead != pe->qtail || tc_vb_owes(vb, pe))) {
			tc_vb_flush(vb, r);
			total += pe->credits > had; /* a credit write came: progress */
			vb->starved |= pe->qhead != pe->qtail && !pe->credits;
		}
	}
	return total;
}

/* Sleep until the CQ or the rdma_cm channel has something, at most ms. */
void tc_vb_block(struct tc_vb *vb, int ms)
{
	struct pollfd pfd[2] = { { .fd = vb->cc->fd, .events = POLLIN }, { .fd = vb->ch->fd, .events = POLLIN } };

	if (!vb->cq_armed) {
		if (ibv_req_notify_cq(vb->cq, 0))
			return;
		vb->cq_armed = 1;
		if (tc_vb_progress(vb)) /* raced with a completion: no sleep */
			return;
	}
	vb->n_sleeps++;
	if (poll(pfd, 2, ms) <= 0)
		return;
	if (pfd[1].revents & POLLIN)
		vb->cm_check = 1;
	if (pfd[0].revents & POLLIN) {
		struct ibv_cq *cq;
		void *ctx;

		if (!ibv_get_cq_event(vb->cc, &cq, &ctx)) {
			vb->cq_events++;
			vb->cq_armed = 0;
			if (vb->cq_events >= 64) {
				ibv_ack_cq_events(vb->cq, vb->cq_events);
				vb->cq_events = 0;
			}
		}
	}
}
