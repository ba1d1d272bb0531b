// SPDX-License-Identifier: GPL-2.0
/*
 * faults: the link fault knobs of torus.ko (TORUS_IOC_LINK_FAULT) seen
 * through the library's tc_alltoall over the device, one process per node
 * of a 2x4 torus, every received byte checked:
 *   down  -> an error naming the port (-ENOLINK), the rest time out (or
 *            find that a peer already gave up: -ECONNREFUSED); no hang
 *   drop  -> -ETIMEDOUT naming step, port and peer; the first node fails
 *            within 2x the per-step timeout (plus a clean run's time); no hang
 *   delay -> the right bytes, later
 * and after each fault is cleared, new communicators work again.
 * Runs in the guest (TAP); needs torus.ko.
 */
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>

#include <toruscoll.h>

#include "torus_util.h"
#include "../unit/tbyte.h"

#define FT_P		8
#define FT_BLOCK	512
#define FT_TIMEOUT_MS	3000
/*
 * Runs expected to succeed (the clean run, the delayed link, the runs after a
 * fault is cleared) wait longer per step: on a slow guest (a KASAN kernel on a
 * loaded host) a peer may reach step 0 seconds after the first process.
 */
#define FT_CLEAN_TIMEOUT_MS 30000
#define FT_DELAY_NS	(40ULL * 1000 * 1000)

struct ft_res {
	int ret;
	long bad_bytes;
	double ms;
	char err[200];
};

static int ft_test_no;

static void ft_ok(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void ft_ok(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++ft_test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static unsigned char ft_byte(int src, int dst, size_t k, int run)
{
	return tbyte((uint32_t)run, (uint32_t)src, (uint32_t)dst, k);
}

static void ft_node(uint32_t fabric, int node, int run, int timeout_ms, struct ft_res *res)
{
	struct tc_comm_attr attr = {
		.size = sizeof(attr),
		.transport = TC_TRANSPORT_DEV,
		.fabric_id = fabric,
		.node = node,
		.timeout_ms = timeout_ms,
	};
	unsigned char snd[FT_P * FT_BLOCK], rcv[FT_P * FT_BLOCK];
	struct timespec t0, t1;
	tc_comm_t *comm;
	size_t k;
	int ret;

	ret = tc_comm_create(&attr, &comm);
	if (ret) {
		res->ret = ret;
		snprintf(res->err, sizeof(res->err), "tc_comm_create: %s", tc_last_error());
		return;
	}
	for (k = 0; k < sizeof(snd); k++)
		snd[k] = ft_byte(node, k / FT_BLOCK, k % FT_BLOCK, run);
	memset(rcv, 0xee, sizeof(rcv));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = tc_alltoall(comm, snd, rcv, FT_BLOCK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	res->ret = ret;
	if (ret)
		snprintf(res->err, sizeof(res->err), "%s", tc_last_error());
	else
		for (k = 0; k < sizeof(rcv); k++)
			res->bad_bytes += rcv[k] != ft_byte(k / FT_BLOCK, node, k % FT_BLOCK, run);
	tc_comm_destroy(comm);
}

/* One alltoall on every node; returns how many processes died or hung. */
static int ft_run(uint32_t fabric, int run, int timeout_ms, struct ft_res *res, double *wall)
{
	double t0 = tv_now();
	pid_t pid[FT_P];
	int n, bad = 0, st;

	memset(res, 0, FT_P * sizeof(*res));
	fflush(stdout);
	for (n = 0; n < FT_P; n++) {
		pid[n] = fork();
		if (pid[n] == 0) {
			alarm(10 * timeout_ms / 1000 + 30);	/* a hang dies, and is counted */
			ft_node(fabric, n, run, timeout_ms, &res[n]);
			_exit(0);
		}
	}
	for (n = 0; n < FT_P; n++)
		if (pid[n] < 0 || waitpid(pid[n], &st, 0) != pid[n] || !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	*wall = (tv_now() - t0) * 1e3;
	return bad;
}

/*
 * The fabric's makespan (the latest virtual end time of any message) since
 * the last call, which resets it with every node clock: a run's virtual
 * duration, what the device's timing model charged it. -errno on failure.
 */
static long long ft_makespan(int ctl, uint32_t fabric)
{
	struct torus_fabric_query q = { .size = sizeof(q), .flags = TORUS_QUERY_RESET_STATS, .fabric_id = fabric };
	int ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_QUERY, &q);

	return ret ? ret : (long long)q.makespan_ns;
}

static int ft_fault(int ctl, uint32_t fabric, uint32_t flags, uint32_t drop, uint64_t delay_ns)
{
	struct torus_link_fault lf = {
		.size = sizeof(lf), .flags = flags, .fabric_id = fabric, .node_id = 0, .port = 0,
		.drop_count = drop, .delay_ns = delay_ns,
	};

	return tv_ioctl(ctl, TORUS_IOC_LINK_FAULT, &lf);
}

struct ft_sum {
	int ok, wrong, nolink, timedout, refused, other, named_port, named_all;
	double max_ms, max_fail_ms, min_fail_ms;
	char first[200];
	char other_err[200]; /* the first error outside the expected set */
};

static void ft_summarize(const struct ft_res *res, struct ft_sum *s)
{
	memset(s, 0, sizeof(*s));
	for (int n = 0; n < FT_P; n++) {
		const struct ft_res *r = &res[n];

		if (r->ms > s->max_ms)
			s->max_ms = r->ms;
		if (!r->ret) {
			if (r->bad_bytes)
				s->wrong++;
			else
				s->ok++;
			continue;
		}
		if (r->ms > s->max_fail_ms)
			s->max_fail_ms = r->ms;
		if (!s->min_fail_ms || r->ms < s->min_fail_ms)
			s->min_fail_ms = r->ms;
		if (r->ret == -ENOLINK)
			s->nolink++;
		else if (r->ret == -ETIMEDOUT)
			s->timedout++;
		else if (r->ret == -ECONNREFUSED)
			s->refused++;	/* its peer gave up first and closed */
		else if (!s->other++)
			snprintf(s->other_err, sizeof(s->other_err), "node %d: %s (%d)", n, r->err, r->ret);
		if (strstr(r->err, "port"))
			s->named_port++;
		if (strstr(r->err, "step") && strstr(r->err, "port") &&
		    (strstr(r->err, "peer") || strstr(r->err, "node")))
			s->named_all++;
		if (!s->first[0])
			snprintf(s->first, sizeof(s->first), "node %d: %s", n, r->err);
	}
}

/* After a fault is cleared: new communicators, every byte right. */
static void ft_recover(uint32_t fabric, const char *what, int run, struct ft_res *res)
{
	struct ft_sum s;
	double wall;
	int died = ft_run(fabric, run, FT_CLEAN_TIMEOUT_MS, res, &wall);

	ft_summarize(res, &s);
	ft_ok(!died && s.ok == FT_P, "after %s is cleared, new communicators: %d/%d nodes byte-exact (%.0f ms)%s%s",
	      what, s.ok, FT_P, wall, s.first[0] ? "; " : "", s.first);
}

int main(void)
{
	struct torus_fabric_create c;
	__u32 dims[2] = { 2, 4 };
	struct ft_res *res;
	struct ft_sum s;
	double wall, base;
	long long clean_ns, delay_ns;
	int ctl, ret, died, run = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..7\n");
	ctl = tv_ctl_open();
	if (ctl < 0) {
		printf("not ok 1 - /dev/" TORUS_CTL_NAME ": %s (torus.ko not loaded)\n", strerror(-ctl));
		return 1;
	}
	res = mmap(NULL, FT_P * sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	tv_create_args(&c, 2, dims, 3, 0);
	c.matrix_bytes = 65536;
	ret = tv_ioctl(ctl, TORUS_IOC_FABRIC_CREATE, &c);
	if (ret || res == MAP_FAILED) {
		printf("not ok 1 - 2x4 fabric: %s\n", strerror(-ret));
		return 1;
	}

	ft_makespan(ctl, c.fabric_id);
	died = ft_run(c.fabric_id, run++, FT_CLEAN_TIMEOUT_MS, res, &base);
	clean_ns = ft_makespan(ctl, c.fabric_id);
	ft_summarize(res, &s);
	ft_ok(!died && s.ok == FT_P, "no fault: %d/%d nodes byte-exact (%.0f ms)%s%s", s.ok, FT_P, base,
	      s.first[0] ? "; " : "", s.first);

	/* link down */
	ret = ft_fault(ctl, c.fabric_id, TORUS_FAULT_DOWN, 0, 0);
	died = ft_run(c.fabric_id, run++, FT_TIMEOUT_MS, res, &wall);
	ft_summarize(res, &s);
	ft_ok(!ret && !died && !s.wrong && !s.other && s.nolink >= 1 && s.named_port >= s.nolink,
	      "link 0:0 down: %d nodes -ENOLINK naming the port, %d -ETIMEDOUT, %d -ECONNREFUSED (peer gone), %d other errors, %d ok, %d wrong bytes, no hang (%.0f ms); %s",
	      s.nolink, s.timedout, s.refused, s.other, s.ok, s.wrong, wall, s.other ? s.other_err : s.first);
	ft_fault(ctl, c.fabric_id, 0, 0, 0);
	ft_recover(c.fabric_id, "link down", run++, res);

	/* drop one message */
	ret = ft_fault(ctl, c.fabric_id, TORUS_FAULT_DROP, 1, 0);
	died = ft_run(c.fabric_id, run++, FT_TIMEOUT_MS, res, &wall);
	ft_summarize(res, &s);
	/*
	 * The receiver of the lost message times out within 2x the per-step
	 * timeout of its wait (plus what a clean run takes to get there);
	 * the others stop when their peers do, never hang.
	 */
	ft_ok(!ret && !died && !s.wrong && !s.other && s.timedout >= 1 && s.named_all >= 1 &&
	      s.min_fail_ms <= 2 * FT_TIMEOUT_MS + base,
	      "one message on link 0:0 dropped: %d nodes -ETIMEDOUT (%d naming step, port and peer), %d -ECONNREFUSED (peer gone), %d other errors, %d ok, %d wrong; first failure after %.0f ms, last %.0f ms (per-step timeout %d ms, clean run %.0f ms); %s",
	      s.timedout, s.named_all, s.refused, s.other, s.ok, s.wrong, s.min_fail_ms, s.max_fail_ms, FT_TIMEOUT_MS,
	      base, s.other ? s.other_err : s.first);
	ft_fault(ctl, c.fabric_id, 0, 0, 0);
	ft_recover(c.fabric_id, "drop", run++, res);

	/*
	 * delay: every byte right, and the delay must show, against the clean
	 * run: in the device's virtual time (the run's makespan at least the
	 * delay, the clean run's well under it), and in wall time (the
	 * slowest node at least the delay). A delay that did nothing fails.
	 */
	ret = ft_fault(ctl, c.fabric_id, TORUS_FAULT_DELAY, 0, FT_DELAY_NS);
	ft_makespan(ctl, c.fabric_id);
	died = ft_run(c.fabric_id, run++, FT_CLEAN_TIMEOUT_MS, res, &wall);
	delay_ns = ft_makespan(ctl, c.fabric_id);
	ft_summarize(res, &s);
	ft_ok(!ret && !died && s.ok == FT_P && s.max_ms >= FT_DELAY_NS / 1e6 && clean_ns >= 0 &&
	      clean_ns < (long long)FT_DELAY_NS && delay_ns >= (long long)FT_DELAY_NS,
	      "link 0:0 delayed %llu ms: %d/%d nodes byte-exact, slowest %.0f ms (clean run %.0f ms); virtual makespan %.3f ms (clean run %.3f ms)%s%s",
	      FT_DELAY_NS / 1000000, s.ok, FT_P, s.max_ms, base, delay_ns / 1e6, clean_ns / 1e6, s.first[0] ? "; " : "",
	      s.first);
	ft_fault(ctl, c.fabric_id, 0, 0, 0);
	ft_recover(c.fabric_id, "delay", run++, res);

	tv_destroy(ctl, c.fabric_id);
	close(ctl);
	return 0;
}
