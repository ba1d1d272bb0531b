// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tc_allgatherv and tc_alltoallv: counts and displacements in bytes.
 *
 * allgatherv: line allgathers along dimension k-1, then k-2, ..., 0. Ranks
 * are row-major over coordinates (dimension k-1 fastest), so after the
 * phases of dimensions k-1..d+1 a node holds the data of every rank that
 * shares its coordinates in dimensions 0..d: a contiguous run of ranks,
 * which is one contiguous item of the packed buffer (rank r's bytes at the
 * sum of recvcounts[0..r-1]). Each phase moves those items along dimension
 * d in both directions (line.c); empty items are not sent.
 *
 * alltoallv: the sizes are known only to the two ends of each pair, so
 * nothing can be forwarded by processes; instead, in step t (1..P-1) every
 * node sends to the node at coordinate offset delta_t = coords(t) (mod the
 * dims) and receives from -delta_t, along the shortest dimension-ordered
 * route, which the routers carry through intermediate nodes. Each step is a
 * permutation (one send and one receive per node: one-port safe); empty
 * blocks are not sent. Buffer: the send blocks packed by destination, then
 * the receive blocks packed by source.
 *
 * Zero copy (runtime/umem.c: a transport that registers memory, an average
 * block of at least TC_ZCOPY_MIN bytes): alltoallv sends from the caller's
 * send buffer and receives into its receive buffer at their displacements;
 * allgatherv, when the receive buffer is packed (rdispls[r] the sum of
 * rcounts[0..r-1], as the buffer above is), runs its phases in the caller's
 * receive buffer itself. Either way the own block is the one local copy.
 */
#include <errno.h>
#include <string.h>

#include "colls/coll.h"

static void tc_copy(void *dst, const void *src, size_t n)
{
	if (n)
		memcpy(dst, src, n);
}

static size_t tc_sum(const size_t *v, size_t a, size_t b)
{
	size_t s = 0;

	for (size_t i = a; i < b; i++)
		s += v[i];
	return s;
}

/* Bytes of buf that counts and displs reach. */
static size_t tc_extent(const size_t *counts, const size_t *displs, size_t P)
{
	size_t end = 0;

	for (size_t i = 0; i < P; i++)
		if (counts[i] && displs[i] + counts[i] > end)
			end = displs[i] + counts[i];
	return end;
}

/* The receive buffer is laid out as the packed buffer (allgatherv). */
static int tc_packed(const size_t *counts, const size_t *displs, size_t P)
{
	size_t pos = 0;

	for (size_t i = 0; i < P; i++) {
		if (counts[i] && displs[i] != pos)
			return 0;
		pos += counts[i];
	}
	return 1;
}

/*
 * Start a v-collective's run: zero copy when umem says so (the transport
 * buffer then holds nothing), else bytes of transport buffer.
 */
static int tc_run_begin_v(struct tc_run *r, struct tc_comm *comm, const char *name, size_t bytes, const void *send,
			  size_t slen, void *recv, size_t rlen)
{
	struct tc_umem u = { 0 };
	int ret;

	/* the average block decides, as a block does for alltoall */
	if (recv)
		tc_umem_begin(comm, &u, send, slen, recv, rlen, rlen / comm->tp.shape.nodes);
	ret = tc_run_begin(r, comm, name, u.on ? 0 : bytes);
	if (ret) {
		tc_umem_end(comm, &u);
		return ret;
	}
	r->u = u;
	r->key = u.key[TC_UREG_RECV];
	return 0;
}

/* The phases of allgatherv: line allgathers along dimension k-1, ..., 0. */
static int tc_allgatherv_lines(struct tc_run *r, const struct tc_coll_args *a)
{
	struct tc_comm *comm = r->comm;
	const struct tc_shape *sh = &comm->tp.shape;
	uint64_t off[1024], len[1024];
	int k = sh->ndims, ret;

	for (int d = k - 1; d >= 0; d--) {
		int n = sh->dims[d], c[TC_MAX_DIMS];
		size_t run = 1;

		for (int e = d + 1; e < k; e++)
			run *= sh->dims[e];
		memcpy(c, comm->coords, sizeof(c));
		for (int e = d + 1; e < k; e++)
			c[e] = 0;
		for (int j = 0; j < n; j++) {
			size_t first;

			c[d] = j;
			first = tc_shape_node(sh, c);
			off[j] = tc_sum(a->rcounts, 0, first);
			len[j] = tc_sum(a->rcounts, first, first + run);
		}
		r->phase = k - 1 - d;
		r->what = "allgather";
		ret = tc_line_ag(r, d, off, len);
		if (ret)
			return ret;
	}
	return 0;
}

int tc_exec_allgatherv(struct tc_comm *comm, const struct tc_coll_args *a)
{
	size_t P = comm->tp.shape.nodes, total = tc_sum(a->rcounts, 0, P), pos;
	struct tc_run r;
	int ret;

	ret = tc_run_begin_v(&r, comm, "allgatherv", total, NULL, 0,
			     total && tc_packed(a->rcounts, a->rdispls, P) ? a->recvbuf : NULL, total);
	if (ret || !total)
		return ret;
	if (r.u.on) {
		memmove((char *)a->recvbuf + a->rdispls[comm->tp.rank], a->sendbuf, a->count);
		ret = tc_allgatherv_lines(&r, a);
		tc_umem_end(comm, &r.u);
		return ret;
	}
	tc_copy(r.base + tc_sum(a->rcounts, 0, comm->tp.rank), a->sendbuf, a->count);
	ret = tc_allgatherv_lines(&r, a);
	if (ret)
		return ret;
	pos = 0;
	for (size_t s = 0; s < P; s++) {
		tc_copy((char *)a->recvbuf + a->rdispls[s], r.base + pos, a->rcounts[s]);
		pos += a->rcounts[s];
	}
	return 0;
}

/* The P-1 steps of alltoallv; staged, the receive blocks go at rbase. */
static int tc_alltoallv_steps(struct tc_run *r, const struct tc_coll_args *a, size_t rbase)
{
	struct tc_comm *comm = r->comm;
	const struct tc_shape *sh = &comm->tp.shape;
	size_t P = sh->nodes;
	int k = sh->ndims, ret;

	r->what = "direct exchange";
	for (size_t t = 1; t < P; t++) {
		int delta[TC_MAX_DIMS], dc[TC_MAX_DIMS], scoord[TC_MAX_DIMS];
		int dst, src, first, last;
		int8_t route[TC_MAX_DIMS];
		struct tc_step st;

		st.n = 0;
		tc_shape_coords(sh, t, delta);
		for (int d = 0; d < k; d++) {
			dc[d] = comm->coords[d] + delta[d];
			scoord[d] = comm->coords[d] - delta[d];
		}
		dst = tc_shape_node(sh, dc);
		src = tc_shape_node(sh, scoord);
		tc_shape_coords(sh, dst, dc);
		tc_shape_coords(sh, src, scoord);
		if (a->scounts[dst]) {
			tc_route_between(sh, comm->coords, dc, route, &first, &last);
			tc_step_add(&st, TC_XFER_SEND, first, route, dst,
				    r->u.on ? a->sdispls[dst] : tc_sum(a->scounts, 0, dst), a->scounts[dst],
				    tc_run_tag(r, t, 0), 0);
			st.key[st.n - 1] = r->u.key[TC_UREG_SEND];
		}
		if (a->rcounts[src]) {
			tc_route_between(sh, scoord, comm->coords, route, &first, &last);
			tc_step_add(&st, TC_XFER_RECV, last, NULL, src,
				    r->u.on ? a->rdispls[src] : rbase + tc_sum(a->rcounts, 0, src), a->rcounts[src],
				    tc_run_tag(r, t, 0), 0);
		}
		ret = tc_step_run(r, &st, t);
		if (ret)
			return ret;
	}
	return 0;
}

int tc_exec_alltoallv(struct tc_comm *comm, const struct tc_coll_args *a)
{
	const struct tc_shape *sh = &comm->tp.shape;
	size_t P = sh->nodes, sbytes = tc_sum(a->scounts, 0, P), rbase = tc_align(sbytes);
	size_t total = rbase + tc_sum(a->rcounts, 0, P), pos;
	int me = comm->tp.rank, k = sh->ndims, ret;
	struct tc_run r;

	for (int d = 0; d < k; d++)
		if (sh->dims[d] > (sh->wrap_mask & (1u << d) ? 2 * 127 : 128))
			return tc_err(-EOPNOTSUPP, "alltoallv: dimension %d of %d nodes: routes longer than 127 hops", d,
				      sh->dims[d]);
	ret = tc_run_begin_v(&r, comm, "alltoallv", total, a->sendbuf, tc_extent(a->scounts, a->sdispls, P),
			     a->recvbuf, tc_extent(a->rcounts, a->rdispls, P));
	if (ret)
		return ret;
	tc_copy((char *)a->recvbuf + a->rdispls[me], (const char *)a->sendbuf + a->sdispls[me], a->scounts[me]);
	if (r.u.on) {
		ret = tc_alltoallv_steps(&r, a, 0);
		tc_umem_end(comm, &r.u);
		return ret;
	}
	pos = 0;
	for (size_t d = 0; d < P; d++) {
		if (d != (size_t)me)
			tc_copy(r.base + pos, (const char *)a->sendbuf + a->sdispls[d], a->scounts[d]);
		pos += a->scounts[d];
	}
	ret = tc_alltoallv_steps(&r, a, rbase);
	if (ret)
		return ret;
	pos = rbase;
	for (size_t s = 0; s < P; s++) {
		if (s != (size_t)me)
			tc_copy((char *)a->recvbuf + a->rdispls[s], r.base + pos, a->rcounts[s]);
		pos += a->rcounts[s];
	}
	return 0;
}
