/* A codec measurement as a job (measure.h): the request checked, the
 * profile and traces read, every window and format measured on every core
 * (codec/measure/measure_run.c does the work), the rows a table and the archive
 * take. */
#include "runs/measure.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/formats/format.h"
#include "codec/kvtc/kvtc.h"
#include "codec/profile/profile.h"
#include "runs/say.h"

#define CMD "codec"

/* Progress lines from the measuring threads stay whole. */
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;

void wz_codec_progress(void *ud, const char *window, const char *what)
{
	(void)ud;
	pthread_mutex_lock(&progress_lock);
	wz_say(WZ_SAY_ERR, "wzplan codec: %s: %s\n", window, what);
	pthread_mutex_unlock(&progress_lock);
}

wzc_window wz_codec_window(const wzt_cache_trace *t, const char *path)
{
	wzc_window w = {
		.L = t->L, .T = t->T, .R = t->R, .P = t->P, .Q = t->Q, .H = t->H,
		.latent = t->latent, .rope = t->rope, .q_latent = t->q_latent,
		.q_rope = t->q_rope, .q_index = t->q_index, .positions = t->positions,
		.softmax_scale = t->softmax_scale,
		.model = t->model, .split = t->split, .name = t->window ? t->window : path,
	};
	return w;
}

int wz_codec_load_traces(const char *const *paths, int n, wzt_cache_trace **traces)
{
	wz_diag diag;
	for (int i = 0; i < n; i++) {
		wz_say(WZ_SAY_ERR, "wzplan codec: reading %s\n", paths[i]);
		if (wzt_cache_trace_read(paths[i], &traces[i], &diag)) {
			for (int j = 0; j < i; j++) {
				wzt_cache_trace_free(traces[j]);
				traces[j] = NULL;
			}
			return wz_say_fail(CMD, &diag);
		}
	}
	return 0;
}

/* The request's formats with fp8-mix (every ratio's reference) and, for
 * iso, int4-g64 (the second iso reference) added when not listed; shown[i]
 * marks the listed ones. */
static int formats_of(const wz_measure_req *rq, wzc_format *fmts, int *shown, int *nf,
		      int *need_profile, int *has_fp8)
{
	wz_diag diag;
	char **items;
	int nitems = wz_split_list(rq->formats, &items);
	int has_int4 = -1, rc = 0;
	*nf = 0;
	*need_profile = 0;
	*has_fp8 = -1;
	if (nitems <= 0)
		return wz_say_usage(CMD, "--formats: an empty list");
	for (int i = 0; i < nitems && !rc; i++) {
		if (*nf >= WZ_MEASURE_MAX_FORMATS - 4) {
			rc = wz_say_usage(CMD, "--formats: at most %d", WZ_MEASURE_MAX_FORMATS - 4);
			break;
		}
		if (wzc_format_parse(items[i], &fmts[*nf], &diag)) {
			rc = wz_say_fail(CMD, &diag);
			break;
		}
		for (int j = 0; j < *nf && !rc; j++)
			if (!strcmp(fmts[j].name, fmts[*nf].name))
				rc = wz_say_usage(CMD, "--formats: %s is listed twice", fmts[*nf].name);
		if (rc)
			break;
		*need_profile |= wzc_format_needs_profile(fmts[*nf].id);
		shown[(*nf)++] = 1;
	}
	wz_strlist_free(items, nitems);
	if (rc)
		return rc;
	for (int i = 0; i < *nf; i++) {
		if (fmts[i].id == WZC_FMT_FP8_MIX)
			*has_fp8 = i;
		if (fmts[i].id == WZC_FMT_INT4_G64)
			has_int4 = i;
	}
	if (*has_fp8 < 0) {
		wzc_format_parse("fp8-mix", &fmts[*nf], &diag);
		*has_fp8 = (*nf)++;
	}
	if (rq->iso && has_int4 < 0) {
		wzc_format_parse("int4-g64", &fmts[*nf], &diag);
		(*nf)++;
	}
	return 0;
}

int wz_codec_fit_kvtc(const char *const *paths, int n, const wzc_format *fmts, int nf,
		      wzc_profile *prof, struct wzc_kvtc **out)
{
	*out = NULL;
	int kvtc = 0;
	for (int i = 0; i < nf; i++)
		kvtc |= fmts[i].id == WZC_FMT_KVTC;
	if (!kvtc)
		return 0;
	if (!n)
		return wz_say_usage(CMD, "kvtc-<bits> needs --calibration (windows to fit its "
					 "transforms on)");
	if (!prof)
		return wz_say_usage(CMD, "kvtc-<bits> needs --profile");
	int rc;
	wzt_cache_trace **t = calloc((size_t)n, sizeof *t);
	wzc_window *w = calloc((size_t)n, sizeof *w);
	const wzc_window **wp = calloc((size_t)n, sizeof *wp);
	wz_diag diag;
	if (!t || !w || !wp) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_say_fail(CMD, &diag);
	} else if (!(rc = wz_codec_load_traces(paths, n, t))) {
		for (int i = 0; i < n; i++) {
			w[i] = wz_codec_window(t[i], paths[i]);
			wp[i] = &w[i];
		}
		if (wzc_kvtc_fit(wp, n, prof->rope_freq, out, &diag))
			rc = wz_say_fail(CMD, &diag);
		else
			prof->kvtc = *out;
		for (int i = 0; i < n; i++)
			wzt_cache_trace_free(t[i]);
	}
	free(t);
	free(w);
	free(wp);
	return rc;
}

/* fmts' index of the format named name, added (not shown) when absent. */
static int format_at(wzc_format *fmts, int *nf, const wzc_format *f)
{
	for (int i = 0; i < *nf; i++)
		if (!strcmp(fmts[i].name, f->name))
			return i;
	fmts[*nf] = *f;
	return (*nf)++;
}

/* The headline's two formats, where every window has one shape: the
 * reference, and the wz rate of two decimals whose records take its bytes
 * exactly (else the exact rate of those bytes).  Added to fmts when not
 * listed; head_wz -1 where the headline cannot be made. */
static void headline_formats(wz_measure_result *out, int *nf)
{
	out->head_wz = out->head_ref = -1;
	const wzc_window *w = out->windows;
	for (int i = 1; i < out->ntraces; i++)
		if (w[i].R != w[0].R || w[i].P != w[0].P)
			return;
	wz_diag diag;
	wzc_format ref, wz;
	if (wzc_format_parse(WZ_HEADLINE_REF, &ref, &diag))
		return;
	size_t B = wzc_record_bytes(&ref, w[0].R, w[0].P);
	if (!B)
		return;
	char name[32];
	snprintf(name, sizeof name, "wz-%.2f", ceil(800.0 * (double)B / (w[0].R + w[0].P) - 1e-9) / 100.0);
	if (wzc_format_parse(name, &wz, &diag) || wzc_record_bytes(&wz, w[0].R, w[0].P) != B)
		wzc_format_wz_grid(B, w[0].R, w[0].P, &wz);
	out->head_ref = format_at(out->fmts, nf, &ref);
	out->head_wz = format_at(out->fmts, nf, &wz);
}

int wz_measure_run(const wz_measure_req *rq, wz_measure_result *out)
{
	memset(out, 0, sizeof *out);
	out->head_wz = out->head_ref = -1;
	if (!rq->npaths || !rq->formats)
		return wz_say_usage(CMD, "measure needs --trace and --formats");
	wzc_format *fmts = out->fmts;
	int shown[WZ_MEASURE_MAX_FORMATS] = { 0 }, nf, need_profile, has_fp8;
	int rc = formats_of(rq, fmts, shown, &nf, &need_profile, &has_fp8);
	if (rc)
		return rc;
	out->nformats = nf;
	if ((need_profile || rq->iso) && !rq->profile_path)
		return wz_say_usage(CMD, "wz formats and --iso need --profile");
	wz_diag diag;
	if (rq->profile_path && wzc_profile_read(rq->profile_path, &out->prof, &diag))
		return wz_say_fail(CMD, &diag);
	if ((rc = wz_codec_fit_kvtc(rq->calibration_paths, rq->ncalibration, fmts, nf, out->prof,
				    &out->kvtc)))
		return rc;
	int n = rq->npaths;
	out->traces = calloc((size_t)n, sizeof *out->traces);
	out->windows = calloc((size_t)n, sizeof *out->windows);
	out->headline = calloc((size_t)n, sizeof *out->headline);
	if (!out->traces || !out->windows || !out->headline) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_say_fail(CMD, &diag);
	}
	if ((rc = wz_codec_load_traces(rq->paths, n, out->traces)))
		return rc;
	out->ntraces = n;
	for (int i = 0; i < n; i++)
		out->windows[i] = wz_codec_window(out->traces[i], rq->paths[i]);
	/* With iso (what a proposal measures): the headline's formats too */
	if (rq->iso)
		headline_formats(out, &nf);
	out->nformats = nf;
	/* Rows per window: the formats, then the sweep's rates. */
	int per = nf + (rq->iso ? WZC_ISO_N : 0);
	out->rows = calloc((size_t)n * per, sizeof *out->rows);
	out->shown = calloc((size_t)n * per, sizeof *out->shown);
	if (!out->rows || !out->shown) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_say_fail(CMD, &diag);
	}
	wzc_run_spec spec = { out->windows, n, fmts, nf, has_fp8, out->prof, rq->iso,
			      rq->per_layer, rq->threads > 0 ? (int)rq->threads : wzc_cores(),
			      (int)rq->nboot, (uint64_t)rq->seed, wz_codec_progress, NULL, 0 };
	if (wzc_run_measure(&spec, &out->run, &diag))
		return wz_say_fail(CMD, &diag);
	for (int k = 0; k < WZC_ISO_N; k++)
		snprintf(out->iso_names[k], sizeof out->iso_names[k], "wz-%g", wzc_iso_rates[k]);
	const wzc_run *run = out->run;
	for (int i = 0; out->head_wz >= 0 && i < n; i++)
		wzc_compare_errors(run->cells[(size_t)i * nf + out->head_wz].e,
				   run->cells[(size_t)i * nf + out->head_ref].e, (int)rq->nboot,
				   (uint64_t)rq->seed, &out->headline[i]);
	/* wz-R against a listed kvtc-R, paired */
	if (!(out->kvtc_pair = calloc((size_t)n * nf, sizeof *out->kvtc_pair))) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_say_fail(CMD, &diag);
	}
	for (int f = 0; f < nf; f++) {
		out->kvtc_of[f] = -1;
		for (int k = 0; fmts[f].id == WZC_FMT_WZ && shown[f] && k < nf; k++)
			if (fmts[k].id == WZC_FMT_KVTC && shown[k] && fmts[k].rate_bits == fmts[f].rate_bits)
				out->kvtc_of[f] = k;
		for (int i = 0; out->kvtc_of[f] >= 0 && i < n; i++)
			wzc_compare_errors(run->cells[(size_t)i * nf + f].e,
					   run->cells[(size_t)i * nf + out->kvtc_of[f]].e, (int)rq->nboot,
					   (uint64_t)rq->seed, &out->kvtc_pair[(size_t)i * nf + f]);
	}
	for (int i = 0; i < n; i++)
		for (int f = 0; f < per; f++) {
			int sweep = f >= nf;
			wz_codec_measured *r = &out->rows[out->nrows++];
			*r = (wz_codec_measured){
				out->windows[i].name, out->windows[i].split,
				sweep ? out->iso_names[f - nf] : fmts[f].name, rq->paths[i],
				out->traces[i],
				sweep ? &run->sweep[(size_t)i * WZC_ISO_N + f - nf]
				      : &run->cells[(size_t)i * nf + f],
				&run->cells[(size_t)i * nf + has_fp8], sweep, 0, NULL, NULL
			};
			if (!sweep && f == out->head_wz)
				r->vs_headline = &out->headline[i];
			if (!sweep && out->kvtc_of[f] >= 0)
				r->vs_kvtc = &out->kvtc_pair[(size_t)i * nf + f];
			r->headline = !sweep && !shown[f] && (f == out->head_wz || f == out->head_ref);
			/* Only the listed formats (and the sweep, and in CSV and
			 * JSON the headline's) are shown. */
			if (sweep || shown[f] || r->headline)
				out->shown[out->nshown++] = *r;
		}
	return 0;
}

void wz_measure_result_free(wz_measure_result *r)
{
	wzc_run_free(r->run);
	for (int i = 0; r->traces && i < r->ntraces; i++)
		wzt_cache_trace_free(r->traces[i]);
	free(r->traces);
	free(r->windows);
	free(r->rows);
	free(r->shown);
	free(r->headline);
	free(r->kvtc_pair);
	wzc_profile_free(r->prof);
	wzc_kvtc_free(r->kvtc);
	memset(r, 0, sizeof *r);
}
