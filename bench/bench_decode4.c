/* Types 5 (wzx version 5, what codec pack writes) and 4 (version 4)
 * decoding to the transformed domain on one core, every path this
 * processor has (each checked against type 4's reference, bit for bit,
 * before timing), beside zstd -3 decompressing fp8-mix's
 * bytes of the same tokens, runs alternated so that a shared machine's
 * noise falls on both alike; medians.  The focused form of
 * bench/bench_restore's decode section (docs/restore.md).  Synthetic mla-b
 * statistics, one prepared layer repeated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/legacy/wzx_legacy.h"
#include "codec/wzx/wzx_fast.h"

#include <zstd.h>

#define LAYERS 4
#define TOKENS 1024
#define CAL_TOKENS 1024

static float *repeat(const float *x, size_t n, int L)
{
	float *y = malloc(sizeof *y * n * (size_t)L);
	for (int l = 0; y && l < L; l++)
		memcpy(y + n * (size_t)l, x, sizeof *y * n);
	return y;
}

typedef struct {
	uint8_t *bytes;
	size_t *off, *size;
	int nb, *layer, *n;
} blocks;

/* One pass over the blocks on a path, fused to rows: seconds of thread CPU
 * time, or -1 when a block fails. */
static double pass4(const wzc_wzx *x, const blocks *b, int type, wzc_lanes4_path path, float *rows,
		    int width)
{
	int bad = 0;
	double t0 = bench_thread_cpu_s();
	for (int i = 0; i < b->nb; i++)
		bad |= (type == 5 ? wzc_wzx_decode_lanes5_rows_path
				  : wzc_wzx_decode_lanes4_rows_path)(x, b->layer[i], path, b->n[i],
								     b->bytes + b->off[i], b->size[i], rows,
								     (size_t)width);
	double dt = bench_thread_cpu_s() - t0;
	return bad ? -1 : dt;
}

static double pass_zstd(ZSTD_DCtx *dc, const blocks *z, uint8_t *back, size_t cap)
{
	int bad = 0;
	double t0 = bench_thread_cpu_s();
	for (int i = 0; i < z->nb; i++)
		bad |= ZSTD_isError(ZSTD_decompressDCtx(dc, back, cap, z->bytes + z->off[i], z->size[i]));
	double dt = bench_thread_cpu_s() - t0;
	return bad ? -1 : dt;
}

int main(int argc, char **argv)
{
	/* arguments: the number of runs; a path (v5-avx2-loads, v5-avx2, v5-portable,
	 * avx512, avx2, avx2-loads, portable) to time alone, for a profiler */
	int runs = argc > 1 ? atoi(argv[1]) : 7;
	if (runs < 1 || runs > 999)
		runs = 7;
	const char *only = argc > 2 ? argv[2] : NULL;
	wz_diag d;
	wzt_cache_trace *cal = bench_window("bench_decode4", WZT_FAMILY_MLA_B, 11, "calibration", 1, CAL_TOKENS);
	wzt_cache_trace *tr = bench_window("bench_decode4", WZT_FAMILY_MLA_B, 11, "test", 3, TOKENS);
	if (!cal || !tr)
		return 1;
	int L = LAYERS, T = tr->T, R = tr->R, P = tr->P;
	wzc_profile *one, *prof = bench_layered_profile("bench_decode4", cal, L, &one);
	if (!prof)
		return 1;
	float *lat = repeat(tr->latent, (size_t)T * R, L), *rope = repeat(tr->rope, (size_t)T * P, L);
	wzc_format fmt, f8fmt;
	wzc_codec *codec, *f8c;
	wzc_wzx *x;
	if (!lat || !rope || wzc_format_parse("wz-5.44", &fmt, &d) ||
	    wzc_codec_new(&fmt, L, R, P, prof, &codec, &d) || wzc_wzx_of_codec(codec, &x, &d) ||
	    wzc_format_parse("fp8-mix", &f8fmt, &d) || wzc_codec_new(&f8fmt, L, R, P, NULL, &f8c, &d)) {
		fprintf(stderr, "bench_decode4: %s\n", d.msg);
		return 1;
	}
	size_t B = wzc_codec_record_bytes(codec), F = wzc_codec_record_bytes(f8c);
	int per = (T + 63) / 64, nb = L * per;
	uint8_t *rec = malloc((size_t)L * T * B), *f8 = malloc((size_t)L * T * F);
	blocks b4 = { malloc((size_t)L * T * B + 4096 * (size_t)nb), malloc(sizeof(size_t) * nb),
		      malloc(sizeof(size_t) * nb), nb, malloc(sizeof(int) * nb), malloc(sizeof(int) * nb) };
	size_t zcap = ZSTD_compressBound((size_t)L * T * F) + 1024 * (size_t)nb;
	blocks b5 = { malloc((size_t)L * T * B + 4096 * (size_t)nb), malloc(sizeof(size_t) * nb),
		      malloc(sizeof(size_t) * nb), nb, b4.layer, b4.n };
	blocks bz = { malloc(zcap), malloc(sizeof(size_t) * nb), malloc(sizeof(size_t) * nb), nb, NULL, NULL };
	float *rows = malloc(sizeof(float) * 64 * (R + P));
	uint8_t *back = malloc(64 * F);
	if (!rec || !f8 || !b4.bytes || !b4.off || !b4.size || !b4.layer || !b4.n || !b5.bytes || !b5.off || !b5.size || !bz.bytes || !bz.off ||
	    !bz.size || !rows || !back)
		return 1;
	for (int l = 0; l < L; l++) {
		wzc_encode_layer(codec, l, T, lat + (size_t)l * T * R, rope + (size_t)l * T * P,
				 rec + (size_t)l * T * B, &d);
		wzc_encode_layer(f8c, l, T, lat + (size_t)l * T * R, rope + (size_t)l * T * P,
				 f8 + (size_t)l * T * F, &d);
	}
	size_t t4 = 0, t5 = 0, tz = 0;
	for (int i = 0; i < nb; i++) {
		int l = i / per, t0 = 64 * (i % per), n = T - t0 < 64 ? T - t0 : 64;
		b4.layer[i] = l;
		b4.n[i] = n;
		b4.off[i] = t4;
		b4.size[i] = wzc_wzx_encode_lanes4(x, l, n, rec + ((size_t)l * T + t0) * B, b4.bytes + t4,
						   (size_t)L * T * B + 4096 * (size_t)nb - t4);
		b5.off[i] = t5;
		b5.size[i] = wzc_wzx_encode_lanes5(x, l, n, rec + ((size_t)l * T + t0) * B, b5.bytes + t5,
						   (size_t)L * T * B + 4096 * (size_t)nb - t5);
		bz.off[i] = tz;
		bz.size[i] = ZSTD_compress(bz.bytes + tz, zcap - tz, f8 + ((size_t)l * T + t0) * F, n * F, 3);
		if (!b4.size[i] || !b5.size[i] || ZSTD_isError(bz.size[i]))
			return 1;
		t4 += b4.size[i];
		t5 += b5.size[i];
		tz += bz.size[i];
	}
	static const wzc_lanes4_path paths[] = { WZC_LANES4_AVX2_LOADS, WZC_LANES4_AVX2, WZC_LANES4_SCALAR,
						 WZC_LANES4_AVX512, WZC_LANES4_AVX2, WZC_LANES4_AVX2_LOADS,
						 WZC_LANES4_SCALAR };
	static const int types[] = { 5, 5, 5, 4, 4, 4, 4 };
	static const char *const keys[] = { "v5-avx2-loads", "v5-avx2", "v5-portable", "avx512", "avx2",
					    "avx2-loads", "portable" };
	static const char *const names[] = { "v5 fused to transformed, AVX2, plain loads",
					     "v5 fused to transformed, AVX2 (vpgatherdd)",
					     "v5 fused to transformed, portable loop",
					     "v4 fused to transformed, AVX-512",
					     "v4 fused to transformed, AVX2 (vpgatherdd)",
					     "v4 fused to transformed, AVX2, plain loads",
					     "v4 fused to transformed, portable loop" };
	enum { NP = 7 };
	double *t = malloc(sizeof *t * (NP + 1) * runs);
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	if (!t || !dc)
		return 1;
	int use[NP];
	for (int p = 0; p < NP; p++)
		use[p] = (types[p] == 5 ? wzc_wzx_lanes5_have(paths[p]) : wzc_wzx_lanes4_have(paths[p])) &&
			 (!only || !strcmp(only, keys[p]));
	for (int p = 0; p < NP; p++) /* the tables built, caches warm */
		if (use[p] && pass4(x, types[p] == 5 ? &b5 : &b4, types[p], paths[p], rows, R + P) < 0)
			return 1;
	/* every path's rows against type 4's reference, block by block */
	float *want = malloc(sizeof(float) * 64 * (R + P));
	if (!want)
		return 1;
	for (int i = 0; i < nb; i++) {
		if (wzc_wzx_decode_lanes4_rows_path(x, b4.layer[i], WZC_LANES4_REF, b4.n[i], b4.bytes + b4.off[i],
						    b4.size[i], want, (size_t)(R + P)))
			return 1;
		for (int p = 0; p < NP; p++) {
			const blocks *b = types[p] == 5 ? &b5 : &b4;
			if (!use[p])
				continue;
			if ((types[p] == 5 ? wzc_wzx_decode_lanes5_rows_path : wzc_wzx_decode_lanes4_rows_path)(
				    x, b->layer[i], paths[p], b->n[i], b->bytes + b->off[i], b->size[i], rows,
				    (size_t)(R + P)) ||
			    memcmp(rows, want, sizeof(float) * b->n[i] * (R + P))) {
				fprintf(stderr, "bench_decode4: %s: block %d differs from the reference\n", names[p], i);
				return 1;
			}
		}
	}
	free(want);
	for (int r = 0; r < runs; r++) {
		for (int p = 0; p < NP; p++)
			t[p * runs + r] = use[p] ? pass4(x, types[p] == 5 ? &b5 : &b4, types[p], paths[p], rows, R + P) : 0;
		t[NP * runs + r] = pass_zstd(dc, &bz, back, 64 * F);
		for (int p = 0; p <= NP; p++)
			if (t[p * runs + r] < 0)
				return 1;
	}
	double tok = (double)L * T, gb = tok * (R + P) * 2 / 1e9, mz = bench_median(t + NP * runs, runs);
	printf("types 5 and 4 decode, one core (thread CPU time), median of %d alternated runs, %d layers x %d tokens\n"
	       "of synthetic mla-b, grid of wz-5.44 (%zu B); GB/s of bf16-equivalent output, million\n"
	       "token-layers/s, payload bits/value, and the rate over zstd -3's in the same run\n\n",
	       runs, L, T, B);
	printf("%-44s %8s %8s %8s %8s\n", "", "GB/s", "Mtok/s", "b/v", "/zstd");
	for (int p = 0; p < NP; p++) {
		if (!use[p])
			continue;
		double m = bench_median(t + p * runs, runs);
		printf("%-44s %8.2f %8.3f %8.3f %7.2fx\n", names[p], gb / m, tok / m / 1e6,
		       (types[p] == 5 ? t5 : t4) * 8.0 / (tok * (R + P)), mz / m);
	}
	printf("%-44s %8.2f %8.3f %8.3f %7.2fx\n", "reference: zstd -3 decompressing fp8-mix", gb / mz,
	       tok / mz / 1e6, tz * 8.0 / (tok * (R + P)), 1.0);
	ZSTD_freeDCtx(dc);
	free(t);
	free(rows);
	free(back);
	free(rec);
	free(f8);
	free(b4.bytes);
	free(b5.bytes);
	free(b5.off);
	free(b5.size);
	free(b4.off);
	free(b4.size);
	free(b4.layer);
	free(b4.n);
	free(bz.bytes);
	free(bz.off);
	free(bz.size);
	free(lat);
	free(rope);
	wzc_wzx_free(x);
	wzc_codec_free(codec);
	wzc_codec_free(f8c);
	wzc_profile_free(prof);
	wzc_profile_free(one);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(tr);
	return 0;
}
