/* The wz plan of one layer flattened into one memory block for the GPU
 * kernels (codec/wz/wz_flat.h). */
#include <stdlib.h>
#include <string.h>

#include "codec/codec_internal.h"
#include "codec/wz/wz_flat.h"
#include "codec/wz/wz_plan.h"
#include "codec/wz/wzt_trellis.h"

void wzc_wz_flat_free(wzc_wz_flat *f)
{
	if (!f)
		return;
	free(f->block);
	free(f);
}

/* Carves n elements of size sz from the block at *at (4-byte aligned). */
static void *carve(uint8_t *base, size_t *at, size_t n, size_t sz)
{
	void *p = base + *at;
	*at += (n * sz + 3) & ~(size_t)3;
	return p;
}

wz_err wzc_wz_flatten(const wzc_codec *codec, int layer, wzc_wz_flat **out, wz_diag *diag)
{
	*out = NULL;
	if (!codec->wz || layer < 0 || layer >= codec->L)
		return wz_diag_set(diag, WZ_ERR_USAGE, "flatten: not a wz codec, or no layer %d", layer);
	const wzc_wz_plan *plan = codec->wz;
	const layer_plan *lp;
	wz_err err = wzc_wz_plan_layer_get(plan, layer, &lp, diag);
	if (err)
		return err;
	const wzc_profile *pr = plan->profile;
	/* version 7's prediction needs the decoded latent and the anchored
	 * plan, which the flat plan does not carry yet */
	if (wzc_profile_predicts(pr, layer))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "flatten: layer %d predicts its position part from the latent "
				   "(profile version 7), which the GPU kernels do not decode yet",
				   layer);
	int ng = lp->ngroups, ne = lp->gstart[ng], no = lp->nones, nv = plan->R + plan->P;
	/* a trellis plan's union codebooks go after the scalar tables */
	const wzc_wzt_layer *tl = codec->wzt ? &codec->wzt->layers[layer] : NULL;
	size_t ntab = lp->ntables;
	for (int i = 0; tl && i < ne; i++)
		if (tl->cb[i])
			ntab += 2 * (size_t)lp->dec[i].nlev;
	int undo = wzc_profile_undoes_rope(pr, layer), P = plan->P;
	size_t nrp = undo ? (size_t)P : 0;
	/* the frequencies first: doubles, at the block's start (aligned) */
	size_t sizes[][2] = { { nrp / 2, 8 }, { nrp * nrp, 4 }, { nrp, 4 }, { (size_t)ng, 4 }, { (size_t)ng + 1, 4 }, { (size_t)ne, 4 },
			      { (size_t)ne, 4 }, { (size_t)ne, 4 }, { (size_t)ne, 4 },
			      { (size_t)ne, 4 }, { ntab, 4 }, { (size_t)no, 4 },
			      { (size_t)no, 4 }, { (size_t)no, 4 }, { (size_t)nv, 4 },
			      { 256, 4 }, { (size_t)ne, 4 }, { (size_t)ng, 1 } };
	size_t total = 0;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		total += (sizes[i][0] * sizes[i][1] + 3) & ~(size_t)3;
	wzc_wz_flat *f = calloc(1, sizeof *f);
	uint8_t *b = calloc(1, total ? total : 1);
	if (!f || !b) {
		free(f);
		free(b);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	size_t at = 0;
	double *rfreq = carve(b, &at, nrp / 2, 8);
	float *rbasis = carve(b, &at, nrp * nrp, 4), *rmean = carve(b, &at, nrp, 4);
	uint32_t *goff = carve(b, &at, (size_t)ng, 4);
	int32_t *gstart = carve(b, &at, (size_t)ng + 1, 4);
	int32_t *comp = carve(b, &at, (size_t)ne, 4), *part = carve(b, &at, (size_t)ne, 4);
	uint32_t *nlev = carve(b, &at, (size_t)ne, 4);
	float *sigma = carve(b, &at, (size_t)ne, 4);
	uint32_t *tab = carve(b, &at, (size_t)ne, 4);
	float *tables = carve(b, &at, ntab, 4);
	int32_t *ones = carve(b, &at, (size_t)no, 4);
	float *ones_lev = carve(b, &at, (size_t)no, 4), *ones_sigma = carve(b, &at, (size_t)no, 4);
	float *delta = carve(b, &at, (size_t)nv, 4), *mult = carve(b, &at, 256, 4);
	uint32_t *cbt = carve(b, &at, (size_t)ne, 4);
	uint8_t *gbits = carve(b, &at, (size_t)ng, 1);
	uint32_t off = 8u * (uint32_t)plan->scale_bytes;
	for (int g = 0; g < ng; g++) {
		goff[g] = off;
		off += lp->gbits[g];
		gbits[g] = lp->gbits[g];
	}
	for (int g = 0; g <= ng; g++)
		gstart[g] = lp->gstart[g];
	for (int i = 0; i < ne; i++) {
		const wzc_dec_entry *e = &lp->dec[i];
		comp[i] = e->comp;
		part[i] = e->part;
		nlev[i] = e->nlev;
		sigma[i] = e->sigma;
		tab[i] = (uint32_t)(e->lev - lp->tables);
	}
	if (lp->ntables)
		memcpy(tables, lp->tables, sizeof(float) * lp->ntables);
	size_t next = lp->ntables;
	for (int i = 0; i < ne; i++) {
		cbt[i] = WZC_FLAT_SCALAR;
		if (!tl || !tl->cb[i])
			continue;
		size_t n2 = 2 * (size_t)lp->dec[i].nlev;
		memcpy(tables + next, tl->cb[i], sizeof(float) * n2);
		cbt[i] = (uint32_t)next;
		next += n2;
	}
	for (int i = 0; i < no; i++) {
		int k = lp->ones[i];
		ones[i] = k;
		ones_lev[i] = lp->lev[k][0];
		ones_sigma[i] = lp->sigma[k];
	}
	memcpy(delta, lp->delta[0], sizeof(float) * (size_t)plan->R);
	memcpy(delta + plan->R, lp->delta[1], sizeof(float) * (size_t)plan->P);
	memcpy(mult, plan->scale_mult[0], sizeof(float) * 256);
	if (undo) {
		const wzc_part_profile *rp = &pr->rope[layer];
		memcpy(rfreq, pr->rope_freq + (size_t)layer * (P / 2), sizeof(double) * (nrp / 2));
		memcpy(rbasis, rp->basis, sizeof(float) * nrp * nrp);
		memcpy(rmean, rp->mean, sizeof(float) * nrp);
	}
	*f = (wzc_wz_flat){
		.R = plan->R, .P = plan->P, .nv = nv, .scale_bytes = plan->scale_bytes,
		.record_bytes = (int)plan->record_bytes, .ngroups = ng, .nentries = ne, .nones = no,
		.goff = goff, .gbits = gbits, .gstart = gstart, .comp = comp, .part = part,
		.nlev = nlev, .sigma = sigma, .tab = tab, .tables = tables, .ones = ones,
		.ones_lev = ones_lev, .ones_sigma = ones_sigma, .delta = delta, .scale_mult = mult,
		.scale_ref = { pr->latent[layer].scale_ref, pr->rope[layer].scale_ref },
		.rope_undone = undo, .rope_basis = undo ? rbasis : NULL,
		.rope_mean = undo ? rmean : NULL, .rope_freq = undo ? rfreq : NULL,
		.nu = codec->wzt ? codec->wzt->nu : 0,
		.th0 = codec->wzt ? (uint32_t)(wzt_h0[codec->wzt->nu] >> 1) : 0,
		.th1 = codec->wzt ? (uint32_t)(wzt_h1[codec->wzt->nu] >> 1) : 0, .cbt = cbt,
		.block = b, .block_bytes = total,
	};
	*out = f;
	return WZ_OK;
}
