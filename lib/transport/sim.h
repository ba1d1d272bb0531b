/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulated fabric (tc_sim_t): shared by the sim transport
 * (transport/sim.c), which moves the bytes, and the public tc_sim_create /
 * tc_sim_launch / tc_sim_destroy (api/sim.c), which make and run it.
 */
#ifndef TC_TRANSPORT_SIM_H
#define TC_TRANSPORT_SIM_H

#include <pthread.h>
#include <stdatomic.h>

#include "transport/transport.h"

struct tc_sim_rec {
	uint8_t op;	/* TC_XFER_* */
	uint8_t done;
	uint8_t port;	/* arrival port at the receiver */
	uint8_t first;	/* send: first-hop port (for reports) */
	uint8_t claimed; /* matched (a copy is in flight or done) or withdrawn */
	int32_t peer;	/* send: destination; recv: source */
	int32_t status;
	uint32_t seg0, nsegs; /* into the owner's seg pool */
	uint64_t tag;
	uint64_t bytes;
};

struct tc_sim_ref {
	int32_t node;
	uint32_t rec;
};

struct tc_sim_node {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	atomic_uint busy; /* copies in flight touching this node's records */
	/* everything below: protected by mu */
	int bound;
	char *buf;
	size_t buf_bytes;
	struct tc_sim_rec *recs;
	uint32_t nrecs, cap_recs;
	struct tc_seg *segs;
	uint32_t nsegs, cap_segs;
	uint32_t ndone;	      /* completions not yet reaped by wait */
	uint32_t outstanding; /* posted, not complete */
	struct tc_sim_ref *pend; /* unmatched sends addressed to this node */
	uint32_t npend, cap_pend;
};

struct tc_sim {
	struct tc_shape shape;
	pthread_mutex_t lock; /* protects running */
	int running;	      /* inside tc_sim_launch */
	/*
	 * Set once by tc_sim_create (TC_SIM_MATCH=device): a receive matches a
	 * send by (arrival port, tag) alone, as torus.ko matches, not also by
	 * source; the tests run so to catch tags that only the source kept apart.
	 */
	int match_port_tag;
	struct tc_sim_node *nodes;
};

#endif /* TC_TRANSPORT_SIM_H */
