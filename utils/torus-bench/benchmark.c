// SPDX-License-Identifier: GPL-2.0
/*
 * torus-bench: the sweep. Sizes and rounds, and each point: the warm-up, the
 * timed calls (on the device between barriers outside the fabric, each
 * call's virtual makespan alone; elsewhere each call between barriers) and
 * the reduction of times, wrong bytes and path over the ranks.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

void set_fail(struct bench *b, int rank, int err, const char *what)
{
	pthread_mutex_lock(&b->lock);
	if (!b->fail) {
		b->fail = err ? err : -EIO;
		snprintf(b->failmsg, sizeof(b->failmsg), "rank %d: %s: %s%s%s", rank, what, tc_strerror(err),
			 *tc_last_error() ? ": " : "", tc_last_error());
	}
	pthread_mutex_unlock(&b->lock);
}

static int add_record(struct bench *b, const struct record *r)
{
	if (b->nrecs == b->caprecs) {
		int n = b->caprecs ? 2 * b->caprecs : 32;
		struct record *p = realloc(b->recs, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		b->recs = p;
		b->caprecs = n;
	}
	b->recs[b->nrecs++] = *r;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * One point's calls on this rank. Each call gets data of its own (call_id():
 * the point's index in the sweep and the call's in the point), filled before
 * it and checked after it, both outside the timed region, against a
 * reference computed here: the count of wrong bytes never goes through the
 * library under test.
 */
struct point {
	size_t size;
	int P, rank, id;
	int calls;     /* calls made so far */
	long long bad; /* wrong bytes so far */
};

static void point_fill(const struct bench *b, const struct point *pt, struct bufs *B)
{
	fill(b->o.coll, pt->size, pt->P, pt->rank, call_id(pt->id, pt->calls), B);
}

/* after a call that returned ret: its bytes checked (when it succeeded) */
static void point_check(const struct bench *b, struct point *pt, int ret, const struct bufs *B)
{
	if (!ret)
		pt->bad += check(b->o.coll, pt->size, pt->P, pt->rank, call_id(pt->id, pt->calls), B);
	pt->calls++;
}

/*
 * Dev with the outside barrier: each timed call alone, its virtual clocks
 * reset before it; r->makespan and r->wall the medians over the calls (rank
 * 0 fills them), *t this rank's mean time in the call.
 */
static int timed_calls_dev(struct bench *b, tc_comm_t *comm, struct point *pt, struct bufs *B, struct record *r,
			   double *t)
{
	const struct opts *o = &b->o;
	double span[o->iters], wall[o->iters], sum = 0, t0, t1, x;
	int ret = 0, n = 0, rank = pt->rank;

	/* every rank takes every barrier, even after a failed call */
	for (int i = 0; i < o->iters; i++) {
		int ran = !ret;

		if (ran)
			point_fill(b, pt, B);
		pthread_barrier_wait(b->obar);
		if (rank == 0 && fabric_span(b, 1, &x))
			r->makespan = -2; /* a failed query: no makespan for this size */
		pthread_barrier_wait(b->obar);
		t0 = now_us();
		if (ran)
			ret = colls[o->coll]->run(comm, pt->size, B);
		t1 = now_us();
		sum += t1 - t0;
		pthread_barrier_wait(b->obar);
		if (rank == 0 && !ret) {
			wall[n] = now_us() - t0;
			if (fabric_span(b, 0, &span[n]))
				r->makespan = -2;
			n++;
		}
		/* after the last call too: what the ranks send next must not count */
		pthread_barrier_wait(b->obar);
		if (ran)
			point_check(b, pt, ret, B);
	}
	*t = sum / o->iters;
	if (rank == 0 && n && r->makespan > -2) {
		r->makespan = median(span, n);
		r->wall = median(wall, n);
	} else if (rank == 0) {
		r->makespan = -1;
	}
	return ret;
}

/*
 * Not on the device: each timed call between barriers, r->tmed the median
 * over the calls of the slowest rank's time in it (every rank fills it), *t
 * this rank's mean. A loaded host stretches single calls by several times;
 * the median of per-call maxima keeps one stall from deciding a comparison.
 */
static int timed_calls_wall(struct bench *b, tc_comm_t *comm, struct point *pt, struct bufs *B, struct record *r,
			    double *t)
{
	const struct opts *o = &b->o;
	double per[o->iters], slow[o->iters], sum = 0, t0;
	int ret = 0;

	for (int i = 0; i < o->iters && !ret; i++) {
		point_fill(b, pt, B);
		ret = tc_barrier(comm);
		t0 = now_us();
		if (!ret)
			ret = colls[o->coll]->run(comm, pt->size, B);
		per[i] = now_us() - t0;
		sum += per[i];
		point_check(b, pt, ret, B);
	}
	if (!ret)
		ret = tc_allreduce(comm, per, slow, o->iters, TC_DOUBLE, TC_MAX);
	if (!ret)
		r->tmed = median(slow, o->iters);
	*t = sum / o->iters;
	return ret;
}

/*
 * Dev without the outside barrier: the timed calls back to back between two
 * barriers, the makespan's growth over them less the barriers' (rank 0
 * fills r->makespan), *t this rank's mean time in a call.
 */
static int timed_calls_span(struct bench *b, tc_comm_t *comm, struct point *pt, struct bufs *B, struct record *r,
			    double *t)
{
	const struct opts *o = &b->o;
	double ms0 = 0, ms1 = 0, sum = 0, t0;
	int ret = tc_barrier(comm);

	if (!ret && pt->rank == 0 && makespan(b, &ms0))
		ms0 = -1;
	if (!ret)
		ret = tc_barrier(comm);
	for (int i = 0; i < o->iters && !ret; i++) {
		point_fill(b, pt, B);
		t0 = now_us();
		ret = colls[o->coll]->run(comm, pt->size, B);
		sum += now_us() - t0;
		point_check(b, pt, ret, B);
	}
	*t = sum / o->iters;
	if (!ret)
		ret = tc_barrier(comm);
	if (!ret && pt->rank == 0 && ms0 >= 0 && !makespan(b, &ms1))
		r->makespan = fmax(0, ms1 - ms0 - 2 * b->barrier_ms) / o->iters;
	return ret;
}

/*
 * One point of the sweep (the id-th): algo (when the collective has
 * algorithms) at size, a warm-up and the timed calls, reduced over the ranks
 * into *r; every rank calls it with the same arguments. This rank's wrong
 * bytes go to b->bad[cell] (under b->lock: on the simulator every rank
 * counts into the same array), never through the library.
 */
static int bench_point(struct bench *b, tc_comm_t *comm, const char *algo, size_t size, int use_ms, int id,
		       int cell, struct record *r)
{
	const struct opts *o = &b->o;
	const int P = tc_comm_size(comm), rank = tc_comm_rank(comm);
	int is_a2a = o->coll == C_ALLTOALL, has_algo = is_a2a || o->coll == C_ALLGATHER;
	struct point pt = { .size = size, .P = P, .rank = rank, .id = id };
	int ret = 0;
	struct bufs B;
	double t, v[3], g[3], bytes, factor;
	/* summed over the ranks at the end: the call's path (tc_coll_info zero_copy,
	 * eager_sends, rendezvous_sends) */
	long long sums[7] = { 0 }, gsums[7];

	if (has_algo) {
		ret = tc_comm_set_algo(comm, is_a2a ? TC_ALLTOALL : TC_ALLGATHER, algo);
		if (ret) {
			set_fail(b, rank, ret, "tc_comm_set_algo");
			b->bad_algo = ret == -ENOENT; /* a name no collective has: bad usage */
			return ret;
		}
	}
	memset(r, 0, sizeof(*r));
	snprintf(r->algo, sizeof(r->algo), "%s", algo);
	r->size = size;
	r->cell = cell;
	r->predicted = -1;
	r->model_us = -1;
	r->zcopy_ranks = r->eager_sends = r->rdv_sends = -1;
	r->offl_ranks = r->posts = r->waits = r->regs = -1;
	r->tmed = -1;
	r->makespan = -1;
	r->wall = -1;
	ret = alloc_bufs(o->coll, size, P, &B);
	if (ret) {
		set_fail(b, rank, ret, "allocating buffers");
		free_bufs(&B);
		return ret;
	}
	if (rank == 0 && b->progress) {
		fprintf(stderr, "\r" PROG ": %s %s size %zu ...        ", colls[o->coll]->name, algo, size);
		fflush(stderr);
	}
	/* warmup: every call checked; the first tells what ran */
	for (int it = 0; it < (o->warmup ? o->warmup : 1) && !ret; it++) {
		point_fill(b, &pt, &B);
		ret = colls[o->coll]->run(comm, size, &B);
		point_check(b, &pt, ret, &B);
	}
	if (ret) {
		set_fail(b, rank, ret, colls[o->coll]->name);
		goto out;
	}
	r->supported = 1;
	snprintf(r->ran, sizeof(r->ran), "%s", algo);
	if (has_algo) {
		struct tc_coll_info info = { .size = sizeof(info) };

		if (!tc_coll_last(comm, is_a2a ? TC_ALLTOALL : TC_ALLGATHER, &info)) {
			sums[0] = info.zero_copy;
			sums[1] = info.eager_sends;
			sums[2] = info.rendezvous_sends;
			snprintf(r->ran, sizeof(r->ran), "%s", info.algo);
			snprintf(r->why, sizeof(r->why), "%s", info.why);
			r->supported = !info.why[0];
			r->steps = info.steps;
			r->tx_blocks = info.transmission_blocks;
			r->lb_blocks = info.lower_bound_blocks;
			r->predicted = (info.steps * o->ts_ns + info.transmission_blocks * size * o->tw_ps / 1e3) /
				      1e3;
			r->model_us = info.predicted_us;
		}
	}
	if (r->supported) {
		if (b->obar)
			ret = timed_calls_dev(b, comm, &pt, &B, r, &t);
		else if (use_ms)
			ret = timed_calls_span(b, comm, &pt, &B, r, &t);
		else
			ret = timed_calls_wall(b, comm, &pt, &B, r, &t);
		if (ret) {
			set_fail(b, rank, ret, colls[o->coll]->name);
			goto out;
		}
		{
			/* every collective: whether it ran as one program, and its device calls */
			static const enum tc_coll_id ids[C_NUM] = {
				[C_ALLTOALL] = TC_ALLTOALL,	  [C_ALLGATHER] = TC_ALLGATHER,
				[C_ALLREDUCE] = TC_ALLREDUCE,	  [C_BCAST] = TC_BCAST,
				[C_BARRIER] = TC_BARRIER,	  [C_ALLTOALLV] = TC_ALLTOALLV,
				[C_ALLGATHERV] = TC_ALLGATHERV, [C_REDUCE_SCATTER] = TC_REDUCE_SCATTER,
			};
			struct tc_coll_info info = { .size = sizeof(info) };

			if (!tc_coll_last(comm, ids[o->coll], &info)) {
				sums[3] = info.offloaded;
				sums[4] = info.posts;
				sums[5] = info.waits;
				sums[6] = info.regs;
			}
		}
		/* avg, min, max over ranks with the library's own allreduce */
		v[0] = t;
		ret = tc_allreduce(comm, v, g, 1, TC_DOUBLE, TC_SUM);
		if (!ret)
			ret = tc_allreduce(comm, v, g + 1, 1, TC_DOUBLE, TC_MIN);
		if (!ret)
			ret = tc_allreduce(comm, v, g + 2, 1, TC_DOUBLE, TC_MAX);
		if (ret) {
			set_fail(b, rank, ret, "reducing the times");
			goto out;
		}
		r->tavg = g[0] / P;
		r->tmin = g[1];
		r->tmax = g[2];
		bw_model(o->coll, size, P, &bytes, &factor);
		r->bytes = bytes;
		r->algbw = r->tavg > 0 ? bytes / r->tavg / 1e3 : 0;
		r->busbw = r->algbw * factor;
	}
	ret = tc_allreduce(comm, sums, gsums, 7, TC_INT64, TC_SUM);
	if (ret) {
		set_fail(b, rank, ret, "reducing the path");
		goto out;
	}
	if (has_algo) {
		r->zcopy_ranks = gsums[0];
		r->eager_sends = gsums[1];
		r->rdv_sends = gsums[2];
	}
	if (r->supported) {
		r->offl_ranks = gsums[3];
		r->posts = gsums[4];
		r->waits = gsums[5];
		r->regs = gsums[6];
	}
out:
	free_bufs(&B);
	pthread_mutex_lock(&b->lock);
	b->bad[cell] += pt.bad;
	pthread_mutex_unlock(&b->lock);
	return ret;
}

/*
 * The sizes of the sweep into sizes[] (at most max), their count, or -1 when
 * there would be more than max. The reductions and bcast run whole int32
 * elements: each size rounded down to a multiple of 4, a repeat dropped.
 */
int sweep_sizes(const struct opts *o, size_t *sizes, int max)
{
	const int int32 = o->coll == C_ALLREDUCE || o->coll == C_BCAST || o->coll == C_REDUCE_SCATTER;
	int n = 0;

	if (o->coll == C_BARRIER) {
		sizes[0] = 0;
		return 1;
	}
	for (size_t raw = o->minb; raw <= o->maxb; raw = (size_t)ceil(raw * o->factor)) {
		size_t size = int32 ? raw & ~(size_t)3 : raw;

		if (n && size == sizes[n - 1])
			continue;
		if (n == max)
			return -1;
		sizes[n++] = size;
	}
	return n;
}

/*
 * Rank 0: each (algorithm, size) of res (rounds records each, algorithm
 * major) that ran in at least one round becomes one record: its median
 * round (the lower one of an even count) by the time compared, with the
 * least and the largest round.
 */
static int sweep_record(struct bench *b, const struct record *res, int nalgos, int nsizes)
{
	const int R = b->o.rounds;
	int ret = 0;

	for (int i = 0; i < nalgos * nsizes && !ret; i++) {
		const struct record *p = &res[(size_t)i * R], *by[R];
		struct record r;
		int n = 0;

		for (int k = 0; k < R; k++)
			if (p[k].rounds) {
				int j = n++;

				for (; j > 0 && measured(by[j - 1]) > measured(&p[k]); j--)
					by[j] = by[j - 1];
				by[j] = &p[k];
			}
		if (!n)
			continue;
		r = *by[(n - 1) / 2];
		for (int k = 0; k < R; k++)
			r.round_t[k] = p[k].rounds ? measured(&p[k]) : -1;
		r.rounds = n;
		r.round_min = measured(by[0]);
		r.round_max = measured(by[n - 1]);
		pthread_mutex_lock(&b->lock);
		ret = add_record(b, &r);
		pthread_mutex_unlock(&b->lock);
	}
	return ret;
}

/*
 * Round k of size s (-r): the algorithms in an order of their own, the same
 * on every rank (a Fisher-Yates shuffle seeded by s and k), so neither a
 * place in the round nor the algorithm run before is always the same one's.
 */
static void round_order(int s, int k, int nalgos, int *order)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(s * 1000 + k + 1);

	for (int i = 0; i < nalgos; i++)
		order[i] = i;
	for (int i = nalgos - 1; i > 0; i--) {
		int j, t;

		x ^= x >> 30; /* splitmix64's mix of a counter */
		x *= 0xbf58476d1ce4e5b9ull;
		x ^= x >> 27;
		x *= 0x94d049bb133111ebull;
		x ^= x >> 31;
		j = (int)(x % (uint64_t)(i + 1));
		t = order[i];
		order[i] = order[j];
		order[j] = t;
		x += 0x9e3779b97f4a7c15ull;
	}
}

/*
 * Every point of the sweep. One round: each algorithm over every size in
 * turn. Several (-r): per size, the whole list of algorithms once a round,
 * each round in its own order (round_order()), so a slow spell of the host
 * falls on every algorithm alike rather than on the ones run during it.
 */
int sweep(struct bench *b, tc_comm_t *comm, int use_ms, int nalgos)
{
	const struct opts *o = &b->o;
	const int R = o->rounds, has_algo = o->coll == C_ALLTOALL || o->coll == C_ALLGATHER;
	size_t sizes[MAX_SIZES];
	int nsizes = sweep_sizes(o, sizes, MAX_SIZES), ret = 0, n = R == 1 ? nalgos * nsizes : nsizes * R * nalgos;
	int order[MAX_ALGOS];
	struct record *res = calloc((size_t)nalgos * nsizes * R, sizeof(*res));

	if (!res) {
		set_fail(b, tc_comm_rank(comm), -ENOMEM, "allocating the records");
		return -ENOMEM;
	}
	for (int i = 0; i < n && !ret; i++) {
		/* one round: algorithm major; several: size, round, algorithm */
		int s = R == 1 ? i % nsizes : i / (R * nalgos), k = R == 1 ? 0 : i / nalgos % R;
		struct record *r;
		int a;

		if (R > 1 && i % nalgos == 0)
			round_order(s, k, nalgos, order);
		a = R == 1 ? i / nsizes : order[i % nalgos];
		r = &res[((size_t)a * nsizes + s) * R + k];

		ret = bench_point(b, comm, has_algo ? b->algos[a] : "-", sizes[s], use_ms, i, a * MAX_SIZES + s, r);
		r->rounds = !ret;
	}
	if (tc_comm_rank(comm) == 0) {
		int r2 = sweep_record(b, res, nalgos, nsizes);

		if (r2) {
			set_fail(b, 0, r2, "recording");
			ret = ret ? ret : r2;
		}
	}
	free(res);
	return ret;
}