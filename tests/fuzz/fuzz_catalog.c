/* Fuzz target for the catalog reader: the input is read in turn as the
 * folder's models.csv, gpus.csv, prices.csv and model-layers.csv (the
 * others embedded).  Any bytes are refused with a message naming the file,
 * or give rows whose names are valid and unique (each found by its own
 * name), whose numbers are finite and not negative (or absent), whose
 * prices resolve, and whose models' layer kinds add up to their layers. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_name.h"
#include "costmodel/catalog.h"
#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void need_number(double v)
{
	if (!isnan(v) && !(isfinite(v) && v >= 0))
		abort();
}

static void check_catalog(const wzm_catalog *cat)
{
	wz_diag diag;
	for (int i = 0; i < cat->nmodels; i++) {
		const wzm_model *m = &cat->models[i];
		if (!wz_name_valid(m->name, NULL) || wzm_find_model(cat, m->name, &diag) != m)
			abort();
		const double v[] = { m->layers,         m->kv_lora_rank,   m->rope_dim,
				     m->kv_heads,       m->head_dim,       m->hidden_size,
				     m->params_total_b, m->params_active_b, m->weight_bits,
				     m->max_context };
		for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
			need_number(v[k]);
		/* Sizes are converted to int downstream; none may overflow. */
		if (m->kv_lora_rank > 1e6 || m->rope_dim > 1e6 || m->layers > 1e6)
			abort();
		if (m->weight_bits < 1 || m->params_total_b < m->params_active_b)
			abort();
		double sum = 0;
		for (int k = 0; k < m->nkinds; k++) {
			const wzm_layer_kind *kd = &m->kinds[k];
			if (!(kd->ratio >= 1) || !(kd->entry_nope >= 1) || kd->entry_nope > 1e6)
				abort();
			sum += kd->layers;
		}
		if (m->nkinds && sum != m->layers)
			abort();
	}
	for (int i = 0; i < cat->ngpus; i++) {
		const wzm_gpu *g = &cat->gpus[i];
		if (!wz_name_valid(g->name, NULL) || wzm_find_gpu(cat, g->name, &diag) != g)
			abort();
		const double v[] = { g->hbm_gib,     g->hbm_tbps,  g->bf16_tflops,
				     g->fp8_tflops,  g->nvlink_gbps, g->pcie_gbps,
				     g->price_reserved_usd_h, g->price_ondemand_usd_h };
		for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
			need_number(v[k]);
		wzm_rates rates;
		if (wzm_find_rates(cat, "catalog", g, &rates, &diag) == WZ_OK) {
			need_number(rates.reserved_usd_h);
			need_number(rates.ondemand_usd_h);
		} else if (!diag.msg[0]) {
			abort();
		}
	}
	for (int i = 0; i < cat->nprices; i++) {
		const wzm_price *p = &cat->prices[i];
		if (!wz_name_valid(p->set, NULL) || !wz_name_valid(p->gpu, NULL))
			abort();
		need_number(p->reserved_usd_h);
		need_number(p->ondemand_usd_h);
		const wzm_gpu *g = wzm_find_gpu(cat, p->gpu, &diag);
		wzm_rates rates;
		if (g && wzm_find_rates(cat, p->set, g, &rates, &diag) != WZ_OK && !diag.msg[0])
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const files[] = { "models.csv", "gpus.csv", "prices.csv",
					     "model-layers.csv" };
	for (int k = 0; k < 4; k++) {
		for (int j = 0; j < 4; j++)
			fuzz_unlink(files[j]);
		fuzz_file(files[k], data, size);
		wzm_catalog *cat = NULL;
		wz_diag diag;
		if (wzm_catalog_load(fuzz_dir(), &cat, &diag) != WZ_OK) {
			if (cat || !strstr(diag.msg, files[k]))
				abort();
			continue;
		}
		check_catalog(cat);
		wzm_catalog_free(cat);
	}
	return 0;
}
