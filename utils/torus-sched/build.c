// SPDX-License-Identifier: GPL-2.0
/*
 * torus-sched: the shape of --dims/--mesh/--wrap, the algorithm (--algo, or
 * the library's choice for auto), and its schedule built, verified and
 * priced, with the CPU time each took.
 */
#include <string.h>
#include <time.h>

#include "sched.h"

/* Above this many nodes a translation-invariant schedule is checked from its cell. */
#define TC_SCHED_TRANSLATE_NODES 1024

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* --dims, --mesh, --wrap, --one-port into r->shape (bad input: exit 2). */
void sched_shape(const struct sched_opts *o, struct sched_result *r)
{
	struct tc_shape *shape = &r->shape;

	uint32_t ud[TC_MAX_DIMS];
	int dims[TC_MAX_DIMS], nd;
	long long nodes = 1;

	/* the tools' shape syntax (4x4 or 4,4), then the schedule layer's limits, named */
	nd = tool_parse_dims("--dims", o->dims, ud, TC_MAX_DIMS, 254);
	for (int d = 0; d < nd; d++) {
		dims[d] = (int)ud[d];
		nodes *= dims[d];
		if (o->mesh && dims[d] > 128)
			die(2, "--dims %s: a mesh side is at most 128 (a torus side 254)", o->dims);
	}
	if (nodes > 1 << 20)
		die(2, "--dims %s: %lld nodes, at most 1048576", o->dims, nodes);
	if (tc_shape_init(shape, nd, dims, o->mesh ? 0 : (1u << nd) - 1, o->one_port))
		die(2, "bad --dims '%s'", o->dims);
	if (o->wrap) {
		const char *w = o->wrap;
		unsigned int mask = 0;
		int d = 0;

		for (;;) {
			if ((*w != '0' && *w != '1') || d >= shape->ndims)
				die(2, "bad --wrap '%s': one 0/1 flag per dimension, comma separated", o->wrap);
			mask |= (unsigned int)(*w - '0') << d++;
			w++;
			if (!*w)
				break;
			if (*w++ != ',')
				die(2, "bad --wrap '%s': one 0/1 flag per dimension, comma separated", o->wrap);
		}
		if (d != shape->ndims)
			die(2, "bad --wrap '%s': one 0/1 flag per dimension, comma separated", o->wrap);
		if (tc_shape_init(shape, shape->ndims, shape->dims, mask, o->one_port))
			die(2, "bad shape with --wrap '%s' (mesh dimensions are at most 128)", o->wrap);
	}
	tc_shape_str(shape, r->shape_str, sizeof(r->shape_str));
}

/*
 * The algorithm: the one --algo names, or for auto the library's choice for
 * --m, priced with the cost options or, when none is given, with the
 * module's default timing (which o->p then holds, for the printout).
 */
void sched_choose(struct sched_opts *o, struct sched_result *r)
{
	int err;

	o->p.flags = o->flags;
	if (o->explain && strcmp(o->algo_name, "auto"))
		die(2, "%s", "--explain goes with --algo auto");
	if (strcmp(o->algo_name, "auto")) {
		r->algo = tc_algo_find(o->coll, o->algo_name);
		if (!r->algo)
			die(2, "unknown algorithm '%s' for this collective (see --list)", o->algo_name);
		return;
	}
	if (!o->priced) {
		size_t m = o->p.block_bytes;

		tc_cost_params_default(&o->p);
		o->p.block_bytes = m;
		o->priced = 1;
	}
	o->p.flags = o->flags;
	r->t_choose = now();
	r->whole_choose = __tc_sched_whole_builds();
	err = tc_auto_choose(o->coll, &r->shape, o->p.block_bytes, &o->p, &r->choice);
	r->t_choose = now() - r->t_choose;
	r->whole_choose = __tc_sched_whole_builds() - r->whole_choose;
	if (err == -EOPNOTSUPP && o->explain) {
		if (o->json)
			sched_print_json_nochoice(o, r);
		else
			sched_explain_text(&r->choice);
	}
	if (err)
		die(3, "auto: no %s algorithm supports this shape", tc_coll_str(o->coll));
	r->algo = r->choice.cand[r->choice.winner].algo;
}

static void sched_build_translated(const struct sched_opts *o, struct sched_result *r)
{
	const char *why = NULL;
	double t0 = now();
	int err;

	err = tc_sched_check_translated(r->algo, &r->shape, &o->p, &o->p.block_bytes, 1, &r->cost.time_us, &r->rep,
					&r->cost, &r->sym, &why);
	r->t_verify = now() - t0;
	if (err == -EOPNOTSUPP)
		die(3, "%s", why ? why : "the algorithm does not support this shape");
	if (err && err != -EPROTO)
		die(4, "%s: build failed (%s): %s", r->algo->name, strerror(-err), why ? why : tc_last_error());
	r->translated = 1;
	r->s = tc_sched_new(&r->shape, r->algo->coll, r->algo->name, r->sym.cite, r->sym.claims);
	if (!r->s)
		die(4, "%s", tc_last_error());
	r->s->nsteps = r->sym.steps;
}

/*
 * Build r->algo's schedule for r->shape, verify it (a violation is kept in
 * r->rep, not fatal) and price it with o->p. An unsupported shape exits 3,
 * any other failure 4.
 */
void sched_build(const struct sched_opts *o, struct sched_result *r)
{
	const char *why = NULL;
	double t0;
	int err;

	/*
	 * A translation-invariant schedule on a large shape: verified and
	 * priced from the blocks of one cell of sources and the whole
	 * schedule's messages, without its P^2 blocks (unless --run, --dump or
	 * --links need them).
	 */
	if (r->shape.nodes > TC_SCHED_TRANSLATE_NODES && tc_algo_translated(r->algo, &r->shape) && !o->run &&
	    !o->dump && !o->links) {
		sched_build_translated(o, r);
		return;
	}
	t0 = now();
	err = r->algo->build(&r->shape, &r->s, &why);
	r->t_build = now() - t0;
	if (err == -EOPNOTSUPP)
		die(3, "%s", why ? why : "the algorithm does not support this shape");
	if (err)
		die(4, "%s: build failed (%s): %s", r->algo->name, strerror(-err), why ? why : tc_last_error());
	if (!r->s || !r->s->step_first)
		die(4, "%s: build returned no finished schedule", r->algo->name);
	t0 = now();
	err = tc_verify(r->s, &r->rep);
	r->t_verify = now() - t0;
	if (err && err != -EPROTO)
		die(4, "%s", tc_last_error());
	err = tc_cost_eval(r->s, &o->p, &r->cost);
	if (err)
		die(4, "%s", tc_last_error());
}
