/* Tests of the wzx reader over a source read a run at a time (what `codec
 * unpack` streams a file with): the same header, verdicts and restored
 * values as the reader over the bytes in memory, on the valid container
 * and on truncated and bit-flipped ones; a block not loaded is refused;
 * the reads are never larger than the index or the run asked for; a
 * source that fails is an error, not a crash. */
#include "tests/tap.h"

#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "tests/codec/window.h"

enum { L = 2, T = 4 * 64 + 7 };

typedef struct {
	const uint8_t *b;
	size_t n, largest, fail_after; /* reads past fail_after bytes in all fail */
	size_t total;
} mem_source;

static int mem_read(void *ctx, size_t off, size_t len, void *dst)
{
	mem_source *s = ctx;
	if (off > s->n || len > s->n - off || s->total + len > s->fail_after)
		return -1;
	memcpy(dst, s->b + off, len);
	s->total += len;
	if (len > s->largest)
		s->largest = len;
	return 0;
}

/* Thread-safe: no counters; reads reaching past fail_at fail. */
typedef struct {
	const uint8_t *b;
	size_t n, fail_at;
} mt_source;

static int mt_read(void *ctx, size_t off, size_t len, void *dst)
{
	mt_source *s = ctx;
	if (off > s->n || len > s->n - off || off + len > s->fail_at)
		return -1;
	memcpy(dst, s->b + off, len);
	return 0;
}

int main(void)
{
	wzt_cache_trace *cal = synth(WZT_FAMILY_MLA_B, L, 1024, 0, 0, 0, 100, "calibration");
	wzt_cache_trace *tr = synth(WZT_FAMILY_MLA_B, L, T, 0, 0, 4096, 7, "test");
	if (!ok(cal && tr, "windows"))
		return tap_done();
	wzc_window cw = window_of(cal), w = window_of(tr);
	const wzc_window *cp = &cw;
	wzc_profile *prof = NULL;
	wzc_format fmt;
	wzc_codec *c = NULL;
	wzc_wzx *x = NULL;
	wz_diag d;
	if (!ok(!wzc_prepare(&cp, 1, NULL, &prof, &d) && !wzc_format_parse("wzx-5.4", &fmt, &d) &&
		!wzc_codec_new(&fmt, L, w.R, w.P, prof, &c, &d) && !wzc_wzx_of_codec(c, &x, &d),
		"a wzx-5.4 coder"))
		return tap_done();
	size_t B = wzc_codec_record_bytes(c), row = (size_t)(w.R + w.P);
	uint8_t *rec = malloc(B * T * L);
	for (int l = 0; l < L; l++)
		wzc_encode_layer(c, l, T, w.latent + (size_t)l * T * w.R, w.rope + (size_t)l * T * w.P,
				 rec + B * T * l, &d);
	size_t cap = wzc_wzx_bound(L, T, w.R, w.P, B, strlen(prof->model)), n = 0;
	uint8_t *cont = malloc(cap);
	wzc_wzx_reader *rm = NULL, *rs = NULL;
	mem_source src = { cont, 0, 0, (size_t)-1, 0 };
	int opened = !wzc_wzx_write(x, T, rec, cont, cap, &n, NULL, &d) &&
		     !wzc_wzx_open(cont, n, "m.wzx", &rm, &d);
	src.n = n;
	opened = opened && !wzc_wzx_open_source(n, mem_read, &src, "s.wzx", &rs, &d);
	if (!ok(opened, "a container, opened over memory and over a source"))
		return tap_done();
	const wzc_wzx_info *im = wzc_wzx_reader_info(rm), *is = wzc_wzx_reader_info(rs);
	ok(im->L == is->L && im->T == is->T && im->nblocks == is->nblocks &&
	   im->profile_hash == is->profile_hash && !strcmp(im->model, is->model) &&
	   im->version == is->version, "the same header (%d blocks, version %d)", is->nblocks,
	   is->version);
	size_t index_and_footer = (size_t)is->nblocks * 16 + 24;
	ok(src.largest <= (index_and_footer > 400 ? index_and_footer : 400),
	   "opening read %zu bytes at most at once (index and footer: %zu)", src.largest,
	   index_and_footer);
	int nt;
	float *lat = malloc(sizeof(float) * 64 * w.R), *rope = malloc(sizeof(float) * (64 * w.P + 1));
	wz_err e = wzc_wzx_read_block_transformed(rs, x, 0, 1, lat, rope, &nt, &d);
	ok(e == WZ_ERR_USAGE, "a block not loaded is refused: %s", d.msg);
	/* restored a run of three blocks at a time = restored from memory */
	float *want = malloc(sizeof(float) * L * T * row), *got = malloc(sizeof(float) * L * T * row);
	int same = !wzc_wzx_restore(rm, x, WZC_RESTORE_TRANSFORMED, 0, im->nblocks, 2, want, &d);
	size_t done = 0, largest_run = 0;
	src.largest = 0;
	for (long b0 = 0; same && b0 < is->nblocks; b0 += 3) {
		long nb = is->nblocks - b0 < 3 ? is->nblocks - b0 : 3;
		size_t before = src.total;
		same = !wzc_wzx_reader_load(rs, b0, nb, &d) &&
		       !wzc_wzx_restore(rs, x, WZC_RESTORE_TRANSFORMED, b0, nb, 2, got + done, &d);
		size_t run = wzc_wzx_block_offset(rs, b0 + nb) - wzc_wzx_block_offset(rs, b0);
		same &= src.total - before == run;
		if (run > largest_run)
			largest_run = run;
		for (long i = b0; i < b0 + nb; i++) {
			int t0 = 64 * (int)(i % is->blocks_per_layer);
			done += row * (size_t)(T - t0 < 64 ? T - t0 : 64);
		}
	}
	ok(same && done == row * L * T && !memcmp(got, want, sizeof(float) * done),
	   "runs of three blocks restored from the source = from memory, each run read once");
	ok(src.largest == largest_run, "the largest read is the largest run (%zu bytes)", src.largest);
	/* runs placed, then read by the restorer's threads, each its share */
	mt_source mt = { cont, n, (size_t)-1 };
	wzc_wzx_reader *rt = NULL;
	int filled = !wzc_wzx_open_source(n, mt_read, &mt, "t.wzx", &rt, &d);
	for (int th = 1; filled && th <= 3; th++) {
		wzc_wzx_restorer *pool = NULL;
		filled &= !wzc_wzx_restorer_new(rt, x, WZC_RESTORE_TRANSFORMED, th, &pool, &d);
		memset(got, 0, sizeof(float) * L * T * row);
		size_t at = 0;
		for (long b0 = 0; filled && b0 < is->nblocks; b0 += 5) {
			long nb = is->nblocks - b0 < 5 ? is->nblocks - b0 : 5;
			filled &= !wzc_wzx_reader_place(rt, b0, nb, &d) &&
				  !wzc_wzx_restorer_fill_run(pool, b0, nb, got + at, &d);
			for (long i = b0; i < b0 + nb; i++) {
				int t0 = 64 * (int)(i % is->blocks_per_layer);
				at += row * (size_t)(T - t0 < 64 ? T - t0 : 64);
			}
		}
		wzc_wzx_restorer_free(pool);
		filled &= !memcmp(got, want, sizeof(float) * L * T * row);
	}
	ok(filled, "runs placed and read by the restorer's 1, 2 and 3 threads = from memory");
	e = wzc_wzx_reader_place(rt, 0, 2, &d);
	if (!e)
		e = wzc_wzx_reader_fill(rt, 2, 1, &d);
	ok(e == WZ_ERR_USAGE, "a block outside the placed run is not read: %s", d.msg);
	/* a read that fails from block 3 on, in a run of blocks 0..5 (two
	 * runs of four for the decoder): on one thread its one share fails,
	 * on two and three threads the shares 0..3 and 4..5 both fail and the
	 * lower is named */
	mt.fail_at = wzc_wzx_block_offset(rt, 3) + 1;
	int named = 1;
	for (int th = 1; th <= 3; th++) {
		wzc_wzx_restorer *pool = NULL;
		named &= !wzc_wzx_restorer_new(rt, x, WZC_RESTORE_TRANSFORMED, th, &pool, &d);
		e = wzc_wzx_reader_place(rt, 0, 6, &d);
		if (!e)
			e = wzc_wzx_restorer_fill_run(pool, 0, 6, got, &d);
		named &= e == WZ_ERR_IO && strstr(d.msg, "cannot read blocks 0..") != NULL;
		wzc_wzx_restorer_free(pool);
	}
	ok(named, "a read that fails in a share is that share's error, the lowest share's: %s", d.msg);
	wzc_wzx_reader_free(rt);
	/* a block outside the run now loaded */
	e = wzc_wzx_read_block_transformed(rs, x, 0, 0, lat, rope, &nt, &d);
	ok(e == WZ_ERR_USAGE, "a block of an earlier run is refused: %s", d.msg);
	/* a source that fails part way */
	mem_source fail = { cont, n, 0, 0, 0 };
	wzc_wzx_reader *rf = NULL;
	fail.fail_after = n / 2;
	e = wzc_wzx_open_source(n, mem_read, &fail, "f.wzx", &rf, &d);
	int loads_fail = 0;
	for (long b0 = 0; !e && b0 < is->nblocks && !loads_fail; b0++)
		loads_fail = wzc_wzx_reader_load(rf, b0, 1, &d) == WZ_ERR_IO;
	ok(!e && loads_fail, "a source that fails part way: %s", d.msg);
	wzc_wzx_reader_free(rf);
	fail.total = 0;
	fail.fail_after = 100;
	e = wzc_wzx_open_source(n, mem_read, &fail, "f.wzx", &rf, &d);
	ok(e == WZ_ERR_IO && !rf, "a source that fails at once: %s", d.msg);
	/* damaged containers: the same verdict opening and reading every block */
	uint8_t *bad = malloc(n);
	int verdicts = 1, tries = 0;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (int k = 0; k < 400; k++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		size_t m = n;
		memcpy(bad, cont, n);
		if (k % 3 == 0) {
			m = (size_t)(rng % n);
		} else {
			/* the header, index and footer most often: that is what opening reads */
			size_t at = k % 3 == 1 ? (size_t)(rng >> 20) % (n < 600 ? n : 600)
					       : n - 1 - (size_t)(rng >> 20) % (index_and_footer + 1);
			bad[at] ^= (uint8_t)(1u << (rng >> 60 & 7));
		}
		wzc_wzx_reader *a = NULL, *b = NULL;
		mem_source bs = { bad, m, 0, (size_t)-1, 0 };
		wz_err ea = wzc_wzx_open(bad, m, "x", &a, &d), eb = wzc_wzx_open_source(m, mem_read, &bs, "x", &b, &d);
		int agree = ea == eb;
		for (long i = 0; agree && !ea && i < wzc_wzx_reader_info(a)->nblocks; i++) {
			const wzc_wzx_info *ia = wzc_wzx_reader_info(a);
			int l = (int)(i / ia->blocks_per_layer), bl = (int)(i % ia->blocks_per_layer), n1, n2;
			wz_err ra = wzc_wzx_read_block_transformed(a, x, l, bl, lat, rope, &n1, &d);
			wz_err rb = wzc_wzx_reader_load(b, i, 1, &d);
			if (!rb)
				rb = wzc_wzx_read_block_transformed(b, x, l, bl, lat, rope, &n2, &d);
			agree = ra == rb;
		}
		verdicts &= agree;
		tries++;
		wzc_wzx_reader_free(a);
		wzc_wzx_reader_free(b);
	}
	ok(verdicts, "%d damaged containers: the same verdicts over a source as over memory", tries);
	free(bad);
	free(lat);
	free(rope);
	free(want);
	free(got);
	wzc_wzx_reader_free(rm);
	wzc_wzx_reader_free(rs);
	free(cont);
	free(rec);
	wzc_wzx_free(x);
	wzc_codec_free(c);
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(tr);
	return tap_done();
}
