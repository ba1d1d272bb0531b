// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The library's own algorithm choice ("auto").
 *
 * 1. Topology pick: the first algorithm of a preference list whose schedule
 *    builds and verifies for the shape (through the schedule cache, so a
 *    shape an algorithm refuses is simply skipped):
 *      alltoall, one-port:  ar1, at2-1p, pt4, mt3, mtk, then the direct ones
 *      alltoall, all-port:  ar (even rings), at2 (2D, multiples of 4),
 *                           opt2d, allport-kd, pad, then the direct ones
 *      allgather, 2D:       bcast-pattern, gossip-ham2, gossip-ham1, saad-schultz
 *      allgather, other:    gossip-ham1 (3D/d-D), saad-schultz, ring, bruck
 *    each list ending with every remaining algorithm of the collective.
 * 2. Size: the direct alternatives (alltoall: pairwise, atape, direct, bruck;
 *    allgather: bruck, ring) are priced with the cost model at this block
 *    size, and one replaces the topology pick when its predicted time is
 *    lower. Prices use the Intel Paragon parameters of the papers
 *    (ts 75 us, tw 0.011 us/B, rho 0.014 us/B): the device's own timing
 *    model has the same form. Alternatives are only priced up to
 *    TC_AUTO_PRICE_MAX_NODES nodes (their schedules grow as P^2).
 * Decisions are remembered per (collective, shape, block size rounded up to a
 * power of two).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "select/select.h"

#define TC_AUTO_PRICE_MAX_NODES 256

static const struct tc_algo *const a2a_oneport[] = {
	&tc_algo_ar1, &tc_algo_at2_1p, &tc_algo_pt4, &tc_algo_mt3, &tc_algo_mtk, NULL,
};
static const struct tc_algo *const a2a_allport[] = {
	&tc_algo_ar, &tc_algo_at2, &tc_algo_opt2d, &tc_algo_allport_kd, &tc_algo_pad, NULL,
};
static const struct tc_algo *const a2a_alt[] = {
	&tc_algo_pairwise, &tc_algo_atape, &tc_algo_direct, &tc_algo_bruck_a2a, NULL,
};
static const struct tc_algo *const ag_2d[] = {
	&tc_algo_bcast_pattern, &tc_algo_gossip_ham2, &tc_algo_gossip_ham1, &tc_algo_saad_schultz, NULL,
};
static const struct tc_algo *const ag_other[] = {
	&tc_algo_gossip_ham1, &tc_algo_saad_schultz, &tc_algo_ring_ag, &tc_algo_bruck_ag, NULL,
};
static const struct tc_algo *const ag_alt[] = {
	&tc_algo_bruck_ag, &tc_algo_ring_ag, NULL,
};

struct tc_auto_entry {
	struct tc_auto_entry *next;
	enum tc_coll coll;
	struct tc_shape shape;
	size_t bucket;
	const struct tc_algo *algo;
};

static pthread_mutex_t tc_auto_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tc_auto_entry *tc_auto_head; /* protected by tc_auto_lock */

static const struct tc_algo *first_that_builds(enum tc_coll coll, const struct tc_shape *shape,
					       const struct tc_algo *const *list)
{
	const struct tc_sched *s;
	const char *why;

	for (int i = 0; list[i]; i++)
		if (list[i]->coll == coll && !tc_sched_get(coll, list[i], shape, &s, &why))
			return list[i];
	/* anything else of the collective, in table order */
	for (int i = 0; tc_algos[i]; i++)
		if (tc_algos[i]->coll == coll && !tc_sched_get(coll, tc_algos[i], shape, &s, &why))
			return tc_algos[i];
	return NULL;
}

static int price(enum tc_coll coll, const struct tc_algo *a, const struct tc_shape *shape, size_t m, double *us)
{
	const struct tc_cost_params p = {
		.ts_us = 75, .tw_us_per_byte = 0.011, .rho_us_per_byte = 0.014, .block_bytes = m,
	};
	const struct tc_sched *s;
	struct tc_cost c;
	const char *why;
	int err;

	err = tc_sched_get(coll, a, shape, &s, &why);
	if (err)
		return err;
	err = tc_cost_eval(s, &p, &c);
	if (err)
		return err;
	*us = c.time_us;
	return 0;
}

static const struct tc_algo *choose(enum tc_coll coll, const struct tc_shape *shape, size_t m)
{
	const struct tc_algo *const *list, *const *alt, *best;
	double best_us, us;

	if (coll == TC_COLL_ALLTOALL) {
		list = shape->one_port ? a2a_oneport : a2a_allport;
		alt = a2a_alt;
	} else {
		list = shape->ndims == 2 && !shape->one_port ? ag_2d : ag_other;
		alt = ag_alt;
	}
	best = first_that_builds(coll, shape, list);
	if (!best || shape->nodes > TC_AUTO_PRICE_MAX_NODES)
		return best;
	if (price(coll, best, shape, m, &best_us))
		return best;
	for (int i = 0; alt[i]; i++) {
		if (alt[i] == best || price(coll, alt[i], shape, m, &us))
			continue;
		if (us < best_us) {
			best = alt[i];
			best_us = us;
		}
	}
	return best;
}

const struct tc_algo *tc_algo_auto(enum tc_coll coll, const struct tc_shape *shape, size_t block_bytes)
{
	struct tc_auto_entry *e;
	const struct tc_algo *a;
	size_t bucket = 1;

	if (!shape || (coll != TC_COLL_ALLTOALL && coll != TC_COLL_ALLGATHER))
		return NULL;
	while (bucket < block_bytes && bucket < ((size_t)1 << 40))
		bucket <<= 1;
	pthread_mutex_lock(&tc_auto_lock);
	for (e = tc_auto_head; e; e = e->next)
		if (e->coll == coll && e->bucket == bucket && tc_shape_equal(&e->shape, shape))
			break;
	if (e) {
		a = e->algo;
		pthread_mutex_unlock(&tc_auto_lock);
		return a;
	}
	pthread_mutex_unlock(&tc_auto_lock);

	/* choose outside the lock: tc_sched_get has its own */
	a = choose(coll, shape, bucket);
	if (!a)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return a;
	e->coll = coll;
	e->shape = *shape;
	e->bucket = bucket;
	e->algo = a;
	pthread_mutex_lock(&tc_auto_lock);
	e->next = tc_auto_head;
	tc_auto_head = e;
	pthread_mutex_unlock(&tc_auto_lock);
	return a;
}
