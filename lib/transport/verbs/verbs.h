// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The verbs transport's private header: one rank of a job on an RDMA device
 * (InfiniBand, RoCE, soft-RoCE), reliable-connected QPs made with librdmacm.
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
 *  - eager, up to TC_VERBS_EAGER bytes (by default 8152, an 8 KiB receive
 *    slot after the 40-byte header, whatever the job size): the sender
 *    SENDs header (tag, length) and data, gathered straight from its
 *    registered buffer, into one of the receive slots of the shared receive
 *    queue; the receiver copies the data to where its receive points. One
 *    that arrives before its receive is posted keeps its slot until then
 *    (its credit is returned only then, so the sender cannot overrun the
 *    slots).
 *  - rendezvous above that: the receive posts a ready-to-receive message
 *    (RTR: tag, address, length, rkey, record index) to its source; the
 *    matching send (same source, same tag) RDMA-WRITEs the bytes straight
 *    into the receiver's buffer WITH_IMM, the immediate carrying the
 *    receiver's record index, so the receive completes on it. No copy, and
 *    no byte lands where nobody asked for it.
 * Small messages go eager because the RTR's extra one-way trip dominates
 * them, and the limit sits where a 4 KiB block's direct message still goes
 * eager (what was measured either way: docs/verbs.md).
 *
 * Receives: one shared receive queue (SRQ) for every QP of the rank, as
 * UCX's rc_verbs with SRQ and MVAPICH do, holding TC_VB_POOL slots (or one
 * per peer when the job has more peers than that): the eager limit, the
 * slot memory and the receives posted no longer grow with the job.
 *
 * Flow control: RTRs, eager messages, goodbyes and WRITE_WITH_IMMs all
 * consume a receive at the peer, so each side holds credits: a window of
 * receives of the shared pool the peer set aside for it (the same on every
 * rank: the pool divided by the peers, at most TC_VB_CREDITS, at least 1)
 * and has not reported consumed. The windows of all peers add up to no more
 * than the receives posted, so no send ever finds the queue empty: the QPs
 * are set to rnr_retry 0, so a receiver-not-ready would fail the transfer
 * loudly instead of stalling 0.66 s per retry (rxe's counters confirm none
 * occur). Every RTR, eager send, goodbye and data write spends one; the
 * receiver reposts a receive as soon as it is done with it and returns the
 * credits piggybacked on its next RTR or eager header (a field) or write
 * (the immediate's top byte), or, once half the window is owed, by an RDMA
 * write of the running total of credits so returned into the peer's credit
 * word (its card names the address): a write consumes no receive, so
 * returning credits needs no reserve in the pool. Send queue slots are
 * counted too; what has no credit or slot waits in a per-peer queue, sent in
 * order as completions come back. TC_VERBS_WRITES may also cap the rank's
 * rendezvous writes in flight (over all peers): a write past it waits there
 * the same way.
 *
 * Programs (TC_VERBS_PROG=1; not yet the default: docs/verbs.md): from a
 * collective's second call on, a plan whose messages the process need not
 * pack between steps runs as one program (prog): each
 * transfer is posted once the transfers it depends on have completed (the
 * data's own order: a send after the receives that wrote what it reads, a
 * receive after the transfers that read or wrote where it lands), not when
 * its whole step's are; every RTR whose receive depends on nothing leaves
 * at once, up to a window of TC_VB_PROG_RDV_BYTES of rendezvous receives
 * outstanding (at least one), taken in the plan's order. By default, or
 * with tc_comm_attr.offload = TC_OFFLOAD_OFF: step by step.
 *
 * Completion: wait polls the CQ for a bounded time, then arms the completion
 * channel and sleeps in poll() on it and the rdma_cm event channel (so a
 * disconnect or a connection request is seen while blocked). A rejected
 * connection fails every transfer with that peer at once; a failed
 * completion or the peer's disconnect moves its QP to the error state and
 * fails them once the QP has flushed (so data that arrived just before is
 * still delivered); the deadline fails the step. Each names the peer (rank
 * and host) and what was still awaited from it.
 *
 * The files, one job each (declarations below are grouped by them):
 *   addr.c   the device and its IPv4 address, the connection cards
 *   dims.c   the logical torus the ranks form
 *   peer.c   per-peer state: connecting, credits, queues, posting, failure
 *   event.c  rdma_cm events and completions, progress, blocking
 *   ops.c    the transport ops (open, close, buffer, post, wait, prog)
 *   probe.c  the cost probe: the model's parameters of this network
 */
#ifndef TC_TRANSPORT_VERBS_H
#define TC_TRANSPORT_VERBS_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
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

#define TC_VB_CREDITS 64  /* receives per peer a sender may consume unreported, at most */
#define TC_VB_POOL 512	  /* receive slots in the shared receive queue (at least one per peer) */
#define TC_VB_SQ_EXTRA 4  /* send-queue slots per peer beyond its window: credit writes, the goodbye */
#define TC_VB_SLOT_MIN 1024 /* bytes per receive slot at least: a control message or an eager one */
#define TC_VB_SLOT_MAX 16384
#define TC_VB_TXH 64	  /* bytes per eager-send header in the send ring */
#define TC_VB_SPIN_NS 20000 /* busy-poll this long before blocking */
#define TC_VB_WRITES 0	    /* rendezvous writes in flight a rank at most (0: no limit) */
#define TC_VB_ACK_TIMEOUT 0 /* the QPs' local ACK timeout exponent (0: rdma_cm's default) */
/* A program's rendezvous receives posted and not done: at most this many
 * bytes (at least one receive), so its writes do not all arrive at once
 * (TC_VERBS_PROG_WINDOW; why this value: docs/verbs.md). */
#define TC_VB_PROG_RDV_BYTES (1u << 20)
/* Bytes of header and data a QP is asked to take inline (the device may
 * grant less, or refuse and get sizeof(struct tc_vb_msg)). */
#define TC_VB_INLINE 256
/* Read the rdma_cm channel (a system call) on every this many progress
 * calls, and on every one while a connection is being made or after poll()
 * saw the channel readable. */
#define TC_VB_CM_EVERY 64
#define TC_VB_RESOLVE_MS 2000
#define TC_VB_LINGER_MS 2000 /* longest a destroy waits for its peers' goodbyes */
#define TC_VB_MAGIC 0x74637662u /* "tcvb" */

/* The immediate of a data write: receiver's record, an error bit, credits. */
#define TC_VB_IMM_RID_MASK 0xfffffu
#define TC_VB_IMM_ERR (1u << 20)
#define TC_VB_IMM_CREDIT_SHIFT 24

/* What a work request was, in the top byte of its wr_id: a receive slot, a
 * control message, an eager send from the buffer, a rendezvous data write. */
enum tc_vb_wr { TC_VB_WR_RECV = 1, TC_VB_WR_CTRL, TC_VB_WR_DATA, TC_VB_WR_WRITE };
enum tc_vb_msg_type { TC_VB_MSG_RTR = 1, TC_VB_MSG_EAGER = 3, TC_VB_MSG_BYE };
/* DRAINING: the connection broke; its QP is in the error state and flushes
 * what was posted (and a last zero-byte write posted after it, so that what
 * the peer delivered before is reaped first) before the peer's transfers are
 * failed (FAILED). */
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
/* The default (a 4 KiB block's direct message goes eager). */
#define TC_VB_EAGER_CAP (8192 - sizeof(struct tc_vb_msg))

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
	uint32_t credit_rkey; /* the credit words: peers RDMA-write returned credits there */
	uint64_t credit_addr; /* uint64_t per rank, indexed by the writer's rank */
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
	uint32_t credits;    /* receives the peer set aside for us, unspent */
	uint32_t owed;	     /* receives we reposted and have not reported */
	uint64_t returned;   /* credits we returned by writing its credit word (running total) */
	uint64_t seen;	     /* our credit word for it as last read (running total it returned) */
	uint32_t sq_used;
	struct tc_vb_rtr *rtr;
	uint32_t nrtr, cap_rtr;
	struct tc_vb_unexp *unexp;
	uint32_t nunexp, cap_unexp;
	uint32_t tx_next;    /* eager-send header ring position */
	uint32_t inline_max; /* header and data its QP takes inline (IBV_SEND_INLINE) */
	uint8_t bye_sent, bye_rcvd; /* the closing handshake (tc_vb_linger) */
	struct tc_vb_op *q;
	uint32_t qhead, qtail, cap_q;
	struct tc_vb_card card;
};

/* One posted transfer. */
struct tc_vb_rec {
	uint8_t op; /* TC_XFER_* */
	uint8_t done, matched, queued;
	uint8_t capped; /* a write that waited for the rank's writes in flight (TC_VERBS_WRITES) */
	uint8_t closed; /* failed by the peer's goodbye */
	int32_t peer;
	int32_t status;
	uint64_t tag, off, len;
	uint64_t raddr;
	uint32_t rkey, rid;
	/* TC_VERBS_TRACE only (else 0), CLOCK_MONOTONIC ns: posted by the
	 * executor; its RTR, eager message or write handed to the QP; a
	 * send's RTR arrived; seen done (stamped by the wait that saw it) */
	uint64_t t_post, t_issue, t_match, t_done;
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
	struct ibv_srq *srq;
	char *slots; /* nslots receive slots, then P * sq eager-send headers, then P credit words */
	struct ibv_mr *slots_mr;
	uint64_t *credit_word; /* [rank]: the running total of credits that rank returned to us */
	struct ibv_mr *credit_mr;
	uint32_t eager;	 /* messages up to this many bytes go eager (0: none) */
	uint32_t slot;	 /* bytes per receive slot: the header and eager bytes, 64-aligned */
	uint32_t window; /* credits each peer starts with: the pool shared out */
	uint32_t nslots; /* receive slots in the SRQ: (size - 1) * window */
	uint32_t sq;	 /* send-queue slots per peer: window + TC_VB_SQ_EXTRA */
	uint32_t srq_posted; /* receives posted in the SRQ, not completed */
	uint8_t closing;     /* in tc_vb_linger: return every owed credit at once */
	uint8_t starved;     /* a queued operation waits for a credit write (no completion comes) */
	/* QP number -> rank, open addressing (qpn_cap a power of two, rank + 1; 0 empty) */
	struct { uint32_t qpn, rank1; } *qpn_map;
	uint32_t qpn_cap;
	struct tc_vb_peer *peers;
	struct tc_boot boot;
	int size, rank;
	uint32_t seq;
	char dev_name[64];
	struct tc_vb_rec *recs;
	uint32_t nrecs, cap_recs, ndone, nreaped;
	uint32_t *prog_rec; /* prog: transfer -> its record, UINT32_MAX while not posted */
	uint32_t cap_prog;
	char what[200]; /* the detail of the last failure */
	uint32_t cm_tick; /* progress calls since the rdma_cm channel was last read */
	uint8_t cm_check; /* read it on the next progress call */
	uint8_t spin_yield; /* sched_yield() between busy polls (TC_VERBS_YIELD) */
	uint8_t no_inline;  /* TC_VERBS_INLINE=0: every eager send from the registered buffer */
	uint8_t prog;       /* TC_VERBS_PROG=1: programs (prog); default 0, step by step */
	uint64_t prog_rdv_bytes; /* prog: rendezvous receive bytes outstanding at most (TC_VERBS_PROG_WINDOW) */
	int64_t spin_ns;    /* busy-poll this long after the last event (TC_VERBS_SPIN_US) */
	/* rendezvous writes posted and not completed, over all peers, and the
	 * most allowed at once (TC_VERBS_WRITES; 0: no limit) */
	uint32_t writes_out, writes_max;
	uint32_t writes_hwm; /* the most writes in flight at once (TC_VERBS_STATS) */
	/* the QPs' local ACK timeout, 4.096 us * 2^ack_timeout (TC_VERBS_ACK_TIMEOUT;
	 * 0: rdma_cm's own) */
	uint8_t ack_timeout;
	uint64_t n_capped;   /* writes that waited for that limit (TC_VERBS_STATS) */
	/* what waiting did, for TC_VERBS_STATS (printed by close) */
	uint64_t n_progress, n_cm_reads, n_sleeps, n_inline, n_progs;
	uint64_t n_window; /* prog turns that held a rendezvous receive back for the window */
	/* TC_VERBS_TRACE: this rank prints a line per step or program */
	uint8_t trace;
	uint32_t trace_seq;	 /* steps and programs traced so far */
	uint64_t trace_end;	 /* when the last one ended (ns) */
	uint64_t trace_sleeps, trace_starved; /* n_sleeps, starved turns at its end */
	uint64_t n_starved;	 /* turns that found a queued operation waiting for a credit write */
};

static inline uint64_t tc_vb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline struct tc_vb *to_vb(struct tc_tp *tp)
{
	return tp->priv;
}

static inline char *tc_vb_slot(const struct tc_vb *vb, uint32_t slot)
{
	return vb->slots + (size_t)slot * vb->slot;
}

static inline const char *tc_vb_host(const struct tc_vb *vb, int rank)
{
	return vb->peers[rank].card.host[0] ? vb->peers[rank].card.host : "?";
}

/* addr.c */
int tc_vb_find_addr(const char *want, char *name, size_t name_len, uint32_t *ipv4);
int tc_vb_check_cards(struct tc_vb *vb, struct tc_vb_card *all);

/* dims.c */
int tc_vb_shape(struct tc_shape *sh, const char *dims, int size);

/* peer.c */
void tc_vb_peer_fail(struct tc_vb *vb, int rank, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void tc_vb_peer_down(struct tc_vb *vb, int rank, int err, const char *why);
void tc_vb_drained(struct tc_vb *vb, int rank);
int tc_vb_post_recv_slot(struct tc_vb *vb, uint32_t slot);
int tc_vb_qp_rank(const struct tc_vb *vb, uint32_t qpn);
int tc_vb_make_qp(struct tc_vb *vb, int rank, struct rdma_cm_id *id);
void tc_vb_conn_param(struct tc_vb *vb, struct rdma_conn_param *cp, struct tc_vb_hello *h);
int tc_vb_connect(struct tc_vb *vb, int rank);
int tc_vb_send_ctrl(struct tc_vb *vb, int rank, const struct tc_vb_msg *m);
uint8_t tc_vb_take_owed(struct tc_vb_peer *pe);
void tc_vb_read_credits(struct tc_vb *vb, int rank);
int tc_vb_owes(const struct tc_vb *vb, const struct tc_vb_peer *pe);
void tc_vb_flush(struct tc_vb *vb, int rank);
int tc_vb_enqueue(struct tc_vb *vb, int rank, uint8_t kind, uint32_t rec);
int tc_vb_match(struct tc_vb *vb, uint32_t rec, const struct tc_vb_rtr *t);

/* event.c */
void tc_vb_eager_deliver(struct tc_vb *vb, uint32_t rec, const char *slot, uint64_t len);
int tc_vb_progress(struct tc_vb *vb);
void tc_vb_block(struct tc_vb *vb, int ms);

/* ops.c */
int tc_vb_buffer(struct tc_tp *tp, size_t bytes, void **base);
int tc_vb_post(struct tc_tp *tp, const struct tc_xfer *x, unsigned int n);
int tc_vb_wait(struct tc_tp *tp, unsigned int n, int timeout_ms, struct tc_wait_err *err);

/* probe.c */
int tc_vb_probe(struct tc_tp *tp);

#endif /* TC_TRANSPORT_VERBS_H */
