/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libtoruscoll: collective operations on torus interconnects.
 *
 * Every function returns 0 (or a documented non-negative value) on success
 * and a negative errno on failure; tc_strerror() names it. Handles are opaque.
 *
 * A communicator binds the calling process (or thread, with the simulator)
 * to one node of a fabric through a transport:
 *   TC_TRANSPORT_DEV    the torus.ko node device /dev/torus<F>n<N>
 *   TC_TRANSPORT_SIM    the in-process simulator: every node is a thread of
 *                       this process (tc_sim_create / tc_sim_launch)
 *   TC_TRANSPORT_VERBS  RDMA verbs (reserved; not built yet)
 *
 * tc_comm_create(NULL, &comm) reads the environment:
 *   TC_TRANSPORT   dev | sim | verbs (default dev)
 *   TC_FABRIC      fabric id (default 0)
 *   TC_NODE        node index = rank (required for dev)
 *   TC_TIMEOUT_MS  how long a collective waits for one step (default 10000)
 *   TC_ALLTOALL_ALGO, TC_ALLGATHER_ALGO, ...  force an algorithm by name
 *                  (torus-sched --list shows the names); "auto" = library choice
 */
#ifndef TORUSCOLL_H
#define TORUSCOLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TC_MAX_DIMS 6

typedef struct tc_comm tc_comm_t;
typedef struct tc_sim tc_sim_t;

enum tc_transport {
	TC_TRANSPORT_DEV = 1,
	TC_TRANSPORT_SIM = 2,
	TC_TRANSPORT_VERBS = 3,
};

enum tc_port_model {
	TC_ALL_PORT = 0,
	TC_ONE_PORT = 1,
};

/**
 * struct tc_comm_attr - how to create a communicator
 * @size: sizeof(struct tc_comm_attr); lets the struct grow
 * @transport: enum tc_transport
 * @fabric_id: DEV: the fabric
 * @node: DEV: the node (= rank); SIM: set by tc_sim_launch
 * @timeout_ms: per-step wait limit; 0 = TC_TIMEOUT_MS or 10000
 * @sim: SIM: the simulated fabric
 */
struct tc_comm_attr {
	uint32_t size;
	uint32_t transport;
	uint32_t fabric_id;
	uint32_t node;
	int32_t timeout_ms;
	uint32_t __reserved;
	tc_sim_t *sim;
};

int tc_comm_create(const struct tc_comm_attr *attr, tc_comm_t **comm);
void tc_comm_destroy(tc_comm_t *comm);

/* Queries. Arrays have TC_MAX_DIMS / 2*TC_MAX_DIMS entries; unused are 0 / -1. */
int tc_comm_rank(const tc_comm_t *comm);
int tc_comm_size(const tc_comm_t *comm);
int tc_comm_ndims(const tc_comm_t *comm);
int tc_comm_dims(const tc_comm_t *comm, int *dims, unsigned int *wrap_mask);
int tc_comm_port_model(const tc_comm_t *comm); /* enum tc_port_model */
int tc_comm_coords(const tc_comm_t *comm, int *coords);
int tc_comm_neighbors(const tc_comm_t *comm, int *neighbors); /* per port, -1 off a mesh edge */
const char *tc_comm_transport_name(const tc_comm_t *comm);

/* Collectives. MPI semantics with a block of block_bytes per peer. */
int tc_alltoall(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t block_bytes);
int tc_allgather(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t block_bytes);

enum tc_coll_id {
	TC_ALLTOALL = 0,
	TC_ALLGATHER = 1,
};

/**
 * struct tc_coll_info - what the last call of a collective on this
 *	communicator ran, and what the cost model predicts for it
 * @size: sizeof(struct tc_coll_info), set by the caller
 * @algo: algorithm name (torus-sched --algo)
 * @steps: startups on the critical path
 * @transmission_blocks: critical-path transmission in blocks
 * @lower_bound_blocks: the bound for the shape (0 if none known)
 * @block_bytes: the m of that call
 * @why: (added) why the forced algorithm (TC_*_ALGO, tc_comm_set_algo) did
 *	not run and the library's choice ran instead; "" when it ran
 *
 * A caller passing a smaller @size (an older struct) gets the fields that fit.
 * Returns 0, -ENODATA before the first call of that collective, -EINVAL.
 */
struct tc_coll_info {
	uint32_t size;
	uint32_t steps;
	char algo[32];
	double transmission_blocks;
	double lower_bound_blocks;
	uint64_t block_bytes;
	char why[128];
};
int tc_coll_last(const tc_comm_t *comm, enum tc_coll_id coll, struct tc_coll_info *info);

/*
 * Force the algorithm of one collective on this communicator by name, as the
 * TC_ALLTOALL_ALGO / TC_ALLGATHER_ALGO variables do at tc_comm_create();
 * NULL or "auto" restores the library's choice. -ENOENT: no such algorithm.
 * If the forced algorithm cannot build a schedule for the shape, the call
 * runs the library's choice and tc_coll_last() says why.
 */
int tc_comm_set_algo(tc_comm_t *comm, enum tc_coll_id coll, const char *name);

const char *tc_strerror(int err);
/*
 * One line saying why the calling thread's last failing tc_ call failed
 * (e.g. "alltoall at2: step 3: timed out after 100 ms waiting for node 5 on
 * port 2"); "" if none. Valid until the thread's next failing call.
 */
const char *tc_last_error(void);

/* The in-process simulator: a fabric whose nodes are threads of this process. */
struct tc_sim_attr {
	uint32_t size;
	uint32_t ndims;
	uint32_t dims[TC_MAX_DIMS];
	uint32_t wrap_mask;  /* bit d: dimension d wraps */
	uint32_t port_model; /* enum tc_port_model */
};
int tc_sim_create(const struct tc_sim_attr *attr, tc_sim_t **sim);
/* Run fn on one thread per node, each with its own communicator; returns 0
 * when every fn returned 0, else the first non-zero return (by rank). */
int tc_sim_launch(tc_sim_t *sim, int (*fn)(tc_comm_t *comm, void *arg), void *arg);
void tc_sim_destroy(tc_sim_t *sim);

#ifdef __cplusplus
}
#endif
#endif /* TORUSCOLL_H */
