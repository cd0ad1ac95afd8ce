/* Writes the seed corpus of the wz decoder's fuzz target: small profiles
 * prepared from random windows, each followed by records encoded with it,
 * plus a few broken variants.  Usage: make_wz_decode_corpus DIR.  With
 * --v5 DIR it adds version 5 seeds (v5-*) beside the valid-N ones: their
 * profiles written again as version 5 (a checksum per layer), the same
 * records, and a layer's byte flipped and the file truncated.  With --v6
 * DIR it adds version 6 seeds (v6-*): the same profiles undoing RoPE
 * (every layer's pairs given frequencies), the same records, a frequency
 * made negative (checksums made right, so the value check finds it) and
 * the file truncated.  Built by
 * hand (it is not part of the build):
 *   cc -I. -Ibuild tests/fuzz/make_wz_decode_corpus.c build/libwzcodec.a \
 *      build/libwzcommon.a -lxxhash -lm */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "common/wz_io.h"

static uint64_t state = 42;
static double gauss(void)
{
	state = state * 6364136223846793005ull + 1442695040888963407ull;
	double u1 = ((state >> 11) + 0.5) / 9007199254740992.0;
	state = state * 6364136223846793005ull + 1442695040888963407ull;
	double u2 = ((state >> 11) + 0.5) / 9007199254740992.0;
	return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

static void emit(const char *dir, const char *name, uint8_t rate, const uint8_t *prof, size_t n,
		 const uint8_t *rec, size_t nrec)
{
	size_t total = 5 + n + nrec;
	uint8_t *b = malloc(total);
	b[0] = rate;
	for (int i = 0; i < 4; i++)
		b[1 + i] = (uint8_t)(n >> (8 * i));
	memcpy(b + 5, prof, n);
	memcpy(b + 5 + n, rec, nrec);
	char *path = wz_path_join(dir, name);
	wz_write_file_atomic(path, b, total, NULL);
	free(path);
	free(b);
}

/* The valid-s seed of dir: its bytes (*data, n of them, the caller frees
 * them), its profile parsed (pn bytes of it); NULL when it cannot be read. */
static wzc_profile *seed_profile(const char *dir, int s, char **data, size_t *n, size_t *pn)
{
	char name[64];
	snprintf(name, sizeof name, "valid-%d", s);
	char *path = wz_path_join(dir, name);
	int bad = wz_read_file(path, 1 << 24, data, n, NULL) != WZ_OK;
	free(path);
	if (bad || *n < 5)
		return NULL;
	const uint8_t *b = (const uint8_t *)*data;
	*pn = (size_t)b[1] | (size_t)b[2] << 8 | (size_t)b[3] << 16 | (size_t)b[4] << 24;
	wzc_profile *prof;
	if (*pn > *n - 5 || wzc_profile_parse(b + 5, *pn, "seed", &prof, NULL))
		return NULL;
	return prof;
}

/* The valid-N seeds' profiles as version 5, records kept. */
static int add_v5(const char *dir)
{
	for (int s = 0; s < 3; s++) {
		char name[64], *data = NULL;
		size_t n, pn;
		wzc_profile *prof = seed_profile(dir, s, &data, &n, &pn);
		if (!prof)
			return 1;
		const uint8_t *b = (const uint8_t *)data;
		uint8_t *pb;
		size_t qn;
		prof->version = 5;
		if (wzc_profile_serialize(prof, &pb, &qn, NULL))
			return 1;
		const uint8_t *rec = b + 5 + pn;
		size_t nrec = n - 5 - pn;
		snprintf(name, sizeof name, "v5-valid-%d", s);
		emit(dir, name, b[0], pb, qn, rec, nrec);
		snprintf(name, sizeof name, "v5-truncated-%d", s);
		emit(dir, name, b[0], pb, qn - 100, rec, 0);
		pb[qn - 200] ^= 0x40; /* in the last layer's position cap or histogram */
		snprintf(name, sizeof name, "v5-flipped-%d", s);
		emit(dir, name, b[0], pb, qn, rec, nrec);
		free(pb);
		wzc_profile_free(prof);
		free(data);
	}
	return 0;
}

/* The valid-N seeds' profiles as version 6 (RoPE undone), records kept. */
static int add_v6(const char *dir)
{
	for (int s = 0; s < 3; s++) {
		char name[64], *data = NULL;
		size_t n, pn;
		wzc_profile *prof = seed_profile(dir, s, &data, &n, &pn);
		if (!prof)
			return 1;
		const uint8_t *b = (const uint8_t *)data;
		uint8_t *pb;
		size_t qn;
		int pairs = prof->P / 2;
		prof->version = 6;
		prof->rope_freq = calloc((size_t)prof->L * (pairs ? pairs : 1), sizeof(double));
		for (int i = 0; i < prof->L * pairs; i++)
			prof->rope_freq[i] = pow(10000, -2.0 * (i % pairs) / prof->P);
		if (wzc_profile_serialize(prof, &pb, &qn, NULL))
			return 1;
		const uint8_t *rec = b + 5 + pn;
		size_t nrec = n - 5 - pn;
		snprintf(name, sizeof name, "v6-valid-%d", s);
		emit(dir, name, b[0], pb, qn, rec, nrec);
		snprintf(name, sizeof name, "v6-truncated-%d", s);
		emit(dir, name, b[0], pb, qn - 100, rec, 0);
		if (pairs) {
			pb[qn - 8 - 1] ^= 0x80; /* the last frequency's sign */
			wzc_profile_reseal(pb, qn);
			snprintf(name, sizeof name, "v6-negative-%d", s);
			emit(dir, name, b[0], pb, qn, rec, nrec);
		}
		free(pb);
		wzc_profile_free(prof);
		free(data);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--v5"))
		return add_v5(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--v6"))
		return add_v6(argv[2]);
	if (argc != 2)
		return 2;
	static const int shapes[][3] = { { 1, 8, 2 }, { 2, 16, 4 }, { 1, 32, 0 } };
	for (int s = 0; s < 3; s++) {
		int L = shapes[s][0], R = shapes[s][1], P = shapes[s][2], T = 64;
		float *lat = malloc(sizeof(float) * L * T * R), *rope = malloc(sizeof(float) * (L * T * P + 1));
		for (int i = 0; i < L * T * R; i++)
			lat[i] = (float)(gauss() * (1 + i % 3));
		for (int i = 0; i < L * T * P; i++)
			rope[i] = (float)gauss();
		wzc_window w = { .L = L, .T = T, .R = R, .P = P, .latent = lat, .rope = rope,
				 .model = "fuzz", .split = "calibration" };
		const wzc_window *wp = &w;
		wzc_profile *prof;
		if (wzc_prepare(&wp, 1, NULL, &prof, NULL))
			return 1;
		uint8_t *pb;
		size_t pn;
		wzc_profile_serialize(prof, &pb, &pn, NULL);
		uint8_t rate = (uint8_t)(16 * (4.5 + s) - 16); /* 4.5, 5.5, 6.5 bits */
		char fname[32];
		snprintf(fname, sizeof fname, "wz-%.4f", 1.0 + rate / 16.0);
		wzc_format f;
		wzc_codec *c;
		wzc_format_parse(fname, &f, NULL);
		wzc_codec_new(&f, L, R, P, prof, &c, NULL);
		size_t rb = wzc_codec_record_bytes(c);
		uint8_t *rec = calloc(rb * L, 1);
		for (int l = 0; l < L; l++)
			wzc_encode_layer(c, l, 1, lat + (size_t)l * T * R, rope + (size_t)l * T * P,
					 rec + rb * l, NULL);
		char name[64];
		snprintf(name, sizeof name, "valid-%d", s);
		emit(argv[1], name, rate, pb, pn, rec, rb * L);
		snprintf(name, sizeof name, "records-ff-%d", s);
		memset(rec, 0xff, rb * L);
		emit(argv[1], name, rate, pb, pn, rec, rb * L);
		snprintf(name, sizeof name, "truncated-%d", s);
		emit(argv[1], name, rate, pb, pn / 2, rec, 0);
		pb[48 + 3] ^= 0x40; /* a flipped bit in the model name area or data */
		snprintf(name, sizeof name, "flipped-%d", s);
		emit(argv[1], name, rate, pb, pn, rec, rb);
		wzc_codec_free(c);
		free(rec);
		free(pb);
		wzc_profile_free(prof);
		free(lat);
		free(rope);
	}
	emit(argv[1], "empty", 0, (const uint8_t *)"", 0, NULL, 0);
	return 0;
}
