// SPDX-License-Identifier: GPL-2.0
/*
 * torus-sched --json: the summary as one JSON object on one line, with what
 * --explain, --run, --links and --dump add to it.
 */
#include "sched.h"

void sched_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* --explain: ,"explain":{candidates, winner, runner_up, reason}. */
void sched_explain_json(const struct tc_auto_choice *c)
{
	char reason[320];

	tc_auto_reason(c, reason, sizeof(reason));
	printf(",\"explain\":{\"class_bytes\":[%zu,%zu],\"candidates\":[", c->class_lo, c->class_hi);
	for (int i = 0; i < c->ncand; i++) {
		const struct tc_auto_cand *k = &c->cand[i];

		printf("%s{\"algo\":", i ? "," : "");
		sched_json_str(k->algo->name);
		printf(",\"priced_by\":");
		sched_json_str(k->how ? k->how : "");
		if (k->err) {
			printf(",\"candidate\":false,\"why\":");
			sched_json_str(k->why);
		} else {
			printf(",\"candidate\":true,\"time_us\":%.6g,\"startups\":%u", k->us, k->steps);
		}
		printf("}");
	}
	printf("],\"winner\":");
	sched_json_str(c->winner >= 0 ? c->cand[c->winner].algo->name : "");
	printf(",\"runner_up\":");
	sched_json_str(c->runner_up >= 0 ? c->cand[c->runner_up].algo->name : "");
	printf(",\"reason\":");
	sched_json_str(reason);
	printf("}");
}

/* The shape's fields of the summary: dims, wrap, port_model, nodes. */
static void print_shape(const struct tc_shape *shape)
{
	printf(",\"dims\":[");
	for (int d = 0; d < shape->ndims; d++)
		printf("%s%d", d ? "," : "", shape->dims[d]);
	printf("],\"wrap\":[");
	for (int d = 0; d < shape->ndims; d++)
		printf("%s%s", d ? "," : "", shape->wrap_mask & (1u << d) ? "true" : "false");
	printf("],\"port_model\":\"%s\",\"nodes\":%d", shape->one_port ? "one-port" : "all-port", shape->nodes);
}

/*
 * --algo auto --explain --json when no algorithm is a candidate: one object
 * all the same (no schedule, so no algo), with the error and every
 * candidate's reason; the caller exits 3.
 */
void sched_print_json_nochoice(const struct sched_opts *o, const struct sched_result *r)
{
	char err[96];

	snprintf(err, sizeof(err), "auto: no %s algorithm supports this shape", tc_coll_str(o->coll));
	printf("{\"coll\":\"%s\",\"algo\":null,\"requested\":", tc_coll_str(o->coll));
	sched_json_str(o->algo_name);
	print_shape(&r->shape);
	printf(",\"error\":");
	sched_json_str(err);
	sched_explain_json(&r->choice);
	printf("}\n");
	fflush(stdout);
}

/* --links: [step, node, port, blocks, src, dst] per link a message occupies. */
static void print_link(void *arg, uint32_t step, int node, int port, const struct tc_msg *m)
{
	int *first = arg;

	printf("%s[%u,%d,%d,%u,%d,%d]", *first ? "" : ",", step, node, port, m->nblk, m->src, m->dst);
	*first = 0;
}

/* --dump: ,"schedule":[steps of {src, dst, route, blocks}]. */
static void dump_json(const struct tc_sched *s)
{
	printf(",\"schedule\":[");
	for (uint32_t st = 0; st < s->nsteps; st++) {
		printf("%s[", st ? "," : "");
		for (uint32_t i = s->step_first[st]; i < s->step_first[st + 1]; i++) {
			const struct tc_msg *m = &s->msgs[i];

			printf("%s{\"src\":%d,\"dst\":%d,\"route\":[", i > s->step_first[st] ? "," : "", m->src, m->dst);
			for (int d = 0; d < s->shape.ndims; d++)
				printf("%s%d", d ? "," : "", m->route[d]);
			printf("],\"blocks\":[");
			for (uint32_t k = 0; k < m->nblk; k++)
				printf("%s[%d,%d]", k ? "," : "", s->blks[m->blk_off + k].a, s->blks[m->blk_off + k].b);
			printf("]}");
		}
		printf("]");
	}
	printf("]");
}

static void print_claims(unsigned int claims)
{
	static const char *const names[] = { "contention_free", "shortest", "permutation", "one_hop" };
	int first = 1;

	printf(",\"claims\":[");
	for (int b = 0; b < 4; b++)
		if (claims & (1u << b)) {
			printf("%s\"%s\"", first ? "" : ",", names[b]);
			first = 0;
		}
	printf("]");
}

static void print_pricing(const struct tc_cost_params *p, double time_us)
{
	printf(",\"ts_us\":%g,\"tw_us_per_byte\":%g,\"rho_us_per_byte\":%g,\"m\":%zu,\"time_us\":%.6g", p->ts_us,
	       p->tw_us_per_byte, p->rho_us_per_byte, p->block_bytes, time_us);
	if (p->hop_us > 0)
		printf(",\"hop_us\":%g", p->hop_us);
	if (p->flags)
		printf(",\"pricing\":\"%s\"", p->flags & TC_COST_DIRECT ? "direct" : p->flags & TC_COST_HOST ? "host" : "device");
	if (p->lat_us > 0)
		printf(",\"lat_us\":%g", p->lat_us);
	if (p->msg_us > 0)
		printf(",\"msg_us\":%g", p->msg_us);
	if (p->rdv_us > 0)
		printf(",\"rdv_us\":%g,\"eager_bytes\":%zu", p->rdv_us, p->eager_bytes);
}

void sched_print_json(const struct sched_opts *o, const struct sched_result *r)
{
	const struct tc_sched *s = r->s;
	const struct tc_shape *shape = &r->shape;
	const struct tc_cost *c = &r->cost;

	printf("{\"coll\":\"%s\",\"algo\":", tc_coll_str(s->coll));
	sched_json_str(r->algo->name);
	printf(",\"requested\":");
	sched_json_str(o->algo_name);
	printf(",\"cite\":");
	sched_json_str(s->cite);
	print_shape(shape);
	printf(",\"steps\":%u,\"messages\":%llu,\"block_moves\":%llu,\"npackets\":%d", s->nsteps,
	       (unsigned long long)(r->translated ? r->sym.msgs : s->nmsgs),
	       (unsigned long long)(r->translated ? r->sym.blks : s->nblks), s->npackets);
	if (r->translated)
		printf(",\"translated\":{\"cell_sources\":%d,\"cell_block_moves\":%llu}", r->sym.cell_nodes,
		       (unsigned long long)r->sym.cell_blks);
	printf(",\"startups_critical_path\":%u,\"transmission_blocks\":%.6g,\"lockstep_blocks\":%.6g", c->steps,
	       c->transmission_blocks, c->lockstep_blocks);
	printf(",\"lower_bound_blocks\":%.6g,\"ratio\":%.6g,\"max_link_blocks\":%lld,\"rearranged_blocks\":%lld",
	       c->lower_bound_blocks, c->ratio, (long long)c->max_link_blocks, (long long)c->rearranged_blocks);
	if (s->coll == TC_ALLGATHER)
		printf(",\"lower_bound_steps\":%.6g", c->lower_bound_steps);
	print_claims(s->claims);
	printf(",\"verified\":%s", r->rep.ok ? "true" : "false");
	if (!r->rep.ok) {
		printf(",\"first_violation\":");
		sched_json_str(r->rep.first_violation);
	}
	if (o->priced)
		print_pricing(&o->p, c->time_us);
	if (o->explain)
		sched_explain_json(&r->choice);
	printf(",\"build_ms\":%.3f,\"verify_ms\":%.3f", r->t_build * 1e3, r->t_verify * 1e3);
	if (o->run) {
		printf(",\"run\":{\"block_bytes\":%zu,\"ok\":%s,\"bytes_checked\":%zu,\"bytes_wrong\":%ld", o->p.block_bytes,
		       r->bad == 0 ? "true" : "false", r->checked, r->bad > 0 ? r->bad : 0);
		if (r->bad < 0) {
			printf(",\"error\":");
			sched_json_str(r->run_why);
		}
		printf("}");
	}
	if (o->links) {
		size_t nl = (size_t)shape->nodes * 2 * shape->ndims;
		int first = 1;

		printf(",\"links\":[");
		tc_sched_visit_links(s, print_link, &first);
		printf("],\"link_blocks\":[");
		for (size_t l = 0; l < nl; l++)
			printf("%s%lld", l ? "," : "", r->rep.link_blocks ? (long long)r->rep.link_blocks[l] : 0LL);
		printf("]");
	}
	if (o->dump)
		dump_json(s);
	printf("}\n");
}
