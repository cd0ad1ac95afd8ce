/* Row-block matrix products for the wz transforms, Y = X B, and the
 * nearest-level search of the encoder.  Every variant sums each output in
 * the order of the inner index from zero, multiply then add (never a fused
 * multiply-add), so all of them give the scalar reference's bits: the wz
 * records must not depend on the machine that wrote them. */
#ifndef WZC_WZ_GEMM_H
#define WZC_WZ_GEMM_H

#include <stddef.h>
#include <stdint.h>

/* Y[t][c] = sum over r = 0..kdim-1 in order of X(t, r) * B[r][c], for t <
 * ntok and c < ncol, where X(t, r) = X[t * xst + r * xsr] (X row-major:
 * xst = row length, xsr = 1; transposed: xst = 1, xsr = its row length);
 * leading dimensions in floats. */
void wzc_gemm_ref(int ntok, int kdim, int ncol, const float *B, size_t ldb, const float *X,
		  size_t xst, size_t xsr, float *Y /* OUT */, size_t ldy);

/* The same values, by the fastest kernel this CPU runs (chosen once). */
void wzc_gemm(int ntok, int kdim, int ncol, const float *B, size_t ldb, const float *X,
	      size_t xst, size_t xsr, float *Y /* OUT */, size_t ldy);

/* Name of the kernel wzc_gemm uses here ("avx512f" or "portable"), for the
 * benchmark's report. */
const char *wzc_gemm_kernel(void);

/* Index of the nearest level of a sorted table given its nthr thresholds
 * (midpoints): the number of thresholds below z (0 for NaN).  The
 * reference is a binary search; wzc_qlut finds the same index from a grid
 * over the thresholds and two comparisons. */
static inline uint32_t wzc_quantize_ref(const float *thr, uint32_t nthr, float z)
{
	uint32_t lo = 0, n = nthr;
	while (n > 0) {
		uint32_t half = n >> 1;
		int gt = z > thr[lo + half];
		lo = gt ? lo + half + 1 : lo;
		n = gt ? n - half - 1 : half;
	}
	return lo;
}

/* The grid: cell(z) = trunc(clamp((z - t0) * inv_w, 0, G - 1)) in float
 * arithmetic is non-decreasing in z, so a threshold in a lower cell than
 * z's is below z and one in a higher cell is not; start[c] counts the
 * thresholds in cells below c, and when no cell holds more than two
 * (`exact`), the index is start[c] plus two comparisons.  Exact by that
 * argument alone, whatever the rounding of t0 and inv_w. */
typedef struct {
	const float *thr;
	uint32_t nthr;      /* >= 1 */
	int G;              /* cells */
	int exact;          /* no cell holds more than two thresholds */
	float t0, inv_w;
	uint32_t *start;    /* [G] thresholds in the cells below */
} wzc_qlut;

/* Builds the grid for thresholds thr[nthr] (sorted); returns 0, or -1 when
 * memory ran out.  Free with wzc_qlut_free. */
int wzc_qlut_init(wzc_qlut *q, const float *thr, uint32_t nthr);
void wzc_qlut_free(wzc_qlut *q);

/* The cell of z; written once, used by the grid's construction and the
 * scalar lookup (the vector lookup repeats the same operations). */
static inline int wzc_qlut_cell(float t0, float inv_w, int G, float z)
{
	float f = (z - t0) * inv_w;
	f = f > 0 ? f : 0; /* NaN goes to cell 0 */
	f = f < (float)(G - 1) ? f : (float)(G - 1);
	return (int)f;
}

static inline uint32_t wzc_quantize(const wzc_qlut *q, float z)
{
	const float *thr = q->thr;
	uint32_t n = q->nthr;
	if (!q->exact)
		return wzc_quantize_ref(thr, n, z);
	uint32_t s = q->start[wzc_qlut_cell(q->t0, q->inv_w, q->G, z)];
	return s + ((uint32_t)(s < n) & (uint32_t)(thr[s < n ? s : n - 1] < z)) +
	       ((uint32_t)(s + 1 < n) & (uint32_t)(thr[s + 1 < n ? s + 1 : n - 1] < z));
}

/* Many components at once, each with its own grid: digit[j] = the nearest
 * level index of z[j] in q[j]'s table.  The arrays are the grids' fields
 * side by side, with the cells of all grids in one array and the
 * thresholds as offsets from one base (for vector gathers). */
typedef struct {
	int n;
	const wzc_qlut **q;   /* [n] */
	float *t0, *inv_w, *gmax;             /* [n] gmax = G - 1 */
	int32_t *start_off, *thr_off, *nthr;  /* [n] */
	int32_t *exact;                       /* [n] the grid's `exact` */
	const uint32_t *starts;
	const float *thr_base;
} wzc_qbatch;

void wzc_quantize_batch_ref(const wzc_qbatch *b, const float *z, uint32_t *digit /* OUT [n] */);
/* The same digits, by the fastest kernel this CPU runs. */
void wzc_quantize_batch(const wzc_qbatch *b, const float *z, uint32_t *digit /* OUT [n] */);

#endif
