// SPDX-License-Identifier: GPL-2.0
/*
 * torus-bench: the communicator on each transport (sim: the simulator, every
 * rank a thread of this process; dev and verbs: this process one rank of
 * the library's communicator), and each rank's setup on it (the shape, and
 * on the device the makespan's barriers) before the sweep of benchmark.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

/*
 * Dev: a barrier of all ranks that sends nothing over the fabric, so the
 * virtual clocks can be reset between calls and one call's makespan read
 * alone (what the cost model predicts: every node starts at 0). A
 * process-shared pthread barrier in a file under /tmp named after the fabric
 * and the launcher (torusrun, every rank's parent). NULL when any rank could
 * not map it (then the makespan is read across the timed calls).
 */
static pthread_barrier_t *obar_open(struct bench *b, tc_comm_t *comm, int rank, int P)
{
	pthread_barrier_t *m = MAP_FAILED;
	pthread_barrierattr_t ba;
	char path[96];
	int32_t ok, all = 0;
	int fd = -1;

	snprintf(path, sizeof(path), "/tmp/torus-bench.%u.%d", b->fabric_id, (int)getppid());
	if (rank == 0) {
		unlink(path);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 && !ftruncate(fd, sizeof(*m)))
			m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			pthread_barrierattr_init(&ba);
			pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
			if (pthread_barrier_init(m, &ba, P)) {
				munmap(m, sizeof(*m));
				m = MAP_FAILED;
			}
			pthread_barrierattr_destroy(&ba);
		}
	}
	if (tc_barrier(comm)) /* rank 0's barrier is in place */
		return NULL;
	if (rank) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0)
			m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	}
	if (fd >= 0)
		close(fd);
	ok = m != MAP_FAILED;
	if (tc_allreduce(comm, &ok, &all, 1, TC_INT32, TC_MIN))
		all = 0;
	if (rank == 0)
		unlink(path); /* every rank has it open (or gave up) */
	if (!all) {
		if (m != MAP_FAILED)
			munmap(m, sizeof(*m));
		return NULL;
	}
	return m;
}

int bench_rank(tc_comm_t *comm, void *arg)
{
	struct bench *b = arg;
	const struct opts *o = &b->o;
	const int P = tc_comm_size(comm), rank = tc_comm_rank(comm);
	int is_a2a = o->coll == C_ALLTOALL, has_algo = is_a2a || o->coll == C_ALLGATHER;
	int nalgos = has_algo ? b->nalgos : 1;
	int ret = 0, use_ms = 0;

	if (rank == 0) {
		b->P = P;
		b->ndims = tc_comm_ndims(comm);
		tc_comm_dims(comm, b->dims, &b->wrap);
		b->one_port = tc_comm_port_model(comm) == TC_ONE_PORT;
	}
	if (b->ctl_fd >= 0) {
		/* the makespan needs every rank's barriers: agree on it */
		int32_t mine = 1, all = 0;

		ret = tc_allreduce(comm, &mine, &all, 1, TC_INT32, TC_MIN);
		if (ret) {
			set_fail(b, rank, ret, "tc_allreduce");
			return ret;
		}
		use_ms = all == 1;
	}
	if (use_ms)
		b->obar = obar_open(b, comm, rank, P);
	if (use_ms && !b->obar) {
		/* the virtual time of one barrier (the least of 3): each size's
		 * makespan growth has one before the timed calls and one after */
		double m0 = 0, m1 = 0, best = -1;

		for (int k = 0; k < 4 && !ret; k++) {
			ret = tc_barrier(comm);
			if (!ret && rank == 0 && !makespan(b, &m1) && k && (best < 0 || m1 - m0 < best))
				best = m1 - m0;
			m0 = m1;
		}
		if (ret) {
			set_fail(b, rank, ret, "tc_barrier");
			return ret;
		}
		if (rank == 0)
			b->barrier_ms = best > 0 ? best : 0;
	}
	ret = sweep(b, comm, use_ms, nalgos);
	return ret;
}
/*
 * Run the benchmark on transport: sim launches every rank (bench_rank()) as a
 * thread and returns when all are done; dev and verbs create this process's
 * communicator (dev: --dims checked against the fabric, its timing read) and
 * run this rank. A transport that cannot start is exit 4 (--dims that do not
 * match the fabric's shape, 2).
 */
int bench_start(struct bench *b, const char *transport, struct bench_run *r)
{
	int ret;

	if (!strcmp(transport, "sim")) {
		struct tc_sim_attr sa = { .size = sizeof(sa) };

		sa.ndims = b->o.ndims;
		memcpy(sa.dims, b->o.dims, sizeof(sa.dims));
		sa.wrap_mask = b->o.mesh ? 0 : (1u << b->o.ndims) - 1;
		sa.port_model = b->o.one_port ? TC_ONE_PORT : TC_ALL_PORT;
		ret = tc_sim_create(&sa, &r->sim);
		if (ret)
			die(4, "simulator: %s: %s", tc_strerror(ret), tc_last_error());
		return tc_sim_launch(r->sim, bench_rank, b);
	}
	if (setenv("TC_TRANSPORT", transport, 1))
		die(4, "setenv: %s", strerror(errno));
	ret = tc_comm_create(NULL, &r->comm);
	if (ret)
		die(4, "%s transport: %s: %s", transport, tc_strerror(ret), tc_last_error());
	r->rank = tc_comm_rank(r->comm);
	if (b->o.ndims) {
		int dims[TC_MAX_DIMS], nd = tc_comm_ndims(r->comm), same = nd == b->o.ndims;

		tc_comm_dims(r->comm, dims, NULL);
		for (int d = 0; same && d < nd; d++)
			same = dims[d] == (int)b->o.dims[d];
		if (!same)
			die(2, "--dims does not match the fabric's shape (%d dimensions, first %d)", nd, dims[0]);
	}
	if (!strcmp(transport, "dev"))
		fabric_open(b);
	return bench_rank(r->comm, b);
}

void bench_stop(struct bench_run *r)
{
	if (r->sim)
		tc_sim_destroy(r->sim);
	else
		tc_comm_destroy(r->comm);
}
