// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The device transport's handshake check (lib/transport/dev.c), through the
 * real tc_comm_create path and without the module: this program defines
 * open() and ioctl() itself, which the statically linked library then calls
 * (the executable's definitions win over the C library's). open() of
 * /dev/torus<F>n<N> gives a memfd standing in for the node (the library maps
 * it as the buffer matrix); ioctl() on it answers the handshake with the
 * module this test plays, and the node and fabric queries for a 4-node ring.
 * Every other file and ioctl goes to the kernel.
 *
 * The library checks the commands and features it needs, not the ABI
 * version (the ABI grows by size, commands and feature bits), so:
 *  - a module of ABI 1 with what the library needs serves it;
 *  - a newer module (ABI 2, and 0xffff) with every feature bit and command
 *    bit set, unknown ones included, serves it too, and the optional
 *    features it uses are seen (registration: max_reg_bytes; the fabric
 *    query's timing, or the defaults from a module without that command);
 *  - ABI 0 is refused (-EPROTO), and so is a module that lacks explicit
 *    routes or the post and completion-wait commands (-EOPNOTSUPP naming
 *    each missing one);
 *  - the handshake the library sends has size sizeof(struct
 *    torus_handshake) and flags 0.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <uapi/torus.h>

#include "runtime/comm.h"
#include "tap.h"

#define FAKE_NODES 4
#define FAKE_MATRIX (64u << 10)
#define CMD_BIT(c) (1ull << ((c) - TORUS_CMD_BASE))
#define NEEDED_IOCTLS (CMD_BIT(TORUS_CMD_NODE_QUERY) | CMD_BIT(TORUS_CMD_POST) | CMD_BIT(TORUS_CMD_CQ_WAIT))

/* The module this test plays. */
static struct {
	int fd;			   /* the node's file, -1 when none is open */
	unsigned int node;	   /* opened node */
	struct torus_handshake hs; /* the answer (size and flags are the caller's) */
	int hs_errno;		   /* fail the handshake with this errno */
	uint32_t seen_size, seen_flags;
	int handshakes;
} fake = { .fd = -1 };

int open(const char *path, int flags, ...)
{
	unsigned int f, n;
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (sscanf(path, "/dev/" TORUS_NODE_FMT, &f, &n) == 2 && f == 0 && n < FAKE_NODES) {
		fake.fd = memfd_create("fake-torus-node", MFD_CLOEXEC);
		if (fake.fd < 0 || ftruncate(fake.fd, FAKE_MATRIX))
			return -1;
		fake.node = n;
		return fake.fd;
	}
	return syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != fake.fd || fd < 0)
		return syscall(SYS_ioctl, fd, req, arg);
	if (req == TORUS_IOC_HANDSHAKE) {
		struct torus_handshake *h = arg;
		uint32_t size = h->size < sizeof(fake.hs) ? h->size : sizeof(fake.hs);

		fake.handshakes++;
		fake.seen_size = h->size;
		fake.seen_flags = h->flags;
		if (fake.hs_errno) {
			errno = fake.hs_errno;
			return -1;
		}
		memcpy(h, &fake.hs, size);
		h->size = size;
		return 0;
	}
	if (req == TORUS_IOC_NODE_QUERY) {
		struct torus_node_query *q = arg;

		memset(q, 0, sizeof(*q));
		q->size = sizeof(*q);
		q->node_id = fake.node;
		q->ndims = 1;
		q->wrap_mask = 1;
		q->dims[0] = FAKE_NODES;
		q->coords[0] = fake.node;
		for (int p = 0; p < TORUS_MAX_PORTS; p++)
			q->neighbors[p] = TORUS_NO_NODE;
		q->neighbors[0] = (fake.node + 1) % FAKE_NODES;
		q->neighbors[1] = (fake.node + FAKE_NODES - 1) % FAKE_NODES;
		q->matrix_bytes = FAKE_MATRIX;
		return 0;
	}
	if (req == TORUS_IOC_FABRIC_QUERY) {
		struct torus_fabric_query *q = arg;

		memset(q, 0, sizeof(*q));
		q->size = sizeof(*q);
		q->ndims = 1;
		q->wrap_mask = 1;
		q->dims[0] = FAKE_NODES;
		q->nodes = FAKE_NODES;
		q->matrix_bytes = FAKE_MATRIX;
		q->ts_ns = 7000;
		q->tw_ps = 3000;
		q->hop_ns = 40;
		return 0;
	}
	errno = ENOTTY;
	return -1;
}

static void module(uint32_t abi, uint64_t features, uint64_t ioctls)
{
	memset(&fake.hs, 0, sizeof(fake.hs));
	fake.hs.size = sizeof(fake.hs);
	fake.hs.abi_version = abi;
	fake.hs.max_dims = TORUS_MAX_DIMS;
	fake.hs.features = features;
	fake.hs.ioctls = ioctls;
	fake.hs.max_nodes = 1024;
	fake.hs.max_dim_size = 256;
	fake.hs.max_segs = 16;
	fake.hs.max_batch = 64;
	fake.hs.max_matrix_bytes = 1u << 30;
	fake.hs.max_mrs = 64;
	fake.hs.max_mr_bytes = 1u << 20;
	fake.hs_errno = 0;
	fake.handshakes = 0;
}

static int create(tc_comm_t **comm)
{
	struct tc_comm_attr a = { .size = sizeof(a), .transport = TC_TRANSPORT_DEV, .fabric_id = 0, .node = 2,
				  .clock = TC_CLOCK_FABRIC };

	*comm = NULL;
	return tc_comm_create(&a, comm);
}

/* A module that has what the library needs serves it, whatever its version. */
static void check_serves(const char *what, uint32_t abi, uint64_t features, uint64_t ioctls, uint64_t want_reg)
{
	/* the fabric's timing where the module answers the fabric query, else the defaults */
	double want_ts = ioctls & CMD_BIT(TORUS_CMD_FABRIC_QUERY) ? 7.0 : TC_COST_DEFAULT_TS_US;
	tc_comm_t *comm;
	int ret;

	module(abi, features, ioctls);
	ret = create(&comm);
	tap_ok(!ret && comm && fake.handshakes == 1, "%s: ABI %u, features %#llx, commands %#llx: served (%d%s%s)", what,
	       abi, (unsigned long long)features, (unsigned long long)ioctls, ret, ret ? ": " : "",
	       ret ? tc_last_error() : "");
	if (ret || !comm)
		return;
	tap_ok(tc_comm_size(comm) == FAKE_NODES && tc_comm_rank(comm) == 2 && comm->tp.cost.ts_us == want_ts &&
		       comm->tp.max_reg_bytes == want_reg,
	       "%s: the node and fabric queries read (size %d, rank %d, ts %.1f us), registration %s (max %llu B)",
	       what, tc_comm_size(comm), tc_comm_rank(comm), comm->tp.cost.ts_us, want_reg ? "on" : "off",
	       (unsigned long long)comm->tp.max_reg_bytes);
	tap_ok(fake.seen_size == sizeof(struct torus_handshake) && fake.seen_flags == 0,
	       "%s: the library's handshake has size %u (sizeof %zu) and flags %u", what, fake.seen_size,
	       sizeof(struct torus_handshake), fake.seen_flags);
	tc_comm_destroy(comm);
	fake.fd = -1;
}

static void check_refuses(const char *what, uint32_t abi, uint64_t features, uint64_t ioctls, int want,
			  const char *const *names)
{
	tc_comm_t *comm;
	int ret, named = 1;

	module(abi, features, ioctls);
	ret = create(&comm);
	for (int i = 0; names[i]; i++)
		named &= strstr(tc_last_error(), names[i]) != NULL;
	tap_ok(ret == want && !comm && named, "%s -> %s (%d: %s)", what, tc_strerror(want), ret, tc_last_error());
	if (comm)
		tc_comm_destroy(comm);
	fake.fd = -1;
}

int main(void)
{
	const uint64_t need_feat = TORUS_FEAT_ROUTE;
	const uint64_t all_known = TORUS_FEAT_ONE_PORT | TORUS_FEAT_ROUTE | TORUS_FEAT_LINK_FAULT | TORUS_FEAT_EPOLL |
				   TORUS_FEAT_MR | TORUS_FEAT_CQ_WAKE_ONCE | TORUS_FEAT_SEND_SYNC;
	const uint64_t mr_ioctls = CMD_BIT(TORUS_CMD_MR_REG) | CMD_BIT(TORUS_CMD_MR_DEREG);
	const uint64_t all_ioctls = CMD_BIT(TORUS_CMD_LAST) - CMD_BIT(TORUS_CMD_BASE);
	tc_comm_t *comm;
	int ret;

	check_serves("the first ABI, only what is needed", 1, need_feat, NEEDED_IOCTLS, 0);
	check_serves("the first ABI, every feature it has", 1, all_known, all_ioctls, 1u << 20);
	check_serves("a newer module: ABI 2, unknown feature and command bits", 2, all_known | (1ull << 7) | (1ull << 40),
		     all_ioctls | CMD_BIT(TORUS_CMD_LAST) | (1ull << 40), 1u << 20);
	check_serves("a much newer module: ABI 0xffff, every bit set", 0xffff, ~0ull, ~0ull, 1u << 20);
	check_serves("a newer module without registration", 3, need_feat | (1ull << 9), NEEDED_IOCTLS | mr_ioctls, 0);

	check_refuses("ABI 0", 0, all_known, all_ioctls, -EPROTO, (const char *const[]){ "ABI version 0", NULL });
	check_refuses("a newer module without explicit routes", 2, all_known & ~TORUS_FEAT_ROUTE, all_ioctls,
		      -EOPNOTSUPP, (const char *const[]){ "TORUS_FEAT_ROUTE", "ABI version 2", NULL });
	check_refuses("no post and no completion wait", 1, all_known,
		      all_ioctls & ~(CMD_BIT(TORUS_CMD_POST) | CMD_BIT(TORUS_CMD_CQ_WAIT)), -EOPNOTSUPP,
		      (const char *const[]){ "TORUS_IOC_POST", "TORUS_IOC_CQ_WAIT", NULL });
	check_refuses("no node query", 1, all_known, all_ioctls & ~CMD_BIT(TORUS_CMD_NODE_QUERY), -EOPNOTSUPP,
		      (const char *const[]){ "TORUS_IOC_NODE_QUERY", NULL });

	module(1, all_known, all_ioctls);
	fake.hs_errno = ENOTTY;
	ret = create(&comm);
	tap_ok(ret == -ENOTTY && !comm && strstr(tc_last_error(), "handshake failed"),
	       "a handshake the node refuses -> its errno (%d: %s)", ret, tc_last_error());
	fake.fd = -1;
	return tap_done();
}
