// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * MPI_Init / MPI_Finalize wrappers, configuration, the communicator map and
 * the statistics.
 *
 * MPI_COMM_WORLD maps onto the whole fabric TC_FABRIC (node = world rank)
 * when every rank could open its node and the fabric has exactly as many
 * nodes as MPI_COMM_WORLD has ranks (agreed with one PMPI_Allreduce). A
 * communicator congruent to MPI_COMM_WORLD (same group, same order: a dup)
 * runs on the same tc_comm; every other communicator goes to PMPI. The
 * answer is cached on the communicator as an attribute; MPI_Comm_free's
 * delete callback releases it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torusmpi.h"

struct tm_state tm = { .keyval = MPI_KEYVAL_INVALID };

/* What the attribute holds: the tc_comm or NULL (PMPI). */
struct tm_map {
	tc_comm_t *tc;
};
static int tm_maps_live; /* communicators other than WORLD holding tm.tc */

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

const char *tm_coll_name(enum tm_coll c)
{
	return tm_names[c];
}

void tm_count_passed(enum tm_coll c)
{
	tm_stats[c].passed++;
}

void tm_count_served(enum tm_coll c, const char *algo)
{
	struct tm_algo_count *a = tm_stats[c].algos;
	int i;

	tm_stats[c].served++;
	if (!tm.stats)
		return;
	for (i = 0; i < TM_MAX_ALGOS && a[i].n; i++)
		if (!strcmp(a[i].algo, algo))
			break;
	if (i == TM_MAX_ALGOS)
		i = TM_MAX_ALGOS - 1; /* folds the rare ninth name into the last */
	if (!a[i].n)
		snprintf(a[i].algo, sizeof(a[i].algo), "%s", algo);
	a[i].n++;
}

static void tm_print_stats(void)
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

static int tm_delete_attr(MPI_Comm comm, int keyval, void *val, void *extra)
{
	struct tm_map *m = val;

	(void)comm;
	(void)keyval;
	(void)extra;
	if (m->tc)
		tm_maps_live--;
	free(m);
	return MPI_SUCCESS;
}

tc_comm_t *tm_comm_lookup(MPI_Comm comm)
{
	struct tm_map *m;
	int found = 0, inter = 1, cmp = MPI_UNEQUAL;
	void *val;

	if (!tm.tc || comm == MPI_COMM_NULL)
		return NULL;
	if (comm == MPI_COMM_WORLD)
		return tm.tc;
	if (PMPI_Comm_get_attr(comm, tm.keyval, &val, &found) == MPI_SUCCESS && found)
		return ((struct tm_map *)val)->tc;
	m = malloc(sizeof(*m));
	if (!m)
		return NULL; /* not cached: the next call asks again, same answer */
	/* Group facts: the same answer on every rank of comm. */
	if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter)
		PMPI_Comm_compare(comm, MPI_COMM_WORLD, &cmp);
	m->tc = (cmp == MPI_IDENT || cmp == MPI_CONGRUENT) ? tm.tc : NULL;
	if (PMPI_Comm_set_attr(comm, tm.keyval, m) != MPI_SUCCESS) {
		tc_comm_t *tc = m->tc;

		free(m);
		return tc;
	}
	if (m->tc)
		tm_maps_live++;
	return m->tc;
}

static size_t tm_env_bytes(const char *var, size_t def)
{
	const char *v = getenv(var);
	char *end;
	unsigned long long x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || end == v)
		return def;
	if (*end == 'k' || *end == 'K')
		x <<= 10;
	else if (*end == 'm' || *end == 'M')
		x <<= 20;
	return x;
}

/* Open node = world rank of fabric TC_FABRIC; serve only if every rank did
 * and the fabric is exactly MPI_COMM_WORLD. */
static void tm_setup(void)
{
	struct tc_comm_attr attr;
	const char *v;
	int ok = 1, all_ok = 0, ret;

	v = getenv("TORUS_MPI");
	tm.enabled = !(v && (!strcmp(v, "off") || !strcmp(v, "0")));
	v = getenv("TORUS_MPI_STATS");
	tm.stats = v && *v && strcmp(v, "0");
	tm.max_bytes = tm_env_bytes("TORUS_MPI_MAX_BYTES", 128 << 10);
	PMPI_Comm_rank(MPI_COMM_WORLD, &tm.world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &tm.world_size);
	if (!tm.enabled) {
		snprintf(tm.why_not, sizeof(tm.why_not), "TORUS_MPI=off");
		return;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.transport = TC_TRANSPORT_DEV;
	v = getenv("TC_TRANSPORT");
	if (v && *v && strcmp(v, "dev")) {
		snprintf(tm.why_not, sizeof(tm.why_not), "TC_TRANSPORT=%s: only dev is served", v);
		ok = 0;
	}
	v = getenv("TC_FABRIC");
	if (ok && v && *v) {
		char *end;
		unsigned long f = strtoul(v, &end, 10);

		if (*end || f > UINT32_MAX) {
			snprintf(tm.why_not, sizeof(tm.why_not), "TC_FABRIC=%s: not a fabric id", v);
			ok = 0;
		}
		attr.fabric_id = f;
	}
	attr.node = tm.world_rank;
	if (ok) {
		ret = tc_comm_create(&attr, &tm.tc);
		if (ret) {
			snprintf(tm.why_not, sizeof(tm.why_not), "rank %d: %s", tm.world_rank,
				 *tc_last_error() ? tc_last_error() : tc_strerror(ret));
			ok = 0;
		} else if (tc_comm_size(tm.tc) != tm.world_size) {
			snprintf(tm.why_not, sizeof(tm.why_not),
				 "fabric %u has %d nodes, MPI_COMM_WORLD %d ranks (sub-tori are not served)",
				 attr.fabric_id, tc_comm_size(tm.tc), tm.world_size);
			ok = 0;
		}
	}
	PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!all_ok && ok)
		snprintf(tm.why_not, sizeof(tm.why_not), "another rank could not open its node");
	if (all_ok && PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, tm_delete_attr, &tm.keyval, NULL) != MPI_SUCCESS) {
		snprintf(tm.why_not, sizeof(tm.why_not), "MPI_Comm_create_keyval failed");
		all_ok = 0; /* a local failure of a local call: abort rather than diverge */
		PMPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (!all_ok && tm.tc) {
		tc_comm_destroy(tm.tc);
		tm.tc = NULL;
	}
}

int MPI_Init(int *argc, char ***argv)
{
	int ret = PMPI_Init(argc, argv);

	if (ret == MPI_SUCCESS)
		tm_setup();
	return ret;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int ret = PMPI_Init_thread(argc, argv, required, provided);

	if (ret == MPI_SUCCESS)
		tm_setup();
	return ret;
}

int MPI_Finalize(void)
{
	if (tm.stats)
		tm_print_stats();
	if (tm.tc) {
		/* No rank closes its node while a peer may still be sending to it. */
		PMPI_Barrier(MPI_COMM_WORLD);
		tc_comm_destroy(tm.tc);
		tm.tc = NULL;
	}
	return PMPI_Finalize();
}
