/* The deployment search's space: configurations as overrides of the
 * scenario's parameters, the default choices per key, and pinning
 * (deploy.h). */
#include "sim/deploy/deploy.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


const char *const wzd_key_names[WZD_NKEYS] = {
	"gpus_per_replica", "parallelism", "expert_parallel", "dual_batch_overlap", "serving",
	"prefill_gpus_per_replica", "prefill_context_parallel", "mtp_draft_tokens", "max_batch",
	"prefill_pipeline_stages",
};

static void set_choices(wzd_space *s, int key, const int *v, int n)
{
	s->n[key] = n;
	for (int i = 0; i < n; i++)
		s->v[key][i] = v[i];
}

void wzd_space_default(const wzs_params *p, wzd_space *out)
{
	memset(out, 0, sizeof *out);
	/* One node up through 256 GPUs in doublings: an HGX node, several
	 * nodes over the network, or one NVLink domain where the GPU has a
	 * larger one; the replica model drops those that cannot hold the
	 * weights. */
	int gpus[WZD_MAX_CHOICES], ng = 0;
	for (long g = p->gpus_per_node > 0 ? p->gpus_per_node : 8; g <= 256 && ng < 8; g *= 2)
		gpus[ng++] = (int)g;
	set_choices(out, WZD_KEY_GPUS, gpus, ng);
	set_choices(out, WZD_KEY_PARALLELISM, (const int[]){ 0, 1 }, 2);
	set_choices(out, WZD_KEY_EP, (const int[]){ 0, 1 }, 2);
	set_choices(out, WZD_KEY_DBO, (const int[]){ 0, 1 }, 2);
	/* serving: 0 aggregated, 1 disaggregated (the pool is its own key) */
	set_choices(out, WZD_KEY_SERVING, (const int[]){ 0, 1 }, 2);
	int pools[WZD_MAX_CHOICES], np = 0;
	for (long g = p->gpus_per_node > 0 ? p->gpus_per_node : 8; g <= 64 && np < 8; g *= 2)
		pools[np++] = (int)g;
	set_choices(out, WZD_KEY_PREFILL_GPUS, pools, np);
	set_choices(out, WZD_KEY_CP, (const int[]){ 1, 2, 4, 8, 16 }, 5);
	if (p->mtp_acceptance > 0)
		set_choices(out, WZD_KEY_MTP, (const int[]){ 0, 1, 2, 3 }, 4);
	else
		set_choices(out, WZD_KEY_MTP, (const int[]){ 0 }, 1);
	int caps[4] = { 64, 128, 256 }, nc = 3;
	if (p->max_batch != 64 && p->max_batch != 128 && p->max_batch != 256)
		caps[nc++] = (int)p->max_batch;
	set_choices(out, WZD_KEY_MAX_BATCH, caps, nc);
	/* A disaggregated pool in pipeline stages, as SGLang runs long
	 * prompts (sim/pool.c): 1, 2 or 4 stages, and the scenario's own;
	 * 1 keeps the scenario's own pool.  The screen packs an instance's
	 * passes as the simulator does (screen.c), so pipelined pools are
	 * ranked by what their busiest rank costs, and the confirmation
	 * keeps on until no candidate's bound beats the best fleet
	 * (confirm.c): more choices cannot make the answer dearer. */
	int pp[4] = { 1, 2, 4 }, npp = 3;
	if (p->prefill_pp_stages != 1 && p->prefill_pp_stages != 2 && p->prefill_pp_stages != 4)
		pp[npp++] = (int)p->prefill_pp_stages;
	set_choices(out, WZD_KEY_PP, pp, npp);
}

void wzd_space_pin_key(wzd_space *s, int key, int value)
{
	s->n[key] = 1;
	s->v[key][0] = value;
	s->pinned[key] = 1;
}

static int key_of(const char *name, size_t len)
{
	for (int k = 0; k < WZD_NKEYS; k++)
		if (strlen(wzd_key_names[k]) == len && !strncmp(wzd_key_names[k], name, len))
			return k;
	return -1;
}

/* A value for key k: 0 and 1 for the yes/no keys, the named modes, counts. */
static int parse_value(int k, const char *v, int *out)
{
	long x;
	switch (k) {
	case WZD_KEY_PARALLELISM:
		if (!strcmp(v, "attention-dp") || !strcmp(v, "dp"))
			*out = 0;
		else if (!strcmp(v, "tp"))
			*out = 1;
		else
			return -1;
		return 0;
	case WZD_KEY_EP:
	case WZD_KEY_DBO:
		if (!strcmp(v, "yes") || !strcmp(v, "on"))
			*out = 1;
		else if (!strcmp(v, "no") || !strcmp(v, "off"))
			*out = 0;
		else
			return -1;
		return 0;
	case WZD_KEY_SERVING:
		if (!strcmp(v, "aggregated"))
			*out = 0;
		else if (!strcmp(v, "disaggregated"))
			*out = 1;
		else
			return -1;
		return 0;
	case WZD_KEY_CP:
		if (!strcmp(v, "no")) {
			*out = 1;
			return 0;
		}
		break;
	default:
		break;
	}
	if (wz_parse_count(v, &x))
		return -1;
	long lo = k == WZD_KEY_MTP ? 0 : 1, hi = k == WZD_KEY_MTP ? 8 : 1000000;
	if (x < lo || x > hi)
		return -1;
	*out = (int)x;
	return 0;
}

static const char *value_help(int k)
{
	switch (k) {
	case WZD_KEY_PARALLELISM: return "use attention-dp or tp";
	case WZD_KEY_EP:
	case WZD_KEY_DBO: return "use yes or no";
	case WZD_KEY_SERVING: return "use aggregated or disaggregated";
	case WZD_KEY_CP: return "use no or a number of ranks";
	case WZD_KEY_MTP: return "use a number of drafts, 0 to 8";
	default: return "use a whole number above 0";
	}
}

wz_err wzd_space_pin(wzd_space *s, const char *pairs, const char *where, wz_diag *diag)
{
	const char *at = pairs;
	while (*at) {
		while (*at == ',' || isspace((unsigned char)*at))
			at++;
		if (!*at)
			break;
		const char *end = at + strcspn(at, ",");
		const char *eq = memchr(at, '=', (size_t)(end - at));
		if (!eq)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s: '%.*s': use KEY=VALUE", where,
					   (int)(end - at), at);
		const char *kend = eq;
		while (kend > at && isspace((unsigned char)kend[-1]))
			kend--;
		int k = key_of(at, (size_t)(kend - at));
		if (k < 0) {
			wz_buf names = { 0 };
			for (int i = 0; i < WZD_NKEYS; i++)
				wz_buf_printf(&names, "%s%s", i ? ", " : "", wzd_key_names[i]);
			wz_err err = wz_diag_set(diag, WZ_ERR_INPUT, "%s: '%.*s' is not a configuration "
						 "key (%s)", where, (int)(kend - at), at,
						 wz_buf_str(&names));
			wz_buf_free(&names);
			return err;
		}
		char v[64];
		const char *vs = eq + 1;
		while (vs < end && isspace((unsigned char)*vs))
			vs++;
		const char *ve = end;
		while (ve > vs && isspace((unsigned char)ve[-1]))
			ve--;
		if ((size_t)(ve - vs) >= sizeof v)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s: %s: value too long", where,
					   wzd_key_names[k]);
		memcpy(v, vs, (size_t)(ve - vs));
		v[ve - vs] = '\0';
		int x;
		if (parse_value(k, v, &x))
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s: %s: '%s': %s", where,
					   wzd_key_names[k], v, value_help(k));
		/* a pool size pins disaggregated serving with it */
		if (k == WZD_KEY_PREFILL_GPUS || (k == WZD_KEY_PP && x > 1))
			wzd_space_pin_key(s, WZD_KEY_SERVING, 1);
		wzd_space_pin_key(s, k, x);
		at = end;
	}
	return WZ_OK;
}

void wzd_config_of(const wzs_params *p, const wzm_memory_params *mem, wzd_config *out)
{
	memset(out, 0, sizeof *out);
	out->gpus = mem->gpus_per_replica;
	out->tp = mem->par == WZM_PAR_TP;
	out->ep = p->expert_parallel != 0;
	out->dbo = p->dual_batch_overlap != 0;
	out->prefill_gpus = p->disaggregated ? (int)p->prefill_gpus : 0;
	out->cp = p->prefill_cp > 1 ? (int)p->prefill_cp : 1;
	out->mtp = p->mtp_acceptance > 0 ? (int)p->mtp_draft_tokens : 0;
	out->max_batch = (int)p->max_batch;
	out->pp = p->disaggregated && p->prefill_pp_stages > 1 ? (int)p->prefill_pp_stages : 1;
}

void wzd_config_apply(const wzd_config *c, wzs_params *p, wzm_memory_params *mem)
{
	mem->gpus_per_replica = c->gpus;
	mem->par = c->tp ? WZM_PAR_TP : WZM_PAR_ATTN_DP;
	p->expert_parallel = c->ep;
	p->dual_batch_overlap = c->ep && c->dbo;
	p->disaggregated = c->prefill_gpus > 0;
	p->prefill_gpus = c->prefill_gpus;
	p->prefill_gpus_search[0] = '\0';
	p->prefill_cp = c->cp > 1 ? c->cp : 1;
	if (c->mtp > 0)
		p->mtp_draft_tokens = c->mtp;
	else
		p->mtp_acceptance = 0;
	p->max_batch = c->max_batch;
	p->prefill_pp_stages = c->prefill_gpus > 0 && c->pp > 1 ? c->pp : 1;
}

const char *wzd_config_text(const wzd_config *c, char *buf, size_t n)
{
	wz_buf b = { 0 };
	wz_buf_printf(&b, "%d GPUs %s", c->gpus, c->tp ? "TP" : "attention-DP");
	if (c->ep)
		wz_buf_printf(&b, ", EP%d%s", c->gpus, c->dbo ? " + two-batch overlap" : "");
	if (c->prefill_gpus > 0)
		wz_buf_printf(&b, ", disaggregated (prefill pool %d, P:D %d:%d)", c->prefill_gpus,
			      c->prefill_gpus, c->gpus);
	else
		wz_buf_puts(&b, ", aggregated");
	if (c->cp > 1)
		wz_buf_printf(&b, ", CP%d prefill", c->cp);
	if (c->prefill_gpus > 0 && c->pp > 1)
		wz_buf_printf(&b, ", PP%d prefill", c->pp);
	if (c->mtp > 0)
		wz_buf_printf(&b, ", MTP %d", c->mtp);
	wz_buf_printf(&b, ", batch cap %d", c->max_batch);
	snprintf(buf, n, "%s", wz_buf_str(&b));
	wz_buf_free(&b);
	return buf;
}

const char *wzd_config_pairs(const wzd_config *c, char *buf, size_t n)
{
	char pool[96] = "";
	if (c->prefill_gpus > 0)
		snprintf(pool, sizeof pool, ",prefill_gpus_per_replica=%d,prefill_pipeline_stages=%d",
			 c->prefill_gpus, c->pp > 1 ? c->pp : 1);
	snprintf(buf, n,
		 "gpus_per_replica=%d,parallelism=%s,expert_parallel=%s,dual_batch_overlap=%s,"
		 "serving=%s%s,prefill_context_parallel=%d,mtp_draft_tokens=%d,max_batch=%d",
		 c->gpus, c->tp ? "tp" : "attention-dp", c->ep ? "yes" : "no",
		 c->ep && c->dbo ? "yes" : "no", c->prefill_gpus > 0 ? "disaggregated" : "aggregated",
		 pool, c->cp, c->mtp, c->max_batch);
	return buf;
}

/* Whether a combination means something: overlap needs expert
 * parallelism, which needs attention data parallelism (sim/moe.h), as
 * does context-parallel prefill; a pool size only with disaggregation,
 * and its context-parallel groups must divide it, as the aggregated
 * replica's must divide its ranks; pipeline stages only with a pool they
 * divide, without context parallelism. */
static int coherent(const wzd_config *c)
{
	if (c->dbo && !c->ep)
		return 0;
	if (c->tp && (c->ep || c->cp > 1))
		return 0;
	int ranks = c->prefill_gpus > 0 ? c->prefill_gpus : c->gpus;
	if (c->cp > ranks || ranks % c->cp)
		return 0;
	/* pipeline stages split a pool's instances; chunks replace CP there */
	if (c->pp > 1 && (c->prefill_gpus <= 0 || c->prefill_gpus % c->pp || c->cp > 1))
		return 0;
	return 1;
}

long wzd_space_enumerate(const wzd_space *s, wzd_config *out, long max)
{
	long n = 0;
	int idx[WZD_NKEYS] = { 0 };
	for (int j = 0; j < WZD_NKEYS; j++)
		if (s->n[j] < 1)
			return 0;
	for (;;) {
		wzd_config c = { 0 };
		c.gpus = s->v[WZD_KEY_GPUS][idx[WZD_KEY_GPUS]];
		c.tp = s->v[WZD_KEY_PARALLELISM][idx[WZD_KEY_PARALLELISM]];
		c.ep = s->v[WZD_KEY_EP][idx[WZD_KEY_EP]];
		c.dbo = s->v[WZD_KEY_DBO][idx[WZD_KEY_DBO]];
		int disagg = s->v[WZD_KEY_SERVING][idx[WZD_KEY_SERVING]];
		c.prefill_gpus = disagg ? s->v[WZD_KEY_PREFILL_GPUS][idx[WZD_KEY_PREFILL_GPUS]] : 0;
		c.cp = s->v[WZD_KEY_CP][idx[WZD_KEY_CP]];
		c.mtp = s->v[WZD_KEY_MTP][idx[WZD_KEY_MTP]];
		c.max_batch = s->v[WZD_KEY_MAX_BATCH][idx[WZD_KEY_MAX_BATCH]];
		c.pp = s->v[WZD_KEY_PP][idx[WZD_KEY_PP]];
		/* aggregated configurations are enumerated once, at the first pool
		 * and pipeline depth */
		int dup = !disagg && (idx[WZD_KEY_PREFILL_GPUS] > 0 || idx[WZD_KEY_PP] > 0);
		if (!dup && coherent(&c)) {
			if (out && n < max)
				out[n] = c;
			n++;
		}
		int k = WZD_NKEYS - 1;
		while (k >= 0 && ++idx[k] >= s->n[k])
			idx[k--] = 0;
		if (k < 0)
			break;
	}
	return n;
}
