// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coll_dev: tc_alltoall over torus.ko, one process per node (TAP; run in the
 * guest by tests/vm/run-guest, or `utils/torus-vm -- build/tests/vm/coll_dev`).
 *
 * For each fabric (8-ring, 4x4 and 8x8 torus, 4x4 mesh, one-port 4x4) it
 * creates the fabric through /dev/torus-ctl, forks one process per node, and
 * each runs tc_alltoall over TC_TRANSPORT_DEV with every received byte checked
 * against the MPI reference. Then it reads every node's per-link byte and
 * message counters (TORUS_IOC_COUNTERS) and compares them with the verifier's
 * per-link loads for the schedule that ran (link_blocks * block_bytes,
 * link_msgs). Without /dev/torus-ctl it skips (exit 4).
 *
 * COLL_DEV_ALGOS="auto at2 ..." chooses the alltoall algorithms (default:
 * auto and the seed algorithm of each shape); an algorithm named there that
 * does not build for a shape is reported as a skip, but the seed algorithm
 * of a shape (chosen for it) or auto not building fails. Each fabric also runs
 * tc_allgather (COLL_DEV_AG_ALGO, default auto) with the same checks.
 *
 * Both device paths run: a communicator's first call of a collective runs
 * step by step, the second as one program (TORUS_FEAT_PROGRAM, unless
 * TC_DEV_OFFLOAD=off), which tc_coll_last must report with exactly one post
 * and one wait (the block is below TC_ZCOPY_MIN: no registration).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uapi/torus.h>

#include "toruscoll.h"
#include "core/check.h"
#include "core/sim_run.h"
#include "select/select.h"
#include "../unit/tap.h"
#include "../unit/tbyte.h"

#define CTL_PATH "/dev/" TORUS_CTL_NAME
#define BLOCK_BYTES 48
#define NODE_TIMEOUT_MS 60000 /* TCG guests are slow */
#define RUNS 2		      /* tc_alltoall calls per node and algorithm */

struct fab_case {
	const char *label;
	__u32 ndims, wrap, flags;
	__u32 dims[TORUS_MAX_DIMS];
	const char *seed_algo; /* the paper's algorithm for the shape */
};

static const struct fab_case cases[] = {
	{ "ring 8", 1, 0x1, 0, { 8 }, "ar" },
	{ "4x4", 2, 0x3, 0, { 4, 4 }, "at2" },
	{ "8x8", 2, 0x3, 0, { 8, 8 }, "at2" },
	{ "4x4 mesh", 2, 0x0, 0, { 4, 4 }, "opt2d" },
	{ "4x4 one-port", 2, 0x3, TORUS_FABRIC_ONE_PORT, { 4, 4 }, "at2-1p" },
};

/* What each node process reports back (shared anonymous memory). */
struct node_res {
	int ret;
	long bad_bytes;
	double ms[RUNS]; /* first call (builds the schedule and plan), then warm calls */
	char algo[32];
	char err[200];
	int offloaded[RUNS];
	unsigned int posts, waits, regs; /* the last call's */
};

/* The byte k that o sends to d in call r (a hash of the four: tbyte.h). */
static unsigned char pattern(int r, int o, int d, size_t k)
{
	return tbyte((uint32_t)r, (uint32_t)o, (uint32_t)d, k);
}

static void node_main(__u32 fabric, int node, enum tc_coll_id coll, const char *algo, int timeout_ms,
		      struct node_res *res)
{
	struct tc_comm_attr attr = {
		.size = sizeof(attr),
		.transport = TC_TRANSPORT_DEV,
		.fabric_id = fabric,
		.node = node,
		.timeout_ms = timeout_ms,
	};
	struct tc_coll_info info = { .size = sizeof(info) };
	unsigned char *snd, *rcv;
	struct timespec t0, t1;
	tc_comm_t *comm;
	size_t sbytes;
	int P, ret;

	ret = tc_comm_create(&attr, &comm);
	if (ret) {
		res->ret = ret;
		snprintf(res->err, sizeof(res->err), "tc_comm_create: %s", tc_last_error());
		return;
	}
	if (tc_comm_rank(comm) != node) {
		res->ret = -EPROTO;
		snprintf(res->err, sizeof(res->err), "rank %d, expected %d", tc_comm_rank(comm), node);
		goto out;
	}
	ret = tc_comm_set_algo(comm, coll, algo);
	if (ret) {
		res->ret = ret;
		snprintf(res->err, sizeof(res->err), "%s", tc_last_error());
		goto out;
	}
	P = tc_comm_size(comm);
	sbytes = coll == TC_ALLTOALL ? (size_t)P * BLOCK_BYTES : BLOCK_BYTES;
	snd = malloc(sbytes);
	rcv = malloc((size_t)P * BLOCK_BYTES);
	if (!snd || !rcv) {
		res->ret = -ENOMEM;
		goto out_free;
	}
	for (int r = 0; r < RUNS; r++) {
		for (size_t k = 0; k < sbytes; k++)
			snd[k] = coll == TC_ALLTOALL ? pattern(r, node, k / BLOCK_BYTES, k % BLOCK_BYTES) :
						       pattern(r, node, 0, k);
		memset(rcv, 0xee, (size_t)P * BLOCK_BYTES);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ret = coll == TC_ALLTOALL ? tc_alltoall(comm, snd, rcv, BLOCK_BYTES) :
					    tc_allgather(comm, snd, rcv, BLOCK_BYTES);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		res->ms[r] = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
		if (ret) {
			res->ret = ret;
			snprintf(res->err, sizeof(res->err), "%s", tc_last_error());
			goto out_free;
		}
		if (!tc_coll_last(comm, coll, &info)) {
			res->offloaded[r] = info.offloaded;
			res->posts = info.posts;
			res->waits = info.waits;
			res->regs = info.regs;
		}
		for (size_t k = 0; k < (size_t)P * BLOCK_BYTES; k++)
			res->bad_bytes += rcv[k] != (coll == TC_ALLTOALL ? pattern(r, k / BLOCK_BYTES, node, k % BLOCK_BYTES) :
									   pattern(r, k / BLOCK_BYTES, 0, k % BLOCK_BYTES));
	}
	if (!tc_coll_last(comm, coll, &info))
		snprintf(res->algo, sizeof(res->algo), "%s", info.algo);
out_free:
	free(snd);
	free(rcv);
out:
	tc_comm_destroy(comm);
}

/* The fabrics' timing, and the same in the cost model's units (what the
 * library's choice prices with on them). */
#define FAB_TS_NS 1000
#define FAB_TW_PS 10
#define FAB_HOP_NS 10
static const struct tc_cost_params fab_cost = {
	.ts_us = FAB_TS_NS / 1e3, .tw_us_per_byte = FAB_TW_PS / 1e6, .hop_us = FAB_HOP_NS / 1e3,
};

static int fabric_create(int ctl, const struct fab_case *fc, __u32 *id, __u32 *nodes)
{
	struct torus_fabric_create c = {
		.size = sizeof(c),
		.flags = fc->flags,
		.ndims = fc->ndims,
		.wrap_mask = fc->wrap,
		.ts_ns = FAB_TS_NS,
		.tw_ps = FAB_TW_PS,
		.hop_ns = FAB_HOP_NS,
	};

	memcpy(c.dims, fc->dims, sizeof(c.dims));
	if (ioctl(ctl, TORUS_IOC_FABRIC_CREATE, &c))
		return -errno;
	*id = c.fabric_id;
	*nodes = c.nodes;
	return 0;
}

static int fabric_destroy(int ctl, __u32 id)
{
	struct torus_fabric_destroy d = { .size = sizeof(d), .fabric_id = id };

	/* Node files close as the children exit; the driver may still hold them briefly. */
	for (int i = 0; i < 50; i++) {
		if (!ioctl(ctl, TORUS_IOC_FABRIC_DESTROY, &d))
			return 0;
		if (errno != EBUSY)
			return -errno;
		usleep(100000);
	}
	return -EBUSY;
}

/*
 * Compare the module's per-link counters of every node with the verifier's
 * per-link loads. Returns the number of links that differ; -errno on error.
 */
static int compare_counters(int ctl, __u32 id, const struct tc_sched *s, const struct tc_verify_report *vr,
			    char *first, size_t flen)
{
	int ports = 2 * s->shape.ndims, bad = 0;
	unsigned long long tot_dev = 0, tot_ver = 0;

	for (int n = 0; n < s->shape.nodes; n++) {
		struct torus_counters c = { .size = sizeof(c), .fabric_id = id, .node_id = n };

		if (ioctl(ctl, TORUS_IOC_COUNTERS, &c))
			return -errno;
		for (int p = 0; p < ports; p++) {
			unsigned long long want_b =
				(unsigned long long)vr->link_blocks[n * ports + p] * (BLOCK_BYTES / s->npackets) * RUNS;
			unsigned long long want_m = (unsigned long long)vr->link_msgs[n * ports + p] * RUNS;

			tot_dev += c.links[p].bytes;
			tot_ver += want_b;
			if (c.links[p].bytes == want_b && c.links[p].messages == want_m)
				continue;
			if (!bad++)
				snprintf(first, flen, "node %d port %d: module %llu bytes / %llu msgs, verifier %llu / %llu", n,
					 p, (unsigned long long)c.links[p].bytes, (unsigned long long)c.links[p].messages,
					 want_b, want_m);
		}
	}
	tap_diag("link bytes: module %llu, verifier %llu", tot_dev, tot_ver);
	return bad;
}

/*
 * Fork one process per node of fabric id (all but node skip, if >= 0), each
 * running node_main; wait for all. Returns the number of processes that died.
 */
static int spawn_nodes(__u32 id, int P, enum tc_coll_id coll, const char *algo, int timeout_ms, int skip,
		       struct node_res *res, double *wall_ms)
{
	struct timespec t0, t1;
	int died = 0;

	memset(res, 0, P * sizeof(*res));
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int n = 0; n < P; n++) {
		pid_t pid;

		if (n == skip)
			continue;
		pid = fork();
		if (pid < 0) {
			res[n].ret = -errno;
			snprintf(res[n].err, sizeof(res[n].err), "fork: %s", strerror(errno));
			continue;
		}
		if (pid == 0) {
			node_main(id, n, coll, algo, timeout_ms, &res[n]);
			_exit(0);
		}
	}
	for (;;) {
		int st;
		pid_t w = wait(&st);

		if (w < 0)
			break;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			died++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*wall_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	return died;
}

static struct node_res *res_map(int P)
{
	struct node_res *res = mmap(NULL, P * sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return res == MAP_FAILED ? NULL : res;
}

/* The second call runs as one program: the module has programs and TC_DEV_OFFLOAD is not off. */
static int offload_expected(int ctl)
{
	struct torus_handshake h = { .size = sizeof(h) };
	const char *v = getenv("TC_DEV_OFFLOAD");

	if (v && (!strcmp(v, "off") || !strcmp(v, "0")))
		return 0;
	return !ioctl(ctl, TORUS_IOC_HANDSHAKE, &h) && (h.features & TORUS_FEAT_PROGRAM);
}

/* must: the algorithm was chosen for this shape (its seed algorithm, or auto): not building fails. */
static void run_case(int ctl, const struct fab_case *fc, enum tc_coll_id coll, const char *algo, int must)
{
	enum tc_coll_id tcoll = coll == TC_ALLTOALL ? TC_ALLTOALL : TC_ALLGATHER;
	const char *cname = coll == TC_ALLTOALL ? "alltoall" : "allgather";
	struct tc_shape sh;
	int dims[TC_MAX_DIMS], ret, P, died, bad_nodes = 0;
	const struct tc_algo *a;
	const struct tc_sched *s;
	const char *why = NULL;
	struct tc_verify_report vr = { 0 };
	struct node_res *res;
	double wall, slowest[RUNS] = { 0 };
	long bad_bytes = 0;
	__u32 id = 0, nodes = 0;
	char first[256] = "";

	for (unsigned int d = 0; d < fc->ndims; d++)
		dims[d] = fc->dims[d];
	tc_shape_init(&sh, fc->ndims, dims, fc->wrap, !!(fc->flags & TORUS_FABRIC_ONE_PORT));
	/* The schedule the library will run, for the counter comparison. */
	a = strcmp(algo, "auto") ? tc_algo_find(tcoll, algo) : tc_algo_auto(tcoll, &sh, BLOCK_BYTES, &fab_cost);
	if (!a) {
		tap_ok(0, "%s %s: no such algorithm", fc->label, algo);
		return;
	}
	ret = tc_sched_get(tcoll, a, &sh, &s, &why);
	if (ret && !must) {
		tap_skip("%s %s: does not build: %s", fc->label, a->name, why ? why : tc_strerror(ret));
		return;
	}
	if (ret) {
		tap_ok(0, "%s %s: does not build on the shape chosen for it: %s", fc->label, a->name,
		       why ? why : tc_strerror(ret));
		return;
	}
	ret = tc_verify(s, &vr);
	if (ret || !vr.ok) {
		tap_ok(0, "%s %s: schedule does not verify: %s", fc->label, a->name, vr.first_violation);
		tc_verify_report_free(&vr);
		return;
	}

	ret = fabric_create(ctl, fc, &id, &nodes);
	if (ret) {
		tap_ok(0, "%s: TORUS_IOC_FABRIC_CREATE: %s", fc->label, strerror(-ret));
		tc_verify_report_free(&vr);
		return;
	}
	P = nodes;
	res = res_map(P);
	if (!res) {
		tap_ok(0, "%s: mmap: %s", fc->label, strerror(errno));
		goto out_destroy;
	}
	died = spawn_nodes(id, P, coll, a->name, NODE_TIMEOUT_MS, -1, res, &wall);
	for (int n = 0; n < P; n++) {
		bad_bytes += res[n].bad_bytes;
		for (int r = 0; r < RUNS; r++)
			if (res[n].ms[r] > slowest[r])
				slowest[r] = res[n].ms[r];
		if (res[n].ret || res[n].bad_bytes || strcmp(res[n].algo, a->name)) {
			if (!bad_nodes++)
				snprintf(first, sizeof(first), "node %d: %s (%s) ran '%s', %ld bad bytes", n,
					 tc_strerror(res[n].ret), res[n].err, res[n].algo, res[n].bad_bytes);
		}
	}
	tap_ok(!died && !bad_nodes, "%s %s %s (%s): %d calls m=%d on %d processes, every byte matches", fc->label,
	       cname, algo, a->name, RUNS, BLOCK_BYTES, P);
	if (!died && !bad_nodes) {
		int want = offload_expected(ctl), off_bad = 0;

		for (int n = 0; n < P; n++)
			if (res[n].offloaded[0] || res[n].offloaded[RUNS - 1] != want ||
			    (want && (res[n].posts != 1 || res[n].waits != 1 || res[n].regs)))
				if (!off_bad++)
					snprintf(first, sizeof(first), "node %d: offloaded %d then %d, %u posts %u waits %u regs",
						 n, res[n].offloaded[0], res[n].offloaded[RUNS - 1], res[n].posts,
						 res[n].waits, res[n].regs);
		tap_ok(!off_bad, "%s %s %s: first call step by step, then %s", fc->label, cname, a->name,
		       want ? "one program: 1 post + 1 wait" : "step by step again (no offload)");
		if (off_bad)
			tap_diag("%d nodes differ; first: %s", off_bad, first);
	}
	if (died || bad_nodes)
		tap_diag("%d processes died, %d nodes failed, %ld bad bytes; first: %s", died, bad_nodes, bad_bytes,
			 first);
	tap_diag("%s %s %s: slowest node's call: first %.1f ms (builds schedule and plan), second %.1f ms; "
		 "fork to last exit %.1f ms",
		 fc->label, cname, a->name, slowest[0], slowest[RUNS - 1], wall);
	if (!died && !bad_nodes) {
		ret = compare_counters(ctl, id, s, &vr, first, sizeof(first));
		tap_ok(ret == 0, "%s %s %s: module per-link bytes and messages equal the verifier's loads (x %d B x %d calls)",
		       fc->label, cname, a->name, BLOCK_BYTES / s->npackets, RUNS);
		if (ret)
			tap_diag("%d links differ%s%s", ret < 0 ? 0 : ret, ret < 0 ? " (counters ioctl failed)" : "; first: ",
				 ret < 0 ? "" : first);
	}
	munmap(res, P * sizeof(*res));
out_destroy:
	ret = fabric_destroy(ctl, id);
	if (ret)
		tap_diag("%s: destroying fabric %u: %s", fc->label, id, strerror(-ret));
	tc_verify_report_free(&vr);
}

/*
 * Failures on the device: node 0 never joins (the others time out naming the
 * step, port and peer), and a link that is down (the sender's completion
 * fails with -ENOLINK, which tc_alltoall returns).
 */
static void run_failures(int ctl)
{
	const struct fab_case *fc = &cases[1]; /* 4x4 torus */
	struct node_res *res;
	__u32 id = 0, nodes = 0;
	double wall;
	int ret, P;

	for (int which = 0; which < 2; which++) {
		int timeouts = 0, refused = 0, nolink = 0, ok_bad = 0, other = 0, named = 0, died;
		char msg[200] = "", odd[240] = "";

		ret = fabric_create(ctl, fc, &id, &nodes);
		if (ret) {
			tap_ok(0, "%s: TORUS_IOC_FABRIC_CREATE: %s", fc->label, strerror(-ret));
			return;
		}
		P = nodes;
		res = res_map(P);
		if (!res) {
			tap_ok(0, "mmap: %s", strerror(errno));
			fabric_destroy(ctl, id);
			return;
		}
		if (which == 1) {
			struct torus_link_fault lf = {
				.size = sizeof(lf), .flags = TORUS_FAULT_DOWN, .fabric_id = id, .node_id = 0, .port = 0,
			};

			if (ioctl(ctl, TORUS_IOC_LINK_FAULT, &lf)) {
				tap_skip("link fault: TORUS_IOC_LINK_FAULT: %s", strerror(errno));
				goto next;
			}
		}
		died = spawn_nodes(id, P, TC_ALLTOALL, "auto", which == 0 ? 2000 : 5000, which == 0 ? 0 : -1, res, &wall);
		for (int n = which == 0 ? 1 : 0; n < P; n++) {
			if (res[n].ret == -ETIMEDOUT) {
				timeouts++;
				if (strstr(res[n].err, "step") && strstr(res[n].err, "port") && strstr(res[n].err, "node"))
					named++;
			} else if (which == 0 && res[n].ret == -ECONNREFUSED) {
				/*
				 * A node that started late (a loaded host forks 15
				 * processes slowly) can still be sending when peers
				 * that timed out have closed: refused, naming that
				 * peer, is a right answer too.
				 */
				refused++;
				if (strstr(res[n].err, "step") && strstr(res[n].err, "node"))
					named++;
				if (!odd[0])
					snprintf(odd, sizeof(odd), "; node %d: %s", n, res[n].err);
			} else if (res[n].ret == -ENOLINK) {
				nolink++;
				if (!msg[0])
					snprintf(msg, sizeof(msg), "%s", res[n].err);
			} else if (!res[n].ret) {
				ok_bad += !!res[n].bad_bytes;
				if (which == 0 && !odd[0])
					snprintf(odd, sizeof(odd), "; node %d completed without node 0", n);
			} else {
				other++;
				if (!msg[0])
					snprintf(msg, sizeof(msg), "node %d: %s", n, res[n].err);
				if (!odd[0])
					snprintf(odd, sizeof(odd), "; node %d: %s (%s)", n, strerror(-res[n].ret), res[n].err);
			}
			if (which == 0 && res[n].ret == -ETIMEDOUT && !msg[0])
				snprintf(msg, sizeof(msg), "%s", res[n].err);
		}
		if (which == 0)
			tap_ok(!died && timeouts >= 1 && timeouts + refused == P - 1 && named == timeouts + refused && !other,
			       "4x4, node 0 absent: %d of %d nodes fail with -ETIMEDOUT naming step, port and node, %d refused by a peer that had timed out (%.0f ms)%s",
			       timeouts, P - 1, refused, wall, odd);
		else
			tap_ok(!died && nolink >= 1 && !ok_bad && !other && strstr(msg, "port 0"),
			       "4x4, link node 0 port 0 down: %d nodes fail with -ENOLINK naming port 0, %d time out, %d with "
			       "wrong bytes", nolink, timeouts, ok_bad);
		tap_diag("%s", msg);
next:
		munmap(res, P * sizeof(*res));
		ret = fabric_destroy(ctl, id);
		if (ret)
			tap_diag("destroying fabric %u: %s", id, strerror(-ret));
	}
}

/*
 * A block size whose layout does not fit the node's buffer matrix fails
 * before anything is posted (-ENOSPC, naming both sizes), and the
 * communicator's queries match the fabric. Staged (TC_ZCOPY_MIN=off): a
 * zero-copy call keeps only the relayed blocks in the matrix, and those of
 * 64 KiB blocks fit.
 */
static void run_enospc(int ctl)
{
	const struct fab_case *fc = &cases[1]; /* 4x4 torus, default 1 MiB matrix */
	struct tc_comm_attr attr = { .size = sizeof(attr), .transport = TC_TRANSPORT_DEV, .node = 5 };
	int dims[TC_MAX_DIMS], coords[TC_MAX_DIMS], nb[2 * TC_MAX_DIMS];
	size_t m = 64 * 1024;
	unsigned int wrap;
	__u32 id = 0, nodes = 0;
	tc_comm_t *comm;
	char *snd = NULL, *rcv = NULL;
	int ret;

	ret = fabric_create(ctl, fc, &id, &nodes);
	if (ret) {
		tap_ok(0, "%s: TORUS_IOC_FABRIC_CREATE: %s", fc->label, strerror(-ret));
		return;
	}
	attr.fabric_id = id;
	setenv("TC_ZCOPY_MIN", "off", 1);
	ret = tc_comm_create(&attr, &comm);
	unsetenv("TC_ZCOPY_MIN");
	if (ret) {
		tap_ok(0, "4x4 node 5: tc_comm_create: %s", tc_last_error());
		goto out;
	}
	tc_comm_dims(comm, dims, &wrap);
	tc_comm_coords(comm, coords);
	tc_comm_neighbors(comm, nb);
	tap_ok(tc_comm_rank(comm) == 5 && tc_comm_size(comm) == 16 && dims[0] == 4 && dims[1] == 4 && wrap == 3 &&
		       coords[0] == 1 && coords[1] == 1 && nb[0] == 9 && nb[1] == 1 && nb[2] == 6 && nb[3] == 4 &&
		       nb[4] == -1 && tc_comm_port_model(comm) == TC_ALL_PORT &&
		       !strcmp(tc_comm_transport_name(comm), "dev"),
	       "4x4 node 5 over the device: rank, size, dims, wrap, coords, neighbours, port model");
	snd = calloc(16, m);
	rcv = calloc(16, m);
	ret = snd && rcv ? tc_alltoall(comm, snd, rcv, m) : -ENOMEM;
	tap_ok(ret == -ENOSPC && strstr(tc_last_error(), "buffer matrix"),
	       "m=64 KiB staged on a 1 MiB matrix -> -ENOSPC before posting (%s)",
	       tc_last_error());
	free(snd);
	free(rcv);
	tc_comm_destroy(comm);
out:
	ret = fabric_destroy(ctl, id);
	if (ret)
		tap_diag("destroying fabric %u: %s", id, strerror(-ret));
}

int main(void)
{
	const char *env = getenv("COLL_DEV_ALGOS");
	int ctl = open(CTL_PATH, O_RDWR | O_CLOEXEC);

	if (ctl < 0) {
		tap_skip("coll_dev: %s absent (%s): torus.ko not loaded", CTL_PATH, strerror(errno));
		tap_done();
		return 4;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char list[256], *save = NULL;

		snprintf(list, sizeof(list), "%s", env ? env : "auto");
		if (!env) {
			strncat(list, " ", sizeof(list) - strlen(list) - 1);
			strncat(list, cases[i].seed_algo, sizeof(list) - strlen(list) - 1);
		}
		for (char *t = strtok_r(list, " ,", &save); t; t = strtok_r(NULL, " ,", &save))
			run_case(ctl, &cases[i], TC_ALLTOALL, t, !env || !strcmp(t, "auto"));
		run_case(ctl, &cases[i], TC_ALLGATHER, getenv("COLL_DEV_AG_ALGO") ? getenv("COLL_DEV_AG_ALGO") : "auto",
			 !getenv("COLL_DEV_AG_ALGO"));
	}
	run_enospc(ctl);
	run_failures(ctl);
	close(ctl);
	return tap_done();
}
