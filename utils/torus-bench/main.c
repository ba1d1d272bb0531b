// SPDX-License-Identifier: GPL-2.0
/*
 * torus-bench: time and check libtoruscoll's collectives over a size sweep,
 * per algorithm, on the device (under torusrun), on the in-process simulator
 * (one thread per node), or over verbs. The options (options.c), then the
 * transport: sim launches every node as a thread of this process; dev and
 * verbs make this process one rank. Rank 0 prints (output.c, plot.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* One line per process that saw a wrong byte: the launcher's status counts the rest. */
static void report_wrong(const struct bench_run *run, long long errors)
{
	if (!errors)
		return;
	if (run->sim)
		fprintf(stderr, PROG ": %lld wrong bytes (every rank's, each checked against its own reference)\n",
			errors);
	else
		fprintf(stderr, PROG ": rank %d: %lld wrong bytes\n", run->rank, errors);
}

int main(int argc, char **argv)
{
	struct bench b;
	const char *transport;
	struct bench_run run = { 0 };
	int ret, any_unsupported = 0;
	long long errors = 0;

	memset(&b, 0, sizeof(b));
	pthread_mutex_init(&b.lock, NULL);
	b.ctl_fd = -1;
	parse(argc, argv, &b.o);
	transport = b.o.transport;
	if (!transport) {
		transport = getenv("TC_TRANSPORT");
		if (!transport || !*transport)
			transport = "dev";
		if (strcmp(transport, "dev") && strcmp(transport, "sim") && strcmp(transport, "verbs"))
			die(2, "TC_TRANSPORT=%s: expected dev, sim or verbs", transport);
	}
	if (!strcmp(transport, "sim") && !b.o.ndims) {
		/* torusrun --transport sim --dims D passes the shape on */
		const char *v = getenv("TC_SIM_DIMS");

		if (!v || !*v)
			die(2, "--transport sim needs --dims (e.g. --dims 4x4)");
		parse_dims_opt(v, &b.o);
		b.o.mesh |= getenv("TC_SIM_MESH") != NULL;
		b.o.one_port |= getenv("TC_SIM_ONE_PORT") != NULL;
	}
	if (strcmp(transport, "sim") && (b.o.mesh || b.o.one_port))
		die(2, "--mesh and --one-port shape the simulator only; on %s the fabric has its shape", transport);

	parse_algos(&b);
	b.progress = isatty(2);

	ret = bench_start(&b, transport, &run);
	if (b.progress && run.rank == 0)
		fprintf(stderr, "\r%60s\r", "");
	/* the wrong bytes this process counted (sim: every rank's; dev, verbs:
	 * this rank's), never reduced through the library under test */
	for (size_t c = 0; c < sizeof(b.bad) / sizeof(b.bad[0]); c++)
		errors += b.bad[c];
	if (b.fail || ret) {
		if (b.failmsg[0])
			fprintf(stderr, PROG ": %s\n", b.failmsg);
		else /* sim: tc_sim_launch's reason (the first failing node's) */
			fprintf(stderr, PROG ": %s%s%s\n", tc_strerror(ret), *tc_last_error() ? ": " : "",
				tc_last_error());
		report_wrong(&run, errors);
		bench_stop(&run);
		free(b.recs);
		return b.bad_algo ? 2 : 4;
	}
	for (int i = 0; i < b.nrecs; i++) {
		b.recs[i].errors = b.bad[b.recs[i].cell];
		any_unsupported |= !b.recs[i].supported;
	}
	if (run.rank == 0) {
		if (b.o.json)
			print_json(&b, transport);
		else if (b.o.csv)
			print_csv(&b);
		else
			print_table(&b, transport);
		fflush(stdout);
		if (b.o.plot && (ret = plot(&b, b.o.plot, transport))) {
			fprintf(stderr, PROG ": --plot %s: %s (is gnuplot installed?)\n", b.o.plot, tc_strerror(ret));
			ret = 4;
		}
	}
	/* dev, verbs: rank 0 has printed before a rank that exits 1 makes the
	 * launcher stop the others */
	if (run.comm)
		tc_barrier(run.comm);
	bench_stop(&run);
	free(b.recs);
	if (errors) {
		report_wrong(&run, errors);
		return 1;
	}
	if (ret)
		return ret;
	if (any_unsupported && b.nalgos == 1 && strcmp(b.o.algo, "auto"))
		return 3;
	return 0;
}
