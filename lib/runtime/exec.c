// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The schedule executor: runs alltoall and allgather for the calling node on
 * its transport. It picks the algorithm (forced or auto: select/), gets the
 * node's plan (runtime/plan.c) and runs every step through the one step
 * runner (runtime/step.c): zero copy from and into the caller's buffers,
 * registered for the call (runtime/umem.c), or staged: the send buffer
 * copied into the transport buffer and the result out. Running a plan
 * allocates nothing per step (a plan's zero-copy transfer list is built on
 * its first zero-copy call).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/plan.h"

/* Where buffer offset off of the plan is on this call. */
static char *tc_call_ptr(const struct tc_plan *p, const struct tc_umem *u, uint64_t off)
{
	uint64_t roff = off;
	int r = u->on ? tc_plan_region(p, off, &roff) : TC_UREG_BUF;

	return u->ptr[r] + roff;
}

/*
 * Pack a staged message before its post (pack = 1) or unpack it after the
 * wait. Its segments lie in the transport buffer, or on a zero-copy call in
 * the caller's buffers; its staging area is in the transport buffer.
 */
static void tc_stage_copy(const struct tc_plan *p, const struct tc_stage *st, const struct tc_umem *u, int pack)
{
	char *stage = tc_call_ptr(p, u, p->stage_off + st->off);

	for (uint32_t q = 0; q < st->nsegs; q++) {
		const struct tc_seg *g = &p->segs[st->seg0 + q];
		char *at = tc_call_ptr(p, u, g->offset);

		if (pack)
			memcpy(stage, at, g->length);
		else
			memcpy(at, stage, g->length);
		stage += g->length;
	}
}

/*
 * tc_auto_choose() prices candidates the first time it sees a shape; with the
 * simulator every node thread asks at once, and pricing them all in parallel
 * on a few cores takes longer than the peers' step timeout.
 */
static pthread_mutex_t tc_auto_serial = PTHREAD_MUTEX_INITIALIZER;

/* Choose the algorithm (forced or auto) and get this node's part of its
 * schedule (select/cache.c: generated alone, or cut from the verified whole);
 * choice->winner stays -1 when the forced algorithm ran. A forced algorithm
 * that cannot run on the shape: forced by the environment, the call fails
 * (-EOPNOTSUPP, or the build's own error) naming the variable, algorithm and
 * shape, on every node alike (the shape is the same everywhere); forced by
 * tc_comm_set_algo, the library's choice runs and fallback says why. */
static int tc_coll_sched(struct tc_comm *comm, enum tc_coll_id coll, size_t m, const struct tc_algo **ran,
			 const struct tc_part **out, char *fallback, size_t flen, struct tc_auto_choice *choice)
{
	struct tc_coll_state *cs = &comm->coll[coll];
	const struct tc_algo *algo;
	const char *why = NULL;
	int ret;

	fallback[0] = 0;
	choice->winner = choice->runner_up = -1;
	if (cs->forced) {
		algo = cs->forced;
		ret = tc_part_get(coll, algo, &comm->tp.shape, comm->tp.rank, out, &why);
		*ran = algo;
		if (!ret)
			return 0;
		why = why ? why : *tc_last_error() ? tc_last_error() : tc_strerror(ret);
		/* Reasons of algorithms already start with their name ("ar: ..."). */
		if (!strncmp(why, algo->name, strlen(algo->name)) && why[strlen(algo->name)] == ':')
			snprintf(fallback, flen, "%s", why);
		else
			snprintf(fallback, flen, "%s: %s", algo->name, why);
		if (cs->forced_by) {
			const size_t n = strlen(algo->name);
			const char *reason = !strncmp(fallback, algo->name, n) && fallback[n] == ':' ?
						     fallback + n + 1 + (fallback[n + 1] == ' ') : fallback;
			char shape[64];

			tc_shape_str(&comm->tp.shape, shape, sizeof(shape));
			return tc_err(ret == -ENOMEM ? ret : -EOPNOTSUPP,
				      "%s=%s does not run on this communicator's %s %s: %s; unset %s for the library's "
				      "choice", cs->forced_by, algo->name, shape,
				      comm->tp.shape.wrap_mask ? "torus" : "mesh", reason, cs->forced_by);
		}
	}
	/* One thread prices the candidates; the others then find its choice cached. */
	pthread_mutex_lock(&tc_auto_serial);
	ret = tc_auto_choose(coll, &comm->tp.shape, m, &comm->tp.cost, choice);
	pthread_mutex_unlock(&tc_auto_serial);
	if (ret)
		return tc_err(ret, "%s: %s", tc_coll_str(coll),
			      ret == -EOPNOTSUPP ? "no algorithm supports this shape" : tc_last_error());
	algo = choice->cand[choice->winner].algo;
	why = NULL;
	ret = tc_part_get(coll, algo, &comm->tp.shape, comm->tp.rank, out, &why);
	*ran = algo;
	if (ret)
		return tc_err(ret, "%s %s: %s", tc_coll_str(coll), algo->name,
			      why ? why : *tc_last_error() ? tc_last_error() : tc_strerror(ret));
	return 0;
}

/*
 * The whole plan as one program (transport prog: the device with
 * TORUS_FEAT_PROGRAM): one post and one wait, every message started by the
 * completions it depends on (runtime/plan.c, tc_plan_deps), no process
 * step in between. *ran 0: it did not run (no program support, offload
 * off, a message the process must pack, a limit of the module: nothing
 * was posted) and the caller runs the steps.
 */
static int tc_coll_prog(struct tc_comm *comm, enum tc_coll_id id, struct tc_plan *p, const struct tc_umem *u,
			int *ran)
{
	struct tc_wait_err we = { .port = -1, .peer = -1, .xfer = -1 };
	struct tc_prog pg;
	uint32_t step = 0;
	int ret, posted = 0;

	*ran = 0;
	if (!comm->tp.ops->prog || !comm->tp.offload || !comm->coll[id].warm || tc_plan_deps(p, comm->tp.prog_links))
		return 0;
	pg.x = u->on ? p->uxfers : p->xfers;
	pg.n = p->step_first[p->nsteps];
	pg.dep_first = p->dep_first;
	pg.deps = p->deps;
	pg.built = &p->built[!!u->on];
	ret = comm->tp.ops->prog(&comm->tp, &pg, comm->tp.timeout_ms, &we, &posted);
	if (!posted)
		return 0; /* a limit of the module (its words in tc_last_error): step by step */
	*ran = 1;
	comm->offloaded = 1;
	if (!ret)
		return 0;
	if (we.xfer >= 0)
		for (uint32_t i = 0; i < p->nsteps; i++)
			if ((uint32_t)we.xfer < p->step_first[i + 1]) {
				step = p->step_id[i];
				break;
			}
	if (we.xfer < 0)
		tc_err(ret, "%s: %s: program failed: %s", tc_coll_str(id), p->part->algo,
		       *tc_last_error() ? tc_last_error() : tc_strerror(ret));
	else if (we.detail) /* a transport without ports (verbs) names the peer's host and what was missing */
		tc_err(ret, "%s: %s step %u: %s node %d (%s)%s%s", tc_coll_str(id), p->part->algo, step,
		       ret == -ETIMEDOUT ? "timed out waiting for" : "transfer failed with", we.peer, we.detail,
		       ret == -ETIMEDOUT ? "" : ": ", ret == -ETIMEDOUT ? "" : tc_strerror(ret));
	else if (ret == -ETIMEDOUT)
		tc_err(ret, "%s: %s step %u: program timed out after %d ms waiting for node %d on port %d (its %s %d of %u)",
		       tc_coll_str(id), p->part->algo, step, comm->tp.timeout_ms, we.peer, we.port,
		       pg.x[we.xfer].op == TC_XFER_SEND ? "send" : "receive", we.xfer, pg.n);
	else
		tc_err(ret, "%s: %s step %u: program's %s %d of %u with node %d on port %d failed: %s", tc_coll_str(id),
		       p->part->algo, step, pg.x[we.xfer].op == TC_XFER_SEND ? "send" : "receive", we.xfer, pg.n,
		       we.peer, we.port, tc_strerror(ret));
	return tc_comm_fail(comm, ret);
}

/* Every step of the plan: pack, post, wait, unpack. */
static int tc_coll_steps(struct tc_comm *comm, enum tc_coll_id id, struct tc_plan *p, const struct tc_umem *u)
{
	const struct tc_xfer *xfers = u->on ? p->uxfers : p->xfers;
	int ran, ret = tc_coll_prog(comm, id, p, u, &ran);

	if (ran)
		return ret;

	for (uint32_t i = 0; i < p->nsteps; i++) {
		unsigned int n = p->step_first[i + 1] - p->step_first[i];

		for (uint32_t k = p->stage_first[i]; k < p->stage_first[i + 1]; k++)
			if (p->xfers[p->stages[k].xfer].op == TC_XFER_SEND)
				tc_stage_copy(p, &p->stages[k], u, 1);
		ret = tc_step_exec(comm, tc_coll_str(id), p->part->algo, p->step_id[i],
				   xfers + p->step_first[i], n);
		if (ret)
			return ret;
		for (uint32_t k = p->stage_first[i]; k < p->stage_first[i + 1]; k++)
			if (p->xfers[p->stages[k].xfer].op == TC_XFER_RECV)
				tc_stage_copy(p, &p->stages[k], u, 0);
	}
	return 0;
}

/*
 * Run the plan on the call's buffers. Zero copy: the own block is the one
 * local copy, every other block moves between the caller's buffers and the
 * transport buffer holds only what passes through this node. Staged: the
 * send data is copied into the transport buffer and the result out of it.
 */
static int tc_coll_move(struct tc_comm *comm, enum tc_coll_id id, struct tc_plan *p, const void *sendbuf,
			void *recvbuf, struct tc_umem *u)
{
	size_t P = comm->tp.shape.nodes, m = p->m, me = comm->tp.rank;
	const char *name = tc_coll_str(id);
	char *base;
	int ret;

	if (u->on && tc_plan_user(p))
		tc_umem_end(comm, u); /* out of memory for the second transfer list: stage */
	ret = tc_comm_buffer(comm, name, u->on ? p->buf_bytes - p->user_end : p->buf_bytes, &base);
	if (ret)
		return ret;
	u->ptr[TC_UREG_BUF] = base;
	if (u->on) {
		tc_plan_keys(p, u);
		if (id == TC_ALLTOALL)
			memcpy((char *)recvbuf + me * m, (const char *)sendbuf + me * m, m);
		else
			memmove((char *)recvbuf + me * m, sendbuf, m);
		return tc_coll_steps(comm, id, p, u);
	}
	if (id == TC_ALLTOALL)
		memcpy(base + p->send_off, sendbuf, P * m);
	else
		memcpy(base + me * m, sendbuf, m);
	ret = tc_coll_steps(comm, id, p, u);
	if (ret)
		return ret;
	if (id == TC_ALLTOALL) {
		memcpy(recvbuf, base + p->recv_off, P * m);
		memcpy((char *)recvbuf + me * m, base + p->send_off + me * m, m);
	} else {
		memcpy(recvbuf, base, P * m);
	}
	return 0;
}

/* tc_coll_last()'s record of the call that ran. */
static void tc_coll_record(struct tc_coll_state *cs, const struct tc_part *s, size_t m,
			   const char *fallback,
			   const struct tc_auto_choice *choice, int zero_copy, uint64_t eager, uint64_t rdv,
			   const uint64_t calls[3], int offloaded)
{
	cs->have_last = 1;
	cs->last.size = sizeof(cs->last);
	snprintf(cs->last.algo, sizeof(cs->last.algo), "%s", s->algo);
	snprintf(cs->last.why, sizeof(cs->last.why), "%s", fallback);
	cs->last.block_bytes = m;
	/* what the choice saw; a forced run is priced from its part when tc_coll_last asks */
	cs->last.predicted_us = choice->winner >= 0 ? choice->cand[choice->winner].us : -1;
	cs->last.runner_up[0] = 0;
	cs->last.runner_up_us = 0;
	if (choice->runner_up >= 0) {
		snprintf(cs->last.runner_up, sizeof(cs->last.runner_up), "%s", choice->cand[choice->runner_up].algo->name);
		cs->last.runner_up_us = choice->cand[choice->runner_up].us;
	}
	cs->last.zero_copy = zero_copy;
	cs->last.eager_sends = (uint32_t)eager;
	cs->last.rendezvous_sends = (uint32_t)rdv;
	cs->last.offloaded = offloaded;
	cs->last.posts = (uint32_t)calls[0];
	cs->last.waits = (uint32_t)calls[1];
	cs->last.regs = (uint32_t)calls[2];
	cs->last_part = s;
}

static int tc_coll_run(struct tc_comm *comm, enum tc_coll_id id, const void *sendbuf, void *recvbuf, size_t m)
{
	struct tc_coll_state *cs = &comm->coll[id];
	const struct tc_algo *algo = NULL;
	const struct tc_part *s;
	struct tc_plan *p;
	size_t P = comm->tp.shape.nodes;
	char fallback[sizeof(cs->last.why)];
	struct tc_auto_choice choice;
	struct tc_umem u;
	uint64_t e0, r0, calls[3];
	int ret, zero_copy;

	ret = tc_comm_usable(comm, tc_coll_str(id));
	if (ret)
		return ret;
	ret = tc_coll_sched(comm, id, m, &algo, &s, fallback, sizeof(fallback), &choice);
	if (ret)
		return ret;
	ret = tc_plan_get(comm, s, m, &p);
	if (ret)
		return tc_err(ret, "%s %s: plan for node %d: %s", tc_coll_str(id), s->algo, comm->tp.rank,
			      *tc_last_error() ? tc_last_error() : tc_strerror(ret));
	calls[0] = comm->tp.n_posts;
	calls[1] = comm->tp.n_waits;
	calls[2] = comm->tp.n_regs;
	comm->offloaded = 0;
	/* allgather sends its own block from the receive buffer: only that is registered */
	tc_umem_begin(comm, &u, id == TC_ALLTOALL ? sendbuf : NULL, id == TC_ALLTOALL ? P * m : 0, recvbuf, P * m, m);
	e0 = comm->tp.sends_eager;
	r0 = comm->tp.sends_rdv;
	ret = tc_coll_move(comm, id, p, sendbuf, recvbuf, &u);
	zero_copy = u.on;
	tc_umem_end(comm, &u);
	if (!ret) {
		calls[0] = comm->tp.n_posts - calls[0];
		calls[1] = comm->tp.n_waits - calls[1];
		calls[2] = comm->tp.n_regs - calls[2];
		tc_coll_record(cs, s, m, fallback, &choice, zero_copy, comm->tp.sends_eager - e0, comm->tp.sends_rdv - r0,
			       calls, comm->offloaded);
		cs->warm = 1;
		comm->all_open = 1;
	}
	return ret;
}

int tc_exec_coll(struct tc_comm *comm, enum tc_coll_id id, const void *sendbuf, void *recvbuf, size_t m)
{
	return tc_coll_run(comm, id, sendbuf, recvbuf, m);
}
