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

/* 20 colours far apart (with more series, the dash changes too) */
static const char *const colours[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
	"#000080", "#800000", "#008000", "#ffbf00", "#4b0082", "#00ced1", "#ff1493", "#556b2f", "#b8860b", "#000000",
};
#define NCOLOURS (int)(sizeof(colours) / sizeof(colours[0]))

/* series i of column col: its own colour, point type and (past 20) dash */
static void series(FILE *g, const char *data, int i, int col, const char *name)
{
	fprintf(g, "%s'%s' index %d using 1:%d with linespoints lc rgb '%s' pt %d dt %d title '%s'", i ? ", " : "",
		data, i, col, colours[i % NCOLOURS], i % 13 + 1, i / NCOLOURS + 1, name);
}

int plot(const struct bench *b, const char *file, const char *transport)
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
	fprintf(g, "set output '%s'\nset multiplot layout 1,2 title '%s on ", file, colls[b->o.coll]->name);
	for (int d = 0; d < b->ndims; d++)
		fprintf(g, "%s%d", d ? "x" : "", b->dims[d]);
	fprintf(g, " (%d nodes, %s, %s), transport %s'\nset logscale x 2\nset key left top\n"
		   "set xlabel '%s'\nset grid\n",
		b->P, b->wrap == (1u << b->ndims) - 1 ? "torus" : b->wrap ? "partly wrapping" : "mesh",
		b->one_port ? "one-port" : "all-port", transport, colls[b->o.coll]->size_name);
	fprintf(g, "set logscale y\nset ylabel 'time (us)'\nplot ");
	for (int i = 0; i < nblocks; i++)
		series(g, data, i, 2, names[i]);
	fprintf(g, "\nunset logscale y\nset ylabel 'busbw (GB/s)'\nplot ");
	for (int i = 0; i < nblocks; i++)
		series(g, data, i, 3, names[i]);
	fprintf(g, "\nunset multiplot\n");
	st = pclose(g);
	unlink(data);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -EIO;
	return 0;
}