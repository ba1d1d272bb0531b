// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The part cache (lib/select/cache.c, tc_part_get) under races: it builds
 * outside its lock, so several threads asking for the same keys at once must
 * still get one build per key and the same part, and none may be lost.
 *
 * Eight threads each ask for every node's part of four (collective,
 * algorithm, shape) keys on an 8x8 torus, each thread walking the nodes from
 * its own start, so the same key is asked for by several threads at once:
 * at2 alltoall and ring allgather (generated alone), gossip-ham1 allgather
 * (cut from the whole schedule: the fallback) and ar alltoall on 8x8 (not
 * supported: an error entry, remembered). Checked: every thread got the
 * same part pointer for a key; the generated and fallback counters grew by
 * exactly one per key together (a second build of a key counts twice; which
 * of the two a key takes is not this test's business); the error is
 * the same -EOPNOTSUPP for every thread.
 *
 * Then a generator's own per-shape cache: allport-kd keeps the plans of two
 * shapes and generates parts from them outside its lock. Eight threads build
 * (uncached, tc_part_build) every node's part of three shapes in turn, so a
 * plan is wanted for a third shape while two are being read; every part must
 * equal the one built by one thread before. Run under ThreadSanitizer by
 * make check-sanitize-quick.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/part.h"
#include "select/select.h"
#include "tap.h"

#define NTHREADS 8
#define NODES 64

struct key {
	enum tc_coll_id coll;
	const char *algo;
	int generated; /* 1: a part generator; 0: the fallback today; -1: unsupported */
};

static const struct key keys[] = {
	{ TC_ALLTOALL, "at2", 1 },
	{ TC_ALLGATHER, "ring", 1 },
	{ TC_ALLGATHER, "gossip-ham1", 0 },
	{ TC_ALLTOALL, "ar", -1 },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static struct tc_shape shape;
static const struct tc_algo *algos[NKEYS];
static pthread_barrier_t start;

struct res {
	int id;
	const struct tc_part *got[NKEYS][NODES];
	int err[NKEYS][NODES];
};

static void *worker(void *arg)
{
	struct res *r = arg;

	pthread_barrier_wait(&start);
	for (int i = 0; i < NODES; i++) {
		int n = (i + r->id * 3) % NODES; /* overlapping walks: threads meet on keys */

		for (size_t k = 0; k < NKEYS; k++) {
			const char *why = NULL;

			r->err[k][n] = tc_part_get(keys[k].coll, algos[k], &shape, n, &r->got[k][n], &why);
		}
	}
	return NULL;
}

/* allport-kd on three shapes: one more than its plan cache holds */
#define KD_SHAPES 3
#define KD_NODES 32
static const int kd_dims[KD_SHAPES][3] = { { 4, 4, 2 }, { 4, 2, 4 }, { 2, 4, 4 } };
static struct tc_shape kd_shape[KD_SHAPES];
static struct tc_part *kd_ref[KD_SHAPES][KD_NODES];
static const struct tc_algo *kd_algo;

struct kd_res {
	int id;
	int errs, differ;
	char first[160];
};

static void *kd_worker(void *arg)
{
	struct kd_res *r = arg;

	pthread_barrier_wait(&start);
	for (int i = 0; i < KD_SHAPES * KD_NODES; i++) {
		int j = (i + r->id * 5) % (KD_SHAPES * KD_NODES);
		int sh = j % KD_SHAPES, n = j / KD_SHAPES; /* the shapes in turn */
		struct tc_part *p = NULL;
		const char *why = NULL;
		char diff[128];

		if (tc_part_build(TC_ALLTOALL, kd_algo, &kd_shape[sh], n, &p, &why)) {
			if (!r->errs++)
				snprintf(r->first, sizeof(r->first), "node %d of shape %d: %s", n, sh, why ? why : "?");
		} else if (!tc_part_equal(p, kd_ref[sh][n], diff, sizeof(diff))) {
			if (!r->differ++ && !r->errs)
				snprintf(r->first, sizeof(r->first), "node %d of shape %d: %s", n, sh, diff);
		}
		tc_part_free(p);
	}
	return NULL;
}

static void test_kd_plans(void)
{
	static struct kd_res res[NTHREADS];
	pthread_t tid[NTHREADS];
	int started = 0, errs = 0, differ = 0, refs = 0;

	kd_algo = tc_algo_find(TC_ALLTOALL, "allport-kd");
	if (!tap_ok(kd_algo != NULL, "algorithm allport-kd is registered"))
		return;
	for (int sh = 0; sh < KD_SHAPES; sh++) {
		if (tc_shape_init(&kd_shape[sh], 3, kd_dims[sh], 7, 0)) /* every dimension wraps */
			return (void)tap_ok(0, "shape %d", sh);
		for (int n = 0; n < KD_NODES; n++) {
			const char *why = NULL;

			refs += !tc_part_build(TC_ALLTOALL, kd_algo, &kd_shape[sh], n, &kd_ref[sh][n], &why);
		}
	}
	if (!tap_ok(refs == KD_SHAPES * KD_NODES, "allport-kd: %d of %d reference parts built by one thread", refs,
		    KD_SHAPES * KD_NODES))
		return;
	pthread_barrier_init(&start, NULL, NTHREADS);
	for (int t = 0; t < NTHREADS; t++) {
		res[t].id = t;
		if (pthread_create(&tid[t], NULL, kd_worker, &res[t]))
			break;
		started++;
	}
	if (!tap_ok(started == NTHREADS, "allport-kd: started %d of %d threads", started, NTHREADS))
		exit(tap_done()); /* the started ones wait at the barrier */
	for (int t = 0; t < NTHREADS; t++) {
		pthread_join(tid[t], NULL);
		errs += res[t].errs;
		differ += res[t].differ;
	}
	pthread_barrier_destroy(&start);
	tap_ok(!errs && !differ,
	       "allport-kd: %d threads built every node's part of 4x4x2, 4x2x4 and 2x4x4 in turn, each equal to "
	       "one thread's (%d failed, %d differ%s%s)",
	       NTHREADS, errs, differ, errs || differ ? "; first: " : "",
	       errs || differ ? (res[0].errs || res[0].differ ? res[0].first : "another thread's") : "");
	for (int sh = 0; sh < KD_SHAPES; sh++)
		for (int n = 0; n < KD_NODES; n++)
			tc_part_free(kd_ref[sh][n]);
}

int main(void)
{
	static struct res res[NTHREADS];
	pthread_t tid[NTHREADS];
	const int dims[2] = { 8, 8 };
	unsigned long gen0, fb0, built, want = 0;
	int started = 0;

	if (!tap_ok(!tc_shape_init(&shape, 2, dims, 3, 0), "an 8x8 torus"))
		return tap_done();
	for (size_t k = 0; k < NKEYS; k++) {
		algos[k] = tc_algo_find(keys[k].coll, keys[k].algo);
		if (!tap_ok(algos[k] != NULL, "algorithm %s is registered", keys[k].algo))
			return tap_done();
		want += keys[k].generated >= 0 ? NODES : 0;
	}
	gen0 = __tc_part_generated();
	fb0 = __tc_part_fallbacks();
	pthread_barrier_init(&start, NULL, NTHREADS);
	for (int t = 0; t < NTHREADS; t++) {
		res[t].id = t;
		if (pthread_create(&tid[t], NULL, worker, &res[t]))
			break;
		started++;
	}
	if (!tap_ok(started == NTHREADS, "started %d of %d threads", started, NTHREADS))
		return tap_done(); /* the started ones wait at the barrier: exit */
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(tid[t], NULL);
	pthread_barrier_destroy(&start);

	for (size_t k = 0; k < NKEYS; k++) {
		int bad_err = 0, differ = 0, missing = 0, wrong_node = 0;

		for (int n = 0; n < NODES; n++)
			for (int t = 0; t < NTHREADS; t++) {
				int want = keys[k].generated < 0 ? -EOPNOTSUPP : 0;

				if (res[t].err[k][n] != want)
					bad_err++;
				if (want)
					continue;
				if (!res[t].got[k][n])
					missing++;
				else if (res[t].got[k][n]->node != n)
					wrong_node++;
				if (res[t].got[k][n] != res[0].got[k][n])
					differ++;
			}
		tap_ok(!bad_err, "%s: every thread got %s for all %d nodes (%d did not)", keys[k].algo,
		       keys[k].generated < 0 ? "-EOPNOTSUPP" : "0", NODES, bad_err);
		tap_ok(!missing && !wrong_node, "%s: every part is there and is its node's (%d missing, %d another node's)",
		       keys[k].algo, missing, wrong_node);
		tap_ok(!differ, "%s: every thread got the same cached part for a node (%d differ)", keys[k].algo, differ);
	}
	built = __tc_part_generated() - gen0 + __tc_part_fallbacks() - fb0;
	tap_ok(built == want, "parts built: %lu (%lu generated, %lu cut from the whole schedule), one per key (%lu)",
	       built, __tc_part_generated() - gen0, __tc_part_fallbacks() - fb0, want);
	/* asked again: every key is cached now, nothing is built */
	gen0 = __tc_part_generated();
	for (int n = 0; n < NODES; n++) {
		const struct tc_part *p;
		const char *why;

		tc_part_get(TC_ALLTOALL, algos[0], &shape, n, &p, &why);
	}
	tap_ok(__tc_part_generated() == gen0, "asked again, at2's 64 parts come from the cache (%lu built)",
	       __tc_part_generated() - gen0);
	test_kd_plans();
	return tap_done();
}
