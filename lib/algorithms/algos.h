/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The algorithms: every descriptor (each defined in the file named after it,
 * algorithms/alltoall/ or algorithms/allgather/) and the registry.
 */
#ifndef TC_ALGOS_H
#define TC_ALGOS_H

#include "core/sched.h"

extern const struct tc_algo tc_algo_ar; /* alltoall/ar.c */
extern const struct tc_algo tc_algo_at2; /* alltoall/at2.c */
extern const struct tc_algo tc_algo_pad; /* alltoall/pad.c */
extern const struct tc_algo tc_algo_opt2d; /* alltoall/opt2d.c */
extern const struct tc_algo tc_algo_allport_kd; /* alltoall/allport_kd.c */
extern const struct tc_algo tc_algo_ar1; /* alltoall/ar1.c */
extern const struct tc_algo tc_algo_at2_1p; /* alltoall/at2_1p.c */
extern const struct tc_algo tc_algo_pt4; /* alltoall/pt4.c */
extern const struct tc_algo tc_algo_mt3; /* alltoall/mt3.c */
extern const struct tc_algo tc_algo_mtk; /* alltoall/mtk.c */
extern const struct tc_algo tc_algo_atape; /* alltoall/atape.c */
extern const struct tc_algo tc_algo_pairwise; /* alltoall/pairwise.c */
extern const struct tc_algo tc_algo_bruck_a2a; /* alltoall/bruck.c */
extern const struct tc_algo tc_algo_direct; /* alltoall/direct.c */
extern const struct tc_algo tc_algo_bcast_pattern; /* allgather/bcast_pattern.c */
extern const struct tc_algo tc_algo_gossip_ham2; /* allgather/gossip_ham2.c */
extern const struct tc_algo tc_algo_gossip_ham1; /* allgather/gossip_ham1.c */
extern const struct tc_algo tc_algo_ring_ag; /* allgather/ring.c */
extern const struct tc_algo tc_algo_saad_schultz; /* allgather/saad_schultz.c */
extern const struct tc_algo tc_algo_calvin; /* allgather/calvin.c */
extern const struct tc_algo tc_algo_bruck_ag; /* allgather/bruck.c */

/* alltoall/ar.c: the AR schedule on a wrapping ring of even length (opt2d uses it for even rings). */
int tc_ar_build_ring(const struct tc_shape *shape, struct tc_sched **out, const char **why);

/*
 * alltoall/allport_kd.c, test hooks: how many times the orders came from the
 * search, not the construction; and the lock-step cost of the orders chosen
 * on shape without building the schedule (search 0: the construction's,
 * whatever it costs), with the construction's cost.
 */
unsigned long __tc_kd_searches(void);
int __tc_kd_cost(const struct tc_shape *shape, int search, int64_t *cost, int64_t *constructed);

/* registry.c: every algorithm, NULL-terminated, and lookup by name. */
extern const struct tc_algo *const tc_algos[];
const struct tc_algo *tc_algo_find(enum tc_coll_id coll, const char *name);

#endif /* TC_ALGOS_H */
