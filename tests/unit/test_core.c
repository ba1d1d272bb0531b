// SPDX-License-Identifier: GPL-2.0
/*
 * The schedule layer on its own: shape helpers, builder errors, the verifier
 * accepting small hand-built schedules and catching planted faults, the
 * simulator moving real bytes (and refusing broken schedules), the cost
 * model on schedules whose answers are computed by hand below.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/sim_run.h"
#include "select/select.h"
#include "tap.h"
#include "tbyte.h"

static struct tc_shape shape(const char *dims, int mesh, int one_port)
{
	struct tc_shape s;

	if (tc_shape_parse(&s, dims, mesh, one_port)) {
		fprintf(stderr, "bad shape %s\n", dims);
		exit(2);
	}
	return s;
}

/* ---------------------------------------------------------------- shapes */

static void test_shapes(void)
{
	struct tc_shape s;
	int c[TC_MAX_DIMS], dims[2] = { 4, 8 };
	char buf[64];
	int8_t r[TC_MAX_DIMS] = { 0 };

	tap_ok(tc_shape_parse(&s, "4x8", 0, 0) == 0 && s.ndims == 2 && s.nodes == 32 && s.wrap_mask == 3,
	       "shape: parse 4x8 torus");
	tc_shape_coords(&s, 13, c);
	tap_ok(c[0] == 1 && c[1] == 5 && tc_shape_node(&s, c) == 13, "shape: node 13 of 4x8 is (1,5), row-major");
	c[0] = -1;
	c[1] = 9;
	tap_ok(tc_shape_node(&s, c) == 3 * 8 + 1, "shape: coords reduced mod dims");
	tap_ok(tc_shape_delta(&s, 1, 0, 4) == 4 && tc_shape_delta(&s, 1, 4, 0) == 4 &&
		       tc_shape_delta(&s, 1, 0, 5) == -3 && tc_shape_delta(&s, 1, 7, 0) == 1 &&
		       tc_shape_delta(&s, 0, 0, 2) == 2,
	       "shape: ring deltas, even-ring tie is +n/2");
	tap_ok(tc_shape_neighbor(&s, 0, 0) == 8 && tc_shape_neighbor(&s, 0, 1) == 24 &&
		       tc_shape_neighbor(&s, 7, 2) == 0 && tc_shape_neighbor(&s, 0, 3) == 7 &&
		       tc_shape_neighbor(&s, 0, 4) == -1,
	       "shape: torus neighbours wrap, bad port is -1");
	r[0] = -1;
	r[1] = 3;
	tap_ok(tc_shape_walk(&s, 0, r) == 27, "shape: walk (-1,+3) from 0 reaches 27");

	tap_ok(tc_shape_parse(&s, "4x4", 1, 1) == 0 && s.wrap_mask == 0 && s.one_port == 1,
	       "shape: parse 4x4 mesh one-port");
	tap_ok(tc_shape_neighbor(&s, 0, 1) == -1 && tc_shape_neighbor(&s, 3, 2) == -1 &&
		       tc_shape_neighbor(&s, 5, 3) == 4,
	       "shape: mesh neighbours stop at edges");
	tap_ok(tc_shape_delta(&s, 0, 3, 0) == -3, "shape: mesh delta is the plain difference");
	r[0] = 0;
	r[1] = -1;
	tap_ok(tc_shape_walk(&s, 4, r) == -1, "shape: walk off a mesh edge is -1");
	tc_shape_str(&s, buf, sizeof(buf));
	tap_ok(!strcmp(buf, "4x4 mesh one-port"), "shape: str '%s'", buf);

	tap_ok(tc_shape_init(&s, 2, dims, 1, 0) == 0 && tc_shape_delta(&s, 1, 0, 7) == 7 &&
		       tc_shape_delta(&s, 0, 0, 3) == -1,
	       "shape: wrap mask per dimension");
	tap_ok(tc_shape_parse(&s, "4x", 0, 0) == -EINVAL && tc_shape_parse(&s, "", 0, 0) == -EINVAL &&
		       tc_shape_parse(&s, "1x4", 0, 0) == -EINVAL && tc_shape_parse(&s, "4x4x4x4x4x4x4", 0, 0) == -EINVAL &&
		       tc_shape_parse(&s, "4y4", 0, 0) == -EINVAL && tc_shape_parse(&s, "-4", 0, 0) == -EINVAL,
	       "shape: malformed dims rejected with -EINVAL");
	tap_ok(tc_shape_init(&s, 2, dims, 4, 0) == -EINVAL && tc_shape_init(&s, 0, dims, 0, 0) == -EINVAL &&
		       tc_shape_init(&s, 2, dims, 0, 2) == -EINVAL,
	       "shape: wrap bit beyond ndims, 0 dims, bad one_port rejected");
	tap_ok(tc_shape_parse(&s, "4x6", 0, 0) == 0 && tc_shape_init(&s, s.ndims, s.dims, 2, 1) == 0 &&
		       s.dims[0] == 4 && s.dims[1] == 6 && s.nodes == 24 && s.wrap_mask == 2 && s.one_port,
	       "shape: re-init from its own dims with new flags");
	tap_ok(tc_shape_parse(&s, "2", 0, 0) == 0 && tc_shape_neighbor(&s, 0, 0) == 1 &&
		       tc_shape_neighbor(&s, 0, 1) == 1 && tc_shape_delta(&s, 0, 0, 1) == 1,
	       "shape: 2-ring has + and - links to the same node");
}

/* ---------------------------------------------------------------- builder */

static void test_builder(void)
{
	struct tc_shape s = shape("4x4", 0, 0), m = shape("4", 1, 0);
	struct tc_sched *sc;
	int8_t r[TC_MAX_DIMS] = { 0 };
	int err;

	sc = tc_sched_new(&s, TC_ALLTOALL, "t", "", 0);
	err = tc_sched_msg(sc, 0, 1, NULL);
	tap_ok(err == -EINVAL, "builder: msg before step is -EINVAL (%s)", tc_last_error());
	tap_ok(tc_sched_blk(sc, 0, 1) == -EINVAL, "builder: blk before msg is -EINVAL");
	tc_sched_step(sc);
	tap_ok(tc_sched_msg(sc, 0, 16, NULL) == -EINVAL && tc_sched_msg(sc, -1, 0, NULL) == -EINVAL,
	       "builder: node out of range is -EINVAL (%s)", tc_last_error());
	/* default route: shortest dimension-ordered, ties + */
	tc_sched_msg(sc, 0, 10, NULL);
	tap_ok(sc->msgs[0].route[0] == 2 && sc->msgs[0].route[1] == 2, "builder: default route 0->10 is (+2,+2)");
	tc_sched_blk(sc, 0, 10);
	tc_sched_msg(sc, 0, 15, NULL);
	tap_ok(sc->msgs[1].route[0] == -1 && sc->msgs[1].route[1] == -1, "builder: default route 0->15 is (-1,-1)");
	tc_sched_blk(sc, 0, 15);
	tc_sched_msg(sc, 3, 2, NULL); /* empty: dropped */
	tc_sched_step(sc);		/* empty step: dropped */
	tc_sched_step(sc);
	tc_sched_msg(sc, 1, 2, NULL);
	tc_sched_blk(sc, 1, 2);
	err = tc_sched_finish(sc);
	tap_ok(err == 0 && sc->nsteps == 2 && sc->nmsgs == 3 && sc->nblks == 3 && sc->step_first[0] == 0 &&
		       sc->step_first[1] == 2 && sc->step_first[2] == 3 && sc->msgs[2].step == 1,
	       "builder: finish drops empty messages and steps");
	/* node 0 step 0: sends msgs 0 and 1; node 10 step 0: receives 0; node 2 step 1: receives 2 */
	tap_ok(sc->node_first[0 * 2 + 1] - sc->node_first[0 * 2 + 0] == 2 && sc->node_msgs[sc->node_first[0]] == 0 &&
		       sc->node_first[10 * 2 + 1] - sc->node_first[10 * 2] == 1 &&
		       sc->node_msgs[sc->node_first[10 * 2]] == 0 &&
		       sc->node_msgs[sc->node_first[2 * 2 + 1]] == 2 && sc->node_first[16 * 2] == 6,
	       "builder: per-node views");
	tap_ok(tc_sched_msg(sc, 0, 1, NULL) == -EINVAL && tc_sched_finish(sc) == -EINVAL,
	       "builder: no changes after finish");
	tc_sched_free(sc);

	sc = tc_sched_new(&s, TC_ALLTOALL, "t", "", 0);
	tc_sched_step(sc);
	r[0] = 1;
	tc_sched_msg(sc, 0, 1, r);
	tc_sched_blk(sc, 0, 1);
	err = tc_sched_finish(sc);
	tap_ok(err == -EINVAL && strstr(tc_last_error(), "route leads to node 4"),
	       "builder: route not leading to dst is -EINVAL (%s)", tc_last_error());
	tc_sched_free(sc);

	sc = tc_sched_new(&m, TC_ALLTOALL, "t", "", 0);
	tc_sched_step(sc);
	r[0] = -1;
	tc_sched_msg(sc, 0, 3, r);
	tc_sched_blk(sc, 0, 3);
	err = tc_sched_finish(sc);
	tap_ok(err == -EINVAL && strstr(tc_last_error(), "leaves the mesh"),
	       "builder: route leaving a mesh is -EINVAL (%s)", tc_last_error());
	tc_sched_free(sc);

	sc = tc_sched_new(&s, TC_ALLTOALL, "t", "", 0);
	tc_sched_step(sc);
	tc_sched_msg(sc, 0, 1, NULL);
	tc_sched_blk(sc, 0, 99);
	err = tc_sched_finish(sc);
	tap_ok(err == -EINVAL && strstr(tc_last_error(), "out of range"), "builder: bad block is -EINVAL (%s)",
	       tc_last_error());
	tc_sched_free(sc);

	sc = tc_sched_new(&s, TC_ALLTOALL, "t", "", 0);
	tc_sched_step(sc);
	tc_sched_msg(sc, 5, 5, NULL);
	tc_sched_blk(sc, 5, 6);
	err = tc_sched_finish(sc);
	tap_ok(err == -EINVAL && strstr(tc_last_error(), "itself"), "builder: message to itself is -EINVAL (%s)",
	       tc_last_error());
	tc_sched_free(sc);

	tap_ok(tc_sched_new(&s, TC_COLL_NR, "t", "", 0) == NULL, "builder: unknown collective refused");

	/* messages whose step an algorithm rewrote after adding them are sorted, blocks follow */
	sc = tc_sched_new(&s, TC_ALLTOALL, "t", "", 0);
	tc_sched_step(sc);
	tc_sched_step(sc);
	tc_sched_msg(sc, 0, 1, NULL);
	tc_sched_blk(sc, 0, 1);
	tc_sched_blk(sc, 0, 5);
	tc_sched_msg(sc, 2, 3, NULL);
	tc_sched_blk(sc, 2, 3);
	sc->msgs[1].step = 0;
	err = tc_sched_finish(sc);
	tap_ok(err == 0 && sc->nsteps == 2 && sc->msgs[0].src == 2 && sc->msgs[0].step == 0 && sc->msgs[0].blk_off == 0 &&
		       sc->blks[0].a == 2 && sc->blks[0].b == 3 && sc->msgs[1].src == 0 && sc->msgs[1].blk_off == 1 &&
		       sc->msgs[1].nblk == 2 && sc->blks[2].b == 5,
	       "builder: finish sorts messages by step and moves their blocks along");
	tc_sched_free(sc);
}

/* ------------------------------------------------ hand-built schedules */

/*
 * Fault injection points for the hand-built schedules: each builder takes
 * a fault number and plants it.
 */
enum fault {
	F_NONE,
	F_DUP,	      /* a block sent twice */
	F_MISSING,    /* a block never sent */
	F_EARLY,      /* a block forwarded in the step it arrives */
	F_LONG_ROUTE, /* a block sent the long way round */
	F_BACK,	      /* an allgather block sent back to its origin */
};

/*
 * Alltoall on a 4-ring, store and forward, one hop per message:
 *   step 0: n -> n+1 carries {n,n+1}, {n,n+2}; n -> n-1 carries {n,n-1}
 *   step 1: n -> n+1 carries {n-1,n+1} (received in step 0)
 * Contention-free (each directed link once per step), shortest, one hop.
 */
static struct tc_sched *a2a_ring4(const struct tc_shape *s, enum fault f, unsigned int claims)
{
	struct tc_sched *sc = tc_sched_new(s, TC_ALLTOALL, "ring4", "test", claims);

	tc_sched_step(sc);
	for (int n = 0; n < 4; n++) {
		tc_sched_msg(sc, n, (n + 1) % 4, NULL);
		if (!(f == F_MISSING && n == 2))
			tc_sched_blk(sc, n, (n + 1) % 4);
		if (f == F_EARLY && n == 1)
			tc_sched_blk(sc, 0, 2); /* node 1 gets {0,2} only in this step */
		else
			tc_sched_blk(sc, n, (n + 2) % 4);
		if (f == F_LONG_ROUTE && n == 0) {
			int8_t r[TC_MAX_DIMS] = { 3 };

			tc_sched_msg(sc, n, (n + 3) % 4, r);
		} else {
			tc_sched_msg(sc, n, (n + 3) % 4, NULL);
		}
		tc_sched_blk(sc, n, (n + 3) % 4);
		if (f == F_DUP && n == 0)
			tc_sched_blk(sc, 0, 1);
	}
	tc_sched_step(sc);
	for (int n = 0; n < 4; n++) {
		tc_sched_msg(sc, n, (n + 1) % 4, NULL);
		tc_sched_blk(sc, (n + 3) % 4, (n + 1) % 4);
	}
	if (tc_sched_finish(sc)) {
		fprintf(stderr, "finish: %s\n", tc_last_error());
		exit(2);
	}
	return sc;
}

/* Alltoall on a 4-ring, direct: step k-1 every n sends {n,n+k} along the default route. */
static struct tc_sched *a2a_direct4(const struct tc_shape *s, unsigned int claims)
{
	struct tc_sched *sc = tc_sched_new(s, TC_ALLTOALL, "direct4", "test", claims);

	for (int k = 1; k < 4; k++) {
		tc_sched_step(sc);
		for (int n = 0; n < 4; n++) {
			tc_sched_msg(sc, n, (n + k) % 4, NULL);
			tc_sched_blk(sc, n, (n + k) % 4);
		}
	}
	tc_sched_finish(sc);
	return sc;
}

/*
 * Allgather on a 4-ring:
 *   step 0: n sends {n,0} to n+1 and to n-1 (one block, two copies)
 *   step 1: n sends {n-1,0} to n+1
 */
static struct tc_sched *ag_ring4(const struct tc_shape *s, enum fault f, unsigned int claims)
{
	struct tc_sched *sc = tc_sched_new(s, TC_ALLGATHER, "agring4", "test", claims);

	tc_sched_step(sc);
	for (int n = 0; n < 4; n++) {
		tc_sched_msg(sc, n, (n + 1) % 4, NULL);
		tc_sched_blk(sc, n, 0);
		tc_sched_msg(sc, n, (n + 3) % 4, NULL);
		if (f == F_EARLY && n == 0)
			tc_sched_blk(sc, 2, 0);
		else if (!(f == F_MISSING && n == 3))
			tc_sched_blk(sc, n, 0);
	}
	tc_sched_step(sc);
	for (int n = 0; n < 4; n++) {
		tc_sched_msg(sc, n, (n + 1) % 4, NULL);
		tc_sched_blk(sc, (n + 3) % 4, 0);
		if (f == F_DUP && n == 0)
			tc_sched_blk(sc, 0, 0); /* to node 1 again, which has it since step 0 */
		if (f == F_BACK && n == 1)
			tc_sched_blk(sc, 2, 0); /* node 1 got {2,0} in step 0; node 2 is its origin */
	}
	tc_sched_finish(sc);
	return sc;
}

static int verify_ok(const struct tc_sched *sc, char *why, size_t len)
{
	struct tc_verify_report r;
	int err = tc_verify(sc, &r);

	snprintf(why, len, "%s", r.first_violation);
	tc_verify_report_free(&r);
	return err == 0 && r.ok;
}

static void expect_violation(struct tc_sched *sc, const char *needle, const char *what)
{
	struct tc_verify_report r;
	int err = tc_verify(sc, &r);

	tap_ok(err == -EPROTO && !r.ok && strstr(r.first_violation, needle), "verify catches %s: %s", what,
	       r.first_violation);
	tc_verify_report_free(&r);
	tc_sched_free(sc);
}

/* Fill send buffers with bytes that encode (origin, destination, index). */
static uint8_t pattern(int o, int d, size_t i)
{
	return tbyte(0, (uint32_t)o, (uint32_t)d, i);
}

/* Run alltoall on the simulator, 0 and every byte right, or the sim's error. */
static int sim_a2a(const struct tc_sched *sc, size_t m, int *bad_bytes)
{
	int N = sc->shape.nodes, err;
	void **send = calloc(N, sizeof(void *)), **recv = calloc(N, sizeof(void *));

	*bad_bytes = 0;
	for (int n = 0; n < N; n++) {
		uint8_t *p = send[n] = malloc(N * m);

		recv[n] = calloc(N, m);
		for (int d = 0; d < N; d++)
			for (size_t i = 0; i < m; i++)
				p[d * m + i] = pattern(n, d, i);
	}
	err = tc_sim_run(sc, m, send, recv);
	for (int d = 0; d < N && !err; d++)
		for (int o = 0; o < N; o++)
			for (size_t i = 0; i < m; i++)
				*bad_bytes += ((uint8_t *)recv[d])[o * m + i] != pattern(o, d, i);
	for (int n = 0; n < N; n++) {
		free(send[n]);
		free(recv[n]);
	}
	free(send);
	free(recv);
	return err;
}

static int sim_ag(const struct tc_sched *sc, size_t m, int *bad_bytes)
{
	int N = sc->shape.nodes, err;
	void **send = calloc(N, sizeof(void *)), **recv = calloc(N, sizeof(void *));

	*bad_bytes = 0;
	for (int n = 0; n < N; n++) {
		uint8_t *p = send[n] = malloc(m);

		recv[n] = calloc(N, m);
		for (size_t i = 0; i < m; i++)
			p[i] = pattern(n, 255, i);
	}
	err = tc_sim_run(sc, m, send, recv);
	for (int d = 0; d < N && !err; d++)
		for (int o = 0; o < N; o++)
			for (size_t i = 0; i < m; i++)
				*bad_bytes += ((uint8_t *)recv[d])[o * m + i] != pattern(o, 255, i);
	for (int n = 0; n < N; n++) {
		free(send[n]);
		free(recv[n]);
	}
	free(send);
	free(recv);
	return err;
}

static void test_verify(void)
{
	const unsigned int all = TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST | TC_CLAIM_ONE_HOP;
	struct tc_shape r4 = shape("4", 0, 0), r4p = shape("4", 0, 1);
	struct tc_verify_report rep;
	struct tc_sched *sc;
	char why[256];
	int bad, err;

	sc = a2a_ring4(&r4, F_NONE, all);
	tap_ok(verify_ok(sc, why, sizeof(why)), "verify accepts store-and-forward 4-ring alltoall %s", why);
	tc_verify(sc, &rep);
	/* each directed link: step 0 carries 2 (+) or 1 (-) blocks, step 1 carries 1 on + */
	tap_ok(rep.max_link_blocks == 3 && rep.link_blocks[0 * 2 + 0] == 3 && rep.link_blocks[0 * 2 + 1] == 1 &&
		       rep.link_msgs[1 * 2 + 0] == 2 && rep.link_msgs[1 * 2 + 1] == 1,
	       "verify: per-link totals (+ links 3 blocks in 2 msgs, - links 1)");
	tc_verify_report_free(&rep);
	err = sim_a2a(sc, 13, &bad);
	tap_ok(err == 0 && bad == 0, "sim: 4-ring alltoall, every byte right (err %d, %d bad)", err, bad);
	tc_sched_free(sc);

	sc = a2a_direct4(&r4, TC_CLAIM_SHORTEST | TC_CLAIM_PERMUTATION);
	tap_ok(verify_ok(sc, why, sizeof(why)), "verify accepts direct 4-ring alltoall (antipode +2) %s", why);
	err = sim_a2a(sc, 8, &bad);
	tap_ok(err == 0 && bad == 0, "sim: direct 4-ring alltoall, every byte right");
	tc_sched_free(sc);

	expect_violation(a2a_ring4(&r4, F_DUP, all), "step 0: message 0 -> 3: block {0,1} sent twice in one step", "a duplicated alltoall block");
	expect_violation(a2a_ring4(&r4, F_MISSING, all), "end: block {2,3}", "a missing alltoall block");
	expect_violation(a2a_ring4(&r4, F_EARLY, all), "step 0: message 1 -> 2: block {0,2} sent in the step node 1 receives it",
			 "an alltoall block sent before it is held");
	expect_violation(a2a_ring4(&r4, F_LONG_ROUTE, TC_CLAIM_SHORTEST), "step 0: message 0 -> 3: block {0,3} leaves a shortest path",
			 "a non-shortest route under SHORTEST");
	expect_violation(a2a_direct4(&r4, TC_CLAIM_CONTENTION_FREE), "step 1: link (node 1, port 0) carries messages 0 -> 2 and 1 -> 3",
			 "two messages on one link in a step");
	expect_violation(a2a_ring4(&r4p, F_NONE, TC_CLAIM_SHORTEST), "step 0: node 0 sends two messages (one-port",
			 "a one-port violation");
	expect_violation(a2a_direct4(&r4, TC_CLAIM_ONE_HOP), "crosses 2 links", "a two-hop message under ONE_HOP");

	/* a mesh: shortest paths run both ways (0 <- 3 is 3 hops, not 1) */
	{
		struct tc_shape m4 = shape("4", 1, 0);

		sc = a2a_direct4(&m4, TC_CLAIM_SHORTEST);
		tap_ok(sc->nsteps == 3 && verify_ok(sc, why, sizeof(why)), "verify accepts direct 4-line (mesh) alltoall under SHORTEST %s", why);
		err = sim_a2a(sc, 8, &bad);
		tap_ok(err == 0 && bad == 0, "sim: direct 4-line alltoall, every byte right");
		tc_sched_free(sc);
	}

	/* the same route without the SHORTEST claim is fine */
	sc = a2a_ring4(&r4, F_LONG_ROUTE, 0);
	tap_ok(verify_ok(sc, why, sizeof(why)), "verify: a long route is fine when SHORTEST is not claimed %s", why);
	tc_sched_free(sc);

	sc = a2a_ring4(&r4, F_MISSING, 0);
	err = sim_a2a(sc, 8, &bad);
	tap_ok(err == -EPROTO, "sim refuses a schedule missing a block: %s", tc_last_error());
	tc_sched_free(sc);
	sc = a2a_ring4(&r4, F_EARLY, 0);
	err = sim_a2a(sc, 8, &bad);
	tap_ok(err == -EPROTO, "sim refuses a block sent before it is held: %s", tc_last_error());
	tc_sched_free(sc);
	sc = a2a_ring4(&r4, F_DUP, 0);
	err = sim_a2a(sc, 8, &bad);
	tap_ok(err == -EPROTO, "sim refuses a duplicated block: %s", tc_last_error());
	tc_sched_free(sc);

	/* allgather */
	sc = ag_ring4(&r4, F_NONE, all);
	tap_ok(verify_ok(sc, why, sizeof(why)), "verify accepts 4-ring allgather (copies to both sides) %s", why);
	err = sim_ag(sc, 11, &bad);
	tap_ok(err == 0 && bad == 0, "sim: 4-ring allgather, every byte right (err %d, %d bad)", err, bad);
	tc_sched_free(sc);
	expect_violation(ag_ring4(&r4, F_DUP, all), "step 1: message 0 -> 1: block {0,0} delivered to node 1 twice",
			 "an allgather block delivered twice");
	expect_violation(ag_ring4(&r4, F_BACK, all), "step 1: message 1 -> 2: block {2,0} sent back to its origin",
			 "an allgather block sent back to its origin");
	expect_violation(ag_ring4(&r4, F_MISSING, all), "end: node 2 never receives block {3,0}",
			 "a missing allgather block");
	expect_violation(ag_ring4(&r4, F_EARLY, all), "block {2,0} sent before node 0 holds it",
			 "an allgather block sent before it is held");

	sc = ag_ring4(&r4, F_MISSING, 0);
	err = sim_ag(sc, 8, &bad);
	tap_ok(err == -EPROTO, "sim refuses an allgather missing a block: %s", tc_last_error());
	tc_sched_free(sc);
}

/* Allgather: a block delivered twice to one node (not to its origin). */
static void test_verify_ag_twice(void)
{
	struct tc_shape r4 = shape("4", 0, 0);
	struct tc_sched *sc = ag_ring4(&r4, F_NONE, 0);
	struct tc_sched *s2 = tc_sched_new(&r4, TC_ALLGATHER, "agtwice", "test", 0);
	int bad;

	/* copy sc and add a third step: node 1 sends {1,0} to node 2 again */
	for (uint32_t st = 0; st < sc->nsteps; st++) {
		tc_sched_step(s2);
		for (uint32_t i = sc->step_first[st]; i < sc->step_first[st + 1]; i++) {
			tc_sched_msg(s2, sc->msgs[i].src, sc->msgs[i].dst, sc->msgs[i].route);
			for (uint32_t k = 0; k < sc->msgs[i].nblk; k++)
				tc_sched_blk(s2, sc->blks[sc->msgs[i].blk_off + k].a, sc->blks[sc->msgs[i].blk_off + k].b);
		}
	}
	tc_sched_step(s2);
	tc_sched_msg(s2, 1, 2, NULL);
	tc_sched_blk(s2, 1, 0);
	tc_sched_finish(s2);
	tap_ok(sim_ag(s2, 8, &bad) == -EPROTO, "sim refuses an allgather block delivered twice: %s",
	       tc_last_error());
	expect_violation(s2, "step 2: message 1 -> 2: block {1,0} delivered to node 2 twice",
			 "an allgather block delivered twice");
	tc_sched_free(sc);
}

/* ---------------------------------------------------------------- cost */

static int near(double a, double b)
{
	return a > b - 1e-9 && a < b + 1e-9;
}

static void test_cost(void)
{
	struct tc_shape r4 = shape("4", 0, 0), s;
	struct tc_cost_params p = { .ts_us = 10, .tw_us_per_byte = 1, .rho_us_per_byte = 0.5, .block_bytes = 2 };
	struct tc_sched *sc;
	struct tc_cost c;
	int bad, err;

	/*
	 * Store-and-forward 4-ring: step 0 n->n+1 carries 2 blocks (ends at 2),
	 * n->n-1 carries 1 (ends at 1): every node done at 2. Step 1: n->n+1,
	 * 1 block, starts at 2, ends at 3. Transmission 3, startups 2,
	 * lockstep 2+1 = 3, busiest link (n,+) 2+1 = 3 blocks.
	 * Bound: P*floor(n^2/4)/(2n) = 4*4/8 = 2, ratio 1.5.
	 * Time (ts 10, tw 1, m 2): step 0 10+2*2 = 14, step 1 14+12 = 26,
	 * plus rho*m*rearranged = 0.5*2*4 = 4: 30 us.
	 */
	sc = a2a_ring4(&r4, F_NONE, 0);
	sc->rearranged_blocks = 4;
	err = tc_cost_eval(sc, &p, &c);
	tap_ok(!err && near(c.transmission_blocks, 3) && c.steps == 2 && near(c.lockstep_blocks, 3) &&
		       c.max_link_blocks == 3 && near(c.lower_bound_blocks, 2) && near(c.ratio, 1.5) &&
		       near(c.time_us, 30) && c.rearranged_blocks == 4,
	       "cost: store-and-forward 4-ring: transmission %g steps %u lockstep %g link %lld bound %g time %g",
	       c.transmission_blocks, c.steps, c.lockstep_blocks, (long long)c.max_link_blocks, c.lower_bound_blocks,
	       c.time_us);
	tc_sched_free(sc);

	/*
	 * Direct 4-ring, links serialise. Step 0 (k=1): all end at 1.
	 * Step 1 (k=2, route +2 over (n,+),(n+1,+)), in message order:
	 *   0->2 starts 1, ends 2; 1->3 waits for (1,+): 2..3;
	 *   2->0 waits for (2,+): 3..4; 3->1 waits for (3,+): 4..5.
	 *   done: node 0 max(2, recv 4) = 4, node 1 max(3, 5) = 5, node 2 4, node 3 5.
	 * Step 2 (k=3, route -1): n->n-1 starts at max(done(n), done(n-1)) = 5, ends 6.
	 * Transmission 6 = startups 6 (all messages 1 block), lockstep 3.
	 */
	sc = a2a_direct4(&r4, 0);
	err = tc_cost_eval(sc, NULL, &c);
	tap_ok(!err && near(c.transmission_blocks, 6) && c.steps == 6 && near(c.lockstep_blocks, 3) &&
		       c.max_link_blocks == 3 && near(c.time_us, 0),
	       "cost: contention serialises on links: transmission %g steps %u lockstep %g",
	       c.transmission_blocks, c.steps, c.lockstep_blocks);
	tc_sched_free(sc);

	/*
	 * Allgather, 2 packets per node, 4-ring: step 0 both neighbours get
	 * {n,0},{n,1}; step 1 n->n+1 forwards {n-1,*}. Every message is 2 packets
	 * = 1 block: transmission 2, lockstep 2; a (n,+) link carries 4 packets.
	 * Bound: one node receives 3 blocks through 2 links: ceil(1.5) = 2.
	 */
	sc = tc_sched_new(&r4, TC_ALLGATHER, "ag2p", "test", TC_CLAIM_CONTENTION_FREE | TC_CLAIM_SHORTEST);
	sc->npackets = 2;
	tc_sched_step(sc);
	for (int n = 0; n < 4; n++)
		for (int side = 1; side <= 3; side += 2) {
			tc_sched_msg(sc, n, (n + side) % 4, NULL);
			tc_sched_blk(sc, n, 0);
			tc_sched_blk(sc, n, 1);
		}
	tc_sched_step(sc);
	for (int n = 0; n < 4; n++) {
		tc_sched_msg(sc, n, (n + 1) % 4, NULL);
		tc_sched_blk(sc, (n + 3) % 4, 0);
		tc_sched_blk(sc, (n + 3) % 4, 1);
	}
	err = tc_sched_finish(sc);
	tap_ok(!err && verify_ok(sc, (char[256]){ 0 }, 256), "verify accepts a 2-packet allgather");
	err = sim_ag(sc, 9, &bad);
	tap_ok(err == 0 && bad == 0, "sim: 2-packet allgather with 9-byte blocks (uneven packets), every byte right");
	err = tc_cost_eval(sc, NULL, &c);
	tap_ok(!err && near(c.transmission_blocks, 2) && near(c.lockstep_blocks, 2) && c.max_link_blocks == 4 &&
		       near(c.lower_bound_blocks, 2) && near(c.lower_bound_steps, 2) && near(c.ratio, 1),
	       "cost: packets count 1/npackets: transmission %g lockstep %g link %lld bound %g steps bound %g",
	       c.transmission_blocks, c.lockstep_blocks, (long long)c.max_link_blocks, c.lower_bound_blocks,
	       c.lower_bound_steps);
	tc_sched_free(sc);

	/* Lower bounds against the papers' and the notes' formulas. */
	s = shape("8x8", 0, 0);
	tap_ok(near(tc_lower_bound_blocks(&s, TC_ALLTOALL), 64), "bound: 8x8 torus N1*prod/8 = 64");
	s = shape("8x16", 0, 0);
	tap_ok(near(tc_lower_bound_blocks(&s, TC_ALLTOALL), 256), "bound: 8x16 torus 16*128/8 = 256");
	s = shape("6", 0, 0);
	tap_ok(near(tc_lower_bound_blocks(&s, TC_ALLTOALL), 5), "bound: 6-ring ceil(36/8) = 5");
	s = shape("5x7", 0, 0);
	tap_ok(near(tc_lower_bound_blocks(&s, TC_ALLTOALL), 30), "bound: 5x7 ceil(max(7*6, 5*12)/2) = 30");
	s = shape("6x6", 0, 0);
	tap_ok(near(tc_lower_bound_blocks(&s, TC_ALLTOALL), 27), "bound: 6x6 6*9/2 = 27");
	s = shape("4x4", 1, 0);
	tap_ok(near(tc_lower_bound_blocks(&s, TC_ALLTOALL), 16), "bound: 4x4 mesh bisection 16*4/4 = 16");
	s = shape("4x4", 0, 1);
	tap_ok(near(tc_lower_bound_blocks(&s, TC_ALLTOALL), 15), "bound: one-port 4x4 receives 15 blocks serially");
	s = shape("4x4x4", 0, 0);
	tap_ok(near(tc_lower_bound_blocks(&s, TC_ALLTOALL), 32), "bound: 4x4x4 torus 4*64/8 = 32");
	s = shape("2x4", 0, 0);
	tap_ok(near(tc_lower_bound_blocks(&s, TC_ALLTOALL), 4), "bound: 2x4 torus, size-2 dim has two links: 8*4/8 = 4");
	s = shape("5x5", 0, 0);
	tap_ok(near(tc_lower_bound_blocks(&s, TC_ALLGATHER), 6), "bound: allgather 5x5 torus ceil(24/4) = 6");
	s = shape("5x5", 1, 0);
	tap_ok(near(tc_lower_bound_blocks(&s, TC_ALLGATHER), 12), "bound: allgather 5x5 mesh corner ceil(24/2) = 12");
}

/*
 * One message per (src, dst, route, blocks) entry, a step per group; the
 * blocks are (src, dst) pairs only the cost model counts.
 */
struct tmsg {
	int step, src, dst, hops, nblk;
};

static struct tc_sched *hand_sched(const struct tc_shape *s, const struct tmsg *m, int n)
{
	struct tc_sched *sc = tc_sched_new(s, TC_ALLTOALL, "hand", "", 0);
	int step = -1;

	for (int i = 0; i < n; i++) {
		int8_t r[TC_MAX_DIMS] = { (int8_t)m[i].hops };

		if (m[i].step != step) {
			tc_sched_step(sc);
			step = m[i].step;
		}
		tc_sched_msg(sc, m[i].src, m[i].dst, r);
		for (int b = 0; b < m[i].nblk; b++)
			tc_sched_blk(sc, m[i].src, (m[i].dst + b) % s->nodes);
	}
	if (tc_sched_finish(sc)) {
		fprintf(stderr, "hand schedule: %s\n", tc_last_error());
		exit(2);
	}
	return sc;
}

static double priced_rdv(const struct tc_sched *sc, unsigned int flags, double lat, double rdv, size_t eager)
{
	struct tc_cost_params p = { .ts_us = 10, .tw_us_per_byte = 1, .hop_us = 2, .block_bytes = 4, .flags = flags,
				    .lat_us = lat, .rdv_us = rdv, .eager_bytes = eager };
	struct tc_cost c;

	return tc_cost_eval(sc, &p, &c) ? -1 : c.time_us;
}

static double priced(const struct tc_sched *sc, unsigned int flags, double lat)
{
	return priced_rdv(sc, flags, lat, 0, 0);
}

/*
 * How a transport runs a message (cost.h TC_COST_*), ts 10, tw 1, hop 2, m 4.
 * 8-ring, one step: 0->3 (+3), 1->2 (+1), 0->5 (-3), a block each.
 *   Routed: 0->3 lasts 10 + 3*2 + 4 = 20 on (0,+),(1,+),(2,+); 1->2 waits
 *   for (1,+): 20..36; 0->5 on the - links 0..20. 36 us.
 *   Direct (verbs): a message is one transfer, 10 + 4 = 14 whatever its
 *   route, holding no link: 0->3 0..14, 1->2 0..14; 0->5 waits for node 0's
 *   send port: 14..28. 28 us.
 * 8-ring, step 0: 0->1 (+1, 3 blocks: 10 + 2 + 12 = 24); step 1: 2->1 (-1,
 *   1 block: 16). Both ends (routed): 2->1 starts at node 1's 24, ends 40.
 *   Sender start (the device): at node 2's 0, ends 16: 24 us. One-port
 *   ring with sender start: node 1's receive port is busy until 24: 40 us.
 * Direct with latency 5 (after the ports are free, overlapping): the fan
 *   ends 0->3 at 14+5, 1->2 at 14+5, 0->5 at 28+5: 33 us (not 28 + 3*5);
 *   the chain: 0->1 holds the ports 0..22, ends 27; 2->1 waits for node 1's
 *   27, holds 27..41, ends 46: two latencies.
 * Direct, one step listed 0->1, 2->1, 2->3 (a block each, 14 us): node 2
 *   sends two and node 1 receives two, so the step lasts 28, whatever the
 *   listing (which, taking turns in it, ran 2->3 after 2->1 after 0->1: 42).
 * Rendezvous 7 above an eager limit: the fan's messages (4 B each) above
 *   3 B overlap it as they overlap lat: 33 + 7 = 40; at a limit of 4 B none
 *   pays it: 33. The chain at 8 B: 0->1 (12 B) ends 27 + 7 = 34, 2->1 (4 B,
 *   eager) holds 34..48, ends 53.
 */
static void test_cost_transport(void)
{
	const struct tmsg fan[] = { { 0, 0, 3, 3, 1 }, { 0, 1, 2, 1, 1 }, { 0, 0, 5, -3, 1 } };
	const struct tmsg late[] = { { 0, 0, 1, 1, 3 }, { 1, 2, 1, -1, 1 } };
	const struct tmsg order[] = { { 0, 0, 1, 1, 1 }, { 0, 2, 1, -1, 1 }, { 0, 2, 3, 1, 1 } };
	struct tc_shape ring = shape("8", 0, 0), ring1p = shape("8", 0, 1);
	struct tc_sched *sc;
	double t;

	sc = hand_sched(&ring, fan, 3);
	t = priced(sc, 0, 0);
	tap_ok(near(t, 36), "cost, routed: per-hop time and a shared link serialise: %g us (want 36)", t);
	t = priced(sc, TC_COST_DIRECT, 0);
	tap_ok(near(t, 28), "cost, direct: a 3-hop message is one startup, links are not held, a node's sends queue: %g us (want 28)", t);
	t = priced(sc, TC_COST_DIRECT, 5);
	tap_ok(near(t, 33), "cost, direct: a step's messages overlap their latencies: %g us (want 33)", t);
	t = priced_rdv(sc, TC_COST_DIRECT, 5, 7, 3);
	tap_ok(near(t, 40), "cost, direct: a step's rendezvous messages overlap their ready-to-receive trips: %g us (want 40)", t);
	t = priced_rdv(sc, TC_COST_DIRECT, 5, 7, 4);
	tap_ok(near(t, 33), "cost, direct: a message of exactly the eager limit pays no rendezvous: %g us (want 33)", t);
	tc_sched_free(sc);

	sc = hand_sched(&ring, late, 2);
	t = priced(sc, 0, 0);
	tap_ok(near(t, 40), "cost, routed: a message waits for both ends' earlier steps: %g us (want 40)", t);
	t = priced(sc, TC_COST_SENDER_START, 0);
	tap_ok(near(t, 24), "cost, sender start: a late receiver does not hold a message back: %g us (want 24)", t);
	t = priced(sc, TC_COST_DIRECT, 5);
	tap_ok(near(t, 46), "cost, direct: dependent steps pay a latency each: %g us (want 46)", t);
	t = priced_rdv(sc, TC_COST_DIRECT, 5, 7, 8);
	tap_ok(near(t, 53), "cost, direct: only the step whose message is above the eager limit pays the rendezvous: %g us (want 53)", t);
	tc_sched_free(sc);

	sc = hand_sched(&ring, order, 3);
	t = priced(sc, TC_COST_DIRECT, 0);
	tap_ok(near(t, 28), "cost, direct: a step lasts the most work a port has, not the listing's turns: %g us (want 28)", t);
	tc_sched_free(sc);

	sc = hand_sched(&ring1p, late, 2);
	t = priced(sc, TC_COST_SENDER_START, 0);
	tap_ok(near(t, 40), "cost, sender start one-port: the receiver's port serialises: %g us (want 40)", t);
	tc_sched_free(sc);
}

/*
 * The verbs probe's fit (tc_cost_fit_direct): step times made from known
 * parameters give them back. ts 3, lat 5, tw 0.25, rdv 6 above 1000 B, at
 * 64 / 4096 / 65536 B: chain steps 3+5+16 = 24, 3+5+1024+6 = 1038,
 * 3+5+16384+6 = 16398; a burst of 8: 8*(3+16) + 5 = 157.
 */
static void test_cost_fit(void)
{
	const size_t len[3] = { 64, 4096, 65536 };
	const double c[3] = { 24, 1038, 16398 }, noisy[3] = { 24, 1030, 16398 };
	struct tc_cost_params p = { .eager_bytes = 1000 };

	tc_cost_fit_direct(c, len, 157, 8, &p);
	tap_ok(near(p.ts_us, 3) && near(p.lat_us, 5) && near(p.tw_us_per_byte, 0.25) && near(p.rdv_us, 6) &&
		       p.eager_bytes == 1000,
	       "cost fit: ts %g lat %g tw %g rdv %g (want 3 5 0.25 6)", p.ts_us, p.lat_us, p.tw_us_per_byte, p.rdv_us);
	p.eager_bytes = 4096;
	tc_cost_fit_direct(c, len, 157, 8, &p);
	tap_ok(near(p.rdv_us, 0), "cost fit: no rendezvous when the middle size goes eager too: rdv %g", p.rdv_us);
	p.eager_bytes = 1000;
	tc_cost_fit_direct(noisy, len, 20, 8, &p);
	tap_ok(near(p.ts_us, 0) && p.lat_us > 7.95 && p.lat_us < 8.05 && near(p.rdv_us, 0),
	       "cost fit: a burst faster than a chain step and a rendezvous under the line clip at 0: ts %g lat %g rdv %g",
	       p.ts_us, p.lat_us, p.rdv_us);
	tc_cost_fit_direct(c, len, 0, 1, &p);
	tap_ok(near(p.ts_us, 8) && near(p.lat_us, 0), "cost fit: no burst (2 ranks): the chain step less its bytes is all ts: ts %g lat %g",
	       p.ts_us, p.lat_us);
}

/*
 * A message's bytes beyond big_bytes at tw_big (verbs: the probe's rate
 * above its 64 KiB step). tw 1, tw_big 3 beyond 100 B: 50 B cost 50, 100 B
 * 100, 300 B 100 + 200*3 = 700; with big_bytes 0 every byte costs tw.
 * Priced (ts 10, tw 1, m 4, direct, lat 5): the chain of test_cost_transport
 * (0->1 3 blocks = 12 B, then 2->1 4 B) with tw_big 2 beyond 4 B: 0->1 holds
 * the ports 10 + 4 + 8*2 = 30, ends 35; 2->1 (4 B, all at tw) 35..49, ends
 * 54 (46 at tw alone). The fan (4 B each) with tw_big 3 beyond 2 B: each
 * 10 + 2 + 2*3 = 18, node 0's two in turn: 36 (28 at tw alone).
 * The fit: the chain of test_cost_fit (ts 3, lat 5, tw 0.25, rdv 6; 16398
 * at 64 KiB) at 1 MiB with tw_big 0.5: 16398 + 983040*0.5 = 507918 gives
 * tw_big 0.5 beyond 64 KiB back, and the line through both steps.
 */
static void test_cost_big(void)
{
	const struct tmsg late[] = { { 0, 0, 1, 1, 3 }, { 1, 2, 1, -1, 1 } };
	const struct tmsg fan[] = { { 0, 0, 3, 3, 1 }, { 0, 1, 2, 1, 1 }, { 0, 0, 5, -3, 1 } };
	struct tc_cost_params p = { .ts_us = 10, .tw_us_per_byte = 1, .block_bytes = 4, .flags = TC_COST_DIRECT,
				    .lat_us = 5, .tw_big_us_per_byte = 3, .big_bytes = 100 };
	struct tc_shape ring = shape("8", 0, 0);
	struct tc_sched *sc;
	struct tc_cost c;
	double t;

	tap_ok(near(tc_cost_bytes_us(&p, 50), 50) && near(tc_cost_bytes_us(&p, 100), 100) &&
		       near(tc_cost_bytes_us(&p, 300), 700),
	       "cost, big messages: bytes beyond big_bytes at tw_big: %g %g %g (want 50 100 700)",
	       tc_cost_bytes_us(&p, 50), tc_cost_bytes_us(&p, 100), tc_cost_bytes_us(&p, 300));
	p.big_bytes = 0;
	tap_ok(near(tc_cost_bytes_us(&p, 300), 300), "cost, big messages: big_bytes 0 prices every byte at tw: %g",
	       tc_cost_bytes_us(&p, 300));

	sc = hand_sched(&ring, late, 2);
	p.big_bytes = 4;
	p.tw_big_us_per_byte = 2;
	t = tc_cost_eval(sc, &p, &c) ? -1 : c.time_us;
	tap_ok(near(t, 54), "cost, direct: only the message above big_bytes pays tw_big for its excess: %g us (want 54)", t);
	tc_sched_free(sc);
	sc = hand_sched(&ring, fan, 3);
	p.lat_us = 0;
	p.big_bytes = 2;
	p.tw_big_us_per_byte = 3;
	t = tc_cost_eval(sc, &p, &c) ? -1 : c.time_us;
	tap_ok(near(t, 36), "cost, direct: tw_big holds the ports as tw does: %g us (want 36)", t);
	tc_sched_free(sc);

	memset(&p, 0, sizeof(p));
	p.ts_us = 3, p.lat_us = 5, p.tw_us_per_byte = 0.25, p.rdv_us = 6;
	tc_cost_fit_big(507918, 1048576, 16398, 65536, &p);
	t = p.ts_us + p.lat_us + p.rdv_us + tc_cost_bytes_us(&p, 1048576);
	tap_ok(near(p.tw_big_us_per_byte, 0.5) && p.big_bytes == 65536 && near(t, 507918) &&
		       near(p.ts_us + p.lat_us + p.rdv_us + tc_cost_bytes_us(&p, 65536), 16398),
	       "cost fit, big: tw_big %g beyond %zu B, a 1 MiB step priced %g (want 0.5, 65536, 507918)",
	       p.tw_big_us_per_byte, p.big_bytes, t);
	tc_cost_fit_big(16000, 1048576, 16398, 65536, &p);
	tap_ok(p.big_bytes == 0 && near(tc_cost_bytes_us(&p, 1048576), 262144),
	       "cost fit, big: a big step faster than the 64 KiB one keeps every byte at tw: big_bytes %zu", p.big_bytes);
}

/*
 * ts_cap (verbs on a host with fewer cores than ranks): a port pays ts for
 * at most ts_cap of a step's messages. Node 0 of a ring of 8 sends one
 * block (4 B) to each of 1, 2, 3 and 7 in one step (ts 10, tw 1, direct,
 * lat 0): its send port works 4*(10 + 4) = 56 without a cap, 2*10 + 4*4 =
 * 36 with ts_cap 2 and 25 + 16 = 41 with 2.5 (the third message pays half
 * a ts); each receiver's port 14. The fit (tc_cost_fit_fan) after
 * test_cost_fit's (ts 3, lat 5, tw 0.25, 64 B: a burst of 8 157, the
 * linear model's step of 15 15*19 + 5 = 290): a step of 15 measured 275
 * gives (275 - 5 - 240) / 3 = 10; 250 gives 1.67, raised to the 8 of the
 * burst the fit used; 290 or more, or no more peers than the burst, no cap.
 */
static void test_cost_fan(void)
{
	const struct tmsg fan4[] = { { 0, 0, 1, 1, 1 }, { 0, 0, 2, 2, 1 }, { 0, 0, 3, 3, 1 }, { 0, 0, 7, -1, 1 } };
	struct tc_cost_params p = { .ts_us = 10, .tw_us_per_byte = 1, .block_bytes = 4, .flags = TC_COST_DIRECT };
	struct tc_shape ring = shape("8", 0, 0);
	struct tc_sched *sc = hand_sched(&ring, fan4, 4);
	double t[3];
	struct tc_cost c;

	for (int i = 0; i < 3; i++) {
		p.ts_cap = i == 0 ? 0 : i == 1 ? 2 : 2.5;
		t[i] = tc_cost_eval(sc, &p, &c) ? -1 : c.time_us;
	}
	tap_ok(near(t[0], 56) && near(t[1], 36) && near(t[2], 41),
	       "cost, direct: a port pays ts for at most ts_cap of a step's messages: %g %g %g us (want 56 36 41)", t[0],
	       t[1], t[2]);
	p.ts_cap = 2;
	p.flags = 0;
	t[0] = tc_cost_eval(sc, &p, &c) ? -1 : c.time_us;
	p.ts_cap = 0;
	t[1] = tc_cost_eval(sc, &p, &c) ? -1 : c.time_us;
	tap_ok(t[0] > 0 && near(t[0], t[1]), "cost, routed: ts_cap is the direct model's only: %g us = %g", t[0], t[1]);
	tc_sched_free(sc);

	memset(&p, 0, sizeof(p));
	p.ts_us = 3, p.lat_us = 5, p.tw_us_per_byte = 0.25;
	tc_cost_fit_fan(275, 15, 64, 8, &p);
	t[0] = p.ts_cap;
	tc_cost_fit_fan(250, 15, 64, 8, &p);
	t[1] = p.ts_cap;
	tc_cost_fit_fan(290, 15, 64, 8, &p);
	t[2] = p.ts_cap;
	tap_ok(near(t[0], 10) && near(t[1], 8) && near(t[2], 0),
	       "cost fit, fan: ts_cap %g from a step of 15 under the line, %g when its bytes leave less than the burst's 8, "
	       "%g on or above the line (want 10 8 0)", t[0], t[1], t[2]);
	tc_cost_fit_fan(100, 8, 64, 8, &p);
	tap_ok(near(p.ts_cap, 0), "cost fit, fan: no more peers than the burst, no cap: %g", p.ts_cap);
}

int main(void)
{
	test_shapes();
	test_builder();
	test_verify();
	test_verify_ag_twice();
	test_cost();
	test_cost_transport();
	test_cost_fit();
	test_cost_big();
	test_cost_fan();
	return tap_done();
}
