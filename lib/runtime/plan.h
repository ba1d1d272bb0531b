/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A node's plan of a schedule: buffer layout and per-step transfers (plan.c). */
#ifndef TC_PLAN_H
#define TC_PLAN_H

#include "core/part.h"
#include "runtime/comm.h"

struct tc_stage {
	uint32_t xfer;	     /* index into xfers */
	uint32_t seg0, nsegs; /* the message's own segments in segs */
	uint64_t off;	     /* its place in the staging area */
};

struct tc_plan {
	const struct tc_part *part; /* the node's part it was built from */
	size_t m;
	unsigned int used; /* comm->plan_clock at last use */

	size_t buf_bytes;
	size_t send_off, recv_off; /* alltoall; allgather uses recv_off = 0 */
	uint32_t nslots;	   /* alltoall transit slots */

	uint32_t nsteps;      /* steps in which this node sends or receives */
	uint32_t *step_first; /* nsteps + 1 entries into xfers */
	uint32_t *step_id;    /* schedule step of each */
	struct tc_xfer *xfers;
	struct tc_seg *segs;
	uint32_t nsegs;

	/* Messages with more segments than the transport takes go through a
	 * staging area at stage_off: packed before the post, unpacked after
	 * the wait. stages[stage_first[i] .. stage_first[i+1]) for step i. */
	uint32_t max_segs;
	size_t stage_off;
	uint32_t *stage_first;
	struct tc_stage *stages;

	/* A zero-copy call (runtime/umem.c) runs the same transfers on the
	 * caller's buffers: the send region is its send buffer, the receive
	 * region its receive buffer, and what lies above user_end (transit
	 * slots, staging) moves down by user_end in the transport buffer.
	 * Built on the first such call (tc_plan_user): per segment its region
	 * (TC_UREG_*) and offset there; tc_plan_keys fills in the call's keys. */
	size_t user_end;
	struct tc_xfer *uxfers;
	struct tc_sge *sges;
	uint8_t *sreg;

	/* The plan as one program (tc_plan_deps, built on the first offloaded
	 * call): transfer i of xfers waits for deps[dep_first[i] ..
	 * dep_first[i + 1]). dep_err: why it cannot run as one (-errno), 0 if
	 * not known yet, 1 if it can. */
	int dep_err;
	uint32_t *dep_first;
	uint32_t *deps;
	uint32_t ndeps;
	/* The transport's encoding of the program, staged ([0]) and zero
	 * copy ([1]), built on the first call that runs it. */
	struct tc_prog_built *built[2];
};

/* 0 and *out, or -errno with tc_last_error() set. */
int tc_plan_build(const struct tc_part *s, size_t m, uint32_t max_segs, struct tc_plan **out);
void tc_plan_free(struct tc_plan *p);
/* The region (TC_UREG_*) of buffer offset off and the offset in it. */
int tc_plan_region(const struct tc_plan *p, uint64_t off, uint64_t *roff);
/* The zero-copy transfers (uxfers), built once; 0 or -ENOMEM. */
int tc_plan_user(struct tc_plan *p);
/* Name the call's registrations in the zero-copy transfers. */
void tc_plan_keys(struct tc_plan *p, const struct tc_umem *u);
/* The dependencies of the plan's transfers as one program; 0, or -errno
 * when it cannot run as one (a staged message: its packing is a process
 * step). */
int tc_plan_deps(struct tc_plan *p, int links);
/* The plan for (s, m) from the communicator's cache, built on first use;
 * s must be the part of the communicator's rank. */
int tc_plan_get(struct tc_comm *comm, const struct tc_part *s, size_t m, struct tc_plan **out);

#endif /* TC_PLAN_H */
