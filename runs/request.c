/* Requests as key = value text and back (request.h).  Every text field of
 * a request is written when set, and every number, so that a request read
 * back is the one that ran whatever the defaults become. */
#include "runs/request.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_str.h"

/* The text fields of the scenario and simulator parts, by key. */
typedef struct {
	const char *key;
	size_t offset;
} text_field;

#define SCN(k, m) { k, offsetof(wz_scenario_opts, m) }
static const text_field scenario_fields[] = {
	SCN("scenario", scenario_path), SCN("catalog", catalog_dir), SCN("model", model),
	SCN("gpu", gpu), SCN("formats", formats), SCN("baseline", baseline), SCN("mode", mode),
	SCN("rounding", rounding), SCN("price_set", price_set), SCN("parallelism", parallelism),
	SCN("users", users), SCN("context", context), SCN("baseline_gpus", baseline_gpus),
	SCN("gpus_per_replica", gpus_per_replica), SCN("mem_util", mem_util),
	SCN("act_reserve", act_reserve), SCN("weight_bits", weight_bits),
};
#define SIM(k, m) { k, offsetof(wz_sim_opts, m) }
static const text_field sim_fields[] = {
	SIM("idle_policy", idle_policy), SIM("duration", duration), SIM("warmup", warmup),
	SIM("seed", seed), SIM("offload_format", offload_format), SIM("ttft_p99", ttft),
	SIM("tpot_p99", tpot), SIM("traffic", traffic), SIM("speedup", speedup),
	SIM("threads", threads), SIM("restore_rates", restore_rates), SIM("serving", serving),
	SIM("search_seeds", search_seeds),
};
#define NFIELDS(a) (sizeof a / sizeof a[0])

static const char **field_at(void *base, const text_field *f)
{
	return (const char **)((char *)base + f->offset);
}

/* A value a key = value line gives back unchanged. */
static int writable(const char *v)
{
	size_t n = strlen(v);
	return n && !strpbrk(v, "#\n\r") && !(n && (v[0] == ' ' || v[0] == '\t' || v[n - 1] == ' ' ||
					      v[n - 1] == '\t'));
}

static void put(wz_buf *b, int *bad, const char *key, const char *value)
{
	if (!value)
		return;
	if (!writable(value))
		*bad = 1;
	wz_buf_printf(b, "%s = %s\n", key, value);
}

static void put_fields(wz_buf *b, int *bad, const void *base, const text_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put(b, bad, f[i].key, *field_at((void *)base, &f[i]));
}

static void put_sim(wz_buf *b, int *bad, const wz_sim_opts *s)
{
	put_fields(b, bad, s, sim_fields, NFIELDS(sim_fields));
	wz_buf_printf(b, "sort_traffic = %s\n", s->sort_traffic ? "yes" : "no");
	wz_buf_printf(b, "speedup_think = %s\n", s->speedup_all ? "yes" : "no");
}

static char *finish(wz_buf *b, int bad)
{
	if (bad || b->failed) {
		wz_buf_free(b);
		return NULL;
	}
	return wz_buf_take(b);
}

char *wz_request_propose_text(const wz_propose_opts *o)
{
	wz_buf b = { 0 };
	int bad = 0;
	put_fields(&b, &bad, &o->scn, scenario_fields, NFIELDS(scenario_fields));
	put_sim(&b, &bad, &o->sim);
	wz_buf_printf(&b, "simulate = %s\n", o->simulate ? "yes" : "no");
	wz_buf_printf(&b, "max_replicas = %ld\n", o->max_replicas);
	put(&b, &bad, "serving_modes", o->serving_modes);
	for (int i = 0; i < o->ntraces; i++) {
		char key[32];
		snprintf(key, sizeof key, "trace.%d", i);
		put(&b, &bad, key, o->traces[i]);
	}
	put(&b, &bad, "profile", o->profile);
	for (int i = 0; i < o->ncalibration; i++) {
		char key[32];
		snprintf(key, sizeof key, "calibration.%d", i);
		put(&b, &bad, key, o->calibration[i]);
	}
	if (o->codec_run)
		wz_buf_printf(&b, "codec_run = %lld\n", o->codec_run);
	put(&b, &bad, "live_kl", o->live_kl);
	return finish(&b, bad);
}

char *wz_request_size_text(const wz_size_opts *o)
{
	wz_buf b = { 0 };
	int bad = 0;
	put_fields(&b, &bad, &o->scn, scenario_fields, NFIELDS(scenario_fields));
	put_sim(&b, &bad, &o->sim);
	wz_buf_printf(&b, "max_replicas = %ld\n", o->max_replicas);
	return finish(&b, bad);
}

char *wz_request_measure_text(const wz_measure_req *rq)
{
	wz_buf b = { 0 };
	int bad = 0;
	for (int i = 0; i < rq->npaths; i++) {
		char key[32];
		snprintf(key, sizeof key, "trace.%d", i);
		put(&b, &bad, key, rq->paths[i]);
	}
	for (int i = 0; i < rq->ncalibration; i++) {
		char key[32];
		snprintf(key, sizeof key, "calibration.%d", i);
		put(&b, &bad, key, rq->calibration_paths[i]);
	}
	put(&b, &bad, "profile", rq->profile_path);
	put(&b, &bad, "formats", rq->formats);
	wz_buf_printf(&b, "iso = %s\n", rq->iso ? "yes" : "no");
	wz_buf_printf(&b, "per_layer = %s\n", rq->per_layer ? "yes" : "no");
	wz_buf_printf(&b, "boot = %ld\n", rq->nboot);
	wz_buf_printf(&b, "seed = %ld\n", rq->seed);
	return finish(&b, bad);
}

void wz_request_record(wza_run *run, const char *job, const char *text)
{
	if (text)
		wza_run_input(run, WZ_REQUEST_KIND, job, "wzplan", NULL, (long long)strlen(text),
			      text);
}

const char *wz_request_of(const wza_run *run, const char *job)
{
	for (int i = 0; i < run->ninputs; i++) {
		const wza_input *in = &run->inputs[i];
		if (!strcmp(in->kind, WZ_REQUEST_KIND) && !strcmp(in->name, job))
			return in->content;
	}
	return NULL;
}

/* Reading back: every key of kv must be taken by one of the readers. */
static void get_fields(wz_kv *kv, void *base, const text_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		*field_at(base, &f[i]) = wz_kv_get(kv, f[i].key);
}

static wz_err get_flag(wz_kv *kv, const char *key, int *out, wz_diag *diag)
{
	const char *v = wz_kv_get(kv, key);
	*out = 0;
	if (!v || !strcmp(v, "no"))
		return WZ_OK;
	if (!strcmp(v, "yes")) {
		*out = 1;
		return WZ_OK;
	}
	return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: '%s' is neither yes nor no",
			   wz_kv_origin(kv), wz_kv_line(kv, key), key, v);
}

static wz_err get_sim(wz_kv *kv, wz_sim_opts *s, wz_diag *diag)
{
	get_fields(kv, s, sim_fields, NFIELDS(sim_fields));
	wz_err err = get_flag(kv, "sort_traffic", &s->sort_traffic, diag);
	return err ? err : get_flag(kv, "speedup_think", &s->speedup_all, diag);
}

/* 1 when key is prefix followed by a number. */
static int numbered(const char *key, const char *prefix)
{
	size_t n = strlen(prefix);
	return !strncmp(key, prefix, n) && key[n] && strspn(key + n, "0123456789") == strlen(key + n);
}

/* Fails naming the first key of kv that is neither in known (NULL-ended)
 * nor a trace.N (nor, where calibration, a calibration.N). */
static wz_err all_taken_cal(const wz_kv *kv, const char *const *known, int calibration,
			    wz_diag *diag)
{
	for (int i = 0; i < wz_kv_count(kv); i++) {
		const char *key = wz_kv_key(kv, i);
		int ok = numbered(key, "trace.") || (calibration && numbered(key, "calibration."));
		for (const char *const *k = known; *k && !ok; k++)
			ok = !strcmp(*k, key);
		if (!ok)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: unknown key '%s'",
					   wz_kv_origin(kv), wz_kv_line_at(kv, i), key);
	}
	return WZ_OK;
}

static wz_err all_taken(const wz_kv *kv, const char *const *known, wz_diag *diag)
{
	return all_taken_cal(kv, known, 0, diag);
}

/* The keys of each request, for all_taken. */
static int add_keys(const char **keys, int n, const text_field *f, size_t nf)
{
	for (size_t i = 0; i < nf; i++)
		keys[n++] = f[i].key;
	return n;
}

/* trace.0, trace.1, ... up to the first absent; more than max is an error. */
static wz_err get_traces(wz_kv *kv, const char **paths, int max, int *n, wz_diag *diag)
{
	char key[32];
	for (*n = 0;; (*n)++) {
		snprintf(key, sizeof key, "trace.%d", *n);
		const char *v = wz_kv_get(kv, key);
		if (!v)
			return WZ_OK;
		if (*n >= max)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: more than %d traces",
					   wz_kv_origin(kv), wz_kv_line(kv, key), max);
		paths[*n] = v;
	}
}

wz_err wz_request_propose_read(wz_kv *kv, wz_propose_opts *o, wz_diag *diag)
{
	const char *keys[NFIELDS(scenario_fields) + NFIELDS(sim_fields) + 16];
	int nkeys = add_keys(keys, 0, scenario_fields, NFIELDS(scenario_fields));
	nkeys = add_keys(keys, nkeys, sim_fields, NFIELDS(sim_fields));
	static const char *const own[] = { "sort_traffic", "speedup_think", "simulate",
					   "max_replicas", "serving_modes", "profile",
					   "codec_run", "live_kl" };
	for (size_t i = 0; i < NFIELDS(own); i++)
		keys[nkeys++] = own[i];
	memset(o, 0, sizeof *o);
	o->out_dir = "wzplan-out";
	get_fields(kv, &o->scn, scenario_fields, NFIELDS(scenario_fields));
	wz_err err = get_sim(kv, &o->sim, diag);
	if (!err)
		err = get_flag(kv, "simulate", &o->simulate, diag);
	if (!err)
		err = wz_kv_get_long(kv, "max_replicas", 1, 0, &o->max_replicas, diag);
	long codec_run = 0;
	if (!err)
		err = wz_kv_get_long(kv, "codec_run", 0, 0, &codec_run, diag);
	o->codec_run = codec_run;
	o->serving_modes = wz_kv_get(kv, "serving_modes");
	char why[256];
	if (!err && o->serving_modes &&
	    wz_propose_modes_parse(o->serving_modes, &o->modes, why, sizeof why))
		err = wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: serving_modes: %s", wz_kv_origin(kv),
				  wz_kv_line(kv, "serving_modes"), why);
	if (!err)
		err = get_traces(kv, o->traces, WZ_PROPOSE_MAX_TRACES, &o->ntraces, diag);
	for (int n = 0; !err; n++) { /* calibration.0, calibration.1, ... */
		char key[32];
		snprintf(key, sizeof key, "calibration.%d", n);
		const char *v = wz_kv_get(kv, key);
		if (!v)
			break;
		if (n >= WZ_PROPOSE_MAX_TRACES)
			err = wz_diag_set(diag, WZ_ERR_INPUT, "%s: more than %d calibration windows",
					  wz_kv_origin(kv), WZ_PROPOSE_MAX_TRACES);
		else
			o->calibration[n] = v, o->ncalibration = n + 1;
	}
	o->profile = wz_kv_get(kv, "profile");
	o->live_kl = wz_kv_get(kv, "live_kl");
	keys[nkeys] = NULL;
	return err ? err : all_taken_cal(kv, keys, 1, diag);
}

wz_err wz_request_size_read(wz_kv *kv, wz_size_opts *o, wz_diag *diag)
{
	const char *keys[NFIELDS(scenario_fields) + NFIELDS(sim_fields) + 8];
	int nkeys = add_keys(keys, 0, scenario_fields, NFIELDS(scenario_fields));
	nkeys = add_keys(keys, nkeys, sim_fields, NFIELDS(sim_fields));
	keys[nkeys++] = "sort_traffic";
	keys[nkeys++] = "speedup_think";
	keys[nkeys++] = "max_replicas";
	keys[nkeys] = NULL;
	memset(o, 0, sizeof *o);
	o->how = WZP_TEXT;
	get_fields(kv, &o->scn, scenario_fields, NFIELDS(scenario_fields));
	wz_err err = get_sim(kv, &o->sim, diag);
	if (!err)
		err = wz_kv_get_long(kv, "max_replicas", 1, 0, &o->max_replicas, diag);
	return err ? err : all_taken(kv, keys, diag);
}

wz_err wz_request_measure_read(wz_kv *kv, wz_measure_req *rq, const char **paths, int max,
			       wz_diag *diag)
{
	const char *keys[8];
	int nkeys = 0;
	static const char *const own[] = { "profile", "formats", "iso", "per_layer", "boot",
					   "seed" };
	for (size_t i = 0; i < NFIELDS(own); i++)
		keys[nkeys++] = own[i];
	memset(rq, 0, sizeof *rq);
	if (max > WZ_MEASURE_MAX_TRACES)
		max = WZ_MEASURE_MAX_TRACES;
	wz_err err = get_traces(kv, paths, max, &rq->npaths, diag);
	rq->paths = paths;
	/* calibration.0, calibration.1, ... (kvtc-<bits>), after the traces
	 * in paths */
	for (int n = 0; !err; n++) {
		char key[32];
		snprintf(key, sizeof key, "calibration.%d", n);
		const char *v = wz_kv_get(kv, key);
		if (!v)
			break;
		if (rq->npaths + n >= max)
			err = wz_diag_set(diag, WZ_ERR_INPUT, "%s: more than %d traces and calibration windows",
					  wz_kv_origin(kv), max);
		else
			paths[rq->npaths + n] = v, rq->ncalibration = n + 1;
	}
	rq->calibration_paths = paths + rq->npaths;
	rq->profile_path = wz_kv_get(kv, "profile");
	rq->formats = wz_kv_get(kv, "formats");
	if (!err)
		err = get_flag(kv, "iso", &rq->iso, diag);
	if (!err)
		err = get_flag(kv, "per_layer", &rq->per_layer, diag);
	if (!err)
		err = wz_kv_get_long(kv, "boot", 1, 0, &rq->nboot, diag);
	if (!err)
		err = wz_kv_get_long(kv, "seed", 1, 0, &rq->seed, diag);
	keys[nkeys] = NULL;
	return err ? err : all_taken_cal(kv, keys, 1, diag);
}
