// SPDX-License-Identifier: GPL-2.0
/*
 * torus: coordinates, neighbours and dimension-ordered routes (shortest
 * direction per dimension, ties on an even ring in the + direction) or an
 * explicit signed hop count per dimension. Routes never leave a mesh.
 */
#include <linux/kernel.h>

#include "torus.h"

void torus_coords(const struct torus_fabric *f, u32 node, u32 *coords)
{
	u32 d;

	for (d = 0; d < TORUS_MAX_DIMS; d++)
		coords[d] = d < f->ndims ? (node / f->strides[d]) % f->dims[d] : 0;
}

static bool torus_wraps(const struct torus_fabric *f, u32 d)
{
	return f->wrap_mask & (1U << d);
}

/* Node behind @port of @node, TORUS_NO_NODE off a mesh edge. */
u32 torus_neighbor(const struct torus_fabric *f, u32 node, u32 port)
{
	u32 d = port / 2, n = f->dims[d];
	u32 c = (node / f->strides[d]) % n, nc;

	if (port % 2 == 0) {
		if (c + 1 == n && !torus_wraps(f, d))
			return TORUS_NO_NODE;
		nc = (c + 1) % n;
	} else {
		if (c == 0 && !torus_wraps(f, d))
			return TORUS_NO_NODE;
		nc = (c + n - 1) % n;
	}
	return node - c * f->strides[d] + nc * f->strides[d];
}

/* Most links a route can cross: one less than the size per dimension. */
u32 torus_route_max_hops(const struct torus_fabric *f, bool explicit_route)
{
	u32 d, h = 0;

	for (d = 0; d < f->ndims; d++)
		h += explicit_route || !torus_wraps(f, d) ? f->dims[d] - 1 : f->dims[d] / 2;
	return h;
}

/*
 * Fill @route with the link ids (torus_link_id()) from @src to @dst.
 * @hops: NULL for the default route, else the signed hops per dimension
 * (|hops[d]| < dims[d], entries >= ndims zero) that must lead to @dst
 * without leaving a mesh. @route has room for torus_route_max_hops().
 */
int torus_route(const struct torus_fabric *f, u32 src, u32 dst, const s16 *hops,
		u32 *route, u32 *nhops, u32 *arrival)
{
	u32 sc[TORUS_MAX_DIMS], dc[TORUS_MAX_DIMS];
	u32 d, n, cur = src, h = 0, port, last = 0, steps, i;
	int delta;

	if (src >= f->nodes || dst >= f->nodes || src == dst)
		return -EINVAL;
	torus_coords(f, src, sc);
	torus_coords(f, dst, dc);
	for (d = 0; d < TORUS_MAX_DIMS; d++) {
		if (d >= f->ndims) {
			if (hops && hops[d])
				return -EINVAL;
			continue;
		}
		n = f->dims[d];
		if (hops) {
			delta = hops[d];
			if (abs(delta) >= n)
				return -EINVAL;
			if (torus_wraps(f, d)) {
				if (((int)sc[d] + delta + (int)n) % (int)n != (int)dc[d])
					return -EINVAL;
			} else if ((int)sc[d] + delta != (int)dc[d]) {
				return -EINVAL;	/* wrong target or leaves the mesh */
			}
		} else if (torus_wraps(f, d)) {
			delta = (dc[d] + n - sc[d]) % n;
			if (2 * delta > n)
				delta -= n;
		} else {
			delta = (int)dc[d] - (int)sc[d];
		}
		port = 2 * d + (delta < 0);
		steps = abs(delta);
		for (i = 0; i < steps; i++) {
			route[h++] = torus_link_id(cur, port);
			last = port;
			cur = torus_neighbor(f, cur, port);
			if (cur == TORUS_NO_NODE)
				return -EINVAL;
		}
	}
	if (!h || cur != dst)
		return -EINVAL;
	*nhops = h;
	/* travelling + (port 2d) arrives on 2d+1 and vice versa */
	*arrival = last ^ 1;
	return 0;
}
