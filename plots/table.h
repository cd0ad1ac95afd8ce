/* Result tables rendered as aligned text, Markdown, CSV or JSON. */
#ifndef WZP_TABLE_H
#define WZP_TABLE_H

#include "common/wz_error.h"
#include "common/wz_str.h"

typedef enum {
	WZP_TEXT = 0,
	WZP_CSV = 1,
	WZP_JSON = 2,
	WZP_MD = 3,
} wzp_output;

/* Parses "text", "table", "csv", "json", "md"/"markdown". */
wz_err wzp_output_parse(const char *name, wzp_output *out /* OUT */, wz_diag *diag);

typedef struct wzp_table wzp_table;

/* Creates a table with a title (shown in text and Markdown) and column keys
 * (used as CSV header and JSON member names) with human labels.  The caller
 * frees it with wzp_table_free.  Returns NULL when out of memory. */
wzp_table *wzp_table_new(const char *title);
void wzp_table_free(wzp_table *t);

/* Adds a column; `right` aligns numbers to the right in text output. */
void wzp_table_column(wzp_table *t, const char *key, const char *label, int right);
/* A right-aligned column for a figure with a confidence interval; with
 * `wide`, two more columns KEY_lo and KEY_hi (unlabelled) for its ends, so
 * CSV and JSON carry them apart. */
void wzp_table_ci_columns(wzp_table *t, int wide, const char *key, const char *label);

/* Starts a new row; cells are then added left to right. */
void wzp_table_row(wzp_table *t);
void wzp_table_str(wzp_table *t, const char *text);
/* A number: `display` is what people see, `value` what CSV and JSON carry
 * (full precision). */
void wzp_table_num(wzp_table *t, double value, const char *display);
/* A number shown with `decimals` digits and thousands separators. */
void wzp_table_numf(wzp_table *t, double value, int decimals);
/* An empty cell (null in JSON). */
void wzp_table_empty(wzp_table *t);

/* Notes printed under the table in text/Markdown (not in CSV/JSON, which
 * carry them as a separate "notes" member in JSON only). */
void wzp_table_note(wzp_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int wzp_table_rows(const wzp_table *t);
int wzp_table_cols(const wzp_table *t);
/* Raw value of a numeric cell (NaN for text or empty). */
double wzp_table_value(const wzp_table *t, int row, int col);
const char *wzp_table_text(const wzp_table *t, int row, int col);
int wzp_table_col_index(const wzp_table *t, const char *key);

/* Appends the rendering to out; returns WZ_ERR_NOMEM if any allocation in
 * building the table failed. */
wz_err wzp_table_render(const wzp_table *t, wzp_output how, wz_buf *out);

#endif
