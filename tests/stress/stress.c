// SPDX-License-Identifier: GPL-2.0
/*
 * stress: what torus.ko must survive, run inside the guest with the module loaded. TAP on stdout.
 *
 *  1 unknown commands: every number of the driver's ioctl type in every
 *    direction/size encoding, and 100,000 random commands -> ENOTTY
 *  2 no leaks: output structs pre-filled with 0xAA and with 0x00 come back
 *    byte-identical (no byte left as the caller wrote it)
 *  3 close or munmap while threads post on every port, many rounds
 *  4 SIGKILL of a process in the middle of an exchange: its nodes close,
 *    the fabric can be destroyed
 *  5 fabric destroy racing with open of its nodes
 *  6 rmmod/insmod cycles with create/use/destroy: slab totals flat
 *    (needs root and TORUS_KO, set by utils/torus-vm)
 *  7 failslab (debug kernel only): every allocation failure injected with
 *    fail-nth into fabric create, node open and post reaches userspace as
 *    ENOMEM (or is survived), and the driver still works afterwards
 *
 * usage: stress [--rounds N] [--seconds S]  (S bounds each timed test)
 */
#include <pthread.h>
#include <stdarg.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "torus_util.h"

static int st_test_no;
static unsigned int st_rounds = 2000;
static double st_seconds = 4.0;

/*
 * A timed test's loop condition: go on while under max rounds and either
 * within the time budget or short of the rounds the test needs to say
 * anything (a slow guest, e.g. a KASAN kernel on a loaded host, then runs
 * longer instead of failing), but never past 10x the budget.
 */
static int st_more(unsigned long rounds, unsigned long max, unsigned long min, double t0, double budget)
{
	double el = tv_now() - t0;

	return rounds < max && (el < budget || rounds < min) && el < 10 * budget;
}
static uint64_t st_rng = 0x5eed;

static uint32_t st_rand(void)
{
	st_rng ^= st_rng << 13;
	st_rng ^= st_rng >> 7;
	st_rng ^= st_rng << 17;
	return (uint32_t)st_rng;
}

static void st_result(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void st_result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++st_test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void st_skip(const char *what, const char *why)
{
	printf("ok %d - %s # SKIP %s\n", ++st_test_no, what, why);
	fflush(stdout);
}

/* A small fabric: 2x2 torus, 64 KiB matrices. */
static int st_fabric(struct tv_fabric *f, int ctl, uint32_t d0, uint32_t d1)
{
	struct torus_fabric_create c;
	__u32 dims[2] = { d0, d1 };

	tv_create_args(&c, 2, dims, 3, 0);
	c.matrix_bytes = 65536;
	return tv_fabric_new(f, ctl, &c);
}

static int st_write(const char *path, const char *val);

/* --- 1: unknown commands ------------------------------------------------- */

/* Command types the VFS itself answers for any file (FIOCLEX and friends). */
static int st_vfs_type(unsigned int type)
{
	return type == 0x00 || type == 0x12 || type == 0x15 || type == 'T' || type == 'X' ||
	       type == 'f' || type == 0x94;
}

static void st_unknown_commands(int ctl, int node)
{
	unsigned long bad = 0, n = 0, cmd;
	char first[128] = "";
	unsigned char arg[4096];
	int fd, i, dir, ret;

	memset(arg, 0, sizeof(arg));
	for (i = 0; i < 256; i++) {
		for (dir = 0; dir < 4; dir++) {
			for (int sz = 0; sz < 3; sz++) {
				unsigned int size = sz == 0 ? 0 : sz == 1 ? 8 : 56;

				cmd = dir == 0 && size == 0 ? _IO(TORUS_TYPE, i) :
				      _IOC(dir, TORUS_TYPE, i, size);
				if (cmd == _IO(TORUS_TYPE, i) && i >= TORUS_CMD_BASE && i < TORUS_CMD_LAST)
					continue;	/* a real command */
				for (fd = 0; fd < 2; fd++) {
					ret = ioctl(fd ? node : ctl, cmd, arg);
					n++;
					if (!ret || errno != ENOTTY) {
						if (!bad++)
							snprintf(first, sizeof(first), "cmd 0x%lx: %s", cmd,
								 ret ? strerror(errno) : "success");
					}
				}
			}
		}
	}
	st_result(!bad, "every other number of ioctl type 0x%x (all directions/sizes, ctl and node): ENOTTY (%lu calls, %lu wrong%s%s)",
		  TORUS_TYPE, n, bad, bad ? ", first " : "", first);

	bad = 0;
	n = 0;
	first[0] = 0;
	while (n < 100000) {
		cmd = st_rand();
		if (st_vfs_type(_IOC_TYPE(cmd)))
			continue;
		if (_IOC_TYPE(cmd) == TORUS_TYPE && cmd == _IO(TORUS_TYPE, _IOC_NR(cmd)) &&
		    _IOC_NR(cmd) >= TORUS_CMD_BASE && _IOC_NR(cmd) < TORUS_CMD_LAST)
			continue;
		ret = ioctl(n & 1 ? node : ctl, cmd, arg);
		n++;
		if (!ret || errno != ENOTTY) {
			if (!bad++)
				snprintf(first, sizeof(first), "cmd 0x%lx: %s", cmd,
					 ret ? strerror(errno) : "success");
		}
	}
	st_result(!bad, "100000 random commands: ENOTTY (%lu wrong%s%s)", bad, bad ? ", first " : "",
		  first);
}

/* --- 2: 0xAA-prefilled outputs ------------------------------------------ */

static int st_same_both_fills(int fd, unsigned long cmd, const void *in, size_t len, const char *what,
			      char *why, size_t wlen, int zero_off)
{
	unsigned char a[1024], z[1024];
	size_t i;

	memset(a, 0xAA, len);
	memset(z, 0x00, len);
	/* the input fields (size, flags, ids) are the same in both */
	memcpy(a, in, 16);
	memcpy(z, in, 16);
	/* a reserved input field that must be zero */
	if (zero_off >= 0)
		memset(a + zero_off, 0, 4);
	if (ioctl(fd, cmd, a) || ioctl(fd, cmd, z)) {
		snprintf(why, wlen, "%s: %s", what, strerror(errno));
		return 0;
	}
	for (i = 0; i < len; i++)
		if (a[i] != z[i]) {
			snprintf(why, wlen, "%s: byte %zu came back 0x%02x after 0xAA, 0x%02x after 0x00",
				 what, i, a[i], z[i]);
			return 0;
		}
	return 1;
}

static void st_no_leaks(int ctl, struct tv_fabric *f)
{
	struct torus_handshake hs = { .size = sizeof(hs) };
	struct torus_fabric_query fq = { .size = sizeof(fq), .fabric_id = f->id };
	struct torus_node_query nq = { .size = sizeof(nq) };
	struct torus_counters cn = { .size = sizeof(cn), .fabric_id = f->id, .node_id = 1 };
	char why[200] = "";
	int ok = 1;

	ok &= st_same_both_fills(ctl, TORUS_IOC_HANDSHAKE, &hs, sizeof(hs), "handshake", why, sizeof(why), -1);
	ok = ok && st_same_both_fills(ctl, TORUS_IOC_FABRIC_QUERY, &fq, sizeof(fq), "fabric_query ctl", why, sizeof(why), -1);
	ok = ok && st_same_both_fills(f->fd[0], TORUS_IOC_FABRIC_QUERY, &fq, sizeof(fq), "fabric_query node", why, sizeof(why), -1);
	ok = ok && st_same_both_fills(f->fd[0], TORUS_IOC_NODE_QUERY, &nq, sizeof(nq), "node_query", why, sizeof(why), offsetof(struct torus_node_query, __reserved));
	ok = ok && st_same_both_fills(ctl, TORUS_IOC_COUNTERS, &cn, sizeof(cn), "counters ctl", why, sizeof(why), -1);
	ok = ok && st_same_both_fills(f->fd[1], TORUS_IOC_COUNTERS, &cn, sizeof(cn), "counters node", why, sizeof(why), -1);
	/* reserved out fields read zero */
	memset(&nq, 0xAA, sizeof(nq));
	nq.size = sizeof(nq);
	nq.flags = 0;
	nq.__reserved = 0;
	if (ok && (ioctl(f->fd[0], TORUS_IOC_NODE_QUERY, &nq) || nq.__reserved)) {
		snprintf(why, sizeof(why), "node_query __reserved 0x%x", nq.__reserved);
		ok = 0;
	}
	/* a completion entry: every byte written, no flag bits beyond the known ones */
	if (ok) {
		struct torus_seg s = { .offset = 0, .length = 64 };
		struct torus_desc x[2];
		struct torus_cqe e[2];
		int hops[TORUS_MAX_DIMS] = { 0 };
		__u32 posted;

		tv_route(f, 0, 1, hops);
		tv_recv_desc(&x[1], tv_arrival_port(f, hops), 9, &s, 1, 0);
		tv_send_desc(&x[0], 1, 9, &s, 1, 0);
		memset(e, 0xAA, sizeof(e));
		if (tv_post(f->fd[1], &x[1], 1, &posted) || tv_post(f->fd[0], &x[0], 1, &posted) ||
		    tv_wait(f->fd[0], &e[0], 1, 1, TV_WAIT_NS) != 1 ||
		    tv_wait(f->fd[1], &e[1], 1, 1, TV_WAIT_NS) != 1) {
			snprintf(why, sizeof(why), "message for the completion check failed");
			ok = 0;
		} else if (e[0].flags & ~TORUS_CQE_OVERFLOW || e[1].flags & ~TORUS_CQE_OVERFLOW ||
			   e[0].status || e[1].status || e[1].peer != 0 || e[0].peer != 1) {
			snprintf(why, sizeof(why), "cqe flags 0x%x/0x%x status %d/%d peer %u/%u",
				 e[0].flags, e[1].flags, e[0].status, e[1].status, e[0].peer, e[1].peer);
			ok = 0;
		}
	}
	st_result(ok, "0xAA-prefilled output structs (handshake, queries, counters, cqe) come back with no byte left as written%s%s",
		  ok ? "" : ": ", why);
}

/* --- 3: close / munmap during traffic ------------------------------------ */

struct st_poster {
	struct tv_fabric *f;
	int fd;
	uint32_t node;
	volatile int *stop;
	unsigned long posted, errors;
};

/* Post receives on every port and sends to every neighbour until told to stop. */
static void *st_post_loop(void *arg)
{
	struct st_poster *p = arg;
	struct torus_seg s = { .offset = 4096, .length = 2048 };
	struct torus_desc x[2 * TORUS_MAX_PORTS];
	struct torus_cqe e[64];
	uint32_t nports = 2 * p->f->ndims, i, k;
	__u32 posted;
	int ret;

	while (!*p->stop) {
		k = 0;
		for (i = 0; i < nports; i++) {
			__u32 nb = tv_neighbor(p->f, p->node, i);

			if (nb == TORUS_NO_NODE)
				continue;
			tv_recv_desc(&x[k++], i, 1, &s, 1, 0);
			x[k - 1].flags = TORUS_RECV_ANY_TAG;
			tv_send_desc(&x[k++], nb, 1, &s, 1, 0);
		}
		ret = tv_post(p->fd, x, k, &posted);
		p->posted += posted;
		if (ret)
			p->errors++;
		if (ret == -EBADF)
			break;
		tv_wait(p->fd, e, 0, 64, 0);
	}
	return NULL;
}

static void st_close_during_traffic(int ctl)
{
	struct tv_fabric f;
	unsigned long rounds = 0, posted = 0, bad = 0;
	double t0 = tv_now();
	char why[160] = "";
	int ret;

	ret = st_fabric(&f, ctl, 2, 2);
	if (ret) {
		st_result(0, "close/munmap during traffic: fabric: %s", strerror(-ret));
		return;
	}
	while (st_more(rounds, st_rounds, 20, t0, st_seconds)) {
		struct st_poster p[2];
		pthread_t th[2];
		volatile int stop = 0;
		int i, victim = st_rand() % 2, how = st_rand() % 3;

		for (i = 0; i < 2; i++) {
			p[i] = (struct st_poster){ .f = &f, .fd = f.fd[i], .node = i, .stop = &stop };
			pthread_create(&th[i], NULL, st_post_loop, &p[i]);
		}
		usleep(st_rand() % 500);
		/* close the node under the thread, unmap its matrix, or both */
		if (how != 1) {
			close(f.fd[victim]);
		}
		if (how != 0) {
			munmap(f.map[victim], f.map_len);
			f.map[victim] = NULL;
		}
		usleep(st_rand() % 300);
		stop = 1;
		for (i = 0; i < 2; i++) {
			pthread_join(th[i], NULL);
			posted += p[i].posted;
		}
		/* reopen what went away: the node must come back fully usable */
		if (how != 1) {
			f.fd[victim] = tv_node_open(f.id, victim);
			if (f.fd[victim] < 0) {
				snprintf(why, sizeof(why), "reopen node %d: %s", victim, strerror(-f.fd[victim]));
				bad++;
				break;
			}
		}
		if (!f.map[victim] || how != 1) {
			if (f.map[victim])
				munmap(f.map[victim], f.map_len);
			f.map[victim] = mmap(NULL, f.map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
					     f.fd[victim], 0);
			if (f.map[victim] == MAP_FAILED) {
				f.map[victim] = NULL;
				snprintf(why, sizeof(why), "remap: %s", strerror(errno));
				bad++;
				break;
			}
		}
		/* drain what is left so the next round starts clean */
		for (i = 0; i < 2; i++) {
			struct torus_cqe e[64];

			while (tv_wait(f.fd[i], e, 0, 64, 0) > 0)
				;
		}
		rounds++;
	}
	tv_fabric_close_nodes(&f);
	ret = tv_destroy(ctl, f.id);
	if (ret && !bad) {
		snprintf(why, sizeof(why), "destroy after the rounds: %s", strerror(-ret));
		bad++;
	}
	free(f.fd);
	free(f.map);
	free(f.q);
	st_result(!bad && rounds >= 20, "close/munmap while 2 threads post on every port: %lu rounds in %.1f s, %lu descriptors posted%s%s",
		  rounds, tv_now() - t0, posted, why[0] ? ": " : "", why);
}

/* --- 4: SIGKILL mid-exchange -------------------------------------------- */

static void st_child_exchange(uint32_t id, uint32_t nodes)
{
	struct tv_fabric f;
	volatile int stop = 0;
	struct st_poster p[4];
	pthread_t th[4];
	uint32_t i;

	memset(&f, 0, sizeof(f));
	f.id = id;
	f.nodes = nodes;
	f.ndims = 2;
	f.wrap = 3;
	f.dims[0] = 2;
	f.dims[1] = nodes / 2;
	for (i = 0; i < nodes && i < 4; i++) {
		int fd = tv_node_open(id, i);

		if (fd < 0)
			_exit(1);
		mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		p[i] = (struct st_poster){ .f = &f, .fd = fd, .node = i, .stop = &stop };
		pthread_create(&th[i], NULL, st_post_loop, &p[i]);
	}
	for (;;)
		pause();
}

static void st_sigkill(int ctl)
{
	struct torus_fabric_create c;
	__u32 dims[2] = { 2, 2 };
	unsigned long rounds = 0, bad = 0;
	double t0 = tv_now();
	char why[160] = "";
	int ret, st;

	tv_create_args(&c, 2, dims, 3, 0);
	c.matrix_bytes = 65536;
	ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_CREATE, &c);
	if (ret) {
		st_result(0, "SIGKILL mid-exchange: create: %s", strerror(-ret));
		return;
	}
	while (st_more(rounds, st_rounds / 10, 5, t0, st_seconds)) {
		pid_t pid = fork();

		if (pid == 0)
			st_child_exchange(c.fabric_id, c.nodes);
		usleep(2000 + st_rand() % 20000);
		kill(pid, SIGKILL);
		if (waitpid(pid, &st, 0) != pid || !WIFSIGNALED(st)) {
			snprintf(why, sizeof(why), "child %d did not die by the signal (status 0x%x)", pid, st);
			bad++;
			break;
		}
		rounds++;
	}
	/* every node the killed processes had open is closed again */
	ret = tv_destroy(ctl, c.fabric_id);
	if (ret && !bad) {
		snprintf(why, sizeof(why), "destroy after the kills: %s (a node stayed open?)", strerror(-ret));
		bad++;
	}
	st_result(!bad && rounds >= 5, "SIGKILL of a process posting on 4 nodes: %lu rounds in %.1f s, fabric destroyable after%s%s",
		  rounds, tv_now() - t0, why[0] ? ": " : "", why);
}

/* --- 4b: a closed node receives nothing --------------------------------- */

/*
 * A message sent to a node nobody has open must not be waiting for the
 * next process that opens it (it would match that process's receive: a
 * stale payload, silently). Found through tests/stress/faults.c: after a
 * failed alltoall, survivors' sends parked in closed nodes' FIFOs.
 */
static void st_closed_node_receives_nothing(int ctl)
{
	struct tv_fabric f;
	struct torus_seg s = { .offset = 0, .length = 100 };
	struct torus_desc x;
	struct torus_cqe e;
	int hops[TORUS_MAX_DIMS] = { 0 };
	__u32 posted;
	int ret, got;

	ret = st_fabric(&f, ctl, 2, 2);
	if (ret) {
		st_result(0, "closed node: fabric: %s", strerror(-ret));
		return;
	}
	munmap(f.map[1], f.map_len);
	close(f.fd[1]);
	f.map[1] = NULL;
	f.fd[1] = -1;
	tv_route(&f, 0, 1, hops);
	tv_fill(f.map[0], 100, 77);
	tv_send_desc(&x, 1, 77, &s, 1, 0);
	ret = tv_post(f.fd[0], &x, 1, &posted);
	if (!ret)
		ret = tv_wait(f.fd[0], &e, 1, 1, TV_WAIT_NS) == 1 ? 0 : -ETIMEDOUT;
	f.fd[1] = tv_node_open(f.id, 1);
	f.map[1] = f.fd[1] < 0 ? MAP_FAILED :
		   mmap(NULL, f.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, f.fd[1], 0);
	if (ret || f.map[1] == MAP_FAILED) {
		st_result(0, "closed node: send or reopen failed: %s", strerror(ret ? -ret : errno));
		f.map[1] = NULL;
		tv_fabric_free(&f);
		return;
	}
	tv_recv_desc(&x, tv_arrival_port(&f, hops), 77, &s, 1, 0);
	ret = tv_post(f.fd[1], &x, 1, &posted);
	got = ret ? ret : tv_wait(f.fd[1], &e, 1, 1, 300ULL * 1000 * 1000);
	st_result(got == -ETIMEDOUT,
		  "a message sent while the node was closed is not delivered to its next opener (receive: %s%s)",
		  got == 1 ? "completed with the stale message" : got == -ETIMEDOUT ? "nothing, as it should" :
		  strerror(-got), got == 1 && tv_check(f.map[1], 100, 77) < 0 ? ", its bytes" : "");
	tv_fabric_free(&f);
	free(f.fd);
	free(f.map);
	free(f.q);
}

/* --- 4c: tracepoints ----------------------------------------------------- */

/* The torus:* events (kmod/trace.h) show a message's post, start and completion, and an error. */
static void st_tracepoints(int ctl)
{
	const char *tr = "/sys/kernel/tracing";
	char path[128], buf[65536];
	struct tv_fabric f;
	struct torus_seg s = { .offset = 0, .length = 64 };
	struct torus_desc x[2];
	struct torus_cqe e;
	int hops[TORUS_MAX_DIMS] = { 0 };
	__u32 posted;
	ssize_t len = 0, r;
	int fd, ret, okp, oks, okc, oke;

	snprintf(path, sizeof(path), "%s/events/torus/enable", tr);
	if (access(path, F_OK)) {
		mount("tracefs", tr, "tracefs", 0, NULL);
		if (access(path, F_OK)) {
			st_skip("tracepoints torus:post/start/complete/error",
				"no tracefs or no torus events on this kernel");
			return;
		}
	}
	snprintf(path, sizeof(path), "%s/trace", tr);
	st_write(path, "");
	snprintf(path, sizeof(path), "%s/events/torus/enable", tr);
	st_write(path, "1");
	ret = st_fabric(&f, ctl, 2, 2);
	if (!ret) {
		struct torus_link_fault lf = { .size = sizeof(lf), .flags = TORUS_FAULT_DOWN,
					       .fabric_id = f.id, .node_id = 0 };

		tv_route(&f, 0, 1, hops);
		tv_recv_desc(&x[1], tv_arrival_port(&f, hops), 3, &s, 1, 0);
		tv_send_desc(&x[0], 1, 3, &s, 1, 0);
		if (tv_post(f.fd[1], &x[1], 1, &posted) || tv_post(f.fd[0], &x[0], 1, &posted) ||
		    tv_wait(f.fd[1], &e, 1, 1, TV_WAIT_NS) != 1 || tv_wait(f.fd[0], &e, 1, 1, TV_WAIT_NS) != 1)
			ret = -EIO;
		/* and one that fails: the first link of its route is down */
		lf.port = tv_first_port(&f, hops);
		if (!ret && !tv_ioctl(ctl, TORUS_IOC_LINK_FAULT, &lf) &&
		    !tv_post(f.fd[0], &x[0], 1, &posted))
			tv_wait(f.fd[0], &e, 1, 1, TV_WAIT_NS);
		tv_fabric_free(&f);
		free(f.fd);
		free(f.map);
		free(f.q);
	}
	st_write(path, "0");
	snprintf(path, sizeof(path), "%s/trace", tr);
	fd = open(path, O_RDONLY);
	while (fd >= 0 && len < (ssize_t)sizeof(buf) - 1 && (r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += r;
	if (fd >= 0)
		close(fd);
	buf[len] = 0;
	okp = strstr(buf, "torus_post:") != NULL;
	oks = strstr(buf, "torus_start:") != NULL;
	okc = strstr(buf, "torus_complete:") != NULL;
	oke = strstr(buf, "torus_error:") != NULL && strstr(buf, "status=-67") != NULL;
	st_result(!ret && okp && oks && okc && oke,
		  "tracepoints: torus_post %s, torus_start %s, torus_complete %s, torus_error (ENOLINK) %s",
		  okp ? "seen" : "MISSING", oks ? "seen" : "MISSING", okc ? "seen" : "MISSING",
		  oke ? "seen" : "MISSING");
}

/* --- 5: destroy racing with open ---------------------------------------- */

struct st_opener {
	volatile uint32_t id;
	volatile int stop;
	unsigned long opens, refused, unexpected;
	int last_err;
};

static void *st_open_loop(void *arg)
{
	struct st_opener *o = arg;
	char path[96];

	while (!o->stop) {
		int fd;

		tv_node_path(path, sizeof(path), o->id, st_rand() % 4);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);

			o->opens++;
			if (m != MAP_FAILED)
				munmap(m, 4096);
			close(fd);
			usleep(st_rand() % 200);	/* leave destroy a window */
		} else if (errno == ENOENT || errno == ENXIO || errno == ENODEV) {
			o->refused++;
		} else {
			o->unexpected++;
			o->last_err = errno;
		}
	}
	return NULL;
}

static void st_destroy_vs_open(int ctl)
{
	struct torus_fabric_create c;
	__u32 dims[2] = { 2, 2 };
	struct st_opener o = { 0 };
	unsigned long rounds = 0, busy = 0, bad = 0;
	double t0 = tv_now();
	pthread_t th;
	char why[160] = "";
	int ret;

	tv_create_args(&c, 2, dims, 3, 0);
	c.matrix_bytes = 4096;
	ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_CREATE, &c);
	if (ret) {
		st_result(0, "destroy racing open: create: %s", strerror(-ret));
		return;
	}
	o.id = c.fabric_id;
	pthread_create(&th, NULL, st_open_loop, &o);
	while (st_more(rounds, st_rounds, 3, t0, st_seconds)) {
		ret = tv_destroy(ctl, c.fabric_id);
		if (ret == -EBUSY) {
			busy++;
			continue;
		}
		if (ret) {
			snprintf(why, sizeof(why), "destroy: %s", strerror(-ret));
			bad++;
			break;
		}
		ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_CREATE, &c);
		if (ret) {
			snprintf(why, sizeof(why), "create: %s", strerror(-ret));
			bad++;
			break;
		}
		o.id = c.fabric_id;
		rounds++;
	}
	o.stop = 1;
	pthread_join(th, NULL);
	if (!bad) {
		ret = tv_destroy(ctl, c.fabric_id);
		if (ret) {
			snprintf(why, sizeof(why), "final destroy: %s", strerror(-ret));
			bad++;
		}
	}
	if (o.unexpected && !bad) {
		snprintf(why, sizeof(why), "open failed %lu times with %s", o.unexpected, strerror(o.last_err));
		bad++;
	}
	st_result(!bad && rounds >= 3, "fabric destroy/create racing open+mmap: %lu destroys, %lu EBUSY, %lu opens, %lu refused (ENOENT/ENXIO)%s%s",
		  rounds, busy, o.opens, o.refused, why[0] ? ": " : "", why);
}

/* --- 6: load/use/unload cycles with slab totals -------------------------- */

static long st_meminfo(const char *key)
{
	char line[256];
	long v = -1;
	FILE *fp = fopen("/proc/meminfo", "r");

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = strtol(line + strlen(key) + 1, NULL, 10);
	fclose(fp);
	return v;
}

/* The module, read once into memory: insmod over 9p under TCG is slow. */
static void *st_ko;
static size_t st_ko_len;

static int st_insmod(const char *args)
{
	return syscall(SYS_init_module, st_ko, st_ko_len, args ? args : "") ? -errno : 0;
}

static int st_rmmod(void)
{
	for (int i = 0; i < 100; i++) {
		if (!syscall(SYS_delete_module, "torus", O_NONBLOCK))
			return 0;
		if (errno != EAGAIN && errno != EBUSY)
			return -errno;
		usleep(10000);
	}
	return -EBUSY;
}

/* One cycle: insmod, create, exchange a message, destroy, rmmod. */
static int st_cycle(char *why, size_t wlen)
{
	struct tv_fabric f;
	int ctl, ret;

	ret = st_insmod(NULL);
	if (ret) {
		snprintf(why, wlen, "init_module: %s", strerror(-ret));
		return -1;
	}
	for (int i = 0; i < 200 && access(TV_CTL_PATH, F_OK); i++)
		usleep(5000);
	ctl = tv_ctl_open();
	if (ctl < 0) {
		snprintf(why, wlen, "open ctl: %s", strerror(-ctl));
		return -1;
	}
	ret = st_fabric(&f, ctl, 2, 2);
	if (!ret) {
		struct torus_seg s = { .offset = 0, .length = 1000 };
		struct torus_desc x[2];
		struct torus_cqe e;
		int hops[TORUS_MAX_DIMS] = { 0 };
		__u32 posted;

		tv_fill(f.map[0], 1000, 42);
		tv_route(&f, 0, 3, hops);
		tv_recv_desc(&x[1], tv_arrival_port(&f, hops), 5, &s, 1, 0);
		tv_send_desc(&x[0], 3, 5, &s, 1, 0);
		if (tv_post(f.fd[3], &x[1], 1, &posted) || tv_post(f.fd[0], &x[0], 1, &posted) ||
		    tv_wait(f.fd[3], &e, 1, 1, TV_WAIT_NS) != 1 || e.status ||
		    tv_check(f.map[3], 1000, 42) >= 0) {
			snprintf(why, wlen, "message 0 -> 3 did not arrive intact");
			ret = -1;
		}
		tv_fabric_free(&f);
	} else {
		snprintf(why, wlen, "fabric: %s", strerror(-ret));
	}
	close(ctl);
	if (st_rmmod()) {
		snprintf(why, wlen, "delete_module: %s", strerror(errno));
		return -1;
	}
	return ret;
}

/*
 * Is this a KASAN kernel? Its quarantine keeps freed objects (and their slab
 * pages) for a while, so Slab totals there cannot show a small leak; the
 * debug-kernel lane finds leaks with kmemleak instead. Read from
 * /proc/config.gz (the debug kernel has IKCONFIG_PROC; Debian's does not,
 * and has no KASAN).
 */
static int st_kasan(void)
{
	FILE *f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	char line[128];
	int yes = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		yes |= !strcmp(line, "CONFIG_KASAN=y\n");
	pclose(f);
	return yes;
}

static void st_load_cycles(void)
{
	const char *ko = getenv("TORUS_KO");
	const char *args = getenv("TORUS_MODULE_ARGS");
	unsigned int n = st_rounds / 20, i;
	long before, after, tol = 512;	/* KiB */
	char why[160] = "";
	double t0;
	int bad = 0, kasan = st_kasan();

	if (!ko || geteuid() != 0) {
		st_skip("load/create/use/destroy/unload cycles", "needs root and TORUS_KO (utils/torus-vm)");
		return;
	}
	{
		int fd = open(ko, O_RDONLY);
		off_t len = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);

		st_ko = len > 0 ? malloc(len) : NULL;
		if (!st_ko || pread(fd, st_ko, len, 0) != len) {
			st_result(0, "load cycles: cannot read %s", ko);
			if (fd >= 0)
				close(fd);
			return;
		}
		st_ko_len = len;
		close(fd);
	}
	if (st_rmmod()) {
		st_result(0, "load cycles: the module cannot be removed at the start (something holds it)");
		return;
	}
	t0 = tv_now();
	/* warm-up: caches, sysfs, devtmpfs reach their steady size */
	for (i = 0; i < 3 && !bad; i++)
		bad = st_cycle(why, sizeof(why));
	before = st_meminfo("Slab");
	for (i = 0; !bad && st_more(i, n, 5, t0, 3 * st_seconds); i++)
		bad = st_cycle(why, sizeof(why));
	after = st_meminfo("Slab");
	if (st_insmod(args) && !bad) {
		snprintf(why, sizeof(why), "final init_module: %s", strerror(errno));
		bad = 1;
	}

	if (kasan)
		tol = 16384;	/* the quarantine; kmemleak decides on this kernel */
	st_result(!bad && i >= 5 && after - before <= tol,
		  "%u insmod/create/message/destroy/rmmod cycles in %.1f s: Slab %ld -> %ld KiB (%+ld, allowed %ld%s)%s%s",
		  i, tv_now() - t0, before, after, after - before, tol,
		  kasan ? ": KASAN quarantine, leaks are kmemleak's" : "", why[0] ? ": " : "", why);
}

/* --- 7: failslab --------------------------------------------------------- */

static int st_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Arm fail-nth for this thread: the @nth fault-injection point fails. */
static int st_fail_nth(int nth)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", nth);
	return st_write("/proc/thread-self/fail-nth", buf);
}

/* 1 when the armed fault was injected (fail-nth reads back 0). */
static int st_fail_hit(void)
{
	char buf[16] = "";
	int fd = open("/proc/thread-self/fail-nth", O_RDONLY), hit;

	if (fd < 0)
		return 0;
	hit = read(fd, buf, sizeof(buf) - 1) > 0 && atoi(buf) == 0;
	close(fd);
	st_write("/proc/thread-self/fail-nth", "0");
	return hit;
}

enum { ST_FS_CREATE, ST_FS_OPEN, ST_FS_POST, ST_FS_NOPS };

static void st_failslab(int ctl)
{
	static const char *const names[] = { "fabric create", "node open", "post" };
	unsigned long injected[ST_FS_NOPS] = { 0 }, enomem[ST_FS_NOPS] = { 0 }, ok[ST_FS_NOPS] = { 0 };
	char why[200] = "";
	int bad = 0, op, nth;

	if (access("/proc/thread-self/fail-nth", F_OK) ||
	    (access("/sys/kernel/debug/failslab", F_OK) &&
	     (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL),
	      access("/sys/kernel/debug/failslab", F_OK)))) {
		st_skip("failslab: injected allocation failures reach userspace as ENOMEM",
			"kernel without FAILSLAB/fail-nth (the debug-kernel lane runs it: make check-debug)");
		return;
	}
	/* GFP_KERNEL allocations too; no stack dump per injected fault */
	st_write("/sys/kernel/debug/failslab/ignore-gfp-wait", "N");
	st_write("/sys/kernel/debug/failslab/verbose", "0");
	st_write("/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N");
	st_write("/sys/kernel/debug/fail_page_alloc/verbose", "0");

	for (op = 0; op < ST_FS_NOPS && !bad; op++) {
		for (nth = 1; nth < 2000 && !bad; nth++) {
			struct torus_fabric_create c;
			__u32 dims[2] = { 2, 2 };
			struct tv_fabric f;
			int ret = 0, hit, fd = -1;

			tv_create_args(&c, 2, dims, 3, 0);
			c.matrix_bytes = 8192;
			if (op != ST_FS_CREATE) {
				ret = st_fabric(&f, ctl, 2, 2);
				if (ret) {
					snprintf(why, sizeof(why), "%s setup: %s", names[op], strerror(-ret));
					bad = 1;
					break;
				}
				if (op == ST_FS_OPEN) {
					close(f.fd[1]);
					munmap(f.map[1], f.map_len);
					f.fd[1] = -1;
					f.map[1] = NULL;
				}
			}
			st_fail_nth(nth);
			if (op == ST_FS_CREATE) {
				ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_CREATE, &c);
			} else if (op == ST_FS_OPEN) {
				char path[96];

				tv_node_path(path, sizeof(path), f.id, 1);
				fd = open(path, O_RDWR | O_CLOEXEC);
				ret = fd < 0 ? -errno : 0;
			} else {
				struct torus_seg s = { .offset = 0, .length = 100 };
				struct torus_desc x[4];
				__u32 posted;
				int hops[TORUS_MAX_DIMS] = { 0 };

				tv_route(&f, 0, 3, hops);
				tv_send_desc(&x[0], 3, 1, &s, 1, 0);
				tv_send_desc(&x[1], 1, 1, &s, 1, 0);
				tv_send_desc(&x[2], 2, 1, &s, 1, 0);
				tv_recv_desc(&x[3], 0, 1, &s, 1, 0);
				ret = tv_post(f.fd[0], x, 4, &posted);
			}
			hit = st_fail_hit();
			if (hit) {
				injected[op]++;
				if (ret == -ENOMEM)
					enomem[op]++;
				else if (ret) {
					snprintf(why, sizeof(why), "%s with allocation %d failed: %s, want ENOMEM",
						 names[op], nth, strerror(-ret));
					bad = 1;
				}
			}
			/* the driver is still usable: the same step works now */
			if (op == ST_FS_CREATE) {
				if (!ret)
					tv_destroy(ctl, c.fabric_id);
				ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_CREATE, &c);
				if (ret && !bad) {
					snprintf(why, sizeof(why), "create after injection %d: %s", nth, strerror(-ret));
					bad = 1;
				}
				if (!ret)
					tv_destroy(ctl, c.fabric_id);
			} else {
				if (fd >= 0)
					close(fd);
				tv_fabric_free(&f);
				free(f.fd);
				free(f.map);
				free(f.q);
			}
			if (!hit) {
				ok[op]++;
				break;	/* the step ran without reaching the nth allocation: all covered */
			}
		}
	}
	st_result(!bad && injected[0] && injected[1] && injected[2],
		  "failslab fail-nth: create %lu injected (%lu ENOMEM), open %lu (%lu), post %lu (%lu); driver usable after each%s%s",
		  injected[0], enomem[0], injected[1], enomem[1], injected[2], enomem[2],
		  why[0] ? ": " : "", why);
}

int main(int argc, char **argv)
{
	struct tv_fabric f;
	int ctl, ret, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			st_rounds = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			st_seconds = strtod(argv[++i], NULL);
		else {
			fprintf(stderr, "usage: %s [--rounds N] [--seconds S]\n", argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	printf("TAP version 13\n1..10\n");
	ctl = tv_ctl_open();
	if (ctl < 0) {
		printf("not ok 1 - /dev/" TORUS_CTL_NAME ": %s (torus.ko not loaded)\n", strerror(-ctl));
		return 1;
	}
	ret = st_fabric(&f, ctl, 2, 2);
	if (ret) {
		printf("not ok 1 - 2x2 fabric: %s\n", strerror(-ret));
		return 1;
	}
	st_unknown_commands(ctl, f.fd[0]);
	st_no_leaks(ctl, &f);
	tv_fabric_free(&f);
	free(f.fd);
	free(f.map);
	free(f.q);
	st_close_during_traffic(ctl);
	st_sigkill(ctl);
	st_closed_node_receives_nothing(ctl);
	st_tracepoints(ctl);
	st_destroy_vs_open(ctl);
	st_failslab(ctl);
	close(ctl);
	st_load_cycles();
	return 0;
}
