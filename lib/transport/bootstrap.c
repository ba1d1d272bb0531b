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
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "transport/bootstrap.h"

#define TC_BOOT_MAX_RANKS (1 << 20)

/*
 * libpmix is opened here, when a verbs communicator first needs the
 * launcher, not linked into the library: linked, every process of every
 * transport loaded it and what it needs (hwloc, libevent, munge, udev) and
 * searched its non-standard directory (a RUNPATH) for every other library
 * at start: 6 more libraries and about 40 failed lookups a process, which
 * were the largest part of a device rank's start in the 256-rank guest run
 * (docs/benchmarks.md, "Runs at scale"). TC_PMIX_LIB is the path the build
 * found (pkg-config's libdir and the library's soname); the bare soname is
 * tried next. RTLD_GLOBAL: PMIx's own plugins resolve its symbols. Never
 * closed (PMIx keeps threads).
 */
#ifndef TC_PMIX_LIB
#define TC_PMIX_LIB "libpmix.so.2"
#endif
#ifndef TC_PMIX_SONAME
#define TC_PMIX_SONAME "libpmix.so.2"
#endif

/* set once under tc_pmix_lock (tc_pmix_handle last), read after tc_pmix_up */
static struct {
	__typeof__(PMIx_Init) *init;
	__typeof__(PMIx_Finalize) *finalize;
	__typeof__(PMIx_Get) *get;
	__typeof__(PMIx_Put) *put;
	__typeof__(PMIx_Commit) *commit;
	__typeof__(PMIx_Fence) *fence;
	__typeof__(PMIx_Error_string) *error_string;
	__typeof__(PMIx_Info_load) *info_load;
	__typeof__(PMIx_Value_destruct) *value_destruct;
} tc_pmix;
static void *tc_pmix_handle;

/* The calls below, and those pmix.h's macros expand to, go through the table. */
#define PMIx_Init (*tc_pmix.init)
#define PMIx_Finalize (*tc_pmix.finalize)
#define PMIx_Get (*tc_pmix.get)
#define PMIx_Put (*tc_pmix.put)
#define PMIx_Commit (*tc_pmix.commit)
#define PMIx_Fence (*tc_pmix.fence)
#define PMIx_Error_string (*tc_pmix.error_string)
#define PMIx_Info_load (*tc_pmix.info_load)
#define PMIx_Value_destruct (*tc_pmix.value_destruct)

static pthread_mutex_t tc_pmix_lock = PTHREAD_MUTEX_INITIALIZER;
static int tc_pmix_up;		 /* protected by tc_pmix_lock */
static pmix_proc_t tc_pmix_me;	 /* set once tc_pmix_up */
static uint32_t tc_pmix_size;	 /* set once tc_pmix_up */
static uint32_t tc_boot_seq;	 /* protected by tc_pmix_lock */
static int tc_pmix_atexit;	 /* protected by tc_pmix_lock: tc_pmix_fini registered */

/*
 * Finalize at exit: a launcher counts a rank that never finalized as failed.
 * Registered with atexit once PMIx is up, not a destructor: libpmix is
 * opened after this library, so its own destructors run before this
 * library's; exit handlers run before any of them.
 */
static void tc_pmix_fini(void)
{
	if (tc_pmix_up)
		PMIx_Finalize(NULL, 0);
	tc_pmix_up = 0;
}

/* Caller holds tc_pmix_lock. 0, or -ENOTCONN when libpmix cannot be loaded. */
static int __tc_pmix_load(void)
{
	static const struct {
		const char *name;
		size_t off;
	} syms[] = {
		{ "PMIx_Init", offsetof(__typeof__(tc_pmix), init) },
		{ "PMIx_Finalize", offsetof(__typeof__(tc_pmix), finalize) },
		{ "PMIx_Get", offsetof(__typeof__(tc_pmix), get) },
		{ "PMIx_Put", offsetof(__typeof__(tc_pmix), put) },
		{ "PMIx_Commit", offsetof(__typeof__(tc_pmix), commit) },
		{ "PMIx_Fence", offsetof(__typeof__(tc_pmix), fence) },
		{ "PMIx_Error_string", offsetof(__typeof__(tc_pmix), error_string) },
		{ "PMIx_Info_load", offsetof(__typeof__(tc_pmix), info_load) },
		{ "PMIx_Value_destruct", offsetof(__typeof__(tc_pmix), value_destruct) },
	};
	const char *why;
	void *h;

	if (tc_pmix_handle)
		return 0;
	h = dlopen(TC_PMIX_LIB, RTLD_NOW | RTLD_GLOBAL);
	if (!h)
		h = dlopen(TC_PMIX_SONAME, RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		why = dlerror();
		return tc_err(-ENOTCONN, "transport verbs: cannot load the PMIx library (%s): %s; install it, or pass "
					 "tc_comm_attr.oob_allgather", TC_PMIX_LIB, why ? why : "not found");
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(h, syms[i].name);

		if (!f)
			return tc_err(-ENOTCONN, "transport verbs: %s has no %s", TC_PMIX_LIB, syms[i].name);
		memcpy((char *)&tc_pmix + syms[i].off, &f, sizeof(f));
	}
	tc_pmix_handle = h;
	return 0;
}

/* Caller holds tc_pmix_lock. */
static int __tc_pmix_init(void)
{
	pmix_value_t *val = NULL;
	pmix_proc_t wild;
	pmix_status_t rc;

	if (tc_pmix_up)
		return 0;
	rc = __tc_pmix_load();
	if (rc)
		return rc;
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
	if (!tc_pmix_atexit) {
		if (atexit(tc_pmix_fini)) {
			PMIx_Finalize(NULL, 0);
			return tc_err(-ENOMEM, "transport verbs: cannot register PMIx's finalize at exit");
		}
		tc_pmix_atexit = 1;
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
