/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How the ranks of a verbs job find each other: rank, size and one
 * allgather of each rank's connection data, from the launcher through PMIx
 * or from the caller's own out-of-band allgather (tc_comm_attr.oob_*).
 */
#ifndef TC_BOOTSTRAP_H
#define TC_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

struct tc_boot {
	int rank, size;
	uint32_t seq; /* communicators this process made before: the PMIx key */
	int (*oob_allgather)(void *ctx, const void *sendbuf, void *recvbuf, size_t bytes);
	void *oob_ctx;
};

/* Fill b from attr's out-of-band hook, else from PMIx (initialised once per
 * process, finalised at exit). A process with no launcher: -ENOTCONN and a
 * line that says how to start it. */
int tc_boot_open(struct tc_boot *b, const struct tc_comm_attr *attr);
/* Every rank's bytes of connection data into all[] (size * bytes, rank
 * order). Every rank of the job must call it once per communicator; the PMIx
 * fence gives up after timeout_ms. */
int tc_boot_allgather(const struct tc_boot *b, const void *mine, void *all, size_t bytes, int timeout_ms);

#endif /* TC_BOOTSTRAP_H */
