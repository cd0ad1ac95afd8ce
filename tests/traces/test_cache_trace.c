/* Tests of the cache-trace reader and writer: 16-bit conversions, round
 * trips in every dtype, and every malformed-file case docs/cache-trace.md
 * lists (each must fail with WZ_ERR_INPUT and a message naming the file and
 * the tensor or key). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/wz_io.h"
#include "tests/tap.h"
#include "traces/cache_trace.h"
#include "traces/float16.h"

static void test_conversions(void)
{
	int bad_f16 = 0, bad_bf16 = 0;
	for (uint32_t h = 0; h < 65536; h++) {
		float f = wzt_f16_to_f32((uint16_t)h);
		if (!isnan(f) && wzt_f32_to_f16(f) != h)
			bad_f16++;
		float b = wzt_bf16_to_f32((uint16_t)h);
		if (!isnan(b) && wzt_f32_to_bf16(b) != h)
			bad_bf16++;
	}
	is_long(bad_f16, 0, "every non-NaN f16 code survives f16 -> f32 -> f16");
	is_long(bad_bf16, 0, "every non-NaN bf16 code survives bf16 -> f32 -> bf16");
	/* Ties go to the even neighbour. */
	is_long(wzt_f32_to_f16(1.0f + 0x1p-11f), 0x3c00, "f16: 1 + half an ulp rounds to 1 (even)");
	is_long(wzt_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02,
		"f16: 1 + 1.5 ulp rounds up to the even code");
	is_long(wzt_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80, "bf16: a tie rounds to even");
	is_long(wzt_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82, "bf16: the other tie rounds up");
	is_long(wzt_f32_to_f16(0x1p-25f), 0, "f16: half the smallest subnormal rounds to 0");
	is_long(wzt_f32_to_f16(0x1.8p-25f), 1, "f16: above half rounds to the smallest subnormal");
	is_long(wzt_f32_to_f16(65504.0f), 0x7bff, "f16: the largest finite value");
	is_long(wzt_f32_to_f16(65519.0f), 0x7bff, "f16: just under 65520 rounds down");
	is_long(wzt_f32_to_f16(65520.0f), 0x7c00, "f16: 65520 rounds to infinity");
	ok(wzt_f16_fits(65519.0f) && !wzt_f16_fits(65520.0f), "wzt_f16_fits matches the rounding");
	ok(isnan(wzt_bf16_to_f32(wzt_f32_to_bf16(NAN))), "bf16 keeps NaN a NaN");
}

/* A small trace with queries and values exercising every dtype's range. */
static wzt_cache_trace *small_trace(int with_queries)
{
	wzt_cache_trace *t = wzt_cache_trace_new(2, 5, 6, 4, with_queries ? 3 : 0, with_queries ? 2 : 0);
	size_t nl = 2 * 5 * 6, nr = 2 * 5 * 4;
	for (size_t i = 0; i < nl; i++)
		t->latent[i] = (float)((double)i * 0.37 - 9.1) * (i % 7 == 0 ? 1e-3f : 1.0f);
	for (size_t i = 0; i < nr; i++)
		t->rope[i] = (float)sin((double)i) * 3.0f;
	for (int i = 0; i < 5; i++)
		t->positions[i] = 100 + i;
	if (with_queries) {
		for (size_t i = 0; i < 2 * 3 * 2 * 6; i++)
			t->q_latent[i] = (float)cos((double)i) * 7.0f;
		for (size_t i = 0; i < 2 * 3 * 2 * 4; i++)
			t->q_rope[i] = (float)i / 13.0f;
		t->q_index[0] = 1;
		t->q_index[1] = 3;
		t->q_index[2] = 4;
		t->softmax_scale = 0.125;
	}
	t->model = strdup("test-model");
	t->split = strdup("calibration");
	t->window = strdup("w0");
	t->source = strdup("unit test");
	return t;
}

static float stored(float v, wzt_dtype dtype)
{
	if (dtype == WZT_DTYPE_F16)
		return wzt_f16_to_f32(wzt_f32_to_f16(v));
	if (dtype == WZT_DTYPE_BF16)
		return wzt_bf16_to_f32(wzt_f32_to_bf16(v));
	return v;
}

static int same_values(const float *got, const float *want, size_t n, wzt_dtype dtype)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != stored(want[i], dtype))
			return 0;
	return 1;
}

/* Must run before any other write: WZ_FAULT_WRITE=1 fails the process's
 * first atomic write. */
static void test_failed_write(const char *dir)
{
	wzt_cache_trace *t = small_trace(1);
	char *path = wz_path_join(dir, "faulty.safetensors");
	wz_diag diag;
	setenv("WZ_FAULT_WRITE", "1", 1);
	ok(wzt_cache_trace_write(path, t, WZT_DTYPE_F32, &diag) != WZ_OK && access(path, F_OK) != 0,
	   "a failed write leaves no file");
	unsetenv("WZ_FAULT_WRITE");
	free(path);
	wzt_cache_trace_free(t);
}

static void test_round_trip(const char *dir)
{
	const wzt_dtype dtypes[] = { WZT_DTYPE_F32, WZT_DTYPE_F16, WZT_DTYPE_BF16 };
	wzt_cache_trace *t = small_trace(1);
	for (int d = 0; d < 3; d++) {
		char name[64];
		snprintf(name, sizeof name, "rt-%s.safetensors", wzt_dtype_name(dtypes[d]));
		char *path = wz_path_join(dir, name);
		wz_diag diag;
		wzt_cache_trace *back = NULL;
		int wrote = wzt_cache_trace_write(path, t, dtypes[d], &diag) == WZ_OK;
		ok(wrote, "%s: written", name);
		ok(wzt_cache_trace_read(path, &back, &diag) == WZ_OK, "%s: read back", name);
		if (!back) {
			printf("#   %s\n", diag.msg);
			free(path);
			continue;
		}
		ok(back->L == 2 && back->T == 5 && back->R == 6 && back->P == 4 && back->Q == 3 &&
			   back->H == 2,
		   "%s: shapes", name);
		ok(same_values(back->latent, t->latent, 60, dtypes[d]) &&
			   same_values(back->rope, t->rope, 40, dtypes[d]) &&
			   same_values(back->q_latent, t->q_latent, 72, dtypes[d]) &&
			   same_values(back->q_rope, t->q_rope, 48, dtypes[d]),
		   "%s: every value as the dtype rounds it", name);
		ok(back->positions[4] == 104 && back->q_index[1] == 3, "%s: I64 tensors", name);
		is_str(back->model, "test-model", "model metadata");
		is_str(back->split, "calibration", "split metadata");
		is_str(back->window, "w0", "window metadata");
		is_str(back->source, "unit test", "source metadata");
		is_double(back->softmax_scale, 0.125, 0, "softmax_scale metadata");
		wzt_cache_trace_free(back);
		free(path);
	}
	/* Encoding is deterministic and F32 is lossless: encode(read(x)) == x. */
	unsigned char *a, *b;
	size_t na, nb;
	wzt_cache_trace *back;
	wzt_cache_trace_encode(t, WZT_DTYPE_F32, &a, &na, NULL);
	ok(wzt_cache_trace_parse(a, na, "mem", &back, NULL) == WZ_OK, "parse from memory");
	wzt_cache_trace_encode(back, WZT_DTYPE_F32, &b, &nb, NULL);
	ok(na == nb && !memcmp(a, b, na), "F32 re-encoding gives the same bytes");
	ok(na % 8 == 0 && (a[0] + 8) % 8 == 0, "header padded to 8 bytes");
	free(a);
	free(b);
	wzt_cache_trace_free(back);
	/* Without queries there are no query tensors and no softmax_scale needed. */
	wzt_cache_trace *nq = small_trace(0);
	wzt_cache_trace_encode(nq, WZT_DTYPE_BF16, &a, &na, NULL);
	ok(wzt_cache_trace_parse(a, na, "mem", &back, NULL) == WZ_OK && back->Q == 0 &&
		   !back->q_latent,
	   "a trace without queries round-trips");
	ok(!strstr((const char *)a + 8, "q_latent"), "no query tensors written");
	free(a);
	wzt_cache_trace_free(back);
	wzt_cache_trace_free(nq);

	/* The writer refuses what the reader would refuse, and writes nothing. */
	char *path = wz_path_join(dir, "refused.safetensors");
	wz_diag diag;
	t->latent[7] = 70000.0f;
	ok(wzt_cache_trace_write(path, t, WZT_DTYPE_F16, &diag) == WZ_ERR_RANGE &&
		   access(path, F_OK) != 0,
	   "F16 overflow refused, nothing written");
	has_str(diag.msg, "layer 0, token 1, channel 1", "overflow message names the place");
	ok(wzt_cache_trace_write(path, t, WZT_DTYPE_F32, NULL) == WZ_OK, "F32 holds 70000");
	unlink(path);
	t->latent[7] = NAN;
	ok(wzt_cache_trace_write(path, t, WZT_DTYPE_F32, &diag) == WZ_ERR_INPUT &&
		   access(path, F_OK) != 0,
	   "NaN refused by the writer");
	t->latent[7] = 1;
	free(path);
	wzt_cache_trace_free(t);
}

/* The encoded small trace (F32, with queries) to mutate. */
static unsigned char *good_file(size_t *n)
{
	wzt_cache_trace *t = small_trace(1);
	unsigned char *bytes;
	wzt_cache_trace_encode(t, WZT_DTYPE_F32, &bytes, n, NULL);
	wzt_cache_trace_free(t);
	return bytes;
}

/* A copy with the first `old` in the header replaced by `new`, the header
 * length fixed up, data unchanged. */
static unsigned char *edit_header(const unsigned char *bytes, size_t n, const char *old,
				  const char *new, size_t *out_n)
{
	uint64_t hlen = 0;
	for (int i = 7; i >= 0; i--)
		hlen = hlen << 8 | bytes[i];
	char *header = strndup((const char *)bytes + 8, (size_t)hlen);
	char *at = strstr(header, old);
	if (!at) {
		printf("# test bug: '%s' not in the header\n", old);
		exit(1);
	}
	size_t nh = hlen - strlen(old) + strlen(new), ndata = n - 8 - (size_t)hlen;
	unsigned char *out = malloc(8 + nh + ndata);
	for (int i = 0; i < 8; i++)
		out[i] = (unsigned char)((uint64_t)nh >> (8 * i));
	size_t pre = (size_t)(at - header);
	memcpy(out + 8, header, pre);
	memcpy(out + 8 + pre, new, strlen(new));
	memcpy(out + 8 + pre + strlen(new), at + strlen(old), hlen - pre - strlen(old));
	memcpy(out + 8 + nh, bytes + 8 + hlen, ndata);
	free(header);
	*out_n = 8 + nh + ndata;
	return out;
}

/* Expects WZ_ERR_INPUT with every needle (NULL-ended) in the message. */
static void expect_refused(const unsigned char *bytes, size_t n, const char *what, ...)
{
	wz_diag diag;
	wzt_cache_trace *t = NULL;
	wz_err err = wzt_cache_trace_parse(bytes, n, "bad.safetensors", &t, &diag);
	if (!ok(err == WZ_ERR_INPUT && !t, "%s: refused with WZ_ERR_INPUT", what))
		printf("#   got %d: %s\n", err, err ? diag.msg : "");
	if (err) {
		va_list ap;
		va_start(ap, what);
		const char *needle;
		int all = strstr(diag.msg, "bad.safetensors") != NULL;
		while ((needle = va_arg(ap, const char *)))
			all = all && strstr(diag.msg, needle);
		va_end(ap);
		if (!ok(all, "%s: message names file and place", what))
			printf("#   %s\n", diag.msg);
	}
	wzt_cache_trace_free(t);
}

static void refuse_edit(const unsigned char *good, size_t n, const char *old, const char *new,
			const char *what, const char *needle1, const char *needle2)
{
	size_t m;
	unsigned char *bad = edit_header(good, n, old, new, &m);
	expect_refused(bad, m, what, needle1, needle2, (const char *)NULL);
	free(bad);
}

/* Offset of value i of the float tensor `name` in the encoded F32 file. */
static size_t value_offset(const unsigned char *bytes, const char *name, size_t i)
{
	uint64_t hlen = 0;
	for (int k = 7; k >= 0; k--)
		hlen = hlen << 8 | bytes[k];
	char key[64];
	snprintf(key, sizeof key, "\"%s\":", name);
	const char *at = strstr((const char *)bytes + 8, key);
	const char *offs = strstr(at, "\"data_offsets\":[") + strlen("\"data_offsets\":[");
	return 8 + (size_t)hlen + (size_t)strtoull(offs, NULL, 10) + 4 * i;
}

static void test_bad_input(void)
{
	size_t n;
	unsigned char *good = good_file(&n);
	wzt_cache_trace *t;
	ok(wzt_cache_trace_parse(good, n, "good", &t, NULL) == WZ_OK, "the unmodified file is read");
	wzt_cache_trace_free(t);

	expect_refused(good, 0, "empty file", "too short", (const char *)NULL);
	expect_refused(good, 7, "7 bytes", "too short", (const char *)NULL);
	expect_refused(good, n - 1, "truncated by one byte", "truncated?", (const char *)NULL);
	expect_refused(good, n / 2, "truncated in the data", "truncated?", (const char *)NULL);
	expect_refused(good, 40, "truncated in the header", "header length", (const char *)NULL);

	unsigned char *bad = malloc(n + 16);
	memcpy(bad, good, n);
	bad[7] = 0x10; /* header length ~ 2^60 */
	expect_refused(bad, n, "header length past the end", "header length", (const char *)NULL);
	memset(bad, 0, 8);
	expect_refused(bad, n, "header length zero", "is zero", (const char *)NULL);
	memcpy(bad, good, n);
	memset(bad + n, 0, 16);
	expect_refused(bad, n + 16, "trailing bytes", "after the last tensor", (const char *)NULL);
	memcpy(bad, good, n);
	uint32_t nan_bits = 0x7fc00000u, inf_bits = 0xff800000u;
	/* latent is [2][5][6]: value 41 is layer 1, token 1, channel 5. */
	memcpy(bad + value_offset(good, "latent", 41), &nan_bits, 4);
	expect_refused(bad, n, "NaN in the latent", "'latent'", "NaN at layer 1, token 1, channel 5",
		       (const char *)NULL);
	memcpy(bad, good, n);
	/* rope [2][5][4]: value 13 is layer 0, token 3, channel 1. */
	memcpy(bad + value_offset(good, "rope", 13), &inf_bits, 4);
	expect_refused(bad, n, "-Inf in the position part", "'rope'",
		       "infinity at layer 0, token 3, channel 1", (const char *)NULL);
	memcpy(bad, good, n);
	/* q_latent [2][3][2][6]: value 59 is layer 1, query 1, head 1, channel 5. */
	memcpy(bad + value_offset(good, "q_latent", 59), &nan_bits, 4);
	expect_refused(bad, n, "NaN in a query", "'q_latent'",
		       "layer 1, query 1, head 1, channel 5", (const char *)NULL);
	free(bad);

	refuse_edit(good, n, "{", "[", "header not an object", "JSON", NULL);
	refuse_edit(good, n, "\"dtype\":\"F32\"", "\"dtype\":\"F33\"", "unknown dtype",
		    "unknown dtype 'F33'", NULL);
	refuse_edit(good, n, "\"latent\":{\"dtype\":\"F32\",\"shape\":[2,5,6]",
		    "\"latent\":{\"dtype\":\"I64\",\"shape\":[2,5,3]",
		    "I64 latent", "'latent'", "not allowed");
	refuse_edit(good, n, "\"positions\":{\"dtype\":\"I64\"", "\"positions\":{\"dtype\":\"F64\"",
		    "float positions", "'positions'", "must be I64");
	refuse_edit(good, n, "\"shape\":[2,5,6]", "\"shape\":[2,5,7]", "shape does not match offsets",
		    "'latent'", "need");
	refuse_edit(good, n, "\"shape\":[2,5,6]", "\"shape\":[2,-5,6]", "negative dimension",
		    "'latent'", "shape[1]");
	refuse_edit(good, n, "\"shape\":[2,5,6]", "\"shape\":[2,0,6]", "zero dimension", "'latent'",
		    NULL);
	refuse_edit(good, n, "\"shape\":[2,5,4]", "\"shape\":[2,4,5]", "rope tokens differ",
		    "'rope'", "other tensors");
	refuse_edit(good, n, "\"shape\":[2,5,6]", "\"shape\":[2,30]", "latent not 3-dimensional",
		    "'latent'", "[L, T, R]");
	refuse_edit(good, n, "\"data_offsets\":[0,40]", "\"data_offsets\":[0,48]",
		    "offsets past the size", "'positions'", NULL);
	refuse_edit(good, n, "\"data_offsets\":[0,40]", "\"data_offsets\":[40,0]",
		    "offsets reversed", "'positions'", "outside");
	refuse_edit(good, n, "\"data_offsets\":[0,40]", "\"data_offsets\":[0]", "one offset",
		    "'positions'", "two non-negative");
	refuse_edit(good, n, "\"data_offsets\":[40,64]", "\"data_offsets\":[16,40]",
		    "overlapping tensors", "overlap", NULL);
	refuse_edit(good, n, "\"latent\":", "\"latent_x\":", "missing latent", "missing tensor",
		    "'latent'");
	size_t m, m2;
	unsigned char *b1 = edit_header(good, n, "\"latent\":", "\"lat\":", &m);
	unsigned char *b2 = edit_header(b1, m, "\"rope\":", "\"rop\":", &m2);
	expect_refused(b2, m2, "missing latent and rope", "'latent' and 'rope'", (const char *)NULL);
	free(b1);
	free(b2);
	refuse_edit(good, n, "\"q_rope\":", "\"q_rope_x\":", "queries incomplete", "'q_rope'", NULL);
	refuse_edit(good, n, "\"wz-cache-trace\"", "\"other\"", "wrong format", "format", NULL);
	refuse_edit(good, n, "\"version\":\"1\"", "\"version\":\"2\"", "newer version", "version",
		    NULL);
	refuse_edit(good, n, "\"version\":\"1\",", "", "no version", "\"version\"", NULL);
	refuse_edit(good, n, "\"calibration\"", "\"train\"", "unknown split", "split", NULL);
	refuse_edit(good, n, "\"softmax_scale\":\"0.125\"", "\"softmax_scale\":\"-1\"",
		    "negative softmax_scale", "softmax_scale", NULL);
	refuse_edit(good, n, "\"softmax_scale\":\"0.125\",", "", "queries without softmax_scale",
		    "softmax_scale", NULL);
	refuse_edit(good, n, "\"model\":\"test-model\"", "\"model\":7", "non-string metadata",
		    "\"model\"", NULL);
	refuse_edit(good, n, "\"format\":", "\"format\":\"x\",\"format\":", "duplicate key", "JSON",
		    NULL);

	/* Values inside the I64 tensors. */
	unsigned char *c = malloc(n);
	memcpy(c, good, n);
	size_t pos0 = value_offset(good, "positions", 0);
	memset(c + pos0, 0xff, 8); /* -1 */
	expect_refused(c, n, "negative position", "'positions'", "token 0", (const char *)NULL);
	memcpy(c, good, n);
	size_t qi = value_offset(good, "q_index", 0) + 8 * 2; /* value_offset counts 4-byte steps */
	c[qi] = 5;
	expect_refused(c, n, "q_index past the tokens", "'q_index'", "query 2",
		       (const char *)NULL);
	free(c);
	free(good);
}

static void test_read_errors(const char *dir)
{
	wz_diag diag;
	wzt_cache_trace *t;
	char *missing = wz_path_join(dir, "missing.safetensors");
	ok(wzt_cache_trace_read(missing, &t, &diag) == WZ_ERR_INPUT && strstr(diag.msg, missing),
	   "a missing file is an input error naming it");
	ok(wzt_cache_trace_read(dir, &t, &diag) == WZ_ERR_INPUT, "a folder is refused");
	char *empty = wz_path_join(dir, "empty.safetensors");
	wz_write_file_atomic(empty, "", 0, NULL);
	ok(wzt_cache_trace_read(empty, &t, &diag) == WZ_ERR_INPUT && strstr(diag.msg, empty),
	   "an empty file is refused, naming it");
	free(missing);
	free(empty);
}

int main(void)
{
	char dir[] = "test-trace.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	test_failed_write(dir);
	test_conversions();
	test_round_trip(dir);
	test_bad_input();
	test_read_errors(dir);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return tap_done();
}
