/* Tests of opening a profile and a coder cheaply: a profile read from its
 * file (its arrays views of the file's bytes) equals the one parsed from
 * a copy of the bytes, value for value, and a damaged file is refused
 * naming what is wrong; plans and wzx coders built a layer at a time on
 * first use give the same records and containers whatever order the
 * layers are asked for, and a one-block restore builds one layer (version 5
 * and reading some layers: test_profile_v5.c). */
#include "tests/tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/codec.h"
#include "codec/codec_internal.h"
#include "codec/formats/baseline.h"
#include "codec/formats/bytes.h"
#include "codec/profile/scale_code.h"
#include "codec/wz/wz_plan.h"
#include "codec/profile/levels.h"
#include "codec/formats/format.h"
#include "codec/profile/profile.h"
#include "codec/profile/profile_cache.h"
#include "codec/wz/wz_plan.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/wzx_internal.h"
#include "common/wz_io.h"
#include "tests/codec/profile_util.h"
#include "tests/codec/window.h"

static void read_as_views(const char *path)
{
	wz_diag d;
	char *bytes;
	size_t n;
	wzc_profile *viewed = NULL, *copied = NULL;
	if (!ok(!wz_read_file(path, 1 << 26, &bytes, &n, &d), "profile file read"))
		return;
	ok(!wzc_profile_read(path, &viewed, &d), "profile read from its file");
	ok(!wzc_profile_parse(bytes, n, "copy", &copied, &d), "profile parsed from a copy");
	if (viewed && copied) {
		ok(same_profile(viewed, copied), "read and parsed give the same values");
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		ok(viewed->backing && !copied->backing,
		   "the file's profile points into its bytes, the parsed one owns copies");
#endif
	}
	wzc_profile_free(viewed);
	wzc_profile_free(copied);

	/* damaged, resealed: a NaN in a basis, a negative variance, a
	 * histogram that does not sum to 1; each refused, the message naming
	 * the layer and part */
	size_t hdr = 48 + (((size_t)(uint8_t)bytes[36] + 3) & ~(size_t)3);
	int R = (int)(uint8_t)bytes[20] | (uint8_t)bytes[21] << 8;
	size_t basis = hdr + 4 * (1 + (size_t)R), var = basis + 4 * (size_t)R * R;
	size_t hist = var + 4 * 4 * (size_t)R;
	struct {
		size_t at;
		uint32_t bits;
		const char *what, *says;
	} damage[] = {
		{ basis + 4 * 3, 0x7fc00000u, "a NaN in the latent basis", "layer 0, latent part" },
		{ var, 0xbf800000u, "a negative latent variance", "negative, infinite or NaN" },
		{ hist + 4 * 2048, 0x3f000000u, "a histogram bin of 0.5 more", "sums to" },
	};
	char bad[] = "test-profile-read-XXXXXX";
	int fd = mkstemp(bad);
	if (fd >= 0)
		close(fd);
	for (size_t k = 0; fd >= 0 && k < sizeof damage / sizeof *damage; k++) {
		uint8_t *b = malloc(n);
		memcpy(b, bytes, n);
		uint32_t u = damage[k].bits;
		if (damage[k].at == hist + 4 * 2048) { /* add to whatever the bin holds */
			float f;
			memcpy(&f, b + damage[k].at, 4);
			f += 0.5f;
			memcpy(&u, &f, 4);
		}
		for (int i = 0; i < 4; i++)
			b[damage[k].at + (size_t)i] = (uint8_t)(u >> (8 * i));
		wzc_profile *p = NULL;
		wz_err e = write_resealed(bad, b, n) ? WZ_OK : wzc_profile_read(bad, &p, &d);
		ok(e == WZ_ERR_CORRUPT && !p && strstr(d.msg, damage[k].says), "%s refused: %s",
		   damage[k].what, e ? d.msg : "(read)");
		wzc_profile_free(p);
		free(b);
	}
	/* truncated: the header's size no longer matches */
	if (fd >= 0) {
		wzc_profile *p = NULL;
		wz_err e = wz_write_file_atomic(bad, bytes, n - 100, &d) ? WZ_OK : wzc_profile_read(bad, &p, &d);
		ok(e && !p, "a truncated profile refused: %s", e ? d.msg : "(read)");
		wzc_profile_free(p);
		unlink(bad);
	}
	free(bytes);
}

static void copy_part(wzc_part_profile *to, const wzc_part_profile *from, int layer)
{
	size_t n = (size_t)from->n;
	memcpy(to->mean, from->mean, sizeof(float) * n);
	memcpy(to->basis, from->basis, sizeof(float) * n * n);
	memcpy(to->var, from->var, sizeof(float) * n);
	memcpy(to->sigma, from->sigma, sizeof(float) * n);
	memcpy(to->anchor, from->anchor, sizeof(float) * n);
	memcpy(to->hist, from->hist, sizeof(float) * WZC_HIST_BINS);
	to->scale_ref = from->scale_ref;
	/* layers that plan differently: other weights in each */
	for (size_t i = 0; i < n; i++)
		to->weight[i] = from->weight[i] * (float)(1 + (i * (size_t)(layer + 1)) % 5) / 3;
}

/* Records of every layer with codecs on two profiles that share nothing,
 * one asked for its layers from the last to the first; and a container of
 * them, read back with a coder that is asked for one block only.  One
 * prepared layer (a prepare of 512 + 64 takes seconds), its weights
 * changed in each. */
static void position_caps(wzc_profile *one);

static void layers_on_first_use(void)
{
	enum { L = 3, T = 130 };
	wzt_cache_trace *cal = synth(WZT_FAMILY_MLA_B, 1, 256, 0, 0, 0, 1, "calibration");
	wzt_cache_trace *tst = synth(WZT_FAMILY_MLA_B, L, T, 0, 0, 0, 2, "test");
	if (!ok(cal && tst, "synthetic windows"))
		return;
	wzc_window cw = window_of(cal), tw = window_of(tst);
	const wzc_window *cp = &cw;
	wz_diag d;
	wzc_profile *one = NULL, *pa = NULL, *pb = NULL;
	uint8_t *ser;
	size_t nser;
	wzc_prepare_opts po;
	wzc_prepare_opts_default(&po);
	po.position_cap = 1;
	if (!ok(!wzc_prepare(&cp, 1, &po, &one, &d) && (pa = wzc_profile_alloc(L, one->R, one->P)),
		"a profile of one layer prepared"))
		return;
	memcpy(pa->model, one->model, sizeof pa->model);
	pa->ntokens = one->ntokens;
	for (int l = 0; l < L; l++) {
		copy_part(&pa->latent[l], &one->latent[0], l);
		copy_part(&pa->rope[l], &one->rope[0], l);
		pa->pos_cap[l] = one->pos_cap[0];
	}
	position_caps(one);
	wzc_profile_free(one);
	if (!ok(!wzc_profile_serialize(pa, &ser, &nser, &d) && !wzc_profile_parse(ser, nser, "copy", &pb, &d),
		"a profile of %d layers, and a second copy of it", L))
		return;
	free(ser);
	wzc_format fmt;
	wzc_codec *ca = NULL, *cb = NULL;
	if (!ok(!wzc_format_parse("wz-5.44", &fmt, &d) && !wzc_codec_new(&fmt, L, tw.R, tw.P, pa, &ca, &d) &&
		!wzc_codec_new(&fmt, L, tw.R, tw.P, pb, &cb, &d), "two codecs"))
		return;
	size_t B = wzc_codec_record_bytes(ca), per = (size_t)T * B;
	uint8_t *ra = malloc(per * L), *rb = malloc(per * L);
	for (int l = 0; l < L; l++)
		wzc_encode_layer(ca, l, T, tw.latent + (size_t)l * T * tw.R, tw.rope + (size_t)l * T * tw.P,
				 ra + per * l, &d);
	for (int l = L - 1; l >= 0; l--)
		wzc_encode_layer(cb, l, T, tw.latent + (size_t)l * T * tw.R, tw.rope + (size_t)l * T * tw.P,
				 rb + per * l, &d);
	ok(!memcmp(ra, rb, per * L), "records the same with layers planned first to last and last to first");

	/* a container; a fresh profile's coder asked for one block of layer 2 */
	wzc_wzx *xa = NULL, *xc = NULL;
	size_t cap = wzc_wzx_bound(L, T, tw.R, tw.P, B, strlen(pa->model)), nc = 0;
	uint8_t *cont = malloc(cap);
	wzc_wzx_reader *r = NULL;
	wzc_profile *pc = NULL;
	if (ok(!wzc_wzx_of_codec(ca, &xa, &d) && !wzc_wzx_write(xa, T, ra, cont, cap, &nc, NULL, &d) &&
	       !wzc_profile_serialize(pa, &ser, &nser, &d) && !wzc_profile_parse(ser, nser, "copy", &pc, &d) &&
	       !wzc_wzx_open(cont, nc, "t.wzx", &r, &d) && !wzc_wzx_coder_for(r, pc, &xc, &d),
	       "a container, and a coder for it on a third copy of the profile")) {
		int built = 0;
		for (int l = 0; l < L; l++)
			built += __atomic_load_n(&xc->ready[l], __ATOMIC_ACQUIRE);
		ok(built == 0, "opening the coder built no layer (%d)", built);
		uint8_t got[64 * 4096];
		int ntok = 0;
		ok(B <= 4096 && !wzc_wzx_read_block(r, xc, 2, 1, got, &ntok, &d) && ntok == 64 &&
			   !memcmp(got, ra + per * 2 + 64 * B, 64 * B),
		   "block 1 of layer 2 read back exactly");
		built = 0;
		for (int l = 0; l < L; l++)
			built += __atomic_load_n(&xc->ready[l], __ATOMIC_ACQUIRE);
		ok(built == 1 && xc->ready[2], "reading it built its layer only (%d built)", built);
		uint8_t *all = malloc(per * L);
		ok(all && !wzc_wzx_read_all(r, xc, all, &d) && !memcmp(all, ra, per * L),
		   "every block read back exactly after it");
		free(all);
		int differ = 0;
		for (int l = 1; l < L; l++)
			differ += wzc_wz_plan_layer(ca->wz, l)->distortion != wzc_wz_plan_layer(ca->wz, 0)->distortion;
		ok(differ == L - 1, "the layers plan differently (%d of %d differ from layer 0)", differ, L - 1);
		ok(wzc_wzx_expected_bits(xc) == wzc_wzx_expected_bits(xa),
		   "the expected bits the same (%.4f)", wzc_wzx_expected_bits(xa));
		/* the profile's file read with layer 2 alone: that block read
		 * back exactly, a block of layer 0 refused naming it */
		char path[] = "test-profile-part-XXXXXX";
		int fd = mkstemp(path);
		wzc_profile *pp = NULL;
		wzc_wzx *xp = NULL;
		if (fd >= 0)
			close(fd);
		if (ok(fd >= 0 && !write_resealed(path, ser, nser) &&
			       !wzc_profile_read_layers(path, (const unsigned char *)"\0\0\1", 3, &pp, &d) &&
			       !wzc_wzx_coder_for(r, pp, &xp, &d),
		       "a coder on the profile read with layer 2 alone")) {
			ok(!wzc_wzx_read_block(r, xp, 2, 1, got, &ntok, &d) && ntok == 64 &&
				   !memcmp(got, ra + per * 2 + 64 * B, 64 * B),
			   "block 1 of layer 2 read back exactly");
			wz_err e = wzc_wzx_read_block(r, xp, 0, 0, got, &ntok, &d);
			ok(e == WZ_ERR_USAGE && strstr(d.msg, "layer 0"), "a block of layer 0, not read, refused: %s",
			   e ? d.msg : "(read)");
		}
		wzc_wzx_free(xp);
		wzc_profile_free(pp);
		if (fd >= 0)
			unlink(path);
		free(ser);
	}
	wzc_wzx_free(xa);
	wzc_wzx_free(xc);
	wzc_wzx_reader_free(r);
	free(cont);
	free(ra);
	free(rb);
	wzc_codec_free(ca);
	wzc_codec_free(cb);
	wzc_profile_free(pa);
	wzc_profile_free(pb);
	wzc_profile_free(pc);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(tst);
}

/* Version 4's position caps: written after the layers, read back, a
 * negative one refused; a version-3 profile has none. */
static void position_caps(wzc_profile *one)
{
	uint8_t *b = NULL;
	size_t n = 0;
	wz_diag d;
	wzc_profile *p = NULL;
	ok(one->version == 5 && one->pos_cap[0] > 0, "a new profile is version 5 with a position cap");
	/* versions 5 and 4: one layer, its cap the last float before the
	 * checksum in both */
	for (int v = 5; v >= 4; v--) {
		one->version = v;
		p = NULL;
		if (!ok(!wzc_profile_serialize(one, &b, &n, &d) && !wzc_profile_parse(b, n, "v", &p, &d) &&
			    same_profile(one, p),
			"version %d: the position cap read back", v))
			return;
		wzc_profile_free(p);
		p = NULL;
		float neg = -1;
		memcpy(b + n - 12, &neg, 4);
		wzc_profile_reseal(b, n);
		wz_err e = wzc_profile_parse(b, n, "v", &p, &d);
		ok(e == WZ_ERR_CORRUPT && !p && strstr(d.msg, "position cap"),
		   "version %d: a negative position cap refused: %s", v, e ? d.msg : "(read)");
		wzc_profile_free(p);
		free(b);
	}
	/* version 4's size, for version 3's below */
	one->version = 4;
	if (!ok(!wzc_profile_serialize(one, &b, &n, &d), "version 4 written"))
		return;
	free(b);
	/* version 5 plans as version 4: the same plan of every component, on
	 * two profiles read from the two files (nothing cached shared) */
	int same = 1;
	wzc_profile *pv[2] = { NULL, NULL };
	wzc_codec *cv[2] = { NULL, NULL };
	for (int v = 4; v <= 5; v++) {
		wzc_format fmt;
		uint8_t *bv;
		size_t nv;
		one->version = v;
		if (wzc_profile_serialize(one, &bv, &nv, &d) || wzc_profile_parse(bv, nv, "v", &pv[v - 4], &d) ||
		    wzc_format_parse("wz-5.44", &fmt, &d) ||
		    wzc_codec_new(&fmt, 1, one->R, one->P, pv[v - 4], &cv[v - 4], &d))
			same = 0;
		else
			free(bv);
	}
	const layer_plan *a4 = same ? wzc_wz_plan_layer(cv[0]->wz, 0) : NULL;
	const layer_plan *a5 = same ? wzc_wz_plan_layer(cv[1]->wz, 0) : NULL;
	same = a4 && a5 && pv[1]->version == 5 && a4->n == a5->n &&
	       !memcmp(a4->nlev, a5->nlev, sizeof *a4->nlev * (size_t)a4->n) && a4->distortion == a5->distortion;
	for (int v = 0; v < 2; v++) {
		wzc_codec_free(cv[v]);
		wzc_profile_free(pv[v]);
	}
	ok(same, "version 5 plans every component as version 4");
	one->version = 4;
	/* The plan keeps the position part's planned error (the floor's own
	 * table distortions) within the cap at wz-5.44; the same profile read
	 * as version 3 plans it far above, as before the cap. */
	double planned[2] = { 0, 0 }, dcap[WZC_NSET];
	int R = one->R;
	if (wzc_levels_distortion_exact(one->rope[0].hist, 4, dcap) == 0)
		for (int v = 0; v < 2; v++) {
			wzc_format fmt;
			wzc_codec *c = NULL;
			one->version = v ? 3 : 4;
			if (wzc_format_parse("wz-5.44", &fmt, &d) ||
			    wzc_codec_new(&fmt, 1, R, one->P, one, &c, &d))
				planned[v] = NAN;
			const layer_plan *lp = c ? wzc_wz_plan_layer(c->wz, 0) : NULL;
			for (int i = 0; lp && i < one->P; i++) {
				int j = 0;
				while (j + 1 < WZC_NSET && wzc_level_count(j) < lp->nlev[R + i])
					j++;
				planned[v] += one->rope[0].var[i] * dcap[j];
			}
			wzc_codec_free(c);
		}
	one->version = 4;
	ok(planned[0] <= one->pos_cap[0] && planned[1] > 2 * one->pos_cap[0],
	   "wz-5.44: the position part planned at %.3g of its cap (version 3: %.3g)",
	   planned[0] / one->pos_cap[0], planned[1] / one->pos_cap[0]);
	one->version = 3;
	size_t n3 = 0;
	p = NULL;
	ok(!wzc_profile_serialize(one, &b, &n3, &d) && n3 == n - 4 * (size_t)one->L &&
		   !wzc_profile_parse(b, n3, "v3", &p, &d) && p->version == 3 && p->pos_cap[0] == 0,
	   "version 3: no position caps written, none read");
	wzc_profile_free(p);
	free(b);
	one->version = WZC_PROFILE_VERSION;
}

/* A profile of several of the pieces a file is read in (4 layers x
 * (512 + 64): 4.4 MB), hashed and checked piece by piece as it arrives:
 * read equals parsed; a NaN in the last layer, across a piece boundary,
 * is refused naming its layer; left unresealed, the checksum mismatch is
 * what is said, as when the whole file was hashed first. */
static void read_in_pieces(void)
{
	const int L = 4, R = 512, P = 64;
	wz_diag d;
	wzc_profile *p = synthetic(L, R, P, "pieces"), *viewed = NULL, *copied = NULL;
	if (!ok(p != NULL, "a 4-layer profile"))
		return;
	uint8_t *b;
	size_t n;
	char path[] = "test-profile-pieces-XXXXXX";
	int fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
	b = NULL;
	n = 0;
	int made = fd >= 0 && !wzc_profile_serialize(p, &b, &n, &d);
	if (!ok(made && n > 8 * WZ_READ_PIECE && !wz_write_file_atomic(path, b, n, &d),
		"written (%zu bytes, %zu pieces)", n, n / WZ_READ_PIECE + 1)) {
		free(b);
		wzc_profile_free(p);
		return;
	}
	ok(!wzc_profile_read(path, &viewed, &d) && !wzc_profile_parse(b, n, "copy", &copied, &d) &&
		   same_profile(viewed, copied) && same_profile(viewed, p),
	   "read in pieces, parsed whole and written: the same values");
	wzc_profile_free(viewed);
	wzc_profile_free(copied);
	/* the last layer's latent basis, whose bytes straddle a piece boundary */
	size_t last = n - 8 - (size_t)(4 * (1 + R * R + 5 * R + WZC_HIST_BINS) + 4 * (1 + P * P + 5 * P + WZC_HIST_BINS));
	size_t at = (last / WZ_READ_PIECE + 1) * WZ_READ_PIECE;
	ok(at > last + 4 * (1 + (size_t)R) && at < last + 4 * (1 + (size_t)R + (size_t)R * R),
	   "a piece boundary inside the last layer's basis");
	uint32_t nan = 0x7fc00000u;
	memcpy(b + at, &nan, 4);
	wzc_profile *q = NULL;
	wz_err e = wz_write_file_atomic(path, b, n, &d) ? WZ_OK : wzc_profile_read(path, &q, &d);
	ok(e == WZ_ERR_CORRUPT && !q && strstr(d.msg, "checksum mismatch"),
	   "a NaN without the checksum resealed: %s", e ? d.msg : "(read)");
	wzc_profile_free(q);
	q = NULL;
	e = write_resealed(path, b, n) ? WZ_OK : wzc_profile_read(path, &q, &d);
	ok(e == WZ_ERR_CORRUPT && !q && strstr(d.msg, "layer 3, latent part"),
	   "a NaN resealed, across a piece boundary: %s", e ? d.msg : "(read)");
	wzc_profile_free(q);
	unlink(path);
	free(b);
	wzc_profile_free(p);
}

int main(void)
{
	const char *src = getenv("srcdir");
	char path[512];
	snprintf(path, sizeof path, "%s/tests/codec/golden/tiny.wzp", src ? src : ".");
	read_as_views(path);
	read_in_pieces();
	layers_on_first_use();
	return tap_done();
}
