// SPDX-License-Identifier: LGPL-2.1-or-later
/* one-port ring (003 Sec. 2, Algorithm AR1). Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "ar1: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_ar1 = {
	.name = "ar1",
	.coll = TC_COLL_ALLTOALL,
	.summary = "one-port ring (003 Sec. 2, Algorithm AR1)",
	.build = build,
};
