// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one step runner: how every collective (the schedule executor and the
 * everyday collectives alike) gets its buffer, posts a step, waits for it and
 * fails. A failure after transfers were posted marks the communicator broken:
 * they could match the next call's, so every later call gets -EIO with the
 * reason of the first.
 */
#include <errno.h>
#include <stdio.h>

#include "runtime/comm.h"

/* A sub and its root share one transport: a failure of either leaves
 * transfers posted on it, so it breaks both (and the root's other subs,
 * which check their root). */
int tc_comm_usable(const struct tc_comm *comm, const char *name)
{
	if (!comm->broken && comm->root)
		comm = comm->root;
	if (comm->broken)
		return tc_err(-EIO, "%s: communicator unusable after an earlier failure (%s); destroy it", name,
			      comm->broken_why);
	return 0;
}

int tc_comm_buffer(struct tc_comm *comm, const char *name, size_t bytes, char **base)
{
	void *vbase = NULL;
	int ret = comm->tp.ops->buffer(&comm->tp, bytes ? bytes : 64, &vbase);

	if (ret)
		return tc_err(ret, "%s: %s buffer of %zu bytes: %s", name, comm->tp.ops->name, bytes,
			      *tc_last_error() ? tc_last_error() : tc_strerror(ret));
	*base = vbase;
	return 0;
}

int tc_comm_fail(struct tc_comm *comm, int ret)
{
	comm->broken = ret;
	snprintf(comm->broken_why, sizeof(comm->broken_why), "%s", tc_last_error());
	if (comm->root && !comm->root->broken) {
		comm->root->broken = ret;
		snprintf(comm->root->broken_why, sizeof(comm->root->broken_why), "in a sub-communicator: %.130s",
			 tc_last_error());
	}
	return ret;
}

int tc_step_exec(struct tc_comm *comm, const char *name, const char *what, unsigned int step,
		 const struct tc_xfer *x, unsigned int n)
{
	struct tc_wait_err we = { .port = -1, .peer = -1 };
	int ret;

	if (!n)
		return 0;
	ret = comm->tp.ops->post(&comm->tp, x, n);
	if (ret) {
		tc_err(ret, "%s: %s step %u: posting %u transfers failed: %s", name, what, step, n,
		       *tc_last_error() ? tc_last_error() : tc_strerror(ret));
		return tc_comm_fail(comm, ret);
	}
	ret = comm->tp.ops->wait(&comm->tp, n, comm->tp.timeout_ms, &we);
	if (ret && we.detail) /* a transport without ports names the peer's host and what was missing */
		tc_err(ret, "%s: %s step %u: %s node %d (%s)%s%s", name, what, step,
		       ret == -ETIMEDOUT ? "timed out waiting for" : "transfer failed with", we.peer, we.detail,
		       ret == -ETIMEDOUT ? "" : ": ", ret == -ETIMEDOUT ? "" : tc_strerror(ret));
	else if (ret == -ETIMEDOUT)
		tc_err(ret, "%s: %s step %u: timed out after %d ms waiting for node %d on port %d", name, what, step,
		       comm->tp.timeout_ms, we.peer, we.port);
	else if (ret)
		tc_err(ret, "%s: %s step %u: transfer with node %d on port %d failed: %s", name, what, step, we.peer,
		       we.port, tc_strerror(ret));
	return ret ? tc_comm_fail(comm, ret) : 0;
}
