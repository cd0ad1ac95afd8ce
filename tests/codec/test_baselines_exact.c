/* Golden bytes of the baselines whose quantizer a stack publishes, each
 * vector worked from that stack's code (issue 43, item 3), through the
 * codec as `codec measure` runs it (inputs rounded to bf16 first):
 *
 * - fp8-ds-mla: vllm-project/vllm csrc/libtorch_stable/cache_kernels.cu,
 *   concat_and_cache_ds_mla_kernel, read at 37cb21c1695d: tile_scale =
 *   fmaxf(max_abs / 448, FLT_MIN); each value bf16 -> float divided by
 *   tile_scale, then __nv_cvt_float_to_fp8(SATFINITE, E4M3)
 *   (csrc/quantization/w8a8/fp8/nvidia/quant_utils.cuh).
 * - fp8-ds-mla-ue8m0: deepseek-ai/FlashMLA tests/quant.py, quantize_k_cache
 *   (V32_FP8Sparse) and _cast_scale_inv_to_ue8m0, read at 520fec6a7fd9:
 *   scale = 2^ceil(log2(clamp_min(amax / 448, 1e-4))), value.float() /
 *   scale -> float8_e4m3fn.
 * - nvfp4-trt-cold: NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/
 *   nvfp4ColdPageKernels.cu (offloadFrom16BitTiledKernel ->
 *   cvt_warp_fp16_to_fp4), read at 2d7f402ef0d4: outputScale = vecMax != 0
 *   ? rcp(SF) : 0, so a group whose e4m3 scale is 0 but whose values are
 *   not is coded at +inf and saturates.
 *
 * Each vector holds a value where the stack's arithmetic and the obvious
 * other one differ (a quotient against a product with the reciprocal; 0
 * against FLT_MIN; a power of two against absmax/448; saturated codes
 * against zeros), so a test here fails if the codec does the other. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/formats/bytes.h"
#include "tests/tap.h"

#define R 512
#define P 64

/* One token through the codec of `name` (record [cap] bytes). */
static size_t encode(const char *name, const float *latent, const float *rope, uint8_t *rec,
		     size_t cap)
{
	wzc_format f;
	wzc_codec *c = NULL;
	wz_diag d;
	size_t B = 0;
	if (!wzc_format_parse(name, &f, &d) && !wzc_codec_new(&f, 1, R, P, NULL, &c, &d)) {
		B = wzc_codec_record_bytes(c);
		if (B > cap || wzc_encode_layer(c, 0, 1, latent, rope, rec, &d))
			B = 0;
	}
	wzc_codec_free(c);
	return B;
}

static uint32_t bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static void fp8_ds_mla(void)
{
	float lat[R] = { 0 }, rope[P];
	uint8_t rec[1024];
	for (int i = 0; i < P; i++)
		rope[i] = (float)(i - 32) / 8.0f;
	/* tile 0: amax 1.078125 (bf16 0x3f8a), and 0x1.9ep-12: its quotient
	 * by 1.078125 / 448 rounds to e4m3 0x22, its product with the
	 * reciprocal to 0x23 */
	lat[0] = 1.078125f;
	lat[1] = 0x1.9ep-12f;
	/* tile 1 all zeros: the scale FLT_MIN */
	/* tile 2: 1 + 2^-10 is 1.0 in bf16, so the scale is 1/448, not
	 * 1.0009765625/448 */
	lat[256] = 1.0009765625f;
	lat[257] = -0.5f;
	size_t B = encode("fp8-ds-mla", lat, rope, rec, sizeof rec);
	if (!ok(B == 656, "fp8-ds-mla: 656-byte record"))
		return;
	is_long(rec[0], 0x7e, "fp8-ds-mla: the tile's largest value is 448 (0x7e)");
	is_long(rec[1], 0x22, "fp8-ds-mla: 0x1.9ep-12 divided by the scale is 0x22 (by the reciprocal 0x23)");
	is_long(wzc_get32f(rec + 512) == 1.078125f / 448.0f, 1, "fp8-ds-mla: tile 0's scale 1.078125/448");
	is_long(bits(wzc_get32f(rec + 516)), bits(FLT_MIN), "fp8-ds-mla: an all-zero tile's scale is FLT_MIN");
	is_long(rec[128] | rec[200] | rec[255], 0, "fp8-ds-mla: its codes 0");
	is_long(bits(wzc_get32f(rec + 520)), bits(1.0f / 448.0f), "fp8-ds-mla: the value rounded to bf16 first (scale 1/448)");
	is_long(rec[256], 0x7e, "fp8-ds-mla: 1.0 / (1/448) is 448");
	is_long(rec[257], 0xf6, "fp8-ds-mla: -0.5 / (1/448) is -224 (0xf6)");
	is_long(wzc_get16(rec + 528), 0xc080, "fp8-ds-mla: position part bf16 (-4.0)");
}

static void fp8_ds_mla_ue8m0(void)
{
	float lat[R] = { 0 }, rope[P] = { 0 };
	uint8_t rec[1024];
	/* tile 0: amax 1.0, 1/448 = 2^-8.81 -> 2^-8; 1.0 -> 256, 0.5 -> 128 */
	lat[0] = 1.0f;
	lat[1] = 0.5f;
	/* tile 1 all zeros: max(0, 1e-4) -> 2^ceil(-13.29) = 2^-13 */
	/* tile 2: amax 1.75 = 448 * 2^-8 exactly: log2 is -8, the scale 2^-8 */
	lat[256] = -1.75f;
	/* tile 3: amax 1.765625, just above 448 * 2^-8: 2^-7; 226 -> 224 */
	lat[384] = 1.765625f;
	size_t B = encode("fp8-ds-mla-ue8m0", lat, rope, rec, sizeof rec);
	if (!ok(B == 656, "fp8-ds-mla-ue8m0: 656-byte record (FlashMLA's V32 layout)"))
		return;
	is_long(bits(wzc_get32f(rec + 512)), bits(0x1p-8f), "fp8-ds-mla-ue8m0: amax 1.0 -> scale 2^-8");
	is_long(rec[0], 0x78, "fp8-ds-mla-ue8m0: 1.0 / 2^-8 = 256 (0x78)");
	is_long(rec[1], 0x70, "fp8-ds-mla-ue8m0: 0.5 / 2^-8 = 128 (0x70)");
	is_long(bits(wzc_get32f(rec + 516)), bits(0x1p-13f), "fp8-ds-mla-ue8m0: an all-zero tile -> 2^-13 (the 1e-4 floor)");
	is_long(bits(wzc_get32f(rec + 520)), bits(0x1p-8f), "fp8-ds-mla-ue8m0: amax 448 * 2^-8 -> 2^-8 itself");
	is_long(rec[256], 0xfe, "fp8-ds-mla-ue8m0: -1.75 / 2^-8 = -448 (0xfe)");
	is_long(bits(wzc_get32f(rec + 524)), bits(0x1p-7f), "fp8-ds-mla-ue8m0: amax above 448 * 2^-8 -> 2^-7");
	is_long(rec[384], 0x76, "fp8-ds-mla-ue8m0: 1.765625 / 2^-7 = 226 -> 224 (0x76)");
	/* the same input in fp8-ds-mla: scale absmax/448, not a power of two */
	uint8_t r2[1024];
	ok(encode("fp8-ds-mla", lat, rope, r2, sizeof r2) == 656 &&
		   wzc_get32f(r2 + 524) == 1.765625f / 448.0f && r2[384] == 0x7e,
	   "fp8-ds-mla on the same tile: scale absmax/448, the value 448");
}

static void trt_cold(void)
{
	float lat[R] = { 0 }, rope[P] = { 0 };
	uint8_t rec[1024];
	/* group 0: absmax 0.002, SF 0.002 * (1/6) under 2^-10: e4m3 0 */
	lat[0] = 0.001f;
	lat[1] = -0.002f;
	/* group 1: absmax 1.5, an ordinary group */
	lat[16] = 1.5f;
	lat[17] = -0.25f;
	size_t B = encode("nvfp4-trt-cold", lat, rope, rec, sizeof rec);
	if (!ok(B == 324, "nvfp4-trt-cold: 324-byte record"))
		return;
	is_long(rec[288], 0, "nvfp4-trt-cold: the small group's e4m3 scale is 0");
	is_long(rec[0], 0xf7, "nvfp4-trt-cold: its values at +inf saturate: 0.001 -> +6 (7), -0.002 -> -6 (15)");
	is_long(rec[1], 0x77, "nvfp4-trt-cold: its zeros 0 * inf = NaN -> +6 (7)");
	is_long(rec[7], 0x77, "nvfp4-trt-cold: to the group's last byte");
	is_long(rec[16], 0x00, "nvfp4-trt-cold: an all-zero group keeps codes 0");
	is_long(rec[289], 0x28, "nvfp4-trt-cold: group 1's scale e4m3(0.25)");
	is_long(rec[8], 0xa7, "nvfp4-trt-cold: group 1: 1.5 / 0.25 = 6 (7), -0.25 / 0.25 = -1 (0xa)");
	/* decoded: the saturated group is zeros */
	wzc_format f;
	wzc_codec *c = NULL;
	wz_diag d;
	float y[R], yr[P];
	if (!wzc_format_parse("nvfp4-trt-cold", &f, &d) && !wzc_codec_new(&f, 1, R, P, NULL, &c, &d)) {
		ok(!wzc_decode_token(c, 0, rec, y, yr) && y[0] == 0 && y[1] == 0 && y[2] == 0 &&
			   y[16] == 1.5f && y[17] == -0.25f,
		   "nvfp4-trt-cold: the saturated group decodes to zeros, the other to its values");
	}
	wzc_codec_free(c);
}

int main(void)
{
	fp8_ds_mla();
	fp8_ds_mla_ue8m0();
	trt_cold();
	return tap_done();
}
