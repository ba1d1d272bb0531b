// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Communicators: creation from an attribute struct or the environment,
 * queries, per-collective algorithm override and tc_coll_last().
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <time.h>
#include <string.h>

#include "api/api.h"
#include "core/embed.h"
#include "core/part.h"
#include "core/part_price.h"


static const char *const tc_coll_env[2] = {
	[TC_ALLTOALL] = "TC_ALLTOALL_ALGO",
	[TC_ALLGATHER] = "TC_ALLGATHER_ALGO",
};

/*
 * TC_ZCOPY_MIN: the smallest block (bytes per peer) that runs zero copy;
 * "off" never. The default is the crossover measured on the device
 * (docs/library.md, "Zero copy").
 */
static int tc_zcopy_from_env(struct tc_comm *comm)
{
	const char *v = getenv("TC_ZCOPY_MIN");
	unsigned int u;
	int ret;

	comm->zcopy_min = TC_ZCOPY_MIN_DEFAULT;
	if (!v || !*v)
		return 0;
	if (!strcmp(v, "off")) {
		comm->zcopy_min = SIZE_MAX;
		return 0;
	}
	ret = tc_parse_uint("TC_ZCOPY_MIN", v, &u);
	if (!ret)
		comm->zcopy_min = u;
	return ret;
}

/* The TC_COST_* overrides of the transport's cost parameters (cost.h units). */
struct tc_cost_env {
	const char *var;
	size_t off; /* in struct tc_cost_params */
};
static const struct tc_cost_env tc_cost_env[] = {
	{ "TC_COST_TS_US", offsetof(struct tc_cost_params, ts_us) },
	{ "TC_COST_TW_US", offsetof(struct tc_cost_params, tw_us_per_byte) },
	{ "TC_COST_RHO_US", offsetof(struct tc_cost_params, rho_us_per_byte) },
	{ "TC_COST_HOP_US", offsetof(struct tc_cost_params, hop_us) },
	{ "TC_COST_LAT_US", offsetof(struct tc_cost_params, lat_us) },
	{ "TC_COST_RDV_US", offsetof(struct tc_cost_params, rdv_us) },
};
#define TC_NCOST_ENV (sizeof(tc_cost_env) / sizeof(tc_cost_env[0]))
_Static_assert(TC_NCOST_ENV == TC_COST_ENV_MAX, "struct tc_comm.cost_env has one slot per TC_COST_* variable");

/* Read the TC_COST_* that are set: val[i] >= 0, or -1 where unset. */
static int tc_cost_from_env(double val[TC_NCOST_ENV])
{
	for (size_t i = 0; i < TC_NCOST_ENV; i++) {
		const char *v = getenv(tc_cost_env[i].var);
		char *end;

		val[i] = -1;
		if (!v || !*v)
			continue;
		errno = 0;
		val[i] = strtod(v, &end);
		if (errno || end == v || *end || !(val[i] >= 0) || isinf(val[i]))
			return tc_err(-EINVAL, "%s=%s: not a non-negative number", tc_cost_env[i].var, v);
	}
	return 0;
}

/* Fill an attribute struct from TC_TRANSPORT, TC_FABRIC, TC_NODE, TC_TIMEOUT_MS. */
static int tc_attr_from_env(struct tc_comm_attr *a)
{
	const char *v;
	unsigned int u;
	int ret;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	v = getenv("TC_TRANSPORT");
	if (!v || !*v || !strcmp(v, "dev"))
		a->transport = TC_TRANSPORT_DEV;
	else if (!strcmp(v, "sim"))
		a->transport = TC_TRANSPORT_SIM;
	else if (!strcmp(v, "verbs"))
		a->transport = TC_TRANSPORT_VERBS;
	else
		return tc_err(-EINVAL, "TC_TRANSPORT=%s: unknown transport (dev, sim or verbs)", v);

	ret = tc_env_uint("TC_FABRIC", &a->fabric_id);
	if (ret < 0)
		return ret;
	v = getenv("TC_NODE");
	if (v && *v) {
		ret = tc_parse_uint("TC_NODE", v, &a->node);
		if (ret)
			return ret;
	} else if (a->transport == TC_TRANSPORT_DEV) {
		return tc_err(-EINVAL, "TC_NODE is not set: the dev transport needs the node index (rank)");
	}
	ret = tc_env_uint("TC_TIMEOUT_MS", &u);
	if (ret < 0)
		return ret;
	if (ret)
		a->timeout_ms = u;
	if (a->transport == TC_TRANSPORT_SIM)
		return tc_err(-EINVAL, "TC_TRANSPORT=sim: simulated communicators come from tc_sim_launch()");
	return 0;
}

/* Check an attribute struct the way the driver checks ioctl structs. */
static int tc_attr_check(const struct tc_comm_attr *attr)
{
	const unsigned char *tail;
	size_t i;

	if (attr->size < offsetofend(struct tc_comm_attr, sim))
		return tc_err(-EINVAL, "tc_comm_attr.size %u is smaller than the %zu bytes required", attr->size,
			      offsetofend(struct tc_comm_attr, sim));
	tail = (const unsigned char *)attr;
	for (i = sizeof(*attr); i < attr->size; i++)
		if (tail[i])
			return tc_err(-E2BIG, "tc_comm_attr.size %u: bytes past the %zu known are not zero", attr->size,
				      sizeof(*attr));
	if (attr->__reserved)
		return tc_err(-EINVAL, "tc_comm_attr.__reserved must be 0");
	if (attr->timeout_ms < 0)
		return tc_err(-EINVAL, "tc_comm_attr.timeout_ms %d is negative", attr->timeout_ms);
	if (attr->size >= offsetofend(struct tc_comm_attr, offload) && attr->offload > TC_OFFLOAD_OFF)
		return tc_err(-EINVAL, "tc_comm_attr.offload %u: expected TC_OFFLOAD_AUTO or TC_OFFLOAD_OFF",
			      attr->offload);
	if (attr->size >= offsetofend(struct tc_comm_attr, clock) && attr->clock > TC_CLOCK_WALL)
		return tc_err(-EINVAL, "tc_comm_attr.clock %u: expected 0, TC_CLOCK_FABRIC or TC_CLOCK_WALL",
			      attr->clock);
	return 0;
}

/* What auto minimises: the attribute's clock, else TC_AUTO_CLOCK, else the fabric's. */
static int tc_clock_choice(const struct tc_comm_attr *attr, int *clock)
{
	const char *v = getenv("TC_AUTO_CLOCK");

	*clock = attr->clock ? (int)attr->clock : TC_CLOCK_FABRIC;
	if (attr->clock || !v || !*v)
		return 0;
	if (!strcmp(v, "wall"))
		*clock = TC_CLOCK_WALL;
	else if (strcmp(v, "fabric"))
		return tc_err(-EINVAL, "TC_AUTO_CLOCK=%s: expected fabric or wall", v);
	return 0;
}

static int tc_set_override(struct tc_comm *comm, enum tc_coll_id coll, const char *name, const char *from)
{
	struct tc_coll_state *cs = &comm->coll[coll];
	const struct tc_algo *algo;

	if (!name || !*name || !strcmp(name, "auto")) {
		cs->forced = NULL;
		cs->forced_by = NULL;
		return 0;
	}
	algo = tc_algo_find(coll, name);
	if (!algo)
		return tc_err(-ENOENT, "%s%s%s: no %s algorithm of that name (torus-sched --list)", from ? from : "",
			      from ? "=" : "", name, tc_coll_str(coll));
	cs->forced = algo;
	cs->forced_by = from;
	return 0;
}

/* The communicator's settings from the environment: TC_TIMEOUT_MS (unless
 * the attributes set one), TC_ZCOPY_MIN, TC_ALLTOALL_ALGO, TC_ALLGATHER_ALGO. */
static int tc_comm_env(struct tc_comm *comm)
{
	int ret;

	if (!comm->tp.timeout_ms) {
		unsigned int u = 0;

		ret = tc_env_uint("TC_TIMEOUT_MS", &u);
		if (ret < 0)
			return ret;
		comm->tp.timeout_ms = u ? (int)u : TC_DEFAULT_TIMEOUT_MS;
	}
	ret = tc_zcopy_from_env(comm);
	for (int c = 0; !ret && c < 2; c++)
		ret = tc_set_override(comm, c, getenv(tc_coll_env[c]), tc_coll_env[c]);
	return ret;
}

/* The transport attr names, into comm->tp.ops. */
static int tc_comm_pick_transport(struct tc_comm *comm, const struct tc_comm_attr *attr)
{
	switch (attr->transport) {
	case TC_TRANSPORT_DEV:
		comm->tp.ops = &tc_transport_dev;
		return 0;
	case TC_TRANSPORT_SIM:
		comm->tp.ops = &tc_transport_sim;
		return 0;
	case TC_TRANSPORT_VERBS:
#ifdef TC_HAVE_VERBS
		comm->tp.ops = &tc_transport_verbs;
		return 0;
#else
		return tc_err(-EOPNOTSUPP, "libtoruscoll was built without verbs support (needs libibverbs, librdmacm and pmix)");
#endif
	default:
		return tc_err(-EINVAL, "tc_comm_attr.transport %u: unknown transport", attr->transport);
	}
}

/* Coordinates and neighbours, from the transport's shape and rank. */
static void tc_comm_geometry(struct tc_comm *comm)
{
	tc_shape_coords(&comm->tp.shape, comm->tp.rank, comm->coords);
	for (int p = 0; p < 2 * TC_MAX_DIMS; p++)
		comm->neighbors[p] = p < 2 * comm->tp.shape.ndims ? tc_shape_neighbor(&comm->tp.shape, comm->tp.rank, p) : -1;
}

/*
 * Price the algorithm choice for clock: the transport's own figures
 * (TC_CLOCK_FABRIC), or this host's measured over the fabric with every
 * node (TC_CLOCK_WALL; verbs measures its network at open and prices the
 * wall clock always); then the TC_COST_* read at creation. On failure the
 * prices stay what they were.
 */
static int tc_comm_price(struct tc_comm *comm, int clock)
{
	struct tc_cost_params before = comm->tp.cost;

	if (clock == TC_CLOCK_WALL && comm->transport != TC_TRANSPORT_VERBS) {
		int ret = tc_probe_wall(comm);

		if (ret) {
			comm->tp.cost = before;
			return ret;
		}
	} else {
		comm->tp.cost = comm->fabric_cost;
	}
	for (size_t i = 0; i < TC_NCOST_ENV; i++) {
		if (comm->cost_env[i] < 0)
			continue;
		*(double *)((char *)&comm->tp.cost + tc_cost_env[i].off) = comm->cost_env[i];
		/* TC_COST_TW_US prices every byte, a big message's too */
		if (tc_cost_env[i].off == offsetof(struct tc_cost_params, tw_us_per_byte))
			comm->tp.cost.big_bytes = 0;
	}
	comm->clock = comm->transport == TC_TRANSPORT_VERBS ? TC_CLOCK_WALL : clock;
	return 0;
}

TC_EXPORT int tc_comm_create(const struct tc_comm_attr *attr, tc_comm_t **out)
{
	struct tc_comm_attr env, full;
	struct tc_comm *comm;
	int ret, clock;

	if (!out)
		return tc_err(-EINVAL, "tc_comm_create: comm pointer is NULL");
	*out = NULL;
	if (!attr) {
		ret = tc_attr_from_env(&env);
		if (ret)
			return ret;
		attr = &env;
	}
	ret = tc_attr_check(attr);
	if (ret)
		return ret;
	/* an older caller's shorter struct: the fields it does not know read as 0 */
	if (attr->size < sizeof(full)) {
		memset(&full, 0, sizeof(full));
		memcpy(&full, attr, attr->size);
		full.size = sizeof(full);
		attr = &full;
	}

	comm = calloc(1, sizeof(*comm));
	if (!comm)
		return tc_err(-ENOMEM, "tc_comm_create: out of memory");
	ret = tc_comm_pick_transport(comm, attr);
	if (ret)
		goto err_free;
	comm->tp.fabric_id = attr->fabric_id;
	comm->tp.timeout_ms = attr->timeout_ms;
	ret = tc_comm_env(comm);
	if (ret)
		goto err_free;
	ret = tc_cost_from_env(comm->cost_env);
	if (!ret)
		ret = tc_clock_choice(attr, &clock);
	if (ret)
		goto err_free;

	ret = comm->tp.ops->open(&comm->tp, attr);
	if (ret)
		goto err_free;
	comm->transport = attr->transport;
	comm->fabric_cost = comm->tp.cost;
	tc_comm_geometry(comm);
	ret = tc_comm_price(comm, clock);
	if (ret) {
		tc_comm_destroy(comm);
		return ret;
	}
	*out = comm;
	return 0;

err_free:
	free(comm);
	return ret;
}

/*
 * ranks[] (parent ranks) as nodes of the root's fabric: in range, distinct,
 * the caller among them (*me: its index). 0 and a malloc'd *out, or -errno.
 */
static int tc_sub_nodes(struct tc_comm *parent, struct tc_comm *root, const int *ranks, int n, int **out, int *me)
{
	int P = parent->tp.shape.nodes;
	unsigned char *seen = calloc(P, 1);
	int *nodes = malloc(n * sizeof(*nodes));
	int ret = 0;

	*me = -1;
	if (!seen || !nodes) {
		ret = tc_err(-ENOMEM, "tc_comm_create_sub: out of memory");
		goto out;
	}
	for (int i = 0; i < n && !ret; i++) {
		if (ranks[i] < 0 || ranks[i] >= P)
			ret = tc_err(-EINVAL, "tc_comm_create_sub: ranks[%d] = %d is not a rank of a %d-rank parent", i,
				     ranks[i], P);
		else if (seen[ranks[i]]++)
			ret = tc_err(-EINVAL, "tc_comm_create_sub: rank %d is listed twice", ranks[i]);
		else
			nodes[i] = parent == root ? ranks[i] : tc_sub_node(&parent->tp, ranks[i]);
		if (!ret && ranks[i] == parent->tp.rank)
			*me = i;
	}
	if (!ret && *me < 0)
		ret = tc_err(-EINVAL, "tc_comm_create_sub: the calling rank %d is not in the list", parent->tp.rank);
out:
	free(seen);
	if (ret)
		free(nodes);
	else
		*out = nodes;
	return ret;
}

static int tc_sub_check(struct tc_comm *parent, const int *ranks, int n, unsigned int context, tc_comm_t **out)
{
	if (!out)
		return tc_err(-EINVAL, "tc_comm_create_sub: sub pointer is NULL");
	*out = NULL;
	if (!parent || !ranks)
		return tc_err(-EINVAL, "tc_comm_create_sub: NULL argument");
	if (n < 1 || n > parent->tp.shape.nodes)
		return tc_err(-EINVAL, "tc_comm_create_sub: %d ranks of a %d-rank parent", n, parent->tp.shape.nodes);
	if (context < 1 || context > TC_SUB_MAX_CONTEXT)
		return tc_err(-EINVAL, "tc_comm_create_sub: context %u outside 1..%u", context, TC_SUB_MAX_CONTEXT);
	if (parent->orphan)
		return tc_err(-EIO, "tc_comm_create_sub: the parent's own parent was destroyed");
	for (struct tc_comm *c = (parent->root ?: parent)->subs; c; c = c->sub_next)
		if (c->context == context)
			return tc_err(-EBUSY, "tc_comm_create_sub: context %u is taken by a live sub of this node", context);
	return 0;
}

TC_EXPORT int tc_comm_create_sub(tc_comm_t *parent, const int *ranks, int n, unsigned int context, tc_comm_t **out)
{
	struct tc_comm *root, *comm;
	struct tc_embed e;
	int *nodes = NULL, me, ret;

	_Static_assert(TC_SUB_MAX_CONTEXT == TC_TAG_CTX_MAX, "the public context limit is the tags'");
	ret = tc_sub_check(parent, ranks, n, context, out);
	if (ret)
		return ret;
	root = parent->root ?: parent; /* a sub of a sub is a sub of the root */
	ret = tc_sub_nodes(parent, root, ranks, n, &nodes, &me);
	if (ret)
		return ret;
	ret = tc_embed_find(&root->tp.shape, nodes, n, &e);
	if (ret)
		goto out;
	comm = calloc(1, sizeof(*comm));
	if (!comm) {
		ret = tc_err(-ENOMEM, "tc_comm_create_sub: out of memory");
		goto out;
	}
	ret = tc_sub_open(&comm->tp, &root->tp, &e, nodes, me, context);
	if (ret) {
		free(comm);
		goto out;
	}
	comm->tp.timeout_ms = parent->tp.timeout_ms;
	comm->zcopy_min = parent->zcopy_min;
	for (int c = 0; c < 2; c++) {
		comm->coll[c].forced = parent->coll[c].forced;
		comm->coll[c].forced_by = parent->coll[c].forced_by;
	}
	comm->root = root;
	comm->context = context;
	comm->sub_next = root->subs;
	if (root->subs)
		root->subs->sub_prev = comm;
	root->subs = comm;
	tc_comm_geometry(comm);
	*out = comm;
out:
	free(nodes);
	return ret;
}

/* The root goes: its subs keep their memory but lose the transport. */
static void tc_comm_orphan_subs(struct tc_comm *root)
{
	struct tc_comm *c, *next;

	for (c = root->subs; c; c = next) {
		next = c->sub_next;
		c->root = NULL;
		c->sub_prev = c->sub_next = NULL;
		c->orphan = 1;
		c->broken = 1;
		snprintf(c->broken_why, sizeof(c->broken_why), "the communicator it is a sub of was destroyed");
	}
	root->subs = NULL;
}

static void tc_comm_unlink_sub(struct tc_comm *c)
{
	if (c->sub_prev)
		c->sub_prev->sub_next = c->sub_next;
	else
		c->root->subs = c->sub_next;
	if (c->sub_next)
		c->sub_next->sub_prev = c->sub_prev;
}

TC_EXPORT void tc_comm_destroy(tc_comm_t *comm)
{
	if (!comm)
		return;
	tc_colls_free(comm); /* waits for queued collectives (a sub: its own, in its root's queue) */
	if (comm->root)
		tc_comm_unlink_sub(comm);
	tc_comm_orphan_subs(comm);
	tc_exec_free_plans(comm);
	tc_cprog_free_all(comm);
	comm->tp.ops->close(&comm->tp);
	free(comm);
}

TC_EXPORT int tc_comm_rank(const tc_comm_t *comm)
{
	return comm ? comm->tp.rank : tc_err(-EINVAL, "tc_comm_rank: comm is NULL");
}

TC_EXPORT int tc_comm_size(const tc_comm_t *comm)
{
	return comm ? comm->tp.shape.nodes : tc_err(-EINVAL, "tc_comm_size: comm is NULL");
}

TC_EXPORT int tc_comm_ndims(const tc_comm_t *comm)
{
	return comm ? comm->tp.shape.ndims : tc_err(-EINVAL, "tc_comm_ndims: comm is NULL");
}

TC_EXPORT int tc_comm_dims(const tc_comm_t *comm, int *dims, unsigned int *wrap_mask)
{
	if (!comm)
		return tc_err(-EINVAL, "tc_comm_dims: comm is NULL");
	if (dims)
		for (int d = 0; d < TC_MAX_DIMS; d++)
			dims[d] = d < comm->tp.shape.ndims ? comm->tp.shape.dims[d] : 0;
	if (wrap_mask)
		*wrap_mask = comm->tp.shape.wrap_mask;
	return comm->tp.shape.ndims;
}

TC_EXPORT int tc_comm_port_model(const tc_comm_t *comm)
{
	if (!comm)
		return tc_err(-EINVAL, "tc_comm_port_model: comm is NULL");
	return comm->tp.shape.one_port ? TC_ONE_PORT : TC_ALL_PORT;
}

TC_EXPORT int tc_comm_coords(const tc_comm_t *comm, int *coords)
{
	if (!comm || !coords)
		return tc_err(-EINVAL, "tc_comm_coords: NULL argument");
	for (int d = 0; d < TC_MAX_DIMS; d++)
		coords[d] = d < comm->tp.shape.ndims ? comm->coords[d] : 0;
	return 0;
}

TC_EXPORT int tc_comm_neighbors(const tc_comm_t *comm, int *neighbors)
{
	if (!comm || !neighbors)
		return tc_err(-EINVAL, "tc_comm_neighbors: NULL argument");
	memcpy(neighbors, comm->neighbors, sizeof(comm->neighbors));
	return 0;
}

TC_EXPORT const char *tc_comm_transport_name(const tc_comm_t *comm)
{
	if (!comm)
		return "none";
	/* a sub runs on its root's network */
	return comm->root ? comm->root->tp.ops->name : comm->tp.ops->name;
}

TC_EXPORT int tc_comm_set_algo(tc_comm_t *comm, enum tc_coll_id coll, const char *name)
{
	if (!comm)
		return tc_err(-EINVAL, "tc_comm_set_algo: comm is NULL");
	if ((unsigned int)coll > TC_ALLGATHER)
		return tc_err(-EINVAL, "tc_comm_set_algo: collective %d unknown", (int)coll);
	return tc_set_override(comm, coll, name, NULL);
}

TC_EXPORT int tc_coll_algos(enum tc_coll_id coll, const char **names, int max)
{
	int n = 0;

	if ((unsigned int)coll > TC_ALLGATHER)
		return tc_err(-EINVAL, "tc_coll_algos: collective %d unknown", (int)coll);
	if (max < 0 || (!names && max > 0))
		return tc_err(-EINVAL, "tc_coll_algos: %d names into %s", max, names ? "an array" : "NULL");
	for (int i = 0; tc_algos[i]; i++) {
		if (tc_algos[i]->coll != coll)
			continue;
		if (n < max)
			names[n] = tc_algos[i]->name;
		n++;
	}
	return n;
}

TC_EXPORT int tc_comm_set_clock(tc_comm_t *comm, unsigned int clock)
{
	int ret;

	if (!comm)
		return tc_err(-EINVAL, "tc_comm_set_clock: comm is NULL");
	if (clock != TC_CLOCK_FABRIC && clock != TC_CLOCK_WALL)
		return tc_err(-EINVAL, "tc_comm_set_clock: clock %u: expected TC_CLOCK_FABRIC or TC_CLOCK_WALL", clock);
	if (comm->root || comm->orphan)
		return tc_err(-EOPNOTSUPP, "tc_comm_set_clock: a sub-communicator prices with its parent's figures "
					   "from its creation; set the parent's clock before creating it");
	if (comm->transport == TC_TRANSPORT_VERBS && clock == TC_CLOCK_FABRIC)
		return tc_err(-EOPNOTSUPP, "tc_comm_set_clock: verbs has no modelled fabric; it prices the wall clock");
	ret = tc_comm_usable(comm, "tc_comm_set_clock");
	if (ret)
		return ret;
	if (!tc_colls_idle(comm))
		return tc_err(-EBUSY, "tc_comm_set_clock: a nonblocking collective of this communicator or its subs "
				      "is outstanding: wait for it first");
	return tc_comm_price(comm, clock);
}

int __tc_comm_force_algo(tc_comm_t *comm, enum tc_coll_id coll, const struct tc_algo *algo)
{
	if (!comm || (unsigned int)coll > TC_ALLGATHER)
		return tc_err(-EINVAL, "__tc_comm_force_algo: bad argument");
	if (algo && algo->coll != coll)
		return tc_err(-EINVAL, "__tc_comm_force_algo: %s is not a %s algorithm", algo->name, tc_coll_str(coll));
	comm->coll[coll].forced = algo;
	comm->coll[coll].forced_by = NULL;
	return 0;
}

TC_EXPORT int tc_coll_last(const tc_comm_t *comm, enum tc_coll_id coll, struct tc_coll_info *info)
{
	const struct tc_coll_state *cs;
	struct tc_coll_info full;
	uint32_t size;

	if (!comm || !info)
		return tc_err(-EINVAL, "tc_coll_last: NULL argument");
	if ((unsigned int)coll > TC_ALLTOALLV)
		return tc_err(-EINVAL, "tc_coll_last: collective %d unknown", (int)coll);
	size = info->size;
	if (size < offsetofend(struct tc_coll_info, block_bytes))
		return tc_err(-EINVAL, "tc_coll_info.size %u is smaller than %zu", size,
			      offsetofend(struct tc_coll_info, block_bytes));
	if (coll > TC_ALLGATHER) {
		/* no choice of algorithm, no schedule: what ran and its system calls */
		if (!comm->line_last[coll].size)
			return tc_err(-ENODATA, "tc_coll_last: no %s has run on this communicator", tc_coll_str(coll));
		full = comm->line_last[coll];
		full.size = size < sizeof(full) ? size : sizeof(full);
		memcpy(info, &full, full.size);
		if (size > sizeof(full))
			memset((char *)info + sizeof(full), 0, size - sizeof(full));
		return 0;
	}
	cs = &comm->coll[coll];
	if (!cs->have_last)
		return tc_err(-ENODATA, "tc_coll_last: no %s has run on this communicator", tc_coll_str(coll));
	full = cs->last;
	if (!cs->last_part)
		return tc_err(-ENODATA, "tc_coll_last: the last %s kept no part", tc_coll_str(coll));
	{
		/* The cost model over this rank's own part: no other part is built. */
		struct tc_cost_params cp = comm->tp.cost;
		struct tc_part_stats st;
		struct tc_cost c;
		double t;
		int err;

		cp.block_bytes = full.block_bytes;
		err = tc_part_price(cs->last_part, &cp, &t, &c);
		if (err)
			return tc_err(err, "tc_coll_last: pricing this rank's part of the last %s (%s): %s",
				      tc_coll_str(coll), cs->last.algo, tc_last_error());
		full.steps = cs->last_part->nsteps; /* the schedule's, which the part knows */
		full.transmission_blocks = c.transmission_blocks;
		full.lower_bound_blocks = c.lower_bound_blocks;
		/* the library's choice keeps the whole schedule's price it chose by */
		if (full.predicted_us < 0)
			full.predicted_us = t;
		tc_part_stats(cs->last_part, &st);
		full.part_steps = st.active_steps;
		full.part_msgs_sent = (uint32_t)st.msgs_sent;
		full.part_msgs_recv = (uint32_t)st.msgs_recv;
		full.part_blocks_sent = st.blks_sent;
		full.part_blocks_recv = st.blks_recv;
		full.part_blocks_forwarded = st.blks_fwd;
	}
	full.size = size < sizeof(full) ? size : sizeof(full);
	memcpy(info, &full, full.size);
	if (size > sizeof(full))
		memset((char *)info + sizeof(full), 0, size - sizeof(full));
	return 0;
}
