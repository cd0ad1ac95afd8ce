/* What codec/profile/prepare.c (the layers' jobs and the windows as the
 * fit sees them) shares with codec/profile/prepare_fit.c (one part's fit):
 * a window's rows and its sink token, and the fit itself. */
#ifndef WZC_PREPARE_INTERNAL_H
#define WZC_PREPARE_INTERNAL_H

#include "common/wz_error.h"
#include "codec/profile/profile.h"
#include "codec/profile/profile_internal.h"

/* Row t of part `pos` (0 latent, 1 position) of layer l of window w. */
static inline const float *wzc_prep_row(const wzc_window *w, int pos, int l, int t)
{
	return pos == 0 ? w->latent + ((size_t)l * w->T + t) * w->R
			: w->rope + ((size_t)l * w->T + t) * w->P;
}

/* The token at position 0 (the attention sink: the same token at the same
 * position in every sequence, so the same cache) is kept out of the
 * statistics and stored whole as the part's anchor. */
static inline int wzc_prep_is_sink(const wzc_window *w, int t)
{
	return w->positions ? w->positions[t] == 0 : t == 0;
}

/* Layer l's part `pos` (0 latent, 1 position) of the windows into q (its
 * n set): klt, the part's mean, covariance eigenbasis and shrinkage (the
 * latent, and a position part with RoPE undone); else the position part
 * as cached: no mean, the identity, statistics averaged over each pair.
 * freq: RoPE undone, its frequencies, else NULL; qstat: [n] the query
 * energy per component (OUT), or NULL where the windows hold no queries. */
wz_err wzc_prepare_fit_part(const wzc_window *const *ws, int nw, int l, int pos, int klt, const double *freq,
			    wzc_part_profile *q, double *qstat /* OUT */, wz_diag *diag);

#endif
