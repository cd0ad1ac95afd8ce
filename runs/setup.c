/* Setting a run up: the scenario with the request's overrides, the
 * catalogs, the formats resolved, the cost comparison (setup.h). */
#include "runs/setup.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/formats/format.h"
#include "common/wz_io.h"
#include "runs/say.h"
#include "costmodel/catalog.h"
#include "sim/params.h"
#include "sim/weights.h"

/* One format spec: a codec format name (into *fmt), or iso:X with the
 * ratio X in [1, 16] (into *ratio, with *fmt untouched). */
static wz_err parse_format_spec(const char *spec, wzc_format *fmt, double *ratio, wz_diag *diag)
{
	*ratio = 0;
	if (strncmp(spec, "iso:", 4))
		return wzc_format_parse(spec, fmt, diag);
	if (wz_parse_double(spec + 4, ratio) || !(*ratio >= 1.0 && *ratio <= 16.0))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "format '%s': iso:X needs a ratio X between 1 and 16", spec);
	return WZ_OK;
}

/* A fleet has bytes per token; kept tokens (docs/baselines-fp4.md) make
 * them each session's. */
static wz_err kept_refused(const wzc_format *fmt, wz_diag *diag)
{
	return wz_diag_set(diag, WZ_ERR_INPUT,
			   "format '%s' keeps tokens in bf16, so its bytes per token depend on each "
			   "session's length: size fleets with %s and measure the kept tokens with "
			   "codec measure",
			   fmt->name, wzc_format_unkept(fmt).name);
}

/* Every format spec of the scenario, checked once it is complete, naming
 * the flag or the scenario's file:line that gave the bad one. */
static int check_format_specs(const char *cmd, const wz_scenario_opts *o, const wzm_scenario *s)
{
	wz_diag diag;
	wz_diag_clear(&diag);
	wzc_format fmt;
	double ratio;
	for (int i = 0; i <= s->nformats; i++) {
		int is_baseline = i == s->nformats;
		const char *spec = is_baseline ? s->baseline_format : s->formats[i];
		memset(&fmt, 0, sizeof fmt);
		wz_err err = is_baseline ? wzc_format_parse(spec, &fmt, &diag)
					 : parse_format_spec(spec, &fmt, &ratio, &diag);
		if (!err && fmt.keeps)
			err = kept_refused(&fmt, &diag);
		if (!err)
			continue;
		if (is_baseline && o->baseline)
			return wz_say_usage(cmd, "--baseline: %s", diag.msg);
		if (!is_baseline && o->formats)
			return wz_say_usage(cmd, "--formats: %s", diag.msg);
		const char *key = is_baseline ? "baseline_format" : "formats";
		wz_diag at;
		wz_diag_set(&at, diag.code, "%s:%d: %s: %s", wz_kv_origin(s->kv),
			    wz_kv_line(s->kv, key), key, diag.msg);
		return wz_say_fail(cmd, &at);
	}
	return 0;
}

wz_err wz_resolve_formats(char *const *specs, int n, const char *baseline, int R, int P,
			      wzm_format_size *out, wz_diag *diag)
{
	wzc_format base;
	wz_err err = wzc_format_parse(baseline, &base, diag);
	if (err)
		return err;
	size_t base_bytes = wzc_record_bytes(&base, R, P);
	for (int i = 0; i < n; i++) {
		wzm_format_size *f = &out[i];
		memset(f, 0, sizeof *f);
		snprintf(f->name, sizeof f->name, "%s", specs[i]);
		wzc_format fmt;
		double ratio;
		err = parse_format_spec(specs[i], &fmt, &ratio, diag);
		if (err)
			return err;
		if (ratio > 0) {
			f->record_per_layer = (double)base_bytes / ratio;
			f->bits_per_value = f->record_per_layer * 8.0 / (R + P);
			snprintf(f->label, sizeof f->label, "wz at %s quality (%.2fx fewer bits)",
				 base.name, ratio);
			continue;
		}
		size_t bytes = wzc_record_bytes(&fmt, R, P);
		if (fmt.keeps)
			return kept_refused(&fmt, diag);
		if (bytes == 0)
			return wz_diag_set(diag, WZ_ERR_UNSUPPORTED,
					   "format '%s' cannot hold a %d + %d value record", fmt.name,
					   R, P);
		snprintf(f->name, sizeof f->name, "%s", fmt.name);
		snprintf(f->label, sizeof f->label, "%s", fmt.name);
		f->record_per_layer = (double)bytes;
		f->bits_per_value = wzc_bits_per_value(&fmt, R, P);
	}
	return WZ_OK;
}

static int apply_overrides(const char *cmd, const wz_scenario_opts *o, wzm_scenario *s)
{
	wz_diag diag;
	int rc;
	wz_diag_clear(&diag);
	struct { const char *value; char **member; } strings[] = {
		{ o->model, &s->model }, { o->gpu, &s->gpu }, { o->baseline, &s->baseline_format },
		{ o->price_set, &s->price_set },
	};
	for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
		if (strings[i].value && wzm_scenario_set_string(strings[i].member, strings[i].value, &diag))
			return wz_say_fail(cmd, &diag);
	if (o->formats && wzm_scenario_set_formats(s, o->formats, &diag))
		return wz_say_usage(cmd, "--formats: %s", diag.msg);
	if (o->mode && wzm_mode_parse(o->mode, &s->mode, &diag))
		return wz_say_usage(cmd, "--mode: %s", diag.msg);
	if (o->rounding && wzm_rounding_parse(o->rounding, &s->rounding, &diag))
		return wz_say_usage(cmd, "--rounding: %s", diag.msg);
	if (o->parallelism && wzm_parallelism_parse(o->parallelism, &s->mem.par, &diag))
		return wz_say_usage(cmd, "--parallelism: %s", diag.msg);
	if (o->users) {
		double v;
		if (!wz_parse_double(o->users, &v) && v <= 0)
			return wz_say_usage(cmd, "--users: %s; there must be at least one user", o->users);
		if ((rc = wz_say_long(cmd, "--users", o->users, 1, 1000000000L, &s->users)))
			return rc;
	}
	if (o->context && (rc = wz_say_long(cmd, "--context", o->context, 1, 1000000000L, &s->context)))
		return rc;
	if (o->baseline_gpus &&
	    (rc = wz_say_long(cmd, "--baseline-gpus", o->baseline_gpus, 1, 100000000L, &s->baseline_gpus)))
		return rc;
	if (o->gpus_per_replica) {
		long v;
		if ((rc = wz_say_long(cmd, "--gpus-per-replica", o->gpus_per_replica, 1, 4096, &v)))
			return rc;
		s->mem.gpus_per_replica = (int)v;
	}
	/* The same ranges as the scenario file's keys. */
	struct { const char *value, *flag, *key; double *dest; } numbers[] = {
		{ o->mem_util, "--mem-util", "mem_util", &s->mem.mem_util },
		{ o->act_reserve, "--act-reserve", "act_reserve_gib", &s->mem.act_reserve_gib },
		{ o->weight_bits, "--weight-bits", "weight_bits", &s->mem.weight_bits },
	};
	for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
		const wzm_scenario_range *r = wzm_scenario_range_of(numbers[i].key);
		if (numbers[i].value &&
		    (rc = wz_say_double(cmd, numbers[i].flag, numbers[i].value, r->min, r->max,
					numbers[i].dest)))
			return rc;
	}
	return 0;
}

/* Keys any module reads from a scenario; each module that adds keys adds its
 * list here. */
static const char *const *const scenario_key_lists[] = {
	wzm_scenario_keys,
	wzs_scenario_keys,
	NULL,
};

static wz_err check_scenario_keys(const wz_kv *kv, wz_diag *diag)
{
	for (int i = 0; i < wz_kv_count(kv); i++) {
		int known = 0;
		for (int l = 0; scenario_key_lists[l] && !known; l++)
			for (const char *const *k = scenario_key_lists[l]; *k && !known; k++)
				known = !strcmp(*k, wz_kv_key(kv, i));
		if (!known)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: unknown key '%s' (see wzplan-scenario(5))",
					   wz_kv_origin(kv), wz_kv_line_at(kv, i), wz_kv_key(kv, i));
	}
	return WZ_OK;
}

int wz_scenario_setup(const char *cmd, const wz_scenario_opts *opts, wzm_catalog **cat,
		      wzm_scenario **scn)
{
	wz_diag diag;
	wz_diag_clear(&diag);
	*cat = NULL;
	*scn = NULL;
	if (wzm_scenario_load(opts->scenario_path, scn, &diag))
		return wz_say_fail(cmd, &diag);
	int rc = 0;
	if (check_scenario_keys((*scn)->kv, &diag))
		rc = wz_say_fail(cmd, &diag);
	if (!rc)
		rc = apply_overrides(cmd, opts, *scn);
	if (!rc)
		rc = check_format_specs(cmd, opts, *scn);
	if (!rc && wzm_catalog_load(opts->catalog_dir, cat, &diag))
		rc = wz_say_fail(cmd, &diag);
	if (!rc && wzm_scenario_validate(*scn, &diag))
		rc = wz_say_fail(cmd, &diag);
	/* The memory mode holds the weights as the simulator does. */
	if (!rc && wzs_scenario_weights(*scn, *cat, &diag))
		rc = wz_say_fail(cmd, &diag);
	if (rc) {
		wzm_scenario_free(*scn);
		wzm_catalog_free(*cat);
		*scn = NULL;
		*cat = NULL;
	}
	return rc;
}

int wz_cost_compare(const char *cmd, const wzm_scenario *s, const wzm_catalog *cat,
		    wzm_compare *out)
{
	wz_diag diag;
	wz_diag_clear(&diag);
	const wzm_model *model = wzm_find_model(cat, s->model, &diag);
	if (!model)
		return wz_say_fail(cmd, &diag);
	if (wzm_need(model->kv_lora_rank, model->name, "kv_lora_rank", model->origin, model->line,
		     &diag) ||
	    wzm_need(model->rope_dim, model->name, "rope_dim", model->origin, model->line, &diag))
		return wz_say_fail(cmd, &diag);
	wzm_format_size *sizes = calloc((size_t)s->nformats, sizeof *sizes);
	if (!sizes) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_say_fail(cmd, &diag);
	}
	int rc = 0;
	if (wz_resolve_formats(s->formats, s->nformats, s->baseline_format,
				   (int)model->kv_lora_rank, (int)model->rope_dim, sizes, &diag) ||
	    wzm_compare_run(s, cat, sizes, s->nformats, out, &diag))
		rc = wz_say_fail(cmd, &diag);
	free(sizes);
	if (!rc && out->context_over_limit)
		wz_say_warn(cmd, "context %ld tokens is beyond %s's limit of %.0f tokens (%s:%d)",
			    s->context, model->name, model->max_context, model->origin, model->line);
	return rc;
}

int wz_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)(n < 1024 ? n : 1024) : 1;
}
