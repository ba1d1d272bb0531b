// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The verbs transport's bootstrap (see bootstrap.h). With no out-of-band
 * hook, the launcher is the rendezvous: PMIx_Init gives the rank, PMIx_Get of
 * PMIX_JOB_SIZE on the wildcard rank the size, and each communicator's
 * connection data is swapped by PMIx_Put(PMIX_GLOBAL) + PMIx_Commit +
 * PMIx_Fence(PMIX_COLLECT_DATA) + PMIx_Get per rank, under a key numbered
 * by the communicator's creation order (the same on every rank, since
 * communicators are created collectively). Open MPI's mpirun and Slurm's
 * srun --mpi=pmix both serve it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <pmix.h>

#include "transport/bootstrap.h"

#define TC_BOOT_MAX_RANKS (1 << 20)

static pthread_mutex_t tc_pmix_lock = PTHREAD_MUTEX_INITIALIZER;
static int tc_pmix_up;		 /* protected by tc_pmix_lock */
static pmix_proc_t tc_pmix_me;	 /* set once tc_pmix_up */
static uint32_t tc_pmix_size;	 /* set once tc_pmix_up */
static uint32_t tc_boot_seq;	 /* protected by tc_pmix_lock */

/* Finalize at exit: a launcher counts a rank that never finalized as failed. */
__attribute__((destructor)) static void tc_pmix_fini(void)
{
	if (tc_pmix_up)
		PMIx_Finalize(NULL, 0);
	tc_pmix_up = 0;
}

/* Caller holds tc_pmix_lock. */
static int __tc_pmix_init(void)
{
	pmix_value_t *val = NULL;
	pmix_proc_t wild;
	pmix_status_t rc;

	if (tc_pmix_up)
		return 0;
	rc = PMIx_Init(&tc_pmix_me, NULL, 0);
	if (rc != PMIX_SUCCESS)
		return tc_err(-ENOTCONN,
			      "transport verbs: no launcher (PMIx_Init: %s): start with mpirun -np N or srun --mpi=pmix, "
			      "or pass tc_comm_attr.oob_allgather",
			      PMIx_Error_string(rc));
	PMIX_LOAD_PROCID(&wild, tc_pmix_me.nspace, PMIX_RANK_WILDCARD);
	rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
	if (rc != PMIX_SUCCESS || !val) {
		PMIx_Finalize(NULL, 0);
		return tc_err(-EPROTO, "transport verbs: the launcher did not give the job size (PMIx_Get %s: %s)",
			      PMIX_JOB_SIZE, PMIx_Error_string(rc));
	}
	tc_pmix_size = val->type == PMIX_UINT32 ? val->data.uint32 : 0;
	PMIX_VALUE_RELEASE(val);
	if (!tc_pmix_size || tc_pmix_size > TC_BOOT_MAX_RANKS) {
		PMIx_Finalize(NULL, 0);
		return tc_err(-EPROTO, "transport verbs: the launcher gave no usable job size");
	}
	tc_pmix_up = 1;
	return 0;
}

int tc_boot_open(struct tc_boot *b, const struct tc_comm_attr *attr)
{
	int ret = 0;

	memset(b, 0, sizeof(*b));
	pthread_mutex_lock(&tc_pmix_lock);
	if (attr->oob_allgather) {
		if (attr->oob_size < 1 || attr->oob_size > TC_BOOT_MAX_RANKS || attr->oob_rank < 0 ||
		    attr->oob_rank >= attr->oob_size) {
			ret = tc_err(-EINVAL, "transport verbs: tc_comm_attr.oob_rank %d / oob_size %d invalid",
				     attr->oob_rank, attr->oob_size);
			goto out;
		}
		b->rank = attr->oob_rank;
		b->size = attr->oob_size;
		b->oob_allgather = attr->oob_allgather;
		b->oob_ctx = attr->oob_ctx;
	} else {
		ret = __tc_pmix_init();
		if (ret)
			goto out;
		b->rank = tc_pmix_me.rank;
		b->size = tc_pmix_size;
	}
	b->seq = tc_boot_seq++;
out:
	pthread_mutex_unlock(&tc_pmix_lock);
	return ret;
}

static int tc_pmix_allgather(struct tc_boot *b, const void *mine, void *all, size_t bytes, int timeout_ms)
{
	char key[PMIX_MAX_KEYLEN];
	pmix_info_t info[2];
	pmix_value_t v, *got;
	pmix_proc_t wild, p;
	pmix_status_t rc;
	bool collect = true;
	int secs = (timeout_ms + 999) / 1000;

	/* a key per exchange: a peer's Get must not find an earlier exchange's value */
	snprintf(key, sizeof(key), "torus.verbs.%u.%u", b->seq, b->round++);
	PMIX_VALUE_CONSTRUCT(&v);
	v.type = PMIX_BYTE_OBJECT;
	v.data.bo.bytes = (char *)mine;
	v.data.bo.size = bytes;
	rc = PMIx_Put(PMIX_GLOBAL, key, &v);
	if (rc == PMIX_SUCCESS)
		rc = PMIx_Commit();
	if (rc != PMIX_SUCCESS)
		return tc_err(-EPROTO, "transport verbs: PMIx_Put/Commit of the connection data: %s", PMIx_Error_string(rc));
	PMIX_INFO_CONSTRUCT(&info[0]);
	PMIX_INFO_CONSTRUCT(&info[1]);
	PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &secs, PMIX_INT);
	PMIX_LOAD_PROCID(&wild, tc_pmix_me.nspace, PMIX_RANK_WILDCARD);
	rc = PMIx_Fence(&wild, 1, info, 2);
	PMIX_INFO_DESTRUCT(&info[0]);
	PMIX_INFO_DESTRUCT(&info[1]);
	if (rc != PMIX_SUCCESS)
		return tc_err(rc == PMIX_ERR_TIMEOUT ? -ETIMEDOUT : -EPROTO,
			      "transport verbs: PMIx_Fence exchanging connection data: %s (did every rank create the communicator?)",
			      PMIx_Error_string(rc));
	for (int r = 0; r < b->size; r++) {
		char *dst = (char *)all + (size_t)r * bytes;

		if (r == b->rank) {
			memcpy(dst, mine, bytes);
			continue;
		}
		PMIX_LOAD_PROCID(&p, tc_pmix_me.nspace, r);
		got = NULL;
		rc = PMIx_Get(&p, key, NULL, 0, &got);
		if (rc != PMIX_SUCCESS || !got || got->type != PMIX_BYTE_OBJECT || got->data.bo.size != bytes) {
			if (got)
				PMIX_VALUE_RELEASE(got);
			return tc_err(-EPROTO, "transport verbs: PMIx_Get of rank %d's connection data: %s", r,
				      PMIx_Error_string(rc));
		}
		memcpy(dst, got->data.bo.bytes, bytes);
		PMIX_VALUE_RELEASE(got);
	}
	return 0;
}

int tc_boot_allgather(struct tc_boot *b, const void *mine, void *all, size_t bytes, int timeout_ms)
{
	int ret;

	if (!b->oob_allgather)
		return tc_pmix_allgather(b, mine, all, bytes, timeout_ms);
	ret = b->oob_allgather(b->oob_ctx, mine, all, bytes);
	if (ret)
		return tc_err(ret < 0 ? ret : -EIO, "transport verbs: oob_allgather of the connection data failed (%d)", ret);
	return 0;
}
