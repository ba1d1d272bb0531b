// SPDX-License-Identifier: GPL-2.0
/*
 * torus-model: a benchmark of the cost model, not a test. With the Intel
 * Paragon parameters of the all-port paper (ts 75 us, tw 0.011 us/B,
 * rho 0.014 us/B) it prints the predicted complete-exchange time of AT2, an
 * AR-based algorithm for any shape (allport-kd, else pad: the name printed
 * says which), pairwise exchange and Bruck on 16x16 .. 128x128 tori for
 * block sizes 64 B .. 64 KiB, and the time to build and verify each
 * schedule (process CPU time).
 *
 * Each schedule is built in a child process with its address space limited
 * (--mem-gib, default 2) and a time limit (--timeout, default 120 s), so a
 * schedule too large for the machine is reported as such ("over 2 GiB")
 * instead of taking the machine down; the parent only prints.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sched.h"

#define NSIZES 11 /* 64 B .. 64 KiB, powers of two */

struct result {
	int err;		/* 0, or -errno of the build/verify */
	char why[300];
	char algo[24];		/* the algorithm that ran */
	double build_s, verify_s;
	uint32_t steps;
	uint64_t blks;
	double transmission, bound;
	double time_us[NSIZES];
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static size_t size_of(int i)
{
	return (size_t)64 << i;
}

/* In the child: build, verify, price every size; fill *r. */
static void measure(const char *const *names, const struct tc_shape *sh, struct result *r)
{
	const struct tc_algo *a = NULL;
	struct tc_verify_report rep;
	struct tc_sched *s = NULL;
	const char *why = NULL;
	double t0;
	int err = -EOPNOTSUPP;

	for (int i = 0; names[i]; i++) {
		a = tc_algo_find(TC_COLL_ALLTOALL, names[i]);
		if (!a)
			continue;
		snprintf(r->algo, sizeof(r->algo), "%s", a->name);
		t0 = now();
		err = a->build(sh, &s, &why);
		r->build_s = now() - t0;
		if (err != -EOPNOTSUPP)
			break;
	}
	if (err) {
		r->err = err;
		snprintf(r->why, sizeof(r->why), "%s", why ? why : tc_sched_last_error());
		return;
	}
	if (!s || !s->step_first) {
		r->err = -EPROTO;
		snprintf(r->why, sizeof(r->why), "%s: build returned no finished schedule", r->algo);
		return;
	}
	r->steps = s->nsteps;
	r->blks = s->nblks;
	t0 = now();
	err = tc_verify(s, &rep);
	r->verify_s = now() - t0;
	if (err) {
		r->err = err;
		snprintf(r->why, sizeof(r->why), "%s",
			 err == -EPROTO ? rep.first_violation : tc_sched_last_error());
		tc_verify_report_free(&rep);
		return;
	}
	tc_verify_report_free(&rep);
	{
		const struct tc_cost_params p = { .ts_us = 75, .tw_us_per_byte = 0.011, .rho_us_per_byte = 0.014 };
		size_t sizes[NSIZES];
		struct tc_cost c;

		for (int i = 0; i < NSIZES; i++)
			sizes[i] = size_of(i);
		err = tc_cost_eval_sizes(s, &p, sizes, NSIZES, r->time_us, &c);
		if (err) {
			r->err = err;
			snprintf(r->why, sizeof(r->why), "%s", tc_sched_last_error());
			return;
		}
		r->transmission = c.transmission_blocks;
		r->bound = c.lower_bound_blocks;
	}
	tc_sched_free(s);
}

static void run_child(const char *const *names, const struct tc_shape *sh, struct result *r, double mem_gib,
		      int timeout)
{
	int fd[2], status;
	pid_t pid;
	ssize_t n;

	memset(r, 0, sizeof(*r));
	snprintf(r->algo, sizeof(r->algo), "%s", names[0]);
	if (pipe(fd)) {
		r->err = -errno;
		snprintf(r->why, sizeof(r->why), "pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		r->err = -errno;
		snprintf(r->why, sizeof(r->why), "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return;
	}
	if (!pid) {
		struct rlimit rl = { .rlim_cur = (rlim_t)(mem_gib * (1 << 30)), .rlim_max = (rlim_t)(mem_gib * (1 << 30)) };

		struct rlimit cpu = { .rlim_cur = (rlim_t)timeout, .rlim_max = (rlim_t)timeout + 5 };

		close(fd[0]);
		setrlimit(RLIMIT_AS, &rl);
		/* CPU seconds: on a shared machine wall time says more about the neighbours */
		setrlimit(RLIMIT_CPU, &cpu);
		alarm(20 * timeout);
		measure(names, sh, r);
		n = write(fd[1], r, sizeof(*r));
		_exit(n == sizeof(*r) ? 0 : 1);
	}
	close(fd[1]);
	n = read(fd[0], r, sizeof(*r));
	close(fd[0]);
	waitpid(pid, &status, 0);
	if (n != sizeof(*r)) {
		memset(r, 0, sizeof(*r));
		snprintf(r->algo, sizeof(r->algo), "%s", names[0]);
		r->err = -ENOMEM;
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
			snprintf(r->why, sizeof(r->why), "not finished in %d s of CPU time", timeout);
		else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
			snprintf(r->why, sizeof(r->why), "not finished in %d s of wall time", 20 * timeout);
		else
			snprintf(r->why, sizeof(r->why), "did not fit in %.3g GiB (child %s %d)", mem_gib,
				 WIFSIGNALED(status) ? "killed by signal" : "exit", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	} else if (r->err == -ENOMEM) {
		char why[sizeof(r->why)];

		snprintf(why, sizeof(why), "%s", r->why);
		snprintf(r->why, sizeof(r->why), "did not fit in %.3g GiB (%.200s)", mem_gib, why);
	}
}

static const char usage[] =
	"usage: torus-model [--sizes 16,32,64,128] [--algos at2,pad,...] [--mem-gib G] [--timeout S]\n"
	"Predicted complete-exchange times (cost model, Intel Paragon ts 75 us,\n"
	"tw 0.011 us/B, rho 0.014 us/B) of at2, an AR-based algorithm (allport-kd\n"
	"or pad, named in the output), pairwise and bruck on NxN tori for block\n"
	"sizes 64 B .. 64 KiB, with the CPU time to build and verify each\n"
	"schedule. Each schedule is built in a child limited to G GiB of address\n"
	"space (default 2) and S seconds of CPU time (default 120); what does not\n"
	"fit is reported, not estimated. Times are process CPU time.\n";

int main(int argc, char **argv)
{
	static const char *const at2[] = { "at2", NULL };
	static const char *const arb[] = { "allport-kd", "pad", NULL };
	static const char *const pw[] = { "pairwise", NULL };
	static const char *const br[] = { "bruck", NULL };
	static const char *const *const algos[] = { at2, arb, pw, br };
	static const struct option opts[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "mem-gib", required_argument, NULL, 'M' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "algos", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int sides[16] = { 16, 32, 64, 128 }, nsides = 4, timeout = 120, opt;
	double mem_gib = 2;
	const char *only = NULL;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': {
			char *p = optarg, *end;

			nsides = 0;
			while (*p && nsides < 16) {
				long v = strtol(p, &end, 10);

				if (end == p || v < 2 || v > 128) {
					fprintf(stderr, "torus-model: bad --sizes '%s'\n", optarg);
					return 2;
				}
				sides[nsides++] = (int)v;
				p = *end == ',' ? end + 1 : end;
				if (*end && *end != ',') {
					fprintf(stderr, "torus-model: bad --sizes '%s'\n", optarg);
					return 2;
				}
			}
			break;
		}
		case 'M':
			mem_gib = atof(optarg);
			if (mem_gib <= 0) {
				fprintf(stderr, "torus-model: bad --mem-gib '%s'\n", optarg);
				return 2;
			}
			break;
		case 'T':
			timeout = atoi(optarg);
			if (timeout <= 0) {
				fprintf(stderr, "torus-model: bad --timeout '%s'\n", optarg);
				return 2;
			}
			break;
		case 'a':
			only = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}

	printf("# Predicted complete-exchange time in ms (Paragon: ts 75 us, tw 0.011 us/B, rho 0.014 us/B)\n");
	printf("# build+verify: CPU seconds on this machine; limits %.3g GiB, %d CPU s per schedule\n", mem_gib, timeout);
	for (int k = 0; k < nsides; k++) {
		struct tc_shape sh;
		int dims[2] = { sides[k], sides[k] };

		if (tc_shape_init(&sh, 2, dims, 3, 0))
			continue;
		printf("\n%dx%d torus (%d nodes)\n", sides[k], sides[k], sh.nodes);
		printf("%-11s %6s %9s %7s %9s", "algorithm", "steps", "transm.", "ratio", "build+ver");
		for (int i = 0; i < NSIZES; i++) {
			size_t m = size_of(i);

			if (m >= 1024)
				printf(" %8zuK", m / 1024);
			else
				printf(" %8zuB", m);
		}
		printf("\n");
		for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
			struct result r;
			int wanted = !only;

			for (int i = 0; !wanted && algos[a][i]; i++) {
				const char *hit = strstr(only, algos[a][i]);
				size_t len = strlen(algos[a][i]);

				wanted = hit && (hit == only || hit[-1] == ',') && (!hit[len] || hit[len] == ',');
			}
			if (!wanted)
				continue;
			run_child(algos[a], &sh, &r, mem_gib, timeout);
			if (r.err) {
				printf("%-11s not run: %s\n", r.algo, r.why);
				continue;
			}
			printf("%-11s %6u %9.0f %7.3f %8.2fs", r.algo, r.steps, r.transmission,
			       r.bound > 0 ? r.transmission / r.bound : 0, r.build_s + r.verify_s);
			for (int i = 0; i < NSIZES; i++)
				printf(" %9.1f", r.time_us[i] / 1000);
			printf("\n");
			fflush(stdout);
		}
	}
	return 0;
}
