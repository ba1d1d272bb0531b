/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * torus: ioctl ABI of the torus-interconnect NIC model (torus.ko).
 *
 * Devices
 *   /dev/torus-ctl          control device: handshake, fabric create/destroy/query,
 *                           per-link fault knobs. Opening it binds nothing.
 *   /dev/torus<F>n<N>       node N (row-major index) of fabric F, e.g. /dev/torus0n5.
 *                           Opening binds the file to that node; several opens of one
 *                           node share its queues. mmap(offset 0) maps the node's
 *                           buffer matrix (matrix_bytes, page-rounded).
 *
 * Nodes and ports
 *   A fabric has ndims (1..TORUS_MAX_DIMS) dimensions dims[0..ndims-1]. Node
 *   coordinates are row-major: node = sum(coord[d] * stride[d]) with
 *   stride[ndims-1] = 1, stride[d] = stride[d+1] * dims[d+1].
 *   Port p = 2*d + dir leaves the node along dimension d, dir 0 = +1, dir 1 = -1.
 *   Bit d of wrap_mask set: dimension d wraps (torus); clear: it is a mesh line
 *   and the port leaving the edge has no neighbour (TORUS_NO_NODE).
 *   A message arriving on port p came from the neighbour behind port p, i.e. a
 *   message travelling in + direction of dimension d arrives on port 2*d+1.
 *
 * Routing (wormhole, dimension-ordered)
 *   A send names its destination node. Its route visits dimension 0 first, then
 *   1, ..., each along the shortest direction (ties on a ring of even size go
 *   in the + direction), unless TORUS_SEND_ROUTE is set, in which case hops[d]
 *   gives the signed hop count per dimension and must lead to dst_node. The
 *   message leaves on the port of its first hop and arrives on the port of its
 *   last hop; intermediate nodes' processes are not involved. Every directed
 *   link of the route is occupied (and counted) for the message's duration.
 *
 * Timing model (virtual time, ns)
 *   A message of m bytes crossing h links lasts ts_ns + h*hop_ns +
 *   m*tw_ps/1000 and holds every link of its route for that time (on
 *   one-port fabrics also the sender's send engine and the receiver's
 *   receive engine). It is ready at its sender's node clock at post and
 *   starts at the earliest time from then on at which all it holds is free
 *   for its whole duration: each link (and engine) keeps a calendar of when
 *   it is taken, so a message ready earlier goes before one charged first
 *   (in wall-clock order) at a later virtual time when it fits in the gap;
 *   messages already charged never move. A calendar keeps a bounded number
 *   of intervals and counts the time before the ones it forgot as taken. A
 *   node's clock advances to the end time of each completion it reaps.
 *
 * Every ioctl takes one struct whose first field is __u32 size (bytes the
 * caller filled) followed by __u32 flags. Every errno an ioctl returns:
 * first the checks every command shares, in this order,
 *   ENOTTY      unknown command, or a command the device does not serve: the
 *               node commands (NODE_QUERY, POST, CQ_WAIT, MR_REG, MR_DEREG,
 *               PROG_POST)
 *               on /dev/torus-ctl,
 *               the control commands (FABRIC_CREATE, FABRIC_DESTROY,
 *               LINK_FAULT) on a node device. The argument is not read.
 *   EFAULT      the argument is not readable
 *   EINVAL      size < the command's minimum size
 *   E2BIG       size > sizeof(struct) known to the kernel and the extra tail is
 *               not all zero (also a descriptor of a POST whose desc_size is
 *               larger than the kernel's struct torus_desc), or size (a
 *               POST's desc_size) above the page size, 4096 on x86-64,
 *               whatever the tail (as openat2 and clone3)
 *   EOPNOTSUPP  an unknown bit in flags (also in a descriptor's flags)
 * then each command's own:
 *   EINVAL      a non-zero __reserved field, or a value out of range: bad dims
 *               or limits (FABRIC_CREATE); a descriptor with a bad op, port,
 *               destination or segment count, an empty segment or one
 *               outside the matrix, a route that does not lead to dst_node
 *               or leaves a mesh, a send port other than the route's first
 *               hop; count 0 or above max_batch, desc_size below the minimum
 *               (POST); with TORUS_DESC_SGE a torus_sge with a non-zero
 *               __reserved, or a range outside its registration (POST);
 *               length 0 or above max_mr_bytes, addr + length wrapping
 *               (MR_REG); entry_size below sizeof(struct torus_cqe),
 *               min_entries above max_entries or the CQ depth (CQ_WAIT);
 *               a delay above 1 s, or a port that the node lacks or that
 *               leaves a mesh edge (LINK_FAULT)
 *   ENOENT      no fabric with that id (FABRIC_DESTROY, FABRIC_QUERY on the
 *               ctl device, COUNTERS on the ctl device, LINK_FAULT), or no
 *               node with that index in it (COUNTERS, LINK_FAULT); a key
 *               that names no registration of this file made by this
 *               process (POST's torus_sge, MR_DEREG: a bad or stale key,
 *               or a key a parent registered, used by a forked child)
 *   EACCES      POST: a receive whose torus_sge names a registration made
 *               without TORUS_MR_WRITE (read-only memory is for sends only)
 *   EBUSY       FABRIC_DESTROY of a fabric one of whose nodes is open;
 *               FABRIC_CREATE when every fabric id is in use (256 fabrics);
 *               MR_DEREG of a registration that queued or moving
 *               descriptors still use (messages in flight: reap their
 *               completions, then deregister)
 *   ENOSPC      FABRIC_CREATE when the node device minors run out (65536
 *               node devices over all fabrics); MR_REG when the file holds
 *               max_mrs registrations
 *   EAGAIN      POST: the port's send or receive queue (sq_depth) is full, or
 *               the node's CQ has no free slot for the completion (cq_depth
 *               completions not yet reaped or still promised)
 *   ENOMEM      allocation failure; MR_REG: pinning the range would take the
 *               process's pinned pages (VmPin) above RLIMIT_MEMLOCK (a
 *               process with CAP_IPC_LOCK is exempt)
 *   EFAULT      a user pointer in the argument (POST's descs and segs,
 *               CQ_WAIT's entries when not even the first entry could be
 *               written, MR_REG's range: unmapped, PROT_NONE, I/O memory,
 *               or not writable with TORUS_MR_WRITE) is bad, or the struct
 *               cannot be written back (a FABRIC_CREATE whose result cannot
 *               be written back destroys the new fabric; an MR_REG whose key
 *               cannot be written back deregisters it)
 *   ETIMEDOUT   CQ_WAIT timed out with fewer than min_entries (count is set)
 *   EINTR       CQ_WAIT interrupted by a signal (count is set)
 *   PROG_POST's own: see "Programs" below
 * A POST that fails part way returns the first failing descriptor's errno,
 * with the ones before it posted (posted says how many).
 *
 * Memory registration (TORUS_FEAT_MR)
 *   MR_REG pins a range of the caller's memory (any alignment, any mapping
 *   GUP can pin long-term: anonymous, shmem, the buffer matrix itself) and
 *   returns a key, valid on the file it was registered on, for the process
 *   that registered it. The pages are charged to that process's pinned
 *   pages (VmPin in /proc/PID/status) against RLIMIT_MEMLOCK, as RDMA
 *   memory registration is. Without TORUS_MR_WRITE the range is pinned
 *   read-only and may only be sent from; with it, receives may scatter into
 *   it (the range must be writable). A descriptor with TORUS_DESC_SGE names
 *   its segments as struct torus_sge (key, offset, length): key
 *   TORUS_KEY_MATRIX is the buffer matrix, any other key a registration,
 *   offset counted from the registered address; one gather or scatter list
 *   may mix both. The engine copies straight from the sender's pages to the
 *   receiver's pages when the receive is already posted (one copy); a
 *   message that arrives before its receive is parked in the receive FIFO
 *   as any message is (copied in, then out), unless it is sent with
 *   TORUS_SEND_SYNC.
 *   Pages stay pinned until MR_DEREG, or the file's last close, or the
 *   process's exit (which closes it), and in any case until every
 *   descriptor using them completed: munmap, or exit, with messages in
 *   flight is safe (the engine keeps copying to or from the pinned pages,
 *   which are freed after; descriptors still queued at the close are
 *   cancelled, -ECANCELED). MR_DEREG with descriptors in flight is EBUSY.
 *   A registration is a snapshot of the mapping at MR_REG time: a later
 *   munmap/mmap of the range is not seen. A read-only registration of
 *   private memory breaks its copy-on-write sharing at MR_REG (as RDMA
 *   registration does), so the process's later writes are what is sent,
 *   even for memory never written before; a read-only shared mapping is
 *   pinned as it is.
 *   fork(): the child inherits the file but not the keys (its POSTs and
 *   MR_DEREGs with them are ENOENT). Pinned anonymous pages are not shared
 *   copy-on-write: the child gets its own copy of them at fork, the parent
 *   keeps the pinned pages, so the registration goes on reading and writing
 *   the parent's memory and the child sees the content as of fork.
 *   Registrations a child makes on an inherited file live until MR_DEREG or
 *   the file's last close (the parent's, when the parent keeps it open).
 *
 * Synchronous sends (TORUS_SEND_SYNC, TORUS_FEAT_SEND_SYNC)
 *   A send with TORUS_SEND_SYNC completes only once a receive has taken it
 *   (MPI's synchronous send). One that arrives before its receive is posted
 *   waits at the destination port by reference, in arrival order with the
 *   messages in its FIFO but taking no FIFO credit and no copy; the receive
 *   that takes it copies the sender's segments straight into its own, so
 *   every message is copied once, also from and into registered memory.
 *   The engine goes on with the sends behind it meanwhile. The timing model
 *   is that of any send: the message's times are those of its arrival, and
 *   both completions carry them. While it waits its segments stay in use
 *   (MR_DEREG of its registration is EBUSY), and a send queue slot is free
 *   again. If the destination's last close comes first, the send completes
 *   with ECONNREFUSED; the sender's own last close, or the close of the file
 *   whose registrations it names, cancels it (ECANCELED). A sender that
 *   waits for a synchronous send's completion before posting the receive
 *   its peer's message needs deadlocks, exactly as with MPI_Ssend: post
 *   the receives of a step first, or together.
 *
 * Programs (PROG_POST, TORUS_FEAT_PROGRAM)
 *   A program is a list of descriptors posted in one call and run by the
 *   port engines as their dependencies are met, with no process step in
 *   between (triggered operations, as Portals 4 counters or CORE-Direct
 *   WAIT requests). Each descriptor may wait for a counter of the program to
 *   reach a threshold, and may add 1 to a counter when it completes
 *   successfully. The whole program is checked before anything is queued
 *   (all or nothing): every descriptor as POST checks it, counters in range,
 *   a threshold of at least 1 and at most the number of descriptors before
 *   it that signal its counter (so no cycle, and no threshold that can never
 *   be reached), at most max_prog_fanout descriptors waiting on one
 *   counter; its CQ slots (one per descriptor and one for the program) and
 *   its send and receive queue slots (sq_depth per port) are reserved up
 *   front. Descriptors without a counter are queued at once, the others
 *   when their counter reaches their threshold. A send that waited starts
 *   in virtual time no earlier than the latest end time of the completions
 *   that signalled its counter (not its node's clock at post), so the
 *   fabric's makespan reflects each message's own dependencies.
 *   A descriptor with op TORUS_OP_SIGNAL (TORUS_FEAT_PROG_SIGNAL) moves no
 *   data: when its counter reaches its threshold it completes at once and
 *   adds 1 to its signal counter, passing the ready time on (a triggered
 *   counter increment, as Portals 4's PtlTriggeredCTInc). It must wait on
 *   a counter and signal one, and every other field of its torus_desc is 0.
 *   With it a descriptor can wait for any set of earlier descriptors: each
 *   of them signals its own counter, one SIGNAL per member relays it to the
 *   waiter's counter, and the waiter's threshold is the size of the set.
 *   SIGNAL descriptors take no CQ or queue slot and write no completion.
 *   Who runs the engines: by default the poster runs its node's engines
 *   that the program gave work before the ioctl returns (a caller that
 *   waits next loses nothing); with flags TORUS_PROG_QUEUE_ONLY
 *   (TORUS_FEAT_PROG_QUEUE_ONLY) it only queues and kicks their work
 *   items, so the ioctl returns once the program is checked and queued and
 *   the program progresses without the caller (a nonblocking collective).
 *   Completions: a descriptor that succeeds writes none; one that fails
 *   writes its own (flag TORUS_CQE_PROG, its user_data and status); then the
 *   program writes one (op TORUS_OP_PROG, see struct torus_cqe) when all its
 *   descriptors completed, or after a failure, a timeout or a cancel, once
 *   the descriptors an engine was already moving completed: the ones still
 *   waiting or queued are then dropped without a completion of their own.
 *   The program's status is the first failed descriptor's, -ETIMEDOUT after
 *   timeout_ns, or -ECANCELED when the file that posted it is closed (the
 *   close waits for the descriptors being moved, then nothing of the
 *   program is held: pages, CQ and queue slots, memory). While a program
 *   runs, MR_DEREG of a registration it names is EBUSY, as for any
 *   descriptor. Kernel memory for programs is charged to the caller's
 *   memory cgroup and capped per open file (max_prog_bytes: ENOSPC).
 *   PROG_POST's own errors: EINVAL (count 0 or above max_prog_descs,
 *   ncounters or timeout_ns above their limit, desc_size below the
 *   minimum, a descriptor as POST, a counter out of range, a threshold 0
 *   with a counter or not 0 without one, above what the descriptors before
 *   it signal, or a counter with more than max_prog_fanout waiters),
 *   EAGAIN (the CQ or a port's queue has no room for the whole program),
 *   ENOSPC (the file's programs would hold more than max_prog_bytes), and
 *   POST's ENOENT, EACCES, EFAULT, E2BIG and EOPNOTSUPP for a descriptor
 *   (error_index names it).
 *
 * Waiting (CQ_WAIT)
 *   CQ_WAIT sleeps until min_entries completions are ready and wakes once
 *   then (completions arriving one by one do not wake it each time:
 *   TORUS_FEAT_CQ_WAKE_ONCE), then returns up to max_entries in one call. With
 *   min_entries already ready, or 0, it does not sleep at all.
 *
 * The node device, besides its ioctls:
 *   open   ENXIO   no node behind this device number any more: its fabric was
 *                  destroyed (a stale device node, or an open racing the
 *                  destroy). A fabric cannot vanish under an open node:
 *                  FABRIC_DESTROY is EBUSY while one is open.
 *          ENOMEM  the node's buffer matrix or CQ could not be allocated
 *                  (first open)
 *   mmap   EINVAL  offset not 0, or longer than the buffer matrix
 *   read, write: EINVAL (no such operation); lseek: ESPIPE
 *
 * Completion status (torus_cqe.status, 0 or a negative errno):
 *   -EMSGSIZE   message length differs from the matched receive's length:
 *               the receive completes with it, and so does the send when the
 *               receive was already waiting (a send parked in the FIFO has
 *               completed with 0 by then); nothing is delivered
 *   -ENOLINK    send: a link of the route is down (fault knob)
 *   -ENOMEM     send: the copy into the receiver's FIFO could not be
 *               allocated; nothing is delivered
 *   -ECONNREFUSED  send: nobody has the destination node open and a process
 *               had it open before (its session ended); nothing is delivered.
 *               A node never opened since fabric creation buffers messages
 *               in its FIFO for its first opener; a node's last close drops
 *               the messages waiting in its FIFOs.
 *   -ECANCELED  a descriptor still queued at its node's last close. Its entry
 *               goes with the file, so no CQ shows it; the node's errors
 *               counter (COUNTERS on the ctl device) does. Also a queued
 *               descriptor naming a registration of a file that is closed
 *               while other files keep the node open: that entry does reach
 *               the node's CQ.
 *   A send dropped by TORUS_FAULT_DROP completes with 0 and delivers nothing.
 *   (-EHOSTUNREACH is never a status: every route is checked at post, and one
 *   that leaves a mesh is EINVAL there.)
 */
#ifndef _UAPI_TORUS_H
#define _UAPI_TORUS_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define TORUS_ABI_VERSION 1

#define TORUS_MAX_DIMS 6
#define TORUS_MAX_PORTS (2 * TORUS_MAX_DIMS)
#define TORUS_NO_NODE 0xffffffffu
#define TORUS_CTL_NAME "torus-ctl"
/* printf format of a node device name under /dev: fabric id, node index */
#define TORUS_NODE_FMT "torus%un%u"

#define TORUS_TYPE 0xE7
enum {
	TORUS_CMD_BASE = 0x80,
	TORUS_CMD_HANDSHAKE = TORUS_CMD_BASE,
	TORUS_CMD_FABRIC_CREATE,
	TORUS_CMD_FABRIC_DESTROY,
	TORUS_CMD_FABRIC_QUERY,
	TORUS_CMD_NODE_QUERY,
	TORUS_CMD_POST,
	TORUS_CMD_CQ_WAIT,
	TORUS_CMD_COUNTERS,
	TORUS_CMD_LINK_FAULT,
	TORUS_CMD_MR_REG,
	TORUS_CMD_MR_DEREG,
	TORUS_CMD_PROG_POST,
	TORUS_CMD_LAST,
};

/* Feature bits reported by the handshake */
#define TORUS_FEAT_ONE_PORT (1ULL << 0)	 /* one-port fabrics */
#define TORUS_FEAT_ROUTE (1ULL << 1)	 /* explicit routes */
#define TORUS_FEAT_LINK_FAULT (1ULL << 2) /* per-link fault knobs */
#define TORUS_FEAT_EPOLL (1ULL << 3)	 /* poll()/epoll on node fds */
#define TORUS_FEAT_MR (1ULL << 4)	 /* MR_REG/MR_DEREG, TORUS_DESC_SGE */
#define TORUS_FEAT_CQ_WAKE_ONCE (1ULL << 5) /* CQ_WAIT wakes once, at min_entries */
#define TORUS_FEAT_SEND_SYNC (1ULL << 6) /* TORUS_SEND_SYNC */
#define TORUS_FEAT_PROGRAM (1ULL << 7)	 /* PROG_POST: triggered descriptors */
#define TORUS_FEAT_PROG_SIGNAL (1ULL << 8) /* PROG_POST: TORUS_OP_SIGNAL descriptors */
#define TORUS_FEAT_PROG_QUEUE_ONLY (1ULL << 9) /* PROG_POST: TORUS_PROG_QUEUE_ONLY */

/**
 * struct torus_handshake - TORUS_IOC_HANDSHAKE (ctl and node devices)
 * @size: sizeof(struct torus_handshake)
 * @flags: must be 0
 * @abi_version: out, TORUS_ABI_VERSION
 * @max_dims: out, TORUS_MAX_DIMS
 * @features: out, TORUS_FEAT_* mask
 * @ioctls: out, bit (cmd - TORUS_CMD_BASE) set for every supported command
 * @max_nodes: out, largest fabric in nodes
 * @max_dim_size: out, largest size of one dimension
 * @max_segs: out, most segments in one descriptor
 * @max_batch: out, most descriptors in one TORUS_IOC_POST
 * @max_matrix_bytes: out, largest buffer matrix per node
 * @max_mrs: out, most registrations one open file holds (TORUS_FEAT_MR)
 * @__reserved: out, 0
 * @max_mr_bytes: out, longest registration (TORUS_FEAT_MR)
 * @max_prog_descs: out, most descriptors in one program (TORUS_FEAT_PROGRAM)
 * @max_prog_counters: out, most counters in one program
 * @max_prog_fanout: out, most descriptors of a program waiting on one counter
 * @__reserved2: out, 0
 * @max_prog_bytes: out, kernel memory the programs of one open file may hold
 * @max_prog_timeout_ns: out, longest program timeout
 * The fields from @max_prog_descs on were added with TORUS_FEAT_PROGRAM: a
 * caller that knows only the older, shorter struct gets that prefix.
 */
struct torus_handshake {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 max_dims;
	__aligned_u64 features;
	__aligned_u64 ioctls;
	__u32 max_nodes;
	__u32 max_dim_size;
	__u32 max_segs;
	__u32 max_batch;
	__aligned_u64 max_matrix_bytes;
	__u32 max_mrs;
	__u32 __reserved;
	__aligned_u64 max_mr_bytes;
	__u32 max_prog_descs;
	__u32 max_prog_counters;
	__u32 max_prog_fanout;
	__u32 __reserved2;
	__aligned_u64 max_prog_bytes;
	__aligned_u64 max_prog_timeout_ns;
};
#define TORUS_IOC_HANDSHAKE _IO(TORUS_TYPE, TORUS_CMD_HANDSHAKE)

/* torus_fabric_create.flags */
#define TORUS_FABRIC_ONE_PORT (1U << 0) /* one send and one receive in flight per node */

/**
 * struct torus_fabric_create - TORUS_IOC_FABRIC_CREATE (ctl device)
 * @size: sizeof(struct torus_fabric_create)
 * @flags: TORUS_FABRIC_*
 * @ndims: 1..TORUS_MAX_DIMS
 * @wrap_mask: bit d set: dimension d wraps around (torus); clear: mesh
 * @dims: size of each dimension, 2..max_dim_size; entries >= ndims must be 0
 * @matrix_bytes: buffer matrix per node; 0 picks the default (1 MiB)
 * @ts_ns: virtual startup time per message
 * @tw_ps: virtual time per byte, in picoseconds
 * @hop_ns: virtual time per link crossed
 * @sq_depth: descriptors per port queue (sends and receives each); 0 = default
 * @fifo_bytes: receive FIFO capacity per port for unmatched messages; 0 = default
 * @cq_depth: completion queue entries per node; 0 = default
 * @__reserved: must be 0
 * @fabric_id: out, the new fabric's id
 * @nodes: out, number of nodes
 */
struct torus_fabric_create {
	__u32 size;
	__u32 flags;
	__u32 ndims;
	__u32 wrap_mask;
	__u32 dims[TORUS_MAX_DIMS];
	__aligned_u64 matrix_bytes;
	__aligned_u64 ts_ns;
	__aligned_u64 tw_ps;
	__aligned_u64 hop_ns;
	__u32 sq_depth;
	__u32 fifo_bytes;
	__u32 cq_depth;
	__u32 __reserved;
	__u32 fabric_id;
	__u32 nodes;
};
#define TORUS_IOC_FABRIC_CREATE _IO(TORUS_TYPE, TORUS_CMD_FABRIC_CREATE)

/**
 * struct torus_fabric_destroy - TORUS_IOC_FABRIC_DESTROY (ctl device)
 * @size: sizeof(struct torus_fabric_destroy)
 * @flags: must be 0
 * @fabric_id: fabric to destroy; EBUSY while any of its nodes is open
 * @__reserved: must be 0
 */
struct torus_fabric_destroy {
	__u32 size;
	__u32 flags;
	__u32 fabric_id;
	__u32 __reserved;
};
#define TORUS_IOC_FABRIC_DESTROY _IO(TORUS_TYPE, TORUS_CMD_FABRIC_DESTROY)

/* torus_fabric_query.flags */
#define TORUS_QUERY_RESET_STATS (1U << 0) /* reset makespan after reading it */

/**
 * struct torus_fabric_query - TORUS_IOC_FABRIC_QUERY (ctl and node devices)
 * @size: sizeof(struct torus_fabric_query)
 * @flags: TORUS_QUERY_*
 * @fabric_id: in on the ctl device; ignored (and set) on a node device
 * @ndims, @wrap_mask, @dims: out, the shape
 * @fabric_flags: out, the flags it was created with
 * @nodes: out
 * @open_nodes: out, nodes currently open
 * @sq_depth, @fifo_bytes, @cq_depth: out
 * @matrix_bytes, @ts_ns, @tw_ps, @hop_ns: out
 * @makespan_ns: out, latest virtual end time of any message so far
 * @next_fabric_id: out, smallest fabric id > @fabric_id that exists, or
 *	TORUS_NO_NODE; lets tools enumerate fabrics (query id 0 first; a
 *	missing id gives ENOENT but still fills @next_fabric_id)
 */
struct torus_fabric_query {
	__u32 size;
	__u32 flags;
	__u32 fabric_id;
	__u32 ndims;
	__u32 wrap_mask;
	__u32 fabric_flags;
	__u32 dims[TORUS_MAX_DIMS];
	__u32 nodes;
	__u32 open_nodes;
	__u32 sq_depth;
	__u32 fifo_bytes;
	__u32 cq_depth;
	__u32 next_fabric_id;
	__aligned_u64 matrix_bytes;
	__aligned_u64 ts_ns;
	__aligned_u64 tw_ps;
	__aligned_u64 hop_ns;
	__aligned_u64 makespan_ns;
};
#define TORUS_IOC_FABRIC_QUERY _IO(TORUS_TYPE, TORUS_CMD_FABRIC_QUERY)

/**
 * struct torus_node_query - TORUS_IOC_NODE_QUERY (node device)
 * @size: sizeof(struct torus_node_query)
 * @flags: must be 0
 * @fabric_id, @node_id: out
 * @ndims, @wrap_mask, @fabric_flags: out
 * @dims: out
 * @coords: out, this node's coordinates
 * @neighbors: out, node index behind each port, TORUS_NO_NODE off a mesh edge
 * @clock_ns: out, this node's virtual clock
 * @matrix_bytes: out, size of the buffer matrix (mmap length, page-rounded up)
 */
struct torus_node_query {
	__u32 size;
	__u32 flags;
	__u32 fabric_id;
	__u32 node_id;
	__u32 ndims;
	__u32 wrap_mask;
	__u32 fabric_flags;
	__u32 __reserved;
	__u32 dims[TORUS_MAX_DIMS];
	__u32 coords[TORUS_MAX_DIMS];
	__u32 neighbors[TORUS_MAX_PORTS];
	__aligned_u64 clock_ns;
	__aligned_u64 matrix_bytes;
};
#define TORUS_IOC_NODE_QUERY _IO(TORUS_TYPE, TORUS_CMD_NODE_QUERY)

/* A segment of the node's own buffer matrix. */
struct torus_seg {
	__aligned_u64 offset;
	__aligned_u64 length;
};

enum torus_op {
	TORUS_OP_SEND = 1,
	TORUS_OP_RECV = 2,
	TORUS_OP_PROG = 3, /* a program's completion (torus_cqe.op only) */
	TORUS_OP_SIGNAL = 4, /* program only: moves no data, see PROG_POST */
};

/*
 * A segment of the buffer matrix (key TORUS_KEY_MATRIX, offset into it) or
 * of a registration (key from MR_REG, offset from its registered address).
 * Used instead of struct torus_seg by descriptors with TORUS_DESC_SGE.
 */
struct torus_sge {
	__u32 key;
	__u32 __reserved; /* must be 0 */
	__aligned_u64 offset;
	__aligned_u64 length;
};
#define TORUS_KEY_MATRIX 0u

/* torus_desc.flags */
#define TORUS_SEND_ROUTE (1U << 0)  /* send: hops[] gives the route */
#define TORUS_RECV_ANY_TAG (1U << 1) /* recv: matches any tag */
#define TORUS_DESC_SGE (1U << 2)     /* @segs points to struct torus_sge */
#define TORUS_SEND_SYNC (1U << 3)    /* send: completes once a receive took it (see below) */
#define TORUS_DESC_ALL_FLAGS (TORUS_SEND_ROUTE | TORUS_RECV_ANY_TAG | TORUS_DESC_SGE | TORUS_SEND_SYNC)

#define TORUS_PORT_AUTO 0xffffffffu /* send: the port of the route's first hop */

/**
 * struct torus_desc - one descriptor of a TORUS_IOC_POST batch
 * @op: TORUS_OP_SEND or TORUS_OP_RECV
 * @flags: TORUS_SEND_ROUTE and TORUS_SEND_SYNC (send only),
 *	TORUS_RECV_ANY_TAG (recv only), TORUS_DESC_SGE (either)
 * @port: recv: the port the message arrives on (required).
 *	send: TORUS_PORT_AUTO or the port of the first hop (checked)
 * @nsegs: 1..max_segs entries at @segs
 * @dst_node: send: destination node index (not the sender itself); recv: must be 0
 * @__reserved: must be 0
 * @hops: send with TORUS_SEND_ROUTE: signed hops per dimension; otherwise 0
 * @tag: send: the message's tag; recv: the tag to match
 * @user_data: returned in the completion untouched
 * @segs: user pointer to @nsegs struct torus_seg, or struct torus_sge with
 *	TORUS_DESC_SGE (gather list for a send, scatter list for a receive);
 *	read at post time only. A registration a segment names is held (MR_DEREG
 *	is EBUSY) until the descriptor completes.
 * The message length is the sum of the segment lengths (1..max message).
 */
struct torus_desc {
	__u32 op;
	__u32 flags;
	__u32 port;
	__u32 nsegs;
	__u32 dst_node;
	__u32 __reserved;
	__s16 hops[TORUS_MAX_DIMS];
	__u32 __reserved2;
	__aligned_u64 tag;
	__aligned_u64 user_data;
	__aligned_u64 segs;
};

/**
 * struct torus_post - TORUS_IOC_POST (node device)
 * @size: sizeof(struct torus_post)
 * @flags: must be 0
 * @count: descriptors at @descs, 1..max_batch
 * @desc_size: sizeof(struct torus_desc) as the caller knows it (>= the
 *	kernel's minimum; a larger one must have a zero tail, else E2BIG)
 * @descs: user pointer to @count descriptors, @desc_size bytes apart
 * @posted: out, how many were accepted. Descriptors are validated in order;
 *	the first invalid one stops the batch and its errno is returned (those
 *	before it stay posted, and @posted says how many)
 * @__reserved: must be 0
 */
struct torus_post {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 desc_size;
	__aligned_u64 descs;
	__u32 posted;
	__u32 __reserved;
};
#define TORUS_IOC_POST _IO(TORUS_TYPE, TORUS_CMD_POST)

/* torus_cqe.flags */
#define TORUS_CQE_OVERFLOW (1U << 0) /* completions were lost before this one */
#define TORUS_CQE_PROG (1U << 1)     /* a descriptor of a program, which failed */

/**
 * struct torus_cqe - one completion
 * @user_data: from the descriptor
 * @tag: send: its tag; recv: the matched message's tag
 * @op: TORUS_OP_*
 * @port: the port (send: first hop; recv: arrival port)
 * @status: 0 or a negative errno (see the header comment)
 * @bytes: bytes moved
 * @peer: recv: the sending node; send: the destination node
 * @flags: TORUS_CQE_*
 * @t_start_ns, @t_end_ns: virtual start and end of the message
 * A program's own completion (op TORUS_OP_PROG) has the program's
 * @user_data, @status 0 or the first failure's (see PROG_POST), @peer the
 * index of the descriptor that failed or that it still waited for
 * (TORUS_NO_NODE when it succeeded), @bytes the number of its descriptors
 * that completed successfully, @tag and @port 0, and the earliest start and
 * latest end of its messages.
 */
struct torus_cqe {
	__aligned_u64 user_data;
	__aligned_u64 tag;
	__u32 op;
	__u32 port;
	__s32 status;
	__u32 bytes;
	__u32 peer;
	__u32 flags;
	__aligned_u64 t_start_ns;
	__aligned_u64 t_end_ns;
};

/**
 * struct torus_cq_wait - TORUS_IOC_CQ_WAIT (node device)
 * @size: sizeof(struct torus_cq_wait)
 * @flags: must be 0
 * @min_entries: wait until at least this many are ready (0: do not wait)
 * @max_entries: capacity of @entries
 * @timeout_ns: longest wait; 0 = do not wait, ~0ULL = forever
 * @entries: user pointer to @max_entries entries, @entry_size apart
 * @entry_size: sizeof(struct torus_cqe) as the caller knows it
 * @count: out, entries written (also written on ETIMEDOUT / EINTR)
 */
struct torus_cq_wait {
	__u32 size;
	__u32 flags;
	__u32 min_entries;
	__u32 max_entries;
	__aligned_u64 timeout_ns;
	__aligned_u64 entries;
	__u32 entry_size;
	__u32 count;
};
#define TORUS_IOC_CQ_WAIT _IO(TORUS_TYPE, TORUS_CMD_CQ_WAIT)

/* Counters of one directed link: the link leaving a node on one port. */
struct torus_link_counters {
	__aligned_u64 messages; /* messages that crossed it (first hop or pass-through) */
	__aligned_u64 bytes;
	__aligned_u64 busy_ns; /* virtual time it was held */
	/* messages it could not carry from their ready time, or that waited for FIFO credit */
	__aligned_u64 stalls;
};

struct torus_node_counters {
	__aligned_u64 posted;
	__aligned_u64 completed;
	__aligned_u64 errors;
	__aligned_u64 cq_overflows;
};

/* torus_counters.flags */
#define TORUS_COUNTERS_RESET (1U << 0) /* zero them after reading (whole fabric on ctl) */

/**
 * struct torus_counters - TORUS_IOC_COUNTERS (node device: that node; ctl
 *	device: node @node_id of fabric @fabric_id)
 * @size: sizeof(struct torus_counters)
 * @flags: TORUS_COUNTERS_*
 * @fabric_id, @node_id: in on the ctl device; out on a node device
 * @node: out
 * @links: out, the links leaving the node on ports 0..2*ndims-1
 */
struct torus_counters {
	__u32 size;
	__u32 flags;
	__u32 fabric_id;
	__u32 node_id;
	struct torus_node_counters node;
	struct torus_link_counters links[TORUS_MAX_PORTS];
};
#define TORUS_IOC_COUNTERS _IO(TORUS_TYPE, TORUS_CMD_COUNTERS)

/* torus_link_fault.flags */
#define TORUS_FAULT_DOWN (1U << 0)  /* sends needing the link complete with -ENOLINK */
#define TORUS_FAULT_DROP (1U << 1)  /* the next @drop_count messages vanish */
#define TORUS_FAULT_DELAY (1U << 2) /* add @delay_ns real and virtual latency */
#define TORUS_FAULT_ALL_FLAGS (TORUS_FAULT_DOWN | TORUS_FAULT_DROP | TORUS_FAULT_DELAY)

/**
 * struct torus_link_fault - TORUS_IOC_LINK_FAULT (ctl device): set the fault
 *	state of the link leaving node @node_id on @port; flags 0 clears it
 * @size, @flags: as usual; @flags a TORUS_FAULT_* mask
 * @fabric_id, @node_id, @port: the link
 * @drop_count: with TORUS_FAULT_DROP
 * @delay_ns: with TORUS_FAULT_DELAY
 */
struct torus_link_fault {
	__u32 size;
	__u32 flags;
	__u32 fabric_id;
	__u32 node_id;
	__u32 port;
	__u32 drop_count;
	__aligned_u64 delay_ns;
};
#define TORUS_IOC_LINK_FAULT _IO(TORUS_TYPE, TORUS_CMD_LINK_FAULT)

/* torus_mr_reg.flags */
#define TORUS_MR_WRITE (1U << 0) /* receives may write into it (pinned for writing) */

/**
 * struct torus_mr_reg - TORUS_IOC_MR_REG (node device): pin a range of the
 *	caller's memory for descriptors posted on this file (TORUS_DESC_SGE)
 * @size: sizeof(struct torus_mr_reg)
 * @flags: TORUS_MR_* (0: read-only, sends only)
 * @addr: start of the range, any alignment
 * @length: bytes, 1..max_mr_bytes
 * @key: out, the registration's key (never TORUS_KEY_MATRIX); keys are not
 *	reused until max_mrs later registrations
 * @__reserved: must be 0
 */
struct torus_mr_reg {
	__u32 size;
	__u32 flags;
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 key;
	__u32 __reserved;
};
#define TORUS_IOC_MR_REG _IO(TORUS_TYPE, TORUS_CMD_MR_REG)

/**
 * struct torus_mr_dereg - TORUS_IOC_MR_DEREG (node device): unpin a
 *	registration; EBUSY while a descriptor using it has not completed
 * @size: sizeof(struct torus_mr_dereg)
 * @flags: must be 0
 * @key: from TORUS_IOC_MR_REG
 * @__reserved: must be 0
 */
struct torus_mr_dereg {
	__u32 size;
	__u32 flags;
	__u32 key;
	__u32 __reserved;
};
#define TORUS_IOC_MR_DEREG _IO(TORUS_TYPE, TORUS_CMD_MR_DEREG)

/* torus_prog_desc: no counter */
#define TORUS_PROG_NO_COUNTER 0xffffffffu

/**
 * struct torus_prog_desc - one descriptor of a program (TORUS_IOC_PROG_POST)
 * @desc: the descriptor, with the rules of TORUS_IOC_POST
 * @wait_counter: TORUS_PROG_NO_COUNTER: it is queued at once; else it is
 *	queued when this counter reaches @wait_threshold
 * @wait_threshold: with @wait_counter, 1 up to the number of descriptors
 *	before this one that signal @wait_counter; else 0
 * @signal_counter: TORUS_PROG_NO_COUNTER, or a counter that this
 *	descriptor's successful completion adds 1 to
 * @__reserved: must be 0
 */
struct torus_prog_desc {
	struct torus_desc desc;
	__u32 wait_counter;
	__u32 wait_threshold;
	__u32 signal_counter;
	__u32 __reserved;
};

/**
 * struct torus_prog_post - TORUS_IOC_PROG_POST (node device): post a
 *	program, descriptors that wait on counters and signal them, in one call
 * @size: sizeof(struct torus_prog_post)
 * @flags: 0 or TORUS_PROG_QUEUE_ONLY (TORUS_FEAT_PROG_QUEUE_ONLY)
 * @count: descriptors at @descs, 1..max_prog_descs
 * @desc_size: sizeof(struct torus_prog_desc) as the caller knows it (>= the
 *	kernel's; a larger one must have a zero tail, else E2BIG)
 * @descs: user pointer to @count descriptors, @desc_size bytes apart
 * @ncounters: counters of the program, 0..max_prog_counters, all start at 0
 * @error_index: out, on EINVAL, E2BIG, EOPNOTSUPP, EFAULT, ENOENT or
 *	EACCES from a descriptor: its index; else TORUS_NO_NODE
 * @user_data: returned in the program's completion
 * @timeout_ns: the program fails with -ETIMEDOUT if it has not completed
 *	this long after the post (wall clock); 0 = no timeout; at most
 *	max_prog_timeout_ns
 * A descriptor whose desc.op is TORUS_OP_SIGNAL (TORUS_FEAT_PROG_SIGNAL)
 * must have a wait counter and a signal counter and every other field of
 * desc 0 (else EINVAL).
 */
/*
 * torus_prog_post flags: the post only queues the program and kicks the
 * engines it gave work (their work items); the caller runs none of them
 * itself, so the ioctl returns once the program is checked and queued.
 * Without it the poster runs the engines of its node's ports itself first
 * (faster for a caller that waits for the program next).
 */
#define TORUS_PROG_QUEUE_ONLY (1U << 0)

struct torus_prog_post {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 desc_size;
	__aligned_u64 descs;
	__u32 ncounters;
	__u32 error_index;
	__aligned_u64 user_data;
	__aligned_u64 timeout_ns;
};
#define TORUS_IOC_PROG_POST _IO(TORUS_TYPE, TORUS_CMD_PROG_POST)

#endif /* _UAPI_TORUS_H */
