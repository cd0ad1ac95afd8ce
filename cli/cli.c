/* Error reporting, option parsing and scenario set-up shared by the
 * subcommands (cli.h). */
#include "cli/cli.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/format.h"
#include "common/wz_io.h"
#include "costmodel/catalog.h"
#include "sim/params.h"
#include "sim/weights.h"

int wz_cli_fail(const char *cmd, const wz_diag *diag)
{
	fprintf(stderr, "wzplan %s: %s\n", cmd,
		diag->msg[0] ? diag->msg : wz_strerror(diag->code));
	return wz_exit_status(diag->code);
}

int wz_cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "wzplan %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'wzplan %s --help'.\n", cmd);
	va_end(ap);
	return 2;
}

int wz_cli_bad_option(const char *cmd, int result, char *const *argv)
{
	if (result == ':')
		return wz_cli_usage(cmd, "option %s needs a value", argv[optind - 1]);
	return wz_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
}

void wz_cli_warn(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "wzplan %s: warning: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

int wz_cli_long(const char *cmd, const char *opt, const char *text, long min, long max,
		long *out)
{
	long v;
	if (wz_parse_count(text, &v))
		return wz_cli_usage(cmd, "%s: '%s' is not a whole number", opt, text);
	if (v < min || v > max)
		return wz_cli_usage(cmd, "%s: %ld is not in %ld..%ld", opt, v, min, max);
	*out = v;
	return 0;
}

int wz_cli_double(const char *cmd, const char *opt, const char *text, double min, double max,
		  double *out)
{
	double v;
	if (wz_parse_double(text, &v))
		return wz_cli_usage(cmd, "%s: '%s' is not a number", opt, text);
	if (v < min || v > max)
		return wz_cli_usage(cmd, "%s: %g is not in %g..%g", opt, v, min, max);
	*out = v;
	return 0;
}

int wz_cli_emit(const char *cmd, const char *path, const char *text)
{
	if (!path || !strcmp(path, "-")) {
		if (fputs(text, stdout) == EOF || fflush(stdout) != 0) {
			fprintf(stderr, "wzplan %s: cannot write to standard output\n", cmd);
			return 1;
		}
		return 0;
	}
	wz_diag diag;
	if (wz_write_file_atomic(path, text, strlen(text), &diag))
		return wz_cli_fail(cmd, &diag);
	return 0;
}

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
			return wz_cli_usage(cmd, "--baseline: %s", diag.msg);
		if (!is_baseline && o->formats)
			return wz_cli_usage(cmd, "--formats: %s", diag.msg);
		const char *key = is_baseline ? "baseline_format" : "formats";
		wz_diag at;
		wz_diag_set(&at, diag.code, "%s:%d: %s: %s", wz_kv_origin(s->kv),
			    wz_kv_line(s->kv, key), key, diag.msg);
		return wz_cli_fail(cmd, &at);
	}
	return 0;
}

wz_err wz_cli_resolve_formats(char *const *specs, int n, const char *baseline, int R, int P,
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

const char wz_scenario_opts_help[] =
	"Scenario (defaults from --scenario FILE, or the embedded product-page scenario):\n"
	"  --scenario FILE        read the scenario from FILE (see wzplan-scenario(5))\n"
	"  --catalog DIR          use models.csv, gpus.csv, prices.csv from DIR\n"
	"  --model NAME           model from the catalog, e.g. DeepSeek-V3\n"
	"  --gpu NAME             GPU from the catalog, e.g. 'H100 SXM'\n"
	"  --users N              concurrent users (10000, 10k)\n"
	"  --context TOKENS       context per user (100000, 100k)\n"
	"  --formats LIST         formats to compare: fp8-mix,wz-5.44,int4-g64,iso:1.48,...\n"
	"  --baseline FORMAT      format the savings are measured against (fp8-mix)\n"
	"  --mode M               scaling, memory or both\n"
	"  --baseline-gpus N      scaling mode: GPUs the baseline format needs today\n"
	"  --rounding R           scaling mode: up (buy whole GPUs) or nearest\n"
	"  --gpus-per-replica N   GPUs holding one copy of the weights\n"
	"  --parallelism P        attention-dp or tp (MLA caches are not split by TP)\n"
	"  --mem-util F           share of HBM the engine uses (0.90)\n"
	"  --act-reserve GIB      per-GPU activation reserve in GiB (4)\n"
	"  --weight-bits B        bits per weight (the catalog's by default)\n"
	"  --price-set NAME       prices: a set in prices.csv, or 'catalog' (gpus.csv)\n";

int wz_scenario_opt(wz_scenario_opts *o, int val, const char *arg)
{
	switch (val) {
	case 1000: o->scenario_path = arg; break;
	case 1001: o->catalog_dir = arg; break;
	case 1002: o->model = arg; break;
	case 1003: o->gpu = arg; break;
	case 1004: o->formats = arg; break;
	case 1005: o->baseline = arg; break;
	case 1006: o->mode = arg; break;
	case 1007: o->rounding = arg; break;
	case 1008: o->price_set = arg; break;
	case 1009: o->parallelism = arg; break;
	case 1010: o->users = arg; break;
	case 1011: o->context = arg; break;
	case 1012: o->baseline_gpus = arg; break;
	case 1013: o->gpus_per_replica = arg; break;
	case 1014: o->mem_util = arg; break;
	case 1015: o->act_reserve = arg; break;
	case 1016: o->weight_bits = arg; break;
	default: return -1;
	}
	return 0;
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
			return wz_cli_fail(cmd, &diag);
	if (o->formats && wzm_scenario_set_formats(s, o->formats, &diag))
		return wz_cli_usage(cmd, "--formats: %s", diag.msg);
	if (o->mode && wzm_mode_parse(o->mode, &s->mode, &diag))
		return wz_cli_usage(cmd, "--mode: %s", diag.msg);
	if (o->rounding && wzm_rounding_parse(o->rounding, &s->rounding, &diag))
		return wz_cli_usage(cmd, "--rounding: %s", diag.msg);
	if (o->parallelism && wzm_parallelism_parse(o->parallelism, &s->mem.par, &diag))
		return wz_cli_usage(cmd, "--parallelism: %s", diag.msg);
	if (o->users) {
		double v;
		if (!wz_parse_double(o->users, &v) && v <= 0)
			return wz_cli_usage(cmd, "--users: %s; there must be at least one user", o->users);
		if ((rc = wz_cli_long(cmd, "--users", o->users, 1, 1000000000L, &s->users)))
			return rc;
	}
	if (o->context && (rc = wz_cli_long(cmd, "--context", o->context, 1, 1000000000L, &s->context)))
		return rc;
	if (o->baseline_gpus &&
	    (rc = wz_cli_long(cmd, "--baseline-gpus", o->baseline_gpus, 1, 100000000L, &s->baseline_gpus)))
		return rc;
	if (o->gpus_per_replica) {
		long v;
		if ((rc = wz_cli_long(cmd, "--gpus-per-replica", o->gpus_per_replica, 1, 4096, &v)))
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
		    (rc = wz_cli_double(cmd, numbers[i].flag, numbers[i].value, r->min, r->max,
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
		return wz_cli_fail(cmd, &diag);
	int rc = 0;
	if (check_scenario_keys((*scn)->kv, &diag))
		rc = wz_cli_fail(cmd, &diag);
	if (!rc)
		rc = apply_overrides(cmd, opts, *scn);
	if (!rc)
		rc = check_format_specs(cmd, opts, *scn);
	if (!rc && wzm_catalog_load(opts->catalog_dir, cat, &diag))
		rc = wz_cli_fail(cmd, &diag);
	if (!rc && wzm_scenario_validate(*scn, &diag))
		rc = wz_cli_fail(cmd, &diag);
	/* The memory mode holds the weights as the simulator does. */
	if (!rc && wzs_scenario_weights(*scn, *cat, &diag))
		rc = wz_cli_fail(cmd, &diag);
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
		return wz_cli_fail(cmd, &diag);
	if (wzm_need(model->kv_lora_rank, model->name, "kv_lora_rank", model->origin, model->line,
		     &diag) ||
	    wzm_need(model->rope_dim, model->name, "rope_dim", model->origin, model->line, &diag))
		return wz_cli_fail(cmd, &diag);
	wzm_format_size *sizes = calloc((size_t)s->nformats, sizeof *sizes);
	if (!sizes) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_cli_fail(cmd, &diag);
	}
	int rc = 0;
	if (wz_cli_resolve_formats(s->formats, s->nformats, s->baseline_format,
				   (int)model->kv_lora_rank, (int)model->rope_dim, sizes, &diag) ||
	    wzm_compare_run(s, cat, sizes, s->nformats, out, &diag))
		rc = wz_cli_fail(cmd, &diag);
	free(sizes);
	if (!rc && out->context_over_limit)
		wz_cli_warn(cmd, "context %ld tokens is beyond %s's limit of %.0f tokens (%s:%d)",
			    s->context, model->name, model->max_context, model->origin, model->line);
	return rc;
}

int wz_cli_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)(n < 1024 ? n : 1024) : 1;
}
