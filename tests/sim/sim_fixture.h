/* What the simulator's tests share: DeepSeek-V3 and the H100 SXM from the
 * embedded catalog, a format's record bytes at DeepSeek's 512 + 64, and a
 * table of requests run on one replica.  Each test program includes it
 * once, after tests/tap.h. */
#ifndef WZ_TESTS_SIM_FIXTURE_H
#define WZ_TESTS_SIM_FIXTURE_H

#include "codec/formats/format.h"
#include "costmodel/catalog.h"
#include "sim/sim.h"

static wzm_catalog *fixture_cat;
static const wzm_model *dsv3;
static const wzm_gpu *h100;

/* Bytes of one token-layer record of format NAME at 512 + 64; -1 if the
 * name is not a format. */
static inline double fixture_record(const char *name)
{
	wzc_format fmt;
	if (wzc_format_parse(name, &fmt, NULL))
		return -1;
	return (double)wzc_record_bytes(&fmt, 512, 64);
}

/* Loads the embedded catalog and finds DeepSeek-V3 and the H100 SXM in it:
 * 0, or -1 after a failed check. */
static inline int fixture_open(void)
{
	wz_diag diag;
	if (wzm_catalog_load(NULL, &fixture_cat, &diag)) {
		ok(0, "catalog: %s", diag.msg);
		return -1;
	}
	dsv3 = wzm_find_model(fixture_cat, "DeepSeek-V3", NULL);
	h100 = wzm_find_gpu(fixture_cat, "H100 SXM", NULL);
	if (!dsv3 || !h100) {
		ok(0, "catalog has DeepSeek-V3 and H100 SXM");
		return -1;
	}
	return 0;
}

static inline void fixture_close(void)
{
	wzm_catalog_free(fixture_cat);
	fixture_cat = NULL;
}

/* Runs the N requests ROWS on one replica of M under P. */
static inline wz_err fixture_run1(wzs_params *p, wzs_replica_model *m, wzt_request *rows, size_t n,
				  wzs_result *r, wz_diag *diag)
{
	wzt_traffic t = { 0 };
	t.requests = rows;
	t.n = n;
	wzs_run_config cfg = { 0 };
	cfg.params = p;
	cfg.model = m;
	cfg.replicas = 1;
	cfg.traffic = &t;
	return wzs_run(&cfg, r, diag);
}

#endif
