// SPDX-License-Identifier: GPL-2.0
/*
 * torus-model: a benchmark of the cost model, not a test. With the Intel
 * Paragon parameters of the all-port paper (ts 75 us, tw 0.011 us/B,
 * rho 0.014 us/B) it prints, as one markdown table, the predicted
 * complete-exchange time of AT2, an AR-based algorithm for any shape
 * (allport-kd, else pad: the name printed says which), pairwise exchange and
 * Bruck on 16x16 .. 128x128 tori for block sizes 64 B .. 64 KiB, with the
 * process CPU time to build and verify each schedule and the peak resident
 * memory that took.
 *
 * Every schedule, on every shape, goes through the streamed path
 * (tc_sched_check_streamed): each step is verified and priced as the builder
 * completes it and then dropped, so no schedule is ever kept whole (AT2 on
 * 128x128 moves 5.6e9 blocks: 45 GB as a schedule). The figures are the ones
 * tc_verify and tc_cost_eval_sizes give on the kept schedule (test_stream
 * checks that on every algorithm); what remains in memory is the builder's
 * own state and the verifier's, 8 bytes per block (2 GiB at 128x128).
 *
 * Each schedule is built in a child process with its address space limited
 * (--mem-gib, default 10) and a CPU time limit (--timeout, default 1800 s),
 * so a schedule too large for the machine is reported as such ("did not fit
 * in 10 GiB") instead of taking the machine down; the parent only prints.
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

#include "core/check.h"
#include "core/sim_run.h"
#include "select/select.h"

#define PROG "torus-model"
#include "tool.h"

#define NSIZES 11 /* 64 B .. 64 KiB, powers of two */

struct result {
	int err;		/* 0, or -errno of the build/verify */
	char why[300];
	char algo[24];		/* the algorithm that ran */
	double cpu_s;		/* build + verify + price, process CPU time */
	long maxrss_kb;		/* the child's peak resident memory */
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

/* In the child: build, verify, price every size (streamed); fill *r. */
static void measure(const char *const *names, const struct tc_shape *sh, struct result *r)
{
	const struct tc_cost_params p = { .ts_us = 75, .tw_us_per_byte = 0.011, .rho_us_per_byte = 0.014 };
	struct tc_verify_report rep = { 0 };
	size_t sizes[NSIZES];
	const char *why = NULL;
	struct tc_cost c;
	double t0;
	int err = -EOPNOTSUPP;

	for (int i = 0; i < NSIZES; i++)
		sizes[i] = size_of(i);
	for (int i = 0; names[i]; i++) {
		const struct tc_algo *a = tc_algo_find(TC_ALLTOALL, names[i]);

		if (!a)
			continue;
		snprintf(r->algo, sizeof(r->algo), "%s", a->name);
		why = NULL;
		t0 = now();
		err = tc_sched_check_streamed(a, sh, &p, sizes, NSIZES, r->time_us, &rep, &c, &r->steps, &r->blks,
					      &why);
		r->cpu_s = now() - t0;
		if (err != -EOPNOTSUPP)
			break;
		tc_verify_report_free(&rep);
	}
	if (err) {
		r->err = err;
		snprintf(r->why, sizeof(r->why), "%s",
			 err == -EPROTO ? rep.first_violation : why ? why : tc_last_error());
		if (err != -EPROTO && err != -EOPNOTSUPP && why)
			snprintf(r->why, sizeof(r->why), "%.120s (%.160s)", why, tc_last_error());
		tc_verify_report_free(&rep);
		return;
	}
	tc_verify_report_free(&rep);
	r->transmission = c.transmission_blocks;
	r->bound = c.lower_bound_blocks;
}

static void run_child(const char *const *names, const struct tc_shape *sh, struct result *r, double mem_gib,
		      int timeout)
{
	struct rusage ru;
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
#ifndef __SANITIZE_ADDRESS__
		/* AddressSanitizer reserves terabytes of shadow address space at
		 * start: under it (make check-sanitize) a limit on the address
		 * space fails every allocation, so only the CPU limit applies */
		setrlimit(RLIMIT_AS, &rl);
#else
		(void)rl;
#endif
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
	memset(&ru, 0, sizeof(ru));
	wait4(pid, &status, 0, &ru);
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
	r->maxrss_kb = ru.ru_maxrss;
}

static const char usage[] =
	"usage: torus-model [--sizes 16,32,64,128] [--shapes 3x4x5,4x4x4x4,...] [--algos at2,pad,...]\n"
	"                   [--mem-gib G] [--timeout S]\n"
	"Predicted complete-exchange times in ms (cost model, Intel Paragon ts 75 us,\n"
	"tw 0.011 us/B, rho 0.014 us/B) of at2, an AR-based algorithm (allport-kd\n"
	"or pad, named in the output), pairwise and bruck on NxN tori (--sizes) and\n"
	"on 3-D and 4-D tori of any parity (--shapes; default 3x3x3 .. 16x16x16 and\n"
	"3x3x3x3 .. 8x8x8x8; at2 only on 2-D shapes) for block sizes 64 B .. 64 KiB,\n"
	"as one markdown table, with the ratio of the transmission to the k-D bound,\n"
	"the CPU time to build and verify each schedule and its peak resident memory.\n"
	"--sizes or --shapes alone prints only those shapes.\n"
	"Every schedule is streamed (verified and priced step by step as it is\n"
	"built, never kept whole), on every shape, so 128x128 fits: AT2 there needs\n"
	"about 7 GiB and several CPU minutes. Each schedule is built in a child\n"
	"limited to G GiB of address space (default 10) and S seconds of CPU time\n"
	"(default 1800); what does not fit is reported, not estimated.\n";

static const char *const at2[] = { "at2", NULL };
static const char *const arb[] = { "allport-kd", "pad", NULL };
static const char *const pw[] = { "pairwise", NULL };
static const char *const br[] = { "bruck", NULL };
static const char *const *const algos[] = { at2, arb, pw, br };

/* The 3-D and 4-D tori of the default table: every parity, up to 4096 nodes. */
static const char *const kd_shapes[] = { "3x3x3",   "4x4x4",   "5x5x5",   "3x4x5",	  "6x6x6",
					 "7x7x7",   "8x8x8",   "12x12x12", "16x16x16", "3x3x3x3",
					 "4x4x4x4", "5x5x5x5", "8x8x8x8" };

/* One row per algorithm of the table (at2 on 2-D shapes only, --algos if given). */
static int print_shape(const char *name, const struct tc_shape *sh, const char *only, double mem_gib, int timeout)
{
	int ran = 0;

	for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
		struct result r;
		int wanted = !only;

		for (int i = 0; !wanted && algos[a][i]; i++) {
			const char *hit = strstr(only, algos[a][i]);
			size_t len = strlen(algos[a][i]);

			wanted = hit && (hit == only || hit[-1] == ',') && (!hit[len] || hit[len] == ',');
		}
		if (!wanted || (algos[a] == at2 && sh->ndims != 2 && !only))
			continue;
		if (algos[a] == at2 && sh->ndims != 2) {
			/* asked for by name: say why there is no row, as a shape it does not fit does */
			printf("| %s | at2 | not run: at2 is for 2-D tori |\n", name);
			fflush(stdout);
			continue;
		}
		run_child(algos[a], sh, &r, mem_gib, timeout);
		if (r.err) {
			printf("| %s | %s | not run: %s |\n", name, r.algo, r.why);
			fflush(stdout);
			continue;
		}
		printf("| %s | %s | %u | %llu | %.0f | %.3f | %.2f | %.0f |", name, r.algo, r.steps,
		       (unsigned long long)r.blks, r.transmission, r.bound > 0 ? r.transmission / r.bound : 0, r.cpu_s,
		       r.maxrss_kb / 1024.0);
		for (int i = 0; i < NSIZES; i++)
			printf(" %.1f |", r.time_us[i] / 1000);
		printf("\n");
		fflush(stdout);
		ran++;
	}
	return ran;
}

/* --shapes: a comma-separated list of torus shapes, each as torus-sched --dims takes it. */
static int parse_shapes(char *arg, char **shapes, int *nshapes, int max)
{
	for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
		struct tc_shape sh;

		if (*nshapes == max || tc_shape_parse(&sh, tok, 0, 0)) {
			fprintf(stderr, "torus-model: bad --shapes entry '%s' (a torus such as 3x4x5, at most %d)\n",
				tok, max);
			return -1;
		}
		shapes[(*nshapes)++] = tok;
	}
	if (!*nshapes) {
		fprintf(stderr, "torus-model: --shapes is empty\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "shapes", required_argument, NULL, 'S' },
		{ "mem-gib", required_argument, NULL, 'M' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "algos", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int sides[16] = { 16, 32, 64, 128 }, nsides = 4, timeout = 1800, opt, sizes_given = 0, nuser = 0, nshapes = 0;
	char *user[64], *shapes[64 + 16 + 16], names[16][16];
	double mem_gib = 10;
	const char *only = NULL;
	int ran = 0;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': {
			char *p = optarg, *end;

			nsides = 0;
			sizes_given = 1;
			if (!*p)
				die(2, "--sizes is empty (e.g. 16,32)");
			while (*p) {
				if (nsides == 16)
					die(2, "--sizes %s: at most 16 sizes", optarg);
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
		case 'S':
			if (parse_shapes(optarg, user, &nuser, 64))
				return 2;
			break;
		case 'M':
			mem_gib = tool_parse_num("--mem-gib", optarg);
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
			tool_bad_option(opt, argv, optind);
		}
	}

	if (optind < argc) {
		fprintf(stderr, "torus-model: unexpected argument '%s' (see --help)\n", argv[optind]);
		return 2;
	}
	/* every name of --algos must be one the table knows: an unknown one
	 * would otherwise leave an empty table and exit 0 */
	if (only) {
		const char *p = only;

		if (!*p) {
			fprintf(stderr, "torus-model: --algos is empty (at2, allport-kd, pad, pairwise, bruck)\n");
			return 2;
		}
		while (*p) {
			size_t len = strcspn(p, ",");
			int known = 0;

			for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]) && !known; a++)
				for (int i = 0; algos[a][i] && !known; i++)
					known = strlen(algos[a][i]) == len && !strncmp(p, algos[a][i], len);
			if (!known) {
				fprintf(stderr,
					"torus-model: --algos: unknown algorithm '%.*s' (at2, allport-kd, pad, pairwise, "
					"bruck)\n",
					(int)len, p);
				return 2;
			}
			p += len;
			if (*p == ',' && !*++p) {
				fprintf(stderr, "torus-model: --algos '%s': trailing comma\n", only);
				return 2;
			}
		}
	}

	/* --sizes alone: NxN only; --shapes alone: those only; neither: both defaults */
	for (int k = 0; k < nsides && (sizes_given || !nuser); k++) {
		snprintf(names[k], sizeof(names[k]), "%dx%d", sides[k], sides[k]);
		shapes[nshapes++] = names[k];
	}
	for (int k = 0; k < nuser; k++)
		shapes[nshapes++] = user[k];
	for (size_t k = 0; !sizes_given && !nuser && k < sizeof(kd_shapes) / sizeof(kd_shapes[0]); k++)
		shapes[nshapes++] = (char *)kd_shapes[k];

	printf("Predicted complete-exchange time in ms (Paragon: ts 75 us, tw 0.011 us/B, rho 0.014 us/B);\n");
	printf("build+verify: CPU seconds on this machine, streamed; limits %.3g GiB, %d CPU s per schedule.\n\n",
	       mem_gib, timeout);
	printf("| torus | algorithm | steps | block moves | transm. | ratio | build+verify (s) | peak RSS (MiB) |");
	for (int i = 0; i < NSIZES; i++) {
		size_t m = size_of(i);

		if (m >= 1024)
			printf(" %zu KiB |", m / 1024);
		else
			printf(" %zu B |", m);
	}
	printf("\n|---|---|--:|--:|--:|--:|--:|--:|");
	for (int i = 0; i < NSIZES; i++)
		printf("--:|");
	printf("\n");
	fflush(stdout);
	for (int k = 0; k < nshapes; k++) {
		struct tc_shape sh;

		if (!tc_shape_parse(&sh, shapes[k], 0, 0))
			ran += print_shape(shapes[k], &sh, only, mem_gib, timeout);
	}
	/* a table of 'not run' rows is not a result */
	if (!ran)
		die(3, "no schedule ran: every row says why");
	return 0;
}
