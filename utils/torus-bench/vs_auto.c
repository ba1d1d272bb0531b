// SPDX-License-Identifier: GPL-2.0
/*
 * torus-bench: auto against the measured best, per size: auto's pick and
 * time, the forced run of what it picked, the measured best and the cost
 * model's best, and with rounds (-r) the spread and the paired ratios.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/*
 * What a record's comparison uses: on the device the virtual makespan of a
 * call (the fabric's timing model, what the cost model predicts), unless
 * auto was told to minimise the wall clock (TC_AUTO_CLOCK=wall); elsewhere
 * the median over the calls of the slowest rank's wall time.
 */
static int wall_clock_asked(void)
{
	const char *v = getenv("TC_AUTO_CLOCK");

	return v && !strcmp(v, "wall");
}

double measured(const struct record *r)
{
	if (r->makespan >= 0 && !wall_clock_asked())
		return r->makespan;
	if (r->tmed < 0 && r->wall > 0) /* dev: the median call, from its start to the last rank's end */
		return r->wall;
	return r->tmed >= 0 ? r->tmed : r->tmax;
}

struct vs_auto {
	size_t size;
	const struct record *autor, *pick, *best, *model_best;
	double ratio; /* measured auto / measured best */
	const struct record *paired_vs; /* -r: the algorithm auto lost to most, round by round */
	double paired;			/* the median over rounds of auto's time / its (0: one round) */
};

/*
 * With rounds: the median over the rounds both ran of a's time over b's in
 * the same round (each round runs every algorithm of a size back to back,
 * so a slow spell of the host weighs on both), or 0.
 */
static double paired_ratio(const struct record *a, const struct record *b, int R)
{
	double v[MAX_ROUNDS];
	int n = 0;

	for (int k = 0; k < R && R > 1; k++)
		if (a->round_t[k] > 0 && b->round_t[k] > 0)
			v[n++] = a->round_t[k] / b->round_t[k];
	return n ? median(v, n) : 0;
}

/*
 * Per size where auto and at least one other algorithm ran: auto's record,
 * the forced run of the algorithm auto picked, the measured best and the
 * cost model's best of the forced runs. A forced algorithm that did not run
 * (the shape refused it) is no candidate.
 */
static int vs_auto(const struct bench *b, struct vs_auto *out, int max)
{
	int n = 0;

	for (int i = 0; i < b->nrecs && n < max; i++) {
		const struct record *a = &b->recs[i];
		struct vs_auto v = { .size = a->size, .autor = a };

		if (strcmp(a->algo, "auto") || !a->supported)
			continue;
		for (int j = 0; j < b->nrecs; j++) {
			const struct record *r = &b->recs[j];
			double pr;

			if (r->size != a->size || !strcmp(r->algo, "auto") || !r->supported || strcmp(r->ran, r->algo))
				continue;
			if (!strcmp(r->algo, a->ran))
				v.pick = r;
			if (!v.best || measured(r) < measured(v.best))
				v.best = r;
			if (r->model_us >= 0 && (!v.model_best || r->model_us < v.model_best->model_us))
				v.model_best = r;
			pr = paired_ratio(a, r, b->o.rounds);
			if (pr > v.paired) {
				v.paired = pr;
				v.paired_vs = r;
			}
		}
		if (!v.best)
			continue;
		v.ratio = measured(v.best) > 0 ? measured(a) / measured(v.best) : 0;
		out[n++] = v;
	}
	return n;
}

static const char *metric_name(const struct bench *b)
{
	return b->ctl_fd >= 0 && !wall_clock_asked() ? "makespan" : "wall";
}

void print_vs_auto_json(const struct bench *b)
{
	struct vs_auto v[64];
	int n = vs_auto(b, v, 64);

	printf(",\n \"metric\": \"%s\",\n \"auto_vs_best\": [", metric_name(b));
	for (int i = 0; i < n; i++) {
		printf("%s\n  {\"size\": %zu, \"pick\": ", i ? "," : "", v[i].size);
		json_str(stdout, v[i].autor->ran);
		json_field("auto_us", measured(v[i].autor));
		json_field("auto_model_us", v[i].autor->model_us);
		json_field("pick_us", v[i].pick ? measured(v[i].pick) : -1);
		printf(", \"best\": ");
		json_str(stdout, v[i].best->algo);
		json_field("best_us", measured(v[i].best));
		json_field("best_model_us", v[i].best->model_us);
		printf(", \"model_best\": ");
		json_str(stdout, v[i].model_best ? v[i].model_best->algo : "");
		json_field("ratio", v[i].ratio);
		if (v[i].paired_vs) {
			json_field("paired", v[i].paired);
			printf(", \"paired_vs\": ");
			json_str(stdout, v[i].paired_vs->algo);
		}
		printf("}");
	}
	printf("\n ]");
}

/* How far a record's rounds spread: its largest round over its least (1 for one round). */
static double spread(const struct record *r)
{
	return r->rounds > 1 && r->round_min > 0 ? r->round_max / r->round_min : 1;
}

/* With several rounds: how much the same schedule's time varied from round to round. */
static void print_spread(const struct bench *b)
{
	double v[b->nrecs > 0 ? b->nrecs : 1];
	const struct record *worst = NULL;
	int n = 0;

	for (int i = 0; i < b->nrecs; i++)
		if (b->recs[i].supported && b->recs[i].rounds > 1) {
			v[n++] = spread(&b->recs[i]);
			if (!worst || spread(&b->recs[i]) > spread(worst))
				worst = &b->recs[i];
		}
	if (!n)
		return;
	printf("# the same (algorithm, size) across rounds, largest round / least: median %.2f, largest %.2f (%s at %zu);\n"
	       "# the times above are each one's median round (%d rounds)\n",
	       median(v, n), spread(worst), worst->algo, worst->size, b->o.rounds);
}

void print_vs_auto_table(const struct bench *b)
{
	struct vs_auto v[64];
	int n = vs_auto(b, v, 64), R = b->o.rounds > 1;
	char pk[32];

	if (!n)
		return;
	printf("# auto against the measured best (measured = %s%s); model = the library's cost model\n",
	       metric_name(b), b->ctl_fd >= 0 && !wall_clock_asked() ? " of one call, the fabric's timing model"
			       : b->ctl_fd >= 0 ? ": the median call's wall time to its last rank (TC_AUTO_CLOCK=wall)"
						: ": median over the calls of the slowest rank's time");
	printf("%10s %-14s %12s %13s %12s %-14s %12s %13s %-14s %9s", "size", "auto_pick", "auto_us", "auto_model_us",
	       "pick_us", "best", "best_us", "best_model_us", "model_best", "auto/best");
	printf(R ? " %9s %9s %9s %7s %-14s\n" : "\n", "pick/best", "auto_sprd", "best_sprd", "paired", "paired_vs");
	for (int i = 0; i < n; i++) {
		fmt_opt(pk, sizeof(pk), v[i].pick ? measured(v[i].pick) : -1, "%.3f");
		printf("%10zu %-14s %12.3f %13.3f %12s %-14s %12.3f %13.3f %-14s %9.3f", v[i].size, v[i].autor->ran,
		       measured(v[i].autor), v[i].autor->model_us, pk, v[i].best->algo, measured(v[i].best),
		       v[i].best->model_us, v[i].model_best ? v[i].model_best->algo : "-", v[i].ratio);
		if (R)
			printf(" %9.3f %9.2f %9.2f %7.3f %-14s", v[i].pick ? measured(v[i].pick) / measured(v[i].best) : -1,
			       spread(v[i].autor), spread(v[i].best), v[i].paired,
			       v[i].paired_vs ? v[i].paired_vs->algo : "-");
		printf("\n");
	}
	if (R) {
		print_spread(b);
		printf("# paired: the median over the rounds of auto's time over an algorithm's in the same round,\n"
		       "# for the algorithm where that is largest (paired_vs): how much faster it ran, round by round\n");
	}
}
/* --csv: after the records, a blank line and this table with its own header line */
void print_vs_auto_csv(const struct bench *b)
{
	struct vs_auto v[64];
	int n = vs_auto(b, v, 64);
	char au[32], am[32], pk[32], bu[32], bm[32], ra[32], pa[32];

	if (!n)
		return;
	printf("\nsize,metric,auto_pick,auto_us,auto_model_us,pick_us,best,best_us,best_model_us,model_best,"
	       "auto_over_best,paired,paired_vs\n");
	for (int i = 0; i < n; i++) {
		fmt_opt(au, sizeof(au), measured(v[i].autor), "%.3f");
		fmt_opt(am, sizeof(am), v[i].autor->model_us, "%.3f");
		fmt_opt(pk, sizeof(pk), v[i].pick ? measured(v[i].pick) : -1, "%.3f");
		fmt_opt(bu, sizeof(bu), measured(v[i].best), "%.3f");
		fmt_opt(bm, sizeof(bm), v[i].best->model_us, "%.3f");
		fmt_opt(ra, sizeof(ra), v[i].ratio, "%.3f");
		fmt_opt(pa, sizeof(pa), v[i].paired_vs ? v[i].paired : -1, "%.3f");
		printf("%zu,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", v[i].size, metric_name(b), v[i].autor->ran,
		       au[0] == '-' ? "" : au, am[0] == '-' ? "" : am, pk[0] == '-' ? "" : pk, v[i].best->algo,
		       bu[0] == '-' ? "" : bu, bm[0] == '-' ? "" : bm, v[i].model_best ? v[i].model_best->algo : "",
		       ra[0] == '-' ? "" : ra, pa[0] == '-' ? "" : pa, v[i].paired_vs ? v[i].paired_vs->algo : "");
	}
}
