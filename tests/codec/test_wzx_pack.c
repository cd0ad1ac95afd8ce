/* Tests of the streaming, parallel wzx writer (codec/wzx/wzx_pack.c): the same
 * bytes as the in-memory writer for any thread count and any run size; the
 * error of a failing source is the lowest failing block's for any thread
 * count; a failing sink stops the writer.  And of pack and unpack to and
 * from files (codec/wzx/wzx_files.c): the same bytes, nothing left behind on
 * failure. */
#include <dirent.h>
#include <unistd.h>

#include "common/wz_io.h"
#include "tests/tap.h"

#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/wzx_files.h"
#include "tests/codec/window.h"

typedef struct {
	uint8_t *b;
	size_t n, cap;
	long calls, fail_at; /* fail on this call (-1: never) */
} mem_sink;

static wz_err to_mem(void *ctx, const void *bytes, size_t n, wz_diag *diag)
{
	mem_sink *m = ctx;
	if (m->calls++ == m->fail_at)
		return wz_diag_set(diag, WZ_ERR_IO, "sink: no room");
	if (m->n + n > m->cap) {
		size_t cap = (m->n + n) * 2;
		uint8_t *b = realloc(m->b, cap);
		if (!b)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		m->b = b;
		m->cap = cap;
	}
	memcpy(m->b + m->n, bytes, n);
	m->n += n;
	return WZ_OK;
}

typedef struct {
	const wzc_window *w;
	int fail_layer, fail_t0; /* this block's values cannot be had (-1: none) */
} window_source;

static wz_err from_window(void *ctx, int layer, int t0, int n, float *lat, float *rope,
			  wz_diag *diag)
{
	const window_source *s = ctx;
	const wzc_window *w = s->w;
	if (layer == s->fail_layer && t0 >= s->fail_t0)
		return wz_diag_set(diag, WZ_ERR_INPUT, "source: layer %d tokens %d.. unreadable", layer, t0);
	memcpy(lat, w->latent + ((size_t)layer * w->T + t0) * w->R, sizeof(float) * (size_t)n * w->R);
	memcpy(rope, w->rope + ((size_t)layer * w->T + t0) * w->P, sizeof(float) * (size_t)n * w->P);
	return WZ_OK;
}

/* Packs the window with the writer in runs of `run` blocks on `threads`. */
static wz_err pack(const wzc_wzx *x, wzc_codec *c, const wzc_window *w, long run, int threads,
		   window_source *src, mem_sink *m, wz_diag *d)
{
	wzc_wzx_writer *wr;
	wz_err e = wzc_wzx_writer_new(x, c, w->T, to_mem, m, &wr, d);
	if (e)
		return e;
	long nb = wzc_wzx_writer_blocks(wr);
	for (long b = 0; !e && b < nb; b += run)
		e = wzc_wzx_writer_put(wr, nb - b < run ? nb - b : run, threads, from_window, src, d);
	if (!e)
		e = wzc_wzx_writer_finish(wr, NULL, d);
	wzc_wzx_writer_free(wr);
	return e;
}

/* The in-memory path on the file read whole: its records, then
 * wzc_wzx_write.  The caller frees *out. */
static wz_err pack_whole(const char *path, const wzc_wzx *x, wzc_codec *c, uint8_t **out,
			 size_t *n, wz_diag *d)
{
	wzt_cache_trace *t;
	wz_err e = wzt_cache_trace_read(path, &t, d);
	if (e)
		return e;
	size_t B = wzc_codec_record_bytes(c), cap = wzc_wzx_bound(t->L, t->T, t->R, t->P, B, 0) + 256;
	uint8_t *rec = malloc(B * (size_t)t->T * t->L);
	*out = malloc(cap);
	for (int l = 0; !e && l < t->L; l++)
		e = wzc_encode_layer(c, l, t->T, t->latent + (size_t)l * t->T * t->R,
				     t->rope + (size_t)l * t->T * t->P, rec + B * t->T * l, d);
	if (!e)
		e = wzc_wzx_write(x, t->T, rec, *out, cap, n, NULL, d);
	free(rec);
	wzt_cache_trace_free(t);
	return e;
}

static wz_err from_stream(void *ctx, int layer, int t0, int n, float *lat, float *rope,
			  wz_diag *diag)
{
	return wzt_cache_stream_read(ctx, layer, t0, n, lat, rope, diag);
}

/* As `codec pack`: the file opened as a stream, runs of `run` blocks. */
static wz_err pack_stream(const char *path, const wzc_wzx *x, wzc_codec *c, long run, int threads,
			  mem_sink *m, wz_diag *d)
{
	wzt_cache_stream *s;
	wz_err e = wzt_cache_stream_open(path, &s, d);
	if (e)
		return e;
	wzc_wzx_writer *wr = NULL;
	e = wzc_wzx_writer_new(x, c, wzt_cache_stream_info(s)->T, to_mem, m, &wr, d);
	long nb = wr ? wzc_wzx_writer_blocks(wr) : 0;
	for (long b = 0; !e && b < nb; b += run)
		e = wzc_wzx_writer_put(wr, nb - b < run ? nb - b : run, threads, from_stream, s, d);
	if (!e)
		e = wzc_wzx_writer_finish(wr, NULL, d);
	wzc_wzx_writer_free(wr);
	wzt_cache_stream_close(s);
	return e;
}

static void test_from_file(const wzt_cache_trace *tr, const wzc_wzx *x, wzc_codec *c)
{
	char dir[] = "test-pack.XXXXXX";
	if (!ok(mkdtemp(dir) != NULL, "a folder for the trace files"))
		return;
	char *path = wz_path_join(dir, "t.safetensors"), *bad = wz_path_join(dir, "bad.safetensors");
	static const wzt_dtype dtypes[] = { WZT_DTYPE_BF16, WZT_DTYPE_F32 };
	wz_diag d;
	for (int di = 0; di < 2; di++) {
		uint8_t *ref = NULL;
		size_t n = 0;
		wz_err e = wzt_cache_trace_write(path, tr, dtypes[di], &d);
		if (!e)
			e = pack_whole(path, x, c, &ref, &n, &d);
		if (!ok(!e, "%s: the in-memory path on the file read whole (%zu bytes)",
			wzt_dtype_name(dtypes[di]), n)) {
			free(ref);
			continue;
		}
		static const int threads[] = { 1, 2, 7 };
		for (int ti = 0; ti < 3; ti++) {
			mem_sink m = { NULL, 0, 0, 0, -1 };
			e = pack_stream(path, x, c, 4L * threads[ti], threads[ti], &m, &d);
			ok(!e && m.n == n && !memcmp(m.b, ref, n),
			   "%s: the file read a block at a time on %d thread%s: the same %zu bytes",
			   wzt_dtype_name(dtypes[di]), threads[ti], threads[ti] > 1 ? "s" : "", m.n);
			free(m.b);
		}
		free(ref);
	}
	/* a NaN at layer 2, token 100, channel 9 of the bf16 file: the whole
	 * reader's message, on one thread and on seven */
	unsigned char *bytes = NULL;
	size_t n = 0;
	if (!wzt_cache_trace_encode(tr, WZT_DTYPE_BF16, &bytes, &n, &d)) {
		uint64_t hl = 0;
		for (int k = 7; k >= 0; k--)
			hl = (hl << 8) | bytes[k];
		const char *o = strstr(strstr((const char *)bytes + 8, "\"latent\""), "\"data_offsets\":[");
		size_t at = 8 + hl + strtoull(o + 16, NULL, 10) + 2 * (((size_t)2 * tr->T + 100) * tr->R + 9);
		bytes[at] = 0xc0;
		bytes[at + 1] = 0x7f;
		wz_write_file_atomic(bad, bytes, n, &d);
		wzt_cache_trace *t = NULL;
		wz_diag dw;
		ok(wzt_cache_trace_read(bad, &t, &dw) == WZ_ERR_INPUT, "the whole reader: %s", dw.msg);
		for (int k = 0; k < 2; k++) {
			mem_sink m = { NULL, 0, 0, 0, -1 };
			wz_err e = pack_stream(bad, x, c, 9, k ? 7 : 1, &m, &d);
			ok(e == WZ_ERR_INPUT && !strcmp(d.msg, dw.msg),
			   "packing it a block at a time on %d thread%s: the same error", k ? 7 : 1,
			   k ? "s" : "");
			free(m.b);
		}
		free(bytes);
	}
	unlink(path);
	unlink(bad);
	rmdir(dir);
	free(path);
	free(bad);
}


/* The number of entries in dir besides . and .. */
static int entries(const char *dir)
{
	DIR *dp = opendir(dir);
	int n = 0;
	for (struct dirent *de; dp && (de = readdir(dp));)
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (dp)
		closedir(dp);
	return n;
}

static int same_file(const char *path, const void *bytes, size_t n)
{
	char *got = NULL;
	size_t m = 0;
	wz_diag d;
	int same = !wz_read_file(path, (size_t)1 << 30, &got, &m, &d) && m == n &&
		   !memcmp(got, bytes, n);
	free(got);
	return same;
}

/* wzc_wzx_pack_file and wzc_wzx_unpack_file: ref is the in-memory
 * container of w (n bytes), rec its records [L][T][B]. */
static void test_files(const wzc_profile *prof, const wzc_format *fmt, const wzc_window *w,
		       const uint8_t *ref, size_t n, const uint8_t *rec, size_t B)
{
	char dir[] = "test-files.XXXXXX";
	if (!ok(mkdtemp(dir) != NULL, "a folder for the containers"))
		return;
	char *path = wz_path_join(dir, "c.wzx"), *out = wz_path_join(dir, "out.rec");
	wz_diag d;
	for (int threads = 1; threads <= 3; threads += 2) {
		window_source src = { w, -1, 0 };
		wzc_wzx_pack_result res;
		wz_err e = wzc_wzx_pack_file(prof, fmt, w, from_window, &src, threads, path, &res, &d);
		ok(!e && same_file(path, ref, n) && res.stats.total == n && res.record_bytes == B,
		   "pack_file on %d thread%s: the in-memory container's %zu bytes", threads,
		   threads > 1 ? "s" : "", n);
	}
	/* a source that fails: an error, the older container kept, no temporary left */
	{
		window_source src = { w, 2, 64 };
		wz_err e = wzc_wzx_pack_file(prof, fmt, w, from_window, &src, 2, path, NULL, &d);
		ok(e == WZ_ERR_INPUT && same_file(path, ref, n) && entries(dir) == 1,
		   "pack_file with a failing source: %s; the older file kept, nothing else left",
		   e ? d.msg : "no error");
	}
	wzc_format gpu;
	ok(!wzc_format_parse("fp8-mix", &gpu, &d) &&
		   wzc_wzx_pack_file(prof, &gpu, w, from_window, NULL, 1, out, NULL, &d) == WZ_ERR_USAGE &&
		   entries(dir) == 1,
	   "pack_file refuses a format without a wz grid, writing nothing");
	size_t rb = B * (size_t)w->T * w->L;
	for (int threads = 1; threads <= 3; threads += 2) {
		wzc_wzx_unpack_result res;
		wz_err e = wzc_wzx_unpack_file(path, prof, WZC_RESTORE_RECORDS, -1, -1, threads, out,
					       &res, &d);
		ok(!e && same_file(out, rec, rb) && res.bytes == rb && res.layers == w->L &&
			   res.tokens == (long)w->T * w->L,
		   "unpack_file on %d thread%s: the records packed (%zu bytes)", threads,
		   threads > 1 ? "s" : "", rb);
	}
	/* one block: layer 1's third, its last, of T - 128 tokens */
	{
		wzc_wzx_unpack_result res;
		wz_err e = wzc_wzx_unpack_file(path, prof, WZC_RESTORE_RECORDS, 1, 2, 2, out, &res, &d);
		size_t nb = B * (size_t)(w->T - 128);
		ok(!e && same_file(out, rec + B * ((size_t)w->T + 128), nb) && res.layers == 1 &&
			   res.tokens == w->T - 128,
		   "unpack_file of layer 1's last block: its %ld tokens' records", (long)w->T - 128);
	}
	unlink(out);
	ok(wzc_wzx_unpack_file(path, prof, WZC_RESTORE_RECORDS, 1, -1, 1, out, NULL, &d) == WZ_ERR_USAGE &&
		   wzc_wzx_unpack_file(path, prof, WZC_RESTORE_RECORDS, 1, 3, 1, out, NULL, &d) == WZ_ERR_RANGE &&
		   entries(dir) == 1,
	   "a layer without a block, or a block past the layer's last, is refused (%s), no output", d.msg);
	/* a container cut short: an error naming it, no output */
	char *cut = wz_path_join(dir, "cut.wzx");
	wz_write_file_atomic(cut, ref, n - 40, &d);
	wz_err e = wzc_wzx_unpack_file(cut, prof, WZC_RESTORE_RECORDS, -1, -1, 2, out, NULL, &d);
	ok(e && strstr(d.msg, cut) && entries(dir) == 2, "a truncated container: %s; no output",
	   e ? d.msg : "no error");
	unlink(cut);
	unlink(path);
	unlink(out);
	rmdir(dir);
	free(cut);
	free(path);
	free(out);
}

/* wzc_wzx_fit_rate: on a window of another family than the profile's
 * (iid coded with mla-b's tables, which code it larger than the profile
 * expects) the grid it picks writes at most the rate, where the profile's
 * grid writes more; the same grid on any thread count; the whole window
 * (all its blocks in the sample) packed in that grid writes what the
 * sample did; on a window shorter than a block, the profile's grid. */
static void test_fit(const wzc_profile *prof, int L)
{
	const double bits = 5.4;
	wzt_cache_trace *other = synth(WZT_FAMILY_IID, L, 8 * 64, 0, 0, 0, 11, "test");
	wzt_cache_trace *tiny = synth(WZT_FAMILY_MLA_B, L, 40, 0, 0, 0, 12, "test");
	if (!ok(other && tiny, "windows for the rate fit"))
		return;
	wzc_window w = window_of(other), wt = window_of(tiny);
	w.model = prof->model; /* iid values under mla-b's name: the profile accepts them */
	window_source src = { &w, -1, 0 }, srct = { &wt, -1, 0 };
	wzc_wzx_rate_fit f1, f3, ft;
	wz_diag d;
	wz_err e = wzc_wzx_fit_rate(prof, &w, from_window, &src, bits, 1, &f1, &d);
	if (!ok(!e, "fit on 1 thread: %s", e ? d.msg : "done"))
		goto out;
	ok(f1.profile_sample_bits > bits,
	   "the premise: the profile's grid (%zu bytes, expected %.3f b/v) writes %.3f b/v on iid",
	   f1.profile_bytes, f1.profile_estimate, f1.profile_sample_bits);
	ok(f1.sample_bits <= bits && f1.record_bytes < f1.profile_bytes && f1.probes >= 2 &&
		   f1.sample_blocks == 8L * L,
	   "the grid fitted, %zu bytes, writes %.3f b/v on the sample of %ld blocks (%d grids tried)",
	   f1.record_bytes, f1.sample_bits, f1.sample_blocks, f1.probes);
	e = wzc_wzx_fit_rate(prof, &w, from_window, &src, bits, 3, &f3, &d);
	ok(!e && f3.record_bytes == f1.record_bytes && f3.sample_bits == f1.sample_bits &&
		   f3.probes == f1.probes,
	   "the same fit on 3 threads");
	/* the whole window is the sample: packed in the fitted grid it writes
	 * exactly the sample's rate */
	char dir[] = "test-fit.XXXXXX";
	if (mkdtemp(dir)) {
		char *path = wz_path_join(dir, "f.wzx");
		wzc_format g;
		wzc_format_wz_grid(f1.record_bytes, w.R, w.P, &g);
		wzc_wzx_pack_result res;
		e = wzc_wzx_pack_file(prof, &g, &w, from_window, &src, 2, path, &res, &d);
		double written = (double)res.stats.total * 8.0 / ((double)w.L * w.T * (w.R + w.P));
		ok(!e && res.record_bytes == f1.record_bytes && written == f1.sample_bits,
		   "packed in the fitted grid the window writes %.3f b/v", e ? 0.0 : written);
		unlink(path);
		rmdir(dir);
		free(path);
	}
	e = wzc_wzx_fit_rate(prof, &wt, from_window, &srct, bits, 2, &ft, &d);
	ok(!e && ft.sample_blocks == 0 && ft.record_bytes == ft.profile_bytes && ft.probes == 0,
	   "a window under a block: the profile's grid, %zu bytes, unchecked", ft.record_bytes);
out:
	wzt_cache_trace_free(other);
	wzt_cache_trace_free(tiny);
}

int main(void)
{
	const int L = 3, T = 150; /* three blocks per layer, the last of 22 tokens */
	wzt_cache_trace *cal = synth(WZT_FAMILY_MLA_B, L, 1024, 0, 0, 0, 100, "calibration");
	wzt_cache_trace *tr = synth(WZT_FAMILY_MLA_B, L, T, 0, 0, 4096, 7, "test");
	wzc_window cw = window_of(cal), w = window_of(tr);
	const wzc_window *cp = &cw;
	wzc_profile *prof = NULL;
	wzc_format fmt;
	wzc_codec *c = NULL;
	wzc_wzx *x = NULL;
	wz_diag d;
	if (!ok(!wzc_prepare(&cp, 1, NULL, &prof, &d) && !wzc_format_parse("wzx-5.4", &fmt, &d) &&
			!wzc_codec_new(&fmt, L, w.R, w.P, prof, &c, &d) && !wzc_wzx_of_codec(c, &x, &d),
		"profile, codec and coder"))
		return tap_done();
	size_t B = wzc_codec_record_bytes(c);
	uint8_t *rec = malloc(B * T * L);
	for (int l = 0; l < L; l++)
		wzc_encode_layer(c, l, T, w.latent + (size_t)l * T * w.R, w.rope + (size_t)l * T * w.P,
				 rec + B * T * l, &d);
	size_t cap = wzc_wzx_bound(L, T, w.R, w.P, B, strlen(prof->model)), n;
	uint8_t *ref = malloc(cap);
	wzc_wzx_stats st;
	wz_err we = wzc_wzx_write(x, T, rec, ref, cap, &n, &st, &d);
	ok(!we, "the in-memory container: %zu bytes", n);
	static const int threads[] = { 1, 2, 3, 7 };
	static const long runs[] = { 1, 2, 4, 9 };
	for (size_t ti = 0; ti < sizeof threads / sizeof *threads; ti++)
		for (size_t ri = 0; ri < sizeof runs / sizeof *runs; ri++) {
			mem_sink m = { NULL, 0, 0, 0, -1 };
			window_source src = { &w, -1, 0 };
			wz_err e = pack(x, c, &w, runs[ri], threads[ti], &src, &m, &d);
			ok(!e && m.n == n && !memcmp(m.b, ref, n),
			   "%d threads, runs of %ld blocks: the same %zu bytes as the in-memory writer",
			   threads[ti], runs[ri], m.n);
			free(m.b);
		}
	/* a source that fails from block 4 (layer 1, tokens 64..) on: block
	 * 4's error on 1 thread and on 7, nothing after it written */
	char msg[2][sizeof d.msg];
	for (int k = 0; k < 2; k++) {
		mem_sink m = { NULL, 0, 0, 0, -1 };
		window_source src = { &w, 1, 64 };
		wz_err e = pack(x, c, &w, 9, k ? 7 : 1, &src, &m, &d);
		snprintf(msg[k], sizeof msg[k], "%s", e ? d.msg : "");
		ok(e == WZ_ERR_INPUT && strstr(d.msg, "layer 1 tokens 64"),
		   "a failing source on %d thread%s: %s", k ? 7 : 1, k ? "s" : "", d.msg);
		free(m.b);
	}
	ok(!strcmp(msg[0], msg[1]), "the same error for any thread count");
	/* a sink that fails on its third piece: the writer says so and stays failed */
	{
		mem_sink m = { NULL, 0, 0, 0, 2 };
		window_source src = { &w, -1, 0 };
		wzc_wzx_writer *wr;
		wz_err e = wzc_wzx_writer_new(x, c, T, to_mem, &m, &wr, &d);
		wz_err e1 = e ? e : wzc_wzx_writer_put(wr, 4, 2, from_window, &src, &d);
		wz_err e2 = e ? e : wzc_wzx_writer_put(wr, 1, 2, from_window, &src, &d);
		wz_err e3 = e ? e : wzc_wzx_writer_finish(wr, NULL, &d);
		ok(!e && e1 == WZ_ERR_IO && e2 && e3, "a failing sink stops the writer (%d, %d, %d)", e1,
		   e2, e3);
		wzc_wzx_writer_free(wr);
		free(m.b);
	}
	/* finishing early is refused */
	{
		mem_sink m = { NULL, 0, 0, 0, -1 };
		window_source src = { &w, -1, 0 };
		wzc_wzx_writer *wr;
		wz_err e = wzc_wzx_writer_new(x, c, T, to_mem, &m, &wr, &d);
		if (!e)
			e = wzc_wzx_writer_put(wr, 2, 1, from_window, &src, &d);
		ok(!e && wzc_wzx_writer_finish(wr, NULL, &d) == WZ_ERR_USAGE &&
			   wzc_wzx_writer_put(wr, 100, 1, from_window, &src, &d) == WZ_ERR_RANGE,
		   "finishing before the last block, or putting past it, is refused");
		wzc_wzx_writer_free(wr);
		free(m.b);
	}
	test_from_file(tr, x, c);
	test_files(prof, &fmt, &w, ref, n, rec, B);
	test_fit(prof, L);
	free(ref);
	free(rec);
	wzc_wzx_free(x);
	wzc_codec_free(c);
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(tr);
	return tap_done();
}
