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
 *   TC_TRANSPORT_VERBS  RDMA verbs (librdmacm + libibverbs; InfiniBand, RoCE,
 *                       soft-RoCE): one rank per process, started by a PMIx
 *                       launcher (mpirun, srun --mpi=pmix) or given an
 *                       out-of-band allgather (tc_comm_attr.oob_allgather)
 *
 * tc_comm_create(NULL, &comm) reads the environment:
 *   TC_TRANSPORT   dev | sim | verbs (default dev)
 *   TC_FABRIC      fabric id (default 0)
 *   TC_NODE        node index = rank (required for dev)
 *   TC_TIMEOUT_MS  how long a collective waits for one step (default 10000)
 *   TC_DIMS        verbs: the logical torus of the job, e.g. 4x4 (default: a
 *                  near-square factorisation of the job size)
 *   TC_RDMA_DEVICE verbs: the RDMA device, e.g. rxe0 (default: the first
 *                  device with an active port)
 *   TC_ALLTOALL_ALGO, TC_ALLGATHER_ALGO, ...  force an algorithm by name
 *                  (torus-sched --list shows the names); "auto" = library
 *                  choice. A collective whose forced algorithm cannot run
 *                  on the communicator's shape fails -EOPNOTSUPP, naming
 *                  the variable, algorithm and shape
 *   TC_COST_TS_US, TC_COST_TW_US, TC_COST_RHO_US, TC_COST_HOP_US
 *                  the cost parameters the library's choice prices algorithms
 *                  with: startup per message (us), time per byte (us/B),
 *                  rearrangement per byte (us/B), time per link crossed (us).
 *                  Each one set overrides the transport's own: the device's
 *                  fabric timing (ts_ns, tw_ps, hop_ns; rho 0), or, for the
 *                  simulator, the module's default timing (ts 1 us, tw
 *                  0.0001 us/B, hop 0.02 us, rho 0)
 *   TC_AUTO_CLOCK  fabric | wall: which time the library's choice minimises
 *                  on the device and the simulator (default fabric):
 *                  fabric, the modelled torus's own (the timing above);
 *                  wall, the time this host takes to run the collective,
 *                  measured when the communicator is created: a step
 *                  costs what waking every node once costs here, a byte
 *                  what the host's copies cost, whatever route it takes.
 *                  Creating a communicator then is collective: every node
 *                  of the fabric creates one (it times a few exchanges
 *                  with its neighbours and agrees on the figures with an
 *                  allreduce). Verbs prices the wall clock always.
 * TC_TIMEOUT_MS, TC_*_ALGO, TC_COST_* and TC_AUTO_CLOCK also apply to
 * communicators created from an attribute struct (timeout_ms 0, clock 0); a
 * malformed value fails tc_comm_create.
 *
 * Errors: every failing call also leaves a one-line reason for the calling
 * thread in tc_last_error(). A collective that fails part-way (timeout,
 * failed transfer) may leave transfers posted, so the communicator then
 * refuses further collectives with -EIO: destroy it. Until it is destroyed
 * a late peer's data may still land in the failed call's receive buffer (on
 * the device it stays registered), so destroy the communicator before
 * freeing or reusing that buffer. Collectives on one
 * communicator are called by one thread at a time, in the same order on
 * every node (as in MPI).
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

/* What the library's algorithm choice minimises (tc_comm_attr.clock). */
enum tc_clock {
	TC_CLOCK_FABRIC = 1, /* the modelled fabric's time */
	TC_CLOCK_WALL = 2,   /* this host's wall clock, measured at creation */
};

/* Whether the device runs a whole collective as one program (tc_comm_attr.offload). */
enum tc_offload {
	TC_OFFLOAD_AUTO = 0, /* where the module runs programs, unless TC_DEV_OFFLOAD=off */
	TC_OFFLOAD_OFF = 1,  /* step by step */
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
 * @dims: VERBS: the logical torus ("4x4"); NULL: TC_DIMS, else near-square
 * @rdma_device: VERBS: device name; NULL: TC_RDMA_DEVICE, else the first
 *	device with an active port
 * @oob_allgather: VERBS: the runtime's own exchange, called once per
 *	communicator by every rank: gather bytes from each rank's sendbuf into
 *	recvbuf (oob_size * bytes, in rank order); 0 or a negative errno.
 *	NULL: rank, size and the exchange come from PMIx (the launcher)
 * @oob_ctx: passed to oob_allgather
 * @oob_rank: VERBS with oob_allgather: this process's rank
 * @oob_size: VERBS with oob_allgather: the number of ranks
 * @clock: DEV, SIM: enum tc_clock, what the algorithm choice minimises;
 *	0: TC_AUTO_CLOCK, else TC_CLOCK_FABRIC. TC_CLOCK_WALL makes
 *	tc_comm_create collective over the fabric (see TC_AUTO_CLOCK)
 * @offload: DEV, VERBS: enum tc_offload. 0 (TC_OFFLOAD_AUTO): on a module
 *	that runs programs (TORUS_FEAT_PROGRAM) each alltoall and allgather is
 *	posted as one program that the NIC runs alone, unless TC_DEV_OFFLOAD=off;
 *	over verbs with TC_VERBS_PROG=1, from a collective's second call on,
 *	the process runs it as one program (each message posted when the
 *	messages it depends on have completed, no step barrier); without it,
 *	step by step;
 *	TC_OFFLOAD_OFF: step by step, one post and one wait per step (new in
 *	version 1.3; it was a reserved field that had to be 0)
 *
 * The fields from @dims on are new in version 1.1 (@clock the last of them);
 * a caller built against an older header passes the smaller size and they
 * read as zero.
 */
struct tc_comm_attr {
	uint32_t size;
	uint32_t transport;
	uint32_t fabric_id;
	uint32_t node;
	int32_t timeout_ms;
	uint32_t __reserved;
	tc_sim_t *sim;
	const char *dims;
	const char *rdma_device;
	int (*oob_allgather)(void *ctx, const void *sendbuf, void *recvbuf, size_t bytes);
	void *oob_ctx;
	int32_t oob_rank;
	int32_t oob_size;
	uint32_t clock;
	uint32_t offload;
};

int tc_comm_create(const struct tc_comm_attr *attr, tc_comm_t **comm);
void tc_comm_destroy(tc_comm_t *comm);

/*
 * Sub-communicators: a communicator of some of parent's ranks, served on
 * the part of the fabric they occupy, over the parent's transport (the
 * device node is opened once per process; a sub shares its buffer matrix,
 * completion queue and progress thread). New in version 1.1.
 *
 * ranks[i] is the parent rank that becomes rank i of *sub. Every rank in
 * the list calls tc_comm_create_sub with the same list and context, and
 * only those ranks call it; nothing is communicated (each computes the
 * same answer from the list). It succeeds when the list, in order, is the
 * row-major order (last dimension fastest) of a box of the parent's torus:
 *   - a box is k logical dimensions laid along k of the parent's
 *     dimensions, in the parent's dimension order, each either way round
 *     (a reversed order) and over l <= n of that dimension's n nodes;
 *   - a logical dimension wraps when l == n and the parent's dimension
 *     wraps; otherwise it is a path (which may cross the parent's
 *     wrap-around); dimensions of extent 1 are left out;
 * e.g. on a 4x4 torus: the 16 ranks reversed (a 4x4 torus), a row or a
 * column in either direction (a 4-ring), a 4x2 half (4x2, the 2 a path),
 * 3 consecutive ranks of a row (a 3-path). The collectives then run the
 * algorithms of that logical shape (tc_comm_dims, tc_coll_last say which).
 * Otherwise (ranks {0, 5, 10}; a single rank, which has no torus shape)
 * -ENOTSUP, and tc_last_error() says why: run those another way (the MPI
 * drop-in passes them to MPI).
 *
 * context, 1..TC_SUB_MAX_CONTEXT, tells the sub's messages from those of
 * other communicators on the same fabric (the device matches a message by
 * arrival port and tag, not by sender): two subs that share a node and are
 * alive at the same time must have different contexts (-EBUSY when this
 * process already has a live sub of the same root with that context); subs
 * with no node in common may share one (every row of a grid can use 1 and
 * every column 2). The parent's own calls have none.
 *
 * Order: the calls of a parent, its subs and their subs run in this
 * process's issue order, one at a time, blocking and nonblocking alike. So
 * nonblocking calls on communicators that share a node must be issued in
 * the same relative order on every rank that makes them (MPI asks that per
 * communicator; here it holds across a parent and its subs), and from one
 * thread at a time, as for one communicator. A failed call breaks the
 * parent and all its subs (-EIO), since they share posted transfers.
 *
 * A sub of a sub is a sub of the same root (its ranks are translated).
 * Destroy subs before their parent: a sub whose root was destroyed fails
 * every call with -EIO, and may (must) still be destroyed.
 *
 * Returns 0; -EINVAL: NULL argument, n < 1 or more than the parent's size,
 * a rank out of range or listed twice, the caller not in the list, context
 * out of range; -ENOTSUP: not a box (see above); -EBUSY: context taken;
 * -EIO: the parent is unusable; -ENOMEM.
 */
#define TC_SUB_MAX_CONTEXT 127
int tc_comm_create_sub(tc_comm_t *parent, const int *ranks, int n, unsigned int context, tc_comm_t **sub);

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

/*
 * The collectives, by id. tc_comm_set_algo() takes TC_ALLTOALL or
 * TC_ALLGATHER (the two with a choice of algorithms), tc_coll_last() any
 * (for the others: what ran, offloaded and the system calls); the library
 * names them in its schedules and messages. The values never
 * change; new ones are appended.
 */
enum tc_coll_id {
	TC_ALLTOALL = 0,
	TC_ALLGATHER = 1,
	TC_REDUCE_SCATTER = 2,
	TC_ALLREDUCE = 3,
	TC_BCAST = 4,
	TC_REDUCE = 5,
	TC_BARRIER = 6,
	TC_ALLGATHERV = 7,
	TC_ALLTOALLV = 8,
};

/**
 * struct tc_coll_info - what the last call of a collective on this
 *	communicator ran, and what the cost model predicts for it
 * @size: sizeof(struct tc_coll_info), set by the caller
 * @algo: algorithm name (torus-sched --algo)
 * @steps: the schedule's steps (startups when run step by step)
 * @transmission_blocks: critical-path transmission in blocks
 * @lower_bound_blocks: the bound for the shape (0 if none known)
 * @block_bytes: the m of that call
 * @why: (added) why the algorithm forced by tc_comm_set_algo did not run
 *	and the library's choice ran instead; "" when it ran (one forced by
 *	TC_*_ALGO that cannot run fails the call instead)
 * @predicted_us: (added) the cost model's time for this call, in us, with
 *	the communicator's cost parameters (the transport's timing, or
 *	TC_COST_*): for the library's choice what it chose by
 * @runner_up: (added) the library's choice: the second-cheapest candidate
 *	("" if there was none, or the forced algorithm ran)
 * @runner_up_us: (added) its predicted time (0 if none)
 * @zero_copy: (added) 1: the call ran from and into the caller's buffers,
 *	registered with the transport for the call (the device with memory
 *	registration, blocks of at least TC_ZCOPY_MIN bytes); 0: it copied the
 *	send data into the transport buffer and the result out
 * @eager_sends: (added) verbs: this rank's messages of the call sent eagerly
 *	(at most TC_VERBS_EAGER bytes, into a receive slot the peer posted
 *	ahead); 0 on the device and the simulator, which have one protocol
 * @rendezvous_sends: (added) verbs: this rank's messages of the call sent
 *	by rendezvous (the receiver's ready-to-receive, then an RDMA write
 *	into its buffer); 0 on the device and the simulator
 * @offloaded: (added in 1.3) 1: the call ran as one program, each message
 *	started by the completions it depends on: on the device the NIC ran it
 *	(TORUS_IOC_PROG_POST), over verbs the process posted each message as
 *	its dependencies completed; 0: step by step
 * @posts, @waits, @regs: (added in 1.3) the device's system calls for the
 *	call: posts (a program, or one per step and batch), completion waits,
 *	and memory registrations plus deregistrations (zero copy); 0 elsewhere
 * @part_steps: (added in 1.4) the steps of the schedule this rank sends or
 *	receives in
 * @part_msgs_sent, @part_msgs_recv: (added in 1.4) this rank's messages of
 *	the call
 * @part_blocks_sent, @part_blocks_recv, @part_blocks_forwarded: (added in
 *	1.4) blocks (allgather: packets) in them; forwarded: sent blocks that
 *	did not start at this rank
 *
 * Everything is computed from this rank's own part of the schedule, the one
 * the call ran; no other rank's part and no whole schedule is built. @steps
 * is the schedule's number of steps (each a startup when run step by step),
 * which the part knows. @transmission_blocks and, for a forced algorithm,
 * @predicted_us are the cost model over this rank's messages alone (no
 * rearrangement term): at most the whole schedule's figures, since other
 * ranks' messages that share a link or delay a peer are not seen (at2 on
 * 8x12: 120 of the whole schedule's 144 blocks). For the library's choice
 * @predicted_us stays the whole schedule's price it chose by.
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
	double predicted_us;
	char runner_up[32];
	double runner_up_us;
	uint32_t zero_copy;
	uint32_t eager_sends;
	uint32_t rendezvous_sends;
	uint32_t offloaded;
	uint32_t posts;
	uint32_t waits;
	uint32_t regs;
	uint32_t part_steps;
	uint32_t part_msgs_sent;
	uint32_t part_msgs_recv;
	uint64_t part_blocks_sent;
	uint64_t part_blocks_recv;
	uint64_t part_blocks_forwarded;
};
int tc_coll_last(const tc_comm_t *comm, enum tc_coll_id coll, struct tc_coll_info *info);

/*
 * Force the algorithm of one collective on this communicator by name, as the
 * TC_ALLTOALL_ALGO / TC_ALLGATHER_ALGO variables do at tc_comm_create();
 * NULL or "auto" restores the library's choice. -ENOENT: no such algorithm.
 * If the forced algorithm cannot build a schedule for the shape, the call
 * runs the library's choice and tc_coll_last() says why (forced by the
 * environment variable instead, the call fails -EOPNOTSUPP).
 */
int tc_comm_set_algo(tc_comm_t *comm, enum tc_coll_id coll, const char *name);

/*
 * The names of the algorithms of collective coll, the names
 * tc_comm_set_algo() and TC_*_ALGO take ("auto" is not one of them), in the
 * library's order (the order the library's choice breaks ties by): names[i]
 * gets the i-th name, a static string, for i below max and below their
 * count. Returns the count (call with names NULL and max 0 to size the
 * array); -EINVAL: coll unknown, max negative, or names NULL with max > 0.
 * New in version 1.3.
 */
int tc_coll_algos(enum tc_coll_id coll, const char **names, int max);

/*
 * Set what the library's algorithm choice minimises on this communicator
 * (enum tc_clock), as tc_comm_attr.clock does at creation: a program can
 * create its communicator with the fabric clock (local, cheap), look at it
 * (tc_comm_size, ...), and only then measure the wall clock. TC_CLOCK_WALL
 * is collective: every rank of comm calls it, with no nonblocking call of
 * comm or its subs outstanding, and it measures this host's costs with all
 * of them as tc_comm_create does; TC_CLOCK_FABRIC is local. TC_COST_*
 * overrides read at creation apply again. Sub-communicators take their
 * parent's prices when they are created. New in version 1.2.
 * Returns 0; -EINVAL: comm NULL or clock unknown; -EOPNOTSUPP: comm is a
 * sub-communicator, or TC_CLOCK_FABRIC on verbs (which has no modelled
 * fabric); -EBUSY: a nonblocking call is outstanding; -EIO: comm is broken
 * (and a failed measurement breaks it, as a failed collective does);
 * -ETIMEDOUT: a peer did not take part.
 */
int tc_comm_set_clock(tc_comm_t *comm, unsigned int clock);

/*
 * The everyday collectives (MPI meanings) and their nonblocking forms.
 *
 * Datatypes and operations: sum, prod, min, max for every datatype; band,
 * bor, bxor for the integer types only (-EINVAL for float and double).
 * Integer sum and prod wrap around (two's complement); min and max are
 * (a < b ? a : b) and (a > b ? a : b).
 *
 * Topology: every collective runs dimension by dimension over the lines of
 * the fabric (rings where a dimension wraps, paths where it does not), both
 * directions of every line busy in every step, each directed link carrying
 * at most one message per step:
 *   tc_bcast       a spanning tree along dimension k-1, then k-2, ..., 0
 *                  (on a ring: floor(n/2) hops one way, floor((n-1)/2) the other)
 *   tc_reduce      the reverse tree: dimension 0 first, then 1, ..., k-1
 *   tc_reduce_scatter  reduce-scatter along dimension 0, then 1, ..., k-1;
 *                  each line's chunks travel toward their owner from both sides
 *   tc_allreduce   that reduce-scatter, then allgather along k-1, ..., 0
 *   tc_allgatherv  line allgather along dimension k-1, then k-2, ..., 0
 *   tc_barrier     tc_reduce to rank 0 then tc_bcast of one int32
 *   tc_alltoallv   direct exchange: in step t every node sends to the node at
 *                  coordinate offset delta_t and receives from -delta_t, along
 *                  a shortest dimension-ordered route (routers forward it)
 * On a one-port fabric each step is split into its + and - halves.
 *
 * Reduction order (bit-for-bit the same result on every rank, and the same
 * from run to run): element e's result is the fold over dimension k-1 of
 * the folds over dimension k-2 ... of the folds over dimension 0 of the
 * ranks' values, each fold over a line taken in the line fold order around a
 * centre coordinate c:
 *	(L op x_c) op R
 *	L = left fold of the values before c in + order, starting floor(n/2)
 *	    before c on a ring (coordinates mod n), at coordinate 0 on a path
 *	R = left fold of the values after c in - order, starting floor((n-1)/2)
 *	    after c on a ring, at coordinate n-1 on a path
 * (an empty L or R is left out). The centre of dimension d is the root's
 * coordinate for tc_reduce. For tc_allreduce and tc_reduce_scatter it is
 * the chunk of e in dimension d: the vector (for tc_reduce_scatter the
 * P*recvcount elements) is split into n_0 chunks [L*j/n_0, L*(j+1)/n_0)
 * (integer division, L its length), chunk j of it into n_1 chunks the same
 * way, and so on; e's centre in dimension d is the index j of its chunk at
 * that level. Ranks are row-major over coordinates (dimension k-1 fastest),
 * so rank r owns exactly block r after the reduce-scatter. tc_allreduce
 * then copies those final values to every rank unchanged.
 *
 * Buffers: counts and displacements of the v-variants are in bytes; sendbuf
 * may equal recvbuf (the data goes through the transport buffer). recvbuf of
 * tc_reduce is used only at the root (may be NULL elsewhere). A count of 0
 * is a valid no-op. Every rank must make the same calls in the same order.
 *
 * Errors: -EINVAL for a NULL comm or buffer, an unknown datatype or op, a
 * bitwise op on float/double, a root outside 0..size-1, a sizes overflow;
 * -ENOSPC when the transport buffer (the device's buffer matrix) is too
 * small; -ETIMEDOUT when a step waited longer than the communicator's
 * timeout (tc_last_error() names the collective, step, port and peer); -EIO
 * for any call after a failed one (transfers may still be posted).
 */
enum tc_datatype {
	TC_INT32 = 1,
	TC_INT64 = 2,
	TC_UINT64 = 3,
	TC_FLOAT = 4,
	TC_DOUBLE = 5,
};

enum tc_op {
	TC_SUM = 1,
	TC_PROD = 2,
	TC_MIN = 3,
	TC_MAX = 4,
	TC_BAND = 5,
	TC_BOR = 6,
	TC_BXOR = 7,
};

int tc_barrier(tc_comm_t *comm);
int tc_bcast(tc_comm_t *comm, void *buf, size_t count, enum tc_datatype dt, int root);
int tc_reduce(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count, enum tc_datatype dt,
	      enum tc_op op, int root);
int tc_allreduce(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count, enum tc_datatype dt,
		 enum tc_op op);
/* MPI_Reduce_scatter_block: sendbuf holds size*recvcount elements; rank r
 * receives elements [r*recvcount, (r+1)*recvcount) of the reduced vector. */
int tc_reduce_scatter(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t recvcount, enum tc_datatype dt,
		      enum tc_op op);
/* Rank r's sendbytes land at recvbuf + displs[r] on every rank; recvcounts[r]
 * must equal rank r's sendbytes. */
int tc_allgatherv(tc_comm_t *comm, const void *sendbuf, size_t sendbytes, void *recvbuf, const size_t *recvcounts,
		  const size_t *displs);
/* sendcounts[d] bytes at sendbuf + sdispls[d] go to rank d; recvcounts[s]
 * bytes from rank s land at recvbuf + rdispls[s]. */
int tc_alltoallv(tc_comm_t *comm, const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
		 void *recvbuf, const size_t *recvcounts, const size_t *rdispls);

/*
 * Nonblocking forms. Each validates its arguments, queues the call on the
 * communicator and returns at once with *req set; a progress thread of the
 * communicator (started by the first nonblocking call) executes queued calls
 * in issue order, and from then on the blocking calls of that communicator
 * (tc_alltoall and tc_allgather included) go through the same queue, so
 * calls never interleave on the wire. The buffers belong to the library
 * until the request completes. Several requests may be outstanding; they
 * may be waited for in any order.
 *
 * tc_test(&req): 0 not done yet; 1 done (the request is freed and req set to
 * NULL); a negative errno when the collective failed (also freed, NULL).
 * tc_wait(&req): waits; 0 or the collective's negative errno; frees the
 * request and sets req to NULL. A NULL *req completes at once (0 / 1).
 * tc_last_error() after a failed tc_test/tc_wait gives the collective's
 * reason. Destroying a communicator waits for its queued calls to finish.
 */
typedef struct tc_request tc_request_t;

int tc_ialltoall(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t block_bytes, tc_request_t **req);
int tc_iallgather(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t block_bytes, tc_request_t **req);
int tc_ibarrier(tc_comm_t *comm, tc_request_t **req);
int tc_ibcast(tc_comm_t *comm, void *buf, size_t count, enum tc_datatype dt, int root, tc_request_t **req);
int tc_ireduce(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count, enum tc_datatype dt,
	       enum tc_op op, int root, tc_request_t **req);
int tc_iallreduce(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count, enum tc_datatype dt,
		  enum tc_op op, tc_request_t **req);
int tc_ireduce_scatter(tc_comm_t *comm, const void *sendbuf, void *recvbuf, size_t recvcount,
		       enum tc_datatype dt, enum tc_op op, tc_request_t **req);
int tc_iallgatherv(tc_comm_t *comm, const void *sendbuf, size_t sendbytes, void *recvbuf,
		   const size_t *recvcounts, const size_t *displs, tc_request_t **req);
int tc_ialltoallv(tc_comm_t *comm, const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
		  void *recvbuf, const size_t *recvcounts, const size_t *rdispls, tc_request_t **req);
int tc_test(tc_request_t **req);
int tc_wait(tc_request_t **req);

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
