// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The price of a whole schedule from the parts of one cell of nodes
 * (core/part_price.h).
 *
 * The cost model (core/cost.c) reads of a message its step, ends, route and
 * number of blocks, never which blocks. If every node sends, step by step,
 * what the node of its translation class in the cell {x : x_d < mod[d]}
 * sends, translated (the same routes and block counts: saad-schultz's
 * per-node rule, the broadcast pattern's offsets with its ties chosen by
 * parity), the whole schedule's messages are known from the cell's parts:
 * |C| parts, each its node's own traffic, then for every step the P nodes'
 * sends, translated, without blocks. The model then sees what it would see
 * of the whole schedule, in time proportional to the messages and in memory
 * one step's messages, never the P * (P - 1) block moves.
 *
 * The order in which the model is handed a step's messages matters where
 * messages share a link (it serves a link in message order), so only
 * schedules that claim contention-free steps are priced here; and where a
 * port serves a node's messages one after another (TC_COST_DIRECT), so the
 * nodes are taken in order and each node's sends by first-hop port, the
 * order in which the builders of these algorithms add them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/part.h"
#include "core/part_price.h"
#include "core/part_sym.h"

static int price_eff_mod(const struct tc_algo *algo, const struct tc_shape *sh, int *mod)
{
	int cell = 1, per[TC_MAX_DIMS];

	if (algo->price_period)
		algo->price_period(sh, per);
	for (int d = 0; d < sh->ndims; d++) {
		int m = algo->price_period ? per[d] : algo->price_mod[d];

		mod[d] = ((sh->wrap_mask >> d) & 1) && m >= 1 && !(sh->dims[d] % m) ? m : sh->dims[d];
		cell *= mod[d];
	}
	return cell;
}

int tc_algo_priced_from_parts(const struct tc_algo *algo, const struct tc_shape *sh)
{
	int mod[TC_MAX_DIMS];

	return algo->price_mod[0] && algo->part && 4 * price_eff_mod(algo, sh, mod) <= sh->nodes;
}

/* The port a message leaves its sender by: its route's first dimension and sign. */
static int price_port(const struct tc_msg *m)
{
	for (int d = 0; d < TC_MAX_DIMS; d++)
		if (m->route[d])
			return 2 * d + (m->route[d] < 0);
	return 2 * TC_MAX_DIMS;
}

int tc_sched_price_parts(const struct tc_algo *algo, const struct tc_shape *shape, const struct tc_cost_params *p,
			 const size_t *sizes, int nsizes, double *time_us, struct tc_cost *cost,
			 struct tc_price_totals *tot, const char **why)
{
	int mod[TC_MAX_DIMS], ncell, err = 0;
	struct tc_part **parts = NULL;
	uint32_t *ai = NULL, *at = NULL, *nat = NULL; /* per cell node: active step, its sends */
	uint32_t *ord = NULL, maxs = 0;		      /* per cell node: its sends, ordered (maxs a row) */
	int *cellnode = NULL; /* node of cell index */
	int *cls = NULL;      /* cell index of a node, -1 outside the cell */
	struct tc_sched *shell = NULL;
	struct tc_cost_state *c = NULL;
	struct tc_msg *msgs = NULL;
	uint32_t mcap = 0, nsteps = 0;

	memset(tot, 0, sizeof(*tot));
	if (!algo->price_mod[0] || !algo->part) {
		*why = "the algorithm is not priced from its parts";
		return -EINVAL;
	}
	ncell = price_eff_mod(algo, shape, mod);
	parts = calloc(ncell, sizeof(*parts));
	ai = calloc(ncell, sizeof(*ai));
	at = calloc(ncell, sizeof(*at));
	nat = calloc(ncell, sizeof(*nat));
	cellnode = malloc(ncell * sizeof(*cellnode));
	cls = malloc((size_t)shape->nodes * sizeof(*cls));
	if (!parts || !ai || !at || !nat || !cellnode || !cls) {
		err = -ENOMEM;
		goto out_oom;
	}
	/* the cell's parts */
	for (int x = 0, k = 0; x < shape->nodes; x++) {
		int g[TC_MAX_DIMS];

		cls[x] = tc_sym_rep(shape, mod, x, g) == x ? k++ : -1;
		if (cls[x] < 0)
			continue;
		cellnode[cls[x]] = x;
		parts[cls[x]] = tc_part_new(shape, algo->coll, algo->name, NULL, 0, x);
		if (!parts[cls[x]]) {
			err = -ENOMEM;
			goto out_oom;
		}
		err = algo->part(parts[cls[x]], why);
		if (err == TC_PART_WHOLE) {
			*why = "the part generator leaves this shape to the whole schedule";
			err = -EOPNOTSUPP;
		}
		if (err)
			goto out;
		if (!(parts[cls[x]]->claims & TC_CLAIM_CONTENTION_FREE)) {
			*why = "not priced from parts: the schedule's messages share links, and the price depends on their order";
			err = -EOPNOTSUPP;
			goto out;
		}
		nsteps = parts[cls[x]]->nsteps;
	}
	shell = tc_sched_new(shape, algo->coll, algo->name, parts[0]->cite, parts[0]->claims);
	if (!shell) {
		err = -ENOMEM;
		goto out_oom;
	}
	shell->npackets = parts[0]->npackets;
	err = tc_cost_begin(shell, p, sizes, nsizes, &c);
	if (err)
		goto out;
	for (uint32_t st = 0; st < nsteps && !err; st++) {
		struct tc_step_view view = { .step = st };
		uint32_t nm = 0, per = 0;

		/* the cell's sends in step st: parts[k]'s messages at[k] .. at[k] + nat[k] */
		for (int k = 0; k < ncell; k++) {
			const struct tc_part *q = parts[k];

			nat[k] = 0;
			while (ai[k] < q->nact && q->act_step[ai[k]] < st)
				ai[k]++;
			if (ai[k] == q->nact || q->act_step[ai[k]] != st)
				continue;
			at[k] = q->act_first[ai[k]];
			while (at[k] + nat[k] < q->act_first[ai[k] + 1] && q->msgs[at[k] + nat[k]].src == q->node)
				nat[k]++;
			if (nat[k] > maxs) {
				uint32_t *o = realloc(ord, (size_t)ncell * nat[k] * sizeof(*ord));

				if (!o) {
					err = -ENOMEM;
					break;
				}
				ord = o;
				maxs = nat[k];
				k = -1; /* the rows moved: start the step again */
				per = 0;
				continue;
			}
			/* by first-hop port, stable: the order the builders add a node's sends in */
			for (uint32_t i = 0; i < nat[k]; i++) {
				uint32_t j = i, x = at[k] + i;

				while (j && price_port(&q->msgs[ord[k * maxs + j - 1]]) > price_port(&q->msgs[x])) {
					ord[k * maxs + j] = ord[k * maxs + j - 1];
					j--;
				}
				ord[k * maxs + j] = x;
			}
			per += nat[k];
		}
		if (err || !per)
			continue;
		if (tc_grow((void **)&msgs, &mcap, (uint32_t)((uint64_t)per * shape->nodes / ncell + 1), sizeof(*msgs),
			    1024)) {
			err = -ENOMEM;
			break;
		}
		for (int x = 0; x < shape->nodes; x++) {
			int g[TC_MAX_DIMS], k = cls[tc_sym_rep(shape, mod, x, g)];

			for (uint32_t i = 0; i < nat[k]; i++) {
				const struct tc_msg *r = &parts[k]->msgs[ord[k * maxs + i]];

				tc_sym_msg_translate(shape, g, x, st, r->dst, r->route, r->nblk, r->op, &msgs[nm++]);
				tot->blks += r->nblk;
			}
		}
		tot->msgs += nm;
		tot->steps++;
		view.nmsgs = nm;
		view.msgs = msgs;
		view.blks = NULL;
		err = tc_cost_step(c, &view);
	}
	if (err) {
		if (err == -ENOMEM)
			goto out_oom;
		*why = "pricing the whole schedule's messages failed";
		goto out;
	}
	err = tc_cost_end(c, shell, time_us, cost);
	c = NULL;
	tot->cell_nodes = ncell;
	if (err)
		*why = "pricing the whole schedule's messages failed";
	goto out;
out_oom:
	*why = "out of memory pricing from the cell's parts";
out:
	if (c)
		tc_cost_end(c, NULL, NULL, NULL);
	tc_sched_free(shell);
	for (int k = 0; parts && k < ncell; k++)
		tc_part_free(parts[k]);
	free(parts);
	free(ai);
	free(at);
	free(nat);
	free(ord);
	free(cellnode);
	free(cls);
	free(msgs);
	return err;
}

int tc_part_price(const struct tc_part *part, const struct tc_cost_params *p, double *time_us,
		  struct tc_cost *cost)
{
	struct tc_sched *shell;
	struct tc_cost_state *c = NULL;
	int err;

	if (!part || !p || !time_us || !cost || !part->act_first)
		return tc_err(-EINVAL, "tc_part_price: no finished part, parameters or output");
	shell = tc_sched_new(&part->shape, part->coll, part->algo, part->cite, part->claims);
	if (!shell)
		return tc_err(-ENOMEM, "%s: out of memory pricing node %d's part", part->algo, part->node);
	shell->npackets = part->npackets;
	err = tc_cost_begin(shell, p, &p->block_bytes, 1, &c);
	for (uint32_t i = 0; !err && i < part->nact; i++) {
		struct tc_step_view v = {
			.step = part->act_step[i],
			.nmsgs = part->act_first[i + 1] - part->act_first[i],
			.msgs = &part->msgs[part->act_first[i]],
			.blks = part->blks,
		};

		err = tc_cost_step(c, &v);
	}
	if (!err) {
		err = tc_cost_end(c, shell, time_us, cost);
	} else if (c) {
		tc_cost_end(c, NULL, NULL, NULL);
	}
	tc_sched_free(shell);
	return err;
}
