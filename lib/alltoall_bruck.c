// SPDX-License-Identifier: LGPL-2.1-or-later
/* baseline: Bruck's log-step exchange. Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "bruck: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_bruck_a2a = {
	.name = "bruck",
	.coll = TC_COLL_ALLTOALL,
	.summary = "baseline: Bruck's log-step exchange",
	.build = build,
};
