// SPDX-License-Identifier: GPL-2.0
/*
 * torus-bench on the device: the fabric's timing parameters and its virtual
 * makespan, read from /dev/torus-ctl through the ioctl ABI
 * (include/uapi/torus.h, TORUS_IOC_FABRIC_QUERY). The library has no call
 * for them; this is the only file of the tool that speaks to the module.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <uapi/torus.h>

#include "bench.h"

/*
 * Virtual makespan of the device fabric (the latest virtual end time of any
 * message). It is read, never reset: a reset while another rank still has
 * completions to reap would let their old end times push its clock back up.
 */
int makespan(struct bench *b, double *us)
{
	struct torus_fabric_query q;

	if (b->ctl_fd < 0)
		return -ENODEV;
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.fabric_id = b->fabric_id;
	if (ioctl(b->ctl_fd, TORUS_IOC_FABRIC_QUERY, &q))
		return -errno;
	*us = q.makespan_ns / 1e3;
	return 0;
}

/* A query of the fabric's makespan, resetting it and every clock to 0 with reset. */
int fabric_span(struct bench *b, int reset, double *us)
{
	struct torus_fabric_query q = { .size = sizeof(q), .fabric_id = b->fabric_id };

	q.flags = reset ? TORUS_QUERY_RESET_STATS : 0;
	if (ioctl(b->ctl_fd, TORUS_IOC_FABRIC_QUERY, &q))
		return -errno;
	*us = q.makespan_ns / 1e3;
	return 0;
}

/*
 * Dev: open the control device and read the fabric's timing (unless --ts-ns
 * and --tw-ps gave it); b->ctl_fd stays -1 when either fails.
 */
void fabric_open(struct bench *b)
{
	const char *f = getenv("TC_FABRIC");
	struct torus_fabric_query q = { .size = sizeof(q) };

	b->fabric_id = f && *f ? (unsigned int)atoi(f) : 0;
	b->ctl_fd = open("/dev/" TORUS_CTL_NAME, O_RDWR | O_CLOEXEC);
	q.fabric_id = b->fabric_id;
	if (b->ctl_fd >= 0 && !ioctl(b->ctl_fd, TORUS_IOC_FABRIC_QUERY, &q)) {
		if (!b->o.have_ts)
			b->o.ts_ns = q.ts_ns;
		if (!b->o.have_tw)
			b->o.tw_ps = q.tw_ps;
	} else if (b->ctl_fd >= 0) {
		close(b->ctl_fd);
		b->ctl_fd = -1;
	}
}
