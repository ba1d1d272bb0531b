// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz: a seeded, reproducible, syzkaller-style call generator for torus.ko.
 *
 * Resources are chained the way the driver chains them: control fd ->
 * fabric -> node fd -> matrix mapping and registrations (keys) ->
 * descriptors (matrix or keyed segments) and completions. Each
 * step draws one call (every ioctl, open, close, mmap, munmap, touching a
 * mapping) with arguments from valid values, boundary values and garbage:
 * sizes, flags, ids, ports, segment lists, pointers that are NULL, unmapped,
 * read-only, kernel addresses, or run into a PROT_NONE page.
 *
 * Every result is checked: an error a call was built to provoke (unknown
 * command, wrong device, bad argument pointer, size below the minimum, a
 * non-zero tail, unknown flags) must come back as exactly that errno; a call
 * built valid must succeed; any other result must be in the documented set
 * of its command (include/uapi/torus.h). At the end every fabric is destroyed
 * and a fresh one must still move a message byte-exactly.
 *
 * usage: fuzz [--seed S] [--calls N] [--seconds LIMIT] [-v]
 * TAP on stdout; runs in a guest with torus.ko loaded; a failure prints the
 * seed and a replay command. Defaults: a time-derived seed (or
 * TORUS_FUZZ_SEED), 100,000 calls (or TORUS_FUZZ_CALLS), stop after 50 s
 * (--seconds 0: no limit; the debug lane sets TORUS_FUZZ_SECONDS).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <uapi/torus.h>

#define FZ_MAX_FABRICS	4
#define FZ_MAX_FDS	24
#define FZ_MAX_MAPS	24
#define FZ_MAX_NODES	16
#define FZ_ARENA_PAGES	16
#define FZ_MAX_REPORTS	20

#define FZ_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define fz_offsetofend(t, m) (offsetof(t, m) + sizeof(((t *)0)->m))

static uint64_t fz_state;

static uint64_t fz_rand(void)
{
	/* splitmix64: every seed gives a full-period, well-mixed stream */
	uint64_t z = (fz_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t fz_below(uint32_t n)
{
	return n ? (uint32_t)(fz_rand() % n) : 0;
}

static int fz_chance(uint32_t percent)
{
	return fz_below(100) < percent;
}

/* One of the interesting 32-bit values, or a random one. */
static uint32_t fz_u32_edge(void)
{
	static const uint32_t v[] = { 0, 1, 2, 3, 7, 8, 63, 64, 65, 255, 256, 4095, 4096, 4097,
				      65535, 65536, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff };

	return fz_chance(70) ? v[fz_below(FZ_ARRAY_SIZE(v))] : (uint32_t)fz_rand();
}

static uint64_t fz_u64_edge(void)
{
	static const uint64_t v[] = { 0, 1, 4095, 4096, 1ULL << 20, 1ULL << 26, (1ULL << 26) + 1,
				      1000000000ULL, 1000000001ULL, 1ULL << 32, 1ULL << 63,
				      ~0ULL - 4095, ~0ULL };

	return fz_chance(70) ? v[fz_below(FZ_ARRAY_SIZE(v))] : fz_rand();
}

struct fz_fabric {
	int used;
	uint32_t id;
	uint32_t nodes;
	uint32_t nports;
	uint64_t matrix_bytes;
};

#define FZ_MAX_KEYS 8

struct fz_fd {
	int fd;		/* -1: free slot */
	int fab;	/* index into fz_fabrics */
	uint32_t node;
	uint32_t keys[FZ_MAX_KEYS];	/* registrations of this file (0: none) */
	uint64_t keylen[FZ_MAX_KEYS];	/* their lengths */
};

struct fz_map {
	void *addr;	/* NULL: free slot */
	size_t len;
	int prot;
};

static struct fz_fabric fz_fabrics[FZ_MAX_FABRICS];
static struct fz_fd fz_fds[FZ_MAX_FDS];
static struct fz_map fz_maps[FZ_MAX_MAPS];
static int fz_ctl;
static long fz_page;
static unsigned char *fz_arena;		/* FZ_ARENA_PAGES RW pages, then a PROT_NONE page */
static unsigned char *fz_ro;		/* one read-only page of plausible content */
static unsigned char *fz_hole;		/* a page that is never mapped */
static struct torus_handshake fz_hs;
static uint32_t fz_initial[64];		/* fabrics that existed before we started */
static int fz_ninitial;
static unsigned long fz_efault_created, fz_efault_destroyed;

static uint64_t fz_seed, fz_calls = 100000, fz_call_no;
static int fz_verbose;
static double fz_limit = 50;	/* seconds; 0 = none */
static unsigned long fz_failures, fz_planted, fz_planted_ok, fz_valid, fz_valid_ok;
static unsigned long fz_cqes;	   /* completions read back and checked */
static unsigned long fz_mr_made, fz_mr_gone, fz_sge_posted; /* registrations, keyed descriptors */
static unsigned long fz_sync_posted; /* TORUS_SEND_SYNC sends */
static unsigned long fz_cqe_status[8]; /* of them, per documented status (fz_check_cqes) */
static unsigned long fz_progs_posted, fz_prog_cqes; /* programs accepted, program completions */
static unsigned long fz_by_errno[160];

static void fz_fail(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fz_fail(const char *what, const char *fmt, ...)
{
	va_list ap;

	fz_failures++;
	if (fz_failures > FZ_MAX_REPORTS)
		return;
	printf("# FAIL call %" PRIu64 " (%s): ", fz_call_no, what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n# replay: fuzz --seed %" PRIu64 " --calls %" PRIu64 " -v\n", fz_seed, fz_call_no + 1);
	fflush(stdout);
}

/* Documented errnos per command (include/uapi/torus.h), as a bit mask. */
typedef unsigned __int128 fz_mask_t;
#define B(e) ((fz_mask_t)1 << (e))
#define FZ_BASE (B(EFAULT) | B(EINVAL) | B(E2BIG) | B(EOPNOTSUPP))

struct fz_cmd {
	const char *name;
	unsigned long nr;
	uint32_t size;		/* sizeof the struct */
	uint32_t min_size;	/* offsetofend of its last field */
	uint32_t flags;		/* valid flag bits */
	int on_ctl, on_node;
	fz_mask_t errnos;	/* documented besides 0 */
	int writes;		/* copies the struct back on success */
};

static const struct fz_cmd fz_cmds[] = {
	{ "handshake", TORUS_IOC_HANDSHAKE, sizeof(struct torus_handshake),
	  fz_offsetofend(struct torus_handshake, max_matrix_bytes), 0, 1, 1, FZ_BASE, 1 },
	{ "fabric_create", TORUS_IOC_FABRIC_CREATE, sizeof(struct torus_fabric_create),
	  fz_offsetofend(struct torus_fabric_create, nodes), TORUS_FABRIC_ONE_PORT, 1, 0,
	  FZ_BASE | B(ENOMEM) | B(EBUSY), 1 },
	{ "fabric_destroy", TORUS_IOC_FABRIC_DESTROY, sizeof(struct torus_fabric_destroy),
	  fz_offsetofend(struct torus_fabric_destroy, __reserved), 0, 1, 0,
	  FZ_BASE | B(ENOENT) | B(EBUSY), 1 },
	{ "fabric_query", TORUS_IOC_FABRIC_QUERY, sizeof(struct torus_fabric_query),
	  fz_offsetofend(struct torus_fabric_query, makespan_ns), TORUS_QUERY_RESET_STATS, 1, 1,
	  FZ_BASE | B(ENOENT), 1 },
	{ "node_query", TORUS_IOC_NODE_QUERY, sizeof(struct torus_node_query),
	  fz_offsetofend(struct torus_node_query, matrix_bytes), 0, 0, 1, FZ_BASE, 1 },
	{ "post", TORUS_IOC_POST, sizeof(struct torus_post),
	  fz_offsetofend(struct torus_post, __reserved), 0, 0, 1,
	  FZ_BASE | B(EAGAIN) | B(ENOMEM) | B(ENOENT) | B(EACCES), 1 },
	{ "cq_wait", TORUS_IOC_CQ_WAIT, sizeof(struct torus_cq_wait),
	  fz_offsetofend(struct torus_cq_wait, count), 0, 0, 1,
	  FZ_BASE | B(ETIMEDOUT) | B(EINTR), 1 },
	{ "counters", TORUS_IOC_COUNTERS, sizeof(struct torus_counters),
	  fz_offsetofend(struct torus_counters, links), TORUS_COUNTERS_RESET, 1, 1,
	  FZ_BASE | B(ENOENT), 1 },
	{ "link_fault", TORUS_IOC_LINK_FAULT, sizeof(struct torus_link_fault),
	  fz_offsetofend(struct torus_link_fault, delay_ns),
	  TORUS_FAULT_DOWN | TORUS_FAULT_DROP | TORUS_FAULT_DELAY, 1, 0, FZ_BASE | B(ENOENT), 1 },
	{ "mr_reg", TORUS_IOC_MR_REG, sizeof(struct torus_mr_reg),
	  fz_offsetofend(struct torus_mr_reg, __reserved), TORUS_MR_WRITE, 0, 1,
	  FZ_BASE | B(ENOMEM) | B(ENOSPC), 1 },
	{ "mr_dereg", TORUS_IOC_MR_DEREG, sizeof(struct torus_mr_dereg),
	  fz_offsetofend(struct torus_mr_dereg, __reserved), 0, 0, 1,
	  FZ_BASE | B(ENOENT) | B(EBUSY), 1 },
	{ "prog_post", TORUS_IOC_PROG_POST, sizeof(struct torus_prog_post),
	  fz_offsetofend(struct torus_prog_post, timeout_ns), TORUS_PROG_QUEUE_ONLY, 0, 1,
	  FZ_BASE | B(EAGAIN) | B(ENOMEM) | B(ENOENT) | B(EACCES) | B(ENOSPC), 1 },
};

enum { FZ_HS, FZ_CREATE, FZ_DESTROY, FZ_FQUERY, FZ_NQUERY, FZ_POST, FZ_WAIT, FZ_COUNTERS,
       FZ_FAULT, FZ_MR_REG, FZ_MR_DEREG, FZ_PROG, FZ_NCMDS };

static const char *fz_errname(int e)
{
	static char buf[16];

	switch (e) {
	case 0: return "0";
	case EFAULT: return "EFAULT";
	case EINVAL: return "EINVAL";
	case E2BIG: return "E2BIG";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOTTY: return "ENOTTY";
	case ENOENT: return "ENOENT";
	case EBUSY: return "EBUSY";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EINTR: return "EINTR";
	case ENXIO: return "ENXIO";
	case EACCES: return "EACCES";
	case ENOSPC: return "ENOSPC";
	}
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

/* --- argument placement -------------------------------------------------- */

enum fz_where {
	FZ_AT_ARENA,		/* readable and writable */
	FZ_AT_GUARD_END,	/* the struct ends right before the PROT_NONE page */
	FZ_AT_MISALIGNED,	/* odd address inside the arena (legal) */
	FZ_AT_READONLY,		/* a read-only page: reading works, writing back faults */
	FZ_AT_NULL,
	FZ_AT_HOLE,		/* unmapped */
	FZ_AT_GUARD,		/* the PROT_NONE page itself */
	FZ_AT_KERNEL,
	FZ_AT_NONCANON,
};

static void *fz_bad_pointer(enum fz_where w)
{
	static const uint64_t kaddr[] = { 0xffff888000000000ULL, 0xffffffff81000000ULL,
					  0xfffffffffffff000ULL, 0xffffc90000000000ULL };

	switch (w) {
	case FZ_AT_NULL: return NULL;
	case FZ_AT_HOLE: return fz_hole + fz_below(fz_page);
	case FZ_AT_GUARD: return fz_arena + FZ_ARENA_PAGES * fz_page;
	case FZ_AT_KERNEL: return (void *)(uintptr_t)kaddr[fz_below(FZ_ARRAY_SIZE(kaddr))];
	default: return (void *)(uintptr_t)0x0000800000000000ULL;
	}
}

/*
 * A user pointer for a buffer of @len bytes, usually good; *@bad is set when
 * the kernel cannot read it at all. Contents are copied from @src.
 */
static uint64_t fz_user_buf(const void *src, size_t len, int *bad, size_t off)
{
	unsigned char *p;
	uint32_t r = fz_below(100);

	*bad = 0;
	if (len > (size_t)(FZ_ARENA_PAGES / 2) * fz_page)
		len = (size_t)(FZ_ARENA_PAGES / 2) * fz_page;
	if (r < 88) {
		p = fz_arena + off;
	} else if (r < 91 && len) {
		p = fz_arena + FZ_ARENA_PAGES * fz_page - len;
	} else if (r < 93) {
		memcpy(fz_arena + off + 1, src, len);
		return (uintptr_t)(fz_arena + off + 1);
	} else {
		*bad = 1;
		return (uintptr_t)fz_bad_pointer(FZ_AT_NULL + fz_below(5));
	}
	memcpy(p, src, len);
	return (uintptr_t)p;
}

/* --- generators ---------------------------------------------------------- */

static int fz_pick_fabric(void)
{
	int idx[FZ_MAX_FABRICS], n = 0, i;

	for (i = 0; i < FZ_MAX_FABRICS; i++)
		if (fz_fabrics[i].used)
			idx[n++] = i;
	return n ? idx[fz_below(n)] : -1;
}

static int fz_pick_fd(void)
{
	int idx[FZ_MAX_FDS], n = 0, i;

	for (i = 0; i < FZ_MAX_FDS; i++)
		if (fz_fds[i].fd >= 0)
			idx[n++] = i;
	return n ? idx[fz_below(n)] : -1;
}

static int fz_pick_map(void)
{
	int idx[FZ_MAX_MAPS], n = 0, i;

	for (i = 0; i < FZ_MAX_MAPS; i++)
		if (fz_maps[i].addr)
			idx[n++] = i;
	return n ? idx[fz_below(n)] : -1;
}

/* A fabric id: mostly one of ours, sometimes one that cannot exist. */
static uint32_t fz_fabric_id(int *ours)
{
	int f = fz_pick_fabric();

	*ours = 0;
	if (f >= 0 && fz_chance(85)) {
		*ours = 1;
		return fz_fabrics[f].id;
	}
	return fz_chance(50) ? 256 + fz_below(1000) : (fz_chance(50) ? 0xffffffffu : 4096);
}

/* Fill a fabric-create struct; returns 1 when built valid. */
static int fz_gen_create(struct torus_fabric_create *c)
{
	static const uint32_t mx[] = { 0, 4096, 8192, 65536 };
	uint32_t d, nodes = 1;
	int valid = fz_chance(60);

	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->ndims = 1 + fz_below(3);
	for (d = 0; d < c->ndims; d++) {
		c->dims[d] = 2 + fz_below(nodes * 4 <= FZ_MAX_NODES ? 3 : 1);
		nodes *= c->dims[d];
	}
	c->wrap_mask = fz_below(1U << c->ndims);
	c->flags = fz_chance(30) ? TORUS_FABRIC_ONE_PORT : 0;
	c->matrix_bytes = mx[fz_below(FZ_ARRAY_SIZE(mx))];
	if (!c->matrix_bytes)
		c->matrix_bytes = 4096;	/* keep memory small: 0 would pick 1 MiB */
	c->ts_ns = fz_below(2000);
	c->tw_ps = fz_below(200);
	c->hop_ns = fz_below(50);
	c->sq_depth = fz_chance(20) ? 1 + fz_below(4) : 0;
	c->fifo_bytes = fz_chance(20) ? 4096 * (1 + fz_below(4)) : 0;
	c->cq_depth = fz_chance(20) ? 1 + fz_below(8) : 0;
	if (valid)
		return 1;
	/* one or more fields broken: boundary or garbage */
	switch (fz_below(9)) {
	case 0: c->ndims = fz_chance(50) ? 0 : TORUS_MAX_DIMS + fz_below(100); break;
	case 1: c->dims[fz_below(TORUS_MAX_DIMS)] = fz_u32_edge(); break;
	case 2: c->wrap_mask = fz_u32_edge(); break;
	case 3: c->matrix_bytes = fz_u64_edge(); break;
	case 4: c->ts_ns = fz_u64_edge(); c->tw_ps = fz_u64_edge(); c->hop_ns = fz_u64_edge(); break;
	case 5: c->sq_depth = fz_u32_edge(); break;
	case 6: c->fifo_bytes = fz_u32_edge(); break;
	case 7: c->cq_depth = fz_u32_edge(); break;
	default: c->__reserved = 1 + fz_below(0xffff); break;
	}
	/* never ask for a large fabric or matrix: this is about the edges, not memory */
	nodes = 1;
	for (d = 0; d < TORUS_MAX_DIMS && d < c->ndims; d++)
		nodes *= c->dims[d] >= 2 && c->dims[d] <= 64 ? c->dims[d] : 1;
	if (nodes > FZ_MAX_NODES)
		c->dims[0] = 0;
	if (c->matrix_bytes > (1ULL << 20) && c->matrix_bytes <= (64ULL << 20))
		c->matrix_bytes = 1ULL << 20;
	if (c->cq_depth > 4096 && c->cq_depth <= 65536)
		c->cq_depth = 4096;
	return 0;
}

/* A segment list in the arena's upper half; returns its user pointer. */
static uint64_t fz_gen_segs(uint32_t nsegs, uint64_t msize, int *bad)
{
	struct torus_seg segs[70];
	uint32_t i, n = nsegs < FZ_ARRAY_SIZE(segs) ? nsegs : FZ_ARRAY_SIZE(segs);
	int m;

	for (i = 0; i < n; i++) {
		uint64_t len = 1 + fz_below(fz_chance(90) ? 256 : 4096);

		segs[i].length = len;
		segs[i].offset = len <= msize ? fz_below(msize - len + 1) : 0;
		if (fz_chance(4)) {
			switch (fz_below(5)) {
			case 0: segs[i].length = 0; break;
			case 1: segs[i].offset = msize - segs[i].length + 1; break;
			case 2: segs[i].offset = ~0ULL - 1; break;
			case 3: segs[i].length = fz_u64_edge(); break;
			default: segs[i].offset = fz_u64_edge(); break;
			}
		}
	}
	/* sometimes the list lives in a node's mapped matrix */
	m = fz_pick_map();
	if (m >= 0 && fz_chance(5) && fz_maps[m].prot & PROT_WRITE &&
	    n * sizeof(segs[0]) <= fz_maps[m].len) {
		memcpy(fz_maps[m].addr, segs, n * sizeof(segs[0]));
		*bad = 0;
		return (uintptr_t)fz_maps[m].addr;
	}
	if (fz_chance(3)) {
		*bad = 0;	/* readable, read-only memory: fine for a gather list */
		return (uintptr_t)fz_ro;
	}
	return fz_user_buf(segs, n * sizeof(segs[0]), bad, (FZ_ARENA_PAGES / 2) * fz_page);
}

/*
 * A key of @nf's registrations (*@len its length), TORUS_KEY_MATRIX or one
 * that names nothing (*@len 0).
 */
static uint32_t fz_pick_key_len(const struct fz_fd *nf, uint64_t *len)
{
	int idx[FZ_MAX_KEYS], n = 0, i = 0;
	uint32_t k;

	for (int j = 0; nf && j < FZ_MAX_KEYS; j++)
		if (nf->keys[j])
			idx[n++] = j;
	if (n)
		i = idx[fz_below(n)];
	k = n ? nf->keys[i] : 0;

	*len = 0;
	if (k && fz_chance(80)) {
		*len = nf->keylen[i];
		return k;
	}
	return fz_chance(50) ? TORUS_KEY_MATRIX : fz_u32_edge();
}

static uint32_t fz_pick_key(const struct fz_fd *nf)
{
	uint64_t len;

	return fz_pick_key_len(nf, &len);
}

/* A keyed (struct torus_sge) list: registrations of @nf and the matrix. */
static uint64_t fz_gen_sges(uint32_t nsegs, uint64_t msize, const struct fz_fd *nf, int *bad)
{
	struct torus_sge sg[70];
	uint32_t i, n = nsegs < FZ_ARRAY_SIZE(sg) ? nsegs : FZ_ARRAY_SIZE(sg);

	memset(sg, 0, sizeof(sg));
	for (i = 0; i < n; i++) {
		uint64_t len = 1 + fz_below(fz_chance(90) ? 256 : 3 * fz_page), klen;

		sg[i].key = fz_pick_key_len(nf, &klen);
		if (klen && len > klen)
			len = 1 + fz_below(klen);
		sg[i].length = len;
		if (sg[i].key == TORUS_KEY_MATRIX)
			sg[i].offset = len <= msize ? fz_below(msize - len + 1) : 0;
		else
			sg[i].offset = klen ? fz_below(klen - len + 1) : fz_below(2 * fz_page);
		if (fz_chance(4)) {
			switch (fz_below(4)) {
			case 0: sg[i].length = 0; break;
			case 1: sg[i].__reserved = fz_u32_edge() | 1; break;
			case 2: sg[i].offset = fz_u64_edge(); break;
			default: sg[i].length = fz_u64_edge(); break;
			}
		}
	}
	return fz_user_buf(sg, n * sizeof(sg[0]), bad, (FZ_ARENA_PAGES / 2) * fz_page);
}

static void fz_gen_desc(struct torus_desc *x, const struct fz_fabric *fb, uint32_t self,
			const struct fz_fd *nf)
{
	uint64_t msize = fb ? fb->matrix_bytes : 4096;
	uint32_t nports = fb ? fb->nports : 2, nodes = fb ? fb->nodes : 2;
	int bad;

	memset(x, 0, sizeof(*x));
	x->op = fz_chance(50) ? TORUS_OP_SEND : TORUS_OP_RECV;
	x->nsegs = 1 + fz_below(3);
	x->tag = fz_below(4);
	x->user_data = fz_rand();
	if (x->op == TORUS_OP_SEND) {
		x->dst_node = fz_below(nodes);
		if (x->dst_node == self)
			x->dst_node = (self + 1) % nodes;
		x->port = TORUS_PORT_AUTO;
		if (fz_chance(15)) {
			x->flags = TORUS_SEND_ROUTE;
			x->hops[fz_below(nports / 2 ? nports / 2 : 1)] = (int16_t)(fz_below(7) - 3);
		}
		/* synchronous: may wait at its destination by reference until a close */
		if (fz_chance(20))
			x->flags |= TORUS_SEND_SYNC;
	} else {
		x->port = fz_below(nports);
		if (fz_chance(20))
			x->flags = TORUS_RECV_ANY_TAG;
	}
	if (fz_chance(10)) {
		switch (fz_below(10)) {
		case 0: x->op = fz_u32_edge(); break;
		case 1: x->flags = fz_u32_edge(); break;
		case 2: x->port = fz_u32_edge(); break;
		case 3: x->nsegs = fz_chance(50) ? 0 : fz_hs.max_segs + fz_below(3) - 1; break;
		case 4: x->dst_node = fz_u32_edge(); break;
		case 5: x->__reserved = 1; break;
		case 6: x->__reserved2 = 1; break;
		case 7: x->hops[fz_below(TORUS_MAX_DIMS)] = (int16_t)fz_rand(); break;
		case 8: x->dst_node = self; break;
		default: x->nsegs = fz_u32_edge(); break;
		}
	}
	if (fz_chance(25)) {
		x->flags |= TORUS_DESC_SGE;
		x->segs = fz_gen_sges(x->nsegs, msize, nf, &bad);
	} else {
		x->segs = fz_gen_segs(x->nsegs, msize, &bad);
	}
}

/* --- the call ------------------------------------------------------------ */

static void fz_resync(int created);

static void fz_alarm(int sig)
{
	(void)sig;
}

static void fz_record(const struct fz_cmd *c, int err)
{
	fz_by_errno[err < 160 ? err : 0]++;
	if (fz_verbose)
		printf("# %" PRIu64 " %s -> %s\n", fz_call_no, c ? c->name : "?", fz_errname(err));
}

/*
 * A CQ_WAIT that succeeded into the arena: every completion it returned must
 * be well formed, its status 0 or one of the statuses include/uapi/torus.h
 * documents (a status outside that set is a driver or documentation bug).
 */
static void fz_check_cqes(const char *name, const struct torus_cq_wait *out, const struct torus_cq_wait *in)
{
	static const int statuses[FZ_ARRAY_SIZE(fz_cqe_status)] = {
		0, -EMSGSIZE, -ECANCELED, -ENOLINK, -EHOSTUNREACH, -ECONNREFUSED, -ENOMEM,
		-ETIMEDOUT	/* a program's, after its timeout */
	};
	const struct torus_cqe *e = (const void *)(uintptr_t)in->entries;

	if (out->count > in->max_entries) {
		fz_fail(name, "returned %u completions, max_entries %u", out->count, in->max_entries);
		return;
	}
	if (in->entries != (uintptr_t)fz_arena + 8 * fz_page || in->entry_size != sizeof(*e))
		return;
	for (uint32_t i = 0; i < out->count; i++) {
		int known = 0;

		for (size_t k = 0; k < FZ_ARRAY_SIZE(statuses); k++) {
			if (e[i].status != statuses[k])
				continue;
			known = 1;
			fz_cqe_status[k]++;
		}
		fz_cqes++;
		if (!known)
			fz_fail(name, "completion %u: status %d (%s) is not a documented completion status", i,
				e[i].status, strerror(-e[i].status));
		if (e[i].op != TORUS_OP_SEND && e[i].op != TORUS_OP_RECV && e[i].op != TORUS_OP_PROG)
			fz_fail(name, "completion %u: op %u", i, e[i].op);
		if (e[i].status == -ETIMEDOUT && e[i].op != TORUS_OP_PROG)
			fz_fail(name, "completion %u: ETIMEDOUT on a descriptor", i);
		if ((e[i].flags & TORUS_CQE_PROG) && (!e[i].status || e[i].op == TORUS_OP_PROG))
			fz_fail(name, "completion %u: TORUS_CQE_PROG on a success or a program", i);
		fz_prog_cqes += e[i].op == TORUS_OP_PROG;
		if (e[i].port >= TORUS_MAX_PORTS)
			fz_fail(name, "completion %u: port %u", i, e[i].port);
		if (e[i].flags & ~(TORUS_CQE_OVERFLOW | TORUS_CQE_PROG))
			fz_fail(name, "completion %u: unknown flags 0x%x", i, e[i].flags);
		if (e[i].t_end_ns < e[i].t_start_ns)
			fz_fail(name, "completion %u: ends at %llu ns before it starts at %llu ns", i,
				(unsigned long long)e[i].t_end_ns, (unsigned long long)e[i].t_start_ns);
	}
}

/* Build and issue one ioctl; checks its result. */
/* Command types the VFS itself answers for any file (as tests/stress/stress.c). */
static int fz_vfs_type(unsigned int type)
{
	return type == 0x00 || type == 0x12 || type == 0x15 || type == 'T' || type == 'X' || type == 'f' ||
	       type == 0x94;
}

/*
 * Remember a new key of @nf; with every slot taken, deregister the one it
 * replaces (one a queued descriptor still holds stays until the close).
 */
static void fz_track_key(struct fz_fd *nf, uint32_t key, uint64_t len)
{
	int k = fz_below(FZ_MAX_KEYS);

	for (int i = 0; i < FZ_MAX_KEYS; i++)
		if (!nf->keys[i])
			k = i;
	if (nf->keys[k]) {
		struct torus_mr_dereg d = { .size = sizeof(d), .key = nf->keys[k] };

		if (ioctl(nf->fd, TORUS_IOC_MR_DEREG, &d) && errno != EBUSY)
			fz_fail("mr_dereg", "key %u registered on fd %d: %s", d.key, nf->fd,
				strerror(errno));
	}
	nf->keys[k] = key;
	nf->keylen[k] = len;
}

static void fz_ioctl(void)
{
	union {
		struct torus_handshake hs;
		struct torus_fabric_create fc;
		struct torus_fabric_destroy fd;
		struct torus_fabric_query fq;
		struct torus_node_query nq;
		struct torus_post post;
		struct torus_cq_wait wait;
		struct torus_counters cnt;
		struct torus_link_fault lf;
		struct torus_mr_reg mr;
		struct torus_mr_dereg mrd;
		struct torus_prog_post prog;
		unsigned char raw[512];
	} a;
	static struct torus_desc descs[16];
	unsigned char tail[64];
	const struct fz_cmd *c;
	int fdi = -1, fd, on_ctl, ci, expect = -1, valid = 0, ours = 0, bad, ret, err;
	struct fz_fabric *fb = NULL;
	unsigned long cmd;
	uint32_t usize, extra = 0;
	uint64_t uarg;
	int ro = 0, itimer = 0, reach = 0;
	struct fz_fd *nf = NULL;

	memset(&a, 0, sizeof(a));
	/* the device: ctl or a node */
	fdi = fz_pick_fd();
	on_ctl = fdi < 0 || fz_chance(40);
	if (!on_ctl) {
		nf = &fz_fds[fdi];
		fd = nf->fd;
		fb = &fz_fabrics[nf->fab];
	} else {
		fd = fz_ctl;
	}
	/* the command: mostly a real one */
	if (fz_chance(3)) {
		uint32_t nr = fz_chance(50) ? fz_below(256) : TORUS_CMD_BASE + fz_below(TORUS_CMD_LAST - TORUS_CMD_BASE);
		uint32_t type = fz_chance(50) ? TORUS_TYPE : fz_below(256);

		cmd = fz_chance(50) ? _IO(type, nr) : _IOC(fz_below(4), type, nr, fz_below(1 << 14));
		if (fz_chance(10))
			cmd = (uint32_t)fz_rand();
		/* The VFS answers some types itself for any file (FIOCLEX is 'T' 0x51,
		 * FIONCLEX 'T' 0x50, FIGETBSZ type 0 ...): those never reach the driver. */
		if (fz_vfs_type(_IOC_TYPE(cmd)))
			cmd = (cmd & ~(_IOC_TYPEMASK << _IOC_TYPESHIFT)) | ((unsigned long)TORUS_TYPE << _IOC_TYPESHIFT);
		ci = -1;
		for (int i = 0; i < FZ_NCMDS; i++)
			if (fz_cmds[i].nr == cmd)
				ci = i;
		if (ci < 0) {
			c = NULL;
			uarg = (uintptr_t)fz_arena;
			ret = ioctl(fd, cmd, uarg);
			err = ret ? errno : 0;
			fz_record(NULL, err);
			fz_planted++;
			if (err != ENOTTY)
				fz_fail("unknown command", "cmd 0x%lx on %s gave %s, want ENOTTY", cmd,
					on_ctl ? "ctl" : "node", fz_errname(err));
			else
				fz_planted_ok++;
			return;
		}
	} else {
		ci = fz_below(FZ_NCMDS);
	}
	c = &fz_cmds[ci];
	cmd = c->nr;

	switch (ci) {
	case FZ_HS:
		valid = 1;
		break;
	case FZ_CREATE: {
		int n = 0;

		for (int i = 0; i < FZ_MAX_FABRICS; i++)
			n += fz_fabrics[i].used;
		valid = fz_gen_create(&a.fc);
		if (n == FZ_MAX_FABRICS) {
			a.fc.ndims = 0;	/* keep our own count bounded: always invalid */
			valid = 0;
		}
		if (fz_chance(10))
			a.fc.fabric_id = fz_rand(); /* out fields on input are ignored */
		break;
	}
	case FZ_DESTROY:
		a.fd.fabric_id = fz_fabric_id(&ours);
		if (fz_chance(5))
			a.fd.__reserved = fz_u32_edge();
		break;
	case FZ_FQUERY:
		a.fq.fabric_id = fz_fabric_id(&ours);
		valid = ours || !on_ctl;
		if (fz_chance(20))
			a.fq.flags = TORUS_QUERY_RESET_STATS;
		break;
	case FZ_NQUERY:
		valid = 1;
		if (fz_chance(5)) {
			a.nq.__reserved = 1;
			valid = 0;
		}
		break;
	case FZ_POST: {
		uint32_t n = 1 + fz_below(fz_chance(80) ? 4 : 16), dsz = sizeof(struct torus_desc);
		size_t stride;

		if (fz_chance(5))
			dsz = fz_chance(50) ? fz_offsetofend(struct torus_desc, segs) - 8 : fz_u32_edge() % 256;
		else if (fz_chance(5))
			dsz = sizeof(struct torus_desc) + 8 * (1 + fz_below(4));
		stride = dsz < sizeof(struct torus_desc) ? sizeof(struct torus_desc) : dsz;
		for (uint32_t i = 0; i < n; i++)
			fz_gen_desc(&descs[i], fb, nf ? nf->node : 0, nf);
		a.post.count = n;
		a.post.desc_size = dsz;
		if (fz_chance(3))
			a.post.count = fz_chance(50) ? 0 : fz_hs.max_batch + 1;
		if (fz_chance(3))
			a.post.__reserved = 1;
		{
			/* descriptors laid out at the stride, tail bytes random-zero */
			unsigned char buf[16 * 256];	/* 16 descriptors, stride < 256 */

			memset(buf, 0, sizeof(buf));
			for (uint32_t i = 0; i < n; i++) {
				memcpy(buf + i * stride, &descs[i],
				       dsz < sizeof(descs[i]) ? dsz : sizeof(descs[i]));
				if (dsz > sizeof(descs[i]) && fz_chance(20))
					buf[i * stride + sizeof(descs[i])] = 1;
			}
			a.post.descs = fz_user_buf(buf, n * stride, &bad, 4 * fz_page);
		}
		if (fz_chance(2))
			a.post.descs = fz_u64_edge();
		break;
	}
	case FZ_WAIT: {
		static const uint64_t tmo[] = { 0, 0, 0, 1000, 1000000, ~0ULL };

		a.wait.max_entries = fz_below(fz_chance(90) ? 16 : 300);
		a.wait.min_entries = fz_below(3);
		if (a.wait.min_entries > a.wait.max_entries && fz_chance(80))
			a.wait.min_entries = a.wait.max_entries;
		a.wait.timeout_ns = tmo[fz_below(FZ_ARRAY_SIZE(tmo))];
		a.wait.entry_size = sizeof(struct torus_cqe);
		if (fz_chance(10))
			a.wait.entry_size = fz_chance(50) ? fz_u32_edge() % 128 : fz_u32_edge();
		a.wait.entries = (uintptr_t)fz_arena + 8 * fz_page;
		if (fz_chance(5))
			a.wait.entries = (uintptr_t)fz_bad_pointer(FZ_AT_NULL + fz_below(5));
		else if (fz_chance(5))
			a.wait.entries = (uintptr_t)fz_ro;
		if (fz_chance(3))
			a.wait.min_entries = fz_u32_edge();
		/*
		 * The kernel writes entry i at entries + i * entry_size: with a
		 * huge stride the second entry would land anywhere in this
		 * process (a fuzzer that corrupts itself finds nothing). Small
		 * strides run into the arena's guard page instead.
		 */
		if (a.wait.entry_size > 128 && a.wait.max_entries > 1)
			a.wait.max_entries = 1;
		if (a.wait.timeout_ns == ~0ULL)
			itimer = 1;	/* a forever-wait is ended by a signal: EINTR */
		break;
	}
	case FZ_COUNTERS:
		if (on_ctl) {
			int f = fz_pick_fabric();

			a.cnt.fabric_id = fz_fabric_id(&ours);
			a.cnt.node_id = f >= 0 ? fz_below(fz_fabrics[f].nodes + 1) : fz_u32_edge();
		}
		if (fz_chance(10))
			a.cnt.flags = TORUS_COUNTERS_RESET;
		valid = !on_ctl;
		break;
	case FZ_FAULT: {
		int f = fz_pick_fabric();

		a.lf.fabric_id = fz_fabric_id(&ours);
		a.lf.node_id = f >= 0 ? fz_below(fz_fabrics[f].nodes + 1) : 0;
		a.lf.port = fz_below(8);
		a.lf.flags = fz_below(8);
		a.lf.drop_count = fz_below(3);
		a.lf.delay_ns = fz_below(200000);	/* real latency: keep it short */
		if (fz_chance(5))
			a.lf.delay_ns = fz_chance(50) ? 1000000001ULL : fz_u64_edge();
		if (a.lf.delay_ns > 1000000 && a.lf.delay_ns <= 1000000000ULL)
			a.lf.delay_ns = 1000000;
		if (fz_chance(3))
			a.lf.drop_count = fz_u32_edge();
		break;
	}
	case FZ_MR_REG: {
		/* the arena's lower half, a mapped matrix, read-only, or no memory at all */
		uint64_t len = 1 + fz_below(fz_chance(80) ? 2 * fz_page : 6 * fz_page);
		int m = fz_pick_map(), rw = 0;
		uint32_t r = fz_below(100);

		if (r < 60) {
			a.mr.addr = (uintptr_t)fz_arena + fz_below(4 * fz_page);
			rw = 1;
		} else if (r < 75 && m >= 0) {
			a.mr.addr = (uintptr_t)fz_maps[m].addr + fz_below(fz_page);
			rw = -1;	/* its protection and length decide */
		} else if (r < 85) {
			a.mr.addr = (uintptr_t)fz_ro + fz_below(fz_page / 2);
			len = 1 + fz_below(fz_page / 2);
		} else {
			a.mr.addr = (uintptr_t)fz_bad_pointer(FZ_AT_NULL + fz_below(5));
		}
		a.mr.length = fz_chance(5) ? fz_u64_edge() : len;
		a.mr.flags = fz_chance(50) ? TORUS_MR_WRITE : 0;
		valid = rw == 1 && a.mr.length == len;
		if (fz_chance(5)) {
			a.mr.__reserved = fz_u32_edge() | 1;
			valid = 0;
		}
		if (fz_chance(5))
			a.mr.key = fz_rand();	/* an out field on input is ignored */
		break;
	}
	case FZ_MR_DEREG:
		a.mrd.key = fz_pick_key(nf);
		if (fz_chance(3))
			a.mrd.__reserved = 1;
		break;
	case FZ_PROG: {
		/*
		 * A program: mostly well formed (each descriptor waits on what
		 * earlier ones signal), or adversarial: a cycle, a threshold
		 * nothing reaches, a counter out of range, a huge fan-out. Its
		 * dependencies may never fire (receives nobody sends to): a
		 * timeout, or the close of its file, ends it. Some of its
		 * descriptors are relays (TORUS_OP_SIGNAL), chained or not.
		 */
		static struct torus_prog_desc pd[300];
		static const uint64_t tmo[] = { 0, 0, 1000000, 5000000, 50000000 };
		uint32_t n = 1 + fz_below(fz_chance(90) ? 8 : 16), nc = fz_below(5), sig[8] = { 0 };
		uint32_t r = fz_below(100), dsz = sizeof(struct torus_prog_desc);

		if (r < 3)
			n = 300;	/* fan-out past the limit, or past the queues */
		memset(pd, 0, sizeof(pd));
		for (uint32_t i = 0; i < n; i++) {
			struct torus_prog_desc *x = &pd[i];

			fz_gen_desc(&x->desc, fb, nf ? nf->node : 0, nf);
			x->wait_counter = TORUS_PROG_NO_COUNTER;
			x->signal_counter = TORUS_PROG_NO_COUNTER;
			if (nc && (n == 300 || fz_chance(50))) {
				uint32_t c = n == 300 ? 0 : fz_below(nc);

				if (sig[c] || n == 300) {
					x->wait_counter = c;
					x->wait_threshold = 1 + fz_below(sig[c] ? sig[c] : 1);
				}
			}
			if (nc && fz_chance(60)) {
				x->signal_counter = fz_below(nc);
				sig[x->signal_counter]++;
			}
			/* a relay (TORUS_OP_SIGNAL): no data, waits on one counter, signals one;
			 * now and then malformed (a segment, no counter to signal) */
			if (x->wait_counter != TORUS_PROG_NO_COUNTER && n != 300 && fz_chance(20) &&
			    (fz_hs.features & TORUS_FEAT_PROG_SIGNAL)) {
				memset(&x->desc, 0, sizeof(x->desc));
				x->desc.op = TORUS_OP_SIGNAL;
				if (x->signal_counter == TORUS_PROG_NO_COUNTER && fz_chance(90)) {
					x->signal_counter = fz_below(nc);
					sig[x->signal_counter]++;
				}
				if (fz_chance(5))
					x->desc.nsegs = 1;
			}
		}
		if (n == 300 && nc)
			pd[0].wait_counter = TORUS_PROG_NO_COUNTER, pd[0].wait_threshold = 0,
			pd[0].signal_counter = 0;
		if (fz_chance(15)) {
			struct torus_prog_desc *x = &pd[fz_below(n)];

			switch (fz_below(6)) {
			case 0: x->wait_counter = nc ? fz_below(nc) : 0;	/* a cycle or unreachable */
				x->wait_threshold = n + 1; break;
			case 1: x->wait_counter = nc + fz_below(3); x->wait_threshold = 1; break;
			case 2: x->signal_counter = fz_u32_edge() | nc; break;
			case 3: x->wait_threshold = 1 + fz_below(3); break;	/* maybe without a counter */
			case 4: x->__reserved = fz_u32_edge() | 1; break;
			default: x->wait_counter = nc ? nc - 1 : 0; x->wait_threshold = 0; break;
			}
		}
		a.prog.count = n;
		a.prog.ncounters = nc;
		a.prog.timeout_ns = tmo[fz_below(FZ_ARRAY_SIZE(tmo))];
		a.prog.user_data = fz_rand();
		if (fz_chance(3))
			a.prog.ncounters = fz_u32_edge();
		if (fz_chance(3))
			a.prog.timeout_ns = fz_u64_edge();
		if (fz_chance(3))
			a.prog.count = fz_chance(50) ? 0 : fz_hs.max_prog_descs + 1;
		if (fz_chance(5))
			dsz = fz_chance(50) ? dsz - 8 : fz_u32_edge() % 256;
		a.prog.desc_size = dsz;
		if (dsz == sizeof(struct torus_prog_desc))
			a.prog.descs = fz_user_buf(pd, n * sizeof(pd[0]), &bad, 4 * fz_page);
		else
			a.prog.descs = (uintptr_t)pd;	/* EINVAL or E2BIG before it is read */
		if (fz_chance(3))
			a.prog.error_index = fz_rand();	/* an out field on input is ignored */
		break;
	}
	}

	/* the common header: size and flags, sometimes broken on purpose */
	usize = c->size;
	{
		uint32_t r = fz_below(100);

		if (r < 3) {
			usize = fz_below(c->min_size);			/* below the minimum */
		} else if (r < 5) {
			usize = c->min_size - 1;
		} else if (r < 8) {
			extra = 8 * (1 + fz_below(4));			/* longer, zero tail */
			usize = c->size + extra;
		} else if (r < 10) {
			extra = 8 * (1 + fz_below(4));			/* longer, non-zero tail */
			usize = c->size + extra;
		} else if (r < 11) {
			usize = fz_u32_edge();
		}
		if (fz_chance(4))
			a.hs.flags |= fz_chance(50) ? (uint32_t)fz_rand() : 1U << fz_below(32);
		memset(tail, 0, sizeof(tail));
		if (r >= 8 && r < 10)
			tail[fz_below(extra)] = 1 + fz_below(255);
	}
	a.hs.size = usize;

	/* place it */
	{
		unsigned char *p;
		uint32_t copy = usize < sizeof(a) ? usize : sizeof(a);
		uint32_t r = fz_below(100), span = c->size + extra;

		if (copy < 8)
			copy = 8;
		bad = 0;
		if (r < 90 || usize > span) {
			p = fz_arena;
			if (r >= 85 && r < 90)
				p = fz_arena + FZ_ARENA_PAGES * fz_page - span;	/* ends at the guard */
			/* a size beyond what we wrote reads zeroes up to the guard page */
			reach = p + usize > fz_arena + FZ_ARENA_PAGES * fz_page;
			memset(p, 0, reach ? (size_t)(fz_arena + FZ_ARENA_PAGES * fz_page - p) :
			       (usize > span ? usize : span));
			memcpy(p, &a, c->size);
			memcpy(p + c->size, tail, extra);
			uarg = (uintptr_t)p;
		} else if (r < 94) {
			p = fz_ro;
			mprotect(fz_ro, fz_page, PROT_READ | PROT_WRITE);
			memset(p, 0, span);
			memcpy(p, &a, c->size);
			memcpy(p + c->size, tail, extra);
			mprotect(fz_ro, fz_page, PROT_READ);
			uarg = (uintptr_t)p;
			ro = 1;
		} else {
			bad = 1;
			uarg = (uintptr_t)fz_bad_pointer(FZ_AT_NULL + fz_below(5));
		}
	}

	/* what the ABI says must happen, in its order of checks */
	if (!(on_ctl ? c->on_ctl : c->on_node))
		expect = ENOTTY;
	else if (bad)
		expect = EFAULT;
	else if (usize < c->min_size)
		expect = EINVAL;
	else if (usize > (uint32_t)fz_page)
		expect = E2BIG;		/* above a page, whatever the tail */
	if (expect < 0 && !bad && (on_ctl ? c->on_ctl : c->on_node) && usize >= c->min_size) {
		int nonzero = 0;

		if (usize > c->size && usize <= c->size + extra)
			for (uint32_t i = 0; i < usize - c->size; i++)
				nonzero |= tail[i];
		if (nonzero)
			expect = E2BIG;
		else if (reach)
			expect = EFAULT;	/* the zero check of the tail runs into the guard */
		else if (a.hs.flags & ~c->flags)
			expect = EOPNOTSUPP;
	}

	if (itimer) {
		/*
		 * Repeating: on a loaded host the first tick can fire between
		 * setitimer() and the ioctl, and a one-shot timer then leaves a
		 * forever-wait nobody ends (the guest suite hung so once).
		 */
		struct itimerval it = { .it_value = { .tv_usec = 20000 },
					.it_interval = { .tv_usec = 20000 } };

		setitimer(ITIMER_REAL, &it, NULL);
	}
	ret = ioctl(fd, cmd, uarg);
	err = ret ? errno : 0;
	if (itimer) {
		struct itimerval off = { 0 };

		setitimer(ITIMER_REAL, &off, NULL);
	}
	fz_record(c, err);
	if (ci == FZ_WAIT && !err)
		fz_check_cqes(c->name, (const struct torus_cq_wait *)uarg, &a.wait);

	if (expect >= 0) {
		fz_planted++;
		if (err != expect)
			fz_fail(c->name, "on %s, size %u flags 0x%x %s: got %s, want %s",
				on_ctl ? "ctl" : "node", usize, a.hs.flags, bad ? "bad pointer" : "",
				fz_errname(err), fz_errname(expect));
		else
			fz_planted_ok++;
	} else {
		if (err && (err >= 128 || !(c->errnos & B(err))))
			fz_fail(c->name, "on %s: %s is not in its documented set",
				on_ctl ? "ctl" : "node", fz_errname(err));
		if (ro && c->writes && !err && ci != FZ_CREATE)
			fz_fail(c->name, "struct in a read-only page: success, want EFAULT");
		if (valid && !ro && usize == c->size) {
			fz_valid++;
			if (err)
				fz_fail(c->name, "built valid, got %s", fz_errname(err));
			else
				fz_valid_ok++;
		}
	}

	/* track what was created or destroyed */
	if (ci == FZ_CREATE && !err && !ro) {
		struct torus_fabric_create *out = (void *)uarg;
		int slot = -1;

		for (int i = 0; i < FZ_MAX_FABRICS; i++)
			if (!fz_fabrics[i].used)
				slot = i;
		if (slot < 0) {
			fz_fail(c->name, "a fabric was created although it was built invalid");
		} else {
			fz_fabrics[slot].used = 1;
			fz_fabrics[slot].id = out->fabric_id;
			fz_fabrics[slot].nodes = out->nodes;
			fz_fabrics[slot].nports = 2 * a.fc.ndims;
			/* 0 picks the documented default, 1 MiB (an edge value can be 0) */
			fz_fabrics[slot].matrix_bytes = a.fc.matrix_bytes ?
				(a.fc.matrix_bytes + fz_page - 1) / fz_page * fz_page : 1ULL << 20;
		}
	} else if (ci == FZ_CREATE && !err && ro) {
		fz_fail(c->name, "created with a read-only struct (the id cannot reach userspace)");
	} else if (ci == FZ_CREATE && err == EFAULT && !bad) {
		fz_resync(1);
	}
	if (ci == FZ_DESTROY && err)
		fz_resync(0);
	if (ci == FZ_MR_REG && !err && nf) {
		fz_mr_made++;
		fz_track_key(nf, ((struct torus_mr_reg *)uarg)->key, a.mr.length);
	}
	if (ci == FZ_MR_DEREG && !err)
		fz_mr_gone++;
	if (ci == FZ_PROG && !err)
		fz_progs_posted++;
	if (ci == FZ_POST && !err)
		for (uint32_t i = 0; i < a.post.count && i < 16; i++) {
			fz_sge_posted += !!(descs[i].flags & TORUS_DESC_SGE);
			fz_sync_posted += !!(descs[i].flags & TORUS_SEND_SYNC);
		}
	if (ci == FZ_MR_DEREG && nf && (!err || err == EFAULT))
		for (int k = 0; k < FZ_MAX_KEYS; k++)
			if (nf->keys[k] == a.mrd.key)
				nf->keys[k] = 0;
	if (ci == FZ_DESTROY && !err) {
		int found = 0;

		for (int i = 0; i < FZ_MAX_FABRICS; i++) {
			if (fz_fabrics[i].used && fz_fabrics[i].id == a.fd.fabric_id) {
				found = 1;
				for (int j = 0; j < FZ_MAX_FDS; j++)
					if (fz_fds[j].fd >= 0 && fz_fds[j].fab == i)
						fz_fail(c->name, "fabric %u destroyed while node fd %d is open",
							a.fd.fabric_id, fz_fds[j].fd);
				fz_fabrics[i].used = 0;
			}
		}
		if (!found)
			fz_fail(c->name, "destroyed fabric %u, which is not ours", a.fd.fabric_id);
	}
	(void)ours;
}

/* Does fabric @id exist? */
static int fz_exists(uint32_t id, uint32_t *next)
{
	struct torus_fabric_query q = { .size = sizeof(q), .fabric_id = id };
	int ret = ioctl(fz_ctl, TORUS_IOC_FABRIC_QUERY, &q);

	if (next)
		*next = q.next_fabric_id;
	return !ret;
}

static int fz_is_known(uint32_t id)
{
	for (int i = 0; i < FZ_MAX_FABRICS; i++)
		if (fz_fabrics[i].used && fz_fabrics[i].id == id)
			return 1;
	for (int i = 0; i < fz_ninitial; i++)
		if (fz_initial[i] == id)
			return 1;
	return 0;
}

/*
 * A create or destroy that failed with EFAULT because its struct could not
 * be written back may still have happened (the kernel commits first, then
 * copies out). Find out, count it, and bring our bookkeeping back in line:
 * a fabric nobody knows the id of is destroyed here.
 */
static void fz_resync(int created)
{
	struct torus_fabric_destroy d = { .size = sizeof(d) };
	uint32_t id = 0, next;
	int n = 0;

	if (created) {
		while (id != TORUS_NO_NODE && n++ < 1024) {
			int exists = fz_exists(id, &next);

			if (exists && !fz_is_known(id)) {
				fz_efault_created++;
				d.fabric_id = id;
				if (ioctl(fz_ctl, TORUS_IOC_FABRIC_DESTROY, &d))
					fz_fail("fabric_create", "leaked fabric %u: destroy: %s", id,
						strerror(errno));
			}
			if (next <= id)
				break;
			id = next;
		}
		return;
	}
	for (int i = 0; i < FZ_MAX_FABRICS; i++)
		if (fz_fabrics[i].used && !fz_exists(fz_fabrics[i].id, NULL)) {
			fz_efault_destroyed++;
			for (int j = 0; j < FZ_MAX_FDS; j++)
				if (fz_fds[j].fd >= 0 && fz_fds[j].fab == i)
					fz_fail("fabric_destroy", "fabric %u gone while node fd %d is open",
						fz_fabrics[i].id, fz_fds[j].fd);
			fz_fabrics[i].used = 0;
		}
}

/* --- non-ioctl calls ----------------------------------------------------- */

static void fz_open(void)
{
	int f = fz_pick_fabric(), slot = -1, fd, err, i;
	uint32_t node;
	char path[64];

	for (i = 0; i < FZ_MAX_FDS; i++)
		if (fz_fds[i].fd < 0)
			slot = i;
	if (f < 0 || slot < 0)
		return;
	node = fz_chance(95) ? fz_below(fz_fabrics[f].nodes) : fz_fabrics[f].nodes + fz_below(3);
	snprintf(path, sizeof(path), "/dev/" TORUS_NODE_FMT, fz_fabrics[f].id, node);
	fd = open(path, O_RDWR | O_CLOEXEC);
	err = fd < 0 ? errno : 0;
	if (fz_verbose)
		printf("# %" PRIu64 " open %s -> %s\n", fz_call_no, path, fz_errname(err));
	if (node < fz_fabrics[f].nodes) {
		fz_valid++;
		if (fd < 0)
			fz_fail("open", "%s: %s", path, strerror(err));
		else
			fz_valid_ok++;
	} else if (fd >= 0) {
		fz_fail("open", "%s opened, but the fabric has %u nodes", path, fz_fabrics[f].nodes);
	}
	if (fd >= 0) {
		fz_fds[slot].fd = fd;
		fz_fds[slot].fab = f;
		fz_fds[slot].node = node;
		memset(fz_fds[slot].keys, 0, sizeof(fz_fds[slot].keys));
	}
}

static void fz_close(void)
{
	int i = fz_pick_fd();

	if (i < 0)
		return;
	if (fz_verbose)
		printf("# %" PRIu64 " close %d\n", fz_call_no, fz_fds[i].fd);
	if (close(fz_fds[i].fd))
		fz_fail("close", "close(%d): %s", fz_fds[i].fd, strerror(errno));
	fz_fds[i].fd = -1;
}

static void fz_mmap(void)
{
	int i = fz_pick_fd(), slot = -1, j, prot, flags, err;
	uint64_t msize;
	size_t len;
	off_t off = 0;
	void *p;

	for (j = 0; j < FZ_MAX_MAPS; j++)
		if (!fz_maps[j].addr)
			slot = j;
	if (i < 0 || slot < 0)
		return;
	msize = fz_fabrics[fz_fds[i].fab].matrix_bytes;
	len = msize;
	switch (fz_below(10)) {
	case 0: len = fz_page; break;
	case 1: len = msize + fz_page; break;
	case 2: off = fz_page; break;
	case 3: off = fz_chance(50) ? (off_t)msize : -(off_t)fz_page; break;
	}
	prot = fz_chance(80) ? PROT_READ | PROT_WRITE : (fz_chance(50) ? PROT_READ : PROT_WRITE);
	flags = fz_chance(90) ? MAP_SHARED : MAP_PRIVATE;
	p = mmap(NULL, len, prot, flags, fz_fds[i].fd, off);
	err = p == MAP_FAILED ? errno : 0;
	if (fz_verbose)
		printf("# %" PRIu64 " mmap len %zu off %lld -> %s\n", fz_call_no, len, (long long)off,
		       fz_errname(err));
	if (!off && len <= msize) {
		fz_valid++;
		if (err)
			fz_fail("mmap", "len %zu of a %" PRIu64 "-byte matrix: %s", len, msize,
				strerror(err));
		else
			fz_valid_ok++;
	} else if (!err) {
		fz_fail("mmap", "len %zu offset %lld of a %" PRIu64 "-byte matrix succeeded", len,
			(long long)off, msize);
	} else if (err != EINVAL && err != ENOMEM && err != EOVERFLOW) {
		fz_fail("mmap", "len %zu offset %lld: %s, want EINVAL", len, (long long)off,
			strerror(err));
	}
	if (!err) {
		fz_maps[slot].addr = p;
		fz_maps[slot].len = len;
		fz_maps[slot].prot = prot;
	}
}

static void fz_munmap(void)
{
	int i = fz_pick_map();
	size_t pages;

	if (i < 0)
		return;
	pages = fz_maps[i].len / fz_page;
	/* sometimes split the mapping first (the driver's vm_ops open/close run) */
	if (pages > 2 && fz_chance(30)) {
		size_t k = 1 + fz_below(pages - 2);

		if (munmap((unsigned char *)fz_maps[i].addr + k * fz_page, fz_page))
			fz_fail("munmap", "middle page: %s", strerror(errno));
		munmap(fz_maps[i].addr, k * fz_page);
		munmap((unsigned char *)fz_maps[i].addr + (k + 1) * fz_page,
		       fz_maps[i].len - (k + 1) * fz_page);
	} else if (munmap(fz_maps[i].addr, fz_maps[i].len)) {
		fz_fail("munmap", "%s", strerror(errno));
	}
	if (fz_verbose)
		printf("# %" PRIu64 " munmap %zu bytes\n", fz_call_no, fz_maps[i].len);
	fz_maps[i].addr = NULL;
}

static void fz_touch(void)
{
	int i = fz_pick_map();
	volatile unsigned char *p;
	size_t off;

	if (i < 0 || !(fz_maps[i].prot & PROT_READ))
		return;
	p = fz_maps[i].addr;
	off = fz_below(fz_maps[i].len);
	if (fz_maps[i].prot & PROT_WRITE)
		p[off] = (unsigned char)fz_rand();
	else
		(void)p[off];
}

/* --- setup, end, sanity -------------------------------------------------- */

static int fz_setup(void)
{
	unsigned char *p;

	fz_page = sysconf(_SC_PAGESIZE);
	fz_ctl = open("/dev/" TORUS_CTL_NAME, O_RDWR | O_CLOEXEC);
	if (fz_ctl < 0)
		return -errno;
	fz_hs.size = sizeof(fz_hs);
	if (ioctl(fz_ctl, TORUS_IOC_HANDSHAKE, &fz_hs))
		return -errno;
	p = mmap(NULL, (FZ_ARENA_PAGES + 3) * fz_page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	fz_arena = p;
	mprotect(p + FZ_ARENA_PAGES * fz_page, fz_page, PROT_NONE);
	fz_ro = p + (FZ_ARENA_PAGES + 1) * fz_page;
	memset(fz_ro, 0, fz_page);
	mprotect(fz_ro, fz_page, PROT_READ);
	/* below mmap_min_addr: nothing can ever be mapped there */
	fz_hole = (unsigned char *)(uintptr_t)0x1000;
	munmap(p + (FZ_ARENA_PAGES + 2) * fz_page, fz_page);
	for (int i = 0; i < FZ_MAX_FDS; i++)
		fz_fds[i].fd = -1;
	{
		uint32_t id = 0, next;

		while (id != TORUS_NO_NODE && fz_ninitial < 64) {
			if (fz_exists(id, &next))
				fz_initial[fz_ninitial++] = id;
			if (next <= id)
				break;
			id = next;
		}
	}
	{
		struct sigaction sa = { .sa_handler = fz_alarm };

		sigaction(SIGALRM, &sa, NULL);
	}
	return 0;
}

/* Close everything and destroy our fabrics; returns the number that would not go. */
static int fz_teardown(void)
{
	struct torus_fabric_destroy d = { .size = sizeof(d) };
	int left = 0;

	for (int i = 0; i < FZ_MAX_MAPS; i++)
		if (fz_maps[i].addr) {
			munmap(fz_maps[i].addr, fz_maps[i].len);
			fz_maps[i].addr = NULL;
		}
	for (int i = 0; i < FZ_MAX_FDS; i++)
		if (fz_fds[i].fd >= 0) {
			close(fz_fds[i].fd);
			fz_fds[i].fd = -1;
		}
	for (int i = 0; i < FZ_MAX_FABRICS; i++) {
		if (!fz_fabrics[i].used)
			continue;
		d.fabric_id = fz_fabrics[i].id;
		if (ioctl(fz_ctl, TORUS_IOC_FABRIC_DESTROY, &d)) {
			printf("# fabric %u: destroy after closing everything: %s\n", d.fabric_id,
			       strerror(errno));
			left++;
		}
		fz_fabrics[i].used = 0;
	}
	return left;
}

/* After the storm: a fresh 2-node ring moves 4000 bytes exactly. */
static int fz_sanity(char *why, size_t len)
{
	struct torus_fabric_create c = { .size = sizeof(c), .ndims = 1, .wrap_mask = 1,
					 .dims = { 2 }, .matrix_bytes = 8192 };
	struct torus_fabric_destroy d = { .size = sizeof(d) };
	struct torus_seg s = { .offset = 100, .length = 4000 }, r = { .offset = 4000, .length = 4000 };
	struct torus_desc x[2] = {
		{ .op = TORUS_OP_SEND, .port = TORUS_PORT_AUTO, .nsegs = 1, .dst_node = 1, .tag = 7,
		  .segs = (uintptr_t)&s },
		{ .op = TORUS_OP_RECV, .port = 1, .nsegs = 1, .tag = 7, .segs = (uintptr_t)&r },
	};
	struct torus_post p = { .size = sizeof(p), .count = 1, .desc_size = sizeof(x[0]) };
	struct torus_cqe e[2];
	struct torus_cq_wait w = { .size = sizeof(w), .min_entries = 1, .max_entries = 1,
				   .timeout_ns = 20000000000ULL, .entry_size = sizeof(e[0]) };
	int fd[2] = { -1, -1 }, ret = -1, i;
	unsigned char *m[2] = { MAP_FAILED, MAP_FAILED };
	char path[64];

	if (ioctl(fz_ctl, TORUS_IOC_FABRIC_CREATE, &c)) {
		snprintf(why, len, "create: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/dev/" TORUS_NODE_FMT, c.fabric_id, i);
		fd[i] = open(path, O_RDWR | O_CLOEXEC);
		if (fd[i] < 0) {
			snprintf(why, len, "open %s: %s", path, strerror(errno));
			goto out;
		}
		m[i] = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd[i], 0);
		if (m[i] == MAP_FAILED) {
			snprintf(why, len, "mmap: %s", strerror(errno));
			goto out;
		}
	}
	for (i = 0; i < 4000; i++)
		m[0][100 + i] = (unsigned char)(i * 7 + 3);
	memset(m[1], 0, 8192);
	p.descs = (uintptr_t)&x[1];
	if (ioctl(fd[1], TORUS_IOC_POST, &p)) {
		snprintf(why, len, "post recv: %s", strerror(errno));
		goto out;
	}
	p.descs = (uintptr_t)&x[0];
	if (ioctl(fd[0], TORUS_IOC_POST, &p)) {
		snprintf(why, len, "post send: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < 2; i++) {
		w.entries = (uintptr_t)&e[i];
		if (ioctl(fd[i], TORUS_IOC_CQ_WAIT, &w) || w.count != 1 || e[i].status) {
			snprintf(why, len, "completion on node %d: %s, count %u, status %d", i,
				 strerror(errno), w.count, e[i].status);
			goto out;
		}
	}
	for (i = 0; i < 4000; i++)
		if (m[1][4000 + i] != (unsigned char)(i * 7 + 3)) {
			snprintf(why, len, "byte %d differs", i);
			goto out;
		}
	ret = 0;
out:
	for (i = 0; i < 2; i++) {
		if (m[i] != MAP_FAILED)
			munmap(m[i], 8192);
		if (fd[i] >= 0)
			close(fd[i]);
	}
	d.fabric_id = c.fabric_id;
	if (ioctl(fz_ctl, TORUS_IOC_FABRIC_DESTROY, &d) && !ret) {
		snprintf(why, len, "destroy: %s", strerror(errno));
		ret = -1;
	}
	return ret;
}

static double fz_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double t0, t;
	char why[200];
	int ret, i;

	fz_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	if (getenv("TORUS_FUZZ_SEED"))
		fz_seed = strtoull(getenv("TORUS_FUZZ_SEED"), NULL, 0);
	if (getenv("TORUS_FUZZ_SECONDS"))
		fz_limit = strtod(getenv("TORUS_FUZZ_SECONDS"), NULL);
	if (getenv("TORUS_FUZZ_CALLS"))
		fz_calls = strtoull(getenv("TORUS_FUZZ_CALLS"), NULL, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			fz_seed = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--calls") && i + 1 < argc) {
			fz_calls = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			fz_limit = strtod(argv[++i], NULL);
		} else if (!strcmp(argv[i], "-v")) {
			fz_verbose = 1;
		} else {
			fprintf(stderr, "usage: %s [--seed S] [--calls N] [--seconds LIMIT] [-v]\n", argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	fz_state = fz_seed;
	printf("TAP version 13\n1..4\n");
	printf("# seed %" PRIu64 ", %" PRIu64 " calls (replay: fuzz --seed %" PRIu64 " --calls %" PRIu64 ")\n",
	       fz_seed, fz_calls, fz_seed, fz_calls);
	fflush(stdout);
	ret = fz_setup();
	if (ret) {
		printf("not ok 1 - setup: /dev/" TORUS_CTL_NAME ": %s (torus.ko not loaded?)\n",
		       strerror(-ret));
		printf("not ok 2 - planted errors # not run\nnot ok 3 - teardown # not run\n");
		printf("not ok 4 - sanity # not run\n");
		return 1;
	}
	t0 = fz_now();
	for (fz_call_no = 0; fz_call_no < fz_calls; fz_call_no++) {
		uint32_t r = fz_below(100);

		/* a slow guest must not blow the suite's time: stop early, say so */
		if (!(fz_call_no & 1023) && fz_limit > 0 && fz_now() - t0 > fz_limit) {
			printf("# time limit %.0f s reached after %" PRIu64 " of %" PRIu64 " calls\n",
			       fz_limit, fz_call_no, fz_calls);
			fz_calls = fz_call_no;
			break;
		}

		if (r < 72)
			fz_ioctl();
		else if (r < 78)
			fz_open();
		else if (r < 82)
			fz_close();
		else if (r < 87)
			fz_mmap();
		else if (r < 91)
			fz_munmap();
		else
			fz_touch();
	}
	t = fz_now() - t0;
	printf("# %" PRIu64 " calls in %.2f s: %.0f calls/s\n", fz_calls, t, fz_calls / (t > 0 ? t : 1));
	printf("# results:");
	for (i = 0; i < 160; i++)
		if (fz_by_errno[i])
			printf(" %s=%lu", fz_errname(i), fz_by_errno[i]);
	printf("\n# valid calls %lu/%lu succeeded; planted errors %lu/%lu exact; %lu completions checked\n",
	       fz_valid_ok, fz_valid, fz_planted_ok, fz_planted, fz_cqes);
	printf("# completion statuses: 0=%lu EMSGSIZE=%lu ECANCELED=%lu ENOLINK=%lu EHOSTUNREACH=%lu ECONNREFUSED=%lu ENOMEM=%lu ETIMEDOUT=%lu\n",
	       fz_cqe_status[0], fz_cqe_status[1], fz_cqe_status[2], fz_cqe_status[3], fz_cqe_status[4],
	       fz_cqe_status[5], fz_cqe_status[6], fz_cqe_status[7]);
	printf("# programs: %lu posted, %lu program completions checked\n", fz_progs_posted, fz_prog_cqes);
	printf("# registrations: %lu made, %lu deregistered by MR_DEREG (the rest at close); "
	       "%lu keyed descriptors posted, %lu synchronous sends\n", fz_mr_made, fz_mr_gone, fz_sge_posted,
	       fz_sync_posted);
	printf("# EFAULT on write-back after the command took effect: %lu creates (fabric leaked, destroyed here), %lu destroys\n",
	       fz_efault_created, fz_efault_destroyed);
	printf("%s 1 - every result in its command's documented errno set, every completion status documented, valid calls succeed (seed %" PRIu64 ")\n",
	       fz_failures ? "not ok" : "ok", fz_seed);
	printf("%s 2 - %lu planted errors (ENOTTY/EFAULT/EINVAL/E2BIG/EOPNOTSUPP) exact\n",
	       fz_planted_ok == fz_planted && fz_planted ? "ok" : "not ok", fz_planted);
	ret = fz_teardown();
	printf("%s 3 - every fabric destroyed after closing its nodes (%d left)\n",
	       ret ? "not ok" : "ok", ret);
	ret = fz_sanity(why, sizeof(why));
	printf("%s 4 - a fresh fabric still moves 4000 bytes exactly%s%s\n", ret ? "not ok" : "ok",
	       ret ? ": " : "", ret ? why : "");
	if (fz_failures)
		printf("# %lu failures; replay: fuzz --seed %" PRIu64 " --calls %" PRIu64 " -v\n",
		       fz_failures, fz_seed, fz_calls);
	return fz_failures || ret ? 1 : 0;
}
