/* Scenario files: what is served (model, GPU, users, context), which cache
 * formats to compare and how to size and price the fleets.  Format in
 * wzplan-scenario(5); the product page's scenario is the embedded default. */
#ifndef WZM_SCENARIO_H
#define WZM_SCENARIO_H

#include "common/wz_error.h"
#include "common/wz_kv.h"
#include "costmodel/capacity.h"
#include "costmodel/fleet.h"

typedef enum {
	WZM_MODE_SCALING = 1,
	WZM_MODE_MEMORY = 2,
	WZM_MODE_BOTH = 3,
} wzm_mode;

wz_err wzm_mode_parse(const char *name, wzm_mode *out /* OUT */, wz_diag *diag);
const char *wzm_mode_name(wzm_mode mode);

#define WZM_DEFAULT_SCENARIO "product-page"

typedef struct {
	char *name;
	char *origin;          /* path or "embedded:product-page" */
	char *model;
	char *gpu;
	long users;
	long context;
	char **formats;        /* format specs: codec names, or iso:X */
	int nformats;
	char *baseline_format;
	long baseline_gpus;    /* 0 when not given (scaling mode needs it) */
	wzm_mode mode;
	wzm_rounding rounding;
	char *price_set;
	wzm_memory_params mem;
	wz_kv *kv;             /* the whole file, for the keys of other modules */
} wzm_scenario;

/* Keys this module reads; other modules (sim) have their own lists. */
extern const char *const wzm_scenario_keys[];

/* What a numeric scenario key allows, for the file and its flag alike. */
typedef struct {
	const char *key;
	double min, max;
	int whole; /* a whole number */
} wzm_scenario_range;

/* The range of key, or NULL for a key without one. */
const wzm_scenario_range *wzm_scenario_range_of(const char *key);

/* Loads a scenario file, or with path NULL the embedded default.  The
 * caller frees the result with wzm_scenario_free. */
wz_err wzm_scenario_load(const char *path, wzm_scenario **out /* OUT */, wz_diag *diag);
/* Builds a scenario from parsed keys; takes ownership of kv in every case. */
wz_err wzm_scenario_from_kv(wz_kv *kv, wzm_scenario **out /* OUT */, wz_diag *diag);
void wzm_scenario_free(wzm_scenario *s);

/* Replaces the format list with a comma-separated one. */
wz_err wzm_scenario_set_formats(wzm_scenario *s, const char *list, wz_diag *diag);
/* Replaces a string member (model, gpu, ...) with a copy of value. */
wz_err wzm_scenario_set_string(char **member, const char *value, wz_diag *diag);

/* Checks values that only make sense together (users >= 1, context >= 1,
 * scaling needs baseline_gpus, the baseline format among the formats). */
wz_err wzm_scenario_validate(const wzm_scenario *s, wz_diag *diag);

#endif
