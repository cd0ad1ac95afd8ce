/* Reading a scenario's keys into wzs_params and checking a set of parameters
 * against the keys' ranges and each other (params.h). */
#include "sim/params.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Occupancy samples of one run: each is kept in memory and archived. */
#define WZS_MAX_SAMPLES 1e6

/* The field of p a key of the table sets. */
static void *field_of(wzs_params *p, const wzs_scenario_key *k)
{
	return (char *)p + k->offset;
}

/* The slowest link a speed (a key ending in _gbps) may name: 10 MB/s, a
 * tenth of 1 Gb Ethernet, below any link that carries a cache today.  A
 * link of 1e-300 GB/s is a unit mistake, and runs with nothing completed;
 * 0 keeps the meaning it has for each key. */
#define SLOWEST_LINK_GBPS 0.01

static wz_err check_range(const wzs_scenario_key *k, double v, const char *where, int line,
			  wz_diag *diag)
{
	if (v > 0 && v < SLOWEST_LINK_GBPS && strstr(k->name, "_gbps")) {
		if (line > 0)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: %g is slower than %g, the "
					   "slowest link wzplan takes", where, line, k->name, v,
					   SLOWEST_LINK_GBPS);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: %s: %g is slower than %g, the slowest "
				   "link wzplan takes", where, k->name, v, SLOWEST_LINK_GBPS);
	}
	if (isnan(v) || v > k->max || v < k->min || (k->min_open && v == k->min)) {
		if (line > 0)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: %g is not in %s%g, %g]", where,
					   line, k->name, v, k->min_open ? "(" : "[", k->min, k->max);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: %s: %g is not in %s%g, %g]", where, k->name,
				   v, k->min_open ? "(" : "[", k->min, k->max);
	}
	return WZ_OK;
}

/* A key of the table other than WORD from its text into p. */
static wz_err key_from_text(const wzs_scenario_key *k, const char *v, wz_kv *kv, wzs_params *p,
			    wz_diag *diag)
{
	const char *origin = wz_kv_origin(kv);
	int line = wz_kv_line(kv, k->name);
	void *dest = field_of(p, k);
	wz_err err;
	switch (k->kind) {
	case WZS_KEY_NUM: {
		double x;
		if ((err = wz_kv_get_double(kv, k->name, 0, 0, &x, diag)) ||
		    (err = check_range(k, x, origin, line, diag)))
			return err;
		*(double *)dest = x * k->scale;
		return WZ_OK;
	}
	case WZS_KEY_COUNT: {
		long x;
		if (wz_parse_count(v, &x))
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: '%s' is not a whole number",
					   origin, line, k->name, v);
		if (x < (long)k->min || x > (long)k->max)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: %ld is not in %ld..%ld", origin,
					   line, k->name, x, (long)k->min, (long)k->max);
		*(long *)dest = x;
		return WZ_OK;
	}
	case WZS_KEY_FLAG:
		if (strcmp(v, "yes") && strcmp(v, "no"))
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: '%s': use yes or no", origin,
					   line, k->name, v);
		*(int *)dest = !strcmp(v, "yes");
		return WZ_OK;
	case WZS_KEY_TEXT:
		if (strlen(v) >= k->size)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: value too long", origin, line,
					   k->name);
		snprintf(dest, k->size, "%s", v);
		return WZ_OK;
	case WZS_KEY_WORD:
		break;
	}
	return WZ_OK;
}

/* Whether the pool's instance layout fits every pool size a run may take:
 * NULL, or the key at fault with the reason in msg. */
static const char *pool_layout_error(const wzs_params *p, char *msg, size_t n)
{
	if (!p->disaggregated || (p->prefill_instance_gpus < 1 && p->prefill_pp_stages <= 1))
		return NULL;
	if (p->prefill_cp > 1) {
		snprintf(msg, n, "prefill_context_parallel = %ld and prefill instances exclude each "
			 "other (an instance's long prompt is chunked instead); set one",
			 p->prefill_cp);
		return "prefill_context_parallel";
	}
	long sizes[WZS_MAX_POOL_SIZES];
	wz_diag inner;
	int count = wzs_prefill_pool_sizes(p, sizes, &inner);
	for (int i = 0; i < count; i++) {
		long width = wzs_pool_instance_width(p, sizes[i]);
		if (sizes[i] % width) {
			snprintf(msg, n, "%ld GPUs do not divide the prefill pool of %ld into instances",
				 width, sizes[i]);
			return "prefill_instance_gpus";
		}
		if (width % p->prefill_pp_stages) {
			snprintf(msg, n, "%ld stages do not divide a prefill instance of %ld GPUs",
				 p->prefill_pp_stages, width);
			return "prefill_pipeline_stages";
		}
	}
	return NULL;
}

wz_err wzs_params_from_kv(wz_kv *kv, wzs_params *p, wz_diag *diag)
{
	const char *origin = wz_kv_origin(kv);
	wz_err err;
	/* The table's keys; the WORD ones below, by name. */
	for (int i = 0; i < wzs_nkeys; i++) {
		const char *v = wz_kv_get(kv, wzs_keys[i].name);
		if (v && (err = key_from_text(&wzs_keys[i], v, kv, p, diag)))
			return err;
	}
	const char *v;
	if ((v = wz_kv_get(kv, "seed"))) {
		long x;
		if (wz_parse_long(v, &x) || x < 0)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: seed: '%s' is not a whole number >= 0",
					   origin, wz_kv_line(kv, "seed"), v);
		p->seed = (uint64_t)x;
	}
	if ((v = wz_kv_get(kv, "idle_policy"))) {
		wz_diag inner;
		if (wzs_idle_policy_parse(v, &p->idle_policy, &inner))
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: idle_policy: %s", origin,
					   wz_kv_line(kv, "idle_policy"), inner.msg);
	}
	if ((v = wz_kv_get(kv, "serving"))) {
		if (strcmp(v, "aggregated") && strcmp(v, "disaggregated"))
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: serving: '%s': use aggregated or disaggregated", origin,
					   wz_kv_line(kv, "serving"), v);
		p->disaggregated = !strcmp(v, "disaggregated");
	}
	if ((v = wz_kv_get(kv, "prefill_gpus_search"))) {
		long sizes[WZS_MAX_POOL_SIZES];
		wz_diag inner;
		if (strlen(v) >= sizeof p->prefill_gpus_search)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: prefill_gpus_search: value too long",
					   origin, wz_kv_line(kv, "prefill_gpus_search"));
		snprintf(p->prefill_gpus_search, sizeof p->prefill_gpus_search, "%s", v);
		int n = wzs_prefill_pool_sizes(p, sizes, &inner);
		if (n < 0)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: prefill_gpus_search: %s", origin,
					   wz_kv_line(kv, "prefill_gpus_search"), inner.msg);
		if (p->prefill_gpus < 1)
			p->prefill_gpus = sizes[0];
	}
	if (p->disaggregated && p->prefill_gpus < 1)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: serving: disaggregated needs prefill_gpus_per_replica (the "
				   "prefill pool's GPUs per replica)",
				   origin, wz_kv_line(kv, "serving"));
	if ((v = wz_kv_get(kv, "prefill_context_parallel"))) {
		long x;
		if (!strcmp(v, "no"))
			p->prefill_cp = 1;
		else if (wz_parse_count(v, &x) || x < 1 || x > 4096)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: prefill_context_parallel: '%s': use no or a number of "
					   "ranks from 1 to 4096",
					   origin, wz_kv_line(kv, "prefill_context_parallel"), v);
		else
			p->prefill_cp = x;
	}
	char msg[160];
	const char *bad = pool_layout_error(p, msg, sizeof msg);
	if (bad)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: %s", origin,
				   wz_kv_line(kv, bad) ? wz_kv_line(kv, bad)
						       : wz_kv_line(kv, "prefill_gpus_per_replica"),
				   bad, msg);
	if ((v = wz_kv_get(kv, "prefill_expert_routing"))) {
		int r = -1;
		for (int i = 0; i <= WZS_ROUTING_POWER_LAW; i++)
			if (!strcmp(v, wzs_routing_name(i)))
				r = i;
		if (r < 0)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: prefill_expert_routing: '%s': use balanced, eplb or "
					   "power-law",
					   origin, wz_kv_line(kv, "prefill_expert_routing"), v);
		p->prefill_expert_routing = r;
	}
	if ((v = wz_kv_get(kv, "attention_math"))) {
		if (strcmp(v, "bf16") && strcmp(v, "fp8"))
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: attention_math: '%s': use bf16 or fp8",
					   origin, wz_kv_line(kv, "attention_math"), v);
		p->attention_fp8 = !strcmp(v, "fp8");
	}
	if ((v = wz_kv_get(kv, "expert_activations"))) {
		if (strcmp(v, "fp4") && strcmp(v, "fp8") && strcmp(v, "bf16"))
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: expert_activations: '%s': use fp4, fp8 or bf16", origin,
					   wz_kv_line(kv, "expert_activations"), v);
		p->expert_act_bits = !strcmp(v, "fp4") ? 4 : !strcmp(v, "fp8") ? 8 : 16;
	}
	if ((v = wz_kv_get(kv, "prefix_cache_evict"))) {
		if (strcmp(v, "blocks") && strcmp(v, "segments"))
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: prefix_cache_evict: '%s': use blocks or segments", origin,
					   wz_kv_line(kv, "prefix_cache_evict"), v);
		p->prefix_evict_segments = !strcmp(v, "segments");
	}
	if ((v = wz_kv_get(kv, "pop_length_dist"))) {
		if (strcmp(v, "exponential") && strcmp(v, "fixed"))
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: pop_length_dist: '%s': use exponential or fixed", origin,
					   wz_kv_line(kv, "pop_length_dist"), v);
		p->length_dist = !strcmp(v, "fixed") ? WZS_DIST_FIXED : WZS_DIST_EXP;
	}
	double factor;
	wz_diag inner;
	if (wzs_decode_cost(p, "", &factor, &inner))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: decode_cost: %s", origin,
				   wz_kv_line(kv, "decode_cost"), inner.msg);
	if (p->duration_s / p->occupancy_interval_s > WZS_MAX_SAMPLES)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: occupancy_interval_s: %g s samples the %g s run %.3g times "
				   "(at most %g)",
				   origin, wz_kv_line(kv, "occupancy_interval_s") ? wz_kv_line(kv, "occupancy_interval_s")
										: wz_kv_line(kv, "duration_s"),
				   p->occupancy_interval_s, p->duration_s,
				   p->duration_s / p->occupancy_interval_s, WZS_MAX_SAMPLES);
	if (p->prefixes > 0 && p->prefix_tokens < 1)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: pop_prefixes: shared prefixes need pop_prefix_tokens (their "
				   "length in tokens)",
				   origin, wz_kv_line(kv, "pop_prefixes"));
	if (p->prefix_cpu_gib > p->offload_cpu_gib || p->prefix_ssd_gib > p->offload_ssd_gib) {
		const char *key = p->prefix_cpu_gib > p->offload_cpu_gib ? "prefix_cache_cpu_gib"
									 : "prefix_cache_ssd_gib";
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: %s: more than the offload tier's %s (the prefix cache is "
				   "part of it)",
				   origin, wz_kv_line(kv, key) ? wz_kv_line(kv, key) : 1, key,
				   p->prefix_cpu_gib > p->offload_cpu_gib ? "offload_cpu_gib"
									  : "offload_ssd_gib");
	}
	if (p->warmup_s >= p->duration_s)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: warmup_s: %g s leaves nothing of duration_s %g s",
				   origin, wz_kv_line(kv, "warmup_s") ? wz_kv_line(kv, "warmup_s")
								: wz_kv_line(kv, "duration_s"),
				   p->warmup_s, p->duration_s);
	return WZ_OK;
}

wz_err wzs_params_validate(const wzs_params *p, const char *where, wz_diag *diag)
{
	wzs_params copy = *p;
	if (!(copy.prefill_moe_efficiency > 0))
		copy.prefill_moe_efficiency = wzs_prefill_moe_share(p, 8); /* unset: the table's */
	for (int i = 0; i < wzs_nkeys; i++) {
		const wzs_scenario_key *k = &wzs_keys[i];
		wz_err err = k->kind != WZS_KEY_NUM ? WZ_OK
			   : check_range(k, *(double *)field_of(&copy, k) / k->scale, where, 0, diag);
		if (err)
			return err;
	}
	if (p->duration_s / p->occupancy_interval_s > WZS_MAX_SAMPLES)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: an occupancy sample every %g s is %.3g samples of the %g s run "
				   "(at most %g)",
				   where, p->occupancy_interval_s, p->duration_s / p->occupancy_interval_s,
				   p->duration_s, WZS_MAX_SAMPLES);
	if (p->disaggregated && p->prefill_gpus < 1)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: disaggregated serving needs prefill_gpus_per_replica in the "
				   "scenario (the prefill pool's GPUs per replica)",
				   where);
	if (p->disaggregated && p->prefill_cp > 1) {
		long sizes[WZS_MAX_POOL_SIZES];
		int n = wzs_prefill_pool_sizes(p, sizes, diag);
		if (n < 0)
			return WZ_ERR_INPUT;
		for (int i = 0; i < n; i++)
			if (sizes[i] % p->prefill_cp)
				return wz_diag_set(diag, WZ_ERR_INPUT,
						   "%s: prefill_context_parallel = %ld does not divide a "
						   "prefill pool of %ld GPUs into groups",
						   where, p->prefill_cp, sizes[i]);
	}
	char msg[160];
	const char *bad = pool_layout_error(p, msg, sizeof msg);
	if (bad)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: %s: %s", where, bad, msg);
	if (p->prefixes > 0 && p->prefix_tokens < 1)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: %ld shared prefixes need pop_prefix_tokens >= 1", where,
				   p->prefixes);
	if (p->prefix_cpu_gib > p->offload_cpu_gib || p->prefix_ssd_gib > p->offload_ssd_gib)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: the prefix cache (%g GiB CPU, %g GiB SSD per node) is larger "
				   "than the offload tier it is part of (%g, %g)",
				   where, p->prefix_cpu_gib, p->prefix_ssd_gib, p->offload_cpu_gib,
				   p->offload_ssd_gib);
	if (p->warmup_s >= p->duration_s)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: warmup %g s leaves nothing of the %g s run",
				   where, p->warmup_s, p->duration_s);
	return WZ_OK;
}
