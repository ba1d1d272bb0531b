/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The choice of algorithm and the schedule cache, above the algorithms. */
#ifndef TC_SELECT_H
#define TC_SELECT_H

#include "algorithms/algos.h"
#include "core/cost.h"

/* auto.c: the library's choice for shape and block size (name "auto"). */
const struct tc_algo *tc_algo_auto(enum tc_coll coll, const struct tc_shape *shape, size_t block_bytes);

/* cache.c: schedules built once per (coll, algo, shape), shared by every
 * communicator of the process; *why says why a build failed. */
int tc_sched_get(enum tc_coll coll, const struct tc_algo *algo, const struct tc_shape *shape,
		 const struct tc_sched **out, const char **why);

#endif /* TC_SELECT_H */
