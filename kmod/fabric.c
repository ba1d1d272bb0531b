// SPDX-License-Identifier: GPL-2.0
/*
 * torus: fabric create/destroy and the fabric registry (IDA + list + mutex).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/idr.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "torus.h"

/* Protects torus_fabrics, fabric ids, node minors, open counts and node->mx. */
DEFINE_MUTEX(torus_registry_lock);
static LIST_HEAD(torus_fabrics);	/* sorted by id */
static DEFINE_IDA(torus_fabric_ida);

static int torus_fabric_check(const struct torus_fabric_create *c, u32 *nodes)
{
	u32 d, n = 1;

	if (c->ndims < 1 || c->ndims > TORUS_MAX_DIMS)
		return -EINVAL;
	if (c->wrap_mask >> c->ndims)
		return -EINVAL;
	for (d = 0; d < TORUS_MAX_DIMS; d++) {
		if (d >= c->ndims) {
			if (c->dims[d])
				return -EINVAL;
			continue;
		}
		if (c->dims[d] < TORUS_MIN_DIM_SIZE || c->dims[d] > TORUS_MAX_DIM_SIZE)
			return -EINVAL;
		n *= c->dims[d];
		if (n > TORUS_MAX_NODES)
			return -EINVAL;
	}
	if (c->matrix_bytes > TORUS_MAX_MATRIX_BYTES || c->ts_ns > TORUS_MAX_TS_NS ||
	    c->tw_ps > TORUS_MAX_TW_PS || c->hop_ns > TORUS_MAX_HOP_NS ||
	    c->sq_depth > TORUS_MAX_SQ_DEPTH || c->fifo_bytes > TORUS_MAX_FIFO_BYTES ||
	    c->cq_depth > TORUS_MAX_CQ_DEPTH)
		return -EINVAL;
	*nodes = n;
	return 0;
}

static void torus_fabric_init_nodes(struct torus_fabric *f)
{
	struct torus_node *n;
	struct torus_port *p;
	u32 i, j;

	for (i = 0; i < f->nodes; i++) {
		n = &f->node[i];
		n->fab = f;
		n->id = i;
		torus_coords(f, i, n->coords);
		INIT_LIST_HEAD(&n->rx_waiters);
		INIT_LIST_HEAD(&n->parked);
		INIT_LIST_HEAD(&n->progs);
		spin_lock_init(&n->cq.lock);
		mutex_init(&n->cq.reap_lock);
		init_waitqueue_head(&n->cq.wq);
		torus_engine_init(&n->eng1, n);
		for (j = 0; j < TORUS_MAX_PORTS; j++) {
			p = &n->ports[j];
			p->neighbor = j < f->nports ? torus_neighbor(f, i, j) : TORUS_NO_NODE;
			INIT_LIST_HEAD(&p->rxq);
			INIT_LIST_HEAD(&p->fifo);
			INIT_LIST_HEAD(&p->waiters);
			torus_engine_init(&p->eng, n);
		}
	}
}

static void torus_fabric_release(struct kref *ref)
{
	struct torus_fabric *f = container_of(ref, struct torus_fabric, ref);
	u32 i, j;

	if (f->wq) {
		for (i = 0; i < f->nodes; i++) {
			cancel_delayed_work_sync(&f->node[i].eng1.dwork);
			for (j = 0; j < f->nports; j++)
				cancel_delayed_work_sync(&f->node[i].ports[j].eng.dwork);
		}
		destroy_workqueue(f->wq);
	}
	torus_fifo_free_all(f);
	kvfree(f->node);
	kfree(f);
}

void torus_fabric_put(struct torus_fabric *f)
{
	kref_put(&f->ref, torus_fabric_release);
}

struct torus_fabric *__torus_fabric_find(u32 id)
{
	struct torus_fabric *f;

	lockdep_assert_held(&torus_registry_lock);
	list_for_each_entry(f, &torus_fabrics, list)
		if (f->id == id)
			return f;
	return NULL;
}

u32 __torus_fabric_next_id(u32 id)
{
	struct torus_fabric *f;

	lockdep_assert_held(&torus_registry_lock);
	list_for_each_entry(f, &torus_fabrics, list)
		if (f->id > id)
			return f->id;
	return TORUS_NO_NODE;
}

static void __torus_fabric_link(struct torus_fabric *nf)
{
	struct torus_fabric *f;

	list_for_each_entry(f, &torus_fabrics, list) {
		if (f->id > nf->id) {
			list_add_tail(&nf->list, &f->list);
			return;
		}
	}
	list_add_tail(&nf->list, &torus_fabrics);
}

int torus_fabric_create(struct torus_fabric_create *c)
{
	struct torus_fabric *f;
	u32 nodes, d;
	int ret;

	ret = torus_fabric_check(c, &nodes);
	if (ret)
		return ret;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	kref_init(&f->ref);
	spin_lock_init(&f->lock);
	f->flags = c->flags;
	f->ndims = c->ndims;
	f->wrap_mask = c->wrap_mask;
	f->nodes = nodes;
	f->nports = 2 * c->ndims;
	memcpy(f->dims, c->dims, sizeof(f->dims));
	for (d = f->ndims; d-- > 0;)
		f->strides[d] = d == f->ndims - 1 ? 1 : f->strides[d + 1] * f->dims[d + 1];
	f->matrix_bytes = PAGE_ALIGN(c->matrix_bytes ?: TORUS_DEFAULT_MATRIX_BYTES);
	f->ts_ns = c->ts_ns;
	f->tw_ps = c->tw_ps;
	f->hop_ns = c->hop_ns;
	f->sq_depth = c->sq_depth ?: TORUS_DEFAULT_SQ_DEPTH;
	f->fifo_bytes = c->fifo_bytes ?: TORUS_DEFAULT_FIFO_BYTES;
	f->cq_depth = c->cq_depth ?: TORUS_DEFAULT_CQ_DEPTH;

	f->node = kvcalloc(nodes, sizeof(*f->node), GFP_KERNEL);
	if (!f->node) {
		ret = -ENOMEM;
		goto err_put_fabric;
	}
	torus_fabric_init_nodes(f);

	mutex_lock(&torus_registry_lock);
	ret = ida_alloc_max(&torus_fabric_ida, TORUS_MAX_FABRICS - 1, GFP_KERNEL);
	if (ret < 0) {
		ret = ret == -ENOSPC ? -EBUSY : ret;
		goto err_unlock;
	}
	f->id = ret;
	f->wq = alloc_workqueue("torus%u", WQ_UNBOUND, 0, f->id);
	if (!f->wq) {
		ret = -ENOMEM;
		goto err_free_id;
	}
	ret = torus_node_devices_add(f);
	if (ret)
		goto err_free_id;
	__torus_fabric_link(f);
	torus_debugfs_fabric_add(f);
	c->fabric_id = f->id;
	c->nodes = f->nodes;
	mutex_unlock(&torus_registry_lock);
	return 0;

err_free_id:
	ida_free(&torus_fabric_ida, f->id);
err_unlock:
	mutex_unlock(&torus_registry_lock);
err_put_fabric:
	torus_fabric_put(f);
	return ret;
}

/* Caller holds torus_registry_lock and checked that no node is open. */
static void __torus_fabric_unlink(struct torus_fabric *f)
{
	lockdep_assert_held(&torus_registry_lock);
	list_del(&f->list);
	torus_debugfs_fabric_del(f);
	torus_node_devices_del(f);
	ida_free(&torus_fabric_ida, f->id);
}

int torus_fabric_destroy(u32 id)
{
	struct torus_fabric *f;

	mutex_lock(&torus_registry_lock);
	f = __torus_fabric_find(id);
	if (!f) {
		mutex_unlock(&torus_registry_lock);
		return -ENOENT;
	}
	if (f->open_nodes) {
		mutex_unlock(&torus_registry_lock);
		return -EBUSY;
	}
	__torus_fabric_unlink(f);
	mutex_unlock(&torus_registry_lock);
	torus_fabric_put(f);
	return 0;
}

/* Module exit: no file is open (THIS_MODULE owns every fops). */
void torus_fabric_destroy_all(void)
{
	struct torus_fabric *f, *tmp;
	LIST_HEAD(dead);

	mutex_lock(&torus_registry_lock);
	list_for_each_entry_safe(f, tmp, &torus_fabrics, list) {
		WARN_ON(f->open_nodes);
		__torus_fabric_unlink(f);
		list_add_tail(&f->list, &dead);
	}
	mutex_unlock(&torus_registry_lock);
	list_for_each_entry_safe(f, tmp, &dead, list) {
		list_del(&f->list);
		torus_fabric_put(f);
	}
}

void torus_fabric_fill_query(struct torus_fabric *f, struct torus_fabric_query *q)
{
	q->fabric_id = f->id;
	q->ndims = f->ndims;
	q->wrap_mask = f->wrap_mask;
	q->fabric_flags = f->flags;
	memcpy(q->dims, f->dims, sizeof(q->dims));
	q->nodes = f->nodes;
	q->open_nodes = f->open_nodes;
	q->sq_depth = f->sq_depth;
	q->fifo_bytes = f->fifo_bytes;
	q->cq_depth = f->cq_depth;
	q->matrix_bytes = f->matrix_bytes;
	q->ts_ns = f->ts_ns;
	q->tw_ps = f->tw_ps;
	q->hop_ns = f->hop_ns;
	spin_lock(&f->lock);
	q->makespan_ns = f->makespan_ns;
	spin_unlock(&f->lock);
}
