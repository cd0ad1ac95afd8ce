/* Sweep files: parsing, expansion into points and point ids (sweep.h;
 * format in wzplan-sweep(5)). */
#include "sweep/sweep.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_io.h"
#include "common/wz_kv.h"
#include "common/wz_str.h"
#include "costmodel/catalog.h"
#include "costmodel/scenario.h"
#include "data/embedded.h"
#include "sim/params.h"
#include "sim/weights.h"

/* More points than this is a typing mistake, not a sweep. */
#define MAX_POINTS 1000000L
/* Values of one axis: each is checked as a scenario value (about 0.2 ms),
 * and a range of 10^5 or more is a factor or a step mistyped, not a plan. */
#define MAX_AXIS_VALUES 10000L

static int scenario_key(const char *key)
{
	const char *const *lists[] = { wzm_scenario_keys, wzs_scenario_keys };
	for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
		for (const char *const *k = lists[l]; *k; k++)
			if (!strcmp(*k, key))
				return strcmp(key, "name") != 0;
	return 0;
}

static int run_key(const char *key)
{
	return !strcmp(key, WZSW_KEY_SIMULATE) || !strcmp(key, WZSW_KEY_MAX_REPLICAS) ||
	       !strcmp(key, WZSW_KEY_TRAFFIC);
}

void wzsw_free(wzsw_sweep *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nparams; i++)
		free(s->params[i].key), free(s->params[i].value);
	for (int i = 0; i < s->naxes; i++) {
		free(s->axes[i].key);
		wz_strlist_free(s->axes[i].values, s->axes[i].nvalues);
	}
	free(s->params), free(s->axes);
	free(s->name), free(s->origin), free(s->dir), free(s->scenario_path);
	free(s->catalog_dir), free(s->base_text), free(s->base_origin), free(s->catalog_hash);
	free(s);
}

/* A path in the sweep file, relative to the file's folder. */
static char *resolve(const wzsw_sweep *s, const char *path)
{
	wz_buf b = { 0 };
	if (path[0] != '/' && strcmp(s->dir, "."))
		wz_buf_printf(&b, "%s/", s->dir);
	wz_buf_puts(&b, path);
	return wz_buf_take(&b);
}

static wz_err push_value(wzsw_axis *ax, const char *text, wz_diag *diag)
{
	char **p = realloc(ax->values, (size_t)(ax->nvalues + 1) * sizeof *p);
	if (!p)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	ax->values = p;
	if (!(p[ax->nvalues] = strdup(text)))
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	ax->nvalues++;
	return WZ_OK;
}

/* "A .. B step S" (arithmetic) or "A .. B times F" (geometric), both ends
 * included; whole numbers (with k/M suffixes) stay whole, and a value that
 * rounds to the whole number before it is not repeated.  The count of
 * values is worked out, and checked against MAX_AXIS_VALUES, before any is
 * made. */
static wz_err parse_range(const char *origin, wzsw_axis *ax, const char *text, wz_diag *diag)
{
	char a[64], b[64], how[16], by[64];
	const char *dots = strstr(text, "..");
	if (!dots || sscanf(dots + 2, " %63s %15s %63s", b, how, by) != 3 ||
	    (strcmp(how, "step") && strcmp(how, "times")) || (size_t)(dots - text) >= sizeof a)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: axis.%s: '%s' is not a range; write 'A .. B step S' or "
				   "'A .. B times F'",
				   origin, ax->line, ax->key, text);
	memcpy(a, text, (size_t)(dots - text));
	a[dots - text] = '\0';
	char *at = wz_strdup_trim(a);
	if (!at)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	int geometric = !strcmp(how, "times");
	double lo, hi, d;
	long llo, lhi, ld;
	/* Whole ends give whole values; a geometric factor is a ratio, never
	 * a count (1.5 is a factor of whole values as well as 2 is). */
	int whole = !wz_parse_count(at, &llo) && !wz_parse_count(b, &lhi) &&
		    (geometric || !wz_parse_count(by, &ld));
	int bad = whole ? 0 : (wz_parse_double(at, &lo) || wz_parse_double(b, &hi));
	if (whole)
		lo = (double)llo, hi = (double)lhi;
	if (whole && !geometric)
		d = (double)ld;
	else
		bad |= wz_parse_double(by, &d) != 0;
	free(at);
	if (bad || hi < lo || (geometric ? (!(d > 1) || !(lo > 0)) : !(d > 0)))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: axis.%s: range '%s' needs numbers A <= B and %s", origin,
				   ax->line, ax->key, text,
				   geometric ? "A > 0 and a factor F > 1" : "a step S > 0");
	double steps = geometric ? floor(log(hi / lo) / log(d) + 1e-9) : floor((hi - lo) / d + 1e-9);
	if (!(steps + 1 <= MAX_AXIS_VALUES))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: axis.%s: range '%s' makes %.4g values (at most %ld an "
				   "axis); use a larger %s",
				   origin, ax->line, ax->key, text, steps + 1, MAX_AXIS_VALUES,
				   geometric ? "factor" : "step");
	for (long i = 0; i <= (long)steps; i++) {
		double v = geometric ? lo * pow(d, (double)i) : lo + (double)i * d;
		if (v > hi * (1 + 1e-12))
			v = hi;
		char num[64];
		if (whole)
			snprintf(num, sizeof num, "%ld", (long)(v + 0.5));
		else
			snprintf(num, sizeof num, "%.10g", v);
		if (ax->nvalues && !strcmp(ax->values[ax->nvalues - 1], num))
			continue;
		wz_err err = push_value(ax, num, diag);
		if (err)
			return err;
	}
	return WZ_OK;
}

static wz_err parse_axis(const char *origin, wzsw_axis *ax, const char *text, wz_diag *diag)
{
	if (strstr(text, ".."))
		return parse_range(origin, ax, text, diag);
	const char *p = text;
	for (;;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		char *raw = strndup(p, len), *v = raw ? wz_strdup_trim(raw) : NULL;
		free(raw);
		if (!v)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		wz_err err = !*v ? wz_diag_set(diag, WZ_ERR_INPUT,
					       "%s:%d: axis.%s: an empty value; separate values with '|'",
					       origin, ax->line, ax->key)
			     : ax->nvalues >= MAX_AXIS_VALUES
				     ? wz_diag_set(diag, WZ_ERR_INPUT,
						   "%s:%d: axis.%s: more than %ld values", origin,
						   ax->line, ax->key, MAX_AXIS_VALUES)
				     : push_value(ax, v, diag);
		free(v);
		if (err)
			return err;
		if (!bar)
			break;
		p = bar + 1;
	}
	for (int i = 0; i < ax->nvalues; i++)
		for (int j = 0; j < i; j++)
			if (!strcmp(ax->values[i], ax->values[j]))
				return wz_diag_set(diag, WZ_ERR_INPUT,
						   "%s:%d: axis.%s: value '%s' given twice", origin,
						   ax->line, ax->key, ax->values[i]);
	return WZ_OK;
}

static int valid_name(const char *name)
{
	if (!*name)
		return 0;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '-' || *c == '_' || *c == '.'))
			return 0;
	return 1;
}

static wz_err hash_catalogs(wzsw_sweep *s, wz_diag *diag)
{
	static const char *const names[] = { "models.csv", "gpus.csv", "prices.csv" };
	wz_buf all = { 0 };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char hex[17];
		if (s->catalog_dir) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", s->catalog_dir, names[i]);
			wz_err err = wz_hash_file(path, hex, NULL, diag);
			if (err) {
				wz_buf_free(&all);
				return err;
			}
		} else {
			size_t len = 0;
			const char *text = wz_embedded_file(names[i], &len);
			snprintf(hex, sizeof hex, "%016" PRIx64, text ? wz_hash_bytes(text, len) : 0);
		}
		wz_buf_printf(&all, "%s=%s\n", names[i], hex);
	}
	char hex[17];
	snprintf(hex, sizeof hex, "%016" PRIx64, wz_hash_bytes(all.data, all.len));
	wz_buf_free(&all);
	if (!(s->catalog_hash = strdup(hex)))
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	return WZ_OK;
}

static wz_err load_base(wzsw_sweep *s, wz_diag *diag)
{
	if (s->scenario_path) {
		size_t len;
		wz_err err = wz_read_file(s->scenario_path, 1 << 20, &s->base_text, &len, diag);
		if (err)
			return err;
		s->base_origin = strdup(s->scenario_path);
	} else {
		const char *text = wz_embedded_file("scenarios/" WZM_DEFAULT_SCENARIO ".scenario", NULL);
		if (!text)
			return wz_diag_set(diag, WZ_ERR_INTERNAL, "the embedded scenario is missing");
		s->base_text = strdup(text);
		s->base_origin = strdup("embedded:" WZM_DEFAULT_SCENARIO);
	}
	if (!s->base_text || !s->base_origin)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	wz_kv *kv;
	wz_err err = wz_kv_parse(s->base_text, s->base_origin, &kv, diag);
	if (err)
		return err;
	for (int i = 0; i < wz_kv_count(kv) && !err; i++)
		if (strcmp(wz_kv_key(kv, i), "name") && !scenario_key(wz_kv_key(kv, i)))
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: unknown key '%s' (see wzplan-scenario(5))",
					  s->base_origin, wz_kv_line_at(kv, i), wz_kv_key(kv, i));
	wz_kv_free(kv);
	return err;
}

static const wzsw_param *find_param(const wzsw_sweep *s, const char *key)
{
	for (int i = 0; i < s->nparams; i++)
		if (!strcmp(s->params[i].key, key))
			return &s->params[i];
	return NULL;
}

static const wzsw_axis *find_axis(const wzsw_sweep *s, const char *key)
{
	for (int i = 0; i < s->naxes; i++)
		if (!strcmp(s->axes[i].key, key))
			return &s->axes[i];
	return NULL;
}

/* Reads one line of the sweep file into s. */
static wz_err take_line(wzsw_sweep *s, const char *key, const char *value, int line,
			wz_diag *diag)
{
	const char *o = s->origin;
	if (!strcmp(key, "sweep")) {
		if (!valid_name(value) || strlen(value) > 64)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: sweep: '%s' is not a sweep id (1 to 64 of A-Z a-z "
					   "0-9 . _ -)", o, line, value);
		return (s->name = strdup(value)) ? WZ_OK : wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	if (!strcmp(key, "scenario") || !strcmp(key, "catalog")) {
		char **dest = !strcmp(key, "scenario") ? &s->scenario_path : &s->catalog_dir;
		return (*dest = resolve(s, value)) ? WZ_OK : wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	int is_axis = !strncmp(key, "axis.", 5), is_set = !strncmp(key, "set.", 4);
	const char *param = is_axis ? key + 5 : is_set ? key + 4 : key;
	int known = run_key(param) ? !is_set : (is_axis || is_set) && scenario_key(param);
	if (!known)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: unknown key '%s' (sweep, scenario, catalog, simulate, "
				   "max_replicas, traffic, set.KEY, axis.KEY; see wzplan-sweep(5))",
				   o, line, key);
	if (find_param(s, param) || find_axis(s, param))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: %s: the parameter '%s' is already given (line %d)", o, line,
				   key, param,
				   find_param(s, param) ? find_param(s, param)->line
							: find_axis(s, param)->line);
	if (!is_axis) {
		wzsw_param *p = realloc(s->params, (size_t)(s->nparams + 1) * sizeof *p);
		if (!p)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		s->params = p;
		p = &s->params[s->nparams++];
		memset(p, 0, sizeof *p);
		p->line = line;
		if (!(p->key = strdup(param)) || !(p->value = strdup(value)))
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		return WZ_OK;
	}
	wzsw_axis *ax = realloc(s->axes, (size_t)(s->naxes + 1) * sizeof *ax);
	if (!ax)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	s->axes = ax;
	ax = &s->axes[s->naxes++];
	memset(ax, 0, sizeof *ax);
	ax->line = line;
	if (!(ax->key = strdup(param)))
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	return parse_axis(o, ax, value, diag);
}

/* Checks a run parameter's value (simulate, max_replicas, traffic). */
static wz_err check_run_value(const wzsw_sweep *s, const char *key, const char *value, int line,
			      const char *what, wz_diag *diag)
{
	if (!strcmp(key, WZSW_KEY_SIMULATE)) {
		if (strcmp(value, "yes") && strcmp(value, "no"))
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: '%s' is not yes or no",
					   s->origin, line, what, value);
	} else if (!strcmp(key, WZSW_KEY_MAX_REPLICAS)) {
		long v;
		if (wz_parse_count(value, &v) || v < 1 || v > 1000000)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: %s: '%s' is not a whole number in 1..1000000",
					   s->origin, line, what, value);
	} else if (!strcmp(key, WZSW_KEY_TRAFFIC)) {
		char *path = resolve(s, value), hex[17];
		wz_diag inner;
		wz_err err = path ? wz_hash_file(path, hex, NULL, &inner) : WZ_ERR_NOMEM;
		free(path);
		if (err)
			return wz_diag_set(diag, err == WZ_ERR_NOMEM ? err : WZ_ERR_INPUT,
					   "%s:%d: %s: %s", s->origin, line, what,
					   err == WZ_ERR_NOMEM ? "out of memory" : inner.msg);
	}
	return WZ_OK;
}

/* A message from checking a generated scenario, without its own origin
 * (the generated text's lines mean nothing to the reader). */
static const char *strip_origin(const char *msg, const char *origin)
{
	size_t n = strlen(origin);
	if (!strncmp(msg, origin, n) && msg[n] == ':') {
		const char *rest = strstr(msg + n + 1, ": ");
		if (rest)
			return rest + 2;
	}
	return msg;
}

#define GENERATED_ORIGIN "sweep point"

/* Checks a scenario text as `cost` and `sim` would read it, with the
 * model and GPU looked up in the catalogs. */
static wz_err check_scenario(const char *text, const wzm_catalog *cat, wz_diag *diag)
{
	wz_kv *kv;
	wz_err err = wz_kv_parse(text, GENERATED_ORIGIN, &kv, diag);
	if (err)
		return err;
	wzs_params params;
	wzs_params_default(&params);
	err = wzs_params_from_kv(kv, &params, diag);
	if (!err)
		err = wzs_params_validate(&params, GENERATED_ORIGIN, diag);
	wzm_scenario *scn = NULL;
	if (!err)
		err = wzm_scenario_from_kv(kv, &scn, diag);
	else
		wz_kv_free(kv);
	if (!err)
		err = wzm_scenario_validate(scn, diag);
	if (!err && !wzm_find_model(cat, scn->model, diag))
		err = WZ_ERR_NOT_FOUND;
	if (!err)
		err = wzs_scenario_weights(scn, cat, diag);
	const wzm_gpu *gpu = NULL;
	if (!err && !(gpu = wzm_find_gpu(cat, scn->gpu, diag)))
		err = WZ_ERR_NOT_FOUND;
	wzm_rates rates;
	if (!err)
		err = wzm_find_rates(cat, scn->price_set, gpu, &rates, diag);
	wzm_scenario_free(scn);
	return err;
}

/* The base scenario with keys[i] set to values[i] (scenario keys only). */
static wz_err build_scenario(const wzsw_sweep *s, char *const *keys, char *const *values, int n,
			     const char *name, char **out, wz_diag *diag)
{
	*out = NULL;
	wz_kv *kv;
	wz_err err = wz_kv_parse(s->base_text, s->base_origin, &kv, diag);
	if (err)
		return err;
	wz_buf b = { 0 };
	wz_buf_printf(&b, "name = %s\n", name);
	for (int i = 0; i < wz_kv_count(kv); i++) {
		const char *key = wz_kv_key(kv, i), *value = wz_kv_value_at(kv, i);
		if (!strcmp(key, "name"))
			continue;
		for (int k = 0; k < n; k++)
			if (!strcmp(keys[k], key))
				value = values[k];
		wz_buf_printf(&b, "%s = %s\n", key, value);
	}
	for (int k = 0; k < n; k++) {
		int in_base = 0;
		for (int i = 0; i < wz_kv_count(kv) && !in_base; i++)
			in_base = !strcmp(wz_kv_key(kv, i), keys[k]);
		if (!in_base && !run_key(keys[k]))
			wz_buf_printf(&b, "%s = %s\n", keys[k], values[k]);
	}
	wz_kv_free(kv);
	if (b.failed) {
		wz_buf_free(&b);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	*out = wz_buf_take(&b);
	return WZ_OK;
}

/* A value as hashed: runs of blanks as one space, none around commas, so
 * "fp8-mix, wz-5.44" and "fp8-mix,wz-5.44" are the same point. */
static void canonical_value(wz_buf *b, const char *v)
{
	int space = 0;
	for (const char *c = v; *c; c++) {
		if (*c == ' ' || *c == '\t') {
			space = 1;
			continue;
		}
		if (space && *c != ',' && b->len && b->data[b->len - 1] != ',' && b->data[b->len - 1] != '=')
			wz_buf_append(b, " ", 1);
		space = 0;
		wz_buf_append(b, c, 1);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The id: XXH3-64 of every parameter of the run (the resolved scenario's
 * keys sorted, catalogs' and traffic file's hashes, simulation settings),
 * never of where the files lie or of the sweep's name. */
static wz_err point_id(const wzsw_sweep *s, wzsw_point *p, wz_diag *diag)
{
	wz_kv *kv;
	wz_err err = wz_kv_parse(p->scenario, GENERATED_ORIGIN, &kv, diag);
	if (err)
		return err;
	int n = wz_kv_count(kv);
	char **lines = calloc((size_t)(n > 0 ? n : 1), sizeof *lines);
	int nl = 0;
	for (int i = 0; lines && i < n; i++) {
		if (!strcmp(wz_kv_key(kv, i), "name"))
			continue;
		wz_buf l = { 0 };
		wz_buf_printf(&l, "%s=", wz_kv_key(kv, i));
		canonical_value(&l, wz_kv_value_at(kv, i));
		lines[nl++] = wz_buf_take(&l);
	}
	wz_kv_free(kv);
	if (!lines)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	qsort(lines, (size_t)nl, sizeof *lines, cmp_str);
	wz_buf b = { 0 };
	wz_buf_printf(&b, "wzplan-sweep-point %d\ncatalogs=%s\n", WZSW_POINT_ID_VERSION,
		      s->catalog_hash);
	for (int i = 0; i < nl; i++)
		wz_buf_printf(&b, "%s\n", lines[i] ? lines[i] : "");
	wz_strlist_free(lines, nl);
	wz_buf_printf(&b, "simulate=%s\n", p->simulate ? "yes" : "no");
	if (p->simulate)
		wz_buf_printf(&b, "max_replicas=%ld\n", p->max_replicas);
	if (p->traffic) {
		char hex[17];
		if ((err = wz_hash_file(p->traffic, hex, NULL, diag))) {
			wz_buf_free(&b);
			return err;
		}
		wz_buf_printf(&b, "traffic=%s\n", hex);
	}
	if (b.failed) {
		wz_buf_free(&b);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	snprintf(p->id, sizeof p->id, "%016" PRIx64, wz_hash_bytes(b.data, b.len));
	wz_buf_free(&b);
	return WZ_OK;
}

void wzsw_point_clear(wzsw_point *p)
{
	wz_strlist_free(p->keys, p->n);
	wz_strlist_free(p->values, p->n);
	free(p->traffic);
	free(p->scenario);
	memset(p, 0, sizeof *p);
}

wz_err wzsw_point_build(const wzsw_sweep *s, long index, wzsw_point *p, wz_diag *diag)
{
	memset(p, 0, sizeof *p);
	if (index < 0 || index >= s->npoints)
		return wz_diag_set(diag, WZ_ERR_RANGE, "%s: no point %ld (the sweep has %ld)",
				   s->origin, index, s->npoints);
	p->index = index;
	p->max_replicas = 100000;
	int n = s->nparams + s->naxes;
	p->keys = calloc((size_t)(n > 0 ? n : 1), sizeof *p->keys);
	p->values = calloc((size_t)(n > 0 ? n : 1), sizeof *p->values);
	if (!p->keys || !p->values) {
		wzsw_point_clear(p);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < s->nparams; i++) {
		p->keys[p->n] = strdup(s->params[i].key);
		p->values[p->n++] = strdup(s->params[i].value);
	}
	/* The odometer: the last axis turns fastest. */
	long rest = index;
	for (int a = s->naxes - 1; a >= 0; a--) {
		const wzsw_axis *ax = &s->axes[a];
		p->keys[s->nparams + a] = strdup(ax->key);
		p->values[s->nparams + a] = strdup(ax->values[rest % ax->nvalues]);
		rest /= ax->nvalues;
	}
	p->n = n;
	wz_err err = WZ_OK;
	for (int i = 0; i < n && !err; i++) {
		if (!p->keys[i] || !p->values[i])
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		else if (!strcmp(p->keys[i], WZSW_KEY_SIMULATE))
			p->simulate = !strcmp(p->values[i], "yes");
		else if (!strcmp(p->keys[i], WZSW_KEY_MAX_REPLICAS))
			wz_parse_count(p->values[i], &p->max_replicas);
		else if (!strcmp(p->keys[i], WZSW_KEY_TRAFFIC) && !(p->traffic = resolve(s, p->values[i])))
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	if (p->traffic)
		p->simulate = 1; /* a replay is a simulation */
	if (!err)
		err = build_scenario(s, p->keys, p->values, n, s->name, &p->scenario, diag);
	if (!err)
		err = point_id(s, p, diag);
	if (!err) {
		/* The name names the point, for reports and `archive show`. */
		char *nl = strchr(p->scenario, '\n');
		wz_buf b = { 0 };
		wz_buf_printf(&b, "name = %s/%s%s", s->name, p->id, nl ? nl : "\n");
		free(p->scenario);
		if (!(p->scenario = wz_buf_take(&b)))
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	if (err)
		wzsw_point_clear(p);
	return err;
}

/* Refuses, before anything runs, values the scenario reader would refuse:
 * first each value alone on the base scenario (the message names its
 * line), then every point whole (for values that only clash together). */
static wz_err check_values(const wzsw_sweep *s, wz_diag *diag)
{
	wzm_catalog *cat;
	wz_err err = wzm_catalog_load(s->catalog_dir, &cat, diag);
	if (err)
		return err;
	wz_diag inner;
	char **keys = calloc((size_t)s->nparams + 1, sizeof *keys);
	char **values = calloc((size_t)s->nparams + 1, sizeof *values);
	if (!keys || !values)
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	for (int a = -1; a < s->naxes && !err; a++) {
		int nv = a < 0 ? s->nparams : s->axes[a].nvalues;
		for (int v = 0; v < nv && !err; v++) {
			const char *key = a < 0 ? s->params[v].key : s->axes[a].key;
			char *value = a < 0 ? s->params[v].value : s->axes[a].values[v];
			int line = a < 0 ? s->params[v].line : s->axes[a].line;
			char what[96];
			snprintf(what, sizeof what, "%s%s", a < 0 ? (run_key(key) ? "" : "set.") : "axis.", key);
			if (run_key(key)) {
				err = check_run_value(s, key, value, line, what, diag);
				continue;
			}
			/* Fixed parameters before this one (for an axis: all of them),
			 * then this value; a fixed value refused there is tried
			 * again with the fixed parameters after it too, since it
			 * may need one of them (serving = disaggregated needs the
			 * pool's size, wherever the file sets it). */
			int nk = 0;
			for (int i = 0; i < (a < 0 ? v : s->nparams); i++)
				if (!run_key(s->params[i].key))
					keys[nk] = s->params[i].key, values[nk++] = s->params[i].value;
			keys[nk] = (char *)key, values[nk++] = value;
			char *text;
			if ((err = build_scenario(s, keys, values, nk, s->name, &text, diag)))
				break;
			int refused = check_scenario(text, cat, &inner) != WZ_OK;
			if (refused && a < 0 && inner.code != WZ_ERR_NOMEM) {
				for (int i = v + 1; i < s->nparams; i++)
					if (!run_key(s->params[i].key))
						keys[nk] = s->params[i].key, values[nk++] = s->params[i].value;
				char *whole;
				wz_diag later;
				if ((err = build_scenario(s, keys, values, nk, s->name, &whole, diag))) {
					free(text);
					break;
				}
				refused = check_scenario(whole, cat, &later) != WZ_OK;
				free(whole);
				/* refused with every fixed line: say why then, which
				 * may be another line's value, not this one's need */
				if (refused)
					inner = later;
			}
			if (refused) {
				err = inner.code == WZ_ERR_NOMEM
					      ? wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory")
					      : wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: value '%s': %s",
							    s->origin, line, what, value,
							    strip_origin(inner.msg, GENERATED_ORIGIN));
			}
			free(text);
		}
	}
	for (long i = 0; i < s->npoints && !err; i++) {
		wzsw_point p;
		if ((err = wzsw_point_build(s, i, &p, diag)))
			break;
		if (check_scenario(p.scenario, cat, &inner)) {
			wz_buf b = { 0 };
			for (int k = 0; k < p.n; k++)
				wz_buf_printf(&b, "%s%s = %s", k ? ", " : "", p.keys[k], p.values[k]);
			err = wz_diag_set(diag, WZ_ERR_INPUT, "%s: point %ld (%s): %s", s->origin, i,
					  b.len ? wz_buf_str(&b) : "the base scenario",
					  strip_origin(inner.msg, GENERATED_ORIGIN));
			wz_buf_free(&b);
		}
		wzsw_point_clear(&p);
	}
	free(keys);
	free(values);
	wzm_catalog_free(cat);
	return err;
}

wz_err wzsw_load(const char *path, wzsw_sweep **out, wz_diag *diag)
{
	*out = NULL;
	wz_kv *kv;
	wz_err err = wz_kv_load(path, &kv, diag);
	if (err)
		return err;
	wzsw_sweep *s = calloc(1, sizeof *s);
	if (!s || !(s->origin = strdup(path)) || !(s->dir = strdup(path))) {
		wz_kv_free(kv);
		wzsw_free(s);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	char *slash = strrchr(s->dir, '/');
	if (slash)
		*(slash == s->dir ? slash + 1 : slash) = '\0';
	else
		strcpy(s->dir, ".");
	for (int i = 0; i < wz_kv_count(kv) && !err; i++)
		err = take_line(s, wz_kv_key(kv, i), wz_kv_value_at(kv, i), wz_kv_line_at(kv, i), diag);
	wz_kv_free(kv);
	if (!err && !s->name)
		err = wz_diag_set(diag, WZ_ERR_INPUT, "%s: no 'sweep = ID' line (see wzplan-sweep(5))",
				  path);
	s->npoints = 1;
	for (int a = 0; a < s->naxes && !err; a++) {
		if (s->npoints > MAX_POINTS / s->axes[a].nvalues)
			err = wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: more than %ld points", path,
					  s->axes[a].line, MAX_POINTS);
		else
			s->npoints *= s->axes[a].nvalues;
	}
	if (!err)
		err = load_base(s, diag);
	if (!err)
		err = hash_catalogs(s, diag);
	if (!err)
		err = check_values(s, diag);
	if (err) {
		wzsw_free(s);
		return err;
	}
	*out = s;
	return WZ_OK;
}

wz_err wzsw_shard_parse(const char *text, long *k, long *n, wz_diag *diag)
{
	const char *slash = strchr(text, '/');
	char left[32];
	if (slash && (size_t)(slash - text) < sizeof left) {
		memcpy(left, text, (size_t)(slash - text));
		left[slash - text] = '\0';
		if (!wz_parse_long(left, k) && !wz_parse_long(slash + 1, n) && *n >= 1 &&
		    *n <= MAX_POINTS && *k >= 1 && *k <= *n)
			return WZ_OK;
	}
	return wz_diag_set(diag, WZ_ERR_INPUT, "--shard: '%s' is not K/N with 1 <= K <= N", text);
}

