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
	printf(" \"model\": {\"ts_ns\": %g, \"tw_ps\": %g},", o->ts_ns, o->tw_ps);
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
		json_field("ratio", r->predicted > 0 ? r->tavg / r->predicted : -1);
		json_field("time_med_us", r->tmed);
		json_field("makespan_us", r->makespan);
		json_field("model_us", r->model_us);
		json_field("zero_copy_ranks", r->zcopy_ranks);
		json_field("eager_sends", r->eager_sends);
		json_field("rendezvous_sends", r->rdv_sends);
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

void print_table(const struct bench *b, const char *transport, int csv)
{
	const struct opts *o = &b->o;
	const int *dims = b->dims, nd = b->ndims, P = b->P;
	const unsigned int wrap = b->wrap;

	if (csv) {
		printf("coll,algo,size,bytes,time_us,time_min_us,time_max_us,algbw_GBps,busbw_GBps,steps,"
		       "transmission_blocks,predicted_us,ratio,makespan_us,errors,supported,why\n");
		for (int i = 0; i < b->nrecs; i++) {
			const struct record *r = &b->recs[i];
			char pr[32], ra[32], ms[32];

			fmt_opt(pr, sizeof(pr), r->predicted, "%.3f");
			fmt_opt(ra, sizeof(ra), r->predicted > 0 ? r->tavg / r->predicted : -1, "%.3f");
			fmt_opt(ms, sizeof(ms), r->makespan, "%.3f");
			if (!r->supported) {
				printf("%s,%s,%zu,,,,,,,,,,,,%lld,0,\"%s\"\n", colls[o->coll]->name, r->algo, r->size,
				       r->errors, r->why);
				continue;
			}
			char st[16] = "", tx[32] = "";

			if (r->predicted >= 0) {
				snprintf(st, sizeof(st), "%u", r->steps);
				snprintf(tx, sizeof(tx), "%g", r->tx_blocks);
			}
			printf("%s,%s,%zu,%.0f,%.3f,%.3f,%.3f,%.4f,%.4f,%s,%s,%s,%s,%s,%lld,1,\n", colls[o->coll]->name,
			       r->algo, r->size, r->bytes, r->tavg, r->tmin, r->tmax, r->algbw, r->busbw, st, tx,
			       pr[0] == '-' ? "" : pr, ra[0] == '-' ? "" : ra, ms[0] == '-' ? "" : ms,
			       r->errors);
		}
		return;
	}
	printf("# torus-bench: %s on ", colls[o->coll]->name);
	for (int d = 0; d < nd; d++)
		printf("%s%d", d ? "x" : "", dims[d]);
	printf(" (%d nodes, %s, %s, transport %s), %d warmup, %d timed iterations\n", P,
	       wrap == (1u << nd) - 1 ? "torus" : wrap ? "partly wrapping" : "mesh",
	       b->one_port ? "one-port" : "all-port", transport, o->warmup, o->iters);
	printf("# times in us per call (avg/min/max over ranks); bandwidths in GB/s; predicted =\n"
	       "# steps*ts + transmission_blocks*size*tw with ts %g ns, tw %g ps/B\n", o->ts_ns, o->tw_ps);
	printf("%-14s %10s %12s %12s %12s %12s %9s %9s %12s %8s %12s %12s %7s\n", "algo", "size", "bytes",
	       "time_us", "min_us", "max_us", "algbw", "busbw", "predicted_us", "ratio", "makespan_us", "model_us",
	       "errors");
	for (int i = 0; i < b->nrecs; i++) {
		const struct record *r = &b->recs[i];
		char pr[32], ra[32], ms[32], mo[32];

		if (!r->supported) {
			printf("%-14s %10zu  not supported on this shape (ran %s instead: %s)\n", r->algo, r->size,
			       r->ran, r->why);
			continue;
		}
		fmt_opt(pr, sizeof(pr), r->predicted, "%.3f");
		fmt_opt(ra, sizeof(ra), r->predicted > 0 ? r->tavg / r->predicted : -1, "%.3f");
		fmt_opt(ms, sizeof(ms), r->makespan, "%.3f");
		fmt_opt(mo, sizeof(mo), r->model_us, "%.3f");
		printf("%-14s %10zu %12.0f %12.3f %12.3f %12.3f %9.4f %9.4f %12s %8s %12s %12s %7lld\n", r->algo,
		       r->size, r->bytes, r->tavg, r->tmin, r->tmax, r->algbw, r->busbw, pr, ra, ms, mo, r->errors);
	}
	print_vs_auto_table(b);
}