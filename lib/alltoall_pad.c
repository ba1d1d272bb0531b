// SPDX-License-Identifier: LGPL-2.1-or-later
/* AR/AT2 on the shape padded with imaginary nodes (000 Sec. 4). Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "pad: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_pad = {
	.name = "pad",
	.coll = TC_COLL_ALLTOALL,
	.summary = "AR/AT2 on the shape padded with imaginary nodes (000 Sec. 4)",
	.build = build,
};
