/* A codec measurement as a job: the request (`codec measure`'s, or the one
 * a proposal makes), running it on every core (codec/measure/measure_run.c does
 * the work), its rows, and recording them into a run (codec_record.c).
 * Errors and progress go to the sink (runs/say.h) as "wzplan codec: ...". */
#ifndef WZ_RUNS_MEASURE_H
#define WZ_RUNS_MEASURE_H

#include "codec/codec.h"
#include "codec/formats/format.h"
#include "codec/measure/measure_run.h"
#include "codec/measure/paired.h"
#include "runs/codec_record.h"
#include "traces/cache_trace.h"

#define WZ_MEASURE_MAX_TRACES 256
#define WZ_MEASURE_MAX_FORMATS 34 /* 30 listed, fp8-mix, int4-g64 and the headline's two */

typedef struct {
	const char *const *paths; /* the trace windows, as given */
	int npaths;
	const char *profile_path; /* needed for wz formats and iso */
	const char *formats;      /* comma-separated list, e.g. "fp8-mix,wz-5.44" */
	int iso;                  /* also the iso-quality bits (a rate sweep) */
	int per_layer;            /* also a row per layer */
	long threads;             /* 0: every core; the results do not depend on it */
	long nboot, seed;         /* the bootstrap */
	/* kvtc-<bits>: the calibration windows its transforms are fitted on */
	const char *const *calibration_paths;
	int ncalibration;
} wz_measure_req;

/* What a measurement made.  rows holds every (window, format) measured,
 * fp8-mix (every ratio's reference) and with iso int4-g64 even when not
 * listed, then the sweep's rates; shown the listed formats' rows and the
 * sweep's, the ones a table shows. */
typedef struct {
	wz_codec_measured *rows, *shown;
	int nrows, nshown;
	wzc_profile *prof;
	struct wzc_kvtc *kvtc;    /* with kvtc-<bits>: attached to prof */
	wzt_cache_trace **traces;
	wzc_window *windows;
	int ntraces;
	wzc_run *run;
	wzc_format fmts[WZ_MEASURE_MAX_FORMATS]; /* the rows' formats and names */
	int nformats;
	/* The headline (with iso, on windows of one shape): wz at
	 * nvfp4-ds-mla's bytes (fmts[head_wz]) against it (fmts[head_ref]),
	 * paired, per window (headline[i] of windows[i]); head_wz -1 without. */
	int head_wz, head_ref;
	wzc_pair_result *headline;
	/* kvtc at matched rates: kvtc_of[f] the listed kvtc-R of wz format
	 * fmts[f]'s rate R (-1 none), and fmts[f] against it per window,
	 * kvtc_pair[i * nformats + f] */
	int kvtc_of[WZ_MEASURE_MAX_FORMATS];
	wzc_pair_result *kvtc_pair;
	char iso_names[WZC_ISO_N][16];
} wz_measure_result;

/* Checks the request, reads the profile and traces, measures.  On success
 * the caller frees *out with wz_measure_result_free (also after a
 * failure).  Returns an exit status after reporting errors. */
int wz_measure_run(const wz_measure_req *rq, wz_measure_result *out /* OUT */);
void wz_measure_result_free(wz_measure_result *r);

/* The headline's reference: vLLM's shipping 4-bit DeepSeek cache format. */
#define WZ_HEADLINE_REF "nvfp4-ds-mla"
/* Its name in the metrics recorded on the wz row: nmse_vs_..., kl_vs_...,
 * tokens_better_vs_..., queries_better_vs_... */
#define WZ_HEADLINE_METRIC "nvfp4_ds_mla"
/* and of wz-R against kvtc-R: nmse_vs_kvtc, kl_vs_kvtc, ... */
#define WZ_KVTC_METRIC "kvtc"

/* The headline as a table (a row per window: the two formats' bits/value,
 * the nmse and attention KL ratios with their intervals), NULL without a
 * headline or out of memory; the caller frees it with wzp_table_free. */
wzp_table *wz_measure_headline_table(const wz_measure_result *res, int wide);

/* Records a measurement into run: its inputs (trace files with size and
 * XXH3 hash, the profile's hash, the seed, the format list), the setup and
 * window figures and every row.  Returns an exit status. */
int wz_measure_record(wza_run *run, const wz_measure_req *rq, const wz_measure_result *res);

/* With a kvtc-<bits> among fmts: KVTC's transforms fitted on the n
 * calibration windows at paths (none: a usage error) into *out, attached
 * to prof (NULL: a usage error); the caller frees *out after prof's
 * codecs.  Returns an exit status after reporting errors, 0 otherwise. */
int wz_codec_fit_kvtc(const char *const *paths, int n, const wzc_format *fmts, int nf,
		      wzc_profile *prof, struct wzc_kvtc **out /* OUT */);
/* The codec's view of a trace; the window's name, or the path. */
wzc_window wz_codec_window(const wzt_cache_trace *t, const char *path);
/* Reads traces, with progress; on failure frees what it read, reports the
 * error and returns the exit status. */
int wz_codec_load_traces(const char *const *paths, int n, wzt_cache_trace **traces);
/* A progress line for a run's piece, whole even from many threads (a
 * wzc_run_spec progress callback). */
void wz_codec_progress(void *ud, const char *window, const char *what);

#endif
