// SPDX-License-Identifier: LGPL-2.1-or-later
/* all-port 2D any parity, one-hop shortest-path, reaches the bisection bound. Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "opt2d: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_opt2d = {
	.name = "opt2d",
	.coll = TC_COLL_ALLTOALL,
	.summary = "all-port 2D any parity, one-hop shortest-path, reaches the bisection bound",
	.build = build,
};
