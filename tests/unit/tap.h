/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Minimal TAP output for the userspace tests: one test point per check group.
 * tap_ok(cond, fmt, ...) prints "ok N - ..." or "not ok N - ...";
 * tap_skip(fmt, ...) prints "ok N - ... # SKIP"; tap_done() prints the plan
 * and returns the exit code (1 if any point failed). */
#ifndef TC_TAP_H
#define TC_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3))) static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

__attribute__((format(printf, 1, 2))) static inline void tap_skip(const char *fmt, ...)
{
	va_list ap;

	printf("ok %d - ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP\n");
	fflush(stdout);
}

/* Diagnostics: "# ..." lines. */
#define tap_diag(...)                    \
	do {                             \
		printf("# ");            \
		printf(__VA_ARGS__);     \
		printf("\n");            \
	} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif /* TC_TAP_H */
