// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * allreduce: every rank contributes N int64 values; every rank checks the
 * sum against the one it computes itself. Run with
 *	torusrun --dims 4x4 -- ./allreduce [N]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <toruscoll.h>

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000, bad = 0;
	int64_t *in, *out;
	tc_comm_t *comm;
	int ret, P, me;

	ret = tc_comm_create(NULL, &comm);
	if (ret) {
		fprintf(stderr, "tc_comm_create: %s: %s\n", tc_strerror(ret), tc_last_error());
		return 1;
	}
	P = tc_comm_size(comm);
	me = tc_comm_rank(comm);
	in = malloc(n * sizeof(*in));
	out = malloc(n * sizeof(*out));
	if (!in || !out || !n) {
		fprintf(stderr, "bad count or out of memory\n");
		return 1;
	}
	for (size_t e = 0; e < n; e++)
		in[e] = (int64_t)me * 1000003 + (int64_t)e * 7 - 500;
	ret = tc_allreduce(comm, in, out, n, TC_INT64, TC_SUM);
	if (ret) {
		fprintf(stderr, "tc_allreduce: %s: %s\n", tc_strerror(ret), tc_last_error());
		return 1;
	}
	for (size_t e = 0; e < n; e++) {
		int64_t want = 0;

		for (int r = 0; r < P; r++)
			want += (int64_t)r * 1000003 + (int64_t)e * 7 - 500;
		bad += out[e] != want;
	}
	printf("rank %d of %d: allreduce sum of %zu int64: %s (%zu wrong elements)\n", me, P, n,
	       bad ? "FAILED" : "ok", bad);
	tc_comm_destroy(comm);
	free(in);
	free(out);
	return bad ? 1 : 0;
}
