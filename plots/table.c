/* Table building and rendering in text, Markdown, CSV and JSON (table.h). */
#include "plots/table.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

typedef struct {
	char *text;   /* displayed text; NULL for an empty cell */
	double value; /* NaN unless numeric */
	int numeric;
} cell;

typedef struct {
	char *key;
	char *label;
	int right;
} column;

struct wzp_table {
	char *title;
	column *cols;
	int ncols;
	cell *cells; /* nrows x ncols */
	int nrows;
	int cap_rows;
	int cur_col;
	char **notes;
	int nnotes;
	int failed;
};

wz_err wzp_output_parse(const char *name, wzp_output *out, wz_diag *diag)
{
	if (!strcmp(name, "text") || !strcmp(name, "table"))
		*out = WZP_TEXT;
	else if (!strcmp(name, "csv"))
		*out = WZP_CSV;
	else if (!strcmp(name, "json"))
		*out = WZP_JSON;
	else if (!strcmp(name, "md") || !strcmp(name, "markdown"))
		*out = WZP_MD;
	else
		return wz_diag_set(diag, WZ_ERR_USAGE,
				   "--format: '%s' is not one of text, csv, json, md", name);
	return WZ_OK;
}

wzp_table *wzp_table_new(const char *title)
{
	wzp_table *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->title = strdup(title ? title : "");
	if (!t->title) {
		free(t);
		return NULL;
	}
	return t;
}

void wzp_table_free(wzp_table *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->ncols; i++) {
		free(t->cols[i].key);
		free(t->cols[i].label);
	}
	for (int i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i].text);
	for (int i = 0; i < t->nnotes; i++)
		free(t->notes[i]);
	free(t->notes);
	free(t->cols);
	free(t->cells);
	free(t->title);
	free(t);
}

void wzp_table_column(wzp_table *t, const char *key, const char *label, int right)
{
	if (t->failed || t->nrows > 0) {
		t->failed = 1; /* columns must come before rows */
		return;
	}
	column *grown = realloc(t->cols, sizeof *grown * (size_t)(t->ncols + 1));
	if (!grown) {
		t->failed = 1;
		return;
	}
	t->cols = grown;
	column *c = &t->cols[t->ncols];
	c->key = strdup(key);
	c->label = strdup(label);
	c->right = right;
	if (!c->key || !c->label)
		t->failed = 1;
	t->ncols++;
}

void wzp_table_ci_columns(wzp_table *t, int wide, const char *key, const char *label)
{
	char k[256];
	wzp_table_column(t, key, label, 1);
	if (!wide)
		return;
	snprintf(k, sizeof k, "%s_lo", key);
	wzp_table_column(t, k, "", 1);
	snprintf(k, sizeof k, "%s_hi", key);
	wzp_table_column(t, k, "", 1);
}

void wzp_table_row(wzp_table *t)
{
	if (t->failed)
		return;
	if (t->nrows == t->cap_rows) {
		int cap = t->cap_rows ? t->cap_rows * 2 : 16;
		cell *grown = realloc(t->cells, sizeof *grown * (size_t)cap * (size_t)t->ncols);
		if (!grown) {
			t->failed = 1;
			return;
		}
		t->cells = grown;
		t->cap_rows = cap;
	}
	for (int c = 0; c < t->ncols; c++)
		t->cells[t->nrows * t->ncols + c] = (cell){ NULL, NAN, 0 };
	t->nrows++;
	t->cur_col = 0;
}

static cell *next_cell(wzp_table *t)
{
	if (t->failed || t->nrows == 0 || t->cur_col >= t->ncols) {
		t->failed = 1;
		return NULL;
	}
	return &t->cells[(t->nrows - 1) * t->ncols + t->cur_col++];
}

void wzp_table_str(wzp_table *t, const char *text)
{
	cell *c = next_cell(t);
	if (!c)
		return;
	c->text = strdup(text ? text : "");
	if (!c->text)
		t->failed = 1;
}

void wzp_table_num(wzp_table *t, double value, const char *display)
{
	cell *c = next_cell(t);
	if (!c)
		return;
	c->text = strdup(display);
	c->value = value;
	c->numeric = 1;
	if (!c->text)
		t->failed = 1;
}

void wzp_table_numf(wzp_table *t, double value, int decimals)
{
	char text[64];
	wz_format_thousands(value, decimals, text, sizeof text);
	wzp_table_num(t, value, text);
}

void wzp_table_empty(wzp_table *t)
{
	next_cell(t);
}

void wzp_table_note(wzp_table *t, const char *fmt, ...)
{
	if (t->failed)
		return;
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	char **grown = realloc(t->notes, sizeof *grown * (size_t)(t->nnotes + 1));
	if (!grown || !(grown[t->nnotes] = strdup(text))) {
		if (grown)
			t->notes = grown;
		t->failed = 1;
		return;
	}
	t->notes = grown;
	t->nnotes++;
}

int wzp_table_rows(const wzp_table *t) { return t->nrows; }
int wzp_table_cols(const wzp_table *t) { return t->ncols; }

double wzp_table_value(const wzp_table *t, int row, int col)
{
	if (row < 0 || row >= t->nrows || col < 0 || col >= t->ncols)
		return NAN;
	return t->cells[row * t->ncols + col].value;
}

const char *wzp_table_text(const wzp_table *t, int row, int col)
{
	if (row < 0 || row >= t->nrows || col < 0 || col >= t->ncols)
		return NULL;
	return t->cells[row * t->ncols + col].text;
}

int wzp_table_col_index(const wzp_table *t, const char *key)
{
	for (int i = 0; i < t->ncols; i++)
		if (!strcmp(t->cols[i].key, key))
			return i;
	return -1;
}

/* Display width in characters, counting UTF-8 continuation bytes as none. */
static int text_width(const char *s)
{
	int w = 0;
	for (; s && *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

static void pad(wz_buf *out, int n)
{
	for (int i = 0; i < n; i++)
		wz_buf_puts(out, " ");
}

/* The same cells for a terminal: control characters shown, never sent
 * (wz_buf_terminal); NULL stays NULL. */
static char *term_text(const char *s, int *failed)
{
	if (!s)
		return NULL;
	wz_buf b = { 0 };
	wz_buf_terminal(&b, s);
	if (b.failed) {
		wz_buf_free(&b);
		*failed = 1;
		return NULL;
	}
	char *t = wz_buf_take(&b);
	if (!t)
		*failed = 1;
	return t;
}

static void render_text(const wzp_table *t, wz_buf *out)
{
	int *width = calloc((size_t)t->ncols + 1, sizeof *width);
	size_t ncells = (size_t)t->nrows * (size_t)t->ncols;
	char **shown = calloc(ncells + 1, sizeof *shown);
	int failed = !width || !shown;
	for (size_t i = 0; i < ncells && !failed; i++)
		shown[i] = term_text(t->cells[i].text, &failed);
	if (failed) {
		for (size_t i = 0; shown && i < ncells; i++)
			free(shown[i]);
		free(shown);
		free(width);
		out->failed = 1;
		return;
	}
	for (int c = 0; c < t->ncols; c++) {
		width[c] = text_width(t->cols[c].label);
		for (int r = 0; r < t->nrows; r++) {
			int w = text_width(shown[r * t->ncols + c]);
			if (w > width[c])
				width[c] = w;
		}
	}
	if (*t->title) {
		wz_buf_terminal(out, t->title);
		wz_buf_puts(out, "\n\n");
	}
	for (int r = -1; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			const char *s = r < 0 ? t->cols[c].label : shown[r * t->ncols + c];
			if (!s)
				s = "-";
			int gap = width[c] - text_width(s);
			if (c)
				wz_buf_puts(out, "  ");
			if (t->cols[c].right)
				pad(out, gap);
			wz_buf_puts(out, s);
			if (!t->cols[c].right && c + 1 < t->ncols)
				pad(out, gap);
		}
		wz_buf_puts(out, "\n");
		if (r < 0) {
			for (int c = 0; c < t->ncols; c++) {
				if (c)
					wz_buf_puts(out, "  ");
				for (int i = 0; i < width[c]; i++)
					wz_buf_puts(out, "-");
			}
			wz_buf_puts(out, "\n");
		}
	}
	if (t->nnotes)
		wz_buf_puts(out, "\n");
	for (int i = 0; i < t->nnotes; i++)
		wz_buf_printf(out, "%s\n", t->notes[i]);
	for (size_t i = 0; i < ncells; i++)
		free(shown[i]);
	free(shown);
	free(width);
}

/* Cells come from files (names in catalogs, scenarios and archives): in
 * Markdown no cell may end its row, open a link or a tag, or break the
 * line (wz_buf_markdown). */
static void md_escape(wz_buf *out, const char *s)
{
	wz_buf_markdown(out, s);
}


static void render_md(const wzp_table *t, wz_buf *out)
{
	if (*t->title) {
		wz_buf_puts(out, "**");
		wz_buf_markdown(out, t->title);
		wz_buf_puts(out, "**\n\n");
	}
	wz_buf_puts(out, "|");
	for (int c = 0; c < t->ncols; c++) {
		wz_buf_puts(out, " ");
		md_escape(out, t->cols[c].label);
		wz_buf_puts(out, " |");
	}
	wz_buf_puts(out, "\n|");
	for (int c = 0; c < t->ncols; c++)
		wz_buf_puts(out, t->cols[c].right ? " ---: |" : " --- |");
	wz_buf_puts(out, "\n");
	for (int r = 0; r < t->nrows; r++) {
		wz_buf_puts(out, "|");
		for (int c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c].text;
			wz_buf_puts(out, " ");
			md_escape(out, s ? s : "–");
			wz_buf_puts(out, " |");
		}
		wz_buf_puts(out, "\n");
	}
	if (t->nnotes)
		wz_buf_puts(out, "\n");
	for (int i = 0; i < t->nnotes; i++)
		wz_buf_printf(out, "%s\n", t->notes[i]);
}

/* Shortest text that reads back as the same double. */
static void format_exact(double v, char *text, size_t n)
{
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(text, n, "%.*g", prec, v);
		if (strtod(text, NULL) == v)
			return;
	}
}

static void render_csv(const wzp_table *t, wz_buf *out)
{
	for (int c = 0; c < t->ncols; c++) {
		if (c)
			wz_buf_puts(out, ",");
		wz_buf_csv_field(out, t->cols[c].key);
	}
	wz_buf_puts(out, "\n");
	for (int r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			const cell *x = &t->cells[r * t->ncols + c];
			if (c)
				wz_buf_puts(out, ",");
			if (x->numeric) {
				char text[40];
				format_exact(x->value, text, sizeof text);
				wz_buf_puts(out, text);
			} else {
				wz_buf_csv_field(out, x->text);
			}
		}
		wz_buf_puts(out, "\n");
	}
}

static void render_json(const wzp_table *t, wz_buf *out)
{
	json_t *root = json_object();
	json_t *rows = json_array();
	json_t *notes = json_array();
	for (int r = 0; r < t->nrows; r++) {
		json_t *row = json_object();
		for (int c = 0; c < t->ncols; c++) {
			const cell *x = &t->cells[r * t->ncols + c];
			json_t *v = x->numeric ? json_real(x->value)
				  : x->text   ? json_string(x->text)
					      : json_null();
			json_object_set_new(row, t->cols[c].key, v);
		}
		json_array_append_new(rows, row);
	}
	for (int i = 0; i < t->nnotes; i++)
		json_array_append_new(notes, json_string(t->notes[i]));
	json_object_set_new(root, "title", json_string(t->title));
	json_object_set_new(root, "rows", rows);
	json_object_set_new(root, "notes", notes);
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(root);
	if (!text) {
		out->failed = 1;
		return;
	}
	wz_buf_puts(out, text);
	wz_buf_puts(out, "\n");
	free(text);
}

wz_err wzp_table_render(const wzp_table *t, wzp_output how, wz_buf *out)
{
	if (t->failed)
		return WZ_ERR_NOMEM;
	switch (how) {
	case WZP_TEXT:
		render_text(t, out);
		break;
	case WZP_MD:
		render_md(t, out);
		break;
	case WZP_CSV:
		render_csv(t, out);
		break;
	case WZP_JSON:
		render_json(t, out);
		break;
	}
	return out->failed ? WZ_ERR_NOMEM : WZ_OK;
}
