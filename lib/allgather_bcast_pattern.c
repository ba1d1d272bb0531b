// SPDX-License-Identifier: LGPL-2.1-or-later
/* broadcast pattern, all-port 2D mesh/torus (001). Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "bcast-pattern: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_bcast_pattern = {
	.name = "bcast-pattern",
	.coll = TC_COLL_ALLGATHER,
	.summary = "broadcast pattern, all-port 2D mesh/torus (001)",
	.build = build,
};
