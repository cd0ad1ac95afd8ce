/* Live-model quality in a proposal: the next-token KL of a model run with
 * each cache format (the summary `wzcapture.py report --json` writes, from
 * traces/capture/), checked, recorded in the run as an input and as
 * figures, and written as the proposal's "Live-model quality" section. */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/say.h"
#include "runs/setup.h"
#include "runs/propose.h"
#include "codec/formats/format.h"
#include "common/wz_io.h"
#include "common/wz_name.h"
#include "runs/schema.h"

#define LIVE_MAX_BYTES (16 << 20)
#define LIVE_MAX_CATEGORIES 16
#define LIVE_MAX_FORMATS 64

/* A category name (it becomes a figure row and a heading): letters,
 * digits and ". _ - / : +" only, 1..max bytes; stricter than wz_name_valid,
 * which the model name goes through. */
static int plain_name(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > max)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("._-/:+", c)))
			return 0;
	}
	return 1;
}

/* A number member: finite, or null (NaN when absent or null). */
static int number(json_t *obj, const char *key, double *out)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v)) {
		*out = NAN;
		return 1;
	}
	if (!json_is_number(v))
		return 0;
	*out = json_number_value(v);
	return isfinite(*out);
}

/* Why a number read for a column cannot be what the column means, or NULL:
 * a KL divergence, its interval, its ratio to the baseline's and its p99
 * are >= 0; top-1 agreement is a fraction; bits per value lie in (0, 64].
 * NaN (null) is "not measured" and passes. */
static const char *out_of_range(const char *col, double v)
{
	if (isnan(v))
		return NULL;
	if (!strncmp(col, "kl", 2) || !strncmp(col, "ratio", 5) || !strcmp(col, "p99"))
		return v >= 0 ? NULL : "negative, and a KL divergence (or its ratio) is never below 0";
	if (!strcmp(col, "top1"))
		return v >= 0 && v <= 1 ? NULL : "not a fraction from 0 to 1";
	if (!strcmp(col, "bits") || !strcmp(col, "lo") || !strcmp(col, "hi"))
		return v > 0 && v <= 64 ? NULL : "not a number of bits per value in (0, 64]";
	return NULL;
}

static int bad(const char *cmd, const char *path, const char *where, const char *what)
{
	wz_diag d;
	wz_diag_set(&d, WZ_ERR_INPUT, "%s: %s: %s", path, where, what);
	return wz_say_fail(cmd, &d);
}

static const char *row_cols[] = { "bits", "kl", "kl_lo", "kl_hi", "ratio", "ratio_lo", "ratio_hi",
				  "p99", "top1", "dlogloss", "better" };
static const char *iso_cols[] = { "bits", "lo", "hi", "fewer_bits" };
#define NCOLS(a) ((int)(sizeof a / sizeof a[0]))

int wz_propose_live_kl(const char *cmd, const char *path, wza_run *run)
{
	char *text = NULL;
	size_t len = 0;
	wz_diag d;
	if (wz_read_file(path, LIVE_MAX_BYTES, &text, &len, &d))
		return wz_say_fail(cmd, &d);
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	int rc = 0;
	char where[160];
	if (!root || !json_is_object(root)) {
		snprintf(where, sizeof where, "line %d", root ? 1 : je.line);
		rc = bad(cmd, path, where, root ? "not a JSON object" : je.text);
		goto out;
	}
	const char *model = json_string_value(json_object_get(root, "model"));
	const char *prefix = json_string_value(json_object_get(root, "prefix"));
	json_t *jctx = json_object_get(root, "context"), *jscore = json_object_get(root, "score_tokens");
	json_t *cats = json_object_get(root, "categories");
	const char *why = "missing";
	if (!model || !wz_name_valid(model, &why)) {
		snprintf(where, sizeof where, "missing, or not a plain name (%s)", why);
		rc = bad(cmd, path, "model", where);
		goto out;
	}
	if (!prefix || (strcmp(prefix, "exact") && strcmp(prefix, "live"))) {
		rc = bad(cmd, path, "prefix", "must be \"exact\" or \"live\"");
		goto out;
	}
	if (!json_is_integer(jctx) || json_integer_value(jctx) < 2 || json_integer_value(jctx) > (1 << 24) ||
	    !json_is_integer(jscore) || json_integer_value(jscore) < 1 ||
	    json_integer_value(jscore) > json_integer_value(jctx)) {
		rc = bad(cmd, path, "context / score_tokens", "not whole numbers with 1 <= score_tokens <= context");
		goto out;
	}
	if (!json_is_object(cats) || json_object_size(cats) == 0 ||
	    json_object_size(cats) > LIVE_MAX_CATEGORIES) {
		rc = bad(cmd, path, "categories", "must be an object of 1 to 16 categories");
		goto out;
	}
	char hex[17];
	snprintf(hex, sizeof hex, "%016llx", (unsigned long long)wz_hash_bytes(text, len));
	char abs[PATH_MAX];
	wza_run_input(run, WZ_IN_LIVE_KL, "live-kl.json", realpath(path, abs) ? abs : path, hex,
		      (long long)len, text);
	wza_run_figure(run, WZ_T_LIVE_KL_SOURCE, "file", "model", NAN, model);
	wza_run_figure(run, WZ_T_LIVE_KL_SOURCE, "file", "prefix", NAN, prefix);
	wza_run_figure(run, WZ_T_LIVE_KL_SOURCE, "file", "context", (double)json_integer_value(jctx),
		       NULL);
	wza_run_figure(run, WZ_T_LIVE_KL_SOURCE, "file", "score_tokens",
		       (double)json_integer_value(jscore), NULL);
	wza_run_figure(run, WZ_T_LIVE_KL_SOURCE, "file", "hash", NAN, hex);
	const char *cat;
	json_t *cv;
	json_object_foreach(cats, cat, cv) {
		if (!plain_name(cat, 32) || !json_is_object(cv)) {
			rc = bad(cmd, path, "categories", "a category name is not a plain name of at most 32 bytes");
			goto out;
		}
		json_t *rows = json_object_get(cv, "rows"), *iso = json_object_get(cv, "iso");
		json_t *jw = json_object_get(cv, "windows"), *jt = json_object_get(cv, "tokens");
		if (!json_is_object(rows) || json_object_size(rows) > LIVE_MAX_FORMATS ||
		    !json_is_integer(jw) || json_integer_value(jw) < 1 || !json_is_integer(jt) ||
		    json_integer_value(jt) < 1) {
			snprintf(where, sizeof where, "categories.%s", cat);
			rc = bad(cmd, path, where, "needs rows (an object), windows and tokens (whole numbers >= 1)");
			goto out;
		}
		wza_run_figure(run, WZ_T_LIVE_KL_CATEGORIES, cat, "windows",
			       (double)json_integer_value(jw), NULL);
		wza_run_figure(run, WZ_T_LIVE_KL_CATEGORIES, cat, "tokens", (double)json_integer_value(jt), NULL);
		const char *fmt;
		json_t *fv;
		json_object_foreach(rows, fmt, fv) {
			wzc_format f;
			snprintf(where, sizeof where, "categories.%s.rows.%.40s", cat, fmt);
			if (strcmp(fmt, "exact") && wzc_format_parse(fmt, &f, NULL)) {
				rc = bad(cmd, path, where, "not a cache format of the registry");
				goto out;
			}
			if (!json_is_object(fv)) {
				rc = bad(cmd, path, where, "not an object");
				goto out;
			}
			char row[96];
			snprintf(row, sizeof row, "%s/%s", cat, fmt);
			for (int i = 0; i < NCOLS(row_cols); i++) {
				double v;
				const char *wrong = number(fv, row_cols[i], &v) ? out_of_range(row_cols[i], v)
										: "not a finite number or null";
				if (wrong) {
					snprintf(where, sizeof where, "categories.%s.rows.%.40s.%s", cat, fmt, row_cols[i]);
					rc = bad(cmd, path, where, wrong);
					goto out;
				}
				wza_run_figure(run, WZ_T_LIVE_KL, row, row_cols[i], v, NULL);
			}
		}
		if (json_is_object(iso)) {
			for (int i = 0; i < NCOLS(iso_cols); i++) {
				double v;
				const char *wrong = number(iso, iso_cols[i], &v) ? out_of_range(iso_cols[i], v)
										 : "not a finite number or null";
				if (wrong) {
					snprintf(where, sizeof where, "categories.%s.iso.%s", cat, iso_cols[i]);
					rc = bad(cmd, path, where, wrong);
					goto out;
				}
				wza_run_figure(run, WZ_T_LIVE_KL_ISO, cat, iso_cols[i], v, NULL);
			}
		} else if (iso && !json_is_null(iso)) {
			snprintf(where, sizeof where, "categories.%s.iso", cat);
			rc = bad(cmd, path, where, "not an object or null");
			goto out;
		}
	}
out:
	json_decref(root);
	free(text);
	return rc;
}

static const wza_figure *fig(const wza_run *run, const char *table, const char *row, const char *col)
{
	return wza_run_find_figure(run, table, row, col);
}

static double val(const wza_run *run, const char *table, const char *row, const char *col)
{
	const wza_figure *f = fig(run, table, row, col);
	return f ? f->value : NAN;
}

/* Live KL need not fall as the wz rate rises: name the rates above the
 * iso-quality point that still lose to fp8-mix, from the archived rows. */
static void losing_higher_rates(wz_buf *md, const wza_run *run, const char *cat, double iso)
{
	size_t n = strlen(cat);
	int nlosing = 0;
	for (int i = 0; i < run->nfigures; i++) {
		const wza_figure *f = &run->figures[i];
		if (strcmp(f->table, WZ_T_LIVE_KL) || strcmp(f->col, "bits") || strncmp(f->row, cat, n) ||
		    f->row[n] != '/' || strncmp(f->row + n + 1, "wz-", 3) || !(f->value > iso))
			continue;
		double r = val(run, WZ_T_LIVE_KL, f->row, "ratio");
		if (!(r > 1))
			continue;
		wz_buf_printf(md, "%s%s (%.2f× fp8-mix's live KL)",
			      nlosing++ ? ", " : "\n**Live KL is not monotone in the rate:** higher rates that still lose to fp8-mix: ",
			      f->row + n + 1, r);
	}
	if (nlosing)
		wz_buf_puts(md, ".\n");
}
static void num(wz_buf *md, double v, const char *fmt)
{
	if (isnan(v))
		wz_buf_puts(md, "—");
	else
		wz_buf_printf(md, fmt, v);
}

void wz_propose_live_kl_section(wz_buf *md, const wza_run *run)
{
	const wza_figure *model = fig(run, WZ_T_LIVE_KL_SOURCE, "file", "model");
	if (!model)
		return;
	const wza_figure *prefix = fig(run, WZ_T_LIVE_KL_SOURCE, "file", "prefix");
	const wza_figure *hash = fig(run, WZ_T_LIVE_KL_SOURCE, "file", "hash");
	wz_buf_puts(md, "## Live-model quality\n\n");
	wz_buf_printf(md, "Next-token KL divergence of the model `%s` run with each cache format "
			  "against the same model with the exact cache (the product page's quality "
			  "metric), on test text kept apart from the profile's calibration text; %0.f-token "
			  "windows, the last %0.f tokens of each scored, prefix %s.  95%% intervals are "
			  "bootstrap intervals over tokens.  Source: the live-KL summary with xxh3 `%s`, "
			  "recorded with this run (`wzplan archive show`); `verify` cannot recompute it "
			  "without the model (`traces/capture/real-model.sh` does).\n\n",
		      model->text, val(run, WZ_T_LIVE_KL_SOURCE, "file", "context"),
		      val(run, WZ_T_LIVE_KL_SOURCE, "file", "score_tokens"),
		      prefix && !strcmp(prefix->text, "live") ? "run through the format"
							       : "prefilled exactly and stored in the format",
		      hash ? hash->text : "?");
	for (int c = 0; c < run->nfigures; c++) {
		const wza_figure *cf = &run->figures[c];
		if (strcmp(cf->table, WZ_T_LIVE_KL_CATEGORIES) || strcmp(cf->col, "windows"))
			continue;
		const char *cat = cf->row;
		wz_buf_printf(md, "### %s: %.0f windows, %.0f scored tokens\n\n", cat, cf->value,
			      val(run, WZ_T_LIVE_KL_CATEGORIES, cat, "tokens"));
		wz_buf_puts(md, "| Format | Bits/value | Mean KL [95% CI] | KL vs fp8-mix [95% CI] | "
				"Top-1 agreement | Tokens better than fp8-mix |\n|---|---|---|---|---|---|\n");
		size_t n = strlen(cat);
		for (int i = 0; i < run->nfigures; i++) {
			const wza_figure *f = &run->figures[i];
			if (strcmp(f->table, WZ_T_LIVE_KL) || strcmp(f->col, "bits") ||
			    strncmp(f->row, cat, n) || f->row[n] != '/' || !strcmp(f->row + n + 1, "exact"))
				continue;
			const char *row = f->row;
			wz_buf_printf(md, "| %s | ", row + n + 1);
			num(md, f->value, "%.2f");
			wz_buf_puts(md, " | ");
			num(md, val(run, WZ_T_LIVE_KL, row, "kl"), "%.3g");
			wz_buf_puts(md, " [");
			num(md, val(run, WZ_T_LIVE_KL, row, "kl_lo"), "%.3g");
			wz_buf_puts(md, ", ");
			num(md, val(run, WZ_T_LIVE_KL, row, "kl_hi"), "%.3g");
			wz_buf_puts(md, "] | ");
			double r = val(run, WZ_T_LIVE_KL, row, "ratio");
			if (isnan(r)) {
				wz_buf_puts(md, "baseline");
			} else {
				num(md, r, "%.2f×");
				wz_buf_puts(md, " [");
				num(md, val(run, WZ_T_LIVE_KL, row, "ratio_lo"), "%.2f");
				wz_buf_puts(md, ", ");
				num(md, val(run, WZ_T_LIVE_KL, row, "ratio_hi"), "%.2f");
				wz_buf_puts(md, "]");
			}
			wz_buf_puts(md, " | ");
			num(md, val(run, WZ_T_LIVE_KL, row, "top1"), "%.4f");
			wz_buf_puts(md, " | ");
			num(md, 100 * val(run, WZ_T_LIVE_KL, row, "better"), "%.0f%%");
			wz_buf_puts(md, " |\n");
		}
		double iso = val(run, WZ_T_LIVE_KL_ISO, cat, "bits");
		if (!isnan(iso))
			wz_buf_printf(md, "\nIso-quality bits by live KL: **%.2f** bits/value [95%% CI %.2f, "
					  "%.2f], **%.2f× fewer bits** than fp8-mix at equal live KL.\n",
				      iso, val(run, WZ_T_LIVE_KL_ISO, cat, "lo"), val(run, WZ_T_LIVE_KL_ISO, cat, "hi"),
				      val(run, WZ_T_LIVE_KL_ISO, cat, "fewer_bits"));
		if (!isnan(iso))
			losing_higher_rates(md, run, cat, iso);
		else if (fig(run, WZ_T_LIVE_KL_ISO, cat, "bits"))
			wz_buf_puts(md, "\nIso-quality bits by live KL: no wz rate of the sweep reached "
					"fp8-mix's live KL.\n");
		wz_buf_puts(md, "\n");
	}
}
