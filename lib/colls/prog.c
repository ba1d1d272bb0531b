// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tc_barrier and tc_bcast as one program (the device with
 * TORUS_FEAT_PROGRAM): the call's line phases are recorded instead of run
 * (line.c's step runner appends each step's transfers to a tc_rec), each
 * transfer is given the completions it depends on, and the whole call is
 * posted once and waited for once. The program is kept per communicator,
 * keyed by (collective, root, bytes), and posted unchanged on later calls.
 *
 * bcast: the same phases as step by step (bcast.c); a node receives the
 * data once, into [0, bytes) of the transport buffer, and every send of it
 * waits for that receive (the root's sends wait for nothing): a node
 * forwards the data as soon as it has it, in the NIC.
 *
 * barrier: not bcast.c's reduce-then-bcast (a reduction is a process step),
 * but dimension by dimension a line allgather of 8-byte tokens, each line
 * coordinate's token in its own slot: along dimension d a node's own token
 * leaves once every receive of dimensions 0..d-1 has completed (so it
 * stands for every node of its sub-torus in dimensions < d; dimension
 * d-1's receives alone are not enough from three dimensions on: they stand
 * for the senders' earlier dimensions, not for this node's), and a
 * received token is forwarded as soon as it has arrived. After the last dimension every node
 * has a chain of completions from every node's post, and no node's program
 * completes before every node has posted its own. The critical path is
 * sum over d of floor(n_d/2) messages on rings (n_d - 1 on paths), half the
 * steps of the stepped barrier (a reduce tree, then a bcast tree). This is
 * the dimension-wise form of the dissemination barrier (Hensgen, Finkel
 * and Manber, "Two algorithms for barrier synchronization", 1988, section
 * 3), with every message one hop along a line: contention-free on a torus.
 *
 * Receives depend on nothing (each has a place no other transfer of the
 * call writes or reads), so the program posts them at once. Tags: the
 * program's own tag space (tc_run_tag: phase bit 5 set, the collective in
 * the sequence field), distinct from every stepped call's, the same on
 * every call: a node's messages on one link arrive in order, so a call's
 * message is never taken by another call's receive.
 *
 * Not offloaded (the caller runs the steps): a transport without programs
 * or with offload off, a one-port fabric (its +/- halves are a process
 * step), a call before the first one that proved every peer's node open
 * (a send to a node not yet open is refused, and a program cannot post it
 * again), a limit of the module.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls/coll.h"

/* Programs kept per communicator. */
#define TC_CPROG_CACHE 8

struct tc_rec {
	uint32_t n, cap, nsteps;
	struct tc_xfer *x;
	struct tc_seg *seg;
	uint32_t *step, *phase;
};

struct tc_cprog {
	enum tc_coll_id kind;
	int root;
	size_t bytes;
	int warm;	    /* ran to the end once (stepped or as a program) */
	unsigned int used;  /* comm->cprog_clock at last use */
	struct tc_rec rec;  /* the transfers, in step order */
	uint32_t *dep_first; /* rec.n + 1 */
	uint32_t *deps;
	struct tc_prog_built *built;
};

struct tc_cprogs {
	unsigned int clock;
	struct tc_cprog *e[TC_CPROG_CACHE];
};

static void tc_rec_free(struct tc_rec *rc)
{
	free(rc->x);
	free(rc->seg);
	free(rc->step);
	free(rc->phase);
	memset(rc, 0, sizeof(*rc));
}

static void tc_cprog_free(struct tc_cprog *p)
{
	if (!p)
		return;
	tc_rec_free(&p->rec);
	free(p->dep_first);
	free(p->deps);
	if (p->built) {
		free(p->built->descs);
		free(p->built->map);
		free(p->built);
	}
	free(p);
}

void tc_cprog_free_all(struct tc_comm *comm)
{
	struct tc_cprogs *c = comm->cprogs;

	if (!c)
		return;
	for (int i = 0; i < TC_CPROG_CACHE; i++)
		tc_cprog_free(c->e[i]);
	free(c);
	comm->cprogs = NULL;
}

int tc_rec_step(struct tc_run *r, const struct tc_step *st)
{
	struct tc_rec *rc = r->rec;
	uint32_t cap = rc->cap;

	if (rc->n + st->n > cap) {
		uint32_t c = cap;

		if (tc_grow((void **)&rc->x, &c, rc->n + st->n, sizeof(*rc->x), 16))
			return -ENOMEM;
		c = cap;
		if (tc_grow((void **)&rc->seg, &c, rc->n + st->n, sizeof(*rc->seg), 16))
			return -ENOMEM;
		c = cap;
		if (tc_grow((void **)&rc->step, &c, rc->n + st->n, sizeof(*rc->step), 16))
			return -ENOMEM;
		c = cap;
		if (tc_grow((void **)&rc->phase, &c, rc->n + st->n, sizeof(*rc->phase), 16))
			return -ENOMEM;
		rc->cap = c;
	}
	for (unsigned int i = 0; i < st->n; i++) {
		rc->x[rc->n] = st->x[i];
		rc->x[rc->n].nsegs = 1;
		rc->x[rc->n].segs = NULL; /* set when the recording is complete */
		rc->x[rc->n].sges = NULL;
		rc->seg[rc->n] = st->seg[i];
		rc->step[rc->n] = rc->nsteps;
		rc->phase[rc->n] = (uint32_t)r->phase;
		rc->n++;
	}
	rc->nsteps++;
	return 0;
}

static int tc_seg_overlap(const struct tc_seg *a, const struct tc_seg *b)
{
	return a->offset < b->offset + b->length && b->offset < a->offset + a->length;
}

/*
 * Each transfer waits for the transfers of earlier steps whose place it
 * reads after they wrote it (a send after the receive that brought its
 * data) or writes after they used it (a receive after a send or receive of
 * the same place); a barrier's own token (a send that no receive fed)
 * waits for every receive of every earlier phase: the receives of phase
 * d-1 stand for the senders' earlier phases, not for this node's own.
 */
static int tc_cprog_deps(struct tc_cprog *p)
{
	const struct tc_rec *rc = &p->rec;
	uint32_t nd = 0, cap = 0, *deps = NULL, *first = malloc((rc->n + 1) * sizeof(*first));

	if (!first)
		return -ENOMEM;
	for (uint32_t i = 0; i < rc->n; i++) {
		int send = rc->x[i].op == TC_XFER_SEND;
		uint32_t k0 = nd;

		first[i] = nd;
		for (uint32_t j = 0; j < i && rc->step[j] < rc->step[i]; j++) {
			if (send && rc->x[j].op == TC_XFER_SEND)
				continue;
			if (!tc_seg_overlap(&rc->seg[i], &rc->seg[j]))
				continue;
			if (nd == cap && tc_grow((void **)&deps, &cap, nd + 1, sizeof(*deps), 64))
				goto err_nomem;
			deps[nd++] = j;
		}
		if (p->kind != TC_BARRIER || !send || nd != k0 || !rc->phase[i])
			continue;
		for (uint32_t j = 0; j < i; j++) {
			if (rc->x[j].op != TC_XFER_RECV || rc->phase[j] >= rc->phase[i])
				continue;
			if (nd == cap && tc_grow((void **)&deps, &cap, nd + 1, sizeof(*deps), 64))
				goto err_nomem;
			deps[nd++] = j;
		}
	}
	first[rc->n] = nd;
	p->dep_first = first;
	p->deps = deps;
	return 0;

err_nomem:
	free(first);
	free(deps);
	return -ENOMEM;
}

/* Record the call's phases (rec: the phases' function, run on r). */
static int tc_cprog_new(struct tc_run *r, enum tc_coll_id kind, int root, size_t bytes,
			int (*rec)(struct tc_run *r, void *arg), void *arg, struct tc_cprog **out)
{
	struct tc_cprog *p = calloc(1, sizeof(*p));
	int ret;

	if (!p)
		return -ENOMEM;
	p->kind = kind;
	p->root = root;
	p->bytes = bytes;
	r->rec = &p->rec;
	r->rec_kind = kind;
	ret = rec(r, arg);
	r->rec = NULL;
	if (!ret) {
		for (uint32_t i = 0; i < p->rec.n; i++)
			p->rec.x[i].segs = &p->rec.seg[i];
		ret = tc_cprog_deps(p);
	}
	if (ret) {
		tc_cprog_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

/* The communicator's program for (kind, root, bytes), recorded on first use. */
static int tc_cprog_get(struct tc_run *r, enum tc_coll_id kind, int root, size_t bytes,
			int (*rec)(struct tc_run *r, void *arg), void *arg, struct tc_cprog **out)
{
	struct tc_comm *comm = r->comm;
	struct tc_cprogs *c = comm->cprogs;
	int victim = 0, ret;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		comm->cprogs = c;
	}
	for (int i = 0; i < TC_CPROG_CACHE; i++) {
		struct tc_cprog *p = c->e[i];

		if (p && p->kind == kind && p->root == root && p->bytes == bytes) {
			p->used = ++c->clock;
			*out = p;
			return 0;
		}
		if (!p || (c->e[victim] && p->used < c->e[victim]->used))
			victim = i;
	}
	ret = tc_cprog_new(r, kind, root, bytes, rec, arg, out);
	if (ret)
		return ret;
	tc_cprog_free(c->e[victim]);
	c->e[victim] = *out;
	(*out)->used = ++c->clock;
	return 0;
}

/*
 * Run the call as one program if it can be (*ran 1, the call's result in
 * the return value), else leave it to the caller (*ran 0, 0 returned, or a
 * negative errno when recording ran out of memory). r has been begun; its
 * buffer holds the root's data. warm: the caller marks the program warm
 * once the stepped call it runs instead has succeeded.
 */
int tc_cprog_run(struct tc_run *r, enum tc_coll_id kind, int root, size_t bytes,
		 int (*rec)(struct tc_run *r, void *arg), void *arg, int *ran, struct tc_cprog **entry)
{
	struct tc_comm *comm = r->comm;
	struct tc_wait_err we = { .port = -1, .peer = -1, .xfer = -1 };
	struct tc_cprog *p;
	struct tc_prog pg;
	int ret, posted = 0;

	*ran = 0;
	*entry = NULL;
	if (!comm->tp.ops->prog || !comm->tp.offload || comm->tp.shape.one_port)
		return 0;
	ret = tc_cprog_get(r, kind, root, bytes, rec, arg, &p);
	if (ret)
		return tc_err(ret, "%s: recording its program: %s", r->name, tc_strerror(ret));
	*entry = p;
	if (!p->warm && !comm->all_open)
		return 0;
	pg.x = p->rec.x;
	pg.n = p->rec.n;
	pg.dep_first = p->dep_first;
	pg.deps = p->deps;
	pg.built = &p->built;
	ret = comm->tp.ops->prog(&comm->tp, &pg, comm->tp.timeout_ms, &we, &posted);
	if (!posted)
		return 0; /* a limit of the module: step by step */
	*ran = 1;
	comm->offloaded = 1;
	if (!ret) {
		p->warm = 1;
		return 0;
	}
	if (we.xfer < 0)
		tc_err(ret, "%s: program failed: %s", r->name, tc_strerror(ret));
	else if (ret == -ETIMEDOUT)
		tc_err(ret, "%s: step %u: program timed out after %d ms waiting for node %d on port %d (its %s %d of %u)",
		       r->name, p->rec.step[we.xfer] + 1, comm->tp.timeout_ms, we.peer, we.port,
		       pg.x[we.xfer].op == TC_XFER_SEND ? "send" : "receive", we.xfer, pg.n);
	else
		tc_err(ret, "%s: step %u: program's %s %d of %u with node %d on port %d failed: %s", r->name,
		       p->rec.step[we.xfer] + 1, pg.x[we.xfer].op == TC_XFER_SEND ? "send" : "receive", we.xfer,
		       pg.n, we.peer, we.port, tc_strerror(ret));
	return tc_comm_fail(comm, ret);
}

void tc_cprog_warm(struct tc_cprog *entry)
{
	if (entry)
		entry->warm = 1;
}
