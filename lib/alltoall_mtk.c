// SPDX-License-Identifier: LGPL-2.1-or-later
/* one-port k-D (003 Sec. 6). Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "mtk: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_mtk = {
	.name = "mtk",
	.coll = TC_COLL_ALLTOALL,
	.summary = "one-port k-D (003 Sec. 6)",
	.build = build,
};
