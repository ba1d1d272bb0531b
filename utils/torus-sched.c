// SPDX-License-Identifier: GPL-2.0
/*
 * torus-sched: build, verify, price and (--run) simulate one collective
 * schedule for one shape; print it as text or JSON (--json), optionally with
 * the whole schedule (--dump) so it can be checked without trusting us.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/check.h"
#include "core/sim_run.h"
#include "select/select.h"

static const char usage[] =
	"usage: torus-sched --coll alltoall|allgather --algo NAME --dims DIMS [options]\n"
	"       torus-sched --list [--coll C]\n"
	"\n"
	"Builds the schedule of algorithm NAME for the shape, verifies it (exit 1 and\n"
	"\"verified\": false with the first violation if it is wrong), prices it with the\n"
	"cost model and prints a summary (text, or one JSON object with --json).\n"
	"\n"
	"  --coll C         alltoall (default) or allgather\n"
	"  --algo NAME      an algorithm of --list, or auto (the library's choice for --m)\n"
	"  --dims DIMS      8 (ring), 8x8, 4x4x4, ... up to 6 dimensions\n"
	"  --mesh           no dimension wraps (default: all wrap, a torus)\n"
	"  --wrap F,F,...   per-dimension wrap flags, e.g. 1,0\n"
	"  --one-port       a node sends and receives at most one message per step\n"
	"  --json           print one JSON object\n"
	"  --dump           add the whole schedule (JSON \"schedule\": steps of messages\n"
	"                   {src, dst, route, blocks}; text: one line per message)\n"
	"  --links          add the per-step link loads: every (step, node, port) a\n"
	"                   message occupies, with its blocks (JSON \"links\": [[step,\n"
	"                   node, port, blocks, src, dst], ...]) and per-link totals\n"
	"                   (JSON \"link_blocks\": blocks per node*2k+port)\n"
	"  --run            execute on the in-process simulator with real bytes and\n"
	"                   check every received byte (exit 1 if any is wrong)\n"
	"  --ts US --tw US_PER_BYTE --rho US_PER_BYTE --hop US --m BYTES\n"
	"                   cost parameters (startup, per byte, rearrangement per\n"
	"                   byte, per link crossed); with any of them the predicted\n"
	"                   time is printed (unset ones 0; m default 64 bytes, also\n"
	"                   the block size of --run and of --algo auto). --algo auto\n"
	"                   prices with them, or, when none is given, with the\n"
	"                   module's default timing (ts 1, tw 0.0001, hop 0.02, rho 0)\n"
	"  --pricing P      how the transport runs a message: routed (default: routers\n"
	"                   carry it hop by hop, it starts when both ends are ready),\n"
	"                   device (torus.ko: it starts at the sender's clock) or\n"
	"                   direct (verbs: one transfer whatever the route, one\n"
	"                   startup, no per-hop time; each node sends one message\n"
	"                   at a time and receives one at a time, for ts + bytes*tw,\n"
	"                   then --lat US more that holds no port: the messages of\n"
	"                   a step overlap their latencies; a message of more than\n"
	"                   --eager BYTES (default 0) adds --rdv US to its latency,\n"
	"                   verbs' rendezvous; with --big BYTES, a message's bytes\n"
	"                   beyond BYTES cost --tw-big US each instead of tw; with\n"
	"                   --ts-cap N a node pays ts for at most N of a step's\n"
	"                   messages each way) or host (the wall clock of a host\n"
	"                   emulating the device, TC_AUTO_CLOCK=wall: each step with\n"
	"                   messages costs ts, --msg US times log2 of its busiest\n"
	"                   node's messages, and tw per byte of all of them; routes\n"
	"                   and hops cost nothing)\n"
	"  --explain        with --algo auto: every candidate with its predicted time\n"
	"                   (or why it is not a candidate) and why the winner won\n"
	"  --list           list the algorithms (of --coll if given) and exit\n"
	"  -h, --help       this text\n"
	"\n"
	"Exit status: 0 ok; 1 verification or --run failed; 2 bad usage or unknown\n"
	"algorithm; 3 the algorithm does not support the shape; 4 other errors.\n";

static void die(int code, const char *fmt, const char *arg)
{
	fprintf(stderr, "torus-sched: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	exit(code);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void list_algos(int coll)
{
	for (int i = 0; tc_algos[i]; i++)
		if (coll < 0 || (int)tc_algos[i]->coll == coll)
			printf("%-10s %-14s %s\n", tc_coll_str(tc_algos[i]->coll), tc_algos[i]->name, tc_algos[i]->summary);
	printf("%-10s %-14s %s\n", "both", "auto", "the library's choice for the shape and --m");
}

/* Returns the number of wrong bytes, or -errno. */
static long run_sim(const struct tc_sched *s, size_t m, size_t *checked)
{
	const int N = s->shape.nodes, a2a = s->coll == TC_ALLTOALL;
	void **send = calloc(N, sizeof(void *)), **recv = calloc(N, sizeof(void *));
	long bad = 0;
	int err = 0;

	*checked = 0;
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
	if (!err)
		err = tc_sim_run(s, m, send, recv);
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

static void dump_json(const struct tc_sched *s)
{
	printf(",\"schedule\":[");
	for (uint32_t st = 0; st < s->nsteps; st++) {
		printf("%s[", st ? "," : "");
		for (uint32_t i = s->step_first[st]; i < s->step_first[st + 1]; i++) {
			const struct tc_msg *m = &s->msgs[i];

			printf("%s{\"src\":%d,\"dst\":%d,\"route\":[", i > s->step_first[st] ? "," : "", m->src, m->dst);
			for (int d = 0; d < s->shape.ndims; d++)
				printf("%s%d", d ? "," : "", m->route[d]);
			printf("],\"blocks\":[");
			for (uint32_t k = 0; k < m->nblk; k++)
				printf("%s[%d,%d]", k ? "," : "", s->blks[m->blk_off + k].a, s->blks[m->blk_off + k].b);
			printf("]}");
		}
		printf("]");
	}
	printf("]");
}

static void dump_text(const struct tc_sched *s)
{
	for (uint32_t st = 0; st < s->nsteps; st++) {
		printf("step %u:\n", st);
		for (uint32_t i = s->step_first[st]; i < s->step_first[st + 1]; i++) {
			const struct tc_msg *m = &s->msgs[i];

			printf("  %d -> %d route (", m->src, m->dst);
			for (int d = 0; d < s->shape.ndims; d++)
				printf("%s%+d", d ? "," : "", m->route[d]);
			printf(") blocks");
			for (uint32_t k = 0; k < m->nblk; k++)
				printf(" {%d,%d}", s->blks[m->blk_off + k].a, s->blks[m->blk_off + k].b);
			printf("\n");
		}
	}
}

struct link_out {
	int json, first;
};

static void print_link(void *arg, uint32_t step, int node, int port, const struct tc_msg *m)
{
	struct link_out *o = arg;

	if (o->json)
		printf("%s[%u,%d,%d,%u,%d,%d]", o->first ? "" : ",", step, node, port, m->nblk, m->src, m->dst);
	else
		printf("  step %u: link (node %d, port %d) carries %u blocks of %d -> %d\n", step, node, port, m->nblk,
		       m->src, m->dst);
	o->first = 0;
}

/* --explain: every candidate of the choice, then why the winner won. */
static void print_explain(const struct tc_auto_choice *c, int json)
{
	char reason[320];

	tc_auto_reason(c, reason, sizeof(reason));
	if (json) {
		printf(",\"explain\":{\"class_bytes\":[%zu,%zu],\"candidates\":[", c->class_lo, c->class_hi);
		for (int i = 0; i < c->ncand; i++) {
			const struct tc_auto_cand *k = &c->cand[i];

			printf("%s{\"algo\":", i ? "," : "");
			json_str(k->algo->name);
			if (k->err) {
				printf(",\"candidate\":false,\"why\":");
				json_str(k->why);
			} else {
				printf(",\"candidate\":true,\"time_us\":%.6g,\"startups\":%u", k->us, k->steps);
			}
			printf("}");
		}
		printf("],\"winner\":");
		json_str(c->winner >= 0 ? c->cand[c->winner].algo->name : "");
		printf(",\"runner_up\":");
		json_str(c->runner_up >= 0 ? c->cand[c->runner_up].algo->name : "");
		printf(",\"reason\":");
		json_str(reason);
		printf("}");
		return;
	}
	printf("  auto: %d algorithms, priced for blocks of %zu..%zu B (time linear in between)\n", c->ncand,
	       c->class_lo, c->class_hi);
	for (int i = 0; i < c->ncand; i++) {
		const struct tc_auto_cand *k = &c->cand[i];

		if (k->err)
			printf("    %-14s %14s  not a candidate: %s\n", k->algo->name, "-", k->why);
		else
			printf("    %-14s %11.6g us  %u startups%s\n", k->algo->name, k->us, k->steps,
			       i == c->winner ? "  <- winner" : i == c->runner_up ? "  <- runner-up" : "");
	}
	printf("  %s\n", reason);
}

enum {
	OPT_COLL = 256, OPT_ALGO, OPT_DIMS, OPT_MESH, OPT_WRAP, OPT_ONE_PORT, OPT_JSON, OPT_DUMP, OPT_RUN,
	OPT_TS, OPT_TW, OPT_RHO, OPT_M, OPT_LIST, OPT_LINKS, OPT_HOP, OPT_EXPLAIN, OPT_PRICING, OPT_LAT, OPT_RDV, OPT_EAGER,
	OPT_MSG, OPT_TW_BIG, OPT_BIG, OPT_TS_CAP,
};

static double num(const char *opt, const char *arg)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || v < 0)
		die(2, "%s needs a non-negative number", opt);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "coll", required_argument, NULL, OPT_COLL },	 { "algo", required_argument, NULL, OPT_ALGO },
		{ "dims", required_argument, NULL, OPT_DIMS },	 { "mesh", no_argument, NULL, OPT_MESH },
		{ "wrap", required_argument, NULL, OPT_WRAP },	 { "one-port", no_argument, NULL, OPT_ONE_PORT },
		{ "json", no_argument, NULL, OPT_JSON },	 { "dump", no_argument, NULL, OPT_DUMP },
		{ "run", no_argument, NULL, OPT_RUN },		 { "ts", required_argument, NULL, OPT_TS },
		{ "tw", required_argument, NULL, OPT_TW },	 { "rho", required_argument, NULL, OPT_RHO },
		{ "m", required_argument, NULL, OPT_M },	 { "list", no_argument, NULL, OPT_LIST },
		{ "links", no_argument, NULL, OPT_LINKS },	 { "help", no_argument, NULL, 'h' },
		{ "hop", required_argument, NULL, OPT_HOP },	 { "explain", no_argument, NULL, OPT_EXPLAIN },
		{ "pricing", required_argument, NULL, OPT_PRICING }, { "lat", required_argument, NULL, OPT_LAT },
		{ "rdv", required_argument, NULL, OPT_RDV },	 { "eager", required_argument, NULL, OPT_EAGER },
		{ "msg", required_argument, NULL, OPT_MSG },	 { "tw-big", required_argument, NULL, OPT_TW_BIG },
		{ "big", required_argument, NULL, OPT_BIG },	 { "ts-cap", required_argument, NULL, OPT_TS_CAP },
		{ NULL, 0, NULL, 0 },
	};
	const char *algo_name = NULL, *dims = NULL, *wrap = NULL, *why = NULL;
	int coll = -1, mesh = 0, one_port = 0, json = 0, dump = 0, run = 0, list = 0, priced = 0, links = 0, explain = 0, opt, err;
	struct tc_cost_params p = { .block_bytes = 64 };
	unsigned int flags = 0;
	struct tc_auto_choice choice = { .winner = -1, .runner_up = -1 };
	const struct tc_algo *algo;
	struct tc_verify_report rep;
	struct tc_sched *s = NULL;
	struct tc_shape shape;
	struct tc_cost cost;
	double t0, t_build, t_verify;
	long bad = 0;
	size_t checked = 0;
	char shape_str[96];

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_COLL:
			if (!strcmp(optarg, "alltoall"))
				coll = TC_ALLTOALL;
			else if (!strcmp(optarg, "allgather"))
				coll = TC_ALLGATHER;
			else
				die(2, "unknown collective '%s' (alltoall or allgather)", optarg);
			break;
		case OPT_ALGO:
			algo_name = optarg;
			break;
		case OPT_DIMS:
			dims = optarg;
			break;
		case OPT_MESH:
			mesh = 1;
			break;
		case OPT_WRAP:
			wrap = optarg;
			break;
		case OPT_ONE_PORT:
			one_port = 1;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_DUMP:
			dump = 1;
			break;
		case OPT_RUN:
			run = 1;
			break;
		case OPT_TS:
			p.ts_us = num("--ts", optarg);
			priced = 1;
			break;
		case OPT_TW:
			p.tw_us_per_byte = num("--tw", optarg);
			priced = 1;
			break;
		case OPT_RHO:
			p.rho_us_per_byte = num("--rho", optarg);
			priced = 1;
			break;
		case OPT_HOP:
			p.hop_us = num("--hop", optarg);
			priced = 1;
			break;
		case OPT_LAT:
			p.lat_us = num("--lat", optarg);
			priced = 1;
			break;
		case OPT_RDV:
			p.rdv_us = num("--rdv", optarg);
			priced = 1;
			break;
		case OPT_MSG:
			p.msg_us = num("--msg", optarg);
			priced = 1;
			break;
		case OPT_EAGER:
			p.eager_bytes = (size_t)num("--eager", optarg);
			break;
		case OPT_TW_BIG:
			p.tw_big_us_per_byte = num("--tw-big", optarg);
			priced = 1;
			break;
		case OPT_BIG:
			p.big_bytes = (size_t)num("--big", optarg);
			break;
		case OPT_TS_CAP:
			p.ts_cap = num("--ts-cap", optarg);
			break;
		case OPT_EXPLAIN:
			explain = 1;
			break;
		case OPT_PRICING:
			if (!strcmp(optarg, "routed"))
				flags = 0;
			else if (!strcmp(optarg, "device"))
				flags = TC_COST_SENDER_START;
			else if (!strcmp(optarg, "direct"))
				flags = TC_COST_DIRECT;
			else if (!strcmp(optarg, "host"))
				flags = TC_COST_HOST;
			else
				die(2, "--pricing %s: expected routed, device, direct or host", optarg);
			break;
		case OPT_M:
			p.block_bytes = (size_t)num("--m", optarg);
			if (!p.block_bytes)
				die(2, "%s must be at least 1 byte", "--m");
			break;
		case OPT_LIST:
			list = 1;
			break;
		case OPT_LINKS:
			links = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc)
		die(2, "unexpected argument '%s' (see --help)", argv[optind]);
	if (list) {
		list_algos(coll);
		return 0;
	}
	if (coll < 0)
		coll = TC_ALLTOALL;
	if (!algo_name)
		die(2, "%s", "--algo is required (see --list)");
	if (!dims)
		die(2, "%s", "--dims is required, e.g. --dims 8x8");
	if (mesh && wrap)
		die(2, "%s", "--mesh and --wrap exclude each other");
	if (tc_shape_parse(&shape, dims, mesh, one_port))
		die(2, "bad --dims '%s' (e.g. 8, 8x8, 4x4x4; sizes 2..128 mesh / 254 torus, up to 6 dimensions)", dims);
	if (wrap) {
		const char *w = wrap;
		unsigned int mask = 0;
		int d = 0;

		for (;;) {
			if ((*w != '0' && *w != '1') || d >= shape.ndims)
				die(2, "bad --wrap '%s': one 0/1 flag per dimension, comma separated", wrap);
			mask |= (unsigned int)(*w - '0') << d++;
			w++;
			if (!*w)
				break;
			if (*w++ != ',')
				die(2, "bad --wrap '%s': one 0/1 flag per dimension, comma separated", wrap);
		}
		if (d != shape.ndims)
			die(2, "bad --wrap '%s': one 0/1 flag per dimension, comma separated", wrap);
		if (tc_shape_init(&shape, shape.ndims, shape.dims, mask, one_port))
			die(2, "bad shape with --wrap '%s' (mesh dimensions are at most 128)", wrap);
	}
	tc_shape_str(&shape, shape_str, sizeof(shape_str));

	p.flags = flags;
	if (explain && strcmp(algo_name, "auto"))
		die(2, "%s", "--explain goes with --algo auto");
	if (!strcmp(algo_name, "auto")) {
		if (!priced) {
			size_t m = p.block_bytes;

			tc_cost_params_default(&p);
			p.block_bytes = m;
			priced = 1;
		}
		p.flags = flags;
		err = tc_auto_choose(coll, &shape, p.block_bytes, &p, &choice);
		if (err == -EOPNOTSUPP && explain)
			print_explain(&choice, json);
		if (err)
			die(3, "auto: no %s algorithm supports this shape", tc_coll_str(coll));
		algo = choice.cand[choice.winner].algo;
	} else {
		algo = tc_algo_find(coll, algo_name);
		if (!algo)
			die(2, "unknown algorithm '%s' for this collective (see --list)", algo_name);
	}

	t0 = now();
	err = algo->build(&shape, &s, &why);
	t_build = now() - t0;
	if (err == -EOPNOTSUPP)
		die(3, "%s", why ? why : "the algorithm does not support this shape");
	if (err) {
		fprintf(stderr, "torus-sched: %s: build failed (%s): %s\n", algo->name, strerror(-err),
			why ? why : tc_last_error());
		return 4;
	}
	if (!s || !s->step_first) {
		fprintf(stderr, "torus-sched: %s: build returned no finished schedule\n", algo->name);
		tc_sched_free(s);
		return 4;
	}
	t0 = now();
	err = tc_verify(s, &rep);
	t_verify = now() - t0;
	if (err && err != -EPROTO) {
		fprintf(stderr, "torus-sched: %s\n", tc_last_error());
		tc_sched_free(s);
		return 4;
	}
	err = tc_cost_eval(s, &p, &cost);
	if (err) {
		fprintf(stderr, "torus-sched: %s\n", tc_last_error());
		return 4;
	}
	if (run)
		bad = run_sim(s, p.block_bytes, &checked);

	if (json) {
		printf("{\"coll\":\"%s\",\"algo\":", tc_coll_str(s->coll));
		json_str(algo->name);
		printf(",\"requested\":");
		json_str(algo_name);
		printf(",\"cite\":");
		json_str(s->cite);
		printf(",\"dims\":[");
		for (int d = 0; d < shape.ndims; d++)
			printf("%s%d", d ? "," : "", shape.dims[d]);
		printf("],\"wrap\":[");
		for (int d = 0; d < shape.ndims; d++)
			printf("%s%s", d ? "," : "", shape.wrap_mask & (1u << d) ? "true" : "false");
		printf("],\"port_model\":\"%s\",\"nodes\":%d,\"steps\":%u,\"messages\":%u,\"block_moves\":%u,\"npackets\":%d",
		       shape.one_port ? "one-port" : "all-port", shape.nodes, s->nsteps, s->nmsgs, s->nblks, s->npackets);
		printf(",\"startups_critical_path\":%u,\"transmission_blocks\":%.6g,\"lockstep_blocks\":%.6g",
		       cost.steps, cost.transmission_blocks, cost.lockstep_blocks);
		printf(",\"lower_bound_blocks\":%.6g,\"ratio\":%.6g,\"max_link_blocks\":%lld,\"rearranged_blocks\":%lld",
		       cost.lower_bound_blocks, cost.ratio, (long long)cost.max_link_blocks,
		       (long long)cost.rearranged_blocks);
		if (s->coll == TC_ALLGATHER)
			printf(",\"lower_bound_steps\":%.6g", cost.lower_bound_steps);
		printf(",\"claims\":[");
		{
			const char *names[] = { "contention_free", "shortest", "permutation", "one_hop" };
			int first = 1;

			for (int b = 0; b < 4; b++)
				if (s->claims & (1u << b)) {
					printf("%s\"%s\"", first ? "" : ",", names[b]);
					first = 0;
				}
		}
		printf("],\"verified\":%s", rep.ok ? "true" : "false");
		if (!rep.ok) {
			printf(",\"first_violation\":");
			json_str(rep.first_violation);
		}
		if (priced) {
			printf(",\"ts_us\":%g,\"tw_us_per_byte\":%g,\"rho_us_per_byte\":%g,\"m\":%zu,\"time_us\":%.6g",
			       p.ts_us, p.tw_us_per_byte, p.rho_us_per_byte, p.block_bytes, cost.time_us);
			if (p.hop_us > 0)
				printf(",\"hop_us\":%g", p.hop_us);
			if (p.flags)
				printf(",\"pricing\":\"%s\"", p.flags & TC_COST_DIRECT ? "direct"
								   : p.flags & TC_COST_HOST ? "host" : "device");
			if (p.lat_us > 0)
				printf(",\"lat_us\":%g", p.lat_us);
			if (p.msg_us > 0)
				printf(",\"msg_us\":%g", p.msg_us);
			if (p.rdv_us > 0)
				printf(",\"rdv_us\":%g,\"eager_bytes\":%zu", p.rdv_us, p.eager_bytes);
		}
		if (explain)
			print_explain(&choice, 1);
		printf(",\"build_ms\":%.3f,\"verify_ms\":%.3f", t_build * 1e3, t_verify * 1e3);
		if (run) {
			printf(",\"run\":{\"block_bytes\":%zu,\"ok\":%s,\"bytes_checked\":%zu,\"bytes_wrong\":%ld",
			       p.block_bytes, bad == 0 ? "true" : "false", checked, bad > 0 ? bad : 0);
			if (bad < 0) {
				printf(",\"error\":");
				json_str(tc_last_error());
			}
			printf("}");
		}
		if (links) {
			struct link_out o = { .json = 1, .first = 1 };
			size_t nl = (size_t)shape.nodes * 2 * shape.ndims;

			printf(",\"links\":[");
			tc_sched_visit_links(s, print_link, &o);
			printf("],\"link_blocks\":[");
			for (size_t l = 0; l < nl; l++)
				printf("%s%lld", l ? "," : "", rep.link_blocks ? (long long)rep.link_blocks[l] : 0LL);
			printf("]");
		}
		if (dump)
			dump_json(s);
		printf("}\n");
	} else {
		printf("%s %s on %s (%d nodes): %s\n", tc_coll_str(s->coll), algo->name, shape_str, shape.nodes, s->cite);
		printf("  steps %u, messages %u, startups on the critical path %u\n", s->nsteps, s->nmsgs, cost.steps);
		printf("  transmission %.6g blocks (lockstep %.6g), lower bound %.6g, ratio %.3f\n",
		       cost.transmission_blocks, cost.lockstep_blocks, cost.lower_bound_blocks, cost.ratio);
		if (s->coll == TC_ALLGATHER)
			printf("  lower bound on steps %.6g, packets per node %d\n", cost.lower_bound_steps, s->npackets);
		printf("  max link blocks %lld, rearranged blocks %lld\n", (long long)cost.max_link_blocks,
		       (long long)cost.rearranged_blocks);
		if (priced)
			printf("  predicted time %.6g us (ts %g us, tw %g us/B, rho %g us/B, hop %g us, m %zu B)\n",
			       cost.time_us, p.ts_us, p.tw_us_per_byte, p.rho_us_per_byte, p.hop_us, p.block_bytes);
		if (explain)
			print_explain(&choice, 0);
		printf("  verified: %s%s%s (build %.3f ms, verify %.3f ms)\n", rep.ok ? "yes" : "NO",
		       rep.ok ? "" : ": ", rep.first_violation, t_build * 1e3, t_verify * 1e3);
		if (run) {
			if (bad < 0)
				printf("  run: FAILED: %s\n", tc_last_error());
			else
				printf("  run: %zu bytes checked, %ld wrong (block %zu B)\n", checked, bad, p.block_bytes);
		}
		if (links) {
			struct link_out o = { .json = 0, .first = 1 };

			tc_sched_visit_links(s, print_link, &o);
		}
		if (dump)
			dump_text(s);
	}
	if (!rep.ok)
		fprintf(stderr, "torus-sched: not verified: %s\n", rep.first_violation);
	else if (run && bad)
		fprintf(stderr, "torus-sched: run failed: %s\n",
			bad < 0 ? tc_last_error() : "received bytes differ from the reference");
	err = !rep.ok || (run && bad) ? 1 : 0;
	tc_verify_report_free(&rep);
	tc_sched_free(s);
	return err;
}
