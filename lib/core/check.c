// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Build, verify and price an algorithm's schedule in one streamed pass
 * (tc_sched_check_streamed): the verifier and the cost model as the sink of
 * a streamed build, so a schedule too large to keep is still checked whole.
 */
#include <stdio.h>
#include <string.h>

#include "core/check.h"

/* tc_sched_check_streamed: the verifier and the cost model as a sink. */
struct check_ctx {
	const struct tc_cost_params *p;
	const size_t *sizes;
	int nsizes;
	struct tc_verify_report *r;
	struct tc_verify_state *v;
	struct tc_cost_state *c;
	int began, err;
};

static int check_begin(struct check_ctx *x, const struct tc_sched *s)
{
	int err = tc_verify_begin(s, x->r, &x->v);

	if (!err)
		err = tc_cost_begin(s, x->p, x->sizes, x->nsizes, &x->c);
	x->began = 1;
	return err;
}

static int check_sink(void *arg, const struct tc_sched *s, const struct tc_step_view *view)
{
	struct check_ctx *x = arg;
	int err = x->began ? 0 : check_begin(x, s);

	if (!err)
		err = tc_verify_step(x->v, view);
	if (!err)
		err = tc_cost_step(x->c, view);
	if (err)
		x->err = err;
	return err;
}

int tc_sched_check_streamed(const struct tc_algo *algo, const struct tc_shape *shape, const struct tc_cost_params *p,
			    const size_t *sizes, int nsizes, double *time_us, struct tc_verify_report *r,
			    struct tc_cost *cost, uint32_t *nsteps, uint64_t *nblks, const char **why)
{
	struct check_ctx x = { .p = p, .sizes = sizes, .nsizes = nsizes, .r = r };
	struct tc_sched *s = NULL;
	char msg[256];
	int err, verr;

	memset(r, 0, sizeof(*r));
	err = tc_sched_build_streamed(algo, shape, check_sink, &x, &s, why);
	if (!err && !x.began) /* no steps at all */
		err = check_begin(&x, s);
	if (err) {
		if (x.err)
			*why = "streamed check: the verifier or the cost model failed";
		snprintf(msg, sizeof(msg), "%s", tc_last_error());
		if (x.v)
			tc_verify_end(x.v); /* frees; its verdict is void */
		if (x.c)
			tc_cost_end(x.c, NULL, NULL, NULL);
		tc_verify_report_free(r);
		tc_sched_free(s);
		return tc_err(err, "%s", msg);
	}
	if (nsteps)
		*nsteps = s->nsteps;
	if (nblks)
		tc_sched_streamed_totals(s, NULL, nblks);
	err = tc_cost_end(x.c, s, time_us, cost);
	verr = tc_verify_end(x.v);
	tc_sched_free(s);
	return verr ? verr : err;
}
