// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * sim_alltoall: an alltoall on the library's simulator, no module needed.
 * Every node of a DIMS torus is a thread of this process; each sends a block
 * of M bytes to every node and checks every byte it receives.
 *	./sim_alltoall [DIMS [M]]          (default: TC_SIM_DIMS, else 4x4; 256)
 *	torusrun --transport sim --dims 3x3x3 -- ./sim_alltoall
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <toruscoll.h>

struct job {
	size_t m;
	size_t checked[4096], wrong[4096]; /* bytes, per rank */
	char algo[32];
};

static uint8_t pattern(int src, int dst, size_t i)
{
	return (uint8_t)(src * 31 + dst * 7 + i);
}

/* Runs on every node's thread, with that node's communicator. */
static int node_main(tc_comm_t *comm, void *arg)
{
	struct job *job = arg;
	struct tc_coll_info info = { .size = sizeof(info) };
	int P = tc_comm_size(comm), me = tc_comm_rank(comm), ret;
	size_t m = job->m;
	uint8_t *send = malloc(2 * P * m), *recv;

	if (!send)
		return -ENOMEM;
	recv = send + P * m;
	for (int d = 0; d < P; d++)
		for (size_t i = 0; i < m; i++)
			send[d * m + i] = pattern(me, d, i);
	ret = tc_alltoall(comm, send, recv, m);
	if (ret)
		fprintf(stderr, "node %d: tc_alltoall: %s: %s\n", me, tc_strerror(ret), tc_last_error());
	for (int s = 0; !ret && s < P; s++)
		for (size_t i = 0; i < m; i++, job->checked[me]++)
			job->wrong[me] += recv[s * m + i] != pattern(s, me, i);
	if (!ret && me == 0 && !tc_coll_last(comm, TC_ALLTOALL, &info))
		snprintf(job->algo, sizeof(job->algo), "%s", info.algo);
	free(send);
	return ret;
}

int main(int argc, char **argv)
{
	const char *dims = argc > 1 ? argv[1] : getenv("TC_SIM_DIMS") ? getenv("TC_SIM_DIMS") : "4x4";
	struct tc_sim_attr attr = { .size = sizeof(attr), .port_model = TC_ALL_PORT };
	static struct job job;
	size_t nodes = 1, checked = 0, wrong = 0;
	tc_sim_t *sim;
	char *end;
	int ret;

	job.m = argc > 2 ? strtoul(argv[2], NULL, 0) : 256;
	for (const char *p = dims; attr.ndims < TC_MAX_DIMS; p = end + 1) {
		attr.dims[attr.ndims] = strtoul(p, &end, 10);
		nodes *= attr.dims[attr.ndims++];
		if (*end != 'x' && *end != ',')
			break;
	}
	if (*end || nodes > 4096 || job.m == 0) {
		fprintf(stderr, "usage: %s [DIMS [M]]: DIMS like 4x4 (at most 4096 nodes), M > 0\n", argv[0]);
		return 2;
	}
	attr.wrap_mask = (1u << attr.ndims) - 1; /* a torus: every dimension wraps */
	ret = tc_sim_create(&attr, &sim);
	if (ret) {
		fprintf(stderr, "tc_sim_create %s: %s: %s\n", dims, tc_strerror(ret), tc_last_error());
		return 1;
	}
	ret = tc_sim_launch(sim, node_main, &job); /* the first node's error, if any */
	tc_sim_destroy(sim);
	if (ret)
		return 1;
	for (size_t r = 0; r < nodes; r++) {
		checked += job.checked[r];
		wrong += job.wrong[r];
	}
	printf("alltoall on %s (%zu nodes), %zu-byte blocks, %s: %zu bytes checked, %zu wrong\n", dims, nodes,
	       job.m, job.algo, checked, wrong);
	return wrong || checked != nodes * nodes * job.m ? 1 : 0;
}
