// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The public face of the simulator: tc_sim_create() makes a simulated fabric
 * (transport/sim.h), tc_sim_launch() runs a function on every node of it, one
 * thread per node, each with its own communicator on the sim transport.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "transport/sim.h"

#define TC_SIM_STACK (256 * 1024)

TC_EXPORT int tc_sim_create(const struct tc_sim_attr *attr, tc_sim_t **out)
{
	pthread_condattr_t ca;
	struct tc_sim *sim;
	const char *env;
	int dims[TC_MAX_DIMS];
	long long nodes = 1;
	int ret, n;

	if (!attr || !out)
		return tc_err(-EINVAL, "tc_sim_create: NULL argument");
	*out = NULL;
	if (attr->size < offsetofend(struct tc_sim_attr, port_model))
		return tc_err(-EINVAL, "tc_sim_attr.size %u is smaller than %zu", attr->size,
			      offsetofend(struct tc_sim_attr, port_model));
	for (size_t i = sizeof(*attr); i < attr->size; i++)
		if (((const unsigned char *)attr)[i])
			return tc_err(-E2BIG, "tc_sim_attr.size %u: bytes past the %zu known are not zero", attr->size,
				      sizeof(*attr));
	if (attr->port_model != TC_ALL_PORT && attr->port_model != TC_ONE_PORT)
		return tc_err(-EINVAL, "tc_sim_attr.port_model %u: not TC_ALL_PORT or TC_ONE_PORT", attr->port_model);
	if (attr->ndims < 1 || attr->ndims > TC_MAX_DIMS)
		return tc_err(-EINVAL, "tc_sim_attr.ndims %u: must be 1..%d", attr->ndims, TC_MAX_DIMS);
	if (attr->wrap_mask >> attr->ndims)
		return tc_err(-EINVAL, "tc_sim_attr.wrap_mask 0x%x: bits past the %u dimensions", attr->wrap_mask,
			      attr->ndims);
	for (unsigned int d = 0; d < attr->ndims; d++) {
		/* the schedule layer's limits (lib/core/shape.c): routes are int8, node ids int32 */
		unsigned int max = attr->wrap_mask & (1u << d) ? 254 : 128;

		if (attr->dims[d] < 2 || attr->dims[d] > max)
			return tc_err(-EINVAL, "tc_sim_attr.dims[%u] = %u: a side is 2..%u (%s)", d, attr->dims[d], max,
				      max == 254 ? "254 on a wrapping dimension, 128 on a mesh one"
						 : "128 on a mesh dimension, 254 on a wrapping one");
		dims[d] = attr->dims[d];
		nodes *= dims[d];
		if (nodes > 1 << 20)
			return tc_err(-EINVAL, "tc_sim_attr.dims: more than 1048576 nodes");
	}

	env = getenv("TC_SIM_MATCH");
	if (env && *env && strcmp(env, "device") && strcmp(env, "source"))
		return tc_err(-EINVAL, "TC_SIM_MATCH=%s: not \"device\" (port and tag) or \"source\" (source, port and tag)",
			      env);
	sim = calloc(1, sizeof(*sim));
	if (!sim)
		return tc_err(-ENOMEM, "tc_sim_create: out of memory");
	sim->match_port_tag = env && !strcmp(env, "device");
	ret = tc_shape_init(&sim->shape, attr->ndims, dims, attr->wrap_mask, attr->port_model == TC_ONE_PORT);
	if (ret) {
		free(sim);
		return tc_err(ret, "tc_sim_create: invalid shape (dims >= 2, wrap_mask within ndims, bounded size)");
	}
	sim->nodes = calloc(sim->shape.nodes, sizeof(*sim->nodes));
	if (!sim->nodes) {
		n = sim->shape.nodes;
		free(sim);
		return tc_err(-ENOMEM, "tc_sim_create: out of memory for %d nodes", n);
	}
	pthread_mutex_init(&sim->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	for (n = 0; n < sim->shape.nodes; n++) {
		pthread_mutex_init(&sim->nodes[n].mu, NULL);
		pthread_cond_init(&sim->nodes[n].cond, &ca);
	}
	pthread_condattr_destroy(&ca);
	*out = sim;
	return 0;
}

TC_EXPORT void tc_sim_destroy(tc_sim_t *sim)
{
	if (!sim)
		return;
	for (int n = 0; n < sim->shape.nodes; n++) {
		struct tc_sim_node *nd = &sim->nodes[n];

		pthread_cond_destroy(&nd->cond);
		pthread_mutex_destroy(&nd->mu);
		free(nd->buf);
		free(nd->recs);
		free(nd->segs);
		free(nd->pend);
	}
	pthread_mutex_destroy(&sim->lock);
	free(sim->nodes);
	free(sim);
}

struct tc_sim_thread {
	struct tc_sim *sim;
	int node;
	int (*fn)(tc_comm_t *comm, void *arg);
	void *arg;
	int ret;
	char why[256]; /* the node's tc_last_error() when ret != 0 */
};

static void *tc_sim_thread_main(void *p)
{
	struct tc_sim_thread *t = p;
	struct tc_comm_attr attr = {
		.size = sizeof(attr),
		.transport = TC_TRANSPORT_SIM,
		.node = t->node,
		.sim = t->sim,
	};
	tc_comm_t *comm;

	t->ret = tc_comm_create(&attr, &comm);
	if (!t->ret) {
		t->ret = t->fn(comm, t->arg);
		if (t->ret)
			snprintf(t->why, sizeof(t->why), "%s", tc_last_error());
		tc_comm_destroy(comm);
	} else {
		snprintf(t->why, sizeof(t->why), "%s", tc_last_error());
	}
	return NULL;
}

TC_EXPORT int tc_sim_launch(tc_sim_t *sim, int (*fn)(tc_comm_t *comm, void *arg), void *arg)
{
	struct tc_sim_thread *t;
	pthread_t *tid;
	pthread_attr_t pa;
	int P, n, started, ret = 0;

	if (!sim || !fn)
		return tc_err(-EINVAL, "tc_sim_launch: NULL argument");
	P = sim->shape.nodes;
	pthread_mutex_lock(&sim->lock);
	if (sim->running) {
		pthread_mutex_unlock(&sim->lock);
		return tc_err(-EBUSY, "tc_sim_launch: this simulated fabric is already running");
	}
	sim->running = 1;
	pthread_mutex_unlock(&sim->lock);

	t = calloc(P, sizeof(*t));
	tid = calloc(P, sizeof(*tid));
	if (!t || !tid) {
		ret = tc_err(-ENOMEM, "tc_sim_launch: out of memory");
		goto out;
	}
	pthread_attr_init(&pa);
	pthread_attr_setstacksize(&pa, TC_SIM_STACK);
	for (started = 0; started < P; started++) {
		t[started] = (struct tc_sim_thread){ .sim = sim, .node = started, .fn = fn, .arg = arg };
		ret = -pthread_create(&tid[started], &pa, tc_sim_thread_main, &t[started]);
		if (ret)
			break;
	}
	pthread_attr_destroy(&pa);
	for (n = 0; n < started; n++)
		pthread_join(tid[n], NULL);
	if (ret) {
		/* The nodes that started wait for the missing ones until they time out. */
		ret = tc_err(ret, "tc_sim_launch: could not start thread %d of %d", started, P);
		goto out;
	}
	/* The caller's thread gets the first failing node's reason. */
	for (n = 0; n < P; n++)
		if (t[n].ret) {
			ret = tc_err(t[n].ret, "tc_sim_launch: node %d returned %d%s%s", n, t[n].ret,
				     t[n].why[0] ? ": " : "", t[n].why);
			break;
		}
out:
	/* Leave no stale mail for the next launch (every thread has ended). */
	pthread_mutex_lock(&sim->lock);
	for (n = 0; n < P; n++) {
		sim->nodes[n].npend = 0;
		sim->nodes[n].nrecs = sim->nodes[n].nsegs = 0;
		sim->nodes[n].ndone = sim->nodes[n].outstanding = 0;
		atomic_store(&sim->nodes[n].busy, 0);
	}
	sim->running = 0;
	pthread_mutex_unlock(&sim->lock);
	free(t);
	free(tid);
	return ret;
}

