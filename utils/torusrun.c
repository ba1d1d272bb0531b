// SPDX-License-Identifier: GPL-2.0
/*
 * torusrun: the one-host launcher. Starts one process per node of a torus.ko
 * fabric (an existing one, or one it creates and destroys afterwards), tells
 * each its node through TC_TRANSPORT / TC_FABRIC / TC_NODE (what
 * tc_comm_create(NULL, ...) reads), prefixes every output line with the rank,
 * forwards SIGINT/SIGTERM/SIGHUP, and stops everything as soon as one rank
 * fails, exiting with that rank's status.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uapi/torus.h>

#define PROG "torusrun"
#include "tool.h"

static const char usage_text[] =
	"usage: torusrun [-n N] [--dims DIMS] [--fabric F] [options] -- PROG [ARG...]\n"
	"\n"
	"Starts N copies of PROG, rank r on node r of a torus.ko fabric, each with\n"
	"TC_TRANSPORT=dev, TC_FABRIC=<fabric id>, TC_NODE=r and TORUSRUN_SIZE=N in its\n"
	"environment (the first three are what tc_comm_create(NULL, ...) reads;\n"
	"TORUSRUN_SIZE, the number of ranks, is for the program). Every line a rank\n"
	"prints is prefixed with \"[r] \" (stdout to stdout, stderr to stderr).\n"
	"\n"
	"Which fabric:\n"
	"  --fabric F       use fabric F (its node count must be N if -n is given)\n"
	"  --dims DIMS      4x4 or 4,4: use a fabric of that shape with no node open,\n"
	"                   or create one (timing: the module's ts_ns, tw_ps, hop_ns\n"
	"                   parameters) and destroy it when the ranks are done\n"
	"  (neither)        use a fabric of N nodes with no node open\n"
	"  --mesh           with --dims: the fabric must be (or is created as) a mesh\n"
	"  --one-port       with --dims: one-port fabric\n"
	"  --new            with --dims: always create a fabric (and destroy it after)\n"
	"  --no-fabric      do not touch /dev/torus-ctl: start N ranks with TC_FABRIC\n"
	"                   from --fabric (default 0), for programs that need no fabric\n"
	"\n"
	"  -n, --np N       number of ranks (default: the fabric's node count)\n"
	"  --transport T    dev (default) or sim. sim starts PROG once, unprefixed,\n"
	"                   with TC_TRANSPORT=sim, TC_SIM_DIMS=DIMS (if --dims) and\n"
	"                   TORUSRUN_SIZE=N: the library's simulator runs every node\n"
	"                   as a thread of one process (tc_sim_launch), so PROG must\n"
	"                   create them itself (torus-bench does, from TC_SIM_DIMS)\n"
	"  --timeout S      stop every rank after S seconds (exit status 124)\n"
	"  --keep-going     when a rank fails, let the others run to their own end\n"
	"                   instead of stopping them (fault tests that watch the\n"
	"                   survivors fail); the exit status is still the first\n"
	"                   failed rank's\n"
	"  --no-prefix      do not prefix output lines\n"
	"  -h, --help       this text\n"
	"\n"
	"Signals: SIGINT, SIGTERM and SIGHUP are forwarded to every rank. When a rank\n"
	"exits with a non-zero status or is killed, the others get SIGTERM (SIGKILL\n"
	"2 s later) and torusrun exits with that rank's status (128+signal if it was\n"
	"killed). Exit status: the ranks' (0 if all exited 0); 2 bad usage; 124\n"
	"--timeout; 125 no fabric, or one could not be created; 127 PROG not found.\n";

#define usage_die(...) die(2, __VA_ARGS__)

struct rank {
	pid_t pid;
	int out, err; /* pipe read ends, -1 when closed */
	int done, status;
	char *buf[2];
	size_t len[2], cap[2];
};

static struct rank *ranks;
static int nranks;
/* pid -> rank + 1 (0: empty), open addressing, 2 * nranks slots rounded up to a power of two */
static int *pid_slot;
static int ep = -1; /* epoll set of the ranks' pipes (and sig_pipe) while they run */
static unsigned int pid_mask;
static int prefix = 1;
static int keep_going; /* --keep-going: a failed rank does not stop the others */
static volatile sig_atomic_t got_signal;
static int sig_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	int e = errno;
	char c = (char)sig;

	if (sig != SIGCHLD)
		got_signal = sig;
	if (write(sig_pipe[1], &c, 1) < 0) {
		/* the pipe is full: a wakeup is already pending */
	}
	errno = e;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static unsigned long parse_ul(const char *what, const char *s, unsigned long min, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		usage_die("%s %s: expected a number %lu..%lu", what, s, min, max);
	return v;
}

/* ---- output relay ---- */

static void emit(int r, int which, const char *line, size_t n)
{
	FILE *f = which ? stderr : stdout;

	if (prefix)
		fprintf(f, "[%d] ", r);
	fwrite(line, 1, n, f);
	fflush(f);
}

/* Read what is there; print whole lines; on EOF print the rest.
 * Returns 1 after data, 0 at EOF (fd closed), -1 when nothing was ready. */
static int relay(int r, int which)
{
	struct rank *k = &ranks[r];
	int *fd = which ? &k->err : &k->out;
	char tmp[4096];
	ssize_t n = read(*fd, tmp, sizeof(tmp));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return -1;
	if (n <= 0) {
		if (k->len[which]) {
			k->buf[which][k->len[which]] = '\n';
			emit(r, which, k->buf[which], k->len[which] + 1);
			k->len[which] = 0;
		}
		/* a child between fork and exec may share the pipe: take it out of the set first */
		if (ep >= 0)
			epoll_ctl(ep, EPOLL_CTL_DEL, *fd, NULL);
		close(*fd);
		*fd = -1;
		return 0;
	}
	if (k->len[which] + n + 1 > k->cap[which]) {
		size_t cap = (k->len[which] + n + 1) * 2;
		char *b = realloc(k->buf[which], cap);

		if (!b)
			die(1, "out of memory");
		k->buf[which] = b;
		k->cap[which] = cap;
	}
	memcpy(k->buf[which] + k->len[which], tmp, n);
	k->len[which] += n;
	for (;;) {
		char *nl = memchr(k->buf[which], '\n', k->len[which]);
		size_t l;

		if (!nl)
			break;
		l = nl - k->buf[which] + 1;
		emit(r, which, k->buf[which], l);
		memmove(k->buf[which], k->buf[which] + l, k->len[which] - l);
		k->len[which] -= l;
	}
	return 1;
}

/* ---- fabric ---- */

struct fabric {
	int fd;
	uint32_t id;
	int created;
};

static int fquery(int fd, uint32_t id, struct torus_fabric_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->fabric_id = id;
	return ioctl(fd, TORUS_IOC_FABRIC_QUERY, q) ? -errno : 0;
}

static int shape_matches(const struct torus_fabric_query *q, int ndims, const uint32_t *dims, uint32_t wrap,
			 int one_port)
{
	if ((int)q->ndims != ndims || q->wrap_mask != wrap || !!(q->fabric_flags & TORUS_FABRIC_ONE_PORT) != one_port)
		return 0;
	for (int d = 0; d < ndims; d++)
		if (q->dims[d] != dims[d])
			return 0;
	return 1;
}

static void fabric_pick(struct fabric *f, long fabric, int *np, int ndims, const uint32_t *dims, int mesh,
			int one_port, int fresh)
{
	struct torus_fabric_query q;
	uint32_t wrap = mesh ? 0 : (1u << ndims) - 1;
	char shape[64];
	int ret;

	f->fd = open("/dev/" TORUS_CTL_NAME, O_RDWR | O_CLOEXEC);
	if (f->fd < 0)
		die(125, "/dev/" TORUS_CTL_NAME ": %s (is torus.ko loaded? or use --transport sim)", strerror(errno));
	if (fabric >= 0) {
		ret = fquery(f->fd, fabric, &q);
		if (ret)
			die(125, "fabric %ld: %s (torusctl fabric list)", fabric, strerror(-ret));
		if (ndims && !shape_matches(&q, ndims, dims, wrap, one_port))
			die(125, "fabric %ld does not have the shape asked for (torusctl fabric show %ld)", fabric,
			    fabric);
		if (*np && (uint32_t)*np != q.nodes)
			die(125, "fabric %ld has %u nodes, not -n %d", fabric, q.nodes, *np);
		if (q.open_nodes)
			fprintf(stderr, PROG ": warning: fabric %ld has %u nodes open already\n", fabric,
				q.open_nodes);
		f->id = fabric;
		*np = q.nodes;
		return;
	}
	if (ndims) {
		uint32_t n = 1;

		for (int d = 0; d < ndims; d++)
			n *= dims[d];
		if (*np && (uint32_t)*np != n)
			usage_die("-n %d does not match --dims (%u nodes)", *np, n);
		*np = n;
	}
	if (!fresh) {
		uint32_t id = 0;

		for (;;) {
			ret = fquery(f->fd, id, &q);
			if (ret && ret != -ENOENT)
				die(125, "fabric query %u: %s", id, strerror(-ret));
			if (!ret && !q.open_nodes &&
			    (ndims ? shape_matches(&q, ndims, dims, wrap, one_port) : (int)q.nodes == *np)) {
				f->id = id;
				*np = q.nodes;
				return;
			}
			if (q.next_fabric_id == TORUS_NO_NODE || q.next_fabric_id <= id)
				break;
			id = q.next_fabric_id;
		}
	}
	if (!ndims)
		die(125, "no fabric of %d nodes with no node open: give --dims to create one, or --fabric F", *np);
	{
		struct torus_fabric_create c = { .size = sizeof(c) };

		c.ndims = ndims;
		c.wrap_mask = wrap;
		c.flags = one_port ? TORUS_FABRIC_ONE_PORT : 0;
		memcpy(c.dims, dims, ndims * sizeof(*dims));
		c.ts_ns = tool_module_param("ts_ns");
		c.tw_ps = tool_module_param("tw_ps");
		c.hop_ns = tool_module_param("hop_ns");
		tool_shape_str(ndims, dims, shape, sizeof(shape));
		if (ioctl(f->fd, TORUS_IOC_FABRIC_CREATE, &c))
			die(125, "creating a %s fabric: %s", shape, strerror(errno));
		f->id = c.fabric_id;
		f->created = 1;
	}
}

static void fabric_release(struct fabric *f)
{
	struct torus_fabric_destroy d = { .size = sizeof(d) };
	double t0 = now_s();

	if (!f->created)
		return;
	d.fabric_id = f->id;
	/* the ranks' files close as they are reaped; give the last closes a moment */
	while (ioctl(f->fd, TORUS_IOC_FABRIC_DESTROY, &d)) {
		if (errno != EBUSY || now_s() - t0 > 5) {
			fprintf(stderr, PROG ": destroying fabric %u: %s (torusctl fabric destroy %u)\n", f->id,
				strerror(errno), f->id);
			return;
		}
		usleep(20000);
	}
}

/* ---- ranks ---- */

static void pid_table_init(void)
{
	unsigned int n = 2;

	while (n < 2u * (unsigned int)nranks)
		n *= 2;
	pid_slot = calloc(n, sizeof(*pid_slot));
	if (!pid_slot)
		die(1, "out of memory");
	pid_mask = n - 1;
}

static void pid_table_add(pid_t pid, int r)
{
	unsigned int i = (unsigned int)pid & pid_mask;

	while (pid_slot[i])
		i = (i + 1) & pid_mask;
	pid_slot[i] = r + 1;
}

/* The rank a reaped child was, or -1 (not one of ours). */
static int pid_table_find(pid_t pid)
{
	for (unsigned int i = (unsigned int)pid & pid_mask; pid_slot[i]; i = (i + 1) & pid_mask)
		if (ranks[pid_slot[i] - 1].pid == pid)
			return pid_slot[i] - 1;
	return -1;
}

/* Each rank leads its own process group, so a signal reaches what it
 * started too (a shell's children), and a rank that dies early cannot leave
 * a later one outside the group. */
static void kill_all(int sig)
{
	for (int r = 0; r < nranks; r++) {
		if (ranks[r].pid <= 0)
			continue;
		if (kill(-ranks[r].pid, sig) && !ranks[r].done)
			kill(ranks[r].pid, sig);
	}
}

/* Two pipes per rank stay open here: raise the soft limit on open files to
 * what they need (up to the hard limit), or stop before starting any rank. */
static void raise_fd_limit(rlim_t need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
		die(1, "%d ranks need %llu open files, and the hard limit is %llu (ulimit -Hn)", nranks,
		    (unsigned long long)need, (unsigned long long)rl.rlim_max);
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die(1, "raising the open-file limit to %llu for %d ranks: %s", (unsigned long long)need, nranks,
		    strerror(errno));
}

static int status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

static void spawn(int r, const char *transport, uint32_t fabric, char **argv)
{
	int o[2], e[2];
	char v[32];
	sigset_t block, old;
	pid_t pid;

	if (pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC))
		die(1, "pipe: %s", strerror(errno));
	/* a signal between fork and exec must meet the default action, not our handler */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old);
	pid = fork();
	if (pid < 0)
		die(1, "fork: %s", strerror(errno));
	if (!pid) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		setpgid(0, 0);
		sigprocmask(SIG_SETMASK, &old, NULL);
		dup2(o[1], 1);
		dup2(e[1], 2);
		setenv("TC_TRANSPORT", transport, 1);
		snprintf(v, sizeof(v), "%u", fabric);
		setenv("TC_FABRIC", v, 1);
		snprintf(v, sizeof(v), "%d", r);
		setenv("TC_NODE", v, 1);
		snprintf(v, sizeof(v), "%d", nranks);
		setenv("TORUSRUN_SIZE", v, 1);
		execvp(argv[0], argv);
		fprintf(stderr, PROG ": %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	setpgid(pid, pid);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(o[1]);
	close(e[1]);
	ranks[r].pid = pid;
	ranks[r].out = o[0];
	ranks[r].err = e[0];
	pid_table_add(pid, r);
}

/* Watch fd under key: rank r's stdout (r << 1) or stderr (r << 1 | 1), or SIG_KEY. */
static void watch(int fd, uint64_t key)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = key };

	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die(1, "epoll_ctl: %s", strerror(errno));
}

/*
 * The ranks' pipes are watched with epoll and a reaped pid is found by a
 * hash, so what torusrun does per line or per exit does not grow with the
 * number of ranks (it scanned every rank's pipes and pids each time:
 * O(ranks) per event, O(ranks^2) over a run).
 */
#define SIG_KEY UINT64_MAX
#define MAX_EVENTS 64

static int run_ranks(const char *transport, uint32_t fabric, char **argv, double timeout)
{
	struct epoll_event evs[MAX_EVENTS];
	int alive = nranks, result = 0, failed = -1, stopping = 0, open_fds = 0;
	double t_start = now_s(), t_kill = 0;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die(1, "epoll_create1: %s", strerror(errno));
	pid_table_init();
	watch(sig_pipe[0], SIG_KEY);
	for (int r = 0; r < nranks; r++) {
		spawn(r, transport, fabric, argv);
		watch(ranks[r].out, (uint64_t)r << 1);
		watch(ranks[r].err, (uint64_t)r << 1 | 1);
		open_fds += 2;
	}
	for (;;) {
		int n, wait_ms = -1;
		double t = now_s();

		/* reap */
		for (;;) {
			int st, r;
			pid_t pid = waitpid(-1, &st, WNOHANG);

			if (pid <= 0)
				break;
			r = pid_table_find(pid);
			if (r < 0 || ranks[r].done)
				continue;
			ranks[r].done = 1;
			ranks[r].status = status_code(st);
			alive--;
			if (ranks[r].status && failed < 0 && !stopping) {
				failed = r;
				result = ranks[r].status;
				const char *then = !alive ? "" : keep_going ? ": the others keep running" :
								    ": stopping the other ranks";

				if (WIFSIGNALED(st))
					fprintf(stderr, PROG ": rank %d was killed by signal %d (%s)%s\n", r,
						WTERMSIG(st), strsignal(WTERMSIG(st)), then);
				else
					fprintf(stderr, PROG ": rank %d exited with status %d%s\n", r,
						ranks[r].status, then);
				if (alive && !keep_going) {
					kill_all(SIGTERM);
					stopping = 1;
					t_kill = t + 2;
				}
			}
		}
		if (got_signal && !stopping) {
			int sig = got_signal;

			kill_all(sig);
			result = 128 + sig;
			stopping = 1;
			t_kill = t + 2;
			got_signal = 0;
		} else if (got_signal) {
			kill_all(got_signal);
			got_signal = 0;
		}
		if (timeout > 0 && !stopping && t - t_start > timeout) {
			fprintf(stderr, PROG ": --timeout %.0f s reached: stopping every rank\n", timeout);
			kill_all(SIGTERM);
			stopping = 1;
			result = 124;
			t_kill = t + 2;
		}
		if (stopping && t_kill && t >= t_kill && alive) {
			kill_all(SIGKILL);
			t_kill = 0;
		}
		if (!alive && (!open_fds || stopping))
			break; /* a killed rank's children may keep a pipe open: do not wait for them */
		if (stopping && t_kill)
			wait_ms = (int)((t_kill - t) * 1000) + 1;
		else if (timeout > 0 && !stopping)
			wait_ms = (int)((t_start + timeout - t) * 1000) + 1;
		else if (!alive)
			wait_ms = 100;
		if (wait_ms < 0 && !alive)
			wait_ms = 0;
		n = epoll_wait(ep, evs, MAX_EVENTS, wait_ms);
		if (n < 0 && errno != EINTR)
			die(1, "epoll_wait: %s", strerror(errno));
		for (int i = 0; i < n; i++) {
			uint64_t key = evs[i].data.u64;

			if (key == SIG_KEY) {
				char buf[64];

				while (read(sig_pipe[0], buf, sizeof(buf)) > 0)
					;
				continue;
			}
			int r = (int)(key >> 1), w = (int)(key & 1);

			if ((w ? ranks[r].err : ranks[r].out) >= 0 && !relay(r, w))
				open_fds--;
		}
	}
	close(ep);
	ep = -1;
	/* print what is buffered */
	for (int r = 0; r < nranks; r++) {
		for (int w = 0; w < 2; w++) {
			int fd = w ? ranks[r].err : ranks[r].out;

			if (fd >= 0) {
				/* a rank's own children may hold the pipe open: take what is there */
				fcntl(fd, F_SETFL, O_NONBLOCK);
				while (relay(r, w) > 0)
					;
				if ((w ? ranks[r].err : ranks[r].out) >= 0) {
					if (ranks[r].len[w]) {
						ranks[r].buf[w][ranks[r].len[w]] = '\n';
						emit(r, w, ranks[r].buf[w], ranks[r].len[w] + 1);
					}
					close(fd);
				}
			}
		}
	}
	free(pid_slot);
	return result;
}

int main(int argc, char **argv)
{
	const char *transport = "dev";
	uint32_t dims[TORUS_MAX_DIMS];
	int ndims = 0, np = 0, mesh = 0, one_port = 0, fresh = 0, no_fabric = 0, i, ret;
	long fabric = -1;
	double timeout = 0;
	struct fabric f = { .fd = -1 };
	struct sigaction sa;
	char *dims_arg = NULL;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			return 0;
		}
		if (!strcmp(a, "--mesh")) {
			mesh = 1;
			continue;
		}
		if (!strcmp(a, "--one-port")) {
			one_port = 1;
			continue;
		}
		if (!strcmp(a, "--new")) {
			fresh = 1;
			continue;
		}
		if (!strcmp(a, "--no-fabric")) {
			no_fabric = 1;
			continue;
		}
		if (!strcmp(a, "--no-prefix")) {
			prefix = 0;
			continue;
		}
		if (!strcmp(a, "--keep-going")) {
			keep_going = 1;
			continue;
		}
		if (strcmp(a, "-n") && strcmp(a, "--np") && strcmp(a, "--dims") && strcmp(a, "--fabric") &&
		    strcmp(a, "--transport") && strcmp(a, "--timeout"))
			usage_die("unknown option %s (see torusrun --help)", a);
		if (!v)
			usage_die("%s needs a value (see torusrun --help)", a);
		i++;
		if (!strcmp(a, "-n") || !strcmp(a, "--np"))
			np = parse_ul(a, v, 1, 65536);
		else if (!strcmp(a, "--dims"))
			ndims = tool_parse_dims("--dims", v, dims, TORUS_MAX_DIMS, 65535), dims_arg = argv[i];
		else if (!strcmp(a, "--fabric"))
			fabric = parse_ul(a, v, 0, UINT32_MAX - 1);
		else if (!strcmp(a, "--timeout"))
			timeout = parse_ul(a, v, 1, 1000000);
		else if (strcmp(v, "dev") && strcmp(v, "sim"))
			usage_die("--transport %s: expected dev or sim (verbs ranks are started by mpirun or srun)", v);
		else
			transport = v;
	}
	if (i >= argc)
		usage_die("no program to run (torusrun [options] -- PROG [ARG...])");
	if ((mesh || one_port || fresh) && !ndims)
		usage_die("--mesh, --one-port and --new need --dims");
	if (fabric >= 0 && fresh)
		usage_die("--fabric and --new exclude each other");
	if (no_fabric && (ndims || fresh) )
		usage_die("--no-fabric starts ranks without a fabric: --dims and --new do not apply");
	if (no_fabric && !np)
		usage_die("--no-fabric needs -n");

	if (!strcmp(transport, "sim")) {
		char v[32];

		if (fabric >= 0 || no_fabric || fresh)
			usage_die("--transport sim uses no device fabric: --fabric, --new, --no-fabric do not apply");
		if (ndims) {
			uint32_t n = 1;

			for (int d = 0; d < ndims; d++)
				n *= dims[d];
			if (np && (uint32_t)np != n)
				usage_die("-n %d does not match --dims (%u nodes)", np, n);
			np = n;
			setenv("TC_SIM_DIMS", dims_arg, 1);
		}
		setenv("TC_TRANSPORT", "sim", 1);
		if (np) {
			snprintf(v, sizeof(v), "%d", np);
			setenv("TORUSRUN_SIZE", v, 1);
		}
		if (mesh)
			setenv("TC_SIM_MESH", "1", 1);
		if (one_port)
			setenv("TC_SIM_ONE_PORT", "1", 1);
		fflush(NULL);
		execvp(argv[i], argv + i);
		die(errno == ENOENT ? 127 : 126, "%s: %s", argv[i], strerror(errno));
	}

	if (no_fabric)
		f.id = fabric >= 0 ? fabric : 0;
	else
		fabric_pick(&f, fabric, &np, ndims, dims, mesh, one_port, fresh);
	nranks = np;
	raise_fd_limit(2 * nranks + 16);
	ranks = calloc(nranks, sizeof(*ranks));
	if (!ranks)
		die(1, "out of memory");
	for (int r = 0; r < nranks; r++)
		ranks[r].out = ranks[r].err = -1;

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK))
		die(1, "pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* torusrun's own stdout may be a pipe that closes: write errors are not fatal */

	ret = run_ranks("dev", f.id, argv + i, timeout);
	fabric_release(&f);
	return ret;
}
