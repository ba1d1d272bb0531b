// SPDX-License-Identifier: LGPL-2.1-or-later
/* 2-packet gossip on zigzag Hamiltonian cycles (002 Thm 1). Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "gossip-ham2: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_gossip_ham2 = {
	.name = "gossip-ham2",
	.coll = TC_COLL_ALLGATHER,
	.summary = "2-packet gossip on zigzag Hamiltonian cycles (002 Thm 1)",
	.build = build,
};
