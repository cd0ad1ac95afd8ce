/* The cost comparison of cache formats for one scenario: fleets by scaling
 * and by memory accounting, priced, with savings against the baseline
 * format.  Shared by `wzplan cost` and `wzplan propose`. */
#ifndef WZM_COMPARE_H
#define WZM_COMPARE_H

#include "common/wz_error.h"
#include "costmodel/capacity.h"
#include "costmodel/catalog.h"
#include "costmodel/fleet.h"
#include "costmodel/scenario.h"

/* A format as the cost model sees it: only its size matters here.  The
 * caller (cli) resolves names through the codec registry. */
typedef struct {
	char name[48];           /* "fp8-mix", "iso:1.42", "wz-5.44" */
	char label[96];          /* for people: "wz at fp8-mix quality, 1.42x fewer bits" */
	double record_per_layer; /* bytes per token per layer (may be fractional for iso:) */
	double bits_per_value;
} wzm_format_size;

typedef struct {
	wzm_format_size fmt;
	wzm_fleet scaling;       /* valid when the mode includes scaling */
	wzm_memory memory;       /* valid when the mode includes memory */
	wzm_fleet by_memory;
} wzm_compare_row;

typedef struct {
	const wzm_model *model;
	const wzm_gpu *gpu;
	wzm_rates rates;
	wzm_compare_row *rows;
	int nrows;
	int baseline;            /* index of the baseline format's row */
	int context_over_limit;  /* 1: context exceeds the model's max_context */
} wzm_compare;

/* Runs the comparison.  out->rows is allocated; free with wzm_compare_free. */
wz_err wzm_compare_run(const wzm_scenario *s, const wzm_catalog *cat,
		       const wzm_format_size *formats, int nformats, wzm_compare *out /* OUT */,
		       wz_diag *diag);
void wzm_compare_free(wzm_compare *c);

#endif
