// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * MPI_Init / MPI_Finalize wrappers, configuration and the communicator map.
 *
 * On the device (TC_TRANSPORT unset or dev), MPI_COMM_WORLD maps onto the
 * whole fabric TC_FABRIC (node = world rank) when every rank could open its
 * node and the fabric has exactly as many nodes as MPI_COMM_WORLD has ranks
 * (agreed with one PMPI_Allreduce). A communicator congruent to
 * MPI_COMM_WORLD (same group, same order: a dup) runs on the same tc_comm.
 * Any other intracommunicator (a split, a reordering, an odd part) is mapped
 * at its first collective, which every rank of it calls: its group in
 * MPI_COMM_WORLD ranks (PMPI_Group_translate_ranks, the same list on every
 * rank) becomes a sub-communicator of WORLD's tc_comm
 * (tc_comm_create_sub) when the list is a box of the fabric (a row, a
 * column, a reversed order, a path of an odd number of nodes, ...). Its
 * tag context is agreed like an MPI context id: one PMPI_Allreduce (BAND)
 * of the contexts each rank has free, the lowest common one taken, so two
 * live communicators that share a rank never share a context. A list that
 * is not a box (or a single rank) goes to PMPI; TORUS_MPI_STATS=1 prints,
 * per rank, which communicator went where and why. Calls of WORLD, its dups
 * and its subs run in each process's issue order (one transport), so
 * nonblocking collectives on communicators that share a rank must be
 * started in the same relative order on all ranks that start them.
 *
 * Over verbs (TC_TRANSPORT=verbs), MPI_COMM_WORLD gets a verbs communicator
 * bootstrapped through the public out-of-band hook (tc_comm_attr.
 * oob_allgather) with PMPI_Allgather, not PMIx; a congruent communicator
 * shares it, and any other intracommunicator (a split, a reordering, an odd
 * part) gets its own, made the same way on that communicator at its first
 * collective (which every rank of it calls) and agreed on with a
 * PMPI_Allreduce, so either all of its ranks serve it or none.
 *
 * The answer is cached on the communicator as an attribute; MPI_Comm_free's
 * delete callback releases it (and destroys a communicator's own verbs
 * tc_comm or device sub, freeing its context). MPI_Finalize destroys those
 * of communicators never freed, before WORLD's tc_comm.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torusmpi.h"

struct tm_state tm = { .keyval = MPI_KEYVAL_INVALID };

/* What the attribute holds: the tc_comm or NULL (PMPI). A map that owns
 * its tc_comm (verbs, not congruent to WORLD) is on tm_owned, newest first. */
struct tm_map {
	tc_comm_t *tc;
	int own;
	unsigned int context; /* a device sub's tag context (bit of tm_ctx_used) */
	struct tm_map *next;
};
static struct tm_map *tm_owned;

/* Device sub contexts in use by this process: bit c of word c / 32; 0 is never free. */
#define TM_CTX_WORDS ((TC_SUB_MAX_CONTEXT + 32) / 32)
static unsigned int tm_ctx_used[TM_CTX_WORDS] = { 1 };

static void tm_unown(struct tm_map *m)
{
	struct tm_map **pp;

	for (pp = &tm_owned; *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			break;
		}
}

static int tm_delete_attr(MPI_Comm comm, int keyval, void *val, void *extra)
{
	struct tm_map *m = val;

	(void)comm;
	(void)keyval;
	(void)extra;
	if (m->own) {
		tm_unown(m);
		/* calls still outstanding on comm complete (MPI waits for them
		 * after the free), not with their requests freed under them */
		tm_request_finish_all(m->tc);
		tc_comm_destroy(m->tc);
		if (m->context)
			tm_ctx_used[m->context / 32] &= ~(1u << (m->context % 32));
	}
	free(m);
	return MPI_SUCCESS;
}

/* The out-of-band allgather libtoruscoll's verbs bootstrap calls: PMPI on
 * the communicator being mapped (ctx points at it). */
static int tm_oob_allgather(void *ctx, const void *sendbuf, void *recvbuf, size_t bytes)
{
	if (bytes > INT_MAX)
		return -EOVERFLOW;
	return PMPI_Allgather(sendbuf, (int)bytes, MPI_BYTE, recvbuf, (int)bytes, MPI_BYTE, *(MPI_Comm *)ctx) ==
			       MPI_SUCCESS ? 0 : -EIO;
}

/* The near-square r x c (r the largest divisor <= sqrt(n)), or a ring: the
 * logical torus of a communicator other than WORLD (TC_DIMS is WORLD's). */
static void tm_dims(int n, char *buf, size_t len)
{
	int r;

	for (r = 1; (r + 1) * (r + 1) <= n; r++)
		;
	while (r > 1 && n % r)
		r--;
	if (r == 1)
		snprintf(buf, len, "%d", n);
	else
		snprintf(buf, len, "%dx%d", r, n / r);
}

/*
 * Every rank of comm made tc (ok) or not: agree, and if any did not, destroy
 * tc everywhere; why says "another rank could not make its <what>" on a rank
 * whose own attempt succeeded. Returns tc or NULL, alike on every rank.
 */
static tc_comm_t *tm_agree(MPI_Comm comm, int ok, tc_comm_t *tc, const char *what, char *why, size_t len)
{
	int all_ok = 0;

	PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
	if (!all_ok && ok)
		snprintf(why, len, "another rank could not make its %s", what);
	if (!all_ok && tc) {
		tc_comm_destroy(tc);
		tc = NULL;
	}
	return tc;
}

/* A verbs tc_comm for comm, bootstrapped over PMPI on comm, or NULL (with
 * the reason in why) on every rank of comm alike. Collective over comm. */
static tc_comm_t *tm_verbs_open(MPI_Comm comm, int world, char *why, size_t len)
{
	struct tc_comm_attr attr;
	tc_comm_t *tc = NULL;
	char dims[32];
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.transport = TC_TRANSPORT_VERBS;
	attr.oob_allgather = tm_oob_allgather;
	attr.oob_ctx = &comm;
	PMPI_Comm_rank(comm, &attr.oob_rank);
	PMPI_Comm_size(comm, &attr.oob_size);
	if (!world) {
		tm_dims(attr.oob_size, dims, sizeof(dims));
		attr.dims = dims;
	}
	if (attr.oob_size < 2) { /* a group fact: no rank of it tries */
		snprintf(why, len, "one rank is no torus");
		return NULL;
	}
	ret = tc_comm_create(&attr, &tc);
	if (ret)
		snprintf(why, len, "rank %d: %s", tm.world_rank, *tc_last_error() ? tc_last_error() : tc_strerror(ret));
	return tm_agree(comm, !ret, tc, "verbs communicator", why, len);
}

/* A name for the statistics: the communicator's MPI name, if it has one. */
static void tm_comm_label(MPI_Comm comm, char *buf)
{
	int len = 0;

	buf[0] = 0;
	if (PMPI_Comm_get_name(comm, buf, &len) != MPI_SUCCESS || !buf[0])
		snprintf(buf, MPI_MAX_OBJECT_NAME, "(unnamed)");
}

/* The lowest context free on every rank of comm, or 0. Collective over comm. */
static unsigned int tm_ctx_agree(MPI_Comm comm)
{
	unsigned int fr[TM_CTX_WORDS], all[TM_CTX_WORDS];

	for (int w = 0; w < TM_CTX_WORDS; w++)
		fr[w] = ~tm_ctx_used[w];
	PMPI_Allreduce(fr, all, TM_CTX_WORDS, MPI_UNSIGNED, MPI_BAND, comm);
	for (unsigned int c = 1; c <= TC_SUB_MAX_CONTEXT; c++)
		if (all[c / 32] & (1u << (c % 32)))
			return c;
	return 0;
}

/*
 * A device sub of WORLD's tc_comm for comm, or NULL (why says why) on every
 * rank of comm alike: the list is a group fact, the context is agreed and
 * success is agreed. Collective over comm.
 */
static tc_comm_t *tm_dev_sub(MPI_Comm comm, unsigned int *ctx, char *why, size_t len)
{
	MPI_Group g, wg;
	tc_comm_t *sub = NULL;
	int n, ok = 1, ret = 0;
	int *idx, *ranks;

	PMPI_Comm_size(comm, &n);
	idx = malloc(n * sizeof(*idx));
	ranks = malloc(n * sizeof(*ranks));
	if (!idx || !ranks) {
		ok = 0;
		snprintf(why, len, "rank %d: out of memory", tm.world_rank);
	} else {
		for (int i = 0; i < n; i++)
			idx[i] = i;
		PMPI_Comm_group(comm, &g);
		PMPI_Comm_group(MPI_COMM_WORLD, &wg);
		PMPI_Group_translate_ranks(g, n, idx, wg, ranks);
		PMPI_Group_free(&g);
		PMPI_Group_free(&wg);
	}
	*ctx = tm_ctx_agree(comm);
	if (ok && !*ctx) {
		ok = 0;
		snprintf(why, len, "no tag context is free on every rank (%u in use)", TC_SUB_MAX_CONTEXT);
	}
	if (ok) {
		ret = tc_comm_create_sub(tm.tc, ranks, n, *ctx, &sub);
		ok = !ret;
		if (ret)
			snprintf(why, len, "%s", *tc_last_error() ? tc_last_error() : tc_strerror(ret));
	}
	sub = tm_agree(comm, ok, sub, "sub-communicator", why, len);
	if (sub)
		tm_ctx_used[*ctx / 32] |= 1u << (*ctx % 32);
	free(idx);
	free(ranks);
	return sub;
}

/* TORUS_MPI_STATS: where a communicator other than WORLD and its dups went. */
static void tm_report_map(MPI_Comm comm, const struct tm_map *m, const char *why)
{
	char name[MPI_MAX_OBJECT_NAME], shape[64] = "";
	int dims[TC_MAX_DIMS], n, len = 0, k;
	unsigned int wrap = 0;

	if (!tm.stats)
		return;
	tm_comm_label(comm, name);
	PMPI_Comm_size(comm, &n);
	if (!m->tc) {
		fprintf(stderr, "torusmpi: rank %d: communicator %s (%d ranks) goes to MPI: %s\n", tm.world_rank, name,
			n, why);
		return;
	}
	/* the shape as torus-sched writes it: "4x4", "3 mesh", "2x4 wrap=0,1" */
	k = tc_comm_dims(m->tc, dims, &wrap);
	for (int d = 0; d < k && len < (int)sizeof(shape); d++)
		len += snprintf(shape + len, sizeof(shape) - len, "%s%d", d ? "x" : "", dims[d]);
	if (wrap != (1u << k) - 1 && len < (int)sizeof(shape))
		len += snprintf(shape + len, sizeof(shape) - len, wrap ? " wrap=" : " mesh");
	for (int d = 0; wrap && wrap != (1u << k) - 1 && d < k && len < (int)sizeof(shape); d++)
		len += snprintf(shape + len, sizeof(shape) - len, "%s%d", d ? "," : "", !!(wrap & (1u << d)));
	if (m->context && len < (int)sizeof(shape))
		snprintf(shape + len, sizeof(shape) - len, ", context %u", m->context);
	fprintf(stderr, "torusmpi: rank %d: communicator %s (%d ranks) served on %s as %s\n", tm.world_rank, name, n,
		tc_comm_transport_name(m->tc), shape);
}

tc_comm_t *tm_comm_lookup(MPI_Comm comm)
{
	struct tm_map *m;
	int found = 0, inter = 1, cmp = MPI_UNEQUAL;
	char why[160];
	void *val;

	if (!tm.tc || comm == MPI_COMM_NULL)
		return NULL;
	if (comm == MPI_COMM_WORLD)
		return tm.tc;
	if (PMPI_Comm_get_attr(comm, tm.keyval, &val, &found) == MPI_SUCCESS && found)
		return ((struct tm_map *)val)->tc;
	m = calloc(1, sizeof(*m));
	if (!m) { /* the other ranks may go on to a collective: stop rather than hang */
		fprintf(stderr, "torusmpi: rank %d: out of memory mapping a communicator\n", tm.world_rank);
		PMPI_Abort(comm, 1);
		return NULL;
	}
	/* Group facts: the same answer on every rank of comm. */
	if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter)
		PMPI_Comm_compare(comm, MPI_COMM_WORLD, &cmp);
	if (cmp == MPI_IDENT || cmp == MPI_CONGRUENT) {
		m->tc = tm.tc;
	} else if (!inter && tm.transport == TC_TRANSPORT_VERBS) {
		m->tc = tm_verbs_open(comm, 0, why, sizeof(why));
		m->own = m->tc != NULL;
		tm_report_map(comm, m, why);
	} else if (!inter) {
		m->tc = tm_dev_sub(comm, &m->context, why, sizeof(why));
		m->own = m->tc != NULL;
		if (!m->tc)
			m->context = 0;
		tm_report_map(comm, m, why);
	} else {
		tm_report_map(comm, m, "an intercommunicator");
	}
	if (!m->tc)
		tm.passed_made++;
	if (m->own) {
		tm.owned_made++;
		m->next = tm_owned;
		tm_owned = m;
	}
	if (PMPI_Comm_set_attr(comm, tm.keyval, m) != MPI_SUCCESS && !m->own) {
		/* not cached: the next call asks again, with the same answer */
		tc_comm_t *tc = m->tc;

		free(m);
		return tc;
	}
	/* (an own tc_comm not cached stays on tm_owned until MPI_Finalize) */
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

/* Open node = world rank of fabric TC_FABRIC; 1 if this rank can serve
 * MPI_COMM_WORLD on it (the caller agrees with the other ranks). */
static int tm_dev_open(void)
{
	struct tc_comm_attr attr;
	const char *v = getenv("TC_FABRIC");
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.transport = TC_TRANSPORT_DEV;
	if (v && *v) {
		char *end;
		unsigned long f = strtoul(v, &end, 10);

		if (*end || f > UINT32_MAX) {
			snprintf(tm.why_not, sizeof(tm.why_not), "TC_FABRIC=%s: not a fabric id", v);
			return 0;
		}
		attr.fabric_id = f;
	}
	attr.node = tm.world_rank;
	/* the fabric clock first (local): the wall clock's measurement would
	 * wait for nodes no rank opens when the fabric is larger than
	 * MPI_COMM_WORLD; tm_dev_wall switches once every rank agreed */
	attr.clock = TC_CLOCK_FABRIC;
	ret = tc_comm_create(&attr, &tm.tc);
	if (ret) {
		snprintf(tm.why_not, sizeof(tm.why_not), "rank %d: %s", tm.world_rank,
			 *tc_last_error() ? tc_last_error() : tc_strerror(ret));
		return 0;
	}
	if (tc_comm_size(tm.tc) != tm.world_size) {
		snprintf(tm.why_not, sizeof(tm.why_not),
			 "fabric %u has %d nodes, MPI_COMM_WORLD %d ranks (a world smaller than its fabric is not served)", attr.fabric_id,
			 tc_comm_size(tm.tc), tm.world_size);
		return 0;
	}
	return 1;
}

/*
 * Every rank has its node of a fabric of MPI_COMM_WORLD's size open: switch
 * the communicator to the wall clock as what auto minimises (an MPI program
 * times its calls by the wall clock), unless TC_AUTO_CLOCK says otherwise.
 * This measures this host's step and copy costs over the fabric, with every
 * rank (tc_comm_set_clock, collective). 1 if this rank's succeeded.
 */
static int tm_dev_wall(void)
{
	const char *v = getenv("TC_AUTO_CLOCK");
	int ret;

	if (v && !strcmp(v, "fabric"))
		return 1;
	if (v && *v && strcmp(v, "wall")) {
		snprintf(tm.why_not, sizeof(tm.why_not), "TC_AUTO_CLOCK=%s: expected fabric or wall", v);
		return 0;
	}
	ret = tc_comm_set_clock(tm.tc, TC_CLOCK_WALL);
	if (ret) {
		snprintf(tm.why_not, sizeof(tm.why_not), "rank %d: %s", tm.world_rank,
			 *tc_last_error() ? tc_last_error() : tc_strerror(ret));
		return 0;
	}
	return 1;
}

/* TC_TRANSPORT: dev (default) or verbs, the same on every rank (agreed:
 * a mix would run different bootstraps); 0 if not. */
static int tm_transport(void)
{
	const char *v = getenv("TC_TRANSPORT");
	int t[2], all[2];

	if (!v || !*v || !strcmp(v, "dev"))
		t[0] = TC_TRANSPORT_DEV;
	else if (!strcmp(v, "verbs"))
		t[0] = TC_TRANSPORT_VERBS;
	else
		t[0] = 0;
	t[1] = -t[0];
	PMPI_Allreduce(t, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (!t[0])
		snprintf(tm.why_not, sizeof(tm.why_not), "TC_TRANSPORT=%s: dev and verbs are served", v);
	else if (all[0] != -all[1])
		snprintf(tm.why_not, sizeof(tm.why_not), "the ranks do not agree on TC_TRANSPORT");
	return all[0] == -all[1] ? t[0] : 0;
}

static void tm_setup(void)
{
	const char *v;
	int ok, all_ok = 0;

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
	tm.transport = tm_transport();
	if (tm.transport == TC_TRANSPORT_VERBS) {
		tm.tc = tm_verbs_open(MPI_COMM_WORLD, 1, tm.why_not, sizeof(tm.why_not));
		all_ok = tm.tc != NULL;
	} else if (tm.transport == TC_TRANSPORT_DEV) {
		ok = tm_dev_open();
		PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		if (all_ok) {
			ok = tm_dev_wall();
			PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		}
		if (!all_ok && ok)
			snprintf(tm.why_not, sizeof(tm.why_not), "another rank could not open its node");
	}
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

/* The verbs communicators of communicators never freed, oldest first (the
 * order their ranks made them in), each left mapped to PMPI. */
static void tm_destroy_owned(void)
{
	struct tm_map *m, *rev = NULL;

	while ((m = tm_owned)) {
		tm_owned = m->next;
		m->next = rev;
		rev = m;
	}
	for (m = rev; m; m = m->next) {
		tc_comm_destroy(m->tc);
		m->tc = NULL;
		m->own = 0;
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
		tm_stats_print();
	if (tm.tc) {
		/* No rank closes its node while a peer may still be sending to it. */
		PMPI_Barrier(MPI_COMM_WORLD);
		tm_destroy_owned();
		tc_comm_destroy(tm.tc);
		tm.tc = NULL;
	}
	return PMPI_Finalize();
}
