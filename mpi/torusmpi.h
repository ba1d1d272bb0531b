/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libtorusmpi internals: the PMPI drop-in that runs MPI collectives on
 * libtoruscoll. It uses only the public <toruscoll.h>, like any application.
 *
 * init.c     MPI_Init/MPI_Finalize wrappers, configuration, the communicator
 *            map (which MPI communicator runs on which tc_comm)
 * colls.c    the collective wrappers: decide, convert, call tc_* or PMPI_*
 * request.c  nonblocking calls: generalized requests completed from
 *            tc_test/tc_wait inside the MPI_Wait and MPI_Test wrappers
 * stats.c    the statistics: calls served (by algorithm) and passed, per
 *            collective, printed at MPI_Finalize (TORUS_MPI_STATS=1)
 *
 * Every decision to serve a call on the torus is taken from arguments MPI
 * requires to be equal (in bytes) on every rank of the call, or agreed with
 * a PMPI_Allreduce, so no rank takes the torus while another takes PMPI.
 */
#ifndef TORUSMPI_H
#define TORUSMPI_H

#include <mpi.h>
#include <stddef.h>
#include <toruscoll.h>

#define TM_HIDDEN __attribute__((visibility("hidden")))

/* The collectives the statistics count, one slot each. */
enum tm_coll {
	TM_ALLTOALL,
	TM_ALLTOALLV,
	TM_ALLGATHER,
	TM_ALLGATHERV,
	TM_ALLREDUCE,
	TM_REDUCE_SCATTER,
	TM_REDUCE_SCATTER_BLOCK,
	TM_BCAST,
	TM_BARRIER,
	TM_NCOLL,
};

/* Configuration and process state (init.c). */
struct tm_state {
	int enabled;	     /* TORUS_MPI is not "off" */
	int stats;	     /* TORUS_MPI_STATS=1 */
	size_t max_bytes;    /* TORUS_MPI_MAX_BYTES: largest vector served */
	int transport;	     /* TC_TRANSPORT_DEV or _VERBS; 0: serve nothing */
	int owned_made;	     /* verbs communicators or device subs made for non-WORLD groups */
	int passed_made;     /* communicators mapped to PMPI */
	int world_rank;
	int world_size;
	tc_comm_t *tc;	     /* MPI_COMM_WORLD's (device: node = world rank); NULL: serve nothing */
	int keyval;	     /* caches the mapping on each communicator */
	char why_not[160];   /* why tc is NULL */
};
extern struct tm_state tm TM_HIDDEN;

/* The libtoruscoll communicator an MPI communicator runs on, or NULL when
 * calls on it go to PMPI (the same answer on every rank of comm). */
TM_HIDDEN tc_comm_t *tm_comm_lookup(MPI_Comm comm);

/* Statistics (stats.c). */
struct tm_call;
TM_HIDDEN void tm_count_passed(enum tm_coll c);
TM_HIDDEN void tm_count_served(const struct tm_call *c); /* c completed without error */
TM_HIDDEN const char *tm_coll_name(enum tm_coll c);
TM_HIDDEN void tm_stats_print(void);

/*
 * One served call: everything that must live until it completes and what
 * to do then (unpack a non-contiguous receive, copy a result out, free).
 */
#define TM_MAX_FREE 16
struct tm_call {
	enum tm_coll coll;
	tc_comm_t *tc;
	MPI_Comm comm;
	/* after completion: unpack [0, unpack_n) blocks from tmp into user buffer */
	void *unpack_from;
	void *unpack_to;
	MPI_Datatype unpack_type;
	int unpack_n;
	int *unpack_counts;	/* elements per block */
	MPI_Aint *unpack_disp;	/* element displacement (in extents) per block */
	/* after completion: memcpy(copy_to, copy_from, copy_bytes) */
	void *copy_to;
	const void *copy_from;
	size_t copy_bytes;
	void *to_free[TM_MAX_FREE];
	int nfree;
	/* nonblocking only */
	tc_request_t *treq;
	MPI_Request mreq;
	int err;		/* MPI error class of the completed call */
	struct tm_call *next;
};

TM_HIDDEN struct tm_call *tm_call_new(enum tm_coll coll, tc_comm_t *tc, MPI_Comm comm);
TM_HIDDEN void *tm_call_alloc(struct tm_call *c, size_t bytes);
/* Run after the tc call completed with ret (0 or -errno): unpack, copy,
 * count, free c; returns an MPI error code. */
TM_HIDDEN int tm_call_finish(struct tm_call *c, int ret);

/* request.c: make *req a generalized request that completes with c. */
TM_HIDDEN int tm_request_start(struct tm_call *c, MPI_Request *req);
/* Complete every outstanding call on tc now (its tc_comm is about to go:
 * a verbs communicator's own, or a device sub of WORLD's). */
TM_HIDDEN void tm_request_finish_all(tc_comm_t *tc);

#endif /* TORUSMPI_H */
