/* Fuzz target for the wz decoder: a profile file parsed from untrusted
 * bytes, then records decoded at a rate chosen by the input.  Input layout
 * (fuzz_profile.h): byte 0 the rate (1 + byte / 16 bits/value), bytes 1..4
 * the profile's length n (little-endian), n profile bytes, then records.
 * The profile's checksum is recomputed, so mutations reach the field checks
 * and the decoder instead of stopping at the checksum; a profile and the
 * coder for each rate are built once per process (fuzz_profile.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "tests/fuzz/fuzz_profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void free_codec(void *c)
{
	wzc_codec_free(c);
}

/* The coder for rate byte r with profile prof, built on first use; NULL
 * when the planner refuses the pair. */
static wzc_codec *codec_for(const wzc_profile *prof, uint8_t r)
{
	int found;
	wzc_codec *codec = fuzz_memo_get(prof, r, &found);
	if (found)
		return codec;
	/* Keep planning cheap: shapes from a fuzzer are small anyway. */
	char name[32];
	snprintf(name, sizeof name, "wz-%.4f", 1.0 + r / 16.0);
	wzc_format fmt;
	codec = NULL;
	if (prof->R > 1024 || prof->L > 16 || wzc_format_parse(name, &fmt, NULL) ||
	    wzc_codec_new(&fmt, prof->L, prof->R, prof->P, prof, &codec, NULL))
		codec = NULL;
	fuzz_memo_put(prof, r, codec, free_codec);
	return codec;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 5)
		return 0;
	size_t n = fuzz_profile_len(data, size);
	const wzc_profile *prof = fuzz_profile_get(data + 5, n);
	wzc_codec *codec = prof ? codec_for(prof, data[0]) : NULL;
	if (!codec)
		return 0;
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
		wz_err e = wzc_decode_token(codec, layer, buf, lat, rope);
		/* at a position the record's bytes give (any int64: a profile
		 * that undoes RoPE turns the position part by it) */
		int64_t at = 0;
		memcpy(&at, buf, rb < sizeof at ? rb : sizeof at);
		wz_err e_at = wzc_decode_token_at(codec, layer, buf, at, lat, rope);
		/* no record is refused: a decode of a whole profile's layer
		 * fails only where its plan or scratch finds no memory */
		if ((e && e != WZ_ERR_NOMEM) || (e_at && e_at != WZ_ERR_NOMEM))
			abort();
		wzc_wz_decode_token_transformed(codec, layer, buf, lat, rope);
		rec += take;
		left -= take;
	}
	free(buf);
	free(lat);
	free(rope);
	return 0;
}
