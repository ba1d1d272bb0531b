// SPDX-License-Identifier: GPL-2.0
/*
 * --node N: only node N's part of the schedule, built exactly as a rank
 * builds it on its way to its first call (tc_part_build: the algorithm's
 * part generator and the run-time check against the peers' generators, or,
 * for an algorithm not converted yet, the whole schedule built, verified and
 * cut: the fallback, which the output names), printed as text or JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/part.h"
#include "sched.h"

static double clock_s(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double wall(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static double now(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/* One message of a part: peer, route and blocks. */
static void print_part_msg(const struct tc_part *pt, const struct tc_msg *m, int json, int first)
{
	int send = m->src == pt->node;

	if (json) {
		printf("%s{\"%s\":%d,\"route\":[", first ? "" : ",", send ? "to" : "from", send ? m->dst : m->src);
		for (int d = 0; d < pt->shape.ndims; d++)
			printf("%s%d", d ? "," : "", m->route[d]);
		printf("],\"blocks\":[");
		for (uint32_t k = 0; k < m->nblk; k++)
			printf("%s[%d,%d]", k ? "," : "", pt->blks[m->blk_off + k].a, pt->blks[m->blk_off + k].b);
		printf("]}");
		return;
	}
	printf("  %s %-6d route", send ? "send to  " : "recv from", send ? m->dst : m->src);
	for (int d = 0; d < pt->shape.ndims; d++)
		printf("%s%d", d ? "," : " ", m->route[d]);
	printf("  %u blocks:", m->nblk);
	for (uint32_t k = 0; k < m->nblk; k++)
		printf(" {%d,%d}", pt->blks[m->blk_off + k].a, pt->blks[m->blk_off + k].b);
	printf("\n");
}

/* The exit status: 0, 1 (the local check refused the part), 3 (shape not supported), 4. */
int sched_node(const struct sched_opts *o, const struct sched_result *r)
{
	const struct tc_algo *algo = r->algo;
	const struct tc_shape *shape = &r->shape;
	const char *shape_str = r->shape_str, *requested = o->algo_name;
	const int node = o->node, json = o->json, dump = o->dump;
	struct tc_part_stats st;
	struct tc_part *pt = NULL;
	const char *why = NULL;
	unsigned long fb0 = __tc_part_fallbacks();
	double w0, c0, t_wall, t_cpu, t_check = 0;
	char cwhy[400] = "";
	int err, generated, check;

	if (node >= shape->nodes)
		die(2, "--node %d: the shape has nodes 0..%d", node, shape->nodes - 1);
	w0 = wall();
	c0 = now();
	err = tc_part_build(algo->coll, algo, shape, node, &pt, &why);
	t_wall = wall() - w0;
	t_cpu = now() - c0;
	generated = __tc_part_fallbacks() == fb0;
	if (err == -EOPNOTSUPP) {
		fprintf(stderr, PROG ": %s\n", why ? why : "the algorithm does not support this shape");
		return 3;
	}
	check = err == -EPROTO ? 0 : 1;
	if (err && err != -EPROTO) {
		fprintf(stderr, PROG ": %s: node %d's part failed (%s): %s\n", algo->name, node, strerror(-err),
			why ? why : tc_last_error());
		return 4;
	}
	if (err) {
		snprintf(cwhy, sizeof(cwhy), "%s", why ? why : tc_last_error());
	} else if (generated) {
		/* the check ran inside tc_part_build; timed again here on its own */
		w0 = wall();
		err = tc_part_check(algo, pt, cwhy, sizeof(cwhy));
		t_check = wall() - w0;
		check = !err;
	}
	if (!pt) {
		/* the check refused the part: nothing to print but why */
		if (json) {
			printf("{\"node\":%d,\"coll\":\"%s\",\"algo\":", node, tc_coll_str(algo->coll));
			sched_json_str(algo->name);
			printf(",\"generated\":true,\"local_check\":false,\"why\":");
			sched_json_str(cwhy);
			printf("}\n");
		} else {
			printf("%s %s on %s, node %d: local check FAILED: %s\n", tc_coll_str(algo->coll), algo->name, shape_str,
			       node, cwhy);
		}
		return 1;
	}
	tc_part_stats(pt, &st);
	if (json) {
		printf("{\"node\":%d,\"coll\":\"%s\",\"algo\":", node, tc_coll_str(algo->coll));
		sched_json_str(algo->name);
		printf(",\"requested\":");
		sched_json_str(requested);
		printf(",\"dims\":[");
		for (int d = 0; d < shape->ndims; d++)
			printf("%s%d", d ? "," : "", shape->dims[d]);
		printf("],\"port_model\":\"%s\",\"nodes\":%d", shape->one_port ? "one-port" : "all-port", shape->nodes);
		printf(",\"generated\":%s,\"steps\":%u,\"active_steps\":%u", generated ? "true" : "false", pt->nsteps,
		       st.active_steps);
		printf(",\"messages_sent\":%llu,\"messages_received\":%llu,\"blocks_sent\":%llu,\"blocks_received\":%llu,\"blocks_forwarded\":%llu",
		       (unsigned long long)st.msgs_sent, (unsigned long long)st.msgs_recv,
		       (unsigned long long)st.blks_sent, (unsigned long long)st.blks_recv,
		       (unsigned long long)st.blks_fwd);
		printf(",\"part_bytes\":%zu,\"choose_s\":%.6f,\"choose_whole_builds\":%lu,\"build_s\":%.6f,\"build_cpu_s\":%.6f,\"check_s\":%.6f",
		       st.bytes, r->t_choose, r->whole_choose, t_wall, t_cpu, t_check);
		printf(",\"local_check\":%s,\"check\":", check ? "true" : "false");
		sched_json_str(generated ? (check ? "every receive matches its sender's generator; every own block is sent" : cwhy) :
				     "not run: cut from the whole schedule, which was verified");
		if (dump) {
			printf(",\"part\":[");
			for (uint32_t i = 0; i < pt->nact; i++) {
				printf("%s{\"step\":%u,\"messages\":[", i ? "," : "", pt->act_step[i]);
				for (uint32_t k = pt->act_first[i]; k < pt->act_first[i + 1]; k++)
					print_part_msg(pt, &pt->msgs[k], 1, k == pt->act_first[i]);
				printf("]}");
			}
			printf("]");
		}
		if (o->explain)
			sched_explain_json(&r->choice);
		printf("}\n");
	} else {
		printf("%s %s on %s, node %d of %d: %s\n", tc_coll_str(algo->coll), algo->name, shape_str, node,
		       shape->nodes,
		       generated ? "generated alone" : "FALLBACK: the whole schedule was built, verified and cut");
		printf("  steps %u (active %u), messages sent %llu received %llu\n", pt->nsteps, st.active_steps,
		       (unsigned long long)st.msgs_sent, (unsigned long long)st.msgs_recv);
		printf("  blocks sent %llu received %llu forwarded %llu; part %zu bytes\n",
		       (unsigned long long)st.blks_sent, (unsigned long long)st.blks_recv,
		       (unsigned long long)st.blks_fwd, st.bytes);
		if (r->choice.winner >= 0)
			printf("  auto chose %s in %.6f s CPU, %lu whole schedules built\n", algo->name, r->t_choose,
			       r->whole_choose);
		if (o->explain)
			sched_explain_text(&r->choice);
		printf("  built in %.6f s wall (%.6f s CPU); local check %s%s%s (%.6f s)\n", t_wall, t_cpu,
		       generated ? (check ? "passed" : "FAILED") : "not run (cut from the verified whole)",
		       check ? "" : ": ", check ? "" : cwhy, t_check);
		if (dump)
			for (uint32_t i = 0; i < pt->nact; i++) {
				printf("step %u\n", pt->act_step[i]);
				for (uint32_t k = pt->act_first[i]; k < pt->act_first[i + 1]; k++)
					print_part_msg(pt, &pt->msgs[k], 0, 0);
			}
	}
	tc_part_free(pt);
	return check ? 0 : 1;
}
