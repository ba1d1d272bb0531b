// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Streamed builds (lib/core/sched.c tc_sched_stream, lib/core/check.c tc_sched_check_streamed):
 * for every alltoall and allgather algorithm of tc_algos[] on every shape of
 * a matrix it supports (rings, 2-D tori, meshes, 3-D and 4-D, one-port), the
 * streamed verifier and cost model report exactly what the whole path
 * (tc_verify, tc_cost_eval_sizes on the kept schedule) reports, field by
 * field: ok, first violation, every link total, steps, block moves,
 * transmission, lockstep, rearrangement, bounds and the time for three
 * block sizes (compared with ==: the same code runs in the same order).
 *
 * Corrupted schedules (a block sent by a node that does not hold it, two
 * messages on one link of a CONTENTION_FREE schedule, a bad route) are
 * replayed by a test builder and caught by the streamed path with the same
 * first violation or error as the whole path; empty steps and messages are
 * dropped and steps renumbered as tc_sched_finish does; the sink sees one
 * step at a time, numbered 0, 1, ...; a builder that returns another
 * schedule than the one streamed and a block added to a streamed step are
 * refused with a reason.
 *
 * No bytes move here: these schedules are the ones test_algos, test_direct,
 * test_allport, test_oneport and test_gossip run on the simulator with every
 * byte checked; this program checks that streaming does not change what the
 * verifier and the cost model say about them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/check.h"
#include "core/sim_run.h"
#include "select/select.h"
#include "tap.h"

struct shape_case {
	const char *dims;
	int mesh, one_port;
	const char *only; /* run only this algorithm (a second shape for it, kept out of the others' time) */
};

static const struct shape_case shapes[] = {
	{ "8", 0, 0, NULL },
	{ "12", 0, 0, NULL },
	{ "7", 0, 0, NULL },
	{ "6", 1, 0, NULL },
	{ "4x4", 0, 0, NULL },
	{ "8x8", 0, 0, NULL },
	{ "5x7", 0, 0, NULL },
	{ "6x6", 0, 0, NULL },
	{ "8x12", 0, 0, NULL },
	{ "4x4", 1, 0, NULL },
	{ "5x4", 1, 0, NULL },
	{ "4x4x4", 0, 0, NULL },
	{ "3x3x3", 0, 0, NULL },
	{ "2x3x4", 0, 0, NULL },
	{ "6x6x6", 0, 0, NULL },
	{ "2x2x2x2", 0, 0, NULL },
	{ "8", 0, 1, NULL },
	{ "7", 0, 1, NULL },
	{ "4x4", 0, 1, NULL },
	{ "8x8", 0, 1, NULL },
	{ "6x6", 0, 1, NULL },
	{ "4x4", 1, 1, NULL },
	{ "3x3x3", 0, 1, NULL },
	{ "6x6x6", 0, 1, NULL },
	{ "4x4x4x4", 0, 1, NULL },
	{ "4x4x8x4", 0, 1, "pt4" },
	{ "5x5", 0, 0, "calvin" },
	{ "15x15", 0, 0, "calvin" },
};

static const size_t sizes[] = { 64, 4096, 65536 };
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))
static const struct tc_cost_params params = { .ts_us = 75, .tw_us_per_byte = 0.011, .rho_us_per_byte = 0.014 };

struct outcome {
	int err;
	char why[256];
	struct tc_verify_report r;
	struct tc_cost c;
	double t[NSIZES];
	uint32_t nsteps;
	uint64_t nblks;
};

/* The whole path: build, keep, verify, price. */
static void whole(const struct tc_algo *a, const struct tc_shape *sh, struct outcome *o)
{
	struct tc_sched *s = NULL;
	const char *why = "";

	memset(o, 0, sizeof(*o));
	o->err = a->build(sh, &s, &why);
	if (o->err) {
		snprintf(o->why, sizeof(o->why), "%s", tc_last_error());
		return;
	}
	o->nsteps = s->nsteps;
	o->nblks = s->nblks;
	o->err = tc_verify(s, &o->r);
	if (o->err == -EPROTO || !o->err) {
		int err = tc_cost_eval_sizes(s, &params, sizes, NSIZES, o->t, &o->c);

		if (err)
			o->err = err;
	}
	if (o->err)
		snprintf(o->why, sizeof(o->why), "%s", tc_last_error());
	tc_sched_free(s);
}

static void streamed(const struct tc_algo *a, const struct tc_shape *sh, struct outcome *o)
{
	const char *why = "";

	memset(o, 0, sizeof(*o));
	o->err = tc_sched_check_streamed(a, sh, &params, sizes, NSIZES, o->t, &o->r, &o->c, &o->nsteps, &o->nblks,
					 &why);
	if (o->err)
		snprintf(o->why, sizeof(o->why), "%s", tc_last_error());
}

static void outcome_free(struct outcome *o)
{
	tc_verify_report_free(&o->r);
}

/* Every field; the first difference, or NULL. */
static const char *differ(const struct tc_shape *sh, const struct outcome *w, const struct outcome *s)
{
	size_t nlinks = (size_t)sh->nodes * 2 * sh->ndims;

	if (w->err != s->err)
		return "return value";
	if (w->err && w->err != -EPROTO)
		return strcmp(w->why, s->why) ? "error reason" : NULL;
	if (w->r.ok != s->r.ok)
		return "ok";
	if (strcmp(w->r.first_violation, s->r.first_violation))
		return "first_violation";
	if (w->r.max_link_blocks != s->r.max_link_blocks)
		return "max_link_blocks";
	if (!w->r.link_blocks || !s->r.link_blocks || !w->r.link_msgs || !s->r.link_msgs)
		return "link totals missing";
	if (memcmp(w->r.link_blocks, s->r.link_blocks, nlinks * sizeof(int64_t)))
		return "link_blocks";
	if (memcmp(w->r.link_msgs, s->r.link_msgs, nlinks * sizeof(int64_t)))
		return "link_msgs";
	if (w->nsteps != s->nsteps)
		return "schedule steps";
	if (w->nblks != s->nblks)
		return "block moves";
	if (w->c.steps != s->c.steps)
		return "cost steps";
	if (w->c.transmission_blocks != s->c.transmission_blocks)
		return "transmission";
	if (w->c.lockstep_blocks != s->c.lockstep_blocks)
		return "lockstep";
	if (w->c.max_link_blocks != s->c.max_link_blocks)
		return "cost max_link_blocks";
	if (w->c.rearranged_blocks != s->c.rearranged_blocks)
		return "rearranged";
	if (w->c.lower_bound_blocks != s->c.lower_bound_blocks || w->c.ratio != s->c.ratio ||
	    w->c.lower_bound_steps != s->c.lower_bound_steps)
		return "bounds";
	for (int k = 0; k < NSIZES; k++)
		if (w->t[k] != s->t[k])
			return "time_us";
	return NULL;
}

static void shape_name(const struct shape_case *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", c->dims, c->mesh ? " mesh" : "", c->one_port ? " one-port" : "");
}

/* Every algorithm on every shape it supports: streamed == whole. */
static void test_all_algorithms(void)
{
	for (int i = 0; tc_algos[i]; i++) {
		const struct tc_algo *a = tc_algos[i];
		int supported = 0, same = 0;
		char first_bad[800] = "";

		if (a->coll != TC_ALLTOALL && a->coll != TC_ALLGATHER)
			continue;
		for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
			struct outcome w, s;
			struct tc_shape sh;
			const char *d;
			char name[64];

			if (shapes[k].only && strcmp(shapes[k].only, a->name))
				continue;
			shape_name(&shapes[k], name, sizeof(name));
			if (tc_shape_parse(&sh, shapes[k].dims, shapes[k].mesh, shapes[k].one_port)) {
				tap_ok(0, "shape %s parses", name);
				continue;
			}
			whole(a, &sh, &w);
			if (w.err == -EOPNOTSUPP) {
				outcome_free(&w);
				continue;
			}
			supported++;
			streamed(a, &sh, &s);
			d = differ(&sh, &w, &s);
			if (w.err || !w.r.ok)
				d = d ? d : "the whole path does not verify";
			if (!d)
				same++;
			else if (!first_bad[0])
				snprintf(first_bad, sizeof(first_bad), "%s: %s differs (whole %d '%s', streamed %d '%s')",
					 name, d, w.err, w.err ? w.why : "", s.err, s.err ? s.why : "");
			outcome_free(&w);
			outcome_free(&s);
		}
		tap_ok(supported >= 2 && same == supported,
		       "%s %s: streamed verify + cost equal the whole path on all %d supported shapes (%d equal)%s%s",
		       a->coll == TC_ALLTOALL ? "alltoall" : "allgather", a->name, supported, same,
		       first_bad[0] ? "; " : "", first_bad);
	}
}

/*
 * A test builder: replays a kept schedule (src) with one corruption, so that
 * the whole path and the streamed path see the same schedule.
 */
enum corrupt {
	C_NONE,
	C_NOT_HELD,	/* a block of step `at` swapped for one its sender does not hold */
	C_LINK,		/* a copy of a step-`at` message on the same links (CONTENTION_FREE) */
	C_EMPTIES,	/* empty steps and empty messages everywhere (must be dropped) */
	C_BAD_ROUTE,	/* a step-`at` message whose route leads elsewhere */
	C_ANOTHER,	/* returns another schedule than the one it created first */
	C_LATE_BLK,	/* adds a block to the last message after beginning the next step */
};

static const struct tc_sched *g_src;
static enum corrupt g_kind;
static uint32_t g_at;

/* A block node src cannot hold at the start of step g_at (see the cases). */
static struct tc_blk not_held(const struct tc_sched *src, const struct tc_msg *m, const struct tc_blk *b)
{
	const int N = src->shape.nodes;
	struct tc_blk x = *b;

	if (src->coll == TC_ALLTOALL) {
		/* step 0: a node holds only its own blocks */
		for (x.a = 0; x.a == m->src || x.a == x.b; x.a++)
			;
	} else {
		/* ring allgather, step 1: the antipode's block is 4 hops away */
		x.a = (m->src + N / 2) % N;
		x.b = 0;
	}
	return x;
}

static int replay_build(const struct tc_shape *shape, struct tc_sched **out, const char **why)
{
	const struct tc_sched *src = g_src;
	struct tc_sched *s, *other = NULL;
	int err = 0;

	s = tc_sched_new(shape, src->coll, src->algo, src->cite, src->claims);
	if (!s)
		return -ENOMEM;
	s->npackets = src->npackets;
	s->rearranged_blocks = src->rearranged_blocks;
	for (uint32_t st = 0; st < src->nsteps && err >= 0; st++) {
		err = tc_sched_step(s);
		if (g_kind == C_EMPTIES && err >= 0)
			err = tc_sched_step(s); /* the previous step stays empty */
		if (g_kind == C_LATE_BLK && st == 1 && err >= 0) {
			err = tc_sched_blk(s, src->blks[0].a, src->blks[0].b);
			break;
		}
		for (uint32_t i = src->step_first[st]; i < src->step_first[st + 1] && err >= 0; i++) {
			const struct tc_msg *m = &src->msgs[i];
			int8_t route[TC_MAX_DIMS];

			memcpy(route, m->route, sizeof(route));
			if (g_kind == C_EMPTIES)
				err = tc_sched_msg(s, m->src, m->dst, route); /* left empty */
			if (g_kind == C_BAD_ROUTE && st == g_at && i == src->step_first[st])
				route[0] = (int8_t)(route[0] ? 0 : 1);
			if (err >= 0)
				err = tc_sched_msg(s, m->src, m->dst, route);
			for (uint32_t k = 0; k < m->nblk && err >= 0; k++) {
				struct tc_blk b = src->blks[m->blk_off + k];

				if (g_kind == C_NOT_HELD && st == g_at && i == src->step_first[st] && !k)
					b = not_held(src, m, &b);
				err = tc_sched_blk(s, b.a, b.b);
			}
			if (g_kind == C_LINK && st == g_at && i == src->step_first[st] && err >= 0) {
				err = tc_sched_msg(s, m->src, m->dst, route);
				if (err >= 0)
					err = tc_sched_blk(s, src->blks[m->blk_off].a, src->blks[m->blk_off].b);
			}
		}
	}
	if (g_kind == C_ANOTHER && err >= 0) {
		other = tc_sched_new(shape, src->coll, src->algo, src->cite, src->claims);
		if (!other)
			err = -ENOMEM;
		tc_sched_done(s, err, &s, why, "replay: failed");
		tc_sched_free(s);
		s = other;
		if (s)
			err = tc_sched_step(s);
	}
	return tc_sched_done(s, err < 0 ? err : 0, out, why, "replay: failed");
}

static const struct tc_algo replay = {
	.name = "replay",
	.coll = TC_ALLTOALL, /* set to the source's collective before use */
	.summary = "test: a kept schedule replayed with one corruption",
	.build = replay_build,
};

/* Build the source whole, replay it corrupted both ways, compare. */
static void corrupted(const char *algo, enum tc_coll_id coll, const char *dims, enum corrupt kind, uint32_t at,
		      int want_err, const char *want, const char *what)
{
	const struct tc_algo *a = tc_algo_find(coll, algo);
	struct tc_algo rp = replay;
	struct tc_sched *src = NULL;
	struct outcome w, s;
	struct tc_shape sh;
	const char *why = "", *d;

	rp.coll = coll;
	if (a && !tc_shape_parse(&sh, dims, 0, 0))
		a->build(&sh, &src, &why);
	if (!tap_ok(src && src->nsteps > at, "%s %s: source schedule builds (%u steps)", algo, dims,
		    src ? src->nsteps : 0))
		return;
	g_src = src;
	g_kind = kind;
	g_at = at;
	whole(&rp, &sh, &w);
	streamed(&rp, &sh, &s);
	d = differ(&sh, &w, &s);
	tap_ok(!d && w.err == want_err && (!want || strstr(want_err == -EPROTO ? w.r.first_violation : w.why, want)),
	       "%s %s, %s: streamed and whole path agree (%s%s) on %d '%s'", algo, dims, what, d ? d : "equal",
	       d ? " differs" : "", w.err, want_err == -EPROTO ? w.r.first_violation : w.why);
	outcome_free(&w);
	outcome_free(&s);
	tc_sched_free(src);
}

/* What the sink sees: one step at a time, numbered 0, 1, ..., its messages' step the same. */
struct seen {
	uint32_t views, bad, next;
	uint64_t msgs, blks;
};

static int count_sink(void *arg, const struct tc_sched *s, const struct tc_step_view *v)
{
	struct seen *x = arg;

	(void)s;
	x->views++;
	if (v->step != x->next++ || !v->nmsgs)
		x->bad++;
	for (uint32_t i = 0; i < v->nmsgs; i++) {
		if (v->msgs[i].step != v->step || !v->msgs[i].nblk)
			x->bad++;
		x->blks += v->msgs[i].nblk;
	}
	x->msgs += v->nmsgs;
	return 0;
}

static void test_views(void)
{
	const struct tc_algo *a = tc_algo_find(TC_ALLTOALL, "at2");
	struct tc_sched *src = NULL, *s = NULL;
	struct tc_algo rp = replay;
	struct seen x = { 0 };
	struct tc_shape sh;
	const char *why = "";
	uint64_t m, b;
	int err;

	tc_shape_parse(&sh, "8x8", 0, 0);
	if (!tap_ok(a && !a->build(&sh, &src, &why), "at2 8x8 builds"))
		return;
	g_src = src;
	g_kind = C_EMPTIES;
	err = tc_sched_build_streamed(&rp, &sh, count_sink, &x, &s, &why);
	tap_ok(!err, "streamed replay with empty steps and messages builds (%d %s)", err, err ? why : "");
	if (s)
		tc_sched_streamed_totals(s, &m, &b);
	tap_ok(!err && s && x.views == src->nsteps && !x.bad && x.msgs == src->nmsgs && x.blks == src->nblks &&
		       s->nsteps == src->nsteps && m == src->nmsgs && b == src->nblks && !s->step_first &&
		       !s->nmsgs,
	       "sink saw %u one-step views (want %u), %u bad, %llu messages (want %u), %llu blocks (want %u); the shell has %u steps, no messages",
	       x.views, src->nsteps, x.bad, (unsigned long long)x.msgs, src->nmsgs, (unsigned long long)x.blks,
	       src->nblks, s ? s->nsteps : 0);
	if (s) {
		struct tc_verify_report r;
		struct tc_cost c;

		tap_ok(tc_verify(s, &r) == -EINVAL && tc_cost_eval(s, NULL, &c) == -EINVAL,
		       "tc_verify and tc_cost_eval refuse the streamed shell");
		tc_verify_report_free(&r);
	}
	tc_sched_free(s);
	s = NULL;

	g_kind = C_ANOTHER;
	err = tc_sched_build_streamed(&rp, &sh, count_sink, &x, &s, &why);
	tap_ok(err == -EOPNOTSUPP && !s && strstr(why, "another schedule"),
	       "a builder returning another schedule than the one streamed is refused (%d: %s)", err, why);

	g_kind = C_LATE_BLK;
	err = tc_sched_build_streamed(&rp, &sh, count_sink, &x, &s, &why);
	tap_ok(err == -EINVAL && !s && strstr(tc_last_error(), "already streamed"),
	       "a block added to a streamed step is refused (%d: %s)", err, tc_last_error());
	tc_sched_free(src);
}

/*
 * pad out of memory: it used to keep its whole base schedule next to the
 * translated one (64x64: 2.8 GB, over torus-model's 2 GiB) and to call the
 * -ENOMEM "internal error translating the padded schedule". Under a small
 * address-space limit (in a child) it must fail with -ENOMEM and say so.
 * 30x30, padded to 32x32: on 32x32 itself no node is imaginary and pad's
 * schedule is at2's, built by at2.
 */
static void test_pad_oom(void)
{
	const struct tc_algo *a = tc_algo_find(TC_ALLTOALL, "pad");
	int fd[2], status = 0;
	char buf[300] = "";
	ssize_t n = 0;
	pid_t pid;

	if (!tap_ok(a && !pipe(fd), "pad found, pipe"))
		return;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* A sanitizer's shadow memory reserves terabytes of address space at
	 * start: a limit of what the process maps plus 16 MiB is below what
	 * is already reserved, so the build fails for the shadow's sake (or
	 * the runtime aborts), not the schedule's. */
	close(fd[0]);
	close(fd[1]);
	(void)status, (void)buf, (void)n, (void)pid;
	tap_skip("pad 30x30 under a 16 MiB margin of address space: not under a sanitizer (its shadow memory "
		 "takes the address space the limit would measure)");
	return;
#endif
	fflush(stdout);
	pid = fork();
	if (!pid) {
		unsigned long pages = 0, dummy;
		struct tc_sched *s = NULL;
		const char *why = "";
		struct tc_shape sh;
		struct rlimit rl;
		FILE *f = fopen("/proc/self/statm", "r");
		int err, len;

		close(fd[0]);
		if (!f || fscanf(f, "%lu %lu", &pages, &dummy) != 2)
			_exit(3);
		fclose(f);
		/* what the process maps now + 16 MiB: the 30x30 schedule alone is about 40 MB */
		rl.rlim_cur = rl.rlim_max = pages * (rlim_t)sysconf(_SC_PAGESIZE) + (16 << 20);
		tc_shape_parse(&sh, "30x30", 0, 0);
		if (setrlimit(RLIMIT_AS, &rl))
			_exit(3);
		err = a->build(&sh, &s, &why);
		len = snprintf(buf, sizeof(buf), "%d %s", err, why ? why : "(null)");
		if (write(fd[1], buf, len) != len)
			_exit(3);
		_exit(0);
	}
	close(fd[1]);
	if (pid > 0) {
		n = read(fd[0], buf, sizeof(buf) - 1);
		waitpid(pid, &status, 0);
	}
	close(fd[0]);
	buf[n > 0 ? n : 0] = 0;
	tap_ok(pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status) && atoi(buf) == -ENOMEM &&
		       strstr(buf, "out of memory"),
	       "pad 30x30 under a 16 MiB margin of address space: -ENOMEM with an out-of-memory reason ('%s')", buf);
}

int main(void)
{
	test_all_algorithms();
	/* at2 claims CONTENTION_FREE | SHORTEST; step 0: nodes hold only their own blocks */
	corrupted("at2", TC_ALLTOALL, "8x8", C_NOT_HELD, 0, -EPROTO, "held by node",
		  "a block sent by a node that does not hold it");
	corrupted("at2", TC_ALLTOALL, "8x8", C_LINK, 3, -EPROTO, "CONTENTION_FREE",
		  "two messages on one link in step 3");
	corrupted("ar", TC_ALLTOALL, "12", C_LINK, 2, -EPROTO, "CONTENTION_FREE",
		  "two messages on one link in step 2");
	corrupted("ring", TC_ALLGATHER, "8", C_NOT_HELD, 1, -EPROTO, "before node",
		  "a block sent before its sender holds it");
	corrupted("pairwise", TC_ALLTOALL, "4x4", C_NONE, 0, 0, NULL, "no corruption");
	corrupted("at2", TC_ALLTOALL, "8x8", C_EMPTIES, 0, 0, NULL, "empty steps and messages dropped");
	corrupted("at2", TC_ALLTOALL, "8x8", C_BAD_ROUTE, 2, -EINVAL, "route", "a route that leads elsewhere");
	test_views();
	test_pad_oom();
	return tap_done();
}
