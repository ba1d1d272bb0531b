/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the command-line tools share: one error line and an exit code, the
 * shape syntax ("4x4" or "4,4"), the module's default timing. Include after
 * defining PROG (the tool's name for messages).
 */
#ifndef TORUS_TOOL_H
#define TORUS_TOOL_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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
			die(2, "%s %s: expected 1 to %d sizes >= 2 like 4x4 or 4,4", what, s, max);
		dims[n++] = v;
		if (!*end)
			return n;
		p = end + 1;
	}
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
