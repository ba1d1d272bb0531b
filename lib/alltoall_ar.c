// SPDX-License-Identifier: LGPL-2.1-or-later
/* all-port ring complete exchange (000 Sec. 3.1, Algorithm AR). Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "ar: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_ar = {
	.name = "ar",
	.coll = TC_COLL_ALLTOALL,
	.summary = "all-port ring complete exchange (000 Sec. 3.1, Algorithm AR)",
	.build = build,
};
