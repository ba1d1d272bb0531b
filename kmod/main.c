// SPDX-License-Identifier: GPL-2.0
/*
 * torus: module init/exit, module parameters (the default fabric) and the
 * control device /dev/torus-ctl.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/string.h>

#include "torus.h"

static char *dims = "";
module_param(dims, charp, 0444);
MODULE_PARM_DESC(dims, "default fabric shape, e.g. \"4,4\" or \"4x4\" (empty: no default fabric)");

static char *wrap = "";
module_param(wrap, charp, 0444);
MODULE_PARM_DESC(wrap, "wrap-around per dimension \"1,0\" or a mask (empty: all wrap)");

static bool one_port;
module_param(one_port, bool, 0444);
MODULE_PARM_DESC(one_port, "default fabric is one-port");

static ulong ts_ns = TORUS_DEFAULT_TS_NS;
module_param(ts_ns, ulong, 0444);
MODULE_PARM_DESC(ts_ns, "virtual startup time per message, ns");

static ulong tw_ps = TORUS_DEFAULT_TW_PS;
module_param(tw_ps, ulong, 0444);
MODULE_PARM_DESC(tw_ps, "virtual time per byte, ps");

static ulong hop_ns = TORUS_DEFAULT_HOP_NS;
module_param(hop_ns, ulong, 0444);
MODULE_PARM_DESC(hop_ns, "virtual time per link crossed, ns");

static ulong matrix_bytes = TORUS_DEFAULT_MATRIX_BYTES;
module_param(matrix_bytes, ulong, 0444);
MODULE_PARM_DESC(matrix_bytes, "buffer matrix per node of the default fabric, bytes");

int torus_engine_inline = 2;
module_param_named(engine_inline, torus_engine_inline, int, 0444);
MODULE_PARM_DESC(engine_inline, "0: engines run as work items; 1: the poster runs the last engine of a batch; 2: the poster runs all");

struct dentry *torus_debugfs_root;

/*
 * Parse "a,b,c" (or, with seps ",x", "axbxc" as the tools write shapes) into
 * at most TORUS_MAX_DIMS numbers; returns the count or -EINVAL.
 */
static int torus_parse_list(const char *s, const char *seps, u32 *out)
{
	char buf[64], *p, *tok;
	int n = 0;

	if (strscpy(buf, s, sizeof(buf)) < 0)
		return -EINVAL;
	p = buf;
	while ((tok = strsep(&p, seps)) != NULL) {
		if (n == TORUS_MAX_DIMS || kstrtou32(strim(tok), 0, &out[n]))
			return -EINVAL;
		n++;
	}
	return n;
}

/* The shape limits of torus_fabric_check(), each named in the message. */
static int torus_params_check_dims(const struct torus_fabric_create *c)
{
	u64 nodes = 1;
	u32 d;

	for (d = 0; d < c->ndims; d++) {
		if (c->dims[d] < TORUS_MIN_DIM_SIZE || c->dims[d] > TORUS_MAX_DIM_SIZE) {
			pr_err("dims=\"%s\": dimension %u has size %u, allowed %d..%d\n", dims, d, c->dims[d],
			       TORUS_MIN_DIM_SIZE, TORUS_MAX_DIM_SIZE);
			return -EINVAL;
		}
		nodes *= c->dims[d];
	}
	if (nodes > TORUS_MAX_NODES) {
		pr_err("dims=\"%s\": %llu nodes, allowed at most %d\n", dims, nodes, TORUS_MAX_NODES);
		return -EINVAL;
	}
	return 0;
}

static int torus_params_to_create(struct torus_fabric_create *c)
{
	u32 w[TORUS_MAX_DIMS];
	int n, i;

	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	n = torus_parse_list(dims, ",x", c->dims);
	if (n < 1) {
		pr_err("dims=\"%s\": expected 1..%d sizes separated by ',' or 'x', e.g. 4,4 or 4x4\n", dims,
		       TORUS_MAX_DIMS);
		return -EINVAL;
	}
	c->ndims = n;
	if (torus_params_check_dims(c))
		return -EINVAL;
	if (!wrap[0]) {
		c->wrap_mask = (1U << n) - 1;
	} else if (strchr(wrap, ',')) {
		if (torus_parse_list(wrap, ",", w) != n) {
			pr_err("wrap=\"%s\": expected one 0/1 per dimension (%d)\n", wrap, n);
			return -EINVAL;
		}
		for (i = 0; i < n; i++) {
			if (w[i] > 1) {
				pr_err("wrap=\"%s\": entries must be 0 or 1\n", wrap);
				return -EINVAL;
			}
			c->wrap_mask |= w[i] << i;
		}
	} else if (kstrtou32(wrap, 0, &c->wrap_mask) || c->wrap_mask >> n) {
		pr_err("wrap=\"%s\": not a mask of %d dimensions\n", wrap, n);
		return -EINVAL;
	}
	c->flags = one_port ? TORUS_FABRIC_ONE_PORT : 0;
	c->ts_ns = ts_ns;
	c->tw_ps = tw_ps;
	c->hop_ns = hop_ns;
	c->matrix_bytes = matrix_bytes;
	return 0;
}

static const struct file_operations torus_ctl_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = torus_ctl_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice torus_ctl_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = TORUS_CTL_NAME,
	.fops = &torus_ctl_fops,
	.mode = 0660,
};

static int __init torus_init(void)
{
	struct torus_fabric_create c;
	int ret;

	if (torus_engine_inline < 0 || torus_engine_inline > 2) {
		pr_err("engine_inline=%d: must be 0, 1 or 2\n", torus_engine_inline);
		return -EINVAL;
	}
	if (dims[0]) {
		ret = torus_params_to_create(&c);
		if (ret)
			return ret;
	}
	torus_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	ret = torus_node_init();
	if (ret)
		goto err_remove_debugfs;
	ret = misc_register(&torus_ctl_dev);
	if (ret)
		goto err_node_exit;
	if (dims[0]) {
		ret = torus_fabric_create(&c);
		if (ret) {
			pr_err("default fabric (dims=%s wrap=%s): error %d\n", dims, wrap, ret);
			goto err_deregister_ctl;
		}
		pr_info("fabric %u: %u nodes\n", c.fabric_id, c.nodes);
	}
	return 0;

err_deregister_ctl:
	misc_deregister(&torus_ctl_dev);
err_node_exit:
	torus_node_exit();
err_remove_debugfs:
	debugfs_remove_recursive(torus_debugfs_root);
	return ret;
}

static void __exit torus_exit(void)
{
	misc_deregister(&torus_ctl_dev);
	torus_fabric_destroy_all();
	torus_node_exit();
	debugfs_remove_recursive(torus_debugfs_root);
}

module_init(torus_init);
module_exit(torus_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("torus-interconnect NIC model");
/* PACKAGE_VERSION of dkms.conf, passed in by Kbuild: one place to bump it */
MODULE_VERSION(TORUS_MODULE_VERSION);
