/* Tests of the block reader of cache traces (traces/cache_trace_stream.c)
 * against the whole-file reader: the same shape, metadata and values in
 * every dtype, block by block; the same refusals with the same messages
 * (a truncated file on opening, a non-finite value when its block is
 * read, bad queries or indices on opening); a file that shrinks after
 * opening, and ranges outside the trace, are errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/wz_io.h"
#include "tests/tap.h"
#include "traces/cache_trace.h"
#include "traces/synth_cache.h"

static wzt_cache_trace *make_trace(int L, int T, int Q, int H)
{
	wzt_synth_params p;
	wzt_synth_params_default(&p);
	p.family = WZT_FAMILY_MLA_A;
	p.seed = 3;
	p.L = L;
	p.T = T;
	p.Q = Q;
	p.H = H;
	p.R = 40;
	p.P = 8;
	p.split = "test";
	wzt_cache_trace *t = NULL;
	wz_diag d;
	if (wzt_synth_cache(&p, &t, &d))
		printf("# synth: %s\n", d.msg);
	return t;
}

/* Every block read through the stream equals the whole reader's values. */
static int same_blocks(const wzt_cache_stream *s, const wzt_cache_trace *t, int run)
{
	float *lat = malloc(sizeof(float) * (size_t)run * t->R);
	float *rope = malloc(sizeof(float) * ((size_t)run * t->P + 1));
	int same = lat && rope;
	wz_diag d;
	for (int l = 0; same && l < t->L; l++)
		for (int t0 = 0; same && t0 < t->T; t0 += run) {
			int n = t->T - t0 < run ? t->T - t0 : run;
			size_t row = (size_t)l * t->T + (size_t)t0;
			same = !wzt_cache_stream_read(s, l, t0, n, lat, rope, &d) &&
			       !memcmp(lat, t->latent + row * t->R, sizeof(float) * (size_t)n * t->R) &&
			       !memcmp(rope, t->rope + row * t->P, sizeof(float) * (size_t)n * t->P);
		}
	free(lat);
	free(rope);
	return same;
}

static void test_same_values(const char *dir)
{
	wzt_cache_trace *t = make_trace(3, 150, 4, 2);
	if (!ok(t != NULL, "a synthetic trace"))
		return;
	static const wzt_dtype dtypes[] = { WZT_DTYPE_F32, WZT_DTYPE_F16, WZT_DTYPE_BF16 };
	char *path = wz_path_join(dir, "t.safetensors");
	for (int i = 0; i < 3; i++) {
		wz_diag d;
		wzt_cache_trace *whole = NULL;
		wzt_cache_stream *s = NULL;
		if (!ok(!wzt_cache_trace_write(path, t, dtypes[i], &d) &&
				!wzt_cache_trace_read(path, &whole, &d) &&
				!wzt_cache_stream_open(path, &s, &d),
			"%s: written, read whole and opened", wzt_dtype_name(dtypes[i])))
			continue;
		const wzt_cache_trace *in = wzt_cache_stream_info(s);
		ok(in->L == 3 && in->T == 150 && in->R == 40 && in->P == 8 && in->Q == 4 &&
			   in->H == 2 && !in->latent && !in->rope && !in->q_latent &&
			   (whole->positions ? in->positions &&
						   !memcmp(in->positions, whole->positions,
							   sizeof(int64_t) * 150)
					     : !in->positions) &&
			   !strcmp(in->split, whole->split) && !strcmp(in->model, whole->model) &&
			   !strcmp(in->source, whole->source) &&
			   in->softmax_scale == whole->softmax_scale,
		   "%s: the shape and metadata, the positions, and no other arrays",
		   wzt_dtype_name(dtypes[i]));
		ok(same_blocks(s, whole, 64) && same_blocks(s, whole, 7) && same_blocks(s, whole, 150),
		   "%s: runs of 64, 7 and 150 tokens hold the whole reader's values",
		   wzt_dtype_name(dtypes[i]));
		float x[40 * 2], y[8 * 2];
		ok(wzt_cache_stream_read(s, 3, 0, 1, x, y, &d) == WZ_ERR_RANGE &&
			   wzt_cache_stream_read(s, 0, 149, 2, x, y, &d) == WZ_ERR_RANGE &&
			   wzt_cache_stream_read(s, 0, -1, 1, x, y, &d) == WZ_ERR_RANGE,
		   "%s: ranges outside the trace are refused", wzt_dtype_name(dtypes[i]));
		wzt_cache_stream_close(s);
		wzt_cache_trace_free(whole);
	}
	free(path);
	wzt_cache_trace_free(t);
}

/* Both readers on `bytes`: the same refusal and message (the stream's when
 * its blocks are read); 1 when both refused alike. */
static int refused_alike(const char *path, const unsigned char *bytes, size_t n, const char *needle)
{
	wz_diag dw, ds;
	wzt_cache_trace *whole = NULL;
	wzt_cache_stream *s = NULL;
	if (wz_write_file_atomic(path, bytes, n, NULL))
		return 0;
	wz_err ew = wzt_cache_trace_read(path, &whole, &dw);
	wz_err es = wzt_cache_stream_open(path, &s, &ds);
	if (!es) {
		const wzt_cache_trace *in = wzt_cache_stream_info(s);
		float *lat = malloc(sizeof(float) * 64 * (size_t)in->R);
		float *rope = malloc(sizeof(float) * (64 * (size_t)in->P + 1));
		for (int l = 0; !es && l < in->L; l++)
			for (int t0 = 0; !es && t0 < in->T; t0 += 64)
				es = wzt_cache_stream_read(s, l, t0, in->T - t0 < 64 ? in->T - t0 : 64, lat,
							   rope, &ds);
		free(lat);
		free(rope);
		wzt_cache_stream_close(s);
	}
	wzt_cache_trace_free(whole);
	if (ew != WZ_ERR_INPUT || es != WZ_ERR_INPUT || strcmp(dw.msg, ds.msg) ||
	    !strstr(ds.msg, needle)) {
		printf("# whole %d: %s\n# stream %d: %s\n", ew, ew ? dw.msg : "", es, es ? ds.msg : "");
		return 0;
	}
	printf("# %s\n", ds.msg);
	return 1;
}

/* The offset in the file of element `i` of a tensor stored in dtype size
 * `size`: the encoder's layout (positions, q_index, then latent, rope,
 * q_latent, q_rope). */
static size_t element_at(const unsigned char *bytes, const char *tensor, size_t i, size_t size)
{
	uint64_t hl = 0;
	for (int k = 7; k >= 0; k--)
		hl = (hl << 8) | bytes[k];
	char key[64];
	snprintf(key, sizeof key, "\"%s\"", tensor);
	const char *h = strstr((const char *)bytes + 8, key);
	const char *o = h ? strstr(h, "\"data_offsets\":[") : NULL;
	return o ? (size_t)(8 + hl + strtoull(o + 16, NULL, 10) + i * size) : 0;
}

static void test_refusals(const char *dir)
{
	wzt_cache_trace *t = make_trace(3, 150, 4, 2);
	unsigned char *bytes = NULL;
	size_t n = 0;
	wz_diag d;
	if (!ok(t && !wzt_cache_trace_encode(t, WZT_DTYPE_BF16, &bytes, &n, &d), "a bf16 trace's bytes"))
		return;
	char *path = wz_path_join(dir, "bad.safetensors");
	unsigned char *b = malloc(n);
	ok(refused_alike(path, bytes, n - 2, "data_offsets"), "a truncated file: the same refusal");
	ok(refused_alike(path, bytes, 5, "too short"), "five bytes: the same refusal");
	/* a NaN in the latent of layer 2, token 130, channel 7 (bf16 0x7fc0) */
	size_t at = element_at(bytes, "latent", ((size_t)2 * 150 + 130) * 40 + 7, 2);
	memcpy(b, bytes, n);
	b[at] = 0xc0;
	b[at + 1] = 0x7f;
	ok(at && refused_alike(path, b, n, "NaN at layer 2, token 130, channel 7"),
	   "a NaN in the last block: the same message, when its block is read");
	/* infinity in the rope of layer 0 token 3 channel 1 (bf16 0x7f80) */
	at = element_at(bytes, "rope", (size_t)3 * 8 + 1, 2);
	memcpy(b, bytes, n);
	b[at] = 0x80;
	b[at + 1] = 0x7f;
	ok(at && refused_alike(path, b, n, "infinity at layer 0, token 3, channel 1"),
	   "infinity in the rope: the same message");
	/* a NaN in a query: refused on opening */
	at = element_at(bytes, "q_latent", 5, 2);
	memcpy(b, bytes, n);
	b[at] = 0xc0;
	b[at + 1] = 0x7f;
	ok(at && refused_alike(path, b, n, "q_latent"), "a NaN in a query: the same message");
	/* q_index 3 points past the tokens */
	at = element_at(bytes, "q_index", 3, 8);
	memcpy(b, bytes, n);
	memset(b + at, 0, 8);
	b[at] = 200;
	ok(at && refused_alike(path, b, n, "query 3 points at token 200"),
	   "a query index outside the tokens: the same message");
	/* a file that shrinks after it is opened */
	wzt_cache_stream *s = NULL;
	float lat[64 * 40], rope[64 * 8];
	if (ok(!wz_write_file_atomic(path, bytes, n, &d) && !wzt_cache_stream_open(path, &s, &d),
	       "opened")) {
		ok(truncate(path, (off_t)(n / 2)) == 0, "truncated behind the reader's back");
		wz_err e = wzt_cache_stream_read(s, 2, 64, 64, lat, rope, &d);
		ok(e == WZ_ERR_INPUT && strstr(d.msg, "shrank") && strstr(d.msg, path),
		   "a block past the new end: %s", d.msg);
		wzt_cache_stream_close(s);
	}
	ok(wzt_cache_stream_open(dir, &s, &d) == WZ_ERR_INPUT && !s, "a folder is refused");
	char *missing = wz_path_join(dir, "missing.safetensors");
	ok(wzt_cache_stream_open(missing, &s, &d) == WZ_ERR_INPUT && strstr(d.msg, missing),
	   "a missing file is an input error naming it");
	free(missing);
	free(b);
	free(path);
	free(bytes);
	wzt_cache_trace_free(t);
}

int main(void)
{
	char dir[] = "test-stream.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	test_same_values(dir);
	test_refusals(dir);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return tap_done();
}
