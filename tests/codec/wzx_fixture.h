/* Test helper for the wzx decoders' tests: one synthetic family's
 * profile (a 1,024-token calibration window), a test window, the wz codec
 * of a rate over them, its wzx coder and the window's records. */
#ifndef WZ_TEST_CODEC_WZX_FIXTURE_H
#define WZ_TEST_CODEC_WZX_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "tests/codec/window.h"

typedef struct {
	wzt_cache_trace *cal, *tr;
	wzc_profile *prof;
	wzc_codec *c;
	wzc_wzx *x;
	wzc_window w;   /* the test window (L layers of T tokens at position 4,096) */
	size_t B;       /* record bytes */
	uint8_t *rec;   /* [L][T][B]: the window's records */
} wzx_fixture;

static inline void wzx_fixture_free(wzx_fixture *fx)
{
	free(fx->rec);
	wzc_wzx_free(fx->x);
	wzc_codec_free(fx->c);
	wzt_cache_trace_free(fx->tr);
	wzt_cache_trace_free(fx->cal);
	wzc_profile_free(fx->prof);
	*fx = (wzx_fixture){ 0 };
}

/* 0, or -1 with what failed as a TAP comment (*fx then for
 * wzx_fixture_free all the same). */
static inline int wzx_fixture_open(wzx_fixture *fx, wzt_family fam, const char *rate, int L, int T)
{
	*fx = (wzx_fixture){ 0 };
	wz_diag d;
	wzc_format fmt;
	fx->cal = synth(fam, L, 1024, 0, 0, 0, 100, "calibration");
	fx->tr = synth(fam, L, T, 0, 0, 4096, 7, "test");
	if (!fx->cal || !fx->tr)
		return -1;
	wzc_window cw = window_of(fx->cal);
	const wzc_window *cp = &cw;
	fx->w = window_of(fx->tr);
	if (wzc_prepare(&cp, 1, NULL, &fx->prof, &d) || wzc_format_parse(rate, &fmt, &d) ||
	    wzc_codec_new(&fmt, L, fx->w.R, fx->w.P, fx->prof, &fx->c, &d) || wzc_wzx_of_codec(fx->c, &fx->x, &d)) {
		printf("# %s: %s\n", rate, d.msg);
		return -1;
	}
	fx->B = wzc_codec_record_bytes(fx->c);
	if (!(fx->rec = malloc(fx->B * (size_t)T * L)))
		return -1;
	for (int l = 0; l < L; l++)
		if (wzc_encode_layer(fx->c, l, T, fx->w.latent + (size_t)l * T * fx->w.R,
				     fx->w.rope + (size_t)l * T * fx->w.P, fx->rec + fx->B * T * l, &d)) {
			printf("# encode: %s\n", d.msg);
			return -1;
		}
	return 0;
}

#endif
