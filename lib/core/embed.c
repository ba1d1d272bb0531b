// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Boxes of a torus (embed.h): find the box a node list is the row-major
 * order of, by trying every candidate in a fixed order.
 *
 * A candidate is k logical dimensions on an increasing set of parent
 * dimensions, an extent and a sign per logical dimension; its base is the
 * first node's coordinates. It matches when walking the logical
 * coordinates in row-major order (dimension k-1 fastest, as everywhere in
 * the library) gives exactly the list. Most candidates fail at the second
 * or third node, so the search costs about O(n * K) for a list of n nodes on
 * a K-dimensional parent, plus a few short failed walks per candidate
 * (at most 63 dimension sets x the extent factorisations x 2^k signs).
 */
#include <errno.h>
#include <string.h>

#include "core/embed.h"
#include "base/base.h"

int tc_embed_node(const struct tc_shape *parent, const struct tc_embed *e, const int *x)
{
	int c[TC_MAX_DIMS];

	memcpy(c, e->base, sizeof(c));
	for (int j = 0; j < e->k; j++) {
		int d = e->pdim[j];

		c[d] += e->sign[j] * x[j];
		if (!(parent->wrap_mask & (1u << d)) && (c[d] < 0 || c[d] >= parent->dims[d]))
			return -1;
	}
	return tc_shape_node(parent, c); /* reduces wrapping coordinates */
}

/* Does the candidate in e (k, pdim, ext, sign; base set) reproduce nodes[]? */
static int tc_embed_match(const struct tc_shape *parent, const int *nodes, int n, const struct tc_embed *e)
{
	int x[TC_MAX_DIMS] = { 0 };

	for (int i = 0; i < n; i++) {
		if (tc_embed_node(parent, e, x) != nodes[i])
			return 0;
		for (int j = e->k - 1; j >= 0; j--) { /* the next row-major coordinates */
			if (++x[j] < e->ext[j])
				break;
			x[j] = 0;
		}
	}
	return 1;
}

/* Try every sign vector of the candidate (all + first). */
static int tc_embed_signs(const struct tc_shape *parent, const int *nodes, int n, struct tc_embed *e)
{
	for (unsigned int s = 0; s < (1u << e->k); s++) {
		for (int j = 0; j < e->k; j++)
			e->sign[j] = (s & (1u << j)) ? -1 : 1;
		if (tc_embed_match(parent, nodes, n, e))
			return 1;
	}
	return 0;
}

/* Choose ext[j..k-1] with product rest, each 2..the parent's size. */
static int tc_embed_exts(const struct tc_shape *parent, const int *nodes, int n, struct tc_embed *e, int j, int rest)
{
	int max = parent->dims[e->pdim[j]];

	if (j == e->k - 1) {
		if (rest < 2 || rest > max)
			return 0;
		e->ext[j] = rest;
		return tc_embed_signs(parent, nodes, n, e);
	}
	for (int l = max < rest ? max : rest; l >= 2; l--) {
		if (rest % l)
			continue;
		e->ext[j] = l;
		if (tc_embed_exts(parent, nodes, n, e, j + 1, rest / l))
			return 1;
	}
	return 0;
}

int tc_embed_find(const struct tc_shape *parent, const int *nodes, int n, struct tc_embed *e)
{
	int K = parent->ndims;

	memset(e, 0, sizeof(*e));
	if (n < 2)
		return tc_err(-ENOTSUP, "a box of one node has no torus shape");
	tc_shape_coords(parent, nodes[0], e->base);
	for (int k = 1; k <= K; k++) {
		for (unsigned int set = 1; set < (1u << K); set++) {
			unsigned int wrap = 0;

			if (__builtin_popcount(set) != k)
				continue;
			e->k = 0;
			for (int d = 0; d < K; d++)
				if (set & (1u << d))
					e->pdim[e->k++] = d;
			if (!tc_embed_exts(parent, nodes, n, e, 0, n))
				continue;
			for (int j = 0; j < k; j++)
				if (e->ext[j] == parent->dims[e->pdim[j]] && (parent->wrap_mask & (1u << e->pdim[j])))
					wrap |= 1u << j;
			if (tc_shape_init(&e->shape, k, e->ext, wrap, parent->one_port))
				return tc_err(-ENOTSUP, "the box's %d-node path is longer than routes reach", n);
			return 0;
		}
	}
	return tc_err(-ENOTSUP, "nodes %d, %d, ... (%d in all) are not the row-major order of a box of the torus",
		      nodes[0], nodes[1], n);
}
