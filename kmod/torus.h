/* SPDX-License-Identifier: GPL-2.0 */
/*
 * torus: private header of torus.ko. Grouped by the file defining each symbol.
 *
 * Objects and lifetime
 *   torus_fabric	kref; the registry holds one, every open node file one.
 *   torus_node		lives inside its fabric's node array.
 *   torus_matrix	kref; the node (while open), every mmap and every queued
 *			descriptor hold one, so DMA never touches freed memory.
 *   torus_kdesc	owned by whichever queue it is on (queue.c), or by the
 *			engine that claimed it (off every list) until it
 *			completes.
 *   torus_file	one per open node file (file->private_data): its node and
 *			its registrations; freed at release, after its
 *			programs ended.
 *   torus_prog	a posted program (prog.c): on its node's progs list from
 *			post to its end (its completion), under fab->lock; it
 *			owns its descriptors not yet queued and those taken
 *			back, and frees them in a work item after its end.
 *   torus_mr		kref; the file's table holds one, every segment of a
 *			queued or moving descriptor that names it one. Its pages
 *			stay pinned (and charged to the registering mm) until
 *			the last reference goes, so an engine never copies to or
 *			from an unpinned page, whatever the process does.
 *
 * Lock order: torus_registry_lock (mutex) -> fabric->lock -> node->cq.lock.
 * A file's mrs xa_lock nests inside nothing and takes nothing.
 */
#ifndef _TORUS_H
#define _TORUS_H

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <uapi/torus.h>

#include "torus_param.h"

struct torus_fabric;
struct torus_node;

struct torus_matrix {
	struct kref ref;
	void *vaddr;		/* vmalloc_user() memory */
	size_t size;		/* page-rounded */
};

/* A registration: user pages pinned by TORUS_IOC_MR_REG. */
struct torus_mr {
	struct kref ref;
	atomic_t inflight;		/* descriptor segments naming it, not yet freed */
	struct mm_struct *mm;		/* registering process: mmgrab()bed, pinned_vm charged */
	struct page **pages;		/* npages pinned pages, the first holds addr */
	unsigned long npages;
	u64 addr;			/* user address registered (any alignment) */
	u64 length;
	u32 key;
	bool writable;			/* TORUS_MR_WRITE: pinned FOLL_WRITE, dirtied at unpin */
};

/* One open file of a node device. */
struct torus_file {
	struct torus_node *node;
	/*
	 * key -> struct torus_mr. Its xa_lock protects the table and orders a
	 * post's hold on a registration (torus_mr_hold: inflight++) against
	 * MR_DEREG's check of inflight and erase (torus_mr_dereg).
	 */
	struct xarray mrs;
	u32 next_key;			/* cyclic key cursor, under the mrs xa_lock */
	atomic_t progs;			/* its programs not yet freed (prog.c) */
	u64 prog_bytes;			/* memory its programs hold, under fab->lock */
};

/*
 * A segment in kernel form: @mr NULL is the buffer matrix (or, for the
 * engine's FIFO copies, a flat kernel buffer), @offset into it; else
 * @offset from the registration's address. One reference on @mr.
 */
struct torus_kseg {
	struct torus_mr *mr;
	u64 offset;
	u64 length;
};

/* A posted descriptor, kernel copy. Sends carry their route. */
struct torus_kdesc {
	struct list_head list;		/* on an engine txq or rdq, or a port rxq */
	struct torus_node *node;	/* poster */
	struct torus_file *file;	/* posting file: compared, never dereferenced */
	struct torus_matrix *mx;	/* poster's matrix, one reference */
	bool has_mr;			/* a segment names a registration */
	bool mr_inflight;		/* its segments still count in their mrs' inflight */
	u64 tag;
	u64 user_data;
	u64 clock_ns;			/* send: poster's node clock at post */
	u64 len;			/* sum of segment lengths */
	u32 op;				/* TORUS_OP_* */
	u32 flags;			/* TORUS_SEND_ROUTE, TORUS_RECV_ANY_TAG */
	u32 port;			/* send: first hop; recv: arrival port */
	u32 dst;			/* send: destination node */
	u32 arrival;			/* send: port it arrives on at dst */
	u32 nsegs;
	u32 nhops;
	bool stalled;			/* send: already counted one stall */
	struct torus_fifo_msg *park;	/* TORUS_SEND_SYNC: its by-reference FIFO entry */
	struct torus_fifo_msg *match;	/* recv on an engine's rdq: the message it claimed */
	bool delayed;			/* send: DELAY fault already waited */
	struct torus_prog *prog;	/* its program, or NULL */
	u32 prog_index;			/* its index in the program */
	u32 wait_counter;		/* program: TORUS_PROG_NO_COUNTER or the counter it waits on */
	u32 wait_threshold;
	u32 signal_counter;		/* program: TORUS_PROG_NO_COUNTER or the counter it adds 1 to */
	u32 *route;			/* send: nhops link ids, in the tail */
	struct torus_kseg segs[];	/* nsegs entries (each holding its mr), then route[] */
};

/*
 * A message parked in a receive FIFO (no matching receive yet): its bytes
 * in @data, or, for a TORUS_SEND_SYNC send, the send itself (@send, which
 * owns this entry, data[] empty), then also on the sender's node->parked.
 */
struct torus_fifo_msg {
	struct list_head list;		/* on port->fifo, arrival order */
	struct list_head park_entry;	/* by reference: on the sender's node->parked */
	struct torus_kdesc *send;	/* by reference: the waiting send, else NULL */
	u64 tag;
	u64 t_start_ns;
	u64 t_end_ns;
	u32 src;
	u32 len;
	u8 data[];
};

/*
 * The virtual-time calendar of one resource of the timing model (a link, a
 * one-port node's send or receive engine): when it is taken. busy[0..count)
 * are disjoint [start, end) intervals sorted by start, all at or after
 * floor_ns; the time before floor_ns counts as taken (intervals forgotten to
 * make room, counters.c). Protected by fabric->lock.
 */
struct torus_cal {
	u64 floor_ns;
	u32 count;
	struct {
		u64 start_ns;
		u64 end_ns;
	} busy[TORUS_CAL_SLOTS];
};

/* One directed link: the link leaving a node on a port. */
struct torus_link {
	struct torus_cal cal;		/* when messages hold it, virtual time */
	struct torus_link_counters cnt;
	u32 fault_flags;		/* TORUS_FAULT_* */
	u32 drop_count;
	u64 delay_ns;
};

/*
 * A transmit DMA engine. All-port fabrics: one per port. One-port fabrics:
 * one per node (node->eng1) serving every port in post order.
 */
struct torus_engine {
	struct torus_node *node;
	struct delayed_work dwork;	/* runs torus_engine_work() */
	struct list_head txq;		/* queued sends, post order */
	struct list_head rdq;		/* receives holding a claimed FIFO message (->match) */
	struct list_head wait_entry;	/* on a port's or node's waiters while stalled */
	/* protected by fab->lock: one runner at a time, work item or poster */
	bool busy;			/* a runner is taking steps */
	bool rekick;			/* kicked while busy: run again after */
};

struct torus_port {
	u32 neighbor;			/* TORUS_NO_NODE off a mesh edge */
	u32 sq_count;			/* sends queued with this first hop */
	u32 rq_count;			/* receives queued on rxq */
	struct list_head rxq;		/* posted receives, oldest first */
	struct list_head fifo;		/* unmatched arrived messages */
	u32 fifo_used;			/* credits in use, bytes */
	struct list_head waiters;	/* engines stalled on this port's FIFO */
	struct torus_engine eng;	/* all-port engine of this port */
	struct torus_link link;		/* link leaving on this port */
};

struct torus_cq {
	struct mutex reap_lock;		/* one reaper at a time: entries leave only once copied out */
	spinlock_t lock;		/* protects the fields below and node->cnt, node->clock_ns */
	wait_queue_head_t wq;		/* CQ_WAIT sleepers, poll, close drain */
	struct torus_cqe *ring;
	u32 depth;
	u32 head;			/* oldest ready entry */
	u32 count;			/* ready entries */
	u32 reserved;			/* slots promised to queued descriptors */
	bool overflow;			/* flag the next entry TORUS_CQE_OVERFLOW */
};

struct torus_node {
	struct torus_fabric *fab;
	u32 id;
	u32 minor;
	u32 coords[TORUS_MAX_DIMS];
	struct device *dev;
	struct dentry *dbg;
	/* protected by torus_registry_lock */
	u32 open_count;
	struct torus_matrix *mx;	/* allocated at first open */
	/* protected by fab->lock */
	bool active;			/* open: completions are delivered */
	bool ever_opened;		/* a session ended: sends to it while closed fail */
	bool rx_busy;			/* one-port: a receive is in flight */
	struct list_head rx_waiters;	/* one-port: engines waiting for rx_busy */
	struct torus_cal send_cal;	/* one-port: when the send engine is taken */
	struct torus_cal recv_cal;	/* one-port: when the receive engine is taken */
	struct list_head parked;	/* its sync sends waiting by reference (park_entry) */
	struct list_head progs;		/* its programs not yet ended (torus_prog.entry) */
	/* protected by cq.lock */
	u64 clock_ns;
	struct torus_node_counters cnt;
	struct torus_cq cq;
	struct torus_engine eng1;	/* one-port engine */
	struct torus_port ports[TORUS_MAX_PORTS];
};

struct torus_fabric {
	struct kref ref;
	struct list_head list;		/* torus_fabrics, under torus_registry_lock */
	u32 id;
	u32 flags;			/* TORUS_FABRIC_* */
	u32 ndims;
	u32 wrap_mask;
	u32 dims[TORUS_MAX_DIMS];
	u32 strides[TORUS_MAX_DIMS];
	u32 nodes;
	u32 nports;			/* 2 * ndims */
	u64 matrix_bytes;		/* page-rounded */
	u64 ts_ns;
	u64 tw_ps;
	u64 hop_ns;
	u32 sq_depth;
	u32 fifo_bytes;
	u32 cq_depth;
	u32 open_nodes;			/* under torus_registry_lock */
	/*
	 * Protects every queue (engine txq, port rxq/fifo/waiters, node parked, counts),
	 * link calendars/counters/faults, node active/rx_busy/one-port
	 * calendars and makespan. Never held across a copy or anything that sleeps.
	 */
	spinlock_t lock;
	u64 makespan_ns;
	struct workqueue_struct *wq;	/* unbound, runs the engines */
	struct dentry *dbg;
	struct torus_node *node;	/* nodes entries */
};

static inline bool torus_one_port(const struct torus_fabric *f)
{
	return f->flags & TORUS_FABRIC_ONE_PORT;
}

static inline struct torus_link *torus_link_of(struct torus_fabric *f, u32 id)
{
	return &f->node[id / TORUS_MAX_PORTS].ports[id % TORUS_MAX_PORTS].link;
}

static inline u32 torus_link_id(u32 node, u32 port)
{
	return node * TORUS_MAX_PORTS + port;
}

/* The engine that sends on @port of @n (the node's one engine on one-port fabrics). */
static inline struct torus_engine *torus_node_engine(struct torus_node *n, u32 port)
{
	return torus_one_port(n->fab) ? &n->eng1 : &n->ports[port].eng;
}

/* Receive @r takes a message tagged @tag (posting and the FIFO both match). */
static inline bool torus_tag_matches(const struct torus_kdesc *r, u64 tag)
{
	return (r->flags & TORUS_RECV_ANY_TAG) || r->tag == tag;
}

/*
 * A program: descriptors that wait on and signal counters (PROG_POST).
 * Every field is protected by fab->lock, except the work items.
 */
struct torus_prog {
	struct list_head entry;		/* on node->progs until its end */
	struct torus_node *node;
	struct torus_file *file;	/* poster; its release waits until this is freed */
	struct delayed_work abort_work;	/* timeout, or abort after a failure */
	struct work_struct free_work;	/* after the end: frees @held and itself */
	struct list_head held;		/* descriptors taken back (aborted), freed with it */
	struct list_head spent;		/* TORUS_OP_SIGNAL descriptors that ran, freed with it */
	struct list_head *waiters;	/* per counter: its descriptors not yet queued */
	u32 *count;			/* per counter: signals so far */
	u64 *ready_ns;			/* per counter: latest end time signalled */
	u32 ncounters;
	u32 ndescs;
	u32 unqueued;			/* descriptors still waiting on a counter */
	u32 out;			/* queued (or moving) and not completed */
	u32 done;			/* completed successfully */
	u32 slots;			/* CQ slots it still holds */
	u32 failed_index;		/* first failed or waited-for descriptor */
	int status;			/* first failure, or why it was aborted */
	bool aborted;			/* taken off the queues: nothing more fires */
	bool ended;			/* its completion is written */
	u64 user_data;
	u64 t_start_ns, t_end_ns;	/* over its completed messages */
	u64 bytes;			/* charged to file->prog_bytes */
	struct torus_mr **mrs;		/* the registrations its descriptors name (compared only) */
	u32 nmrs, cap_mrs;
};

/* main.c */
extern struct dentry *torus_debugfs_root;
extern int torus_engine_inline;

/* fabric.c */
extern struct mutex torus_registry_lock;
int torus_fabric_create(struct torus_fabric_create *c);
int torus_fabric_destroy(u32 id);
struct torus_fabric *__torus_fabric_find(u32 id);
u32 __torus_fabric_next_id(u32 id);
void torus_fabric_put(struct torus_fabric *f);
void torus_fabric_destroy_all(void);
void torus_fabric_fill_query(struct torus_fabric *f, struct torus_fabric_query *q);

/* node.c */
int torus_node_init(void);
void torus_node_exit(void);
int torus_node_devices_add(struct torus_fabric *f);
void torus_node_devices_del(struct torus_fabric *f);
void torus_node_fill_query(struct torus_node *n, struct torus_node_query *q);

/* matrix.c */
struct torus_matrix *torus_matrix_alloc(size_t bytes);
void torus_matrix_get(struct torus_matrix *mx);
void torus_matrix_put(struct torus_matrix *mx);
int torus_matrix_mmap(struct torus_matrix *mx, struct vm_area_struct *vma);
void torus_copy_segs(void *dbase, const struct torus_kseg *dsegs, u32 dn,
		     void *sbase, const struct torus_kseg *ssegs, u32 sn, u64 len);

/* mr.c */
void torus_file_mrs_init(struct torus_file *tf);
void torus_file_mrs_destroy(struct torus_file *tf);
int torus_mr_reg(struct torus_file *tf, struct torus_mr_reg *r);
int torus_mr_dereg(struct torus_file *tf, u32 key);
struct torus_mr *torus_mr_hold(struct torus_file *tf, u32 key);
void torus_mr_done(struct torus_mr *mr);
void torus_mr_put(struct torus_mr *mr);

/* post.c */
struct torus_kdesc *torus_kdesc_signal_new(struct torus_file *tf, size_t *bytes);
struct torus_kdesc *torus_kdesc_new(struct torus_file *tf, const struct torus_desc *ud,
				    size_t *bytes);
int torus_post(struct torus_file *tf, struct torus_post *p);

/* prog.c */
int torus_prog_post(struct torus_file *tf, struct torus_prog_post *pp);
void __torus_prog_desc_done(struct torus_kdesc *d, const struct torus_cqe *e);
void torus_prog_cancel_file(struct torus_file *tf);
int torus_prog_cancel_mr(struct torus_file *tf, struct torus_mr *mr);

/* queue.c */
void __torus_kdesc_mrs_done(struct torus_kdesc *d);
void torus_kdesc_drop_mrs(struct torus_kdesc *d);
void torus_kdesc_free(struct torus_kdesc *d);
void torus_kdesc_free_list(struct list_head *list);
void __torus_complete(struct torus_kdesc *d, int status, u64 bytes, u32 peer, u64 tag,
		      u64 t_start, u64 t_end);
struct torus_kdesc *__torus_claim_recv(struct torus_port *rp, u64 tag);
struct torus_fifo_msg *__torus_claim_msg(struct torus_port *rp, struct torus_kdesc *r);
int __torus_queue(struct torus_node *n, struct torus_kdesc *d, bool *kick);
void __torus_queue_counted(struct torus_node *n, struct torus_kdesc *d, bool *kick);
u32 __torus_unqueue_prog(struct torus_node *n, struct torus_prog *p, struct list_head *dead);
void __torus_unqueue_send(struct torus_kdesc *d);
void __torus_unqueue_all(struct torus_node *n, struct list_head *dead);
void __torus_unqueue_file_mrs(struct torus_node *n, struct torus_file *tf, struct list_head *dead);
void __torus_unpark(struct torus_node *n, struct torus_file *tf, struct list_head *dead);
void __torus_fifo_drop(struct torus_port *p, struct list_head *dead_msgs, struct list_head *refused);
void torus_fifo_free_all(struct torus_fabric *f);

/* engine.c */
void torus_engine_init(struct torus_engine *eng, struct torus_node *n);
void torus_engine_kick(struct torus_engine *eng);
void torus_engine_work(struct work_struct *work);
void torus_engine_doorbell(struct torus_node *n, u32 kick, bool may_run);
void __torus_wake_waiters(struct list_head *waiters);
void torus_node_quiesce(struct torus_node *n);
void torus_file_cancel(struct torus_file *tf);

/* fault.c */
int torus_link_fault_set(struct torus_fabric *f, const struct torus_link_fault *lf);

/* route.c */
void torus_coords(const struct torus_fabric *f, u32 node, u32 *coords);
u32 torus_neighbor(const struct torus_fabric *f, u32 node, u32 port);
int torus_route(const struct torus_fabric *f, u32 src, u32 dst, const s16 *hops,
		u32 *route, u32 *nhops, u32 *arrival);
u32 torus_route_max_hops(const struct torus_fabric *f, bool explicit_route);

/* cq.c */
int torus_cq_init(struct torus_cq *cq, u32 depth);
void torus_cq_free(struct torus_cq *cq);
int torus_cq_reserve(struct torus_node *n);
void torus_cq_unreserve(struct torus_node *n);
int torus_cq_reserve_n(struct torus_node *n, u32 k);
void __torus_cq_release(struct torus_node *n, u32 k);
void torus_cq_complete(struct torus_node *n, const struct torus_cqe *e);
void torus_cq_drain(struct torus_node *n);
int torus_cq_wait(struct torus_node *n, struct torus_cq_wait *w);
__poll_t torus_cq_poll(struct torus_node *n, struct file *file, poll_table *pt);

/* counters.c */
void __torus_charge(struct torus_fabric *f, struct torus_kdesc *d, struct torus_node *dst,
		    u64 extra_ns, u64 *t_start, u64 *t_end);
u64 torus_cal_free_ns(const struct torus_cal *c);
void torus_counters_read(struct torus_node *n, struct torus_counters *c, bool reset);
void torus_counters_reset_fabric(struct torus_fabric *f);
void torus_clocks_reset(struct torus_fabric *f);

/* ioctl.c */
long torus_ctl_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
long torus_node_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* debugfs.c */
void torus_debugfs_fabric_add(struct torus_fabric *f);
void torus_debugfs_fabric_del(struct torus_fabric *f);

#endif /* _TORUS_H */
