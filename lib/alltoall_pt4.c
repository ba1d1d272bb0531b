// SPDX-License-Identifier: LGPL-2.1-or-later
/* one-port 4D as a product of 2D tori (003 Sec. 4). Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "pt4: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_pt4 = {
	.name = "pt4",
	.coll = TC_COLL_ALLTOALL,
	.summary = "one-port 4D as a product of 2D tori (003 Sec. 4)",
	.build = build,
};
