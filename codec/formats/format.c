/* Format names: the parser of "fp8-mix", "wz-5.44" or
 * "nvfp4-trt-cold-keep4-64", and what the traits table (codec/registry.c)
 * says of a parsed format (DESIGN.md, "Cache formats"). */
#include "codec/formats/format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/wz_str.h"

int wzc_format_can_keep(wzc_format_id id)
{
	const wzc_format_info *i = wzc_format_info_of(id);
	return i && i->can_keep;
}

int wzc_format_trellis_nu(wzc_format_id id)
{
	const wzc_format_info *i = wzc_format_info_of(id);
	return i ? i->trellis_nu : 0;
}

int wzc_format_needs_profile(wzc_format_id id)
{
	const wzc_format_info *i = wzc_format_info_of(id);
	return i && i->needs_profile;
}

static wz_err unknown(const char *name, wz_diag *diag)
{
	char known[512] = "";
	for (int i = 0; i < wzc_format_count(); i++) {
		const wzc_format_info *info = wzc_format_info_at(i);
		strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
		strncat(known, info->name, sizeof known - strlen(known) - 1);
		if (info->parametric)
			strncat(known, "-<bits>", sizeof known - strlen(known) - 1);
	}
	return wz_diag_set(diag, WZ_ERR_NOT_FOUND, "unknown cache format '%s' (known: %s)", name,
			   known);
}

/* The next "-keep" in s, in any case, or NULL. */
static const char *strcasestr_keep(const char *s)
{
	for (; *s; s++)
		if (strncasecmp(s, "-keep", 5) == 0)
			return s;
	return NULL;
}

/* A whole number 0..WZC_KEEP_MAX of decimal digits only, from s to end. */
static int keep_count(const char *s, const char *end, long *out)
{
	if (s == end || end - s > 7)
		return -1;
	long v = 0;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (v > WZC_KEEP_MAX)
		return -1;
	*out = v;
	return 0;
}

/* "<base>-keep<F>-<L>": TensorRT-LLM's kept tokens on a cold-page record. */
static wz_err parse_keep(const char *name, const char *at, wzc_format *out, wz_diag *diag)
{
	const char *f = at + 5, *dash = strchr(f, '-');
	long first, last;
	if (!dash || keep_count(f, dash, &first) || keep_count(dash + 1, dash + strlen(dash), &last))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "format '%s': expected <format>-keep<F>-<L> with F and L whole "
				   "numbers from 0 to %ld",
				   name, WZC_KEEP_MAX);
	char base[64];
	size_t n = (size_t)(at - name);
	if (n >= sizeof base)
		return unknown(name, diag);
	memcpy(base, name, n);
	base[n] = 0;
	wz_err rc = wzc_format_parse(base, out, diag);
	if (rc)
		return rc;
	if (out->keeps)
		return wz_diag_set(diag, WZ_ERR_INPUT, "format '%s': -keep<F>-<L> may be given once",
				   name);
	if (!wzc_format_can_keep(out->id))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "format '%s': keeping tokens in bf16 is TensorRT-LLM's option on its "
				   "cold pages (nvfp4-trt-cold, nvfp4-trt-cold-bf16rope), not %s's",
				   name, out->name);
	out->keeps = 1;
	out->keep_first = first;
	out->keep_last = last;
	snprintf(out->name + strlen(out->name), sizeof out->name - strlen(out->name),
		 "-keep%ld-%ld", first, last);
	return WZ_OK;
}

wzc_format wzc_format_unkept(const wzc_format *f)
{
	wzc_format u = *f;
	if (u.keeps) {
		char *k = strstr(u.name, "-keep");
		if (k)
			*k = 0;
	}
	u.keeps = 0;
	u.keep_first = u.keep_last = 0;
	return u;
}

wz_err wzc_format_parse(const char *name, wzc_format *out, wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	const char *keep = NULL;
	for (const char *k = name; (k = strcasestr_keep(k)); k++)
		keep = k;
	if (keep)
		return parse_keep(name, keep, out, diag);
	for (int i = 0; i < wzc_format_count(); i++) {
		const wzc_format_info *info = wzc_format_info_at(i);
		size_t n = strlen(info->name);
		if (!info->parametric) {
			if (strcasecmp(name, info->name) == 0) {
				out->id = info->id;
				snprintf(out->name, sizeof out->name, "%s", info->name);
				return WZ_OK;
			}
			continue;
		}
		if (strncasecmp(name, info->name, n) != 0 || name[n] != '-')
			continue;
		double bits;
		if (wz_parse_double(name + n + 1, &bits))
			continue;
		if (bits < WZC_WZ_MIN_BITS || bits > WZC_WZ_MAX_BITS)
			return wz_diag_set(diag, WZ_ERR_RANGE,
					   "format '%s': rate must be between %.0f and %.0f bits/value",
					   name, WZC_WZ_MIN_BITS, WZC_WZ_MAX_BITS);
		out->id = info->id;
		out->rate_bits = bits;
		snprintf(out->name, sizeof out->name, "%s-%s", info->name, name + n + 1);
		return WZ_OK;
	}
	return unknown(name, diag);
}

size_t wzc_record_bytes(const wzc_format *fmt, int R, int P)
{
	/* Kept tokens make the size a window's, not a token's. */
	const wzc_format_info *info = wzc_format_info_of(fmt->id);
	if (R <= 0 || P < 0 || fmt->keeps || !info)
		return 0;
	return info->record_bytes(fmt, R, P);
}

void wzc_format_wz_grid(size_t record_bytes, int R, int P, wzc_format *out)
{
	memset(out, 0, sizeof *out);
	out->id = WZC_FMT_WZ;
	out->rate_bits = 8.0 * (double)record_bytes / (double)(R + P);
	snprintf(out->name, sizeof out->name, "wz-%.6g", out->rate_bits);
}

double wzc_bits_per_value(const wzc_format *fmt, int R, int P)
{
	size_t bytes = wzc_record_bytes(fmt, R, P);
	return (double)bytes * 8.0 / (double)(R + P);
}
