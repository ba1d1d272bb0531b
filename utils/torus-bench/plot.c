// SPDX-License-Identifier: GPL-2.0
/*
 * torus-bench --plot: time and busbw against size, one series per algorithm,
 * drawn by gnuplot into a PNG or an SVG.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

int plot(const struct bench *b, const char *file)
{
	const char *ext = strrchr(file, '.');
	char data[] = "/tmp/torus-bench-XXXXXX";
	int fd, st;
	FILE *f, *g;

	if (!ext || (strcmp(ext, ".png") && strcmp(ext, ".svg")))
		return -EINVAL;
	fd = mkstemp(data);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(data);
		return -errno;
	}
	/* one gnuplot data block per algorithm, separated by two blank lines */
	int nblocks = 0;
	char names[MAX_ALGOS][32];
	for (int i = 0; i < b->nrecs; i++) {
		const struct record *r = &b->recs[i];

		if (!r->supported)
			continue;
		if (!nblocks || strcmp(names[nblocks - 1], r->algo)) {
			if (nblocks == MAX_ALGOS)
				break;
			if (nblocks)
				fprintf(f, "\n\n");
			snprintf(names[nblocks++], sizeof(names[0]), "%s", r->algo);
		}
		fprintf(f, "%zu %.6g %.6g\n", r->size ? r->size : 1, r->tavg, r->busbw);
	}
	fclose(f);
	if (!nblocks) {
		unlink(data);
		return -ENODATA;
	}
	g = popen("gnuplot", "w");
	if (!g) {
		unlink(data);
		return -errno;
	}
	if (!strcmp(ext, ".png"))
		fprintf(g, "set terminal png size 1200,500\n");
	else
		fprintf(g, "set terminal svg size 1200,500\n");
	fprintf(g, "set output '%s'\nset multiplot layout 1,2 title '%s'\nset logscale x 2\nset key left top\n"
		   "set xlabel 'size (bytes)'\nset grid\n",
		file, colls[b->o.coll]->name);
	fprintf(g, "set logscale y\nset ylabel 'time (us)'\nplot ");
	for (int i = 0; i < nblocks; i++)
		fprintf(g, "%s'%s' index %d using 1:2 with linespoints title '%s'", i ? ", " : "", data, i, names[i]);
	fprintf(g, "\nunset logscale y\nset ylabel 'busbw (GB/s)'\nplot ");
	for (int i = 0; i < nblocks; i++)
		fprintf(g, "%s'%s' index %d using 1:3 with linespoints title '%s'", i ? ", " : "", data, i, names[i]);
	fprintf(g, "\nunset multiplot\n");
	st = pclose(g);
	unlink(data);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -EIO;
	return 0;
}