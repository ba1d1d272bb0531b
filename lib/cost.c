// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Cost model: the papers' accounting of startups, transmission and
 * rearrangement, evaluated on a schedule.
 *
 * Critical path (Lemma 3 of the all-port paper: a phase lasts as long as its
 * slowest ring; rings do not wait for each other). Let done(n, s) be the time
 * node n has finished its steps 0..s (everything it sent and received), with
 * done(n, -1) = 0. A message of step s from src to dst starts at
 *     start = max(done(src, s-1), done(dst, s-1), free(l) for every link l of its route)
 * and ends at start + dur; it holds every link of its dimension-ordered route
 * for its whole duration (wormhole), so free(l) = end afterwards. Links serve
 * messages in step order (within a step, in message order). Then
 *     done(n, s) = max(done(n, s-1), end of every step-s message of n).
 * The schedule's cost is max over n of done(n, last step). Three durations:
 *   transmission_blocks  dur = b, the message's blocks (a packet of an
 *                        allgather split into npackets counts 1/npackets);
 *   steps (startups)     dur = 1 per message;
 *   time_us              dur = ts + b*m*tw, plus rho*m*rearranged_blocks.
 * lockstep_blocks is the sum over global steps of the largest message: what
 * a machine that synchronises all nodes at each step would pay.
 *
 * Lower bounds (lower_bound_blocks), in block units, for transmission:
 *
 *  Alltoall, cut argument. Cut dimension d of size n into two halves A (the
 *  first floor(n/2) coordinates) and B; each half holds (P/n)*its coordinate
 *  count of nodes. Every block from A to B must cross the cut from A to B:
 *  |A|*|B| = floor(n^2/4)*(P/n)^2 blocks. Directed links from A into B:
 *  on a wrapping dimension two cross sections of P/n links each (the middle
 *  and the wrap-around; for n = 2 the + and - links of each pair), 2P/n;
 *  on a mesh dimension one cross section, P/n. A link carries one block per
 *  unit, so
 *      torus dim:  P*floor(n^2/4) / (2n)      (even n = N1: P*N1/8, Lemma 1)
 *      mesh dim:   P*floor(n^2/4) / n
 *  On a torus the same value follows from Lemma 1's counting: each block
 *  covers its ring distance in each dimension, the ring distances from one
 *  node sum to floor(n^2/4), so dimension d carries P*(P/n)*floor(n^2/4)
 *  block-hops over its 2P directed links. The bound is the maximum over
 *  dimensions, rounded up (an alltoall's transmission is a whole number of
 *  blocks). It is also at least the single-node cut: a node receives P-1
 *  blocks through at most 2k links ((P-1)/(2k)), or, one-port, one message
 *  at a time (P-1).
 *
 *  Allgather, the same cut argument for broadcast: every block whose origin
 *  is outside a node set S must enter S at least once (one copy suffices,
 *  then it is copied inside S). With S the smaller half of dimension d
 *  (floor(n/2) coordinates), ceil(n/2)*P/n origins lie outside and their
 *  blocks enter S through 2P/n (torus) or P/n (mesh) links: at least
 *  ceil(n/2)/2 or ceil(n/2) units. With S one node of
 *  least in-degree g (2 per wrapping dimension, 1 per mesh dimension at a
 *  corner), N-1 blocks enter through g links: (N-1)/g, which dominates for
 *  every shape with more than a few nodes; one-port, N-1. The bound is the
 *  maximum of both, rounded up. lower_bound_steps is the same single-node
 *  bound, ceil((N-1)/g) (= ceil((N-1)/(2k)) on all-port tori), or N-1
 *  one-port: the steps needed when every message carries one block.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

static double ceil_eps(double x)
{
	return ceil(x - 1e-9);
}

static int in_degree_min(const struct tc_shape *sh)
{
	int g = 0;

	for (int d = 0; d < sh->ndims; d++)
		g += (sh->wrap_mask & (1u << d)) ? 2 : 1;
	return g;
}

double tc_lower_bound_blocks(const struct tc_shape *sh, enum tc_coll coll)
{
	const double P = sh->nodes;
	double best = 0;

	if (coll == TC_COLL_ALLTOALL) {
		for (int d = 0; d < sh->ndims; d++) {
			double n = sh->dims[d];
			double q = floor(n * n / 4);
			double b = (sh->wrap_mask & (1u << d)) ? P * q / (2 * n) : P * q / n;

			if (b > best)
				best = b;
		}
		if (sh->one_port) {
			if (P - 1 > best)
				best = P - 1;
		} else if ((P - 1) / (2 * sh->ndims) > best) {
			best = (P - 1) / (2 * sh->ndims);
		}
		return ceil_eps(best);
	}
	if (coll == TC_COLL_ALLGATHER) {
		for (int d = 0; d < sh->ndims; d++) {
			int n = sh->dims[d];
			double b = (sh->wrap_mask & (1u << d)) ? ((n + 1) / 2) / 2.0 : (n + 1) / 2;

			if (b > best)
				best = b;
		}
		if (sh->one_port) {
			if (P - 1 > best)
				best = P - 1;
		} else if ((P - 1) / in_degree_min(sh) > best) {
			best = (P - 1) / in_degree_min(sh);
		}
		return ceil_eps(best);
	}
	return 0;
}

static double lower_bound_steps(const struct tc_shape *sh, enum tc_coll coll)
{
	if (coll != TC_COLL_ALLGATHER)
		return 0;
	if (sh->one_port)
		return sh->nodes - 1;
	return ceil_eps((double)(sh->nodes - 1) / in_degree_min(sh));
}

/*
 * The critical-path evaluations run side by side, one column each:
 * 0 blocks, 1 startups, 2.. the time for each block size.
 */
#define TC_COST_MAX_SIZES 32

static int cost_dp(const struct tc_sched *s, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		   double *time_us, struct tc_cost *out)
{
	const struct tc_shape *sh = &s->shape;
	const size_t N = sh->nodes, nlinks = N * 2 * sh->ndims;
	const int NCP = 2 + nsizes;
	const double np = s->npackets > 0 ? s->npackets : 1;
	double *done, *next, *lfree, *dur_end, tcp[2 + TC_COST_MAX_SIZES] = { 0 };
	double dur[2 + TC_COST_MAX_SIZES];
	int64_t *lblk;
	uint32_t links[TC_MAX_DIMS * 128];
	uint32_t maxstep = 0;

	if (!s->step_first)
		return tc_sched_set_error(-EINVAL, "%s: tc_cost_eval: schedule not finished", s->algo);
	if (nsizes < 0 || nsizes > TC_COST_MAX_SIZES)
		return tc_sched_set_error(-EINVAL, "%s: tc_cost_eval: %d sizes (at most %d)", s->algo, nsizes,
					  TC_COST_MAX_SIZES);
	memset(out, 0, sizeof(*out));
	for (uint32_t st = 0; st < s->nsteps; st++)
		if (s->step_first[st + 1] - s->step_first[st] > maxstep)
			maxstep = s->step_first[st + 1] - s->step_first[st];
	done = calloc(N * NCP, sizeof(*done));
	next = calloc(N * NCP, sizeof(*next));
	lfree = calloc(nlinks * NCP, sizeof(*lfree));
	lblk = calloc(nlinks, sizeof(*lblk));
	dur_end = malloc(((size_t)maxstep + 1) * NCP * sizeof(*dur_end));
	if (!done || !next || !lfree || !lblk || !dur_end) {
		free(done);
		free(next);
		free(lfree);
		free(lblk);
		free(dur_end);
		return tc_sched_set_error(-ENOMEM, "%s: tc_cost_eval: out of memory", s->algo);
	}
	for (uint32_t st = 0; st < s->nsteps; st++) {
		uint32_t first = s->step_first[st], last = s->step_first[st + 1];
		double biggest = 0;

		for (uint32_t i = first; i < last; i++) {
			const struct tc_msg *msg = &s->msgs[i];
			const double b = msg->nblk / np;
			double *end = &dur_end[(size_t)(i - first) * NCP];
			const double *ds = &done[msg->src * NCP], *dd = &done[msg->dst * NCP];
			int nl = tc_msg_links(sh, msg, links);

			dur[0] = b;
			dur[1] = 1;
			for (int k = 0; k < nsizes; k++)
				dur[2 + k] = p->ts_us + b * (double)sizes[k] * p->tw_us_per_byte;
			if (b > biggest)
				biggest = b;
			for (int c = 0; c < NCP; c++)
				end[c] = ds[c] > dd[c] ? ds[c] : dd[c];
			for (int l = 0; l < nl; l++) {
				const double *lf = &lfree[(size_t)links[l] * NCP];

				for (int c = 0; c < NCP; c++)
					if (lf[c] > end[c])
						end[c] = lf[c];
			}
			for (int c = 0; c < NCP; c++)
				end[c] += dur[c];
			for (int l = 0; l < nl; l++) {
				memcpy(&lfree[(size_t)links[l] * NCP], end, NCP * sizeof(*end));
				lblk[links[l]] += msg->nblk;
			}
		}
		out->lockstep_blocks += biggest;
		/* done(n, s) = max(done(n, s-1), ends of n's step-s messages) */
		for (uint32_t i = first; i < last; i++) {
			const struct tc_msg *msg = &s->msgs[i];
			const double *end = &dur_end[(size_t)(i - first) * NCP];

			for (int c = 0; c < NCP; c++) {
				if (end[c] > next[msg->src * NCP + c])
					next[msg->src * NCP + c] = end[c];
				if (end[c] > next[msg->dst * NCP + c])
					next[msg->dst * NCP + c] = end[c];
			}
		}
		for (uint32_t i = first; i < last; i++) {
			const struct tc_msg *msg = &s->msgs[i];

			for (int c = 0; c < NCP; c++) {
				if (next[msg->src * NCP + c] > done[msg->src * NCP + c])
					done[msg->src * NCP + c] = next[msg->src * NCP + c];
				if (next[msg->dst * NCP + c] > done[msg->dst * NCP + c])
					done[msg->dst * NCP + c] = next[msg->dst * NCP + c];
			}
		}
	}
	for (size_t n = 0; n < N; n++)
		for (int c = 0; c < NCP; c++)
			if (done[n * NCP + c] > tcp[c])
				tcp[c] = done[n * NCP + c];
	for (size_t l = 0; l < nlinks; l++)
		if (lblk[l] > out->max_link_blocks)
			out->max_link_blocks = lblk[l];

	out->transmission_blocks = tcp[0];
	out->steps = (uint32_t)llround(tcp[1]);
	out->rearranged_blocks = s->rearranged_blocks;
	out->lower_bound_blocks = tc_lower_bound_blocks(sh, s->coll);
	out->ratio = out->lower_bound_blocks > 0 ? out->transmission_blocks / out->lower_bound_blocks : 0;
	out->lower_bound_steps = lower_bound_steps(sh, s->coll);
	for (int k = 0; k < nsizes; k++)
		time_us[k] = tcp[2 + k] + p->rho_us_per_byte * (double)sizes[k] * (double)s->rearranged_blocks;
	free(done);
	free(next);
	free(lfree);
	free(lblk);
	free(dur_end);
	return 0;
}

int tc_cost_eval(const struct tc_sched *s, const struct tc_cost_params *p, struct tc_cost *out)
{
	double t = 0;
	int err;

	err = cost_dp(s, p, p ? &p->block_bytes : NULL, p ? 1 : 0, &t, out);
	if (!err)
		out->time_us = t;
	return err;
}

int tc_cost_eval_sizes(const struct tc_sched *s, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		       double *time_us, struct tc_cost *out)
{
	if (!p || !sizes || !time_us)
		return tc_sched_set_error(-EINVAL, "tc_cost_eval_sizes: NULL parameters");
	return cost_dp(s, p, sizes, nsizes, time_us, out);
}
