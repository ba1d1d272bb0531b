// SPDX-License-Identifier: LGPL-2.1-or-later
/* one-port 2D, odd/even partition (003 Sec. 3). Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "at2-1p: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_at2_1p = {
	.name = "at2-1p",
	.coll = TC_COLL_ALLTOALL,
	.summary = "one-port 2D, odd/even partition (003 Sec. 3)",
	.build = build,
};
