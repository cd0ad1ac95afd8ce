/* Tests of the wzx offload container: the rANS coder, lossless round trip,
 * exact restore to the wz GPU-tier records on all three synthetic families,
 * random access, corruption detection, bits from written bytes, the golden
 * container, and the offload must-show against fp8-mix on mla-a and mla-b.
 * Figures are printed as TAP comments whether or not a check passes. */
#include "tests/tap.h"

#include <time.h>

#include "codec/measure/metrics.h"
#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/wzx_internal.h"
#include "codec/wzx/wzx_rans.h"
#include "common/wz_io.h"
#include "tests/codec/window.h"
#include <xxhash.h>

static uint64_t rng = 88172645463325252ull;
static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static void test_rans(void)
{
	/* a skewed table and a uniform one, random symbols drawn from both */
	double p[40];
	for (int i = 0; i < 40; i++)
		p[i] = exp(-0.3 * i);
	uint32_t cum[41];
	wzc_rans_quantize(p, 40, cum);
	ok(cum[40] == WZC_RANS_M, "rans: quantized table sums to 2^16");
	int allpos = 1;
	for (int i = 0; i < 40; i++)
		allpos &= cum[i + 1] > cum[i];
	ok(allpos, "rans: every symbol keeps a frequency >= 1");
	/* the skewed table twice: searched, and from the decoder's hints */
	uint16_t hint[256];
	wzc_rans_table t[4] = { { 40, 0, cum, NULL, 0 }, { 256, 256, NULL, NULL, 0 },
				{ 3000, WZC_RANS_M / 3000, NULL, NULL, 0 }, { 40, 0, cum, hint, 8 } };
	wzc_rans_hint(&t[0], 8, hint);
	enum { N = 20000 };
	static uint32_t sym[N], got[N];
	static uint8_t buf[4 * N + 8];
	for (int i = 0; i < N; i++) {
		uint32_t u = next();
		sym[i] = i % 4 == 0 || i % 4 == 3 ? (u % 1000 < 900 ? u % 8 : u % 40) : u % t[i % 4].n;
	}
	wzc_rans_enc e;
	wzc_rans_enc_init(&e, buf, sizeof buf);
	for (int i = N - 1; i >= 0; i--)
		wzc_rans_put(&e, &t[i % 4], sym[i]);
	uint8_t *start = wzc_rans_enc_flush(&e);
	size_t n = start ? (size_t)(buf + sizeof buf - start) : 0;
	ok(start != NULL, "rans: %d symbols in %zu bytes", N, n);
	wzc_rans_dec d;
	wzc_rans_dec_init(&d, start, n);
	for (int i = 0; i < N; i++)
		got[i] = wzc_rans_get(&d, &t[i % 4]);
	ok(!memcmp(sym, got, sizeof sym) && wzc_rans_dec_done(&d), "rans: round trip exact");
	/* one flipped byte: decoding must not fault, and must not end clean */
	start[n / 2] ^= 0x10;
	wzc_rans_dec_init(&d, start, n);
	for (int i = 0; i < N; i++)
		got[i] = wzc_rans_get(&d, &t[i % 4]);
	ok(!wzc_rans_dec_done(&d) || memcmp(sym, got, sizeof sym), "rans: a flipped byte is noticed");
	wzc_rans_dec_init(&d, start, n - 1);
	for (int i = 0; i < N; i++)
		got[i] = wzc_rans_get(&d, &t[i % 4]);
	ok(!wzc_rans_dec_done(&d), "rans: a truncated payload is noticed");
	/* too small a buffer overflows instead of writing out of bounds */
	wzc_rans_enc_init(&e, buf, 16);
	for (int i = N - 1; i >= 0; i--)
		wzc_rans_put(&e, &t[i % 4], sym[i]);
	ok(wzc_rans_enc_flush(&e) == NULL, "rans: overflow reported");
}

static wzc_profile *prepare(wzt_family fam, int L, int T, int R, int P)
{
	wzt_cache_trace *cal[2];
	wzc_window cw[2];
	const wzc_window *cp[2];
	for (int i = 0; i < 2; i++) {
		wzt_synth_params sp;
		wzt_synth_params_default(&sp);
		sp.family = fam;
		sp.seed = 7;
		sp.L = L;
		sp.T = T;
		sp.R = R;
		sp.P = P;
		sp.Q = 8;
		sp.H = 4;
		sp.start_position = 4096 * i;
		sp.window_seed = 100 + i;
		sp.split = "calibration";
		wz_diag d;
		if (wzt_synth_cache(&sp, &cal[i], &d)) {
			printf("# synth: %s\n", d.msg);
			return NULL;
		}
		cw[i] = window_of(cal[i]);
		cp[i] = &cw[i];
	}
	wzc_profile *prof = NULL;
	wz_diag d;
	if (wzc_prepare(cp, 2, NULL, &prof, &d))
		printf("# prepare: %s\n", d.msg);
	for (int i = 0; i < 2; i++)
		wzt_cache_trace_free(cal[i]);
	return prof;
}

/* wz records of a window at record size B, straight from the wz encoder. */
static uint8_t *wz_records(const wzc_profile *prof, const wzc_window *w, size_t B)
{
	wzc_format f = { .id = WZC_FMT_WZ, .rate_bits = B * 8.0 / (w->R + w->P) };
	snprintf(f.name, sizeof f.name, "wz-%.3f", f.rate_bits);
	wzc_codec *c;
	wz_diag d;
	if (wzc_codec_new(&f, w->L, w->R, w->P, prof, &c, &d)) {
		printf("# %s\n", d.msg);
		return NULL;
	}
	uint8_t *rec = malloc(B * w->T * w->L);
	for (int l = 0; rec && l < w->L; l++)
		wzc_encode_layer(c, l, w->T, w->latent + (size_t)l * w->T * w->R,
				 w->rope + (size_t)l * w->T * w->P, rec + B * w->T * l, &d);
	wzc_codec_free(c);
	return rec;
}

static void reseal_header(uint8_t *b, size_t H)
{
	uint64_t h = XXH3_64bits(b, H - 8);
	for (int i = 0; i < 8; i++)
		b[H - 8 + i] = (uint8_t)(h >> (8 * i));
}

/* Exactness, random access and corruption on one family. */
static void family_exact(wzt_family fam)
{
	const char *fname = wzt_family_name(fam);
	const int L = 2, T = 300; /* 300: the last block of a layer is partial */
	wzc_profile *prof = prepare(fam, L, 1024, 512, 64);
	if (!ok(prof != NULL, "%s: prepare", fname))
		return;
	wzt_cache_trace *tr = synth(fam, L, T, 0, 0, 50000, 300, "test");
	wzc_window w = window_of(tr);
	wz_diag d;
	/* the grid of wzx-5.43, and the grid of the wz-5.44 GPU tier */
	size_t grids[2];
	wz_err ge = wzc_wzx_grid_bytes(prof, 5.43, &grids[0], &d);
	ok(ge == WZ_OK, "%s: grid for wzx-5.43: %zu bytes", fname, grids[0]);
	/* the guided search gives the bisection's grid, in fewer probes, on 1, 2 or 3
	 * threads (the grid does not depend on them) */
	static const double rates[] = { 1.5, 2.0, 3.0, 4.03, 4.97, 5.03, 5.43, 6.46, 8.0, 12.0, 16.5 };
	int same = 1, ps = 0, pb = 0;
	for (size_t ri = 0; ri < sizeof rates / sizeof *rates; ri++) {
		size_t gs = 0, gb = 1;
		int ns = 0, nb = 0;
		same &= !wzc_wzx_grid_search(prof, rates[ri], 1 + ri % 3, &gs, &ns, &d) &&
			!wzc_wzx_grid_bisect(prof, rates[ri], 2, &gb, &nb, &d) && gs == gb;
		ps += ns;
		pb += nb;
	}
	ok(same && ps < pb, "%s: the guided grid search = the bisection at %zu rates, %d probes "
			    "against %d", fname, sizeof rates / sizeof *rates, ps, pb);
	grids[1] = (size_t)floor(5.44 * 576 / 8);
	for (int g = 0; g < 2; g++) {
		size_t B = grids[g];
		uint8_t *want = wz_records(prof, &w, B);
		wzc_wzx *x = NULL;
		if (!want || wzc_wzx_new(prof, B, &x, &d)) {
			ok(0, "%s: coder for %zu-byte records: %s", fname, B, d.msg);
			free(want);
			continue;
		}
		size_t cap = wzc_wzx_bound(L, T, 512, 64, B, strlen(prof->model)), n;
		uint8_t *buf = malloc(cap), *got = calloc(B * T * L, 1);
		wzc_wzx_stats st;
		wz_err e = wzc_wzx_write(x, T, want, buf, cap, &n, &st, &d);
		ok(!e && n <= cap && n == st.total, "%s B=%zu: written %zu bytes <= bound %zu", fname, B, n, cap);
		printf("# %s B=%zu (%.3f b/v grid): container %.3f b/v, payload %.3f b/v, expected %.3f,"
		       " %d of %d blocks raw\n",
		       fname, B, B * 8.0 / 576, n * 8.0 / ((double)L * T * 576),
		       st.payload * 8.0 / ((double)L * T * 576), wzc_wzx_expected_bits(x), st.nraw,
		       st.nblocks);
		wzc_wzx_reader *r = NULL;
		wzc_wzx *xr = NULL;
		e = wzc_wzx_open(buf, n, "test", &r, &d);
		if (!e)
			e = wzc_wzx_coder_for(r, prof, &xr, &d);
		if (!e)
			e = wzc_wzx_read_all(r, xr, got, &d);
		if (!ok(!e, "%s B=%zu: read back", fname, B))
			printf("#   %s\n", d.msg);
		ok(!memcmp(want, got, B * T * L),
		   "%s B=%zu: restored records equal the wz encoder's, byte for byte", fname, B);
		if (g == 0) {
			/* random access: layer 1, block 2 (tokens 128..191) alone */
			uint8_t *one = calloc(64 * B, 1);
			int nt = 0;
			e = wzc_wzx_read_block(r, xr, 1, 2, one, &nt, &d);
			ok(!e && nt == 64 && !memcmp(one, want + B * ((size_t)T + 128), 64 * B),
			   "%s: random access to layer 1 block 2", fname);
			e = wzc_wzx_read_block(r, xr, 1, 4, one, &nt, &d);
			ok(!e && nt == T - 256 && !memcmp(one, want + B * ((size_t)T + 256), nt * B),
			   "%s: the partial last block (%d tokens)", fname, nt);
			/* a version 6 block type (type 6: every level count of
			 * its layer at most 4096) in a container that says
			 * version 1 to 5 is refused; the first such block,
			 * found by the index (a layer whose plan has a larger
			 * count is written with type 2) */
			size_t H = 56 + ((strlen(prof->model) + 7) & ~(size_t)7) + 8;
			const uint8_t *ix = buf + n - 24 - 16 * (size_t)st.nblocks;
			int k5 = -1, per_layer = st.nblocks / L;
			for (int k = 0; k < st.nblocks && k5 < 0; k++) {
				uint64_t o = 0;
				for (int i = 0; i < 8; i++)
					o |= (uint64_t)ix[16 * k + i] << (8 * i);
				if (o + 13 < n && buf[o + 13] == 6)
					k5 = k;
			}
			ok(k5 >= 0, "%s: the container holds a type 6 block (block %d)", fname, k5);
			uint8_t *old = malloc(n);
			for (int v = 1; v <= 5 && k5 >= 0; v++) {
				memcpy(old, buf, n);
				old[8] = (uint8_t)v;
				reseal_header(old, H);
				wzc_wzx_reader *ro = NULL;
				wz_err eo = wzc_wzx_open(old, n, "t", &ro, &d);
				wz_err eb = eo ? eo
					       : wzc_wzx_read_block(ro, xr, k5 / per_layer, k5 % per_layer,
								    one, &nt, &d);
				ok(!eo && eb == WZ_ERR_INPUT,
				   "%s: a version 6 block in a version %d container is refused: %s", fname, v, d.msg);
				wzc_wzx_reader_free(ro);
			}
			free(old);
			/* a flipped payload byte in block 6 (layer 1, block 1) */
			uint64_t off = 0;
			for (int i = 0; i < 8; i++)
				off |= (uint64_t)ix[16 * 6 + i] << (8 * i);
			buf[off + 30] ^= 4;
			e = wzc_wzx_read_all(r, xr, got, &d);
			ok(e == WZ_ERR_CORRUPT && strstr(d.msg, "block 6 (layer 1"),
			   "%s: corrupt block named: %s", fname, d.msg);
			buf[off + 30] ^= 4;
			free(one);
		}
		wzc_wzx_free(xr);
		wzc_wzx_reader_free(r);
		free(buf);
		free(got);
		free(want);
		wzc_wzx_free(x);
	}
	wzt_cache_trace_free(tr);
	wzc_profile_free(prof);
}

/* Header checks on a valid container from the mla-b profile. */
static void header_checks(void)
{
	wzc_profile *prof = prepare(WZT_FAMILY_MLA_B, 1, 512, 32, 8), *other = prepare(WZT_FAMILY_MLA_A, 1, 512, 32, 8);
	if (!ok(prof && other, "small profiles"))
		return;
	wzt_synth_params sp;
	wzt_synth_params_default(&sp);
	sp.family = WZT_FAMILY_MLA_B;
	sp.seed = 7;
	sp.L = 1;
	sp.T = 100;
	sp.R = 32;
	sp.P = 8;
	sp.split = "test";
	wzt_cache_trace *tr;
	wz_diag d;
	wzt_synth_cache(&sp, &tr, &d);
	wzc_window w = window_of(tr);
	/* prepare names the window whose model name is too long */
	char long_name[300];
	memset(long_name, 'm', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = 0;
	wzc_window lw = w;
	lw.model = long_name;
	lw.split = "calibration";
	lw.name = "long-model-window";
	const wzc_window *lp = &lw;
	wzc_profile *lprof = NULL;
	ok(wzc_prepare(&lp, 1, NULL, &lprof, &d) == WZ_ERR_INPUT && !lprof &&
		   strstr(d.msg, "long-model-window") && strstr(d.msg, "model"),
	   "prepare names the window with a model name over 255 bytes: %s", d.msg);
	size_t B = 30;
	uint8_t *rec = wz_records(prof, &w, B);
	wzc_wzx *x;
	wzc_wzx_new(prof, B, &x, &d);
	size_t cap = wzc_wzx_bound(1, 100, 32, 8, B, strlen(prof->model)), n;
	uint8_t *buf = malloc(cap), *bad = malloc(cap);
	wzc_wzx_write(x, 100, rec, buf, cap, &n, NULL, &d);
	ok(wzc_wzx_write(x, 100, rec, buf, cap - 1, &n, NULL, &d) == WZ_ERR_RANGE,
	   "a buffer below wzc_wzx_bound is refused");
	wzc_wzx_write(x, 100, rec, buf, cap, &n, NULL, &d);
	size_t H = 56 + ((strlen(prof->model) + 7) & ~(size_t)7) + 8;
	wzc_wzx_reader *r;
	struct { const char *what; size_t at; uint8_t val; int reseal; wz_err want; } cases[] = {
		{ "bad magic", 1, 'Q', 0, WZ_ERR_INPUT },
		{ "header byte flipped", 20, 0x41, 0, WZ_ERR_CORRUPT },
		{ "newer version", 8, 7, 1, WZ_ERR_VERSION },
		{ "version 0", 8, 0, 1, WZ_ERR_INPUT },
		{ "reserved flags", 12, 1, 1, WZ_ERR_INPUT },
		{ "zero layers", 16, 0, 1, WZ_ERR_INPUT },
		{ "tokens beyond the file", 31, 0x10, 1, WZ_ERR_INPUT },
		{ "record size too large", 33, 0x40, 1, WZ_ERR_INPUT },
		{ "block tokens", 36, 32, 1, WZ_ERR_INPUT },
		{ "index checksum", 0, 0, 2, WZ_ERR_CORRUPT },
		{ "end magic", 0, 0, 3, WZ_ERR_INPUT },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memcpy(bad, buf, n);
		if (cases[i].reseal == 2)
			bad[n - 16] ^= 1;
		else if (cases[i].reseal == 3)
			bad[n - 1] ^= 1;
		else
			bad[cases[i].at] = cases[i].val;
		if (cases[i].reseal == 1)
			reseal_header(bad, H);
		wz_err e = wzc_wzx_open(bad, n, "t", &r, &d);
		ok(e == cases[i].want, "header: %s -> %s (%s)", cases[i].what, wz_strerror(e), d.msg);
		if (!e)
			wzc_wzx_reader_free(r);
	}
	for (size_t cut = 0; cut < n; cut += 7) {
		wz_err e = wzc_wzx_open(buf, cut, "t", &r, &d);
		if (!e) {
			ok(0, "truncated to %zu bytes accepted", cut);
			wzc_wzx_reader_free(r);
			break;
		}
	}
	ok(1, "every truncation refused");
	wzc_wzx *xo;
	ok(wzc_wzx_open(buf, n, "t", &r, &d) == WZ_OK &&
	   wzc_wzx_coder_for(r, other, &xo, &d) == WZ_ERR_INPUT,
	   "a container is refused with another profile: %s", d.msg);
	wzc_wzx_reader_free(r);
	/* the header names another model, resealed: the profile's hash still
	 * matches, the name must not */
	memcpy(bad, buf, n);
	bad[56] = bad[56] == 'Z' ? 'Y' : 'Z';
	reseal_header(bad, H);
	xo = NULL;
	ok(strlen(prof->model) > 0 && wzc_wzx_open(bad, n, "t", &r, &d) == WZ_OK &&
		   wzc_wzx_coder_for(r, prof, &xo, &d) == WZ_ERR_INPUT && !xo &&
		   strstr(d.msg, "model"),
	   "a container whose header names another model is refused: %s", d.msg);
	wzc_wzx_reader_free(r);
	free(buf);
	free(bad);
	free(rec);
	wzc_wzx_free(x);
	wzt_cache_trace_free(tr);
	wzc_profile_free(prof);
	wzc_profile_free(other);
}

/* The golden containers decode to the stored records with the stored
 * profile: version 1 (tiny.wzx), version 2 (tiny-v2.wzx), version 3
 * (tiny-v3.wzx, written from tiny.rec on purpose when version 3 came),
 * version 4 (tiny-v4.wzx, likewise when version 4 came), version 5
 * (tiny-v5.wzx, likewise) and version 6 (tiny-v6.wzx, likewise), and
 * writing those records again gives version 6's bytes. */
static void golden(void)
{
	const char *src = getenv("srcdir");
	static const char *const names[] = { "tiny.wzx", "tiny-v2.wzx", "tiny-v3.wzx", "tiny-v4.wzx",
					     "tiny-v5.wzx", "tiny-v6.wzx" };
	enum { NV = 6 };
	char pc[NV][512], p2[512], p3[512];
	for (int v = 0; v < NV; v++)
		snprintf(pc[v], sizeof pc[v], "%s/tests/codec/golden/%s", src ? src : ".", names[v]);
	snprintf(p2, sizeof p2, "%s/tests/codec/golden/tiny.wzp", src ? src : ".");
	snprintf(p3, sizeof p3, "%s/tests/codec/golden/tiny.rec", src ? src : ".");
	char *cont[NV] = { NULL }, *recs;
	size_t n[NV] = { 0 }, nrec;
	wzc_profile *prof;
	wz_diag d;
	/* WZX_GOLDEN_WRITE=DIR writes the version 6 container again from the
	 * committed records and profile (on purpose, when the format changes) */
	const char *gdir = getenv("WZX_GOLDEN_WRITE");
	int read = 1;
	for (int v = 0; v < NV; v++)
		if (!(gdir && v == NV - 1))
			read &= !wz_read_file(pc[v], 1 << 20, &cont[v], &n[v], &d);
	if (!ok(read && !wz_read_file(p3, 1 << 20, &recs, &nrec, &d) && !wzc_profile_read(p2, &prof, &d),
		"golden files read"))
		return;
	for (int v = 0; v < NV; v++) {
		if (!cont[v])
			continue;
		wzc_wzx_reader *r;
		wzc_wzx *x = NULL;
		wz_err e = wzc_wzx_open(cont[v], n[v], "golden", &r, &d);
		if (!e)
			e = wzc_wzx_coder_for(r, prof, &x, &d);
		uint8_t *got = calloc(nrec, 1);
		if (!e)
			e = wzc_wzx_read_all(r, x, got, &d);
		/* A failure here is a format change: of the container, the rANS
		 * tables, or the wz plan they are derived from (docs/wz-format.md). */
		ok(!e && wzc_wzx_reader_info(r)->version == v + 1 && !memcmp(got, recs, nrec),
		   "golden version %d container decodes to its records", v + 1);
		if (!e && v == 1) {
			/* the records written again: version 6's bytes */
			const wzc_wzx_info *in = wzc_wzx_reader_info(r);
			size_t cap = wzc_wzx_bound(in->L, in->T, in->R, in->P, in->record_bytes,
						   strlen(prof->model)), m;
			uint8_t *again = malloc(cap);
			e = wzc_wzx_write(x, in->T, (const uint8_t *)recs, again, cap, &m, NULL, &d);
			if (!e && gdir) {
				char path[512];
				snprintf(path, sizeof path, "%s/tiny-v6.wzx", gdir);
				e = wz_write_file_atomic(path, again, m, &d);
				ok(!e, "golden version 6 container written to %s", path);
			} else {
				ok(!e && m == n[NV - 1] && !memcmp(again, cont[NV - 1], m),
				   "golden version 6 container written again byte for byte");
			}
			free(again);
		}
		free(got);
		wzc_wzx_free(x);
		wzc_wzx_reader_free(r);
		free(cont[v]);
	}
	wzc_profile_free(prof);
	free(recs);
}

/* Types 4, 5 and 6 need tokens wider than tiny's (there their 32 lane
 * states make every block raw): tiny4.wzp (a profile of 128 + 16 values),
 * tiny4.rec (100 tokens x one layer of wz records), tiny4-v4.wzx (their
 * version 4 container, type 4 blocks, written on purpose with
 * WZX_GOLDEN_WRITE when version 4 came), tiny4-v5.wzx (version 5, type 5
 * blocks, likewise when version 5 came) and tiny4-v6.wzx (version 6, type
 * 6 blocks, likewise when version 6 came).  Each container decodes to the
 * records, and writing them again gives version 6's bytes. */
static void golden4(void)
{
	const char *src = getenv("srcdir"), *gdir = getenv("WZX_GOLDEN_WRITE");
	enum { NC = 3 };
	char pp[600], pr[600], pc[NC][600];
	char gd[512];
	snprintf(gd, sizeof gd, "%s/tests/codec/golden", src ? src : ".");
	snprintf(pp, sizeof pp, "%s/tiny4.wzp", gd);
	snprintf(pr, sizeof pr, "%s/tiny4.rec", gd);
	for (int v = 0; v < NC; v++)
		snprintf(pc[v], sizeof pc[v], "%s/tiny4-v%d.wzx", v == NC - 1 && gdir ? gdir : gd, 4 + v);
	wz_diag d;
	wzc_profile *prof = NULL;
	char *recs = NULL, *cont[NC] = { NULL };
	size_t nrec = 0, ncont[NC] = { 0 };
	const size_t B = 60; /* 3.33 bits/value: both blocks come out coded */
	int read = !wzc_profile_read(pp, &prof, &d) && !wz_read_file(pr, 1 << 20, &recs, &nrec, &d) && nrec == B * 100;
	for (int v = 0; v < NC; v++)
		read = read && ((gdir && v == NC - 1) || !wz_read_file(pc[v], 1 << 20, &cont[v], &ncont[v], &d));
	if (!ok(read, "golden4 files read")) {
		wzc_profile_free(prof);
		free(recs);
		for (int v = 0; v < NC; v++)
			free(cont[v]);
		return;
	}
	wzc_wzx *x = NULL;
	size_t cap = wzc_wzx_bound(1, 100, 128, 16, B, strlen(prof->model)), m = 0;
	uint8_t *again = malloc(cap);
	wz_err e = wzc_wzx_new(prof, B, &x, &d);
	if (!e)
		e = wzc_wzx_write(x, 100, (const uint8_t *)recs, again, cap, &m, NULL, &d);
	if (gdir)
		ok(!e && !wz_write_file_atomic(pc[NC - 1], again, m, &d), "golden4: %s written", pc[NC - 1]);
	else
		ok(!e && m == ncont[NC - 1] && !memcmp(again, cont[NC - 1], m),
		   "golden version 6 container of type 6 blocks written again byte for byte");
	for (int v = 0; v < NC && !gdir; v++) {
		wzc_wzx_reader *r = NULL;
		uint8_t *got = calloc(nrec, 1);
		e = wzc_wzx_open((const uint8_t *)cont[v], ncont[v], "golden4", &r, &d);
		int coded = 0;
		for (long i = 0; !e && i < wzc_wzx_reader_info(r)->nblocks; i++)
			coded += cont[v][wzc_wzx_block_offset(r, i) + 13] == 4 + v;
		if (!e)
			e = wzc_wzx_read_all(r, x, got, &d);
		/* a failure here is a change of type 4, 5 or 6 (docs/wzx-format.md) */
		ok(!e && coded == 2 && wzc_wzx_reader_info(r)->version == 4 + v && !memcmp(got, recs, nrec),
		   "golden version %d container (%d type %d blocks) decodes to its records", 4 + v, coded, 4 + v);
		wzc_wzx_reader_free(r);
		free(got);
	}
	free(again);
	wzc_wzx_free(x);
	wzc_profile_free(prof);
	free(recs);
	for (int v = 0; v < NC; v++)
		free(cont[v]);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Entropy coding alone: records to container and back, timed. */
static void speed(wzc_codec *c, const wzc_window *w, const char *fname)
{
	wzc_wzx *x;
	wz_diag d;
	if (wzc_wzx_of_codec(c, &x, &d))
		return;
	size_t B = wzc_wzx_record_bytes(x), per = (size_t)w->T * B, n;
	size_t cap = wzc_wzx_bound(w->L, w->T, w->R, w->P, B, WZC_MODEL_MAX);
	uint8_t *rec = malloc(per * w->L), *back = malloc(per * w->L), *buf = malloc(cap);
	double t0 = now();
	for (int l = 0; l < w->L; l++)
		wzc_encode_layer(c, l, w->T, w->latent + (size_t)l * w->T * w->R,
				 w->rope + (size_t)l * w->T * w->P, rec + per * l, &d);
	double t1 = now();
	wzc_wzx_write(x, w->T, rec, buf, cap, &n, NULL, &d);
	double t2 = now();
	wzc_wzx_reader *r;
	if (!wzc_wzx_open(buf, n, "speed", &r, &d)) {
		wzc_wzx_read_all(r, x, back, &d);
		wzc_wzx_reader_free(r);
	}
	double t3 = now(), tok = (double)w->L * w->T;
	printf("# %s speed: wz encode %.0f, wzx pack %.0f, wzx unpack %.0f thousand token-layers/s"
	       " (%.0f / %.0f / %.0f MB/s of bf16)\n",
	       fname, tok / (t1 - t0) / 1e3, tok / (t2 - t1) / 1e3, tok / (t3 - t2) / 1e3,
	       tok * 1152 / (t1 - t0) / 1e6, tok * 1152 / (t2 - t1) / 1e6, tok * 1152 / (t3 - t2) / 1e6);
	free(rec);
	free(back);
	free(buf);
	wzc_wzx_free(x);
}

static wzc_errors *measured(const wzc_window *w, const wzc_profile *prof, const char *name,
			    const char *fname, int i)
{
	wzc_format fmt;
	wzc_codec *c = NULL;
	wzc_errors *e = NULL;
	wz_diag d;
	if (wzc_format_parse(name, &fmt, &d) || wzc_codec_new(&fmt, w->L, w->R, w->P, prof, &c, &d) ||
	    wzc_measure(w, c, &e, &d))
		printf("# %s: %s\n", name, d.msg);
	if (c && e && fmt.id == WZC_FMT_WZX) {
		/* bits/value from bytes: the container written again here */
		uint8_t *rec;
		wzc_wzx_stats st;
		if (!wzc_wzx_roundtrip(c, w, &rec, &st, &d)) {
			ok(e->bytes == st.total && e->payload_bytes == st.payload &&
			   e->values == (size_t)w->L * w->T * (w->R + w->P),
			   "%s test%d: measure counts the container's %zu bytes (payload %zu)", fname, i,
			   st.total, st.payload);
			free(rec);
		}
		if (i == 0)
			speed(c, w, fname);
	}
	wzc_codec_free(c);
	return e;
}

/* The offload must-show: wzx near 0.67x fp8-mix's bytes (wzx-5.40), error
 * against fp8-mix, and against wz at the same measured bytes (what the
 * entropy coder buys).  Bits are from the bytes of the container. */
static void must_show(wzt_family fam, const char *rate)
{
	const char *fname = wzt_family_name(fam);
	wzc_profile *prof = prepare(fam, 2, 1024, 512, 64);
	if (!prof)
		return;
	for (int i = 0; i < 2; i++) {
		wzt_cache_trace *tr = synth(fam, 2, 1024, 16, 8, 100000 * i, 200 + i, "test");
		wzc_window w = window_of(tr);
		wzc_errors *fp8 = measured(&w, prof, "fp8-mix", fname, i);
		wzc_errors *x = measured(&w, prof, rate, fname, i), *wz = NULL;
		char same[32];
		if (x) {
			snprintf(same, sizeof same, "wz-%.3f", x->bits_per_value);
			wz = measured(&w, prof, same, fname, i);
		}
		if (fp8 && x && wz) {
			wzc_ci r = wzc_ratio_ci(x, fp8, WZC_M_NMSE, 200, 1);
			wzc_ci rk = wzc_ratio_ci(x, fp8, WZC_M_KL, 200, 1);
			wzc_ci rw = wzc_ratio_ci(x, wz, WZC_M_NMSE, 200, 1);
			double bytes_ratio = x->bits_per_value / fp8->bits_per_value;
			printf("# %s test%d %s: %.3f b/v (payload %.3f) = %.3fx fp8-mix's bytes; nmse %.3fx"
			       " [%.3f, %.3f], KL %.3fx [%.3f, %.3f] of fp8-mix; nmse %.3fx [%.3f, %.3f] of %s\n",
			       fname, i, rate, x->bits_per_value, x->payload_bytes * 8.0 / x->values,
			       bytes_ratio, r.value, r.lo, r.hi, rk.value, rk.lo, rk.hi, rw.value, rw.lo,
			       rw.hi, same);
			ok(bytes_ratio <= 0.70, "%s test%d: %s at <= 0.70x fp8-mix's bytes (%.3fx)", fname, i,
			   rate, bytes_ratio);
			ok(rw.hi <= 0.9, "%s test%d: nmse >= 10%% below wz at the same bytes (upper CI %.3f)",
			   fname, i, rw.hi);
			if (fam == WZT_FAMILY_MLA_B) {
				ok(r.hi <= 0.5, "%s test%d: nmse >= 2x below fp8-mix (upper CI %.3f)", fname, i,
				   r.hi);
				ok(rk.hi <= 0.6, "%s test%d: KL well below fp8-mix (upper CI %.3f)", fname, i,
				   rk.hi);
			} else {
				/* mla-a is the harder family: wz-5.44 itself is above
				 * fp8-mix there.  The profile plans for the attention
				 * scores (query weight 1), so its nmse may sit above
				 * fp8-mix's (1.13-1.15x here) while attention KL is
				 * below it: KL is the check. */
				ok(rk.hi < 1.0, "%s test%d: KL below fp8-mix (upper CI %.3f)", fname, i, rk.hi);
			}
		}
		wzc_errors_free(fp8);
		wzc_errors_free(x);
		wzc_errors_free(wz);
		wzt_cache_trace_free(tr);
	}
	wzc_profile_free(prof);
}

int main(void)
{
	test_rans();
	family_exact(WZT_FAMILY_IID);
	family_exact(WZT_FAMILY_MLA_A);
	family_exact(WZT_FAMILY_MLA_B);
	header_checks();
	golden();
	golden4();
	must_show(WZT_FAMILY_MLA_B, "wzx-5.40");
	must_show(WZT_FAMILY_MLA_A, "wzx-5.40");
	return tap_done();
}
