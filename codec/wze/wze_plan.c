/* The wze plan (docs/wze-format.md, "Tables"): per layer, each
 * component's step and class from the profile's variances and weights,
 * and per part and class the symbol frequencies, costs and
 * reconstruction points from the part's histogram.  Everything is
 * derived in a fixed order of IEEE operations without libm beyond sqrt,
 * so encoder and decoder derive the same tables on any machine. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/wze/wze.h"

#define BINS WZC_HIST_BINS
#define BIN_W (2.0 * WZC_HIST_RANGE / WZC_HIST_BINS)

/* rho_j = 2^(j/16) in double. */
static double class_rho(int j)
{
	return (double)wze_pow2_32(2 * j);
}

/* round(32 log2 x) for x > 0 without libm's log2: the octave from frexp,
 * the thirty-second by comparison with the geometric midpoints of the
 * steps 2^(i/32) of wze_pow2_32. */
static int class_of(double x)
{
	int e;
	double m = 2 * frexp(x, &e); /* x = m 2^(e - 1), m in [1, 2) */
	int i = 0;
	while (i < 32) {
		double hi = i < 31 ? (double)wze_pow2_32(i + 1) : 2.0;
		if (!(m >= sqrt((double)wze_pow2_32(i) * hi)))
			break;
		i++;
	}
	return 32 * (e - 1) + i;
}

/* The part's histogram as the distribution of a unit-variance value u:
 * the bins' probabilities, their prefix sums, the prefix of probability x
 * bin centre, and the scale sh (z = u sh). */
typedef struct {
	const float *p;
	double *cdf, *m1, sh;
} hist_model;

static int hist_model_init(hist_model *h, const float *p)
{
	h->p = p;
	h->cdf = malloc(sizeof(double) * (BINS + 1));
	h->m1 = malloc(sizeof(double) * (BINS + 1));
	if (!h->cdf || !h->m1)
		return -1;
	double c = 0, m = 0, v = 0, tot = 0;
	h->cdf[0] = h->m1[0] = 0;
	for (int b = 0; b < BINS; b++) {
		double pb = p[b] > 0 ? p[b] : 0, z = -WZC_HIST_RANGE + (b + 0.5) * BIN_W;
		c += pb;
		m += pb * z;
		v += pb * (z * z + BIN_W * BIN_W / 12);
		h->cdf[b + 1] = c;
		h->m1[b + 1] = m;
	}
	tot = c > 0 ? c : 1;
	for (int b = 0; b <= BINS; b++) {
		h->cdf[b] /= tot;
		h->m1[b] /= tot;
	}
	v /= tot;
	/* the histogram is of the values over the token's scale and the
	 * component's sigma: cells are in its own units */
	(void)v;
	h->sh = 1;
	return 0;
}

static void hist_model_free(hist_model *h)
{
	free(h->cdf);
	free(h->m1);
}

/* Probability and first moment (in z) of z < t, mass uniform within a bin. */
static void below(const hist_model *h, double t, double *P, double *M)
{
	double f = (t + WZC_HIST_RANGE) / BIN_W;
	if (!(f > 0)) {
		*P = *M = 0;
		return;
	}
	if (f >= BINS) {
		*P = h->cdf[BINS];
		*M = h->m1[BINS];
		return;
	}
	int b = (int)f;
	double fr = f - b, lo = -WZC_HIST_RANGE + b * BIN_W;
	double pb = h->cdf[b + 1] - h->cdf[b];
	*P = h->cdf[b] + fr * pb;
	*M = h->m1[b] + fr * pb * (lo + 0.5 * fr * BIN_W);
}

/* The symbols of class j: K, and for each symbol its frequency out of
 * 2^16, its cost and its reconstruction point in cells.  0, or -1 when
 * out of memory. */
static int class_k(const hist_model *h, int j)
{
	double kf = WZC_HIST_RANGE / h->sh / class_rho(j) + 0.5;
	int K = kf < 1 ? 1 : kf > 4096 ? 4096 : (int)ceil(kf);
	return K;
}

static int class_table(const hist_model *h, int j, int K, uint32_t *cum, float *recon,
		       uint16_t *cost)
{
	int n = 2 * K + 1;
	double rho = class_rho(j), *pr = malloc(sizeof(double) * (size_t)n);
	if (!pr)
		return -1;
	double P0 = 0, M0 = 0;
	int best = 0;
	for (int s = 0; s < n; s++) {
		int q = s - K;
		double P1, M1;
		if (s == n - 1) {
			P1 = h->cdf[BINS];
			M1 = h->m1[BINS];
		} else {
			below(h, (q + 0.5) * rho * h->sh, &P1, &M1);
		}
		double mass = P1 - P0, mom = M1 - M0;
		pr[s] = mass > 0 ? mass : 0;
		/* the centroid of the cell, in cells; the cell's centre where it
		 * holds no mass (or the edge cells' centroid strays outside) */
		double c = mass > 1e-300 ? mom / mass / h->sh / rho : q;
		int inside = (s == 0 || c >= q - 0.5) && (s == n - 1 || c <= q + 0.5);
		recon[s] = (float)(inside && isfinite(c) ? c : q);
		if (pr[s] > pr[best])
			best = s;
		P0 = P1;
		M0 = M1;
	}
	uint32_t avail = (1u << WZE_PROB_BITS) - (uint32_t)n, sum = 0;
	uint32_t *f = cum + 1;
	for (int s = 0; s < n; s++) {
		double x = pr[s] * avail;
		f[s] = 1 + (uint32_t)(x < avail ? x : avail);
		sum += f[s];
	}
	/* the rounding's remainder (or excess) to the likeliest symbol */
	f[best] += (1u << WZE_PROB_BITS) - sum;
	for (int s = 0; s < n; s++) {
		double bits = -log2((double)f[s] / (1u << WZE_PROB_BITS));
		cost[s] = (uint16_t)(bits * 256 + 0.5);
	}
	cum[0] = 0;
	for (int s = 0; s < n; s++)
		cum[s + 1] = cum[s] + f[s];
	free(pr);
	return 0;
}

/* A table's slot table: for each bucket of 2^(16 - WZE_LUT_BITS) slots
 * the symbol holding its first slot, then the last symbol. */
static void slot_table(const uint32_t *cum, int n, uint16_t *lut)
{
	int s = 0;
	for (int b = 0; b < WZE_LUT_N; b++) {
		uint32_t slot = (uint32_t)b << (WZE_PROB_BITS - WZE_LUT_BITS);
		while (cum[s + 1] <= slot)
			s++;
		lut[b] = (uint16_t)s;
	}
	lut[WZE_LUT_N] = (uint16_t)(n - 1);
}

/* The entries of one table set (m from cls) in the order of their
 * classes, by insertion (once a plan): the fast encoder's order. */
static void class_order(const int16_t *cls, int m, int32_t *order)
{
	for (int i = 0; i < m; i++) {
		int j = i;
		for (; j > 0 && cls[order[j - 1]] > cls[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
}

static void layer_free(wzc_wze_layer *ly)
{
	free(ly->order);
	free(ly->lut);
	free(ly->cum);
	free(ly->recon);
	free(ly->cost);
	free(ly->cstep);
	free(ly->cls);
	free(ly->delta);
	free(ly->wgt);
	free(ly->mp);
}

static wz_err plan_layer(const wzc_profile *pr, int l, wzc_wze_layer *ly, wz_diag *diag)
{
	int pred = wzc_profile_predicts(pr, l);
	const wzc_part_profile *parts[3] = { &pr->latent[l], &pr->rope[l],
					     pred ? &pr->rope_plain[l] : &pr->rope[l] };
	int R = pr->R, P = pr->P, n = R + P + (pred ? P : 0), nsets = pred ? 3 : 2;
	hist_model hm[3] = { { 0 }, { 0 }, { 0 } };
	size_t ncum = 0, nrec = 0;
	ly->predicts = pred;
	for (int p = 0; p < nsets; p++) {
		if (hist_model_init(&hm[p], parts[p]->hist))
			goto nomem;
		for (int j = WZE_JLO; j <= WZE_JHI; j++) {
			int K = class_k(&hm[p], j), c = p * WZE_NCLASS + j - WZE_JLO;
			ly->tab_k[c] = (uint16_t)K;
			ly->tab_off[c] = (uint32_t)ncum;
			ly->rec_off[c] = (uint32_t)nrec;
			ncum += 2 * (size_t)K + 2;
			nrec += 2 * (size_t)K + 1;
		}
	}
	ly->ncum = ncum;
	ly->nrec = nrec;
	ly->nent = (size_t)n;
	ly->cum = malloc(sizeof *ly->cum * ncum);
	ly->recon = malloc(sizeof *ly->recon * nrec);
	ly->cost = malloc(sizeof *ly->cost * nrec);
	ly->lut = malloc(sizeof *ly->lut * (WZE_LUT_N + 1) * WZE_NCLASS * (size_t)nsets);
	ly->cstep = malloc(sizeof *ly->cstep * (size_t)n);
	ly->cls = malloc(sizeof *ly->cls * (size_t)n);
	ly->delta = malloc(sizeof *ly->delta * (size_t)n);
	ly->wgt = malloc(sizeof *ly->wgt * (size_t)n);
	if (!ly->cum || !ly->recon || !ly->cost || !ly->lut || !ly->cstep || !ly->cls || !ly->delta || !ly->wgt)
		goto nomem;
	for (int p = 0; p < nsets; p++)
		for (int j = WZE_JLO; j <= WZE_JHI; j++) {
			int c = p * WZE_NCLASS + j - WZE_JLO;
			if (class_table(&hm[p], j, ly->tab_k[c], ly->cum + ly->tab_off[c],
					ly->recon + ly->rec_off[c], ly->cost + ly->rec_off[c]))
				goto nomem;
			slot_table(ly->cum + ly->tab_off[c], 2 * ly->tab_k[c] + 1,
				   ly->lut + (size_t)c * (WZE_LUT_N + 1));
			const uint16_t *cost = ly->cost + ly->rec_off[c];
			ly->cost_min[c] = ly->cost_max[c] = cost[0];
			for (int i = 1; i < 2 * ly->tab_k[c] + 1; i++) {
				ly->cost_min[c] = cost[i] < ly->cost_min[c] ? cost[i] : ly->cost_min[c];
				ly->cost_max[c] = cost[i] > ly->cost_max[c] ? cost[i] : ly->cost_max[c];
			}
		}
	/* the layer's weighted RMS: the unit of the step codes (over the
	 * latent and the position part as coded, the residual where the
	 * layer predicts) */
	double acc = 0;
	for (int k = 0; k < R + P; k++) {
		const wzc_part_profile *pp = parts[k >= R];
		int i = k >= R ? k - R : k;
		double w = pp->weight[i], v = pp->var[i];
		if (w > 0 && v > 0 && isfinite(w) && isfinite(v))
			acc += w * v;
	}
	ly->dref = (float)sqrt(acc / (R + P));
	ly->scale_ref[0] = parts[0]->scale_ref;
	ly->scale_ref[1] = parts[1]->scale_ref;
	ly->scale_ref[2] = parts[2]->scale_ref;
	if (!(ly->dref > 0) || !isfinite(ly->dref))
		ly->dref = 1;
	for (int k = 0; k < n; k++) {
		const wzc_part_profile *pp = parts[k < R ? 0 : k < R + P ? 1 : 2];
		int i = k < R ? k : k < R + P ? k - R : k - R - P;
		double w = pp->weight[i], v = pp->var[i];
		ly->wgt[k] = w > 0 && isfinite(w) ? (float)w : 0;
		if (!(w > 0 && v > 0 && isfinite(w) && isfinite(v))) {
			ly->cstep[k] = 0;
			ly->cls[k] = WZE_CLS_NEVER;
			continue;
		}
		ly->cstep[k] = (float)((double)ly->dref / sqrt(w));
		/* the class at code WZE_S0 and scale code 128: the step over
		 * the component's sigma at the reference scale */
		double sg = (double)pp->sigma[i] * pp->scale_ref;
		if (!(sg > 0) || !isfinite(sg)) {
			ly->cstep[k] = 0;
			ly->cls[k] = WZE_CLS_NEVER;
			continue;
		}
		int o = class_of((double)ly->cstep[k] / sg);
		ly->cls[k] = (int16_t)(o < -20000 ? -20000 : o > 20000 ? 20000 : o);
	}
	ly->order = malloc(sizeof *ly->order * (size_t)n);
	if (!ly->order)
		goto nomem;
	for (int p = 0; p < nsets; p++) {
		int k0 = p == 0 ? 0 : p == 1 ? R : R + P;
		class_order(ly->cls + k0, p ? P : R, ly->order + k0);
	}
	/* the anchor's coefficients, less the mean's */
	for (int p = 0; p < nsets; p++) {
		const wzc_part_profile *pp = parts[p];
		for (int k = 0; k < pp->n; k++) {
			double s = 0;
			for (int i = 0; i < pp->n; i++)
				s += (double)pp->basis[(size_t)k * pp->n + i] *
				     ((double)pp->anchor[i] - pp->mean[i]);
			ly->delta[(p == 0 ? 0 : p == 1 ? R : R + P) + k] = (float)s;
		}
	}
	/* the prediction's map through the latent's basis (the encoder's
	 * search alone uses it: the decoder predicts from decoded values) */
	if (pred) {
		const float *B = parts[0]->basis, *map = pr->pred_map[l];
		ly->mp = malloc(sizeof *ly->mp * (size_t)R * P);
		if (!ly->mp)
			goto nomem;
		for (int k = 0; k < R; k++)
			for (int i = 0; i < P; i++) {
				double s = 0;
				for (int j = 0; j < R; j++)
					s += (double)B[(size_t)k * R + j] * map[(size_t)j * P + i];
				ly->mp[(size_t)k * P + i] = (float)s;
			}
	}
	for (int p = 0; p < 3; p++)
		hist_model_free(&hm[p]);
	ly->ready = 1;
	return WZ_OK;
nomem:
	for (int p = 0; p < 3; p++)
		hist_model_free(&hm[p]);
	return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (wze tables of layer %d)", l);
}

wz_err wzc_wze_plan_new(const wzc_profile *profile, size_t record_bytes, wzc_wze_plan **out,
			wz_diag *diag)
{
	*out = NULL;
	if (record_bytes < WZE_MIN_BYTES)
		return wz_diag_set(diag, WZ_ERR_RANGE,
				   "a wze record needs at least %d bytes (the coder's state and the "
				   "step code), this rate gives %zu",
				   WZE_MIN_BYTES, record_bytes);
	wzc_wze_plan *pl = calloc(1, sizeof *pl);
	if (!pl)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	pl->profile = profile;
	pl->L = profile->L;
	pl->R = profile->R;
	pl->P = profile->P;
	pl->record_bytes = record_bytes;
	pl->layers = calloc((size_t)pl->L, sizeof *pl->layers);
	if (!pl->layers) {
		free(pl);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (int l = 0; l < pl->L; l++) {
		if (!wzc_profile_has_layer(profile, l))
			continue;
		wz_err e = plan_layer(profile, l, &pl->layers[l], diag);
		if (e) {
			wzc_wze_plan_free(pl);
			return e;
		}
	}
	*out = pl;
	return WZ_OK;
}

void wzc_wze_plan_free(wzc_wze_plan *pl)
{
	if (!pl)
		return;
	for (int l = 0; pl->layers && l < pl->L; l++)
		layer_free(&pl->layers[l]);
	free(pl->layers);
	free(pl);
}

wze_layer_view wzc_wze_view(const wzc_wze_plan *pl, int l)
{
	const wzc_wze_layer *ly = &pl->layers[l];
	wze_layer_view v = { ly->tab_off, ly->rec_off, ly->tab_k, ly->cum, ly->recon,
			     ly->cstep, ly->cls, ly->delta, pl->R, pl->P, ly->predicts };
	return v;
}

void wzc_wze_view_sizes(const wzc_wze_plan *pl, int l, size_t *ncum, size_t *nrec, size_t *nent)
{
	const wzc_wze_layer *ly = &pl->layers[l];
	*ncum = ly->ncum;
	*nrec = ly->nrec;
	*nent = ly->nent;
}
