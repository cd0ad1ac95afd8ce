/* Tests of decoding several wzx type 3 blocks together and of the
 * table-driven way from symbols to the transformed domain: every block of
 * a group gets the verdict and symbols the reference gives it alone, on
 * valid and damaged payloads mixed in one group; every transform path
 * gives the wz decoder's floats bit for bit; reading runs of blocks, and
 * restoring on several threads, gives what reading block by block gives,
 * and names the lowest damaged block; bf16 in groups is its per-block
 * reference bit for bit. */
#include "tests/tap.h"

#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/legacy/wzx_legacy.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_internal.h"
#include "codec/wzx/wzx_lanes.h"
#include "tests/codec/window.h"

enum { L = 2, T = 5 * 64 + 10, NB = 6 }; /* five full blocks and a short one per layer */

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

typedef struct {
	uint8_t *pay[L][NB];
	size_t size[L][NB];
	int n[L][NB];
} payloads;

/* G blocks of a layer, some damaged, decoded together on a path and each
 * alone by the reference: 1 when every verdict and every accepted block's
 * symbols agree. */
static int group_agrees(const wzc_wzx *x, int layer, wzc_lanes12_path path, int G, int n,
			const uint8_t *const *pay, const size_t *size, size_t nsym)
{
	uint16_t *a[WZC_LANES12_GROUP_MAX], *b = malloc(nsym * 2);
	int verdict[WZC_LANES12_GROUP_MAX], good = b != NULL;
	for (int g = 0; g < G; g++) {
		a[g] = malloc(nsym * 2);
		good &= a[g] != NULL;
	}
	if (good) {
		for (int g = 0; g < G; g++)
			memset(a[g], 0xa5, nsym * 2);
		int all = wzc_wzx_decode_lanes12_group(x, layer, path, G, n, pay, size, a, verdict);
		int any = 0;
		for (int g = 0; g < G; g++) {
			memset(b, 0x5a, nsym * 2);
			int rb = wzc_wzx_decode_lanes12_ref(x, layer, WZC_LANES, n, pay[g], size[g], b);
			good &= verdict[g] == rb && (rb || !memcmp(a[g], b, nsym * 2));
			any |= rb;
		}
		good &= all == (any ? -1 : 0);
	}
	for (int g = 0; g < G; g++)
		free(a[g]);
	free(b);
	return good;
}

static void groups_vs_ref(const wzc_wzx *x, const payloads *p, const char *what)
{
	static const wzc_lanes12_path paths[] = { WZC_LANES12_SCALAR, WZC_LANES12_AVX2, WZC_LANES12_BEST };
	static const char *const names[] = { "scalar", "AVX2", "best" };
	for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
		if (!wzc_wzx_lanes12_have(paths[pi])) {
			ok(1, "# SKIP %s: no %s on this processor", what, names[pi]);
			continue;
		}
		int valid = 1, damaged = 1, groups = 0, tries = 0;
		for (int l = 0; l < L; l++) {
			size_t nsym = (size_t)wzc_wzx_block_symbols(x, l) * 64;
			for (int G = 2; G <= WZC_LANES12_GROUP_MAX; G++)
				for (int b0 = 0; b0 + G <= NB - 1; b0++) { /* full blocks */
					const uint8_t *pay[WZC_LANES12_GROUP_MAX];
					size_t size[WZC_LANES12_GROUP_MAX];
					for (int g = 0; g < G; g++) {
						pay[g] = p->pay[l][b0 + g];
						size[g] = p->size[l][b0 + g];
					}
					valid &= group_agrees(x, l, paths[pi], G, 64, pay, size, nsym);
					groups++;
					/* one or two blocks damaged, the others valid */
					for (int k = 0; k < 40; k++) {
						uint8_t *bad[2] = { NULL, NULL };
						const uint8_t *dpay[WZC_LANES12_GROUP_MAX];
						size_t dsize[WZC_LANES12_GROUP_MAX];
						memcpy(dpay, pay, sizeof dpay);
						memcpy(dsize, size, sizeof dsize);
						int nv = 1 + (k & 1);
						for (int v = 0; v < nv; v++) {
							int g = (int)(next() % (uint32_t)G);
							if (bad[0] && dpay[g] == bad[0])
								continue;
							/* a copy of exactly the bytes given, so a
							 * read past them is a sanitizer's finding */
							int flip = next() % 2;
							size_t keep = flip ? dsize[g] : next() % dsize[g];
							bad[v] = malloc(keep ? keep : 1);
							memcpy(bad[v], dpay[g], keep);
							if (flip) {
								size_t bit = next() % (8 * keep);
								bad[v][bit / 8] ^= (uint8_t)(1u << (bit % 8));
							}
							dsize[g] = keep;
							dpay[g] = bad[v];
						}
						damaged &= group_agrees(x, l, paths[pi], G, 64, dpay, dsize, nsym);
						tries++;
						free(bad[0]);
						free(bad[1]);
					}
				}
		}
		ok(valid, "%s, %s: %d groups of 2..%d blocks, each block as the reference decodes it alone",
		   what, names[pi], groups, WZC_LANES12_GROUP_MAX);
		ok(damaged, "%s, %s: %d groups with damaged blocks among valid ones, every verdict and "
			    "symbol as the reference's", what, names[pi], tries);
	}
}

static void transform_paths(const wzc_wzx *x, const wzc_codec *c, const payloads *p,
			    const uint8_t *rec, const char *what)
{
	size_t B = wzc_codec_record_bytes(c);
	int R = wzc_wzx_R(x), P = wzc_wzx_P(x);
	size_t row = (size_t)(R + P);
	static const wzc_transform_path paths[] = { WZC_TRANSFORM_SCALAR, WZC_TRANSFORM_AVX2,
						    WZC_TRANSFORM_BEST, WZC_TRANSFORM_AVX2_GATHER };
	static const char *const names[] = { "scalar", "AVX2", "best", "AVX2 gathering every symbol" };
	float *want = malloc(sizeof(float) * 64 * row), *got = malloc(sizeof(float) * 64 * row);
	float *lat = malloc(sizeof(float) * 64 * R), *rope = malloc(sizeof(float) * (64 * P + 1));
	uint16_t *sym = malloc(sizeof *sym * ((size_t)wzc_wzx_block_symbols(x, 0) * 64 + 2));
	int ref_ok = 1, sep_ok = 1, same[4] = { 1, 1, 1, 1 }, blocks = 0;
	for (int l = 0; l < L; l++)
		for (int b = 0; b < NB; b++) {
			int n = p->n[l][b];
			wzc_wzx_decode_lanes12_ref(x, l, WZC_LANES, n, p->pay[l][b], p->size[l][b], sym);
			/* the reference path: the wz decoder on the block's records */
			wzc_wzx_symbols_rows_path(x, l, WZC_TRANSFORM_REF, n, sym, want, row);
			for (int t = 0; t < n; t++) {
				wzc_wz_decode_token_transformed(c, l, rec + B * ((size_t)l * T + 64 * b + t), lat, rope);
				ref_ok &= !memcmp(want + row * t, lat, sizeof(float) * R) &&
					  !memcmp(want + row * t + R, rope, sizeof(float) * P);
			}
			for (size_t pi = 0; pi < 4; pi++) {
				if (!wzc_wzx_transform_have(paths[pi]))
					continue;
				memset(got, 0xff, sizeof(float) * 64 * row);
				wzc_wzx_symbols_rows_path(x, l, paths[pi], n, sym, got, row);
				same[pi] &= !memcmp(got, want, sizeof(float) * row * n);
			}
			wzc_wzx_symbols_transformed(x, l, n, sym, lat, rope);
			for (int t = 0; t < n; t++)
				sep_ok &= !memcmp(want + row * t, lat + (size_t)t * R, sizeof(float) * R) &&
					  !memcmp(want + row * t + R, rope + (size_t)t * P, sizeof(float) * P);
			blocks++;
		}
	ok(ref_ok, "%s: the transform's reference path = the records decoded there (%d blocks)", what,
	   blocks);
	for (size_t pi = 0; pi < 4; pi++)
		if (wzc_wzx_transform_have(paths[pi]))
			ok(same[pi], "%s: transform %s = reference, bit for bit", what, names[pi]);
		else
			ok(1, "# SKIP %s: no %s transform on this processor", what, names[pi]);
	ok(sep_ok, "%s: latent and position arrays = the rows, bit for bit", what);
	free(want);
	free(got);
	free(lat);
	free(rope);
	free(sym);
}

/* Runs of blocks from a container, and the threaded restore, against
 * reading block by block; then with one block's bytes damaged. */
static void container_runs(const wzc_wzx *x, const uint8_t *rec, const wzc_window *w,
			   const char *model, const char *what)
{
	size_t B = wzc_wzx_record_bytes(x), row = (size_t)(w->R + w->P);
	size_t cap = wzc_wzx_bound(L, T, w->R, w->P, B, strlen(model)), n = 0;
	uint8_t *cont = malloc(cap);
	wzc_wzx_reader *r = NULL;
	wz_diag d;
	if (!ok(cont && !wzc_wzx_write(x, T, rec, cont, cap, &n, NULL, &d) &&
		!wzc_wzx_open(cont, n, "t.wzx", &r, &d), "%s: a version 4 container", what))
		return;
	/* block by block: the rows every other way must give */
	float *want = malloc(sizeof(float) * L * T * row), *got = malloc(sizeof(float) * L * T * row);
	float *lat = malloc(sizeof(float) * 64 * w->R), *rope = malloc(sizeof(float) * (64 * w->P + 1));
	int good = 1;
	for (int l = 0; l < L; l++)
		for (int b = 0; b < NB; b++) {
			int nt;
			good &= !wzc_wzx_read_block_transformed(r, x, l, b, lat, rope, &nt, &d);
			for (int t = 0; t < nt; t++) {
				float *o = want + row * ((size_t)l * T + 64 * b + t);
				memcpy(o, lat + (size_t)t * w->R, sizeof(float) * w->R);
				memcpy(o + w->R, rope + (size_t)t * w->P, sizeof(float) * w->P);
			}
		}
	int runs = 1, nruns = 0;
	for (int l = 0; l < L; l++)
		for (int G = 1; G <= 4; G++)
			for (int b0 = 0; b0 + G <= NB; b0++) {
				int done = -1;
				memset(got, 0, sizeof(float) * row * 64 * G);
				wz_err e = wzc_wzx_read_blocks_rows(r, x, l, b0, G, got, &done, &d);
				size_t tok = (size_t)(b0 + G == NB ? 64 * (G - 1) + T % 64 : 64 * G);
				runs &= !e && done == G &&
					!memcmp(got, want + row * ((size_t)l * T + 64 * b0), sizeof(float) * row * tok);
				nruns++;
			}
	ok(good && runs, "%s: %d runs of 1..4 blocks = the blocks read one by one", what, nruns);
	/* the same for records */
	uint8_t *rwant = malloc(B * L * T), *rgot = malloc(B * L * T);
	int rgood = 1, rruns = 1;
	for (int l = 0; l < L; l++)
		for (int b = 0; b < NB; b++) {
			int nt;
			rgood &= !wzc_wzx_read_block(r, x, l, b, rwant + B * ((size_t)l * T + 64 * b), &nt, &d);
		}
	for (int l = 0; l < L; l++)
		for (int G = 1; G <= 4; G++)
			for (int b0 = 0; b0 + G <= NB; b0++) {
				int done = -1;
				wz_err e = wzc_wzx_read_blocks_records(r, x, l, b0, G, rgot, &done, &d);
				size_t tok = (size_t)(b0 + G == NB ? 64 * (G - 1) + T % 64 : 64 * G);
				rruns &= !e && done == G && !memcmp(rgot, rwant + B * ((size_t)l * T + 64 * b0), B * tok);
			}
	ok(rgood && rruns && !memcmp(rwant, rec, B * L * T),
	   "%s: runs of 1..4 blocks into records = the blocks read one by one = the records", what);
	int rthreads = 1;
	for (int th = 1; th <= 3; th++) {
		memset(rgot, 0, B * L * T);
		rthreads &= !wzc_wzx_restore(r, x, WZC_RESTORE_RECORDS, 0, L * NB, th, rgot, &d) &&
			    !memcmp(rgot, rec, B * L * T);
	}
	ok(rthreads, "%s: the restore to records on 1, 2 and 3 threads = the records", what);
	free(rwant);
	free(rgot);
	int threads_same = 1;
	for (int th = 1; th <= 3; th++) {
		memset(got, 0, sizeof(float) * L * T * row);
		threads_same &= !wzc_wzx_restore(r, x, WZC_RESTORE_TRANSFORMED, 0, L * NB, th, got, &d) &&
				!memcmp(got, want, sizeof(float) * L * T * row);
	}
	ok(threads_same, "%s: the restore on 1, 2 and 3 threads = the blocks read one by one", what);
	/* a restorer kept from run to run (the streaming restore's way): runs
	 * of 1 to 5 blocks that cross layers, after planning every layer on
	 * its threads, give the same floats */
	int kept = 1;
	for (int th = 1; th <= 3; th++) {
		wzc_wzx_restorer *pool = NULL;
		memset(got, 0, sizeof(float) * L * T * row);
		kept &= !wzc_wzx_restorer_new(r, x, WZC_RESTORE_TRANSFORMED, th, &pool, &d);
		if (!pool)
			break;
		kept &= !wzc_wzx_build_layers(x, 0, L, th, &d);
		float *o = got;
		for (long b0 = 0, len = 1; b0 < L * NB; b0 += len, len = len % 5 + 1) {
			long nb = L * NB - b0 < len ? L * NB - b0 : len;
			kept &= !wzc_wzx_restorer_run(pool, b0, nb, o, &d);
			for (long i = b0; i < b0 + nb; i++)
				o += (size_t)row * (i % NB == NB - 1 ? T - 64 * (NB - 1) : 64);
		}
		kept &= wzc_wzx_restorer_run(pool, L * NB - 1, 2, got, &d) == WZ_ERR_RANGE;
		wzc_wzx_restorer_free(pool);
		kept &= !memcmp(got, want, sizeof(float) * L * T * row);
	}
	ok(kept, "%s: a restorer run on runs of 1..5 blocks on 1, 2 and 3 threads = the blocks read "
		 "one by one; a run past the end refused", what);
	/* bf16: four blocks to the transformed domain, then the inverse
	 * transform of a block's tokens at once, against the reference (each
	 * block to records, then wzc_decode_layer), bit for bit */
	uint16_t *bref = malloc(sizeof(uint16_t) * L * T * row), *bgot = malloc(sizeof(uint16_t) * L * T * row);
	int bsame = !wzc_wzx_restore(r, x, WZC_RESTORE_BF16_RECORDS, 0, L * NB, 1, bref, &d);
	for (int th = 1; bsame && th <= 3; th++) {
		memset(bgot, 0, sizeof(uint16_t) * L * T * row);
		bsame &= !wzc_wzx_restore(r, x, WZC_RESTORE_BF16, 0, L * NB, th, bgot, &d) &&
			 !memcmp(bgot, bref, sizeof(uint16_t) * L * T * row);
	}
	/* a range starting inside a layer, ending in the next */
	bsame &= !wzc_wzx_restore(r, x, WZC_RESTORE_BF16, 3, 5, 2, bgot, &d) &&
		 !memcmp(bgot, bref + row * 64 * 3, sizeof(uint16_t) * row * (2 * 64 + 10 + 2 * 64));
	ok(bsame, "%s: bf16 in groups on 1, 2 and 3 threads = the per-block reference, bit for bit",
	   what);
	free(bref);
	free(bgot);
	/* block 3 of layer 1 (index 9) damaged: runs stop there, the restore names it */
	uint8_t *bad = malloc(n);
	memcpy(bad, cont, n);
	size_t off = wzc_wzx_block_offset(r, NB + 3);
	bad[off + 16 + 5] ^= 0x10;
	wzc_wzx_reader *rb = NULL;
	int opened = !wzc_wzx_open(bad, n, "bad.wzx", &rb, &d);
	int done = -1;
	wz_err e = opened ? wzc_wzx_read_blocks_rows(rb, x, 1, 1, 4, got, &done, &d) : WZ_OK;
	ok(opened && e == WZ_ERR_CORRUPT && done == 2 && strstr(d.msg, "block 9 "),
	   "%s: a run over a damaged block writes the ones before it and names it: %s", what,
	   opened ? d.msg : "");
	uint8_t *rbad = malloc(B * 64 * 4);
	done = -1;
	e = opened ? wzc_wzx_read_blocks_records(rb, x, 1, 2, 3, rbad, &done, &d) : WZ_OK;
	ok(opened && e == WZ_ERR_CORRUPT && done == 1 && strstr(d.msg, "block 9 "),
	   "%s: the same into records: %s", what, opened ? d.msg : "");
	free(rbad);
	int named = opened;
	static const wzc_restore_kind kinds[] = { WZC_RESTORE_TRANSFORMED, WZC_RESTORE_RECORDS,
						  WZC_RESTORE_BF16, WZC_RESTORE_BF16_RECORDS };
	for (int th = 1; opened && th <= 3; th++)
		for (int kind = 0; kind < 4; kind++) {
			e = wzc_wzx_restore(rb, x, kinds[kind], 0, L * NB, th, got, &d);
			named &= e == WZ_ERR_CORRUPT && strstr(d.msg, "block 9 ") != NULL;
		}
	ok(named, "%s: the restore (transformed, records, bf16 both ways) on 1, 2 and 3 threads "
		  "names block 9", what);
	/* the same restorer, kept: the damaged run fails naming block 9, the
	 * runs after it still restore */
	int again = opened;
	for (int th = 1; opened && th <= 3; th++) {
		wzc_wzx_restorer *pool = NULL;
		again &= !wzc_wzx_restorer_new(rb, x, WZC_RESTORE_TRANSFORMED, th, &pool, &d);
		if (!pool)
			break;
		e = wzc_wzx_restorer_run(pool, NB, NB, got, &d);
		again &= e == WZ_ERR_CORRUPT && strstr(d.msg, "block 9 ") != NULL;
		again &= !wzc_wzx_restorer_run(pool, 0, NB, got, &d) &&
			 !memcmp(got, want, sizeof(float) * T * row);
		wzc_wzx_restorer_free(pool);
	}
	ok(again, "%s: a kept restorer names block 9 in its run and restores the next run", what);
	done = -1;
	e = wzc_wzx_read_blocks_rows(r, x, 0, 4, 3, got, &done, &d);
	ok(e == WZ_ERR_RANGE && done == 2, "%s: a run past the layer's last block: %s", what, d.msg);
	e = wzc_wzx_read_blocks_rows(r, x, 0, 0, 5, got, &done, &d);
	ok(e == WZ_ERR_USAGE && done == 0, "%s: five blocks at once refused: %s", what, d.msg);
	wzc_wzx_reader_free(rb);
	wzc_wzx_reader_free(r);
	free(bad);
	free(cont);
	free(want);
	free(got);
	free(lat);
	free(rope);
}

static void family(wzt_family fam, const char *rate)
{
	const char *fname = wzt_family_name(fam);
	char what[64];
	snprintf(what, sizeof what, "%s %s", fname, rate);
	wzt_cache_trace *cal = synth(fam, L, 1024, 0, 0, 0, 100, "calibration");
	wzt_cache_trace *tr = synth(fam, L, T, 0, 0, 4096, 7, "test");
	if (!ok(cal && tr, "%s: windows", what))
		return;
	wzc_window cw = window_of(cal), w = window_of(tr);
	const wzc_window *cp = &cw;
	wzc_profile *prof = NULL;
	wzc_format fmt;
	wzc_codec *c = NULL;
	wzc_wzx *x = NULL;
	wz_diag d;
	if (!ok(!wzc_prepare(&cp, 1, NULL, &prof, &d) && !wzc_format_parse(rate, &fmt, &d) &&
		!wzc_codec_new(&fmt, L, w.R, w.P, prof, &c, &d) && !wzc_wzx_of_codec(c, &x, &d) &&
		wzc_wzx_layer_type3(x, 0) && wzc_wzx_layer_type3(x, 1), "%s: a type 3 coder", what))
		return;
	size_t B = wzc_codec_record_bytes(c);
	uint8_t *rec = malloc(B * T * L);
	for (int l = 0; l < L; l++)
		wzc_encode_layer(c, l, T, w.latent + (size_t)l * T * w.R, w.rope + (size_t)l * T * w.P,
				 rec + B * T * l, &d);
	payloads p;
	int coded = 1;
	for (int l = 0; l < L; l++)
		for (int b = 0; b < NB; b++) {
			int n = T - 64 * b < 64 ? T - 64 * b : 64;
			size_t cap = (size_t)n * B * 2 + 256;
			p.pay[l][b] = malloc(cap);
			p.n[l][b] = n;
			p.size[l][b] = wzc_wzx_encode_lanes12(x, l, WZC_LANES, n, rec + B * ((size_t)l * T + 64 * b),
							      p.pay[l][b], cap);
			coded &= p.size[l][b] > 0;
		}
	if (ok(coded, "%s: %d blocks coded", what, L * NB)) {
		groups_vs_ref(x, &p, what);
		transform_paths(x, c, &p, rec, what);
		container_runs(x, rec, &w, prof->model, what);
	}
	for (int l = 0; l < L; l++)
		for (int b = 0; b < NB; b++)
			free(p.pay[l][b]);
	free(rec);
	wzc_wzx_free(x);
	wzc_codec_free(c);
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(tr);
}

int main(void)
{
	family(WZT_FAMILY_MLA_B, "wzx-5.4");
	family(WZT_FAMILY_IID, "wz-4.97");
	return tap_done();
}
