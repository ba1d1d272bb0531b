// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Schedule cache: every (collective, algorithm, shape) is built, finished and
 * verified once, then shared read-only for the life of the process. A build
 * that fails (unsupported shape, or a schedule the verifier rejects) is
 * remembered too, so it is not retried on every call.
 *
 * Builds run under the cache mutex: two threads asking for the same schedule
 * never build it twice, at the price of serialising first-time builds.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

	err = e->algo->build(&e->shape, &s, &why);
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
