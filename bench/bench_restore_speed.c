/* bench_restore's throughput part (bench/bench_restore.c runs it after
 * the set-up's): decode throughput per core of every wzx version's blocks
 * to symbols, records and the transformed domain, beside zstd -3 on
 * fp8-mix's bytes of the same tokens, and the restore over threads; each
 * figure also written to the rates file the simulator reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_restore.h"
#include "bench/bench_util.h"
#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/legacy/wzx_legacy.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_lanes.h"
#include "traces/synth_cache.h"

#include <zstd.h>

#define SPEED_TOKENS 1024
#define SPEED_LAYERS 4
#define SPEED_RUNS 3
#define ZSTD_LEVEL 3

/* K for the version 3 coding (type 3: eight lanes of 12-bit rANS); K = 0
 * is version 1, K > 0 type 2 with K lanes. */
#define V3 (-3)
/* version 4's coding (type 4: 32 lanes of 12-bit rANS in output order) */
#define V4 (-4)
/* version 5's coding (type 5: type 4's lanes and tables, place-major) */
#define V5 (-5)
/* version 6's (type 6: type 5's lanes, narrow and uniform tables; what
 * codec pack writes) */
#define V6 (-6)

/* The blocks of records [L][T][B] coded one way: payloads side by side. */
typedef struct {
	uint8_t *bytes;
	size_t *off, *size, total;
	int nb;
} coded;

static int code_all(const wzc_wzx *x, int L, int T, size_t B, const uint8_t *rec, int K,
		    coded *c)
{
	int per = (T + 63) / 64;
	c->nb = L * per;
	c->off = malloc(sizeof *c->off * c->nb);
	c->size = malloc(sizeof *c->size * c->nb);
	size_t cap = (size_t)L * T * B * 2 + 4096 * (size_t)c->nb;
	c->bytes = malloc(cap);
	c->total = 0;
	if (!c->off || !c->size || !c->bytes)
		return -1;
	for (int i = 0; i < c->nb; i++) {
		int l = i / per, t0 = 64 * (i % per), n = T - t0 < 64 ? T - t0 : 64;
		const uint8_t *r = rec + ((size_t)l * T + t0) * B;
		uint8_t *o = c->bytes + c->total;
		size_t got = K > 0 ? wzc_wzx_encode_lanes(x, l, K, n, r, o, cap - c->total)
			     : K == V3 ? wzc_wzx_encode_lanes12(x, l, WZC_LANES, n, r, o, cap - c->total)
			     : K == V4 ? wzc_wzx_encode_lanes4(x, l, n, r, o, cap - c->total)
			     : K == V5 ? wzc_wzx_encode_lanes5(x, l, n, r, o, cap - c->total)
			     : K == V6 ? wzc_wzx_encode_lanes6(x, l, n, r, o, cap - c->total)
				       : wzc_wzx_encode_rans1(x, l, n, r, o, cap - c->total);
		if (!got)
			return -1;
		c->off[i] = c->total;
		c->size[i] = got;
		c->total += got;
	}
	return 0;
}

static void coded_free(coded *c)
{
	free(c->bytes);
	free(c->off);
	free(c->size);
}

enum { TO_SYMBOLS, TO_RECORDS, TO_TRANSFORMED, REF_SYMBOLS, SCALAR_SYMBOLS, GROUP_SYMBOLS,
       GROUP_TRANSFORMED, TRANSFORM_ONLY, GROUP_RECORDS };

/* Version 3, WZC_LANES12_GROUP_MAX blocks of a layer at a time (as the
 * restore takes them): symbols, and on into the transformed domain as rows;
 * or (TRANSFORM_ONLY) the rows from symbols decoded beforehand into
 * all_sym, so the two steps' costs show apart.  Seconds of CPU time. */
static double group_pass(const wzc_wzx *x, int T, const coded *c, int what, uint16_t *all_sym,
			 float *rows, uint8_t *recs, int R, int P)
{
	int per = (T + 63) / 64, bad = 0, G = WZC_LANES12_GROUP_MAX;
	size_t S = (size_t)wzc_wzx_block_symbols(x, 0);
	double t0 = bench_thread_cpu_s();
	for (int i = 0; i < c->nb;) {
		int l = i / per, b = i % per, m = per - b < G ? per - b : G;
		if (i + m > c->nb)
			m = c->nb - i;
		/* a short last block goes alone */
		int n = T - 64 * b < 64 ? T - 64 * b : 64;
		if (m > 1 && T - 64 * (b + m - 1) < 64)
			m--;
		const uint8_t *pay[WZC_LANES12_GROUP_MAX];
		size_t size[WZC_LANES12_GROUP_MAX];
		uint16_t *sym[WZC_LANES12_GROUP_MAX];
		int verdict[WZC_LANES12_GROUP_MAX];
		for (int g = 0; g < m; g++) {
			pay[g] = c->bytes + c->off[i + g];
			size[g] = c->size[i + g];
			sym[g] = all_sym + S * 64 * (size_t)(what == TRANSFORM_ONLY ? i + g : g);
		}
		if (what != TRANSFORM_ONLY)
			bad |= wzc_wzx_decode_lanes12_group(x, l, WZC_LANES12_BEST, m, n, pay, size, sym, verdict);
		if (what == GROUP_RECORDS)
			for (int g = 0; g < m; g++)
				wzc_wzx_symbols_records(x, l, n, sym[g], recs + (size_t)g * 64 * wzc_wzx_record_bytes(x));
		else if (what != GROUP_SYMBOLS)
			for (int g = 0; g < m; g++)
				wzc_wzx_symbols_rows(x, l, n, sym[g], rows + (size_t)g * 64 * (R + P), (size_t)(R + P));
		i += m;
	}
	double dt = bench_thread_cpu_s() - t0;
	return bad ? -1 : dt;
}

/* One pass over every block, one thread: seconds of CPU time. */
static double decode_pass(const wzc_wzx *x, const wzc_codec *codec, int L, int T, size_t B,
			  const coded *c, int K, int what, uint16_t *sym, uint8_t *rec, float *yl,
			  float *yr, int R, int P)
{
	int per = (T + 63) / 64, bad = 0;
	(void)L; /* c->nb blocks of L layers */
	double t0 = bench_thread_cpu_s();
	for (int i = 0; i < c->nb; i++) {
		int l = i / per, t = 64 * (i % per), n = T - t < 64 ? T - t : 64;
		const uint8_t *p = c->bytes + c->off[i];
		if (K == 0) {
			/* version 1: records, then (for the transformed domain) each
			 * record decoded there, as before version 2 */
			extern int wzc_wzx_decode_block(const wzc_wzx *, int, int, const uint8_t *, size_t,
							uint8_t *);
			bad |= wzc_wzx_decode_block(x, l, n, p, c->size[i], rec);
			if (what == TO_TRANSFORMED)
				for (int k = 0; k < n; k++)
					wzc_wz_decode_token_transformed(codec, l, rec + (size_t)k * B,
									yl + (size_t)k * R, yr + (size_t)k * P);
			continue;
		}
		if (K == V3) {
			wzc_lanes12_path path = what == REF_SYMBOLS	 ? WZC_LANES12_REF
						: what == SCALAR_SYMBOLS ? WZC_LANES12_SCALAR
									 : WZC_LANES12_BEST;
			bad |= wzc_wzx_decode_lanes12_path(x, l, path, n, p, c->size[i], sym);
			if (what == REF_SYMBOLS || what == SCALAR_SYMBOLS)
				continue;
		} else if (what == REF_SYMBOLS) {
			bad |= wzc_wzx_decode_lanes_ref(x, l, K, n, p, c->size[i], sym);
			continue;
		} else {
			bad |= wzc_wzx_decode_lanes(x, l, K, n, p, c->size[i], sym);
		}
		if (what == TO_RECORDS)
			wzc_wzx_symbols_records(x, l, n, sym, rec);
		else if (what == TO_TRANSFORMED)
			wzc_wzx_symbols_transformed(x, l, n, sym, yl, yr);
	}
	double dt = bench_thread_cpu_s() - t0;
	return bad ? -1 : dt;
}

/* Version 4 (type 4 blocks) or 5 (type 5; v5 set), one block at a time:
 * to symbols on a path, fused to rows of the transformed domain, or to
 * records (symbols, back to coding order, records).  Seconds of CPU time. */
enum { V4_SYMBOLS, V4_ROWS, V4_RECORDS, V4_GROUP_ROWS };
static double v4_pass(const wzc_wzx *x, int T, const coded *c, wzc_lanes4_path path, int what,
		      uint16_t *sym, uint16_t *sym3, float *rows, uint8_t *rec, int R, int P, int v5)
{
	int per = (T + 63) / 64, bad = 0;
	double t0 = bench_thread_cpu_s();
	for (int i = 0; i < c->nb; i++) {
		int l = i / per, t = 64 * (i % per), n = T - t < 64 ? T - t : 64;
		const uint8_t *p = c->bytes + c->off[i];
		if (what == V4_GROUP_ROWS) {
			/* four blocks of a layer at once (a short last block alone) */
			int m = 1;
			while (m < WZC_LANES4_GROUP_MAX && (i + m) % per && 64 * ((i + m) % per) + 64 <= T)
				m++;
			if (n < 64)
				m = 1;
			const uint8_t *pay[WZC_LANES4_GROUP_MAX];
			float *rw[WZC_LANES4_GROUP_MAX];
			int verdict[WZC_LANES4_GROUP_MAX];
			for (int g = 0; g < m; g++) {
				pay[g] = c->bytes + c->off[i + g];
				rw[g] = rows + (size_t)g * 64 * (R + P);
			}
			bad |= wzc_wzx_decode_lanes4_rows_group(x, l, path, m, n, pay, c->size + i, rw,
								(size_t)(R + P), verdict);
			i += m - 1;
			continue;
		}
		if (what == V4_ROWS) {
			bad |= (v5 ? wzc_wzx_decode_lanes5_rows_path : wzc_wzx_decode_lanes4_rows_path)(
				x, l, path, n, p, c->size[i], rows, (size_t)(R + P));
			continue;
		}
		bad |= (v5 ? wzc_wzx_decode_lanes5_path : wzc_wzx_decode_lanes4_path)(x, l, path, n, p, c->size[i], sym);
		if (what == V4_RECORDS) {
			wzc_wzx_symbols4_entries(x, l, n, sym, sym3);
			wzc_wzx_symbols_records(x, l, n, sym3, rec);
		}
	}
	double dt = bench_thread_cpu_s() - t0;
	return bad ? -1 : dt;
}

/* What the steps below share: the window's shape, the codec, its records
 * and container coder, scratch for one block, the encode's times (the
 * pack's first half) and the transformed-domain rates the zstd step
 * compares against. */
typedef struct {
	int L, T, R, P;
	size_t B;
	double tok, gb; /* token-layers and GB of bf16-equivalent output */
	wzc_window w;
	wzc_profile *prof;
	wzc_codec *codec;
	wzc_wzx *x;
	uint8_t *rec;
	double enc[SPEED_RUNS];
	uint16_t *sym;
	uint8_t *brec;
	float *yl, *yr;
	double best_tr, one_tr, v2_tr, v4_tr, v4_avx2_tr, v5_tr, v5_loads_tr;
	wz_diag d;
} speed;

/* Version 3 the restore's way: blocks four at a time, then rows. */
static int speed_v3_groups(speed *s, const coded *c)
{
	const wzc_wzx *x = s->x;
	int T = s->T, R = s->R, P = s->P;
	size_t B = s->B;
	double tok = s->tok, gb = s->gb;
	size_t S = (size_t)wzc_wzx_block_symbols(x, 0);
	uint16_t *all = malloc(sizeof *all * (S * 64 * (size_t)c->nb + 2));
	float *rows = malloc(sizeof(float) * 64 * WZC_LANES12_GROUP_MAX * (size_t)(R + P));
	uint8_t *recs = malloc(64 * WZC_LANES12_GROUP_MAX * B);
	if (!all || !rows || !recs)
		return -1;
	for (int i = 0, per = (T + 63) / 64; i < c->nb; i++) {
		int n = T - 64 * (i % per) < 64 ? T - 64 * (i % per) : 64;
		wzc_wzx_decode_lanes12(x, i / per, n, c->bytes + c->off[i], c->size[i], all + S * 64 * i);
	}
	static const int gw[] = { GROUP_SYMBOLS, GROUP_TRANSFORMED, TRANSFORM_ONLY, GROUP_RECORDS };
	static const char *const gn[] = {
		"v3, 4 blocks at once, to symbols",
		"v3, 4 blocks at once, to transformed (restore's)",
		"v3, symbols to transformed alone (decoded before)",
		"v3, 4 blocks at once, to records (restore's)" };
	for (int wi = 0; wi < 4; wi++) {
		double t[SPEED_RUNS];
		for (int r = 0; r < SPEED_RUNS; r++)
			t[r] = group_pass(x, T, c, gw[wi], all, rows, recs, R, P);
		double m = bench_median(t, SPEED_RUNS);
		if (m <= 0)
			return -1;
		printf("%-52s %8.2f %8.3f %9.3f\n", gn[wi], gb / m, tok / m / 1e6,
		       c->total * 8.0 / (tok * (R + P)));
		if (gw[wi] == GROUP_TRANSFORMED) {
			s->best_tr = tok / m;
			br_rate("restore_transformed_tokens_per_core_s", tok / m, "token-layers/s",
			     "wzx v3 to the transformed domain, four blocks at once (the restore's way), one core");
			br_rate("wzx_bits_per_value", c->total * 8.0 / (tok * (R + P)), "bits",
			     "wzx v3 payload bits per cache value on the benchmark's blocks");
		}
		if (gw[wi] == GROUP_RECORDS)
			br_rate("restore_v3_records_tokens_per_core_s", tok / m, "token-layers/s",
			     "wzx v3 to wz records, four blocks at once (the restore's way for v3), one core");
	}
	free(all);
	free(rows);
	free(recs);
	return 0;
}

/* Versions 1 to 3 (one byte-wise state, K lanes, eight lanes of 12-bit
 * rANS), one block at a time, to symbols, records and the transformed
 * domain; version 3 also four blocks at once. */
static int speed_v1_to_v3(speed *s)
{
	const wzc_wzx *x = s->x;
	int L = s->L, T = s->T, R = s->R, P = s->P;
	size_t B = s->B;
	double tok = s->tok, gb = s->gb;
	static const int lanes[] = { 0, 4, 8, 16, 32, V3 };
	for (size_t li = 0; li < sizeof lanes / sizeof *lanes; li++) {
		int K = lanes[li];
		coded c;
		if (code_all(x, L, T, B, s->rec, K, &c))
			return -1;
		/* a pass to build the decoder's tables, not timed */
		decode_pass(x, s->codec, L, T, B, &c, K, TO_SYMBOLS, s->sym, s->brec, s->yl, s->yr, R, P);
		static const int whats[] = { TO_SYMBOLS, SCALAR_SYMBOLS, TO_RECORDS, TO_TRANSFORMED,
					     REF_SYMBOLS };
		static const char *const names[] = { "symbols", "symbols, scalar fast loop", "records",
						     "transformed domain", "symbols, scalar reference" };
		for (int wi = 0; wi < 5; wi++) {
			if (K == 0 && (whats[wi] == TO_SYMBOLS || whats[wi] == REF_SYMBOLS))
				continue;
			if (K != V3 && whats[wi] == SCALAR_SYMBOLS)
				continue;
			double t[SPEED_RUNS];
			for (int r = 0; r < SPEED_RUNS; r++)
				t[r] = decode_pass(x, s->codec, L, T, B, &c, K, whats[wi], s->sym, s->brec, s->yl, s->yr, R, P);
			double m = bench_median(t, SPEED_RUNS);
			if (m <= 0)
				return -1;
			char label[96];
			if (K == V3)
				snprintf(label, sizeof label, "v3, 8 lanes 12-bit, to %s%s", names[wi],
					 whats[wi] == TO_SYMBOLS && wzc_wzx_lanes12_have(WZC_LANES12_AVX2)
						 ? " (AVX2)" : "");
			else if (K)
				snprintf(label, sizeof label, "v2, %2d lanes, to %s", K, names[wi]);
			else
				snprintf(label, sizeof label, "v1 (one byte-wise state), to %s", names[wi]);
			printf("%-52s %8.2f %8.3f %9.3f\n", label, gb / m, tok / m / 1e6,
			       c.total * 8.0 / (tok * (R + P)));
			if (K == WZC_LANES && whats[wi] == TO_TRANSFORMED) {
				s->v2_tr = tok / m;
				br_rate("restore_v2_transformed_tokens_per_core_s", tok / m, "token-layers/s",
				     "wzx v2 to the transformed domain, one core");
			}
			if (K == V3 && whats[wi] == TO_TRANSFORMED) {
				s->one_tr = tok / m;
				br_rate("restore_transformed_one_block_tokens_per_core_s", tok / m, "token-layers/s",
				     "wzx v3 to the transformed domain, one block at a time, one core");
			}
			if (K == V3 && whats[wi] == TO_RECORDS)
				br_rate("restore_records_one_block_tokens_per_core_s", tok / m, "token-layers/s",
				     "wzx v3 to wz records, one block at a time, one core");
			if (K == 0 && whats[wi] == TO_TRANSFORMED)
				br_rate("restore_v1_transformed_tokens_per_core_s", tok / m, "token-layers/s",
				     "wzx v1 to the transformed domain through records, one core");
		}
		if (K == V3 && speed_v3_groups(s, &c))
			return -1;
		coded_free(&c);
	}
	return 0;
}

/* Version 4: type 4 blocks, one at a time. */
static int speed_v4(speed *s)
{
	const wzc_wzx *x = s->x;
	int L = s->L, T = s->T, R = s->R, P = s->P;
	size_t B = s->B;
	double tok = s->tok, gb = s->gb;
	coded c;
	if (code_all(x, L, T, B, s->rec, V4, &c))
		return -1;
	size_t S4 = (size_t)wzc_wzx_block_symbols4(x, 0), S3 = (size_t)wzc_wzx_block_symbols(x, 0);
	uint16_t *s4 = malloc(sizeof *s4 * 64 * S4), *s3 = malloc(sizeof *s3 * (64 * S3 + 2));
	float *rows = malloc(sizeof(float) * 64 * WZC_LANES4_GROUP_MAX * (size_t)(R + P));
	if (!s4 || !s3 || !rows)
		return -1;
	v4_pass(x, T, &c, WZC_LANES4_BEST, V4_ROWS, s4, s3, rows, s->brec, R, P, 0);
	static const struct { wzc_lanes4_path path; int what; const char *name; } v4[] = {
		{ WZC_LANES4_AVX512, V4_SYMBOLS, "v4, 32 lanes 12-bit, to symbols (AVX-512)" },
		{ WZC_LANES4_AVX2, V4_SYMBOLS, "v4, 32 lanes 12-bit, to symbols (AVX2)" },
		{ WZC_LANES4_SCALAR, V4_SYMBOLS, "v4, 32 lanes 12-bit, to symbols, scalar fast loop" },
		{ WZC_LANES4_REF, V4_SYMBOLS, "v4, 32 lanes 12-bit, to symbols, scalar reference" },
		{ WZC_LANES4_BEST, V4_RECORDS, "v4, 32 lanes 12-bit, to records" },
		{ WZC_LANES4_SCALAR, V4_ROWS, "v4, to transformed, fused, scalar fast loop" },
		{ WZC_LANES4_AVX512, V4_ROWS, "v4, to transformed, fused (AVX-512)" },
		{ WZC_LANES4_AVX2, V4_ROWS, "v4, to transformed, fused (AVX2)" },
		{ WZC_LANES4_AVX2_LOADS, V4_ROWS, "v4, to transformed, fused (AVX2, plain loads)" },
		{ WZC_LANES4_BEST, V4_GROUP_ROWS, "v4, 4 blocks at once, to transformed, fused" },
	};
	for (size_t vi = 0; vi < sizeof v4 / sizeof *v4; vi++) {
		if (!wzc_wzx_lanes4_have(v4[vi].path))
			continue;
		double t[SPEED_RUNS];
		for (int r = 0; r < SPEED_RUNS; r++)
			t[r] = v4_pass(x, T, &c, v4[vi].path, v4[vi].what, s4, s3, rows, s->brec, R, P, 0);
		double m = bench_median(t, SPEED_RUNS);
		if (m <= 0)
			return -1;
		printf("%-52s %8.2f %8.3f %9.3f\n", v4[vi].name, gb / m, tok / m / 1e6,
		       c.total * 8.0 / (tok * (R + P)));
		if (v4[vi].what == V4_GROUP_ROWS) {
			s->v4_tr = tok / m;
			br_rate("restore_v4_transformed_tokens_per_core_s", tok / m, "token-layers/s",
			     "wzx v4 (type 4 blocks) fused to the transformed domain, four blocks at once "
			     "(the restore's way), one core");
			br_rate("wzx_v4_bits_per_value", c.total * 8.0 / (tok * (R + P)), "bits",
			     "wzx v4 payload bits per cache value on the benchmark's blocks");
		}
		if (v4[vi].what == V4_ROWS && v4[vi].path == WZC_LANES4_AVX512)
			br_rate("restore_v4_transformed_one_block_tokens_per_core_s", tok / m, "token-layers/s",
			     "wzx v4 fused to the transformed domain, one block at a time, AVX-512, one core");
		if (v4[vi].what == V4_ROWS && v4[vi].path == WZC_LANES4_AVX2) {
			s->v4_avx2_tr = tok / m;
			br_rate("restore_v4_transformed_avx2_tokens_per_core_s", tok / m, "token-layers/s",
			     "wzx v4 fused to the transformed domain, one block at a time, AVX2, one core");
		}
		if (v4[vi].what == V4_ROWS && v4[vi].path == WZC_LANES4_AVX2_LOADS)
			br_rate("restore_v4_transformed_avx2_loads_tokens_per_core_s", tok / m, "token-layers/s",
			     "wzx v4 fused to the transformed domain, one block at a time, AVX2 with plain loads for "
			     "its look-ups (_BEST on AMD), one core");
		if (v4[vi].what == V4_ROWS && v4[vi].path == WZC_LANES4_SCALAR)
			br_rate("restore_v4_transformed_scalar_tokens_per_core_s", tok / m, "token-layers/s",
			     "wzx v4 fused to the transformed domain, one block at a time, portable scalar loop, one core");
		if (v4[vi].what == V4_RECORDS)
			br_rate("restore_v4_records_tokens_per_core_s", tok / m, "token-layers/s",
			     "wzx v4 to wz records, one block at a time (the restore's way for v4), one core");
	}
	free(s4);
	free(s3);
	free(rows);
	coded_free(&c);
	return 0;
}

/* Version 5: type 5 blocks (what codec pack wrote before version 6), one at
 * a time. */
static int speed_v5(speed *s)
{
	const wzc_wzx *x = s->x;
	int L = s->L, T = s->T, R = s->R, P = s->P;
	size_t B = s->B;
	double tok = s->tok, gb = s->gb;
	coded c;
	if (code_all(x, L, T, B, s->rec, V5, &c))
		return -1;
	size_t S4 = (size_t)wzc_wzx_block_symbols4(x, 0), S3 = (size_t)wzc_wzx_block_symbols(x, 0);
	uint16_t *s4 = malloc(sizeof *s4 * 64 * S4), *s3 = malloc(sizeof *s3 * (64 * S3 + 2));
	float *rows = malloc(sizeof(float) * 64 * (size_t)(R + P));
	if (!s4 || !s3 || !rows)
		return -1;
	v4_pass(x, T, &c, WZC_LANES4_BEST, V4_ROWS, s4, s3, rows, s->brec, R, P, 1);
	static const struct { wzc_lanes4_path path; int what; const char *name; } v5[] = {
		{ WZC_LANES4_AVX2, V4_SYMBOLS, "v5, place-major, to symbols (AVX2)" },
		{ WZC_LANES4_AVX2_LOADS, V4_SYMBOLS, "v5, place-major, to symbols (AVX2, plain loads)" },
		{ WZC_LANES4_SCALAR, V4_SYMBOLS, "v5, place-major, to symbols, portable loop" },
		{ WZC_LANES4_REF, V4_SYMBOLS, "v5, place-major, to symbols, scalar reference" },
		{ WZC_LANES4_BEST, V4_RECORDS, "v5, to records through symbols (before one pass)" },
		{ WZC_LANES4_SCALAR, V4_ROWS, "v5, to transformed, fused, portable loop" },
		{ WZC_LANES4_AVX2, V4_ROWS, "v5, to transformed, fused (AVX2)" },
		{ WZC_LANES4_AVX2_LOADS, V4_ROWS, "v5, to transformed, fused (AVX2, plain loads)" },
		{ WZC_LANES4_BEST, V4_ROWS, "v5, to transformed, fused, best (the restore's)" },
	};
	for (size_t vi = 0; vi < sizeof v5 / sizeof *v5; vi++) {
		if (!wzc_wzx_lanes5_have(v5[vi].path))
			continue;
		double t[SPEED_RUNS];
		for (int r = 0; r < SPEED_RUNS; r++)
			t[r] = v4_pass(x, T, &c, v5[vi].path, v5[vi].what, s4, s3, rows, s->brec, R, P, 1);
		double m = bench_median(t, SPEED_RUNS);
		if (m <= 0)
			return -1;
		printf("%-52s %8.2f %8.3f %9.3f\n", v5[vi].name, gb / m, tok / m / 1e6,
		       c.total * 8.0 / (tok * (R + P)));
		if (v5[vi].what == V4_ROWS && v5[vi].path == WZC_LANES4_BEST) {
			s->v5_tr = tok / m;
			br_rate("restore_v5_transformed_tokens_per_core_s", tok / m, "token-layers/s",
			     "wzx v5 (type 5 blocks) fused to the transformed domain, "
			     "one block at a time (the restore's way), one core");
			br_rate("wzx_v5_bits_per_value", c.total * 8.0 / (tok * (R + P)), "bits",
			     "wzx v5 payload bits per cache value on the benchmark's blocks");
		}
		if (v5[vi].what == V4_ROWS && v5[vi].path == WZC_LANES4_AVX2_LOADS) {
			s->v5_loads_tr = tok / m;
			br_rate("restore_v5_transformed_avx2_loads_tokens_per_core_s", tok / m, "token-layers/s",
			     "wzx v5 fused to the transformed domain, one block at a time, AVX2 with plain loads "
			     "(_BEST with AVX2), one core");
		}
		if (v5[vi].what == V4_ROWS && v5[vi].path == WZC_LANES4_SCALAR)
			br_rate("restore_v5_transformed_scalar_tokens_per_core_s", tok / m, "token-layers/s",
			     "wzx v5 fused to the transformed domain, one block at a time, portable loop, one core");
		if (v5[vi].what == V4_RECORDS)
			br_rate("restore_v5_records_tokens_per_core_s", tok / m, "token-layers/s",
			     "wzx v5 (type 5 blocks) to wz records through symbols (the way before the one-pass loop), one block at a time, one core");
	}
	free(s4);
	free(s3);
	free(rows);
	coded_free(&c);
	return 0;
}

/* Version 6: type 6 blocks (what codec pack writes), one at a time,
 * straight to records (the restore's way into a wz GPU tier). */
static int speed_v6(speed *s)
{
	const wzc_wzx *x = s->x;
	int L = s->L, T = s->T, R = s->R, P = s->P;
	size_t B = s->B;
	double tok = s->tok, gb = s->gb;
	coded c;
	if (code_all(x, L, T, B, s->rec, V6, &c))
		return -1;
	double t[SPEED_RUNS];
	for (int r = -1; r < SPEED_RUNS; r++) {
		int per = (T + 63) / 64, bad = 0;
		double t0 = bench_thread_cpu_s();
		for (int i = 0; i < c.nb; i++) {
			int l = i / per, t1 = 64 * (i % per), n = T - t1 < 64 ? T - t1 : 64;
			bad |= wzc_wzx_decode_lanes6_records(x, l, n, c.bytes + c.off[i], c.size[i], s->brec);
			/* the untimed first pass checks every block's records */
			bad |= r < 0 && memcmp(s->brec, s->rec + ((size_t)l * T + t1) * B, (size_t)n * B);
		}
		if (bad)
			return -1;
		if (r >= 0)
			t[r] = bench_thread_cpu_s() - t0;
	}
	double m = bench_median(t, SPEED_RUNS);
	printf("%-52s %8.2f %8.3f %9.3f\n", "v6, to records (the restore's)", gb / m, tok / m / 1e6,
	       c.total * 8.0 / (tok * (R + P)));
	br_rate("restore_records_tokens_per_core_s", tok / m, "token-layers/s",
	     "wzx v6 (type 6 blocks, what codec pack writes) to wz records, one block at a time "
	     "(the restore's way), one core");
	br_rate("wzx_v6_bits_per_value", c.total * 8.0 / (tok * (R + P)), "bits",
	     "wzx v6 payload bits per cache value on the benchmark's blocks");
	coded_free(&c);
	return 0;
}

/* Version 3 to bf16 (the cache's own domain), and the pack side. */
static int speed_values_and_pack(speed *s)
{
	const wzc_wzx *x = s->x;
	int L = s->L, T = s->T, R = s->R, P = s->P;
	size_t B = s->B;
	double tok = s->tok, gb = s->gb;
	coded c;
	if (code_all(x, L, T, B, s->rec, V3, &c))
		return -1;
	double t[SPEED_RUNS], pk[SPEED_RUNS];
	float *lat = malloc(sizeof(float) * 64 * R), *rope = malloc(sizeof(float) * 64 * P);
	for (int r = 0; r < SPEED_RUNS; r++) {
		double t0 = bench_thread_cpu_s();
		for (int i = 0, per = (T + 63) / 64; i < c.nb; i++) {
			int l = i / per, t1 = 64 * (i % per), n = T - t1 < 64 ? T - t1 : 64;
			wzc_wzx_decode_lanes12(x, l, n, c.bytes + c.off[i], c.size[i], s->sym);
			wzc_wzx_symbols_records(x, l, n, s->sym, s->brec);
			if (wzc_decode_layer(s->codec, l, n, s->brec, lat, rope))
				fprintf(stderr, "decoding failed (out of memory)\n"), exit(1);
		}
		t[r] = bench_thread_cpu_s() - t0;
		t0 = bench_thread_cpu_s();
		coded c2;
		code_all(x, L, T, B, s->rec, V6, &c2);
		pk[r] = bench_thread_cpu_s() - t0 + s->enc[r];
		coded_free(&c2);
	}
	double m = bench_median(t, SPEED_RUNS), mp = bench_median(pk, SPEED_RUNS);
	printf("%-52s %8.2f %8.3f\n", "v3, to the cache's own values (float)", gb / m,
	       tok / m / 1e6);
	printf("%-52s %8.2f %8.3f\n", "pack: wz encode + v6 entropy coding", gb / mp, tok / mp / 1e6);
	br_rate("restore_v3_values_tokens_per_core_s", tok / m, "token-layers/s",
	     "wzx v3 to the cache's own domain through records (inverse transform), one core");
	br_rate("pack_tokens_per_core_s", tok / mp, "token-layers/s",
	     "wz encode and wzx v6 entropy coding (what codec pack writes), one core");
	free(lat);
	free(rope);
	coded_free(&c);
	return 0;
}

/* zstd -3 on fp8-mix's bytes of the same tokens, a frame per block of
 * 64 tokens x one layer as wzx has, and the summary against it. */
static int speed_zstd(speed *s)
{
	int L = s->L, T = s->T, R = s->R, P = s->P;
	double tok = s->tok, gb = s->gb;
	wzc_format ff;
	wzc_codec *fc;
	if (wzc_format_parse("fp8-mix", &ff, &s->d) || wzc_codec_new(&ff, L, R, P, NULL, &fc, &s->d))
		return -1;
	size_t fb = wzc_codec_record_bytes(fc), raw = (size_t)L * T * fb;
	uint8_t *f8 = malloc(raw), *z = malloc(ZSTD_compressBound(raw) + 64 * (size_t)L * 16);
	uint8_t *back = malloc(64 * fb);
	size_t per = (size_t)(T + 63) / 64, nb = (size_t)L * per, zt = 0;
	size_t *zo = malloc(sizeof *zo * nb), *zs = malloc(sizeof *zs * nb);
	for (int l = 0; l < L; l++)
		wzc_encode_layer(fc, l, T, s->w.latent + (size_t)l * T * R, s->w.rope + (size_t)l * T * P,
				 f8 + (size_t)l * T * fb, &s->d);
	for (size_t i = 0; i < nb; i++) {
		size_t t0 = 64 * (i % per), n = (size_t)T - t0 < 64 ? (size_t)T - t0 : 64;
		const uint8_t *src = f8 + ((i / per) * T + t0) * fb;
		zo[i] = zt;
		zs[i] = ZSTD_compress(z + zt, ZSTD_compressBound(n * fb), src, n * fb, ZSTD_LEVEL);
		zt += zs[i];
	}
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	double t[SPEED_RUNS];
	for (int r = 0; r < SPEED_RUNS; r++) {
		double t0 = bench_thread_cpu_s();
		for (size_t i = 0; i < nb; i++)
			ZSTD_decompressDCtx(dc, back, 64 * fb, z + zo[i], zs[i]);
		t[r] = bench_thread_cpu_s() - t0;
	}
	double m = bench_median(t, SPEED_RUNS);
	printf("%-52s %8.2f %8.3f %9.3f\n", "reference: zstd -3 decompressing fp8-mix bytes", gb / m,
	       tok / m / 1e6, zt * 8.0 / (tok * (R + P)));
	printf("\nwzx v5 to the transformed domain (fused, one block at a time, best) / zstd -3 on fp8-mix: "
	       "%.2fx tokens/s (AVX2 with plain loads: %.2fx)\n", s->v5_tr / (tok / m), s->v5_loads_tr / (tok / m));
	printf("wzx v4 to the transformed domain (fused, four blocks at once) / zstd -3 on fp8-mix: "
	       "%.2fx tokens/s (AVX2 loop, one block at a time: %.2fx)\n", s->v4_tr / (tok / m),
	       s->v4_avx2_tr / (tok / m));
	printf("wzx v3 to the transformed domain / zstd -3 on fp8-mix: %.2fx tokens/s "
	       "(one block at a time: %.2fx; v2, 8 lanes: %.2fx)\n", s->best_tr / (tok / m),
	       s->one_tr / (tok / m), s->v2_tr / (tok / m));
	br_rate("fp8mix_bytes_per_token_layer", (double)fb, "B",
	     "fp8-mix record bytes of one token and layer");
	br_rate("zstd3_fp8mix_tokens_per_core_s", tok / m, "token-layers/s",
	     "zstd -3 decompression of fp8-mix bytes (reference), one core");
	br_rate("zstd3_fp8mix_bits_per_value", zt * 8.0 / (tok * (R + P)), "bits",
	     "zstd -3 frame bits per cache value of fp8-mix bytes");
	ZSTD_freeDCtx(dc);
	free(f8);
	free(z);
	free(back);
	free(zo);
	free(zs);
	wzc_codec_free(fc);
	return 0;
}

/* The restore to bf16 the restore's way (four blocks to the transformed
 * domain, the inverse transform of a block's tokens at once) beside its
 * reference (block by block through records), one thread, interleaved
 * runs; the same bytes checked. */
static int speed_restore_bf16(speed *s, wzc_wzx_reader *rd)
{
	const wzc_wzx *x = s->x;
	int L = s->L, T = s->T, R = s->R, P = s->P;
	double tok = s->tok, gb = s->gb;
	enum { BF16_RUNS = 5 };
	long nbl = wzc_wzx_reader_info(rd)->nblocks;
	size_t nbf = (size_t)L * T * (R + P);
	uint16_t *b1 = malloc(sizeof *b1 * nbf), *b2 = malloc(sizeof *b2 * nbf);
	double tg[BF16_RUNS], tref[BF16_RUNS];
	if (!b1 || !b2)
		return -1;
	for (int r = 0; r < BF16_RUNS; r++) {
		double t0 = bench_thread_cpu_s();
		if (wzc_wzx_restore(rd, x, WZC_RESTORE_BF16, 0, nbl, 1, b1, &s->d))
			return -1;
		tg[r] = bench_thread_cpu_s() - t0;
		t0 = bench_thread_cpu_s();
		if (wzc_wzx_restore(rd, x, WZC_RESTORE_BF16_RECORDS, 0, nbl, 1, b2, &s->d))
			return -1;
		tref[r] = bench_thread_cpu_s() - t0;
	}
	double mg = bench_median(tg, BF16_RUNS), mr = bench_median(tref, BF16_RUNS);
	printf("\nrestore to bf16, one thread (thread CPU time), median of %d, %d layers x %d tokens\n",
	       BF16_RUNS, L, T);
	printf("%-52s %8s %8s\n", "", "GB/s", "Mtok/s");
	printf("%-52s %8.2f %8.3f\n", "bf16 in groups (restore's: rows, then GEMM)", gb / mg,
	       tok / mg / 1e6);
	printf("%-52s %8.2f %8.3f\n", "reference: block by block through records", gb / mr,
	       tok / mr / 1e6);
	printf("groups / reference: %.2fx; the same bytes: %s\n", mr / mg,
	       memcmp(b1, b2, sizeof *b1 * nbf) ? "NO" : "yes");
	br_rate("restore_values_tokens_per_core_s", tok / mg, "token-layers/s",
	     "wzx as codec pack writes it (v6) to bf16 cache values, runs of blocks to the "
	     "transformed domain then the inverse transform per block (the restore's way), one core");
	br_rate("restore_values_records_tokens_per_core_s", tok / mr, "token-layers/s",
	     "the same container to bf16 cache values block by block through records (the "
	     "reference), one core");
	free(b1);
	free(b2);
	return 0;
}

/* The restore over threads: the same blocks in a container, wall time. */
static int speed_restore_threads(speed *s)
{
	const wzc_wzx *x = s->x;
	int L = s->L, T = s->T, R = s->R, P = s->P;
	size_t B = s->B;
	double tok = s->tok;
	size_t cap = wzc_wzx_bound(L, T, R, P, B, strlen(s->prof->model)), n;
	uint8_t *cont = malloc(cap);
	wzc_wzx_reader *rd;
	float *out = malloc(sizeof(float) * (size_t)L * T * (R + P));
	if (!cont || !out || wzc_wzx_write(x, T, s->rec, cont, cap, &n, NULL, &s->d) ||
	    wzc_wzx_open(cont, n, "bench", &rd, &s->d))
		return -1;
	if (speed_restore_bf16(s, rd))
		return -1;
	long ncores = sysconf(_SC_NPROCESSORS_ONLN);
	printf("\nrestore of the whole container to the transformed domain, wall time, median of %d\n",
	       SPEED_RUNS);
	printf("%8s %10s %12s\n", "threads", "Mtok/s", "per thread");
	double one_thread = 0;
	for (long th = 1; th <= ncores; th *= 2) {
		double t[SPEED_RUNS];
		for (int r = 0; r < SPEED_RUNS; r++) {
			double t0 = br_now();
			if (wzc_wzx_restore(rd, x, WZC_RESTORE_TRANSFORMED, 0, wzc_wzx_reader_info(rd)->nblocks,
					    (int)th, out, &s->d))
				return -1;
			t[r] = br_now() - t0;
		}
		double m = bench_median(t, SPEED_RUNS);
		if (th == 1)
			one_thread = tok / m;
		printf("%8ld %10.3f %11.2fx\n", th, tok / m / 1e6, tok / m / one_thread / th);
		if (th * 2 > ncores && th != ncores)
			th = ncores / 2;
	}
	wzc_wzx_reader_free(rd);
	free(cont);
	free(out);
	return 0;
}

/* Decode throughput on one core against zstd -3 on fp8-mix's bytes of the
 * same tokens, and the restore's scaling over threads, on a profile of the
 * layers measured (the one prepared layer repeated): a container covers
 * every layer of its coder's profile. */
int bench_restore_speed(const wzc_profile *one, const wzc_format *fmt)
{
	wzt_cache_trace *tr = bench_window("bench_restore", WZT_FAMILY_MLA_B, 11,
					  "test", 3, SPEED_TOKENS);
	if (!tr)
		return -1;
	float *vl, *vr;
	speed sp = { 0 }, *s = &sp;
	s->w = br_view(tr, "test", SPEED_LAYERS < br_layers ? SPEED_LAYERS : br_layers, &vl, &vr);
	int L = s->w.L, T = s->w.T, R = s->w.R, P = s->w.P;
	s->L = L, s->T = T, s->R = R, s->P = P;
	s->prof = bench_repeat_profile(one, L);
	if (!s->prof || wzc_codec_new(fmt, L, R, P, s->prof, &s->codec, &s->d))
		return -1;
	size_t B = s->B = wzc_codec_record_bytes(s->codec);
	s->rec = malloc((size_t)L * T * B);
	if (!s->rec || wzc_wzx_of_codec(s->codec, &s->x, &s->d))
		return -1;
	s->tok = (double)L * T, s->gb = s->tok * (R + P) * 2 / 1e9;
	for (int r = 0; r < SPEED_RUNS; r++) {
		double t0 = bench_thread_cpu_s();
		for (int l = 0; l < L; l++)
			wzc_encode_layer(s->codec, l, T, s->w.latent + (size_t)l * T * R,
					 s->w.rope + (size_t)l * T * P, s->rec + (size_t)l * T * B, &s->d);
		s->enc[r] = bench_thread_cpu_s() - t0;
	}
	s->sym = malloc(sizeof *s->sym * 64 * (size_t)wzc_wzx_block_symbols(s->x, 0) * 2);
	s->brec = malloc(64 * B);
	s->yl = malloc(sizeof(float) * 64 * R), s->yr = malloc(sizeof(float) * 64 * P);
	printf("\ndecode throughput, one core (thread CPU time), median of %d runs, %d layers x %d tokens;\n"
	       "GB/s of bf16-equivalent output (1152 bytes per token and layer), million token-layers/s\n\n",
	       SPEED_RUNS, L, T);
	printf("%d symbols per token and layer (layer 0)\n\n", wzc_wzx_block_symbols(s->x, 0));
	printf("%-52s %8s %8s %9s\n", "", "GB/s", "Mtok/s", "b/v");
	if (speed_v1_to_v3(s) || speed_v4(s) || speed_v5(s) || speed_v6(s) ||
	    speed_values_and_pack(s) || speed_zstd(s) || speed_restore_threads(s))
		return -1;
	free(s->sym);
	free(s->brec);
	free(s->yl);
	free(s->yr);
	free(s->rec);
	wzc_wzx_free(s->x);
	wzc_codec_free(s->codec);
	wzc_profile_free(s->prof);
	free(vl);
	free(vr);
	wzt_cache_trace_free(tr);
	return 0;
}
