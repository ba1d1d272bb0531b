// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The transport ops: open (local setup, the card exchange, the probe),
 * close (the goodbye handshake), buffer, post and wait.
 */
#include "transport/verbs/verbs.h"

static void tc_vb_free(struct tc_vb *vb)
{
	if (vb->peers) {
		for (int r = 0; r < vb->size; r++) {
			struct tc_vb_peer *pe = &vb->peers[r];

			if (pe->id) {
				if (pe->state == TC_VB_UP)
					rdma_disconnect(pe->id);
				if (pe->id->qp)
					rdma_destroy_qp(pe->id);
				rdma_destroy_id(pe->id);
			}
			free(pe->rtr);
			free(pe->unexp);
			free(pe->q);
		}
	}
	if (vb->srq)
		ibv_destroy_srq(vb->srq);
	if (vb->mr)
		ibv_dereg_mr(vb->mr);
	if (vb->credit_mr)
		ibv_dereg_mr(vb->credit_mr);
	if (vb->slots_mr)
		ibv_dereg_mr(vb->slots_mr);
	if (vb->cq) {
		ibv_ack_cq_events(vb->cq, vb->cq_events);
		ibv_destroy_cq(vb->cq);
	}
	if (vb->cc)
		ibv_destroy_comp_channel(vb->cc);
	if (vb->pd)
		ibv_dealloc_pd(vb->pd);
	if (vb->listen)
		rdma_destroy_id(vb->listen);
	if (vb->ch)
		rdma_destroy_event_channel(vb->ch);
	free(vb->buf);
	free(vb->slots);
	free(vb->credit_word);
	free(vb->qpn_map);
	free(vb->peers);
	free(vb->recs);
	free(vb->prog_rec);
	free(vb);
}

/* The shared receive slots, then each peer's eager-send headers. */
static size_t tc_vb_slots_bytes(const struct tc_vb *vb)
{
	return (size_t)vb->nslots * vb->slot + (size_t)vb->size * vb->sq * TC_VB_TXH;
}

/*
 * The pool shared out: each peer's window is TC_VB_POOL / (size - 1)
 * receives, at most TC_VB_CREDITS, at least one, and the SRQ holds exactly
 * the windows of all peers (so from TC_VB_POOL + 2 ranks on, one receive per
 * peer). Every rank computes the same from the job size.
 */
static void tc_vb_pool(struct tc_vb *vb)
{
	uint32_t peers = vb->size > 1 ? vb->size - 1 : 1;

	vb->window = TC_VB_POOL / peers;
	if (vb->window > TC_VB_CREDITS)
		vb->window = TC_VB_CREDITS;
	if (!vb->window)
		vb->window = 1;
	vb->nslots = peers * vb->window;
	vb->sq = vb->window + TC_VB_SQ_EXTRA;
}

/* The local half of open: device, listener, PD, CQ. Fills the card. */
static int tc_vb_setup(struct tc_vb *vb, const char *want, struct tc_vb_card *card)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int cqe, flags, ret;

	ret = tc_vb_find_addr(want, vb->dev_name, sizeof(vb->dev_name), &card->ipv4);
	if (ret)
		return ret;
	vb->ch = rdma_create_event_channel();
	if (!vb->ch)
		return tc_err(-ENODEV, "transport verbs: no rdma_cm (/dev/infiniband/rdma_cm: %s): load rdma_ucm",
			      tc_strerror(-errno));
	flags = fcntl(vb->ch->fd, F_GETFL);
	if (flags < 0 || fcntl(vb->ch->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return tc_err(-errno, "transport verbs: rdma_cm channel: %s", tc_strerror(-errno));
	if (rdma_create_id(vb->ch, &vb->listen, NULL, RDMA_PS_TCP))
		return tc_err(-errno, "transport verbs: rdma_create_id: %s", tc_strerror(-errno));
	sin.sin_addr.s_addr = card->ipv4;
	if (rdma_bind_addr(vb->listen, (struct sockaddr *)&sin) || rdma_listen(vb->listen, vb->size > 64 ? vb->size : 64))
		return tc_err(-errno, "transport verbs: listening on %s (%s): %s", inet_ntoa(sin.sin_addr), vb->dev_name,
			      tc_strerror(-errno));
	if (!vb->listen->verbs)
		return tc_err(-ENODEV, "transport verbs: %s is not bound to an RDMA device", inet_ntoa(sin.sin_addr));
	card->port = rdma_get_src_port(vb->listen);
	vb->ctx = vb->listen->verbs;
	vb->pd = ibv_alloc_pd(vb->ctx);
	if (!vb->pd)
		return tc_err(-ENOMEM, "transport verbs: ibv_alloc_pd on %s failed", vb->dev_name);
	vb->cc = ibv_create_comp_channel(vb->ctx);
	if (!vb->cc)
		return tc_err(-errno, "transport verbs: ibv_create_comp_channel: %s", tc_strerror(-errno));
	flags = fcntl(vb->cc->fd, F_GETFL);
	if (flags < 0 || fcntl(vb->cc->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return tc_err(-errno, "transport verbs: completion channel: %s", tc_strerror(-errno));
	/* one CQ holds every posted work request (the SRQ's and every peer's
	 * sends): it can never overflow */
	tc_vb_pool(vb);
	cqe = vb->nslots + (vb->size - 1) * vb->sq + 16;
	{
		struct ibv_device_attr da;

		if (!ibv_query_device(vb->ctx, &da)) {
			if (cqe > da.max_cqe)
				return tc_err(-E2BIG, "transport verbs: %d ranks need a CQ of %d entries, %s allows %d",
					      vb->size, cqe, vb->dev_name, da.max_cqe);
			if (vb->nslots > (uint32_t)da.max_srq_wr)
				return tc_err(-E2BIG, "transport verbs: %d ranks need a shared receive queue of %u, %s allows %d",
					      vb->size, vb->nslots, vb->dev_name, da.max_srq_wr);
		}
	}
	vb->cq = ibv_create_cq(vb->ctx, cqe, NULL, vb->cc, 0);
	if (!vb->cq)
		return tc_err(-errno, "transport verbs: ibv_create_cq of %d entries on %s: %s", cqe, vb->dev_name,
			      tc_strerror(-errno));
	{
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = vb->nslots, .max_sge = 1 } };

		vb->srq = ibv_create_srq(vb->pd, &sa);
		if (!vb->srq)
			return tc_err(-errno, "transport verbs: ibv_create_srq of %u receives on %s: %s", vb->nslots,
				      vb->dev_name, tc_strerror(-errno));
	}
	for (vb->qpn_cap = 16; vb->qpn_cap < 2u * vb->size; vb->qpn_cap *= 2)
		;
	vb->qpn_map = calloc(vb->qpn_cap, sizeof(*vb->qpn_map));
	vb->credit_word = calloc(vb->size, sizeof(*vb->credit_word));
	if (!vb->qpn_map || !vb->credit_word)
		return tc_err(-ENOMEM, "transport verbs: out of memory");
	vb->credit_mr = ibv_reg_mr(vb->pd, vb->credit_word, vb->size * sizeof(*vb->credit_word),
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!vb->credit_mr)
		return tc_err(-errno, "transport verbs: registering the credit words: %s", tc_strerror(-errno));
	card->credit_addr = (uintptr_t)vb->credit_word;
	card->credit_rkey = vb->credit_mr->rkey;
	vb->slots = calloc(1, tc_vb_slots_bytes(vb));
	if (!vb->slots)
		return tc_err(-ENOMEM, "transport verbs: out of memory");
	vb->slots_mr = ibv_reg_mr(vb->pd, vb->slots, tc_vb_slots_bytes(vb), IBV_ACCESS_LOCAL_WRITE);
	if (!vb->slots_mr)
		return tc_err(-errno, "transport verbs: registering %zu bytes of receive slots (%u-byte eager limit): %s%s",
			      tc_vb_slots_bytes(vb), vb->eager, tc_strerror(-errno),
			      errno == ENOMEM ? " (raise ulimit -l, or lower TC_VERBS_EAGER)" : "");
	for (uint32_t i = 0; i < vb->nslots; i++) {
		ret = tc_vb_post_recv_slot(vb, i);
		if (ret)
			return tc_err(ret, "transport verbs: posting receive %u of %u to the shared receive queue: %s", i,
				      vb->nslots, tc_strerror(ret));
	}
	return 0;
}

/*
 * The eager limit: TC_VERBS_EAGER, else TC_VB_EAGER_CAP whatever the job
 * size (the receive slots are a shared pool); and the slot it needs.
 */
static int tc_vb_eager_env(struct tc_vb *vb)
{
	const char *env = getenv("TC_VERBS_EAGER");
	size_t v = TC_VB_EAGER_CAP;
	unsigned int u;

	if (env && *env) {
		int ret = tc_parse_uint("TC_VERBS_EAGER", env, &u);

		if (ret)
			return ret;
		if (u > TC_VB_EAGER_MAX)
			return tc_err(-EINVAL, "TC_VERBS_EAGER=%s: bytes up to %zu (0: every message by RDMA write)",
				      env, TC_VB_EAGER_MAX);
		v = u;
	}
	vb->eager = v;
	vb->slot = (sizeof(struct tc_vb_msg) + v + 63) & ~(size_t)63;
	if (vb->slot < TC_VB_SLOT_MIN)
		vb->slot = TC_VB_SLOT_MIN;
	return 0;
}

/*
 * How long wait busy-polls after the last event before it sleeps in the
 * completion channel: TC_VERBS_SPIN_US (default TC_VB_SPIN_NS), and whether
 * it yields the CPU between polls (TC_VERBS_YIELD=1 or 0; by default when
 * this host runs more of the job's ranks than it has CPUs online, decided
 * once the cards are in: tc_vb_oversubscribed), as Open MPI does.
 */
static int tc_vb_spin_env(struct tc_vb *vb)
{
	const char *env;
	unsigned int u;
	int ret;

	vb->spin_ns = TC_VB_SPIN_NS;
	ret = tc_env_uint("TC_VERBS_SPIN_US", &u);
	if (ret < 0)
		return ret;
	if (ret && u > 1000000)
		return tc_err(-EINVAL, "TC_VERBS_SPIN_US=%u: microseconds up to 1000000", u);
	if (ret)
		vb->spin_ns = (int64_t)u * 1000;
	env = getenv("TC_VERBS_YIELD");
	vb->spin_yield = env && *env ? !!strcmp(env, "0") : 2; /* 2: decided by tc_vb_oversubscribed */
	env = getenv("TC_VERBS_INLINE");
	vb->no_inline = env && !strcmp(env, "0");
	env = getenv("TC_VERBS_PROG");
	if (env && *env && strcmp(env, "0") && strcmp(env, "1"))
		return tc_err(-EINVAL, "TC_VERBS_PROG=%s: expected 1 (one program per call) or 0 (step by step)", env);
	/* not measured faster everywhere yet (docs/verbs.md): opt-in */
	vb->prog = env && !strcmp(env, "1");
	vb->prog_rdv_bytes = TC_VB_PROG_RDV_BYTES;
	ret = tc_env_uint("TC_VERBS_PROG_WINDOW", &u);
	if (ret > 0)
		vb->prog_rdv_bytes = u ? u : UINT64_MAX;
	return ret < 0 ? ret : 0;
}

/* TC_VERBS_WRITES=N: at most N rendezvous writes in flight a rank (0: no limit). */
static int tc_vb_writes_env(struct tc_vb *vb)
{
	unsigned int u;
	int ret = tc_env_uint("TC_VERBS_WRITES", &u);

	vb->writes_max = ret > 0 ? u : TC_VB_WRITES;
	return ret < 0 ? ret : 0;
}

/* TC_VERBS_ACK_TIMEOUT=N (1..31): the QPs' local ACK timeout, 4.096 us * 2^N. */
static int tc_vb_ack_timeout_env(struct tc_vb *vb)
{
	unsigned int u;
	int ret = tc_env_uint("TC_VERBS_ACK_TIMEOUT", &u);

	if (ret > 0 && u > 31)
		return tc_err(-EINVAL, "TC_VERBS_ACK_TIMEOUT=%u: expected 1..31 (4.096 us * 2^N), or 0 for rdma_cm's", u);
	vb->ack_timeout = ret > 0 ? u : TC_VB_ACK_TIMEOUT;
	return ret < 0 ? ret : 0;
}

/* TC_VERBS_TRACE=RANK or "all": whether this rank traces its steps. */
static int tc_vb_trace_env(struct tc_vb *vb)
{
	const char *env = getenv("TC_VERBS_TRACE");
	unsigned int u;
	int ret;

	if (!env || !*env)
		return 0;
	if (!strcmp(env, "all")) {
		vb->trace = 1;
		return 0;
	}
	ret = tc_parse_uint("TC_VERBS_TRACE", env, &u);
	if (ret)
		return ret;
	vb->trace = u == (unsigned int)vb->rank;
	return 0;
}

/* More ranks of this job on this host (same host name) than CPUs online? */
static int tc_vb_oversubscribed(const struct tc_vb *vb, const struct tc_vb_card *all)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int here = 0;

	for (int r = 0; r < vb->size; r++)
		here += !strncmp(all[r].host, all[vb->rank].host, sizeof(all[r].host));
	return ncpu > 0 && here > ncpu;
}

static int tc_vb_open(struct tc_tp *tp, const struct tc_comm_attr *attr)
{
	const char *dims = attr->dims, *dev = attr->rdma_device;
	struct tc_vb_card mine = { .magic = TC_VB_MAGIC }, *all = NULL;
	struct tc_vb *vb;
	char why[256] = "";
	int ret, setup;

	if (!dims || !*dims)
		dims = getenv("TC_DIMS");
	if (!dev || !*dev)
		dev = getenv("TC_RDMA_DEVICE");
	if (dev && !*dev)
		dev = NULL;
	vb = calloc(1, sizeof(*vb));
	if (!vb)
		return tc_err(-ENOMEM, "transport verbs: out of memory");
	/* who we are */
	ret = tc_boot_open(&vb->boot, attr);
	if (ret)
		goto err_free;
	vb->rank = vb->boot.rank;
	vb->size = vb->boot.size;
	vb->seq = vb->boot.seq;
	ret = tc_vb_shape(&tp->shape, dims, vb->size);
	if (!ret)
		ret = tc_vb_eager_env(vb);
	if (!ret)
		ret = tc_vb_spin_env(vb);
	if (!ret)
		ret = tc_vb_trace_env(vb);
	if (!ret)
		ret = tc_vb_writes_env(vb);
	if (!ret)
		ret = tc_vb_ack_timeout_env(vb);
	if (ret)
		goto err_free;
	vb->peers = calloc(vb->size, sizeof(*vb->peers));
	all = calloc(vb->size, sizeof(*all));
	if (!vb->peers || !all) {
		ret = tc_err(-ENOMEM, "transport verbs: out of memory for %d ranks", vb->size);
		goto err_free;
	}

	/* the local half; a failure still takes part in the exchange */
	setup = tc_vb_setup(vb, dev, &mine);
	if (setup)
		snprintf(why, sizeof(why), "%s", tc_last_error());
	mine.rank = vb->rank;
	mine.ok = !setup;
	mine.seq = vb->seq;
	mine.eager = vb->eager;
	gethostname(mine.host, sizeof(mine.host) - 1);
	ret = tc_boot_allgather(&vb->boot, &mine, all, sizeof(mine), tp->timeout_ms);
	if (setup) {
		ret = tc_err(setup, "%s", why);
		goto err_free;
	}
	if (ret)
		goto err_free;
	ret = tc_vb_check_cards(vb, all);
	if (ret)
		goto err_free;
	if (vb->spin_yield == 2)
		vb->spin_yield = tc_vb_oversubscribed(vb, all);
	tp->offload = vb->prog &&
		      !(attr->size >= offsetofend(struct tc_comm_attr, offload) && attr->offload == TC_OFFLOAD_OFF);
	free(all);
	tp->rank = vb->rank;
	tp->max_segs = 1;
	tp->priv = vb;
	ret = tc_vb_probe(tp);
	if (ret) {
		tp->priv = NULL;
		goto err_free;
	}
	return 0;

err_free:
	free(all);
	tc_vb_free(vb);
	return ret;
}

/*
 * Close gracefully: a peer may still wait for the acknowledgement of a
 * message we already received (our responder sent it, the peer has not seen
 * it yet); tearing the QP down now would turn that into a failed send on
 * its side. So each connected peer gets a goodbye, and the QPs live until
 * every such peer's goodbye came (it then has all its acknowledgements: it
 * sends its goodbye only from its own destroy) or it disconnected, or
 * TC_VB_LINGER_MS passed.
 */

static void tc_vb_linger(struct tc_vb *vb, int timeout_ms)
{
	struct timespec end;
	int ms = timeout_ms < TC_VB_LINGER_MS ? timeout_ms : TC_VB_LINGER_MS;

	vb->closing = 1; /* from now on every owed credit goes back at once */
	tc_deadline(&end, ms);
	for (;;) {
		int waiting = 0, starved = 0;

		tc_vb_progress(vb);
		for (int r = 0; r < vb->size; r++) {
			struct tc_vb_peer *pe = &vb->peers[r];

			if (pe->state != TC_VB_UP)
				continue;
			tc_vb_flush(vb, r);
			if (!pe->bye_sent && pe->sq_used < vb->sq && pe->credits) {
				struct tc_vb_msg m = { .type = TC_VB_MSG_BYE };

				m.credits = tc_vb_take_owed(pe);
				if (tc_vb_send_ctrl(vb, r, &m))
					continue; /* its QP is gone: nothing to wait for */
				pe->credits--; /* the goodbye takes a receive of the pool too */
				pe->bye_sent = 1;
			}
			starved |= !pe->bye_sent && !pe->credits;
			if (!pe->bye_sent || !pe->bye_rcvd || pe->sq_used)
				waiting++;
		}
		if (!waiting || tc_ns_left(&end) <= 0)
			return;
		if (starved)
			sched_yield(); /* a credit write wakes no one */
		else
			tc_vb_block(vb, 10);
	}
}

/* TC_VERBS_STATS=1: each rank says on stderr, at destroy, what its waits did. */
static void tc_vb_stats(const struct tc_vb *vb)
{
	const char *env = getenv("TC_VERBS_STATS");

	if (!env || !*env || !strcmp(env, "0"))
		return;
	fprintf(stderr, "libtoruscoll: verbs rank %d of %d: %llu progress calls, %llu reads of the rdma_cm channel, "
		"%llu sleeps, %llu inline sends, %s; shared receive queue: %u receives of %u bytes posted "
		"(a window of %u per peer), %zu bytes of slots and headers registered; rendezvous writes: at most %u "
		"in flight at once, %llu waited for the limit of %u; %llu turns of programs holding rendezvous receives "
		"back (TC_VERBS_PROG_WINDOW); %llu programs\n", vb->rank, vb->size,
		(unsigned long long)vb->n_progress, (unsigned long long)vb->n_cm_reads, (unsigned long long)vb->n_sleeps,
		(unsigned long long)vb->n_inline, vb->spin_yield ? "yielding while it spins" : "spinning without yielding",
		vb->srq_posted, vb->slot, vb->window, tc_vb_slots_bytes(vb), vb->writes_hwm,
		(unsigned long long)vb->n_capped, vb->writes_max, (unsigned long long)vb->n_window,
		(unsigned long long)vb->n_progs);
}

static void tc_vb_close(struct tc_tp *tp)
{
	struct tc_vb *vb = to_vb(tp);

	tc_vb_linger(vb, tp->timeout_ms);
	tc_vb_stats(vb);
	tc_vb_free(vb);
}

int tc_vb_buffer(struct tc_tp *tp, size_t bytes, void **base)
{
	struct tc_vb *vb = to_vb(tp);
	struct ibv_mr *mr;
	size_t nbytes;
	void *p;

	if (bytes <= vb->buf_bytes) {
		*base = vb->buf;
		return 0;
	}
	if (vb->nrecs > vb->nreaped)
		return tc_err(-EBUSY, "transport verbs: buffer resized with transfers outstanding");
	for (nbytes = 4096; nbytes < bytes; nbytes *= 2)
		;
	if (posix_memalign(&p, 4096, nbytes))
		return tc_err(-ENOMEM, "transport verbs: no memory for a %zu-byte buffer", nbytes);
	mr = ibv_reg_mr(vb->pd, p, nbytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		int ret = -errno;

		free(p);
		return tc_err(ret, "transport verbs: registering a %zu-byte buffer on %s: %s%s", nbytes, vb->dev_name,
			      tc_strerror(ret), ret == -ENOMEM ? " (raise ulimit -l)" : "");
	}
	if (vb->buf)
		memcpy(p, vb->buf, vb->buf_bytes);
	if (vb->mr)
		ibv_dereg_mr(vb->mr);
	free(vb->buf);
	vb->buf = p;
	vb->buf_bytes = nbytes;
	vb->mr = mr;
	*base = p;
	return 0;
}

/*
 * Eager receive @ri from @peer: the sender sends without asking, so its
 * message may be here already (unexpected); deliver it and give the slot
 * back. Otherwise the arrival delivers it.
 */
static void tc_vb_recv_eager(struct tc_vb *vb, uint32_t ri, int peer, uint64_t tag)
{
	struct tc_vb_peer *pe = &vb->peers[peer];
	struct tc_vb_unexp u;
	uint32_t k;
	int ret;

	for (k = 0; k < pe->nunexp && pe->unexp[k].tag != tag; k++)
		;
	if (k == pe->nunexp)
		return;
	u = pe->unexp[k];
	memmove(&pe->unexp[k], &pe->unexp[k + 1], (pe->nunexp - k - 1) * sizeof(*pe->unexp));
	pe->nunexp--;
	tc_vb_eager_deliver(vb, ri, tc_vb_slot(vb, u.slot), u.len);
	ret = tc_vb_post_recv_slot(vb, u.slot);
	if (ret)
		tc_vb_peer_down(vb, peer, ret, "reposting a shared receive failed");
	else if (pe->state != TC_VB_FAILED && pe->state != TC_VB_DRAINING)
		pe->owed++;
}

/* Record and start one transfer (its progress is the caller's). */
static int tc_vb_post_one(struct tc_tp *tp, const struct tc_xfer *xf)
{
	struct tc_vb *vb = to_vb(tp);
	uint32_t ri = vb->nrecs;
	struct tc_vb_rec *r;
	struct tc_vb_peer *pe;
	int ret;

	if (tc_grow((void **)&vb->recs, &vb->cap_recs, vb->nrecs + 1, sizeof(*vb->recs), 16))
		return tc_err(-ENOMEM, "transport verbs: out of memory posting a transfer");
	if (vb->nrecs + 1 > TC_VB_IMM_RID_MASK)
		return tc_err(-E2BIG, "transport verbs: more than %u transfers outstanding", TC_VB_IMM_RID_MASK);
	if (xf->op != TC_XFER_SEND && xf->op != TC_XFER_RECV)
		return tc_err(-EINVAL, "transport verbs: transfer op %u unknown", xf->op);
	if (xf->peer < 0 || xf->peer >= vb->size || xf->peer == vb->rank)
		return tc_err(-EINVAL, "transport verbs: peer %d invalid for rank %d", xf->peer, vb->rank);
	if (xf->nsegs != 1 || !xf->segs)
		return tc_err(-E2BIG, "transport verbs: a transfer with %u segments (this transport takes 1)",
			      xf->nsegs);
	if (!xf->segs[0].length || xf->segs[0].offset > vb->buf_bytes ||
	    xf->segs[0].length > vb->buf_bytes - xf->segs[0].offset || xf->segs[0].length > UINT32_MAX)
		return tc_err(-EINVAL, "transport verbs: segment [%llu, +%llu) outside the %zu-byte buffer",
			      (unsigned long long)xf->segs[0].offset, (unsigned long long)xf->segs[0].length,
			      vb->buf_bytes);
	r = &vb->recs[ri];
	*r = (struct tc_vb_rec){ .op = xf->op, .peer = xf->peer, .tag = xf->tag, .off = xf->segs[0].offset,
				 .len = xf->segs[0].length, .t_post = vb->trace ? tc_vb_now_ns() : 0 };
	vb->nrecs++;
	pe = &vb->peers[xf->peer];
	if (pe->state == TC_VB_FAILED) {
		r->done = 1;
		r->status = pe->err;
		vb->ndone++;
		return 0;
	}
	ret = tc_vb_connect(vb, xf->peer);
	if (ret)
		return ret;
	if (xf->op == TC_XFER_RECV && r->len <= vb->eager) {
		tc_vb_recv_eager(vb, ri, xf->peer, xf->tag);
		ret = 0;
	} else if (xf->op == TC_XFER_RECV) {
		ret = tc_vb_enqueue(vb, xf->peer, TC_VB_OP_RTR, ri);
	} else if (r->len <= vb->eager) {
		r->matched = 1; /* its place is a receive slot: nothing to wait for */
		ret = tc_vb_enqueue(vb, xf->peer, TC_VB_OP_EAGER, ri);
		tp->sends_eager++;
	} else {
		uint32_t k;

		ret = 0;
		tp->sends_rdv++;
		for (k = 0; k < pe->nrtr && pe->rtr[k].tag != xf->tag; k++)
			;
		if (k < pe->nrtr) {
			struct tc_vb_rtr t = pe->rtr[k];

			memmove(&pe->rtr[k], &pe->rtr[k + 1], (pe->nrtr - k - 1) * sizeof(*pe->rtr));
			pe->nrtr--;
			ret = tc_vb_match(vb, ri, &t);
		}
	}
	if (ret)
		return tc_err(-ENOMEM, "transport verbs: out of memory queueing a transfer");
	return 0;
}

int tc_vb_post(struct tc_tp *tp, const struct tc_xfer *x, unsigned int n)
{
	struct tc_vb *vb = to_vb(tp);
	int ret;

	if (tc_grow((void **)&vb->recs, &vb->cap_recs, vb->nrecs + n, sizeof(*vb->recs), 16))
		return tc_err(-ENOMEM, "transport verbs: out of memory posting %u transfers", n);
	for (unsigned int i = 0; i < n; i++) {
		ret = tc_vb_post_one(tp, &x[i]);
		if (ret)
			return ret;
	}
	tc_vb_progress(vb);
	return 0;
}

/* What a transfer that did not finish was waiting for, after "node N (". */
static void tc_vb_describe(struct tc_vb *vb, const struct tc_vb_rec *r)
{
	const struct tc_vb_peer *pe = &vb->peers[r->peer];
	const char *host = tc_vb_host(vb, r->peer);
	unsigned long long len = r->len, tag = r->tag;

	if (r->closed)
		snprintf(vb->what, sizeof(vb->what), "on %s: it destroyed its communicator before this transfer", host);
	else if (pe->state == TC_VB_FAILED)
		snprintf(vb->what, sizeof(vb->what), "on %s: %s", host, pe->why);
	else if (pe->state == TC_VB_DRAINING)
		snprintf(vb->what, sizeof(vb->what), "on %s: %s (its QP still flushing)", host, pe->why);
	else if (pe->state != TC_VB_UP)
		snprintf(vb->what, sizeof(vb->what), "on %s: the connection was never established: %s", host,
			 r->peer > vb->rank ? "it did not connect to us" : "no answer to our connect");
	else if (r->op == TC_XFER_RECV)
		snprintf(vb->what, sizeof(vb->what), "on %s: its %llu bytes, tag %#llx, never arrived", host, len, tag);
	else if (!r->matched)
		snprintf(vb->what, sizeof(vb->what), "on %s: no ready-to-receive came for our %llu bytes, tag %#llx", host,
			 len, tag);
	else
		snprintf(vb->what, sizeof(vb->what), "on %s: our write of %llu bytes, tag %#llx, was not acknowledged%s",
			 host, len, tag, r->queued ? " (still queued: no credit)" : "");
}

static void tc_vb_fill_err(struct tc_vb *vb, const struct tc_vb_rec *r, int status, struct tc_wait_err *err)
{
	tc_vb_describe(vb, r);
	err->status = status;
	err->port = -1;
	err->peer = r->peer;
	err->tag = r->tag;
	err->detail = vb->what;
	tc_err(status, "transport verbs: node %d (%s)", r->peer, vb->what);
}

/* TC_VERBS_TRACE: stamp the records of [from, to) seen done since the last turn. */
static void tc_vb_trace_stamp(struct tc_vb *vb, uint32_t from, uint32_t to)
{
	uint64_t now = 0;

	for (uint32_t i = from; i < to; i++)
		if (vb->recs[i].done && !vb->recs[i].t_done) {
			if (!now)
				now = tc_vb_now_ns();
			vb->recs[i].t_done = now;
		}
}

/*
 * TC_VERBS_TRACE: one line on stderr for the step or program whose records
 * are [from, to): how long the process took before it (since the last one
 * ended: packing, unpacking, choosing), its span from the first post to the
 * last completion, and by kind of transfer when the last one ended (us after
 * the first post) and the longest delays: a receive's RTR held back in its
 * peer's queue (no credit or send slot), a rendezvous send's wait for its
 * RTR and its write, an eager send's time queued. The completions are
 * stamped when a turn of waiting sees them, so a sleep rounds them up.
 */
static void tc_vb_trace_line(struct tc_vb *vb, const char *what, uint32_t from, uint32_t to)
{
	uint64_t t0 = UINT64_MAX, end = 0, now = tc_vb_now_ns();
	/* [0] eager receives, [1] rendezvous receives, [2] eager sends, [3] rendezvous sends */
	uint32_t n[4] = { 0 };
	double last[4] = { 0 }, held[4] = { 0 }, rtr_first = -1, rtr_last = 0, write_max = 0;

	tc_vb_trace_stamp(vb, from, to);
	for (uint32_t i = from; i < to; i++)
		if (vb->recs[i].t_post < t0)
			t0 = vb->recs[i].t_post;
	for (uint32_t i = from; i < to; i++) {
		const struct tc_vb_rec *r = &vb->recs[i];
		int k = (r->op == TC_XFER_SEND) * 2 + (r->len > vb->eager);
		uint64_t done = r->t_done ? r->t_done : now;

		n[k]++;
		if (done > end)
			end = done;
		if ((done - t0) / 1e3 > last[k])
			last[k] = (done - t0) / 1e3;
		if (k == 3 && r->t_match) {
			double at = (r->t_match - t0) / 1e3;

			if (rtr_first < 0 || at < rtr_first)
				rtr_first = at;
			if (at > rtr_last)
				rtr_last = at;
			if (r->t_issue && (r->t_issue - r->t_match) / 1e3 > held[3])
				held[3] = (r->t_issue - r->t_match) / 1e3;
			if (r->t_issue && (done - r->t_issue) / 1e3 > write_max)
				write_max = (done - r->t_issue) / 1e3;
		} else if (k != 0 && k != 3 && r->t_issue && (r->t_issue - r->t_post) / 1e3 > held[k]) {
			held[k] = (r->t_issue - r->t_post) / 1e3;
		}
	}
	if (t0 == UINT64_MAX)
		return;
	fprintf(stderr, "libtoruscoll: verbs trace rank %d: %s %u: %u transfers, %.0f us of process before it, "
		"%.0f us from first post to last completion; eager receives %u (last done at %.0f us), "
		"rendezvous receives %u (RTR held %.0f us at most, last done at %.0f us), eager sends %u "
		"(held %.0f us at most, last done at %.0f us), rendezvous sends %u (RTRs arrived at %.0f..%.0f us, "
		"write held %.0f us and took %.0f us at most, last done at %.0f us); %llu sleeps, %llu turns starved "
		"of credits\n", vb->rank, what, vb->trace_seq++, to - from,
		vb->trace_end && t0 > vb->trace_end ? (t0 - vb->trace_end) / 1e3 : 0.0, (end - t0) / 1e3, n[0], last[0],
		n[1], held[1], last[1], n[2], held[2], last[2], n[3], rtr_first < 0 ? 0 : rtr_first, rtr_last, held[3],
		write_max, last[3], (unsigned long long)(vb->n_sleeps - vb->trace_sleeps),
		(unsigned long long)(vb->n_starved - vb->trace_starved));
	vb->trace_end = now;
	vb->trace_sleeps = vb->n_sleeps;
	vb->trace_starved = vb->n_starved;
}

/*
 * One turn of waiting: make progress, busy-poll while there is progress and
 * briefly after, then sleep in the completion channel; but not while
 * credits are awaited: their write wakes no one. @idle_from: the time left
 * when progress was last made.
 */
static void tc_vb_turn(struct tc_vb *vb, int64_t left, int64_t *idle_from)
{
	if (tc_vb_progress(vb)) {
		*idle_from = left;
		return;
	}
	vb->n_starved += vb->starved;
	if (*idle_from - left < vb->spin_ns || vb->starved) {
		if (vb->spin_yield)
			sched_yield(); /* oversubscribed: let the ranks we wait for run */
		return;
	}
	tc_vb_block(vb, left / 1000000 + 1 < 100 ? (int)(left / 1000000 + 1) : 100);
}

/* Every transfer posted so far has finished and been reaped: reuse the records. */
static void tc_vb_reap(struct tc_vb *vb, unsigned int n)
{
	vb->nreaped += n;
	if (vb->nreaped == vb->nrecs)
		vb->nrecs = vb->ndone = vb->nreaped = 0;
}

int tc_vb_wait(struct tc_tp *tp, unsigned int n, int timeout_ms, struct tc_wait_err *err)
{
	struct tc_vb *vb = to_vb(tp);
	struct timespec end;
	int64_t left, idle_from;

	if (n > vb->nrecs - vb->nreaped)
		return tc_err(-EINVAL, "transport verbs: waiting for %u completions with %u posted", n,
			      vb->nrecs - vb->nreaped);
	tc_deadline(&end, timeout_ms);
	idle_from = tc_ns_left(&end);
	for (;;) {
		/* a failed transfer fails the step at once: its partners may never complete */
		for (uint32_t i = vb->nreaped; i < vb->nrecs; i++)
			if (vb->recs[i].done && vb->recs[i].status) {
				tc_vb_fill_err(vb, &vb->recs[i], vb->recs[i].status, err);
				return vb->recs[i].status;
			}
		if (vb->ndone - vb->nreaped >= n)
			break;
		left = tc_ns_left(&end);
		if (left <= 0) {
			for (uint32_t i = vb->nreaped; i < vb->nrecs; i++)
				if (!vb->recs[i].done) {
					tc_vb_fill_err(vb, &vb->recs[i], -ETIMEDOUT, err);
					break;
				}
			return -ETIMEDOUT;
		}
		tc_vb_turn(vb, left, &idle_from);
		if (vb->trace)
			tc_vb_trace_stamp(vb, vb->nreaped, vb->nrecs);
	}
	if (vb->trace)
		tc_vb_trace_line(vb, "step", vb->nreaped, vb->nrecs);
	tc_vb_reap(vb, n);
	return 0;
}

/* The bytes of the program's rendezvous receives posted and not yet done. */
static uint64_t tc_vb_prog_rdv_out(const struct tc_vb *vb, const struct tc_prog *pg)
{
	uint64_t out = 0;

	for (uint32_t i = 0; i < pg->n; i++) {
		const struct tc_vb_rec *r;

		if (vb->prog_rec[i] == UINT32_MAX)
			continue;
		r = &vb->recs[vb->prog_rec[i]];
		if (r->op == TC_XFER_RECV && r->len > vb->eager && !r->done)
			out += r->len;
	}
	return out;
}

/*
 * A whole plan as one program in the process: transfer i is posted as soon
 * as every transfer it depends on (pg->deps, each of a lower index) has
 * completed, so no step waits for the whole of the step before it. With no
 * dependencies between them (direct alltoall, staged: sends read the send
 * area, receives write the receive area) every receive's ready-to-receive
 * leaves at once and every send's write starts when its RTR arrives: the
 * RTR round trip of each step and the step barrier go; but rendezvous
 * receives wait, in the plan's order, while TC_VB_PROG_RDV_BYTES of them
 * are outstanding (at least one goes): 15 writes of 1 MiB arriving at once
 * at every rank were slower on soft-RoCE than a step's one. Order keeps it
 * live: the oldest receive not done is always posted, and the send it waits
 * for depends only on transfers of earlier steps. Nothing allocates
 * per call once the map has grown to the plan's size. timeout_ms bounds
 * the wait for progress: it restarts whenever a transfer completes, as a
 * stepped run's per-step limit does (a dead peer still fails the call
 * within the timeout of the last completion).
 */
static int tc_vb_prog(struct tc_tp *tp, const struct tc_prog *pg, int timeout_ms, struct tc_wait_err *err,
		      int *posted)
{
	struct tc_vb *vb = to_vb(tp);
	uint32_t nposted = 0, first = 0, seen = UINT32_MAX, done;
	uint64_t rdv_out;
	struct timespec end;
	int64_t left, idle_from;
	int ret;

	*posted = 0;
	err->xfer = -1;
	if (vb->nrecs != vb->nreaped)
		return tc_err(-EBUSY, "transport verbs: a program with transfers outstanding");
	if (tc_grow((void **)&vb->prog_rec, &vb->cap_prog, pg->n, sizeof(*vb->prog_rec), 64) ||
	    tc_grow((void **)&vb->recs, &vb->cap_recs, pg->n, sizeof(*vb->recs), 16))
		return tc_err(-ENOMEM, "transport verbs: out of memory for a program of %u transfers", pg->n);
	for (uint32_t i = 0; i < pg->n; i++)
		vb->prog_rec[i] = UINT32_MAX;
	*posted = 1;
	vb->n_progs++;
	tc_deadline(&end, timeout_ms);
	idle_from = tc_ns_left(&end);
	for (;;) {
		/* something completed: the limit starts again, and what it made
		 * ready is posted */
		if (vb->ndone != seen) {
			int rdv_held = 0;

			seen = vb->ndone;
			tc_deadline(&end, timeout_ms);
			idle_from = tc_ns_left(&end);
			rdv_out = tc_vb_prog_rdv_out(vb, pg);
			for (uint32_t i = first; i < pg->n; i++) {
				const struct tc_xfer *xf = &pg->x[i];
				int rdv = xf->op == TC_XFER_RECV && xf->nsegs == 1 && xf->segs[0].length > vb->eager;
				uint32_t d;

				if (vb->prog_rec[i] != UINT32_MAX)
					continue;
				/* the rendezvous receives' window, in the plan's order:
				 * once one waits, the later ones wait behind it */
				if (rdv && (rdv_held || (rdv_out && (rdv_out >= vb->prog_rdv_bytes ||
								      xf->segs[0].length > vb->prog_rdv_bytes - rdv_out)))) {
					vb->n_window += !rdv_held;
					rdv_held = 1;
					continue;
				}
				for (d = pg->dep_first[i]; d < pg->dep_first[i + 1]; d++) {
					uint32_t rd = vb->prog_rec[pg->deps[d]];

					if (rd == UINT32_MAX || !vb->recs[rd].done)
						break;
				}
				if (d < pg->dep_first[i + 1]) {
					rdv_held |= rdv;
					continue;
				}
				if (rdv)
					rdv_out += xf->segs[0].length;
				vb->prog_rec[i] = vb->nrecs;
				ret = tc_vb_post_one(tp, &pg->x[i]);
				if (ret) {
					err->xfer = (int)i;
					err->peer = pg->x[i].peer;
					return ret;
				}
				nposted++;
			}
			while (first < pg->n && vb->prog_rec[first] != UINT32_MAX)
				first++;
		}
		/* a failed transfer fails the program at once */
		done = 0;
		for (uint32_t i = 0; i < pg->n; i++) {
			const struct tc_vb_rec *r;

			if (vb->prog_rec[i] == UINT32_MAX)
				continue;
			r = &vb->recs[vb->prog_rec[i]];
			if (r->done && r->status) {
				tc_vb_fill_err(vb, r, r->status, err);
				err->xfer = (int)i;
				return r->status;
			}
			done += r->done;
		}
		if (done == pg->n)
			break;
		left = tc_ns_left(&end);
		if (left <= 0) {
			for (uint32_t i = 0; i < pg->n; i++)
				if (vb->prog_rec[i] != UINT32_MAX && !vb->recs[vb->prog_rec[i]].done) {
					tc_vb_fill_err(vb, &vb->recs[vb->prog_rec[i]], -ETIMEDOUT, err);
					err->xfer = (int)i;
					break;
				}
			return -ETIMEDOUT;
		}
		tc_vb_turn(vb, left, &idle_from);
		if (vb->trace)
			tc_vb_trace_stamp(vb, vb->nreaped, vb->nrecs);
	}
	if (vb->trace)
		tc_vb_trace_line(vb, "program", vb->nreaped, vb->nrecs);
	tc_vb_reap(vb, nposted);
	return 0;
}

const struct tc_transport_ops tc_transport_verbs = {
	.name = "verbs",
	.open = tc_vb_open,
	.close = tc_vb_close,
	.buffer = tc_vb_buffer,
	.post = tc_vb_post,
	.wait = tc_vb_wait,
	.prog = tc_vb_prog,
};
