/* The educational wzx decoder (tests/codec/edu/wzx_edu.c) on the golden
 * containers of every version and block type: the records it decodes are
 * the committed ones, byte for byte, and a corrupted byte is refused.  The
 * model it is handed (each symbol's table, the record's groups) is read
 * off the library's coder for the golden profile: the one thing the
 * educational decoder does not derive itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/profile/profile.h"
#include "codec/wz/wz_flat.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/wzx_fast32_internal.h"
#include "codec/wzx/wzx_internal.h"
#include "common/wz_io.h"
#include "tests/codec/edu/wzx_edu.h"
#include "tests/tap.h"

/* A table of the library's as cumulative frequencies over M. */
static void table_of(const wzc_rans_table *t, uint32_t M, edu_table *out, uint32_t **keep)
{
	uint32_t *c = malloc(sizeof *c * (t->n + 1));
	for (uint32_t s = 0; s <= t->n; s++)
		c[s] = t->cum ? t->cum[s] : s == t->n ? M : s * t->f;
	out->n = t->n;
	out->cum = *keep = c;
}

typedef struct {
	edu_layer *layers;
	edu_table *tabs;
	uint32_t **owned;
	int nowned, L;
} model;

static void model_free(model *m)
{
	for (int i = 0; i < m->nowned; i++)
		free(m->owned[i]);
	free(m->owned);
	free(m->tabs);
	free(m->layers);
}

/* Layer l's model from the library's coder x. */
static int model_of(wzc_wzx *x, model *m)
{
	wz_diag d;
	int L = wzc_wzx_layers(x), total = 0;
	m->L = L;
	m->layers = calloc((size_t)L, sizeof *m->layers);
	for (int l = 0; l < L; l++) {
		if (wzc_wzx_layer_ready(x, l, &d))
			return -1;
		const wzx_layer *ly = wzc_wzx_layer_at(x, l);
		const fast32 *t = wzc_wzx_fast32_layer(x, l);
		total += 2 * (x->scale_bytes + ly->flat->nentries) + (t ? 2 * t->S : 0);
	}
	m->tabs = calloc((size_t)total + 1, sizeof *m->tabs);
	m->owned = calloc((size_t)total + 1, sizeof *m->owned);
	edu_table *next = m->tabs;
	for (int l = 0; l < L; l++) {
		const wzx_layer *ly = wzc_wzx_layer_at(x, l);
		const wzc_wz_flat *f = ly->flat;
		const fast32 *t = wzc_wzx_fast32_layer(x, l);
		edu_layer *e = &m->layers[l];
		int sb = x->scale_bytes, S3 = sb + f->nentries;
		*e = (edu_layer){ .scale_bytes = sb, .nentries = f->nentries, .ngroups = f->ngroups,
				  .goff = f->goff, .gbits = f->gbits, .gstart = f->gstart,
				  .nlev = f->nlev };
		edu_table *t16 = next, *t12 = next + S3;
		next += 2 * S3;
		for (int j = 0; j < S3; j++) {
			table_of(j < sb ? &x->scale_tab : &ly->etab[j - sb], 1u << 16, &t16[j],
				 &m->owned[m->nowned++]);
			if (ly->type3) {
				t12[j].n = j < sb ? 256 : ly->ecount12[j - sb];
				t12[j].cum = j < sb ? x->cum12_scale : ly->ecum12[j - sb];
			}
		}
		e->tab16 = t16;
		e->tab12 = ly->type3 ? t12 : NULL;
		if (t) {
			e->S = t->S;
			e->src = t->src;
			e->S5 = t->S5;
			e->coded = t->coded;
			for (int j = 0; j < t->S; j++)
				next[j] = (edu_table){ t->cnt[j], t->cum[j] };
			e->place = next;
			next += t->S;
			/* type 6: each place's table at its own precision (a
			 * single-level place is never coded) */
			for (int j = 0; j < t->S; j++)
				next[j] = (edu_table){ t->cnt[j], j < sb		    ? x->cum6_scale
								 : t->src[j] >= 0 ? ly->ecum6[t->src[j]]
										  : t->cum[j] };
			e->place6 = next;
			next += t->S;
		}
	}
	return 0;
}

static void golden(const char *dir, const char *wzx, const char *wzp, const char *rec)
{
	char pc[600], pp[600], pr[600], err[128] = "";
	snprintf(pc, sizeof pc, "%s/%s", dir, wzx);
	snprintf(pp, sizeof pp, "%s/%s", dir, wzp);
	snprintf(pr, sizeof pr, "%s/%s", dir, rec);
	char *cont = NULL, *recs = NULL;
	size_t ncont = 0, nrec = 0;
	wzc_profile *prof = NULL;
	wzc_wzx_reader *r = NULL;
	wzc_wzx *x = NULL;
	wz_diag d;
	model m = { 0 };
	if (!ok(!wz_read_file(pc, 1 << 20, &cont, &ncont, &d) &&
			!wz_read_file(pr, 1 << 20, &recs, &nrec, &d) && !wzc_profile_read(pp, &prof, &d) &&
			!wzc_wzx_open(cont, ncont, wzx, &r, &d) && !wzc_wzx_coder_for(r, prof, &x, &d) &&
			!model_of(x, &m),
		"%s: read, and its model from %s", wzx, wzp))
		goto done;
	int L, T, B;
	uint8_t *got = calloc(nrec + 1, 1);
	int e = edu_wzx_decode((const uint8_t *)cont, ncont, m.layers, m.L, got, nrec, &L, &T, &B, err);
	int types[6] = { 0 };
	for (long i = 0; i < wzc_wzx_reader_info(r)->nblocks; i++)
		types[(uint8_t)cont[wzc_wzx_block_offset(r, i) + 13] % 6]++;
	ok(!e && (size_t)L * T * B == nrec && !memcmp(got, recs, nrec),
	   "%s: the educational decoder gives its %zu bytes of records (%s; blocks raw %d, "
	   "type 1 %d, 2 %d, 3 %d, 4 %d, 5 %d)",
	   wzx, nrec, e ? err : "ok", types[0], types[1], types[2], types[3], types[4], types[5]);
	/* a byte of the last block's payload changed: refused, never decoded */
	size_t at = wzc_wzx_block_offset(r, wzc_wzx_reader_info(r)->nblocks - 1) + 16;
	cont[at] ^= 0x10;
	e = edu_wzx_decode((const uint8_t *)cont, ncont, m.layers, m.L, got, nrec, &L, &T, &B, err);
	ok(e && strstr(err, "checksum"), "%s: a changed payload byte refused (%s)", wzx, err);
	free(got);
done:
	model_free(&m);
	wzc_wzx_free(x);
	wzc_wzx_reader_free(r);
	wzc_profile_free(prof);
	free(cont);
	free(recs);
}

int main(void)
{
	const char *src = getenv("srcdir");
	char dir[512];
	snprintf(dir, sizeof dir, "%s/tests/codec/golden", src ? src : ".");
	static const char *const tiny[] = { "tiny.wzx", "tiny-v2.wzx", "tiny-v3.wzx", "tiny-v4.wzx",
					    "tiny-v5.wzx", "tiny-v6.wzx" };
	for (int v = 0; v < 6; v++)
		golden(dir, tiny[v], "tiny.wzp", "tiny.rec");
	golden(dir, "tiny4-v4.wzx", "tiny4.wzp", "tiny4.rec");
	golden(dir, "tiny4-v5.wzx", "tiny4.wzp", "tiny4.rec");
	golden(dir, "tiny4-v6.wzx", "tiny4.wzp", "tiny4.rec");
	return tap_done();
}
