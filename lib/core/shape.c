// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Torus and mesh shapes: coordinates, neighbours, routes and ring distances.
 *
 * Node numbering is row-major (last coordinate fastest); port p = 2*d + dir,
 * dir 0 = +, 1 = -. A dimension of size 2 that wraps has two distinct links
 * between its two nodes (the + and the - port).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/shape.h"

/* Largest fabric the schedule layer accepts (node ids and counts are int32). */
#define TC_SHAPE_MAX_NODES (1 << 20)

int tc_shape_init(struct tc_shape *s, int ndims, const int *dims, unsigned int wrap_mask, int one_port)
{
	long long nodes = 1;

	if (!s || !dims || ndims < 1 || ndims > TC_MAX_DIMS)
		return -EINVAL;
	if (wrap_mask & ~((1u << ndims) - 1))
		return -EINVAL;
	if (one_port != 0 && one_port != 1)
		return -EINVAL;
	for (int d = 0; d < ndims; d++) {
		/* size 1 would make a node its own neighbour; routes are int8 */
		int max = (wrap_mask & (1u << d)) ? 2 * 127 : 128;

		if (dims[d] < 2 || dims[d] > max)
			return -EINVAL;
		nodes *= dims[d];
		if (nodes > TC_SHAPE_MAX_NODES)
			return -EINVAL;
	}
	/* dims may point into *s (re-initialising a shape with new flags) */
	int tmp[TC_MAX_DIMS];

	memcpy(tmp, dims, ndims * sizeof(*dims));
	memset(s, 0, sizeof(*s));
	s->ndims = ndims;
	for (int d = 0; d < ndims; d++)
		s->dims[d] = tmp[d];
	s->wrap_mask = wrap_mask;
	s->one_port = one_port;
	s->nodes = (int)nodes;
	return 0;
}

int tc_shape_parse(struct tc_shape *s, const char *str, int mesh, int one_port)
{
	int dims[TC_MAX_DIMS];
	int ndims = 0;
	const char *p = str;

	if (!s || !str || !*str)
		return -EINVAL;
	for (;;) {
		char *end;
		long v;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = strtol(p, &end, 10);
		if (end == p || v < 2 || v > 254 || ndims == TC_MAX_DIMS)
			return -EINVAL;
		dims[ndims++] = (int)v;
		p = end;
		if (!*p)
			break;
		if (*p != 'x' && *p != 'X')
			return -EINVAL;
		p++;
	}
	return tc_shape_init(s, ndims, dims, mesh ? 0 : (1u << ndims) - 1, one_port);
}

int tc_shape_str(const struct tc_shape *s, char *buf, size_t len)
{
	size_t off = 0;
	int n;

	if (!len)
		return -EINVAL;
	buf[0] = 0;
	for (int d = 0; d < s->ndims; d++) {
		n = snprintf(buf + off, len - off, "%s%d", d ? "x" : "", s->dims[d]);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += n;
	}
	if (s->wrap_mask != (1u << s->ndims) - 1) {
		n = snprintf(buf + off, len - off, s->wrap_mask ? " wrap=" : " mesh");
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += n;
		for (int d = 0; s->wrap_mask && d < s->ndims; d++) {
			n = snprintf(buf + off, len - off, "%s%d", d ? "," : "", !!(s->wrap_mask & (1u << d)));
			if (n < 0 || (size_t)n >= len - off)
				return -ENOSPC;
			off += n;
		}
	}
	if (s->one_port) {
		n = snprintf(buf + off, len - off, " one-port");
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
	}
	return 0;
}

void tc_shape_coords(const struct tc_shape *s, int node, int *coords)
{
	for (int d = s->ndims - 1; d >= 0; d--) {
		coords[d] = node % s->dims[d];
		node /= s->dims[d];
	}
}

int tc_shape_node(const struct tc_shape *s, const int *coords)
{
	int node = 0;

	for (int d = 0; d < s->ndims; d++) {
		int c = coords[d] % s->dims[d];

		if (c < 0)
			c += s->dims[d];
		node = node * s->dims[d] + c;
	}
	return node;
}

/*
 * Hops along one dimension are monotone, so a route leaves a mesh iff its end
 * coordinate in some non-wrapping dimension is outside [0, n).
 */
int tc_shape_walk(const struct tc_shape *s, int node, const int8_t *route)
{
	int c[TC_MAX_DIMS];

	if (node < 0 || node >= s->nodes)
		return -1;
	tc_shape_coords(s, node, c);
	for (int d = 0; d < s->ndims; d++) {
		c[d] += route[d];
		if (!(s->wrap_mask & (1u << d)) && (c[d] < 0 || c[d] >= s->dims[d]))
			return -1;
	}
	return tc_shape_node(s, c);
}

int tc_shape_delta(const struct tc_shape *s, int d, int a, int b)
{
	int n = s->dims[d];
	int diff;

	if (!(s->wrap_mask & (1u << d)))
		return b - a;
	diff = (b - a) % n;
	if (diff < 0)
		diff += n;
	if (2 * diff > n)
		diff -= n;
	return diff;
}

int tc_shape_neighbor(const struct tc_shape *s, int node, int port)
{
	int c[TC_MAX_DIMS];
	int d = port / 2;

	if (port < 0 || d >= s->ndims || node < 0 || node >= s->nodes)
		return -1;
	tc_shape_coords(s, node, c);
	c[d] += (port & 1) ? -1 : 1;
	if (!(s->wrap_mask & (1u << d)) && (c[d] < 0 || c[d] >= s->dims[d]))
		return -1;
	return tc_shape_node(s, c);
}

int tc_shape_equal(const struct tc_shape *a, const struct tc_shape *b)
{
	if (a->ndims != b->ndims || a->wrap_mask != b->wrap_mask || a->one_port != b->one_port)
		return 0;
	for (int d = 0; d < a->ndims; d++)
		if (a->dims[d] != b->dims[d])
			return 0;
	return 1;
}

int tc_route_ports(const struct tc_shape *s, const int8_t *route, int *first, int *last)
{
	*first = *last = -1;
	for (int d = 0; d < s->ndims; d++) {
		if (!route[d])
			continue;
		if (*first < 0)
			*first = 2 * d + (route[d] > 0 ? 0 : 1);
		*last = 2 * d + (route[d] > 0 ? 1 : 0);
	}
	return *first < 0 ? -EINVAL : 0;
}

void tc_route_coords(const struct tc_shape *s, const int *from, const int *to, unsigned int flags, int8_t *route)
{
	memset(route, 0, TC_MAX_DIMS);
	for (int d = 0; d < s->ndims; d++) {
		int delta = tc_shape_delta(s, d, from[d], to[d]);

		if ((flags & TC_ROUTE_SPLIT_TIES) && (s->wrap_mask & (1u << d)) && 2 * delta == s->dims[d] &&
		    (from[d] & 1))
			delta = -delta;
		route[d] = (int8_t)delta;
	}
}

void tc_route_nodes(const struct tc_shape *s, int src, int dst, unsigned int flags, int8_t *route)
{
	int cs[TC_MAX_DIMS], cd[TC_MAX_DIMS];

	tc_shape_coords(s, src, cs);
	tc_shape_coords(s, dst, cd);
	tc_route_coords(s, cs, cd, flags, route);
}

int tc_route_between(const struct tc_shape *shape, const int *from, const int *to, int8_t *route, int *first,
		     int *last)
{
	tc_route_coords(shape, from, to, 0, route);
	return tc_route_ports(shape, route, first, last);
}
