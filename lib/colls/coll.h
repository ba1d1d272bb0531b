/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to libtoruscoll: the everyday collectives (barrier, bcast, reduce,
 * allreduce, reduce_scatter, allgatherv, alltoallv), their nonblocking forms
 * and the per-communicator request queue.
 *
 * Every collective is a sequence of line phases: along one dimension d, the
 * nodes of each line (the nodes that differ only in coordinate d: a ring if
 * d wraps, a path if not) run one of two contention-free patterns over
 * items that live in the transport buffer (line.c):
 *
 *   line allgather (tc_line_ag): the item of line coordinate j goes out in
 *     both directions, hop by hop, until every node of the line has it. On
 *     a ring of n: floor(n/2) hops in +, floor((n-1)/2) in -; on a path: to
 *     both ends. In step s every directed link carries one item.
 *   line reduce-scatter (tc_line_rs): the exact reverse: the contributions
 *     to chunk c travel toward coordinate c from both sides, each node
 *     combining its own on the way, so every link carries one chunk per step.
 *
 * Line fold order (what makes reductions deterministic). For chunk c of a
 * line of n with values x_0..x_{n-1} (by coordinate) the result is
 *	(L op x_c) op R
 * where L is the left fold of the values before c in + order and R the left
 * fold of the values after c in - order:
 *	ring:  L = (..((x_{c-H+} op x_{c-H+ +1}) op ..) op x_{c-1}, H+ = floor(n/2)
 *	       R = (..((x_{c+H-} op x_{c+H- -1}) op ..) op x_{c+1}, H- = floor((n-1)/2)
 *	       (indices mod n)
 *	path:  L = (..((x_0 op x_1) op ..) op x_{c-1}
 *	       R = (..((x_{n-1} op x_{n-2}) op ..) op x_{c+1}
 * an empty L or R is left out. The operands of every op are in that order.
 */
#ifndef TC_COLL_H
#define TC_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/comm.h"

/* Tags of these collectives: bit 63 set (the schedule executor's tags have
 * it clear), bits 56..62 clear (a sub-communicator's context goes there,
 * transport/transport.h), the communicator's call sequence number modulo
 * 2^24 in bits 32..55, then phase (6 bits), step (24 bits) and direction
 * (2 bits). Calls of one communicator run one after another, so a sequence
 * number that wraps after 16 M calls meets no call still in flight. */
#define TC_COLL_TAG_BIT (1ull << 63)

/* One collective call, as issued (validated before it is queued). */
struct tc_coll_args {
	enum tc_coll_id kind;
	const void *sendbuf;
	void *recvbuf;	  /* bcast: the buffer */
	size_t count;	  /* elements (bcast, reduce, allreduce, reduce_scatter: per rank); bytes: alltoall, allgather block, allgatherv send */
	enum tc_datatype dt;
	enum tc_op op;
	int root;
	const size_t *scounts, *sdispls; /* alltoallv */
	const size_t *rcounts, *rdispls; /* allgatherv, alltoallv */
};

/* A step being assembled: at most two sends and two receives per dimension
 * phase; 4 is enough for every collective here. */
#define TC_STEP_MAX 4

struct tc_step {
	unsigned int n;
	struct tc_xfer x[TC_STEP_MAX];
	struct tc_seg seg[TC_STEP_MAX];
	struct tc_sge sge[TC_STEP_MAX];
	uint32_t key[TC_STEP_MAX]; /* zero copy: the registration a segment names, 0: the run's key */
	uint8_t dir[TC_STEP_MAX]; /* 0: moves +, 1: moves - (one-port runs them apart) */
};

/* What one collective is executing (for tags and error messages). */
struct tc_run {
	struct tc_comm *comm;
	const char *name;
	char *base;	/* the transport buffer */
	uint64_t seq;	/* call sequence number */
	int phase;
	const char *what; /* the phase, for error messages */
	struct tc_umem u; /* zero copy (u.on): offsets name key, not the transport buffer */
	uint32_t key;
	/* prog.c: recording a program: steps are appended here, not run, and
	 * tagged in the programs' tag space with rec_kind (tc_run_tag) */
	struct tc_rec *rec;
	enum tc_coll_id rec_kind;
};

/* reduce_ops.c */
size_t tc_dt_size(enum tc_datatype dt);
int tc_dt_op_check(const char *who, enum tc_datatype dt, enum tc_op op);
/* dst[i] = a[i] op b[i] for n elements; dst may alias a or b. */
void tc_reduce_apply(enum tc_datatype dt, enum tc_op op, void *dst, const void *a, const void *b, size_t n);

/* line.c */
int tc_run_begin(struct tc_run *r, struct tc_comm *comm, const char *name, size_t bytes);
/* Add a transfer of one segment; route: the send's signed hops (NULL for a receive). */
/* One transfer, segments unset (route NULL: none). */
void tc_xfer_init(struct tc_xfer *x, uint8_t op, int port, const int8_t *route, int peer, uint64_t tag);
void tc_step_add(struct tc_step *st, uint8_t op, int port, const int8_t *route, int peer, uint64_t off, uint64_t len,
		 uint64_t tag, int dir);
int tc_step_run(struct tc_run *r, struct tc_step *st, unsigned int step);
uint64_t tc_run_tag(const struct tc_run *r, unsigned int step, unsigned int dir);
int tc_line_ag(struct tc_run *r, int d, const uint64_t *off, const uint64_t *len);
/* slots: 4 scratch areas (+ even/odd, - even/odd) of at least the largest chunk. */
int tc_line_rs(struct tc_run *r, int d, const uint64_t *off, const uint64_t *cnt, enum tc_datatype dt,
	       enum tc_op op, const uint64_t *slots);

/* prog.c: barrier and bcast as one program. */
struct tc_cprog;
/* Append the step's transfers to r->rec; 0 or -ENOMEM. */
int tc_rec_step(struct tc_run *r, const struct tc_step *st);
/* Run the call (begun, its buffer filled) as one program: *ran 1 and the
 * call's result, or *ran 0 (the caller runs the steps, then marks *entry
 * warm with tc_cprog_warm on success). rec records the call's phases. */
int tc_cprog_run(struct tc_run *r, enum tc_coll_id kind, int root, size_t bytes,
		 int (*rec)(struct tc_run *r, void *arg), void *arg, int *ran, struct tc_cprog **entry);
void tc_cprog_warm(struct tc_cprog *entry);

/* bcast.c, allreduce.c, v.c: run one call on the calling thread. */
int tc_exec_barrier(struct tc_comm *comm);
int tc_exec_bcast(struct tc_comm *comm, const struct tc_coll_args *a);
int tc_exec_reduce(struct tc_comm *comm, const struct tc_coll_args *a);
int tc_exec_allreduce(struct tc_comm *comm, const struct tc_coll_args *a);
/* probe.c: measure this host's wall clock on the fabric (a collective over
 * every node) and make it comm's cost parameters (TC_COST_HOST). */
int tc_probe_wall(struct tc_comm *comm);
int tc_exec_reduce_scatter(struct tc_comm *comm, const struct tc_coll_args *a);
int tc_exec_allgatherv(struct tc_comm *comm, const struct tc_coll_args *a);
int tc_exec_alltoallv(struct tc_comm *comm, const struct tc_coll_args *a);

#endif /* TC_COLL_H */
