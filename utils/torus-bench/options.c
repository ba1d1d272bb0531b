// SPDX-License-Identifier: GPL-2.0
/*
 * torus-bench: the command line. --help, the options into struct opts (bad
 * usage exits 2 with one line), and the list of algorithms to run (-a).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static const char usage_text[] =
	"usage: torus-bench [options]\n"
	"\n"
	"Times one collective of libtoruscoll over a sweep of sizes, for one\n"
	"algorithm or all of them. Every call gets data of its own, and every byte\n"
	"every rank receives is checked against a reference the bench computes,\n"
	"outside the timed region. Rank 0 prints one record per (algorithm, size).\n"
	"\n"
	"  -c, --coll C        alltoall (default), allgather, allreduce, bcast, barrier,\n"
	"                      alltoallv, allgatherv, reduce_scatter\n"
	"  -a, --algo A        alltoall/allgather: an algorithm (torus-sched --list),\n"
	"                      a comma-separated list of them (checked before the\n"
	"                      ranks start),\n"
	"                      auto (default) or all (auto, then every algorithm of\n"
	"                      the collective); with auto and others, a closing\n"
	"                      table per size: auto's pick and measured time against\n"
	"                      the measured best (dev: the virtual makespan of one\n"
	"                      call, unless TC_AUTO_CLOCK=wall; else the median over\n"
	"                      the calls of the slowest rank's time)\n"
	"      --transport T   dev (default, or $TC_TRANSPORT): this process is one\n"
	"                      rank of a fabric (start with torusrun); sim: every node\n"
	"                      a thread of this process (needs --dims or TC_SIM_DIMS,\n"
	"                      which torusrun --transport sim sets); verbs: passed to\n"
	"                      the library as TC_TRANSPORT=verbs\n"
	"  -d, --dims DIMS     shape, 4x4 or 4,4 (sim: required; dev: checked)\n"
	"      --mesh          sim: no dimension wraps\n"
	"      --one-port      sim: one-port nodes\n"
	"  -b, --minbytes N    smallest size (default 64; K, M, G suffixes, x1024)\n"
	"  -e, --maxbytes N    largest size (default 1M)\n"
	"  -f, --stepfactor F  multiply the size by F each step (default 2; at most\n"
	"                      64 sizes)\n"
	"  -w, --warmup N      checked untimed iterations per size (default 1)\n"
	"  -n, --iters N       timed iterations per size (default 10)\n"
	"  -r, --rounds N      run the whole list of algorithms N times per size,\n"
	"                      interleaved (each round in its own shuffled order);\n"
	"                      each (algorithm, size) reports its median round, and\n"
	"                      the auto table how far its rounds spread and, paired,\n"
	"                      the median over rounds of auto's time over each\n"
	"                      algorithm's in the same round, the largest (default 1;\n"
	"                      at most 99)\n"
	"      --ts-ns T       startup time of the prediction (default: the fabric's\n"
	"                      on dev, else the module default 1000)\n"
	"      --tw-ps T       time per byte of the prediction, ps (default: the\n"
	"                      fabric's on dev, else 100)\n"
	"  -j, --json          one JSON document\n"
	"      --csv           comma-separated values: a header line, a row per\n"
	"                      record (every JSON field), then a blank line and the\n"
	"                      comparison with auto under its own header\n"
	"      --plot FILE     also draw time and busbw against size per algorithm\n"
	"                      with gnuplot into FILE.png or FILE.svg\n"
	"  -h, --help          this text\n"
	"\n"
	"size: the bytes per peer block (alltoall, allgather, the v-variants'\n"
	"largest block), the vector bytes (allreduce, bcast), the bytes each rank\n"
	"receives (reduce_scatter); int32 elements (allreduce, bcast, reduce_scatter)\n"
	"start at 4 bytes. bytes = the data one rank sends or receives,\n"
	"algbw = bytes / time, busbw = algbw * factor (nccl-tests; see torus-bench(1)).\n"
	"\n"
	"Exit status: 0 ok; 1 a byte was wrong (dev, verbs: each rank its own); 2 bad usage; 3 the one algorithm\n"
	"asked for does not support the shape; 4 other errors (no fabric, transport).\n";

void parse_dims_opt(const char *s, struct opts *o)
{
	uint32_t d[TC_MAX_DIMS];

	o->ndims = tool_parse_dims("--dims", s, d, TC_MAX_DIMS, 4096);
	for (int i = 0; i < o->ndims; i++)
		o->dims[i] = (int)d[i];
}

static int parse_int(const char *opt, const char *s, int min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > INT_MAX)
		die(2, "%s %s: expected an integer >= %d", opt, s, min);
	return v;
}

/* -a all: "auto", then every algorithm of the collective (tc_coll_algos). */
static int list_algos(struct bench *b)
{
	const char *names[MAX_ALGOS - 1];
	int n = tc_coll_algos(b->o.coll == C_ALLTOALL ? TC_ALLTOALL : TC_ALLGATHER, names, MAX_ALGOS - 1);

	if (n < 1)
		return n < 0 ? n : -ENOENT;
	if (n > MAX_ALGOS - 1)
		return -E2BIG;
	/* auto first: the sweep then compares the library's choice with every candidate */
	snprintf(b->algos[0], sizeof(b->algos[0]), "auto");
	b->nalgos = 1;
	for (int i = 0; i < n; i++)
		snprintf(b->algos[b->nalgos++], sizeof(b->algos[0]), "%.31s", names[i]);
	return 0;
}

void parse(int argc, char **argv, struct opts *o)
{
	enum { O_TRANSPORT = 256, O_MESH, O_ONE_PORT, O_TS, O_TW, O_CSV, O_PLOT };
	static const struct option lo[] = {
		{ "coll", required_argument, 0, 'c' },	   { "algo", required_argument, 0, 'a' },
		{ "transport", required_argument, 0, O_TRANSPORT },
		{ "dims", required_argument, 0, 'd' },	   { "mesh", no_argument, 0, O_MESH },
		{ "one-port", no_argument, 0, O_ONE_PORT }, { "minbytes", required_argument, 0, 'b' },
		{ "maxbytes", required_argument, 0, 'e' }, { "stepfactor", required_argument, 0, 'f' },
		{ "warmup", required_argument, 0, 'w' },   { "iters", required_argument, 0, 'n' },
		{ "rounds", required_argument, 0, 'r' },
		{ "ts-ns", required_argument, 0, O_TS },   { "tw-ps", required_argument, 0, O_TW },
		{ "json", no_argument, 0, 'j' },	   { "csv", no_argument, 0, O_CSV },
		{ "plot", required_argument, 0, O_PLOT },  { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	size_t sizes[MAX_SIZES];
	int c, i;
	char *end;

	memset(o, 0, sizeof(*o));
	o->algo = "auto";
	o->minb = 64;
	o->maxb = 1 << 20;
	o->factor = 2;
	o->warmup = 1;
	o->iters = 10;
	o->rounds = 1;
	o->ts_ns = 1000;
	o->tw_ps = 100;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:a:d:b:e:f:w:n:r:jh", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			for (i = 0; i < C_NUM && strcmp(optarg, colls[i]->name); i++)
				;
			if (i == C_NUM)
				die(2, "-c %s: unknown collective (alltoall, allgather, allreduce, bcast, barrier, "
				       "alltoallv, allgatherv, reduce_scatter)",
				    optarg);
			o->coll = i;
			break;
		case 'a':
			if (!*optarg)
				die(2, "-a \"\": an empty algorithm name (auto, all, or names from torus-sched --list)");
			o->algo = optarg;
			break;
		case O_TRANSPORT:
			if (strcmp(optarg, "dev") && strcmp(optarg, "sim") && strcmp(optarg, "verbs"))
				die(2, "--transport %s: expected dev, sim or verbs", optarg);
			o->transport = optarg;
			break;
		case 'd':
			parse_dims_opt(optarg, o);
			break;
		case O_MESH:
			o->mesh = 1;
			break;
		case O_ONE_PORT:
			o->one_port = 1;
			break;
		case 'b':
			o->minb = tool_parse_size("-b", optarg);
			break;
		case 'e':
			o->maxb = tool_parse_size("-e", optarg);
			break;
		case 'f':
			errno = 0;
			o->factor = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->factor > 1) || o->factor > 1024)
				die(2, "-f %s: expected a factor > 1", optarg);
			break;
		case 'w':
			o->warmup = parse_int("-w", optarg, 0);
			break;
		case 'n':
			o->iters = parse_int("-n", optarg, 1);
			break;
		case 'r':
			o->rounds = parse_int("-r", optarg, 1);
			if (o->rounds > MAX_ROUNDS)
				die(2, "-r %s: at most %d rounds", optarg, MAX_ROUNDS);
			break;
		case O_TS:
			o->ts_ns = parse_int("--ts-ns", optarg, 0);
			o->have_ts = 1;
			break;
		case O_TW:
			o->tw_ps = parse_int("--tw-ps", optarg, 0);
			o->have_tw = 1;
			break;
		case 'j':
			o->json = 1;
			break;
		case O_CSV:
			o->csv = 1;
			break;
		case O_PLOT:
			o->plot = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case ':':
			die(2, "%s needs a value (see --help)", argv[optind - 1]);
		default:
			die(2, "unknown option %s (see --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		die(2, "unexpected argument %s (see --help)", argv[optind]);
	if (o->json && o->csv)
		die(2, "--json and --csv exclude each other");
	if (!o->minb && o->coll != C_BARRIER)
		die(2, "-b 0: sizes start at 1 byte");
	if (o->minb > o->maxb)
		die(2, "-b %zu is larger than -e %zu", o->minb, o->maxb);
	if (o->plot) {
		const char *ext = strrchr(o->plot, '.');

		if (!ext || (strcmp(ext, ".png") && strcmp(ext, ".svg")))
			die(2, "--plot %s: the file name must end in .png or .svg", o->plot);
	}
	if (strcmp(o->algo, "auto") && o->coll != C_ALLTOALL && o->coll != C_ALLGATHER)
		die(2, "-a %s: only alltoall and allgather have a choice of algorithm", o->algo);
	if ((o->coll == C_ALLREDUCE || o->coll == C_REDUCE_SCATTER || o->coll == C_BCAST) && o->minb < 4)
		die(2, "-b %zu: %s moves int32 elements, sizes start at 4", o->minb, colls[o->coll]->name);
	if (sweep_sizes(o, sizes, MAX_SIZES) < 0)
		die(2, "-b %zu -e %zu -f %g: more than %d sizes (raise -f or narrow -b..-e)", o->minb, o->maxb,
		    o->factor, MAX_SIZES);
}

/*
 * Every name of -a before any rank starts, against the library's list
 * (tc_coll_algos; "auto" is the library's choice), so that a typo is bad
 * usage up front whatever the transport.
 */
static void check_algo_names(const struct bench *b)
{
	const char *names[MAX_ALGOS];
	int n = tc_coll_algos(b->o.coll == C_ALLTOALL ? TC_ALLTOALL : TC_ALLGATHER, names, MAX_ALGOS);

	if (n < 0 || n > MAX_ALGOS)
		die(4, "-a %s: listing the algorithms: %s", b->o.algo, n < 0 ? tc_last_error() : "too many");
	for (int i = 0; i < b->nalgos; i++) {
		int k = 0;

		while (k < n && strcmp(b->algos[i], names[k]))
			k++;
		if (k == n && strcmp(b->algos[i], "auto"))
			die(2, "-a %s: %s is no %s algorithm (see torus-sched --list --coll %s)", b->o.algo,
			    b->algos[i], colls[b->o.coll]->name, colls[b->o.coll]->name);
	}
}

/* -a: the algorithms to run, into b->algos (alltoall and allgather only). */
void parse_algos(struct bench *b)
{
	if (b->o.coll == C_ALLTOALL || b->o.coll == C_ALLGATHER) {
		if (!strcmp(b->o.algo, "all")) {
			int err = list_algos(b);

			if (err)
				die(4, "-a all: could not list the algorithms: %s", err == -E2BIG ? "more than torus-bench "
				    "takes" : tc_last_error());
		} else {
			/* one name or a comma-separated list, run in that order */
			const char *p = b->o.algo, *end;

			for (b->nalgos = 0; *p; p = *end ? end + 1 : end) {
				end = p + strcspn(p, ",");
				if (end == p || end - p >= (int)sizeof(b->algos[0]))
					die(2, "-a %s: an empty or too long algorithm name", b->o.algo);
				if (b->nalgos == MAX_ALGOS)
					die(2, "-a %s: at most %d algorithms", b->o.algo, MAX_ALGOS);
				snprintf(b->algos[b->nalgos++], sizeof(b->algos[0]), "%.*s", (int)(end - p), p);
				if (*end && !end[1])
					die(2, "-a %s: an empty or too long algorithm name", b->o.algo);
			}
			check_algo_names(b);
		}
	}
}
