// SPDX-License-Identifier: LGPL-2.1-or-later
/* baseline: ring allgather over a Hamiltonian ring. Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "ring: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_ring_ag = {
	.name = "ring",
	.coll = TC_COLL_ALLGATHER,
	.summary = "baseline: ring allgather over a Hamiltonian ring",
	.build = build,
};
