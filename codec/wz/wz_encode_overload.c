/* The fast wz encoder's steps 5 and 6 (docs/wz-format.md, "Arithmetic";
 * wz_encode_internal.h): the overload raise of a part past a table's outer
 * bound, and the cost and kept digits of the searched scale, a vector of
 * components at a time, with the reference's doubles. */
#include "codec/wz/wz_encode_internal.h"

/* The clipping cost (docs/wz-format.md, "Arithmetic" step 5): the sum in
 * component order of the terms ew_j x_j^2, each as the reference computes
 * it, of the components past their outermost levels.  Every other term is
 * +0, and a sum from +0 is never -0 (a zero sum rounds to +0), so adding
 * a zero leaves it as it was: the reference's sum.  The components past
 * are found sixteen at a time as a bit mask (a vector compare), and only
 * theirs are computed: a part that passes the outer-bound test has a few
 * (4 on average on the bench's mla-b window, of 512), where computing all
 * took 4% of wz's encode. */
WZ_HOT WZ_CLONES static double clip_sum(int nc, const float *z, const float *lmin,
				       const float *lmax, const double *ew)
{
	double clip = 0;
	for (int b = 0; b < nc; b += 16) {
		int e = nc - b < 16 ? nc - b : 16;
		uint32_t m = 0;
		for (int k = 0; k < e; k++)
			m |= (uint32_t)((z[b + k] > lmax[b + k]) | (z[b + k] < lmin[b + k])) << k;
		while (m) {
			int j = b + __builtin_ctz(m);
			m &= m - 1;
			clip += wzc_overload_clip_term(z[j], lmin[j], lmax[j], ew[j]);
		}
	}
	return clip;
}

/* The products z_j r of one candidate's scale (step 5), as the reference
 * rounds them. */
WZ_HOT WZ_CLONES static void scale_part(int nc, const float *z, float r, float *zr)
{
	for (int j = 0; j < nc; j++)
		zr[j] = z[j] * r;
}

/* wzc_overload_raise's d for a part that lies past a table's outer bound
 * (the caller's standardize), with the same doubles, so the same choice,
 * and in *digits the chosen candidate's digits (NULL where none was
 * weighed):
 * - the clipping cost by clip_sum;
 * - each candidate's E(d): the products and their digits a vector of
 *   components at a time (wzc_quantize_batch gives wzc_quantize's
 *   digits), the terms ew_j e_j^2 apart, then the candidates' sums side
 *   by side in one pass over the components, each in component order.
 * A raise costed five serial sums of quantizations, each a dependent
 * chain, where now the chains run together (bench/bench_codec: wz-5.44's
 * encode spent 12% of its time in them on the mla-b window, where about
 * one part in 28 passes the clipping test). */
int wzc_wz_overload_raise_fast(const layer_plan *lp, int part, int j0, int nc, const float *z,
			       const float *mult, int c0, overload_work *ow, const uint32_t **digits)
{
	*digits = NULL;
	if (c0 <= 0 || nc <= 0)
		return 0;
	double *t = ow->terms;
	double clip = clip_sum(nc, z, lp->lmin_c + j0, lp->lmax_c + j0, lp->ew_c + j0);
	if (!(clip > lp->dexp[part]))
		return 0;
	int D = wzc_overload_span(lp, j0, nc, z, mult, c0);
	if (D == 0)
		return 0;
	int d[5], n = wzc_overload_candidates(D, d);
	wzc_qbatch b = wzc_qbatch_slice(&lp->qb, j0, nc);
	for (int i = 0; i < n; i++) {
		float r = mult[c0] / mult[c0 + d[i]];
		double *ti = t + (size_t)i * nc;
		uint32_t *qi = ow->q + (size_t)i * nc;
		scale_part(nc, z, r, ow->zr);
		wzc_quantize_batch(&b, ow->zr, qi);
		for (int j = 0; j < nc; j++)
			ti[j] = wzc_overload_error_term(ow->zr[j], lp->lev_c[j0 + j][qi[j]],
							lp->ew_c[j0 + j]);
	}
	double sum[5] = { 0, 0, 0, 0, 0 };
	for (int j = 0; j < nc; j++)
		for (int i = 0; i < n; i++)
			sum[i] += t[(size_t)i * nc + j];
	int ib = 0; /* d[0] is 0: the code as it was */
	double s0 = mult[c0], emin = s0 * s0 * sum[0];
	for (int i = 1; i < n; i++) {
		double s = mult[c0 + d[i]], e = s * s * sum[i];
		if (e < emin) {
			emin = e;
			ib = i;
		}
	}
	/* the chosen candidate's products are the caller's (the same
	 * quotient r times z), so their digits are its digits */
	*digits = ow->q + (size_t)ib * nc;
	return d[ib];
}

/* Step 6's sum (wzc_search_error) of the terms at one code, the
 * products zr and their digits q given: eight partial sums side by side,
 * as the rule defines them, which the compiler keeps in vector lanes. */
WZ_HOT WZ_CLONES static double search_terms(int nc, const float *zr, const uint32_t *q,
					    const float *const *lev, const double *ew)
{
	double s8[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	int j = 0;
	for (; j + 8 <= nc; j += 8)
		for (int k = 0; k < 8; k++)
			s8[k] += wzc_overload_error_term(zr[j + k], lev[j + k][q[j + k]], ew[j + k]);
	for (int k = 0; j + k < nc; k++)
		s8[k] += wzc_overload_error_term(zr[j + k], lev[j + k][q[j + k]], ew[j + k]);
	return wzc_search_sum8(s8);
}

/* Step 6's cost at one code for wzc_search_descent, the products and
 * digits a vector at a time (wzc_quantize_batch gives wzc_quantize's
 * digits): the reference's doubles, so the same descent.  The digits of
 * the last SEARCH_KEEP codes tried are kept, and the code the descent
 * returns is among them, so its digits are the record's without
 * quantizing the part again (wzs-5.44's encode 0.086 to 0.091 GB/s,
 * bench/bench_codec). */
double wzc_wz_search_cost(void *ctx, int code)
{
	search_ctx *x = (search_ctx *)ctx;
	float r = x->mult[x->c0] / x->mult[code];
	int slot = x->tried++ % SEARCH_KEEP;
	uint32_t *q = x->q[slot];
	x->code[slot] = code;
	scale_part(x->nc, x->z, r, x->zr);
	wzc_quantize_batch(&x->b, x->zr, q);
	double s = x->mult[code];
	return s * s * search_terms(x->nc, x->zr, q, x->lp->lev_c + x->j0, x->lp->ew_c + x->j0);
}

/* The kept digits of code c, newest first, or NULL when they are gone
 * (never, by the descent's order: it returns the first code tried after
 * two more, one of its neighbours after at most two more, or one of the
 * last two). */
const uint32_t *wzc_wz_search_digits(const search_ctx *x, int c)
{
	for (int i = 1; i <= SEARCH_KEEP && i <= x->tried; i++) {
		int slot = (x->tried - i) % SEARCH_KEEP;
		if (x->code[slot] == c)
			return x->q[slot];
	}
	return NULL;
}
