/* Parser and typed getters for "key = value" files (see wz_kv.h). */
#include "common/wz_kv.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_io.h"
#include "common/wz_name.h"
#include "common/wz_str.h"

typedef struct {
	char *key;
	char *value;
	int line;
	int used;
} kv_entry;

struct wz_kv {
	char *origin;
	kv_entry *entries;
	int n;
	int cap;
};

void wz_kv_free(wz_kv *kv)
{
	if (!kv)
		return;
	for (int i = 0; i < kv->n; i++) {
		free(kv->entries[i].key);
		free(kv->entries[i].value);
	}
	free(kv->entries);
	free(kv->origin);
	free(kv);
}

static int key_char_ok(char c)
{
	return islower((unsigned char)c) || isdigit((unsigned char)c) || c == '_' || c == '.';
}

static int find_key(const wz_kv *kv, const char *key)
{
	for (int i = 0; i < kv->n; i++)
		if (strcmp(kv->entries[i].key, key) == 0)
			return i;
	return -1;
}

wz_err wz_kv_parse(const char *text, const char *origin, wz_kv **out, wz_diag *diag)
{
	*out = NULL;
	wz_kv *kv = calloc(1, sizeof *kv);
	if (!kv || !(kv->origin = strdup(origin))) {
		free(kv);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	int line = 0;
	const char *s = text;
	wz_err err = WZ_OK;
	while (*s) {
		line++;
		const char *eol = strchr(s, '\n');
		size_t len = eol ? (size_t)(eol - s) : strlen(s);
		char *raw = malloc(len + 1);
		if (!raw) {
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
			break;
		}
		memcpy(raw, s, len);
		raw[len] = '\0';
		s = eol ? eol + 1 : s + len;
		char *hash = strchr(raw, '#');
		if (hash)
			*hash = '\0';
		char *trimmed = wz_strdup_trim(raw);
		free(raw);
		if (!trimmed) {
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
			break;
		}
		if (!*trimmed) {
			free(trimmed);
			continue;
		}
		char *eq = strchr(trimmed, '=');
		if (!eq) {
			err = wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: expected 'key = value'",
					  origin, line);
			free(trimmed);
			break;
		}
		*eq = '\0';
		char *key = wz_strdup_trim(trimmed);
		char *value = wz_strdup_trim(eq + 1);
		free(trimmed);
		if (!key || !value) {
			free(key);
			free(value);
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
			break;
		}
		int bad = !*key;
		for (const char *k = key; *k; k++)
			if (!key_char_ok(*k))
				bad = 1;
		if (bad || find_key(kv, key) >= 0) {
			err = wz_diag_set(diag, WZ_ERR_INPUT, bad ? "%s:%d: bad key '%s' (use a-z, 0-9, '_', '.')"
								  : "%s:%d: key '%s' given twice",
					  origin, line, key);
			free(key);
			free(value);
			break;
		}
		if (kv->n == kv->cap) {
			int cap = kv->cap ? kv->cap * 2 : 16;
			kv_entry *grown = realloc(kv->entries, sizeof *grown * (size_t)cap);
			if (!grown) {
				free(key);
				free(value);
				err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
				break;
			}
			kv->entries = grown;
			kv->cap = cap;
		}
		kv->entries[kv->n++] = (kv_entry){ key, value, line, 0 };
	}
	if (err) {
		wz_kv_free(kv);
		return err;
	}
	*out = kv;
	return WZ_OK;
}

wz_err wz_kv_load(const char *path, wz_kv **out, wz_diag *diag)
{
	char *text;
	size_t size;
	wz_err err = wz_read_file(path, 1 << 20, &text, &size, diag);
	if (err)
		return err;
	if ((err = wz_text_check(text, size, path, diag))) {
		free(text);
		return err;
	}
	err = wz_kv_parse(text, path, out, diag);
	free(text);
	return err;
}

const char *wz_kv_origin(const wz_kv *kv) { return kv->origin; }
int wz_kv_count(const wz_kv *kv) { return kv->n; }
const char *wz_kv_key(const wz_kv *kv, int i) { return kv->entries[i].key; }
const char *wz_kv_value_at(const wz_kv *kv, int i) { return kv->entries[i].value; }
int wz_kv_line_at(const wz_kv *kv, int i) { return kv->entries[i].line; }

const char *wz_kv_get(wz_kv *kv, const char *key)
{
	int i = find_key(kv, key);
	if (i < 0)
		return NULL;
	kv->entries[i].used = 1;
	return kv->entries[i].value;
}

int wz_kv_line(const wz_kv *kv, const char *key)
{
	int i = find_key(kv, key);
	return i < 0 ? 0 : kv->entries[i].line;
}

static wz_err missing(const wz_kv *kv, const char *key, wz_diag *diag)
{
	return wz_diag_set(diag, WZ_ERR_MISSING, "%s: required key '%s' is missing", kv->origin,
			   key);
}

wz_err wz_kv_get_double(wz_kv *kv, const char *key, int required, double fallback,
			double *out, wz_diag *diag)
{
	const char *v = wz_kv_get(kv, key);
	if (!v || !*v) {
		if (required)
			return missing(kv, key, diag);
		*out = fallback;
		return WZ_OK;
	}
	if (wz_parse_double(v, out))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: '%s' is not a number", kv->origin,
				   wz_kv_line(kv, key), key, v);
	return WZ_OK;
}

wz_err wz_kv_get_long(wz_kv *kv, const char *key, int required, long fallback, long *out,
		      wz_diag *diag)
{
	const char *v = wz_kv_get(kv, key);
	if (!v || !*v) {
		if (required)
			return missing(kv, key, diag);
		*out = fallback;
		return WZ_OK;
	}
	if (wz_parse_count(v, out))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: '%s' is not a whole number",
				   kv->origin, wz_kv_line(kv, key), key, v);
	return WZ_OK;
}

wz_err wz_kv_get_string(wz_kv *kv, const char *key, int required, const char *fallback,
			const char **out, wz_diag *diag)
{
	const char *v = wz_kv_get(kv, key);
	if (!v || !*v) {
		if (required)
			return missing(kv, key, diag);
		*out = fallback;
		return WZ_OK;
	}
	*out = v;
	return WZ_OK;
}

wz_err wz_kv_check_known(const wz_kv *kv, const char *const *known, wz_diag *diag)
{
	for (int i = 0; i < kv->n; i++) {
		int ok = 0;
		for (const char *const *k = known; *k; k++)
			if (strcmp(*k, kv->entries[i].key) == 0)
				ok = 1;
		if (!ok)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: unknown key '%s'", kv->origin,
					   kv->entries[i].line, kv->entries[i].key);
	}
	return WZ_OK;
}
