// SPDX-License-Identifier: GPL-2.0
/*
 * torus-sched: build, verify, price and (--run) simulate one collective
 * schedule for one shape; print it as text or JSON (--json), optionally with
 * the whole schedule (--dump) so it can be checked without trusting us; or,
 * with --node N, build and print only node N's part, as a rank does.
 *
 * Exit status: 0 ok; 1 verification failed or --run found wrong bytes; 2 bad
 * usage or unknown algorithm; 3 the algorithm does not support the shape; 4
 * other errors (--run could not run).
 */
#include "sched.h"

int main(int argc, char **argv)
{
	struct sched_opts o;
	struct sched_result r = { .choice = { .winner = -1, .runner_up = -1 } };
	int failed;

	sched_parse_options(argc, argv, &o);
	if (o.list) {
		sched_list_algos(o.coll);
		return 0;
	}
	sched_shape(&o, &r);
	sched_choose(&o, &r);
	if (o.node >= 0)
		return sched_node(&o, &r);
	sched_build(&o, &r);
	if (o.run)
		r.bad = sched_run_sim(r.s, o.p.block_bytes, &r.checked, r.run_why, sizeof(r.run_why));

	if (o.json)
		sched_print_json(&o, &r);
	else
		sched_print_text(&o, &r);
	if (!r.rep.ok)
		fprintf(stderr, PROG ": not verified: %s\n", r.rep.first_violation);
	else if (o.run && r.bad < 0)
		fprintf(stderr, PROG ": --run could not run: %s\n", r.run_why);
	else if (o.run && r.bad)
		fprintf(stderr, PROG ": run failed: received bytes differ from the reference\n");
	/* wrong bytes or a failed verification: 1; could not run at all: 4 */
	failed = !r.rep.ok || (o.run && r.bad > 0) ? 1 : o.run && r.bad < 0 ? 4 : 0;
	tc_verify_report_free(&r.rep);
	tc_sched_free(r.s);
	return failed;
}
