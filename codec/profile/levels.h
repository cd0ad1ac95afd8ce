/* Scalar level tables for the wz coder: the admissible level counts, and
 * for a distribution given as a histogram, minimum-MSE level tables (Lloyd
 * for small counts, companding by the density's cube root for large) with
 * their distortion.  `version` (1 or 2) is the profile file's. */
#ifndef WZC_LEVELS_H
#define WZC_LEVELS_H

#include <stdint.h>

/* Level counts a component may get: 1, 2, 3 and m * 2^e for m in 4..7, up to
 * 65536, i.e. steps of a quarter to a third of a bit, so the bit allocation
 * is fractional without entropy coding. */
#define WZC_NSET 60
/* Counts up to this are Lloyd-fitted; above, companded. */
#define WZC_LLOYD_MAX 64
uint32_t wzc_level_count(int j);

/* Normalized distortion E[(z - Q(z))^2] of the best table with
 * wzc_level_count(j) levels, for every j, on a histogram of WZC_HIST_BINS
 * probabilities over [-WZC_HIST_RANGE, WZC_HIST_RANGE]; non-increasing in j. */
/* The same distortions with the companded tables above 64 levels
 * integrated on the histogram instead of the Panter-Dite integral: what
 * the position floor checks its cap with (docs/wz-format.md).  -1 when out
 * of memory. */
int wzc_levels_distortion_exact(const float *hist, int version, double d[WZC_NSET] /* OUT */);
/* 0, or -1 when out of memory (d then INFINITY: no count looks worth its
 * bits, and no plan may be made from it). */
int wzc_levels_distortion(const float *hist, int version, double d[WZC_NSET] /* OUT */);

/* Both at once: d[] as wzc_levels_distortion, and for each j whose
 * tables[j] is not NULL (any j with at most WZC_LLOYD_MAX levels), its levels at
 * tables[j] and thresholds at tables[j] + N, exactly as wzc_levels_table
 * gives them, from the same fit.  0, or -1 when out of memory. */
int wzc_levels_fit_all(const float *hist, int version, double d[WZC_NSET] /* OUT */,
		       float *const tables[WZC_NSET] /* OUT, entries may be NULL */);

/* Fills levels[N] (increasing) and thresholds[N - 1] (midpoints) for count
 * index j.  Deterministic: encoder and decoder derive the same tables.
 * `version` is the profile's: from 2, companded tables (more than 64
 * levels) span only the histogram's support.  0, or -1 when out of
 * memory (the tables then all zeros, which no coder may use). */
int wzc_levels_table(const float *hist, int version, int j, float *levels /* OUT */,
		     float *thresholds /* OUT */);

/* The same rule for any count N >= 1 (wzt's union codebooks of 2N levels,
 * up to 131,072): Lloyd up to WZC_LLOYD_MAX levels, companded above. */
int wzc_levels_table_count(const float *hist, int version, uint32_t N, float *levels /* OUT */,
			   float *thresholds /* OUT */);

#endif
