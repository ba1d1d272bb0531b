/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One node's part of a schedule (core/sched.h): the messages it sends and
 * receives, step by step, with their routes and blocks, and nothing of any
 * other node's traffic. What a rank runs is built from this alone
 * (runtime/plan.c), the way MPICH and UCC compute a rank's steps from
 * (rank, size, step) and Blue Gene/Q's PAMI from the node's coordinates.
 *
 * An algorithm that can (struct tc_algo.part) generates the part directly,
 * in time and memory proportional to the node's own traffic; any other is
 * built whole, verified and cut (tc_part_extract: the fallback, counted).
 * A generator that covers only some of its algorithm's shapes returns
 * TC_PART_WHOLE on the others, which then take the same fallback.
 *
 * A finished part is canonical, so a part generated alone and the part cut
 * from the whole schedule compare equal exactly when they mean the same:
 * messages by step; within a step the node's sends first, by destination,
 * then its receives, by source; messages between the same two nodes in one
 * step by route (bytes), then in the order they were added; blocks of a
 * message sorted by (a, b). Empty messages are dropped. Steps keep the
 * whole schedule's numbering (the whole schedule's empty steps removed), so
 * two ends of a message agree on its step.
 *
 * Both ends of a message find it in their own parts: the k-th message from
 * src to dst in step s (k counted in the order above) is the same message at
 * both ends, which is what the executor's tags use (runtime/plan.c).
 */
#ifndef TC_PART_H
#define TC_PART_H

#include "core/sched.h"

struct tc_part {
	struct tc_shape shape;
	enum tc_coll_id coll;
	const char *algo; /* static strings, as in struct tc_sched */
	const char *cite;
	unsigned int claims;
	int npackets; /* allgather: packets per node's data; 1 otherwise */
	int node;     /* whose part */

	uint32_t nsteps; /* steps of the whole schedule */
	/* The steps this node sends or receives in: act_step[i] (increasing);
	 * their messages msgs[act_first[i] .. act_first[i+1]), sends first. */
	uint32_t nact;
	uint32_t *act_step;
	uint32_t *act_first;
	uint32_t nmsgs, cap_msgs;
	struct tc_msg *msgs; /* msgs[i].step: the schedule step */
	uint32_t nblks, cap_blks;
	struct tc_blk *blks;

	int extracted; /* 1: cut from the whole schedule (the fallback) */

	/* Building (private to part.c). */
	uint32_t cur;	   /* step of the messages being added */
	int64_t only_step; /* tc_part_only: keep only sends to only_peer in this step; -1 keep all */
	int only_peer;
	int dropped;	   /* the last message was filtered out: drop its blocks too */
	int finished;
};

/* A part generator's answer: this shape's part is cut from the whole schedule. */
#define TC_PART_WHOLE 1

/* Building. All 0 or a negative errno with tc_err() set. */
struct tc_part *tc_part_new(const struct tc_shape *shape, enum tc_coll_id coll, const char *algo, const char *cite,
			    unsigned int claims, int node);
/*
 * Keep only what node sends to peer in step: the local check (tc_part_check)
 * generates just that message of a peer's part. A generator may ask
 * tc_part_wants(p, step) and skip the steps that are not kept.
 */
void tc_part_only(struct tc_part *p, uint32_t step, int peer);
int tc_part_wants(const struct tc_part *p, uint32_t step);
/* The one peer and step whose messages are kept (tc_part_only), or -1: all are. */
int tc_part_only_peer(const struct tc_part *p);
int64_t tc_part_only_step(const struct tc_part *p);
/* The step of the messages added next (any order; the whole schedule's numbering). */
int tc_part_at(struct tc_part *p, uint32_t step);
/* A message of the current step; src or dst must be the part's node. route
 * NULL: shortest dimension-ordered, ties + (as tc_sched_msg). */
int tc_part_msg(struct tc_part *p, int src, int dst, const int8_t *route);
/* Append a block to the last message added. */
int tc_part_blk(struct tc_part *p, int a, int b);
/* Check every message (nodes, route, blocks), make the part canonical;
 * nsteps: the whole schedule's step count. */
int tc_part_finish(struct tc_part *p, uint32_t nsteps);
void tc_part_free(struct tc_part *p);
/* The end of a part generator: as tc_sched_done. */
int tc_part_done(struct tc_part *p, int err, uint32_t nsteps, struct tc_part **out, const char **why,
		 const char *fail_why);

/* Node's part of a finished whole schedule (the fallback; extracted = 1). */
int tc_part_extract(const struct tc_sched *s, int node, struct tc_part **out);
/* 1 if a and b are the same part; else 0 with the first difference in why. */
int tc_part_equal(const struct tc_part *a, const struct tc_part *b, char *why, size_t len);

/* What the node moves: messages and blocks sent and received; forwarded:
 * blocks it sends that did not start at it (alltoall and allgather alike). */
struct tc_part_stats {
	uint64_t msgs_sent, msgs_recv;
	uint64_t blks_sent, blks_recv, blks_fwd;
	uint32_t active_steps;
	size_t bytes; /* memory the part holds */
};
void tc_part_stats(const struct tc_part *p, struct tc_part_stats *st);

#endif /* TC_PART_H */
