/* Tests of type 5 blocks straight to wz records (codec/wzx/wzx_records5.c):
 * the division-free field against the 128-bit division on edge and random
 * groups; every path this processor has (portable, AVX2 by gathers and by
 * loads, best) against the reference (symbols, then records by division):
 * the same records bit for bit, equal to the records packed, and the same
 * verdict on every payload (valid, bit-flipped, truncated); blocks of 64,
 * 32 and other token counts, on grids with single-level components. */
#include "tests/tap.h"

#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_lanes.h"
#include "codec/wzx/wzx_rec5.h"
#include "codec/wzx/wzx_token.h"
#include "tests/codec/window.h"
#include "tests/codec/wzx_fixture.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t by_division(uint64_t V, int k, uint64_t M)
{
	return (uint64_t)((((unsigned __int128)V << k) + M - 1) / M);
}

/* Every k, M at both ends of its range and random, V at its ends and
 * random. */
static void fields(void)
{
	long checks = 0, wrong = 0, refused = 0;
	for (int k = 1; k <= 64; k++) {
		uint64_t lo = ((uint64_t)1 << (k - 1)) + 1, hi = k == 64 ? UINT64_MAX : (uint64_t)1 << k;
		if (k == 1)
			lo = 2;
		for (int m = 0; m < 40; m++) {
			uint64_t M = m == 0 ? lo : m == 1 ? hi : m == 2 ? hi - 1 : lo + next64() % (hi - lo + 1);
			if (M < lo || M > hi)
				continue;
			uint64_t rhi, rlo;
			if (wzc_wzx_field_recip(k, M, &rhi, &rlo)) {
				refused++;
				continue;
			}
			/* V 2^k a multiple of M (no ceiling to take) where V is a
			 * multiple of M's odd part */
			uint64_t odd = M >> __builtin_ctzll(M), mults = M / odd;
			for (int v = 0; v < 240; v++) {
				uint64_t V = v == 0 ? 0 : v == 1 ? M - 1 : v == 2 ? M / 2 : v == 3 ? 1
					   : v >= 200 ? odd * (next64() % mults) : next64() % M;
				checks++;
				wrong += wzc_wzx_field(V, rhi, rlo) != by_division(V, k, M);
			}
		}
	}
	ok(!wrong && !refused, "field by reciprocal: %ld (V, k, M) cases equal the division (%ld differ, %ld refused)",
	   checks, wrong, refused);
	uint64_t r, r2;
	ok(wzc_wzx_field_recip(8, 128, &r, &r2) && wzc_wzx_field_recip(8, 257, &r, &r2) &&
		   wzc_wzx_field_recip(0, 1, &r, &r2),
	   "field by reciprocal: M outside (2^(k-1), 2^k] refused (the division stays)");
}

static const wzc_lanes4_path paths[] = { WZC_LANES4_SCALAR, WZC_LANES4_AVX2, WZC_LANES4_AVX2_LOADS,
					 WZC_LANES4_BEST };
static const char *const names[] = { "portable", "AVX2", "AVX2 with loads", "best" };

/* 1 path and reference accept with the same records, 2 both refuse, 0
 * they differ. */
static int agree(const wzc_wzx *x, int l, wzc_lanes4_path path, int n, const uint8_t *p, size_t size,
		 uint8_t *a, uint8_t *b, size_t B)
{
	memset(a, 0x5a, (size_t)n * B);
	memset(b, 0xa5, (size_t)n * B);
	int va = wzc_wzx_decode_lanes5_records_path(x, l, path, n, p, size, a);
	int vb = wzc_wzx_decode_lanes5_records_path(x, l, WZC_LANES4_REF, n, p, size, b);
	if (va != vb)
		return 0;
	return va ? 2 : !memcmp(a, b, (size_t)n * B);
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
	ok(wzc_wzx_layer_type4(x, 0) && wzc_wzx_layer_type4(x, 1), "%s %s: type 5 tables (%zu B records)",
	   fname, rate, B);
	/* what the layers' plans hold: the one-pass loop's plan, places read by
	 * slot entries, groups of 1, 2, 3 and more pieces */
	const struct wzx_rec5 *plan = wzc_wzx_rec5_of(x, 0);
	int fused = 1, wide = 0, rows = 0, np[5] = { 0 };
	for (int l = 0; l < L; l++) {
		int wd, r;
		fused &= wzc_wzx_records5_fused(x, l, &wd, &r);
		wide += wd;
		rows = r > rows ? r : rows;
	}
	for (int g = 0; plan && g < plan->ng; g++) {
		int m = plan->gp[g + 1] - plan->gp[g];
		np[m < 4 ? m : 4]++;
	}
	ok(plan && fused, "%s %s: the one-pass plan (%d places by slot entries, %d rows; layer 0's groups of "
			  "1, 2, 3, 4+ pieces: %d %d %d %d)",
	   fname, rate, wide, rows, np[1], np[2], np[3], np[4]);
	for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
		if (!wzc_wzx_lanes5_have(paths[pi])) {
			ok(1, "# SKIP %s %s: no type 5 %s loop on this processor", fname, rate, names[pi]);
			ok(1, "# SKIP");
			continue;
		}
		int good = 1, same = 1, blocks = 0, tries = 0;
		/* blocks of 64, then 32, then the rest (the portable loop) */
		for (int l = 0; l < L; l++)
			for (int t0 = 0; t0 < T;) {
				int n = T - t0 >= 64 ? 64 : T - t0 >= 32 ? 32 : T - t0;
				size_t cap = (size_t)n * B * 2 + 512;
				uint8_t *pay = malloc(cap), *bad = malloc(cap), *a = malloc((size_t)n * B),
					*b = malloc((size_t)n * B);
				const uint8_t *block = rec + B * ((size_t)l * T + t0);
				size_t size = wzc_wzx_encode_lanes5(x, l, n, block, pay, cap);
				good &= size && agree(x, l, paths[pi], n, pay, size, a, b, B) == 1 &&
					!memcmp(a, block, (size_t)n * B);
				blocks++;
				for (size_t bit = 0; size && t0 < 128 && bit < 8 * size;
				     bit += bit < 64 ? 1 : 1 + next64() % 2999) {
					memcpy(bad, pay, size);
					bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
					same &= agree(x, l, paths[pi], n, bad, size, a, b, B) != 0;
					tries++;
				}
				for (size_t cut = 0; t0 < 128 && cut < size; cut += cut < 64 ? 1 : 1 + next64() % 1597) {
					same &= agree(x, l, paths[pi], n, pay, cut, a, b, B) == 2;
					tries++;
				}
				free(pay);
				free(bad);
				free(a);
				free(b);
				t0 += n;
			}
		ok(good, "%s %s, type 5 to records, %s: %d blocks give the records packed, as the reference",
		   fname, rate, names[pi], blocks);
		ok(same, "%s %s, type 5 to records, %s: %d damaged payloads, the same verdict and records as the "
			 "reference", fname, rate, names[pi], tries);
	}
	wzx_fixture_free(&fx);
}

int main(void)
{
	fields();
	one(WZT_FAMILY_MLA_B, "wzx-5.4", 300);
	one(WZT_FAMILY_IID, "wz-4.97", 100);
	one(WZT_FAMILY_MLA_A, "wz-2", 70); /* single-level components */
	one(WZT_FAMILY_MLA_A, "wzx-5.4", 64);
	one(WZT_FAMILY_IID, "wz-10", 64); /* every place by slot entries */
	return tap_done();
}
