// SPDX-License-Identifier: LGPL-2.1-or-later
/* 1-packet gossip on partial Hamiltonian cycles (002 Thm 2-4). Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "gossip-ham1: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_gossip_ham1 = {
	.name = "gossip-ham1",
	.coll = TC_COLL_ALLGATHER,
	.summary = "1-packet gossip on partial Hamiltonian cycles (002 Thm 2-4)",
	.build = build,
};
