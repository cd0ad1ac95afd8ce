/* Unit tests of sweep files and the worker pool: expansion order, ranges,
 * point ids (golden: an id must never change for the same parameters),
 * shards, and the pool running every point once even when a worker dies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/wz_io.h"
#include "sweep/report.h"
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

/* Shards by estimated cost: with the expensive axis (simulate) turning
 * fastest, shards by index modulo 2 put every simulated point in one
 * shard; the plan must not. */
static void balance_tests(wz_diag *diag)
{
	wzsw_sweep *s;
	ok(wzsw_load(write_sweep("bal.sweep", "sweep = bal\nscenario = base.scenario\n"
						"set.price_set = catalog\nset.duration_s = 600\n"
						"axis.users = 100 | 200 | 300 | 400 | 500\n"
						"axis.simulate = no | yes\n"),
		     &s, diag) == WZ_OK,
	   "loads a sweep whose last axis is simulate");
	if (!s)
		return;
	long long cost[10], biggest = 0, load[2], modulo[2] = { 0, 0 };
	for (long i = 0; i < 10; i++) {
		wzsw_point p;
		wzsw_point_build(s, i, &p, diag);
		cost[i] = wzsw_point_cost(&p);
		biggest = cost[i] > biggest ? cost[i] : biggest;
		modulo[i % 2] += cost[i];
		wzsw_point_clear(&p);
	}
	ok(cost[1] > 10 * cost[0], "a simulated point is estimated far dearer than one without");
	ok(cost[9] > cost[1], "and dearer with more users");
	long shard_of[10], again[10];
	ok(wzsw_shard_plan(s, 2, shard_of, load, diag) == WZ_OK, "plans 2 shards");
	wzsw_shard_plan(s, 2, again, NULL, diag);
	ok(!memcmp(shard_of, again, sizeof again), "the same plan every time");
	long long sum[2] = { 0, 0 };
	for (int i = 0; i < 10; i++)
		sum[shard_of[i] - 1] += cost[i];
	ok(sum[0] == load[0] && sum[1] == load[1], "the loads are the shards' estimated costs");
	long long d = load[0] > load[1] ? load[0] - load[1] : load[1] - load[0];
	ok(d <= biggest, "the shards differ by at most one point's cost");
	long long dm = modulo[0] > modulo[1] ? modulo[0] - modulo[1] : modulo[1] - modulo[0];
	ok(d < dm, "better balanced than by index modulo");
	long idx[10];
	for (int i = 0; i < 10; i++)
		idx[i] = i;
	ok(wzsw_order_by_cost(s, idx, 10, diag) == WZ_OK, "orders the points by cost");
	ok(idx[0] == 9 && idx[4] == 1, "the simulated points first, dearest first");
	ok(idx[5] == 0 && idx[9] == 8, "then the equal cheap ones in index order");
	wzsw_free(s);

	double err[4] = { 1.0, 0.5, 0.5, 0.2 }, usd[4] = { 1.0, 0.7, 0.8, 0.9 };
	int front[4];
	wzsw_pareto(err, usd, 4, front);
	ok(front[0] == 0 && front[1] == 1 && front[2] == 0 && front[3] == 1,
	   "Pareto: dominated formats are off the front, the others on it");
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

	long shard_of[18];
	ok(wzsw_shard_plan(s, 4, shard_of, NULL, &diag) == WZ_OK, "plans 4 shards");
	int once = 1;
	for (int i = 0; i < 18; i++)
		once &= shard_of[i] >= 1 && shard_of[i] <= 4;
	ok(once, "4 shards hold every point exactly once");
	balance_tests(&diag);
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
