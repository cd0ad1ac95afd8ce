/* Quality metrics of a format on a window (DESIGN.md, "Quality metrics"):
 * errors per token and per query, nmse and SQNR, attention KL and output
 * error, bootstrap confidence intervals, comparisons with a reference
 * format, and the Gaussian rate-distortion bound. */
#ifndef WZC_METRICS_H
#define WZC_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"

/* What one format did to one window, kept per token and per query so that
 * comparisons can be paired and resampled. */
typedef struct {
	int T, Q;
	double *err[2];    /* [T] squared error of latent (0) and position part (1), over layers */
	double *energy[2]; /* [T] squared values, over layers */
	double *kl;        /* [Q] attention KL, mean over layers and heads; NULL without queries */
	double *out_err;   /* [Q] attention-output relative error, mean over layers and heads */
	size_t bytes;      /* bytes the encoder wrote */
	size_t payload_bytes; /* wzx: bytes of the block payloads alone (0 otherwise) */
	size_t values;     /* values encoded */
	double bits_per_value; /* bytes * 8 / values */
	/* Kept apart per layer when measured with keep_layers (else L = 0 and
	 * NULL): the same sums before they are added over layers. */
	int L;
	double *layer_err[2], *layer_energy[2]; /* [L][T] */
	double *layer_kl, *layer_out_err;       /* [L][Q], mean over heads */
} wzc_errors;

/* Encodes every layer of the window with the codec, decodes, and measures.
 * The caller frees the result with wzc_errors_free. */
wz_err wzc_measure(const wzc_window *w, wzc_codec *codec, wzc_errors **out /* OUT */,
		   wz_diag *diag);
/* The same, keeping each layer's errors too when keep_layers (the window's
 * figures are the same either way). */
wz_err wzc_measure_layers(const wzc_window *w, wzc_codec *codec, int keep_layers,
			  wzc_errors **out /* OUT */, wz_diag *diag);
/* The same for a format that keeps tokens in bf16 ("-keep<F>-<L>",
 * docs/baselines-fp4.md): codec is the record every other token gets
 * (wzc_format_unkept); tokens at positions below keep_first and the
 * window's last keep_last tokens count 2 (R + P) bytes each and decode to
 * bf16 of their values. */
wz_err wzc_measure_kept(const wzc_window *w, wzc_codec *codec, long keep_first, long keep_last,
			int keep_layers, wzc_errors **out /* OUT */, wz_diag *diag);
/* The window's exact attention (per query and head, the softmax of the
 * scores with the cache's own keys and the output over its latent), which
 * every format's attention KL and output error are measured against:
 * computed once per layer and held, so that formats measured on the same
 * window need not each compute it again.  NULL when the window has no
 * queries, or out of memory.  Holds no layer until wzc_exact_layer
 * computes it; each held layer takes wzc_exact_layer_bytes. */
typedef struct wzc_exact wzc_exact;
wzc_exact *wzc_exact_new(const wzc_window *w);
size_t wzc_exact_layer_bytes(const wzc_exact *x);
/* Computes and holds layer l of w, a window of the shape x was made for
 * (one of another shape is refused: WZ_ERR_USAGE).  Different
 * layers may be computed on different threads at once. */
wz_err wzc_exact_layer(wzc_exact *x, const wzc_window *w, int l, wz_diag *diag);
void wzc_exact_free(wzc_exact *x);
/* wzc_measure_layers, or with keeps wzc_measure_kept, taking the exact
 * attention of the layers x holds from it (x may be NULL): the same
 * errors, bit for bit, as computing it. */
wz_err wzc_measure_exact(const wzc_window *w, wzc_codec *codec, const wzc_exact *x, int keeps,
			 long keep_first, long keep_last, int keep_layers,
			 wzc_errors **out /* OUT */, wz_diag *diag);
/* Layer l of errors measured with keep_layers, as errors of their own (its
 * bits/value: the window's, since a wzx container's bytes are not split by
 * layer and a fixed-rate record is the same in every layer).  NULL when out
 * of memory or e holds no layers.  The caller frees it with wzc_errors_free. */
wzc_errors *wzc_errors_layer(const wzc_errors *e, int l);
void wzc_errors_free(wzc_errors *e);

typedef enum {
	WZC_M_NMSE_LATENT = 0,
	WZC_M_NMSE_ROPE = 1,
	WZC_M_NMSE = 2,    /* both parts */
	WZC_M_KL = 3,
	WZC_M_OUT_ERR = 4,
} wzc_metric;

const char *wzc_metric_name(wzc_metric m);
/* 1 when the metric can be computed on e (KL and output error need queries). */
int wzc_metric_available(const wzc_errors *e, wzc_metric m);

/* A value with its bootstrap 95% interval. */
typedef struct {
	double value, lo, hi;
} wzc_ci;

#define WZC_BOOT_DEFAULT 400

/* The metric over the window, and its interval from `nboot` resamples of
 * tokens (nmse) or queries (KL, output error), seeded. */
wzc_ci wzc_metric_ci(const wzc_errors *e, wzc_metric m, int nboot, uint64_t seed);
/* metric(a) / metric(ref) with a paired bootstrap (same resample for both). */
wzc_ci wzc_ratio_ci(const wzc_errors *a, const wzc_errors *ref, wzc_metric m, int nboot,
		    uint64_t seed);
/* Share of tokens (nmse) or queries (KL, output error) where a's error is
 * below ref's. */
double wzc_share_better(const wzc_errors *a, const wzc_errors *ref, wzc_metric m);

/* SQNR in dB of an nmse. */
double wzc_sqnr_db(double nmse);

/* The Gaussian reverse water-filling bound: the smallest nmse (both parts)
 * any code of `bits` bits/value can reach on a Gaussian source with each
 * layer's measured covariance (R + P values jointly) of this window.  The
 * sample covariance of T tokens spreads its eigenvalues (Marchenko-Pastur),
 * which lowers the bound when T is not much larger than R + P: by about
 * 1.5 dB for iid data at T = 1024, 0.3 dB at T = 4096. */
wz_err wzc_rd_bound_nmse(const wzc_window *w, double bits, double *nmse /* OUT */,
			 wz_diag *diag);

/* The same bound at many rates: each layer's covariance eigenvalues once. */
typedef struct {
	int L, n, T, R, P;
	double *lam;   /* [L][n] */
	/* [L][R] and [L][P]: the eigenvalues of each layer's latent and
	 * position blocks of the covariance alone (wzc_spectrum_of_parts;
	 * NULL otherwise) */
	double *lam_latent, *lam_rope;
	double energy; /* sum of squared values of the window */
	double *layer_energy; /* [L] */
} wzc_spectrum;
wz_err wzc_spectrum_of(const wzc_window *w, wzc_spectrum **out /* OUT */, wz_diag *diag);
/* The same, with the two parts' own eigenvalues too. */
wz_err wzc_spectrum_of_parts(const wzc_window *w, wzc_spectrum **out /* OUT */, wz_diag *diag);
double wzc_spectrum_bound_nmse(const wzc_spectrum *sp, double bits);
/* The bound of layer l alone. */
double wzc_spectrum_layer_bound_nmse(const wzc_spectrum *sp, int l, double bits);
/* The bound when each layer's position part may lose at most cap[l] per
 * token (summed over its P values, the profile's position cap; <= 0: no
 * cap): where the unconstrained code of the two parts' blocks would lose
 * more there, the position part takes the bits that hold it at the cap
 * (reverse water-filling over its block's eigenvalues) and the latent the
 * rest; the nmse of layer l, or of the window (l < 0).  It ignores the
 * two parts' cross-covariance when the cap binds (exact for independent
 * parts), and is never below the joint bound.  Needs
 * wzc_spectrum_of_parts (else the joint bound). */
double wzc_spectrum_capped_bound_nmse(const wzc_spectrum *sp, int l, double bits, const float *cap);
void wzc_spectrum_free(wzc_spectrum *sp);

/* Iso-quality bits: given errors of wz at increasing rates rates[0..n-1]
 * (errs[i]) and a reference, the smallest rate whose metric is not above the
 * reference's, interpolating log(metric) linearly in the rate; with its
 * paired bootstrap interval.  value is NAN when no rate in the sweep reaches
 * the reference (or the first already beats it: then value = rates[0] and
 * lo = -inf would mislead, so the result is the first rate, flagged by
 * *censored = 1). */
wzc_ci wzc_iso_bits(const double *rates, wzc_errors *const *errs, int n, const wzc_errors *ref,
		    wzc_metric m, int nboot, uint64_t seed, int *censored /* OUT */);

#endif
