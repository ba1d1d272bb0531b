// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Datatypes and reduction operations of the everyday collectives.
 *
 * dst[i] = a[i] op b[i], the left operand first (the fold order of coll.h
 * depends on it only for min and max of equal-comparing values such as
 * -0.0 and +0.0). Integer sum and prod wrap around: computed on the
 * unsigned type of the same width, so no signed overflow occurs.
 */
#include <errno.h>
#include <stdint.h>

#include "colls/coll.h"

size_t tc_dt_size(enum tc_datatype dt)
{
	switch (dt) {
	case TC_INT32:
	case TC_FLOAT:
		return 4;
	case TC_INT64:
	case TC_UINT64:
	case TC_DOUBLE:
		return 8;
	}
	return 0;
}

static const char *tc_op_name(enum tc_op op)
{
	static const char *const names[] = { "?", "sum", "prod", "min", "max", "band", "bor", "bxor" };

	return (unsigned int)op < sizeof(names) / sizeof(names[0]) ? names[op] : "?";
}

int tc_dt_op_check(const char *who, enum tc_datatype dt, enum tc_op op)
{
	if (!tc_dt_size(dt))
		return tc_err(-EINVAL, "%s: datatype %d unknown (TC_INT32..TC_DOUBLE)", who, (int)dt);
	if (op < TC_SUM || op > TC_BXOR)
		return tc_err(-EINVAL, "%s: op %d unknown (TC_SUM..TC_BXOR)", who, (int)op);
	if (op >= TC_BAND && (dt == TC_FLOAT || dt == TC_DOUBLE))
		return tc_err(-EINVAL, "%s: op %s is for integer datatypes only", who, tc_op_name(op));
	return 0;
}

#define TC_MIN(x, y) ((x) < (y) ? (x) : (y))
#define TC_MAX(x, y) ((x) > (y) ? (x) : (y))

/* The arithmetic ops for one C type; U is the unsigned type used for wrapping sum/prod. */
#define TC_ARITH(T, U)                                                         \
	static void tc_apply_##T(enum tc_op op, T *d, const T *a, const T *b, size_t n) \
	{                                                                      \
		size_t i;                                                      \
		switch (op) {                                                  \
		case TC_SUM:                                                   \
			for (i = 0; i < n; i++)                                \
				d[i] = (T)((U)a[i] + (U)b[i]);                 \
			break;                                                 \
		case TC_PROD:                                                  \
			for (i = 0; i < n; i++)                                \
				d[i] = (T)((U)a[i] * (U)b[i]);                 \
			break;                                                 \
		case TC_MIN:                                                   \
			for (i = 0; i < n; i++)                                \
				d[i] = TC_MIN(a[i], b[i]);                     \
			break;                                                 \
		case TC_MAX:                                                   \
			for (i = 0; i < n; i++)                                \
				d[i] = TC_MAX(a[i], b[i]);                     \
			break;                                                 \
		case TC_BAND:                                                  \
			for (i = 0; i < n; i++)                                \
				d[i] = (T)((U)a[i] & (U)b[i]);                 \
			break;                                                 \
		case TC_BOR:                                                   \
			for (i = 0; i < n; i++)                                \
				d[i] = (T)((U)a[i] | (U)b[i]);                 \
			break;                                                 \
		case TC_BXOR:                                                  \
			for (i = 0; i < n; i++)                                \
				d[i] = (T)((U)a[i] ^ (U)b[i]);                 \
			break;                                                 \
		}                                                              \
	}

TC_ARITH(int32_t, uint32_t)
TC_ARITH(int64_t, uint64_t)
TC_ARITH(uint64_t, uint64_t)

#define TC_FLOATING(T)                                                         \
	static void tc_apply_##T(enum tc_op op, T *d, const T *a, const T *b, size_t n) \
	{                                                                      \
		size_t i;                                                      \
		switch (op) {                                                  \
		case TC_SUM:                                                   \
			for (i = 0; i < n; i++)                                \
				d[i] = a[i] + b[i];                            \
			break;                                                 \
		case TC_PROD:                                                  \
			for (i = 0; i < n; i++)                                \
				d[i] = a[i] * b[i];                            \
			break;                                                 \
		case TC_MIN:                                                   \
			for (i = 0; i < n; i++)                                \
				d[i] = TC_MIN(a[i], b[i]);                     \
			break;                                                 \
		case TC_MAX:                                                   \
			for (i = 0; i < n; i++)                                \
				d[i] = TC_MAX(a[i], b[i]);                     \
			break;                                                 \
		default: /* rejected by tc_dt_op_check() */                    \
			break;                                                 \
		}                                                              \
	}

TC_FLOATING(float)
TC_FLOATING(double)

void tc_reduce_apply(enum tc_datatype dt, enum tc_op op, void *dst, const void *a, const void *b, size_t n)
{
	switch (dt) {
	case TC_INT32:
		tc_apply_int32_t(op, dst, a, b, n);
		break;
	case TC_INT64:
		tc_apply_int64_t(op, dst, a, b, n);
		break;
	case TC_UINT64:
		tc_apply_uint64_t(op, dst, a, b, n);
		break;
	case TC_FLOAT:
		tc_apply_float(op, dst, a, b, n);
		break;
	case TC_DOUBLE:
		tc_apply_double(op, dst, a, b, n);
		break;
	}
}
