/* The areas tests/codec/test_oom runs out of memory beyond the codec
 * (tests/codec/oom_areas.c): the wzx container, kvtc, prepare, and a
 * profile that predicts the position part. */
#ifndef WZ_TEST_CODEC_OOM_AREAS_H
#define WZ_TEST_CODEC_OOM_AREAS_H

#include "codec/formats/window.h"
#include "tests/codec/oom.h"

/* What every pass starts from: a profile file and its calibration window,
 * a test window, and two scratch file names. */
typedef struct {
	const char *profile_path;
	const wzc_window *cal, *test;
	const char *file_a, *file_b;
} oom_inputs;

/* Each takes an oom_inputs; the bytes of output it needs at most. */
wz_err oom_wzx_pass(void *in, uint8_t *out, size_t cap, size_t *n);
wz_err oom_kvtc_pass(void *in, uint8_t *out, size_t cap, size_t *n);
wz_err oom_prepare_pass(void *in, uint8_t *out, size_t cap, size_t *n);
wz_err oom_predict_pass(void *in, uint8_t *out, size_t cap, size_t *n);
size_t oom_area_cap(const oom_inputs *in);

#endif
