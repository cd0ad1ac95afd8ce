/* Reading the restore rates file (restore_rates.h). */
#include "sim/restore_rates.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_io.h"
#include "common/wz_str.h"

/* A rates file is a few dozen lines; anything far larger is not one. */
#define RATES_MAX_BYTES (1 << 20)

static const struct {
	const char *key, *unit;
	size_t offset;
} known[] = {
	{ "restore_records_tokens_per_core_s", "token-layers/s", offsetof(wzs_restore_rates, to_records) },
	{ "restore_values_tokens_per_core_s", "token-layers/s", offsetof(wzs_restore_rates, to_values) },
};

static int key_chars_ok(const char *k)
{
	if (!*k)
		return 0;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '_'))
			return 0;
	return 1;
}

static wz_err parse_line(const char *path, int line, char *text, wzs_restore_rates *out,
			 wz_diag *diag)
{
	char *field[4] = { text };
	int n = 1;
	for (char *p = text; n < 4 && (p = strchr(p, '\t'));) {
		*p++ = '\0';
		field[n++] = p;
	}
	if (n < 4)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: %d field%s; a rate line has four separated by tabs "
				   "(key, value, unit, what)",
				   path, line, n, n == 1 ? "" : "s");
	if (!key_chars_ok(field[0]))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: key '%.60s': use [a-z0-9_] only", path,
				   line, field[0]);
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		if (strcmp(field[0], known[i].key))
			continue;
		double v;
		if (wz_parse_double(field[1], &v) || !isfinite(v) || !(v > 0))
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: %s: value '%.40s' is not a positive number", path, line,
					   field[0], field[1]);
		if (strcmp(field[2], known[i].unit))
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: unit '%.40s', expected '%s'",
					   path, line, field[0], field[2], known[i].unit);
		*(double *)((char *)out + known[i].offset) = v;
	}
	return WZ_OK;
}

wz_err wzs_restore_rates_read(const char *path, wzs_restore_rates *out, wz_diag *diag)
{
	out->to_records = out->to_values = NAN;
	snprintf(out->origin, sizeof out->origin, "%s", path);
	char *text;
	size_t size;
	wz_err err = wz_read_file(path, RATES_MAX_BYTES, &text, &size, diag);
	if (err)
		return err;
	if (memchr(text, '\0', size)) {
		free(text);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: a NUL byte: not a text rates file", path);
	}
	int line = 0;
	for (char *p = text; *p && !err;) {
		char *end = strchr(p, '\n');
		if (end)
			*end = '\0';
		line++;
		size_t len = strlen(p);
		if (len && p[len - 1] == '\r')
			p[--len] = '\0';
		if (len && p[0] != '#')
			err = parse_line(path, line, p, out, diag);
		p = end ? end + 1 : p + len;
	}
	free(text);
	return err;
}

wz_err wzs_restore_rate(const wzs_restore_rates *rates, const char *gpu_format,
			const char *offload_format, double *per_core, wz_diag *diag)
{
	*per_core = 0;
	if (strncmp(offload_format, "wzx-", 4))
		return WZ_OK;
	int to_records = !strncmp(gpu_format, "wz-", 3) || !strncmp(gpu_format, "iso:", 4);
	const char *key = to_records ? "restore_records_tokens_per_core_s"
				     : "restore_values_tokens_per_core_s";
	if (!rates)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "offload format %s: a restore is decoded on the host, and no decode "
				   "rate was given: give --restore-rates FILE or restore_rates in the "
				   "scenario (bench/bench_restore FILE writes one; docs/restore.md)",
				   offload_format);
	double v = to_records ? rates->to_records : rates->to_values;
	if (isnan(v))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: no %s line (needed to restore %s into %s)",
				   rates->origin, key, offload_format, gpu_format);
	*per_core = v;
	return WZ_OK;
}
