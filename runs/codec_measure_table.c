/* The table of `codec measure` (codec_record.h): one row per window and
 * format, per layer with --per-layer, and the iso sweep's rows in CSV and
 * JSON; CSV and JSON carry every figure the archive stores, intervals and
 * censoring marks included. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runs/codec_record.h"
#include "runs/measure.h"

/* value [lo, hi]: one cell in text and Markdown (or the value alone when
 * brief), three in CSV and JSON. */
static void ci_cells(wzp_table *t, int wide, int brief, wzc_ci ci, const char *fmt,
		     const char *mark)
{
	char disp[160], a[48], b[32], c[32];
	if (isnan(ci.value)) {
		for (int i = 0; i < (wide ? 3 : 1); i++)
			wzp_table_empty(t);
		return;
	}
	snprintf(b, sizeof b, fmt, ci.value);
	snprintf(a, sizeof a, "%s%s", mark ? mark : "", b);
	if (wide) {
		wzp_table_num(t, ci.value, a);
		double v[2] = { ci.lo, ci.hi };
		for (int i = 0; i < 2; i++) {
			snprintf(b, sizeof b, fmt, v[i]);
			if (isnan(v[i]))
				wzp_table_empty(t);
			else
				wzp_table_num(t, v[i], b);
		}
		return;
	}
	if (brief) {
		wzp_table_num(t, ci.value, a);
		return;
	}
	snprintf(b, sizeof b, fmt, ci.lo);
	snprintf(c, sizeof c, fmt, ci.hi);
	snprintf(disp, sizeof disp, "%s [%s, %s]", a, isnan(ci.lo) ? "?" : b, isnan(ci.hi) ? "?" : c);
	wzp_table_num(t, ci.value, disp);
}

static void num(wzp_table *t, double v, const char *fmt)
{
	char d[48];
	if (isnan(v)) {
		wzp_table_empty(t);
		return;
	}
	snprintf(d, sizeof d, fmt, v);
	wzp_table_num(t, v, d);
}

static void share(wzp_table *t, double v)
{
	char d[16];
	if (isnan(v)) {
		wzp_table_empty(t);
		return;
	}
	snprintf(d, sizeof d, "%.0f%%", 100 * v);
	wzp_table_num(t, v, d);
}

typedef struct {
	int wide, iso, per_layer, nboot;
	uint64_t seed;
	int capped; /* the profile caps the position part: the capped bound's columns */
	int pairs[2]; /* CSV and JSON: columns of the pairs against the headline's reference, kvtc */
} layout;

static const char *const pair_ref[2] = { WZ_HEADLINE_METRIC, WZ_KVTC_METRIC };

/* The archive's metric names of a pair: nmse_vs_<ref> ... */
static void pair_columns(wzp_table *t, const char *ref)
{
	char k[64];
	static const char *const m[4] = { "nmse_vs_", "tokens_better_vs_", "kl_vs_", "queries_better_vs_" };
	for (int i = 0; i < 4; i++) {
		snprintf(k, sizeof k, "%s%s", m[i], ref);
		if (i % 2) {
			wzp_table_column(t, k, "", 1);
			continue;
		}
		wzp_table_ci_columns(t, 1, k, "");
	}
}

static void pair_cells(wzp_table *t, const wzc_pair_result *h)
{
	wzc_ci none = { NAN, NAN, NAN };
	ci_cells(t, 1, 0, h ? h->nmse_ratio : none, "%.4g", NULL);
	if (h && !isnan(h->tokens_better))
		wzp_table_numf(t, h->tokens_better, 4);
	else
		wzp_table_empty(t);
	ci_cells(t, 1, 0, h && h->has_kl ? h->kl_ratio : none, "%.4g", NULL);
	if (h && h->has_kl && !isnan(h->queries_better))
		wzp_table_numf(t, h->queries_better, 4);
	else
		wzp_table_empty(t);
}

static void columns(wzp_table *t, const layout *o)
{
	int w = o->wide;
	wzp_table_column(t, "window", "Window", 0);
	wzp_table_column(t, "split", "Split", 0);
	wzp_table_column(t, "format", "Format", 0);
	if (o->per_layer)
		wzp_table_column(t, "layer", "Layer", 1);
	if (w && o->iso)
		wzp_table_column(t, "kind", "", 0);
	wzp_table_column(t, "bits_per_value", "Bits/value", 1);
	wzp_table_ci_columns(t, w, "nmse", "nmse");
	wzp_table_ci_columns(t, w, "sqnr_db", "SQNR dB");
	wzp_table_ci_columns(t, w, "nmse_latent", "nmse latent");
	wzp_table_ci_columns(t, w, "nmse_rope", "nmse rope");
	wzp_table_ci_columns(t, w, "kl", "Attention KL");
	wzp_table_ci_columns(t, w, "out_err", "Output err");
	wzp_table_ci_columns(t, w, "nmse_vs_fp8", "nmse / fp8-mix");
	wzp_table_ci_columns(t, w, "kl_vs_fp8", "KL / fp8-mix");
	wzp_table_column(t, "tokens_better", "Tokens better", 1);
	wzp_table_column(t, "queries_better", "Queries better", 1);
	wzp_table_column(t, "bound_gap_db", "dB from bound", 1);
	if (w)
		wzp_table_column(t, "nmse_bound", "", 1);
	if (o->capped) {
		wzp_table_column(t, "bound_capped_gap_db", "dB from capped bound", 1);
		if (w)
			wzp_table_column(t, "nmse_bound_capped", "", 1);
	}
	for (int i = 0; i < 2; i++)
		if (o->pairs[i])
			pair_columns(t, pair_ref[i]);
	if (!o->iso)
		return;
	static const char *const k[2][4] = {
		{ "iso_bits_nmse", "iso_censored_nmse", "fewer_bits_nmse", "nmse" },
		{ "iso_bits_kl", "iso_censored_kl", "fewer_bits_kl", "KL" },
	};
	for (int m = 0; m < 2; m++) {
		char label[48];
		snprintf(label, sizeof label, "wz bits at equal %s", k[m][3]);
		wzp_table_ci_columns(t, w, k[m][0], label);
		if (w)
			wzp_table_column(t, k[m][1], "", 1);
		snprintf(label, sizeof label, "Fewer bits (%s)", k[m][3]);
		wzp_table_ci_columns(t, w, k[m][2], label);
	}
}

/* One row: r's cell (or one layer of it, layer >= 0) against ref's. */
static void row(wzp_table *t, const layout *o, const wz_codec_measured *r, int layer,
		const char *kind)
{
	const wzc_run_cell *c = layer < 0 ? r->cell : &r->cell->layers[layer];
	const wzc_errors *e = c->e;
	const wzc_errors *ref = r->ref ? (layer < 0 ? r->ref->e : r->ref->layers[layer].e) : NULL;
	if (ref == e)
		ref = NULL; /* fp8-mix against itself */
	int w = o->wide, nb = o->nboot;
	uint64_t seed = o->seed;
	wzc_ci none = { NAN, NAN, NAN };
	wzp_table_row(t);
	wzp_table_str(t, r->window);
	wzp_table_str(t, r->split ? r->split : "");
	wzp_table_str(t, r->format);
	if (o->per_layer) {
		if (layer < 0)
			wzp_table_str(t, "all");
		else
			wzp_table_numf(t, layer, 0);
	}
	if (w && o->iso)
		wzp_table_str(t, kind);
	num(t, e->bits_per_value, "%.3f");
	wzc_ci nm = wzc_metric_ci(e, WZC_M_NMSE, nb, seed);
	ci_cells(t, w, 0, nm, "%.3g", NULL);
	wzc_ci sq = { wzc_sqnr_db(nm.value), wzc_sqnr_db(nm.hi), wzc_sqnr_db(nm.lo) };
	ci_cells(t, w, 1, sq, "%.2f", NULL);
	ci_cells(t, w, 1, wzc_metric_ci(e, WZC_M_NMSE_LATENT, w ? nb : 0, seed), "%.3g", NULL);
	ci_cells(t, w, 1, wzc_metric_ci(e, WZC_M_NMSE_ROPE, w ? nb : 0, seed), "%.3g", NULL);
	ci_cells(t, w, 0, wzc_metric_ci(e, WZC_M_KL, nb, seed), "%.3g", NULL);
	ci_cells(t, w, 1, wzc_metric_ci(e, WZC_M_OUT_ERR, w ? nb : 0, seed), "%.3g", NULL);
	ci_cells(t, w, 0, ref ? wzc_ratio_ci(e, ref, WZC_M_NMSE, nb, seed) : none, "%.3f", NULL);
	ci_cells(t, w, 0, ref ? wzc_ratio_ci(e, ref, WZC_M_KL, nb, seed) : none, "%.3f", NULL);
	share(t, ref ? wzc_share_better(e, ref, WZC_M_NMSE) : NAN);
	share(t, ref ? wzc_share_better(e, ref, WZC_M_KL) : NAN);
	num(t, c->gap_db, "%.2f");
	if (w)
		num(t, c->bound_nmse, "%.4g");
	if (o->capped) {
		num(t, c->capped_gap_db, "%.2f");
		if (w)
			num(t, c->bound_capped_nmse, "%.4g");
	}
	for (int i = 0; i < 2; i++)
		if (o->pairs[i])
			pair_cells(t, layer >= 0 ? NULL : i ? r->vs_kvtc : r->vs_headline);
	if (!o->iso)
		return;
	for (int m = 0; m < 2; m++) {
		int has = c->has_iso && !isnan(c->iso[m].value), cen = has && c->iso_censored[m];
		/* A censored iso rate (already beaten at the sweep's lowest
		 * rate) is an upper bound, and the fewer-bits ratio a lower. */
		ci_cells(t, w, 0, has ? c->iso[m] : none, "%.2f", cen ? "<=" : NULL);
		if (w) {
			if (has)
				wzp_table_numf(t, cen, 0);
			else
				wzp_table_empty(t);
		}
		ci_cells(t, w, 0, has ? wzc_fewer_bits(e->bits_per_value, c->iso[m]) : none,
			 "%.2fx", cen ? ">=" : NULL);
	}
}

wzp_table *wz_codec_measure_table(const wz_codec_measured *rows, int n, int iso, int per_layer,
				  int wide, int nboot, uint64_t seed)
{
	wzp_table *t = wzp_table_new("Cache-format quality per window (95% bootstrap intervals)");
	if (!t)
		return NULL;
	layout o = { wide, iso, per_layer, nboot, seed, 0, { 0, 0 } };
	for (int i = 0; i < n; i++) {
		o.capped |= !isnan(rows[i].cell->bound_capped_nmse);
		o.pairs[0] |= wide && rows[i].vs_headline;
		o.pairs[1] |= wide && rows[i].vs_kvtc;
	}
	columns(t, &o);
	for (int i = 0; i < n; i++) {
		const wz_codec_measured *r = &rows[i];
		/* The sweep's rows only where every figure has a column, the
		 * headline's unlisted formats there too (in text a table of
		 * their own follows) */
		if ((r->sweep || r->headline) && !wide)
			continue;
		row(t, &o, r, -1, r->sweep ? "iso sweep" : r->headline ? "headline" : "measured");
		for (int l = 0; per_layer && !r->sweep && l < r->cell->nlayers; l++)
			row(t, &o, r, l, r->headline ? "headline" : "measured");
	}
	wzp_table_note(t, "bits/value from the bytes each encoder wrote; nmse over both parts; "
			  "ratios and intervals paired over tokens (queries for KL).");
	if (per_layer)
		wzp_table_note(t, "Layer rows: each layer's errors alone, at the window's bits/value.");
	if (iso)
		wzp_table_note(t, "wz bits at equal quality: the wz rate sweep interpolated in log "
				  "error; <= where the sweep's lowest rate already beats the format "
				  "(then fewer bits is a lower bound, >=).%s",
			       wide ? "" : "  CSV and JSON also hold the sweep's rows.");
	for (int i = 0; i < n; i++)
		if (!rows[i].sweep && rows[i].cell->e->payload_bytes)
			wzp_table_note(t,
				       strncmp(rows[i].format, "kvtc", 4)
					       ? "%s on %s: the wzx container (header, index, block headers "
						 "and checksums included) %.3f bits/value; block payloads "
						 "alone %.3f."
					       : "%s on %s: kvtc's coded blocks and kept sinks %.3f "
						 "bits/value; without the blocks' lengths %.3f.",
				       rows[i].format, rows[i].window, rows[i].cell->e->bits_per_value,
				       rows[i].cell->e->payload_bytes * 8.0 /
					       (double)rows[i].cell->e->values);
	return t;
}

wzp_table *wz_measure_headline_table(const wz_measure_result *res, int wide)
{
	if (res->head_wz < 0)
		return NULL;
	const wzc_format *a = &res->fmts[res->head_wz], *b = &res->fmts[res->head_ref];
	char title[160];
	snprintf(title, sizeof title, "Headline: %s against %s at equal bytes, paired per window "
		 "(95%% bootstrap intervals; below 1: wz has the lower error)", a->name, b->name);
	wzp_table *t = wzp_table_new(title);
	if (!t)
		return NULL;
	wzp_table_column(t, "window", "Window", 0);
	wzp_table_column(t, "format", "Format", 0);
	wzp_table_column(t, "bits", "Bits/value", 1);
	wzp_table_column(t, "against", "Against", 0);
	wzp_table_column(t, "against_bits", "Its bits/value", 1);
	wzp_table_column(t, "kl_ratio", "Attention KL ratio", 1);
	if (wide) {
		wzp_table_column(t, "kl_ratio_lo", "", 1);
		wzp_table_column(t, "kl_ratio_hi", "", 1);
	}
	wzp_table_column(t, "nmse_ratio", "nmse ratio", 1);
	if (wide) {
		wzp_table_column(t, "nmse_ratio_lo", "", 1);
		wzp_table_column(t, "nmse_ratio_hi", "", 1);
	}
	wzp_table_column(t, "queries_better", "Queries better", 1);
	for (int i = 0; i < res->ntraces; i++) {
		const wzc_pair_result *h = &res->headline[i];
		char d[32];
		wzp_table_row(t);
		wzp_table_str(t, res->windows[i].name);
		wzp_table_str(t, a->name);
		snprintf(d, sizeof d, "%.3f", h->bits_a);
		wzp_table_num(t, h->bits_a, d);
		wzp_table_str(t, b->name);
		snprintf(d, sizeof d, "%.3f", h->bits_b);
		wzp_table_num(t, h->bits_b, d);
		ci_cells(t, wide, 0, h->kl_ratio, "%.3g", NULL);
		ci_cells(t, wide, 0, h->nmse_ratio, "%.3g", NULL);
		if (isnan(h->queries_better)) {
			wzp_table_empty(t);
		} else {
			snprintf(d, sizeof d, "%.0f%%", 100 * h->queries_better);
			wzp_table_num(t, h->queries_better, d);
		}
	}
	wzp_table_note(t, "Both encoders' written bytes per token and layer are equal; ratios are "
			  "wz's error over the reference's, paired over tokens (queries for KL), "
			  "with the measurement's bootstrap resamples and seed.");
	return t;
}
