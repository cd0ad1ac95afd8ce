/* Importers that turn public LLM-serving traces into the normalized request
 * table of traffic.h, and the table-building helpers they share. */
#ifndef WZT_TRAFFIC_IMPORT_H
#define WZT_TRAFFIC_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "common/wz_csv.h"
#include "common/wz_error.h"
#include "common/wz_rng.h"
#include "traces/traffic.h"

/* Largest token count a row may carry; more is a corrupt or unit-confused
 * file, not a request (no model serves 10^8 tokens of context). */
#define WZT_MAX_TOKENS 100000000LL

/* Longest span of arrival times a table may hold: 366 days, the longest
 * run the simulator takes (duration_s, wzplan-scenario(5)); a longer one
 * is a unit mistake, and the simulator's series grow with it. */
#define WZT_MAX_SPAN_S (366.0 * 86400)

/* Session ids of a table that the simulator indexes densely: up to the
 * larger of this and the table's row count. */
#define WZT_MAX_SPARSE_SESSION 1000000L

/* Largest input file an importer reads whole (bytes). */
#define WZT_MAX_FILE_BYTES ((size_t)4 << 30)

/* ---- Building tables (traffic.c) ---- */

/* An empty table; the caller frees it with wzt_traffic_free.  NULL when out
 * of memory. */
wzt_traffic *wzt_traffic_new(const char *origin, const char *source);
/* Appends a copy of *req; WZ_ERR_NOMEM on failure.  Only for tables from
 * wzt_traffic_new, a reader or an importer (they carry their capacity). */
wz_err wzt_traffic_push(wzt_traffic *traffic, const wzt_request *req, wz_diag *diag);
/* Records that shared prefix `id` (tokens long, exactly when `exact`)
 * begins with prefix `parent` (-1: none); `line` names the row for
 * messages.  Call wzt_traffic_prefixes_done once all are in. */
wz_err wzt_traffic_prefix_put(wzt_traffic *traffic, int32_t id, int32_t parent, int64_t tokens,
			      int exact, int line, wz_diag *diag);
/* Sorts the prefix tree and checks it: every mention of a prefix names the
 * same parent and exact tokens, and a prefix is longer than its parent;
 * fails naming the row. */
wz_err wzt_traffic_prefixes_done(wzt_traffic *traffic, wz_diag *diag);
/* Appends src to dst with src's sessions and shared prefixes renumbered
 * after dst's (two files' prefix 0 are different prompts), keeping src's
 * times and prefix tree.  Sort dst afterwards. */
wz_err wzt_traffic_overlay(wzt_traffic *dst, const wzt_traffic *src, wz_diag *diag);
/* Stable sort by arrival time; returns how many requests arrived earlier
 * than one listed before them (0 when already sorted). */
size_t wzt_traffic_sort(wzt_traffic *traffic);
/* Renumbers sessions densely (0, 1, ... in order of first arrival) and turns
 * 0, 1, ... in arrival order within each session.  Call after sorting. */
wz_err wzt_traffic_renumber(wzt_traffic *traffic, wz_diag *diag);
/* Shifts arrivals so that the first request arrives at 0 s. */
void wzt_traffic_rebase(wzt_traffic *traffic);

/* Checks that time t (of the record at origin:line, field `field`) is not
 * earlier than *latest, the latest time so far, which it then updates.  With
 * WZT_UNSORTED_REFUSE an earlier time is an error naming the line. */
wz_err wzt_check_order(double *latest /* IN/OUT */, double t, wzt_unsorted_policy policy,
		       const char *origin, int line, const char *field, wz_diag *diag);
/* Checks that time t_s (seconds, of the record at origin:line, field
 * `field`, whose text is `text`) lies within WZT_MAX_SPAN_S of *first, the
 * first record's time (NAN before the first record, which sets it). */
wz_err wzt_check_span(double *first /* IN/OUT */, double t_s, const char *text,
		      const char *origin, int line, const char *field, wz_diag *diag);
/* What every importer ends with: sort (count in *n_reordered, may be
 * NULL), arrivals from 0 s, dense sessions and turns. */
wz_err wzt_traffic_finish(wzt_traffic *traffic, size_t *n_reordered /* OUT */, wz_diag *diag);

/* Loads a CSV file (at most WZT_MAX_FILE_BYTES) whose text may open with a
 * UTF-8 byte-order mark: the mark is dropped before parsing, so a quoted
 * first header still reads as quoted.  Free with wz_csv_free. */
wz_err wzt_csv_load(const char *path, wz_csv **out /* OUT */, wz_diag *diag);

/* Parses a token count field: an integer (or an integral decimal such as
 * "12.0") in 0..WZT_MAX_TOKENS.  Returns 0, or sets diag to
 * "origin:line: field NAME: ..." and returns WZ_ERR_INPUT. */
wz_err wzt_parse_tokens(const char *text, const char *origin, int line, const char *field,
			int64_t *out /* OUT */, wz_diag *diag);

/* ---- Importers (traces/import_*.c) ----
 * Each reads one file (or folder, for ServeGen) and returns a sorted table
 * with dense sessions, arrivals from 0 s (ServeGen's from the start of the
 * sampled span), that the caller frees with
 * wzt_traffic_free.  Errors name file:line and field.  With
 * WZT_UNSORTED_REFUSE a file whose timestamps go backwards is refused;
 * with WZT_UNSORTED_SORT it is sorted and *n_reordered (may be NULL) gets
 * the count. */

/* Azure LLM inference CSV (2023: TIMESTAMP, ContextTokens, GeneratedTokens;
 * 2024: the same columns, any order, extra columns ignored).  No sessions:
 * each request is its own. */
wz_err wzt_import_azure(const char *path, wzt_unsorted_policy policy, wzt_traffic **out /* OUT */,
			size_t *n_reordered /* OUT */, wz_diag *diag);

/* Mooncake JSONL: timestamp (ms), input_length, output_length, hash_ids
 * (prefix blocks of block_tokens, 512 in Mooncake's traces; 0 means 512). */
typedef struct {
	int64_t blocks;     /* hash_ids over all requests */
	int64_t hit_blocks; /* of them, ids seen in an earlier request's prefix */
	int64_t shared_blocks; /* of the hits, blocks of a prefix that conversations share
				  (up to a block two different full blocks follow) */
} wzt_mooncake_stats;
wz_err wzt_import_mooncake(const char *path, int block_tokens, wzt_unsorted_policy policy,
			   wzt_traffic **out /* OUT */, size_t *n_reordered /* OUT */,
			   wzt_mooncake_stats *stats /* OUT, may be NULL */, wz_diag *diag);

/* Length-only CSV (Vidur's processed traces) with a synthetic arrival
 * process.  Rows keep their file order; inter-arrival gaps are exponential
 * (cv = 1, Poisson) or Gamma with the given coefficient of variation. */
typedef struct {
	const char *prompt_column; /* default "num_prefill_tokens" */
	const char *output_column; /* default "num_decode_tokens" */
	double rate;               /* requests per second, > 0 */
	double cv;                 /* inter-arrival CV, > 0; 1 = Poisson */
	uint64_t seed;
	int64_t limit;             /* at most this many rows (0: all) */
} wzt_lengths_opts;
wz_err wzt_import_lengths(const char *path, const wzt_lengths_opts *opts,
			  wzt_traffic **out /* OUT */, wz_diag *diag);

/* ServeGen per-client distributions: a folder (or chunk files) holding
 * chunk-<i>-trace.csv and chunk-<i>-dataset.json.  Requests are drawn for
 * [start_s, start_s + duration_s) of the day, for the listed clients (NULL
 * or empty: all). */
typedef struct {
	double start_s;     /* seconds since 00:00 of the trace day */
	double duration_s;  /* > 0; 86400 is the whole day */
	const int *clients; /* chunk numbers, or NULL for every chunk found */
	int n_clients;
	uint64_t seed;
	double rate_scale;  /* multiplies every window's rate; 0 means 1 */
} wzt_servegen_opts;
wz_err wzt_import_servegen(const char *const *paths, int n_paths, const wzt_servegen_opts *opts,
			   wzt_traffic **out /* OUT */, wz_diag *diag);

/* BurstGPT CSV: Timestamp (s), Model, Request tokens, Response tokens,
 * Total tokens, Log Type.  model (NULL: all) keeps only rows of that model;
 * rows with 0 response tokens (failed requests) are kept. */
wz_err wzt_import_burstgpt(const char *path, const char *model, wzt_unsorted_policy policy,
			   wzt_traffic **out /* OUT */, size_t *n_reordered /* OUT */,
			   wz_diag *diag);

/* ---- Distributions for the samplers (traces/traffic_rng.c), drawn from
 * wzplan's seeded generator (common/wz_rng.h) so a seed gives the same
 * trace on every platform. ---- */
typedef wz_rng wzt_rng;
static inline void wzt_rng_seed(wzt_rng *rng, uint64_t seed) { wz_rng_seed(rng, seed); }
static inline uint64_t wzt_rng_next(wzt_rng *rng) { return wz_rng_next(rng); }
/* Uniform in (0, 1): never 0, so logs are finite. */
static inline double wzt_rng_uniform(wzt_rng *rng) { return wz_rng_uniform(rng); }
double wzt_rng_normal(wzt_rng *rng);
/* Gamma(shape, scale) by Marsaglia and Tsang. */
double wzt_rng_gamma(wzt_rng *rng, double shape, double scale);
/* Weibull(shape, scale) by inversion. */
double wzt_rng_weibull(wzt_rng *rng, double shape, double scale);

#endif
