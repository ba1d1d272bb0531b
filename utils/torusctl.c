// SPDX-License-Identifier: GPL-2.0
/*
 * torusctl: control torus.ko fabrics from the command line, like rdma(8)
 * does RDMA links: list, show, create and destroy fabrics, read and reset
 * per-link and per-node counters, set and clear link faults, read the
 * virtual makespan. Talks to /dev/torus-ctl through include/uapi/torus.h
 * only (and reads debugfs, when mounted, for which nodes are open).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <uapi/torus.h>

#define PROG "torusctl"
#include "tool.h"
#define DEBUGFS "/sys/kernel/debug/torus"

static const char usage_text[] =
	"usage: torusctl [-j|--json] [--ctl PATH] OBJECT COMMAND [ARGS]\n"
	"\n"
	"  info                                the module: ABI version, features, limits\n"
	"  fabric list                         every fabric, one line each\n"
	"  fabric show ID                      one fabric: shape, wrap, port model, timing,\n"
	"                                      queues, open nodes, virtual makespan\n"
	"  fabric create DIMS [OPTIONS]        create a fabric; prints its id\n"
	"      DIMS            4x4 or 4,4 (1 to 6 sizes)\n"
	"      --mesh          no dimension wraps (default: every one wraps)\n"
	"      --wrap F,F,..   per-dimension wrap flags, e.g. 1,0\n"
	"      --one-port      one send and one receive in flight per node\n"
	"      --ts-ns N --tw-ps N --hop-ns N     timing model (default: the module's\n"
	"                      ts_ns, tw_ps, hop_ns parameters; 0 is no time at all)\n"
	"      --matrix-bytes N --sq-depth N --fifo-bytes N --cq-depth N   (0: default)\n"
	"  fabric destroy ID                   destroy a fabric (fails while a node is open)\n"
	"  fabric stats ID [--reset]           virtual makespan (--reset: read, then zero it\n"
	"                                      and every node's virtual clock)\n"
	"  counters show ID [--node N]         per-node and per-link counters\n"
	"  counters reset ID                   zero every counter of the fabric\n"
	"  fault set ID NODE PORT [down] [drop N] [delay NS]\n"
	"                                      fault the link leaving NODE on PORT (port =\n"
	"                                      2*dim + dir, dir 0 = +, 1 = -)\n"
	"  fault clear ID NODE PORT            clear that link's faults\n"
	"\n"
	"  -j, --json     print one JSON document\n"
	"  --ctl PATH     the control device (default /dev/torus-ctl)\n"
	"  -h, --help     this text\n"
	"\n"
	"Exit status: 0 ok; 1 the module refused (the error says why); 2 bad usage.\n";

static int json;
static const char *ctl_path = "/dev/" TORUS_CTL_NAME;
static int ctl_fd = -1;

static void usage_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see torusctl --help)\n");
	exit(2);
}

static unsigned long long parse_u64(const char *what, const char *s, unsigned long long max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		usage_die("%s %s: expected a number 0..%llu", what, s, max);
	return v;
}

static uint32_t parse_u32(const char *what, const char *s)
{
	return parse_u64(what, s, UINT32_MAX);
}

static void open_ctl(void)
{
	ctl_fd = open(ctl_path, O_RDWR | O_CLOEXEC);
	if (ctl_fd < 0) {
		if (errno == ENOENT)
			die(1, "%s: %s (is torus.ko loaded? modprobe torus)", ctl_path, strerror(errno));
		die(1, "%s: %s", ctl_path, strerror(errno));
	}
}

static int xioctl(unsigned long cmd, void *arg)
{
	return ioctl(ctl_fd, cmd, arg) ? -errno : 0;
}

static const char *errno_hint(int err)
{
	switch (err) {
	case -ENOENT:
		return " (no such fabric or node: torusctl fabric list)";
	case -EBUSY:
		return " (a node of the fabric is open: stop the processes using it)";
	case -ENOTTY:
		return " (the module does not know this command: older torus.ko?)";
	default:
		return "";
	}
}

/* ---- queries ---- */

static int query(uint32_t id, struct torus_fabric_query *q, uint32_t flags)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->flags = flags;
	q->fabric_id = id;
	return xioctl(TORUS_IOC_FABRIC_QUERY, q);
}

static const char *kind(const struct torus_fabric_query *q)
{
	uint32_t all = (1u << q->ndims) - 1;

	return q->wrap_mask == all ? "torus" : q->wrap_mask ? "mixed" : "mesh";
}

/* Which nodes are open, from debugfs ("node N active 1"); -1 if unreadable. */
static int node_open(uint32_t id, uint32_t node)
{
	char path[128], line[256];
	unsigned int n;
	int active = -1;
	FILE *f;

	snprintf(path, sizeof(path), DEBUGFS "/fabric%u/node%u/state", id, node);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f) && sscanf(line, "node %u active %d", &n, &active) != 2)
		active = -1;
	fclose(f);
	return active;
}

static void print_fabric_json(const struct torus_fabric_query *q, int detail)
{
	printf("{\"id\": %u, \"dims\": [", q->fabric_id);
	for (uint32_t d = 0; d < q->ndims; d++)
		printf("%s%u", d ? ", " : "", q->dims[d]);
	printf("], \"wrap\": [");
	for (uint32_t d = 0; d < q->ndims; d++)
		printf("%s%s", d ? ", " : "", q->wrap_mask >> d & 1 ? "true" : "false");
	printf("], \"kind\": \"%s\", \"port_model\": \"%s\", \"nodes\": %u, \"open_nodes\": %u", kind(q),
	       q->fabric_flags & TORUS_FABRIC_ONE_PORT ? "one-port" : "all-port", q->nodes, q->open_nodes);
	if (detail) {
		int known = 1, first = 1;

		printf(", \"open\": [");
		for (uint32_t n = 0; n < q->nodes && known; n++) {
			int a = node_open(q->fabric_id, n);

			if (a < 0)
				known = 0;
			else if (a) {
				printf("%s%u", first ? "" : ", ", n);
				first = 0;
			}
		}
		printf("]%s", known ? "" : ", \"open_known\": false");
		printf(", \"timing\": {\"ts_ns\": %llu, \"tw_ps\": %llu, \"hop_ns\": %llu}",
		       (unsigned long long)q->ts_ns, (unsigned long long)q->tw_ps, (unsigned long long)q->hop_ns);
		printf(", \"matrix_bytes\": %llu, \"sq_depth\": %u, \"fifo_bytes\": %u, \"cq_depth\": %u",
		       (unsigned long long)q->matrix_bytes, q->sq_depth, q->fifo_bytes, q->cq_depth);
		printf(", \"makespan_ns\": %llu", (unsigned long long)q->makespan_ns);
	}
	printf("}");
}

/* Every feature bit of the header, by name (tests/tools/test-features checks none is missing). */
static const struct {
	uint64_t bit;
	const char *name;
} feats[] = {
	{ TORUS_FEAT_ONE_PORT, "one-port" },
	{ TORUS_FEAT_ROUTE, "route" },
	{ TORUS_FEAT_LINK_FAULT, "link-fault" },
	{ TORUS_FEAT_EPOLL, "epoll" },
	{ TORUS_FEAT_MR, "mr" },
	{ TORUS_FEAT_CQ_WAKE_ONCE, "cq-wake-once" },
	{ TORUS_FEAT_SEND_SYNC, "send-sync" },
	{ TORUS_FEAT_PROGRAM, "program" },
	{ TORUS_FEAT_PROG_SIGNAL, "prog-signal" },
	{ TORUS_FEAT_PROG_QUEUE_ONLY, "prog-queue-only" },
};

/* The features of mask as names; a bit this torusctl does not know as "bit N". */
static void print_feats(uint64_t mask, int as_json)
{
	int first = 1;

	for (int i = 0; i < 64; i++) {
		const char *name = NULL;
		char unknown[16];

		if (!(mask >> i & 1))
			continue;
		for (size_t k = 0; k < sizeof(feats) / sizeof(feats[0]); k++)
			if (feats[k].bit == 1ULL << i)
				name = feats[k].name;
		if (!name) {
			snprintf(unknown, sizeof(unknown), "bit %d", i);
			name = unknown;
		}
		if (as_json)
			printf("%s\"%s\"", first ? "" : ", ", name);
		else
			printf(" %s", name);
		first = 0;
	}
}

static int cmd_info(void)
{
	struct torus_handshake h = { .size = sizeof(h) };
	int ret = xioctl(TORUS_IOC_HANDSHAKE, &h);

	if (ret)
		die(1, "handshake: %s", strerror(-ret));
	if (json) {
		printf("{\"abi_version\": %u, \"features\": [", h.abi_version);
		print_feats(h.features, 1);
		printf("], \"max_dims\": %u, \"max_nodes\": %u, \"max_dim_size\": %u, \"max_segs\": %u, "
		       "\"max_batch\": %u, \"max_matrix_bytes\": %llu}\n",
		       h.max_dims, h.max_nodes, h.max_dim_size, h.max_segs, h.max_batch,
		       (unsigned long long)h.max_matrix_bytes);
		return 0;
	}
	printf("abi_version %u\nfeatures", h.abi_version);
	print_feats(h.features, 0);
	printf("\nmax_dims %u\nmax_nodes %u\nmax_dim_size %u\nmax_segs %u\nmax_batch %u\nmax_matrix_bytes %llu\n",
	       h.max_dims, h.max_nodes, h.max_dim_size, h.max_segs, h.max_batch,
	       (unsigned long long)h.max_matrix_bytes);
	return 0;
}

static int cmd_fabric_list(void)
{
	struct torus_fabric_query q;
	uint32_t id = 0;
	int n = 0, ret;

	if (json)
		printf("{\"fabrics\": [");
	else
		printf("%-4s %-12s %-6s %-9s %6s %5s %8s %8s %8s\n", "ID", "SHAPE", "KIND", "PORTS", "NODES", "OPEN",
		       "TS_NS", "TW_PS", "HOP_NS");
	for (;;) {
		ret = query(id, &q, 0);
		if (ret && ret != -ENOENT)
			die(1, "fabric query %u: %s", id, strerror(-ret));
		if (!ret) {
			char shape[64];

			if (json) {
				printf("%s\n  ", n ? "," : "");
				print_fabric_json(&q, 0);
			} else {
				tool_shape_str(q.ndims, q.dims, shape, sizeof(shape));
				printf("%-4u %-12s %-6s %-9s %6u %5u %8llu %8llu %8llu\n", q.fabric_id, shape, kind(&q),
				       q.fabric_flags & TORUS_FABRIC_ONE_PORT ? "one-port" : "all-port", q.nodes,
				       q.open_nodes, (unsigned long long)q.ts_ns, (unsigned long long)q.tw_ps,
				       (unsigned long long)q.hop_ns);
			}
			n++;
		}
		if (q.next_fabric_id == TORUS_NO_NODE || q.next_fabric_id <= id)
			break;
		id = q.next_fabric_id;
	}
	if (json)
		printf("%s]}\n", n ? "\n" : "");
	return 0;
}

static int cmd_fabric_show(uint32_t id)
{
	struct torus_fabric_query q;
	char shape[64];
	int ret = query(id, &q, 0), known = 1;

	if (ret)
		die(1, "fabric %u: %s%s", id, strerror(-ret), errno_hint(ret));
	if (json) {
		print_fabric_json(&q, 1);
		printf("\n");
		return 0;
	}
	tool_shape_str(q.ndims, q.dims, shape, sizeof(shape));
	printf("fabric %u\n  shape       %s (%s)\n  wrap       ", id, shape, kind(&q));
	for (uint32_t d = 0; d < q.ndims; d++)
		printf(" %u", q.wrap_mask >> d & 1);
	printf("\n  ports       %s, %u per node\n  nodes       %u (%u open",
	       q.fabric_flags & TORUS_FABRIC_ONE_PORT ? "one-port" : "all-port", 2 * q.ndims, q.nodes, q.open_nodes);
	if (q.open_nodes) {
		int first = 1;

		for (uint32_t n = 0; n < q.nodes && known; n++) {
			int a = node_open(id, n);

			if (a < 0)
				known = 0;
			else if (a)
				printf("%s%u", first ? ": " : ",", n), first = 0;
		}
		if (!known)
			printf(": which ones needs debugfs at " DEBUGFS);
	}
	printf(")\n  timing      ts %llu ns, tw %llu ps/B, hop %llu ns\n", (unsigned long long)q.ts_ns,
	       (unsigned long long)q.tw_ps, (unsigned long long)q.hop_ns);
	printf("  matrix      %llu bytes per node\n  queues      sq %u, fifo %u bytes, cq %u\n",
	       (unsigned long long)q.matrix_bytes, q.sq_depth, q.fifo_bytes, q.cq_depth);
	printf("  makespan    %llu ns (virtual)\n", (unsigned long long)q.makespan_ns);
	return 0;
}

static int cmd_fabric_create(int argc, char **argv)
{
	struct torus_fabric_create c;
	int wrap_set = 0, have_ts = 0, have_tw = 0, have_hop = 0, ret;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	if (argc < 1)
		usage_die("fabric create needs DIMS, e.g. 4x4");
	c.ndims = tool_parse_dims("DIMS", argv[0], c.dims, TORUS_MAX_DIMS, 65535);
	c.wrap_mask = (1u << c.ndims) - 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

#define NEEDV()                                         \
	do {                                            \
		if (!v)                                 \
			usage_die("%s needs a value", a); \
		i++;                                    \
	} while (0)
		if (!strcmp(a, "--mesh")) {
			if (wrap_set)
				usage_die("--mesh and --wrap exclude each other");
			c.wrap_mask = 0;
			wrap_set = 1;
		} else if (!strcmp(a, "--wrap")) {
			const char *p;
			uint32_t d = 0;

			NEEDV();
			if (wrap_set)
				usage_die("--mesh and --wrap exclude each other");
			wrap_set = 1;
			c.wrap_mask = 0;
			for (p = v; *p; p++) {
				if ((*p == '0' || *p == '1') && (p[1] == ',' || !p[1])) {
					c.wrap_mask |= (uint32_t)(*p - '0') << d++;
					if (p[1])
						p++;
				} else {
					usage_die("--wrap %s: expected one 0 or 1 per dimension, e.g. 1,0", v);
				}
			}
			if (d != c.ndims)
				usage_die("--wrap %s: %u flags for %u dimensions", v, d, c.ndims);
		} else if (!strcmp(a, "--one-port")) {
			c.flags |= TORUS_FABRIC_ONE_PORT;
		} else if (!strcmp(a, "--ts-ns")) {
			NEEDV();
			c.ts_ns = parse_u64(a, v, UINT64_MAX);
			have_ts = 1;
		} else if (!strcmp(a, "--tw-ps")) {
			NEEDV();
			c.tw_ps = parse_u64(a, v, UINT64_MAX);
			have_tw = 1;
		} else if (!strcmp(a, "--hop-ns")) {
			NEEDV();
			c.hop_ns = parse_u64(a, v, UINT64_MAX);
			have_hop = 1;
		} else if (!strcmp(a, "--matrix-bytes")) {
			NEEDV();
			c.matrix_bytes = parse_u64(a, v, UINT64_MAX);
		} else if (!strcmp(a, "--sq-depth")) {
			NEEDV();
			c.sq_depth = parse_u32(a, v);
		} else if (!strcmp(a, "--fifo-bytes")) {
			NEEDV();
			c.fifo_bytes = parse_u32(a, v);
		} else if (!strcmp(a, "--cq-depth")) {
			NEEDV();
			c.cq_depth = parse_u32(a, v);
		} else {
			usage_die("fabric create: unknown option %s", a);
		}
#undef NEEDV
	}
	if (!have_ts)
		c.ts_ns = tool_module_param("ts_ns");
	if (!have_tw)
		c.tw_ps = tool_module_param("tw_ps");
	if (!have_hop)
		c.hop_ns = tool_module_param("hop_ns");
	open_ctl();
	ret = xioctl(TORUS_IOC_FABRIC_CREATE, &c);
	if (ret == -EINVAL)
		die(1, "fabric create %s: %s (a value is out of range: torusctl info shows the limits)", argv[0],
		    strerror(-ret));
	if (ret)
		die(1, "fabric create %s: %s", argv[0], strerror(-ret));
	if (json)
		printf("{\"id\": %u, \"nodes\": %u}\n", c.fabric_id, c.nodes);
	else
		printf("%u\n", c.fabric_id);
	return 0;
}

static int cmd_fabric_destroy(uint32_t id)
{
	struct torus_fabric_destroy d = { .size = sizeof(d), .fabric_id = id };
	int ret = xioctl(TORUS_IOC_FABRIC_DESTROY, &d);

	if (ret)
		die(1, "fabric destroy %u: %s%s", id, strerror(-ret), errno_hint(ret));
	if (json)
		printf("{\"destroyed\": %u}\n", id);
	return 0;
}

static int cmd_fabric_stats(uint32_t id, int reset)
{
	struct torus_fabric_query q;
	int ret = query(id, &q, reset ? TORUS_QUERY_RESET_STATS : 0);

	if (ret)
		die(1, "fabric %u: %s%s", id, strerror(-ret), errno_hint(ret));
	if (json)
		printf("{\"id\": %u, \"makespan_ns\": %llu, \"reset\": %s}\n", id, (unsigned long long)q.makespan_ns,
		       reset ? "true" : "false");
	else
		printf("fabric %u makespan_ns %llu%s\n", id, (unsigned long long)q.makespan_ns,
		       reset ? " (now reset to 0)" : "");
	return 0;
}

static int counters(uint32_t id, uint32_t node, uint32_t flags, struct torus_counters *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->flags = flags;
	c->fabric_id = id;
	c->node_id = node;
	return xioctl(TORUS_IOC_COUNTERS, c);
}

static int cmd_counters_show(uint32_t id, long only)
{
	struct torus_fabric_query q;
	struct torus_counters c;
	int ret = query(id, &q, 0);
	uint32_t first, last;

	if (ret)
		die(1, "fabric %u: %s%s", id, strerror(-ret), errno_hint(ret));
	if (only >= 0 && (uint32_t)only >= q.nodes)
		die(1, "fabric %u has %u nodes: no node %ld", id, q.nodes, only);
	first = only >= 0 ? only : 0;
	last = only >= 0 ? (uint32_t)only : q.nodes - 1;
	if (json)
		printf("{\"id\": %u, \"nodes\": [", id);
	else
		printf("%-5s %-5s %12s %12s %14s %14s %10s\n", "NODE", "PORT", "POSTED/MSGS", "COMPLETED", "ERRORS/BYTES",
		       "OVERFLOW/BUSY", "STALLS");
	for (uint32_t n = first; n <= last; n++) {
		ret = counters(id, n, 0, &c);
		if (ret)
			die(1, "counters of fabric %u node %u: %s%s", id, n, strerror(-ret), errno_hint(ret));
		if (json) {
			printf("%s\n  {\"node\": %u, \"posted\": %llu, \"completed\": %llu, \"errors\": %llu, "
			       "\"cq_overflows\": %llu, \"links\": [",
			       n == first ? "" : ",", n, (unsigned long long)c.node.posted,
			       (unsigned long long)c.node.completed, (unsigned long long)c.node.errors,
			       (unsigned long long)c.node.cq_overflows);
			for (uint32_t p = 0; p < 2 * q.ndims; p++)
				printf("%s{\"port\": %u, \"messages\": %llu, \"bytes\": %llu, \"busy_ns\": %llu, "
				       "\"stalls\": %llu}",
				       p ? ", " : "", p, (unsigned long long)c.links[p].messages,
				       (unsigned long long)c.links[p].bytes, (unsigned long long)c.links[p].busy_ns,
				       (unsigned long long)c.links[p].stalls);
			printf("]}");
			continue;
		}
		printf("%-5u %-5s %12llu %12llu %14llu %14llu %10s\n", n, "-", (unsigned long long)c.node.posted,
		       (unsigned long long)c.node.completed, (unsigned long long)c.node.errors,
		       (unsigned long long)c.node.cq_overflows, "-");
		for (uint32_t p = 0; p < 2 * q.ndims; p++) {
			char pn[24]; /* two %u and a sign: gcc -O1 cannot see that p < 12 */

			snprintf(pn, sizeof(pn), "%u%c%u", p, p & 1 ? '-' : '+', p / 2);
			printf("%-5u %-5s %12llu %12s %14llu %14llu %10llu\n", n, pn,
			       (unsigned long long)c.links[p].messages, "", (unsigned long long)c.links[p].bytes,
			       (unsigned long long)c.links[p].busy_ns, (unsigned long long)c.links[p].stalls);
		}
	}
	if (json)
		printf("\n]}\n");
	return 0;
}

static int cmd_counters_reset(uint32_t id)
{
	struct torus_counters c;
	int ret = counters(id, 0, TORUS_COUNTERS_RESET, &c);

	if (ret)
		die(1, "counters reset of fabric %u: %s%s", id, strerror(-ret), errno_hint(ret));
	if (json)
		printf("{\"id\": %u, \"reset\": true}\n", id);
	return 0;
}

static int cmd_fault(int set, int argc, char **argv)
{
	struct torus_link_fault f = { .size = sizeof(f) };
	struct torus_fabric_query q;
	int ret;

	if (argc < 3)
		usage_die("fault %s needs ID NODE PORT", set ? "set" : "clear");
	f.fabric_id = parse_u32("ID", argv[0]);
	f.node_id = parse_u32("NODE", argv[1]);
	f.port = parse_u32("PORT", argv[2]);
	if (!set && argc > 3)
		usage_die("fault clear: unexpected argument %s", argv[3]);
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "down")) {
			f.flags |= TORUS_FAULT_DOWN;
		} else if (!strcmp(argv[i], "drop") && i + 1 < argc) {
			f.flags |= TORUS_FAULT_DROP;
			f.drop_count = parse_u32("drop", argv[++i]);
		} else if (!strcmp(argv[i], "delay") && i + 1 < argc) {
			f.flags |= TORUS_FAULT_DELAY;
			f.delay_ns = parse_u64("delay", argv[++i], UINT64_MAX);
		} else if (!strcmp(argv[i], "drop") || !strcmp(argv[i], "delay")) {
			usage_die("fault set: %s needs a value", argv[i]);
		} else {
			usage_die("fault set: unknown fault %s (down, drop N, delay NS)", argv[i]);
		}
	}
	if (set && !f.flags)
		usage_die("fault set needs at least one of down, drop N, delay NS");
	open_ctl();
	ret = query(f.fabric_id, &q, 0);
	if (ret)
		die(1, "fabric %u: %s%s", f.fabric_id, strerror(-ret), errno_hint(ret));
	if (f.node_id >= q.nodes)
		die(1, "fabric %u has %u nodes: no node %u", f.fabric_id, q.nodes, f.node_id);
	if (f.port >= 2 * q.ndims)
		die(1, "fabric %u has %u ports per node (0..%u): no port %u", f.fabric_id, 2 * q.ndims,
		    2 * q.ndims - 1, f.port);
	ret = xioctl(TORUS_IOC_LINK_FAULT, &f);
	if (ret == -EINVAL)
		die(1, "fault %s fabric %u node %u port %u: %s (no link there on a mesh edge, or the delay is "
		       "above the module's limit)",
		    set ? "set" : "clear", f.fabric_id, f.node_id, f.port, strerror(-ret));
	if (ret)
		die(1, "fault %s fabric %u node %u port %u: %s%s", set ? "set" : "clear", f.fabric_id, f.node_id,
		    f.port, strerror(-ret), errno_hint(ret));
	if (json)
		printf("{\"id\": %u, \"node\": %u, \"port\": %u, \"down\": %s, \"drop\": %u, \"delay_ns\": %llu}\n",
		       f.fabric_id, f.node_id, f.port, f.flags & TORUS_FAULT_DOWN ? "true" : "false", f.drop_count,
		       (unsigned long long)f.delay_ns);
	return 0;
}

static int is(const char *a, const char *full)
{
	/* like ip(8): any unambiguous prefix of at least 3 letters, or the word */
	size_t n = strlen(a);

	return !strcmp(a, full) || (n >= 3 && !strncmp(a, full, n));
}

int main(int argc, char **argv)
{
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--ctl")) {
			if (i + 1 >= argc)
				usage_die("--ctl needs a path");
			ctl_path = argv[++i];
		} else {
			usage_die("unknown option %s", argv[i]);
		}
	}
	if (i >= argc)
		usage_die("no object given (info, fabric, counters, fault)");
	const char *obj = argv[i++], *cmd = i < argc ? argv[i++] : NULL;
	int rest = argc - i;
	char **rv = argv + i;

	if (!strcmp(obj, "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (is(obj, "info")) {
		if (cmd)
			usage_die("info: unexpected argument %s", cmd);
		open_ctl();
		return cmd_info();
	}
	if (is(obj, "fabric")) {
		if (!cmd || is(cmd, "list")) {
			if (rest > 0 || (cmd && !is(cmd, "list")))
				usage_die("fabric list: unexpected argument %s", rv[0]);
			open_ctl();
			return cmd_fabric_list();
		}
		if (is(cmd, "create"))
			return cmd_fabric_create(rest, rv);
		if (is(cmd, "show") || is(cmd, "destroy") || is(cmd, "stats")) {
			int reset = 0;
			uint32_t id;

			if (rest < 1)
				usage_die("fabric %s needs a fabric ID", cmd);
			id = parse_u32("ID", rv[0]);
			if (is(cmd, "stats") && rest == 2 && !strcmp(rv[1], "--reset"))
				reset = 1;
			else if (rest > 1)
				usage_die("fabric %s: unexpected argument %s", cmd, rv[1]);
			open_ctl();
			if (is(cmd, "show"))
				return cmd_fabric_show(id);
			if (is(cmd, "destroy"))
				return cmd_fabric_destroy(id);
			return cmd_fabric_stats(id, reset);
		}
		usage_die("fabric: unknown command %s (list, show, create, destroy, stats)", cmd);
	}
	if (is(obj, "counters")) {
		uint32_t id;
		long node = -1;

		if (!cmd || (!is(cmd, "show") && !is(cmd, "reset")))
			usage_die("counters: expected show or reset%s%s", cmd ? ", not " : "", cmd ? cmd : "");
		if (rest < 1)
			usage_die("counters %s needs a fabric ID", cmd);
		id = parse_u32("ID", rv[0]);
		if (is(cmd, "show") && rest == 3 && !strcmp(rv[1], "--node"))
			node = parse_u32("--node", rv[2]);
		else if (rest > 1)
			usage_die("counters %s: unexpected argument %s", cmd, rv[1]);
		open_ctl();
		return is(cmd, "show") ? cmd_counters_show(id, node) : cmd_counters_reset(id);
	}
	if (is(obj, "fault")) {
		if (cmd && is(cmd, "set"))
			return cmd_fault(1, rest, rv);
		if (cmd && is(cmd, "clear"))
			return cmd_fault(0, rest, rv);
		usage_die("fault: expected set or clear%s%s", cmd ? ", not " : "", cmd ? cmd : "");
	}
	usage_die("unknown object %s (info, fabric, counters, fault)", obj);
}
