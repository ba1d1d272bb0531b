// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Complete exchange on an all-port ring: Algorithm AR (Liu et al., All-Port Tori, Sec. III-A,
 * Fig. 2; Lemma 2: p/2 startups, ceil(p^2/8) blocks of transmission), run on
 * the all-port ring engine (engine/allport.c; engine/allport.h has the stages
 * and the tie rules).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/algos.h"
#include "algorithms/engine/allport.h"
#include "core/part_sym.h"

static int ar_dim0(void *ctx, int node, int32_t a, int32_t b)
{
	(void)ctx;
	(void)node;
	(void)a;
	(void)b;
	return 0;
}

int tc_ar_build_ring(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const int stride[TC_MAX_DIMS] = { 1 };
	struct tc_sched *s;
	struct tc_ap ap;
	int p, err;

	if (shape->ndims != 1 || !(shape->wrap_mask & 1)) {
		*why = "ar: needs a ring (1-D torus); use opt2d or pad for other shapes";
		return -EOPNOTSUPP;
	}
	if (shape->one_port) {
		*why = "ar: all-port algorithm; use ar1 on one-port rings";
		return -EOPNOTSUPP;
	}
	p = shape->dims[0];
	if (p % 2) {
		*why = "ar: ring size must be even (Liu et al., All-Port Tori, Sec. III); use opt2d or pad for odd rings";
		return -EOPNOTSUPP;
	}
	s = tc_sched_new(shape, TC_ALLTOALL, "ar", "Liu et al., All-Port Tori, Sec. III-A, Fig. 2 (Algorithm AR), Lemma 2",
			 TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST);
	if (!s)
		return -ENOMEM;
	err = tc_ap_init(&ap, s);
	if (err)
		return tc_sched_done(s, err, out, why, "ar: internal error building the schedule");
	for (int n = 0; n < p && !err; n++)
		for (int t = 0; t < p && !err && tc_sched_src_kept(s, n); t++)
			if (t != n)
				err = tc_ap_hold(&ap, n, n, t);
	if (!err)
		err = tc_ap_phase(&ap, stride, NULL, 0, 0, ar_dim0, NULL);
	if (err >= 0)
		err = tc_ap_check_done(&ap);
	tc_ap_free(&ap);
	return tc_sched_done(s, err, out, why, "ar: internal error building the schedule");
}

static int build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	return tc_ar_build_ring(shape, out, why);
}

/*
 * Node n's part: the schedule commutes with the translations by 2 (a node's
 * primary direction is its parity), and the engine routes each block by
 * its own offset alone, so it comes from the blocks of nodes 0 and 1.
 */
static int part(struct tc_part *p, const char **why)
{
	return tc_part_translate(p, &tc_algo_ar, why);
}

const struct tc_algo tc_algo_ar = {
	.name = "ar",
	.coll = TC_ALLTOALL,
	.summary = "all-port ring complete exchange (Liu et al., All-Port Tori, Sec. III-A, Algorithm AR): ceil(p^2/8) blocks in p/2 steps",
	.build = build,
	.part = part,
	.sym_mod = { 2 },
};
