/* Unit tests of sweep files and the worker pool: expansion order, ranges,
 * point ids (golden: an id must never change for the same parameters),
 * shards, and the pool running every point once even when a worker dies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/wz_io.h"
#include "sweep/sweep.h"
#include "tests/tap.h"

static char dir[] = "test-sweep.XXXXXX"; /* in the build folder, as the other tests */

static const char *write_sweep(const char *name, const char *text)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

static const char base[] = "model = DeepSeek-V3\ngpu = H100 SXM 80GB\nusers = 10\ncontext = 1000\n";
static const char grid[] = "sweep = unit\n"
			   "scenario = base.scenario\n"
			   "set.price_set = catalog\n"
			   "axis.gpu = H100 SXM 80GB | H200 SXM\n"
			   "axis.context = 16k .. 64k times 2\n"
			   "axis.users = 1000 .. 3000 step 1000\n";

static int fail_on(void *ud, long index)
{
	(void)ud;
	if (index == 4)
		_exit(3); /* a worker dying inside a point */
	return index % 3 == 0;
}

static int seen[64];
static void on_done(void *ud, long index, int status)
{
	(void)ud;
	(void)status;
	seen[index]++;
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	wz_diag diag;
	wzsw_sweep *s;
	write_sweep("base.scenario", base);
	ok(wzsw_load(write_sweep("grid.sweep", grid), &s, &diag) == WZ_OK, "loads a sweep file");
	if (!s) {
		printf("#   %s\n", diag.msg);
		return tap_done();
	}
	is_long(s->npoints, 18, "2 x 3 x 3 points");
	is_long(s->axes[1].nvalues, 3, "a geometric range, both ends included");
	is_str(s->axes[1].values[2], "64000", "its last value");
	is_str(s->axes[2].values[1], "2000", "an arithmetic range");
	wzsw_point p0, p1, p17;
	wzsw_point_build(s, 0, &p0, &diag);
	wzsw_point_build(s, 1, &p1, &diag);
	wzsw_point_build(s, 17, &p17, &diag);
	is_str(p0.values[3], "1000", "point 0: the first users value");
	is_str(p1.values[3], "2000", "point 1: the last axis turns fastest");
	is_str(p1.values[1], "H100 SXM 80GB", "point 1: the first axis still at its first value");
	is_str(p17.values[1], "H200 SXM", "point 17: the last of every axis");
	is_str(p17.values[2], "64000", "point 17: context");
	/* The id is XXH3-64 of exactly this text (wzplan-sweep(5)): keys
	 * sorted, the catalogs' hash, the simulation settings. */
	char want_text[512], want[17];
	snprintf(want_text, sizeof want_text,
		 "wzplan-sweep-point 1\ncatalogs=%s\ncontext=16000\ngpu=H100 SXM 80GB\n"
		 "model=DeepSeek-V3\nprice_set=catalog\nusers=1000\nsimulate=no\n",
		 s->catalog_hash);
	snprintf(want, sizeof want, "%016llx",
		 (unsigned long long)wz_hash_bytes(want_text, strlen(want_text)));
	is_str(p0.id, want, "point 0's id is the hash of its documented text");
	has_str(p0.scenario, "name = unit/", "the point's scenario is named by sweep and point");
	has_str(p17.scenario, "gpu = H200 SXM\n", "and carries the axis values");
	ok(strcmp(p0.id, p1.id) != 0, "points differ in id");

	wzsw_sweep *s2;
	char other[sizeof grid + 64];
	snprintf(other, sizeof other, "%s", grid);
	memcpy(other + strlen("sweep = "), "UNIT", 4);
	wzsw_load(write_sweep("renamed.sweep", other), &s2, &diag);
	wzsw_point q0;
	wzsw_point_build(s2, 0, &q0, &diag);
	is_str(q0.id, p0.id, "the sweep's name is not part of a point's id");
	wzsw_point_clear(&q0);
	wzsw_free(s2);

	int covered[18] = { 0 };
	for (long k = 1; k <= 4; k++)
		for (long i = 0; i < 18; i++)
			covered[i] += wzsw_in_shard(i, k, 4);
	int once = 1;
	for (int i = 0; i < 18; i++)
		once &= covered[i] == 1;
	ok(once, "4 shards hold every point exactly once");
	long k, n;
	ok(wzsw_shard_parse("2/5", &k, &n, &diag) == WZ_OK && k == 2 && n == 5, "parses K/N");
	ok(wzsw_shard_parse("0/5", &k, &n, &diag) != WZ_OK, "refuses K = 0");
	ok(wzsw_shard_parse("6/5", &k, &n, &diag) != WZ_OK, "refuses K > N");
	ok(wzsw_shard_parse("x", &k, &n, &diag) != WZ_OK, "refuses text");

	long idx[18], nfailed;
	for (int i = 0; i < 18; i++)
		idx[i] = i;
	ok(wzsw_pool_run(3, idx, 18, fail_on, NULL, on_done, NULL, &nfailed, &diag) == WZ_OK,
	   "the pool runs");
	int each_once = 1;
	for (int i = 0; i < 18; i++)
		each_once &= seen[i] == 1;
	ok(each_once, "every point ends exactly once, with a worker dying in one");
	is_long(nfailed, 7, "failed points: six returned 1, one killed its worker");

	ok(wzsw_load(write_sweep("bad.sweep", "sweep = x\naxis.users = 1 | | 3\n"), &s2, &diag) ==
		   WZ_ERR_INPUT,
	   "an empty axis value is refused");
	has_str(diag.msg, "bad.sweep:2: axis.users: an empty value", "naming file, line and key");
	ok(wzsw_load(write_sweep("dup.sweep", "sweep = x\naxis.users = 1 | 2 | 1\n"), &s2, &diag) ==
		   WZ_ERR_INPUT,
	   "a value given twice is refused");
	has_str(diag.msg, "dup.sweep:2: axis.users: value '1' given twice", "naming it");
	ok(wzsw_load(write_sweep("name.sweep", "sweep = a b\n"), &s2, &diag) == WZ_ERR_INPUT,
	   "a sweep id with a space is refused");

	wzsw_point_clear(&p0);
	wzsw_point_clear(&p1);
	wzsw_point_clear(&p17);
	wzsw_free(s);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return tap_done();
}
