/* Paired comparison of two formats on one window (codec/measure/paired.h). */
#include "codec/measure/paired.h"

#include <math.h>

#include "codec/codec.h"

wz_err wzc_measure_format(const wzc_window *w, const wzc_format *f, const wzc_profile *profile,
			  wzc_errors **out, wz_diag *diag)
{
	return wzc_measure_format_layers(w, f, profile, 0, out, diag);
}

wz_err wzc_measure_format_layers(const wzc_window *w, const wzc_format *f,
				 const wzc_profile *profile, int keep_layers, wzc_errors **out,
				 wz_diag *diag)
{
	return wzc_measure_format_exact(w, f, profile, NULL, keep_layers, out, diag);
}

wz_err wzc_measure_format_exact(const wzc_window *w, const wzc_format *f,
				const wzc_profile *profile, const wzc_exact *x, int keep_layers,
				wzc_errors **out, wz_diag *diag)
{
	*out = NULL;
	wzc_codec *codec = NULL;
	wzc_format u = wzc_format_unkept(f);
	wz_err rc = wzc_codec_new(&u, w->L, w->R, w->P, profile, &codec, diag);
	if (!rc)
		rc = wzc_measure_exact(w, codec, x, f->keeps, f->keep_first, f->keep_last,
				       keep_layers, out, diag);
	wzc_codec_free(codec);
	return rc;
}

void wzc_compare_errors(const wzc_errors *a, const wzc_errors *b, int nboot, uint64_t seed,
			wzc_pair_result *out)
{
	out->bits_a = a->bits_per_value;
	out->bits_b = b->bits_per_value;
	out->nmse_ratio = wzc_ratio_ci(a, b, WZC_M_NMSE, nboot, seed);
	out->tokens_better = wzc_share_better(a, b, WZC_M_NMSE);
	out->has_kl = wzc_metric_available(a, WZC_M_KL) && wzc_metric_available(b, WZC_M_KL);
	if (out->has_kl) {
		out->kl_ratio = wzc_ratio_ci(a, b, WZC_M_KL, nboot, seed);
		out->queries_better = wzc_share_better(a, b, WZC_M_KL);
	} else {
		out->kl_ratio = (wzc_ci){ NAN, NAN, NAN };
		out->queries_better = NAN;
	}
}
