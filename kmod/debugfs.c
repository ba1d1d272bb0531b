// SPDX-License-Identifier: GPL-2.0
/*
 * torus: debugfs under /sys/kernel/debug/torus/fabric<F>/:
 *   info			shape, timing, makespan
 *   node<N>/state		node counters, CQ, and per port: queues,
 *				FIFO use/credits, link clock, counters, faults
 *   node<N>/fault		write "port flags drop_count delay_ns" to set
 *				the fault knobs of the link leaving on port
 *				(flags in hex as TORUS_FAULT_*; "port 0 0 0"
 *				clears); checked and applied as
 *				TORUS_IOC_LINK_FAULT does (fault.c), EINVAL
 *				for a bad line, flags, port or delay
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "torus.h"

static int torus_fabric_info_show(struct seq_file *s, void *unused)
{
	struct torus_fabric *f = s->private;
	u64 makespan;
	u32 d;

	spin_lock(&f->lock);
	makespan = f->makespan_ns;
	spin_unlock(&f->lock);
	seq_printf(s, "id %u\nflags 0x%x\nndims %u\ndims", f->id, f->flags, f->ndims);
	for (d = 0; d < f->ndims; d++)
		seq_printf(s, " %u", f->dims[d]);
	seq_printf(s, "\nwrap_mask 0x%x\nnodes %u\nopen_nodes %u\n", f->wrap_mask, f->nodes,
		   READ_ONCE(f->open_nodes));
	seq_printf(s, "matrix_bytes %llu\nsq_depth %u\nfifo_bytes %u\ncq_depth %u\n",
		   f->matrix_bytes, f->sq_depth, f->fifo_bytes, f->cq_depth);
	seq_printf(s, "ts_ns %llu\ntw_ps %llu\nhop_ns %llu\nmakespan_ns %llu\n",
		   f->ts_ns, f->tw_ps, f->hop_ns, makespan);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(torus_fabric_info);

struct torus_port_snap {
	u32 sq, rq, fifo_msgs, fifo_used;
	struct torus_link link;
};

static int torus_node_state_show(struct seq_file *s, void *unused)
{
	struct torus_node *n = s->private;
	struct torus_fabric *f = n->fab;
	struct torus_port_snap *snap;
	struct torus_fifo_msg *msg;
	struct torus_node_counters cnt;
	u32 count, reserved, p;
	bool active, rx_busy;
	u64 clock;

	/* on the heap: twelve snapshots overflow a KASAN kernel's frame limit */
	snap = kcalloc(TORUS_MAX_PORTS, sizeof(*snap), GFP_KERNEL);
	if (!snap)
		return -ENOMEM;
	spin_lock(&f->lock);
	active = n->active;
	rx_busy = n->rx_busy;
	for (p = 0; p < f->nports; p++) {
		snap[p].sq = n->ports[p].sq_count;
		snap[p].rq = n->ports[p].rq_count;
		snap[p].fifo_used = n->ports[p].fifo_used;
		snap[p].fifo_msgs = 0;
		list_for_each_entry(msg, &n->ports[p].fifo, list)
			snap[p].fifo_msgs++;
		snap[p].link = n->ports[p].link;
	}
	spin_lock(&n->cq.lock);
	cnt = n->cnt;
	count = n->cq.count;
	reserved = n->cq.reserved;
	clock = n->clock_ns;
	spin_unlock(&n->cq.lock);
	spin_unlock(&f->lock);

	seq_printf(s, "node %u active %d rx_busy %d clock_ns %llu\n", n->id, active, rx_busy, clock);
	seq_printf(s, "posted %llu completed %llu errors %llu cq_overflows %llu\n",
		   cnt.posted, cnt.completed, cnt.errors, cnt.cq_overflows);
	seq_printf(s, "cq ready %u reserved %u depth %u\n", count, reserved, f->cq_depth);
	for (p = 0; p < f->nports; p++) {
		seq_printf(s, "port %u neighbor %d sq %u rq %u fifo_msgs %u fifo_used %u credits %u",
			   p, (int)n->ports[p].neighbor, snap[p].sq, snap[p].rq, snap[p].fifo_msgs,
			   snap[p].fifo_used, f->fifo_bytes - snap[p].fifo_used);
		seq_printf(s, " link_free_ns %llu messages %llu bytes %llu busy_ns %llu stalls %llu",
			   torus_cal_free_ns(&snap[p].link.cal), snap[p].link.cnt.messages, snap[p].link.cnt.bytes,
			   snap[p].link.cnt.busy_ns, snap[p].link.cnt.stalls);
		seq_printf(s, " fault 0x%x drop %u delay_ns %llu\n", snap[p].link.fault_flags,
			   snap[p].link.drop_count, snap[p].link.delay_ns);
	}
	kfree(snap);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(torus_node_state);

static ssize_t torus_node_fault_write(struct file *file, const char __user *ubuf, size_t len,
				      loff_t *ppos)
{
	struct torus_node *n = file->private_data;
	struct torus_link_fault lf = { .node_id = n->id };
	char buf[64];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sscanf(buf, "%u %x %u %llu", &lf.port, &lf.flags, &lf.drop_count, &lf.delay_ns) != 4)
		return -EINVAL;
	ret = torus_link_fault_set(n->fab, &lf);
	return ret ? ret : len;
}

static const struct file_operations torus_node_fault_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = torus_node_fault_write,
	.llseek = no_llseek,
};

/* Caller holds torus_registry_lock. */
void torus_debugfs_fabric_add(struct torus_fabric *f)
{
	struct dentry *nd;
	char name[32];
	u32 i;

	snprintf(name, sizeof(name), "fabric%u", f->id);
	f->dbg = debugfs_create_dir(name, torus_debugfs_root);
	debugfs_create_file("info", 0444, f->dbg, f, &torus_fabric_info_fops);
	for (i = 0; i < f->nodes; i++) {
		snprintf(name, sizeof(name), "node%u", i);
		nd = debugfs_create_dir(name, f->dbg);
		debugfs_create_file("state", 0444, nd, &f->node[i], &torus_node_state_fops);
		debugfs_create_file("fault", 0200, nd, &f->node[i], &torus_node_fault_fops);
	}
}

void torus_debugfs_fabric_del(struct torus_fabric *f)
{
	debugfs_remove_recursive(f->dbg);
	f->dbg = NULL;
}
