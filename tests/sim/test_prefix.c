/* The shared prefix cache: its tiers' LRU order and demotions, capacity
 * counted in each tier's format bytes (a smaller format holds more and
 * hits at least as often), and in a run: a hit in GPU memory skips the
 * prefix's prefill, a hit in CPU memory costs its restore instead, and a
 * run without the cache computes every prefix. */
#include "tests/tap.h"
#include "tests/sim/sim_fixture.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/prefix_cache.h"
#include "sim/sim.h"

static void test_tiers(void)
{
	/* Room for two 100-token prefixes of 1 byte a token in each tier. */
	double cap[3] = { 200, 200, 200 }, tb[3] = { 1, 1, 1 };
	wzs_prefix_cache c;
	wzs_prefix_cache_init(&c, cap, tb);
	int64_t hit;
	ok(wzs_prefix_cache_lookup(&c, 7, 100, &hit) == WZS_PREFIX_MISS && hit == 0,
	   "an empty cache misses");
	for (int id = 0; id < 6; id++)
		wzs_prefix_cache_insert(&c, id, 100);
	/* 4 and 5 in HBM, 2 and 3 in CPU memory, 0 and 1 on SSD. */
	ok(c.held[0] == 2 && c.held[1] == 2 && c.held[2] == 2 && c.used[0] == 200,
	   "six prefixes fill the three tiers two by two");
	ok(wzs_prefix_cache_lookup(&c, 0, 100, &hit) == WZS_PREFIX_SSD && hit == 100,
	   "the oldest is on SSD");
	/* 0 back in HBM pushed 4 to CPU memory and 2 to SSD, where 0 left
	 * room; a new prefix then pushes 5 and 3 down and 1 out. */
	wzs_prefix_cache_insert(&c, 6, 100);
	ok(wzs_prefix_cache_lookup(&c, 1, 100, &hit) == WZS_PREFIX_MISS,
	   "a prefix pushed out of the last tier is gone");
	ok(wzs_prefix_cache_lookup(&c, 5, 100, &hit) == WZS_PREFIX_CPU,
	   "the least recent of HBM moved to CPU memory");
	ok(wzs_prefix_cache_lookup(&c, 3, 100, &hit) == WZS_PREFIX_SSD, "and CPU memory's to SSD");
	ok(wzs_prefix_cache_lookup(&c, 3, 40, &hit) == WZS_PREFIX_HBM && hit == 40,
	   "a hit gives at most the tokens asked for");
	ok(c.held[0] + c.held[1] + c.held[2] == 6 && c.used[0] <= cap[0] && c.used[1] <= cap[1] &&
		   c.used[2] <= cap[2] && c.dropped == 1,
	   "no tier holds more than its capacity (%llu demotions, %llu dropped)", c.demotions,
	   c.dropped);
	wzs_prefix_cache_insert(&c, 9, 1000);
	ok(wzs_prefix_cache_lookup(&c, 9, 1000, &hit) == WZS_PREFIX_MISS,
	   "a prefix larger than every tier is not kept");
	wzs_prefix_cache_free(&c);

	/* Many ids through a small table: removals keep every entry findable. */
	double big[3] = { 5000, 0, 0 };
	wzs_prefix_cache_init(&c, big, tb);
	int found = 1;
	for (int round = 0; round < 3; round++)
		for (int id = 0; id < 400; id++)
			wzs_prefix_cache_insert(&c, id * 37 + round, 100);
	for (int id = 350; id < 400; id++)
		found &= wzs_prefix_cache_lookup(&c, id * 37 + 2, 100, &hit) == WZS_PREFIX_HBM;
	ok(found && c.held[0] == 50, "after 1,200 inserts the 50 most recent are all found");
	wzs_prefix_cache_free(&c);
}

/* Paths through the radix tree, one byte a token, 64-token blocks.  P1 and
 * P2 share segment 10 (tokens 0-511) and diverge after it, into 11 and 12
 * (512-639 each).
 *   insert P1: HBM [11, 10] (least recent first), 640 of 700 bytes;
 *   insert P2: 12 goes in (768 would be over 700 with 10 placed again),
 *     so 11, least recent, moves to CPU memory: HBM [12, 10], CPU [11];
 *   look P1 up: 512 tokens in HBM (10), 128 in CPU memory (11), the
 *     slowest tier CPU; 11 comes back to HBM, pushing 12 down: HBM
 *     [11, 10], CPU [12];
 *   look P2 up: 512 in HBM, 128 in CPU memory.
 * Whole-prefix matching by id would find nothing of P2 after P1. */
static void test_paths(void)
{
	double cap[3] = { 700, 700, 0 }, tb[3] = { 1, 1, 1 };
	wzs_prefix_cache c;
	wzs_prefix_cache_init(&c, cap, tb);
	c.block_tokens = 64;
	wzs_prefix_link p1[2] = { { 10, 512 }, { 11, 640 } }, p2[2] = { { 10, 512 }, { 12, 640 } };
	int64_t hit[3];
	wzs_prefix_tier t;
	ok(wzs_prefix_cache_insert_path(&c, p1, 2, 640) == WZ_OK, "insert a path of two segments");
	t = wzs_prefix_cache_lookup_path(&c, p2, 2, 640, hit);
	ok(t == WZS_PREFIX_HBM && hit[0] == 512 &&
		   hit[1] == 0,
	   "a prefix diverging after the first segment hits it: %lld tokens", (long long)hit[0]);
	wzs_prefix_cache_insert_path(&c, p2, 2, 640);
	ok(c.held[0] == 2 && c.held[1] == 1 && c.used[0] == 640 && c.used[1] == 128,
	   "the second's own segment pushes the least recent leaf to CPU memory");
	t = wzs_prefix_cache_lookup_path(&c, p1, 2, 640, hit);
	ok(t == WZS_PREFIX_CPU && hit[0] == 512 &&
		   hit[1] == 128 && hit[2] == 0,
	   "P1: 512 tokens in HBM and 128 in CPU memory (%lld, %lld)", (long long)hit[0],
	   (long long)hit[1]);
	t = wzs_prefix_cache_lookup_path(&c, p2, 2, 640, hit);
	ok(t == WZS_PREFIX_CPU && hit[0] == 512 &&
		   hit[1] == 128,
	   "P2 the same, its leaf pushed down by P1's (%lld, %lld)", (long long)hit[0],
	   (long long)hit[1]);
	t = wzs_prefix_cache_lookup_path(&c, p2, 2, 300, hit);
	ok(t == WZS_PREFIX_HBM && hit[0] == 300,
	   "a request for fewer tokens gets only those");
	wzs_prefix_cache_free(&c);

	/* Out of the last tier a leaf goes block by block: HBM alone of 600
	 * bytes, P1 of 640 tokens: placing 10 (512) beside 11 (128) needs 40
	 * bytes, one 64-token block of 11, which keeps 64. */
	double one[3] = { 600, 0, 0 };
	wzs_prefix_cache_init(&c, one, tb);
	c.block_tokens = 64;
	wzs_prefix_cache_insert_path(&c, p1, 2, 640);
	t = wzs_prefix_cache_lookup_path(&c, p1, 2, 640, hit);
	ok(t == WZS_PREFIX_HBM && hit[0] == 576 &&
		   c.used[0] == 576 && c.dropped == 0,
	   "the least recent leaf loses one block, not all: %lld of 640 tokens hit",
	   (long long)hit[0]);
	wzs_prefix_cache_free(&c);
	/* Evicting whole segments instead (block_tokens 0), 11 goes whole. */
	wzs_prefix_cache_init(&c, one, tb);
	c.block_tokens = 0;
	wzs_prefix_cache_insert_path(&c, p1, 2, 640);
	t = wzs_prefix_cache_lookup_path(&c, p1, 2, 640, hit);
	ok(t == WZS_PREFIX_HBM && hit[0] == 512 &&
		   c.dropped == 1,
	   "by segments the leaf goes whole: %lld tokens hit", (long long)hit[0]);
	wzs_prefix_cache_free(&c);
}

/* Hits of a Zipf-popular stream of 2,000 prefixes of 4,000 tokens through a
 * cache of `gib` in HBM with a token of `bytes`. */
static double zipf_hits(double bytes, double gib)
{
	double cap[3] = { gib * 1073741824.0, 0, 0 }, tb[3] = { bytes, bytes, bytes };
	wzs_prefix_cache c;
	wzs_prefix_cache_init(&c, cap, tb);
	double cdf[2000], sum = 0;
	for (int i = 0; i < 2000; i++)
		cdf[i] = (sum += 1.0 / (i + 1));
	wzs_rng rng;
	wzs_rng_seed(&rng, 5, 0);
	long hits = 0;
	for (int n = 0; n < 20000; n++) {
		double u = wzs_rng_uniform(&rng) * sum;
		int id = 0;
		while (cdf[id] < u && id < 1999)
			id++;
		int64_t got;
		if (wzs_prefix_cache_lookup(&c, id, 4000, &got) != WZS_PREFIX_MISS)
			hits++;
		else
			wzs_prefix_cache_insert(&c, id, 4000);
	}
	wzs_prefix_cache_free(&c);
	return hits / 20000.0;
}

static void test_format_bytes(void)
{
	double fp8 = fixture_record("fp8-mix") * 61, wz = fixture_record("wz-5.44") * 61;
	for (double gib = 2; gib <= 32; gib *= 2) {
		double a = zipf_hits(fp8, gib), b = zipf_hits(wz, gib);
		ok(b >= a && (gib > 16 || b > a),
		   "%g GiB: the smaller format's hit ratio %.4f >= fp8-mix's %.4f", gib, b, a);
	}
}

static int model(const char *format, double hbm_gib, double cpu_gib, wzs_params *p,
		 wzs_replica_model *m)
{
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;
	wzs_params_default(p);
	p->warmup_s = 0;
	p->prefix_hbm_gib = hbm_gib;
	p->prefix_cpu_gib = cpu_gib;
	p->host_link_gbps = 1; /* slow enough that a CPU hit's restore shows */
	double rec = fixture_record(format);
	return wzs_replica_model_build(dsv3, h100, &mem, 100000, rec, rec, 1, p, m, NULL) ? -1 : 0;
}


/* Two sessions 100 s apart, each a 6,000-token prompt beginning with the
 * same 4,000-token system prompt. */
static void test_replay(void)
{
	wzt_request rows[2] = { { 0, 0, 0.0, 6000, 1, 0, 3, 4000 }, { 1, 0, 100.0, 6000, 1, 0, 3, 4000 } };
	wzs_params p;
	wzs_replica_model m;
	wzs_result r;
	if (model("fp8-mix", 0, 0, &p, &m) || fixture_run1(&p, &m, rows, 2, &r, NULL)) {
		ok(0, "run without a prefix cache");
		return;
	}
	double full = wzs_prefill_time(&m, 6000, wzs_prefill_pairs(0, 6000), wzs_prefill_pairs(0, 6000));
	double rest = wzs_prefill_time(&m, 2000, wzs_prefill_pairs(4000, 2000),
				       wzs_prefill_pairs(4000, 2000));
	ok(r.completed == 2 && fabs(r.ttft.max - full) < 1e-9 && fabs(r.ttft.mean - full) < 1e-9 &&
		   r.prefix_lookups == 0,
	   "no prefix cache: both prompts prefilled whole (%.6f s)", full);
	wzs_result_free(&r);

	if (model("fp8-mix", 1, 0, &p, &m) || fixture_run1(&p, &m, rows, 2, &r, NULL)) {
		ok(0, "run with an HBM prefix cache");
		return;
	}
	double first = r.ttft.max, second = 2 * r.ttft.mean - r.ttft.max;
	ok(r.prefix_lookups == 2 && r.prefix_hits[0] == 1 && r.prefix_tokens_saved == 4000,
	   "the second session hits in HBM (%llu lookups, %llu hits)", r.prefix_lookups,
	   r.prefix_hits[0]);
	ok(fabs(first - full) < 1e-9 && fabs(second - rest) < 1e-9,
	   "an HBM hit skips the prefix's prefill: TTFT %.6f s against %.6f s", second, first);
	wzs_result_free(&r);

	/* In CPU memory only: the hit costs its restore over the 1 GB/s link. */
	if (model("fp8-mix", 0, 64, &p, &m) || fixture_run1(&p, &m, rows, 2, &r, NULL)) {
		ok(0, "run with a CPU prefix cache");
		return;
	}
	double restore = 4000 * m.offload_token_bytes / 1e9;
	second = 2 * r.ttft.mean - full;
	ok(r.prefix_hits[1] == 1 && fabs(second - (restore + rest)) < 1e-9 &&
		   fabs(r.ttft.max - (restore + rest)) < 1e-9,
	   "a CPU hit costs its restore (%.6f s) and the rest's prefill: TTFT %.6f s", restore,
	   second);
	ok(r.restores == 0, "a prefix restore is not a session's restore");
	wzs_result_free(&r);

	/* Different prefixes share nothing. */
	rows[1].shared_prefix = 4;
	if (model("fp8-mix", 1, 0, &p, &m) || fixture_run1(&p, &m, rows, 2, &r, NULL)) {
		ok(0, "run with two prefixes");
		return;
	}
	ok(r.prefix_hits[0] == 0 && fabs(r.ttft.mean - full) < 1e-9, "another prefix's id misses");
	wzs_result_free(&r);
}

/* Prefix-aware routing: 40 one-turn sessions 10 s apart on 4 replicas,
 * each beginning with one of 3 system prompts.  Routed by free memory
 * they spread over the replicas (ties go round the replicas), so each
 * replica computes every prompt once; routed to the replica holding its
 * prompt, only the first session of each prompt misses. */
static int routed_hits(int prefix_routing, wzs_result *r)
{
	enum { N = 40 };
	wzt_request rows[N];
	for (int i = 0; i < N; i++)
		rows[i] = (wzt_request){ i, 0, 10.0 * i, 6000, 1, 0, i % 3, 4000 };
	wzs_params p;
	wzs_replica_model m;
	if (model("fp8-mix", 1, 0, &p, &m))
		return -1;
	p.prefix_routing = prefix_routing;
	wzt_traffic t = { .requests = rows, .n = N };
	wzs_run_config cfg = { 0 };
	cfg.params = &p;
	cfg.model = &m;
	cfg.replicas = 4;
	cfg.traffic = &t;
	if (wzs_run(&cfg, r, NULL))
		return -1;
	return (int)r->prefix_hits[0];
}

static void test_routing(void)
{
	wzs_result a, b;
	int by_memory = routed_hits(0, &a), by_prefix = routed_hits(1, &b);
	ok(by_memory >= 0 && a.prefix_lookups == 40 && by_memory <= 40 - 4 * 3 + 3,
	   "routed by free memory: %d of %llu lookups hit (each replica misses each prompt)",
	   by_memory, a.prefix_lookups);
	ok(by_prefix == 40 - 3 && b.completed == 40,
	   "routed by prefix: %d of %llu hit, only each prompt's first session misses", by_prefix,
	   b.prefix_lookups);
	ok(b.ttft.mean < a.ttft.mean, "and the mean TTFT falls (%.4f s against %.4f s)", b.ttft.mean,
	   a.ttft.mean);
	wzs_result_free(&a);
	wzs_result_free(&b);
}

/* A population of one-turn sessions beginning with one of 400 system
 * prompts of 8,000 tokens: the same HBM set aside holds more of them in
 * the smaller format. */
static double population_hit_ratio(const char *format, double hbm_gib, wzs_result *r)
{
	wzs_params p;
	wzs_replica_model m;
	if (model(format, hbm_gib, 0, &p, &m))
		return -1;
	p.turns = 1;
	p.steady_start = 0;
	p.think_s = 60;
	p.prefixes = 400;
	p.prefix_tokens = 8000;
	p.duration_s = 400;
	p.warmup_s = 100;
	wzs_run_config cfg = { 0 };
	cfg.params = &p;
	cfg.model = &m;
	cfg.replicas = 1;
	cfg.users = 200;
	cfg.initial_context = 9000;
	if (wzs_run(&cfg, r, NULL))
		return -1;
	return r->prefix_lookups ? (double)r->prefix_hits[0] / (double)r->prefix_lookups : -1;
}

static void test_population(void)
{
	wzs_result a, b, off;
	double ra = population_hit_ratio("fp8-mix", 8, &a);
	double rb = population_hit_ratio("wz-5.44", 8, &b);
	ok(ra > 0 && rb >= ra, "8 GiB per GPU: wz-5.44 hits %.4f of lookups, fp8-mix %.4f", rb, ra);
	ok(b.ttft.mean < a.ttft.mean || rb == ra, "and its mean TTFT is no longer (%.4f s against %.4f s)",
	   b.ttft.mean, a.ttft.mean);
	double roff = population_hit_ratio("fp8-mix", 0, &off);
	ok(roff < 0 && off.prefix_lookups == 0 && off.ttft.mean > a.ttft.mean,
	   "without the cache no lookups, and TTFT is longer (%.4f s against %.4f s)", off.ttft.mean,
	   a.ttft.mean);
	wzs_result_free(&a);
	wzs_result_free(&b);
	wzs_result_free(&off);
}

int main(void)
{
	wz_diag diag;
	test_tiers();
	test_paths();
	test_format_bytes();
	if (fixture_open())
		return tap_done();
	test_replay();
	test_routing();
	test_population();

	/* Set-up refusals. */
	wzs_params p;
	wzs_params_default(&p);
	p.prefixes = 10;
	ok(wzs_params_validate(&p, "t", &diag) == WZ_ERR_INPUT && strstr(diag.msg, "pop_prefix_tokens"),
	   "shared prefixes without a length are refused: %s", diag.msg);
	wzs_params_default(&p);
	p.prefix_cpu_gib = p.offload_cpu_gib + 1;
	ok(wzs_params_validate(&p, "t", &diag) == WZ_ERR_INPUT && strstr(diag.msg, "offload tier"),
	   "a prefix cache larger than the offload tier is refused: %s", diag.msg);
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	wzs_params_default(&p);
	p.prefix_hbm_gib = 500;
	wzs_replica_model m;
	double rec = fixture_record("fp8-mix");
	ok(wzs_replica_model_build(dsv3, h100, &mem, 100000, rec, rec, 1, &p, &m, &diag) == WZ_ERR_RANGE &&
		   strstr(diag.msg, "prefix_cache_hbm_gib"),
	   "an HBM prefix cache that leaves no session blocks is refused: %s", diag.msg);
	fixture_close();
	return tap_done();
}
