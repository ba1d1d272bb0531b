// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Served calls and their requests.
 *
 * A nonblocking call served on the torus returns a generalized request
 * (PMPI_Grequest_start): a real MPI request, so it mixes with PMPI requests
 * in every MPI_Wait and MPI_Test call. The wrappers below first move served
 * calls forward with tc_test, complete the generalized request
 * (PMPI_Grequest_complete) when the collective is done, then let PMPI do
 * the rest. Waiting polls tc_test and PMPI_Test* in turn rather than
 * blocking in tc_wait, so point-to-point traffic a peer needs from this
 * rank keeps moving while the collective is outstanding.
 */
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torusmpi.h"

/* Between polls: sleep briefly rather than spin, so the library's progress
 * threads (and the peers' processes on an oversubscribed host) get the CPU. */
static void tm_pause(void)
{
	struct timespec ts = { 0, 20 * 1000 };

	nanosleep(&ts, NULL);
}

static pthread_mutex_t tm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tm_call *tm_pending; /* nonblocking calls not yet complete */

struct tm_call *tm_call_new(enum tm_coll coll, tc_comm_t *tc, MPI_Comm comm)
{
	struct tm_call *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->coll = coll;
	c->tc = tc;
	c->comm = comm;
	c->mreq = MPI_REQUEST_NULL;
	return c;
}

void *tm_call_alloc(struct tm_call *c, size_t bytes)
{
	void *p;

	if (c->nfree == TM_MAX_FREE)
		return NULL;
	p = malloc(bytes ? bytes : 1);
	if (p)
		c->to_free[c->nfree++] = p;
	return p;
}

/* The collective finished with ret: copy, unpack, count, free the buffers.
 * Returns the MPI error code of the call (also kept in c->err). */
static int tm_call_complete(struct tm_call *c, int ret)
{
	int i, pos = 0, bytes = 0, size;

	if (ret < 0) {
		fprintf(stderr, "torusmpi: rank %d: %s on the torus failed: %s\n", tm.world_rank,
			tm_coll_name(c->coll), *tc_last_error() ? tc_last_error() : tc_strerror(ret));
		c->err = MPI_ERR_OTHER;
	} else {
		if (c->copy_bytes)
			memcpy(c->copy_to, c->copy_from, c->copy_bytes);
		if (c->unpack_n) {
			PMPI_Type_size(c->unpack_type, &size);
			for (i = 0; i < c->unpack_n; i++)
				bytes += c->unpack_counts[i] * size;
			for (i = 0; i < c->unpack_n; i++)
				if (c->unpack_counts[i])
					PMPI_Unpack(c->unpack_from, bytes, &pos, (char *)c->unpack_to + c->unpack_disp[i],
						    c->unpack_counts[i], c->unpack_type, c->comm);
		}
		tm_count_served(c);
		c->err = MPI_SUCCESS;
	}
	for (i = 0; i < c->nfree; i++)
		free(c->to_free[i]);
	c->nfree = 0;
	return c->err;
}

int tm_call_finish(struct tm_call *c, int ret)
{
	int err = tm_call_complete(c, ret);

	free(c);
	return err;
}

static int tm_query_fn(void *extra, MPI_Status *status)
{
	struct tm_call *c = extra;

	PMPI_Status_set_elements(status, MPI_BYTE, 0);
	PMPI_Status_set_cancelled(status, 0);
	status->MPI_SOURCE = MPI_UNDEFINED;
	status->MPI_TAG = MPI_UNDEFINED;
	status->MPI_ERROR = c->err;
	return c->err;
}

static int tm_free_fn(void *extra)
{
	free(extra);
	return MPI_SUCCESS;
}

static int tm_cancel_fn(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS; /* a collective cannot be cancelled */
}

static void tm_unlink(struct tm_call *c)
{
	struct tm_call **pp;

	for (pp = &tm_pending; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
}

int tm_request_start(struct tm_call *c, MPI_Request *req)
{
	int err = PMPI_Grequest_start(tm_query_fn, tm_free_fn, tm_cancel_fn, c, req);

	if (err != MPI_SUCCESS) {
		/* the call is queued: finish it here rather than lose it */
		tc_wait(&c->treq);
		tm_call_finish(c, 0);
		return err;
	}
	c->mreq = *req;
	if (!c->treq) { /* nothing to move: complete at once */
		tm_call_complete(c, 0);
		PMPI_Grequest_complete(c->mreq);
		return MPI_SUCCESS;
	}
	pthread_mutex_lock(&tm_lock);
	c->next = tm_pending;
	tm_pending = c;
	pthread_mutex_unlock(&tm_lock);
	return MPI_SUCCESS;
}

/*
 * MPI_Comm_free of a communicator with its own tc_comm (init.c) destroys the
 * tc_comm, and with it the tc requests of the calls still outstanding on it;
 * MPI lets those calls complete normally, waited for after the free. So
 * each is waited for here, before the destroy, and its generalized request
 * completed: a later MPI_Wait finds it done.
 */
void tm_request_finish_all(tc_comm_t *tc)
{
	struct tm_call **pp, *c, *mine = NULL;
	int ret;

	pthread_mutex_lock(&tm_lock);
	for (pp = &tm_pending; (c = *pp);) {
		if (c->tc != tc) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		c->next = mine;
		mine = c;
	}
	pthread_mutex_unlock(&tm_lock);
	while ((c = mine)) {
		mine = c->next;
		ret = tc_wait(&c->treq);
		tm_call_complete(c, ret < 0 ? ret : 0);
		PMPI_Grequest_complete(c->mreq);
	}
}

/* Move the served request behind *r forward; returns 1 if it is one of ours
 * and still running. */
static int tm_poll_one(MPI_Request r)
{
	struct tm_call *c;
	int ret;

	if (r == MPI_REQUEST_NULL || !tm_pending)
		return 0;
	pthread_mutex_lock(&tm_lock);
	for (c = tm_pending; c && c->mreq != r; c = c->next)
		;
	if (!c) {
		pthread_mutex_unlock(&tm_lock);
		return 0;
	}
	ret = tc_test(&c->treq);
	if (ret == 0) {
		pthread_mutex_unlock(&tm_lock);
		return 1;
	}
	tm_unlink(c);
	pthread_mutex_unlock(&tm_lock);
	tm_call_complete(c, ret < 0 ? ret : 0);
	PMPI_Grequest_complete(c->mreq);
	return 0;
}

/* Poll every served request in reqs; returns how many are still running. */
static int tm_poll(int n, MPI_Request reqs[])
{
	int i, running = 0;

	if (!tm_pending)
		return 0;
	for (i = 0; i < n; i++)
		running += tm_poll_one(reqs[i]);
	return running;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	tm_poll(1, req);
	return PMPI_Test(req, flag, status);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	int flag;

	while (tm_poll(1, req)) {
		PMPI_Test(req, &flag, MPI_STATUS_IGNORE); /* drives MPI's progress; ours is not complete */
		tm_pause();
	}
	return PMPI_Wait(req, status);
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
	tm_poll(n, reqs);
	return PMPI_Testall(n, reqs, flag, statuses);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
	int flag;

	while (tm_poll(n, reqs)) {
		/* all-or-nothing: with ours incomplete this completes none */
		PMPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE);
		tm_pause();
	}
	return PMPI_Waitall(n, reqs, statuses);
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
	tm_poll(n, reqs);
	return PMPI_Testany(n, reqs, index, flag, status);
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
	int flag, err;

	if (!tm_pending)
		return PMPI_Waitany(n, reqs, index, status);
	for (;;) {
		tm_poll(n, reqs);
		err = PMPI_Testany(n, reqs, index, &flag, status);
		if (err != MPI_SUCCESS || flag)
			return err;
		tm_pause();
	}
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
	tm_poll(n, reqs);
	return PMPI_Testsome(n, reqs, outcount, indices, statuses);
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
	int err;

	if (!tm_pending)
		return PMPI_Waitsome(n, reqs, outcount, indices, statuses);
	for (;;) {
		tm_poll(n, reqs);
		err = PMPI_Testsome(n, reqs, outcount, indices, statuses);
		if (err != MPI_SUCCESS || *outcount != 0)
			return err;
		tm_pause();
	}
}

int MPI_Request_free(MPI_Request *req)
{
	int flag;

	while (tm_poll(1, req)) {
		PMPI_Test(req, &flag, MPI_STATUS_IGNORE);
		tm_pause();
	}
	return PMPI_Request_free(req);
}
