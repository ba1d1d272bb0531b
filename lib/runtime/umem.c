// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A call's user memory: whether a collective runs from and into the
 * caller's own buffers (zero copy), and their registrations for that call.
 *
 * The transport (the device with memory registration) pins a range and names
 * it by a key, and its engines then copy straight from the sender's pages to
 * the receiver's. A pinning is a snapshot of the mapping: memory freed and
 * allocated again at the same address is other memory, which the old pinning
 * does not see. RDMA stacks that keep registrations across calls learn of
 * such changes from memory hooks (UCX's libucm patches mmap, munmap, mremap,
 * madvise and brk), from userfaultfd's unmap and remove events (libfabric's
 * uffd monitor; kdreg2 in the kernel), or do not cache at all (rdma-core's
 * ibv_reg_mr: the application owns its registrations). Hooks are not seen by
 * calls inside the C library (free() unmapping a large chunk), and
 * userfaultfd needs a monitor thread and resolving faults on every
 * registered range. Here registration is cheap next to what it saves (the
 * whole send buffer copied in and the result copied out; the registration
 * pins each page once), so the cache lives exactly one call: the buffers are
 * registered when the call starts and deregistered when it ends, and a
 * buffer freed and reallocated between calls is registered afresh. Within
 * the call MPI's rule holds: the buffers stay valid until it returns.
 *
 * Small blocks keep the staging path (copy into the transport buffer and
 * out): two registrations and two deregistrations cost about 12-14 us
 * whatever the size, copying 16 blocks in and out 2 us at 64 B and 16 us at
 * 1 KiB (tests/vm/bench_reg, 16 nodes, TCG guest), so the crossover, the
 * default of TC_ZCOPY_MIN, is a block of 1 KiB.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "runtime/comm.h"

/* [a, a + alen) and [b, b + blen) share a byte. */
static int tc_overlap(const void *a, size_t alen, const void *b, size_t blen)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return alen && blen && x < y + blen && y < x + alen;
}

static void tc_umem_release(struct tc_comm *comm, struct tc_umem *u)
{
	for (int r = TC_UREG_SEND; r < TC_UREG_N; r++) {
		/* -EBUSY after a failed call: transfers still use it; the
		 * communicator is broken and its close releases it */
		if (u->key[r] != TC_KEY_BUFFER)
			comm->tp.ops->dereg(&comm->tp, u->key[r]);
		u->key[r] = TC_KEY_BUFFER;
	}
	u->on = 0;
}

void tc_umem_begin(struct tc_comm *comm, struct tc_umem *u, const void *send, size_t slen, void *recv, size_t rlen,
		   size_t block)
{
	const struct tc_tp *tp = &comm->tp;
	int ret = 0;

	memset(u, 0, sizeof(*u));
	u->ptr[TC_UREG_SEND] = (char *)(uintptr_t)send;
	u->ptr[TC_UREG_RECV] = recv;
	/* a send buffer inside the receive buffer (MPI_IN_PLACE) would be
	 * overwritten while it is sent: stage */
	if (!tp->ops->reg || block < comm->zcopy_min || slen > tp->max_reg_bytes || rlen > tp->max_reg_bytes ||
	    tc_overlap(send, slen, recv, rlen))
		return;
	u->on = 1;
	if (slen)
		ret = tp->ops->reg(&comm->tp, send, slen, 0, &u->key[TC_UREG_SEND]);
	if (!ret && rlen)
		ret = tp->ops->reg(&comm->tp, recv, rlen, 1, &u->key[TC_UREG_RECV]);
	if (ret) {
		/* RLIMIT_MEMLOCK or memory the kernel cannot pin: stage instead */
		tc_umem_release(comm, u);
		tc_err_clear();
	}
}

void tc_umem_end(struct tc_comm *comm, struct tc_umem *u)
{
	if (u->on)
		tc_umem_release(comm, u);
}
