/* The codec context (codec/codec.c), which the coders of the profiled
 * formats (wz, wzt, wzs, wzx) read their plans from. */
#ifndef WZC_CODEC_INTERNAL_H
#define WZC_CODEC_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "codec/codec.h"

typedef struct wzc_wz_plan wzc_wz_plan;

struct wzc_codec {
	wzc_format fmt;
	int L, R, P;
	size_t record_bytes;
	float *tensor_scale;  /* [L], fp8-flat */
	wzc_wz_plan *wz;      /* wz formats */
	struct wzc_wzt_plan *wzt; /* wzt: the trellis over wz's plan (owned) */
	struct wzc_wze_plan *wze; /* wze: its tables (owned) */
	int wz_shared;        /* wz is the profile cache's, referenced, not owned */
	const wzc_profile *profile; /* wz: the profile (borrowed) */
	/* profile version 7 with a layer that predicts: this codec over the
	 * anchored tokens' plan (wz's anchored plan, borrowed), owned */
	struct wzc_codec *anchored;
};

#endif
