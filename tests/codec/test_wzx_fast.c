/* Tests of wzx's throughput decoders (version 2's and version 3's type 3,
 * scalar and AVX2) against their scalar references:
 * the same symbols and the same verdict on every payload (valid, bit-flipped,
 * truncated, any lane count), records equal to the wz encoder's, the
 * transformed domain equal bit for bit to decoding the records, and the
 * per-profile cache giving the same plans and tables as computing afresh. */
#include "tests/tap.h"

#include "codec/profile/profile.h"
#include "codec/profile/profile_cache.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/legacy/wzx_legacy.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_lanes.h"
#include "tests/codec/window.h"

static wzc_profile *prepare(wzt_family fam, int L, int T)
{
	wzt_cache_trace *cal = synth(fam, L, T, 0, 0, 0, 100, "calibration");
	if (!cal)
		return NULL;
	wzc_window cw = window_of(cal);
	const wzc_window *cp = &cw;
	wzc_profile *prof = NULL;
	wz_diag d;
	if (wzc_prepare(&cp, 1, NULL, &prof, &d))
		printf("# prepare: %s\n", d.msg);
	wzt_cache_trace_free(cal);
	return prof;
}

static uint8_t *records_of(wzc_codec *c, const wzc_window *w)
{
	size_t B = wzc_codec_record_bytes(c);
	uint8_t *rec = malloc(B * w->T * w->L);
	wz_diag d;
	for (int l = 0; rec && l < w->L; l++)
		wzc_encode_layer(c, l, w->T, w->latent + (size_t)l * w->T * w->R,
				 w->rope + (size_t)l * w->T * w->P, rec + B * w->T * l, &d);
	return rec;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* Fast and reference decoders on one payload: same verdict, and the same
 * symbols where both accept. */
static int agree(const wzc_wzx *x, int layer, int K, int n, const uint8_t *p, size_t size,
		 uint16_t *a, uint16_t *b, size_t nsym)
{
	memset(a, 0, nsym * 2);
	memset(b, 0, nsym * 2);
	int ra = wzc_wzx_decode_lanes(x, layer, K, n, p, size, a);
	int rb = wzc_wzx_decode_lanes_ref(x, layer, K, n, p, size, b);
	return ra == rb && (ra || !memcmp(a, b, nsym * 2)) ? (ra ? 2 : 1) : 0;
}

/* The same for a type 3 path against the type 3 reference. */
static int agree12(const wzc_wzx *x, int layer, wzc_lanes12_path path, int n, const uint8_t *p,
		   size_t size, uint16_t *a, uint16_t *b, size_t nsym)
{
	memset(a, 0, nsym * 2);
	memset(b, 0xff, nsym * 2);
	int ra = wzc_wzx_decode_lanes12_path(x, layer, path, n, p, size, a);
	int rb = wzc_wzx_decode_lanes12_ref(x, layer, WZC_LANES, n, p, size, b);
	return ra == rb && (ra || !memcmp(a, b, nsym * 2)) ? (ra ? 2 : 1) : 0;
}

/* Type 3 (version 3): every fast path this processor has against the
 * reference, on the valid payload of every block of both layers and on
 * damaged ones. */
static void lanes12_vs_ref(const wzc_wzx *x, const wzc_codec *c, const uint8_t *rec, int T,
			   const char *what)
{
	size_t B = wzc_codec_record_bytes(c);
	static const wzc_lanes12_path paths[] = { WZC_LANES12_SCALAR, WZC_LANES12_AVX2, WZC_LANES12_BEST };
	static const char *const names[] = { "scalar", "AVX2", "best" };
	for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
		if (!wzc_wzx_lanes12_have(paths[pi])) {
			ok(1, "# SKIP %s: no %s on this processor", what, names[pi]);
			continue;
		}
		int good = 1, blocks = 0, tries = 0, same = 1;
		for (int l = 0; l < 2; l++)
			for (int t0 = 0; t0 < T; t0 += 64) {
				int n = T - t0 < 64 ? T - t0 : 64, S = wzc_wzx_block_symbols(x, l);
				size_t nsym = (size_t)S * n, cap = (size_t)n * B * 2 + 256;
				uint16_t *a = malloc(nsym * 2), *b = malloc(nsym * 2);
				uint8_t *pay = malloc(cap), *bad = malloc(cap), *back = malloc((size_t)n * B);
				const uint8_t *block = rec + B * ((size_t)l * T + t0);
				size_t size = wzc_wzx_encode_lanes12(x, l, WZC_LANES, n, block, pay, cap);
				int v = size ? agree12(x, l, paths[pi], n, pay, size, a, b, nsym) : 0;
				wzc_wzx_symbols_records(x, l, n, a, back);
				good &= v == 1 && !memcmp(back, block, (size_t)n * B);
				blocks++;
				for (size_t bit = 0; size && bit < 8 * size; bit += bit < 96 ? 1 : 1 + next() % 1499) {
					memcpy(bad, pay, size);
					bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
					same &= agree12(x, l, paths[pi], n, bad, size, a, b, nsym) != 0;
					tries++;
				}
				for (size_t cut = 0; cut < size; cut += cut < 48 ? 1 : 1 + next() % 797) {
					same &= agree12(x, l, paths[pi], n, pay, cut, a, b, nsym) == 2;
					tries++;
				}
				free(a);
				free(b);
				free(pay);
				free(bad);
				free(back);
			}
		ok(good, "%s, type 3 %s: %d blocks decode as the reference and restore the records exactly",
		   what, names[pi], blocks);
		ok(same, "%s, type 3 %s: %d damaged payloads, the same verdict and symbols as the reference",
		   what, names[pi], tries);
	}
}

static void lanes_vs_ref(wzt_family fam, const char *rate)
{
	const char *fname = wzt_family_name(fam);
	const int L = 2, T = 150;
	wzc_profile *prof = prepare(fam, L, 1024);
	wzt_cache_trace *tr = synth(fam, L, T, 0, 0, 4096, 7, "test");
	if (!ok(prof && tr, "%s: profile and test window", fname))
		return;
	wzc_window w = window_of(tr);
	wzc_format fmt;
	wzc_codec *c;
	wzc_wzx *x;
	wz_diag d;
	if (!ok(!wzc_format_parse(rate, &fmt, &d) && !wzc_codec_new(&fmt, L, w.R, w.P, prof, &c, &d) &&
		!wzc_wzx_of_codec(c, &x, &d), "%s: %s coder", fname, rate))
		return;
	size_t B = wzc_codec_record_bytes(c);
	uint8_t *rec = records_of(c, &w);
	int S = wzc_wzx_block_symbols(x, 1), n = 64;
	size_t nsym = (size_t)S * n, cap = (size_t)n * B * 2 + 256;
	uint16_t *a = malloc(nsym * 2), *b = malloc(nsym * 2);
	uint8_t *pay = malloc(cap), *bad = malloc(cap), *back = malloc((size_t)n * B);
	const uint8_t *block = rec + B * ((size_t)T + 64); /* layer 1, tokens 64..127 */
	static const int lanes[] = { 4, 8, 16, 32 };
	for (size_t li = 0; li < sizeof lanes / sizeof *lanes; li++) {
		int K = lanes[li];
		size_t size = wzc_wzx_encode_lanes(x, 1, K, n, block, pay, cap);
		int v = agree(x, 1, K, n, pay, size, a, b, nsym);
		wzc_wzx_symbols_records(x, 1, n, a, back);
		ok(size > 0 && v == 1 && !memcmp(back, block, (size_t)n * B),
		   "%s %s, %d lanes: %zu bytes; fast = reference; records restored exactly", fname, rate,
		   K, size);
		/* every bit of the first 16 bytes and random others flipped, and
		 * truncations: the same verdict (a flip is caught by the block
		 * checksum first; this is about the decoders agreeing) */
		int same = 1, tries = 0;
		for (size_t bit = 0; bit < 8 * size; bit += bit < 128 ? 1 : 1 + next() % 1999) {
			memcpy(bad, pay, size);
			bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			int r = agree(x, 1, K, n, bad, size, a, b, nsym);
			same &= r != 0;
			tries++;
		}
		for (size_t cut = 0; cut < size; cut += cut < 40 ? 1 : 1 + next() % 997) {
			int r = agree(x, 1, K, n, pay, cut, a, b, nsym);
			same &= r == 2;
			tries++;
		}
		ok(same, "%s %d lanes: %d damaged payloads, fast and reference agree on each",
		   fname, K, tries);
	}
	char what[64];
	snprintf(what, sizeof what, "%s %s", fname, rate);
	ok(wzc_wzx_layer_type3(x, 0) && wzc_wzx_layer_type3(x, 1), "%s: every count <= 4096, type 3",
	   what);
	lanes12_vs_ref(x, c, rec, T, what);
	/* symbols straight to the transformed domain = records decoded there */
	size_t size = wzc_wzx_encode_lanes(x, 1, WZC_LANES, n, block, pay, cap);
	wzc_wzx_decode_lanes(x, 1, WZC_LANES, n, pay, size, a);
	float *y0 = malloc(sizeof(float) * (size_t)n * w.R), *r0 = malloc(sizeof(float) * (size_t)n * w.P + 4);
	float *y1 = malloc(sizeof(float) * (size_t)n * w.R), *r1 = malloc(sizeof(float) * (size_t)n * w.P + 4);
	wzc_wzx_symbols_transformed(x, 1, n, a, y0, r0);
	for (int t = 0; t < n; t++)
		wzc_wz_decode_token_transformed(c, 1, block + (size_t)t * B, y1 + (size_t)t * w.R,
						r1 + (size_t)t * w.P);
	ok(!memcmp(y0, y1, sizeof(float) * (size_t)n * w.R) &&
	   !memcmp(r0, r1, sizeof(float) * (size_t)n * w.P),
	   "%s %s: digits to the transformed domain equal the records decoded there, bit for bit",
	   fname, rate);
	/* the container: version 6, every block read into the transformed domain */
	size_t ccap = wzc_wzx_bound(L, T, w.R, w.P, B, strlen(prof->model)), cn;
	uint8_t *cont = malloc(ccap);
	wzc_wzx_reader *r = NULL;
	int good = !wzc_wzx_write(x, T, rec, cont, ccap, &cn, NULL, &d) &&
		   !wzc_wzx_open(cont, cn, "t", &r, &d) && wzc_wzx_reader_info(r)->version == 6;
	for (int l = 0; good && l < L; l++)
		for (int bl = 0; good && bl < 3; bl++) {
			int nt;
			good = !wzc_wzx_read_block_transformed(r, x, l, bl, y0, r0, &nt, &d);
			for (int t = 0; good && t < nt; t++) {
				wzc_wz_decode_token_transformed(c, l, rec + B * ((size_t)l * T + 64 * bl + t), y1, r1);
				good = !memcmp(y0 + (size_t)t * w.R, y1, sizeof(float) * w.R) &&
				       !memcmp(r0 + (size_t)t * w.P, r1, sizeof(float) * w.P);
			}
		}
	ok(good, "%s: a version 6 container (type 6 blocks) read block by block into the transformed domain", fname);
	wzc_wzx_reader_free(r);
	free(cont);
	free(y0);
	free(r0);
	free(y1);
	free(r1);
	free(a);
	free(b);
	free(pay);
	free(bad);
	free(back);
	free(rec);
	wzc_wzx_free(x);
	wzc_codec_free(c);
	wzt_cache_trace_free(tr);
	wzc_profile_free(prof);
}

/* The cache changes how often things are computed, never what: a codec
 * from a profile with its cache and one without write the same records
 * and the same containers; codecs of one grid share one plan. */
static void cache_same(void)
{
	const int L = 2, T = 100;
	wzc_profile *prof = prepare(WZT_FAMILY_MLA_A, L, 1024);
	wzt_cache_trace *tr = synth(WZT_FAMILY_MLA_A, L, T, 0, 0, 4096, 9, "test");
	if (!ok(prof && tr, "cache: profile and window"))
		return;
	wzc_window w = window_of(tr);
	wzc_format fmt;
	wz_diag d;
	wzc_format_parse("wzx-5.4", &fmt, &d);
	wzc_codec *c1, *c2, *c3;
	int made = !wzc_codec_new(&fmt, L, w.R, w.P, prof, &c1, &d) &&
		   !wzc_codec_new(&fmt, L, w.R, w.P, prof, &c2, &d);
	struct wzc_profile_cache *keep = prof->cache;
	prof->cache = NULL;
	made = made && !wzc_codec_new(&fmt, L, w.R, w.P, prof, &c3, &d);
	if (!ok(made, "cache: three codecs of wzx-5.4"))
		return;
	size_t B = wzc_codec_record_bytes(c1);
	uint8_t *r1 = records_of(c1, &w), *r3 = records_of(c3, &w);
	ok(B == wzc_codec_record_bytes(c3) && !memcmp(r1, r3, B * T * L),
	   "cache: the same grid (%zu B) and records with and without the cache", B);
	wzc_wzx *x1, *x3;
	size_t cap = wzc_wzx_bound(L, T, w.R, w.P, B, strlen(prof->model)), n1 = 0, n3 = 1;
	uint8_t *b1 = malloc(cap), *b3 = malloc(cap);
	made = !wzc_wzx_of_codec(c3, &x3, &d) && !wzc_wzx_write(x3, T, r1, b3, cap, &n3, NULL, &d);
	prof->cache = keep;
	made = made && !wzc_wzx_of_codec(c1, &x1, &d) && !wzc_wzx_write(x1, T, r1, b1, cap, &n1, NULL, &d);
	ok(made && n1 == n3 && !memcmp(b1, b3, n1), "cache: the same container bytes (%zu)", n1);
	ok(wzc_profile_shared_get(prof, WZC_CACHE_PLAN, B) != NULL, "cache: the plan of the grid is kept");
	wzc_profile_shared_release(prof, WZC_CACHE_PLAN, B);
	wzc_wzx_free(x1);
	wzc_wzx_free(x3);
	free(b1);
	free(b3);
	free(r1);
	free(r3);
	wzc_codec_free(c1);
	wzc_codec_free(c2);
	ok(wzc_profile_shared_get(prof, WZC_CACHE_PLAN, B) == NULL,
	   "cache: the plan goes with the last codec of its grid");
	wzc_codec_free(c3);
	wzt_cache_trace_free(tr);
	wzc_profile_free(prof);
}

int main(void)
{
	lanes_vs_ref(WZT_FAMILY_MLA_B, "wzx-5.4");
	lanes_vs_ref(WZT_FAMILY_IID, "wz-4.97");
	cache_same();
	return tap_done();
}
