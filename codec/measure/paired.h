/* Paired comparison of two formats on one window: error ratios with paired
 * bootstrap intervals and the share of tokens (queries for attention KL)
 * where the first format has the lower error.  What `wzplan codec compare`
 * reports, for wz against any baseline at its own rate. */
#ifndef WZC_PAIRED_H
#define WZC_PAIRED_H

#include "codec/measure/metrics.h"
#include "codec/profile/profile.h"

/* a against b on the same window. */
typedef struct {
	double bits_a, bits_b;  /* bits/value each encoder wrote */
	wzc_ci nmse_ratio;      /* nmse(a) / nmse(b), both parts */
	double tokens_better;   /* share of tokens with a's nmse below b's */
	int has_kl;             /* the window holds queries */
	wzc_ci kl_ratio;        /* attention KL(a) / KL(b); NAN without queries */
	double queries_better;  /* share of queries with a's KL below b's; NAN without */
} wzc_pair_result;

/* Encodes, decodes and measures the window in format f (profile for wz
 * formats, else NULL), kept tokens ("-keep<F>-<L>") included.  The caller
 * frees the result with wzc_errors_free. */
wz_err wzc_measure_format(const wzc_window *w, const wzc_format *f, const wzc_profile *profile,
			  wzc_errors **out /* OUT */, wz_diag *diag);
/* The same, keeping each layer's errors too when keep_layers. */
wz_err wzc_measure_format_layers(const wzc_window *w, const wzc_format *f,
				 const wzc_profile *profile, int keep_layers,
				 wzc_errors **out /* OUT */, wz_diag *diag);

/* The same, taking the exact attention of the layers x holds from it. */
wz_err wzc_measure_format_exact(const wzc_window *w, const wzc_format *f,
				const wzc_profile *profile, const wzc_exact *x, int keep_layers,
				wzc_errors **out /* OUT */, wz_diag *diag);

/* a against b, both measured on the same window; nboot resamples, seeded. */
void wzc_compare_errors(const wzc_errors *a, const wzc_errors *b, int nboot, uint64_t seed,
			wzc_pair_result *out /* OUT */);

#endif
