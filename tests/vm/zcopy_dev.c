// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * zcopy_dev: collectives on torus.ko from and into the caller's buffers
 * (zero copy), one process per node of a 4x4 torus (TAP; run in the guest by
 * tests/vm/run-guest, or `utils/torus-vm -- build/tests/vm/zcopy_dev`).
 *
 * Every node runs the same list of cases and checks every byte it received
 * against the reference; tc_coll_last() must say whether the call ran zero
 * copy as the case expects. Each node also maps its own buffer matrix
 * (a second open of its node device shares it) and fills it with a canary:
 * a case that moves nothing through the matrix (direct alltoall, the
 * allgathers, the v-variants) must leave every canary byte in place, which
 * is what "no staging copy" means. The cases:
 *   - alltoall (direct, auto, at2 with its relays, pairwise) and allgather
 *     (auto, ring, bruck) at blocks of 4 KiB, 4 KiB + 3 and 64 KiB, buffers
 *     at odd addresses; a 64-byte block stays on the staging path;
 *   - in place: alltoall with one buffer (staged: the send data would be
 *     overwritten), allgather with the send block inside the receive buffer;
 *   - alltoallv with zero counts and gaps between blocks, allgatherv into a
 *     packed buffer (zero copy) and into one with gaps (staged);
 *   - stale pinning: a buffer unmapped and mapped again at the same address
 *     with other content, a buffer whose pages were dropped
 *     (MADV_DONTNEED) and written again, and a malloc'd buffer freed and
 *     allocated again between calls: every call must move the new content;
 *   - TC_DEV_SYNC_MIN: the same kinds of call again with every send buffered
 *     ("off": an early message is copied into the receive FIFO and out) and
 *     with sends below 16 KiB buffered, the rest synchronous; a value that
 *     is not a number fails tc_comm_create with EINVAL, naming it;
 *   - offload: where the module runs programs, cases after a communicator's
 *     first call of a collective run as one program, zero copy and staged
 *     alike (tc_coll_last().offloaded), with the same byte checks.
 * Without /dev/torus-ctl it skips (exit 4).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <uapi/torus.h>

#include "toruscoll.h"
#include "../unit/tap.h"
#include "../unit/tbyte.h"
#include "coll_fork.h"

#define NODE_TIMEOUT_MS 60000 /* TCG guests are slow */
#define MAXP 16
#define MAXCASE 48

static __u32 fab_id;
/* Set before each cf_run(), inherited by the node processes: where their
 * cases start in struct res, and what their names start with. */
static int case0;
static const char *case_prefix = "";

struct res {
	int ncase;
	char name[MAXCASE][96];
	long bad[MAXCASE][MAXP];	/* wrong bytes */
	int zc[MAXCASE][MAXP];		/* tc_coll_last().zero_copy, -1 not asked */
	int want_zc[MAXCASE];		/* -1: not checked */
	long canary[MAXCASE][MAXP];	/* matrix bytes changed, -1 not checked */
	int err[MAXCASE][MAXP];
	int same_addr[MAXCASE][MAXP];	/* the buffer came back at the same address */
	int off[MAXCASE][MAXP];		/* tc_coll_last().offloaded */
};

struct node {
	tc_comm_t *comm;
	struct res *R;
	int me, P, c;
	unsigned char *matrix;
	size_t mbytes;
};

static unsigned char pat(int src, int dst, size_t k, int salt)
{
	return tbyte((uint32_t)salt, (uint32_t)src, (uint32_t)dst, k);
}

static void canary_fill(struct node *n)
{
	memset(n->matrix, 0x5a, n->mbytes);
}

static long canary_check(const struct node *n)
{
	long bad = 0;

	for (size_t i = 0; i < n->mbytes; i++)
		bad += n->matrix[i] != 0x5a;
	return bad;
}

/* Record case c's outcome for this node. */
static void record(struct node *n, const char *name, enum tc_coll_id coll, int want_zc, int canary, long bad, int err)
{
	struct res *R = n->R;
	struct tc_coll_info info = { .size = sizeof(info) };
	int c = n->c++;

	if (c >= MAXCASE)
		return;
	if (n->me == 0) {
		snprintf(R->name[c], sizeof(R->name[c]), "%s%s", case_prefix, name);
		R->want_zc[c] = want_zc;
		R->ncase = n->c;
	}
	R->bad[c][n->me] = bad;
	R->err[c][n->me] = err;
	R->zc[c][n->me] = -1;
	if ((int)coll >= 0 && !tc_coll_last(n->comm, coll, &info))
		R->zc[c][n->me] = info.zero_copy, R->off[c][n->me] = info.offloaded;
	R->canary[c][n->me] = canary && n->matrix ? canary_check(n) : -1;
	if (n->matrix)
		canary_fill(n);
}

static void do_alltoall(struct node *n, const char *algo, size_t m, size_t align, int canary, int want_zc)
{
	char name[96];
	unsigned char *sb = malloc(n->P * m + 64), *rb = malloc(n->P * m + 64), *s = sb + align, *r = rb + align;
	long bad = 0;
	int err;

	for (int d = 0; d < n->P; d++)
		for (size_t k = 0; k < m; k++)
			s[d * m + k] = pat(n->me, d, k, (int)m);
	memset(r, 0xee, n->P * m);
	err = tc_comm_set_algo(n->comm, TC_ALLTOALL, algo) ?: tc_alltoall(n->comm, s, r, m);
	for (int o = 0; o < n->P; o++)
		for (size_t k = 0; k < m; k++)
			bad += r[o * m + k] != pat(o, n->me, k, (int)m);
	snprintf(name, sizeof(name), "alltoall %s, %zu B blocks at +%zu", algo, m, align);
	record(n, name, TC_ALLTOALL, want_zc, canary, bad, err);
	free(sb);
	free(rb);
}

static void do_allgather(struct node *n, const char *algo, size_t m, size_t align, int in_place, int want_zc)
{
	char name[96];
	unsigned char *rb = malloc(n->P * m + 64), *sb = malloc(m + 64), *r = rb + align;
	unsigned char *s = in_place ? r + n->me * m : sb + align + 1;
	long bad = 0;
	int err;

	memset(r, 0xee, n->P * m);
	for (size_t k = 0; k < m; k++)
		s[k] = pat(n->me, 0, k, (int)m);
	err = tc_comm_set_algo(n->comm, TC_ALLGATHER, algo) ?: tc_allgather(n->comm, s, r, m);
	for (int o = 0; o < n->P; o++)
		for (size_t k = 0; k < m; k++)
			bad += r[o * m + k] != pat(o, 0, k, (int)m);
	snprintf(name, sizeof(name), "allgather %s, %zu B blocks at +%zu%s", algo, m, align, in_place ? ", in place" : "");
	record(n, name, TC_ALLGATHER, want_zc, want_zc && !strcmp(algo, "auto") && !in_place, bad, err);
	free(sb);
	free(rb);
}

/* alltoall with sendbuf == recvbuf: staged, and still right. */
static void do_alltoall_in_place(struct node *n, size_t m)
{
	unsigned char *b = malloc(n->P * m);
	long bad = 0;
	int err;

	for (int d = 0; d < n->P; d++)
		for (size_t k = 0; k < m; k++)
			b[d * m + k] = pat(n->me, d, k, 3);
	err = tc_comm_set_algo(n->comm, TC_ALLTOALL, "direct") ?: tc_alltoall(n->comm, b, b, m);
	for (int o = 0; o < n->P; o++)
		for (size_t k = 0; k < m; k++)
			bad += b[o * m + k] != pat(o, n->me, k, 3);
	record(n, "alltoall in place (one buffer): staged", TC_ALLTOALL, 0, 0, bad, err);
	free(b);
}

/* Block sizes of alltoallv: s -> d, some zero. */
static size_t v_count(int s, int d)
{
	return (s + 2 * d) % 5 == 0 ? 0 : 4096 + (size_t)((s * 7 + d * 3) % 11) * 517;
}

static void do_alltoallv(struct node *n)
{
	size_t sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP], spos = 5, rpos = 3;
	unsigned char *s, *r;
	long bad = 0;
	int err;

	for (int p = 0; p < n->P; p++) {
		sc[p] = v_count(n->me, p);
		rc[p] = v_count(p, n->me);
		sd[p] = spos;
		rd[p] = rpos;
		spos += sc[p] + 13; /* gaps: not a packed layout */
		rpos += rc[p] + 29;
	}
	s = malloc(spos);
	r = malloc(rpos);
	memset(r, 0xee, rpos);
	for (int p = 0; p < n->P; p++)
		for (size_t k = 0; k < sc[p]; k++)
			s[sd[p] + k] = pat(n->me, p, k, 5);
	err = tc_alltoallv(n->comm, s, sc, sd, r, rc, rd);
	for (int p = 0; p < n->P; p++)
		for (size_t k = 0; k < rc[p]; k++)
			bad += r[rd[p] + k] != pat(p, n->me, k, 5);
	for (int p = 0; p + 1 < n->P; p++) /* the gaps stay untouched */
		for (size_t k = rd[p] + rc[p]; k < rd[p + 1]; k++)
			bad += r[k] != 0xee;
	record(n, "alltoallv, zero counts and gaps", -1, -1, 1, bad, err);
	free(s);
	free(r);
}

static void do_allgatherv(struct node *n, int gaps)
{
	size_t rc[MAXP], rd[MAXP], pos = 0;
	unsigned char *s, *r;
	long bad = 0;
	int err;

	for (int p = 0; p < n->P; p++) {
		rc[p] = p % 4 == 3 ? 0 : 5000 + (size_t)p * 301;
		rd[p] = pos;
		pos += rc[p] + (gaps ? 7 : 0);
	}
	s = malloc(rc[n->me] + 1);
	r = malloc(pos + 1);
	memset(r, 0xee, pos);
	for (size_t k = 0; k < rc[n->me]; k++)
		s[k] = pat(n->me, 0, k, 9);
	err = tc_allgatherv(n->comm, s, rc[n->me], r, rc, rd);
	for (int p = 0; p < n->P; p++)
		for (size_t k = 0; k < rc[p]; k++)
			bad += r[rd[p] + k] != pat(p, 0, k, 9);
	/* packed: nothing passes through the matrix; with gaps it is staged */
	record(n, gaps ? "allgatherv, gaps in the receive buffer (staged)" : "allgatherv, packed receive buffer", -1, -1,
	       !gaps, bad, err);
	free(s);
	free(r);
}

/* One direct alltoall on sendbuf s and recvbuf r with this salt; bad bytes. */
static long a2a_once(struct node *n, unsigned char *s, unsigned char *r, size_t m, int salt, int *err)
{
	long bad = 0;

	for (int d = 0; d < n->P; d++)
		for (size_t k = 0; k < m; k++)
			s[d * m + k] = pat(n->me, d, k, salt);
	memset(r, 0xee, n->P * m);
	*err = tc_comm_set_algo(n->comm, TC_ALLTOALL, "direct") ?: tc_alltoall(n->comm, s, r, m);
	for (int o = 0; o < n->P; o++)
		for (size_t k = 0; k < m; k++)
			bad += r[o * m + k] != pat(o, n->me, k, salt);
	return bad;
}

/*
 * Stale pinning: the buffers of one call are unmapped and mapped again at
 * the same address (other pages) before the next; a call that used the old
 * pinning would send the old content or write where nobody reads.
 */
static void do_remap(struct node *n, size_t m)
{
	size_t len = n->P * m;
	unsigned char *s = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *r = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *s2, *r2;
	long bad;
	int err, same;

	bad = a2a_once(n, s, r, m, 21, &err);
	record(n, "stale pinning: first call on fresh mappings", TC_ALLTOALL, 1, 1, bad, err);
	munmap(s, len);
	munmap(r, len);
	s2 = mmap(s, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	r2 = mmap(r, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	same = s2 == s && r2 == r;
	bad = same ? a2a_once(n, s2, r2, m, 22, &err) : (err = -EADDRINUSE, 1);
	n->R->same_addr[n->c][n->me] = same;
	record(n, "stale pinning: unmapped and mapped again at the same address", TC_ALLTOALL, 1, 1, bad, err);
	/* the pages dropped (MADV_DONTNEED) and written again */
	madvise(s2, len, MADV_DONTNEED);
	madvise(r2, len, MADV_DONTNEED);
	bad = a2a_once(n, s2, r2, m, 23, &err);
	n->R->same_addr[n->c][n->me] = 1;
	record(n, "stale pinning: pages dropped with MADV_DONTNEED and written again", TC_ALLTOALL, 1, 1, bad, err);
	munmap(s2, len);
	munmap(r2, len);
}

/* free() and malloc() of a large block between calls (glibc unmaps and maps it again). */
static void do_realloc(struct node *n, size_t m)
{
	size_t len = n->P * m;
	unsigned char *s = malloc(len), *r = malloc(len), *s2, *r2;
	long bad;
	int err;

	bad = a2a_once(n, s, r, m, 31, &err);
	record(n, "stale pinning: first call on malloc'd buffers", TC_ALLTOALL, 1, 1, bad, err);
	free(s);
	free(r);
	s2 = malloc(len);
	r2 = malloc(len);
	bad = a2a_once(n, s2, r2, m, 32, &err);
	n->R->same_addr[n->c][n->me] = s2 == s && r2 == r;
	record(n, "stale pinning: freed and allocated again", TC_ALLTOALL, 1, 1, bad, err);
	free(s2);
	free(r2);
}

/* The cases again under a TC_DEV_SYNC_MIN setting (no canary: this run maps no matrix, n.matrix NULL). */
static int node_sync(tc_comm_t *comm, void *arg)
{
	struct node n = { .comm = comm, .R = arg, .me = tc_comm_rank(comm), .P = tc_comm_size(comm), .c = case0 };

	do_alltoall(&n, "direct", 65536, 0, 0, 1);
	do_alltoall(&n, "direct", 4099, 3, 0, 1);
	do_alltoall(&n, "at2", 8192, 5, 0, 1);
	do_allgather(&n, "bruck", 65536, 0, 0, 1);
	do_allgather(&n, "ring", 4099, 3, 0, 1);
	do_alltoallv(&n);
	return 0;
}

static int node_main(tc_comm_t *comm, void *arg)
{
	struct node n = { .comm = comm, .R = arg, .me = tc_comm_rank(comm), .P = tc_comm_size(comm), .c = case0 };
	struct torus_node_query q = { .size = sizeof(q) };
	char path[96];
	int fd;

	tv_node_path(path, sizeof(path), fab_id, n.me);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || tv_ioctl(fd, TORUS_IOC_NODE_QUERY, &q))
		return 1;
	n.mbytes = q.matrix_bytes;
	n.matrix = mmap(NULL, n.mbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (n.matrix == MAP_FAILED)
		return 1;
	canary_fill(&n);
	do_alltoall(&n, "direct", 4096, 1, 1, 1);
	do_alltoall(&n, "direct", 4099, 3, 1, 1);
	do_alltoall(&n, "direct", 65536, 0, 1, 1);
	do_alltoall(&n, "auto", 4099, 1, 0, 1);
	do_alltoall(&n, "at2", 8192, 5, 0, 1);
	do_alltoall(&n, "pairwise", 4096, 7, 1, 1);
	do_alltoall(&n, "direct", 64, 1, 0, 0);
	do_alltoall_in_place(&n, 4096);
	do_allgather(&n, "auto", 4096, 1, 0, 1);
	do_allgather(&n, "ring", 4099, 3, 0, 1);
	do_allgather(&n, "bruck", 65536, 0, 0, 1);
	do_allgather(&n, "auto", 4096, 0, 1, 1);
	do_allgather(&n, "auto", 100, 0, 0, 0); /* under TC_ZCOPY_MIN: staged */
	do_alltoallv(&n);
	do_allgatherv(&n, 0);
	do_allgatherv(&n, 1);
	do_remap(&n, 8192);
	do_realloc(&n, 16384);
	munmap(n.matrix, n.mbytes);
	close(fd);
	return 0;
}

/*
 * Both paths ran as programs where the module runs them (TORUS_FEAT_PROGRAM,
 * TC_DEV_OFFLOAD not off): some zero-copy and some staged cases ran offloaded
 * on every node (a communicator's first call of a collective runs step by
 * step), with every byte checked above.
 */
static void report_offload(const struct res *R, int P)
{
	struct torus_handshake h = { .size = sizeof(h) };
	const char *v = getenv("TC_DEV_OFFLOAD");
	int ctl = open("/dev/" TORUS_CTL_NAME, O_RDWR), want, zc = 0, staged = 0, off = 0;

	want = ctl >= 0 && !ioctl(ctl, TORUS_IOC_HANDSHAKE, &h) && (h.features & TORUS_FEAT_PROGRAM) &&
	       !(v && !strcmp(v, "off"));
	if (ctl >= 0)
		close(ctl);
	for (int c = 0; c < R->ncase; c++) {
		int all = R->want_zc[c] >= 0;

		for (int p = 0; p < P; p++)
			all &= R->off[c][p] == 1;
		off += all;
		zc += all && R->want_zc[c] == 1;
		staged += all && R->want_zc[c] == 0;
	}
	if (want)
		tap_ok(zc > 0 && staged > 0, "offload: %d cases ran as one program on every node (%d zero copy, %d staged)",
		       off, zc, staged);
	else
		tap_ok(off == 0, "offload off: %d cases ran as a program", off);
}

/* One TAP point per case over every node. */
static void report(const struct res *R, int P)
{
	for (int c = 0; c < R->ncase; c++) {
		long bad = 0, canary = 0;
		int errs = 0, zc_wrong = 0, moved = 1;

		for (int p = 0; p < P; p++) {
			bad += R->bad[c][p];
			errs += R->err[c][p] != 0;
			if (R->want_zc[c] >= 0 && R->zc[c][p] != R->want_zc[c])
				zc_wrong++;
			if (R->canary[c][p] > 0)
				canary += R->canary[c][p];
			if (strstr(R->name[c], "same address") && !R->same_addr[c][p])
				moved = 0;
		}
		tap_ok(!bad && !errs && !zc_wrong && !canary && moved,
		       "%s: every byte on %d nodes right (%ld wrong, %d calls failed)%s%s%s", R->name[c], P, bad, errs,
		       R->want_zc[c] < 0 ? "" : R->want_zc[c] ? ", zero copy" : ", staged",
		       zc_wrong ? " (tc_coll_last disagrees)" : "",
		       R->canary[c][0] < 0 ? "" : canary ? ", but bytes passed through the matrix" : ", matrix untouched");
		if (strstr(R->name[c], "allocated again")) {
			int same = 0;

			for (int p = 0; p < P; p++)
				same += R->same_addr[c][p];
			tap_diag("%s: malloc gave the same addresses back on %d of %d nodes", R->name[c], same, P);
		}
	}
}

/* A TC_DEV_SYNC_MIN that is neither a number nor "off" fails tc_comm_create. */
static void sync_env_invalid(void)
{
	struct tc_comm_attr attr = { .size = sizeof(attr), .transport = TC_TRANSPORT_DEV, .fabric_id = fab_id };
	tc_comm_t *comm = NULL;
	int ret;

	setenv("TC_DEV_SYNC_MIN", "16k", 1);
	ret = tc_comm_create(&attr, &comm);
	tap_ok(ret == -EINVAL && strstr(tc_last_error(), "TC_DEV_SYNC_MIN=16k"),
	       "TC_DEV_SYNC_MIN=16k: tc_comm_create fails with EINVAL (%s), naming it: %s", strerror(-ret),
	       tc_last_error());
	if (!ret)
		tc_comm_destroy(comm);
}

int main(void)
{
	static const struct cf_fabric f = { "4x4 torus", 2, 0x3, 0, { 4, 4 } };
	int ctl = tv_ctl_open();
	struct res *R;
	__u32 nodes = 0;
	double wall;
	int ret, failed;

	if (ctl < 0) {
		tap_skip("zcopy_dev: %s absent (%s): torus.ko not loaded", TV_CTL_PATH, strerror(-ctl));
		tap_done();
		return 4;
	}
	R = cf_shared(sizeof(*R));
	ret = cf_create(ctl, &f, &fab_id, &nodes);
	if (!tap_ok(R && !ret && nodes == MAXP, "%s: fabric created (%s), %u nodes", f.label, strerror(-ret), nodes))
		return tap_done();
	failed = cf_run(fab_id, MAXP, NODE_TIMEOUT_MS, node_main, R, &wall);
	tap_ok(!failed, "%s: %d node processes ran and exited 0 (%d failed)", f.label, MAXP, failed);
	tap_ok(R->ncase > 20, "%s: %d cases ran", f.label, R->ncase);
	for (int i = 0; i < 2; i++) {
		const char *v = i ? "16384" : "off";
		int before = R->ncase;

		setenv("TC_DEV_SYNC_MIN", v, 1);
		case0 = R->ncase;
		case_prefix = i ? "TC_DEV_SYNC_MIN=16384: " : "TC_DEV_SYNC_MIN=off: ";
		failed = cf_run(fab_id, MAXP, NODE_TIMEOUT_MS, node_sync, R, &wall);
		tap_ok(!failed && R->ncase == before + 6, "TC_DEV_SYNC_MIN=%s: %d node processes exited 0 (%d failed), %d cases ran",
		       v, MAXP, failed, R->ncase - before);
	}
	sync_env_invalid();
	unsetenv("TC_DEV_SYNC_MIN");
	report(R, MAXP);
	report_offload(R, MAXP);
	tap_diag("%s: fork to last exit %.0f ms", f.label, wall);
	ret = cf_destroy(ctl, fab_id);
	if (ret)
		tap_diag("destroying fabric %u: %s", fab_id, strerror(-ret));
	close(ctl);
	return tap_done();
}
