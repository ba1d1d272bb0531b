/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef TC_VERIFY_H
#define TC_VERIFY_H

#include "core/sched.h"

/* The verifier (core/verify.c) */
struct tc_verify_report {
	int ok;
	char first_violation[256]; /* one line, empty when ok */
	int64_t max_link_blocks;   /* most blocks any directed link carries over the whole schedule */
	/* Per directed link (node*2*ndims + port) total blocks carried, length
	 * nodes*2*ndims; allocated by tc_verify, freed by tc_verify_report_free. */
	int64_t *link_blocks;
	int64_t *link_msgs;
};
/* Returns 0 when the schedule is correct (r->ok = 1), -EPROTO with
 * r->first_violation set when it is not (link totals still filled), or
 * -EINVAL / -ENOMEM / -EOVERFLOW (r freed). Always call tc_verify_report_free(). */
int tc_verify(const struct tc_sched *s, struct tc_verify_report *r);
void tc_verify_report_free(struct tc_verify_report *r);
/*
 * The verifier one step at a time; tc_verify() is begin, a step per step of
 * the finished schedule, end. begin reads s's shape, coll, claims, algo and
 * npackets only (not its steps) and fills r as tc_verify does; steps must
 * come in increasing step order. step returns 0 (a violation is recorded,
 * not returned) or -EINVAL / -EOVERFLOW; end frees the state and returns
 * what tc_verify returns (with r->ok, r->first_violation, the link totals).
 * An error of begin frees everything (*out NULL, r freed); after an error of
 * step, call end (it frees; ignore its verdict) and tc_verify_report_free(r).
 */
struct tc_verify_state;
int tc_verify_begin(const struct tc_sched *s, struct tc_verify_report *r, struct tc_verify_state **out);
int tc_verify_step(struct tc_verify_state *v, const struct tc_step_view *st);
int tc_verify_end(struct tc_verify_state *v);
/*
 * As tc_verify_begin, but the steps are checked for their links only (loads,
 * contention, one-port, one hop), not for the blocks they carry: the whole
 * schedule's messages of a translation-invariant schedule, whose blocks are
 * checked on the cell's (core/part_sym.c). A source-restricted schedule
 * (tc_sched_build_sources) given to tc_verify checks the blocks of its kept
 * origins only (alltoall).
 */
int tc_verify_begin_links(const struct tc_sched *s, struct tc_verify_report *r, struct tc_verify_state **out);

#endif /* TC_VERIFY_H */
