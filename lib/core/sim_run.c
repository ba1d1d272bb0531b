// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Whole-fabric simulator: runs every node of a schedule in this process,
 * moving real bytes with memcpy.
 *
 * Each step has two phases, as on the fabric: all sends of the step read
 * from the nodes' state at the start of the step into a wire buffer, then
 * every receive lands from the wire into the receiver's memory.
 *
 * Alltoall: every node has its own slot store (grown on demand, free list);
 * block {o,d} lives in one slot of its holder's store (holder[]/slot[]); a
 * send takes it out of the sender's store, a receive puts it into the
 * receiver's. At the end node d copies {o,d} from its store to recv[d] at
 * o*block_bytes, and {d,d} from send[d].
 * Allgather: node n's memory is recv[n] itself; packet p of origin o is the
 * byte range [p*m/np, (p+1)*m/np) of slot o. A node may only send what it
 * holds; a second delivery is an error.
 *
 * Whatever the schedule gets wrong (a block sent by a node that does not hold
 * it, a block lost, delivered twice or never) is -EPROTO with the reason in
 * tc_last_error(): the simulator trusts no verifier.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/sim_run.h"

struct sim_store {
	uint8_t *data;	 /* cap slots of m bytes */
	uint32_t *free;	 /* free slot indices */
	uint32_t cap, nfree;
};

static int store_get(struct sim_store *st, size_t m, uint32_t *slot)
{
	if (!st->nfree) {
		uint32_t ncap = st->cap ? st->cap * 2 : 16;
		uint8_t *d = realloc(st->data, (size_t)ncap * m);
		uint32_t *f;

		if (!d)
			return -ENOMEM;
		st->data = d;
		f = realloc(st->free, (size_t)ncap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		st->free = f;
		for (uint32_t i = ncap; i > st->cap; i--)
			st->free[st->nfree++] = i - 1;
		st->cap = ncap;
	}
	*slot = st->free[--st->nfree];
	return 0;
}

static void store_put(struct sim_store *st, uint32_t slot)
{
	st->free[st->nfree++] = slot;
}

static size_t max_step_blocks(const struct tc_sched *s)
{
	size_t max = 0;

	for (uint32_t st = 0; st < s->nsteps; st++) {
		size_t n = 0;

		for (uint32_t i = s->step_first[st]; i < s->step_first[st + 1]; i++)
			n += s->msgs[i].nblk;
		if (n > max)
			max = n;
	}
	return max;
}

#define NOWHERE UINT32_MAX

/* Alltoall's world: per node a store, per block {o,d} its holder and slot. */
struct sim_a2a {
	const struct tc_sched *s;
	size_t N, m;
	struct sim_store *store;
	uint32_t *holder, *slot;
	uint8_t *wire;
};

/* Node o starts with {o,d} for every d: copy send[o] into its store. */
static int sim_a2a_load(struct sim_a2a *w, void *const *send)
{
	const size_t N = w->N, m = w->m;

	for (size_t o = 0; o < N; o++) {
		for (size_t d = 0; d < N; d++) {
			size_t id = o * N + d;

			if (o == d) {
				w->holder[id] = NOWHERE;
				continue;
			}
			if (store_get(&w->store[o], m, &w->slot[id]))
				return tc_err(-ENOMEM, "%s: tc_sim_run: out of memory", w->s->algo);
			memcpy(w->store[o].data + (size_t)w->slot[id] * m, (const uint8_t *)send[o] + d * m, m);
			w->holder[id] = (uint32_t)o;
		}
	}
	return 0;
}

/* Step st, phase 1: every sender puts its blocks on the wire. */
static int sim_a2a_send(struct sim_a2a *w, uint32_t st)
{
	const struct tc_sched *s = w->s;
	const size_t N = w->N, m = w->m;
	size_t n = 0;

	for (uint32_t i = s->step_first[st]; i < s->step_first[st + 1]; i++) {
		const struct tc_msg *msg = &s->msgs[i];

		for (uint32_t k = 0; k < msg->nblk; k++) {
			const struct tc_blk *b = &s->blks[msg->blk_off + k];
			size_t id;

			if (b->a < 0 || (size_t)b->a >= N || b->b < 0 || (size_t)b->b >= N)
				return tc_err(-EPROTO, "%s: sim step %u: bad block {%d,%d}", s->algo, st, b->a, b->b);
			id = (size_t)b->a * N + b->b;
			if (w->holder[id] != (uint32_t)msg->src)
				return tc_err(-EPROTO, "%s: sim step %u: node %d sends block {%d,%d} it does not hold",
					      s->algo, st, msg->src, b->a, b->b);
			memcpy(w->wire + n * m, w->store[msg->src].data + (size_t)w->slot[id] * m, m);
			store_put(&w->store[msg->src], w->slot[id]);
			w->holder[id] = NOWHERE;
			n++;
		}
	}
	return 0;
}

/* Step st, phase 2: every receiver takes its blocks off the wire. */
static int sim_a2a_recv(struct sim_a2a *w, uint32_t st)
{
	const struct tc_sched *s = w->s;
	const size_t N = w->N, m = w->m;
	size_t n = 0;

	for (uint32_t i = s->step_first[st]; i < s->step_first[st + 1]; i++) {
		const struct tc_msg *msg = &s->msgs[i];

		for (uint32_t k = 0; k < msg->nblk; k++) {
			const struct tc_blk *b = &s->blks[msg->blk_off + k];
			size_t id = (size_t)b->a * N + b->b;

			if (store_get(&w->store[msg->dst], m, &w->slot[id]))
				return tc_err(-ENOMEM, "%s: tc_sim_run: out of memory", s->algo);
			memcpy(w->store[msg->dst].data + (size_t)w->slot[id] * m, w->wire + n * m, m);
			w->holder[id] = (uint32_t)msg->dst;
			n++;
		}
	}
	return 0;
}

/* Every node must hold exactly its blocks: copy them out in MPI order. */
static int sim_a2a_unload(struct sim_a2a *w, void *const *send, void *const *recv)
{
	const size_t N = w->N, m = w->m;

	for (size_t d = 0; d < N; d++) {
		for (size_t o = 0; o < N; o++) {
			size_t id = o * N + d;
			uint8_t *dst = (uint8_t *)recv[d] + o * m;

			if (o == d) {
				memcpy(dst, (const uint8_t *)send[d] + d * m, m);
				continue;
			}
			if (w->holder[id] != d)
				return tc_err(-EPROTO, "%s: sim end: block {%zu,%zu} is not at node %zu", w->s->algo, o,
					      d, d);
			memcpy(dst, w->store[d].data + (size_t)w->slot[id] * m, m);
		}
	}
	return 0;
}

static int sim_alltoall(const struct tc_sched *s, size_t m, void *const *send, void *const *recv)
{
	const size_t N = s->shape.nodes;
	struct sim_a2a w = { .s = s, .N = N, .m = m };
	int err;

	w.store = calloc(N, sizeof(*w.store));
	w.holder = malloc(N * N * sizeof(*w.holder));
	w.slot = malloc(N * N * sizeof(*w.slot));
	w.wire = malloc((max_step_blocks(s) + 1) * m);
	if (!w.store || !w.holder || !w.slot || !w.wire)
		err = tc_err(-ENOMEM, "%s: tc_sim_run: out of memory", s->algo);
	else
		err = sim_a2a_load(&w, send);
	for (uint32_t st = 0; !err && st < s->nsteps; st++)
		err = sim_a2a_send(&w, st) ?: sim_a2a_recv(&w, st);
	if (!err)
		err = sim_a2a_unload(&w, send, recv);
	if (w.store)
		for (size_t n = 0; n < N; n++) {
			free(w.store[n].data);
			free(w.store[n].free);
		}
	free(w.store);
	free(w.holder);
	free(w.slot);
	free(w.wire);
	return err;
}

static int sim_allgather(const struct tc_sched *s, size_t m, void *const *send, void *const *recv)
{
	const size_t N = s->shape.nodes;
	const int np = s->npackets;
	const size_t B = N * np;
	uint8_t *have, *wire;
	size_t wcap;
	int err = 0;

	/* A wire large enough for the step's bytes: each packet is at most m/np rounded up. */
	wcap = (max_step_blocks(s) + 1) * (m / np + 1);
	have = calloc(N * B, 1);
	wire = malloc(wcap);
	if (!have || !wire) {
		err = tc_err(-ENOMEM, "%s: tc_sim_run: out of memory", s->algo);
		goto out;
	}
	for (size_t n = 0; n < N; n++) {
		memcpy((uint8_t *)recv[n] + n * m, send[n], m);
		for (int p = 0; p < np; p++)
			have[n * B + n * np + p] = 1;
	}
	for (uint32_t st = 0; st < s->nsteps; st++) {
		const struct tc_msg *first = &s->msgs[s->step_first[st]];
		const struct tc_msg *last = &s->msgs[s->step_first[st + 1]];
		size_t w = 0;

		for (const struct tc_msg *msg = first; msg < last; msg++) {
			for (uint32_t k = 0; k < msg->nblk; k++) {
				const struct tc_blk *b = &s->blks[msg->blk_off + k];
				size_t lo, hi;

				if (b->a < 0 || (size_t)b->a >= N || b->b < 0 || b->b >= np) {
					err = tc_err(-EPROTO, "%s: sim step %u: bad block {%d,%d}",
								 s->algo, st, b->a, b->b);
					goto out;
				}
				if (!have[msg->src * B + (size_t)b->a * np + b->b]) {
					err = tc_err(-EPROTO, "%s: sim step %u: node %d sends block {%d,%d} it does not hold",
								 s->algo, st, msg->src, b->a, b->b);
					goto out;
				}
				lo = (size_t)b->b * m / np;
				hi = (size_t)(b->b + 1) * m / np;
				memcpy(wire + w, (uint8_t *)recv[msg->src] + (size_t)b->a * m + lo, hi - lo);
				w += hi - lo;
			}
		}
		w = 0;
		for (const struct tc_msg *msg = first; msg < last; msg++) {
			for (uint32_t k = 0; k < msg->nblk; k++) {
				const struct tc_blk *b = &s->blks[msg->blk_off + k];
				uint8_t *h = &have[msg->dst * B + (size_t)b->a * np + b->b];
				size_t lo = (size_t)b->b * m / np, hi = (size_t)(b->b + 1) * m / np;

				if (*h) {
					err = tc_err(-EPROTO, "%s: sim step %u: node %d receives block {%d,%d} a second time",
								 s->algo, st, msg->dst, b->a, b->b);
					goto out;
				}
				*h = 1;
				memcpy((uint8_t *)recv[msg->dst] + (size_t)b->a * m + lo, wire + w, hi - lo);
				w += hi - lo;
			}
		}
	}
	for (size_t n = 0; n < N; n++)
		for (size_t id = 0; id < B; id++)
			if (!have[n * B + id]) {
				err = tc_err(-EPROTO, "%s: sim end: node %zu never receives block {%zu,%zu}",
							 s->algo, n, id / np, id % np);
				goto out;
			}
out:
	free(have);
	free(wire);
	return err;
}

int tc_sim_run(const struct tc_sched *s, size_t block_bytes, void *const *send, void *const *recv)
{
	if (!s || !s->step_first)
		return tc_err(-EINVAL, "tc_sim_run: schedule not finished");
	if (!block_bytes || !send || !recv)
		return tc_err(-EINVAL, "%s: tc_sim_run: block_bytes 0 or no buffers", s->algo);
	for (int n = 0; n < s->shape.nodes; n++)
		if (!send[n] || !recv[n])
			return tc_err(-EINVAL, "%s: tc_sim_run: node %d has no buffer", s->algo, n);
	switch (s->coll) {
	case TC_ALLTOALL:
		return sim_alltoall(s, block_bytes, send, recv);
	case TC_ALLGATHER:
		if (s->npackets < 1 || block_bytes < (size_t)s->npackets)
			return tc_err(-EINVAL, "%s: tc_sim_run: block_bytes %zu < %d packets", s->algo,
						  block_bytes, s->npackets);
		return sim_allgather(s, block_bytes, send, recv);
	default:
		return tc_err(-EOPNOTSUPP, "%s: tc_sim_run: collective %d not simulated here", s->algo,
					  (int)s->coll);
	}
}
