/* Tests of type 6 blocks (codec/wzx/wzx_lanes6.c): on every grid wz-2 to
 * wz-10 and three synthetic families (mla's layers from wz-6 have counts
 * over 4096, coded by type 6's uniform 16-bit places and by no type 5), every path this processor has
 * (portable, AVX2 by gathers and by loads, best) to records, to symbols and
 * to rows against the reference (symbols by binary search): the same output
 * bit for bit, the records equal to those packed, and the same verdict on
 * every payload (valid, bit-flipped, cut); blocks of 64, 32 and fewer
 * tokens; the layer's narrow, 12-bit and uniform places counted, so that
 * every kind is exercised. */
#include "tests/tap.h"

#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_lanes.h"
#include "codec/wzx/wzx_rec6.h"
#include "tests/codec/window.h"
#include "tests/codec/wzx_fixture.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t next64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const wzc_lanes4_path paths[] = { WZC_LANES4_SCALAR, WZC_LANES4_AVX2, WZC_LANES4_AVX2_LOADS,
					 WZC_LANES4_AVX512, WZC_LANES4_BEST };
static const char *const names[] = { "portable", "AVX2", "AVX2 with loads", "AVX-512VL", "best" };

typedef struct {
	const wzc_wzx *x;
	int l, n, S4, W;
	size_t B;
	uint8_t *ra, *rb;
	uint16_t *sa, *sb;
	float *wa, *wb;
} bufs;

/* 1: path and reference accept with the same records, symbols and rows;
 * 2: all refuse; 0: they differ. */
static int agree(bufs *u, wzc_lanes4_path path, const uint8_t *p, size_t size)
{
	size_t nr = (size_t)u->n * u->B, ns = (size_t)u->n * u->S4, nw = (size_t)u->n * u->W;
	memset(u->ra, 0x5a, nr);
	memset(u->rb, 0xa5, nr);
	int va = wzc_wzx_decode_lanes6_records_path(u->x, u->l, path, u->n, p, size, u->ra);
	int vb = wzc_wzx_decode_lanes6_records_path(u->x, u->l, WZC_LANES4_REF, u->n, p, size, u->rb);
	int sa = wzc_wzx_decode_lanes6_path(u->x, u->l, path, u->n, p, size, u->sa);
	int sb = wzc_wzx_decode_lanes6_ref(u->x, u->l, u->n, p, size, u->sb);
	int wa = wzc_wzx_decode_lanes6_rows_path(u->x, u->l, path, u->n, p, size, u->wa, (size_t)u->W);
	int wb = wzc_wzx_decode_lanes6_rows_path(u->x, u->l, WZC_LANES4_REF, u->n, p, size, u->wb, (size_t)u->W);
	if (va != vb || sa != vb || sb != vb || wa != vb || wb != vb)
		return 0;
	if (va)
		return 2;
	return !memcmp(u->ra, u->rb, nr) && !memcmp(u->sa, u->sb, sizeof *u->sa * ns) &&
	       !memcmp(u->wa, u->wb, sizeof *u->wa * nw);
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
	wzc_wzx *x = fx.x;
	size_t B = fx.B;
	const uint8_t *rec = fx.rec;
	/* type 6 in every layer (its counts at most 2^16), type 5 where they
	 * are at most 4096 */
	int narrow = 0, wide = 0, huge = 0, t6 = 0, t5 = 0, S4 = 0;
	for (int l = 0; l < L; l++) {
		t6 += wzc_wzx_layer_type6(x, l);
		t5 += wzc_wzx_layer_type4(x, l);
		if (wzc_wzx_block_symbols6(x, l) > S4)
			S4 = wzc_wzx_block_symbols6(x, l);
		const struct wzx_rec5 *r5 = NULL;
		const wzx_rec6 *r6 = wzc_wzx_rec6_of(x, l, &r5);
		for (int q = 0; r6 && r5 && q < r5->S5; q++) {
			narrow += r6->qb[q] == WZC_RANS6_BITS;
			wide += r6->qb[q] == 12;
			huge += r6->qb[q] == 16;
		}
	}
	ok(t6 == L && narrow > 0,
	   "%s %s: type 6 tables in %d of %d layers, type 5's in %d (%zu B records; %d coded places narrow, %d "
	   "with type 5's tables, %d uniform over 2^16)", fname, rate, t6, L, t5, B, narrow, wide, huge);
	bufs u = { x, 0, 0, S4, fx.w.R + fx.w.P, B, malloc(64 * B), malloc(64 * B), NULL, NULL,
		   NULL, NULL };
	u.sa = malloc(sizeof *u.sa * 64 * (size_t)u.S4);
	u.sb = malloc(sizeof *u.sb * 64 * (size_t)u.S4);
	u.wa = malloc(sizeof *u.wa * 64 * (size_t)u.W);
	u.wb = malloc(sizeof *u.wb * 64 * (size_t)u.W);
	/* the reference gives back the records packed, and its rows are type 5's;
	 * a block that codes larger than its records (the encoder's 0: the
	 * container stores it raw) is left out */
	int back = 1, coded = 0;
	for (int l = 0; l < L; l++)
		for (int t0 = 0; wzc_wzx_layer_type6(x, l) && t0 < T; t0 += 64) {
			int n = T - t0 < 64 ? T - t0 : 64;
			size_t cap = (size_t)n * B * 2 + 512, s5, s6;
			uint8_t *p5 = malloc(cap), *p6 = malloc(cap);
			const uint8_t *block = rec + B * ((size_t)l * T + t0);
			s6 = wzc_wzx_encode_lanes6(x, l, n, block, p6, cap);
			if (!s6) {
				free(p5);
				free(p6);
				continue;
			}
			coded++;
			back &= !wzc_wzx_decode_lanes6_records_path(x, l, WZC_LANES4_REF, n, p6, s6, u.ra) &&
				!memcmp(u.ra, block, (size_t)n * B) &&
				!wzc_wzx_decode_lanes6_rows_path(x, l, WZC_LANES4_REF, n, p6, s6, u.wa, (size_t)u.W);
			/* the rows: type 5's where the layer has type 5 */
			if (back && wzc_wzx_layer_type4(x, l)) {
				s5 = wzc_wzx_encode_lanes5(x, l, n, block, p5, cap);
				back &= s5 && !wzc_wzx_decode_lanes5_rows_path(x, l, WZC_LANES4_REF, n, p5, s5, u.wb, (size_t)u.W) &&
					!memcmp(u.wa, u.wb, sizeof *u.wa * (size_t)n * u.W);
			}
			free(p5);
			free(p6);
		}
	ok(back && coded > 0,
	   "%s %s: the type 6 reference gives the records packed (%d blocks), and type 5's rows where the layer has "
	   "type 5", fname, rate, coded);
	for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
		if (!wzc_wzx_lanes6_have(paths[pi])) {
			ok(1, "# SKIP %s %s: no %s loop on this processor", fname, rate, names[pi]);
			ok(1, "# SKIP");
			continue;
		}
		int good = 1, same = 1, blocks = 0, tries = 0;
		/* blocks of 64, then 32, then the rest (the portable loop) */
		for (int l = 0; l < L; l++)
			for (int t0 = 0; wzc_wzx_layer_type6(x, l) && t0 < T;) {
				int n = T - t0 >= 64 ? 64 : T - t0 >= 32 ? 32 : T - t0;
				size_t cap = (size_t)n * B * 2 + 512;
				uint8_t *pay = malloc(cap), *bad = malloc(cap);
				const uint8_t *block = rec + B * ((size_t)l * T + t0);
				size_t size = wzc_wzx_encode_lanes6(x, l, n, block, pay, cap);
				u.l = l;
				u.n = n;
				good &= !size || (agree(&u, paths[pi], pay, size) == 1 && !memcmp(u.ra, block, (size_t)n * B));
				blocks += size > 0;
				for (size_t bit = 0; size && t0 < 64 && bit < 8 * size;
				     bit += bit < 24 ? 1 : 1 + next64() % 4999) {
					memcpy(bad, pay, size);
					bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
					same &= agree(&u, paths[pi], bad, size) != 0;
					tries++;
				}
				for (size_t cut = 0; t0 < 64 && cut < size; cut += cut < 24 ? 1 : 1 + next64() % 2999) {
					same &= agree(&u, paths[pi], pay, cut) == 2;
					tries++;
				}
				free(pay);
				free(bad);
				t0 += n;
			}
		ok(good && blocks > 0, "%s %s, type 6, %s: %d blocks give the records packed, and the reference's symbols and rows",
		   fname, rate, names[pi], blocks);
		ok(same && tries > 0, "%s %s, type 6, %s: %d damaged payloads, the same verdicts and outputs as the reference",
		   fname, rate, names[pi], tries);
	}
	free(u.ra);
	free(u.rb);
	free(u.sa);
	free(u.sb);
	free(u.wa);
	free(u.wb);
	wzx_fixture_free(&fx);
}

/* The AVX loops' uniform places take slot / f as the float product of
 * slot and 1/f, truncated (codec/wzx/wzx_fused_loop.h): exact for every
 * slot below 2^16 and every f a uniform place can have (2^16 / n for n
 * over 4096: 1 to 15). */
static void uniform_quotient(void)
{
	long wrong = 0;
	for (uint32_t f = 1; f < 16; f++) {
		volatile float inv = 1.0f / (float)f;
		for (uint32_t slot = 0; slot < 65536; slot++)
			wrong += (uint32_t)((float)slot * inv) != slot / f;
	}
	ok(!wrong, "uniform places: slot / f as float(slot) x float(1/f) truncated, exact for all 2^16 slots and f 1 "
		   "to 15 (%ld differ)", wrong);
}

int main(void)
{
	uniform_quotient();
	static const char *const grids[] = { "wz-2", "wz-3", "wz-4", "wz-5", "wz-6", "wz-7", "wz-8", "wz-9", "wz-10" };
	for (int g = 0; g < 9; g++)
		one(g % 2 ? WZT_FAMILY_MLA_A : WZT_FAMILY_MLA_B, grids[g], g == 0 ? 70 : g == 8 ? 64 : 100);
	one(WZT_FAMILY_IID, "wz-10", 64); /* every place of over 256 levels, none over 4096 */
	one(WZT_FAMILY_IID, "wzx-5.4", 130);
	return tap_done();
}
