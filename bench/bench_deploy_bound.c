/* Checks the deployment search's lower bound (sim/deploy/screen.c) by
 * simulation: every configuration of test_deploy's fixture (every key free
 * but the batch cap, 256) is sized by the simulator (wzd_confirm), and
 * those whose simulated fleet is below their bound, or that have a fleet
 * where the screen gives no bound, are printed by kind with both numbers,
 * then a count.  Each is sized only below its bound (up to 60 replicas;
 * --full: up to 60 whatever the bound, the longer check of the same
 * verdicts), since a fleet at or above it cannot break it.  Progress on
 * standard error.
 *
 *   bench_deploy_bound [--full] [--threads N] [START ...]
 *       START: 32000 and/or 60000 (default both); N: threads of each
 *       fleet search (default the cores online) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/formats/format.h"
#include "costmodel/catalog.h"
#include "sim/deploy/deploy.h"
#include "tests/sim/deploy_fixture.h"

#define MAX_REPLICAS 60

enum { K_AGG, K_TP, K_HBM, K_CP, K_OTHER, NKINDS };
static const char *const kind_name[NKINDS] = {
	"aggregated attention-dp replicas",
	"tensor-parallel replicas",
	"disaggregated, HBM binds",
	"disaggregated, context-parallel pool",
	"disaggregated, other",
};

static int kind_of(const wzd_estimate *e)
{
	if (e->c.tp)
		return K_TP;
	if (e->c.prefill_gpus == 0)
		return K_AGG;
	if (e->bind == WZD_BIND_MEMORY)
		return K_HBM;
	if (e->c.cp > 1)
		return K_CP;
	return K_OTHER;
}

typedef struct {
	long start;
	wzd_estimate est;
	long sim_gpus;
} violation;

static double now(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Sizes every configuration of the fixture at `start`; appends the
 * violations to *v.  Returns 0, or 1 after a message. */
static int check(const wzm_model *model, const wzm_gpu *gpu, double record, long start, int full,
		 int threads, violation **v, long *nv, long *nchecked, long *nconfigs)
{
	wzd_base b;
	deploy_fixture_base(&b, model, gpu, record);
	if (start == 60000)
		deploy_fixture_long(&b);
	wzd_space s;
	wz_diag diag;
	wzd_space_default(&b.params, &s);
	if (wzd_space_pin(&s, "max_batch=256", "bench_deploy_bound", &diag)) {
		fprintf(stderr, "bench_deploy_bound: %s\n", diag.msg);
		return 1;
	}
	long n = wzd_space_enumerate(&s, NULL, 0);
	wzd_config *cs = malloc((size_t)(n > 0 ? n : 1) * sizeof *cs);
	if (!cs)
		return 1;
	wzd_space_enumerate(&s, cs, n);
	*nconfigs += n;
	for (long i = 0; i < n; i++) {
		wzd_estimate e;
		char text[256];
		wzd_screen(&b, &cs[i], &e);
		wzd_config_text(&cs[i], text, sizeof text);
		if (e.dropped) {
			fprintf(stderr, "[%ld %ld/%ld] %s: dropped\n", start, i + 1, n, text);
			continue;
		}
		long per = cs[i].gpus + cs[i].prefill_gpus, cap = MAX_REPLICAS;
		if (!full && e.gpus_bound > 0 && (e.gpus_bound - 1) / per < cap)
			cap = (e.gpus_bound - 1) / per;
		(*nchecked)++;
		long got = 0;
		if (cap >= 1) {
			wzd_confirmed c;
			if (wzd_confirm(&b, &cs[i], cap, threads, NULL, NULL, &c, &diag)) {
				fprintf(stderr, "bench_deploy_bound: %s: %s\n", text, diag.msg);
				free(cs);
				return 1;
			}
			got = c.gpus;
			wzd_confirmed_free(&c);
		}
		int bad = got > 0 && (e.gpus_bound == 0 || got < e.gpus_bound);
		fprintf(stderr, "[%ld %ld/%ld] %s: bound %ld, simulated %ld%s%s\n", start, i + 1, n,
			text, e.gpus_bound, got, got ? "" : " (none below the bound)",
			bad ? "  VIOLATION" : "");
		if (bad) {
			violation *grown = realloc(*v, (size_t)(*nv + 1) * sizeof **v);
			if (!grown) {
				free(cs);
				return 1;
			}
			*v = grown;
			(*v)[*nv] = (violation){ start, e, got };
			(*nv)++;
		}
	}
	free(cs);
	return 0;
}

int main(int argc, char **argv)
{
	int full = 0, threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	long starts[2];
	int nstarts = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--full")) {
			full = 1;
		} else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			threads = atoi(argv[++i]);
		} else if ((!strcmp(argv[i], "32000") || !strcmp(argv[i], "60000")) && nstarts < 2) {
			starts[nstarts++] = atol(argv[i]);
		} else {
			fprintf(stderr,
				"usage: bench_deploy_bound [--full] [--threads N] [32000] [60000]\n");
			return 2;
		}
	}
	if (nstarts == 0) {
		starts[0] = 32000;
		starts[1] = 60000;
		nstarts = 2;
	}
	if (threads < 1)
		threads = 1;
	wzm_catalog *cat;
	wz_diag diag;
	if (wzm_catalog_load(NULL, &cat, &diag)) {
		fprintf(stderr, "bench_deploy_bound: catalog: %s\n", diag.msg);
		return 1;
	}
	const wzm_model *model = wzm_find_model(cat, "DeepSeek-V3", NULL);
	const wzm_gpu *gpu = wzm_find_gpu(cat, "H100 SXM", NULL);
	wzc_format fmt;
	if (!model || !gpu || wzc_format_parse("fp8-mix", &fmt, NULL)) {
		fprintf(stderr, "bench_deploy_bound: the catalog lacks DeepSeek-V3 or H100 SXM\n");
		wzm_catalog_free(cat);
		return 1;
	}
	double record = (double)wzc_record_bytes(&fmt, 512, 64);
	double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	violation *v = NULL;
	long nv = 0, nchecked = 0, nconfigs = 0;
	int err = 0;
	for (int i = 0; i < nstarts && !err; i++)
		err = check(model, gpu, record, starts[i], full, threads, &v, &nv, &nchecked,
			    &nconfigs);
	wzm_catalog_free(cat);
	if (err) {
		free(v);
		return 1;
	}
	for (int k = 0; k < NKINDS; k++) {
		long nk = 0;
		for (long i = 0; i < nv; i++)
			nk += kind_of(&v[i].est) == k;
		printf("%s: %ld\n", kind_name[k], nk);
		for (long i = 0; i < nv; i++) {
			if (kind_of(&v[i].est) != k)
				continue;
			char text[256];
			wzd_config_text(&v[i].est.c, text, sizeof text);
			printf("  start %ld: %s: simulated %ld GPUs, bound %ld (screen binds: %s)\n",
			       v[i].start, text, v[i].sim_gpus, v[i].est.gpus_bound,
			       wzd_bind_name(v[i].est.bind));
		}
	}
	printf("violations: %ld of %ld configurations simulated (%ld enumerated)%s\n", nv, nchecked,
	       nconfigs, full ? "" : ", each below its bound");
	fprintf(stderr, "bench_deploy_bound: %.1f s wall, %.1f s CPU\n", now(CLOCK_MONOTONIC) - w0,
		now(CLOCK_PROCESS_CPUTIME_ID) - c0);
	free(v);
	return 0;
}
