/* Restores from the offload tier: the rates file bench/bench_restore
 * writes, read strictly, and restore time = the slower of moving the
 * offload bytes and decoding them on the host. */
#include "tests/tap.h"
#include "tests/sim/sim_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/formats/format.h"
#include "costmodel/catalog.h"
#include "sim/binding.h"
#include "sim/restore_rates.h"
#include "sim/sim.h"

/* A fresh folder under $TMPDIR, else under the working (build) folder. */
static char dir[512];

static const char *write_rates(const char *name, const char *text)
{
	static char path[sizeof dir + 64];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

static void test_reader(void)
{
	wzs_restore_rates r;
	wz_diag d;
	const char *good = write_rates("good.tsv",
		"# wzplan bench_restore: 61 layers\n"
		"setup_one_block_ms\t12.5\tms\tset-up\n"
		"restore_records_tokens_per_core_s\t65000\ttoken-layers/s\twzx v2 to wz records, one core\r\n"
		"\n"
		"a_key_from_later\t3\tthings/s\tignored\n"
		"restore_values_tokens_per_core_s\t2.9e4\ttoken-layers/s\tto values, one core\n");
	ok(!wzs_restore_rates_read(good, &r, &d) && r.to_records == 65000 && r.to_values == 29000,
	   "a rates file: comments, CRLF, blank lines and unknown keys");
	double v;
	ok(!wzs_restore_rate(&r, "wz-5.44", "wzx-5.40", &v, &d) && v == 65000,
	   "wzx into a wz GPU tier decodes to records");
	ok(!wzs_restore_rate(&r, "fp8-mix", "wzx-5.40", &v, &d) && v == 29000,
	   "wzx into another GPU format decodes to values");
	ok(!wzs_restore_rate(&r, "fp8-mix", "fp8-mix", &v, &d) && v == 0,
	   "the GPU tier's own bytes need no decode");
	ok(wzs_restore_rate(NULL, "wz-5.44", "wzx-5.40", &v, &d) == WZ_ERR_INPUT &&
		   strstr(d.msg, "--restore-rates"),
	   "a wzx offload without rates is refused: %s", d.msg);
	const char *part = write_rates("part.tsv", "restore_values_tokens_per_core_s\t1\ttoken-layers/s\tx\n");
	ok(!wzs_restore_rates_read(part, &r, &d) &&
		   wzs_restore_rate(&r, "wz-5.44", "wzx-5", &v, &d) == WZ_ERR_INPUT &&
		   strstr(d.msg, "restore_records_tokens_per_core_s"),
	   "a file without the rate it needs names the key: %s", d.msg);
	static const struct { const char *text, *want; } bad[] = {
		{ "# ok\nrestore_records_tokens_per_core_s 65000 token-layers/s spaces\n", ":2: 1 field" },
		{ "restore_records_tokens_per_core_s\t65000\ttoken-layers/s\n", ":1: 3 fields" },
		{ "Restore\t1\tms\tx\n", "key 'Restore'" },
		{ "restore_records_tokens_per_core_s\t-5\ttoken-layers/s\tx\n", "not a positive number" },
		{ "restore_records_tokens_per_core_s\tnan\ttoken-layers/s\tx\n", "not a positive number" },
		{ "restore_records_tokens_per_core_s\t65000\ttokens/s\tx\n", "unit 'tokens/s'" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *p = write_rates("bad.tsv", bad[i].text);
		wz_err err = wzs_restore_rates_read(p, &r, &d);
		ok(err == WZ_ERR_INPUT && strstr(d.msg, p) && strstr(d.msg, bad[i].want),
		   "bad line %zu refused naming file, line and field: %s", i, err ? d.msg : "(accepted)");
	}
	ok(wzs_restore_rates_read("/nonexistent/rates", &r, &d) != WZ_OK, "a missing file fails");
}

/* A session's second turn restored from CPU memory: its TTFT holds the
 * restore, the slower of the link and the host's decode. */
static void test_restore_time(void)
{
	double rec = fixture_record("fp8-mix");
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;
	wzt_request rows[2] = { { 0, 0, 0.0, 6000, 50, 0, 0, 0 }, { 0, 1, 100.0, 2000, 20, 6050, 0, 0 } };
	/* per-core rates: far faster than the link, and far slower */
	const double rates[] = { 0, 1e12, 2e4 };
	double restore[3];
	for (int c = 0; c < 3; c++) {
		wzs_params p;
		wzs_params_default(&p);
		p.warmup_s = 0;
		p.idle_policy = WZS_IDLE_OFFLOAD;
		p.ttft_p99_s = 0.5;
		wzs_replica_model m;
		if (wzs_replica_model_build(dsv3, h100, &mem, 4096, rec, rec * 5.4 / 8.06, 1, &p, &m,
					    NULL)) {
			ok(0, "replica model");
			return;
		}
		wzs_replica_model_set_restore_decode(&m, &p, rates[c]);
		double link = 6050 * m.offload_token_bytes / m.host_link_bps;
		double decode = rates[c] > 0 ? 6050.0 * dsv3->layers / (rates[c] * 112 / 8) : 0;
		double want_restore = decode > link ? decode : link;
		wzs_result r;
		if (fixture_run1(&p, &m, rows, 2, &r, NULL)) {
			ok(0, "run %d", c);
			continue;
		}
		double first = wzs_prefill_time(&m, 6000, wzs_prefill_pairs(0, 6000),
						wzs_prefill_pairs(0, 6000));
		double second = wzs_prefill_time(&m, 2000, wzs_prefill_pairs(6050, 2000),
						 wzs_prefill_pairs(6050, 2000));
		restore[c] = 2 * r.ttft.mean - first - second;
		ok(r.restores == 1 && fabs(r.ttft.mean - (first + second + want_restore) / 2) <=
					      1e-9 * r.ttft.mean,
		   "decode rate %g/core: restore %.6f s = max(link %.6f, decode %.6f)", rates[c],
		   restore[c], link, decode);
		if (c == 2)
			ok(wzs_what_binds(&p, &r) == WZS_BIND_RESTORE_DECODE,
			   "a restore held up by the decode is counted as the decode's (%s)",
			   wzs_binding_name(wzs_what_binds(&p, &r)));
		wzs_result_free(&r);
	}
	ok(fabs(restore[1] - restore[0]) <= 1e-9 && restore[2] > 100 * restore[0],
	   "a fast decode leaves the link's time; a slow one sets it (%.4f, %.4f, %.4f s)", restore[0],
	   restore[1], restore[2]);
}

/* A DSA indexer's keys (132 bytes a token a layer on DeepSeek-V3.2-Exp)
 * stay on the GPU with the record and park with it, as they are. */
static void test_indexer_bytes(void)
{
	const wzm_model *v32 = wzm_find_model(fixture_cat, "DeepSeek-V3.2-Exp", NULL);
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;
	wzs_params p;
	wzs_params_default(&p);
	p.idle_policy = WZS_IDLE_OFFLOAD;
	wzs_replica_model m;
	double rec = 656, off = 400;
	if (!ok(v32 && !wzs_replica_model_build(v32, h100, &mem, 100000, rec, off, 1, &p, &m, NULL),
		"DeepSeek-V3.2-Exp's replica model"))
		return;
	ok(m.token_bytes == (rec + 132) * 61 && m.offload_token_bytes == (off + 132) * 61,
	   "V3.2-Exp: %.0f bytes a token on the GPU, %.0f parked: the indexer's 132 a layer in both",
	   m.token_bytes, m.offload_token_bytes);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/wz-test-restore-XXXXXX", tmp && *tmp ? tmp : ".");
	if (!mkdtemp(dir)) {
		ok(0, "temporary folder");
		return tap_done();
	}
	test_reader();
	if (!fixture_open()) {
		test_restore_time();
		test_indexer_bytes();
	}
	fixture_close();
	char cmd[sizeof dir + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd))
		ok(0, "cleaning up");
	return tap_done();
}
