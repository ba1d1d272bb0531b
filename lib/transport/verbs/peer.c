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
 * The receives are the SRQ's and are not flushed with the QP: a zero-byte
 * write posted now completes (flushed) after whatever the peer delivered
 * before, so the drain waits for it too.
 */
void tc_vb_peer_down(struct tc_vb *vb, int rank, int err, const char *why)
{
	struct tc_vb_peer *pe = &vb->peers[rank];
	struct ibv_send_wr wr = {
		.wr_id = (uint64_t)TC_VB_WR_CTRL << 56 | (uint64_t)rank << 32,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (pe->state == TC_VB_FAILED || pe->state == TC_VB_DRAINING)
		return;
	if (!pe->id || !pe->id->qp) {
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
	if (!ibv_post_send(pe->id->qp, &wr, &bad))
		pe->sq_used++;
	else if (!pe->sq_used)
		tc_vb_drained(vb, rank);
}

void tc_vb_drained(struct tc_vb *vb, int rank)
{
	struct tc_vb_peer *pe = &vb->peers[rank];
	char why[sizeof(pe->why)];

	if (pe->state != TC_VB_DRAINING || pe->sq_used)
		return;
	memcpy(why, pe->why, sizeof(why));
	tc_vb_peer_fail(vb, rank, pe->err, "%s", why);
}

/* Post receive slot @slot to the shared receive queue. */
int tc_vb_post_recv_slot(struct tc_vb *vb, uint32_t slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)tc_vb_slot(vb, slot), .length = vb->slot, .lkey = vb->slots_mr->lkey };
	struct ibv_recv_wr wr = {
		.wr_id = (uint64_t)TC_VB_WR_RECV << 56 | slot,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;
	int ret = -ibv_post_srq_recv(vb->srq, &wr, &bad);

	if (!ret)
		vb->srq_posted++;
	return ret;
}

static uint32_t tc_vb_qpn_hash(uint32_t qpn, uint32_t cap)
{
	return (qpn * 2654435761u) & (cap - 1);
}

/* The rank whose QP has number @qpn (a receive completion names only that), or -1. */
int tc_vb_qp_rank(const struct tc_vb *vb, uint32_t qpn)
{
	for (uint32_t h = tc_vb_qpn_hash(qpn, vb->qpn_cap), k = 0; k < vb->qpn_cap; k++, h = (h + 1) & (vb->qpn_cap - 1)) {
		if (!vb->qpn_map[h].rank1)
			return -1;
		if (vb->qpn_map[h].qpn == qpn)
			return (int)vb->qpn_map[h].rank1 - 1;
	}
	return -1;
}

/* Remember which rank @qpn belongs to (at most one QP per peer: never full). */
static void tc_vb_qpn_add(struct tc_vb *vb, uint32_t qpn, int rank)
{
	uint32_t h = tc_vb_qpn_hash(qpn, vb->qpn_cap);

	while (vb->qpn_map[h].rank1 && vb->qpn_map[h].qpn != qpn)
		h = (h + 1) & (vb->qpn_cap - 1);
	vb->qpn_map[h].qpn = qpn;
	vb->qpn_map[h].rank1 = rank + 1;
}

int tc_vb_make_qp(struct tc_vb *vb, int rank, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = vb->cq,
		.recv_cq = vb->cq,
		.srq = vb->srq,
		.cap = { .max_send_wr = vb->sq, .max_send_sge = 2,
			 .max_inline_data = vb->no_inline ? sizeof(struct tc_vb_msg) : TC_VB_INLINE },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct tc_vb_peer *pe = &vb->peers[rank];

	/* before the QP reaches RTS, where rdma_cm applies it */
	if (vb->ack_timeout &&
	    rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &vb->ack_timeout, sizeof(vb->ack_timeout)))
		return -errno;
	/* a device that takes less inline gets asked for a control message's worth */
	if (rdma_create_qp(id, vb->pd, &qa)) {
		qa.cap.max_inline_data = sizeof(struct tc_vb_msg);
		if (rdma_create_qp(id, vb->pd, &qa))
			return -errno;
	}
	pe->id = id;
	pe->inline_max = vb->no_inline ? 0 : qa.cap.max_inline_data;
	tc_vb_qpn_add(vb, id->qp->qp_num, rank);
	pe->credits = vb->window; /* the SRQ holds every peer's window already */
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
	cp->rnr_retry_count = 0; /* the windows fit the SRQ: an RNR is a bug, so fail loudly */
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

	if (vb->trace)
		r->t_issue = tc_vb_now_ns();
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
		 * Header from the send ring (free: at most sq - 1 sends
		 * are outstanding, in order). A message the QP takes inline is
		 * copied into the work request by the post itself: the send is
		 * done then (its completion only frees the send-queue slot, so
		 * it names no record), and the caller's wait does not include
		 * the round trip of its acknowledgement.
		 */
		struct tc_vb_msg *h = (struct tc_vb_msg *)(vb->slots + (size_t)vb->nslots * vb->slot +
							    ((size_t)rank * vb->sq + pe->tx_next % vb->sq) * TC_VB_TXH);
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
			.wr_id = (uint64_t)TC_VB_WR_WRITE << 56 | (uint64_t)rank << 32 | op->rec,
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
		if (ret) {
			pe->owed += c;
		} else {
			pe->sq_used++;
			if (++vb->writes_out > vb->writes_hwm)
				vb->writes_hwm = vb->writes_out;
		}
	}
	if (ret)
		tc_vb_peer_fail(vb, rank, ret, "posting to its QP failed: %s", tc_strerror(ret));
	else
		pe->credits--;
	return ret;
}

/* Credits returned by @rank's writes into our credit word for it since last read. */
void tc_vb_read_credits(struct tc_vb *vb, int rank)
{
	struct tc_vb_peer *pe = &vb->peers[rank];
	uint64_t v = __atomic_load_n(&vb->credit_word[rank], __ATOMIC_ACQUIRE);

	if (v != pe->seen) {
		pe->credits += (uint32_t)(v - pe->seen);
		pe->seen = v;
	}
}

/* Half the window owed (any owed credit while closing): report them. */
int tc_vb_owes(const struct tc_vb *vb, const struct tc_vb_peer *pe)
{
	uint32_t half = vb->window / 2 ? vb->window / 2 : 1;

	return pe->owed >= (vb->closing ? 1 : half);
}

/* Send what the queue holds as far as credits and send slots allow; report
 * owed credits when half the window is owed and nothing else carried them:
 * an RDMA write of the running total into the peer's credit word for us
 * (inline, so nothing of ours has to stay registered for it) consumes no
 * receive there. */
void tc_vb_flush(struct tc_vb *vb, int rank)
{
	struct tc_vb_peer *pe = &vb->peers[rank];

	if (pe->state != TC_VB_UP)
		return;
	tc_vb_read_credits(vb, rank);
	while (pe->qhead != pe->qtail && pe->credits && pe->sq_used < vb->sq && !pe->bye_rcvd) {
		struct tc_vb_op op = pe->q[pe->qhead % pe->cap_q];

		/* the rank's writes in flight are at the limit: this peer's
		 * queue waits (in order) for one of them to complete */
		if (op.kind == TC_VB_OP_WRITE && vb->writes_max && vb->writes_out >= vb->writes_max) {
			if (!vb->recs[op.rec].capped) {
				vb->recs[op.rec].capped = 1;
				vb->n_capped++;
			}
			break;
		}
		pe->qhead++;
		vb->recs[op.rec].queued = 0;
		if (tc_vb_issue(vb, rank, &op))
			return;
	}
	/* a peer whose goodbye came sends nothing more, and may be gone at any
	 * moment: a write to it would wait for an acknowledgement that never comes */
	if (tc_vb_owes(vb, pe) && pe->sq_used < vb->sq && !pe->bye_rcvd) {
		uint64_t total = pe->returned + pe->owed;
		struct ibv_sge sge = { .addr = (uintptr_t)&total, .length = sizeof(total) };
		struct ibv_send_wr wr = {
			.wr_id = (uint64_t)TC_VB_WR_CTRL << 56 | (uint64_t)rank << 32,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = pe->card.credit_addr + (uint64_t)vb->rank * sizeof(uint64_t),
				     .rkey = pe->card.credit_rkey },
		}, *bad;
		int ret = -ibv_post_send(pe->id->qp, &wr, &bad);

		if (ret) {
			tc_vb_peer_fail(vb, rank, ret, "posting a credit write failed: %s", tc_strerror(ret));
			return;
		}
		pe->sq_used++;
		pe->returned = total;
		pe->owed = 0;
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
	if (vb->trace)
		r->t_match = tc_vb_now_ns();
	r->raddr = t->addr;
	r->rkey = t->rkey;
	r->rid = t->rid;
	if (t->len != r->len)
		r->status = -EMSGSIZE; /* written as an error immediate; fails both sides */
	return tc_vb_enqueue(vb, r->peer, TC_VB_OP_WRITE, rec);
}
