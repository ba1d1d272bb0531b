// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Schedule builder: growable message and block arrays, tc_sched_finish()
 * (drop empties, order by step, validate, per-node views).
 *
 * Errors: every function returns a negative errno; the reason of the last
 * -EINVAL/-ENOMEM is kept in a per-thread string (tc_sched_last_error()).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

static __thread char tc_sched_errbuf[256];

__attribute__((format(printf, 2, 3))) int tc_sched_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tc_sched_errbuf, sizeof(tc_sched_errbuf), fmt, ap);
	va_end(ap);
	return err;
}

const char *tc_sched_last_error(void)
{
	return tc_sched_errbuf;
}

struct tc_sched *tc_sched_new(const struct tc_shape *shape, enum tc_coll coll, const char *algo, const char *cite,
			      unsigned int claims)
{
	struct tc_sched *s;

	if (!shape || shape->ndims < 1 || shape->ndims > TC_MAX_DIMS || shape->nodes < 1) {
		tc_sched_set_error(-EINVAL, "tc_sched_new: invalid shape (not from tc_shape_init?)");
		return NULL;
	}
	if ((unsigned int)coll >= TC_COLL_NR) {
		tc_sched_set_error(-EINVAL, "tc_sched_new: unknown collective %d", (int)coll);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		tc_sched_set_error(-ENOMEM, "tc_sched_new: out of memory");
		return NULL;
	}
	s->shape = *shape;
	s->coll = coll;
	s->algo = algo ? algo : "?";
	s->cite = cite ? cite : "";
	s->claims = claims;
	s->npackets = 1;
	return s;
}

int tc_sched_step(struct tc_sched *s)
{
	if (s->step_first)
		return tc_sched_set_error(-EINVAL, "%s: tc_sched_step after tc_sched_finish", s->algo);
	if (s->nsteps == UINT32_MAX)
		return tc_sched_set_error(-EINVAL, "%s: too many steps", s->algo);
	return (int)s->nsteps++;
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? (size_t)*cap * 2 : 1024;
	if (ncap < need)
		ncap = need;
	if (ncap > UINT32_MAX)
		ncap = UINT32_MAX;
	if (ncap < need)
		return -ENOMEM;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = (uint32_t)ncap;
	return 0;
}

int tc_sched_msg(struct tc_sched *s, int src, int dst, const int8_t *route)
{
	const struct tc_shape *sh = &s->shape;
	struct tc_msg *m;

	if (s->step_first)
		return tc_sched_set_error(-EINVAL, "%s: tc_sched_msg after tc_sched_finish", s->algo);
	if (!s->nsteps)
		return tc_sched_set_error(-EINVAL, "%s: tc_sched_msg before the first tc_sched_step", s->algo);
	if (src < 0 || src >= sh->nodes || dst < 0 || dst >= sh->nodes)
		return tc_sched_set_error(-EINVAL, "%s: step %u: message %d -> %d: node out of range [0, %d)",
					  s->algo, s->nsteps - 1, src, dst, sh->nodes);
	if (s->nmsgs == UINT32_MAX ||
	    grow((void **)&s->msgs, &s->cap_msgs, s->nmsgs + 1, sizeof(*s->msgs)))
		return tc_sched_set_error(-ENOMEM, "%s: out of memory for %u messages", s->algo, s->nmsgs + 1);
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
		int cs[TC_MAX_DIMS], cd[TC_MAX_DIMS];

		tc_shape_coords(sh, src, cs);
		tc_shape_coords(sh, dst, cd);
		for (int d = 0; d < sh->ndims; d++)
			m->route[d] = (int8_t)tc_shape_delta(sh, d, cs[d], cd[d]);
	}
	return (int)s->nmsgs++;
}

int tc_sched_blk(struct tc_sched *s, int a, int b)
{
	struct tc_msg *m;

	if (s->step_first)
		return tc_sched_set_error(-EINVAL, "%s: tc_sched_blk after tc_sched_finish", s->algo);
	if (!s->nmsgs)
		return tc_sched_set_error(-EINVAL, "%s: tc_sched_blk before any tc_sched_msg", s->algo);
	m = &s->msgs[s->nmsgs - 1];
	if (m->blk_off + m->nblk != s->nblks)
		return tc_sched_set_error(-EINVAL, "%s: blocks of the last message are not contiguous", s->algo);
	if (s->nblks == UINT32_MAX ||
	    grow((void **)&s->blks, &s->cap_blks, s->nblks + 1, sizeof(*s->blks)))
		return tc_sched_set_error(-ENOMEM, "%s: out of memory for %u blocks", s->algo, s->nblks + 1);
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
		return tc_sched_set_error(-EINVAL, "%s: step %u: message %d -> %d: node out of range [0, %d)",
					  s->algo, m->step, m->src, m->dst, sh->nodes);
	if (m->src == m->dst)
		return tc_sched_set_error(-EINVAL, "%s: step %u: message %d -> %d: sent to itself",
					  s->algo, m->step, m->src, m->dst);
	for (int d = 0; d < TC_MAX_DIMS; d++) {
		if (d >= sh->ndims && m->route[d])
			return tc_sched_set_error(-EINVAL, "%s: step %u: message %d -> %d: hops in dimension %d of a %d-D shape",
						  s->algo, m->step, m->src, m->dst, d, sh->ndims);
		if (d < sh->ndims && (sh->wrap_mask & (1u << d)) && abs(m->route[d]) >= sh->dims[d])
			return tc_sched_set_error(-EINVAL, "%s: step %u: message %d -> %d: %d hops in dimension %d go round the ring",
						  s->algo, m->step, m->src, m->dst, m->route[d], d);
	}
	end = tc_shape_walk(sh, m->src, m->route);
	if (end < 0)
		return tc_sched_set_error(-EINVAL, "%s: step %u: message %d -> %d: route leaves the mesh",
					  s->algo, m->step, m->src, m->dst);
	if (end != m->dst)
		return tc_sched_set_error(-EINVAL, "%s: step %u: message %d -> %d: route leads to node %d",
					  s->algo, m->step, m->src, m->dst, end);
	if (m->op != TC_MSG_COPY && m->op != TC_MSG_REDUCE)
		return tc_sched_set_error(-EINVAL, "%s: step %u: message %d -> %d: unknown op %u",
					  s->algo, m->step, m->src, m->dst, m->op);
	for (uint32_t i = 0; i < m->nblk; i++) {
		const struct tc_blk *b = &s->blks[m->blk_off + i];
		int bad = b->a < 0 || b->a >= sh->nodes;

		if (s->coll == TC_COLL_ALLTOALL)
			bad |= b->b < 0 || b->b >= sh->nodes;
		else if (s->coll == TC_COLL_ALLGATHER)
			bad |= b->b < 0 || b->b >= s->npackets;
		if (bad)
			return tc_sched_set_error(-EINVAL, "%s: step %u: message %d -> %d: block {%d,%d} out of range",
						  s->algo, m->step, m->src, m->dst, b->a, b->b);
	}
	return 0;
}

/*
 * Drop empty messages, order messages by step (stable) with their blocks
 * contiguous in message order, renumber steps without the empty ones.
 */
static int compact(struct tc_sched *s)
{
	uint32_t nsteps = s->nsteps, *cnt, *remap, n = 0, nb = 0, newsteps = 0;
	struct tc_msg *msgs;
	struct tc_blk *blks;
	int sorted = 1;

	for (uint32_t i = 0; i < s->nmsgs; i++) {
		if (s->msgs[i].step >= nsteps)
			return tc_sched_set_error(-EINVAL, "%s: message %u has step %u of %u",
						  s->algo, i, s->msgs[i].step, nsteps);
		if (s->msgs[i].blk_off > s->nblks || s->msgs[i].nblk > s->nblks - s->msgs[i].blk_off)
			return tc_sched_set_error(-EINVAL, "%s: message %u: blocks beyond the block array", s->algo, i);
		if (i && s->msgs[i].step < s->msgs[i - 1].step)
			sorted = 0;
		if (s->msgs[i].blk_off != nb)
			sorted = 0;
		nb += s->msgs[i].nblk;
	}

	cnt = calloc((size_t)nsteps + 1, sizeof(*cnt));
	remap = calloc((size_t)nsteps + 1, sizeof(*remap));
	if (!cnt || !remap) {
		free(cnt);
		free(remap);
		return tc_sched_set_error(-ENOMEM, "%s: out of memory finishing", s->algo);
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
	} else {
		uint32_t pos = 0;

		/* Counting sort by step into fresh arrays. */
		msgs = malloc((size_t)(s->nmsgs ? s->nmsgs : 1) * sizeof(*msgs));
		blks = malloc((size_t)(s->nblks ? s->nblks : 1) * sizeof(*blks));
		if (!msgs || !blks) {
			free(msgs);
			free(blks);
			free(cnt);
			free(remap);
			return tc_sched_set_error(-ENOMEM, "%s: out of memory finishing", s->algo);
		}
		for (uint32_t st = 0; st < nsteps; st++) {
			uint32_t c = cnt[st];

			cnt[st] = pos;
			pos += c;
		}
		for (uint32_t i = 0; i < s->nmsgs; i++)
			if (s->msgs[i].nblk)
				msgs[cnt[s->msgs[i].step]++] = s->msgs[i];
		n = pos;
		nb = 0;
		for (uint32_t i = 0; i < n; i++) {
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
	}
	s->nmsgs = n;
	s->nsteps = newsteps;
	free(cnt);
	free(remap);
	return 0;
}

int tc_sched_finish(struct tc_sched *s)
{
	const int nodes = s->shape.nodes;
	uint32_t *cur;
	size_t nv;
	int err;

	if (s->step_first)
		return tc_sched_set_error(-EINVAL, "%s: tc_sched_finish called twice", s->algo);
	if (s->npackets < 1)
		return tc_sched_set_error(-EINVAL, "%s: npackets %d < 1", s->algo, s->npackets);
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
		return tc_sched_set_error(-ENOMEM, "%s: out of memory finishing", s->algo);
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
	return tc_sched_set_error(-ENOMEM, "%s: out of memory for per-node views (%d nodes x %u steps)",
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
