// SPDX-License-Identifier: GPL-2.0
/*
 * torus: ioctl dispatch. One table of ops; each command's struct starts with
 * __u32 size, __u32 flags. Errors in the order the UAPI header documents:
 * ENOTTY (unknown command or wrong device), EFAULT, EINVAL (size below the
 * minimum), E2BIG (longer struct with a non-zero tail, or longer than a
 * page), EOPNOTSUPP (unknown
 * flags), then the command's own checks.
 */
#include <linux/fs.h>
#include <linux/uaccess.h>

#include "torus.h"

#define TORUS_ON_CTL	(1U << 0)
#define TORUS_ON_NODE	(1U << 1)

union torus_ucmd_buf {
	struct torus_handshake hs;
	struct torus_fabric_create fc;
	struct torus_fabric_destroy fd;
	struct torus_fabric_query fq;
	struct torus_node_query nq;
	struct torus_post post;
	struct torus_cq_wait wait;
	struct torus_counters cnt;
	struct torus_link_fault fault;
	struct torus_mr_reg mr_reg;
	struct torus_mr_dereg mr_dereg;
	struct torus_prog_post prog;
};

struct torus_ucmd {
	struct torus_file *file;	/* NULL on the ctl device */
	struct torus_node *node;	/* NULL on the ctl device */
	void *cmd;			/* kernel copy, op->size bytes */
	bool respond;			/* copy the struct back even on error */
};

struct torus_ioctl_op {
	u32 size;
	u32 min_size;
	u32 flags;		/* valid flag bits */
	u32 where;		/* TORUS_ON_* */
	int (*fn)(struct torus_ucmd *uc);
	/* undoes a successful fn whose result cannot be copied back to the caller */
	void (*undo)(struct torus_ucmd *uc);
};

static int torus_ioc_handshake(struct torus_ucmd *uc)
{
	struct torus_handshake *h = uc->cmd;
	u32 size = h->size;

	memset(h, 0, sizeof(*h));
	h->size = size;
	h->abi_version = TORUS_ABI_VERSION;
	h->max_dims = TORUS_MAX_DIMS;
	h->features = TORUS_FEAT_ONE_PORT | TORUS_FEAT_ROUTE | TORUS_FEAT_LINK_FAULT |
		      TORUS_FEAT_EPOLL | TORUS_FEAT_MR | TORUS_FEAT_CQ_WAKE_ONCE |
		      TORUS_FEAT_SEND_SYNC | TORUS_FEAT_PROGRAM |
		      TORUS_FEAT_PROG_SIGNAL | TORUS_FEAT_PROG_QUEUE_ONLY;
	h->ioctls = (1ULL << (TORUS_CMD_LAST - TORUS_CMD_BASE)) - 1;
	h->max_nodes = TORUS_MAX_NODES;
	h->max_dim_size = TORUS_MAX_DIM_SIZE;
	h->max_segs = TORUS_MAX_SEGS;
	h->max_batch = TORUS_MAX_BATCH;
	h->max_matrix_bytes = TORUS_MAX_MATRIX_BYTES;
	h->max_mrs = TORUS_MAX_MRS;
	h->max_mr_bytes = TORUS_MAX_MR_BYTES;
	h->max_prog_descs = TORUS_MAX_PROG_DESCS;
	h->max_prog_counters = TORUS_MAX_PROG_COUNTERS;
	h->max_prog_fanout = TORUS_MAX_PROG_FANOUT;
	h->max_prog_bytes = TORUS_MAX_PROG_BYTES;
	h->max_prog_timeout_ns = TORUS_MAX_PROG_TIMEOUT_NS;
	return 0;
}

static int torus_ioc_fabric_create(struct torus_ucmd *uc)
{
	struct torus_fabric_create *c = uc->cmd;

	if (c->__reserved)
		return -EINVAL;
	c->fabric_id = 0;
	c->nodes = 0;
	return torus_fabric_create(c);
}

/*
 * The caller never learnt the new fabric's id: do not leave it behind. (By id:
 * were it destroyed and the id reused by another caller in between, that
 * fabric would go; only a caller racing on guessed ids can cause that.)
 */
static void torus_ioc_fabric_create_undo(struct torus_ucmd *uc)
{
	struct torus_fabric_create *c = uc->cmd;

	torus_fabric_destroy(c->fabric_id);
}

static int torus_ioc_fabric_destroy(struct torus_ucmd *uc)
{
	struct torus_fabric_destroy *d = uc->cmd;

	if (d->__reserved)
		return -EINVAL;
	return torus_fabric_destroy(d->fabric_id);
}

static void torus_query_fabric(struct torus_fabric *f, struct torus_fabric_query *q)
{
	torus_fabric_fill_query(f, q);
	if (q->flags & TORUS_QUERY_RESET_STATS)
		torus_clocks_reset(f);
}

static int torus_ioc_fabric_query(struct torus_ucmd *uc)
{
	struct torus_fabric_query *q = uc->cmd;
	struct torus_fabric_query in = *q;
	struct torus_fabric *f;
	int ret = 0;

	memset(q, 0, sizeof(*q));
	q->size = in.size;
	q->flags = in.flags;
	mutex_lock(&torus_registry_lock);
	f = uc->node ? uc->node->fab : __torus_fabric_find(in.fabric_id);
	q->fabric_id = f ? f->id : in.fabric_id;
	q->next_fabric_id = __torus_fabric_next_id(q->fabric_id);
	if (f) {
		torus_query_fabric(f, q);
	} else {
		uc->respond = true;
		ret = -ENOENT;
	}
	mutex_unlock(&torus_registry_lock);
	return ret;
}

static int torus_ioc_node_query(struct torus_ucmd *uc)
{
	struct torus_node_query *q = uc->cmd;
	u32 size = q->size;

	if (q->__reserved)
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	q->size = size;
	torus_node_fill_query(uc->node, q);
	return 0;
}

static int torus_ioc_post(struct torus_ucmd *uc)
{
	struct torus_post *p = uc->cmd;

	if (p->__reserved)
		return -EINVAL;
	uc->respond = true;
	return torus_post(uc->file, p);
}

static int torus_ioc_cq_wait(struct torus_ucmd *uc)
{
	struct torus_cq_wait *w = uc->cmd;
	int ret;

	w->count = 0;
	ret = torus_cq_wait(uc->node, w);
	uc->respond = ret == -ETIMEDOUT || ret == -EINTR;
	return ret;
}

static int torus_ioc_counters(struct torus_ucmd *uc)
{
	struct torus_counters *c = uc->cmd;
	struct torus_counters in = *c;
	bool reset = in.flags & TORUS_COUNTERS_RESET;
	struct torus_fabric *f;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	c->size = in.size;
	c->flags = in.flags;
	if (uc->node) {
		torus_counters_read(uc->node, c, reset);
		return 0;
	}
	mutex_lock(&torus_registry_lock);
	f = __torus_fabric_find(in.fabric_id);
	if (!f || in.node_id >= f->nodes) {
		ret = -ENOENT;
	} else {
		torus_counters_read(&f->node[in.node_id], c, false);
		if (reset)
			torus_counters_reset_fabric(f);
	}
	mutex_unlock(&torus_registry_lock);
	return ret;
}

static int torus_ioc_link_fault(struct torus_ucmd *uc)
{
	struct torus_link_fault *lf = uc->cmd;
	int ret;

	mutex_lock(&torus_registry_lock);
	ret = torus_link_fault_set(__torus_fabric_find(lf->fabric_id), lf);
	mutex_unlock(&torus_registry_lock);
	return ret;
}

static int torus_ioc_mr_reg(struct torus_ucmd *uc)
{
	return torus_mr_reg(uc->file, uc->cmd);
}

/*
 * The caller never learnt the key. Another thread of the process may have
 * guessed it (keys are handed out in order) and posted with it: then the
 * dereg is EBUSY and the registration stays until MR_DEREG or the file's
 * close, as any other would. Not a kernel bug: no WARN.
 */
static void torus_ioc_mr_reg_undo(struct torus_ucmd *uc)
{
	struct torus_mr_reg *r = uc->cmd;

	torus_mr_dereg(uc->file, r->key);
}

static int torus_ioc_mr_dereg(struct torus_ucmd *uc)
{
	struct torus_mr_dereg *d = uc->cmd;

	if (d->__reserved)
		return -EINVAL;
	return torus_mr_dereg(uc->file, d->key);
}

static int torus_ioc_prog_post(struct torus_ucmd *uc)
{
	uc->respond = true;	/* error_index */
	return torus_prog_post(uc->file, uc->cmd);
}

#define TORUS_OP_UNDO(_cmd, _struct, _last, _flags, _where, _fn, _undo)	\
	[TORUS_CMD_##_cmd - TORUS_CMD_BASE] = {					\
		.size = sizeof(struct _struct),					\
		.min_size = offsetofend(struct _struct, _last),			\
		.flags = _flags,						\
		.where = _where,						\
		.fn = _fn,							\
		.undo = _undo,							\
	}
#define TORUS_OP(_cmd, _struct, _last, _flags, _where, _fn) \
	TORUS_OP_UNDO(_cmd, _struct, _last, _flags, _where, _fn, NULL)

static const struct torus_ioctl_op torus_ops[] = {
	TORUS_OP(HANDSHAKE, torus_handshake, max_matrix_bytes, 0,
		 TORUS_ON_CTL | TORUS_ON_NODE, torus_ioc_handshake),
	TORUS_OP_UNDO(FABRIC_CREATE, torus_fabric_create, nodes, TORUS_FABRIC_ONE_PORT,
		      TORUS_ON_CTL, torus_ioc_fabric_create, torus_ioc_fabric_create_undo),
	TORUS_OP(FABRIC_DESTROY, torus_fabric_destroy, __reserved, 0,
		 TORUS_ON_CTL, torus_ioc_fabric_destroy),
	TORUS_OP(FABRIC_QUERY, torus_fabric_query, makespan_ns, TORUS_QUERY_RESET_STATS,
		 TORUS_ON_CTL | TORUS_ON_NODE, torus_ioc_fabric_query),
	TORUS_OP(NODE_QUERY, torus_node_query, matrix_bytes, 0,
		 TORUS_ON_NODE, torus_ioc_node_query),
	TORUS_OP(POST, torus_post, __reserved, 0, TORUS_ON_NODE, torus_ioc_post),
	TORUS_OP(CQ_WAIT, torus_cq_wait, count, 0, TORUS_ON_NODE, torus_ioc_cq_wait),
	TORUS_OP(COUNTERS, torus_counters, links, TORUS_COUNTERS_RESET,
		 TORUS_ON_CTL | TORUS_ON_NODE, torus_ioc_counters),
	TORUS_OP(LINK_FAULT, torus_link_fault, delay_ns, TORUS_FAULT_ALL_FLAGS,
		 TORUS_ON_CTL, torus_ioc_link_fault),
	TORUS_OP_UNDO(MR_REG, torus_mr_reg, __reserved, TORUS_MR_WRITE, TORUS_ON_NODE,
		      torus_ioc_mr_reg, torus_ioc_mr_reg_undo),
	TORUS_OP(MR_DEREG, torus_mr_dereg, __reserved, 0, TORUS_ON_NODE, torus_ioc_mr_dereg),
	TORUS_OP(PROG_POST, torus_prog_post, timeout_ns, TORUS_PROG_QUEUE_ONLY, TORUS_ON_NODE,
		 torus_ioc_prog_post),
};
static_assert(ARRAY_SIZE(torus_ops) == TORUS_CMD_LAST - TORUS_CMD_BASE);

static long torus_ioctl(struct torus_file *tf, unsigned int cmd, unsigned long arg, u32 where)
{
	void __user *uarg = (void __user *)arg;
	const struct torus_ioctl_op *op;
	union torus_ucmd_buf buf;
	struct torus_ucmd uc = { .file = tf, .node = tf ? tf->node : NULL, .cmd = &buf };
	u32 nr = _IOC_NR(cmd), usize;
	long ret;

	if (_IOC_TYPE(cmd) != TORUS_TYPE || nr < TORUS_CMD_BASE || nr >= TORUS_CMD_LAST ||
	    cmd != _IO(TORUS_TYPE, nr))
		return -ENOTTY;
	op = &torus_ops[nr - TORUS_CMD_BASE];
	if (!(op->where & where))
		return -ENOTTY;
	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < op->min_size)
		return -EINVAL;
	/* as openat2 and clone3: no scan of a huge zero tail */
	if (usize > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&buf, op->size, uarg, usize);
	if (ret)
		return ret;
	if (((u32 *)&buf)[1] & ~op->flags)
		return -EOPNOTSUPP;
	ret = op->fn(&uc);
	if ((!ret || uc.respond) && copy_to_user(uarg, &buf, min_t(u32, usize, op->size))) {
		if (!ret && op->undo)
			op->undo(&uc);
		return -EFAULT;
	}
	return ret;
}

long torus_ctl_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	return torus_ioctl(NULL, cmd, arg, TORUS_ON_CTL);
}

long torus_node_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	return torus_ioctl(file->private_data, cmd, arg, TORUS_ON_NODE);
}
