// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mem_verbs: what one rank holds on the RDMA device once every pair of the
 * job is connected, read from the kernel (rdma res show, by this process's
 * pid), not from the library: the bytes of memory it registered (the sum of
 * its MRs' lengths), its MRs, QPs and SRQs. It uses only <toruscoll.h>, so
 * the same program measures any build of the library.
 *
 *   mpirun -np 16 -x TC_TRANSPORT=verbs -x TC_RDMA_DEVICE=rxe0 mem_verbs
 *
 * One direct alltoall of 8 bytes a block (every byte checked) connects
 * every pair; each rank then prints one line:
 *   mem_verbs: rank R of P: registered B bytes in M MRs (L1 L2 ...), qp Q, srq S
 * with each MR's length as listed, so the data buffer (which the cost probe
 * at tc_comm_create grows to 2 MiB, whatever the job size) can be told from
 * the transport's own slots.
 * Exit 0 only if the alltoall was right and rdma res show answered.
 * tests/verbs/bench-memory runs it at several job sizes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <toruscoll.h>

/* Lines of `rdma res show KIND` naming this pid; with sum, the total of
 * "mrlen N", and each length appended to lens. */
static long res_mine(const char *kind, long *sum, char *lens, size_t lens_size)
{
	char cmd[64], line[512], key[32];
	long n = 0;
	FILE *f;

	snprintf(key, sizeof(key), "pid %d ", (int)getpid());
	snprintf(cmd, sizeof(cmd), "rdma res show %s 2>/dev/null", kind);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		const char *m;

		if (!strstr(line, key))
			continue;
		n++;
		m = strstr(line, "mrlen ");
		if (sum && m) {
			long len = atol(m + 6);

			*sum += len;
			snprintf(lens + strlen(lens), lens_size - strlen(lens), "%s%ld", *lens ? " " : "", len);
		}
	}
	if (pclose(f))
		return -1;
	return n;
}

int main(void)
{
	long bytes = 0, mrs, qps, srqs;
	char lens[256] = "";
	unsigned char *sb, *rb;
	tc_comm_t *comm;
	int ret, P, me, bad = 0;

	ret = tc_comm_create(NULL, &comm);
	if (ret) {
		fprintf(stderr, "mem_verbs: tc_comm_create: %s\n", tc_last_error());
		return 1;
	}
	P = tc_comm_size(comm);
	me = tc_comm_rank(comm);
	sb = malloc((size_t)P * 8);
	rb = malloc((size_t)P * 8);
	if (!sb || !rb)
		return 1;
	for (int d = 0; d < P; d++)
		for (int k = 0; k < 8; k++)
			sb[d * 8 + k] = (unsigned char)(me * 31 + d * 7 + k + 1);
	tc_comm_set_algo(comm, TC_ALLTOALL, "direct");
	ret = tc_alltoall(comm, sb, rb, 8);
	if (ret) {
		fprintf(stderr, "mem_verbs: rank %d: alltoall: %s\n", me, tc_last_error());
		return 1;
	}
	for (int s = 0; s < P; s++)
		for (int k = 0; k < 8; k++)
			bad += rb[s * 8 + k] != (unsigned char)(s * 31 + me * 7 + k + 1);
	mrs = res_mine("mr", &bytes, lens, sizeof(lens));
	qps = res_mine("qp", NULL, NULL, 0);
	srqs = res_mine("srq", NULL, NULL, 0);
	printf("mem_verbs: rank %d of %d: registered %ld bytes in %ld MRs (%s), qp %ld, srq %ld%s\n", me, P, bytes,
	       mrs, lens, qps, srqs, bad ? ", WRONG BYTES" : "");
	fflush(stdout);
	tc_comm_destroy(comm);
	free(sb);
	free(rb);
	return bad || mrs <= 0 || qps < 0 || srqs < 0;
}
