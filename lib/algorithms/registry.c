// SPDX-License-Identifier: LGPL-2.1-or-later
/* The table of every algorithm, and lookup by collective and name. */
#include <string.h>

#include "algorithms/algos.h"

const struct tc_algo *const tc_algos[] = {
	&tc_algo_ar,
	&tc_algo_at2,
	&tc_algo_pad,
	&tc_algo_opt2d,
	&tc_algo_allport_kd,
	&tc_algo_ar1,
	&tc_algo_at2_1p,
	&tc_algo_pt4,
	&tc_algo_mt3,
	&tc_algo_mtk,
	&tc_algo_atape,
	&tc_algo_pairwise,
	&tc_algo_bruck_a2a,
	&tc_algo_direct,
	&tc_algo_bcast_pattern,
	&tc_algo_gossip_ham2,
	&tc_algo_gossip_ham1,
	&tc_algo_ring_ag,
	&tc_algo_saad_schultz,
	&tc_algo_calvin,
	&tc_algo_bruck_ag,
	NULL,
};

const struct tc_algo *tc_algo_find(enum tc_coll_id coll, const char *name)
{
	for (int i = 0; tc_algos[i]; i++)
		if (tc_algos[i]->coll == coll && !strcmp(tc_algos[i]->name, name))
			return tc_algos[i];
	return NULL;
}
