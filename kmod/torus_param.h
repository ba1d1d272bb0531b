/* SPDX-License-Identifier: GPL-2.0 */
/*
 * torus: every limit and default of the NIC model in one place.
 * The handshake reports the user-visible ones; ioctl.c checks them at the edge.
 */
#ifndef _TORUS_PARAM_H
#define _TORUS_PARAM_H

#include <linux/sizes.h>

/* Shape */
#define TORUS_MAX_NODES		4096
#define TORUS_MIN_DIM_SIZE	2
#define TORUS_MAX_DIM_SIZE	64
#define TORUS_MAX_FABRICS	256

/* Char device minors shared by the nodes of every fabric */
#define TORUS_MAX_MINORS	(1U << 16)

/* Buffer matrix per node */
#define TORUS_DEFAULT_MATRIX_BYTES	SZ_1M
#define TORUS_MAX_MATRIX_BYTES		SZ_64M

/* Descriptors */
#define TORUS_MAX_SEGS		64
#define TORUS_MAX_BATCH		256
#define TORUS_MAX_MSG_BYTES	TORUS_MAX_MATRIX_BYTES

/* Programs (PROG_POST): per program, and kernel memory per open file */
#define TORUS_MAX_PROG_DESCS		4096
#define TORUS_MAX_PROG_COUNTERS		4096
#define TORUS_MAX_PROG_FANOUT		256
#define TORUS_MAX_PROG_BYTES		SZ_64M
#define TORUS_MAX_PROG_TIMEOUT_NS	3600000000000ULL	/* 1 h */

/* Memory registration: per open file, per registration */
#define TORUS_MAX_MRS		65536
#define TORUS_MAX_MR_BYTES	SZ_1G
/* Pages pinned per pin_user_pages_fast() call (one page of page pointers) */
#define TORUS_PIN_CHUNK		(PAGE_SIZE / sizeof(struct page *))

/* Queues: per port send and receive queue depth, per node CQ, per port FIFO */
#define TORUS_DEFAULT_SQ_DEPTH	256
#define TORUS_MAX_SQ_DEPTH	4096
#define TORUS_DEFAULT_CQ_DEPTH	4096
#define TORUS_MAX_CQ_DEPTH	65536
#define TORUS_DEFAULT_FIFO_BYTES	SZ_256K
#define TORUS_MAX_FIFO_BYTES	SZ_64M

/* Timing model bounds (keep every product well inside u64) */
#define TORUS_MAX_TS_NS		1000000000ULL	/* 1 s per message */
#define TORUS_MAX_TW_PS		1000000ULL	/* 1 us per byte */
#define TORUS_MAX_HOP_NS	1000000ULL	/* 1 ms per link */
#define TORUS_DEFAULT_TS_NS	1000
#define TORUS_DEFAULT_TW_PS	100
#define TORUS_DEFAULT_HOP_NS	20
/*
 * Busy intervals the timing model keeps per link and per one-port send and
 * receive engine (struct torus_cal, counters.c): 16 bytes each, 14 calendars
 * (TORUS_MAX_PORTS links and two engines) in every node, ~3.6 KiB a node
 */
#define TORUS_CAL_SLOTS		16

/* Fault knobs */
#define TORUS_MAX_FAULT_DELAY_NS	1000000000ULL	/* 1 s */

/* Engine: descriptors one work item run handles before yielding the CPU */
#define TORUS_ENGINE_BUDGET	64
/* Bytes copied between cond_resched() calls */
#define TORUS_COPY_CHUNK	SZ_1M

/* CQ entries copied to userspace per lock round in TORUS_IOC_CQ_WAIT */
#define TORUS_CQ_REAP_CHUNK	8

#endif /* _TORUS_PARAM_H */
