// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The verbs transport: one rank of a job on an RDMA device (InfiniBand,
 * RoCE, soft-RoCE), reliable-connected QPs made with librdmacm.
 *
 * Bootstrap. Rank, job size and every rank's connection card (IPv4 address
 * and port of this communicator's rdma_cm listener, host name, whether its
 * device came up) come from the launcher through PMIx (Put, Commit, Fence
 * with PMIX_COLLECT_DATA, Get): mpirun and srun --mpi=pmix start a job with
 * nothing else to set up. A runtime that has its own exchange passes
 * tc_comm_attr.oob_allgather instead. A rank whose device failed still takes
 * part in the exchange, so every rank fails tc_comm_create with its reason
 * instead of waiting in the fence. The ranks form a logical torus (TC_DIMS or
 * tc_comm_attr.dims, else a near-square factorisation of the job size); a
 * message that the schedules route over several torus hops goes straight to
 * its destination here.
 *
 * Connections: one RC QP per peer that a schedule names, made on first use
 * (in post). The higher rank of a pair connects, the lower one accepts: the
 * two never both connect, and neither waits for the other to call anything,
 * because every rank accepts connection requests whenever it makes progress
 * (post and wait) whether or not it has named that peer yet. The listener
 * exists before the exchange, so a connect never finds it missing. Both
 * sides post their receives before the connection is established. Destroy
 * says goodbye to each connected peer and keeps the QPs until the peer's
 * goodbye (at most TC_VB_LINGER_MS): a peer that finished its collective
 * later may still wait for the acknowledgement of its last message to us.
 *
 * Data, two protocols chosen by the message's length (both sides know it:
 * a receive names the same length as its send):
 *  - eager, up to TC_VERBS_EAGER bytes (tc_vb_eager_env: by default 8152,
 *    an 8 KiB receive slot after the 40-byte header, down to 984 in 1 KiB
 *    slots as the job grows): the sender SENDs header
 *    (tag, length) and data, gathered straight from its registered buffer,
 *    into one of the receive slots the peer keeps posted for it; the
 *    receiver copies the data to where its receive points. One that arrives
 *    before its receive is posted keeps its slot until then (its credit is
 *    returned only then, so the sender cannot overrun the slots).
 *  - rendezvous above that: the receive posts a ready-to-receive message
 *    (RTR: tag, address, length, rkey, record index) to its source; the
 *    matching send (same source, same tag) RDMA-WRITEs the bytes straight
 *    into the receiver's buffer WITH_IMM, the immediate carrying the
 *    receiver's record index, so the receive completes on it. No copy, and
 *    no byte lands where nobody asked for it.
 * Measured in a TCG guest, 16 ranks on rxe0, 10 calls each, two runs each
 * way: rendezvous alone (TC_VERBS_EAGER=0) took 166-167 ms for a 64-byte
 * direct alltoall and 151-253 ms for at2; eager 71-103 ms and 79-135 ms: the
 * RTR's extra one-way trip dominates small messages, so they go eager.
 * How far: the same guest, 256 B-4 KiB, five rounds each, two runs each
 * way: with the limit at 984 the direct alltoall took 30.1 and 43.6 ms at
 * 1 KiB and 35.6 and 40.9 at 4 KiB (its 15 messages of a step all
 * rendezvous), with 8000 23.6 and 19.3, 21.3 and 19.0; at2-1p at 256 B
 * (its messages of 8 blocks, 2 KiB) 18.8 and 20.9 against 15.6 and 11.8.
 * The price is a copy per byte on arrival and slot memory: 68 slots per
 * peer, so the default limit shrinks with the job (16 MiB of slots a rank).
 * The executor packs multi-segment messages (max_segs = 1), so a message is
 * one contiguous span of the buffer either way.
 *
 * Flow control: RTRs, eager messages and WRITE_WITH_IMMs all consume a
 * receive at the peer, so each side holds credits: TC_VB_CREDITS receives
 * the peer posted for it and has not reported consumed. Every RTR, eager
 * send and data write spends one; the receiver reposts a receive as soon as
 * it is done with it and returns the credits piggybacked on its next RTR or
 * eager header (a field) or write (the immediate's top byte), or in an
 * explicit credit message once half the window is owed. Credit messages
 * spend no credit: TC_VB_EXTRA receives more than the window are posted for
 * them (at most two can be outstanding unseen, see tc_vb_flush). Hence no
 * send ever finds its receive missing: the QPs are set to rnr_retry 0, so a
 * receiver-not-ready would fail the transfer loudly instead of stalling
 * 0.66 s per retry (rxe's counters confirm none occur). Send queue slots are
 * counted too; what has no credit or slot waits in a per-peer queue, sent in
 * order as completions come back.
 *
 * Completion: wait polls the CQ for a bounded time, then arms the completion
 * channel and sleeps in poll() on it and the rdma_cm event channel (so a
 * disconnect or a connection request is seen while blocked). A rejected
 * connection fails every transfer with that peer at once; a failed
 * completion or the peer's disconnect moves its QP to the error state and
 * fails them once the QP has flushed (so data that arrived just before is
 * still delivered); the deadline fails the step. Each names the peer (rank
 * and host) and what was still awaited from it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "transport/bootstrap.h"
#include "transport/transport.h"

#define TC_VB_CREDITS 64  /* receives per peer a sender may consume unreported */
#define TC_VB_EXTRA 4	  /* more receives, for credit messages */
#define TC_VB_RQ (TC_VB_CREDITS + TC_VB_EXTRA)
#define TC_VB_SQ (TC_VB_CREDITS + TC_VB_EXTRA + 8)
#define TC_VB_SLOT_MIN 1024 /* bytes per receive slot at least: a control message or an eager one */
#define TC_VB_SLOT_MAX 16384
#define TC_VB_TXH 64	  /* bytes per eager-send header in the send ring */
#define TC_VB_SPIN_NS 20000 /* busy-poll this long before blocking */
#define TC_VB_RESOLVE_MS 2000
#define TC_VB_LINGER_MS 2000 /* longest a destroy waits for its peers' goodbyes */
#define TC_VB_MAGIC 0x74637662u /* "tcvb" */

/* The immediate of a data write: receiver's record, an error bit, credits. */
#define TC_VB_IMM_RID_MASK 0xfffffu
#define TC_VB_IMM_ERR (1u << 20)
#define TC_VB_IMM_CREDIT_SHIFT 24

enum tc_vb_wr { TC_VB_WR_RECV = 1, TC_VB_WR_CTRL, TC_VB_WR_DATA };
enum tc_vb_msg_type { TC_VB_MSG_RTR = 1, TC_VB_MSG_CREDIT, TC_VB_MSG_EAGER, TC_VB_MSG_BYE };
/* DRAINING: the connection broke; its QP is in the error state and flushes
 * what was posted before the peer's transfers are failed (FAILED). */
enum tc_vb_state { TC_VB_IDLE, TC_VB_CONNECTING, TC_VB_ACCEPTING, TC_VB_UP, TC_VB_DRAINING, TC_VB_FAILED };

/* The control message (SEND into a posted receive slot). */
struct tc_vb_msg {
	uint8_t type;
	uint8_t credits;
	uint16_t __pad;
	uint32_t rid;
	uint64_t tag;
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
	uint32_t __pad2;
};
_Static_assert(sizeof(struct tc_vb_msg) <= TC_VB_TXH, "control message larger than its slot");
/* The largest eager limit: what fits the largest receive slot after its header. */
#define TC_VB_EAGER_MAX (TC_VB_SLOT_MAX - sizeof(struct tc_vb_msg))
#define TC_VB_EAGER_MIN (TC_VB_SLOT_MIN - sizeof(struct tc_vb_msg))
/* The default's ceiling (a 4 KiB block's direct message goes eager) and budget. */
#define TC_VB_EAGER_CAP (8192 - sizeof(struct tc_vb_msg))
#define TC_VB_SLOT_BUDGET (16u << 20)

/* What each rank publishes about itself for one communicator. */
struct tc_vb_card {
	uint32_t magic;
	int32_t rank;
	uint32_t ok;	/* 0: this rank's verbs setup failed (its reason is local) */
	uint32_t ipv4;	/* network order */
	uint16_t port;	/* network order */
	uint16_t __pad;
	uint32_t seq;
	uint32_t eager; /* eager threshold: must be the same on every rank */
	char host[36];
};

/* rdma_cm private data of a connection request. */
struct tc_vb_hello {
	uint32_t magic;
	uint32_t seq;
	int32_t rank;
};

/* A ready-to-receive a peer sent that no send of ours matched yet. */
struct tc_vb_rtr {
	uint64_t tag, addr, len;
	uint32_t rkey, rid;
};

/* A queued outgoing operation: an RTR for a receive, an eager send or a data write. */
enum tc_vb_op_kind { TC_VB_OP_RTR = 1, TC_VB_OP_EAGER, TC_VB_OP_WRITE };
struct tc_vb_op {
	uint8_t kind; /* enum tc_vb_op_kind */
	uint32_t rec;
};

/* An eager message that arrived before its receive was posted: it holds its slot. */
struct tc_vb_unexp {
	uint64_t tag, len;
	uint32_t slot;
};

struct tc_vb_peer {
	struct rdma_cm_id *id;
	enum tc_vb_state state;
	int err;	     /* DRAINING, FAILED: negative errno */
	char why[96];	     /* DRAINING, FAILED: what happened */
	uint32_t rq_posted;  /* receives posted on its QP, not completed */
	uint32_t credits;    /* receives the peer has posted for us, unspent */
	uint32_t owed;	     /* receives we reposted and have not reported */
	uint32_t sq_used;
	struct tc_vb_rtr *rtr;
	uint32_t nrtr, cap_rtr;
	struct tc_vb_unexp *unexp;
	uint32_t nunexp, cap_unexp;
	uint32_t tx_next;    /* eager-send header ring position */
	uint8_t bye_sent, bye_rcvd; /* the closing handshake (tc_vb_linger) */
	struct tc_vb_op *q;
	uint32_t qhead, qtail, cap_q;
	struct tc_vb_card card;
};

/* One posted transfer. */
struct tc_vb_rec {
	uint8_t op; /* TC_XFER_* */
	uint8_t done, matched, queued;
	uint8_t closed; /* failed by the peer's goodbye */
	int32_t peer;
	int32_t status;
	uint64_t tag, off, len;
	uint64_t raddr;
	uint32_t rkey, rid;
};

struct tc_vb {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	int cq_armed;
	unsigned int cq_events; /* to acknowledge before destroying the cq */
	char *buf;
	size_t buf_bytes;
	struct ibv_mr *mr;
	char *slots; /* P * TC_VB_RQ receive slots, then P * TC_VB_SQ eager-send headers */
	struct ibv_mr *slots_mr;
	uint32_t eager; /* messages up to this many bytes go eager (0: none) */
	uint32_t slot;	/* bytes per receive slot: the header and eager bytes, 64-aligned */
	struct tc_vb_peer *peers;
	struct tc_boot boot;
	int size, rank;
	uint32_t seq;
	char dev_name[64];
	struct tc_vb_rec *recs;
	uint32_t nrecs, cap_recs, ndone, nreaped;
	char what[200]; /* the detail of the last failure */
};

static struct tc_vb *to_vb(struct tc_tp *tp)
{
	return tp->priv;
}

static const char *tc_vb_host(const struct tc_vb *vb, int rank)
{
	return vb->peers[rank].card.host[0] ? vb->peers[rank].card.host : "?";
}

/* ---- device and address --------------------------------------------- */

/* The device (named, or the first with an active port) and an IPv4 address
 * of its RoCE GID table (an IB device needs IPoIB: the same). */
static int tc_vb_find_addr(const char *want, char *name, size_t name_len, uint32_t *ipv4)
{
	struct ibv_device **list;
	int n, ret = -ENODEV, found = 0;
	char active_no_ip[64] = "";

	list = ibv_get_device_list(&n);
	if (!list || !n) {
		if (list)
			ibv_free_device_list(list);
		return tc_err(-ENODEV, "transport verbs: %s%s%sthis host has no RDMA device (for soft-RoCE: rdma link add "
			      "rxe0 type rxe netdev IF)", want ? "no RDMA device named " : "", want ? want : "", want ? ": " : "");
	}
	for (int i = 0; i < n && !found; i++) {
		const char *dn = ibv_get_device_name(list[i]);
		struct ibv_device_attr da;
		struct ibv_context *c;

		if (want && strcmp(want, dn))
			continue;
		c = ibv_open_device(list[i]);
		if (!c)
			continue;
		if (!ibv_query_device(c, &da)) {
			for (int port = 1; port <= da.phys_port_cnt && !found; port++) {
				struct ibv_port_attr pa;

				if (ibv_query_port(c, port, &pa) || pa.state != IBV_PORT_ACTIVE)
					continue;
				for (int g = 0; g < pa.gid_tbl_len && !found; g++) {
					union ibv_gid gid;
					static const uint8_t v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

					if (ibv_query_gid(c, port, g, &gid))
						continue;
					if (!memcmp(gid.raw, v4map, 12) && memcmp(gid.raw + 12, "\0\0\0\0", 4)) {
						memcpy(ipv4, gid.raw + 12, 4);
						snprintf(name, name_len, "%s", dn);
						found = 1;
					}
				}
				if (!found && !active_no_ip[0])
					snprintf(active_no_ip, sizeof(active_no_ip), "%s port %d", dn, port);
			}
		}
		ibv_close_device(c);
		if (want && !found) {
			ret = tc_err(-ENETDOWN, "transport verbs: RDMA device %s has no active port with an IPv4 address", want);
			ibv_free_device_list(list);
			return ret;
		}
	}
	if (found) {
		ibv_free_device_list(list);
		return 0;
	}
	if (want) {
		char names[160] = "";

		for (int i = 0; i < n; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
				 ibv_get_device_name(list[i]));
		ret = tc_err(-ENODEV, "transport verbs: no RDMA device named %s (TC_RDMA_DEVICE); there are: %s", want,
			     names);
	} else if (active_no_ip[0]) {
		ret = tc_err(-ENETDOWN, "transport verbs: %s is active but has no IPv4 address for rdma_cm", active_no_ip);
	} else {
		ret = tc_err(-ENETDOWN, "transport verbs: no RDMA device has an active port");
	}
	ibv_free_device_list(list);
	return ret;
}

/* ---- dims ------------------------------------------------------------ */

static int tc_vb_shape(struct tc_shape *sh, const char *dims, int size)
{
	int d[2];
	int r;

	if (dims && *dims) {
		if (tc_shape_parse(sh, dims, 0, 0))
			return tc_err(-EINVAL, "transport verbs: dims \"%s\": not a torus shape like 4x4 or 2x2x4", dims);
		if (sh->nodes != size)
			return tc_err(-EINVAL, "transport verbs: dims %s make %d ranks but the job has %d", dims, sh->nodes,
				      size);
		return 0;
	}
	/* near-square: the largest divisor r <= sqrt(size) */
	for (r = 1; (r + 1) * (r + 1) <= size; r++)
		;
	while (r > 1 && size % r)
		r--;
	if (r == 1) {
		d[0] = size;
		if (tc_shape_init(sh, 1, d, 1, 0))
			return tc_err(-EINVAL, "transport verbs: no torus shape for a job of %d ranks", size);
		return 0;
	}
	d[0] = r;
	d[1] = size / r;
	if (tc_shape_init(sh, 2, d, 3, 0))
		return tc_err(-EINVAL, "transport verbs: no torus shape for a job of %d ranks (set TC_DIMS)", size);
	return 0;
}

/* ---- peers: failure, queues, posting ----------------------------------- */

static void tc_vb_peer_fail(struct tc_vb *vb, int rank, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void tc_vb_peer_fail(struct tc_vb *vb, int rank, int err, const char *fmt, ...)
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
static void tc_vb_peer_down(struct tc_vb *vb, int rank, int err, const char *why)
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

static void tc_vb_drained(struct tc_vb *vb, int rank)
{
	struct tc_vb_peer *pe = &vb->peers[rank];
	char why[sizeof(pe->why)];

	if (pe->state != TC_VB_DRAINING || pe->sq_used || pe->rq_posted)
		return;
	memcpy(why, pe->why, sizeof(why));
	tc_vb_peer_fail(vb, rank, pe->err, "%s", why);
}

static int tc_vb_post_recv_slot(struct tc_vb *vb, int rank, uint32_t slot)
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

static int tc_vb_make_qp(struct tc_vb *vb, int rank, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = vb->cq,
		.recv_cq = vb->cq,
		.cap = { .max_send_wr = TC_VB_SQ, .max_recv_wr = TC_VB_RQ, .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = sizeof(struct tc_vb_msg) },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct tc_vb_peer *pe = &vb->peers[rank];
	int ret;

	if (rdma_create_qp(id, vb->pd, &qa))
		return -errno;
	pe->id = id;
	for (uint32_t s = 0; s < TC_VB_RQ; s++) {
		ret = tc_vb_post_recv_slot(vb, rank, s);
		if (ret)
			return ret;
	}
	pe->credits = TC_VB_CREDITS;
	pe->owed = 0;
	return 0;
}

static void tc_vb_conn_param(struct tc_vb *vb, struct rdma_conn_param *cp, struct tc_vb_hello *h)
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
static int tc_vb_connect(struct tc_vb *vb, int rank)
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

static int tc_vb_send_ctrl(struct tc_vb *vb, int rank, const struct tc_vb_msg *m)
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

static uint8_t tc_vb_take_owed(struct tc_vb_peer *pe)
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
		/* header from the send ring (free: at most TC_VB_SQ - 1 sends are outstanding, in order) */
		struct tc_vb_msg *h = (struct tc_vb_msg *)(vb->slots + (size_t)vb->size * TC_VB_RQ * vb->slot +
							    ((size_t)rank * TC_VB_SQ + pe->tx_next % TC_VB_SQ) * TC_VB_TXH);
		struct ibv_sge sge[2] = {
			{ .addr = (uintptr_t)h, .length = sizeof(*h), .lkey = vb->slots_mr->lkey },
			{ .addr = (uintptr_t)(vb->buf + r->off), .length = r->len, .lkey = vb->mr->lkey },
		};
		struct ibv_send_wr wr = {
			.wr_id = (uint64_t)TC_VB_WR_DATA << 56 | (uint64_t)rank << 32 | op->rec,
			.sg_list = sge,
			.num_sge = 2,
			.opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
		}, *bad;

		*h = (struct tc_vb_msg){ .type = TC_VB_MSG_EAGER, .tag = r->tag, .len = r->len };
		h->credits = tc_vb_take_owed(pe);
		ret = -ibv_post_send(pe->id->qp, &wr, &bad);
		if (ret) {
			pe->owed += h->credits;
		} else {
			pe->sq_used++;
			pe->tx_next++;
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
static void tc_vb_flush(struct tc_vb *vb, int rank)
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

static int tc_vb_enqueue(struct tc_vb *vb, int rank, uint8_t kind, uint32_t rec)
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
static int tc_vb_match(struct tc_vb *vb, uint32_t rec, const struct tc_vb_rtr *t)
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

/* ---- events: connection manager and completions ------------------------ */

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
static void tc_vb_eager_deliver(struct tc_vb *vb, uint32_t rec, const char *slot, uint64_t len)
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
	const char *slot = vb->slots + ((size_t)rank * TC_VB_RQ + idx) * vb->slot;
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

static void tc_vb_on_wc(struct tc_vb *vb, const struct ibv_wc *wc)
{
	unsigned int kind = wc->wr_id >> 56;
	int rank = (wc->wr_id >> 32) & 0xffffff;
	uint32_t idx = (uint32_t)wc->wr_id;
	struct tc_vb_peer *pe;

	if (rank >= vb->size)
		return;
	pe = &vb->peers[rank];
	if (kind == TC_VB_WR_RECV)
		pe->rq_posted--;
	else
		pe->sq_used--;
	if (wc->status != IBV_WC_SUCCESS) {
		char why[96];

		if (wc->status == IBV_WC_WR_FLUSH_ERR)
			snprintf(why, sizeof(why), "its connection went to the error state");
		else
			snprintf(why, sizeof(why), "a %s completed with %s", kind == TC_VB_WR_RECV ? "receive" : "send",
				 ibv_wc_status_str(wc->status));
		tc_vb_peer_down(vb, rank, wc->status == IBV_WC_WR_FLUSH_ERR ? -ECONNRESET :
					  wc->status == IBV_WC_RNR_RETRY_EXC_ERR ? -ENOBUFS : -EIO, why);
		tc_vb_drained(vb, rank);
		return;
	}
	switch (kind) {
	case TC_VB_WR_CTRL:
		break;
	case TC_VB_WR_DATA:
		if (idx < vb->nrecs && !vb->recs[idx].done) {
			vb->recs[idx].done = 1;
			vb->ndone++;
		}
		break;
	case TC_VB_WR_RECV: {
		struct tc_vb_msg m;
		int counted;

		if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
			uint32_t imm = ntohl(wc->imm_data);
			uint32_t rid = imm & TC_VB_IMM_RID_MASK;

			counted = 1;
			pe->credits += imm >> TC_VB_IMM_CREDIT_SHIFT;
			if (rid < vb->nrecs && vb->recs[rid].op == TC_XFER_RECV && vb->recs[rid].peer == rank &&
			    !vb->recs[rid].done) {
				vb->recs[rid].done = 1;
				vb->recs[rid].status = imm & TC_VB_IMM_ERR ? -EMSGSIZE : 0;
				vb->ndone++;
			}
		} else {
			memcpy(&m, vb->slots + ((size_t)rank * TC_VB_RQ + idx) * vb->slot, sizeof(m));
			counted = m.type != TC_VB_MSG_CREDIT && m.type != TC_VB_MSG_BYE; /* those spend no credit */
			if (tc_vb_on_ctrl(vb, rank, idx, wc->byte_len))
				break; /* held until its receive is posted */
		}
		if (pe->state == TC_VB_FAILED || pe->state == TC_VB_DRAINING)
			break;
		if (tc_vb_post_recv_slot(vb, rank, idx)) {
			tc_vb_peer_down(vb, rank, -EIO, "reposting a receive failed");
			break;
		}
		if (counted)
			pe->owed++;
		break;
	}
	default:
		break;
	}
	tc_vb_drained(vb, rank);
}

/* Reap what is there (no blocking); returns how many events were handled. */
static int tc_vb_progress(struct tc_vb *vb)
{
	struct ibv_wc wc[32];
	int n, total = tc_vb_cm_events(vb);

	while ((n = ibv_poll_cq(vb->cq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++)
			tc_vb_on_wc(vb, &wc[i]);
		total += n;
	}
	for (int r = 0; r < vb->size; r++)
		if (vb->peers[r].state == TC_VB_UP && (vb->peers[r].qhead != vb->peers[r].qtail ||
						       vb->peers[r].owed >= TC_VB_CREDITS / 2))
			tc_vb_flush(vb, r);
	return total;
}

/* ---- the transport ops ------------------------------------------------ */

static void tc_vb_free(struct tc_vb *vb)
{
	if (vb->peers) {
		for (int r = 0; r < vb->size; r++) {
			struct tc_vb_peer *pe = &vb->peers[r];

			if (pe->id) {
				if (pe->state == TC_VB_UP)
					rdma_disconnect(pe->id);
				if (pe->id->qp)
					rdma_destroy_qp(pe->id);
				rdma_destroy_id(pe->id);
			}
			free(pe->rtr);
			free(pe->unexp);
			free(pe->q);
		}
	}
	if (vb->mr)
		ibv_dereg_mr(vb->mr);
	if (vb->slots_mr)
		ibv_dereg_mr(vb->slots_mr);
	if (vb->cq) {
		ibv_ack_cq_events(vb->cq, vb->cq_events);
		ibv_destroy_cq(vb->cq);
	}
	if (vb->cc)
		ibv_destroy_comp_channel(vb->cc);
	if (vb->pd)
		ibv_dealloc_pd(vb->pd);
	if (vb->listen)
		rdma_destroy_id(vb->listen);
	if (vb->ch)
		rdma_destroy_event_channel(vb->ch);
	free(vb->buf);
	free(vb->slots);
	free(vb->peers);
	free(vb->recs);
	free(vb);
}

static size_t tc_vb_slots_bytes(const struct tc_vb *vb)
{
	return (size_t)vb->size * (TC_VB_RQ * vb->slot + TC_VB_SQ * TC_VB_TXH);
}

/* The local half of open: device, listener, PD, CQ. Fills the card. */
static int tc_vb_setup(struct tc_vb *vb, const char *want, struct tc_vb_card *card)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int cqe, flags, ret;

	ret = tc_vb_find_addr(want, vb->dev_name, sizeof(vb->dev_name), &card->ipv4);
	if (ret)
		return ret;
	vb->ch = rdma_create_event_channel();
	if (!vb->ch)
		return tc_err(-ENODEV, "transport verbs: no rdma_cm (/dev/infiniband/rdma_cm: %s): load rdma_ucm",
			      tc_strerror(-errno));
	flags = fcntl(vb->ch->fd, F_GETFL);
	if (flags < 0 || fcntl(vb->ch->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return tc_err(-errno, "transport verbs: rdma_cm channel: %s", tc_strerror(-errno));
	if (rdma_create_id(vb->ch, &vb->listen, NULL, RDMA_PS_TCP))
		return tc_err(-errno, "transport verbs: rdma_create_id: %s", tc_strerror(-errno));
	sin.sin_addr.s_addr = card->ipv4;
	if (rdma_bind_addr(vb->listen, (struct sockaddr *)&sin) || rdma_listen(vb->listen, vb->size > 64 ? vb->size : 64))
		return tc_err(-errno, "transport verbs: listening on %s (%s): %s", inet_ntoa(sin.sin_addr), vb->dev_name,
			      tc_strerror(-errno));
	if (!vb->listen->verbs)
		return tc_err(-ENODEV, "transport verbs: %s is not bound to an RDMA device", inet_ntoa(sin.sin_addr));
	card->port = rdma_get_src_port(vb->listen);
	vb->ctx = vb->listen->verbs;
	vb->pd = ibv_alloc_pd(vb->ctx);
	if (!vb->pd)
		return tc_err(-ENOMEM, "transport verbs: ibv_alloc_pd on %s failed", vb->dev_name);
	vb->cc = ibv_create_comp_channel(vb->ctx);
	if (!vb->cc)
		return tc_err(-errno, "transport verbs: ibv_create_comp_channel: %s", tc_strerror(-errno));
	flags = fcntl(vb->cc->fd, F_GETFL);
	if (flags < 0 || fcntl(vb->cc->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return tc_err(-errno, "transport verbs: completion channel: %s", tc_strerror(-errno));
	/* one CQ holds every peer's posted work requests: it can never overflow */
	cqe = (vb->size - 1) * (TC_VB_RQ + TC_VB_SQ) + 16;
	{
		struct ibv_device_attr da;

		if (!ibv_query_device(vb->ctx, &da) && cqe > da.max_cqe)
			return tc_err(-E2BIG, "transport verbs: %d ranks need a CQ of %d entries, %s allows %d", vb->size,
				      cqe, vb->dev_name, da.max_cqe);
	}
	vb->cq = ibv_create_cq(vb->ctx, cqe, NULL, vb->cc, 0);
	if (!vb->cq)
		return tc_err(-errno, "transport verbs: ibv_create_cq of %d entries on %s: %s", cqe, vb->dev_name,
			      tc_strerror(-errno));
	vb->slots = calloc(1, tc_vb_slots_bytes(vb));
	if (!vb->slots)
		return tc_err(-ENOMEM, "transport verbs: out of memory");
	vb->slots_mr = ibv_reg_mr(vb->pd, vb->slots, tc_vb_slots_bytes(vb), IBV_ACCESS_LOCAL_WRITE);
	if (!vb->slots_mr)
		return tc_err(-errno, "transport verbs: registering %zu bytes of receive slots (%u-byte eager limit): %s%s",
			      tc_vb_slots_bytes(vb), vb->eager, tc_strerror(-errno),
			      errno == ENOMEM ? " (raise ulimit -l, or lower TC_VERBS_EAGER)" : "");
	return 0;
}

static int tc_vb_probe(struct tc_tp *tp);

/*
 * The eager limit: TC_VERBS_EAGER, else the largest that keeps this rank's
 * receive slots (TC_VB_RQ per peer) within TC_VB_SLOT_BUDGET, between 984
 * bytes (a 1 KiB slot) and TC_VB_EAGER_CAP; and the slot it needs. Every
 * rank computes the same from the job size.
 */
static int tc_vb_eager_env(struct tc_vb *vb)
{
	const char *env = getenv("TC_VERBS_EAGER");
	size_t v = TC_VB_SLOT_BUDGET / ((size_t)TC_VB_RQ * vb->size);
	unsigned int u;

	v = v > TC_VB_SLOT_MIN ? (v & ~(size_t)63) - sizeof(struct tc_vb_msg) : TC_VB_EAGER_MIN;
	if (v > TC_VB_EAGER_CAP)
		v = TC_VB_EAGER_CAP;
	if (env && *env) {
		int ret = tc_parse_uint("TC_VERBS_EAGER", env, &u);

		if (ret)
			return ret;
		if (u > TC_VB_EAGER_MAX)
			return tc_err(-EINVAL, "TC_VERBS_EAGER=%s: bytes up to %zu (0: every message by RDMA write)",
				      env, TC_VB_EAGER_MAX);
		v = u;
	}
	vb->eager = v;
	vb->slot = (sizeof(struct tc_vb_msg) + v + 63) & ~(size_t)63;
	if (vb->slot < TC_VB_SLOT_MIN)
		vb->slot = TC_VB_SLOT_MIN;
	return 0;
}

/* Every rank's card from the exchange: the same library, eager limit and
 * communicator number; each rank's device set up. Filed in vb->peers. */
static int tc_vb_check_cards(struct tc_vb *vb, struct tc_vb_card *all)
{
	/* An out-of-band exchange runs on the caller's own group (an MPI
	 * communicator), not the whole job: ranks may have made different
	 * numbers of communicators before. They agree on the largest number,
	 * which their connection hellos then carry. */
	for (int r = 0; vb->boot.oob_allgather && r < vb->size; r++)
		if (all[r].seq > vb->seq)
			vb->seq = all[r].seq;
	for (int r = 0; r < vb->size; r++) {
		if (all[r].magic != TC_VB_MAGIC || all[r].rank != r ||
		    (all[r].seq != vb->seq && !vb->boot.oob_allgather)) {
			return tc_err(-EPROTO, "transport verbs: rank %d's connection data is malformed (different library versions?)",
				      r);
		}
		all[r].host[sizeof(all[r].host) - 1] = 0;
		if (all[r].eager != vb->eager) {
			return tc_err(-EINVAL, "transport verbs: rank %d on %s sends eagerly up to %u bytes, this rank %u: "
				     "set TC_VERBS_EAGER alike on every rank", r, all[r].host, all[r].eager, vb->eager);
		}
		vb->peers[r].card = all[r];
		if (!all[r].ok) {
			return tc_err(-ENODEV, "transport verbs: rank %d on %s could not set up its RDMA device (see its error)",
				     r, all[r].host);
		}
	}
	return 0;
}

static int tc_vb_open(struct tc_tp *tp, const struct tc_comm_attr *attr)
{
	const char *dims = attr->dims, *dev = attr->rdma_device;
	struct tc_vb_card mine = { .magic = TC_VB_MAGIC }, *all = NULL;
	struct tc_vb *vb;
	char why[256] = "";
	int ret, setup;

	if (!dims || !*dims)
		dims = getenv("TC_DIMS");
	if (!dev || !*dev)
		dev = getenv("TC_RDMA_DEVICE");
	if (dev && !*dev)
		dev = NULL;
	vb = calloc(1, sizeof(*vb));
	if (!vb)
		return tc_err(-ENOMEM, "transport verbs: out of memory");
	/* who we are */
	ret = tc_boot_open(&vb->boot, attr);
	if (ret)
		goto err_free;
	vb->rank = vb->boot.rank;
	vb->size = vb->boot.size;
	vb->seq = vb->boot.seq;
	ret = tc_vb_shape(&tp->shape, dims, vb->size);
	if (!ret)
		ret = tc_vb_eager_env(vb);
	if (ret)
		goto err_free;
	vb->peers = calloc(vb->size, sizeof(*vb->peers));
	all = calloc(vb->size, sizeof(*all));
	if (!vb->peers || !all) {
		ret = tc_err(-ENOMEM, "transport verbs: out of memory for %d ranks", vb->size);
		goto err_free;
	}

	/* the local half; a failure still takes part in the exchange */
	setup = tc_vb_setup(vb, dev, &mine);
	if (setup)
		snprintf(why, sizeof(why), "%s", tc_last_error());
	mine.rank = vb->rank;
	mine.ok = !setup;
	mine.seq = vb->seq;
	mine.eager = vb->eager;
	gethostname(mine.host, sizeof(mine.host) - 1);
	ret = tc_boot_allgather(&vb->boot, &mine, all, sizeof(mine), tp->timeout_ms);
	if (setup) {
		ret = tc_err(setup, "%s", why);
		goto err_free;
	}
	if (ret)
		goto err_free;
	ret = tc_vb_check_cards(vb, all);
	if (ret)
		goto err_free;
	free(all);
	tp->rank = vb->rank;
	tp->max_segs = 1;
	tp->priv = vb;
	ret = tc_vb_probe(tp);
	if (ret) {
		tp->priv = NULL;
		goto err_free;
	}
	return 0;

err_free:
	free(all);
	tc_vb_free(vb);
	return ret;
}

/*
 * Close gracefully: a peer may still wait for the acknowledgement of a
 * message we already received (our responder sent it, the peer has not seen
 * it yet); tearing the QP down now would turn that into a failed send on
 * its side. So each connected peer gets a goodbye, and the QPs live until
 * every such peer's goodbye came (it then has all its acknowledgements: it
 * sends its goodbye only from its own destroy) or it disconnected, or
 * TC_VB_LINGER_MS passed.
 */
static void tc_vb_block(struct tc_vb *vb, int ms);

static void tc_vb_linger(struct tc_vb *vb, int timeout_ms)
{
	struct timespec end;
	int ms = timeout_ms < TC_VB_LINGER_MS ? timeout_ms : TC_VB_LINGER_MS;

	tc_deadline(&end, ms);
	for (;;) {
		int waiting = 0;

		tc_vb_progress(vb);
		for (int r = 0; r < vb->size; r++) {
			struct tc_vb_peer *pe = &vb->peers[r];

			if (pe->state != TC_VB_UP)
				continue;
			if (!pe->bye_sent && pe->sq_used < TC_VB_SQ) {
				struct tc_vb_msg m = { .type = TC_VB_MSG_BYE };

				m.credits = tc_vb_take_owed(pe);
				if (tc_vb_send_ctrl(vb, r, &m))
					continue; /* its QP is gone: nothing to wait for */
				pe->bye_sent = 1;
			}
			if (!pe->bye_sent || !pe->bye_rcvd || pe->sq_used)
				waiting++;
		}
		if (!waiting || tc_ns_left(&end) <= 0)
			return;
		tc_vb_block(vb, 10);
	}
}

static void tc_vb_close(struct tc_tp *tp)
{
	struct tc_vb *vb = to_vb(tp);

	tc_vb_linger(vb, tp->timeout_ms);
	tc_vb_free(vb);
}

static int tc_vb_buffer(struct tc_tp *tp, size_t bytes, void **base)
{
	struct tc_vb *vb = to_vb(tp);
	struct ibv_mr *mr;
	size_t nbytes;
	void *p;

	if (bytes <= vb->buf_bytes) {
		*base = vb->buf;
		return 0;
	}
	if (vb->nrecs > vb->nreaped)
		return tc_err(-EBUSY, "transport verbs: buffer resized with transfers outstanding");
	for (nbytes = 4096; nbytes < bytes; nbytes *= 2)
		;
	if (posix_memalign(&p, 4096, nbytes))
		return tc_err(-ENOMEM, "transport verbs: no memory for a %zu-byte buffer", nbytes);
	mr = ibv_reg_mr(vb->pd, p, nbytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		int ret = -errno;

		free(p);
		return tc_err(ret, "transport verbs: registering a %zu-byte buffer on %s: %s%s", nbytes, vb->dev_name,
			      tc_strerror(ret), ret == -ENOMEM ? " (raise ulimit -l)" : "");
	}
	if (vb->buf)
		memcpy(p, vb->buf, vb->buf_bytes);
	if (vb->mr)
		ibv_dereg_mr(vb->mr);
	free(vb->buf);
	vb->buf = p;
	vb->buf_bytes = nbytes;
	vb->mr = mr;
	*base = p;
	return 0;
}

/*
 * Eager receive @ri from @peer: the sender sends without asking, so its
 * message may be here already (unexpected); deliver it and give the slot
 * back. Otherwise the arrival delivers it.
 */
static void tc_vb_recv_eager(struct tc_vb *vb, uint32_t ri, int peer, uint64_t tag)
{
	struct tc_vb_peer *pe = &vb->peers[peer];
	struct tc_vb_unexp u;
	uint32_t k;

	for (k = 0; k < pe->nunexp && pe->unexp[k].tag != tag; k++)
		;
	if (k == pe->nunexp)
		return;
	u = pe->unexp[k];
	memmove(&pe->unexp[k], &pe->unexp[k + 1], (pe->nunexp - k - 1) * sizeof(*pe->unexp));
	pe->nunexp--;
	tc_vb_eager_deliver(vb, ri, vb->slots + ((size_t)peer * TC_VB_RQ + u.slot) * vb->slot, u.len);
	if (pe->state == TC_VB_FAILED || pe->state == TC_VB_DRAINING)
		return;
	if (tc_vb_post_recv_slot(vb, peer, u.slot))
		tc_vb_peer_down(vb, peer, -EIO, "reposting a receive failed");
	else
		pe->owed++;
}

static int tc_vb_post(struct tc_tp *tp, const struct tc_xfer *x, unsigned int n)
{
	struct tc_vb *vb = to_vb(tp);
	int ret;

	if (tc_grow((void **)&vb->recs, &vb->cap_recs, vb->nrecs + n, sizeof(*vb->recs), 16))
		return tc_err(-ENOMEM, "transport verbs: out of memory posting %u transfers", n);
	if (vb->nrecs + n > TC_VB_IMM_RID_MASK)
		return tc_err(-E2BIG, "transport verbs: more than %u transfers outstanding", TC_VB_IMM_RID_MASK);
	for (unsigned int i = 0; i < n; i++) {
		const struct tc_xfer *xf = &x[i];
		uint32_t ri = vb->nrecs;
		struct tc_vb_rec *r = &vb->recs[ri];
		struct tc_vb_peer *pe;

		if (xf->op != TC_XFER_SEND && xf->op != TC_XFER_RECV)
			return tc_err(-EINVAL, "transport verbs: transfer op %u unknown", xf->op);
		if (xf->peer < 0 || xf->peer >= vb->size || xf->peer == vb->rank)
			return tc_err(-EINVAL, "transport verbs: peer %d invalid for rank %d", xf->peer, vb->rank);
		if (xf->nsegs != 1 || !xf->segs)
			return tc_err(-E2BIG, "transport verbs: a transfer with %u segments (this transport takes 1)",
				      xf->nsegs);
		if (!xf->segs[0].length || xf->segs[0].offset > vb->buf_bytes ||
		    xf->segs[0].length > vb->buf_bytes - xf->segs[0].offset || xf->segs[0].length > UINT32_MAX)
			return tc_err(-EINVAL, "transport verbs: segment [%llu, +%llu) outside the %zu-byte buffer",
				      (unsigned long long)xf->segs[0].offset, (unsigned long long)xf->segs[0].length,
				      vb->buf_bytes);
		*r = (struct tc_vb_rec){ .op = xf->op, .peer = xf->peer, .tag = xf->tag, .off = xf->segs[0].offset,
					 .len = xf->segs[0].length };
		vb->nrecs++;
		pe = &vb->peers[xf->peer];
		if (pe->state == TC_VB_FAILED) {
			r->done = 1;
			r->status = pe->err;
			vb->ndone++;
			continue;
		}
		ret = tc_vb_connect(vb, xf->peer);
		if (ret)
			return ret;
		if (xf->op == TC_XFER_RECV && r->len <= vb->eager) {
			tc_vb_recv_eager(vb, ri, xf->peer, xf->tag);
			ret = 0;
		} else if (xf->op == TC_XFER_RECV) {
			ret = tc_vb_enqueue(vb, xf->peer, TC_VB_OP_RTR, ri);
		} else if (r->len <= vb->eager) {
			r->matched = 1; /* its place is a receive slot: nothing to wait for */
			ret = tc_vb_enqueue(vb, xf->peer, TC_VB_OP_EAGER, ri);
			tp->sends_eager++;
		} else {
			uint32_t k;

			ret = 0;
			tp->sends_rdv++;
			for (k = 0; k < pe->nrtr && pe->rtr[k].tag != xf->tag; k++)
				;
			if (k < pe->nrtr) {
				struct tc_vb_rtr t = pe->rtr[k];

				memmove(&pe->rtr[k], &pe->rtr[k + 1], (pe->nrtr - k - 1) * sizeof(*pe->rtr));
				pe->nrtr--;
				ret = tc_vb_match(vb, ri, &t);
			}
		}
		if (ret)
			return tc_err(-ENOMEM, "transport verbs: out of memory queueing a transfer");
	}
	tc_vb_progress(vb);
	return 0;
}

/* What a transfer that did not finish was waiting for, after "node N (". */
static void tc_vb_describe(struct tc_vb *vb, const struct tc_vb_rec *r)
{
	const struct tc_vb_peer *pe = &vb->peers[r->peer];
	const char *host = tc_vb_host(vb, r->peer);
	unsigned long long len = r->len, tag = r->tag;

	if (r->closed)
		snprintf(vb->what, sizeof(vb->what), "on %s: it destroyed its communicator before this transfer", host);
	else if (pe->state == TC_VB_FAILED)
		snprintf(vb->what, sizeof(vb->what), "on %s: %s", host, pe->why);
	else if (pe->state == TC_VB_DRAINING)
		snprintf(vb->what, sizeof(vb->what), "on %s: %s (its QP still flushing)", host, pe->why);
	else if (pe->state != TC_VB_UP)
		snprintf(vb->what, sizeof(vb->what), "on %s: the connection was never established: %s", host,
			 r->peer > vb->rank ? "it did not connect to us" : "no answer to our connect");
	else if (r->op == TC_XFER_RECV)
		snprintf(vb->what, sizeof(vb->what), "on %s: its %llu bytes, tag %#llx, never arrived", host, len, tag);
	else if (!r->matched)
		snprintf(vb->what, sizeof(vb->what), "on %s: no ready-to-receive came for our %llu bytes, tag %#llx", host,
			 len, tag);
	else
		snprintf(vb->what, sizeof(vb->what), "on %s: our write of %llu bytes, tag %#llx, was not acknowledged%s",
			 host, len, tag, r->queued ? " (still queued: no credit)" : "");
}

static void tc_vb_fill_err(struct tc_vb *vb, const struct tc_vb_rec *r, int status, struct tc_wait_err *err)
{
	tc_vb_describe(vb, r);
	err->status = status;
	err->port = -1;
	err->peer = r->peer;
	err->tag = r->tag;
	err->detail = vb->what;
	tc_err(status, "transport verbs: node %d (%s)", r->peer, vb->what);
}

/* Sleep until the CQ or the rdma_cm channel has something, at most ms. */
static void tc_vb_block(struct tc_vb *vb, int ms)
{
	struct pollfd pfd[2] = { { .fd = vb->cc->fd, .events = POLLIN }, { .fd = vb->ch->fd, .events = POLLIN } };

	if (!vb->cq_armed) {
		if (ibv_req_notify_cq(vb->cq, 0))
			return;
		vb->cq_armed = 1;
		if (tc_vb_progress(vb)) /* raced with a completion: no sleep */
			return;
	}
	if (poll(pfd, 2, ms) > 0 && (pfd[0].revents & POLLIN)) {
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

static int tc_vb_wait(struct tc_tp *tp, unsigned int n, int timeout_ms, struct tc_wait_err *err)
{
	struct tc_vb *vb = to_vb(tp);
	struct timespec end;
	int64_t left, idle_from;

	if (n > vb->nrecs - vb->nreaped)
		return tc_err(-EINVAL, "transport verbs: waiting for %u completions with %u posted", n,
			      vb->nrecs - vb->nreaped);
	tc_deadline(&end, timeout_ms);
	idle_from = tc_ns_left(&end);
	for (;;) {
		/* a failed transfer fails the step at once: its partners may never complete */
		for (uint32_t i = vb->nreaped; i < vb->nrecs; i++)
			if (vb->recs[i].done && vb->recs[i].status) {
				tc_vb_fill_err(vb, &vb->recs[i], vb->recs[i].status, err);
				return vb->recs[i].status;
			}
		if (vb->ndone - vb->nreaped >= n)
			break;
		left = tc_ns_left(&end);
		if (left <= 0) {
			for (uint32_t i = vb->nreaped; i < vb->nrecs; i++)
				if (!vb->recs[i].done) {
					tc_vb_fill_err(vb, &vb->recs[i], -ETIMEDOUT, err);
					break;
				}
			return -ETIMEDOUT;
		}
		/* busy-poll while there is progress and briefly after, then sleep */
		if (tc_vb_progress(vb)) {
			idle_from = left;
			continue;
		}
		if (idle_from - left < TC_VB_SPIN_NS)
			continue;
		tc_vb_block(vb, left / 1000000 + 1 < 100 ? (int)(left / 1000000 + 1) : 100);
	}
	vb->nreaped += n;
	if (vb->nreaped == vb->nrecs) {
		/* every transfer posted has finished: records can be reused */
		vb->nrecs = vb->ndone = vb->nreaped = 0;
	}
	return 0;
}

/*
 * The cost model's parameters of this network (tp->cost), measured once per
 * communicator. Verbs has no routers: a message the schedule routes over
 * several torus hops is one RDMA operation, so the model prices it as one
 * transfer (TC_COST_DIRECT): ts + bytes*tw holding the sender's and the
 * receiver's port, then the latency lat, which the messages of one step
 * overlap, and a rendezvous message (above the eager limit) rdv more, its
 * ready-to-receive's trip, which they overlap too. A message's bytes
 * beyond 64 KiB cost tw_big each instead of tw.
 *
 * What is timed is what a collective does: every one of the first Q ranks
 * (Q the largest power of two in the job; the others sit out) runs steps at
 * once, each step waiting for its own messages of the step before, so a
 * step costs what it costs when the whole communicator is busy and its
 * ranks depend on each other (on a host with fewer cores than ranks that
 * includes the scheduling of them all, which a ping-pong of one pair does
 * not see). Two patterns, each TC_VB_PROBE_ROUNDS times after a warm-up
 * (which also makes the connections), each round timed alone and the
 * median kept, then the chain once at a size of MiBs:
 *  - the chain: log2(Q) steps, step j one message to rank + 2^j and one
 *    from rank - 2^j (mod Q), so every rank's step needs every other
 *    rank's earlier ones; per step it costs ts + lat + bytes*tw (+ rdv
 *    above the eager limit). Timed at three sizes: SMALL (eager) c_s, MID
 *    (rendezvous) c_m, LARGE c_l. A shift (bruck's pattern), not an
 *    exchange with rank^(2^j), whose two ranks wake each other. With the
 *    exchange, in the TCG guest (16 ranks on 2 vCPUs, sweeps of 15
 *    rounds), at2-1p measured 1.2-1.9x its price at 16 B-1 KiB in two
 *    sweeps while direct measured 1.06x its own at 1 KiB, so auto took
 *    at2-1p at 1 KiB where direct ran 1.16x faster round by round; with
 *    the shift (one sweep) at2-1p measured 1.03-1.27x its price, direct
 *    0.87-0.94x, and the two were level at 1 KiB. The step itself is
 *    noisy: 2.7-5.3 ms at 64 B over four probes as an exchange, 3.1-5.0
 *    as a shift.
 *  - the burst: one step, a message each way with each of rank^1 ..
 *    rank^k (k = min(BURST, Q-1)): k*ts + lat, b_k.
 *  - the same with every peer, k_all = min(FAN, Q-1) > k: b_all. Where
 *    it costs less than k_all*ts + lat, a port pays ts for fewer of a
 *    step's messages (ts_cap, tc_cost_fit_fan). In the TCG guest (16 ranks
 *    on 2 vCPUs) a step of 8 messages took 15.6-20.4 ms over three probes
 *    and a direct alltoall's one step of 15 at 16-256 B 17-23 ms, where
 *    the linear model said 28-35: past a few peers a step costs about one
 *    round of scheduling every rank, however many more it names.
 *  - the chain at BIG (1 MiB), one round (it costs as much as all the
 *    rounds above together), each step timed and the median step kept:
 *    c_b. tw, the slope from MID to LARGE where each step's overheads
 *    are most of it, is a poor guide to a message of MiBs, which is
 *    mostly bytes: in the TCG guest (16 ranks on rxe0, chain steps
 *    interleaved over sizes, two runs) 64 KiB to 1 MiB cost 0.249 us/B
 *    in both while the probe's tw was 0.195 and 0.391, and over 13
 *    probes 0.148-0.467. So beyond LARGE a message's bytes cost the slope
 *    from c_l to c_b (tc_cost_fit_big), and above BIG its extension (a
 *    little high there: 1 to 2 MiB measured 0.198-0.204 us/B). It adds
 *    log2(Q) steps of 1 MiB: 0.5-1.1 s per communicator in that guest
 *    (c_b 129-269 ms), about as much as the rest of the probe; on a real
 *    NIC 1 MiB is a fraction of a millisecond.
 * Every rank's six times are gathered and each rank takes their medians
 * over the ranks, so every rank prices alike (and picks the same
 * algorithm), and fits ts, lat, tw and rdv to them (tc_cost_fit_direct),
 * tw_big (tc_cost_fit_big) and ts_cap (tc_cost_fit_fan).
 * TC_VERBS_PROBE=0, both TC_COST_TS_US and TC_COST_TW_US set, or the
 * runtime's own exchange (tc_comm_attr.oob_allgather, called once) skips it:
 * the module's default timing with TC_COST_DIRECT (then TC_COST_* apply);
 * TC_VERBS_PROBE=print has rank 0 print the figures and what they came from
 * on stderr.
 */
#define TC_VB_PROBE_SMALL 64
#define TC_VB_PROBE_MID 4096 /* at least; above the eager limit (tc_vb_probe_mid) */
#define TC_VB_PROBE_LARGE 65536
#define TC_VB_PROBE_BIG 1048576
#define TC_VB_PROBE_BURST 8
#define TC_VB_PROBE_ROUNDS 5
#define TC_VB_PROBE_FAN 31 /* the most peers of the all-peers step */
#define TC_VB_PROBE_NFIG 6 /* per rank: c_s, c_m, c_l, b_k, c_b, b_all */
/* the probe's buffer: sends from the first half, receives into the second */
#define TC_VB_PROBE_HALF (TC_VB_PROBE_BIG > TC_VB_PROBE_BURST * TC_VB_PROBE_LARGE ? \
			  TC_VB_PROBE_BIG : TC_VB_PROBE_BURST * TC_VB_PROBE_LARGE)
#define TC_VB_PROBE_TAG 0x70726f6265000000ull /* "probe": no schedule's tag */

/* One step of the probe: a len-byte message to each to[i] and from each from[i], i < n. */
static int tc_vb_probe_step(struct tc_tp *tp, size_t len, const int *to, const int *from, int n)
{
	const uint64_t first = TC_VB_PROBE_TAG + (len << 8) + (n > 1 ? TC_VB_PROBE_BURST : 0);
	struct tc_seg seg[2 * TC_VB_PROBE_FAN];
	struct tc_xfer x[2 * TC_VB_PROBE_FAN];
	struct tc_wait_err we;
	int ret;

	for (int i = 0; i < n; i++) {
		uint64_t tag = first + i; /* the burst's tags are not the chain's */

		seg[2 * i] = (struct tc_seg){ (uint64_t)i * len, len };
		seg[2 * i + 1] = (struct tc_seg){ (uint64_t)TC_VB_PROBE_HALF + i * len, len };
		x[2 * i] = (struct tc_xfer){ .op = TC_XFER_SEND, .peer = to[i], .nsegs = 1, .segs = &seg[2 * i],
					     .tag = tag };
		x[2 * i + 1] = (struct tc_xfer){ .op = TC_XFER_RECV, .peer = from[i], .nsegs = 1,
						 .segs = &seg[2 * i + 1], .tag = tag };
	}
	ret = tc_vb_post(tp, x, 2 * n);
	if (!ret)
		ret = tc_vb_wait(tp, 2 * n, tp->timeout_ms, &we);
	return ret;
}

/* A step of the chain: to rank + d, from rank - d, among the first q ranks. */
static int tc_vb_probe_shift(struct tc_tp *tp, size_t len, int q, int d)
{
	const int to = (tp->rank + d) % q, from = (tp->rank - d + q) % q;

	return tc_vb_probe_step(tp, len, &to, &from, 1);
}

/*
 * The median time over rounds (at most TC_VB_PROBE_ROUNDS) of one step of
 * len-byte messages, in us: with k > 0 the burst (k peers in one step), with
 * k = 0 the chain of log2(q) steps (its time over the steps).
 */
static int tc_vb_probe_time(struct tc_tp *tp, size_t len, int q, int k, int rounds, double *us)
{
	double per[TC_VB_PROBE_ROUNDS];
	int peer[TC_VB_PROBE_FAN], ret = 0, steps = 0;

	for (int d = 1; d < q; d *= 2)
		steps++;
	for (int r = 0; r < rounds && !ret; r++) {
		double t0 = tc_now_us();

		if (k) {
			for (int i = 0; i < k; i++)
				peer[i] = tp->rank ^ (i + 1);
			ret = tc_vb_probe_step(tp, len, peer, peer, k);
		}
		for (int d = 1; !k && d < q && !ret; d *= 2)
			ret = tc_vb_probe_shift(tp, len, q, d);
		per[r] = (tc_now_us() - t0) / (k ? 1 : steps);
	}
	if (ret)
		return tc_err(ret, "transport verbs: probing the network (%s)", tc_strerror(ret));
	/* the median round: one stalled round (a busy host) does not decide it */
	*us = tc_median(per, rounds);
	return 0;
}

/*
 * The chain once at len (TC_VB_PROBE_BIG: a round costs as much as all the
 * others together), each step timed: the median step, so one stalled step
 * does not decide it either.
 */
static int tc_vb_probe_steps(struct tc_tp *tp, size_t len, int q, double *us)
{
	double per[32];
	int ret = 0, steps = 0;

	for (int d = 1; d < q && steps < 32 && !ret; d *= 2) {
		double t0 = tc_now_us();

		ret = tc_vb_probe_shift(tp, len, q, d);
		per[steps++] = tc_now_us() - t0;
	}
	if (ret)
		return tc_err(ret, "transport verbs: probing the network (%s)", tc_strerror(ret));
	*us = tc_median(per, steps);
	return 0;
}

/* The median of the non-negative v[k*NFIG + which], k < n (-1 if none). */
static double tc_vb_median(const double *v, int n, int which, double *tmp)
{
	int m = 0;

	for (int k = 0; k < n; k++)
		if (v[TC_VB_PROBE_NFIG * k + which] >= 0)
			tmp[m++] = v[TC_VB_PROBE_NFIG * k + which];
	return m ? tc_median(tmp, m) : -1;
}

/* The rendezvous size of the chain: the least power of two above the eager limit, at least MID. */
static size_t tc_vb_probe_mid(const struct tc_vb *vb)
{
	size_t mid = TC_VB_PROBE_MID;

	while (mid <= vb->eager)
		mid *= 2;
	return mid;
}

/*
 * This rank's step times among the first q ranks, k the burst, k_all the
 * all-peers step: c_s, c_m, c_l, b_k, c_b, b_all (-1 unless k_all > k).
 */
static int tc_vb_measure(struct tc_tp *tp, int q, int k, int k_all, double *mine)
{
	const int R = TC_VB_PROBE_ROUNDS;
	const size_t len[3] = { TC_VB_PROBE_SMALL, tc_vb_probe_mid(to_vb(tp)), TC_VB_PROBE_LARGE };
	double w;
	void *base;
	int ret;

	ret = tc_vb_buffer(tp, 2 * (size_t)TC_VB_PROBE_HALF, &base);
	if (!ret) /* warm-up: connect, and the first rendezvous */
		ret = tc_vb_probe_time(tp, TC_VB_PROBE_LARGE, q, k, 1, &w);
	if (!ret)
		ret = tc_vb_probe_time(tp, TC_VB_PROBE_SMALL, q, 0, 1, &w);
	for (int i = 0; i < 3 && !ret; i++)
		ret = tc_vb_probe_time(tp, len[i], q, 0, R, &mine[i]);
	mine[3] = 0;
	if (!ret && k > 1)
		ret = tc_vb_probe_time(tp, TC_VB_PROBE_SMALL, q, k, R, &mine[3]);
	if (!ret)
		ret = tc_vb_probe_steps(tp, TC_VB_PROBE_BIG, q, &mine[4]);
	mine[5] = -1;
	if (!ret && k_all > k) /* a warm-up round first: it connects the other peers */
		ret = tc_vb_probe_time(tp, TC_VB_PROBE_SMALL, q, k_all, 1, &w);
	if (!ret && k_all > k)
		ret = tc_vb_probe_time(tp, TC_VB_PROBE_SMALL, q, k_all, R, &mine[5]);
	return ret;
}

static void tc_vb_probe_print(const struct tc_cost_params *p, const double *v, size_t mid, int q, int k, int k_all)
{
	char cap[48] = "every message";

	if (p->ts_cap > 0)
		snprintf(cap, sizeof(cap), "at most %.3g messages", p->ts_cap);
	fprintf(stderr,
		"libtoruscoll: verbs network probe: ts %.6g us, lat %.6g us, tw %.6g us/B, rdv %.6g us above %zu B, "
		"tw %.6g us/B beyond %zu B of a message, ts for %s of a step (medians over %d ranks: a step of "
		"the chain %.6g / %.6g / %.6g / %.6g us at %d / %zu / %d / %d B, a step of %d messages %.6g us",
		p->ts_us, p->lat_us, p->tw_us_per_byte, p->rdv_us, p->eager_bytes,
		p->big_bytes ? p->tw_big_us_per_byte : p->tw_us_per_byte, p->big_bytes, cap, q, v[0], v[1], v[2], v[4],
		TC_VB_PROBE_SMALL, mid, TC_VB_PROBE_LARGE, TC_VB_PROBE_BIG, k, v[3]);
	if (v[5] > 0)
		fprintf(stderr, ", of %d %.6g us", k_all, v[5]);
	fprintf(stderr, ")\n");
}

static int tc_vb_probe(struct tc_tp *tp)
{
	struct tc_vb *vb = to_vb(tp);
	const char *env = getenv("TC_VERBS_PROBE");
	double mine[TC_VB_PROBE_NFIG], *all, v[TC_VB_PROBE_NFIG];
	int ret = 0, q = 1, k, k_all;

	tc_cost_params_default(&tp->cost);
	tp->cost.flags = TC_COST_DIRECT;
	tp->cost.hop_us = 0;
	tp->cost.eager_bytes = vb->eager;
	/* the runtime's own exchange is called once per communicator (toruscoll.h):
	 * no second one for the figures, so no probe */
	if ((env && !strcmp(env, "0")) || (getenv("TC_COST_TS_US") && getenv("TC_COST_TW_US")) ||
	    vb->boot.oob_allgather)
		return 0;
	while (2 * q <= vb->size)
		q *= 2;
	k = q - 1 < TC_VB_PROBE_BURST ? q - 1 : TC_VB_PROBE_BURST;
	k_all = q - 1 < TC_VB_PROBE_FAN ? q - 1 : TC_VB_PROBE_FAN;
	for (int i = 0; i < TC_VB_PROBE_NFIG; i++)
		mine[i] = -1;
	if (vb->rank < q && k > 0) {
		ret = tc_vb_measure(tp, q, k, k_all, mine);
		if (ret)
			return ret;
	}
	all = calloc((TC_VB_PROBE_NFIG + 1) * (size_t)vb->size, sizeof(*all));
	if (!all)
		return tc_err(-ENOMEM, "transport verbs: out of memory");
	ret = tc_boot_allgather(&vb->boot, mine, all, sizeof(mine), tp->timeout_ms);
	for (int i = 0; i < TC_VB_PROBE_NFIG && !ret; i++)
		v[i] = tc_vb_median(all, vb->size, i, all + TC_VB_PROBE_NFIG * vb->size);
	if (!ret && v[0] >= 0) {
		const size_t len[3] = { TC_VB_PROBE_SMALL, tc_vb_probe_mid(vb), TC_VB_PROBE_LARGE };

		tc_cost_fit_direct(v, len, v[3], k, &tp->cost);
		tc_cost_fit_big(v[4], TC_VB_PROBE_BIG, v[2], TC_VB_PROBE_LARGE, &tp->cost);
		if (v[5] > 0)
			tc_cost_fit_fan(v[5], k_all, TC_VB_PROBE_SMALL, k, &tp->cost);
		if (env && !strcmp(env, "print") && vb->rank == 0)
			tc_vb_probe_print(&tp->cost, v, len[1], q, k, k_all);
	}
	free(all);
	return ret;
}

const struct tc_transport_ops tc_transport_verbs = {
	.name = "verbs",
	.open = tc_vb_open,
	.close = tc_vb_close,
	.buffer = tc_vb_buffer,
	.post = tc_vb_post,
	.wait = tc_vb_wait,
};
