/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Time-independent gossip on (partial) Hamiltonian cycles (Meyer and
 * Sibeyn, "Gossiping Large Packets on Full-Port Tori", Sections 2 and 3):
 * the engine (engine/gossip.c) shared by gossip-ham2 (allgather/gossip_ham2.c)
 * and gossip-ham1 (allgather/gossip_ham1.c, allgather/gossip_ham1_kd.c).
 *
 * An algorithm gives a per-node rule: a packet entering node through port
 * in_port leaves through rule(node, in_port), or the port is not on a cycle
 * (-1). The engine traces the cycles the rule makes, binds every node that a
 * cycle misses (an out-of-cycle PU) to two neighbouring on-cycle PUs whose
 * free links feed it, and then runs the rules step by step to produce the
 * schedule: every node injects its packet(s) in both directions of a cycle
 * through it, every node forwards what it receives as the rule says, a packet
 * stops when it has covered its half of the cycle.
 */
#ifndef TC_ALLGATHER_GOSSIP_H
#define TC_ALLGATHER_GOSSIP_H

#include <pthread.h>

#include "core/part.h"
#include "core/sched.h"

typedef int (*tc_gossip_rule_fn)(const void *ctx, int node, int in_port);

struct tc_gossip_spec {
	const char *algo;
	const char *cite;
	int npackets;	/* 1: each packet on one cycle; = ncycles: packet p on cycle p */
	int want_cycles; /* the number of cycles the rule must make */
	tc_gossip_rule_fn rule;
	const void *ctx;
	/*
	 * Optional relay segments: nseg paths, each written { m, N_0, ..., N_m }
	 * in seg[]: N_0 and N_m lie on one cycle, N_1..N_{m-1} do not and are
	 * fed that cycle's packets along the path. N_0's chosen packets run
	 * N_0 -> N_1 -> ... -> N_{m-1}, N_m's the other way to N_1; every inner
	 * PU keeps what it receives and forwards it on (a fixed in-port ->
	 * out-port relay table, the same for every packet). The engine picks
	 * which end passes which packet and whether that end holds it one step
	 * first (forward/backward switching, as for two one-hop feeders). (node, cycle) pairs no segment covers are bound
	 * to one-hop feeders as before.
	 */
	const int *seg;
	int nseg;
	/*
	 * Optional, npackets = 1: the cycle a PU on several cycles injects its
	 * packet into, as a port that cycle leaves it through (-1: the first
	 * cycle traced through it, the default).
	 */
	int (*inject)(const void *ctx, int node);
};

/* Filled by __tc_gossip_build when not NULL (for tests and reports). */
struct tc_gossip_info {
	int ncycles;
	int cycle_len[2 * TC_MAX_DIMS];
	int ooc_nodes;	    /* (node, cycle) pairs fed by neighbours */
	int handoffs;	    /* packets an out-of-cycle origin hands to a neighbour */
	int max_msg_blocks; /* most blocks in one message */
	int segments;	    /* relay segments used (spec->seg) */
	int seg_extra;	    /* most steps a segment's deadline exceeds max cycle length / 2 + 1 */
};

int __tc_gossip_build(const struct tc_shape *shape, const struct tc_gossip_spec *spec, struct tc_sched **out,
		      const char **why, struct tc_gossip_info *info);

/*
 * One node's part without the whole run. __tc_gossip_prepare checks the
 * rule, traces the cycles, injects the packets and binds the feeds and
 * relay segments as __tc_gossip_build does (the same errors where it would
 * refuse the spec), never runs, and keeps only O(P) of it; it also works
 * out, once, the passes of every feeding group (O(P) memory, O(P) time
 * each) for the run's step count. __tc_gossip_part then makes p's node's
 * part from the cycles in closed form and the passes of the few groups the
 * node feeds, is fed by or relays for (kept in a small cache), as the whole
 * run would make it; TC_PART_WHOLE where a packet would be handed off or
 * would queue for a link (the part is then cut from the whole schedule).
 * The prepared state is read-only but for its locked cache: one per shape
 * may serve every thread. The spec's rule, ctx and inject are not kept.
 */
struct tc_gossip_prep;
int __tc_gossip_prepare(const struct tc_shape *shape, const struct tc_gossip_spec *spec, struct tc_gossip_prep **out,
			const char **why);
int __tc_gossip_part(struct tc_gossip_prep *x, struct tc_part *p, const char **why);
void __tc_gossip_prep_free(struct tc_gossip_prep *x);

/*
 * A construction's prepared state kept once per shape, for the life of the
 * process (an algorithm file holds one, TC_GOSSIP_PREP_CACHE_INIT).
 * __tc_gossip_part_cached finds p's shape in it or calls prepare under the
 * cache's lock (an answer other than -ENOMEM, refusals and TC_PART_WHOLE
 * included, is kept with its *why, which must be static), then makes p's
 * part from it. oom_why: *why when there is no memory for an entry.
 */
struct tc_gossip_prep_entry;
struct tc_gossip_prep_cache {
	pthread_mutex_t lock;
	struct tc_gossip_prep_entry *head; /* protected by lock; entries never freed or changed */
};
#define TC_GOSSIP_PREP_CACHE_INIT { PTHREAD_MUTEX_INITIALIZER, NULL }
typedef int (*tc_gossip_prepare_fn)(const struct tc_shape *shape, struct tc_gossip_prep **prep, const char **why);
int __tc_gossip_part_cached(struct tc_gossip_prep_cache *c, tc_gossip_prepare_fn prepare, struct tc_part *p,
			    const char *oom_why, const char **why);

/* Where a construction goes once its spec is chosen: built whole (out, info) or prepared for parts (prep). */
struct tc_gossip_run {
	struct tc_sched **out;
	struct tc_gossip_info *info;
	struct tc_gossip_prep **prep;
};
int __tc_gossip_run(const struct tc_shape *shape, const struct tc_gossip_spec *spec, const struct tc_gossip_run *r,
		    const char **why);

/*
 * A lower bound on the steps some PU sends in (struct tc_algo.send_steps),
 * from the rule's cycles and where the packets enter them, nothing run:
 * 0 with *steps, or -errno (*steps 0) where the rule does not make the
 * cycles the construction has. O(N).
 */
int __tc_gossip_send_steps(const struct tc_shape *shape, const struct tc_gossip_spec *spec, uint64_t *steps);

/* gossip-ham1 on a d-D torus, d >= 3 (allgather/gossip_ham1_kd.c); the
 * caller has checked the shape is an all-port torus with sides >= 3; built
 * whole or prepared for parts as r says (__tc_gossip_run). */
int __tc_gossip_ham1_kd_run(const struct tc_shape *shape, const struct tc_gossip_run *r, const char **why);
/* The same with the engine's report (tests). */
int __tc_gossip_ham1_kd_info(const struct tc_shape *shape, struct tc_sched **out, const char **why,
			     struct tc_gossip_info *info);

/* gossip-ham1 on a 3D torus with one reactor walk forced (tests): paper
 * dimension e on physical dimension perm[e - 1], kpc plane changes per
 * gcd(n2, n3)/3 laps (0: the paper's laps); -EINVAL for a bad perm or kpc. */
int __tc_gossip_ham1_3d_walk(const struct tc_shape *shape, const int *perm, int kpc, struct tc_sched **out,
			     const char **why, struct tc_gossip_info *info);

/* gossip-ham1's last resort on a 2D torus where its partial cycles do not
 * close (both sides odd, e.g. 5 x 15; allgather/gossip_ham1.c): one packet per
 * PU on the two full Hamiltonian cycles of engine/ham_decomp.h (the ones
 * gossip-ham2 uses), PU (i, j) injecting into cycle (i + j) & 1. About N/2
 * steps, not Theorem 2's N/4 + n1/2 + 1. */
int __tc_gossip_ham1_full_cycles(const struct tc_shape *shape, struct tc_sched **out, const char **why);

/* gossip-ham2 with the paper's partial cycles for one odd side (tests;
 * allgather/gossip_ham2.c). */
int __tc_gossip_ham2_partial(const struct tc_shape *shape, struct tc_sched **out, const char **why);

#endif /* TC_ALLGATHER_GOSSIP_H */
