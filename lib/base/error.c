// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Error reporting: tc_strerror() names a negative errno, tc_last_error()
 * gives the calling thread's one-line reason for its last failure. The
 * library has no error codes of its own; every failure is a negative errno.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"

static __thread char tc_errbuf[256];

int tc_err(int err, const char *fmt, ...)
{
	char buf[sizeof(tc_errbuf)];
	va_list ap;

	/* Format first: the message may quote the reason it replaces. */
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	memcpy(tc_errbuf, buf, sizeof(buf));
	return err;
}

void tc_err_clear(void)
{
	tc_errbuf[0] = '\0';
}

TC_EXPORT const char *tc_last_error(void)
{
	return tc_errbuf;
}

TC_EXPORT const char *tc_strerror(int err)
{
	if (err > 0)
		return "not an error code (tc_ functions return negative errno values)";
	switch (-err) {
	case 0:
		return "success";
	case EPERM:
		return "operation not permitted";
	case ENOENT:
		return "no such fabric, node or algorithm";
	case EINTR:
		return "interrupted by a signal";
	case EIO:
		return "input/output error";
	case E2BIG:
		return "argument struct larger than known with a non-zero tail, or too many segments";
	case EBADF:
		return "bad file descriptor";
	case EAGAIN:
		return "queue full, try again";
	case ENOMEM:
		return "out of memory";
	case EACCES:
		return "permission denied (node device)";
	case EFAULT:
		return "bad address";
	case EBUSY:
		return "device or fabric busy";
	case ENODEV:
		return "no such device (is torus.ko loaded?)";
	case EINVAL:
		return "invalid argument";
	case ENOTTY:
		return "ioctl not supported by the device";
	case ENOSPC:
		return "buffer matrix too small for this collective";
	case ENOSYS:
		return "function not implemented";
	case ENODATA:
		return "no data (no call of that collective yet)";
	case EPROTO:
		return "driver ABI version mismatch";
	case EOVERFLOW:
		return "completion queue overflowed";
	case EMSGSIZE:
		return "message length differs from the matching receive";
	case EOPNOTSUPP:
		return "not supported (shape, algorithm or transport)";
	case ETIMEDOUT:
		return "timed out waiting for a step's completions";
	case ECANCELED:
		return "transfer cancelled";
	case ENOLINK:
		return "a link of the route is down";
	case EHOSTUNREACH:
		return "route leaves the mesh";
	case ECONNREFUSED:
		return "the peer's node is closed (its process ended)";
	default: {
		const char *d = strerrordesc_np(-err);

		return d ? d : "unknown error";
	}
	}
}
