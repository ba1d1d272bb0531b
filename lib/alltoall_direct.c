// SPDX-License-Identifier: LGPL-2.1-or-later
/* baseline: every block sent directly, routed dimension-ordered. Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "direct: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_direct = {
	.name = "direct",
	.coll = TC_COLL_ALLTOALL,
	.summary = "baseline: every block sent directly, routed dimension-ordered",
	.build = build,
};
