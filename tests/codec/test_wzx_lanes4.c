/* Tests of wzx types 4 (version 4: 32 lanes of 12-bit rANS, symbols in
 * output order) and 5 (version 5: the same, place-major): every decoder
 * path this processor has (scalar, AVX-512, AVX2, best) against the
 * scalar reference, to symbols and fused to rows: the
 * same symbols, the same rows bit for bit and the same verdict on every
 * payload (valid, bit-flipped, truncated); the records restored exactly;
 * the rows equal to the wz decoder's values of those records. */
#include "tests/tap.h"

#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/legacy/wzx_legacy.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_lanes.h"
#include "tests/codec/window.h"
#include "tests/codec/wzx_fixture.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* The type under test (4 or 5) and its functions. */
static int type = 4;
static int have(wzc_lanes4_path path)
{
	return type == 5 ? wzc_wzx_lanes5_have(path) : wzc_wzx_lanes4_have(path);
}
static size_t encode(const wzc_wzx *x, int layer, int n, const uint8_t *rec, uint8_t *out, size_t cap)
{
	return (type == 5 ? wzc_wzx_encode_lanes5 : wzc_wzx_encode_lanes4)(x, layer, n, rec, out, cap);
}
static int dec_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n, const uint8_t *p, size_t size,
		    uint16_t *sym)
{
	return (type == 5 ? wzc_wzx_decode_lanes5_path : wzc_wzx_decode_lanes4_path)(x, layer, path, n, p, size, sym);
}
static int dec_ref(const wzc_wzx *x, int layer, int n, const uint8_t *p, size_t size, uint16_t *sym)
{
	return (type == 5 ? wzc_wzx_decode_lanes5_ref : wzc_wzx_decode_lanes4_ref)(x, layer, n, p, size, sym);
}
static int rows_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n, const uint8_t *p, size_t size,
		     float *rows, size_t stride)
{
	return (type == 5 ? wzc_wzx_decode_lanes5_rows_path : wzc_wzx_decode_lanes4_rows_path)(x, layer, path, n, p,
											    size, rows, stride);
}

typedef struct {
	const wzc_wzx *x;
	int layer, n, S, stride, width;
	uint16_t *a, *b;
	float *ra, *rb;
} bufs;

/* A path against the reference on one payload: 1 both accept with the
 * same symbols and rows, 2 both refuse (rows too), 0 they differ. */
static int agree(bufs *q, wzc_lanes4_path path, const uint8_t *p, size_t size)
{
	size_t ns = (size_t)q->n * q->S, nr = (size_t)q->n * q->stride;
	memset(q->a, 0, ns * 2);
	memset(q->b, 0xff, ns * 2);
	int sa = dec_path(q->x, q->layer, path, q->n, p, size, q->a);
	int sb = dec_ref(q->x, q->layer, q->n, p, size, q->b);
	memset(q->ra, 0, nr * 4);
	memset(q->rb, 0xff, nr * 4);
	int ya = rows_path(q->x, q->layer, path, q->n, p, size, q->ra, (size_t)q->stride);
	int yb = rows_path(q->x, q->layer, WZC_LANES4_REF, q->n, p, size, q->rb, (size_t)q->stride);
	if (sa != sb || ya != yb || sa != ya)
		return 0;
	if (sa)
		return 2;
	int same = !memcmp(q->a, q->b, ns * 2);
	for (int k = 0; k < q->n; k++) /* the row's values, not the gap after them */
		same &= !memcmp(q->ra + (size_t)k * q->stride, q->rb + (size_t)k * q->stride,
				sizeof(float) * (size_t)q->width);
	return same;
}

static void one(wzt_family fam, const char *rate, int T)
{
	const char *fname = wzt_family_name(fam);
	const int L = 2;
	wzx_fixture fx;
	if (!ok(!wzx_fixture_open(&fx, fam, rate, L, T), "%s %s: profile, window and coder", fname, rate)) {
		wzx_fixture_free(&fx);
		return;
	}
	wzc_codec *c = fx.c;
	wzc_wzx *x = fx.x;
	size_t B = fx.B;
	const uint8_t *rec = fx.rec;
	const wzc_window w = fx.w;
	ok(wzc_wzx_layer_type4(x, 0) && wzc_wzx_layer_type4(x, 1),
	   "%s %s: type 4 tables (%d symbols a token, %d coded in types 2 and 3)", fname, rate,
	   wzc_wzx_block_symbols4(x, 0), wzc_wzx_block_symbols(x, 0));
	static const wzc_lanes4_path paths[] = { WZC_LANES4_SCALAR, WZC_LANES4_AVX512, WZC_LANES4_AVX2,
						 WZC_LANES4_AVX2_LOADS, WZC_LANES4_BEST };
	static const char *const names[] = { "scalar", "AVX-512", "AVX2", "AVX2 with loads", "best" };
	int stride = w.R + w.P + 3; /* rows wider than a token: the stride is honoured */
	for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
		if (!have(paths[pi])) {
			if (type == 5 && paths[pi] == WZC_LANES4_AVX512)
				ok(1, "# SKIP %s %s: type 5 has no AVX-512 loop (AVX-512 hosts run its AVX2 loop)",
				   fname, rate);
			else
				ok(1, "# SKIP %s %s: no type %d %s on this processor", fname, rate, type, names[pi]);
			ok(1, "# SKIP");
			continue;
		}
		int good = 1, same = 1, blocks = 0, tries = 0;
		for (int l = 0; l < L; l++)
			for (int t0 = 0; t0 < T; t0 += 64) {
				int n = T - t0 < 64 ? T - t0 : 64, S = wzc_wzx_block_symbols4(x, l);
				int S3 = wzc_wzx_block_symbols(x, l);
				size_t cap = (size_t)n * B * 2 + 512;
				bufs q = { x, l, n, S, stride, w.R + w.P, malloc((size_t)n * S * 2), malloc((size_t)n * S * 2),
					   malloc(sizeof(float) * (size_t)n * stride),
					   malloc(sizeof(float) * (size_t)n * stride) };
				uint8_t *pay = malloc(cap), *bad = malloc(cap), *back = malloc((size_t)n * B);
				uint16_t *s3 = malloc(sizeof *s3 * ((size_t)n * S3 + 2));
				float *yl = malloc(sizeof(float) * w.R), *yr = malloc(sizeof(float) * (w.P + 1));
				const uint8_t *block = rec + B * ((size_t)l * T + t0);
				size_t size = encode(x, l, n, block, pay, cap);
				int v = size ? agree(&q, paths[pi], pay, size) : 0;
				wzc_wzx_symbols4_entries(x, l, n, q.a, s3);
				wzc_wzx_symbols_records(x, l, n, s3, back);
				good &= v == 1 && !memcmp(back, block, (size_t)n * B);
				for (int k = 0; good && k < n; k++) {
					wzc_wz_decode_token_transformed(c, l, block + (size_t)k * B, yl, yr);
					good &= !memcmp(q.ra + (size_t)k * stride, yl, sizeof(float) * w.R) &&
						!memcmp(q.ra + (size_t)k * stride + w.R, yr, sizeof(float) * w.P);
				}
				blocks++;
				for (size_t bit = 0; size && t0 < 128 && bit < 8 * size; bit += bit < 64 ? 1 : 1 + next() % 2999) {
					memcpy(bad, pay, size);
					bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
					same &= agree(&q, paths[pi], bad, size) != 0;
					tries++;
				}
				for (size_t cut = 0; t0 < 128 && cut < size; cut += cut < 64 ? 1 : 1 + next() % 1597) {
					same &= agree(&q, paths[pi], pay, cut) == 2;
					tries++;
				}
				free(q.a);
				free(q.b);
				free(q.ra);
				free(q.rb);
				free(pay);
				free(bad);
				free(back);
				free(s3);
				free(yl);
				free(yr);
			}
		ok(good, "%s %s, type %d %s: %d blocks decode as the reference, restore the records, "
			 "rows equal the wz decoder's bit for bit", fname, rate, type, names[pi], blocks);
		ok(same, "%s %s, type %d %s: %d damaged payloads, the same verdict, symbols and rows as the reference",
		   fname, rate, type, names[pi], tries);
	}
	/* blocks of a layer together (lockstep where the processor has it):
	 * each block's verdict and rows are what it gets alone, with one of
	 * them damaged or cut short */
	int nfull = type == 4 ? T / 64 : 0, gsame = 1, gtries = 0; /* type 5 has no lockstep */
	for (int G = 2; G <= WZC_LANES4_GROUP_MAX && G <= nfull; G++)
		for (int dmg = -1; dmg < 2 * G; dmg++) {
			const uint8_t *pp[WZC_LANES4_GROUP_MAX];
			uint8_t *own[WZC_LANES4_GROUP_MAX];
			size_t sz[WZC_LANES4_GROUP_MAX], cap = 64 * B * 2 + 512;
			float *ra[WZC_LANES4_GROUP_MAX], *rb = malloc(sizeof(float) * 64 * stride);
			int v[WZC_LANES4_GROUP_MAX];
			for (int g = 0; g < G; g++) {
				own[g] = malloc(cap);
				sz[g] = wzc_wzx_encode_lanes4(x, 1, 64, rec + B * ((size_t)T + 64 * g), own[g], cap);
				if (dmg == g)
					own[g][(next() % sz[g])] ^= (uint8_t)(1u << (next() % 8));
				if (dmg == G + g)
					sz[g] = 4 * WZC_LANES4 + next() % (sz[g] - 4 * WZC_LANES4);
				pp[g] = own[g];
				ra[g] = malloc(sizeof(float) * 64 * stride);
			}
			wzc_wzx_decode_lanes4_rows_group(x, 1, WZC_LANES4_BEST, G, 64, pp, sz, ra, (size_t)stride, v);
			for (int g = 0; g < G; g++) {
				int alone = wzc_wzx_decode_lanes4_rows_path(x, 1, WZC_LANES4_REF, 64, pp[g], sz[g], rb,
									    (size_t)stride);
				gsame &= alone == v[g];
				for (int k = 0; !alone && k < 64; k++)
					gsame &= !memcmp(ra[g] + (size_t)k * stride, rb + (size_t)k * stride,
							 sizeof(float) * (w.R + w.P));
				free(own[g]);
				free(ra[g]);
			}
			free(rb);
			gtries++;
		}
	if (nfull >= 2)
		ok(gsame, "%s %s, type 4 blocks together: %d groups (2 to %d blocks, one damaged or cut), "
			  "each block's verdict and rows as alone", fname, rate, gtries,
		   nfull < WZC_LANES4_GROUP_MAX ? nfull : WZC_LANES4_GROUP_MAX);
	wzx_fixture_free(&fx);
}

int main(void)
{
	for (type = 4; type <= 5; type++) {
		one(WZT_FAMILY_MLA_B, "wzx-5.4", 300);
		one(WZT_FAMILY_IID, "wz-4.97", 100);
		one(WZT_FAMILY_MLA_A, "wz-2", 70); /* single-level components (f = 2^12, not coded in type 5) */
	}
	return tap_done();
}
