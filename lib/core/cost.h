/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef TC_COST_H
#define TC_COST_H

#include "core/sched.h"

/* The cost model (core/cost.c) */
struct tc_cost_params {
	double ts_us, tw_us_per_byte, rho_us_per_byte;
	size_t block_bytes; /* m */
	double hop_us;	    /* per link a message crosses (the device's hop_ns); 0 = none */
	unsigned int flags; /* TC_COST_*: how the transport runs a message */
	double lat_us;	    /* TC_COST_DIRECT: latency per message after its ports are free */
	double rdv_us;	    /* TC_COST_DIRECT: more latency for a message above eager_bytes */
	size_t eager_bytes;
	double msg_us;	    /* TC_COST_HOST: times log2 of a step's messages at its busiest node */
	double tw_big_us_per_byte; /* per byte of a message beyond big_bytes */
	size_t big_bytes;	   /* 0: every byte costs tw */
	double ts_cap;		   /* TC_COST_DIRECT: a port pays ts for at most this many of a
				    * step's messages; 0: for all */
};
/*
 * How a transport runs the messages of a schedule (tc_cost_params.flags);
 * 0 is a network of routers that starts a message once both ends are ready.
 * TC_COST_DIRECT: no routers (verbs: one RDMA operation from source to
 *   destination whatever the torus route). A message costs one startup and
 *   its bytes, nothing per hop, and holds no torus link; instead each node's
 *   network port serves its sends, and its receives, ts + bytes*tw each,
 *   all of a step's at once: a message ends when its sender's and its
 *   receiver's ports have done the step's work;
 *   lat_us more after that is the message's latency, which holds no port
 *   (a step's messages overlap theirs, dependent steps add them up); a
 *   message of more than eager_bytes adds rdv_us to that latency (verbs:
 *   the rendezvous's ready-to-receive, one more trip before the data).
 *   With big_bytes set, the bytes of a message beyond big_bytes cost
 *   tw_big each instead of tw (verbs: the probe's rate for messages
 *   larger than its LARGE step, tc_cost_fit_big). With ts_cap > 0 a port
 *   pays ts for its first ts_cap messages of a step only (a fraction of
 *   ts for the one that crosses it), their bytes for all: verbs on a host
 *   with fewer cores than ranks, where a step with many peers costs about
 *   one round of scheduling every rank however many more it has
 *   (tc_cost_fit_fan).
 * TC_COST_SENDER_START: a message starts at its sender's clock (and its
 *   route's links), not at the later of both ends' clocks: the device's
 *   timing model (kmod/counters.c), where a receiver's clock never holds a
 *   message back.
 * TC_COST_HOST: the wall clock of the host that emulates the fabric
 *   (TC_CLOCK_WALL, colls/probe.c): the device's engines copy a message
 *   once from its source to its destination whatever its route, and every
 *   node waits for its step before the next, so a step costs ts (waking
 *   every node's process once), msg_us times log2 of the sends and
 *   receives of the node with the most in it (it waits for the last of its
 *   peers, and the latest of k delays grows as log k), and tw per byte of
 *   all its messages together (the host's CPUs share the copies); the time
 *   column is the sum over the steps that have messages. hop is not charged; the other columns
 *   (blocks, startups) stay the critical path.
 * One-port shapes (either way) serialize each node's sends and its receives
 * too, as the device's one-port engines do.
 */
#define TC_COST_DIRECT (1u << 0)
#define TC_COST_SENDER_START (1u << 1)
#define TC_COST_HOST (1u << 2)
/*
 * The module's default timing (kmod/torus_param.h TORUS_DEFAULT_TS_NS,
 * TORUS_DEFAULT_TW_PS, TORUS_DEFAULT_HOP_NS): what the library prices with
 * when a transport has no timing of its own (the simulator). The device
 * charges no time for rearranging blocks, so rho is 0.
 */
#define TC_COST_DEFAULT_TS_US 1.0
#define TC_COST_DEFAULT_TW_US_PER_BYTE 0.0001
#define TC_COST_DEFAULT_HOP_US 0.02
#define TC_COST_DEFAULT_RHO_US_PER_BYTE 0.0
void tc_cost_params_default(struct tc_cost_params *p);
/*
 * TC_COST_DIRECT's ts, lat, tw and rdv (into p; eager_bytes read, the rest
 * kept) from step times measured with every node busy: c[i] the time per
 * step of a chain of dependent steps of one message each way of len[i]
 * bytes (len[0] eager, len[1] above p->eager_bytes, len[2] > len[1]), bk a
 * step of k messages of len[0] each way. Per the model, c[i] = ts + lat +
 * len[i]*tw (+ rdv above eager) and bk = k*(ts + len[0]*tw) + lat, so
 *   tw = (c[2] - c[1]) / (len[2] - len[1])
 *   ts = (bk - c[0]) / (k - 1) - len[0]*tw
 *   lat = c[0] - ts - len[0]*tw      (k < 2: no split, ts = c[0] - len[0]*tw, lat 0)
 *   rdv = c[1] - c[0] - (len[1] - len[0])*tw   (0 unless len[0] <= eager < len[1])
 * each clipped at 0 (a noisy measurement never prices below nothing).
 */
void tc_cost_fit_direct(const double c[3], const size_t len[3], double bk, int k, struct tc_cost_params *p);
/*
 * The rate beyond the chain's largest size: c_big the time per step of the
 * same chain at len_big > len_l, c_l at len_l (the fit's c[2], len[2]):
 *   tw_big = (c_big - c_l) / (len_big - len_l), big_bytes = len_l
 * so a message is priced on the line through both measured steps and, above
 * len_big, on its extension. A slope that is not positive (noise) keeps
 * every byte at tw (big_bytes 0).
 */
void tc_cost_fit_big(double c_big, size_t len_big, double c_l, size_t len_l, struct tc_cost_params *p);
/*
 * ts_cap from b_all, a step of k_all > k messages of len0 each way (every
 * peer at once), after tc_cost_fit_direct: the model's k_all*(ts +
 * len0*tw) + lat, if b_all is below it, is met with ts paid k_all times
 * fewer:
 *   ts_cap = (b_all - lat - k_all*len0*tw) / ts, at least k (the fit's own
 *   burst was priced at k*ts) and below k_all,
 * else 0 (no cap: the port pays ts for every message, a NIC's message rate).
 */
void tc_cost_fit_fan(double b_all, int k_all, size_t len0, int k, struct tc_cost_params *p);
/* A message's bytes term: bytes*tw, the bytes beyond big_bytes at tw_big. */
double tc_cost_bytes_us(const struct tc_cost_params *p, double bytes);
struct tc_cost {
	uint32_t steps;		    /* startups on the longest chain */
	double transmission_blocks; /* critical path in blocks (packets count 1/npackets) */
	double lockstep_blocks;	    /* sum over steps of the largest message */
	int64_t max_link_blocks;
	int64_t rearranged_blocks;
	double lower_bound_blocks;  /* 0 when no bound is known for the collective */
	double ratio;		    /* transmission_blocks / lower_bound_blocks */
	double lower_bound_steps;   /* allgather: ceil((N-1)/(2k)) on all-port tori */
	double time_us;		    /* with params: critical path of ts + h*hop + b*m*tw, plus rho*m*rearranged */
};
int tc_cost_eval(const struct tc_sched *s, const struct tc_cost_params *p, struct tc_cost *out);
/*
 * The time of the schedule run as one program per node (the device with
 * TORUS_FEAT_PROGRAM: runtime/plan.c's dependencies, kmod/prog.c's virtual
 * time), in us with p's ts, tw, hop and block_bytes: no step barrier; a
 * message starts once the receives that brought its blocks to its sender
 * have ended, the sends of its sender's previous step on its first-hop port
 * (one-port: on any port) have ended, and the links of its route (one-port:
 * also its sender's send and its receiver's receive engine) are free; where
 * links are shared between nodes (no TC_CLAIM_ONE_HOP, or one-port), also
 * once every message its sender sent or received in the sender's previous
 * step (the last schedule step it took part in) has ended. Alltoall
 * and allgather; -EOPNOTSUPP for TC_COST_DIRECT or TC_COST_HOST.
 */
int tc_cost_prog(const struct tc_sched *s, const struct tc_cost_params *p, double *time_us);
/* The same for several block sizes in one pass (p->block_bytes ignored):
 * time_us[k] for sizes[k], k < nsizes <= 32; out->time_us is 0. */
int tc_cost_eval_sizes(const struct tc_sched *s, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		       double *time_us, struct tc_cost *out);
/*
 * The cost model one step at a time; tc_cost_eval() and tc_cost_eval_sizes()
 * are begin, a step per step, end. begin reads s's shape, coll and npackets
 * (p and sizes as tc_cost_eval_sizes; p may be NULL with nsizes 0); end
 * takes rearranged_blocks from s (the finished schedule, or the shell a
 * streamed build returns), fills time_us[k] and *out as
 * tc_cost_eval_sizes does, and frees the state. With out NULL, end only frees.
 */
struct tc_cost_state;
int tc_cost_begin(const struct tc_sched *s, const struct tc_cost_params *p, const size_t *sizes, int nsizes,
		  struct tc_cost_state **out);
int tc_cost_step(struct tc_cost_state *c, const struct tc_step_view *st);
/*
 * After begin: the steps handed over from here hold only the messages sent
 * by the nodes of one cell {x : x_d < mod[d]} of a schedule that commutes
 * with the torus translations by multiples of mod[] (mod[d] the whole side
 * where d does not wrap), each message standing for its translates from
 * every node of its sender's class. A node's and a link's state is its
 * cell node's, as it is in the whole schedule; end then gives what the
 * whole schedule would cost. Exact for schedules whose steps are
 * contention free (no link serves two messages of one step, so the order
 * the model takes them in does not matter); -EOPNOTSUPP where a node's
 * ports serve its messages in order (TC_COST_DIRECT, one-port), -EINVAL
 * for a period that does not divide its side. A message whose sender is
 * not a node of the cell is then -EINVAL in tc_cost_step.
 */
int tc_cost_cell(struct tc_cost_state *c, const int *mod);
int tc_cost_end(struct tc_cost_state *c, const struct tc_sched *s, double *time_us, struct tc_cost *out);
double tc_lower_bound_blocks(const struct tc_shape *shape, enum tc_coll_id coll);
/*
 * A lower bound on the time of any schedule in which some node sends in
 * steps distinct steps, each message carrying at least one of npackets
 * packets of m bytes' blocks (struct tc_algo.send_steps): every such step
 * costs that node at least ts and those bytes, in every model above (its
 * next message starts after its last ended; the host model sums its steps):
 * steps * (ts + m / npackets * min(tw, tw_big)).
 */
double tc_cost_send_steps_us(const struct tc_cost_params *p, uint64_t steps, int npackets, size_t m);

#endif /* TC_COST_H */
