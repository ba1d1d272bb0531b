// SPDX-License-Identifier: GPL-2.0
/*
 * torus.ko teardown: rmmod is refused while the control device or a node is
 * open (or mapped) and succeeds once everything is closed, even with fabrics
 * left behind; the module then loads again (insmod $TORUS_KO
 * $TORUS_MODULE_ARGS, as utils/torus-vm loaded it) and works. Load-time
 * parameters: a bad default shape is refused with EINVAL and one kernel log
 * line naming the allowed range; dims=4x4 is the same fabric as dims=4,4;
 * the module's version is dkms.conf's PACKAGE_VERSION.
 * Needs root and TORUS_KO (set by utils/torus-vm); skips without them.
 */
#include <sys/syscall.h>
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

/* Load $TORUS_KO with PARAMS through finit_module: 0 or the negative errno. */
static int load_with(const char *params)
{
	int fd = open(getenv("TORUS_KO"), O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* A /dev/kmsg reader that sees only records logged from now on, or -errno. */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	lseek(fd, 0, SEEK_END);
	return fd;
}

/* 1 when a kernel log record read from FD is exactly LINE (then FD is closed). */
static int kmsg_has(int fd, const char *line)
{
	char rec[2048], *msg, *nl;
	ssize_t n;
	int found = 0;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE) /* overwritten records: go on */
			continue;
		if (n <= 0)
			break;
		rec[n] = 0;
		msg = strchr(rec, ';'); /* "prio,seq,usec,flags;text\n" */
		if (!msg)
			continue;
		msg++;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = 0;
		if (!strcmp(msg, line))
			found = 1;
		else if (strstr(msg, "torus"))
			printf("# kernel log: %s\n", msg);
	}
	close(fd);
	return found;
}

/* PACKAGE_VERSION from the tree's dkms.conf (run-guest runs from the tree's top). */
static void dkms_version(char *ver, size_t len)
{
	char line[256];
	FILE *f = fopen("dkms.conf", "r");

	ver[0] = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "PACKAGE_VERSION=\"%63[^\"]\"", ver) == 1 && strlen(ver) < len)
			break;
	if (f)
		fclose(f);
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

TEST_F_TIMEOUT(unload, insmod__rejects_bad_dims_naming_the_range, 180)
{
	static const struct {
		const char *args, *log;
	} bad[] = {
		{ "dims=65,2", "torus: dims=\"65,2\": dimension 0 has size 65, allowed 2..64" },
		{ "dims=4x1", "torus: dims=\"4x1\": dimension 1 has size 1, allowed 2..64" },
		{ "dims=64x64x2", "torus: dims=\"64x64x2\": 8192 nodes, allowed at most 4096" },
		{ "dims=4y4", "torus: dims=\"4y4\": expected 1..6 sizes separated by ',' or 'x', e.g. 4,4 or 4x4" },
		{ "dims=2x2x2x2x2x2x2",
		  "torus: dims=\"2x2x2x2x2x2x2\": expected 1..6 sizes separated by ',' or 'x', e.g. 4,4 or 4x4" },
	};
	unsigned int i;
	int k;

	TV_SKIPPED();
	close(self->ctl);
	self->ctl = -1;
	ASSERT_EQ(0, run("rmmod torus"));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k = kmsg_open();
		ASSERT_LE(0, k);
		EXPECT_EQ(-EINVAL, load_with(bad[i].args)) TH_LOG("insmod torus.ko %s", bad[i].args);
		EXPECT_TRUE(kmsg_has(k, bad[i].log)) TH_LOG("insmod torus.ko %s: want the log line '%s'",
							     bad[i].args, bad[i].log);
		EXPECT_FALSE(loaded());
	}
}

TEST_F_TIMEOUT(unload, insmod__dims_4x4_is_dims_4_4_and_version_is_dkms, 180)
{
	static const char *const shapes[] = { "dims=4x4", "dims=4,4" };
	struct torus_fabric_query q;
	char ver[64], sysver[64] = "";
	unsigned int i;
	FILE *f;
	int k;

	TV_SKIPPED();
	close(self->ctl);
	self->ctl = -1;
	ASSERT_EQ(0, run("rmmod torus"));
	for (i = 0; i < 2; i++) {
		k = kmsg_open();
		ASSERT_LE(0, k);
		ASSERT_EQ(0, load_with(shapes[i])) TH_LOG("insmod torus.ko %s", shapes[i]);
		EXPECT_TRUE(kmsg_has(k, "torus: fabric 0: 16 nodes")) TH_LOG("%s", shapes[i]);
		for (k = 0; k < 100 && access(TV_CTL_PATH, F_OK); k++)
			usleep(10000);
		self->ctl = tv_ctl_open();
		ASSERT_LE(0, self->ctl);
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.fabric_id = 0;
		ASSERT_EQ(0, tv_ioctl(self->ctl, TORUS_IOC_FABRIC_QUERY, &q));
		EXPECT_EQ(2, q.ndims);
		EXPECT_EQ(4, q.dims[0]);
		EXPECT_EQ(4, q.dims[1]);
		EXPECT_EQ(16, q.nodes);
		EXPECT_EQ(3, q.wrap_mask);
		close(self->ctl);
		self->ctl = -1;
		if (i == 0) {
			f = fopen("/sys/module/torus/version", "r");
			ASSERT_NE(NULL, f);
			EXPECT_EQ(1, fscanf(f, "%63s", sysver));
			fclose(f);
			dkms_version(ver, sizeof(ver));
			EXPECT_NE(0, ver[0]) TH_LOG("no PACKAGE_VERSION in dkms.conf");
			EXPECT_STREQ(ver, sysver);
		}
		ASSERT_EQ(0, run("rmmod torus"));
	}
	/* the teardown loads it again with $TORUS_MODULE_ARGS */
}

TV_MAIN
