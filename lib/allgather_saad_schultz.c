// SPDX-License-Identifier: LGPL-2.1-or-later
/* baseline: Saad-Schultz row-then-column. Placeholder: the implementation replaces this file. */
#include <errno.h>

#include "algos.h"

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	(void)shape;
	(void)out;
	*why = "saad-schultz: not implemented yet";
	return -EOPNOTSUPP;
}

const struct tc_algo tc_algo_saad_schultz = {
	.name = "saad-schultz",
	.coll = TC_COLL_ALLGATHER,
	.summary = "baseline: Saad-Schultz row-then-column",
	.build = build,
};
