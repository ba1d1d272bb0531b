// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * oob_mpi: the out-of-band hook. An MPI program hands libtoruscoll its own
 * exchange (MPI_Allgather over MPI_COMM_WORLD) in tc_comm_attr.oob_allgather
 * with its rank and size, as an MPI shim would; the verbs communicator then
 * never touches PMIx itself. Every rank runs alltoall and allgather on it,
 * checks every byte, and rank 0 prints TAP for the job (MPI_Allreduce of the
 * failures). Built with mpicc when there is one; run by tests/verbs/run-guest.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <toruscoll.h>

static int calls;

static int mpi_allgather(void *ctx, const void *sendbuf, void *recvbuf, size_t bytes)
{
	calls++;
	return MPI_Allgather(sendbuf, (int)bytes, MPI_BYTE, recvbuf, (int)bytes, MPI_BYTE, *(MPI_Comm *)ctx) ==
			       MPI_SUCCESS ? 0 : -5;
}

int main(int argc, char **argv)
{
	MPI_Comm world = MPI_COMM_WORLD;
	struct tc_comm_attr attr;
	int me, P, bad = 0, ret, total, rank_ok, n = 0;
	unsigned char *sb, *rb;
	const size_t m = 300;
	char why[256] = "";
	tc_comm_t *comm = NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(world, &me);
	MPI_Comm_size(world, &P);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.transport = TC_TRANSPORT_VERBS;
	attr.rdma_device = getenv("OOB_RDMA_DEVICE");
	attr.oob_allgather = mpi_allgather;
	attr.oob_ctx = &world;
	attr.oob_rank = me;
	attr.oob_size = P;
	sb = malloc(P * m);
	rb = malloc(P * m);
	ret = tc_comm_create(&attr, &comm);
	if (ret) {
		snprintf(why, sizeof(why), "tc_comm_create: %s", tc_last_error());
		bad++;
	} else {
		rank_ok = tc_comm_rank(comm) == me && tc_comm_size(comm) == P && calls == 1 &&
			  !strcmp(tc_comm_transport_name(comm), "verbs");
		if (!rank_ok) {
			snprintf(why, sizeof(why), "rank %d size %d transport %s after %d oob calls",
				 tc_comm_rank(comm), tc_comm_size(comm), tc_comm_transport_name(comm), calls);
			bad++;
		}
		for (int c = 0; c < 2 && !bad; c++) {
			for (size_t k = 0; k < P * m; k++)
				sb[k] = (unsigned char)(me * 7 + k * 3 + c);
			memset(rb, 0, P * m);
			ret = c ? tc_allgather(comm, sb, rb, m) : tc_alltoall(comm, sb, rb, m);
			if (ret) {
				snprintf(why, sizeof(why), "%s: %s", c ? "allgather" : "alltoall", tc_last_error());
				bad++;
				break;
			}
			for (int o = 0; o < P; o++)
				for (size_t k = 0; k < m; k++) {
					size_t sk = c ? k : me * m + k; /* where o put what I receive */

					if (rb[o * m + k] != (unsigned char)(o * 7 + sk * 3 + c))
						bad++;
				}
			n++;
		}
	}
	if (bad)
		fprintf(stderr, "oob_mpi rank %d: %d wrong: %s\n", me, bad, why);
	tc_comm_destroy(comm);
	MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, world);
	if (!me) {
		printf("%sok 1 - oob_allgather (MPI_Allgather) on %d ranks: communicator made without PMIx, "
		       "alltoall and allgather of %zu-byte blocks checked on every rank\n", total ? "not " : "", P, m);
		printf("1..1\n");
	}
	free(sb);
	free(rb);
	MPI_Finalize();
	return total ? 1 : 0;
}
