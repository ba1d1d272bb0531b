// SPDX-License-Identifier: LGPL-2.1-or-later
/* all-port k-D: dimension orders by block offset, AR on every ring. Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "allport-kd: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_allport_kd = {
	.name = "allport-kd",
	.coll = TC_COLL_ALLTOALL,
	.summary = "all-port k-D: dimension orders by block offset, AR on every ring",
	.build = build,
};
