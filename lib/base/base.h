/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bottom layer of libtoruscoll: what every other layer may use.
 *
 * Layers (each includes only headers of the layers above it in this list,
 * and its own):
 *	base/        this file: the one error channel, growable arrays, time
 *	core/        shape, schedule, verifier, cost model (schedules as data)
 *	algorithms/  the algorithms, one per file, their shared engines, the registry
 *	transport/   dev, sim (and verbs) behind one ops table on a transport handle
 *	select/      the auto choice (priced with the transport's parameters) and the schedule cache
 *	runtime/     the communicator, plans, the one step runner, the schedule executor
 *	colls/       the everyday collectives on line phases
 *	api/         every public tc_* entry point, its one validator, requests
 */
#ifndef TC_BASE_H
#define TC_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "toruscoll.h"

#define TC_EXPORT __attribute__((visibility("default")))
#define offsetofend(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/*
 * The one error channel. Every failure is a negative errno; tc_err() records
 * the calling thread's one-line reason (tc_last_error()) and returns err, so
 * a failing path reads `return tc_err(-EINVAL, "...", ...);`. The message may
 * quote tc_last_error() itself (it is formatted before it replaces the old).
 */
__attribute__((format(printf, 2, 3))) int tc_err(int err, const char *fmt, ...);
/* Clear the calling thread's reason (tc_last_error() gives ""). */
void tc_err_clear(void);

/*
 * Growable arrays: make *arr hold at least need elements of elem bytes,
 * doubling *cap (from min_cap) as needed. 0, or -ENOMEM with *arr unchanged.
 */
int tc_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem, uint32_t min_cap);

/* An absolute CLOCK_MONOTONIC deadline timeout_ms from now. */
void tc_deadline(struct timespec *ts, int timeout_ms);
/* CLOCK_MONOTONIC in microseconds. */
double tc_now_us(void);
/* The median of v[0..n) (n > 0), the mean of the middle two for even n; sorts v. */
double tc_median(double *v, int n);
/* A non-negative decimal environment value that fits in int; -EINVAL (with tc_err) otherwise. */
int tc_parse_uint(const char *var, const char *val, unsigned int *out);
/* Environment variable var as tc_parse_uint reads it: 1 with *out set, 0 (*out untouched) when unset or empty. */
int tc_env_uint(const char *var, unsigned int *out);
/* Nanoseconds left until ts (negative once it has passed). */
int64_t tc_ns_left(const struct timespec *ts);

/* x rounded up to a multiple of 64 bytes (a cache line). */
size_t tc_align(size_t x);

#endif /* TC_BASE_H */
