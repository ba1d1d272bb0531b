/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef TC_SIM_RUN_H
#define TC_SIM_RUN_H

#include "core/sched.h"

/* Whole-fabric simulator (core/sim_run.c): runs every node of the schedule in
 * this process moving real bytes. For alltoall: send[n] holds nodes blocks of
 * block_bytes (MPI_Alltoall layout), recv[n] receives them. For allgather:
 * send[n] holds block_bytes, recv[n] nodes*block_bytes. Returns 0 or -errno. */
int tc_sim_run(const struct tc_sched *s, size_t block_bytes, void *const *send, void *const *recv);

#endif /* TC_SIM_RUN_H */
