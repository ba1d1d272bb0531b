// SPDX-License-Identifier: LGPL-2.1-or-later
/* one-port 3D, (x+y+z) mod 3 groups (003 Sec. 5). Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "mt3: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_mt3 = {
	.name = "mt3",
	.coll = TC_COLL_ALLTOALL,
	.summary = "one-port 3D, (x+y+z) mod 3 groups (003 Sec. 5)",
	.build = build,
};
