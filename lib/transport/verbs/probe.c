// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The cost probe: the cost model's parameters of this network, timed once
 * per communicator.
 */
#include "transport/verbs/verbs.h"

/*
 * The cost model's parameters of this network (tp->cost), measured once per
 * communicator. Verbs has no routers: a message the schedule routes over
 * several torus hops is one RDMA operation, so the model prices it as one
 * transfer (TC_COST_DIRECT): ts + bytes*tw holding the sender's and the
 * receiver's port, then the latency lat, which the messages of one step
 * overlap, and a rendezvous message (above the eager limit) rdv more, its
 * ready-to-receive's trip, which they overlap too. A message's bytes
 * beyond 64 KiB cost tw_big each instead of tw.
 *
 * What is timed is what a collective does: every one of the first Q ranks
 * (Q the largest power of two in the job; the others sit out) runs steps at
 * once, each step waiting for its own messages of the step before, so a
 * step costs what it costs when the whole communicator is busy and its
 * ranks depend on each other (on a host with fewer cores than ranks that
 * includes the scheduling of them all, which a ping-pong of one pair does
 * not see). Two patterns, each TC_VB_PROBE_ROUNDS times after a warm-up
 * (which also makes the connections), each round timed alone and the
 * median kept, then the chain once at a size of MiBs:
 *  - the chain: log2(Q) steps, step j one message to rank + 2^j and one
 *    from rank - 2^j (mod Q), so every rank's step needs every other
 *    rank's earlier ones; per step it costs ts + lat + bytes*tw (+ rdv
 *    above the eager limit). Timed at three sizes: SMALL (eager) c_s, MID
 *    (rendezvous) c_m, LARGE c_l. A shift (bruck's pattern), not an
 *    exchange with rank^(2^j), whose two ranks wake each other: priced by
 *    the exchange, auto chose at2-1p at 1 KiB where direct ran faster.
 *  - the burst: one step, a message each way with each of rank^1 ..
 *    rank^k (k = min(BURST, Q-1)): k*ts + lat, b_k.
 *  - the same with every peer, k_all = min(FAN, Q-1) > k: b_all. Where
 *    it costs less than k_all*ts + lat, a port pays ts for fewer of a
 *    step's messages (ts_cap, tc_cost_fit_fan): past a few peers a step
 *    costs about one round of scheduling every rank, however many more it
 *    names.
 *  - the chain at BIG (1 MiB), one round (it costs as much as all the
 *    rounds above together), each step timed and the median step kept:
 *    c_b. tw, the slope from MID to LARGE where each step's overheads
 *    are most of it, is a poor guide to a message of MiBs, which is
 *    mostly bytes. So beyond LARGE a message's bytes cost the slope from
 *    c_l to c_b (tc_cost_fit_big), and above BIG its extension. It adds
 *    log2(Q) steps of 1 MiB, about as much as the rest of the probe in a
 *    TCG guest; on a real NIC 1 MiB is a fraction of a millisecond.
 * What these choices were measured against: docs/verbs.md.
 * Every rank's six times are gathered and each rank takes their medians
 * over the ranks, so every rank prices alike (and picks the same
 * algorithm), and fits ts, lat, tw and rdv to them (tc_cost_fit_direct),
 * tw_big (tc_cost_fit_big) and ts_cap (tc_cost_fit_fan).
 * TC_VERBS_PROBE_CACHE=FILE keeps the figures across jobs: rank 0 reads
 * them from FILE when it holds figures of a job like this one (the same
 * device name, job size, number of hosts (distinct addresses) and eager
 * limit) and hands them to every rank in one out-of-band exchange, so no
 * rank probes (over the network the probe is most of what a job sends
 * before its first collective: docs/benchmarks.md, two guests) and every
 * job prices, and picks, alike; otherwise the ranks probe and rank 0 adds
 * them to FILE (a line per kind of job; a new file renamed over it).
 * Without it, every communicator probes.
 * TC_VERBS_PROBE=0, both TC_COST_TS_US and TC_COST_TW_US set, or the
 * runtime's own exchange (tc_comm_attr.oob_allgather, called once) skips it:
 * the module's default timing with TC_COST_DIRECT (then TC_COST_* apply);
 * TC_VERBS_PROBE=print has rank 0 print the figures and what they came from
 * on stderr.
 */
#define TC_VB_PROBE_SMALL 64
#define TC_VB_PROBE_MID 4096 /* at least; above the eager limit (tc_vb_probe_mid) */
#define TC_VB_PROBE_LARGE 65536
#define TC_VB_PROBE_BIG 1048576
#define TC_VB_PROBE_BURST 8
#define TC_VB_PROBE_ROUNDS 5
#define TC_VB_PROBE_FAN 31 /* the most peers of the all-peers step */
#define TC_VB_PROBE_NFIG 6 /* per rank: c_s, c_m, c_l, b_k, c_b, b_all */
/* the probe's buffer: sends from the first half, receives into the second */
#define TC_VB_PROBE_HALF (TC_VB_PROBE_BIG > TC_VB_PROBE_BURST * TC_VB_PROBE_LARGE ? \
			  TC_VB_PROBE_BIG : TC_VB_PROBE_BURST * TC_VB_PROBE_LARGE)
#define TC_VB_PROBE_TAG 0x70726f6265000000ull /* "probe": no schedule's tag */

/* One step of the probe: a len-byte message to each to[i] and from each from[i], i < n. */
static int tc_vb_probe_step(struct tc_tp *tp, size_t len, const int *to, const int *from, int n)
{
	const uint64_t first = TC_VB_PROBE_TAG + (len << 8) + (n > 1 ? TC_VB_PROBE_BURST : 0);
	struct tc_seg seg[2 * TC_VB_PROBE_FAN];
	struct tc_xfer x[2 * TC_VB_PROBE_FAN];
	struct tc_wait_err we;
	int ret;

	for (int i = 0; i < n; i++) {
		uint64_t tag = first + i; /* the burst's tags are not the chain's */

		seg[2 * i] = (struct tc_seg){ (uint64_t)i * len, len };
		seg[2 * i + 1] = (struct tc_seg){ (uint64_t)TC_VB_PROBE_HALF + i * len, len };
		x[2 * i] = (struct tc_xfer){ .op = TC_XFER_SEND, .peer = to[i], .nsegs = 1, .segs = &seg[2 * i],
					     .tag = tag };
		x[2 * i + 1] = (struct tc_xfer){ .op = TC_XFER_RECV, .peer = from[i], .nsegs = 1,
						 .segs = &seg[2 * i + 1], .tag = tag };
	}
	ret = tc_vb_post(tp, x, 2 * n);
	if (!ret)
		ret = tc_vb_wait(tp, 2 * n, tp->timeout_ms, &we);
	return ret;
}

/* A step of the chain: to rank + d, from rank - d, among the first q ranks. */
static int tc_vb_probe_shift(struct tc_tp *tp, size_t len, int q, int d)
{
	const int to = (tp->rank + d) % q, from = (tp->rank - d + q) % q;

	return tc_vb_probe_step(tp, len, &to, &from, 1);
}

/*
 * The median time over rounds (at most TC_VB_PROBE_ROUNDS) of one step of
 * len-byte messages, in us: with k > 0 the burst (k peers in one step), with
 * k = 0 the chain of log2(q) steps (its time over the steps).
 */
static int tc_vb_probe_time(struct tc_tp *tp, size_t len, int q, int k, int rounds, double *us)
{
	double per[TC_VB_PROBE_ROUNDS];
	int peer[TC_VB_PROBE_FAN], ret = 0, steps = 0;

	for (int d = 1; d < q; d *= 2)
		steps++;
	for (int r = 0; r < rounds && !ret; r++) {
		double t0 = tc_now_us();

		if (k) {
			for (int i = 0; i < k; i++)
				peer[i] = tp->rank ^ (i + 1);
			ret = tc_vb_probe_step(tp, len, peer, peer, k);
		}
		for (int d = 1; !k && d < q && !ret; d *= 2)
			ret = tc_vb_probe_shift(tp, len, q, d);
		per[r] = (tc_now_us() - t0) / (k ? 1 : steps);
	}
	if (ret)
		return tc_err(ret, "transport verbs: probing the network (%s)", tc_strerror(ret));
	/* the median round: one stalled round (a busy host) does not decide it */
	*us = tc_median(per, rounds);
	return 0;
}

/*
 * The chain once at len (TC_VB_PROBE_BIG: a round costs as much as all the
 * others together), each step timed: the median step, so one stalled step
 * does not decide it either.
 */
static int tc_vb_probe_steps(struct tc_tp *tp, size_t len, int q, double *us)
{
	double per[32];
	int ret = 0, steps = 0;

	for (int d = 1; d < q && steps < 32 && !ret; d *= 2) {
		double t0 = tc_now_us();

		ret = tc_vb_probe_shift(tp, len, q, d);
		per[steps++] = tc_now_us() - t0;
	}
	if (ret)
		return tc_err(ret, "transport verbs: probing the network (%s)", tc_strerror(ret));
	*us = tc_median(per, steps);
	return 0;
}

/* The median of the non-negative v[k*NFIG + which], k < n (-1 if none). */
static double tc_vb_median(const double *v, int n, int which, double *tmp)
{
	int m = 0;

	for (int k = 0; k < n; k++)
		if (v[TC_VB_PROBE_NFIG * k + which] >= 0)
			tmp[m++] = v[TC_VB_PROBE_NFIG * k + which];
	return m ? tc_median(tmp, m) : -1;
}

/* The rendezvous size of the chain: the least power of two above the eager limit, at least MID. */
static size_t tc_vb_probe_mid(const struct tc_vb *vb)
{
	size_t mid = TC_VB_PROBE_MID;

	while (mid <= vb->eager)
		mid *= 2;
	return mid;
}

/*
 * This rank's step times among the first q ranks, k the burst, k_all the
 * all-peers step: c_s, c_m, c_l, b_k, c_b, b_all (-1 unless k_all > k).
 */
static int tc_vb_measure(struct tc_tp *tp, int q, int k, int k_all, double *mine)
{
	const int R = TC_VB_PROBE_ROUNDS;
	const size_t len[3] = { TC_VB_PROBE_SMALL, tc_vb_probe_mid(to_vb(tp)), TC_VB_PROBE_LARGE };
	double w;
	void *base;
	int ret;

	ret = tc_vb_buffer(tp, 2 * (size_t)TC_VB_PROBE_HALF, &base);
	if (!ret) /* warm-up: connect, and the first rendezvous */
		ret = tc_vb_probe_time(tp, TC_VB_PROBE_LARGE, q, k, 1, &w);
	if (!ret)
		ret = tc_vb_probe_time(tp, TC_VB_PROBE_SMALL, q, 0, 1, &w);
	for (int i = 0; i < 3 && !ret; i++)
		ret = tc_vb_probe_time(tp, len[i], q, 0, R, &mine[i]);
	mine[3] = 0;
	if (!ret && k > 1)
		ret = tc_vb_probe_time(tp, TC_VB_PROBE_SMALL, q, k, R, &mine[3]);
	if (!ret)
		ret = tc_vb_probe_steps(tp, TC_VB_PROBE_BIG, q, &mine[4]);
	mine[5] = -1;
	if (!ret && k_all > k) /* a warm-up round first: it connects the other peers */
		ret = tc_vb_probe_time(tp, TC_VB_PROBE_SMALL, q, k_all, 1, &w);
	if (!ret && k_all > k)
		ret = tc_vb_probe_time(tp, TC_VB_PROBE_SMALL, q, k_all, R, &mine[5]);
	return ret;
}

/* The cache's key: what the figures depend on besides the network's load. */
static void tc_vb_probe_key(const struct tc_vb *vb, char *key, size_t n)
{
	int hosts = 0;

	for (int r = 0; r < vb->size; r++) {
		int seen = 0;

		for (int o = 0; o < r && !seen; o++)
			seen = vb->peers[o].card.ipv4 == vb->peers[r].card.ipv4;
		hosts += !seen;
	}
	snprintf(key, n, "device %s ranks %d hosts %d eager %zu", vb->dev_name, vb->size, hosts, (size_t)vb->eager);
}

#define TC_VB_PROBE_MAGIC "libtoruscoll verbs probe 1:"

/* Rank 0: the figures in path for key into v (1), or none there (0). */
static int tc_vb_probe_load(const char *path, const char *key, double *v)
{
	char line[512], *p;
	FILE *f = fopen(path, "r");
	int ok = 0;

	if (!f)
		return 0;
	while (!ok && fgets(line, sizeof(line), f)) {
		size_t km = strlen(TC_VB_PROBE_MAGIC), kl = strlen(key);

		if (strncmp(line, TC_VB_PROBE_MAGIC, km) || line[km] != ' ' || strncmp(line + km + 1, key, kl) ||
		    strncmp(line + km + 1 + kl, ": ", 2))
			continue;
		p = line + km + kl + 3;
		ok = 1;
		for (int i = 0; i < TC_VB_PROBE_NFIG && ok; i++) {
			char *end;

			v[i] = strtod(p, &end);
			ok = end != p && (i || v[i] >= 0);
			p = end;
		}
	}
	fclose(f);
	return ok;
}

/*
 * Rank 0: the figures v for key into path (its lines of other keys kept),
 * by a new file renamed over it.
 */
static void tc_vb_probe_save(const char *path, const char *key, const double *v)
{
	char tmp[4096], line[512];
	size_t km = strlen(TC_VB_PROBE_MAGIC), kl = strlen(key);
	FILE *f, *old;
	int bad;

	if (snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return;
	f = fopen(tmp, "w");
	if (!f)
		return; /* a cache: a job that cannot keep it probes again next time */
	old = fopen(path, "r");
	while (old && fgets(line, sizeof(line), old))
		if (!strncmp(line, TC_VB_PROBE_MAGIC, km) && strchr(line, '\n') &&
		    (line[km] != ' ' || strncmp(line + km + 1, key, kl) || strncmp(line + km + 1 + kl, ": ", 2)))
			fputs(line, f);
	if (old)
		fclose(old);
	fprintf(f, "%s %s:", TC_VB_PROBE_MAGIC, key);
	for (int i = 0; i < TC_VB_PROBE_NFIG; i++)
		fprintf(f, " %a", v[i]);
	fprintf(f, "\n");
	bad = ferror(f);
	if (fclose(f) || bad || rename(tmp, path))
		unlink(tmp);
}

static void tc_vb_probe_print(const struct tc_cost_params *p, const double *v, size_t mid, int q, int k, int k_all,
			      const char *from)
{
	char cap[48] = "every message";

	if (p->ts_cap > 0)
		snprintf(cap, sizeof(cap), "at most %.3g messages", p->ts_cap);
	fprintf(stderr,
		"libtoruscoll: verbs network probe: ts %.6g us, lat %.6g us, tw %.6g us/B, rdv %.6g us above %zu B, "
		"tw %.6g us/B beyond %zu B of a message, ts for %s of a step (medians over %d ranks: a step of "
		"the chain %.6g / %.6g / %.6g / %.6g us at %d / %zu / %d / %d B, a step of %d messages %.6g us",
		p->ts_us, p->lat_us, p->tw_us_per_byte, p->rdv_us, p->eager_bytes,
		p->big_bytes ? p->tw_big_us_per_byte : p->tw_us_per_byte, p->big_bytes, cap, q, v[0], v[1], v[2], v[4],
		TC_VB_PROBE_SMALL, mid, TC_VB_PROBE_LARGE, TC_VB_PROBE_BIG, k, v[3]);
	if (v[5] > 0)
		fprintf(stderr, ", of %d %.6g us", k_all, v[5]);
	fprintf(stderr, "; %s)\n", from);
}

int tc_vb_probe(struct tc_tp *tp)
{
	struct tc_vb *vb = to_vb(tp);
	const char *env = getenv("TC_VERBS_PROBE");
	const char *cache = getenv("TC_VERBS_PROBE_CACHE");
	double mine[TC_VB_PROBE_NFIG], *all, v[TC_VB_PROBE_NFIG];
	int ret = 0, q = 1, k, k_all, cached = 0;
	char key[160];

	if (cache && !*cache)
		cache = NULL;

	tc_cost_params_default(&tp->cost);
	tp->cost.flags = TC_COST_DIRECT;
	tp->cost.hop_us = 0;
	tp->cost.eager_bytes = vb->eager;
	/* the runtime's own exchange is called once per communicator (toruscoll.h):
	 * no second one for the figures, so no probe */
	if ((env && !strcmp(env, "0")) || (getenv("TC_COST_TS_US") && getenv("TC_COST_TW_US")) ||
	    vb->boot.oob_allgather)
		return 0;
	while (2 * q <= vb->size)
		q *= 2;
	k = q - 1 < TC_VB_PROBE_BURST ? q - 1 : TC_VB_PROBE_BURST;
	k_all = q - 1 < TC_VB_PROBE_FAN ? q - 1 : TC_VB_PROBE_FAN;
	for (int i = 0; i < TC_VB_PROBE_NFIG; i++)
		mine[i] = -1;
	all = calloc((TC_VB_PROBE_NFIG + 1) * (size_t)vb->size, sizeof(*all));
	if (!all)
		return tc_err(-ENOMEM, "transport verbs: out of memory");
	if (cache) { /* rank 0's cached figures, or -1s: every rank learns which */
		tc_vb_probe_key(vb, key, sizeof(key));
		if (vb->rank == 0 && !tc_vb_probe_load(cache, key, mine))
			for (int i = 0; i < TC_VB_PROBE_NFIG; i++)
				mine[i] = -1;
		ret = tc_boot_allgather(&vb->boot, mine, all, sizeof(mine), tp->timeout_ms);
		cached = !ret && all[0] >= 0;
		for (int i = 0; i < TC_VB_PROBE_NFIG; i++)
			v[i] = all[i];
		for (int i = 0; i < TC_VB_PROBE_NFIG; i++)
			mine[i] = -1;
	}
	if (!ret && !cached && vb->rank < q && k > 0)
		ret = tc_vb_measure(tp, q, k, k_all, mine);
	if (!ret && !cached)
		ret = tc_boot_allgather(&vb->boot, mine, all, sizeof(mine), tp->timeout_ms);
	for (int i = 0; i < TC_VB_PROBE_NFIG && !ret && !cached; i++)
		v[i] = tc_vb_median(all, vb->size, i, all + TC_VB_PROBE_NFIG * vb->size);
	if (!ret && v[0] >= 0) {
		const size_t len[3] = { TC_VB_PROBE_SMALL, tc_vb_probe_mid(vb), TC_VB_PROBE_LARGE };
		char from[4200];

		tc_cost_fit_direct(v, len, v[3], k, &tp->cost);
		tc_cost_fit_big(v[4], TC_VB_PROBE_BIG, v[2], TC_VB_PROBE_LARGE, &tp->cost);
		if (v[5] > 0)
			tc_cost_fit_fan(v[5], k_all, TC_VB_PROBE_SMALL, k, &tp->cost);
		if (cache && !cached && vb->rank == 0)
			tc_vb_probe_save(cache, key, v);
		if (env && !strcmp(env, "print") && vb->rank == 0) {
			snprintf(from, sizeof(from), "%s %s", cached ? "read from" : cache ? "measured, kept in" : "measured",
				 cache ? cache : "by this communicator");
			tc_vb_probe_print(&tp->cost, v, len[1], q, k, k_all, from);
		}
	}
	free(all);
	return ret;
}
