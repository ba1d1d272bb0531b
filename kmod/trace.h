/* SPDX-License-Identifier: GPL-2.0 */
/*
 * torus: tracepoints, per port: a descriptor posted, a send starting to
 * move, a completion, and a completion with an error status. Read them
 * with ftrace (echo 1 >/sys/kernel/tracing/events/torus/enable) or
 * `perf trace -e 'torus:*'`, to see where an exchange is stuck.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM torus

#if !defined(_TORUS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TORUS_TRACE_H

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(torus_desc_class,
	TP_PROTO(u32 fabric, u32 node, u32 port, u32 op, u32 peer, u64 tag, u64 bytes),
	TP_ARGS(fabric, node, port, op, peer, tag, bytes),
	TP_STRUCT__entry(
		__field(u32, fabric)
		__field(u32, node)
		__field(u32, port)
		__field(u32, op)
		__field(u32, peer)
		__field(u64, tag)
		__field(u64, bytes)
	),
	TP_fast_assign(
		__entry->fabric = fabric;
		__entry->node = node;
		__entry->port = port;
		__entry->op = op;
		__entry->peer = peer;
		__entry->tag = tag;
		__entry->bytes = bytes;
	),
	TP_printk("fabric=%u node=%u port=%u op=%s peer=%u tag=%llu bytes=%llu",
		  __entry->fabric, __entry->node, __entry->port,
		  __entry->op == 1 ? "send" : "recv", __entry->peer, __entry->tag, __entry->bytes)
);

/* A descriptor was queued (peer: the destination of a send, 0 for a receive). */
DEFINE_EVENT(torus_desc_class, torus_post,
	TP_PROTO(u32 fabric, u32 node, u32 port, u32 op, u32 peer, u64 tag, u64 bytes),
	TP_ARGS(fabric, node, port, op, peer, tag, bytes));

/* A send got its route and credits and starts moving. */
DEFINE_EVENT(torus_desc_class, torus_start,
	TP_PROTO(u32 fabric, u32 node, u32 port, u32 op, u32 peer, u64 tag, u64 bytes),
	TP_ARGS(fabric, node, port, op, peer, tag, bytes));

DECLARE_EVENT_CLASS(torus_cqe_class,
	TP_PROTO(u32 fabric, u32 node, u32 port, u32 op, u32 peer, u64 tag, u64 bytes, int status,
		 u64 t_start, u64 t_end),
	TP_ARGS(fabric, node, port, op, peer, tag, bytes, status, t_start, t_end),
	TP_STRUCT__entry(
		__field(u32, fabric)
		__field(u32, node)
		__field(u32, port)
		__field(u32, op)
		__field(u32, peer)
		__field(int, status)
		__field(u64, tag)
		__field(u64, bytes)
		__field(u64, t_start)
		__field(u64, t_end)
	),
	TP_fast_assign(
		__entry->fabric = fabric;
		__entry->node = node;
		__entry->port = port;
		__entry->op = op;
		__entry->peer = peer;
		__entry->status = status;
		__entry->tag = tag;
		__entry->bytes = bytes;
		__entry->t_start = t_start;
		__entry->t_end = t_end;
	),
	TP_printk("fabric=%u node=%u port=%u op=%s peer=%u tag=%llu bytes=%llu status=%d vt=%llu..%llu",
		  __entry->fabric, __entry->node, __entry->port,
		  __entry->op == 1 ? "send" : "recv", __entry->peer, __entry->tag, __entry->bytes,
		  __entry->status, __entry->t_start, __entry->t_end)
);

/* Every completion entry written (or counted for a closed node). */
DEFINE_EVENT(torus_cqe_class, torus_complete,
	TP_PROTO(u32 fabric, u32 node, u32 port, u32 op, u32 peer, u64 tag, u64 bytes, int status,
		 u64 t_start, u64 t_end),
	TP_ARGS(fabric, node, port, op, peer, tag, bytes, status, t_start, t_end));

/* The completions among them with a non-zero status. */
DEFINE_EVENT(torus_cqe_class, torus_error,
	TP_PROTO(u32 fabric, u32 node, u32 port, u32 op, u32 peer, u64 tag, u64 bytes, int status,
		 u64 t_start, u64 t_end),
	TP_ARGS(fabric, node, port, op, peer, tag, bytes, status, t_start, t_end));

#endif /* _TORUS_TRACE_H */

/* Found through the module's -I$(src)/include (Kbuild): include/../kmod/, this header */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH ../kmod
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
