// SPDX-License-Identifier: GPL-2.0
/*
 * A library that gets one byte wrong, for test-bench: torus-bench linked with
 * -Wl,--wrap=tc_alltoall gets this tc_alltoall, which makes the real call and
 * then flips the last byte one rank receives in its n-th call
 * (TB_CORRUPT="rank n", counting every call of the run from 1). torus-bench
 * must find that byte whichever call it is in, and report it without going
 * through the library.
 */
#include <stdio.h>
#include <stdlib.h>

#include <toruscoll.h>

int __real_tc_alltoall(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t block_bytes);
int __wrap_tc_alltoall(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t block_bytes);

/* calls so far per rank (the simulator runs each rank in its own thread) */
static int calls[4096];

int __wrap_tc_alltoall(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t block_bytes)
{
	int ret = __real_tc_alltoall(comm, sendbuf, recvbuf, block_bytes);
	const char *v = getenv("TB_CORRUPT");
	int rank = tc_comm_rank(comm), want_rank, want_call;

	if (ret || !v || sscanf(v, "%d %d", &want_rank, &want_call) != 2 || rank != want_rank || rank >= 4096)
		return ret;
	if (++calls[rank] == want_call && block_bytes)
		((unsigned char *)recvbuf)[block_bytes * tc_comm_size(comm) - 1] ^= 0x5a;
	return ret;
}
