// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The statistics (TORUS_MPI_STATS=1): per collective, the calls served on
 * the torus (by algorithm) and those passed to MPI; printed per rank at
 * MPI_Finalize. The counts are kept whether or not they are printed.
 */
#include <stdio.h>
#include <string.h>

#include "torusmpi.h"

struct tm_algo_count {
	char algo[32];
	unsigned long n;
};
#define TM_MAX_ALGOS 8
static struct {
	unsigned long served, passed;
	struct tm_algo_count algos[TM_MAX_ALGOS];
} tm_stats[TM_NCOLL];

static const char *const tm_names[TM_NCOLL] = {
	[TM_ALLTOALL] = "alltoall",
	[TM_ALLTOALLV] = "alltoallv",
	[TM_ALLGATHER] = "allgather",
	[TM_ALLGATHERV] = "allgatherv",
	[TM_ALLREDUCE] = "allreduce",
	[TM_REDUCE_SCATTER] = "reduce_scatter",
	[TM_REDUCE_SCATTER_BLOCK] = "reduce_scatter_block",
	[TM_BCAST] = "bcast",
	[TM_BARRIER] = "barrier",
};

/* The algorithm that served the call: what tc_coll_last() reports for the
 * two collectives with a choice, the fixed one for the others. */
static const char *tm_algo(const struct tm_call *c)
{
	static const char *const fixed[TM_NCOLL] = {
		[TM_ALLTOALLV] = "direct",
		[TM_ALLGATHERV] = "line-allgather",
		[TM_ALLREDUCE] = "line-rs-ag",
		[TM_REDUCE_SCATTER] = "line-rs",
		[TM_REDUCE_SCATTER_BLOCK] = "line-rs",
		[TM_BCAST] = "line-tree",
		[TM_BARRIER] = "reduce-bcast",
	};
	static __thread struct tc_coll_info info;

	if (c->coll == TM_ALLTOALL || c->coll == TM_ALLGATHER) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (tc_coll_last(c->tc, c->coll == TM_ALLTOALL ? TC_ALLTOALL : TC_ALLGATHER, &info))
			return "none"; /* a size of 0 moves nothing */
		return info.algo;
	}
	if (c->coll == TM_REDUCE_SCATTER && c->copy_bytes)
		return "allreduce";
	return fixed[c->coll];
}

const char *tm_coll_name(enum tm_coll c)
{
	return tm_names[c];
}

void tm_count_passed(enum tm_coll c)
{
	tm_stats[c].passed++;
}

void tm_count_served(const struct tm_call *call)
{
	enum tm_coll c = call->coll;
	struct tm_algo_count *a = tm_stats[c].algos;
	const char *algo;
	int i;

	tm_stats[c].served++;
	if (!tm.stats)
		return;
	algo = tm_algo(call);
	for (i = 0; i < TM_MAX_ALGOS && a[i].n; i++)
		if (!strcmp(a[i].algo, algo))
			break;
	if (i == TM_MAX_ALGOS)
		i = TM_MAX_ALGOS - 1; /* folds the rare ninth name into the last */
	if (!a[i].n)
		snprintf(a[i].algo, sizeof(a[i].algo), "%s", algo);
	a[i].n++;
}

void tm_stats_print(void)
{
	unsigned long served = 0, passed = 0;
	char line[512];
	int c, i, len;

	for (c = 0; c < TM_NCOLL; c++) {
		served += tm_stats[c].served;
		passed += tm_stats[c].passed;
	}
	if (!tm.tc && tm.world_rank == 0 && tm.enabled)
		fprintf(stderr, "torusmpi: not serving: %s\n", tm.why_not);
	if (tm.tc && tm.world_rank == 0)
		fprintf(stderr, "torusmpi: transport %s: MPI_COMM_WORLD and its dups, %d other communicators\n",
			tc_comm_transport_name(tm.tc), tm.owned_made);
	if (tm.tc)
		fprintf(stderr, "torusmpi: rank %d: %d communicators served on their own tc_comm, %d passed to MPI\n",
			tm.world_rank, tm.owned_made, tm.passed_made);
	fprintf(stderr, "torusmpi: rank %d served %lu calls, passed %lu to MPI\n", tm.world_rank, served, passed);
	for (c = 0; c < TM_NCOLL; c++) {
		if (!tm_stats[c].served && !tm_stats[c].passed)
			continue;
		len = snprintf(line, sizeof(line), "torusmpi: rank %d %s: served %lu", tm.world_rank, tm_names[c],
			       tm_stats[c].served);
		for (i = 0; i < TM_MAX_ALGOS && tm_stats[c].algos[i].n && len < (int)sizeof(line); i++)
			len += snprintf(line + len, sizeof(line) - len, "%s%s x%lu", i ? ", " : " (",
					tm_stats[c].algos[i].algo, tm_stats[c].algos[i].n);
		if (i && len < (int)sizeof(line))
			len += snprintf(line + len, sizeof(line) - len, ")");
		if (len < (int)sizeof(line))
			snprintf(line + len, sizeof(line) - len, ", passed %lu", tm_stats[c].passed);
		fprintf(stderr, "%s\n", line);
	}
	fflush(stderr);
}

