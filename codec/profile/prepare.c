/* `prepare`: the wz profile from calibration windows.  Per layer and part
 * it estimates mean and covariance, takes the covariance's eigenbasis (KLT)
 * as the orthogonal transform, weights components by the query statistics
 * when the windows hold queries, and records the per-token scale and the
 * distribution of standardized values that the level tables are fitted to
 * (one part's fit: codec/profile/prepare_fit.c).  Here: the options, the
 * windows as the fit sees them (rounded to bf16, RoPE undone), the
 * prediction of version 7 and the layers' jobs on every core. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/formats/baseline.h"
#include "codec/formats/fpconv.h"
#include "codec/first_fail.h"
#include "codec/cores.h"
#include "codec/profile/predict_fit.h"
#include "codec/profile/prepare_internal.h"
#include "codec/profile/profile.h"
#include "codec/profile/rope.h"

void wzc_prepare_opts_default(wzc_prepare_opts *o)
{
	/* All of the weight on the attention-score error, the error the
	 * quality metrics (attention KL, live next-token KL) measure.  It gave
	 * 2-6x lower live next-token KL than 0.5 on the project's own model's
	 * held-out 32k-token windows (1,024 query vectors a layer;
	 * docs/real-model.md), and lower attention KL and attention-output
	 * error on every synthetic family with queries, from 512 query vectors
	 * a layer and from as few as 16 (a 256-token calibration window):
	 * docs/wz-format.md, "Query weight".  What it costs is plain squared
	 * error (nmse), which it does not aim at: 0 plans by that alone. */
	o->query_weight = 1;
	/* Off by default: on unstructured (iid) caches the cap costs 1.5 dB
	 * of overall distortion (wzt8-5.44: 3.37 -> 4.90 dB from the bound)
	 * and 1.4x attention KL; on the real model's caches it never binds
	 * (their position part is already ~0.01x the int8 part's error). */
	o->position_cap = 0;
	o->rope_freq = NULL;
	o->rope_pairs = 0;
	o->rope_layers = NULL;
	o->predict = 0;
	o->threads = 0;
	o->progress = NULL;
	o->progress_ud = NULL;
}

/* The position cap of layer l (docs/wz-format.md, "Model"): the int8
 * position coder's mean squared error per calibration token, the sink
 * excluded as in the statistics.  -1 when out of memory. */
static double position_cap(const wzc_window *const *ws, int nw, int l)
{
	int P = ws[0]->P;
	uint8_t *code = malloc((size_t)P + 2);
	float *y = malloc(sizeof *y * (size_t)(P ? P : 1));
	double sum = 0, N = 0;
	if (!code || !y) {
		free(code);
		free(y);
		return -1;
	}
	for (int w = 0; w < nw; w++)
		for (int t = 0; t < ws[w]->T; t++) {
			if (wzc_prep_is_sink(ws[w], t))
				continue;
			sum += wzc_int8_sq_error(wzc_prep_row(ws[w], 1, l, t), P, code, y);
			N++;
		}
	free(code);
	free(y);
	return N > 0 ? sum / N : 0;
}

/* Copies of the windows with every token's position part rotated back by
 * its own position: what a profile that undoes RoPE is fitted to.  The
 * queries stay as cached (rope_query_moments turns them per key).  The
 * position arrays are one allocation each, freed by free_rotated. */
static void free_rotated(wzc_window *rw, int nw)
{
	for (int w = 0; rw && w < nw; w++)
		free((float *)rw[w].rope);
	free(rw);
}

/* The windows' cache values rounded to bf16, as every format codes them
 * (wzc_encode_layer_at): a serving stack's calibration cache is bf16 too,
 * and a profile fitted on the same values wz codes keeps, among others,
 * the attention sink's anchor equal to the sink wz meets. */
static void free_bf16(wzc_window *bw, int nw)
{
	for (int w = 0; bw && w < nw; w++) {
		free((float *)bw[w].latent);
		free((float *)bw[w].rope);
	}
	free(bw);
}

static wzc_window *bf16_windows(const wzc_window *const *ws, int nw)
{
	wzc_window *bw = calloc((size_t)nw, sizeof *bw);
	for (int w = 0; bw && w < nw; w++) {
		const wzc_window *s = ws[w];
		bw[w] = *s;
		size_t nl = (size_t)s->L * s->T * s->R, nr = (size_t)s->L * s->T * s->P;
		float *l = malloc(sizeof *l * (nl ? nl : 1)), *r = malloc(sizeof *r * (nr ? nr : 1));
		bw[w].latent = l;
		bw[w].rope = r;
		if (!l || !r) {
			free_bf16(bw, w + 1);
			return NULL;
		}
		for (size_t i = 0; i < nl; i++)
			l[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(s->latent[i]));
		for (size_t i = 0; i < nr; i++)
			r[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(s->rope[i]));
	}
	return bw;
}

static wzc_window *rotated_windows(const wzc_window *const *ws, int nw, const double *freq)
{
	wzc_window *rw = calloc((size_t)nw, sizeof *rw);
	for (int w = 0; rw && w < nw; w++) {
		const wzc_window *s = ws[w];
		rw[w] = *s;
		size_t nr = (size_t)s->L * s->T * s->P;
		float *r = malloc(sizeof *r * (nr ? nr : 1));
		rw[w].rope = r;
		if (!r) {
			free_rotated(rw, w + 1);
			return NULL;
		}
		memcpy(r, s->rope, sizeof *r * nr);
		for (int l = 0; l < s->L; l++)
			for (int t = 0; t < s->T; t++)
				wzc_rope_turn(r + ((size_t)l * s->T + t) * s->P, s->P,
					      s->positions ? s->positions[t] : t, freq, -1);
	}
	return rw;
}

/* What every layer's fit reads (read only) and the profile it writes
 * (layer l's arrays only), for prepare_layer on several threads. */
typedef struct {
	const wzc_window *const *ws, *const *rws;
	/* version 7: the rotated-back position parts, each layer's replaced
	 * by its cross-fitted residuals as it is fitted (pws[w].rope is
	 * res[w]) */
	const wzc_window *const *pws;
	float *const *res;
	int nw, queries;
	const wzc_prepare_opts *opts;
	wzc_profile *p;
	int next;              /* the next layer to take (atomic) */
	wzc_first_fail fail;   /* the lowest failing layer */
	int done;              /* layers fitted, under fail.lock, for opts->progress */
} layer_job;

static void layer_weights(wzc_profile *p, const wzc_prepare_opts *opts, int l, const double *qlat,
			  wzc_part_profile *pr, const double *qrope);

/* Version 7: layer l's prediction (docs/wz-format.md, "Predicted position
 * part").  The position part just fitted (rope[l], its query energies in
 * qrope) is what the anchored tokens' becomes; the map is fitted and the
 * position part fitted again, to the cross-fitted residuals.  The layer
 * predicts when asked for every layer (predict 2), or (predict 1) when
 * the residual is cheaper to code than the part on the calibration
 * tokens (wzc_pred_gain_of > 0: the geometric mean of its variances
 * lower); otherwise it stays as it was.  qrope gets the residual's query
 * energies when it predicts. */
static wz_err prepare_prediction(const layer_job *j, int l, double *qlat, double *qrope,
				 wz_diag *diag)
{
	wzc_profile *p = j->p;
	int R = p->R, P = p->P;
	float *map = malloc(sizeof *map * (size_t)R * (size_t)P);
	double *qres = malloc(sizeof *qres * (size_t)(P + 1)), alpha;
	wzc_part_profile res = { 0 };
	if (!map || !qres || wzc_part_alloc(&res, P) ||
	    wzc_pred_fit(j->ws, j->rws, j->nw, l, p->latent[l].mean, map, j->res, &alpha)) {
		free(map);
		free(qres);
		wzc_part_free(&res);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	wz_err e = wzc_prepare_fit_part(j->pws, j->nw, l, 1, 1, j->opts->rope_freq, &res,
			    j->queries ? qres : NULL, diag);
	double gain = e ? 0 : wzc_pred_gain_of(p->rope[l].var, res.var, P);
	if (e || !(j->opts->predict == 2 || (j->opts->predict == 1 && gain > 0))) {
		free(map);
		free(qres);
		wzc_part_free(&res);
		return e;
	}
	p->rope_plain[l] = p->rope[l];
	p->rope[l] = res;
	p->pred_map[l] = map;
	p->predicts[l] = 1;
	/* the anchored tokens' weights, with the latent's, from their own
	 * statistics; the layer's own (the latent's and the residual's)
	 * follow in prepare_layer */
	layer_weights(p, j->opts, l, qlat, &p->rope_plain[l], qrope);
	if (j->queries)
		memcpy(qrope, qres, sizeof *qres * (size_t)P);
	free(qres);
	return WZ_OK;
}

/* Layer l of the profile: both parts' statistics, the position cap, the
 * distortion weights.  qlat [R] and qrope [P + 1] are the caller's
 * scratch. */
static wz_err prepare_layer(const layer_job *j, int l, double *qlat, double *qrope, wz_diag *diag)
{
	const wzc_window *const *ws = j->ws, *const *rws = j->rws;
	int nw = j->nw, queries = j->queries;
	const wzc_prepare_opts *opts = j->opts;
	wzc_profile *p = j->p;
	wz_err e = wzc_prepare_fit_part(ws, nw, l, 0, 1, NULL, &p->latent[l], queries ? qlat : NULL, diag);
	int undo_l = wzc_profile_undoes_rope(p, l);
	if (!e)
		e = wzc_prepare_fit_part(undo_l ? rws : ws, nw, l, 1, undo_l, undo_l ? opts->rope_freq : NULL,
			     &p->rope[l], queries && p->P ? qrope : NULL, diag);
	if (!e && p->predicts && undo_l && p->P > 0)
		e = prepare_prediction(j, l, qlat, qrope, diag);
	if (e)
		return e;
	if (opts->position_cap && p->P > 0) {
		double cap = position_cap(ws, nw, l);
		if (cap < 0)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		p->pos_cap[l] = (float)cap;
	}
	/* Weights blend two relative objectives: a plain squared error and
	 * the expected squared attention-score error over the score
	 * variance (weight q_k^2 / sum q^2 var, unit-free).  Each part's
	 * plain error counts relative to that part's energy, and the parts
	 * are weighted by their shares of the score variance: so scaling a
	 * layer's latent (with its queries scaled back, the logits the
	 * same) leaves every weight * variance, hence the plan, unchanged
	 * (issue 10: with one energy over both parts, a latent 50x smaller
	 * than usual lost its bits to the position part).  Without queries
	 * there are no shares to use, and the plain term is the layer's
	 * squared error over its energy.  Scaled to mean 1 (only ratios
	 * matter). */
	layer_weights(p, opts, l, qlat, &p->rope[l], qrope);
	return WZ_OK;
}

/* The distortion weights of layer l's latent and of a position part pr
 * (the profile's, or version 7's anchored tokens'), from the query
 * energies qlat [R] and qrope [P] of each. */
static void layer_weights(wzc_profile *p, const wzc_prepare_opts *opts, int l, const double *qlat,
			  wzc_part_profile *pr, const double *qrope)
{
	double a = p->query_weighted ? opts->query_weight : 0;
	double ev[2] = { 0, 0 }, eqp[2] = { 0, 0 };
	for (int k = 0; k < p->R; k++) {
		ev[0] += p->latent[l].var[k];
		eqp[0] += p->query_weighted ? qlat[k] * p->latent[l].var[k] : 0;
	}
	for (int k = 0; k < p->P; k++) {
		ev[1] += pr->var[k];
		eqp[1] += p->query_weighted ? qrope[k] * pr->var[k] : 0;
	}
	double eq = eqp[0] + eqp[1], evall = ev[0] + ev[1];
	int shares = p->query_weighted && eq > 0;
	if (!(eq > 0))
		a = 0;
	double mw = 0;
	for (int k = 0; k < p->R + p->P; k++) {
		int part = k >= p->R;
		double q = a > 0 ? (part ? qrope[k - p->R] : qlat[k]) : 0;
		double plain = shares ? (ev[part] > 0 ? eqp[part] / eq / ev[part] : 0)
				      : (evall > 0 ? 1 / evall : 1);
		double wk = (1 - a) * plain + (a > 0 ? a * q / eq : 0);
		if (k < p->R)
			p->latent[l].weight[k] = (float)wk;
		else
			pr->weight[k - p->R] = (float)wk;
		mw += wk;
	}
	mw /= (p->R + p->P);
	for (int k = 0; mw > 0 && k < p->R; k++)
		p->latent[l].weight[k] = (float)(p->latent[l].weight[k] / mw);
	for (int k = 0; mw > 0 && k < p->P; k++)
		pr->weight[k] = (float)(pr->weight[k] / mw);
}

/* Layers are taken in turn from a counter; each is fitted alone, so the
 * profile is the same on any number of threads, and of several failing
 * layers the lowest is reported (the layers above it are not fitted). */
static void *layer_worker(void *arg)
{
	layer_job *j = arg;
	double *qlat = malloc(sizeof(double) * (size_t)(j->p->R + 1));
	double *qrope = malloc(sizeof(double) * (size_t)(j->p->P + 1));
	for (;;) {
		int l = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (l >= j->p->L || l > wzc_first_fail_at(&j->fail))
			break;
		wz_diag d;
		wz_err e = qlat && qrope ? prepare_layer(j, l, qlat, qrope, &d)
					 : wz_diag_set(&d, WZ_ERR_NOMEM, "out of memory");
		if (e)
			wzc_first_fail_note(&j->fail, l, e, &d);
		else if (j->opts->progress) {
			pthread_mutex_lock(&j->fail.lock);
			j->opts->progress(j->opts->progress_ud, ++j->done, j->p->L);
			pthread_mutex_unlock(&j->fail.lock);
		}
	}
	free(qlat);
	free(qrope);
	return NULL;
}

wz_err wzc_prepare(const wzc_window *const *ws, int nw, const wzc_prepare_opts *opts,
		   wzc_profile **out, wz_diag *diag)
{
	wzc_prepare_opts defaults;
	*out = NULL;
	if (!opts) {
		wzc_prepare_opts_default(&defaults);
		opts = &defaults;
	}
	if (nw < 1)
		return wz_diag_set(diag, WZ_ERR_USAGE, "prepare needs at least one calibration window");
	/* Refuse before reading any value: test windows must never inform the
	 * profile. */
	for (int w = 0; w < nw; w++) {
		const char *name = ws[w]->name ? ws[w]->name : "window";
		if (!ws[w]->split || strcmp(ws[w]->split, "calibration") != 0)
			return wz_diag_set(diag, WZ_ERR_REFUSED,
					   "%s: split is '%s'; prepare reads calibration windows only",
					   name, ws[w]->split ? ws[w]->split : "(none)");
	}
	const wzc_window *w0 = ws[0];
	int queries = 1;
	for (int w = 0; w < nw; w++) {
		const wzc_window *w1 = ws[w];
		const char *name = w1->name ? w1->name : "window";
		if (w1->L != w0->L || w1->R != w0->R || w1->P != w0->P || w1->T < 1)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: shape %d x %d x (%d + %d) differs from the first window's",
					   name, w1->L, w1->T, w1->R, w1->P);
		const char *m0 = w0->model ? w0->model : "", *m1 = w1->model ? w1->model : "";
		if (strcmp(m0, m1) != 0)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: model '%s' differs from the first window's '%s'", name,
					   m1, m0);
		if (!(w1->Q > 0 && w1->H > 0 && w1->q_latent && (w1->q_rope || w1->P == 0)))
			queries = 0;
	}
	if (w0->model && strlen(w0->model) > WZC_MODEL_MAX)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: model: a name longer than %d bytes",
				   w0->name ? w0->name : "window", WZC_MODEL_MAX);
	int undo = 0;
	if (opts->rope_freq) {
		if (opts->rope_pairs != w0->P / 2)
			return wz_diag_set(diag, WZ_ERR_USAGE,
					   "%d RoPE frequencies for a position part of %d values (%d pairs)",
					   opts->rope_pairs, w0->P, w0->P / 2);
		for (int i = 0; i < opts->rope_pairs; i++) {
			if (!(isfinite(opts->rope_freq[i]) && opts->rope_freq[i] >= 0))
				return wz_diag_set(diag, WZ_ERR_USAGE,
						   "RoPE frequency %d is %g: not a finite number >= 0", i,
						   opts->rope_freq[i]);
			undo |= opts->rope_freq[i] != 0;
		}
		int any = !opts->rope_layers;
		for (int l = 0; !any && l < w0->L; l++)
			any = opts->rope_layers[l] != 0;
		undo = undo && any; /* no layer asked: a plain profile */
		if (undo && w0->P % 2)
			return wz_diag_set(diag, WZ_ERR_USAGE,
					   "a position part of %d values: RoPE turns pairs, so undoing it "
					   "needs an even width",
					   w0->P);
	}
	wzc_window *bw = bf16_windows(ws, nw);
	const wzc_window **bws = malloc(sizeof *bws * (size_t)nw);
	if (!bw || !bws) {
		free_bf16(bw, nw);
		free(bws);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (int w = 0; w < nw; w++)
		bws[w] = &bw[w];
	ws = bws;
	wzc_profile *p = wzc_profile_alloc(w0->L, w0->R, w0->P);
	wzc_window *rw = undo ? rotated_windows(ws, nw, opts->rope_freq) : NULL;
	const wzc_window **rws = undo ? malloc(sizeof *rws * (size_t)nw) : NULL;
	size_t npair = (size_t)(w0->P / 2);
	if (p && undo)
		p->rope_freq = malloc(sizeof *p->rope_freq * (size_t)w0->L * (npair ? npair : 1));
	if (!p || (undo && (!rw || !rws || !p->rope_freq))) {
		wzc_profile_free(p);
		free_rotated(rw, nw);
		free(rws);
		free_bf16(bw, nw);
		free(bws);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (int w = 0; undo && w < nw; w++)
		rws[w] = &rw[w];
	if (undo) {
		/* the layers left as cached keep frequencies 0 */
		p->version = WZC_PROFILE_VERSION_ROPE;
		for (int l = 0; l < w0->L; l++)
			for (size_t i = 0; i < npair; i++)
				p->rope_freq[(size_t)l * npair + i] =
					!opts->rope_layers || opts->rope_layers[l] ? opts->rope_freq[i] : 0;
	}
	/* version 7: the residual windows, and the arrays of the prediction */
	int predict = undo && opts->predict > 0 && w0->P > 0;
	wzc_window *pw = predict ? rotated_windows(ws, nw, opts->rope_freq) : NULL;
	const wzc_window **pws = predict ? malloc(sizeof *pws * (size_t)nw) : NULL;
	float **res = predict ? malloc(sizeof *res * (size_t)nw) : NULL;
	if (predict && (!pw || !pws || !res || wzc_profile_pred_alloc(p))) {
		wzc_profile_free(p);
		free_rotated(rw, nw);
		free(rws);
		free_rotated(pw, nw);
		free(pws);
		free(res);
		free_bf16(bw, nw);
		free(bws);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (int w = 0; predict && w < nw; w++) {
		pws[w] = &pw[w];
		res[w] = (float *)pw[w].rope;
	}
	snprintf(p->model, sizeof p->model, "%s", w0->model ? w0->model : "");
	p->query_weighted = queries && opts->query_weight > 0;
	for (int w = 0; w < nw; w++)
		p->ntokens += (uint64_t)ws[w]->T;
	layer_job job = { .ws = ws, .rws = rws, .pws = pws, .res = res, .nw = nw, .queries = queries,
			  .opts = opts, .p = p };
	wz_err e = WZ_OK;
	if (wzc_first_fail_init(&job.fail, p->L)) {
		e = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	} else {
		enum { MAX_FITTERS = 256 };
		int nt = opts->threads > 0 ? opts->threads : wzc_cores();
		nt = nt > p->L ? p->L : nt > MAX_FITTERS ? MAX_FITTERS : nt;
		pthread_t tid[MAX_FITTERS];
		int started = 0;
		/* fewer threads than asked is only slower */
		for (int t = 1; t < nt && !pthread_create(&tid[started], NULL, layer_worker, &job); t++)
			started++;
		layer_worker(&job);
		for (int t = 0; t < started; t++)
			pthread_join(tid[t], NULL);
		e = wzc_first_fail_done(&job.fail, p->L, diag);
	}
	free_rotated(rw, nw);
	free(rws);
	free_rotated(pw, nw);
	free(pws);
	free(res);
	free_bf16(bw, nw);
	free(bws);
	if (e) {
		wzc_profile_free(p);
		return e;
	}
	/* version 7 only where some layer predicts; else as before */
	int any = 0;
	for (int l = 0; predict && l < p->L; l++)
		any |= p->predicts[l];
	if (any) {
		p->version = 7;
	} else if (p->predicts) {
		free(p->predicts);
		free(p->rope_plain);
		free(p->pred_map);
		p->predicts = NULL;
		p->rope_plain = NULL;
		p->pred_map = NULL;
	}
	*out = p;
	return WZ_OK;
}
