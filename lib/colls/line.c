// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The step engine of the everyday collectives and the two line patterns
 * they are built from (see coll.h): line allgather and line reduce-scatter.
 *
 * A step is posted as one batch and waited for (all-port), or as its +
 * half then its - half (one-port: a node then sends one and receives one
 * message at a time). Messages go to a neighbour (one hop) except in
 * alltoallv; a message moving + in dimension d leaves on port 2d and
 * arrives on port 2d+1, one moving - leaves on 2d+1 and arrives on 2d, as
 * runtime/plan.c computes from a route. Nothing here allocates: a step is at
 * most TC_STEP_MAX transfers on the caller's stack, every segment lies in
 * the transport buffer, or on a zero-copy run (allgatherv, alltoallv) in
 * the caller's registered buffers.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "colls/coll.h"

/* Start a call: the communicator must be usable and its buffer big enough. */
int tc_run_begin(struct tc_run *r, struct tc_comm *comm, const char *name, size_t bytes)
{
	memset(r, 0, sizeof(*r));
	r->comm = comm;
	r->name = name;
	r->seq = comm->coll_seq++;
	r->what = "";
	return tc_comm_usable(comm, name) ?: tc_comm_buffer(comm, name, bytes, &r->base);
}

/* Phases are below 32; a program (prog.c) sets phase bit 5 and puts its
 * collective where the sequence number goes. */
uint64_t tc_run_tag(const struct tc_run *r, unsigned int step, unsigned int dir)
{
	uint64_t seq = r->rec ? (uint64_t)r->rec_kind : r->seq & 0xffffffull;
	uint64_t phase = (r->phase & 0x1f) | (r->rec ? 0x20 : 0);

	return TC_COLL_TAG_BIT | seq << 32 | phase << 26 | (uint64_t)(step & 0xffffff) << 2 | (dir & 3);
}

void tc_xfer_init(struct tc_xfer *x, uint8_t op, int port, const int8_t *route, int peer, uint64_t tag)
{
	memset(x, 0, sizeof(*x));
	x->op = op;
	x->port = port;
	if (route)
		memcpy(x->route, route, sizeof(x->route));
	x->peer = peer;
	x->tag = tag;
}

void tc_step_add(struct tc_step *st, uint8_t op, int port, const int8_t *route, int peer, uint64_t off, uint64_t len,
		 uint64_t tag, int dir)
{
	tc_xfer_init(&st->x[st->n], op, port, route, peer, tag);
	st->seg[st->n].offset = off;
	st->seg[st->n].length = len;
	st->key[st->n] = 0;
	st->dir[st->n] = dir;
	st->n++;
}

/* Post the step's transfers (segments are fixed up here) and wait for them. */
int tc_step_run(struct tc_run *r, struct tc_step *st, unsigned int step)
{
	struct tc_xfer half[TC_STEP_MAX];
	unsigned int i, n;
	int ret;

	if (r->rec)
		return tc_rec_step(r, st);
	for (i = 0; i < st->n; i++) {
		st->x[i].segs = &st->seg[i];
		st->x[i].nsegs = 1;
		if (r->u.on) {
			st->sge[i] = (struct tc_sge){ .key = st->key[i] ? st->key[i] : r->key,
						      .offset = st->seg[i].offset,
						      .length = st->seg[i].length };
			st->x[i].sges = &st->sge[i];
		}
	}
	if (!r->comm->tp.shape.one_port)
		return tc_step_exec(r->comm, r->name, r->what, step, st->x, st->n);
	for (int dir = 0; dir < 2; dir++) {
		for (i = 0, n = 0; i < st->n; i++)
			if (st->dir[i] == dir)
				half[n++] = st->x[i];
		ret = tc_step_exec(r->comm, r->name, r->what, step, half, n);
		if (ret)
			return ret;
	}
	return 0;
}

struct tc_line {
	int n, i, ring;
	int pport, mport;	/* ports to the + and - neighbour */
	int pnbr, mnbr;		/* the neighbours, -1 off a path's end */
	int8_t proute[TC_MAX_DIMS], mroute[TC_MAX_DIMS];
};

static void tc_line_init(struct tc_line *l, const struct tc_comm *comm, int d)
{
	int first, last;

	memset(l, 0, sizeof(*l));
	l->n = comm->tp.shape.dims[d];
	l->i = comm->coords[d];
	l->ring = !!(comm->tp.shape.wrap_mask & (1u << d));
	l->pnbr = comm->neighbors[2 * d];
	l->mnbr = comm->neighbors[2 * d + 1];
	l->proute[d] = 1;
	l->mroute[d] = -1;
	/* + moves leave on pport and arrive on mport; - moves the reverse. */
	tc_route_ports(&comm->tp.shape, l->proute, &first, &last);
	l->pport = first;
	l->mport = last;
}

static int tc_mod(int a, int n)
{
	a %= n;
	return a < 0 ? a + n : a;
}

/*
 * Line allgather along dimension d: item j (off[j], len[j] bytes of the
 * buffer, the same place on every node) starts at line coordinate j; in step
 * s the node at i forwards item i-(s-1) to i+1 and item i+(s-1) to i-1.
 */
int tc_line_ag(struct tc_run *r, int d, const uint64_t *off, const uint64_t *len)
{
	struct tc_line l;
	int hp, hm, steps, s, j, ret;

	tc_line_init(&l, r->comm, d);
	hp = l.ring ? l.n / 2 : l.n - 1;
	hm = l.ring ? (l.n - 1) / 2 : l.n - 1;
	steps = hp > hm ? hp : hm;
	for (s = 1; s <= steps; s++) {
		struct tc_step st;

		st.n = 0;
		if (s <= hp) {
			j = l.i - (s - 1);
			if (l.ring || (j >= 0 && l.i + 1 < l.n)) {
				j = tc_mod(j, l.n);
				if (len[j])
					tc_step_add(&st, TC_XFER_SEND, l.pport, l.proute, l.pnbr, off[j], len[j],
						    tc_run_tag(r, s, 0), 0);
			}
			j = l.i - s;
			if (l.ring || j >= 0) {
				j = tc_mod(j, l.n);
				if (len[j])
					tc_step_add(&st, TC_XFER_RECV, l.mport, NULL, l.mnbr, off[j], len[j],
						    tc_run_tag(r, s, 0), 0);
			}
		}
		if (s <= hm) {
			j = l.i + (s - 1);
			if (l.ring || (j < l.n && l.i >= 1)) {
				j = tc_mod(j, l.n);
				if (len[j])
					tc_step_add(&st, TC_XFER_SEND, l.mport, l.mroute, l.mnbr, off[j], len[j],
						    tc_run_tag(r, s, 1), 1);
			}
			j = l.i + s;
			if (l.ring || j < l.n) {
				j = tc_mod(j, l.n);
				if (len[j])
					tc_step_add(&st, TC_XFER_RECV, l.pport, NULL, l.pnbr, off[j], len[j],
						    tc_run_tag(r, s, 1), 1);
			}
		}
		ret = tc_step_run(r, &st, s);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Line reduce-scatter along dimension d: chunk c (cnt[c] elements at off[c])
 * ends reduced at line coordinate c, in the line fold order of coll.h. The
 * + partial of chunk c makes its hop from c-u to c-u+1 in step H+ - u + 1,
 * the - partial its hop from c+u to c+u-1 in step H- - u + 1, so the last
 * hops of all chunks fall in the last step and every link carries one
 * partial per step. A node receives a partial into a scratch slot, combines
 * its own value into it (partial op own) and sends it on in the next step;
 * slots alternate between even and odd steps.
 */
int tc_line_rs(struct tc_run *r, int d, const uint64_t *off, const uint64_t *cnt, enum tc_datatype dt,
	       enum tc_op op, const uint64_t *slots)
{
	size_t esz = tc_dt_size(dt);
	char *base = r->base;
	struct tc_line l;
	int hp, hm, steps, s, c, ret;
	int got_l = 0, got_r = 0;

	tc_line_init(&l, r->comm, d);
	hp = l.ring ? l.n / 2 : l.n - 1;
	hm = l.ring ? (l.n - 1) / 2 : l.n - 1;
	steps = hp > hm ? hp : hm;
	for (s = 1; s <= steps; s++) {
		struct tc_step st;
		int rp = -1, rm = -1; /* chunks received this step */
		uint64_t sp = slots[s & 1], sm = slots[2 + (s & 1)];
		uint64_t pp = slots[(s - 1) & 1], pm = slots[2 + ((s - 1) & 1)];

		st.n = 0;
		if (s <= hp) {
			c = l.i + hp - s + 1;
			if (l.ring || c < l.n) {
				int start = l.ring ? s == 1 : l.i == 0;

				c = tc_mod(c, l.n);
				if (cnt[c])
					tc_step_add(&st, TC_XFER_SEND, l.pport, l.proute, l.pnbr, start ? off[c] : pp,
						    cnt[c] * esz, tc_run_tag(r, s, 0), 0);
			}
			c = l.i + hp - s;
			if (l.ring ? 1 : l.i >= 1 && c < l.n) {
				c = tc_mod(c, l.n);
				if (cnt[c]) {
					tc_step_add(&st, TC_XFER_RECV, l.mport, NULL, l.mnbr, sp, cnt[c] * esz,
						    tc_run_tag(r, s, 0), 0);
					rp = c;
				}
			}
		}
		if (s <= hm) {
			c = l.i - (hm - s + 1);
			if (l.ring || c >= 0) {
				int start = l.ring ? s == 1 : l.i == l.n - 1;

				c = tc_mod(c, l.n);
				if (cnt[c])
					tc_step_add(&st, TC_XFER_SEND, l.mport, l.mroute, l.mnbr, start ? off[c] : pm,
						    cnt[c] * esz, tc_run_tag(r, s, 1), 1);
			}
			c = l.i - hm + s;
			if (l.ring ? 1 : l.i + 1 < l.n && c >= 0) {
				c = tc_mod(c, l.n);
				if (cnt[c]) {
					tc_step_add(&st, TC_XFER_RECV, l.pport, NULL, l.pnbr, sm, cnt[c] * esz,
						    tc_run_tag(r, s, 1), 1);
					rm = c;
				}
			}
		}
		ret = tc_step_run(r, &st, s);
		if (ret)
			return ret;
		if (rp == l.i)
			got_l = 1;
		else if (rp >= 0)
			tc_reduce_apply(dt, op, base + sp, base + sp, base + off[rp], cnt[rp]);
		if (rm == l.i)
			got_r = 1;
		else if (rm >= 0)
			tc_reduce_apply(dt, op, base + sm, base + sm, base + off[rm], cnt[rm]);
	}
	/* (L op x_i) op R */
	if (got_l)
		tc_reduce_apply(dt, op, base + off[l.i], base + slots[hp & 1], base + off[l.i], cnt[l.i]);
	if (got_r)
		tc_reduce_apply(dt, op, base + off[l.i], base + off[l.i], base + slots[2 + (hm & 1)], cnt[l.i]);
	return 0;
}
