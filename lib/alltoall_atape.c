// SPDX-License-Identifier: LGPL-2.1-or-later
/* Latin-square direct exchange, each step a permutation (001 ATAPE). Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "atape: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_atape = {
	.name = "atape",
	.coll = TC_COLL_ALLTOALL,
	.summary = "Latin-square direct exchange, each step a permutation (001 ATAPE)",
	.build = build,
};
