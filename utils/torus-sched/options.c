// SPDX-License-Identifier: GPL-2.0
/* torus-sched's command line: the usage text, parsing, checks between options. */
#include <getopt.h>
#include <string.h>

#include "sched.h"

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
	"  --dims DIMS      8 (ring), 8x8 or 8,8, 4x4x4, ... up to 6 dimensions; sides\n"
	"                   2..254 (2..128 on a mesh), at most 1048576 nodes\n"
	"  --mesh           no dimension wraps (default: all wrap, a torus)\n"
	"  --wrap F,F,...   per-dimension wrap flags, e.g. 1,0\n"
	"  --one-port       a node sends and receives at most one message per step\n"
	"  -j, --json       print one JSON object\n"
	"  --dump           add the whole schedule (JSON \"schedule\": steps of messages\n"
	"                   {src, dst, route, blocks}; text: one line per message)\n"
	"  --links          add the per-step link loads: every (step, node, port) a\n"
	"                   message occupies, with its blocks (JSON \"links\": [[step,\n"
	"                   node, port, blocks, src, dst], ...]) and per-link totals\n"
	"                   (JSON \"link_blocks\": blocks per node*2k+port)\n"
	"  --run            execute on the in-process simulator with real bytes and\n"
	"                   check every received byte (exit 1 if any is wrong)\n"
	"  --node N         build only node N's part, exactly as rank N does before its\n"
	"                   first call (the algorithm's own generator and the local\n"
	"                   check against its peers' generators; an algorithm without\n"
	"                   one builds the whole schedule, verifies and cuts it: the\n"
	"                   output says FALLBACK, JSON \"generated\": false) and print\n"
	"                   its counts, build time and check verdict (exit 1 if the\n"
	"                   check fails); --dump adds its messages step by step\n"
	"  --ts US --tw US_PER_BYTE --rho US_PER_BYTE --hop US --m BYTES\n"
	"                   cost parameters (startup, per byte, rearrangement per\n"
	"                   byte, per link crossed); with any of them the predicted\n"
	"                   time is printed (unset ones 0; m default 64 bytes, also\n"
	"                   the block size of --run and of --algo auto). --algo auto\n"
	"                   prices with them, or, when none is given, with the\n"
	"                   module's default timing (ts 1, tw 0.0001, hop 0.02, rho 0).\n"
	"                   Times are finite non-negative numbers; BYTES (--m,\n"
	"                   --eager, --big) take K, M, G suffixes (powers of 1024)\n"
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
	"  --explain        with --algo auto: every candidate with how it was priced\n"
	"                   (messages, cell, cell parts, a lower bound, WHOLE: its\n"
	"                   whole schedule built), its predicted time (or why it is\n"
	"                   not a candidate) and why the winner won; with --node too\n"
	"  --list           list the algorithms (of --coll if given) and exit\n"
	"  -h, --help       this text\n"
	"\n"
	"Exit status: 0 ok; 1 verification failed, --run found wrong bytes or the\n"
	"--node check failed; 2 bad usage or unknown algorithm; 3 the algorithm does\n"
	"not support the shape; 4 other errors (--run out of memory included).\n";

enum {
	OPT_COLL = 256, OPT_ALGO, OPT_DIMS, OPT_MESH, OPT_WRAP, OPT_ONE_PORT, OPT_JSON, OPT_DUMP, OPT_RUN,
	OPT_TS, OPT_TW, OPT_RHO, OPT_M, OPT_LIST, OPT_LINKS, OPT_HOP, OPT_EXPLAIN, OPT_PRICING, OPT_LAT, OPT_RDV, OPT_EAGER,
	OPT_MSG, OPT_TW_BIG, OPT_BIG, OPT_TS_CAP, OPT_NODE,
};

static double num(const char *opt, const char *arg)
{
	return tool_parse_num(opt, arg);
}

void sched_parse_options(int argc, char **argv, struct sched_opts *o)
{
	static const struct option opts[] = {
		{ "coll", required_argument, NULL, OPT_COLL },	 { "algo", required_argument, NULL, OPT_ALGO },
		{ "dims", required_argument, NULL, OPT_DIMS },	 { "mesh", no_argument, NULL, OPT_MESH },
		{ "wrap", required_argument, NULL, OPT_WRAP },	 { "one-port", no_argument, NULL, OPT_ONE_PORT },
		{ "json", no_argument, NULL, 'j' },	 { "dump", no_argument, NULL, OPT_DUMP },
		{ "run", no_argument, NULL, OPT_RUN },		 { "ts", required_argument, NULL, OPT_TS },
		{ "tw", required_argument, NULL, OPT_TW },	 { "rho", required_argument, NULL, OPT_RHO },
		{ "m", required_argument, NULL, OPT_M },	 { "list", no_argument, NULL, OPT_LIST },
		{ "links", no_argument, NULL, OPT_LINKS },	 { "help", no_argument, NULL, 'h' },
		{ "hop", required_argument, NULL, OPT_HOP },	 { "explain", no_argument, NULL, OPT_EXPLAIN },
		{ "pricing", required_argument, NULL, OPT_PRICING }, { "lat", required_argument, NULL, OPT_LAT },
		{ "rdv", required_argument, NULL, OPT_RDV },	 { "eager", required_argument, NULL, OPT_EAGER },
		{ "msg", required_argument, NULL, OPT_MSG },	 { "tw-big", required_argument, NULL, OPT_TW_BIG },
		{ "big", required_argument, NULL, OPT_BIG },	 { "ts-cap", required_argument, NULL, OPT_TS_CAP },
		{ "node", required_argument, NULL, OPT_NODE },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	memset(o, 0, sizeof(*o));
	o->coll = -1;
	o->p.block_bytes = 64;
	o->node = -1;
	while ((opt = getopt_long(argc, argv, ":hj", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_COLL:
			if (!strcmp(optarg, "alltoall"))
				o->coll = TC_ALLTOALL;
			else if (!strcmp(optarg, "allgather"))
				o->coll = TC_ALLGATHER;
			else
				die(2, "unknown collective '%s' (alltoall or allgather)", optarg);
			break;
		case OPT_ALGO:
			o->algo_name = optarg;
			break;
		case OPT_DIMS:
			o->dims = optarg;
			break;
		case OPT_MESH:
			o->mesh = 1;
			break;
		case OPT_WRAP:
			o->wrap = optarg;
			break;
		case OPT_ONE_PORT:
			o->one_port = 1;
			break;
		case 'j':
			o->json = 1;
			break;
		case OPT_DUMP:
			o->dump = 1;
			break;
		case OPT_RUN:
			o->run = 1;
			break;
		case OPT_TS:
			o->p.ts_us = num("--ts", optarg);
			o->priced = 1;
			break;
		case OPT_TW:
			o->p.tw_us_per_byte = num("--tw", optarg);
			o->priced = 1;
			break;
		case OPT_RHO:
			o->p.rho_us_per_byte = num("--rho", optarg);
			o->priced = 1;
			break;
		case OPT_HOP:
			o->p.hop_us = num("--hop", optarg);
			o->priced = 1;
			break;
		case OPT_LAT:
			o->p.lat_us = num("--lat", optarg);
			o->priced = 1;
			break;
		case OPT_RDV:
			o->p.rdv_us = num("--rdv", optarg);
			o->priced = 1;
			break;
		case OPT_MSG:
			o->p.msg_us = num("--msg", optarg);
			o->priced = 1;
			break;
		case OPT_EAGER:
			o->p.eager_bytes = tool_parse_size("--eager", optarg);
			break;
		case OPT_TW_BIG:
			o->p.tw_big_us_per_byte = num("--tw-big", optarg);
			o->priced = 1;
			break;
		case OPT_BIG:
			o->p.big_bytes = tool_parse_size("--big", optarg);
			break;
		case OPT_TS_CAP:
			o->p.ts_cap = num("--ts-cap", optarg);
			break;
		case OPT_EXPLAIN:
			o->explain = 1;
			break;
		case OPT_PRICING:
			if (!strcmp(optarg, "routed"))
				o->flags = 0;
			else if (!strcmp(optarg, "device"))
				o->flags = TC_COST_SENDER_START;
			else if (!strcmp(optarg, "direct"))
				o->flags = TC_COST_DIRECT;
			else if (!strcmp(optarg, "host"))
				o->flags = TC_COST_HOST;
			else
				die(2, "--pricing %s: expected routed, device, direct or host", optarg);
			break;
		case OPT_M:
			o->p.block_bytes = tool_parse_size("--m", optarg);
			if (!o->p.block_bytes)
				die(2, "--m %s: a block is at least 1 byte", optarg);
			break;
		case OPT_LIST:
			o->list = 1;
			break;
		case OPT_NODE: {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (!*optarg || *end || v < 0 || v > 0x7fffffff)
				die(2, "--node %s: expected a node number >= 0", optarg);
			o->node = (int)v;
			break;
		}
		case OPT_LINKS:
			o->links = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			tool_bad_option(opt, argv, optind);
		}
	}
	if (optind < argc)
		die(2, "unexpected argument '%s' (see --help)", argv[optind]);
	if (o->list)
		return;
	if (o->coll < 0)
		o->coll = TC_ALLTOALL;
	if (!o->algo_name)
		die(2, "%s", "--algo is required (see --list)");
	if (!o->dims)
		die(2, "%s", "--dims is required, e.g. --dims 8x8");
	if (o->mesh && o->wrap)
		die(2, "%s", "--mesh and --wrap exclude each other");
	if (o->node >= 0 && (o->run || o->links))
		die(2, "%s", "--node builds one node's part: --run and --links need the whole schedule");
}
