/* Scenario loading and validation (scenario.h). */
#include "costmodel/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_str.h"
#include "data/embedded.h"

const char *const wzm_scenario_keys[] = {
	"name", "model", "gpu", "users", "context", "formats", "baseline_format",
	"baseline_gpus", "mode", "rounding", "price_set", "gpus_per_replica", "parallelism",
	"mem_util", "act_reserve_gib", "weight_bits", NULL
};

static const wzm_scenario_range ranges[] = {
	{ "users", 1, 1e9, 1 },
	{ "context", 1, 1e9, 1 },
	{ "baseline_gpus", 0, 1e8, 1 },
	{ "gpus_per_replica", 1, 4096, 1 },
	{ "mem_util", 0.01, 1, 0 },
	{ "act_reserve_gib", 0, 1e6, 0 },
	{ "weight_bits", 1, 32, 0 },
};

const wzm_scenario_range *wzm_scenario_range_of(const char *key)
{
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
		if (!strcmp(ranges[i].key, key))
			return &ranges[i];
	return NULL;
}

/* Reads a numeric key (absent: *out keeps its value) and checks its range,
 * naming file:line and key. */
static wz_err number_key(wz_kv *kv, const char *key, int required, double *out, wz_diag *diag)
{
	const wzm_scenario_range *r = wzm_scenario_range_of(key);
	const char *text = wz_kv_get(kv, key);
	if (!text || !*text) {
		if (required)
			return wz_kv_get_double(kv, key, 1, 0, out, diag);
		return WZ_OK;
	}
	double v;
	long whole;
	int bad = r->whole ? wz_parse_count(text, &whole) : wz_parse_double(text, &v);
	if (r->whole)
		v = (double)whole;
	if (bad)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: '%.40s' is not %s", wz_kv_origin(kv),
				   wz_kv_line(kv, key), key, text,
				   r->whole ? "a whole number" : "a decimal number");
	if (!(v >= r->min && v <= r->max))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: %s is not in [%g, %g]",
				   wz_kv_origin(kv), wz_kv_line(kv, key), key, text, r->min, r->max);
	*out = v;
	return WZ_OK;
}

static wz_err long_key(wz_kv *kv, const char *key, int required, long *out, wz_diag *diag)
{
	double v = (double)*out;
	wz_err err = number_key(kv, key, required, &v, diag);
	if (!err)
		*out = (long)v;
	return err;
}

wz_err wzm_mode_parse(const char *name, wzm_mode *out, wz_diag *diag)
{
	if (!strcmp(name, "scaling"))
		*out = WZM_MODE_SCALING;
	else if (!strcmp(name, "memory"))
		*out = WZM_MODE_MEMORY;
	else if (!strcmp(name, "both"))
		*out = WZM_MODE_BOTH;
	else
		return wz_diag_set(diag, WZ_ERR_INPUT, "mode '%s': use scaling, memory or both",
				   name);
	return WZ_OK;
}

const char *wzm_mode_name(wzm_mode mode)
{
	switch (mode) {
	case WZM_MODE_SCALING:
		return "scaling";
	case WZM_MODE_MEMORY:
		return "memory";
	default:
		return "both";
	}
}

void wzm_scenario_free(wzm_scenario *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->origin);
	free(s->model);
	free(s->gpu);
	wz_strlist_free(s->formats, s->nformats);
	free(s->baseline_format);
	free(s->price_set);
	wz_kv_free(s->kv);
	free(s);
}

wz_err wzm_scenario_set_string(char **member, const char *value, wz_diag *diag)
{
	char *copy = strdup(value);
	if (!copy)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	free(*member);
	*member = copy;
	return WZ_OK;
}

wz_err wzm_scenario_set_formats(wzm_scenario *s, const char *list, wz_diag *diag)
{
	char **items;
	int n = wz_split_list(list, &items);
	if (n < 0)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	if (n == 0) {
		wz_strlist_free(items, n);
		return wz_diag_set(diag, WZ_ERR_INPUT, "the format list is empty");
	}
	wz_strlist_free(s->formats, s->nformats);
	s->formats = items;
	s->nformats = n;
	return WZ_OK;
}

/* Reads an enumerated key through its parser, prefixing file:line. */
#define PARSE_ENUM(kv, key, fallback, parser, dest)                                          \
	do {                                                                                 \
		const char *v_;                                                              \
		err = wz_kv_get_string(kv, key, 0, fallback, &v_, diag);                     \
		if (!err) {                                                                  \
			wz_diag inner_;                                                      \
			if (parser(v_, dest, &inner_))                                       \
				err = wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s", wz_kv_origin(kv), \
						  wz_kv_line(kv, key), inner_.msg);          \
		}                                                                            \
	} while (0)

wz_err wzm_scenario_from_kv(wz_kv *kv, wzm_scenario **out, wz_diag *diag)
{
	*out = NULL;
	wzm_scenario *s = calloc(1, sizeof *s);
	if (!s) {
		wz_kv_free(kv);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	s->kv = kv;
	wzm_memory_params_default(&s->mem);
	const char *v;
	wz_err err = WZ_OK;
	if (!(s->origin = strdup(wz_kv_origin(kv))))
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
#define STRING_KEY(key, required, fallback, member)                                     \
	if (!err) {                                                                     \
		err = wz_kv_get_string(kv, key, required, fallback, &v, diag);          \
		if (!err && v)                                                          \
			err = wzm_scenario_set_string(&s->member, v, diag);             \
	}
	STRING_KEY("name", 0, "unnamed", name)
	STRING_KEY("model", 1, NULL, model)
	STRING_KEY("gpu", 1, NULL, gpu)
	STRING_KEY("baseline_format", 0, "fp8-mix", baseline_format)
	STRING_KEY("price_set", 0, "catalog", price_set)
#undef STRING_KEY
	if (!err)
		err = long_key(kv, "users", 1, &s->users, diag);
	if (!err)
		err = long_key(kv, "context", 1, &s->context, diag);
	if (!err)
		err = long_key(kv, "baseline_gpus", 0, &s->baseline_gpus, diag);
	if (!err) {
		/* A key given with no format in it ("formats =", "formats = ,") is
		 * a mistake, not a request for the default list. */
		int line = wz_kv_line(kv, "formats");
		err = wz_kv_get_string(kv, "formats", 0, line ? "" : "fp8-mix, wz-5.44", &v, diag);
		if (!err && (err = wzm_scenario_set_formats(s, v, diag)) == WZ_ERR_INPUT)
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: formats: '%s' names no format; list at least one "
					  "(or leave the key out for fp8-mix, wz-5.44)",
					  wz_kv_origin(kv), line, v);
	}
	if (!err)
		PARSE_ENUM(kv, "mode", "memory", wzm_mode_parse, &s->mode);
	if (!err)
		PARSE_ENUM(kv, "rounding", "up", wzm_rounding_parse, &s->rounding);
	if (!err)
		PARSE_ENUM(kv, "parallelism", "attention-dp", wzm_parallelism_parse, &s->mem.par);
	long gpr = s->mem.gpus_per_replica;
	if (!err)
		err = long_key(kv, "gpus_per_replica", 0, &gpr, diag);
	s->mem.gpus_per_replica = (int)gpr;
	if (!err)
		err = number_key(kv, "mem_util", 0, &s->mem.mem_util, diag);
	if (!err)
		err = number_key(kv, "act_reserve_gib", 0, &s->mem.act_reserve_gib, diag);
	if (!err)
		err = number_key(kv, "weight_bits", 0, &s->mem.weight_bits, diag);
	if (err) {
		wzm_scenario_free(s);
		return err;
	}
	*out = s;
	return WZ_OK;
}
#undef PARSE_ENUM

wz_err wzm_scenario_load(const char *path, wzm_scenario **out, wz_diag *diag)
{
	wz_kv *kv;
	wz_err err;
	if (path) {
		err = wz_kv_load(path, &kv, diag);
	} else {
		const char *text = wz_embedded_file("scenarios/" WZM_DEFAULT_SCENARIO ".scenario", NULL);
		if (!text)
			return wz_diag_set(diag, WZ_ERR_INTERNAL, "no embedded default scenario");
		err = wz_kv_parse(text, "embedded:" WZM_DEFAULT_SCENARIO, &kv, diag);
	}
	if (err)
		return err;
	return wzm_scenario_from_kv(kv, out, diag);
}

/* The checks of values taken together name the scenario and the key: its
 * values may come from the file or from flags, so no line is claimed. */
wz_err wzm_scenario_validate(const wzm_scenario *s, wz_diag *diag)
{
	const char *o = s->origin ? s->origin : "scenario";
	if (s->users < 1)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: users: %ld; there must be at least one user",
				   o, s->users);
	if (s->context < 1)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: context: %ld; it must be at least one token", o, s->context);
	if (s->baseline_gpus < 0)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: baseline_gpus: %ld is negative", o,
				   s->baseline_gpus);
	if ((s->mode & WZM_MODE_SCALING) && s->baseline_gpus < 1)
		return wz_diag_set(diag, WZ_ERR_MISSING,
				   "%s: scaling mode needs the baseline fleet: give --baseline-gpus N "
				   "(or baseline_gpus in the scenario)",
				   o);
	int found = 0;
	for (int i = 0; i < s->nformats; i++)
		found |= !strcmp(s->formats[i], s->baseline_format);
	if (!found)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: baseline_format: '%s' must be one of the formats compared",
				   o, s->baseline_format);
	return WZ_OK;
}
