/* "key = value" text files (scenarios, profiles' metadata): parsing with line
 * numbers so every error names file:line and key. */
#ifndef WZ_KV_H
#define WZ_KV_H

#include "common/wz_error.h"

typedef struct wz_kv wz_kv;

/* Parses text: one "key = value" per line, '#' starts a comment, blank lines
 * ignored, keys are [a-z0-9_.], a key may appear once.  `origin` names the
 * source in messages (a path, or "embedded:product-page").  The caller frees
 * the result with wz_kv_free. */
wz_err wz_kv_parse(const char *text, const char *origin, wz_kv **out /* OUT */, wz_diag *diag);
wz_err wz_kv_load(const char *path, wz_kv **out /* OUT */, wz_diag *diag);
void wz_kv_free(wz_kv *kv);

const char *wz_kv_origin(const wz_kv *kv);
int wz_kv_count(const wz_kv *kv);
const char *wz_kv_key(const wz_kv *kv, int i);
const char *wz_kv_value_at(const wz_kv *kv, int i);
int wz_kv_line_at(const wz_kv *kv, int i);

/* Raw value or NULL; marks the key used. */
const char *wz_kv_get(wz_kv *kv, const char *key);
/* Line number of key, 0 if absent. */
int wz_kv_line(const wz_kv *kv, const char *key);

/* Typed getters: absent key -> *out = fallback and WZ_OK, unless required,
 * then WZ_ERR_MISSING.  A malformed value -> WZ_ERR_INPUT naming
 * origin:line and key. */
wz_err wz_kv_get_double(wz_kv *kv, const char *key, int required, double fallback,
			double *out /* OUT */, wz_diag *diag);
wz_err wz_kv_get_long(wz_kv *kv, const char *key, int required, long fallback,
		      long *out /* OUT */, wz_diag *diag);
wz_err wz_kv_get_string(wz_kv *kv, const char *key, int required, const char *fallback,
			const char **out /* OUT */, wz_diag *diag);

/* Fails with WZ_ERR_INPUT naming the first key not in known[] (NULL-ended). */
wz_err wz_kv_check_known(const wz_kv *kv, const char *const *known, wz_diag *diag);

#endif
