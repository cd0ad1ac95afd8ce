/* A codec measurement's rows, the table they make (codec_measure_table.c),
 * and what verify compares of a recorded measurement (codec_record.c). */
#ifndef WZ_CODEC_RECORD_H
#define WZ_CODEC_RECORD_H

#include "archive/archive.h"
#include "common/wz_str.h"
#include "codec/measure/measure_run.h"
#include "codec/measure/paired.h"
#include "plots/table.h"
#include "traces/cache_trace.h"

/* One measured (window, format), or one rate of the iso sweep, as
 * measure.c holds it. */
typedef struct {
	const char *window, *split, *format;
	const char *path;             /* the trace file as given */
	const wzt_cache_trace *trace; /* its metadata (source, model) */
	const wzc_run_cell *cell;     /* errors, bound, iso figures, layers */
	const wzc_run_cell *ref;      /* fp8-mix on the same window */
	int sweep;                    /* a rate of the iso sweep, not a listed format */
	int headline;                 /* one of the headline's formats, not listed (runs/measure.h) */
	/* paired against the headline's reference (on its wz row) and
	 * against kvtc at the same rate (on a listed wz-R); NULL none */
	const wzc_pair_result *vs_headline, *vs_kvtc;
} wz_codec_measured;

/* The table of rows[0..n): text and Markdown show the rows of the listed
 * formats (and their layers with per_layer); CSV and JSON (wide) carry
 * every interval and censoring mark the archive holds and the sweep's rows
 * too.  NULL when out of memory; the caller frees it with wzp_table_free. */
wzp_table *wz_codec_measure_table(const wz_codec_measured *rows, int n, int iso, int per_layer,
				  int wide, int nboot, uint64_t seed);

/* Names each trace or profile input of run whose file changed or is gone
 * (hash mismatch) into changes; returns how many. */
int wz_codec_inputs_changed(const wza_run *run, wz_buf *changes);

/* Codec rows that differ between an archived and a recomputed run, one
 * line each into out; returns how many. */
int wz_codec_rows_diff(const wza_run *a, const wza_run *b, wz_buf *out);

/* Synthetic traces carry a source beginning with this. */
#define WZ_SYNTHETIC_PREFIX "synthetic"

#endif
