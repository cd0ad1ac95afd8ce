/* Fuzz target for the wz decoder: a profile file parsed from untrusted
 * bytes, then records decoded at a rate chosen by the input.  Input layout:
 * byte 0 the rate (1 + byte / 16 bits/value), bytes 1..4 the profile's
 * length n (little-endian), n profile bytes, then records.  The profile's
 * checksum is recomputed first, so mutations reach the field checks and the
 * decoder instead of stopping at the checksum. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 5)
		return 0;
	double rate = 1.0 + data[0] / 16.0;
	size_t n = (size_t)data[1] | (size_t)data[2] << 8 | (size_t)data[3] << 16 |
		   (size_t)data[4] << 24;
	if (n > size - 5)
		n = size - 5;
	uint8_t *prof_bytes = malloc(n ? n : 1);
	if (!prof_bytes)
		return 0;
	memcpy(prof_bytes, data + 5, n);
	/* unpatched first: the checksum check itself must hold up */
	wzc_profile *prof = NULL;
	if (!wzc_profile_parse(prof_bytes, n, "fuzz", &prof, NULL))
		wzc_profile_free(prof);
	prof = NULL;
	if (n >= 8) {
		uint64_t sum = wzc_profile_checksum(prof_bytes, n - 8);
		for (int i = 0; i < 8; i++)
			prof_bytes[n - 8 + i] = (uint8_t)(sum >> (8 * i));
	}
	if (wzc_profile_parse(prof_bytes, n, "fuzz", &prof, NULL) || !prof) {
		free(prof_bytes);
		return 0;
	}
	/* Keep planning cheap: shapes from a fuzzer are small anyway. */
	char name[32];
	snprintf(name, sizeof name, "wz-%.4f", rate);
	wzc_format fmt;
	wzc_codec *codec = NULL;
	if (prof->R <= 1024 && prof->L <= 16 && !wzc_format_parse(name, &fmt, NULL) &&
	    !wzc_codec_new(&fmt, prof->L, prof->R, prof->P, prof, &codec, NULL)) {
		size_t rb = wzc_codec_record_bytes(codec);
		const uint8_t *rec = data + 5 + n;
		size_t left = size - 5 - n;
		uint8_t *buf = calloc(rb, 1);
		float *lat = malloc(sizeof(float) * (size_t)prof->R);
		float *rope = malloc(sizeof(float) * (size_t)(prof->P + 1));
		for (int layer = 0; buf && lat && rope && layer < prof->L; layer++) {
			/* every layer at least once, zero-padded past the input */
			size_t take = left < rb ? left : rb;
			memset(buf, 0, rb);
			memcpy(buf, rec, take);
			wzc_decode_token(codec, layer, buf, lat, rope);
			wzc_wz_decode_token_transformed(codec, layer, buf, lat, rope);
			rec += take;
			left -= take;
		}
		free(buf);
		free(lat);
		free(rope);
		wzc_codec_free(codec);
	}
	wzc_profile_free(prof);
	free(prof_bytes);
	return 0;
}
