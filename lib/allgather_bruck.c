// SPDX-License-Identifier: LGPL-2.1-or-later
/* baseline: Bruck / recursive doubling allgather. Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "bruck: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_bruck_ag = {
	.name = "bruck",
	.coll = TC_COLL_ALLGATHER,
	.summary = "baseline: Bruck / recursive doubling allgather",
	.build = build,
};
