/* Tests of profile version 5 (docs/wz-format.md, "Profile file"): the
 * same values and plan as version 4; read in part, the layers read equal
 * the whole read's and the others are refused by whatever would use them;
 * damage anywhere is found, in a layer when (and only when) that layer is
 * read; versions 1 to 4 read in part are read whole; the golden
 * tiny-v5.wzp. */
#include "tests/tap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/codec.h"
#include "codec/formats/format.h"
#include "codec/profile/profile.h"
#include "codec/profile/profile_cache.h"
#include "common/wz_io.h"
#include "tests/codec/profile_util.h"

/* Where a layer's position part starts in it: after the latent part. */
static size_t part_offset_rope(int R)
{
	return 4 * (1 + (size_t)R * R + 5 * (size_t)R + WZC_HIST_BINS);
}

static int write_file(const char *path, const uint8_t *b, size_t n)
{
	wz_diag d;
	return wz_write_file_atomic(path, b, n, &d) ? -1 : 0;
}

/* want[] of the layers whose bit is set in mask */
static const unsigned char *layers_of(unsigned mask, int L)
{
	static unsigned char want[64];
	for (int l = 0; l < L; l++)
		want[l] = (unsigned char)(mask >> l & 1);
	return want;
}

/* Version 5: the same content as version 4; read in part, the layers read
 * equal the whole read's, those left out are not there (and whatever would
 * use them says so); damage anywhere is found, in a layer when (and only
 * when) that layer is read; versions 1 to 4 read in part are read whole. */
static void version5(void)
{
	enum { L = 4, R = 32, P = 8 };
	wz_diag d;
	wzc_profile *p = synthetic(L, R, P, "v5"), *p4 = NULL, *p5 = NULL, *whole = NULL, *part = NULL;
	uint8_t *b4 = NULL, *b5 = NULL;
	size_t n4 = 0, n5 = 0;
	if (!ok(p && p->version == 5, "a new profile is version 5"))
		return;
	p->version = 4;
	int made = !wzc_profile_serialize(p, &b4, &n4, &d);
	p->version = 5;
	made = made && !wzc_profile_serialize(p, &b5, &n5, &d);
	if (!ok(made && !wzc_profile_parse(b4, n4, "v4", &p4, &d) && !wzc_profile_parse(b5, n5, "v5", &p5, &d),
		"written and parsed as versions 4 and 5"))
		return;
	size_t S = 4 * (2 + (size_t)R * R + 5 * R + WZC_HIST_BINS + (size_t)P * P + 5 * P + WZC_HIST_BINS) + 4;
	size_t H = 48 + 4 + 8 * L; /* "v5": a name of 2 bytes, padded to 4 */
	ok(n5 == H + L * S + 8 && n5 == n4 + 8 * L, "version 5's size: header, directory, %d layers of %zu bytes", L, S);
	p4->version = 5;
	ok(same_profile(p4, p5) && same_profile(p, p5), "version 5 holds what version 4 holds, value for value");
	p4->version = 4;
	uint64_t trailer = 0;
	for (int i = 7; i >= 0; i--)
		trailer = trailer << 8 | b5[n5 - 8 + i];
	ok(trailer == wzc_profile_checksum(b5, H), "the trailing checksum covers the header and directory");

	char path[] = "test-profile-v5-XXXXXX";
	int fd = mkstemp(path);
	if (!ok(fd >= 0 && !write_file(path, b5, n5), "version 5 written to a file"))
		return;
	close(fd);
	uint64_t hw = 0, hp = 1;
	ok(!wzc_profile_read(path, &whole, &d) && same_profile(whole, p) && !whole->loaded,
	   "read whole: the same values, every layer there");
	ok(!wzc_profile_read_layers(path, layers_of(0xa, L), L, &part, &d), "layers 1 and 3 read alone");
	if (whole && part) {
		int same = 1;
		for (int l = 0; l < L; l++) {
			int in = l == 1 || l == 3;
			same &= wzc_profile_has_layer(part, l) == in;
			if (in)
				same &= same_part(&part->latent[l], &whole->latent[l]) &&
					same_part(&part->rope[l], &whole->rope[l]) && part->pos_cap[l] == whole->pos_cap[l];
			else
				same &= !part->latent[l].mean && !part->rope[l].basis;
		}
		ok(same, "the layers read equal the whole read's; the others are not there");
		int hashed = !wzc_profile_hash(whole, &hw, &d) && !wzc_profile_hash(part, &hp, &d);
		ok(hashed && hw == hp && hw == trailer, "the profile's hash known read in part (%016llx), the whole read's", (unsigned long long)hp);
		wz_err e = wzc_profile_need_layer(part, 0, &d);
		ok(e == WZ_ERR_USAGE && strstr(d.msg, "layer 0"), "a layer not read is refused: %s", d.msg);
		uint8_t *again = NULL;
		size_t na = 0;
		e = wzc_profile_serialize(part, &again, &na, &d);
		ok(e == WZ_ERR_USAGE && !again, "a profile read in part is not written: %s", e ? d.msg : "(written)");
		free(again);
		/* a codec on it: the layers read code as on the whole profile, the others refuse */
		wzc_format fmt;
		wzc_codec *cw = NULL, *cp = NULL;
		float lat[4 * R], rope[4 * P];
		for (int i = 0; i < 4 * R; i++)
			lat[i] = 0.1f * (float)(i % 13) - 0.6f;
		for (int i = 0; i < 4 * P; i++)
			rope[i] = 0.2f * (float)(i % 5) - 0.4f;
		if (ok(!wzc_format_parse("wz-5.44", &fmt, &d) && !wzc_codec_new(&fmt, L, R, P, whole, &cw, &d) &&
			       !wzc_codec_new(&fmt, L, R, P, part, &cp, &d),
		       "codecs on the whole profile and on the one read in part")) {
			size_t B = wzc_codec_record_bytes(cw);
			uint8_t *rw = malloc(4 * B), *rp = malloc(4 * B);
			ok(!wzc_encode_layer(cw, 3, 4, lat, rope, rw, &d) && !wzc_encode_layer(cp, 3, 4, lat, rope, rp, &d) &&
				   !memcmp(rw, rp, 4 * B),
			   "layer 3 coded the same on both");
			e = wzc_encode_layer(cp, 2, 4, lat, rope, rp, &d);
			ok(e == WZ_ERR_USAGE && strstr(d.msg, "layer 2"), "layer 2, not read, refuses to code: %s",
			   e ? d.msg : "(coded)");
			/* and to decode, where its values would be zeros */
			float yl[4 * R], yr[4 * P];
			wz_err et = rw ? wzc_decode_token(cp, 2, rw, yl, yr) : WZ_ERR_NOMEM;
			wz_err el = rw ? wzc_decode_layer(cp, 2, 4, rw, yl, yr) : WZ_ERR_NOMEM;
			wz_err e3 = rw ? wzc_decode_token_at(cp, 3, rw, 0, yl, yr) : WZ_ERR_NOMEM;
			ok(et == WZ_ERR_USAGE && el == WZ_ERR_USAGE && !e3,
			   "wz: layer 2 refuses to decode a token (%s) or the layer (%s); layer 3 decodes (%s)",
			   wz_strerror(et), wz_strerror(el), wz_strerror(e3));
			free(rw);
			free(rp);
		}
		wzc_codec *ce = NULL;
		if (ok(!wzc_format_parse("wze-5.0", &fmt, &d) && !wzc_codec_new(&fmt, L, R, P, part, &ce, &d),
		       "a wze codec on the profile read in part")) {
			size_t B = wzc_codec_record_bytes(ce);
			uint8_t *re = malloc(4 * B);
			float yl[4 * R], yr[4 * P];
			wz_err e3 = re ? wzc_encode_layer(ce, 3, 4, lat, rope, re, &d) : WZ_ERR_NOMEM;
			wz_err et = e3 ? e3 : wzc_decode_token(ce, 2, re, yl, yr);
			wz_err el = e3 ? e3 : wzc_decode_layer(ce, 2, 4, re, yl, yr);
			if (!e3)
				e3 = wzc_decode_layer(ce, 3, 4, re, yl, yr);
			ok(et == WZ_ERR_USAGE && el == WZ_ERR_USAGE && !e3,
			   "wze: layer 2 refuses to decode a token (%s) or the layer (%s); layer 3 codes "
			   "and decodes (%s)",
			   wz_strerror(et), wz_strerror(el), wz_strerror(e3));
			free(re);
		}
		wzc_codec_free(ce);
		wzc_codec_free(cw);
		wzc_codec_free(cp);
	}
	wzc_profile_free(part);
	part = NULL;

	/* a flipped bit in each place: found by the whole read, by any read
	 * for the header, directory and trailer, and for a layer by the reads
	 * of that layer only */
	struct {
		size_t at;
		int layer; /* -1: not in a layer */
		const char *what;
	} flip[] = {
		{ 12, -1, "the header's flags" },      { 41, -1, "the header's token count" },
		{ 49, -1, "the model name" },          { 52 + 8 * 2 + 3, -1, "layer 2's directory entry" },
		{ H + 100, 0, "layer 0's latent mean" }, { H + S + 4 * (1 + R) + 77, 1, "layer 1's basis" },
		{ H + 3 * S - 2, 2, "layer 2's position cap" }, { H + 3 * S + S / 2, 3, "layer 3's middle" },
		{ n5 - 3, -1, "the trailing checksum" },
	};
	for (size_t k = 0; k < sizeof flip / sizeof *flip; k++) {
		b5[flip[k].at] ^= 0x10;
		int bad = write_file(path, b5, n5);
		b5[flip[k].at] ^= 0x10;
		wzc_profile *q = NULL;
		wz_err e = bad ? WZ_OK : wzc_profile_read(path, &q, &d);
		int found = e == WZ_ERR_CORRUPT && !q && strstr(d.msg, "checksum mismatch");
		wzc_profile_free(q);
		char says[sizeof d.msg];
		snprintf(says, sizeof says, "%s", e ? d.msg : "(read)");
		int each = 1;
		for (int l = 0; l < L; l++) {
			q = NULL;
			e = wzc_profile_read_layers(path, layers_of(1u << l, L), L, &q, &d);
			int should = flip[k].layer < 0 || flip[k].layer == l;
			char named[32];
			snprintf(named, sizeof named, "layer %d: checksum", l);
			each &= should ? e == WZ_ERR_CORRUPT && !q &&
						 (flip[k].layer < 0 ? strstr(d.msg, "checksum mismatch") != NULL
								    : strstr(d.msg, named) != NULL)
				       : e == WZ_OK && q && wzc_profile_has_layer(q, l);
			wzc_profile_free(q);
		}
		ok(found && each, "%s flipped: found read whole (%s) and by each read of one layer it touches", flip[k].what,
		   says);
	}

	/* damaged and resealed: the value checks, in the layer read */
	{
		uint8_t *c = malloc(n5);
		memcpy(c, b5, n5);
		uint32_t nan = 0x7fc00000u;
		memcpy(c + H + 2 * S + part_offset_rope(R) + 4 * (1 + 3), &nan, 4);
		wzc_profile_reseal(c, n5);
		wzc_profile *q = NULL;
		wz_err e = write_file(path, c, n5) ? WZ_OK : wzc_profile_read(path, &q, &d);
		ok(e == WZ_ERR_CORRUPT && !q && strstr(d.msg, "layer 2, position part"), "a NaN resealed, read whole: %s",
		   e ? d.msg : "(read)");
		wzc_profile_free(q);
		q = NULL;
		e = wzc_profile_read_layers(path, layers_of(0x4, L), L, &q, &d);
		ok(e == WZ_ERR_CORRUPT && !q && strstr(d.msg, "layer 2, position part"), "read with layer 2: %s",
		   e ? d.msg : "(read)");
		wzc_profile_free(q);
		q = NULL;
		ok(!wzc_profile_read_layers(path, layers_of(0xb, L), L, &q, &d) && q, "read without layer 2: fine");
		wzc_profile_free(q);
		free(c);
	}

	/* truncated anywhere: refused, read whole or in part */
	size_t cut[] = { n5 - 1, n5 - 100, H + S + 5, H + 4, 40, 0 };
	int refused = 1;
	for (size_t k = 0; k < sizeof cut / sizeof *cut; k++) {
		if (write_file(path, b5, cut[k])) {
			refused = 0;
			continue;
		}
		wzc_profile *q = NULL;
		refused &= wzc_profile_read(path, &q, &d) != WZ_OK && !q;
		wzc_profile_free(q);
		q = NULL;
		refused &= wzc_profile_read_layers(path, layers_of(0x1, L), L, &q, &d) != WZ_OK && !q;
		wzc_profile_free(q);
	}
	ok(refused, "truncated to any of %zu sizes: refused, read whole and in part (%s)", sizeof cut / sizeof *cut, d.msg);

	/* versions 1 to 4 read in part: read whole, every layer there */
	int old = 1;
	for (int v = 1; v <= 4; v++) {
		uint8_t *bv = NULL;
		size_t nv = 0;
		wzc_profile *q = NULL;
		p->version = v;
		old &= !wzc_profile_serialize(p, &bv, &nv, &d) && !write_file(path, bv, nv) &&
		       !wzc_profile_read_layers(path, layers_of(0x2, L), L, &q, &d) && q && q->version == v && !q->loaded;
		if (q) {
			q->version = 5;
			old &= same_profile(q, p5) || v < 4; /* versions 1 to 3 have no caps */
			for (int l = 0; l < L; l++)
				old &= same_part(&q->latent[l], &p5->latent[l]) && same_part(&q->rope[l], &p5->rope[l]);
		}
		wzc_profile_free(q);
		free(bv);
	}
	p->version = 5;
	ok(old, "versions 1 to 4 read in part: read whole, the same values");
	unlink(path);
	free(b4);
	free(b5);
	wzc_profile_free(p);
	wzc_profile_free(p4);
	wzc_profile_free(p5);
	wzc_profile_free(whole);
}

/* tiny-v5.wzp: tiny.wzp's values written as version 5, on purpose when
 * version 5 came (WZ_PROFILE_GOLDEN_WRITE=DIR writes it again).  It reads,
 * whole and in part, to tiny.wzp's values, and writing them as version 5
 * gives its bytes: the layout cannot drift unnoticed. */
static void golden5(const char *dir)
{
	const char *gdir = getenv("WZ_PROFILE_GOLDEN_WRITE");
	char p1[600], p5[600];
	snprintf(p1, sizeof p1, "%s/tiny.wzp", dir);
	snprintf(p5, sizeof p5, "%s/tiny-v5.wzp", gdir ? gdir : dir);
	wz_diag d;
	wzc_profile *one = NULL, *five = NULL, *part = NULL;
	uint8_t *b = NULL;
	char *g = NULL;
	size_t n = 0, ng = 0;
	if (!ok(!wzc_profile_read(p1, &one, &d), "golden: tiny.wzp read"))
		return;
	one->version = 5;
	if (!ok(!wzc_profile_serialize(one, &b, &n, &d), "golden: tiny.wzp's values as version 5"))
		return;
	if (gdir)
		ok(!wz_write_file_atomic(p5, b, n, &d), "golden: %s written", p5);
	if (ok(!wz_read_file(p5, 1 << 26, &g, &ng, &d) && !wzc_profile_read(p5, &five, &d) &&
		       !wzc_profile_read_layers(p5, (const unsigned char *)"\1", 1, &part, &d),
	       "golden: tiny-v5.wzp read, whole and its layer alone")) {
		ok(ng == n && !memcmp(g, b, n), "golden: written as version 5 again, its bytes (%zu)", n);
		ok(five->version == 5 && same_profile(five, one) && same_profile(part, one),
		   "golden: tiny-v5.wzp holds tiny.wzp's values");
	}
	free(g);
	free(b);
	wzc_profile_free(one);
	wzc_profile_free(five);
	wzc_profile_free(part);
}

int main(void)
{
	const char *src = getenv("srcdir");
	char path[512];
	snprintf(path, sizeof path, "%s/tests/codec/golden", src ? src : ".");
	golden5(path);
	version5();
	return tap_done();
}
