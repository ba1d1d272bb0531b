// SPDX-License-Identifier: LGPL-2.1-or-later
/* all-port 2D torus, r,c multiples of 4 (000 Sec. 3.2, Algorithm AT2). Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "at2: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_at2 = {
	.name = "at2",
	.coll = TC_COLL_ALLTOALL,
	.summary = "all-port 2D torus, r,c multiples of 4 (000 Sec. 3.2, Algorithm AT2)",
	.build = build,
};
