/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The transport interface: what an executor needs from a network, shaped so
 * the torus device, RDMA verbs and the simulator all fit it.
 *
 * A transport owns one buffer per communicator (the device's mapped buffer
 * matrix, a registered memory region, or plain memory for the simulator).
 * Executors address it by (offset, length) segments. A step is posted as one
 * batch of sends and receives, then the executor waits for that many
 * completions. Sends are matched to receives by (source node, arrival port,
 * tag); a transport that has no ports (verbs) matches by (source, tag).
 *
 * A transport that can reach the caller's own memory (the device, with
 * TORUS_FEAT_MR) also registers ranges of it (reg/dereg): a transfer may then
 * name its segments as (key, offset, length), key TC_KEY_BUFFER being the
 * transport buffer, and mix both in one gather or scatter list.
 */
#ifndef TC_TRANSPORT_H
#define TC_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "core/cost.h"
#include "core/shape.h"

struct tc_comm_attr;
struct tc_transport_ops;

/*
 * The transport handle: all a transport sees of the communicator that owns
 * it. The caller sets ops and timeout_ms and zeroes the rest before open;
 * open fills shape, rank, max_segs, cost (and fabric_id on the device) and
 * keeps its own state in priv.
 */
struct tc_tp {
	const struct tc_transport_ops *ops;
	void *priv;		/* the transport's own state */
	struct tc_shape shape;	/* filled by open */
	int rank;		/* filled by open */
	uint32_t max_segs;	/* filled by open: most segments per transfer, 0 = no limit */
	uint64_t max_reg_bytes; /* filled by open: longest registration, 0 = none (no reg op) */
	int timeout_ms;		/* a step's wait limit, set before open */
	uint32_t fabric_id;	/* dev: the fabric */
	/* Filled by open: the timing of this network in the cost model's terms
	 * (block_bytes unused), what the algorithm choice prices with. The
	 * device reads its fabric's own; a transport without one sets
	 * tc_cost_params_default(). The communicator then applies TC_COST_*. */
	struct tc_cost_params cost;
	/* Counted by the transport: this rank's sends posted so far by each
	 * protocol (verbs: eager into a receive slot, or rendezvous; a
	 * transport with one protocol leaves both 0). tc_coll_last reports
	 * a call's share. */
	uint64_t sends_eager, sends_rdv;
	/* Counted by the device: the calls it made of each kind (a post or
	 * program post, a completion wait, a registration or deregistration),
	 * so tc_coll_last can say what a collective cost in system calls. */
	uint64_t n_posts, n_waits, n_regs;
	int offload; /* filled by open: prog can run a whole plan (TC_DEV_OFFLOAD, TC_VERBS_PROG, attr) */
	/* Filled by open: a program's messages share links and port queues
	 * (the device's fabric), so tc_plan_deps keeps their step order there
	 * too; 0 (verbs: a QP per peer): only the data's own order. */
	int prog_links;
	/* Set by the caller around one call: the application does not wait
	 * for it (a tc_i* request on the progress thread), so a program is
	 * posted to progress on its own (the device: TORUS_PROG_QUEUE_ONLY,
	 * the poster runs no engine) rather than run by the poster first. */
	int detached;
};

struct tc_seg {
	uint64_t offset, length;
};

/* A segment of a registration (the device's struct torus_sge). */
struct tc_sge {
	uint32_t key; /* TC_KEY_BUFFER or from reg */
	uint32_t __pad;
	uint64_t offset, length;
};
#define TC_KEY_BUFFER 0u

#define TC_XFER_SEND 1
#define TC_XFER_RECV 2

/*
 * Tag space. The executors' tags leave bits 56..62 clear (runtime/plan.c:
 * step << 32 | message, the step below TC_TAG_STEP_LIMIT; colls/coll.h:
 * bit 63, a 24-bit call number from bit 32). A sub-communicator (sub.c)
 * ORs its context, 1..TC_TAG_CTX_MAX, into those bits, because the device
 * matches a receive by (arrival port, tag) alone: without it, a message of
 * the parent's call, or of another sub that shares the receiving node, on
 * the same port with the same step and message number would match the
 * sub's receive.
 */
#define TC_TAG_CTX_SHIFT 56
#define TC_TAG_CTX_MAX 127u
#define TC_TAG_CTX_MASK ((uint64_t)TC_TAG_CTX_MAX << TC_TAG_CTX_SHIFT)
#define TC_TAG_STEP_LIMIT (1u << 24)

struct tc_xfer {
	uint8_t op;    /* TC_XFER_* */
	uint8_t port;  /* send: first-hop port; recv: arrival port */
	int8_t route[TC_MAX_DIMS]; /* send: signed hops per dimension */
	int32_t peer;  /* send: destination node; recv: source node */
	uint32_t nsegs;
	const struct tc_seg *segs;
	const struct tc_sge *sges; /* instead of segs when not NULL (a transport with reg) */
	uint64_t tag;
};

/* Why a wait failed: filled on -ETIMEDOUT / -EIO so errors can say which
 * port and peer a step was waiting for. */
struct tc_wait_err {
	int status;   /* first failing completion's status, or -ETIMEDOUT */
	int port;     /* -1 if unknown (or no ports: verbs) */
	int peer;     /* -1 if unknown */
	uint64_t tag;
	const char *detail; /* NULL, or the transport's words: the peer's host and what was missing;
			     * valid until the transport's next call */
	int xfer;	    /* prog: the transfer that failed or was still waited for, else -1 */
};

/*
 * A program as the transport encodes it, built on a plan's first program
 * call and kept with the plan (runtime/plan.c frees it): the descriptors
 * name the transfers' segment lists by address, so a later call of the
 * same plan posts it as it is (zero copy: tc_plan_keys writes the call's
 * keys into those lists). err: the build's refusal (a module limit), kept
 * so that later calls do not build it again.
 */
struct tc_prog_built {
	const struct tc_xfer *x; /* the transfers it encodes */
	int err;
	uint32_t count, ncounters;
	void *descs; /* count descriptors in the transport's encoding */
	uint32_t *map; /* count entries: descriptor -> transfer */
};

/*
 * A program (the device with TORUS_FEAT_PROGRAM): transfer i starts once
 * every transfer deps[dep_first[i] .. dep_first[i + 1]) has completed
 * (each index below i), with no process step in between. *built: the
 * encoding kept from an earlier call of the same transfers, or NULL (the
 * transport builds it there).
 */
struct tc_prog {
	const struct tc_xfer *x;
	unsigned int n;
	const uint32_t *dep_first; /* n + 1 entries */
	const uint32_t *deps;
	struct tc_prog_built **built;
};

struct tc_transport_ops {
	const char *name;
	/* Bind tp to its node; fill tp->shape, tp->rank, tp->max_segs, tp->cost. */
	int (*open)(struct tc_tp *tp, const struct tc_comm_attr *attr);
	void (*close)(struct tc_tp *tp);
	/* Make at least bytes of buffer available; *base is its address in
	 * this process. The device cannot grow: -ENOSPC. */
	int (*buffer)(struct tc_tp *tp, size_t bytes, void **base);
	/* Post n transfers as one submission. */
	int (*post)(struct tc_tp *tp, const struct tc_xfer *x, unsigned int n);
	/* Wait until n completions of posted transfers arrived (or timeout_ms
	 * passed: -ETIMEDOUT, err filled). A failed completion: its status. */
	int (*wait)(struct tc_tp *tp, unsigned int n, int timeout_ms, struct tc_wait_err *err);
	/* Pin [addr, addr + len) of this process for transfers (write: receives
	 * may land in it) and name it by *key; NULL when the transport has none.
	 * The pinning is a snapshot: memory unmapped and mapped again at the
	 * same address is not seen, so a caller keeps a key no longer than it
	 * knows the range to stay mapped (runtime/umem.c: one call). */
	int (*reg)(struct tc_tp *tp, const void *addr, size_t len, int write, uint32_t *key);
	/* Unpin; -EBUSY while a posted transfer still uses it. */
	int (*dereg)(struct tc_tp *tp, uint32_t key);
	/* Run a program and wait for it (timeout_ms for the whole; err
	 * filled on failure, err->xfer naming the transfer); NULL when the
	 * transport has none. *posted 0 with an error: nothing was posted (a
	 * limit of the network: run it step by step instead). */
	int (*prog)(struct tc_tp *tp, const struct tc_prog *pg, int timeout_ms, struct tc_wait_err *err, int *posted);
};

extern const struct tc_transport_ops tc_transport_dev;
/* dev.c: 0 if a module's handshake has every command and feature the
 * library needs (whatever its ABI version, from 1 on); else -EPROTO or
 * -EOPNOTSUPP naming what is missing. path names the device in the error. */
struct torus_handshake;
int tc_dev_check_handshake(const struct torus_handshake *hs, const char *path);
extern const struct tc_transport_ops tc_transport_sim;
extern const struct tc_transport_ops tc_transport_verbs; /* when built with TC_HAVE_VERBS */

/*
 * sub.c: a communicator on a box of its parent's torus (core/embed.h). tp
 * gets the box's logical shape and rank; its transfers go out on the
 * parent's transport ptp (same buffer, same completions) with ports, routes
 * and peers mapped to the parent's and ctx in the tags' context bits; a
 * failed wait names logical ports and ranks. nodes[i]: the parent node of
 * logical rank i (e->shape.nodes entries, copied). Closing tp leaves ptp
 * open.
 */
struct tc_embed;
int tc_sub_open(struct tc_tp *tp, struct tc_tp *ptp, const struct tc_embed *e, const int *nodes, int rank,
		uint32_t ctx);
/* The parent node of logical rank r of a sub transport. */
int tc_sub_node(const struct tc_tp *tp, int r);

#endif /* TC_TRANSPORT_H */
