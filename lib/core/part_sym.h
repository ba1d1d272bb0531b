/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One node's part of a translation-invariant schedule, from the blocks of
 * one fundamental cell (core/part_sym.c says how and when it is exact).
 */
#ifndef TC_PART_SYM_H
#define TC_PART_SYM_H

#include "core/part.h"

/*
 * Generate p's node's part of algo's schedule, which must commute with the
 * translations by multiples of mod[d] in every dimension and support
 * tc_sched_build_sources. Sets p's cite, claims and npackets and finishes
 * it. 0, or the builder's -EOPNOTSUPP with *why, or another -errno.
 */
int tc_part_translate(struct tc_part *p, const struct tc_algo *algo, const int *mod, const char **why);

#endif /* TC_PART_SYM_H */
