// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The logical torus the ranks of a verbs job form (TC_DIMS or
 * tc_comm_attr.dims, else a near-square factorisation of the job size).
 */
#include "transport/verbs/verbs.h"

int tc_vb_shape(struct tc_shape *sh, const char *dims, int size)
{
	int d[2];
	int r;

	if (dims && *dims) {
		if (tc_shape_parse(sh, dims, 0, 0))
			return tc_err(-EINVAL, "transport verbs: dims \"%s\": not a torus shape like 4x4 or 2x2x4", dims);
		if (sh->nodes != size)
			return tc_err(-EINVAL, "transport verbs: dims %s make %d ranks but the job has %d", dims, sh->nodes,
				      size);
		return 0;
	}
	/* near-square: the largest divisor r <= sqrt(size) */
	for (r = 1; (r + 1) * (r + 1) <= size; r++)
		;
	while (r > 1 && size % r)
		r--;
	if (r == 1) {
		d[0] = size;
		if (tc_shape_init(sh, 1, d, 1, 0))
			return tc_err(-EINVAL, "transport verbs: no torus shape for a job of %d ranks", size);
		return 0;
	}
	d[0] = r;
	d[1] = size / r;
	if (tc_shape_init(sh, 2, d, 3, 0))
		return tc_err(-EINVAL, "transport verbs: no torus shape for a job of %d ranks (set TC_DIMS)", size);
	return 0;
}
