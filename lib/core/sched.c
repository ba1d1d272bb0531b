// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Schedule builder: growable message and block arrays, tc_sched_finish()
 * (drop empties, order by step, validate, per-node views).
 *
 * Errors: every function returns a negative errno; the reason of the last
 * -EINVAL/-ENOMEM is kept in a per-thread string (tc_last_error()).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched.h"

/* A streamed schedule (tc_sched_stream). */
struct tc_sched_stream {
	tc_step_sink_fn sink;
	void *arg;
	uint32_t nsteps;	/* steps handed over: the number of the next one */
	uint64_t nmsgs, nblks;	/* messages and blocks handed over */
	int finished;
	int dropped;		/* messages of an earlier step have been dropped */
};

/* A streamed schedule keeps at most this much room between steps (8 MB each). */
#define TC_STREAM_KEEP_BLKS (1u << 20)
#define TC_STREAM_KEEP_MSGS (1u << 18)

/* The request of tc_sched_build_streamed running in this thread. */
struct stream_request {
	const struct tc_shape *shape;
	enum tc_coll_id coll;
	tc_step_sink_fn sink;
	void *arg;
	struct tc_sched *attached; /* the schedule it streams, once created */
	int armed;
};

static __thread struct stream_request tc_stream_req;

/* The request of tc_sched_build_sources running in this thread. */
struct sources_request {
	const struct tc_shape *shape;
	enum tc_coll_id coll;
	const int *mod;
	struct tc_sched *attached;
	int armed;
};

static __thread struct sources_request tc_sources_req;

/*
 * The whole build running in this thread (tc_sched_build_whole,
 * tc_sched_build_streamed): counted once the builder creates its schedule
 * of this shape and collective, so a builder that refuses the shape before
 * it creates one is not counted.
 */
struct whole_request {
	const struct tc_shape *shape;
	enum tc_coll_id coll;
	int armed, counted;
};

static __thread struct whole_request tc_whole_req;
static __thread int tc_whole_last_built; /* the last whole request of this thread created its schedule */
static unsigned long tc_sched_nwhole; /* atomic */

static const char *const tc_coll_names[TC_COLL_NR] = {
	[TC_ALLTOALL] = "alltoall",
	[TC_ALLGATHER] = "allgather",
	[TC_REDUCE_SCATTER] = "reduce_scatter",
	[TC_ALLREDUCE] = "allreduce",
	[TC_BCAST] = "bcast",
	[TC_REDUCE] = "reduce",
	[TC_BARRIER] = "barrier",
	[TC_ALLGATHERV] = "allgatherv",
	[TC_ALLTOALLV] = "alltoallv",
};

const char *tc_coll_str(enum tc_coll_id coll)
{
	return (unsigned int)coll < TC_COLL_NR ? tc_coll_names[coll] : "?";
}

struct tc_sched *tc_sched_new(const struct tc_shape *shape, enum tc_coll_id coll, const char *algo, const char *cite,
			      unsigned int claims)
{
	struct tc_sched *s;

	if (!shape || shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 1) {
		tc_err(-EINVAL, "tc_sched_new: invalid shape (not from tc_shape_init?)");
		return NULL;
	}
	if ((unsigned int)coll >= TC_COLL_NR) {
		tc_err(-EINVAL, "tc_sched_new: unknown collective %d", (int)coll);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		tc_err(-ENOMEM, "tc_sched_new: out of memory");
		return NULL;
	}
	s->shape = *shape;
	s->coll = coll;
	s->algo = algo ? algo : "?";
	s->cite = cite ? cite : "";
	s->claims = claims;
	s->npackets = 1;
	if (tc_whole_req.armed && !tc_whole_req.counted && coll == tc_whole_req.coll &&
	    tc_shape_equal(shape, tc_whole_req.shape)) {
		tc_whole_req.counted = 1;
		__atomic_add_fetch(&tc_sched_nwhole, 1, __ATOMIC_RELAXED);
	}
	if (tc_stream_req.armed && !tc_stream_req.attached && coll == tc_stream_req.coll &&
	    tc_shape_equal(shape, tc_stream_req.shape)) {
		if (tc_sched_stream(s, tc_stream_req.sink, tc_stream_req.arg)) {
			free(s);
			return NULL;
		}
		tc_stream_req.attached = s;
	}
	if (tc_sources_req.armed && !tc_sources_req.attached && coll == tc_sources_req.coll &&
	    tc_shape_equal(shape, tc_sources_req.shape)) {
		for (int d = 0; d < shape->ndims; d++)
			s->src_mod[d] = tc_sources_req.mod[d];
		tc_sources_req.attached = s;
	}
	return s;
}

int tc_sched_src_kept(const struct tc_sched *s, int o)
{
	if (!s->src_mod[0])
		return 1;
	for (int d = s->shape.ndims - 1; d >= 0; d--) {
		if (o % s->shape.dims[d] >= s->src_mod[d])
			return 0;
		o /= s->shape.dims[d];
	}
	return 1;
}

static int finished(const struct tc_sched *s)
{
	return s->step_first || (s->stream && s->stream->finished);
}

static int check_msg(const struct tc_sched *s, const struct tc_msg *m);

/*
 * Hand the step being built to the sink, compacted and checked as
 * tc_sched_finish would, and drop its messages and blocks.
 */
static int stream_flush(struct tc_sched *s)
{
	struct tc_sched_stream *st = s->stream;
	struct tc_step_view v;
	uint32_t n = 0, nb = 0;
	int err = 0;

	for (uint32_t i = 0; i < s->nmsgs; i++) {
		const struct tc_msg m = s->msgs[i];

		if (m.blk_off != nb || m.nblk > s->nblks - nb)
			return tc_err(-EINVAL, "%s: message %u: blocks beyond the block array", s->algo,
						  i);
		nb += m.nblk;
		if (!m.nblk)
			continue;
		s->msgs[n] = m;
		s->msgs[n].step = st->nsteps;
		n++;
	}
	for (uint32_t i = 0; i < n; i++) {
		err = check_msg(s, &s->msgs[i]);
		if (err)
			return err;
	}
	if (n) {
		v.step = st->nsteps;
		v.nmsgs = n;
		v.msgs = s->msgs;
		v.blks = s->blks;
		err = st->sink(st->arg, s, &v);
		st->nsteps++;
		st->nmsgs += n;
		st->nblks += nb;
	}
	if (s->nmsgs)
		st->dropped = 1;
	s->nmsgs = 0;
	s->nblks = 0;
	/*
	 * A large step's arrays go back too: a builder streaming into another
	 * (pad over AT2: 2e8 blocks in the first step of 128x128) would
	 * otherwise keep both steps' arrays, 4 GB, next to the verifier.
	 */
	if (s->cap_blks > TC_STREAM_KEEP_BLKS) {
		free(s->blks);
		s->blks = NULL;
		s->cap_blks = 0;
	}
	if (s->cap_msgs > TC_STREAM_KEEP_MSGS) {
		free(s->msgs);
		s->msgs = NULL;
		s->cap_msgs = 0;
	}
	return err;
}

int tc_sched_stream(struct tc_sched *s, tc_step_sink_fn sink, void *arg)
{
	if (!s || !sink)
		return tc_err(-EINVAL, "tc_sched_stream: no schedule or no sink");
	if (s->stream || finished(s) || s->nsteps)
		return tc_err(-EINVAL, "%s: tc_sched_stream after the first step", s->algo);
	s->stream = calloc(1, sizeof(*s->stream));
	if (!s->stream)
		return tc_err(-ENOMEM, "%s: tc_sched_stream: out of memory", s->algo);
	s->stream->sink = sink;
	s->stream->arg = arg;
	return 0;
}

void tc_sched_streamed_totals(const struct tc_sched *s, uint64_t *msgs, uint64_t *blks)
{
	if (msgs)
		*msgs = s->stream ? s->stream->nmsgs : 0;
	if (blks)
		*blks = s->stream ? s->stream->nblks : 0;
}

int tc_sched_step(struct tc_sched *s)
{
	if (finished(s))
		return tc_err(-EINVAL, "%s: tc_sched_step after tc_sched_finish", s->algo);
	if (s->stream && s->nsteps) {
		int err = stream_flush(s);

		if (err)
			return err;
	}
	if (s->nsteps == UINT32_MAX)
		return tc_err(-EINVAL, "%s: too many steps", s->algo);
	return (int)s->nsteps++;
}

int tc_sched_msg(struct tc_sched *s, int src, int dst, const int8_t *route)
{
	const struct tc_shape *sh = &s->shape;
	struct tc_msg *m;

	if (finished(s))
		return tc_err(-EINVAL, "%s: tc_sched_msg after tc_sched_finish", s->algo);
	if (!s->nsteps)
		return tc_err(-EINVAL, "%s: tc_sched_msg before the first tc_sched_step", s->algo);
	if (src < 0 || src >= sh->nodes || dst < 0 || dst >= sh->nodes)
		return tc_err(-EINVAL, "%s: step %u: message %d -> %d: node out of range [0, %d)",
					  s->algo, s->nsteps - 1, src, dst, sh->nodes);
	if (s->nmsgs == UINT32_MAX ||
	    tc_grow((void **)&s->msgs, &s->cap_msgs, s->nmsgs + 1, sizeof(*s->msgs), 1024))
		return tc_err(-ENOMEM, "%s: out of memory for %u messages", s->algo, s->nmsgs + 1);
	m = &s->msgs[s->nmsgs];
	memset(m, 0, sizeof(*m));
	m->src = src;
	m->dst = dst;
	m->step = s->nsteps - 1;
	m->blk_off = s->nblks;
	m->op = TC_MSG_COPY;
	if (route) {
		memcpy(m->route, route, sizeof(m->route));
	} else {
		tc_route_nodes(sh, src, dst, 0, m->route);
	}
	return (int)s->nmsgs++;
}

int tc_sched_blk(struct tc_sched *s, int a, int b)
{
	struct tc_msg *m;

	if (finished(s))
		return tc_err(-EINVAL, "%s: tc_sched_blk after tc_sched_finish", s->algo);
	if (!s->nmsgs && s->stream && s->stream->dropped)
		return tc_err(-EINVAL, "%s: tc_sched_blk: the last message is in a step already streamed (a streamed build cannot add to an earlier step)",
					  s->algo);
	if (!s->nmsgs)
		return tc_err(-EINVAL, "%s: tc_sched_blk before any tc_sched_msg", s->algo);
	m = &s->msgs[s->nmsgs - 1];
	if (m->blk_off + m->nblk != s->nblks)
		return tc_err(-EINVAL, "%s: blocks of the last message are not contiguous", s->algo);
	if (s->nblks == UINT32_MAX ||
	    tc_grow((void **)&s->blks, &s->cap_blks, s->nblks + 1, sizeof(*s->blks), 1024))
		return tc_err(-ENOMEM, "%s: out of memory for %u blocks", s->algo, s->nblks + 1);
	s->blks[s->nblks].a = a;
	s->blks[s->nblks].b = b;
	s->nblks++;
	m->nblk++;
	return 0;
}

/* Route, endpoints and blocks of one message; 0 or -EINVAL with the reason set. */
static int check_msg(const struct tc_sched *s, const struct tc_msg *m)
{
	const struct tc_shape *sh = &s->shape;
	int end;

	if (m->src < 0 || m->src >= sh->nodes || m->dst < 0 || m->dst >= sh->nodes)
		return tc_err(-EINVAL, "%s: step %u: message %d -> %d: node out of range [0, %d)",
					  s->algo, m->step, m->src, m->dst, sh->nodes);
	if (m->src == m->dst)
		return tc_err(-EINVAL, "%s: step %u: message %d -> %d: sent to itself",
					  s->algo, m->step, m->src, m->dst);
	for (int d = 0; d < TC_MAX_DIMS; d++) {
		if (d >= sh->ndims && m->route[d])
			return tc_err(-EINVAL, "%s: step %u: message %d -> %d: hops in dimension %d of a %d-D shape",
						  s->algo, m->step, m->src, m->dst, d, sh->ndims);
		if (d < sh->ndims && (sh->wrap_mask & (1u << d)) && abs(m->route[d]) >= sh->dims[d])
			return tc_err(-EINVAL, "%s: step %u: message %d -> %d: %d hops in dimension %d go round the ring",
						  s->algo, m->step, m->src, m->dst, m->route[d], d);
	}
	end = tc_shape_walk(sh, m->src, m->route);
	if (end < 0)
		return tc_err(-EINVAL, "%s: step %u: message %d -> %d: route leaves the mesh",
					  s->algo, m->step, m->src, m->dst);
	if (end != m->dst)
		return tc_err(-EINVAL, "%s: step %u: message %d -> %d: route leads to node %d",
					  s->algo, m->step, m->src, m->dst, end);
	if (m->op != TC_MSG_COPY && m->op != TC_MSG_REDUCE)
		return tc_err(-EINVAL, "%s: step %u: message %d -> %d: unknown op %u",
					  s->algo, m->step, m->src, m->dst, m->op);
	for (uint32_t i = 0; i < m->nblk; i++) {
		const struct tc_blk *b = &s->blks[m->blk_off + i];
		int bad = b->a < 0 || b->a >= sh->nodes;

		if (s->coll == TC_ALLTOALL)
			bad |= b->b < 0 || b->b >= sh->nodes;
		else if (s->coll == TC_ALLGATHER)
			bad |= b->b < 0 || b->b >= s->npackets;
		if (bad)
			return tc_err(-EINVAL, "%s: step %u: message %d -> %d: block {%d,%d} out of range",
						  s->algo, m->step, m->src, m->dst, b->a, b->b);
	}
	return 0;
}

/*
 * Drop empty messages, order messages by step (stable) with their blocks
 * contiguous in message order, renumber steps without the empty ones.
 */
/* Check every message's step and blocks; *sorted: already in step order with contiguous blocks. */
static int compact_check(const struct tc_sched *s, int *sorted)
{
	uint32_t nb = 0;

	*sorted = 1;
	for (uint32_t i = 0; i < s->nmsgs; i++) {
		if (s->msgs[i].step >= s->nsteps)
			return tc_err(-EINVAL, "%s: message %u has step %u of %u", s->algo, i, s->msgs[i].step,
				      s->nsteps);
		if (s->msgs[i].blk_off > s->nblks || s->msgs[i].nblk > s->nblks - s->msgs[i].blk_off)
			return tc_err(-EINVAL, "%s: message %u: blocks beyond the block array", s->algo, i);
		if (i && s->msgs[i].step < s->msgs[i - 1].step)
			*sorted = 0;
		if (s->msgs[i].blk_off != nb)
			*sorted = 0;
		nb += s->msgs[i].nblk;
	}
	return 0;
}

/* Counting sort of the non-empty messages by step into fresh arrays (cnt: messages per step). */
static int compact_sort(struct tc_sched *s, uint32_t *cnt, const uint32_t *remap)
{
	struct tc_msg *msgs = malloc((size_t)(s->nmsgs ? s->nmsgs : 1) * sizeof(*msgs));
	struct tc_blk *blks = malloc((size_t)(s->nblks ? s->nblks : 1) * sizeof(*blks));
	uint32_t pos = 0, nb = 0;

	if (!msgs || !blks) {
		free(msgs);
		free(blks);
		return tc_err(-ENOMEM, "%s: out of memory finishing", s->algo);
	}
	for (uint32_t st = 0; st < s->nsteps; st++) {
		uint32_t c = cnt[st];

		cnt[st] = pos;
		pos += c;
	}
	for (uint32_t i = 0; i < s->nmsgs; i++)
		if (s->msgs[i].nblk)
			msgs[cnt[s->msgs[i].step]++] = s->msgs[i];
	for (uint32_t i = 0; i < pos; i++) {
		memcpy(&blks[nb], &s->blks[msgs[i].blk_off], msgs[i].nblk * sizeof(*blks));
		msgs[i].blk_off = nb;
		nb += msgs[i].nblk;
		msgs[i].step = remap[msgs[i].step];
	}
	free(s->msgs);
	free(s->blks);
	s->msgs = msgs;
	s->blks = blks;
	s->cap_msgs = s->nmsgs ? s->nmsgs : 1;
	s->cap_blks = s->nblks ? s->nblks : 1;
	s->nblks = nb;
	s->nmsgs = pos;
	return 0;
}

static int compact(struct tc_sched *s)
{
	uint32_t nsteps = s->nsteps, *cnt, *remap, n = 0, newsteps = 0;
	int sorted, err = compact_check(s, &sorted);

	if (err)
		return err;
	cnt = calloc((size_t)nsteps + 1, sizeof(*cnt));
	remap = calloc((size_t)nsteps + 1, sizeof(*remap));
	if (!cnt || !remap) {
		free(cnt);
		free(remap);
		return tc_err(-ENOMEM, "%s: out of memory finishing", s->algo);
	}
	for (uint32_t i = 0; i < s->nmsgs; i++)
		if (s->msgs[i].nblk)
			cnt[s->msgs[i].step]++;
	for (uint32_t st = 0; st < nsteps; st++)
		remap[st] = cnt[st] ? newsteps++ : UINT32_MAX;
	if (sorted) {
		/* In place: keep order, squeeze out empty messages (blocks stay contiguous). */
		for (uint32_t i = 0; i < s->nmsgs; i++) {
			if (!s->msgs[i].nblk)
				continue;
			s->msgs[n] = s->msgs[i];
			s->msgs[n].step = remap[s->msgs[i].step];
			n++;
		}
		s->nmsgs = n;
	} else {
		err = compact_sort(s, cnt, remap);
	}
	if (!err)
		s->nsteps = newsteps;
	free(cnt);
	free(remap);
	return err;
}

int tc_sched_finish(struct tc_sched *s)
{
	const int nodes = s->shape.nodes;
	uint32_t *cur;
	size_t nv;
	int err;

	if (finished(s))
		return tc_err(-EINVAL, "%s: tc_sched_finish called twice", s->algo);
	if (s->npackets < 1)
		return tc_err(-EINVAL, "%s: npackets %d < 1", s->algo, s->npackets);
	if (s->stream) {
		/* The last step goes out; what is left is a shell. */
		err = s->nsteps ? stream_flush(s) : 0;
		if (err)
			return err;
		s->nsteps = s->stream->nsteps;
		s->stream->finished = 1;
		free(s->msgs);
		free(s->blks);
		s->msgs = NULL;
		s->blks = NULL;
		s->cap_msgs = 0;
		s->cap_blks = 0;
		return 0;
	}
	err = compact(s);
	if (err)
		return err;
	for (uint32_t i = 0; i < s->nmsgs; i++) {
		err = check_msg(s, &s->msgs[i]);
		if (err)
			return err;
	}

	s->step_first = calloc((size_t)s->nsteps + 1, sizeof(*s->step_first));
	if (!s->step_first)
		return tc_err(-ENOMEM, "%s: out of memory finishing", s->algo);
	for (uint32_t i = 0; i < s->nmsgs; i++)
		s->step_first[s->msgs[i].step + 1]++;
	for (uint32_t st = 0; st < s->nsteps; st++)
		s->step_first[st + 1] += s->step_first[st];

	/* Per-node views: for (node, step), the messages sent, then those received. */
	nv = (size_t)nodes * s->nsteps;
	if (nv + 1 > UINT32_MAX || 2 * (size_t)s->nmsgs > UINT32_MAX)
		goto err_nomem;
	s->node_first = calloc(nv + 1, sizeof(*s->node_first));
	s->node_msgs = malloc(((size_t)s->nmsgs * 2 + 1) * sizeof(*s->node_msgs));
	cur = malloc((nv + 1) * sizeof(*cur));
	if (!s->node_first || !s->node_msgs || !cur) {
		free(cur);
		goto err_nomem;
	}
	for (uint32_t i = 0; i < s->nmsgs; i++) {
		const struct tc_msg *m = &s->msgs[i];

		s->node_first[(size_t)m->src * s->nsteps + m->step + 1]++;
		s->node_first[(size_t)m->dst * s->nsteps + m->step + 1]++;
	}
	for (size_t v = 0; v < nv; v++)
		s->node_first[v + 1] += s->node_first[v];
	memcpy(cur, s->node_first, (nv + 1) * sizeof(*cur));
	for (uint32_t i = 0; i < s->nmsgs; i++)
		s->node_msgs[cur[(size_t)s->msgs[i].src * s->nsteps + s->msgs[i].step]++] = i;
	for (uint32_t i = 0; i < s->nmsgs; i++)
		s->node_msgs[cur[(size_t)s->msgs[i].dst * s->nsteps + s->msgs[i].step]++] = i;
	free(cur);
	return 0;

err_nomem:
	free(s->step_first);
	free(s->node_first);
	free(s->node_msgs);
	s->step_first = NULL;
	s->node_first = NULL;
	s->node_msgs = NULL;
	return tc_err(-ENOMEM, "%s: out of memory for per-node views (%d nodes x %u steps)",
				  s->algo, nodes, s->nsteps);
}

void tc_sched_free(struct tc_sched *s)
{
	if (!s)
		return;
	free(s->step_first);
	free(s->msgs);
	free(s->blks);
	free(s->node_first);
	free(s->node_msgs);
	free(s->stream);
	free(s);
}

int tc_sched_done(struct tc_sched *s, int err, struct tc_sched **out, const char **why, const char *fail_why)
{
	if (err >= 0)
		err = tc_sched_finish(s);
	if (err) {
		tc_sched_free(s);
		*why = fail_why;
		return err;
	}
	*out = s;
	return 0;
}

unsigned long __tc_sched_whole_builds(void)
{
	return __atomic_load_n(&tc_sched_nwhole, __ATOMIC_RELAXED);
}

int tc_sched_build_whole(const struct tc_algo *algo, const struct tc_shape *shape, struct tc_sched **out,
			 const char **why)
{
	const struct whole_request saved = tc_whole_req;
	int err;

	tc_whole_req = (struct whole_request){ .shape = shape, .coll = algo->coll, .armed = 1 };
	err = algo->build(shape, out, why);
	tc_whole_last_built = tc_whole_req.counted;
	tc_whole_req = saved;
	return err;
}

int tc_sched_whole_built(void)
{
	return tc_whole_last_built;
}

int tc_sched_build_streamed(const struct tc_algo *algo, const struct tc_shape *shape, tc_step_sink_fn sink,
			    void *arg, struct tc_sched **out, const char **why)
{
	const struct stream_request saved = tc_stream_req;
	struct tc_sched *s = NULL, *attached;
	int err;

	*out = NULL;
	if (!algo || !shape || !sink) {
		*why = "tc_sched_build_streamed: no algorithm, shape or sink";
		return tc_err(-EINVAL, "%s", *why);
	}
	tc_stream_req = (struct stream_request){
		.shape = shape, .coll = algo->coll, .sink = sink, .arg = arg, .armed = 1,
	};
	err = tc_sched_build_whole(algo, shape, &s, why);
	attached = tc_stream_req.attached;
	tc_stream_req = saved;
	if (err)
		return err;
	if (!s || s != attached || !s->stream || !s->stream->finished) {
		tc_sched_free(s);
		*why = "streamed build: the builder returned another schedule than the one it streamed";
		return tc_err(-EOPNOTSUPP, "%s: %s", algo->name, *why);
	}
	*out = s;
	return 0;
}

int tc_sched_build_sources(const struct tc_algo *algo, const struct tc_shape *shape, const int *mod,
			   struct tc_sched **out, const char **why)
{
	const struct sources_request saved = tc_sources_req;
	struct tc_sched *s = NULL, *attached;
	int err;

	*out = NULL;
	for (int d = 0; d < shape->ndims; d++)
		if (mod[d] < 1 || mod[d] > shape->dims[d] || shape->dims[d] % mod[d]) {
			*why = "tc_sched_build_sources: a period does not divide its dimension";
			return tc_err(-EINVAL, "%s: %s", algo->name, *why);
		}
	tc_sources_req = (struct sources_request){ .shape = shape, .coll = algo->coll, .mod = mod, .armed = 1 };
	err = algo->build(shape, &s, why);
	attached = tc_sources_req.attached;
	tc_sources_req = saved;
	if (err)
		return err;
	if (!s || s != attached) {
		tc_sched_free(s);
		*why = "source-restricted build: the builder returned another schedule than the one it restricted";
		return tc_err(-EOPNOTSUPP, "%s: %s", algo->name, *why);
	}
	*out = s;
	return 0;
}
