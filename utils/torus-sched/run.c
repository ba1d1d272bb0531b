// SPDX-License-Identifier: GPL-2.0
/*
 * torus-sched --run: the schedule executed on the in-process simulator with
 * real bytes, every received byte compared with the pattern its sender wrote.
 */
#include <errno.h>
#include <string.h>

#include "sched.h"

/* Returns the number of wrong bytes, or -errno with the reason in why[]. */
long sched_run_sim(const struct tc_sched *s, size_t m, size_t *checked, char *why, size_t len)
{
	const int N = s->shape.nodes, a2a = s->coll == TC_ALLTOALL;
	void **send, **recv;
	long bad = 0;
	int err = 0;

	*checked = 0;
	/* every node holds N blocks to send (alltoall) and N received */
	if (m > SIZE_MAX / 4 / (size_t)N / (size_t)N) {
		snprintf(why, len, "blocks of %zu bytes on %d nodes need more than %zu bytes of memory", m, N, SIZE_MAX / 4);
		return -ENOMEM;
	}
	send = calloc(N, sizeof(void *));
	recv = calloc(N, sizeof(void *));
	if (!send || !recv)
		err = -ENOMEM;
	for (int n = 0; n < N && !err; n++) {
		uint8_t *p = send[n] = malloc(a2a ? N * m : m);

		recv[n] = malloc((size_t)N * m);
		if (!p || !recv[n]) {
			err = -ENOMEM;
			break;
		}
		memset(recv[n], 0xee, (size_t)N * m);
		for (int d = 0; d < (a2a ? N : 1); d++)
			for (size_t i = 0; i < m; i++)
				p[d * m + i] = (uint8_t)(n * 167 + (a2a ? d : 0) * 37 + i * 11 + 3);
	}
	if (err)
		snprintf(why, len, "out of memory for %d nodes' buffers of %zu bytes (blocks of %zu)", N,
			 (size_t)N * m, m);
	if (!err) {
		err = tc_sim_run(s, m, send, recv);
		if (err)
			snprintf(why, len, "%s", tc_last_error());
	}
	for (int d = 0; d < N && !err; d++)
		for (int o = 0; o < N; o++)
			for (size_t i = 0; i < m; i++) {
				uint8_t want = (uint8_t)(o * 167 + (a2a ? d : 0) * 37 + i * 11 + 3);

				bad += ((uint8_t *)recv[d])[(size_t)o * m + i] != want;
				(*checked)++;
			}
	for (int n = 0; send && recv && n < N; n++) {
		free(send[n]);
		free(recv[n]);
	}
	free(send);
	free(recv);
	return err ? err : bad;
}
