/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every algorithm's descriptor; each is defined in the file named after it. */
#ifndef TC_ALGOS_H
#define TC_ALGOS_H

#include "sched.h"

extern const struct tc_algo tc_algo_ar; /* alltoall_ar.c */
extern const struct tc_algo tc_algo_at2; /* alltoall_at2.c */
extern const struct tc_algo tc_algo_pad; /* alltoall_pad.c */
extern const struct tc_algo tc_algo_opt2d; /* alltoall_opt2d.c */
extern const struct tc_algo tc_algo_allport_kd; /* alltoall_allport_kd.c */
extern const struct tc_algo tc_algo_ar1; /* alltoall_ar1.c */
extern const struct tc_algo tc_algo_at2_1p; /* alltoall_at2_1p.c */
extern const struct tc_algo tc_algo_pt4; /* alltoall_pt4.c */
extern const struct tc_algo tc_algo_mt3; /* alltoall_mt3.c */
extern const struct tc_algo tc_algo_mtk; /* alltoall_mtk.c */
extern const struct tc_algo tc_algo_atape; /* alltoall_atape.c */
extern const struct tc_algo tc_algo_pairwise; /* alltoall_pairwise.c */
extern const struct tc_algo tc_algo_bruck_a2a; /* alltoall_bruck.c */
extern const struct tc_algo tc_algo_direct; /* alltoall_direct.c */
extern const struct tc_algo tc_algo_bcast_pattern; /* allgather_bcast_pattern.c */
extern const struct tc_algo tc_algo_gossip_ham2; /* allgather_gossip_ham2.c */
extern const struct tc_algo tc_algo_gossip_ham1; /* allgather_gossip_ham1.c */
extern const struct tc_algo tc_algo_ring_ag; /* allgather_ring.c */
extern const struct tc_algo tc_algo_saad_schultz; /* allgather_saad_schultz.c */
extern const struct tc_algo tc_algo_bruck_ag; /* allgather_bruck.c */

#endif /* TC_ALGOS_H */
