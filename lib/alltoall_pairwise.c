// SPDX-License-Identifier: LGPL-2.1-or-later
/* baseline: pairwise exchange, step i to rank+i. Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "pairwise: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_pairwise = {
	.name = "pairwise",
	.coll = TC_COLL_ALLTOALL,
	.summary = "baseline: pairwise exchange, step i to rank+i",
	.build = build,
};
