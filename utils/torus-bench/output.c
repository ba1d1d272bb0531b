// SPDX-License-Identifier: GPL-2.0
/*
 * torus-bench: the records, as a table (with the closing comparison of
 * vs_auto.c), CSV or one JSON document.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (v < 0 || !isfinite(v))
		fprintf(f, "null");
	else
		fprintf(f, "%.6g", v);
}

/* One field of a JSON record: , "name": value (null when negative) */
void json_field(const char *name, double v)
{
	printf(", \"%s\": ", name);
	json_num(stdout, v);
}

void print_json(const struct bench *b, const char *transport)
{
	const struct opts *o = &b->o;
	const int *dims = b->dims, nd = b->ndims, P = b->P;
	const unsigned int wrap = b->wrap;

	printf("{\"tool\": \"torus-bench\", \"coll\": \"%s\", \"transport\": \"%s\", \"dims\": [", colls[o->coll]->name,
	       transport);
	for (int d = 0; d < nd; d++)
		printf("%s%d", d ? ", " : "", dims[d]);
	printf("], \"wrap_mask\": %u, \"port_model\": \"%s\", \"nodes\": %d, \"warmup\": %d, \"iters\": %d,\n", wrap,
	       b->one_port ? "one-port" : "all-port", P, o->warmup, o->iters);
	printf(" \"size_is\": ");
	json_str(stdout, colls[o->coll]->size_is);
	printf(",\n \"model\": {\"ts_ns\": %g, \"tw_ps\": %g},", o->ts_ns, o->tw_ps);
	if (b->ctl_fd >= 0)
		printf(" \"barrier_makespan_us\": %.6g,", b->barrier_ms);
	printf("\n \"records\": [");
	for (int i = 0; i < b->nrecs; i++) {
		const struct record *r = &b->recs[i];

		printf("%s\n  {\"algo\": ", i ? "," : "");
		json_str(stdout, r->algo);
		printf(", \"size\": %zu, \"supported\": %s", r->size, r->supported ? "true" : "false");
		if (!r->supported) {
			printf(", \"ran\": ");
			json_str(stdout, r->ran);
			printf(", \"why\": ");
			json_str(stdout, r->why);
			printf(", \"errors\": %lld}", r->errors);
			continue;
		}
		if (strcmp(r->ran, "-")) {
			printf(", \"ran\": ");
			json_str(stdout, r->ran);
		}
		printf(", \"bytes\": %.0f, \"time_us\": ", r->bytes);
		json_num(stdout, r->tavg);
		json_field("time_min_us", r->tmin);
		json_field("time_max_us", r->tmax);
		json_field("algbw_GBps", r->algbw);
		json_field("busbw_GBps", r->busbw);
		if (r->predicted >= 0) {
			printf(", \"steps\": %u, \"transmission_blocks\": ", r->steps);
			json_num(stdout, r->tx_blocks);
			json_field("lower_bound_blocks", r->lb_blocks);
		}
		json_field("predicted_us", r->predicted);
		json_field("ratio", ratio(r));
		json_field("time_med_us", r->tmed);
		json_field("makespan_us", r->makespan);
		json_field("model_us", r->model_us);
		json_field("zero_copy_ranks", r->zcopy_ranks);
		json_field("eager_sends", r->eager_sends);
		json_field("rendezvous_sends", r->rdv_sends);
		json_field("offloaded_ranks", r->offl_ranks);
		json_field("posts", r->posts);
		json_field("waits", r->waits);
		json_field("regs", r->regs);
		json_field("wall_us", r->wall);
		if (r->rounds > 1) {
			printf(", \"rounds\": %d, \"round_min_us\": ", r->rounds);
			json_num(stdout, r->round_min);
			json_field("round_max_us", r->round_max);
			printf(", \"round_us\": [");
			for (int k = 0; k < b->o.rounds; k++) {
				printf(k ? ", " : "");
				json_num(stdout, r->round_t[k]);
			}
			printf("]");
		}
		printf(", \"errors\": %lld}", r->errors);
	}
	printf("\n ]");
	print_vs_auto_json(b);
	printf("}\n");
}

void fmt_opt(char *buf, size_t n, double v, const char *fmt)
{
	if (v < 0 || !isfinite(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, fmt, v);
}

/*
 * The fabric's time of one call against the same fabric's model:
 * makespan / predicted, where both are known (dev). Elsewhere there is no
 * fabric time to compare: wall time on a host is not what the model prices.
 */
double ratio(const struct record *r)
{
	return r->makespan > 0 && r->predicted > 0 ? r->makespan / r->predicted : -1;
}

/* a CSV field: the number, or empty where not known */
static void csv_num(double v, const char *fmt)
{
	putchar(',');
	if (v >= 0 && isfinite(v))
		printf(fmt, v);
}

static void csv_str(const char *s)
{
	putchar(',');
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

/*
 * Every field of a record, as JSON has them (a field not known is empty),
 * then a blank line and the comparison of auto with the measured best.
 */
void print_csv(const struct bench *b)
{
	const struct opts *o = &b->o;

	printf("coll,algo,%s,supported,ran,bytes,time_us,time_min_us,time_max_us,time_med_us,algbw_GBps,"
	       "busbw_GBps,steps,transmission_blocks,lower_bound_blocks,predicted_us,makespan_us,ratio,model_us,"
	       "wall_us,zero_copy_ranks,eager_sends,rendezvous_sends,rounds,round_min_us,round_max_us,errors,why\n",
	       colls[o->coll]->size_name);
	for (int i = 0; i < b->nrecs; i++) {
		const struct record *r = &b->recs[i];
		const int s = r->supported, m = s && r->predicted >= 0, R = s && r->rounds > 1;

		printf("%s,%s,%zu,%d", colls[o->coll]->name, r->algo, r->size, s);
		csv_str(r->ran);
		csv_num(s ? r->bytes : -1, "%.0f");
		csv_num(s ? r->tavg : -1, "%.3f");
		csv_num(s ? r->tmin : -1, "%.3f");
		csv_num(s ? r->tmax : -1, "%.3f");
		csv_num(s ? r->tmed : -1, "%.3f");
		csv_num(s ? r->algbw : -1, "%.4f");
		csv_num(s ? r->busbw : -1, "%.4f");
		csv_num(m ? (double)r->steps : -1, "%.0f");
		csv_num(m ? r->tx_blocks : -1, "%g");
		csv_num(m ? r->lb_blocks : -1, "%g");
		csv_num(s ? r->predicted : -1, "%.3f");
		csv_num(s ? r->makespan : -1, "%.3f");
		csv_num(s ? ratio(r) : -1, "%.3f");
		csv_num(s ? r->model_us : -1, "%.3f");
		csv_num(s ? r->wall : -1, "%.3f");
		csv_num(s ? r->zcopy_ranks : -1, "%.0f");
		csv_num(s ? r->eager_sends : -1, "%.0f");
		csv_num(s ? r->rdv_sends : -1, "%.0f");
		csv_num(R ? (double)r->rounds : -1, "%.0f");
		csv_num(R ? r->round_min : -1, "%.3f");
		csv_num(R ? r->round_max : -1, "%.3f");
		printf(",%lld", r->errors);
		csv_str(r->why);
		putchar('\n');
	}
	print_vs_auto_csv(b);
}

void print_table(const struct bench *b, const char *transport)
{
	const struct opts *o = &b->o;
	const int *dims = b->dims, nd = b->ndims, P = b->P;
	const unsigned int wrap = b->wrap;

	printf("# torus-bench: %s on ", colls[o->coll]->name);
	for (int d = 0; d < nd; d++)
		printf("%s%d", d ? "x" : "", dims[d]);
	printf(" (%d nodes, %s, %s, transport %s), %d warmup, %d timed iterations\n", P,
	       wrap == (1u << nd) - 1 ? "torus" : wrap ? "partly wrapping" : "mesh",
	       b->one_port ? "one-port" : "all-port", transport, o->warmup, o->iters);
	printf("# %s = %s; bytes = the data one rank sends or receives\n", colls[o->coll]->size_name,
	       colls[o->coll]->size_is);
	printf("# times in us per call (avg/min/max over ranks); bandwidths in GB/s; predicted =\n"
	       "# steps*ts + transmission_blocks*size*tw with ts %g ns, tw %g ps/B, the fabric's model;\n"
	       "# ratio = makespan / predicted, the fabric's time of one call against that model (dev only:\n"
	       "# elsewhere there is wall time, which it does not price); model_us = the library's cost model\n",
	       o->ts_ns, o->tw_ps);
	printf("%-14s %15s %12s %12s %12s %12s %9s %9s %12s %12s %8s %12s %7s\n", "algo", colls[o->coll]->size_name,
	       "bytes", "time_us", "min_us", "max_us", "algbw", "busbw", "predicted_us", "makespan_us", "ratio",
	       "model_us", "errors");
	for (int i = 0; i < b->nrecs; i++) {
		const struct record *r = &b->recs[i];
		char pr[32], ra[32], ms[32], mo[32];

		if (!r->supported) {
			/* one line for the sizes in a row the algorithm did not run at, for one reason */
			int j = i;
			long long bad = r->errors;

			while (j + 1 < b->nrecs && !b->recs[j + 1].supported && !strcmp(b->recs[j + 1].algo, r->algo) &&
			       !strcmp(b->recs[j + 1].why, r->why) && !strcmp(b->recs[j + 1].ran, r->ran))
				bad += b->recs[++j].errors;
			if (j > i)
				printf("%-14s %15s  not supported on this shape at %zu to %zu (ran %s instead: %s)", r->algo,
				       "-", r->size, b->recs[j].size, r->ran, r->why);
			else
				printf("%-14s %15zu  not supported on this shape (ran %s instead: %s)", r->algo, r->size,
				       r->ran, r->why);
			if (bad)
				printf("; %lld wrong bytes", bad);
			printf("\n");
			i = j;
			continue;
		}
		fmt_opt(pr, sizeof(pr), r->predicted, "%.3f");
		fmt_opt(ra, sizeof(ra), ratio(r), "%.3f");
		fmt_opt(ms, sizeof(ms), r->makespan, "%.3f");
		fmt_opt(mo, sizeof(mo), r->model_us, "%.3f");
		printf("%-14s %15zu %12.0f %12.3f %12.3f %12.3f %9.4f %9.4f %12s %12s %8s %12s %7lld\n", r->algo,
		       r->size, r->bytes, r->tavg, r->tmin, r->tmax, r->algbw, r->busbw, pr, ms, ra, mo, r->errors);
	}
	print_vs_auto_table(b);
}
