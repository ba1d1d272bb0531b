/* SPDX-License-Identifier: GPL-2.0 */
/*
 * torus-sched's parts, one job per file:
 *   main.c     the flow: options, build, run, print, exit status
 *   options.c  the command line (usage text, parsing, checks between options)
 *   build.c    the shape, the algorithm (named or auto), build, verify, price
 *   run.c      --run: the schedule on the in-process simulator, bytes checked
 *   text.c     the summary as text (--dump, --links, --explain included)
 *   json.c     the summary as one JSON object
 *   node.c     --node: one node's part, built as a rank builds it
 */
#ifndef TORUS_SCHED_H
#define TORUS_SCHED_H

#include <stddef.h>

#include "core/check.h"
#include "core/part_sym.h"
#include "core/sim_run.h"
#include "select/select.h"

#define PROG "torus-sched"
#include "../tool.h"

/* What the command line asks for (options.c). */
struct sched_opts {
	int coll;		/* enum tc_coll_id, or -1 before a default is taken */
	const char *algo_name;	/* --algo, "auto" included */
	const char *dims, *wrap;
	int mesh, one_port;
	int json, dump, links, explain, run, list;
	int node;		/* --node: only this node's part; -1: the whole schedule */
	int priced;		/* a cost parameter was given (or auto filled them in) */
	struct tc_cost_params p; /* p.block_bytes is --m */
	unsigned int flags;	/* TC_COST_* of --pricing */
};

/* What build.c made of it, and what run.c found. */
struct sched_result {
	struct tc_shape shape;
	char shape_str[96];
	const struct tc_algo *algo;
	struct tc_auto_choice choice; /* --algo auto only */
	double t_choose;	      /* --algo auto: process CPU seconds of the choice */
	unsigned long whole_choose;   /* --algo auto: whole schedules the choice built */
	struct tc_sched *s;
	struct tc_verify_report rep;
	struct tc_cost cost;
	double t_build, t_verify; /* process CPU seconds */
	/* verified and priced from a cell of sources (core/part_sym.h): s is a
	 * shell with no messages, these are the whole schedule's counts */
	int translated;
	struct tc_sym_totals sym;
	long bad;		  /* --run: wrong bytes, or -errno */
	size_t checked;		  /* --run: bytes compared */
	char run_why[200];	  /* --run: why it could not run (bad < 0) */
};

/* options.c */
void sched_parse_options(int argc, char **argv, struct sched_opts *o);

/* build.c */
void sched_shape(const struct sched_opts *o, struct sched_result *r);
void sched_choose(struct sched_opts *o, struct sched_result *r);
void sched_build(const struct sched_opts *o, struct sched_result *r);

/* run.c */
long sched_run_sim(const struct tc_sched *s, size_t m, size_t *checked, char *why, size_t len);

/* text.c */
void sched_list_algos(int coll);
void sched_print_text(const struct sched_opts *o, const struct sched_result *r);
void sched_explain_text(const struct tc_auto_choice *c);

/* json.c */
void sched_json_str(const char *s);
void sched_print_json(const struct sched_opts *o, const struct sched_result *r);
void sched_explain_json(const struct tc_auto_choice *c);
void sched_print_json_nochoice(const struct sched_opts *o, const struct sched_result *r);

/* node.c: --node; returns the exit status */
int sched_node(const struct sched_opts *o, const struct sched_result *r);

#endif /* TORUS_SCHED_H */
