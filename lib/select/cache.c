// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Schedule cache: every (collective, algorithm, shape) is built, finished and
 * verified once, then shared read-only for the life of the process. A build
 * that fails (unsupported shape, or a schedule the verifier rejects) is
 * remembered too, so it is not retried on every call.
 *
 * Builds run under the cache mutex: two threads asking for the same schedule
 * never build it twice, at the price of serialising first-time builds.
 *
 * Parts (core/part.h): every (collective, algorithm, shape, node) the same
 * way, in a hash table of their own, but built outside its mutex: the
 * simulator's threads build their nodes' parts at the same time. A key's
 * first caller publishes an entry marked as building and builds it
 * unlocked; later callers of that key wait for it (no part is built twice,
 * none is lost). An algorithm with a part generator
 * builds the node's part alone; any other takes the fallback: its whole
 * schedule from the cache above (built and verified once per process), cut
 * to the node's part. Fallbacks are counted (__tc_part_fallbacks) so tests
 * can list the algorithms that still take it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/part.h"
#include "core/verify.h"
#include "select/select.h"

struct tc_cache_entry {
	struct tc_cache_entry *next;
	enum tc_coll_id coll;
	const struct tc_algo *algo;
	struct tc_shape shape;
	struct tc_sched *sched; /* NULL when the build failed */
	int err;
	char why[512];
};

static pthread_mutex_t tc_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tc_cache_entry *tc_cache_head; /* protected by tc_cache_lock */

/* Build, verify; on failure fill e->err and e->why. Caller holds tc_cache_lock. */
static void __tc_cache_build(struct tc_cache_entry *e)
{
	struct tc_verify_report r;
	const char *why = NULL;
	struct tc_sched *s = NULL;
	int err;

	err = tc_sched_build_whole(e->algo, &e->shape, &s, &why);
	if (err) {
		e->err = err;
		snprintf(e->why, sizeof(e->why), "%s", why ? why : tc_last_error());
		return;
	}
	if (!s || !s->step_first || s->coll != e->coll || !tc_shape_equal(&s->shape, &e->shape)) {
		tc_sched_free(s);
		e->err = -EPROTO;
		snprintf(e->why, sizeof(e->why), "%s: build returned no finished schedule of this collective and shape",
			 e->algo->name);
		return;
	}
	err = tc_verify(s, &r);
	if (err) {
		e->err = err;
		snprintf(e->why, sizeof(e->why), "%s: schedule fails verification: %s", e->algo->name,
			 err == -EPROTO ? r.first_violation : tc_last_error());
		tc_verify_report_free(&r);
		tc_sched_free(s);
		return;
	}
	tc_verify_report_free(&r);
	e->sched = s;
}

int tc_sched_get(enum tc_coll_id coll, const struct tc_algo *algo, const struct tc_shape *shape,
		 const struct tc_sched **out, const char **why)
{
	struct tc_cache_entry *e;
	int err;

	if (!algo || !shape || !out) {
		if (why)
			*why = "tc_sched_get: NULL algorithm, shape or output";
		return -EINVAL;
	}
	if (algo->coll != coll) {
		if (why)
			*why = "tc_sched_get: algorithm is for another collective";
		return -EINVAL;
	}
	pthread_mutex_lock(&tc_cache_lock);
	for (e = tc_cache_head; e; e = e->next)
		if (e->coll == coll && e->algo == algo && tc_shape_equal(&e->shape, shape))
			break;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			pthread_mutex_unlock(&tc_cache_lock);
			if (why)
				*why = "tc_sched_get: out of memory";
			return -ENOMEM;
		}
		e->coll = coll;
		e->algo = algo;
		e->shape = *shape;
		__tc_cache_build(e);
		/* -ENOMEM may be transient: do not remember it */
		if (e->err == -ENOMEM) {
			err = e->err;
			tc_err(err, "%s", e->why);
			free(e);
			pthread_mutex_unlock(&tc_cache_lock);
			if (why)
				*why = "tc_sched_get: out of memory building the schedule";
			return err;
		}
		e->next = tc_cache_head;
		tc_cache_head = e;
	}
	pthread_mutex_unlock(&tc_cache_lock);
	/* entries are never freed or changed once published */
	if (e->err) {
		if (why)
			*why = e->why;
		tc_err(e->err, "%s", e->why);
		return e->err;
	}
	*out = e->sched;
	return 0;
}

/*
 * An entry is published (in the table) before its part is built, so the
 * build runs outside tc_part_lock: every node of a simulated fabric builds
 * its own part in its own thread at the same time, and a second caller of
 * the same key waits for the first one's build instead of repeating it.
 */
enum tc_part_state {
	TC_PART_BUILDING, /* one caller builds it; others wait on tc_part_built */
	TC_PART_DONE,	  /* part or err final: never changed again */
	TC_PART_NOMEM,	  /* the build ran out of memory: the next caller retries */
};

struct tc_part_entry {
	struct tc_part_entry *next;
	enum tc_coll_id coll;
	const struct tc_algo *algo;
	struct tc_shape shape;
	int node;
	enum tc_part_state state; /* protected by tc_part_lock */
	struct tc_part *part;	  /* NULL when the build failed; final once DONE */
	int err;
	char why[512];
};

#define TC_PART_BUCKETS 4096
static pthread_mutex_t tc_part_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tc_part_built = PTHREAD_COND_INITIALIZER; /* an entry left TC_PART_BUILDING */
static struct tc_part_entry *tc_part_tab[TC_PART_BUCKETS]; /* protected by tc_part_lock */
static unsigned long tc_part_nfallback, tc_part_ngen;	  /* atomic */

unsigned long __tc_part_fallbacks(void)
{
	return __atomic_load_n(&tc_part_nfallback, __ATOMIC_RELAXED);
}

unsigned long __tc_part_generated(void)
{
	return __atomic_load_n(&tc_part_ngen, __ATOMIC_RELAXED);
}

static unsigned int part_hash(enum tc_coll_id coll, const struct tc_algo *algo, const struct tc_shape *sh, int node)
{
	uint64_t h = (uint64_t)(uintptr_t)algo * 31 + (uint64_t)coll;

	for (int d = 0; d < sh->ndims; d++)
		h = h * 1000003u + (uint64_t)sh->dims[d];
	h = h * 1000003u + (uint64_t)node;
	h ^= h >> 29;
	h *= 0x9e3779b97f4a7c15ull;
	return (unsigned int)(h >> 40) % TC_PART_BUCKETS;
}

/* Receives from peer q in p's active step i: msgs[*lo .. *hi). */
static void recv_group(const struct tc_part *p, uint32_t i, uint32_t k, uint32_t *hi)
{
	*hi = k;
	while (*hi < p->act_first[i + 1] && p->msgs[*hi].src == p->msgs[k].src)
		(*hi)++;
}

int tc_part_check(const struct tc_algo *algo, const struct tc_part *p, char *why, size_t len)
{
	const int n = p->node;
	uint32_t nown = p->coll == TC_ALLTOALL ? (uint32_t)p->shape.nodes : (uint32_t)p->npackets;
	uint8_t *sent = calloc(nown + 1, 1);
	int err = 0;

	if (!sent)
		return tc_err(-ENOMEM, "%s: out of memory checking node %d's part", algo->name, n);
	for (uint32_t i = 0; i < p->nact && !err; i++) {
		uint32_t k = p->act_first[i], hi;

		for (; k < p->act_first[i + 1] && p->msgs[k].src == n; k++)
			for (uint32_t b = 0; b < p->msgs[k].nblk; b++) {
				const struct tc_blk *x = &p->blks[p->msgs[k].blk_off + b];

				if (x->a == n)
					sent[x->b] = 1; /* alltoall: its destination; allgather: the packet */
			}
		for (; k < p->act_first[i + 1] && !err; k = hi) {
			const struct tc_msg *m = &p->msgs[k];
			struct tc_part *q;
			const char *w = NULL;
			char diff[256];

			recv_group(p, i, k, &hi);
			q = tc_part_new(&p->shape, p->coll, algo->name, NULL, 0, m->src);
			if (!q) {
				err = -ENOMEM;
				break;
			}
			tc_part_only(q, m->step, n);
			err = algo->part(q, &w);
			if (err == TC_PART_WHOLE) {
				w = "the generator builds this node's part but not its peer's";
				err = -EPROTO;
			}
			if (err) {
				snprintf(why, len, "%s: node %d, step %u: generating peer %d's send failed: %s", algo->name, n,
					 m->step, m->src, w ? w : tc_last_error());
			} else if (q->nmsgs != hi - k) {
				snprintf(why, len, "%s: node %d, step %u: it receives %u message(s) from peer %d, which sends it %u",
					 algo->name, n, m->step, hi - k, m->src, q->nmsgs);
				err = -EPROTO;
			} else {
				for (uint32_t j = 0; j < q->nmsgs && !err; j++) {
					/* compare one message as two one-message parts would */
					const struct tc_msg *x = &p->msgs[k + j], *y = &q->msgs[j];
					int same = x->step == y->step && x->src == y->src && x->dst == y->dst &&
						   x->op == y->op && !memcmp(x->route, y->route, sizeof(x->route)) &&
						   x->nblk == y->nblk &&
						   !memcmp(&p->blks[x->blk_off], &q->blks[y->blk_off], x->nblk * sizeof(struct tc_blk));

					if (!same) {
						snprintf(diff, sizeof(diff), "%u blocks, first {%d,%d} against %u blocks, first {%d,%d}, or the route differs",
							 x->nblk, p->blks[x->blk_off].a, p->blks[x->blk_off].b, y->nblk,
							 q->blks[y->blk_off].a, q->blks[y->blk_off].b);
						snprintf(why, len, "%s: node %d, step %u: receive %u from peer %d disagrees with the peer's send: %s",
							 algo->name, n, m->step, j, m->src, diff);
						err = -EPROTO;
					}
				}
			}
			tc_part_free(q);
		}
	}
	for (uint32_t d = 0; d < nown && !err; d++)
		if (!sent[d] && !(p->coll == TC_ALLTOALL && (int)d == n)) {
			if (p->coll == TC_ALLTOALL)
				snprintf(why, len, "%s: node %d never sends its block for node %d", algo->name, n, d);
			else
				snprintf(why, len, "%s: node %d never sends its packet %u", algo->name, n, d);
			err = -EPROTO;
		}
	free(sent);
	if (err == -EPROTO)
		tc_err(err, "%s", why);
	return err;
}

int tc_part_build(enum tc_coll_id coll, const struct tc_algo *algo, const struct tc_shape *shape, int node,
		  struct tc_part **out, const char **why)
{
	struct tc_part *p;
	const struct tc_sched *s;
	int err;

	*why = NULL;
	p = algo->part ? tc_part_new(shape, coll, algo->name, NULL, 0, node) : NULL;
	if (algo->part && !p)
		return -ENOMEM;
	err = p ? algo->part(p, why) : TC_PART_WHOLE;
	if (err == TC_PART_WHOLE) {
		/* the fallback: the whole schedule, verified, then cut */
		tc_part_free(p);
		err = tc_sched_get(coll, algo, shape, &s, why);
		if (err)
			return err;
		__atomic_add_fetch(&tc_part_nfallback, 1, __ATOMIC_RELAXED);
		return tc_part_extract(s, node, out);
	}
	if (!err && (!p->act_first || p->coll != coll || strcmp(p->algo, algo->name))) {
		*why = "part generator returned no finished part of this collective and algorithm";
		err = -EPROTO;
	}
	if (!err) {
		/* checked against its peers before first use, as a whole schedule is verified */
		static __thread char cwhy[400];

		err = tc_part_check(algo, p, cwhy, sizeof(cwhy));
		if (err == -EPROTO)
			*why = cwhy;
	}
	if (err) {
		tc_part_free(p);
		return err;
	}
	__atomic_add_fetch(&tc_part_ngen, 1, __ATOMIC_RELAXED);
	*out = p;
	return 0;
}

int tc_part_get(enum tc_coll_id coll, const struct tc_algo *algo, const struct tc_shape *shape, int node,
		const struct tc_part **out, const char **why)
{
	struct tc_part_entry *e;
	struct tc_part *part = NULL;
	const char *w = NULL;
	char bwhy[sizeof(e->why)];
	unsigned int h;
	int err;

	if (!algo || !shape || !out || algo->coll != coll || node < 0 || node >= shape->nodes) {
		if (why)
			*why = "tc_part_get: no algorithm of this collective, shape, output or node";
		return -EINVAL;
	}
	h = part_hash(coll, algo, shape, node);
	pthread_mutex_lock(&tc_part_lock);
	for (;;) {
		for (e = tc_part_tab[h]; e; e = e->next)
			if (e->node == node && e->algo == algo && e->coll == coll && tc_shape_equal(&e->shape, shape))
				break;
		if (e && e->state == TC_PART_BUILDING) {
			pthread_cond_wait(&tc_part_built, &tc_part_lock);
			continue; /* look again: the builder may have failed for memory */
		}
		break;
	}
	if (e && e->state == TC_PART_DONE) {
		pthread_mutex_unlock(&tc_part_lock);
		goto done;
	}
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			pthread_mutex_unlock(&tc_part_lock);
			if (why)
				*why = "tc_part_get: out of memory";
			return -ENOMEM;
		}
		e->coll = coll;
		e->algo = algo;
		e->shape = *shape;
		e->node = node;
		e->next = tc_part_tab[h];
		tc_part_tab[h] = e;
	}
	/* new, or an earlier build ran out of memory: this caller builds it */
	e->state = TC_PART_BUILDING;
	pthread_mutex_unlock(&tc_part_lock);

	tc_err_clear();
	err = tc_part_build(coll, algo, shape, node, &part, &w);
	if (err)
		snprintf(bwhy, sizeof(bwhy), "%s", w ? w : *tc_last_error() ? tc_last_error() : tc_strerror(err));

	pthread_mutex_lock(&tc_part_lock);
	e->part = err ? NULL : part;
	e->err = err;
	if (err)
		memcpy(e->why, bwhy, sizeof(e->why));
	/* -ENOMEM may be transient: do not remember it */
	e->state = err == -ENOMEM ? TC_PART_NOMEM : TC_PART_DONE;
	pthread_cond_broadcast(&tc_part_built);
	pthread_mutex_unlock(&tc_part_lock);
	if (err == -ENOMEM) {
		tc_err(err, "%s", bwhy);
		if (why)
			*why = "tc_part_get: out of memory building the part";
		return err;
	}
done:
	/* a DONE entry is never freed or changed again */
	if (e->err) {
		if (why)
			*why = e->why;
		tc_err(e->err, "%s", e->why);
		return e->err;
	}
	*out = e->part;
	return 0;
}
