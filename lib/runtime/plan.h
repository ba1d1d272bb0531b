/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A node's plan of a schedule: buffer layout and per-step transfers (plan.c). */
#ifndef TC_PLAN_H
#define TC_PLAN_H

#include "runtime/comm.h"

struct tc_stage {
	uint32_t xfer;	     /* index into xfers */
	uint32_t seg0, nsegs; /* the message's own segments in segs */
	uint64_t off;	     /* its place in the staging area */
};

struct tc_plan {
	const struct tc_sched *sched;
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
};

/* 0 and *out, or -errno with tc_last_error() set. */
int tc_plan_build(const struct tc_sched *s, int node, size_t m, uint32_t max_segs, struct tc_plan **out);
void tc_plan_free(struct tc_plan *p);
/* The plan for (s, m) from the communicator's cache, built on first use. */
int tc_plan_get(struct tc_comm *comm, const struct tc_sched *s, size_t m, struct tc_plan **out);

#endif /* TC_PLAN_H */
