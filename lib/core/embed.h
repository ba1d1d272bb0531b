/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Boxes of a torus: a list of nodes that, in list order, is the row-major
 * order of a smaller torus or mesh laid along some of the parent's
 * dimensions (embed.c). A sub-communicator runs on such a box over its
 * parent's transport (transport/sub.c).
 */
#ifndef TC_EMBED_H
#define TC_EMBED_H

#include "core/shape.h"

/*
 * Logical dimension j (0..k-1) of the box lies along parent dimension
 * pdim[j] (increasing in j: the parent's dimension order, so the
 * dimension-ordered routes of the box are routes of the parent), in
 * direction sign[j], over ext[j] >= 2 nodes. Logical coordinates x map to
 * the parent coordinates base + sum_j sign[j] * x[j] * e_pdim[j], taken
 * modulo the parent's size where that dimension wraps. Logical dimension j
 * wraps iff ext[j] is the parent's whole dimension and that one wraps;
 * otherwise it is a path (which may run across the parent's wrap-around).
 */
struct tc_embed {
	int k;
	int pdim[TC_MAX_DIMS];
	int sign[TC_MAX_DIMS];
	int ext[TC_MAX_DIMS];
	int base[TC_MAX_DIMS];	/* parent coordinates of logical rank 0 */
	struct tc_shape shape;	/* the logical shape: ext, its wrap mask, the parent's port model */
};

/*
 * The box whose row-major order is nodes[0..n-1] (distinct parent nodes,
 * checked by the caller). The search is deterministic: fewest logical
 * dimensions first, then parent dimension sets in increasing bit-mask
 * order, extents with the larger leading extent first, signs + before -;
 * the first that reproduces the list wins. 0 and *e, or -ENOTSUP with
 * tc_last_error() saying why (not a box; one node, which has no torus
 * shape).
 */
int tc_embed_find(const struct tc_shape *parent, const int *nodes, int n, struct tc_embed *e);
/* The parent node of the box's logical coordinates x; -1 if it falls off a mesh. */
int tc_embed_node(const struct tc_shape *parent, const struct tc_embed *e, const int *x);

#endif /* TC_EMBED_H */
