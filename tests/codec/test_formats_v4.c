/* fp8-ds-mla-v4: FlashMLA's DeepSeek-V4 FP8 entry byte for byte (448 e4m3
 * values, 64 bf16, one UE8M0 power-of-two scale per 64, a pad byte: 584
 * bytes), refused for any other shape. */
#include "tests/tap.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "codec/codec_internal.h"
#include "codec/formats/format.h"
#include "codec/formats/fpconv.h"

int main(void)
{
	wzc_format f;
	wz_diag d;
	ok(wzc_format_parse("fp8-ds-mla-v4", &f, &d) == WZ_OK && f.id == WZC_FMT_FP8_DS_MLA_V4,
	   "fp8-ds-mla-v4 parses");
	is_long((long)wzc_record_bytes(&f, 448, 64), 584, "448 + 64*2 + 448/64 + 1 = 584 bytes");
	is_long((long)wzc_record_bytes(&f, 512, 64), 0, "a 512 + 64 latent is not its shape");
	wzc_codec *c = NULL;
	ok(wzc_codec_new(&f, 1, 512, 64, NULL, &c, &d) != WZ_OK, "no codec for 512 + 64");
	wzc_codec_free(c);
	c = NULL;
	if (!ok(wzc_codec_new(&f, 1, 448, 64, NULL, &c, &d) == WZ_OK, "a codec for 448 + 64"))
		return tap_done();
	float lat[448], rope[64], lat2[448], rope2[64];
	srand(7);
	for (int i = 0; i < 448; i++)
		lat[i] = (float)((rand() / (double)RAND_MAX - 0.5) * pow(10.0, i / 64 - 3));
	for (int i = 0; i < 64; i++)
		rope[i] = (float)(rand() / (double)RAND_MAX - 0.5);
	/* in bf16, as the codec's path rounds a cache's values before coding */
	for (int i = 0; i < 448; i++)
		lat[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(lat[i]));
	for (int i = 0; i < 64; i++)
		rope[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(rope[i]));
	uint8_t rec[584];
	wzc_encode_layer(c, 0, 1, lat, rope, rec, NULL);
	int scales = 1, codes = 1, floored = 0;
	for (int b = 0; b < 7; b++) {
		float m = 0;
		for (int i = 0; i < 64; i++)
			m = fmaxf(m, fabsf(lat[64 * b + i]));
		/* FlashMLA's tests/quant.py: 2^ceil(log2(max(amax / 448, 1e-4))); the
		 * first tile (amax ~5e-4) sits under the floor, 2^-13 */
		int e = (int)ceilf(log2f(fmaxf(m / 448.0f, 1e-4f)));
		floored += e == -13;
		scales &= rec[576 + b] == e + 127;
		for (int i = 0; i < 64; i++)
			codes &= rec[64 * b + i] == wzc_e4m3_from_f32(lat[64 * b + i] / ldexpf(1.0f, e));
	}
	ok(scales && floored >= 1, "each 64 values' scale: the UE8M0 exponent of "
				   "2^ceil(log2(max(amax / 448, 1e-4))), %d at the floor", floored);
	ok(codes, "latent bytes 0..447: e4m3(x / scale) in order");
	int ropes = 1;
	for (int i = 0; i < 64; i++)
		ropes &= (rec[448 + 2 * i] | rec[449 + 2 * i] << 8) == wzc_bf16_from_f32(rope[i]);
	ok(ropes, "bytes 448..575: the position part in bf16");
	is_long(rec[583], 0, "byte 583: the pad");
	if (wzc_decode_layer(c, 0, 1, rec, lat2, rope2))
		ok(0, "layer %d decoded (out of memory?)", 0);
	double err = 0, pow2 = 0;
	for (int i = 0; i < 448; i++) {
		err += (lat2[i] - lat[i]) * (double)(lat2[i] - lat[i]);
		pow2 += lat[i] * (double)lat[i];
	}
	ok(err / pow2 < 1e-3, "round trip: nmse %.2g (e4m3's 3 mantissa bits)", err / pow2);
	wzc_codec_free(c);
	return tap_done();
}
