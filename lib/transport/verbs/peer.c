// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Peers: per-peer connection state, credits, the queue of operations
 * waiting for a credit or a send slot, posting them, and a peer's failure.
 */
#include "transport/verbs/verbs.h"

void tc_vb_peer_fail(struct tc_vb *vb, int rank, int err, const char *fmt, ...)
{
	struct tc_vb_peer *pe = &vb->peers[rank];
	va_list ap;

	if (pe->state == TC_VB_FAILED)
		return;
	pe->state = TC_VB_FAILED;
	pe->err = err;
	va_start(ap, fmt);
	vsnprintf(pe->why, sizeof(pe->why), fmt, ap);
	va_end(ap);
	/* every unfinished transfer with this peer fails now */
	for (uint32_t i = 0; i < vb->nrecs; i++) {
		struct tc_vb_rec *r = &vb->recs[i];

		if (r->peer == rank && !r->done) {
			r->done = 1;
			r->status = err;
			vb->ndone++;
		}
	}
}

/*
 * The connection to the peer broke (it disconnected, or a completion
 * failed). Data it delivered before may still sit in the CQ unseen, and a
 * write of ours may have been acknowledged just before: so move the QP to
 * the error state, let every posted work request complete (in order, after
 * those), and fail the peer's remaining transfers only then (tc_vb_drained).
 */
void tc_vb_peer_down(struct tc_vb *vb, int rank, int err, const char *why)
{
	struct tc_vb_peer *pe = &vb->peers[rank];

	if (pe->state == TC_VB_FAILED || pe->state == TC_VB_DRAINING)
		return;
	if (!pe->id || !pe->id->qp || (!pe->sq_used && !pe->rq_posted)) {
		tc_vb_peer_fail(vb, rank, err, "%s", why);
		return;
	}
	pe->state = TC_VB_DRAINING;
	pe->err = err;
	snprintf(pe->why, sizeof(pe->why), "%s", why);
	if (rdma_disconnect(pe->id)) {
		struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

		ibv_modify_qp(pe->id->qp, &qa, IBV_QP_STATE);
	}
}

void tc_vb_drained(struct tc_vb *vb, int rank)
{
	struct tc_vb_peer *pe = &vb->peers[rank];
	char why[sizeof(pe->why)];

	if (pe->state != TC_VB_DRAINING || pe->sq_used || pe->rq_posted)
		return;
	memcpy(why, pe->why, sizeof(why));
	tc_vb_peer_fail(vb, rank, pe->err, "%s", why);
}

int tc_vb_post_recv_slot(struct tc_vb *vb, int rank, uint32_t slot)
{
	struct tc_vb_peer *pe = &vb->peers[rank];
	char *addr = vb->slots + ((size_t)rank * TC_VB_RQ + slot) * vb->slot;
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = vb->slot, .lkey = vb->slots_mr->lkey };
	struct ibv_recv_wr wr = {
		.wr_id = (uint64_t)TC_VB_WR_RECV << 56 | (uint64_t)rank << 32 | slot,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;
	int ret = -ibv_post_recv(pe->id->qp, &wr, &bad);

	if (!ret)
		pe->rq_posted++;
	return ret;
}

int tc_vb_make_qp(struct tc_vb *vb, int rank, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = vb->cq,
		.recv_cq = vb->cq,
		.cap = { .max_send_wr = TC_VB_SQ, .max_recv_wr = TC_VB_RQ, .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = vb->no_inline ? sizeof(struct tc_vb_msg) : TC_VB_INLINE },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct tc_vb_peer *pe = &vb->peers[rank];
	int ret;

	/* a device that takes less inline gets asked for a control message's worth */
	if (rdma_create_qp(id, vb->pd, &qa)) {
		qa.cap.max_inline_data = sizeof(struct tc_vb_msg);
		if (rdma_create_qp(id, vb->pd, &qa))
			return -errno;
	}
	pe->id = id;
	pe->inline_max = vb->no_inline ? 0 : qa.cap.max_inline_data;
	for (uint32_t s = 0; s < TC_VB_RQ; s++) {
		ret = tc_vb_post_recv_slot(vb, rank, s);
		if (ret)
			return ret;
	}
	pe->credits = TC_VB_CREDITS;
	pe->owed = 0;
	return 0;
}

void tc_vb_conn_param(struct tc_vb *vb, struct rdma_conn_param *cp, struct tc_vb_hello *h)
{
	memset(cp, 0, sizeof(*cp));
	if (h) {
		*h = (struct tc_vb_hello){ .magic = TC_VB_MAGIC, .seq = vb->seq, .rank = vb->rank };
		cp->private_data = h;
		cp->private_data_len = sizeof(*h);
	}
	cp->responder_resources = 0; /* no RDMA reads */
	cp->initiator_depth = 0;
	cp->retry_count = 7;
	cp->rnr_retry_count = 0; /* receives are always posted first: an RNR is a bug, so fail loudly */
}

/* The higher rank of a pair starts the connection. */
int tc_vb_connect(struct tc_vb *vb, int rank)
{
	struct tc_vb_peer *pe = &vb->peers[rank];
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
	struct rdma_cm_id *id;

	if (pe->state != TC_VB_IDLE || rank > vb->rank)
		return 0;
	if (rdma_create_id(vb->ch, &id, pe, RDMA_PS_TCP))
		return tc_err(-errno, "transport verbs: rdma_create_id: %s", tc_strerror(-errno));
	src.sin_addr.s_addr = vb->peers[vb->rank].card.ipv4;
	dst.sin_addr.s_addr = pe->card.ipv4;
	dst.sin_port = pe->card.port;
	if (rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, TC_VB_RESOLVE_MS)) {
		int ret = -errno;

		rdma_destroy_id(id);
		tc_vb_peer_fail(vb, rank, ret, "resolving its address failed: %s", tc_strerror(ret));
		return 0;
	}
	pe->id = id;
	pe->state = TC_VB_CONNECTING;
	return 0;
}

int tc_vb_send_ctrl(struct tc_vb *vb, int rank, const struct tc_vb_msg *m)
{
	struct tc_vb_peer *pe = &vb->peers[rank];
	struct ibv_sge sge = { .addr = (uintptr_t)m, .length = sizeof(*m) };
	struct ibv_send_wr wr = {
		.wr_id = (uint64_t)TC_VB_WR_CTRL << 56 | (uint64_t)rank << 32,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED,
	}, *bad;
	int ret = -ibv_post_send(pe->id->qp, &wr, &bad);

	if (!ret)
		pe->sq_used++;
	return ret;
}

uint8_t tc_vb_take_owed(struct tc_vb_peer *pe)
{
	uint32_t c = pe->owed > 255 ? 255 : pe->owed;

	pe->owed -= c;
	return c;
}

/* Post one queued operation (a credit and a send-queue slot are available). */
static int tc_vb_issue(struct tc_vb *vb, int rank, const struct tc_vb_op *op)
{
	struct tc_vb_peer *pe = &vb->peers[rank];
	struct tc_vb_rec *r = &vb->recs[op->rec];
	int ret;

	if (op->kind == TC_VB_OP_RTR) {
		struct tc_vb_msg m = {
			.type = TC_VB_MSG_RTR,
			.rid = op->rec,
			.tag = r->tag,
			.addr = (uintptr_t)(vb->buf + r->off),
			.len = r->len,
			.rkey = vb->mr->rkey,
		};

		m.credits = tc_vb_take_owed(pe);
		ret = tc_vb_send_ctrl(vb, rank, &m);
		if (ret)
			pe->owed += m.credits;
	} else if (op->kind == TC_VB_OP_EAGER) {
		/*
		 * Header from the send ring (free: at most TC_VB_SQ - 1 sends
		 * are outstanding, in order). A message the QP takes inline is
		 * copied into the work request by the post itself: the send is
		 * done then (its completion only frees the send-queue slot, so
		 * it names no record), and the caller's wait does not include
		 * the round trip of its acknowledgement.
		 */
		struct tc_vb_msg *h = (struct tc_vb_msg *)(vb->slots + (size_t)vb->size * TC_VB_RQ * vb->slot +
							    ((size_t)rank * TC_VB_SQ + pe->tx_next % TC_VB_SQ) * TC_VB_TXH);
		struct ibv_sge sge[2] = {
			{ .addr = (uintptr_t)h, .length = sizeof(*h), .lkey = vb->slots_mr->lkey },
			{ .addr = (uintptr_t)(vb->buf + r->off), .length = r->len, .lkey = vb->mr->lkey },
		};
		int inl = sizeof(*h) + r->len <= pe->inline_max;
		struct ibv_send_wr wr = {
			.wr_id = inl ? (uint64_t)TC_VB_WR_CTRL << 56 | (uint64_t)rank << 32 :
				       (uint64_t)TC_VB_WR_DATA << 56 | (uint64_t)rank << 32 | op->rec,
			.sg_list = sge,
			.num_sge = 2,
			.opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0),
		}, *bad;

		*h = (struct tc_vb_msg){ .type = TC_VB_MSG_EAGER, .tag = r->tag, .len = r->len };
		h->credits = tc_vb_take_owed(pe);
		ret = -ibv_post_send(pe->id->qp, &wr, &bad);
		if (ret) {
			pe->owed += h->credits;
		} else {
			pe->sq_used++;
			pe->tx_next++;
			if (inl) {
				vb->n_inline++;
				r->done = 1;
				vb->ndone++;
			}
		}
	} else {
		struct ibv_sge sge = { .addr = (uintptr_t)(vb->buf + r->off), .length = r->len, .lkey = vb->mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = (uint64_t)TC_VB_WR_DATA << 56 | (uint64_t)rank << 32 | op->rec,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = r->raddr, .rkey = r->rkey },
		}, *bad;
		uint8_t c = tc_vb_take_owed(pe);

		if (r->status) { /* the lengths differ: tell the receiver, move no bytes */
			sge.length = 0;
			wr.num_sge = 0;
		}
		wr.imm_data = htonl((r->rid & TC_VB_IMM_RID_MASK) | (r->status ? TC_VB_IMM_ERR : 0) |
				    (uint32_t)c << TC_VB_IMM_CREDIT_SHIFT);
		ret = -ibv_post_send(pe->id->qp, &wr, &bad);
		if (ret)
			pe->owed += c;
		else
			pe->sq_used++;
	}
	if (ret)
		tc_vb_peer_fail(vb, rank, ret, "posting to its QP failed: %s", tc_strerror(ret));
	else
		pe->credits--;
	return ret;
}

/* Send what the queue holds as far as credits and send slots allow; report
 * owed credits when half the window is owed and nothing else carries them.
 * A credit message needs no credit, and one is sent only after the peer
 * spent half a window, which it cannot do again before it has seen this
 * one: at most two are ever unseen at the peer (TC_VB_EXTRA). */
void tc_vb_flush(struct tc_vb *vb, int rank)
{
	struct tc_vb_peer *pe = &vb->peers[rank];

	if (pe->state != TC_VB_UP)
		return;
	while (pe->qhead != pe->qtail && pe->credits && pe->sq_used < TC_VB_SQ && !pe->bye_rcvd) {
		struct tc_vb_op op = pe->q[pe->qhead % pe->cap_q];

		pe->qhead++;
		vb->recs[op.rec].queued = 0;
		if (tc_vb_issue(vb, rank, &op))
			return;
	}
	if (pe->owed >= TC_VB_CREDITS / 2 && pe->sq_used < TC_VB_SQ) {
		struct tc_vb_msg m = { .type = TC_VB_MSG_CREDIT };
		int ret;

		m.credits = tc_vb_take_owed(pe);
		ret = tc_vb_send_ctrl(vb, rank, &m);
		if (ret) {
			pe->owed += m.credits;
			tc_vb_peer_fail(vb, rank, ret, "posting a credit message failed: %s", tc_strerror(ret));
		}
	}
}

int tc_vb_enqueue(struct tc_vb *vb, int rank, uint8_t kind, uint32_t rec)
{
	struct tc_vb_peer *pe = &vb->peers[rank];
	uint32_t len = pe->qtail - pe->qhead;

	if (len + 1 > pe->cap_q) {
		uint32_t ncap = pe->cap_q ? pe->cap_q * 2 : 32;
		struct tc_vb_op *q = malloc(ncap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		for (uint32_t i = 0; i < len; i++)
			q[i] = pe->q[(pe->qhead + i) % pe->cap_q];
		free(pe->q);
		pe->q = q;
		pe->cap_q = ncap;
		pe->qhead = 0;
		pe->qtail = len;
	}
	pe->q[pe->qtail++ % pe->cap_q] = (struct tc_vb_op){ .kind = kind, .rec = rec };
	vb->recs[rec].queued = 1;
	return 0;
}

/* A send meets the RTR its receiver sent: queue the write. */
int tc_vb_match(struct tc_vb *vb, uint32_t rec, const struct tc_vb_rtr *t)
{
	struct tc_vb_rec *r = &vb->recs[rec];

	r->matched = 1;
	r->raddr = t->addr;
	r->rkey = t->rkey;
	r->rid = t->rid;
	if (t->len != r->len)
		r->status = -EMSGSIZE; /* written as an error immediate; fails both sides */
	return tc_vb_enqueue(vb, r->peer, TC_VB_OP_WRITE, rec);
}
