// SPDX-License-Identifier: GPL-2.0
/*
 * torus-sched's text output: --list, the summary, and what --explain,
 * --links and --dump add to it.
 */
#include "sched.h"

void sched_list_algos(int coll)
{
	for (int i = 0; tc_algos[i]; i++)
		if (coll < 0 || (int)tc_algos[i]->coll == coll)
			printf("%-10s %-14s %s\n", tc_coll_str(tc_algos[i]->coll), tc_algos[i]->name, tc_algos[i]->summary);
	printf("%-10s %-14s %s\n", "both", "auto", "the library's choice for the shape and --m");
}

/* --explain: every candidate of the choice, then why the winner won. */
void sched_explain_text(const struct tc_auto_choice *c)
{
	char reason[320];

	tc_auto_reason(c, reason, sizeof(reason));
	printf("  auto: %d algorithms, priced for blocks of %zu..%zu B (time linear in between)\n", c->ncand,
	       c->class_lo, c->class_hi);
	for (int i = 0; i < c->ncand; i++) {
		const struct tc_auto_cand *k = &c->cand[i];

		if (k->err)
			printf("    %-14s %-10s %14s  not a candidate: %s\n", k->algo->name, k->how ? k->how : "-", "-",
			       k->why);
		else
			printf("    %-14s %-10s %11.6g us  %u startups%s\n", k->algo->name, k->how ? k->how : "-", k->us,
			       k->steps,
			       i == c->winner ? "  <- winner" : i == c->runner_up ? "  <- runner-up" : "");
	}
	printf("  %s\n", reason);
}

/* --links: one line per (step, node, port) a message occupies. */
static void print_link(void *arg, uint32_t step, int node, int port, const struct tc_msg *m)
{
	(void)arg;
	printf("  step %u: link (node %d, port %d) carries %u blocks of %d -> %d\n", step, node, port, m->nblk, m->src,
	       m->dst);
}

/* --dump: one line per message. */
static void dump_text(const struct tc_sched *s)
{
	for (uint32_t st = 0; st < s->nsteps; st++) {
		printf("step %u:\n", st);
		for (uint32_t i = s->step_first[st]; i < s->step_first[st + 1]; i++) {
			const struct tc_msg *m = &s->msgs[i];

			printf("  %d -> %d route (", m->src, m->dst);
			for (int d = 0; d < s->shape.ndims; d++)
				printf("%s%+d", d ? "," : "", m->route[d]);
			printf(") blocks");
			for (uint32_t k = 0; k < m->nblk; k++)
				printf(" {%d,%d}", s->blks[m->blk_off + k].a, s->blks[m->blk_off + k].b);
			printf("\n");
		}
	}
}

void sched_print_text(const struct sched_opts *o, const struct sched_result *r)
{
	const struct tc_sched *s = r->s;
	const struct tc_cost *c = &r->cost;
	const struct tc_cost_params *p = &o->p;

	printf("%s %s on %s (%d nodes): %s\n", tc_coll_str(s->coll), r->algo->name, r->shape_str, r->shape.nodes,
	       s->cite);
	if (r->translated)
		printf("  steps %u, messages %llu, startups on the critical path %u\n", s->nsteps,
		       (unsigned long long)r->sym.msgs, c->steps);
	else
		printf("  steps %u, messages %u, startups on the critical path %u\n", s->nsteps, s->nmsgs, c->steps);
	printf("  transmission %.6g blocks (lockstep %.6g), lower bound %.6g, ratio %.3f\n", c->transmission_blocks,
	       c->lockstep_blocks, c->lower_bound_blocks, c->ratio);
	if (s->coll == TC_ALLGATHER)
		printf("  lower bound on steps %.6g, packets per node %d\n", c->lower_bound_steps, s->npackets);
	printf("  max link blocks %lld, rearranged blocks %lld\n", (long long)c->max_link_blocks,
	       (long long)c->rearranged_blocks);
	if (o->priced)
		printf("  predicted time %.6g us (ts %g us, tw %g us/B, rho %g us/B, hop %g us, m %zu B)\n", c->time_us,
		       p->ts_us, p->tw_us_per_byte, p->rho_us_per_byte, p->hop_us, p->block_bytes);
	if (o->explain)
		sched_explain_text(&r->choice);
	if (r->translated)
		printf("  verified: %s%s%s (translation invariant: the blocks of a cell of %d sources, %llu block moves,\n"
		       "  and the whole schedule's %llu messages; built, verified and priced in %.3f ms)\n",
		       r->rep.ok ? "yes" : "NO", r->rep.ok ? "" : ": ", r->rep.first_violation, r->sym.cell_nodes,
		       (unsigned long long)r->sym.cell_blks, (unsigned long long)r->sym.msgs, r->t_verify * 1e3);
	else
		printf("  verified: %s%s%s (build %.3f ms, verify %.3f ms)\n", r->rep.ok ? "yes" : "NO",
		       r->rep.ok ? "" : ": ", r->rep.first_violation, r->t_build * 1e3, r->t_verify * 1e3);
	if (o->run) {
		if (r->bad < 0)
			printf("  run: FAILED: %s\n", r->run_why);
		else
			printf("  run: %zu bytes checked, %ld wrong (block %zu B)\n", r->checked, r->bad, p->block_bytes);
	}
	if (o->links)
		tc_sched_visit_links(s, print_link, NULL);
	if (o->dump)
		dump_text(s);
}
