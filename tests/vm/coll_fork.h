/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers for the library's device tests (tests/vm/colls_dev.c; usable by
 * tests/vm/coll_dev.c too): create a fabric through /dev/torus-ctl, destroy
 * it once its node files are closed, map shared memory for the per-node
 * results, and fork one process per node running a function with a
 * TC_TRANSPORT_DEV communicator bound to that node.
 */
#ifndef TC_COLL_FORK_H
#define TC_COLL_FORK_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "torus_util.h"
#include "toruscoll.h"

struct cf_fabric {
	const char *label;
	__u32 ndims, wrap, flags;
	__u32 dims[TORUS_MAX_DIMS];
};

/* Create the fabric; *id and *nodes filled. 0 or -errno. */
static inline int cf_create(int ctl, const struct cf_fabric *f, __u32 *id, __u32 *nodes)
{
	struct torus_fabric_create c;
	int ret;

	tv_create_args(&c, f->ndims, f->dims, f->wrap, f->flags);
	c.ts_ns = 1000;
	c.tw_ps = 10;
	c.hop_ns = 10;
	ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_CREATE, &c);
	if (ret)
		return ret;
	*id = c.fabric_id;
	*nodes = c.nodes;
	return 0;
}

/* Destroy; the driver may hold node files briefly after the children exit. */
static inline int cf_destroy(int ctl, __u32 id)
{
	int ret = -EBUSY;

	for (int i = 0; i < 50 && ret == -EBUSY; i++) {
		ret = tv_destroy(ctl, id);
		if (ret == -EBUSY)
			usleep(100000);
	}
	return ret;
}

static inline void *cf_shared(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Fork one process per node of fabric id; each creates a device communicator
 * (timeout_ms per step) and runs fn(comm, arg), exiting with 0 when fn
 * returned 0 and tc_comm_create worked. Returns the number of processes
 * that failed or died; *wall_ms is fork to last exit.
 */
static inline int cf_run(__u32 id, int P, int timeout_ms, int (*fn)(tc_comm_t *comm, void *arg), void *arg,
			 double *wall_ms)
{
	double t0 = tv_now();
	int failed = 0;

	fflush(stdout);
	for (int n = 0; n < P; n++) {
		pid_t pid = fork();

		if (pid < 0) {
			failed++;
			continue;
		}
		if (pid == 0) {
			struct tc_comm_attr attr = {
				.size = sizeof(attr),
				.transport = TC_TRANSPORT_DEV,
				.fabric_id = id,
				.node = n,
				.timeout_ms = timeout_ms,
			};
			tc_comm_t *comm;
			int ret = tc_comm_create(&attr, &comm);

			if (ret) {
				fprintf(stderr, "node %d: tc_comm_create: %s\n", n, tc_last_error());
				_exit(2);
			}
			ret = fn(comm, arg);
			tc_comm_destroy(comm);
			_exit(ret ? 1 : 0);
		}
	}
	for (;;) {
		int st;

		if (wait(&st) < 0)
			break;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
	}
	*wall_ms = (tv_now() - t0) * 1e3;
	return failed;
}

#endif /* TC_COLL_FORK_H */
