/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Build, verify and price a schedule in one streamed pass (core/check.c). */
#ifndef TC_CHECK_H
#define TC_CHECK_H

#include "core/cost.h"
#include "core/verify.h"

/*
 * Build, verify and price algo's schedule for shape without keeping it: a
 * streamed build whose sink runs tc_verify_step and tc_cost_step. Fills *r
 * as tc_verify does and *cost, time_us[k] as tc_cost_eval_sizes(p, sizes,
 * nsizes) does (p may be NULL with nsizes 0), and *nsteps / *nblks (may
 * be NULL) with the schedule's steps and block moves. Returns what
 * tc_verify returns (0, -EPROTO with r->first_violation; cost and r's link
 * totals filled either way), or the build's error (with *why) or -ENOMEM
 * etc.; always call tc_verify_report_free(r).
 */
int tc_sched_check_streamed(const struct tc_algo *algo, const struct tc_shape *shape, const struct tc_cost_params *p,
			    const size_t *sizes, int nsizes, double *time_us, struct tc_verify_report *r,
			    struct tc_cost *cost, uint32_t *nsteps, uint64_t *nblks, const char **why);

#endif /* TC_CHECK_H */
