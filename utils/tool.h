/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the command-line tools share: one error line and an exit code, the
 * input syntax (shapes "4x4" or "4,4"; sizes "64", "4K", "1M", "1G", powers
 * of 1024; non-negative finite numbers), the module's default timing.
 * Include after defining PROG (the tool's name for messages).
 *
 * Exit codes, as every tool uses them: 2 bad usage (one line, naming the
 * option and the value), 3 an unsupported shape.
 */
#ifndef TORUS_TOOL_H
#define TORUS_TOOL_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static inline void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

/*
 * Parse a shape "4x4", "4,4" or "8" into dims[] (at most max sides, each
 * 2..max_side); bad input is bad usage (exit 2) naming what (e.g. "--dims").
 * Returns the number of dimensions.
 */
static inline int tool_parse_dims(const char *what, const char *s, uint32_t *dims, int max, unsigned long max_side)
{
	const char *p = s;
	int n = 0;

	for (;;) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || end == p || *p == '-' || v < 2 || v > max_side || n == max ||
		    (*end && *end != 'x' && *end != 'X' && *end != ','))
			die(2, "%s %s: expected 1 to %d sides of 2..%lu like 4x4 or 4,4", what, s, max, max_side);
		dims[n++] = v;
		if (!*end)
			return n;
		p = end + 1;
	}
}

/*
 * getopt_long's error for the option at argv[optind - 1], as one line and
 * exit 2. Pass the value getopt_long returned ('?' unknown option, ':' a
 * missing value: the option string must start with ':').
 */
static inline void tool_bad_option(int opt, char **argv, int optind)
{
	const char *a = argv[optind - 1];

	if (opt == ':')
		die(2, "%s needs a value (try --help)", a);
	die(2, "unknown option '%s' (try --help)", a);
}

/*
 * A size in bytes: digits with an optional K, M or G (powers of 1024, either
 * case). Bad input or a size past SIZE_MAX / 2 is bad usage (exit 2).
 */
static inline size_t tool_parse_size(const char *what, const char *s)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		die(2, "%s %s: too large", what, s);
	if (errno || end == s || s[0] < '0' || s[0] > '9')
		die(2, "%s %s: not a size (e.g. 64, 4K, 1M)", what, s);
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (*end)
		die(2, "%s %s: not a size (e.g. 64, 4K, 1M)", what, s);
	if (v > (SIZE_MAX >> 1) >> shift)
		die(2, "%s %s: too large", what, s);
	return (size_t)v << shift;
}

/* A finite non-negative number (not nan, not inf); bad input exits 2. */
static inline double tool_parse_num(const char *what, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(v) || v < 0)
		die(2, "%s %s: expected a finite non-negative number", what, s);
	return v;
}

/* "4x4" for dims {4, 4}. */
static inline void tool_shape_str(int ndims, const uint32_t *dims, char *buf, size_t n)
{
	size_t o = 0;

	buf[0] = 0;
	for (int d = 0; d < ndims && o < n; d++)
		o += snprintf(buf + o, n - o, "%s%u", d ? "x" : "", dims[d]);
}

/*
 * The timing a fabric gets when none is asked for: the module's own
 * parameters (what its default fabric uses), as sysfs shows them; 0 when the
 * module is not loaded. A fabric created with 0 would have no virtual time.
 */
static inline unsigned long long tool_module_param(const char *name)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/torus/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

#endif /* TORUS_TOOL_H */
