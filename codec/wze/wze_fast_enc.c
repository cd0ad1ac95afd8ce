/* wze's fast encoder (docs/wze-format.md, "Speed"): the reference's
 * records byte for byte (the same step search, the same step code chosen)
 * with the work of each try cut: the step's gain once a try rather than
 * once a component, the latent's symbols at a code kept for the tries
 * that follow at the same code, the stream that last fit kept rather than
 * coded again, and the transforms vectorised over blocks of tokens, each
 * output the reference's chain of operations. */
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/profile/predict.h"
#include "codec/wze/wze.h"
#include "codec/wze/wze_enc.h"

/* Tokens a block of the latent's forward transform: their centred
 * values (ENC_BLOCK x R floats) stay in the second-level cache while the
 * basis streams past once a block. */
#define ENC_BLOCK 32

/* Eight floats, one vector register where the clone has 256-bit ones:
 * element-wise products and sums, the same in each element as a float's. */
typedef float v8f __attribute__((vector_size(32)));
/* the same, at any float's address, read as floats are */
typedef float v8f_u __attribute__((vector_size(32), aligned(4), may_alias));
#define load8(p) (*(const v8f_u *)(const void *)(p))

/* The eight partial sums a row's product with a centred token leaves,
 * added in pairs (wze_forward's last step). */
static inline float sum8(v8f s)
{
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* y[t] = basis (x[t] - mean) for nt tokens: wze_forward's operations
 * (eight partial sums a row, added in pairs) for each token, four tokens
 * at a time so that four chains of sums run side by side. */
WZ_HOT WZ_VEC_CLONES static void forward_block(const wzc_part_profile *pp, int nt, const float *x,
					       size_t xstride, float *y, size_t ystride, float *xc)
{
	int n = pp->n;
	for (int t = 0; t < nt; t++)
		for (int i = 0; i < n; i++)
			xc[(size_t)t * n + i] = x[(size_t)t * xstride + i] - pp->mean[i];
	for (int k = 0; k < n; k++) {
		const float *b = pp->basis + (size_t)k * n;
		for (int t = 0; t < nt; t += 4) {
			int m = nt - t < 4 ? nt - t : 4;
			const float *xt[4];
			for (int u = 0; u < 4; u++)
				xt[u] = xc + (size_t)(t + (u < m ? u : 0)) * n;
			v8f s0 = { 0 }, s1 = { 0 }, s2 = { 0 }, s3 = { 0 };
			int i = 0;
			for (; i + 8 <= n; i += 8) {
				v8f bi = load8(b + i);
				s0 += bi * load8(xt[0] + i);
				s1 += bi * load8(xt[1] + i);
				s2 += bi * load8(xt[2] + i);
				s3 += bi * load8(xt[3] + i);
			}
			for (; i < n; i++) {
				s0[i & 7] += b[i] * xt[0][i];
				s1[i & 7] += b[i] * xt[1][i];
				s2[i & 7] += b[i] * xt[2][i];
				s3[i & 7] += b[i] * xt[3][i];
			}
			v8f sv[4] = { s0, s1, s2, s3 };
			for (int u = 0; u < m; u++)
				y[(size_t)(t + u) * ystride + k] = sum8(sv[u]);
		}
	}
}

/* wze_inverse, vectorised (the same chain for each output). */
WZ_HOT WZ_VEC_CLONES static void inverse_vec(const wzc_part_profile *pp, const float *y, float *x,
					     float *acc)
{
	wze_inverse(pp, y, x, acc);
}

/* acc[i] += v * m[i] in double, i < P: one step of the prediction through
 * the latent's basis, as the reference's (no sum reordered). */
WZ_HOT WZ_VEC_CLONES static void axpy_d(double *acc, double v, const float *m, int P)
{
	for (int i = 0; i < P; i++)
		acc[i] += v * m[i];
}

/* A table set's entries in the order of their classes (cls, the plan's
 * order): at any
 * code and scale code, those coded with low bits come first, then those
 * of the tables, then those not coded (wze_class grows with cls; an entry
 * never coded has the greatest). */
typedef struct {
	int kk0, n;         /* the set's first entry in the per-component arrays, its count */
	const int32_t *idx; /* [n] entries from kk0 (the plan's order) */
} class_order;

/* A token's state beside the shared one: the latent's symbols at code
 * ls (-1: none yet), the position part's of the last stream, and two
 * stream buffers, the one that last fit (at code fit_s) and the next. */
typedef struct {
	wze_tok t;
	wze_sym *lsym, *psym;
	double *ratio; /* [R + P] scratch */
	int ls, fit_s;
	long fit_len;
	uint8_t *buf[2]; /* buf[0]: the last stream that fit */
	class_order order[3];
	/* each set's classes and steps in its class order, and a part's
	 * values in that order (scratch) */
	int32_t *scls[3];
	float *scstep[3], *ys;
} fast_tok;

/* t[i] = wze_ratio(y[i], cstep[i] g), i < n: what one part's quantizers
 * round at one code, the divisions side by side. */
WZ_HOT WZ_VEC_CLONES static void part_ratios(const float *cstep, float g, const float *y, int n,
					     double *t)
{
	for (int i = 0; i < n; i++)
		t[i] = wze_ratio(y[i], cstep[i] * g);
}

/* wze_quantize for a part's components, y (the part's) in table set
 * `set`, at code s (gain g) and scale code c0, by class order: a loop for
 * those with low bits, one for those of the tables, one for the rest,
 * each without a branch that goes one way or the other by component. */
WZ_HOT WZ_VEC_CLONES static void part_symbols(const fast_tok *f, int set, int s, float g, int c0,
					      const float *y,
			 wze_sym *out)
{
	const wzc_wze_layer *ly = f->t.ly;
	const class_order *o = &f->order[set];
	const int16_t *cls = ly->cls + o->kk0;
	double *t = f->ratio;
	int i = 0;
	if (c0) {
		part_ratios(ly->cstep + o->kk0, g, y, o->n, t);
		for (; i < o->n; i++) {
			int e = o->idx[i], j = wze_class(cls[e], s, c0);
			if (j >= WZE_JLO)
				break;
			out[e] = wze_quantize_ratio(ly, set, j, t[e]);
		}
		for (; i < o->n; i++) {
			int e = o->idx[i], j = wze_class(cls[e], s, c0);
			if (j > WZE_JHI)
				break;
			out[e] = wze_quantize_ratio(ly, set, j, t[e]);
		}
	}
	for (; i < o->n; i++)
		out[o->idx[i]] = (wze_sym){ 0, 0, 0, 0, 0 };
}

static void latent_symbols(fast_tok *f, int s, float g)
{
	if (f->ls == s)
		return;
	part_symbols(f, 0, s, g, f->t.code[0], f->t.y, f->lsym);
	f->ls = s;
}

/* The reference's residual_at: the position coefficients at code s from
 * the prediction of the dequantized latent. */
static void residual_at(fast_tok *f, int s, float g)
{
	wze_tok *t = &f->t;
	const wzc_wze_layer *ly = t->ly;
	int R = t->pl->R, P = t->pl->P;
	latent_symbols(f, s, g);
	for (int i = 0; i < P; i++)
		t->acc[i] = 0;
	for (int k = 0; k < R; k++) {
		float v = wze_dequantize(ly, k, 0, g, f->lsym[k]);
		if (v != 0)
			axpy_d(t->acc, (double)v, ly->mp + (size_t)k * P, P);
	}
	for (int i = 0; i < P; i++)
		t->r[i] = (float)((double)t->xpos[i] - t->acc[i]);
	wze_forward(&t->pl->profile->rope[t->layer], t->r, t->y + R, (float *)t->acc);
}

/* The reference's residual_exact: the residual from the latent the
 * decoder will give at code s (refined, through the inverse transform). */
static void residual_exact(fast_tok *f, int s, float g)
{
	wze_tok *t = &f->t;
	const wzc_wze_layer *ly = t->ly;
	const wzc_profile *pr = t->pl->profile;
	int R = t->pl->R, P = t->pl->P, nref = 0;
	latent_symbols(f, s, g);
	for (int k = 0; k < R; k++) {
		t->lhat[R + k] = wze_dequantize(ly, k, 0, g, f->lsym[k]);
		int h;
		float val;
		if (nref < WZE_NREF && f->lsym[k].coded &&
		    wze_refine(ly, k, 0, g, f->lsym[k], t->y[k], &h, &val)) {
			t->lhat[R + k] = val;
			nref++;
		}
	}
	inverse_vec(&pr->latent[t->layer], t->lhat + R, t->lhat, (float *)t->acc);
	wzc_pred_token(pr->pred_map[t->layer], pr->latent[t->layer].mean, t->lhat, R, P, t->r);
	for (int i = 0; i < P; i++)
		t->r[i] = t->xpos[i] - t->r[i];
	wze_forward(&pr->rope[t->layer], t->r, t->y + R, (float *)t->acc);
}

static int pos_set(const wze_tok *t)
{
	return t->ly->predicts && (t->flags & 1) ? 2 : 1;
}

/* The estimate's sum over components i0 .. i1 - 1 in class order of
 * table set `set` that the tables code (no low bits), at code s (gain
 * g) and scale code c0, from their classes, steps and values in that
 * order (contiguous): wze_quantize_ratio's symbols, their costs added,
 * nothing stored. */
WZ_HOT WZ_VEC_CLONES static uint64_t table_cost(const wzc_wze_layer *ly, int set, int s, float g,
						int c0, const int32_t *cls, const float *cstep,
						const float *y, int i0, int i1)
{
	uint64_t sum = 0;
	for (int i = i0; i < i1; i++) {
		double t = wze_ratio(y[i], cstep[i] * g);
		int c = set * WZE_NCLASS + wze_class(cls[i], s, c0) - WZE_JLO;
		int K = ly->tab_k[c];
		uint32_t off = ly->rec_off[c];
		int q = wze_nearer(ly->recon + off + K, K, wze_round_index(t, K), t);
		sum += ly->cost[off + (uint32_t)(q + K)];
	}
	return sum;
}

/* The first place in class order of table set `set` from i whose class
 * at code s and scale code c0 is above jmax (classes grow along it). */
static int first_above(const fast_tok *f, int set, int s, int c0, int i, int jmax)
{
	const int32_t *cls = f->scls[set];
	int hi = f->order[set].n;
	while (i < hi) {
		int mid = (i + hi) / 2;
		if (wze_class(cls[mid], s, c0) > jmax)
			hi = mid;
		else
			i = mid + 1;
	}
	return i;
}

/* The estimate's sum over a part (y: its values) in table set `set`:
 * the components with low bits one by one, those of the tables by
 * table_cost. */
static uint64_t part_cost(fast_tok *f, int set, int s, float g, int c0, const float *y)
{
	const wzc_wze_layer *ly = f->t.ly;
	const class_order *o = &f->order[set];
	if (!c0)
		return 0;
	int ilo = first_above(f, set, s, c0, 0, WZE_JLO - 1);
	int ihi = first_above(f, set, s, c0, ilo, WZE_JHI);
	uint64_t sum = 0;
	for (int i = 0; i < ilo; i++) {
		int e = o->idx[i];
		wze_sym q = wze_quantize_ratio(ly, set, wze_class(f->scls[set][i], s, c0),
					       wze_ratio(y[e], f->scstep[set][i] * g));
		sum += ly->cost[ly->rec_off[set * WZE_NCLASS + q.jt] + q.sym] + 256u * (unsigned)q.b;
	}
	for (int i = ilo; i < ihi; i++)
		f->ys[i] = y[o->idx[i]];
	return sum + table_cost(ly, set, s, g, c0, f->scls[set], f->scstep[set], f->ys, ilo, ihi);
}

/* The reference's estimate at code s. */
static uint64_t estimate(fast_tok *f, int s)
{
	wze_tok *t = &f->t;
	const wzc_wze_layer *ly = t->ly;
	int R = t->pl->R, P = t->pl->P, pset = pos_set(t);
	float g = wze_gain(s);
	if (!t->predicted)
		return WZE_EST_FIXED + part_cost(f, 0, s, g, t->code[0], t->y) +
		       part_cost(f, pset, s, g, t->code[1], t->y + R);
	residual_at(f, s, g);
	part_symbols(f, pset, s, g, t->code[1], t->y + R, f->psym);
	uint64_t bits = WZE_EST_FIXED;
	for (int k = 0; k < R + P; k++) {
		wze_sym o = k < R ? f->lsym[k] : f->psym[k - R];
		if (o.coded)
			bits += ly->cost[ly->rec_off[(k < R ? 0 : pset) * WZE_NCLASS + o.jt] + o.sym] +
				256u * (unsigned)o.b;
	}
	return bits;
}

/* Whether the reference's estimate at code s is within the target, from
 * bounds where they decide it: each coded symbol costs between its
 * table's least and greatest cost (the plan's), so the bounds need the
 * classes alone, not the values, and the estimate only where the target
 * lies between them.  The same answer as estimate(f, s) <= target. */
static int fits_estimate(fast_tok *f, int s, uint64_t target)
{
	const wzc_wze_layer *ly = f->t.ly;
	int pset = pos_set(&f->t);
	uint64_t lo = WZE_EST_FIXED, hi = WZE_EST_FIXED;
	for (int part = 0; part < 2; part++) {
		int set = part ? pset : 0, c0 = f->t.code[part];
		const class_order *o = &f->order[set];
		const int16_t *cls = ly->cls + o->kk0;
		for (int i = 0; c0 && i < o->n; i++) {
			int j = wze_class(cls[o->idx[i]], s, c0);
			if (j > WZE_JHI)
				break;
			int b = wze_low_bits(j), c = set * WZE_NCLASS + j + 16 * b - WZE_JLO;
			lo += ly->cost_min[c] + 256u * (unsigned)b;
			hi += ly->cost_max[c] + 256u * (unsigned)b;
		}
	}
	if (lo > target)
		return 0;
	if (hi <= target)
		return 1;
	return estimate(f, s) <= target;
}

/* The reference's exact encode at code s (< WZE_SMAX) into f->buf[1];
 * where it fits, that buffer becomes buf[0], the stream kept. */
static long encode_at(fast_tok *f, int s)
{
	wze_tok *t = &f->t;
	const wzc_wze_layer *ly = t->ly;
	int R = t->pl->R, P = t->pl->P, n = R + P, pset = pos_set(t);
	size_t cap = t->pl->record_bytes;
	float g = wze_gain(s);
	if (t->predicted)
		residual_exact(f, s, g);
	else
		latent_symbols(f, s, g);
	part_symbols(f, pset, s, g, t->code[1], t->y + R, f->psym);
	/* the refinement bits, in the initial state */
	uint32_t v = 0;
	for (int k = 0, nref = 0; k < n && nref < WZE_NREF; k++) {
		int set, kk, h;
		float val;
		wze_place(k, R, P, pset, &set, &kk);
		wze_sym o = k < R ? f->lsym[k] : f->psym[k - R];
		if (o.coded && wze_refine(ly, kk, set, g, o, t->y[k], &h, &val))
			v |= (uint32_t)h << nref++;
	}
	wze_enc e = { WZE_RANS_L + v, f->buf[1], f->buf[1] + cap, 0 };
	for (int k = n - 1; k >= 0 && !e.over; k--) {
		wze_sym o = k < R ? f->lsym[k] : f->psym[k - R];
		if (o.coded)
			wze_enc_component(&e, ly, k < R ? 0 : pset, o);
	}
	long len = wze_enc_finish(&e, s, t->flags, t->code, cap);
	if (len >= 0) {
		uint8_t *b = f->buf[0];
		f->buf[0] = f->buf[1];
		f->buf[1] = b;
		f->fit_s = s;
		f->fit_len = len;
	}
	return len;
}

/* One token, t.y holding the latent's coefficients relative to its mean:
 * the reference's search (encode_token in wze_codec.c), try for try. */
static void encode_token(fast_tok *f, uint8_t *rec)
{
	wze_tok *t = &f->t;
	size_t cap = t->pl->record_bytes;
	wze_prepare_token(t);
	f->ls = -1;
	f->fit_s = -1;
	uint64_t target = (uint64_t)cap * 8 * 256;
	int lo = -1, hi = WZE_SMAX - 1;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (fits_estimate(f, mid, target))
			hi = mid;
		else
			lo = mid;
	}
	int s = hi;
	long len = encode_at(f, s);
	while (len < 0 && s < WZE_SMAX - 1)
		len = encode_at(f, ++s);
	for (int down = 0; len >= 0 && s > 0 && down < 4; down++) {
		if (encode_at(f, s - 1) < 0)
			break;
		s--;
	}
	const uint8_t *src;
	if (len >= 0 && f->fit_s == s) {
		len = f->fit_len;
		src = f->buf[0] + cap - len;
	} else {
		/* nothing fits: the record of no coefficient */
		wze_enc e = { WZE_RANS_L, f->buf[1], f->buf[1] + cap, 0 };
		len = wze_enc_finish(&e, WZE_SMAX, t->flags, t->code, cap);
		src = f->buf[1] + cap - len;
	}
	memset(rec, 0, cap);
	memcpy(rec, src, (size_t)len);
}

void wzc_wze_encode_layer_fast(const wzc_wze_plan *pl, int layer, int n, const float *latent,
			       const float *rope, uint8_t *records)
{
	const wzc_profile *pr = pl->profile;
	const wzc_wze_layer *ly = &pl->layers[layer];
	int R = pl->R, P = pl->P, W = R > P ? R : P;
	size_t cap = pl->record_bytes;
	fast_tok f = { { pl, ly, layer, 0, 0, { 0, 0 }, NULL, NULL, NULL, NULL, NULL },
		       NULL, NULL, NULL, -1, -1, 0, { NULL, NULL }, { { 0, 0, NULL } },
		       { NULL, NULL, NULL }, { NULL, NULL, NULL }, NULL };
	int nsets = ly->predicts ? 3 : 2, sorted_ok = 1;
	for (int set = 0; set < nsets; set++) {
		class_order *o = &f.order[set];
		o->kk0 = set == 0 ? 0 : set == 1 ? R : R + P;
		o->n = set ? P : R;
		o->idx = ly->order ? ly->order + o->kk0 : NULL;
		f.scls[set] = malloc(sizeof(int32_t) * (size_t)o->n + 1);
		f.scstep[set] = malloc(sizeof(float) * (size_t)o->n + 1);
		sorted_ok &= f.scls[set] && f.scstep[set] && o->idx;
		for (int i = 0; sorted_ok && i < o->n; i++) {
			f.scls[set][i] = ly->cls[o->kk0 + o->idx[i]];
			f.scstep[set][i] = ly->cstep[o->kk0 + o->idx[i]];
		}
	}
	f.ys = malloc(sizeof(float) * (size_t)W + 1);
	float *yb = malloc(sizeof(float) * (size_t)ENC_BLOCK * (R + P));
	float *xc = malloc(sizeof(float) * (size_t)ENC_BLOCK * R);
	f.t.r = malloc(sizeof(float) * (size_t)P + 1);
	f.t.lhat = malloc(sizeof(float) * 2 * (size_t)R);
	f.t.acc = malloc(sizeof(double) * (size_t)W + 1);
	f.lsym = malloc(sizeof(wze_sym) * (size_t)R);
	f.psym = malloc(sizeof(wze_sym) * (size_t)P + 1);
	f.ratio = malloc(sizeof(double) * (size_t)(R + P));
	f.buf[0] = malloc(cap);
	f.buf[1] = malloc(cap);
	if (!yb || !xc || !f.t.r || !f.t.lhat || !f.t.acc || !f.lsym || !f.psym || !f.ratio || !f.ys || !sorted_ok || !f.buf[0] ||
	    !f.buf[1] || !ly->ready) {
		/* the reference, which codes no coefficient without tables */
		wzc_wze_encode_layer(pl, layer, n, latent, rope, records);
		goto done;
	}
	for (int t0 = 0; t0 < n; t0 += ENC_BLOCK) {
		int nt = n - t0 < ENC_BLOCK ? n - t0 : ENC_BLOCK;
		forward_block(&pr->latent[layer], nt, latent + (size_t)t0 * R, (size_t)R, yb,
			      (size_t)(R + P), xc);
		for (int i = 0; i < nt; i++) {
			f.t.y = yb + (size_t)i * (R + P);
			f.t.xpos = (float *)rope + (size_t)(t0 + i) * P;
			encode_token(&f, records + (size_t)(t0 + i) * cap);
		}
	}
done:
	free(yb);
	free(xc);
	free(f.t.r);
	free(f.t.lhat);
	free(f.t.acc);
	free(f.lsym);
	free(f.psym);
	free(f.ratio);
	free(f.ys);
	for (int set = 0; set < 3; set++) {
		free(f.scls[set]);
		free(f.scstep[set]);
	}
	free(f.buf[0]);
	free(f.buf[1]);
}
