/* The wzx restore against zstd -d in one run, one core: version 6 blocks
 * (type 6, what codec pack writes: codec/wzx/wzx_lanes6.c) and version 5
 * blocks (type 5) of the same records restored to wz records (what a wz
 * GPU tier holds: codec/wzx/wzx_records5.c) and to the transformed domain,
 * beside
 * zstd decompressing zstd -3 frames of the same tokens' fp8-mix bytes (one
 * frame per block of 64 tokens x one layer, as wzx has blocks), runs
 * alternated so a shared machine's noise falls on all alike; each row's
 * median, and the restore's rate over zstd's (must be >= 1).  Beside them
 * the rANS step alone (to digits) and, where configure found htscodecs,
 * its rans32x16 coder (order 0 and 1, 32-way interleaved, AVX2) on the
 * same digits (a block's digits place by place, one byte each, the low
 * byte for the few tables of over 256 symbols), for the choice of coder
 * (docs/restore.md).  Every path's
 * output is checked against the reference before timing.  Synthetic
 * mla-b statistics, one prepared layer repeated.
 * Usage: bench_wzx_zstd [runs [key]], a key (records6, avx2-6, gather6, portable6,
 * rows6, digits6, records, portable, old, rows, digits, hts0, hts1, zstd)
 * timing that row alone, for a profiler; bench_wzx_zstd bytes prints the
 * bits/value of type 5 and type 6 blocks on every synthetic family at
 * several grids. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_lanes.h"
#include "codec/wzx/wzx_rec5.h"

#include <zstd.h>

#include "config.h"
#ifdef HAVE_HTSCODECS
#include <htscodecs/rANS_static4x16.h>
#endif

#define LAYERS 4
#define TOKENS 1024

enum { RECORDS6, RECORDS6_AVX2, RECORDS6_GATHER, RECORDS6_PORTABLE, ROWS6, DIGITS6, RECORDS, RECORDS_PORTABLE, RECORDS_OLD, ROWS, DIGITS, HTS0, HTS1,
       ZSTD, NP };
static const char *const keys[NP] = { "records6", "avx2-6", "gather6", "portable6", "rows6", "digits6", "records", "portable", "old",
				      "rows",     "digits",    "hts0",    "hts1",    "zstd" };
static const char *const names[NP] = {
	"wzx v6 -> wz records (the restore)",
	"wzx v6 -> wz records, AVX2 alone",
	"wzx v6 -> wz records, by vpgatherdd",
	"wzx v6 -> wz records, portable loop",
	"wzx v6 -> transformed domain",
	"wzx v6 -> digits alone (its rANS)",
	"wzx v5 -> wz records (the restore)",
	"wzx v5 -> wz records, portable loop",
	"wzx v5 -> wz records, by symbols (before)",
	"wzx v5 -> transformed domain",
	"wzx v5 -> digits alone (its rANS)",
	"htscodecs rans32x16 o0, the digits",
	"htscodecs rans32x16 o1, the digits",
	"zstd -d: zstd -3 frames of fp8-mix",
};

typedef struct {
	const wzc_wzx *x;
	const uint8_t *w5, *z, *w6;
	const size_t *off5, *size5, *offz, *sizez, *off6, *size6;
	int nb, per, T, B, F, R, P;
	uint8_t *out;
	uint16_t *s4, *s3;
	float *rows;
	ZSTD_DCtx *dc;
	const uint8_t *h[2]; /* htscodecs' streams of the blocks' digits */
	const size_t *hoff[2], *hsize[2];
} job;

/* One pass of path p over every block: seconds of thread CPU time, or -1
 * when a block fails. */
static double pass(const job *j, int p)
{
	int bad = 0;
	double t0 = bench_thread_cpu_s();
	for (int i = 0; i < j->nb; i++) {
		int l = i / j->per, t = 64 * (i % j->per), n = j->T - t < 64 ? j->T - t : 64;
		const uint8_t *b = j->w5 + j->off5[i], *b6 = j->w6 + j->off6[i];
		size_t s = j->size5[i], s6 = j->size6[i];
		switch (p) {
		case RECORDS6: bad |= wzc_wzx_decode_lanes6_records(j->x, l, n, b6, s6, j->out); break;
		case RECORDS6_AVX2:
			bad |= wzc_wzx_decode_lanes6_records_path(j->x, l, WZC_LANES4_AVX2_LOADS, n, b6, s6, j->out);
			break;
		case RECORDS6_GATHER:
			bad |= wzc_wzx_decode_lanes6_records_path(j->x, l, WZC_LANES4_AVX2, n, b6, s6, j->out);
			break;
		case RECORDS6_PORTABLE:
			bad |= wzc_wzx_decode_lanes6_records_path(j->x, l, WZC_LANES4_SCALAR, n, b6, s6, j->out);
			break;
		case ROWS6: bad |= wzc_wzx_decode_lanes6_rows(j->x, l, n, b6, s6, j->rows, (size_t)(j->R + j->P)); break;
		case DIGITS6: bad |= wzc_wzx_decode_lanes6_digits(j->x, l, n, b6, s6, j->s4); break;
		case RECORDS: bad |= wzc_wzx_decode_lanes5_records(j->x, l, n, b, s, j->out); break;
		case RECORDS_PORTABLE:
			bad |= wzc_wzx_decode_lanes5_records_path(j->x, l, WZC_LANES4_SCALAR, n, b, s, j->out);
			break;
		case RECORDS_OLD:
			/* codec unpack --to wz before this build: symbols, coding order, records */
			bad |= wzc_wzx_decode_lanes5_path(j->x, l, WZC_LANES4_BEST, n, b, s, j->s4);
			wzc_wzx_symbols4_entries(j->x, l, n, j->s4, j->s3);
			wzc_wzx_symbols_records(j->x, l, n, j->s3, j->out);
			break;
		case ROWS: bad |= wzc_wzx_decode_lanes5_rows(j->x, l, n, b, s, j->rows, (size_t)(j->R + j->P)); break;
		case DIGITS: bad |= wzc_wzx_decode_lanes5_digits(j->x, l, n, b, s, j->s4); break;
		case HTS0:
		case HTS1: {
#ifdef HAVE_HTSCODECS
			int o = p == HTS1;
			unsigned int got = (unsigned int)(64 * (j->B > j->F ? j->B : j->F));
			bad |= !rans_uncompress_to_4x16((unsigned char *)(uintptr_t)(j->h[o] + j->hoff[o][i]),
							(unsigned int)j->hsize[o][i], j->out, &got);
#endif
			break;
		}
		default:
			bad |= ZSTD_isError(ZSTD_decompressDCtx(j->dc, j->out, (size_t)64 * j->F,
								 j->z + j->offz[i], j->sizez[i]));
		}
	}
	double dt = bench_thread_cpu_s() - t0;
	return bad ? -1 : dt;
}

/* `bench_wzx_zstd bytes`: the stored bits/value of type 5 and type 6
 * blocks of the same records (a test window of each synthetic family, its
 * profile from the family's calibration window, one layer) at several
 * grids; type 2 against type 6 where the layer's plan has a count over
 * 4096 (no type 5 there). */
static int bytes_table(void)
{
	static const wzt_family fam[] = { WZT_FAMILY_IID, WZT_FAMILY_MLA_A, WZT_FAMILY_MLA_B, WZT_FAMILY_MLA_P };
	static const char *const grids[] = { "wz-3", "wz-4", "wz-4.5", "wz-5.44", "wz-6", "wz-7" };
	printf("stored bits/value, type 5 -> type 6 blocks (ratio), 1 layer x %d tokens of each synthetic family;\n"
	       "*: type 2 -> type 6, where the layer has a count over 4096 (no type 5)\n\n",
	       TOKENS);
	printf("%-8s", "family");
	for (size_t g = 0; g < sizeof grids / sizeof *grids; g++)
		printf(" %22s", grids[g]);
	printf("\n");
	for (size_t fi = 0; fi < sizeof fam / sizeof *fam; fi++) {
		wzt_cache_trace *cal = bench_window("bench_wzx_zstd", fam[fi], 11, "calibration", 1, TOKENS);
		wzt_cache_trace *tr = bench_window("bench_wzx_zstd", fam[fi], 11, "test", 3, TOKENS);
		wzc_profile *one = NULL, *prof = cal ? bench_layered_profile("bench_wzx_zstd", cal, 1, &one) : NULL;
		if (!prof || !tr)
			return 1;
		printf("%-8s", wzt_family_name(fam[fi]));
		for (size_t g = 0; g < sizeof grids / sizeof *grids; g++) {
			wzc_format fmt;
			wzc_codec *c = NULL;
			wzc_wzx *x = NULL;
			wz_diag d;
			if (wzc_format_parse(grids[g], &fmt, &d) || wzc_codec_new(&fmt, 1, tr->R, tr->P, prof, &c, &d) ||
			    wzc_wzx_of_codec(c, &x, &d)) {
				fprintf(stderr, "bench_wzx_zstd: %s\n", d.msg);
				return 1;
			}
			size_t B = wzc_codec_record_bytes(c), cap = 64 * B * 2 + 4096, t5 = 0, t6 = 0;
			uint8_t *rec = malloc((size_t)tr->T * B), *buf = malloc(cap);
			if (!rec || !buf)
				return 1;
			wzc_encode_layer(c, 0, tr->T, tr->latent, tr->rope, rec, &d);
			/* against type 5, or type 2 where the layer has a count over 4096 */
			int ok = wzc_wzx_layer_type6(x, 0), t5ok = wzc_wzx_layer_type4(x, 0);
			for (int t0 = 0; ok && t0 < tr->T; t0 += 64) {
				int n = tr->T - t0 < 64 ? tr->T - t0 : 64;
				size_t a = t5ok ? wzc_wzx_encode_lanes5(x, 0, n, rec + (size_t)t0 * B, buf, cap)
						: wzc_wzx_encode_lanes(x, 0, WZC_LANES, n, rec + (size_t)t0 * B, buf, cap);
				size_t b = wzc_wzx_encode_lanes6(x, 0, n, rec + (size_t)t0 * B, buf, cap);
				ok = a && b;
				t5 += a;
				t6 += b;
			}
			double v = 8.0 / ((double)tr->T * (tr->R + tr->P));
			if (ok)
				printf(" %s%6.3f -> %6.3f (%.4f)", t5ok ? " " : "*", t5 * v, t6 * v, (double)t6 / (double)t5);
			else
				printf(" %22s", "type 2");
			free(rec);
			free(buf);
			wzc_wzx_free(x);
			wzc_codec_free(c);
		}
		printf("\n");
		wzc_profile_free(prof);
		wzc_profile_free(one);
		wzt_cache_trace_free(cal);
		wzt_cache_trace_free(tr);
	}
	return 0;
}

/* `bench_wzx_zstd real PROFILE TRACE GRID [runs]`: a cache trace's layers
 * (a real model's window) at a grid, each block coded as type 2 (what
 * version 5 wrote where a count is over 4096) and type 6 (what version 6
 * writes), both restored to wz records (type 6 by the best loop and by
 * the AVX2 loop alone), type 6 to its digits alone (the rANS without the
 * records' fields: where the restore's time goes), and zstd -d of zstd -3
 * frames of the same tokens' fp8-mix bytes; runs alternated, thread CPU
 * time, medians.  A last argument (0 to 4, the rows in that order) times
 * that row alone, for a profiler. */
static int real_table(const char *pp, const char *tp, const char *grid, int runs, int only)
{
	enum { NR = 5 };
	wz_diag d;
	wzc_profile *prof = NULL;
	wzt_cache_trace *tr = NULL;
	wzc_format fmt, f8fmt;
	wzc_codec *c = NULL, *f8 = NULL;
	wzc_wzx *x = NULL;
	if (wzc_profile_read(pp, &prof, &d) || wzt_cache_trace_read(tp, &tr, &d) || wzc_format_parse(grid, &fmt, &d) ||
	    wzc_codec_new(&fmt, tr->L, tr->R, tr->P, prof, &c, &d) || wzc_wzx_of_codec(c, &x, &d) ||
	    wzc_format_parse("fp8-mix", &f8fmt, &d) || wzc_codec_new(&f8fmt, tr->L, tr->R, tr->P, NULL, &f8, &d)) {
		fprintf(stderr, "bench_wzx_zstd: %s\n", d.msg);
		return 1;
	}
	int L = tr->L, T = tr->T, per = (T + 63) / 64, nb = L * per;
	size_t B = wzc_codec_record_bytes(c), F = wzc_codec_record_bytes(f8), cap = 64 * B + 4096;
	size_t capz = ZSTD_compressBound(64 * F);
	uint8_t *rec = malloc((size_t)L * T * B), *fr = malloc((size_t)L * T * F), *p2 = malloc((size_t)nb * cap),
		*p6 = malloc((size_t)nb * cap), *pz = malloc((size_t)nb * capz), *out = malloc(64 * (B > F ? B : F));
	size_t *s2 = calloc((size_t)nb, sizeof *s2), *s6 = calloc((size_t)nb, sizeof *s6), *sz = calloc((size_t)nb, sizeof *sz);
	int S3 = 0;
	for (int l = 0; l < L; l++)
		if (wzc_wzx_block_symbols(x, l) > S3)
			S3 = wzc_wzx_block_symbols(x, l);
	uint16_t *sym = malloc(sizeof *sym * (64 * (size_t)S3 + 2));
	double *t = calloc((size_t)NR * runs, sizeof *t);
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	if (!rec || !fr || !p2 || !p6 || !pz || !out || !s2 || !s6 || !sz || !sym || !t || !dc)
		return 1;
	size_t b2 = 0, b6 = 0, bz = 0;
	for (int l = 0; l < L; l++) {
		const size_t o = (size_t)l * T;
		if (wzc_encode_layer_at(c, l, T, tr->latent + o * tr->R, tr->rope + o * tr->P, tr->positions,
					rec + o * B, &d) ||
		    wzc_encode_layer_at(f8, l, T, tr->latent + o * tr->R, tr->rope + o * tr->P, tr->positions,
					fr + o * F, &d)) {
			fprintf(stderr, "bench_wzx_zstd: %s\n", d.msg);
			return 1;
		}
	}
	int t6 = 0;
	for (int i = 0; i < nb; i++) {
		int l = i / per, t0 = 64 * (i % per), n = T - t0 < 64 ? T - t0 : 64;
		const uint8_t *r = rec + ((size_t)l * T + t0) * B;
		s2[i] = wzc_wzx_encode_lanes(x, l, WZC_LANES, n, r, p2 + i * cap, cap);
		s6[i] = wzc_wzx_encode_lanes6(x, l, n, r, p6 + i * cap, cap);
		sz[i] = ZSTD_compress(pz + i * capz, capz, fr + ((size_t)l * T + t0) * F, n * F, 3);
		t6 += i % per == 0 && wzc_wzx_layer_type6(x, l);
		if (!s2[i] || !s6[i] || ZSTD_isError(sz[i]) || wzc_wzx_decode_lanes6_records(x, l, n, p6 + i * cap, s6[i], out) ||
		    memcmp(out, r, (size_t)n * B)) {
			fprintf(stderr, "bench_wzx_zstd: block %d does not code or come back\n", i);
			return 1;
		}
		b2 += s2[i];
		b6 += s6[i];
		bz += sz[i];
	}
	/* each timed pass after an untimed one of the same row, so that no row
	 * meets the caches as the row before it left them (type 2's 2^16-entry
	 * tables, zstd's window) */
	for (int r = -1; r < runs; r++)
		for (int p = 0; p < NR; p++)
			for (int warm = 1; warm >= 0; warm--) {
			int bad = 0;
			if (only >= 0 && p != only)
				continue;
			double t0 = bench_thread_cpu_s();
			for (int i = 0; i < nb; i++) {
				int l = i / per, n = T - 64 * (i % per) < 64 ? T - 64 * (i % per) : 64;
				if (p == 0) {
					bad |= wzc_wzx_decode_lanes(x, l, WZC_LANES, n, p2 + i * cap, s2[i], sym);
					wzc_wzx_symbols_records(x, l, n, sym, out);
				} else if (p == 1) {
					bad |= wzc_wzx_decode_lanes6_records(x, l, n, p6 + i * cap, s6[i], out);
				} else if (p == 2) {
					bad |= wzc_wzx_decode_lanes6_records_path(x, l, WZC_LANES4_AVX2_LOADS, n,
										  p6 + i * cap, s6[i], out);
				} else if (p == 3) {
					bad |= wzc_wzx_decode_lanes6_digits(x, l, n, p6 + i * cap, s6[i], sym);
				} else {
					bad |= ZSTD_isError(ZSTD_decompressDCtx(dc, out, 64 * F, pz + i * capz, sz[i]));
				}
			}
			if (bad)
				return 1;
			if (r >= 0 && !warm)
				t[p * runs + r] = bench_thread_cpu_s() - t0;
		}
	double tok = (double)L * T, v = 8.0 / (tok * (tr->R + tr->P)), mz = bench_median(t + (NR - 1) * runs, runs);
	if (only >= 0)
		printf("row %d alone: %.3f M token-layers/s\n", only, tok / bench_median(t + only * runs, runs) / 1e6);
	static const char *const name[NR] = { "type 2 -> wz records (version 5)", "type 6 -> wz records (version 6)",
					       "type 6 -> wz records, AVX2 alone", "type 6 -> digits alone (its rANS)",
					       "zstd -d: zstd -3 frames of fp8-mix" };
	printf("%s at %s (%zu B records), %d layers x %d tokens, %d layers with type 6 tables; one core, medians of %d\n"
	       "alternated runs\n",
	       tp, grid, B, L, T, t6, runs);
	for (int p = 0; p < NR && only < 0; p++) {
		double m = bench_median(t + p * runs, runs);
		printf("%-40s %8.3f M token-layers/s  %6.3f b/v  %5.2fx zstd\n", name[p], tok / m / 1e6,
		       (p == 0 ? b2 : p < NR - 1 ? b6 : bz) * v, mz / m);
	}
	ZSTD_freeDCtx(dc);
	free(t);
	free(sym);
	free(rec);
	free(fr);
	free(p2);
	free(p6);
	free(pz);
	free(out);
	free(s2);
	free(s6);
	free(sz);
	wzc_wzx_free(x);
	wzc_codec_free(c);
	wzc_codec_free(f8);
	wzc_profile_free(prof);
	wzt_cache_trace_free(tr);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "bytes"))
		return bytes_table();
	if (argc > 4 && !strcmp(argv[1], "real"))
		return real_table(argv[2], argv[3], argv[4], argc > 5 && atoi(argv[5]) > 0 ? atoi(argv[5]) : 9,
				  argc > 6 && atoi(argv[6]) >= 0 && atoi(argv[6]) < 5 ? atoi(argv[6]) : -1);
	int runs = argc > 1 ? atoi(argv[1]) : 9;
	if (runs < 1 || runs > 999)
		runs = 9;
	const char *only = argc > 2 ? argv[2] : NULL;
	wz_diag d;
	wzt_cache_trace *cal = bench_window("bench_wzx_zstd", WZT_FAMILY_MLA_B, 11, "calibration", 1, TOKENS);
	wzt_cache_trace *tr = bench_window("bench_wzx_zstd", WZT_FAMILY_MLA_B, 11, "test", 3, TOKENS);
	if (!cal || !tr)
		return 1;
	int L = LAYERS, T = tr->T, R = tr->R, P = tr->P;
	wzc_profile *one, *prof = bench_layered_profile("bench_wzx_zstd", cal, L, &one);
	if (!prof)
		return 1;
	wzc_format fmt, f8fmt;
	wzc_codec *codec, *f8c;
	wzc_wzx *x;
	if (wzc_format_parse("wz-5.44", &fmt, &d) || wzc_codec_new(&fmt, L, R, P, prof, &codec, &d) ||
	    wzc_wzx_of_codec(codec, &x, &d) || wzc_format_parse("fp8-mix", &f8fmt, &d) ||
	    wzc_codec_new(&f8fmt, L, R, P, NULL, &f8c, &d)) {
		fprintf(stderr, "bench_wzx_zstd: %s\n", d.msg);
		return 1;
	}
	size_t B = wzc_codec_record_bytes(codec), F = wzc_codec_record_bytes(f8c);
	int per = (T + 63) / 64, nb = L * per;
	size_t cap5 = (size_t)L * T * B + 4096 * (size_t)nb, capz = ZSTD_compressBound((size_t)L * T * F) + 1024 * (size_t)nb;
	uint8_t *rec = malloc((size_t)L * T * B), *f8 = malloc((size_t)L * T * F), *w5 = malloc(cap5), *w6 = malloc(cap5),
		*z = malloc(capz), *out = malloc(64 * (B > F ? B : F));
	size_t *off5 = malloc(sizeof(size_t) * nb), *size5 = malloc(sizeof(size_t) * nb),
	       *offz = malloc(sizeof(size_t) * nb), *sizez = malloc(sizeof(size_t) * nb),
	       *off6 = malloc(sizeof(size_t) * nb), *size6 = malloc(sizeof(size_t) * nb);
	int S4 = wzc_wzx_block_symbols4(x, 0), S3 = wzc_wzx_block_symbols(x, 0);
	uint16_t *s4 = malloc(sizeof *s4 * 64 * (S4 + 1)), *s3 = malloc(sizeof *s3 * 64 * (S3 + 1));
	float *rows = malloc(sizeof(float) * 64 * (R + P));
	double *t = malloc(sizeof(double) * NP * runs);
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	if (!rec || !f8 || !w5 || !w6 || !z || !out || !off5 || !size5 || !offz || !sizez || !off6 || !size6 || !s4 ||
	    !s3 || !rows || !t || !dc)
		return 1;
	for (int l = 0; l < L; l++) {
		size_t o = (size_t)l * T;
		wzc_encode_layer(codec, l, T, tr->latent, tr->rope, rec + o * B, &d);
		wzc_encode_layer(f8c, l, T, tr->latent, tr->rope, f8 + o * F, &d);
	}
	size_t t5 = 0, tz = 0, t6 = 0;
	for (int i = 0; i < nb; i++) {
		int l = i / per, t0 = 64 * (i % per), n = T - t0 < 64 ? T - t0 : 64;
		off5[i] = t5;
		size5[i] = wzc_wzx_encode_lanes5(x, l, n, rec + ((size_t)l * T + t0) * B, w5 + t5, cap5 - t5);
		offz[i] = tz;
		sizez[i] = ZSTD_compress(z + tz, capz - tz, f8 + ((size_t)l * T + t0) * F, n * F, 3);
		off6[i] = t6;
		size6[i] = wzc_wzx_encode_lanes6(x, l, n, rec + ((size_t)l * T + t0) * B, w6 + t6, cap5 - t6);
		if (!size5[i] || !size6[i] || ZSTD_isError(sizez[i]))
			return 1;
		t5 += size5[i];
		t6 += size6[i];
		tz += sizez[i];
	}
	job j = { x, w5, z, w6, off5, size5, offz, sizez, off6, size6, nb, per, T, (int)B, (int)F, R, P, out, s4, s3, rows, dc,
		  { NULL, NULL }, { NULL, NULL }, { NULL, NULL } };
	/* every records path gives the records packed, zstd the fp8-mix bytes */
	for (int i = 0; i < nb; i++) {
		int l = i / per, t0 = 64 * (i % per), n = T - t0 < 64 ? T - t0 : 64;
		static const wzc_lanes4_path check[] = { WZC_LANES4_BEST, WZC_LANES4_SCALAR, WZC_LANES4_REF };
		for (int c = 0; c < 6; c++)
			if ((c < 3 ? wzc_wzx_decode_lanes5_records_path(x, l, check[c], n, w5 + off5[i], size5[i], out)
				   : wzc_wzx_decode_lanes6_records_path(x, l, check[c - 3], n, w6 + off6[i], size6[i],
									out)) ||
			    memcmp(out, rec + ((size_t)l * T + t0) * B, (size_t)n * B)) {
				fprintf(stderr, "bench_wzx_zstd: block %d: type %d records differ from those packed\n", i,
					c < 3 ? 5 : 6);
				return 1;
			}
		size_t got = ZSTD_decompressDCtx(dc, out, 64 * F, z + offz[i], sizez[i]);
		if (ZSTD_isError(got) || got != n * F || memcmp(out, f8 + ((size_t)l * T + t0) * F, got)) {
			fprintf(stderr, "bench_wzx_zstd: block %d: zstd gives other bytes\n", i);
			return 1;
		}
	}
	/* htscodecs: each block's digits as bytes, order 0 and 1 */
	size_t th[2] = { 0, 0 }, *hoff[2], *hsize[2];
	uint8_t *hb[2];
	int have_hts = 0;
#ifdef HAVE_HTSCODECS
	have_hts = 1;
	for (int o = 0; o < 2; o++) {
		hoff[o] = malloc(sizeof(size_t) * nb);
		hsize[o] = malloc(sizeof(size_t) * nb);
		hb[o] = malloc((size_t)nb * (rans_compress_bound_4x16(64 * (S4 + 1), 1) + 64));
		if (!hoff[o] || !hsize[o] || !hb[o])
			return 1;
	}
	uint8_t *bytes = malloc((size_t)64 * (S4 + 1));
	if (!bytes)
		return 1;
	for (int i = 0; i < nb; i++) {
		int l = i / per, t0 = 64 * (i % per), n = T - t0 < 64 ? T - t0 : 64;
		if (wzc_wzx_decode_lanes5_digits(x, l, n, w5 + off5[i], size5[i], s4))
			return 1;
		const wzx_rec5 *plan = wzc_wzx_rec5_of(x, l);
		int np = plan ? plan->S5 : 0;
		for (size_t k = 0; k < (size_t)np * n; k++)
			bytes[k] = (uint8_t)s4[k];
		for (int o = 0; o < 2; o++) {
			unsigned int got = rans_compress_bound_4x16((unsigned int)(np * n), 1) + 64;
			hoff[o][i] = th[o];
			if (!rans_compress_to_4x16(bytes, (unsigned int)(np * n), hb[o] + th[o], &got, RANS_ORDER_X32 | o))
				return 1;
			hsize[o][i] = got;
			th[o] += got;
			unsigned int back = (unsigned int)(64 * (B > F ? B : F));
			if (!rans_uncompress_to_4x16(hb[o] + hoff[o][i], got, out, &back) || back != (unsigned int)(np * n) ||
			    memcmp(out, bytes, back)) {
				fprintf(stderr, "bench_wzx_zstd: htscodecs does not give the digits back\n");
				return 1;
			}
		}
	}
	free(bytes);
	for (int o = 0; o < 2; o++) {
		j.h[o] = hb[o];
		j.hoff[o] = hoff[o];
		j.hsize[o] = hsize[o];
	}
#endif
	for (int p = 0; p < NP; p++) /* tables built, caches warm */
		if (pass(&j, p) < 0)
			return 1;
	/* each timed pass after an untimed one of the same row, so that no row
	 * meets the caches as the row before it left them */
	for (int r = 0; r < runs; r++)
		for (int p = 0; p < NP; p++) {
			int on = (!only || !strcmp(only, keys[p])) && (have_hts || (p != HTS0 && p != HTS1));
			if ((on && pass(&j, p) < 0) || (t[p * runs + r] = on ? pass(&j, p) : 1e-9) < 0)
				return 1;
		}
	double tok = (double)L * T, mz = bench_median(t + ZSTD * runs, runs);
	printf("wzx restore against zstd -d, one core (thread CPU time), median of %d alternated runs,\n"
	       "%d layers x %d tokens of synthetic mla-b, wzx v5 at wz-5.44's grid (%zu B records);\n"
	       "GB/s of cache restored (bf16-equivalent, %d B a token-layer, the same tokens for every row),\n"
	       "GB/s of each row's own output (records, floats, u16 or byte digits, fp8-mix bytes), million\n"
	       "token-layers/s, stored bits/value, rate over zstd's\n\n",
	       runs, L, T, B, 2 * (R + P));
	printf("%-42s %8s %8s %8s %8s %8s\n", "", "GB/s", "own GB/s", "Mtok/s", "b/v", "/zstd");
	for (int p = 0; p < NP; p++) {
		if (!have_hts && (p == HTS0 || p == HTS1)) {
			printf("%-42s (htscodecs not found by configure)\n", names[p]);
			continue;
		}
		double m = bench_median(t + p * runs, runs);
		const wzx_rec5 *plan = wzc_wzx_rec5_of(x, 0);
		double S5 = plan ? plan->S5 : 0;
		double own = p == ROWS || p == ROWS6 ? 4.0 * (R + P) : p == ZSTD ? (double)F : p == DIGITS || p == DIGITS6 ? 2 * S5
			   : p >= HTS0 ? S5 : (double)B;
		double stored = p == ZSTD ? (double)tz : p == HTS0 ? (double)th[0] : p == HTS1 ? (double)th[1]
			      : p <= DIGITS6 ? (double)t6 : (double)t5;
		printf("%-42s %8.3f %8.3f %8.3f %8.3f %7.2fx\n", names[p], tok * 2 * (R + P) / m / 1e9,
		       tok * own / m / 1e9, tok / m / 1e6, stored * 8.0 / (tok * (R + P)), mz / m);
	}
	printf("\nrestore to wz records / zstd -d: v6 %.2fx, v5 %.2fx; to the transformed domain (v5) / zstd -d: %.2fx;\n"
	       "v6 bytes / v5 bytes: %.4f (medians of %d runs)\n",
	       mz / bench_median(t + RECORDS6 * runs, runs), mz / bench_median(t + RECORDS * runs, runs),
	       mz / bench_median(t + ROWS * runs, runs), (double)t6 / (double)t5, runs);
	ZSTD_freeDCtx(dc);
	for (int o = 0; have_hts && o < 2; o++) {
		free(hb[o]);
		free(hoff[o]);
		free(hsize[o]);
	}
	free(t);
	free(rows);
	free(s4);
	free(s3);
	free(rec);
	free(f8);
	free(w5);
	free(w6);
	free(off6);
	free(size6);
	free(z);
	free(out);
	free(off5);
	free(size5);
	free(offz);
	free(sizez);
	wzc_wzx_free(x);
	wzc_codec_free(codec);
	wzc_codec_free(f8c);
	wzc_profile_free(prof);
	wzc_profile_free(one);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(tr);
	return 0;
}
