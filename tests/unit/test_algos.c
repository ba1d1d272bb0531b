// SPDX-License-Identifier: GPL-2.0
/*
 * Every algorithm of tc_algos[] on a matrix of shapes: build; when the
 * algorithm supports the shape, the schedule must verify and run on the
 * simulator with every received byte equal to the reference. One TAP point
 * per (algorithm, shape); a shape an algorithm refuses (-EOPNOTSUPP) gives a
 * "# diag" line, not a point, unless the shape is one the algorithm must
 * support (must[] below: its domain as the documentation states it, on
 * this matrix), which fails. Then one point per algorithm: it ran, every
 * byte checked, on every shape it must support (so an algorithm cannot
 * silently stop running). Then the automatic choice and the cache.
 * Arguments: an algorithm name, or "auto", runs only that part.
 *
 * Bytes are a hash of origin, destination and byte index (tbyte.h), so a
 * block delivered to the wrong place or in the wrong order is caught.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/check.h"
#include "core/sim_run.h"
#include "select/select.h"
#include "tap.h"
#include "tbyte.h"

struct shape_case {
	const char *dims;
	const char *wrap; /* NULL: torus; "mesh"; or "1,0" per dimension */
	int one_port;
};

static const struct shape_case shapes[] = {
	{ "4", NULL, 0 }, { "5", NULL, 0 }, { "6", NULL, 0 }, { "7", NULL, 0 }, { "8", NULL, 0 },
	{ "9", NULL, 0 }, { "12", NULL, 0 }, { "16", NULL, 0 }, { "32", NULL, 0 }, { "3x3", NULL, 0 },
	{ "4x4", NULL, 0 }, { "4x8", NULL, 0 }, { "8x4", NULL, 0 }, { "5x5", NULL, 0 },
	{ "5x7", NULL, 0 }, { "6x6", NULL, 0 }, { "6x10", NULL, 0 }, { "8x8", NULL, 0 },
	{ "8x12", NULL, 0 }, { "12x12", NULL, 0 }, { "16x16", NULL, 0 }, { "8", "mesh", 0 },
	{ "3x3", "mesh", 0 }, { "4x4", "mesh", 0 }, { "5x7", "mesh", 0 }, { "8x8", "mesh", 0 },
	{ "4x6", "1,0", 0 }, { "3x3x3", NULL, 0 }, { "4x4x4", NULL, 0 }, { "4x4x8", NULL, 0 },
	{ "4x4x4", "mesh", 0 }, { "3x3x3x3", NULL, 0 }, { "4x4x4x4", NULL, 0 }, { "8", NULL, 1 },
	{ "9", NULL, 1 }, { "16", NULL, 1 }, { "4x4", NULL, 1 }, { "4x8", NULL, 1 }, { "5x5", NULL, 1 },
	{ "8x8", NULL, 1 }, { "4x4", "mesh", 1 }, { "4x4x4", NULL, 1 }, { "3x3x3", NULL, 1 },
	{ "4x4x4x4", NULL, 1 },
};

/*
 * The shapes of the matrix each algorithm must build on (tc_shape_str
 * names separated by ';', "*" every shape of the matrix): the domains the
 * documentation gives on this matrix (README's algorithm table and notes:
 * ar on even rings, at2 on 2-D tori with sides multiples of 4, allport-kd
 * on 3-D and 4-D tori, calvin on odd n x n tori, the baselines
 * everywhere, ...). A refusal of one of these fails; a shape an algorithm
 * newly supports is only a new point.
 */
static const struct {
	enum tc_coll_id coll;
	const char *name, *shapes;
} must[] = {
	{ TC_ALLTOALL, "ar", "4;6;8;12;16;32" },
	{ TC_ALLTOALL, "at2", "4x4;4x8;8x4;8x8;8x12;12x12;16x16" },
	{ TC_ALLTOALL, "pad",
		"4;5;6;7;8;9;12;16;32;3x3;4x4;4x8;8x4;5x5;5x7;6x6;6x10;8x8;8x12;12x12;"
		"16x16;8 mesh;3x3 mesh;4x4 mesh;5x7 mesh;8x8 mesh;4x6 wrap=1,0;3x3x3;"
		"4x4x4;4x4x8;4x4x4 mesh;3x3x3x3;4x4x4x4" },
	{ TC_ALLTOALL, "opt2d",
		"4;5;6;7;8;9;12;16;32;3x3;4x4;4x8;8x4;5x5;5x7;6x6;6x10;8x8;8x12;12x12;"
		"16x16;8 mesh;3x3 mesh;4x4 mesh;5x7 mesh;8x8 mesh;4x6 wrap=1,0" },
	{ TC_ALLTOALL, "allport-kd", "3x3x3;4x4x4;4x4x8;3x3x3x3;4x4x4x4" },
	{ TC_ALLTOALL, "ar1", "4;6;8;12;16;32;8 one-port;16 one-port" },
	{ TC_ALLTOALL, "at2-1p",
		"4x4;4x8;8x4;8x8;8x12;12x12;16x16;4x4 one-port;4x8 one-port;"
		"8x8 one-port" },
	{ TC_ALLTOALL, "pt4", "4x4x4x4;4x4x4x4 one-port" },
	{ TC_ALLTOALL, "mt3", "3x3x3;3x3x3 one-port" },
	{ TC_ALLTOALL, "mtk",
		"4;6;8;12;16;32;4x4;4x8;8x4;8x8;8x12;12x12;16x16;3x3x3;4x4x4x4;"
		"8 one-port;16 one-port;4x4 one-port;4x8 one-port;8x8 one-port;"
		"3x3x3 one-port;4x4x4x4 one-port" },
	{ TC_ALLTOALL, "atape", "*" },
	{ TC_ALLTOALL, "pairwise", "*" },
	{ TC_ALLTOALL, "bruck", "*" },
	{ TC_ALLTOALL, "direct", "*" },
	{ TC_ALLGATHER, "bcast-pattern",
		"3x3;4x4;4x8;8x4;5x5;5x7;6x6;6x10;8x8;8x12;12x12;16x16;3x3 mesh;"
		"4x4 mesh;5x7 mesh;8x8 mesh;4x6 wrap=1,0" },
	{ TC_ALLGATHER, "gossip-ham2", "3x3;4x4;4x8;8x4;5x5;5x7;6x6;6x10;8x8;8x12;12x12;16x16" },
	{ TC_ALLGATHER, "gossip-ham1",
		"3x3;4x4;4x8;8x4;5x5;5x7;6x6;6x10;8x8;8x12;12x12;16x16;3x3x3;4x4x4x4" },
	{ TC_ALLGATHER, "ring", "*" },
	{ TC_ALLGATHER, "saad-schultz", "*" },
	{ TC_ALLGATHER, "calvin", "3x3;5x5" },
	{ TC_ALLGATHER, "bruck", "*" },
};

/* Is name (tc_shape_str) one of the ';'-separated list? */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(list, "*"))
		return 1;
	for (const char *p = list; *p; p++) {
		if ((p == list || p[-1] == ';') && !strncmp(p, name, n) && (p[n] == ';' || !p[n]))
			return 1;
	}
	return 0;
}

/* 1: algorithm a must build on shape name; 0: need not; -1: a is not in must[]. */
static int must_support(const struct tc_algo *a, const char *name)
{
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		if (must[i].coll == a->coll && !strcmp(must[i].name, a->name))
			return in_list(must[i].shapes, name);
	return -1;
}

static int make_shape(const struct shape_case *c, struct tc_shape *s)
{
	int err = tc_shape_parse(s, c->dims, c->wrap && !strcmp(c->wrap, "mesh"), c->one_port);

	if (err || !c->wrap || !strcmp(c->wrap, "mesh"))
		return err;
	/* "1,0": per-dimension wrap flags */
	s->wrap_mask = 0;
	for (int d = 0, i = 0; c->wrap[i] && d < s->ndims; i++) {
		if (c->wrap[i] == '1')
			s->wrap_mask |= 1u << d;
		if (c->wrap[i] == '0' || c->wrap[i] == '1')
			d++;
	}
	return 0;
}

static uint8_t pat(int o, int d, size_t i)
{
	return tbyte(0, (uint32_t)o, (uint32_t)d, i);
}

/* Run s on the simulator; returns the number of wrong bytes or -errno. */
static long sim_check(const struct tc_sched *s, size_t m)
{
	const int N = s->shape.nodes;
	const int a2a = s->coll == TC_ALLTOALL;
	void **send = calloc(N, sizeof(void *)), **recv = calloc(N, sizeof(void *));
	long bad = 0;
	int err = 0;

	for (int n = 0; n < N; n++) {
		uint8_t *p = send[n] = malloc(a2a ? N * m : m);

		recv[n] = calloc(N, m);
		if (!p || !recv[n]) {
			err = -ENOMEM;
			continue;
		}
		for (int d = 0; d < (a2a ? N : 1); d++)
			for (size_t i = 0; i < m; i++)
				p[d * m + i] = pat(n, a2a ? d : 0, i);
	}
	if (!err)
		err = tc_sim_run(s, m, send, recv);
	for (int d = 0; d < N && !err; d++)
		for (int o = 0; o < N; o++)
			for (size_t i = 0; i < m; i++)
				bad += ((uint8_t *)recv[d])[o * m + i] != pat(o, a2a ? d : 0, i);
	for (int n = 0; n < N; n++) {
		free(send[n]);
		free(recv[n]);
	}
	free(send);
	free(recv);
	return err ? err : bad;
}

/* Per algorithm (index in tc_algos[]): shapes run with every byte right, and refused. */
static int ran_ok[64], refused[64];

/* Returns 1 when the algorithm ran on the shape with every byte right. */
static int run_one(const struct tc_algo *a, const struct shape_case *c)
{
	struct tc_verify_report r;
	struct tc_shape sh;
	struct tc_sched *s = NULL;
	const char *why = NULL;
	struct tc_cost cost;
	char name[64];
	long bad;
	int err, ret;
	/* block sizes: odd, and larger than the packet count, so packet splits are uneven */
	size_t m = 13;

	if (make_shape(c, &sh)) {
		tap_ok(0, "%s: bad shape %s", a->name, c->dims);
		return 0;
	}
	tc_shape_str(&sh, name, sizeof(name));
	err = a->build(&sh, &s, &why);
	if (err == -EOPNOTSUPP) {
		if (must_support(a, name) == 1)
			tap_ok(0, "%s %s: refused a shape it must support (must[]): %s", a->name, name,
			       why ? why : "(no reason)");
		else
			tap_diag("%s %s: not supported: %s", a->name, name, why ? why : "(no reason)");
		return -1;
	}
	if (err) {
		tap_ok(0, "%s %s: build failed %d: %s", a->name, name, err, why ? why : tc_last_error());
		return 0;
	}
	if (!s || !s->step_first || s->coll != a->coll || s->shape.nodes != sh.nodes ||
	    s->shape.wrap_mask != sh.wrap_mask || s->shape.one_port != sh.one_port ||
	    memcmp(s->shape.dims, sh.dims, sizeof(sh.dims))) {
		tap_ok(0, "%s %s: build returned no finished schedule of its collective and shape", a->name, name);
		tc_sched_free(s);
		return 0;
	}
	err = tc_verify(s, &r);
	if (err) {
		tap_ok(0, "%s %s: verify: %s", a->name, name, err == -EPROTO ? r.first_violation : tc_last_error());
		tc_verify_report_free(&r);
		tc_sched_free(s);
		return 0;
	}
	tc_verify_report_free(&r);
	bad = sim_check(s, m);
	if (bad < 0) {
		tap_ok(0, "%s %s: sim: %s", a->name, name, tc_last_error());
		tc_sched_free(s);
		return 0;
	}
	err = tc_cost_eval(s, NULL, &cost);
	ret = tap_ok(bad == 0 && !err, "%s %s: verified, every byte right (%ld wrong); %u steps, transmission %g, bound %g, ratio %.3f",
	       a->name, name, bad, s->nsteps, cost.transmission_blocks, cost.lower_bound_blocks, cost.ratio);
	tc_sched_free(s);
	return ret;
}

static void test_auto_and_cache(void)
{
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct tc_shape sh;
		char name[64];

		make_shape(&shapes[i], &sh);
		/* auto prices the direct alternatives too: keep to the smaller shapes */
		if (sh.nodes > 100)
			continue;
		tc_shape_str(&sh, name, sizeof(name));
		for (int coll = TC_ALLTOALL; coll <= TC_ALLGATHER; coll++) {
			const struct tc_algo *a = tc_algo_auto(coll, &sh, 64, NULL);
			const struct tc_sched *s1 = NULL, *s2 = NULL;
			const char *why = NULL;
			long bad;

			if (!a) {
				tap_diag("auto %s %s: no algorithm supports this shape yet",
					 coll == TC_ALLTOALL ? "alltoall" : "allgather", name);
				continue;
			}
			if (tc_sched_get(coll, a, &sh, &s1, &why) || tc_sched_get(coll, a, &sh, &s2, &why)) {
				tap_ok(0, "auto %s: picked %s but tc_sched_get fails: %s", name, a->name, why);
				continue;
			}
			bad = sim_check(s1, 5);
			tap_ok(s1 == s2 && bad == 0, "auto %s %s: %s, cached once, every byte right",
			       coll == TC_ALLTOALL ? "alltoall" : "allgather", name, a->name);
		}
	}
}

struct getter {
	struct tc_shape shape;
	const struct tc_sched *got;
	int err;
};

static void *get_thread(void *arg)
{
	struct getter *g = arg;
	const char *why;

	g->err = tc_sched_get(TC_ALLTOALL, &tc_algo_pairwise, &g->shape, &g->got, &why);
	return NULL;
}

/* Threads asking for the same new schedule at once all get the one built. */
static void test_cache_threads(void)
{
	struct getter g[4];
	pthread_t th[4];
	int same = 1;

	for (int i = 0; i < 4; i++) {
		tc_shape_parse(&g[i].shape, "6x7", 0, 0);
		pthread_create(&th[i], NULL, get_thread, &g[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		same &= !g[i].err && g[i].got == g[0].got;
	}
	tap_ok(same && g[0].got, "cache: 4 threads asking for pairwise 6x7 at once share one schedule");
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; tc_algos[i]; i++) {
		if (argc > 1 && strcmp(argv[1], tc_algos[i]->name))
			continue;
		for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
			int r = run_one(tc_algos[i], &shapes[k]);

			ran_ok[i] += r == 1;
			refused[i] += r < 0;
		}
	}
	/* every algorithm ran somewhere, every byte checked, and is in must[] */
	for (int i = 0; tc_algos[i]; i++) {
		const struct tc_algo *a = tc_algos[i];
		int listed = must_support(a, "") >= 0;

		if (argc > 1 && strcmp(argv[1], a->name))
			continue;
		tap_ok(ran_ok[i] > 0 && listed, "%s %s: ran on %d shapes of the matrix with every byte right (%d refused)%s",
		       a->coll == TC_ALLTOALL ? "alltoall" : "allgather", a->name, ran_ok[i], refused[i],
		       listed ? "" : "; not in must[]: say which shapes it must support");
	}
	if (argc == 1 || !strcmp(argv[1], "auto")) {
		test_auto_and_cache();
		test_cache_threads();
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	tap_diag("%.2f s", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return tap_done();
}
