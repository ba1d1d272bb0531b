// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coll_verbs: libtoruscoll over the verbs transport, one process per rank,
 * started by mpirun (tests/verbs/run-guest runs it in a guest over rxe0).
 * Every rank writes what it checked to DIR/rank.N; --report merges the
 * files into TAP, one point per check, failing a check that any rank failed
 * or did not report (a rank that died). The checks a run must report are
 * computed by --report from the run's own options (given again after
 * LABEL), not taken from the files: a check that no rank reached (every
 * rank crashed before it, a deterministic bug) is a failure too, and so is
 * the launcher's exit status (--status RC, when the run must exit 0).
 *
 *   coll_verbs --out DIR [--sizes "1 100"] [--light] [--no-everyday]
 *                                                         the collectives
 *   coll_verbs --out DIR --kill RANK | --stall RANK       peer death, a stalled peer
 *   coll_verbs --out DIR --cycles N                       create/destroy leaks
 *   coll_verbs --report DIR NRANKS LABEL [--status RC] [--must "ALGO..."] [RUN OPTIONS]
 *                                                         TAP of a run
 *   coll_verbs --list                                     the algorithms, "COLL NAME"
 *
 * --must: algorithms that must run on the run's shape (a run reports the
 * others that do not build there as a comment); the run scripts list, per
 * shape, the algorithms they chose it for.
 *
 * Collectives: every alltoall and allgather algorithm of the library
 * (one that does not build on the job's logical shape is listed with the
 * reason, not counted, unless --must names it: the run scripts pick shapes
 * so each applies somewhere, and check that each ran), at each block size, every received byte checked against what
 * its sender must have sent, and the protocol of its sends where the eager
 * limit decides it (proto_wrong); then the everyday collectives of
 * tests/unit/coll_checks.h (barrier, bcast, reduce, allreduce,
 * reduce_scatter, the v-variants, error returns and the nonblocking forms,
 * each result checked against the reference).
 * Kill: RANK SIGKILLs itself after tc_comm_create (stall: sleeps 2.5 x
 * TC_TIMEOUT_MS instead of calling the collective); every other rank's
 * alltoall must fail within 2 x TC_TIMEOUT_MS, its error naming the step,
 * the peer and that peer's host.
 * Cycles: N x (create, one alltoall that connects every pair, destroy); the
 * QPs, CQs, MRs, PDs and SRQs this process holds (rdma res show, by pid)
 * must be back to what it held before the first, and must have been
 * non-zero while a communicator lived; its receives must have come from one
 * shared receive queue (exactly one SRQ while a communicator of P ranks and
 * P - 1 QPs lived).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "toruscoll.h"
#include "algorithms/algos.h"
#include "../unit/tap.h"
#include "../unit/coll_checks.h"

static FILE *out;
/* The ranks here are separate processes: --report merges their files instead. */
static void (*const unused_report_run)(const char *, struct run *) __attribute__((unused)) = report_run;

/* One line per check: status (o/f/s), label, checks done, detail. */
__attribute__((format(printf, 4, 5))) static void put(char st, const char *label, long n, const char *fmt, ...)
{
	va_list ap;

	fprintf(out, "%c\t%s\t%ld\t", st, label, n);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
	fflush(out);
}

static unsigned char pat(int from, int to, size_t k, int salt)
{
	return tbyte((uint32_t)salt, (uint32_t)from, (uint32_t)to, k);
}

/*
 * The protocol of the last call's sends (tc_coll_info eager_sends and
 * rendezvous_sends) where the eager limit L decides it for every message:
 * each message is whole blocks, at least m bytes and at most P * P * m, so
 * with m > L all go by rendezvous and with P * P * m <= L all go eagerly.
 * L is TC_VERBS_EAGER when set, else the library's default, which is
 * between 984 and 8152 bytes (both ends taken). Returns 1 and says why if
 * the counts are wrong; 0 if right or not decided.
 */
static int proto_wrong(const struct tc_coll_info *info, int P, size_t m, char *why, size_t len)
{
	const char *env = getenv("TC_VERBS_EAGER");
	unsigned long lo = 984, hi = 8152;
	int all_rdv, all_eager;

	if (env && *env)
		lo = hi = strtoul(env, NULL, 10);
	all_rdv = m > hi;
	all_eager = (size_t)P * P * m <= lo;
	snprintf(why, len, "%u eager, %u by rendezvous", info->eager_sends, info->rendezvous_sends);
	if (!info->eager_sends && !info->rendezvous_sends) {
		snprintf(why, len, "no send counted on this rank");
		return 1;
	}
	if ((all_rdv && info->eager_sends) || (all_eager && info->rendezvous_sends)) {
		snprintf(why, len, "%u eager, %u by rendezvous: all should be %s (eager limit %lu%s)", info->eager_sends,
			 info->rendezvous_sends, all_rdv ? "rendezvous" : "eager", all_rdv ? hi : lo,
			 env && *env ? ", TC_VERBS_EAGER" : " or more, the default");
		return 1;
	}
	return 0;
}

/* One algorithm at one size: two calls (cold, then warm plan), every byte. */
static int run_algo(tc_comm_t *comm, enum tc_coll_id coll, const char *name, size_t m, int salt)
{
	int me = tc_comm_rank(comm), P = tc_comm_size(comm), ret = 0;
	size_t n = coll == TC_ALLTOALL ? (size_t)P * m : m;
	unsigned char *sb = malloc(n), *rb = malloc((size_t)P * m);
	struct tc_coll_info info = { .size = sizeof(info) };
	char label[96];
	long bad = 0;
	double t0;

	snprintf(label, sizeof(label), "%s %s m=%zu", coll == TC_ALLTOALL ? "alltoall" : "allgather", name, m);
	if (!sb || !rb) {
		put('f', label, 0, "out of memory");
		goto out;
	}
	ret = tc_comm_set_algo(comm, coll, name);
	if (ret) {
		put('f', label, 0, "tc_comm_set_algo: %s", tc_last_error());
		goto out;
	}
	t0 = now_ms();
	for (int call = 0; call < 2; call++) {
		for (size_t k = 0; k < n; k++)
			sb[k] = coll == TC_ALLTOALL ? pat(me, (int)(k / m), k % m, salt + call) : pat(me, 0, k, salt + call);
		memset(rb, 0xee, (size_t)P * m);
		ret = coll == TC_ALLTOALL ? tc_alltoall(comm, sb, rb, m) : tc_allgather(comm, sb, rb, m);
		if (ret) {
			put('f', label, call, "call %d: %s", call, tc_last_error());
			goto out;
		}
		for (int o = 0; o < P; o++)
			for (size_t k = 0; k < m; k++)
				bad += rb[o * m + k] != (coll == TC_ALLTOALL ? pat(o, me, k, salt + call) : pat(o, 0, k, salt + call));
	}
	if (tc_coll_last(comm, coll, &info)) {
		put('f', label, 2, "tc_coll_last: %s", tc_last_error());
	} else if (strcmp(name, "auto") && strcmp(info.algo, name)) {
		/* not for this shape: no test point, but auto's bytes were checked */
		put(bad ? 'f' : 'n', label, 2, "%s (auto ran %s, %ld bytes wrong)", info.why, info.algo, bad);
	} else {
		char proto[128];
		int wrong = proto_wrong(&info, P, m, proto, sizeof(proto));

		put(bad || wrong ? 'f' : 'o', label, 2, "%s: %ld of %zu bytes wrong, %.1f ms for 2 calls; sends: %s",
		    info.algo, bad, 2 * (size_t)P * m, now_ms() - t0, proto);
	}
out:
	free(sb);
	free(rb);
	return ret;
}

static int mode_colls(tc_comm_t *comm, const size_t *sizes, int nsizes, int light, int everyday)
{
	int me = tc_comm_rank(comm), P = tc_comm_size(comm);
	struct run *R;
	unsigned int wrap;
	int salt = 0;

	for (int s = 0; s < nsizes; s++) {
		for (enum tc_coll_id coll = TC_ALLTOALL; coll <= TC_ALLGATHER; coll++) {
			if (run_algo(comm, coll, "auto", sizes[s], salt += 3))
				return 1;
			for (int a = 0; tc_algos[a]; a++)
				if (tc_algos[a]->coll == coll && run_algo(comm, coll, tc_algos[a]->name, sizes[s], salt += 3))
					return 1; /* the communicator is broken now: stop */
		}
	}
	if (!everyday)
		return 0;
	/* the everyday collectives: this rank's row of a struct run */
	R = calloc(1, sizeof(*R));
	if (!R || P > MAXP) {
		put('f', "everyday collectives", 0, "%s", R ? "more ranks than coll_checks.h handles" : "out of memory");
		free(R);
		return 1;
	}
	R->g.k = tc_comm_dims(comm, R->g.dims, &wrap);
	R->g.P = P;
	for (int d = 0; d < R->g.k; d++)
		R->g.wrap[d] = !!(wrap & (1u << d));
	R->do_errs = 1;
	R->light = light;
	tc_comm_set_algo(comm, TC_ALLTOALL, "direct");
	tc_comm_set_algo(comm, TC_ALLGATHER, "auto");
	node_fn(comm, R);
	for (int c = 0; c < NCOLL; c++) {
		const struct nres *n = &R->res[me][c];

		put(n->calls && !n->bad ? 'o' : 'f', coll_names[c], n->calls, "%ld checks, %ld failed%s%s", n->calls, n->bad,
		    n->bad ? "; first: " : "", n->bad ? n->first : "");
	}
	free(R);
	return 0;
}

/*
 * One rank fails the others: it SIGKILLs itself (kill) or sleeps 2.5 x the
 * timeout without calling the collective (stall). Every other rank's
 * alltoall must fail within 2 x the timeout naming a step, a peer and its host.
 */
static int mode_peer(tc_comm_t *comm, int victim, int stall, int timeout_ms, const char *host)
{
	int me = tc_comm_rank(comm), P = tc_comm_size(comm);
	unsigned char *sb = calloc(P, 64), *rb = calloc(P, 64);
	const char *e;
	double t0, dt;
	int ret;

	if (!sb || !rb)
		return 1;
	tc_comm_set_algo(comm, TC_ALLTOALL, "direct");
	if (me == victim) {
		fflush(NULL);
		if (!stall)
			raise(SIGKILL);
		usleep(timeout_ms * 2500);
		free(sb);
		free(rb);
		return 0;
	}
	if (!stall)
		usleep(200000); /* let the victim die first */
	t0 = now_ms();
	ret = tc_alltoall(comm, sb, rb, 64);
	dt = now_ms() - t0;
	e = tc_last_error();
	if (!ret)
		put('f', "peer: alltoall fails within 2 x timeout", 0, "it succeeded without rank %d", victim);
	else
		put(dt <= 2.0 * timeout_ms ? 'o' : 'f', "peer: alltoall fails within 2 x timeout", 1,
		    "%.0f ms (timeout %d ms): %s", dt, timeout_ms, e);
	put(ret && strstr(e, "step ") && strstr(e, "node ") && strstr(e, host) ? 'o' : 'f',
	    "peer: the error names the step, the peer and its host", 1, "%s", ret ? e : "(no error)");
	free(sb);
	free(rb);
	return 0;
}

/* This process's QPs, CQs, MRs, PDs and SRQs as rdma res show lists them
 * (each kind's count in count[] when given). */
static long rdma_res_mine(char *what, size_t len, long count[5])
{
	static const char *const kinds[] = { "qp", "cq", "mr", "pd", "srq" };
	char cmd[64], line[512], key[32];
	long total = 0;

	snprintf(key, sizeof(key), "pid %d ", (int)getpid());
	what[0] = 0;
	for (int i = 0; i < 5; i++) {
		long n = 0;
		FILE *f;

		snprintf(cmd, sizeof(cmd), "rdma res show %s 2>/dev/null", kinds[i]);
		f = popen(cmd, "r");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f))
			n += strstr(line, key) != NULL;
		if (pclose(f))
			return -1;
		snprintf(what + strlen(what), len - strlen(what), "%s%s %ld", i ? ", " : "", kinds[i], n);
		if (count)
			count[i] = n;
		total += n;
	}
	return total;
}

static int mode_cycles(int cycles)
{
	char before[96], during[96] = "", after[96];
	long b, d = 0, a, dn[5] = { 0 };
	double t0 = now_ms();
	int done = 0, ret = 0, P = 0;
	unsigned char *sb = NULL, *rb = NULL;

	b = rdma_res_mine(before, sizeof(before), NULL);
	for (; done < cycles; done++) {
		tc_comm_t *comm;

		ret = tc_comm_create(NULL, &comm);
		if (ret)
			break;
		if (!sb) {
			P = tc_comm_size(comm);
			sb = calloc(P, 8);
			rb = calloc(P, 8);
		}
		tc_comm_set_algo(comm, TC_ALLTOALL, "direct");
		ret = tc_alltoall(comm, sb, rb, 8);
		if (!ret && done == cycles / 2)
			d = rdma_res_mine(during, sizeof(during), dn);
		tc_comm_destroy(comm);
		if (ret)
			break;
	}
	a = rdma_res_mine(after, sizeof(after), NULL);
	if (done < cycles)
		put('f', "cycles: create, alltoall, destroy", done, "cycle %d: %s", done, tc_last_error());
	else
		put('o', "cycles: create, alltoall, destroy", done, "%d cycles in %.0f ms", done, now_ms() - t0);
	put(b >= 0 && a == b && d > b ? 'o' : 'f', "cycles: rdma resources back to baseline", done,
	    "before: %s; during: %s; after: %s", before, during, after);
	put(d > 0 && dn[4] == 1 && dn[0] == P - 1 ? 'o' : 'f', "cycles: receives from one shared receive queue", done,
	    "during: %s (want srq 1, qp %d)", during, P - 1);
	free(sb);
	free(rb);
	return 0;
}

/* ---- report: merge the ranks' files into TAP ------------------------------ */

struct check {
	char st, label[96], detail[400];
	long n;
	int ranks, failed_rank, expected, want;
};

/* The run's options, as --report reads them again to know what it must find. */
struct runopts {
	size_t sizes[8];
	int nsizes, everyday, peer, cycles;
};

static int parse_sizes(const char *p, size_t *sizes)
{
	char *end;
	int n;

	for (n = 0; n < 8; n++, p = end) {
		sizes[n] = strtoul(p, &end, 10);
		if (end == p)
			break;
	}
	return n;
}

static struct check *find_check(struct check *cs, int *nc, const char *label)
{
	int i;

	for (i = 0; i < *nc && strcmp(cs[i].label, label); i++)
		;
	if (i == *nc) {
		if (*nc == 4096)
			return NULL;
		(*nc)++;
		snprintf(cs[i].label, sizeof(cs[i].label), "%s", label);
		cs[i].st = 'o';
		cs[i].failed_rank = -1;
	}
	return &cs[i];
}

/* The checks a run with these options writes, each with how many ranks write it. */
static void plan(struct check *cs, int *nc, const struct runopts *o, int nranks)
{
	char label[96];
	struct check *c;

	if (o->cycles) {
		c = find_check(cs, nc, "cycles: create, alltoall, destroy");
		c->expected = 1, c->want = nranks;
		c = find_check(cs, nc, "cycles: rdma resources back to baseline");
		c->expected = 1, c->want = nranks;
		c = find_check(cs, nc, "cycles: receives from one shared receive queue");
		c->expected = 1, c->want = nranks;
		return;
	}
	c = find_check(cs, nc, "tc_comm_create: transport verbs");
	/* a killed rank may die before or after writing it */
	c->expected = 1, c->want = o->peer ? -1 : nranks;
	if (o->peer) {
		c = find_check(cs, nc, "peer: alltoall fails within 2 x timeout");
		c->expected = 1, c->want = nranks - 1;
		c = find_check(cs, nc, "peer: the error names the step, the peer and its host");
		c->expected = 1, c->want = nranks - 1;
		return;
	}
	for (int s = 0; s < o->nsizes; s++)
		for (enum tc_coll_id coll = TC_ALLTOALL; coll <= TC_ALLGATHER; coll++) {
			const char *cn = coll == TC_ALLTOALL ? "alltoall" : "allgather";

			snprintf(label, sizeof(label), "%s auto m=%zu", cn, o->sizes[s]);
			c = find_check(cs, nc, label);
			c->expected = 1, c->want = nranks;
			for (int a = 0; tc_algos[a]; a++) {
				if (tc_algos[a]->coll != coll)
					continue;
				snprintf(label, sizeof(label), "%s %s m=%zu", cn, tc_algos[a]->name, o->sizes[s]);
				c = find_check(cs, nc, label);
				c->expected = 1, c->want = nranks;
			}
		}
	if (o->everyday)
		for (int e = 0; e < NCOLL; e++) {
			c = find_check(cs, nc, coll_names[e]);
			c->expected = 1, c->want = nranks;
		}
}

/* Is the algorithm of label ("alltoall NAME m=...") in the space-separated list? */
static int label_in(const char *list, const char *label)
{
	char name[64];
	size_t n;

	if (!list || sscanf(label, "%*s %63s m=", name) != 1)
		return 0;
	n = strlen(name);
	for (const char *p = list; (p = strstr(p, name)); p++)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

static int report(const char *dir, int nranks, const char *what, const struct runopts *o, int status,
		  const char *must)
{
	struct check *cs = calloc(4096, sizeof(*cs));
	int nc = 0, missing = 0;
	char path[512], line[1024];

	if (!cs)
		return 1;
	plan(cs, &nc, o, nranks);
	if (status >= 0) {
		tap_ok(status == 0, "%s: the launcher exited %d", what, status);
	}
	for (int r = 0; r < nranks; r++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/rank.%d", dir, r);
		f = fopen(path, "r");
		if (!f) {
			tap_ok(0, "%s: rank %d wrote no results (%s)", what, r, strerror(errno));
			missing++;
			continue;
		}
		while (fgets(line, sizeof(line), f)) {
			char *st = strtok(line, "\t"), *label = strtok(NULL, "\t"), *n = strtok(NULL, "\t");
			char *detail = strtok(NULL, "\n");
			struct check *c;

			if (!st || !label || !n)
				continue;
			c = find_check(cs, &nc, label);
			if (!c)
				continue;
			if (!c->ranks && c->st == 'o' && c->failed_rank < 0)
				snprintf(c->detail, sizeof(c->detail), "%s", detail ? detail : "");
			c->ranks++;
			c->n += atol(n);
			if (*st == 'f' && c->st != 'f') {
				c->st = 'f';
				c->failed_rank = r;
				snprintf(c->detail, sizeof(c->detail), "%s", detail ? detail : "");
			} else if ((*st == 's' || *st == 'n') && c->st == 'o') {
				c->st = *st;
				snprintf(c->detail, sizeof(c->detail), "%s", detail ? detail : "");
			}
		}
		fclose(f);
	}
	for (int i = 0; i < nc; i++) {
		struct check *c = &cs[i];
		int want = c->want;

		if (!c->expected) {
			tap_ok(0, "%s: %s: reported by %d ranks but not a check this run makes", what, c->label, c->ranks);
			tap_diag("rank %d: %s", c->failed_rank >= 0 ? c->failed_rank : 0, c->detail);
			continue;
		}
		if (!c->ranks) {
			tap_ok(0, "%s: %s: no rank reported it (every rank stopped before it?)", what, c->label);
			continue;
		}
		if (want < 0) /* any number of ranks; none failed */
			want = c->ranks;
		if (c->st == 's' && c->ranks == want) {
			tap_skip("%s: %s: %s", what, c->label, c->detail);
			continue;
		}
		if (c->st == 'n' && label_in(must, c->label)) {
			tap_ok(0, "%s: %s: did not run on this shape, which the run chose for it: %s", what, c->label,
			       c->detail);
			continue;
		}
		if (c->st == 'n' && c->ranks == want) {
			tap_diag("%s: %s: not for this shape: %s", what, c->label, c->detail);
			continue;
		}
		tap_ok(c->st == 'o' && c->ranks == want, "%s: %s: %d of %d ranks reported, %ld checks", what, c->label,
		       c->ranks, want, c->n);
		if (c->st == 'f')
			tap_diag("rank %d: %s", c->failed_rank, c->detail);
		else
			tap_diag("%s", c->detail);
	}
	/* a --must name that is no algorithm of the library is a mistake of the run script */
	if (must) {
		char name[64];

		for (const char *p = must; sscanf(p, "%63s", name) == 1; p = strstr(p, name) + strlen(name)) {
			int known = 0;

			for (int a = 0; tc_algos[a]; a++)
				known |= !strcmp(tc_algos[a]->name, name);
			if (!known)
				tap_ok(0, "%s: --must %s: no such algorithm", what, name);
		}
	}
	if (!nc && !missing)
		tap_ok(0, "%s: no results at all", what);
	free(cs);
	return tap_done();
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *env;
	size_t sizes[8] = { 1, 100 };
	int nsizes = 2, light = 0, everyday = 1, stall = 0, kill_rank = -1, cycles = 0, ret, timeout_ms = 10000;
	char path[512], host[64] = "";
	tc_comm_t *comm;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (int a = 0; tc_algos[a]; a++)
			printf("%s %s\n", tc_algos[a]->coll == TC_ALLTOALL ? "alltoall" : "allgather",
			       tc_algos[a]->name);
		return 0;
	}
	if (argc > 4 && !strcmp(argv[1], "--report")) {
		struct runopts o = { .sizes = { 1, 100 }, .nsizes = 2, .everyday = 1 };
		const char *must = NULL;
		int status = -1;

		for (int i = 5; i < argc; i++) {
			if (!strcmp(argv[i], "--status") && i + 1 < argc)
				status = atoi(argv[++i]);
			else if (!strcmp(argv[i], "--must") && i + 1 < argc)
				must = argv[++i];
			else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
				o.nsizes = parse_sizes(argv[++i], o.sizes);
			else if (!strcmp(argv[i], "--no-everyday"))
				o.everyday = 0;
			else if ((!strcmp(argv[i], "--kill") || !strcmp(argv[i], "--stall")) && i + 1 < argc)
				o.peer = 1, i++;
			else if (!strcmp(argv[i], "--cycles") && i + 1 < argc)
				o.cycles = atoi(argv[++i]);
			else if (!strcmp(argv[i], "--light") || !strcmp(argv[i], "--out"))
				i += !strcmp(argv[i], "--out");
			else {
				fprintf(stderr, "coll_verbs --report: unknown option %s\n", argv[i]);
				return 2;
			}
		}
		return report(argv[2], atoi(argv[3]), argv[4], &o, status, must);
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
			nsizes = parse_sizes(argv[++i], sizes);
		} else if (!strcmp(argv[i], "--light")) {
			light = 1;
		} else if (!strcmp(argv[i], "--no-everyday")) {
			everyday = 0;
		} else if (!strcmp(argv[i], "--kill") && i + 1 < argc) {
			kill_rank = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--stall") && i + 1 < argc) {
			kill_rank = atoi(argv[++i]);
			stall = 1;
		} else if (!strcmp(argv[i], "--cycles") && i + 1 < argc) {
			cycles = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: coll_verbs --out DIR [--sizes \"M...\"] [--light] [--no-everyday] [--kill RANK | --stall RANK] [--cycles N]\n"
					"       coll_verbs --report DIR NRANKS LABEL [--status RC] [--must \"ALGO...\"] [RUN OPTIONS]\n"
					"       coll_verbs --list\n");
			return 2;
		}
	}
	if (!dir) {
		fprintf(stderr, "coll_verbs: --out DIR is required\n");
		return 2;
	}
	env = getenv("TC_TIMEOUT_MS");
	if (env && atoi(env) > 0)
		timeout_ms = atoi(env);
	gethostname(host, sizeof(host) - 1);
	env = getenv("OMPI_COMM_WORLD_RANK"); /* the file name before the library knows the rank */
	if (!env)
		env = getenv("PMIX_RANK");
	snprintf(path, sizeof(path), "%s/rank.%s", dir, env ? env : "x");
	out = fopen(path, "w");
	if (!out) {
		perror(path);
		return 1;
	}
	if (cycles)
		return mode_cycles(cycles);
	ret = tc_comm_create(NULL, &comm);
	if (ret) {
		put('f', "tc_comm_create", 0, "%s", tc_last_error());
		return 1;
	}
	put(strcmp(tc_comm_transport_name(comm), "verbs") ? 'f' : 'o', "tc_comm_create: transport verbs", 1,
	    "rank %d of %d, transport %s", tc_comm_rank(comm), tc_comm_size(comm), tc_comm_transport_name(comm));
	if (kill_rank >= 0)
		ret = mode_peer(comm, kill_rank, stall, timeout_ms, host);
	else
		ret = mode_colls(comm, sizes, nsizes, light, everyday);
	tc_comm_destroy(comm);
	fclose(out);
	return ret;
}
