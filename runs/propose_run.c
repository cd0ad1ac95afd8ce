/* A propose run's figures and inputs, computed the same way by `propose` and
 * by `verify` (propose.h). */
#include "runs/propose.h"
#include "runs/sim_record.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/wz_io.h"
#include "costmodel/capacity.h"
#include "data/embedded.h"
#include "runs/cost_report.h"
#include "runs/request.h"
#include "runs/schema.h"

static void scenario_figures(wza_run *run, const wzm_scenario *s, const wzm_compare *c)
{
	const char *t = WZ_T_SCENARIO, *r = "scenario";
	wza_run_figure(run, t, r, "name", NAN, s->name);
	wza_run_figure(run, t, r, "model", NAN, c->model->name);
	wza_run_figure(run, t, r, "gpu", NAN, c->gpu->name);
	wza_run_figure(run, t, r, "users", (double)s->users, NULL);
	wza_run_figure(run, t, r, "context", (double)s->context, NULL);
	wza_run_figure(run, t, r, "mode", NAN, wzm_mode_name(s->mode));
	wza_run_figure(run, t, r, "baseline_format", NAN, s->baseline_format);
	wza_run_figure(run, t, r, "baseline_gpus", (double)s->baseline_gpus, NULL);
	wza_run_figure(run, t, r, "gpus_per_replica", (double)s->mem.gpus_per_replica, NULL);
	wza_run_figure(run, t, r, "price_set", NAN, s->price_set);
	wza_run_figure(run, t, r, "reserved_usd_h", c->rates.reserved_usd_h, NULL);
	wza_run_figure(run, t, r, "ondemand_usd_h", c->rates.ondemand_usd_h, NULL);
}

/* The wide cost table, through its JSON rendering so that every column the
 * report has is recorded without a second list of names. */
static wz_err cost_figures(wza_run *run, const wzm_scenario *s, const wzm_compare *c)
{
	wz_buf text = { 0 };
	wz_err err = wz_report_render(s, c, WZP_JSON, &text);
	json_t *root = err ? NULL : json_loads(wz_buf_str(&text), 0, NULL);
	wz_buf_free(&text);
	json_t *rows = json_object_get(root, "rows");
	if (!json_is_array(rows)) {
		json_decref(root);
		return err ? err : WZ_ERR_INTERNAL;
	}
	size_t i;
	json_t *row;
	json_array_foreach(rows, i, row) {
		const char *format = json_string_value(json_object_get(row, "format"));
		const char *key;
		json_t *v;
		json_object_foreach(row, key, v) {
			if (!strcmp(key, "format") || !format)
				continue;
			if (json_is_string(v))
				wza_run_figure(run, WZ_T_COST, format, key, NAN, json_string_value(v));
			else
				wza_run_figure(run, WZ_T_COST, format, key,
					       json_is_number(v) ? json_number_value(v) : NAN, NULL);
		}
	}
	json_decref(root);
	return WZ_OK;
}

static void memory_figures(wza_run *run, const wzm_compare *c)
{
	for (int i = 0; i < c->nrows; i++) {
		const wzm_memory *m = &c->rows[i].memory;
		const char *f = c->rows[i].fmt.name;
		double used = (double)m->users_per_gpu * m->blocks_per_user * m->per_block;
		wza_run_figure(run, WZ_T_MEMORY, f, "hbm", m->hbm / WZM_GIB, NULL);
		wza_run_figure(run, WZ_T_MEMORY, f, "outside_engine", (m->hbm - m->usable) / WZM_GIB,
			       NULL);
		wza_run_figure(run, WZ_T_MEMORY, f, "weights", m->weights / WZM_GIB, NULL);
		wza_run_figure(run, WZ_T_MEMORY, f, "reserve", m->reserve / WZM_GIB, NULL);
		wza_run_figure(run, WZ_T_MEMORY, f, "cache_pool", m->cache / WZM_GIB, NULL);
		wza_run_figure(run, WZ_T_MEMORY, f, "cache_used", used / WZM_GIB, NULL);
		wza_run_figure(run, WZ_T_MEMORY, f, "cache_free", (m->cache - used) / WZM_GIB, NULL);
		wza_run_figure(run, WZ_T_MEMORY, f, "users_per_gpu", (double)m->users_per_gpu, NULL);
	}
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* The memory-mode fleet over a range of contexts: powers of two from 4k
 * tokens to the model's limit, plus the scenario's own context. */
static void context_figures(wza_run *run, const wzm_scenario *s, const wzm_compare *c)
{
	long top = isnan(c->model->max_context) ? 131072 : (long)c->model->max_context;
	if (s->context > top)
		top = s->context;
	long ctx[40];
	int n = 0;
	for (long x = 4096; x <= top && n < 36; x *= 2)
		ctx[n++] = x;
	ctx[n++] = s->context;
	ctx[n++] = top;
	qsort(ctx, (size_t)n, sizeof ctx[0], cmp_long);
	for (int i = 0; i < c->nrows; i++) {
		for (int k = 0; k < n; k++) {
			if (k && ctx[k] == ctx[k - 1])
				continue;
			char col[32];
			snprintf(col, sizeof col, "%ld", ctx[k]);
			wzm_memory m;
			wzm_fleet f;
			double gpus = NAN, users = NAN;
			if (!wzm_memory_compute(c->model, c->gpu, &s->mem, c->rows[i].fmt.record_per_layer,
						ctx[k], &m, NULL)) {
				users = (double)m.users_per_gpu;
				if (m.users_per_replica > 0 &&
				    !wzm_fleet_memory(s->users, m.users_per_replica,
						      s->mem.gpus_per_replica, &f, NULL))
					gpus = (double)f.gpus;
			}
			wza_run_figure(run, WZ_T_GPUS_BY_CONTEXT, c->rows[i].fmt.name, col, gpus, NULL);
			wza_run_figure(run, WZ_T_USERS_BY_CONTEXT, c->rows[i].fmt.name, col, users,
				       NULL);
		}
	}
}

static void fleet_rows(wza_run *run, const wzm_scenario *s, const wzm_compare *c)
{
	for (int i = 0; i < c->nrows; i++) {
		const wzm_compare_row *r = &c->rows[i];
		const wzm_fleet *fl[2] = { &r->scaling, &r->by_memory };
		const char *method[2] = { "scaling", "memory" };
		int on[2] = { (s->mode & WZM_MODE_SCALING) != 0, (s->mode & WZM_MODE_MEMORY) != 0 };
		for (int k = 0; k < 2; k++) {
			if (!on[k])
				continue;
			wza_fleet f = {
				.format = (char *)r->fmt.name, .method = (char *)method[k],
				.gpus = fl[k]->gpus, .replicas = fl[k]->replicas,
				.reserved_usd_year = fl[k]->reserved_usd_year,
				.ondemand_usd_year = fl[k]->ondemand_usd_year,
				.saving_reserved = fl[k]->saving_reserved,
				.saving_ondemand = fl[k]->saving_ondemand,
			};
			wza_run_fleet(run, &f);
		}
	}
}

/* Sizes every format by simulation, with the scenario and catalogs loaded
 * once more through the simulator's set-up (the same files, so the same
 * figures), and records the sizing into run. */
static int simulate(const char *cmd, const wz_propose_opts *o, wza_run *run)
{
	wz_sim_setup setup;
	int rc = wz_sim_setup_load(cmd, &o->scn, &o->sim, &setup);
	if (rc)
		return rc;
	/* a mode the scenario cannot serve is refused before the main sizing */
	if (o->modes.all || o->modes.n)
		rc = wz_propose_modes_check(cmd, o, &setup);
	if (rc) {
		wz_sim_setup_free(&setup);
		return rc;
	}
	wz_size_row *rows = NULL;
	int base = -1;
	rc = wz_size_formats(cmd, &setup, o->max_replicas, o->quiet, &rows, &base);
	if (!rc) {
		wz_sim_record_setup(run, &setup, o->sim.traffic);
		wz_size_record(run, &setup, rows, setup.scn->nformats, base);
	}
	if (!rc && (o->modes.all || o->modes.n))
		rc = wz_propose_modes_run(cmd, o, &setup, rows, run);
	wz_size_rows_free(rows, setup.scn->nformats);
	wz_sim_setup_free(&setup);
	return rc;
}

/* With measured iso-quality bits, the comparison gains a wz format at that
 * rate, so the GPU and cost figures rest on a measurement rather than the
 * product page's input ratio. */
static int add_iso_format(const char *cmd, wza_run *run, const wza_run *codec, wzm_scenario *s,
			  char name[48])
{
	double bits = wz_propose_iso_bits(codec);
	if (codec && codec != run)
		wza_run_figure(run, WZ_T_QUALITY, "source", "codec_run", (double)codec->id, NULL);
	if (isnan(bits))
		return 0;
	snprintf(name, 48, "wz-%.2f", bits);
	for (int i = 0; i < s->nformats; i++)
		if (!strcmp(s->formats[i], name)) {
			name[0] = '\0';
			return 0;
		}
	wz_buf list = { 0 };
	for (int i = 0; i < s->nformats; i++)
		wz_buf_printf(&list, "%s,", s->formats[i]);
	wz_buf_puts(&list, name);
	wz_diag diag;
	wz_err err = list.failed ? wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory")
				 : wzm_scenario_set_formats(s, wz_buf_str(&list), &diag);
	wz_buf_free(&list);
	if (err)
		return wz_say_fail(cmd, &diag);
	char label[96];
	snprintf(label, sizeof label, "wz at measured iso-quality (%.2f bits)", bits);
	wza_run_figure(run, WZ_T_QUALITY, "iso", "bits", bits, NULL);
	wza_run_figure(run, WZ_T_QUALITY, "iso", "format", NAN, name);
	wza_run_figure(run, WZ_T_QUALITY, "iso", "label", NAN, label);
	return 0;
}

static void relabel_iso(const wza_run *run, wzm_compare *c, const char *name)
{
	const wza_figure *label = wza_run_find_figure(run, WZ_T_QUALITY, "iso", "label");
	for (int i = 0; *name && label && i < c->nrows; i++)
		if (!strcmp(c->rows[i].fmt.name, name))
			snprintf(c->rows[i].fmt.label, sizeof c->rows[i].fmt.label, "%s", label->text);
}

int wz_propose_compute(const char *cmd, const wz_propose_opts *o, wza_run *run,
		       wzm_scenario **scn, wzm_catalog **cat, wzm_compare *cmp)
{
	int rc = wz_scenario_setup(cmd, &o->scn, cat, scn);
	if (rc)
		return rc;
	const wza_run *codec = o->codec_loaded;
	if (o->ntraces) {
		rc = wz_propose_measure(cmd, o, run);
		codec = run;
	}
	if (!rc && o->live_kl)
		rc = wz_propose_live_kl(cmd, o->live_kl, run);
	char iso_name[48] = "";
	if (!rc)
		rc = add_iso_format(cmd, run, codec, *scn, iso_name);
	if (!rc)
		rc = wz_cost_compare(cmd, *scn, *cat, cmp);
	if (rc) {
		wzm_scenario_free(*scn);
		wzm_catalog_free(*cat);
		*scn = NULL;
		*cat = NULL;
		return rc;
	}
	relabel_iso(run, cmp, iso_name);
	wz_record_inputs(run, *scn, *cat);
	char *request = wz_request_propose_text(o);
	wz_request_record(run, "propose", request);
	free(request);
	scenario_figures(run, *scn, cmp);
	wz_err err = cost_figures(run, *scn, cmp);
	if ((*scn)->mode & WZM_MODE_MEMORY) {
		memory_figures(run, cmp);
		context_figures(run, *scn, cmp);
	}
	fleet_rows(run, *scn, cmp);
	if (!err && o->simulate && (rc = simulate(cmd, o, run))) {
		wzm_compare_free(cmp);
		wzm_scenario_free(*scn);
		wzm_catalog_free(*cat);
		*scn = NULL;
		*cat = NULL;
		return rc;
	}
	if (err || run->failed) {
		wz_diag diag;
		wz_diag_set(&diag, run->failed ? WZ_ERR_NOMEM : err, "%s",
			    run->failed ? "out of memory" : "cannot tabulate the comparison");
		wzm_compare_free(cmp);
		wzm_scenario_free(*scn);
		wzm_catalog_free(*cat);
		*scn = NULL;
		*cat = NULL;
		return wz_say_fail(cmd, &diag);
	}
	return 0;
}
