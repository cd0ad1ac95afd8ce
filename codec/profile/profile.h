/* The wz profile: per layer and per part (latent, position) an orthogonal
 * transform with its statistics, prepared once per model from calibration
 * windows, and its file format (docs/wz-format.md). */
#ifndef WZC_PROFILE_H
#define WZC_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/formats/format.h"
#include "codec/formats/window.h"
#include "common/wz_error.h"

/* The distribution of standardized component values (value / (token scale
 * x component sigma)), pooled over a part's components, as a histogram. */
#define WZC_HIST_BINS 4096
#define WZC_HIST_RANGE 12.0 /* bins cover [-12, 12]; outside values count in the end bins */
#define WZC_MODEL_MAX 255   /* bytes of a model name */

typedef struct {
	int n;           /* components: R for the latent, P for the position part */
	float *mean;     /* [n] subtracted before the transform (zero for the position part) */
	float *basis;    /* [n][n]: row k is component k's unit vector */
	float *var;      /* [n] variance of component k, cache units */
	float *sigma;    /* [n] RMS of component k divided by the token's scale */
	float *weight;   /* [n] distortion weight per component (mean 1 over a layer) */
	float *anchor;   /* [n] the position-0 token's values (the attention sink, the
			  * same in every sequence), or the mean when calibration had none */
	float scale_ref; /* geometric mean of the per-token scale over calibration */
	float *hist;     /* [WZC_HIST_BINS] probabilities, summing to 1 */
} wzc_part_profile;

/* The profile file's version (docs/wz-format.md).  It also fixes how the
 * rate plan is derived: version 1 companded large level tables over the
 * whole histogram range, leaving wide empty cells past the calibration
 * values; version 2 companding stays within the histogram's support;
 * version 3 also tries the whole-bit budgets above the planner's rounds;
 * version 4 adds a position cap per layer, which the plan keeps the
 * position part's error within; version 5 changes only the file (a
 * checksum per layer, so that a reader reads only the layers it uses) and
 * plans exactly as version 4: a rule "from version N" holds for every
 * later version; version 6 adds each layer's RoPE inverse frequencies
 * (the position part coded after undoing RoPE where any is non-zero) and
 * is written only for such a profile, every other as version 5; version
 * 7 adds per layer the joint prediction of the position part from the
 * decoded latent (an R x P map, and the statistics of the position part
 * of tokens coded against the anchor, which are not predicted) and is
 * written only for a profile where some layer predicts. */
#define WZC_PROFILE_VERSION 7
#define WZC_PROFILE_VERSION_ROPE 6  /* a profile that undoes RoPE and predicts nothing */
#define WZC_PROFILE_VERSION_PLAIN 5 /* a profile that does not undo RoPE */

struct wzc_profile {
	int version;        /* 1 to 7, as read; new profiles get 5, 6 when they undo RoPE,
			     * 7 when a layer predicts its position part */
	char model[WZC_MODEL_MAX + 1];
	int L, R, P;
	int query_weighted; /* 1 when the weights come from calibration queries */
	uint64_t ntokens;   /* calibration tokens per layer */
	wzc_part_profile *latent; /* [L] */
	wzc_part_profile *rope;   /* [L] */
	/* [L] per layer, the int8 position coder's mean squared error per
	 * calibration token over the position part (cache units), which the
	 * plan keeps the position part within; 0: no cap (always so before
	 * version 4) */
	float *pos_cap;
	/* [L][P/2] per layer, the RoPE inverse frequency of each pair (2i,
	 * 2i + 1): the position part is coded after rotating pair i of a
	 * token at position p back by p f_i (docs/wz-format.md, "RoPE
	 * undone"); NULL, or all zero, when it is not (always so before
	 * version 6) */
	double *rope_freq;
	/* Version 7 (docs/wz-format.md, "Predicted position part"): per layer,
	 * 1 when the position part of a token whose latent is coded against
	 * its mean is coded as its residual from pred_map[l] applied to the
	 * decoded latent (rope[l] then holds the residual's statistics), and
	 * rope_plain[l] the statistics of the position part of tokens whose
	 * latent is coded against the anchor (not predicted).  predicts NULL
	 * (before version 7), or 0 for a layer: coded as version 6.
	 * pred_map[l] is R x P (row k: what latent component k, less its
	 * mean, adds to each of the P position values in the coded domain);
	 * NULL for a layer that does not predict. */
	unsigned char *predicts;     /* [L] */
	wzc_part_profile *rope_plain; /* [L] */
	float **pred_map;            /* [L] */
	/* KVTC's transforms (codec/kvtc/kvtc.h), fitted on calibration windows
	 * and attached by the caller for `kvtc-<bits>` (borrowed: the caller
	 * frees them after the profile's codecs); NULL otherwise.  Not in the
	 * file. */
	struct wzc_kvtc *kvtc;
	/* what is derived from the profile, built lazily (codec/profile/profile_cache.h);
	 * NULL computes everything afresh */
	struct wzc_profile_cache *cache;
	/* the file's bytes that the parts' arrays point into (a profile read
	 * with wzc_profile_read on a little-endian host: no copy), or NULL when
	 * each array is its own allocation */
	void *backing;
	/* [L] 1 for each layer read, 0 for one left unread (its arrays NULL,
	 * never to be used: wzc_profile_need_layer); NULL when every layer is
	 * there (every profile but one from wzc_profile_read_layers) */
	unsigned char *loaded;
	/* [L] version 5 as read: each layer's checksum from the file's
	 * directory; NULL otherwise */
	uint64_t *layer_hash;
};

typedef struct {
	/* Share of the distortion weight that follows the queries (attention
	 * score error) rather than plain squared error; 0..1. */
	double query_weight;
	/* 1: each layer's position cap is the int8 position coder's error
	 * on the calibration tokens (the default); 0: no cap. */
	int position_cap;
	/* The model's RoPE inverse frequencies, one per pair (2i, 2i + 1) of
	 * the position part, the same in every layer: with any non-zero, the
	 * position part is coded after undoing RoPE (docs/wz-format.md, "RoPE
	 * undone") and the profile is version 6.  rope_pairs must be P / 2;
	 * NULL (the default): the position part is coded as cached. */
	const double *rope_freq;
	int rope_pairs;
	/* [L]: with rope_freq, the layers that undo it (non-zero); NULL:
	 * every layer.  The others keep the position part as cached. */
	const unsigned char *rope_layers;
	/* The joint prediction of the position part from the decoded latent
	 * (profile version 7): 0 off (the default), 1 in each layer whose
	 * cross-fitted residual is cheaper to code than the part on the
	 * calibration tokens (wzc_profile_pred_gain_db > 0), 2 in every
	 * layer that undoes RoPE. */
	int predict;
	/* Threads fitting layers (each layer alone, so the profile is the
	 * same on any number); 0 (the default): one per online core. */
	int threads;
	/* Called after each layer is fitted with how many are done of how
	 * many, one call at a time (never two at once); NULL: none. */
	void (*progress)(void *ud, int done, int layers);
	void *progress_ud;
} wzc_prepare_opts;

void wzc_prepare_opts_default(wzc_prepare_opts *opts /* OUT */);

/* Prepares a profile from calibration windows (all of one model and shape).
 * A window whose split is "test" is refused (WZ_ERR_REFUSED) before any of
 * its values is read.  The caller frees the result with wzc_profile_free. */
wz_err wzc_prepare(const wzc_window *const *windows, int nwindows, const wzc_prepare_opts *opts,
		   wzc_profile **out /* OUT */, wz_diag *diag);

/* The file: serialize into a new buffer (caller frees with free()), parse
 * untrusted bytes (checksum first, then every field), read, write
 * atomically. */
wz_err wzc_profile_serialize(const wzc_profile *p, uint8_t **bytes /* OUT */, size_t *n /* OUT */,
			     wz_diag *diag);
wz_err wzc_profile_parse(const void *bytes, size_t n, const char *origin,
			 wzc_profile **out /* OUT */, wz_diag *diag);
wz_err wzc_profile_read(const char *path, wzc_profile **out /* OUT */, wz_diag *diag);
/* Reads the header and only the layers l < nwant with want[l] != 0 (want
 * NULL: every layer, as wzc_profile_read).  From version 5 the file is read with
 * pread, the header, directory and trailing checksum first, then each
 * wanted layer, checked against its directory entry; the others are
 * neither read nor checked and are marked not loaded.  A profile of
 * versions 1 to 4 has one checksum over the whole file: it is read whole
 * and holds every layer.  The profile's hash (wzc_profile_hash) is known
 * either way.  The caller frees the result with wzc_profile_free. */
wz_err wzc_profile_read_layers(const char *path, const unsigned char *want /* [nwant] or NULL */,
			       int nwant, wzc_profile **out /* OUT */, wz_diag *diag);
/* 1 when layer l's arrays are there (read, or made in memory). */
int wzc_profile_has_layer(const wzc_profile *p, int l);
/* WZ_OK when layer l is there; WZ_ERR_USAGE naming the layer otherwise,
 * for whatever is about to use its arrays. */
wz_err wzc_profile_need_layer(const wzc_profile *p, int l, wz_diag *diag);
wz_err wzc_profile_write(const char *path, const wzc_profile *p, wz_diag *diag);
void wzc_profile_free(wzc_profile *p);

/* 1 when layer l's position part is coded after undoing RoPE (some
 * frequency non-zero). */
int wzc_profile_undoes_rope(const wzc_profile *p, int l);
/* Layer l's coding gain from undoing RoPE, in dB: the geometric mean of
 * the position part's variances as cached (each rotated pair's, averaged
 * over positions: its two channels' variances and squared means,
 * averaged) over that of the profile's components, both from the
 * profile's own statistics.  0 for a layer that does not undo RoPE.  A
 * model's frequencies gain on its caches; wrong ones gain little or
 * lose. */
double wzc_profile_rope_gain_db(const wzc_profile *p, int l);
/* 1 when layer l predicts its position part from the decoded latent
 * (version 7). */
int wzc_profile_predicts(const wzc_profile *p, int l);
/* Layer l's coding gain from the prediction, in dB: the geometric mean
 * of the variances of the position part (rope_plain) over that of its
 * cross-fitted residual (rope), both on calibration tokens; 0 for a
 * layer that does not predict. */
double wzc_profile_pred_gain_db(const wzc_profile *p, int l);
/* The inverse frequencies of RoPE on P values: base^(-2i/P) for pair i,
 * blended as YaRN does when yarn_factor > 1 (transformers'
 * _compute_yarn_parameters: the correction range from beta_fast and
 * beta_slow over yarn_original positions, truncated, and a linear ramp);
 * yarn_factor <= 1 gives plain RoPE.  freq has P / 2 entries. */
void wzc_rope_freqs(int P, double base, double yarn_factor, double yarn_original,
		    double beta_fast, double beta_slow, double *freq /* OUT [P/2] */);

/* A query's second moment over the keys it meets with RoPE undone
 * (codec/profile/prepare_fit.c, rope_query_moments): for keys at positions
 * 0 .. keys - 1, wzc_rope_key_phases fills G[4 (P/2)^2] with the mean
 * phases G(f_j - f_i) and G(-(f_i + f_j)), and wzc_rope_query_moment_add
 * adds to M[P][P] the mean over those positions p of v v' with v =
 * R(-p f) q (q as cached).  P even. */
void wzc_rope_key_phases(int P, const double *freq, double keys, double *G /* OUT */);
void wzc_rope_query_moment_add(const float *q, int P, const double *G, double *M /* += */);

/* Allocates a profile of the given shape with zeroed arrays. */
wzc_profile *wzc_profile_alloc(int L, int R, int P);

/* Checks that a window can be coded with this profile: same model name (when
 * both have one) and shape.  WZ_ERR_INPUT otherwise. */
wz_err wzc_profile_check_window(const wzc_profile *p, const wzc_window *w, wz_diag *diag);

/* XXH3-64 of the bytes the checksum covers, exposed for the fuzz target. */
uint64_t wzc_profile_checksum(const void *bytes, size_t n);
/* The file's checksums made right again for its bytes, as if written so:
 * the trailing checksum, and from version 5 (when the header's L, R, P
 * and name length give a layout that fits n) each layer's directory entry
 * first.  For the fuzz targets and tests, which damage values and want
 * the value checks, not the checksums, to find it. */
void wzc_profile_reseal(uint8_t *bytes, size_t n);

#endif
