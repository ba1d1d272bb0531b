// SPDX-License-Identifier: GPL-2.0
/*
 * torus.ko teardown: rmmod is refused while the control device or a node is
 * open (or mapped) and succeeds once everything is closed, even with fabrics
 * left behind; the module then loads again (insmod $TORUS_KO
 * $TORUS_MODULE_ARGS, as utils/torus-vm loaded it) and works.
 * Needs root and TORUS_KO (set by utils/torus-vm); skips without them.
 */
#include <sys/wait.h>

#include <kselftest_harness.h>

#include "torus_util.h"

/* Run a command; its exit status, or -1 if it could not run. */
static int run(const char *cmd)
{
	int st = system(cmd);

	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

static int loaded(void)
{
	return access("/sys/module/torus", F_OK) == 0;
}

static int reload(void)
{
	const char *ko = getenv("TORUS_KO");
	const char *args = getenv("TORUS_MODULE_ARGS");
	char cmd[1024];

	if (loaded())
		return 0;
	snprintf(cmd, sizeof(cmd), "insmod '%s' %s", ko, args ? args : "");
	return run(cmd);
}

FIXTURE(unload)
{
	int ctl;
};

FIXTURE_SETUP(unload)
{
	if (!getenv("TORUS_KO") || geteuid() != 0)
		SKIP(return, "needs root and TORUS_KO (run under utils/torus-vm)");
	self->ctl = tv_ctl_open();
	ASSERT_LE(0, self->ctl);
}

FIXTURE_TEARDOWN(unload)
{
	if (self->ctl > 0)
		close(self->ctl);
	/* leave the module loaded for the next program, whatever happened */
	if (getenv("TORUS_KO") && geteuid() == 0)
		reload();
}

TEST_F_TIMEOUT(unload, rmmod__refused_while_open_then_succeeds_and_reloads, 120)
{
	struct torus_fabric_create c;
	struct tv_fabric f;
	__u32 dims[2] = { 4, 4 };
	int i;

	TV_SKIPPED();
	/* the control device alone pins the module */
	EXPECT_NE(0, run("rmmod torus 2>/dev/null"));
	EXPECT_TRUE(loaded());
	/* a fabric's open, mapped node pins it too */
	tv_create_args(&c, 2, dims, 3, 0);
	c.matrix_bytes = 64 << 10;
	ASSERT_EQ(0, tv_fabric_new(&f, self->ctl, &c));
	close(self->ctl);
	self->ctl = -1;
	EXPECT_NE(0, run("rmmod torus 2>/dev/null"));
	EXPECT_TRUE(loaded());
	/* closed but still mapped */
	for (i = 0; i < (int)f.nodes; i++) {
		close(f.fd[i]);
		f.fd[i] = -1;
	}
	EXPECT_NE(0, run("rmmod torus 2>/dev/null"));
	EXPECT_TRUE(loaded());
	for (i = 0; i < (int)f.nodes; i++) {
		munmap(f.map[i], f.map_len);
		f.map[i] = NULL;
	}
	free(f.fd);
	free(f.map);
	free(f.q);
	/* nothing open: rmmod succeeds although the fabric still exists */
	EXPECT_EQ(0, run("rmmod torus"));
	EXPECT_FALSE(loaded());
	for (i = 0; i < 100 && access(TV_CTL_PATH, F_OK) == 0; i++)
		usleep(10000);
	EXPECT_NE(0, access(TV_CTL_PATH, F_OK));
	/* and it loads again and works */
	ASSERT_EQ(0, reload());
	for (i = 0; i < 100 && access(TV_CTL_PATH, F_OK); i++)
		usleep(10000);
	self->ctl = tv_ctl_open();
	ASSERT_LE(0, self->ctl);
	ASSERT_EQ(0, tv_fabric_new(&f, self->ctl, &c));
	tv_fabric_free(&f);
}

TEST_F_TIMEOUT(unload, rmmod__cycles_with_traffic, 180)
{
	struct torus_fabric_create c;
	struct torus_seg seg = { 0, 4096 };
	struct torus_desc x;
	struct torus_cqe e;
	struct tv_fabric f;
	__u32 dims[1] = { 4 };
	int i;

	TV_SKIPPED();
	close(self->ctl);
	self->ctl = -1;
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, reload());
		self->ctl = tv_ctl_open();
		ASSERT_LE(0, self->ctl);
		tv_create_args(&c, 1, dims, 1, 0);
		c.matrix_bytes = 64 << 10;
		ASSERT_EQ(0, tv_fabric_new(&f, self->ctl, &c));
		/* one message delivered, one left pending at unload time */
		tv_fill(f.map[0], 4096, i);
		tv_recv_desc(&x, 1, 1, &seg, 1, 0);
		ASSERT_EQ(0, tv_post(f.fd[1], &x, 1, NULL));
		tv_send_desc(&x, 1, 1, &seg, 1, 0);
		ASSERT_EQ(0, tv_post(f.fd[0], &x, 1, NULL));
		ASSERT_EQ(1, tv_reap(f.fd[1], &e, 1));
		EXPECT_EQ(-1, tv_check(f.map[1], 4096, i));
		tv_send_desc(&x, 2, 99, &seg, 1, 0);
		ASSERT_EQ(0, tv_post(f.fd[1], &x, 1, NULL));
		tv_fabric_close_nodes(&f);
		free(f.fd);
		free(f.map);
		free(f.q);
		close(self->ctl);
		self->ctl = -1;
		ASSERT_EQ(0, run("rmmod torus"));
	}
}

TV_MAIN
