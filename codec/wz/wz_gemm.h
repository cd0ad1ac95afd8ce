/* Row-block matrix products for the wz transforms, Y = X B, and the
 * nearest-level search of the encoder.  Every variant computes each output
 * as a chain of fused multiply-adds over the inner index in order from
 * zero, acc = fmaf(x, b, acc) starting at acc = 0 (docs/wz-format.md,
 * "Arithmetic").  fmaf rounds once, as IEEE 754 defines, on every machine
 * and on the GPU (__fmaf_rn), so all variants give the scalar reference's
 * bits: the wz records do not depend on the machine that wrote them. */
#ifndef WZC_WZ_GEMM_H
#define WZC_WZ_GEMM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* Y[t][c] = the fused chain over r = 0..kdim-1 of X(t, r) * B[r][c], for t <
 * ntok and c < ncol, where X(t, r) = X[t * xst + r * xsr] (X row-major:
 * xst = row length, xsr = 1; transposed: xst = 1, xsr = its row length);
 * leading dimensions in floats. */
void wzc_gemm_ref(int ntok, int kdim, int ncol, const float *B, size_t ldb, const float *X,
		  size_t xst, size_t xsr, float *Y /* OUT */, size_t ldy);

/* The same values, by the fastest kernel this CPU runs (chosen once). */
void wzc_gemm(int ntok, int kdim, int ncol, const float *B, size_t ldb, const float *X,
	      size_t xst, size_t xsr, float *Y /* OUT */, size_t ldy);

/* Name of the kernel wzc_gemm uses here ("avx512f", "avx2" or "portable"), for the
 * benchmark's report. */
const char *wzc_gemm_kernel(void);

/* The encoder's transform in integers (docs/wz-format.md, "Arithmetic"):
 * the scaled token values x and the basis are rounded to 16-bit integers,
 * x in units of 2^(e - WZC_XQ_SHIFT) with a per-token exponent e >= 0, the
 * basis in units of 2^-WZC_BQ_SHIFT, and every coefficient is an exact
 * integer dot product: the same on every machine in any summation order,
 * and twice the multiply rate of single precision on vector units with
 * 16-bit dot products (AVX-512 VNNI).  A coefficient is then
 * (float)acc * 2^(e - WZC_XQ_SHIFT - WZC_BQ_SHIFT). */
#define WZC_XQ_SHIFT 10
#define WZC_BQ_SHIFT 14
#define WZC_XQ_MAX 32767
/* The bound on the sum of the squared integer inputs: with basis rows of
 * norm below 2 (2^15 in basis units, which profiles are checked for), every
 * dot product stays below 2^31 in magnitude. */
#define WZC_XQ_SUMSQ_MAX ((uint64_t)1 << 32)

/* A basis entry in basis units: round to nearest even, clamped. */
static inline int16_t wzc_basis_q(float b)
{
	float v = b * (float)(1 << WZC_BQ_SHIFT);
	if (!(v > -WZC_XQ_MAX))
		return v < 0 ? -WZC_XQ_MAX : 0; /* NaN: 0 (profiles have none) */
	return (int16_t)(v < WZC_XQ_MAX ? rintf(v) : WZC_XQ_MAX);
}

/* One token part's m values as integers: the smallest e >= 0 with every
 * xq[i] = rne(x[i] * 2^(WZC_XQ_SHIFT - e)) within +-WZC_XQ_MAX and their
 * squares summing to at most WZC_XQ_SUMSQ_MAX (a value that is not finite
 * counts as 0).  Returns e; e = 0 for any token whose scale code is not
 * clamped and m < 3900. */
int wzc_input_q(int m, const float *x, int16_t *xq /* OUT [m] */);

/* Integer products on 16-bit pairs: element q of a row holds the values of
 * inner indices 2q (low half) and 2q + 1 (high half) as two's-complement
 * 16-bit fields of a uint32_t.  Y[t][c] = sum over q < kpairs of
 * X(t, 2q) B(2q, c) + X(t, 2q+1) B(2q+1, c), modulo 2^32 (exact whenever
 * the inputs meet the bounds above), with Bp[q * ldb + c] holding B's pair
 * and Xp[q * ldx + t] X's. */
void wzc_igemm_ref(int ntok, int kpairs, int ncol, const uint32_t *Bp, size_t ldb,
		   const uint32_t *Xp, size_t ldx, int32_t *Y /* OUT */, size_t ldy);
/* The same values, by the fastest kernel this CPU runs. */
void wzc_igemm(int ntok, int kpairs, int ncol, const uint32_t *Bp, size_t ldb,
	       const uint32_t *Xp, size_t ldx, int32_t *Y /* OUT */, size_t ldy);
/* Name of the kernel wzc_igemm uses here ("avx512vnni", "avx512bw",
 * "avx2" or "portable"). */
const char *wzc_igemm_kernel(void);

/* The same sums with both operands row-major over the inner pairs (the
 * dot form): Y[t][c] = sum over q < kpairs of the pair products of
 * Xt[t * ldx + q] and Bt[c * ldb + q], modulo 2^32.  Without AVX-512 it is
 * the faster form: a vector multiply takes eight pairs of one token and
 * one column as they lie in memory, where the pair-major form first
 * broadcasts a token's pair to every lane, and AVX2 machines issue fewer
 * broadcasts than multiplies (on Zen 3, a broadcast from memory beside
 * the multiply-adds costs about as much as one of them). */
void wzc_igemm_dot_ref(int ntok, int kpairs, int ncol, const uint32_t *Bt, size_t ldb,
		       const uint32_t *Xt, size_t ldx, int32_t *Y /* OUT */, size_t ldy);
/* The same values: the AVX2 kernel where the CPU runs it (whichever
 * integer kernel is chosen or forced, except "portable"), else the
 * portable loop. */
void wzc_igemm_dot(int ntok, int kpairs, int ncol, const uint32_t *Bt, size_t ldb,
		   const uint32_t *Xt, size_t ldx, int32_t *Y /* OUT */, size_t ldy);
/* 1 when the integer kernel chosen (or forced) here is the AVX2 one, whose
 * products are faster in the dot form: the encoder lays out its inputs
 * for wzc_igemm_dot then, for wzc_igemm otherwise. */
int wzc_igemm_dot_preferred(void);
/* Inner pairs of a dot-form row as the fast encoder pads it (a multiple of
 * 8, the AVX2 kernel's vector; the padding pairs are zero). */
static inline int wzc_igemm_dot_pad(int kpairs)
{
	return (kpairs + 7) / 8 * 8;
}

/* For tests and the benchmark: makes wzc_igemm use the named kernel
 * ("portable", "avx2", "avx512bw", "avx512vnni"); -1 when this CPU cannot
 * run it.  Not thread-safe. */
int wzc_gemm_force(const char *kernel);
/* 0 when the integer kernel is forced to "portable": the encoder's other
 * vector code (its block transposition) then takes its portable loops
 * too, so that a test runs them on any CPU. */
int wzc_igemm_simd_allowed(void);

/* 1 / sigma for standardizing a coefficient, 0 for a component whose sigma
 * is not positive (it then quantizes as 0). */
static inline float wzc_rsigma(float sigma)
{
	return sigma > 0 ? 1.0f / sigma : 0.0f;
}

static inline uint32_t wzc_pair16(int16_t lo, int16_t hi)
{
	return (uint32_t)(uint16_t)lo | (uint32_t)(uint16_t)hi << 16;
}

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
/* The grid's G cells' threshold pairs as wzc_qbatch's `pairs` holds them. */
void wzc_qlut_pairs(const wzc_qlut *q, uint64_t *pairs /* OUT [G] */);
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
 * side by side, with the cells of all grids in one array (for vector
 * gathers; start_off[j] is q[j]'s first cell there). */
typedef struct {
	int n;
	const wzc_qlut **q;   /* [n] */
	float *t0, *inv_w, *gmax;             /* [n] gmax = G - 1 */
	int32_t *start_off;                   /* [n] */
	int32_t *exact;                       /* [n] the grid's `exact` */
	const uint32_t *starts;
	/* per cell (as starts), the bits of the thresholds start and start + 1
	 * of its table, low word then high, +inf for one past the table's
	 * last: the vector lookup's two comparisons from one gather that does
	 * not wait for start's */
	const uint64_t *pairs;
} wzc_qbatch;

/* Components j0..j0+n-1 of b as a batch of their own (the same grids). */
static inline wzc_qbatch wzc_qbatch_slice(const wzc_qbatch *b, int j0, int n)
{
	wzc_qbatch s = *b;
	s.n = n;
	s.q += j0;
	s.t0 += j0;
	s.inv_w += j0;
	s.gmax += j0;
	s.start_off += j0;
	s.exact += j0;
	return s;
}

void wzc_quantize_batch_ref(const wzc_qbatch *b, const float *z, uint32_t *digit /* OUT [n] */);
/* The same digits, by the fastest kernel this CPU runs. */
void wzc_quantize_batch(const wzc_qbatch *b, const float *z, uint32_t *digit /* OUT [n] */);

#endif
