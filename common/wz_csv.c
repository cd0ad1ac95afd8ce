/* Whole-file CSV reading on top of libcsv, with line numbers (wz_csv.h). */
#include "common/wz_csv.h"

#include <csv.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/wz_io.h"
#include "common/wz_name.h"
#include "common/wz_str.h"

typedef struct {
	wz_csv *csv;
	int cap_rows;
	char **fields;
	int nfields;
	int cap_fields;
	int line;       /* current physical line */
	int row_line;   /* line where the current record started */
	int next_line;  /* line where the next record will start */
	int failed;
} csv_state;

static void on_field(void *data, size_t len, void *ctx)
{
	csv_state *st = ctx;
	if (st->failed)
		return;
	if (st->nfields == 0)
		st->row_line = st->next_line;
	if (st->nfields == st->cap_fields) {
		int cap = st->cap_fields ? st->cap_fields * 2 : 16;
		char **grown = realloc(st->fields, sizeof *grown * (size_t)cap);
		if (!grown) {
			st->failed = 1;
			return;
		}
		st->fields = grown;
		st->cap_fields = cap;
	}
	char *copy = malloc(len + 1);
	if (!copy) {
		st->failed = 1;
		return;
	}
	if (len)
		memcpy(copy, data, len);
	copy[len] = '\0';
	st->fields[st->nfields++] = copy;
}

static void on_row(int terminator, void *ctx)
{
	(void)terminator;
	csv_state *st = ctx;
	if (st->failed)
		return;
	/* A blank line gives one empty field: skip it. */
	if (st->nfields == 0 || (st->nfields == 1 && st->fields[0][0] == '\0')) {
		for (int i = 0; i < st->nfields; i++)
			free(st->fields[i]);
		st->nfields = 0;
		return;
	}
	wz_csv *csv = st->csv;
	if (csv->nrows == st->cap_rows) {
		int cap = st->cap_rows ? st->cap_rows * 2 : 64;
		wz_csv_row *grown = realloc(csv->rows, sizeof *grown * (size_t)cap);
		if (!grown) {
			st->failed = 1;
			return;
		}
		csv->rows = grown;
		st->cap_rows = cap;
	}
	char **fields = malloc(sizeof *fields * (size_t)st->nfields);
	if (!fields) {
		st->failed = 1;
		return;
	}
	memcpy(fields, st->fields, sizeof *fields * (size_t)st->nfields);
	csv->rows[csv->nrows++] = (wz_csv_row){ fields, st->nfields, st->row_line };
	st->nfields = 0;
}

void wz_csv_free(wz_csv *csv)
{
	if (!csv)
		return;
	for (int r = 0; r < csv->nrows; r++) {
		for (int f = 0; f < csv->rows[r].nfields; f++)
			free(csv->rows[r].fields[f]);
		free(csv->rows[r].fields);
	}
	free(csv->rows);
	free(csv->origin);
	free(csv);
}

wz_err wz_csv_parse(const char *text, size_t n, const char *origin, wz_csv **out,
		    wz_diag *diag)
{
	*out = NULL;
	/* libcsv keeps a NUL inside a field, where every reader would stop. */
	wz_err bad = wz_text_check(text, n, origin, diag);
	if (bad)
		return bad;
	wz_csv *csv = calloc(1, sizeof *csv);
	if (!csv || !(csv->origin = strdup(origin))) {
		free(csv);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	struct csv_parser parser;
	if (csv_init(&parser, CSV_APPEND_NULL | CSV_STRICT_FINI) != 0) {
		wz_csv_free(csv);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	csv_state st = { .csv = csv, .line = 1, .next_line = 1 };
	/* Feed one physical line at a time so records know their line.  A
	 * record starts on a line reached outside quotes with no field pending;
	 * the parity of quote characters tells (an escaped "" keeps it). */
	size_t pos = 0;
	int in_quotes = 0;
	while (pos < n && !st.failed) {
		const char *nl = memchr(text + pos, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - (text + pos)) + 1 : n - pos;
		if (!in_quotes && st.nfields == 0)
			st.next_line = st.line;
		for (size_t k = 0; k < len; k++)
			in_quotes ^= text[pos + k] == '"';
		if (csv_parse(&parser, text + pos, len, on_field, on_row, &st) != len) {
			wz_err e = wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s", origin, st.line,
					       csv_strerror(csv_error(&parser)));
			csv_free(&parser);
			for (int i = 0; i < st.nfields; i++)
				free(st.fields[i]);
			free(st.fields);
			wz_csv_free(csv);
			return e;
		}
		pos += len;
		if (nl)
			st.line++;
	}
	if (csv_fini(&parser, on_field, on_row, &st) != 0 && !st.failed) {
		csv_free(&parser);
		for (int i = 0; i < st.nfields; i++)
			free(st.fields[i]);
		free(st.fields);
		wz_csv_free(csv);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: a quoted field is not closed", origin,
				   st.row_line);
	}
	csv_free(&parser);
	for (int i = 0; i < st.nfields; i++)
		free(st.fields[i]);
	free(st.fields);
	if (st.failed) {
		wz_csv_free(csv);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", origin);
	}
	*out = csv;
	return WZ_OK;
}

wz_err wz_csv_load(const char *path, size_t max_bytes, wz_csv **out, wz_diag *diag)
{
	char *text;
	size_t n;
	wz_err err = wz_read_file(path, max_bytes, &text, &n, diag);
	if (err)
		return err;
	err = wz_csv_parse(text, n, path, out, diag);
	free(text);
	return err;
}

int wz_csv_column(const wz_csv *csv, const char *name)
{
	if (csv->nrows == 0)
		return -1;
	const wz_csv_row *h = &csv->rows[0];
	for (int i = 0; i < h->nfields; i++) {
		char *t = wz_strdup_trim(h->fields[i]);
		/* A UTF-8 byte-order mark may precede the first header. */
		const char *s = t;
		if (t && i == 0 && !strncmp(s, "\xEF\xBB\xBF", 3))
			s += 3;
		int eq = t && strcasecmp(s, name) == 0;
		free(t);
		if (eq)
			return i;
	}
	return -1;
}

const char *wz_csv_field(const wz_csv_row *row, int col)
{
	if (col < 0 || col >= row->nfields)
		return "";
	return row->fields[col];
}
