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
	uint32_t seq; /* communicators this process made before: the exchange's key */
	uint32_t round; /* allgathers of this communicator so far: the key's second part */
	int (*oob_allgather)(void *ctx, const void *sendbuf, void *recvbuf, size_t bytes);
	void *oob_ctx;
};

/* Fill b from attr's out-of-band hook, else from PMIx (initialised once per
 * process, finalised at exit). A process with no launcher: -ENOTCONN and a
 * line that says how to start it. */
int tc_boot_open(struct tc_boot *b, const struct tc_comm_attr *attr);
/* Every rank's bytes of data into all[] (size * bytes, rank order). Every
 * rank of the job makes the same calls in the same order (the connection
 * data, then the network probe's figures); the PMIx fence gives up after
 * timeout_ms. */
int tc_boot_allgather(struct tc_boot *b, const void *mine, void *all, size_t bytes, int timeout_ms);

#endif /* TC_BOOTSTRAP_H */
