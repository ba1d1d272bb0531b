// SPDX-License-Identifier: GPL-2.0
/*
 * torus: node character devices /dev/torus<F>n<N>: open binds the file to the
 * node (a torus_file: the node and the file's registrations), release drops
 * the file's registrations and quiesces the node when its last file goes,
 * mmap maps the buffer matrix, poll reports completion queue readiness.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "torus.h"

static dev_t torus_devt;
static struct cdev torus_cdev;
static struct class *torus_class;
static DEFINE_IDA(torus_minor_ida);
/* minor -> node; written under torus_registry_lock, read under it in open */
static DEFINE_XARRAY(torus_minors);

static int torus_node_open(struct inode *inode, struct file *file)
{
	struct torus_matrix *mx;
	struct torus_fabric *f;
	struct torus_file *tf;
	struct torus_node *n;
	int ret;

	tf = kzalloc(sizeof(*tf), GFP_KERNEL);
	if (!tf)
		return -ENOMEM;
	torus_file_mrs_init(tf);
	mutex_lock(&torus_registry_lock);
	n = xa_load(&torus_minors, iminor(inode));
	if (!n) {
		ret = -ENXIO;
		goto err_unlock;
	}
	f = n->fab;
	if (!n->open_count) {
		mx = torus_matrix_alloc(f->matrix_bytes);
		if (!mx) {
			ret = -ENOMEM;
			goto err_unlock;
		}
		ret = torus_cq_init(&n->cq, f->cq_depth);
		if (ret)
			goto err_put_matrix;
		n->mx = mx;
		spin_lock(&f->lock);
		n->active = true;
		n->ever_opened = true;
		spin_unlock(&f->lock);
		f->open_nodes++;
	}
	n->open_count++;
	kref_get(&f->ref);
	tf->node = n;
	file->private_data = tf;
	mutex_unlock(&torus_registry_lock);
	return nonseekable_open(inode, file);

err_put_matrix:
	torus_matrix_put(mx);
err_unlock:
	mutex_unlock(&torus_registry_lock);
	kfree(tf);
	return ret;
}

static int torus_node_release(struct inode *inode, struct file *file)
{
	struct torus_file *tf = file->private_data;
	struct torus_node *n = tf->node;
	struct torus_fabric *f = n->fab;

	/*
	 * Its programs are cancelled and waited for; queued descriptors
	 * naming this file's registrations are cancelled;
	 * ones an engine is copying keep their registrations pinned until
	 * they complete.
	 */
	torus_prog_cancel_file(tf);
	torus_file_cancel(tf);
	torus_file_mrs_destroy(tf);
	mutex_lock(&torus_registry_lock);
	if (!--n->open_count) {
		torus_node_quiesce(n);
		torus_cq_free(&n->cq);
		torus_matrix_put(n->mx);
		n->mx = NULL;
		f->open_nodes--;
	}
	mutex_unlock(&torus_registry_lock);
	torus_fabric_put(f);
	kfree(tf);
	return 0;
}

static int torus_node_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct torus_file *tf = file->private_data;

	return torus_matrix_mmap(tf->node->mx, vma);
}

static __poll_t torus_node_poll(struct file *file, poll_table *pt)
{
	struct torus_file *tf = file->private_data;

	return torus_cq_poll(tf->node, file, pt);
}

static const struct file_operations torus_node_fops = {
	.owner = THIS_MODULE,
	.open = torus_node_open,
	.release = torus_node_release,
	.mmap = torus_node_mmap,
	.poll = torus_node_poll,
	.unlocked_ioctl = torus_node_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = no_llseek,
};

static char *torus_devnode(struct device *dev, umode_t *mode)
{
	if (mode)
		*mode = 0660;
	return NULL;	/* the device name, TORUS_NODE_FMT */
}

void torus_node_fill_query(struct torus_node *n, struct torus_node_query *q)
{
	struct torus_fabric *f = n->fab;
	u32 p;

	q->fabric_id = f->id;
	q->node_id = n->id;
	q->ndims = f->ndims;
	q->wrap_mask = f->wrap_mask;
	q->fabric_flags = f->flags;
	memcpy(q->dims, f->dims, sizeof(q->dims));
	memcpy(q->coords, n->coords, sizeof(q->coords));
	for (p = 0; p < TORUS_MAX_PORTS; p++)
		q->neighbors[p] = n->ports[p].neighbor;
	spin_lock(&n->cq.lock);
	q->clock_ns = n->clock_ns;
	spin_unlock(&n->cq.lock);
	q->matrix_bytes = f->matrix_bytes;
}

static void torus_node_device_del(struct torus_node *n)
{
	device_destroy(torus_class, MKDEV(MAJOR(torus_devt), n->minor));
	xa_erase(&torus_minors, n->minor);
	ida_free(&torus_minor_ida, n->minor);
	n->dev = NULL;
}

/* Caller holds torus_registry_lock. */
int torus_node_devices_add(struct torus_fabric *f)
{
	struct torus_node *n;
	u32 i;
	int ret;

	for (i = 0; i < f->nodes; i++) {
		n = &f->node[i];
		ret = ida_alloc_max(&torus_minor_ida, TORUS_MAX_MINORS - 1, GFP_KERNEL);
		if (ret < 0)
			goto err_del_devices;
		n->minor = ret;
		ret = xa_err(xa_store(&torus_minors, n->minor, n, GFP_KERNEL));
		if (ret)
			goto err_free_minor;
		n->dev = device_create(torus_class, NULL, MKDEV(MAJOR(torus_devt), n->minor), n,
				       TORUS_NODE_FMT, f->id, i);
		if (IS_ERR(n->dev)) {
			ret = PTR_ERR(n->dev);
			n->dev = NULL;
			goto err_erase_minor;
		}
	}
	return 0;

err_erase_minor:
	xa_erase(&torus_minors, n->minor);
err_free_minor:
	ida_free(&torus_minor_ida, n->minor);
err_del_devices:
	while (i-- > 0)
		torus_node_device_del(&f->node[i]);
	return ret;
}

/* Caller holds torus_registry_lock; no node of @f is open. */
void torus_node_devices_del(struct torus_fabric *f)
{
	u32 i;

	for (i = 0; i < f->nodes; i++)
		torus_node_device_del(&f->node[i]);
}

int torus_node_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&torus_devt, 0, TORUS_MAX_MINORS, KBUILD_MODNAME);
	if (ret)
		return ret;
	torus_class = class_create(THIS_MODULE, KBUILD_MODNAME);
	if (IS_ERR(torus_class)) {
		ret = PTR_ERR(torus_class);
		goto err_unregister_region;
	}
	torus_class->devnode = torus_devnode;
	cdev_init(&torus_cdev, &torus_node_fops);
	torus_cdev.owner = THIS_MODULE;
	ret = cdev_add(&torus_cdev, torus_devt, TORUS_MAX_MINORS);
	if (ret)
		goto err_destroy_class;
	return 0;

err_destroy_class:
	class_destroy(torus_class);
err_unregister_region:
	unregister_chrdev_region(torus_devt, TORUS_MAX_MINORS);
	return ret;
}

void torus_node_exit(void)
{
	cdev_del(&torus_cdev);
	class_destroy(torus_class);
	unregister_chrdev_region(torus_devt, TORUS_MAX_MINORS);
	WARN_ON(!xa_empty(&torus_minors));
	ida_destroy(&torus_minor_ida);
}
