// SPDX-License-Identifier: LGPL-2.1-or-later
/* Small helpers every layer shares: growable arrays, deadlines, alignment. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "base/base.h"

int tc_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem, uint32_t min_cap)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? (size_t)*cap * 2 : (min_cap ? min_cap : 16);
	if (ncap < need)
		ncap = need;
	if (ncap > UINT32_MAX)
		ncap = UINT32_MAX;
	if (ncap < need || ncap > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = (uint32_t)ncap;
	return 0;
}

void tc_deadline(struct timespec *ts, int timeout_ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += timeout_ms / 1000;
	ts->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

double tc_now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int tc_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double tc_median(double *v, int n)
{
	qsort(v, n, sizeof(*v), tc_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int64_t tc_ns_left(const struct timespec *ts)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(ts->tv_sec - now.tv_sec) * 1000000000LL + (ts->tv_nsec - now.tv_nsec);
}

size_t tc_align(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

/* Parse environment variable @var's value @val: a non-negative decimal that fits in int; -EINVAL otherwise. */
int tc_parse_uint(const char *var, const char *val, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || end == val || *end || val[0] == '-' || v > INT_MAX)
		return tc_err(-EINVAL, "%s=%s: not a non-negative integer", var, val);
	*out = v;
	return 0;
}

int tc_env_uint(const char *var, unsigned int *out)
{
	const char *val = getenv(var);
	int ret;

	if (!val || !*val)
		return 0;
	ret = tc_parse_uint(var, val, out);
	return ret ? ret : 1;
}
