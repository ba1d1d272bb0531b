// SPDX-License-Identifier: GPL-2.0
/*
 * torus: the timing model and the counters.
 *
 * A message of m bytes over h links lasts dur = ts + h*hop + m*tw (+ fault
 * delay) and holds every link of its route for that time, and on one-port
 * fabrics also its sender's send engine and its receiver's receive engine.
 * It is ready at its sender's node clock at post. The engines charge
 * messages in wall-clock order, which need not be virtual-time order (a
 * node that ran ahead posts its next step before a slower node's earlier
 * step reaches the same link), so each of those resources keeps a calendar
 * of the intervals it is taken (struct torus_cal) rather than one "free
 * from" time: a message starts at the earliest t >= its ready time at which
 * [t, t + dur) is free on every one of its resources, before messages
 * charged earlier if it fits in a gap, never moving one already charged
 * (its completion may have been reaped). A calendar keeps TORUS_CAL_SLOTS
 * intervals (abutting ones merge); to make room for another it forgets its
 * oldest and counts everything before that one's end as taken (floor_ns):
 * conservative, a message may start later than it could, never earlier.
 *
 * Counters, per link: messages, bytes, busy_ns (the sum of the durations of
 * the messages it carried), stalls (messages it could not carry from their
 * ready time, [ready, ready + dur) not free on it; the engines add one per
 * message that waited for FIFO credit). The makespan is the latest end.
 */
#include <linux/math64.h>
#include <linux/string.h>

#include "torus.h"

/* Earliest t >= @t at which [t, t + @dur) is free on @c. */
static u64 torus_cal_fit(const struct torus_cal *c, u64 t, u64 dur)
{
	u32 i;

	t = max(t, c->floor_ns);
	for (i = 0; i < c->count; i++) {
		if (c->busy[i].end_ns <= t)
			continue;
		if (c->busy[i].start_ns >= t + dur)
			break;
		t = c->busy[i].end_ns;
	}
	return t;
}

/* Remove busy[@i] of @c. */
static void torus_cal_del(struct torus_cal *c, u32 i)
{
	c->count--;
	memmove(&c->busy[i], &c->busy[i + 1], (c->count - i) * sizeof(c->busy[0]));
}

/*
 * Mark [@t, @end) taken on @c, where torus_cal_fit() found it free: merge it
 * with an interval it abuts, else insert it, forgetting the oldest interval
 * (or the new one, when it is the oldest) if @c is full.
 */
static void torus_cal_take(struct torus_cal *c, u64 t, u64 end)
{
	u32 i = 0;

	if (end == t)
		return;
	while (i < c->count && c->busy[i].start_ns < t)
		i++;
	if (i && c->busy[i - 1].end_ns == t) {
		c->busy[i - 1].end_ns = end;
		if (i < c->count && c->busy[i].start_ns == end) {
			c->busy[i - 1].end_ns = c->busy[i].end_ns;
			torus_cal_del(c, i);
		}
		return;
	}
	if (i < c->count && c->busy[i].start_ns == end) {
		c->busy[i].start_ns = t;
		return;
	}
	if (c->count == TORUS_CAL_SLOTS) {
		if (!i) {
			c->floor_ns = end;
			return;
		}
		c->floor_ns = c->busy[0].end_ns;
		torus_cal_del(c, 0);
		i--;
	}
	memmove(&c->busy[i + 1], &c->busy[i], (c->count - i) * sizeof(c->busy[0]));
	c->busy[i].start_ns = t;
	c->busy[i].end_ns = end;
	c->count++;
}

/* The time @c is free from for good: the end of its last interval. */
u64 torus_cal_free_ns(const struct torus_cal *c)
{
	return c->count ? c->busy[c->count - 1].end_ns : c->floor_ns;
}

/*
 * Calendar @i of send @d to @dst: its route's links, then on one-port
 * fabrics the sender's send engine and @dst's receive engine.
 */
static struct torus_cal *torus_charge_cal(struct torus_fabric *f, struct torus_kdesc *d,
					  struct torus_node *dst, u32 i)
{
	if (i < d->nhops)
		return &torus_link_of(f, d->route[i])->cal;
	return i == d->nhops ? &d->node->send_cal : &dst->recv_cal;
}

/* Earliest t >= @d's ready time at which [t, t + @dur) is free on all @ncal calendars. */
static u64 torus_charge_start(struct torus_fabric *f, struct torus_kdesc *d,
			      struct torus_node *dst, u32 ncal, u64 dur)
{
	u64 t = d->clock_ns, s;
	u32 i = 0, fits = 0;

	/* t only grows, to an interval's end: it settles after every calendar agrees once */
	while (fits < ncal) {
		s = torus_cal_fit(torus_charge_cal(f, d, dst, i), t, dur);
		fits = s == t ? fits + 1 : 1;
		t = s;
		i = (i + 1) % ncal;
	}
	return t;
}

/*
 * Charge send @d (to node @dst) to the model: times, calendars, link
 * counters, makespan. Caller holds f->lock.
 */
void __torus_charge(struct torus_fabric *f, struct torus_kdesc *d, struct torus_node *dst,
		    u64 extra_ns, u64 *t_start, u64 *t_end)
{
	u32 ncal = d->nhops + (torus_one_port(f) ? 2 : 0);
	struct torus_link *l;
	u64 start, dur, end;
	u32 i;

	lockdep_assert_held(&f->lock);
	dur = f->ts_ns + d->nhops * f->hop_ns + div_u64(d->len * f->tw_ps, 1000) + extra_ns;
	start = torus_charge_start(f, d, dst, ncal, dur);
	end = start + dur;
	for (i = 0; i < d->nhops; i++) {
		l = torus_link_of(f, d->route[i]);
		if (torus_cal_fit(&l->cal, d->clock_ns, dur) != d->clock_ns)
			l->cnt.stalls++;
		l->cnt.messages++;
		l->cnt.bytes += d->len;
		l->cnt.busy_ns += dur;
	}
	for (i = 0; i < ncal; i++)
		torus_cal_take(torus_charge_cal(f, d, dst, i), start, end);
	if (end > f->makespan_ns)
		f->makespan_ns = end;
	*t_start = start;
	*t_end = end;
}

void torus_counters_read(struct torus_node *n, struct torus_counters *c, bool reset)
{
	struct torus_fabric *f = n->fab;
	u32 p;

	c->fabric_id = f->id;
	c->node_id = n->id;
	spin_lock(&f->lock);
	for (p = 0; p < f->nports; p++) {
		c->links[p] = n->ports[p].link.cnt;
		if (reset)
			memset(&n->ports[p].link.cnt, 0, sizeof(n->ports[p].link.cnt));
	}
	spin_lock(&n->cq.lock);
	c->node = n->cnt;
	if (reset)
		memset(&n->cnt, 0, sizeof(n->cnt));
	spin_unlock(&n->cq.lock);
	spin_unlock(&f->lock);
}

void torus_counters_reset_fabric(struct torus_fabric *f)
{
	struct torus_counters c;
	u32 i;

	for (i = 0; i < f->nodes; i++)
		torus_counters_read(&f->node[i], &c, true);
}

/* TORUS_QUERY_RESET_STATS: makespan, every calendar and every node clock back to 0. */
void torus_clocks_reset(struct torus_fabric *f)
{
	struct torus_node *n;
	u32 i, p;

	spin_lock(&f->lock);
	f->makespan_ns = 0;
	for (i = 0; i < f->nodes; i++) {
		n = &f->node[i];
		memset(&n->send_cal, 0, sizeof(n->send_cal));
		memset(&n->recv_cal, 0, sizeof(n->recv_cal));
		for (p = 0; p < f->nports; p++)
			memset(&n->ports[p].link.cal, 0, sizeof(n->ports[p].link.cal));
		spin_lock(&n->cq.lock);
		n->clock_ns = 0;
		spin_unlock(&n->cq.lock);
	}
	spin_unlock(&f->lock);
}
