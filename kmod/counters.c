// SPDX-License-Identifier: GPL-2.0
/*
 * torus: the timing model and the counters. Each directed link has a
 * virtual clock (the time it is free from); a message of m bytes over h
 * links starts at max(sender's clock at post, every route link free, on
 * one-port fabrics the sender's send engine and the receiver's receive
 * engine free) and lasts ts + h*hop + m*tw (+ fault delay), holding every
 * link of its route for that time.
 */
#include <linux/math64.h>
#include <linux/string.h>

#include "torus.h"

/*
 * Charge send @d (to node @dst) to the model: times, link clocks, link
 * counters, makespan. Caller holds f->lock.
 */
void __torus_charge(struct torus_fabric *f, struct torus_kdesc *d, struct torus_node *dst,
		    u64 extra_ns, u64 *t_start, u64 *t_end)
{
	struct torus_node *src = d->node;
	struct torus_link *l;
	u64 start = d->clock_ns, dur, end;
	u32 i;

	lockdep_assert_held(&f->lock);
	for (i = 0; i < d->nhops; i++) {
		l = torus_link_of(f, d->route[i]);
		if (l->free_ns > d->clock_ns) {
			l->cnt.stalls++;
			start = max(start, l->free_ns);
		}
	}
	if (torus_one_port(f)) {
		start = max3(start, src->send_free_ns, dst->recv_free_ns);
	}
	dur = f->ts_ns + d->nhops * f->hop_ns + div_u64(d->len * f->tw_ps, 1000) + extra_ns;
	end = start + dur;
	for (i = 0; i < d->nhops; i++) {
		l = torus_link_of(f, d->route[i]);
		l->free_ns = end;
		l->cnt.messages++;
		l->cnt.bytes += d->len;
		l->cnt.busy_ns += dur;
	}
	if (torus_one_port(f)) {
		src->send_free_ns = end;
		dst->recv_free_ns = end;
	}
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

/* TORUS_QUERY_RESET_STATS: makespan and every virtual clock back to 0. */
void torus_clocks_reset(struct torus_fabric *f)
{
	struct torus_node *n;
	u32 i, p;

	spin_lock(&f->lock);
	f->makespan_ns = 0;
	for (i = 0; i < f->nodes; i++) {
		n = &f->node[i];
		n->send_free_ns = 0;
		n->recv_free_ns = 0;
		for (p = 0; p < f->nports; p++)
			n->ports[p].link.free_ns = 0;
		spin_lock(&n->cq.lock);
		n->clock_ns = 0;
		spin_unlock(&n->cq.lock);
	}
	spin_unlock(&f->lock);
}
