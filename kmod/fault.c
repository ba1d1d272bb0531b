// SPDX-License-Identifier: GPL-2.0
/*
 * torus: the per-link fault knobs (down, drop the next N messages, delay).
 * One setter validates and applies them for both ways in: TORUS_IOC_LINK_FAULT
 * on the control device and the fabric's debugfs "fault" files. The engines
 * read them per route (engine.c).
 */
#include "torus.h"

/*
 * Set the fault state of the link leaving node @lf->node_id of @f on
 * @lf->port (flags 0 clears it). @f is NULL when @lf->fabric_id named no
 * fabric. Values are checked before ids, in the order the ABI header lists:
 * unknown flags or a delay above TORUS_MAX_FAULT_DELAY_NS are EINVAL (the
 * ioctl dispatch already answers unknown flags with EOPNOTSUPP), no such
 * fabric or node is ENOENT, and a port the fabric does not have or that
 * leaves a mesh edge is EINVAL. The caller keeps @f alive (it holds
 * torus_registry_lock, or is a debugfs file of @f).
 */
int torus_link_fault_set(struct torus_fabric *f, const struct torus_link_fault *lf)
{
	struct torus_link *l;

	if (lf->flags & ~TORUS_FAULT_ALL_FLAGS || lf->delay_ns > TORUS_MAX_FAULT_DELAY_NS)
		return -EINVAL;
	if (!f || lf->node_id >= f->nodes)
		return -ENOENT;
	if (lf->port >= f->nports || f->node[lf->node_id].ports[lf->port].neighbor == TORUS_NO_NODE)
		return -EINVAL;
	l = &f->node[lf->node_id].ports[lf->port].link;
	spin_lock(&f->lock);
	l->fault_flags = lf->flags;
	l->drop_count = lf->flags & TORUS_FAULT_DROP ? lf->drop_count : 0;
	l->delay_ns = lf->flags & TORUS_FAULT_DELAY ? lf->delay_ns : 0;
	spin_unlock(&f->lock);
	return 0;
}
