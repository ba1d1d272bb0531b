// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * alltoall: every rank sends a block of M bytes to every rank and checks
 * every byte it receives. One process per node of a torus.ko fabric:
 *	torusrun --dims 4x4 -- ./alltoall [M]
 * (torusrun sets TC_NODE, TC_FABRIC and TC_TRANSPORT, which
 * tc_comm_create(NULL, ...) reads.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <toruscoll.h>

static uint8_t pattern(int src, int dst, size_t i)
{
	return (uint8_t)(src * 31 + dst * 7 + i);
}

int main(int argc, char **argv)
{
	size_t m = argc > 1 ? strtoul(argv[1], NULL, 0) : 256, bad = 0;
	struct tc_coll_info info = { .size = sizeof(info) };
	uint8_t *send, *recv;
	tc_comm_t *comm;
	int ret, P, me;

	ret = tc_comm_create(NULL, &comm);
	if (ret) {
		fprintf(stderr, "tc_comm_create: %s: %s\n", tc_strerror(ret), tc_last_error());
		return 1;
	}
	P = tc_comm_size(comm);
	me = tc_comm_rank(comm);
	send = malloc(P * m);
	recv = malloc(P * m);
	if (!send || !recv || !m) {
		fprintf(stderr, "bad block size or out of memory\n");
		return 1;
	}
	for (int d = 0; d < P; d++)
		for (size_t i = 0; i < m; i++)
			send[d * m + i] = pattern(me, d, i);
	ret = tc_alltoall(comm, send, recv, m);
	if (ret) {
		fprintf(stderr, "tc_alltoall: %s: %s\n", tc_strerror(ret), tc_last_error());
		return 1;
	}
	for (int s = 0; s < P; s++)
		for (size_t i = 0; i < m; i++)
			bad += recv[s * m + i] != pattern(s, me, i);
	tc_coll_last(comm, TC_ALLTOALL, &info);
	/* this rank's own part of the schedule: what it sent and received */
	printf("rank %d of %d: alltoall of %zu-byte blocks with %s: %s (%zu wrong bytes), %u messages sent and %u "
	       "received in %u steps\n",
	       me, P, m, info.algo, bad ? "FAILED" : "ok", bad, info.part_msgs_sent, info.part_msgs_recv,
	       info.part_steps);
	tc_comm_destroy(comm);
	free(send);
	free(recv);
	return bad ? 1 : 0;
}
