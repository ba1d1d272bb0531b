/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Torus and mesh shapes: coordinates, neighbours, ring distances and
 * dimension-ordered routes. Node numbering is row-major (last coordinate
 * fastest), as in the driver ABI; port p = 2*d + dir, dir 0 = +, 1 = -.
 */
#ifndef TC_SHAPE_H
#define TC_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#define TC_MAX_DIMS 6

struct tc_shape {
	int ndims;
	int dims[TC_MAX_DIMS];
	unsigned int wrap_mask; /* bit d: dimension d wraps */
	int one_port;		/* 1: a node sends at most one and receives at most one message per step */
	int nodes;		/* product of dims (filled by tc_shape_init) */
};

/* Fill nodes; validate. Returns 0 or -EINVAL. */
int tc_shape_init(struct tc_shape *s, int ndims, const int *dims, unsigned int wrap_mask, int one_port);
/* Parse "8x8" / "4x4x4" / "8"; wrap all dims unless mesh. 0 or -EINVAL. */
int tc_shape_parse(struct tc_shape *s, const char *dims, int mesh, int one_port);
/* Same dims, wrap mask and port model (nodes follows). */
int tc_shape_equal(const struct tc_shape *a, const struct tc_shape *b);
void tc_shape_coords(const struct tc_shape *s, int node, int *coords);
int tc_shape_node(const struct tc_shape *s, const int *coords); /* coords reduced mod dims */
/* Node reached from node by route (signed hops per dim); -1 if it leaves a mesh. */
int tc_shape_walk(const struct tc_shape *s, int node, const int8_t *route);
/* Ring/line distance helpers for dimension d: shortest signed offset from
 * coordinate a to coordinate b (coordinates in dimension d, not node ids).
 * On a wrapping even ring the tie (n/2) is returned as +n/2. */
int tc_shape_delta(const struct tc_shape *s, int d, int a, int b);
/*
 * The ports of a message with this route (dimension 0 first): it leaves on
 * the first hop's port (+ in dimension d: 2d, -: 2d+1) and arrives on the
 * last hop's (+ in d: 2d+1, -: 2d). 0, or -EINVAL for an empty route.
 */
int tc_route_ports(const struct tc_shape *s, const int8_t *route, int *first, int *last);
/* Neighbour of node on port (2*d+dir), -1 off a mesh edge. */
int tc_shape_neighbor(const struct tc_shape *s, int node, int port);
/* "8x8", "4x4 mesh", "8x8 wrap=1,0", "+ one-port": 0 or -ENOSPC. */
int tc_shape_str(const struct tc_shape *s, char *buf, size_t len);

/*
 * The one route helper: the shortest route from coordinates from to to (or
 * node src to node dst), signed hops per dimension (dimension 0 first, as
 * routers take it). A tie (half way round an even ring) goes + as
 * tc_shape_delta says, or with TC_ROUTE_SPLIT_TIES - when the coordinate it
 * leaves from is odd (the direct exchanges split their antipodes so).
 */
#define TC_ROUTE_SPLIT_TIES 1u
void tc_route_coords(const struct tc_shape *s, const int *from, const int *to, unsigned int flags, int8_t *route);
void tc_route_nodes(const struct tc_shape *s, int src, int dst, unsigned int flags, int8_t *route);
/*
 * The shortest dimension-ordered route from coordinates from to to (ties +,
 * as tc_shape_delta), with the ports it leaves and arrives on (either may
 * be NULL). 0, or -EINVAL when from == to.
 */
int tc_route_between(const struct tc_shape *shape, const int *from, const int *to, int8_t *route, int *first,
		     int *last);

#endif /* TC_SHAPE_H */
