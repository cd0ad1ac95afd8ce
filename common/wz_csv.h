/* CSV files read whole into rows of fields (libcsv underneath), each row
 * remembering the line it started on so errors can name file:line. */
#ifndef WZ_CSV_H
#define WZ_CSV_H

#include <stddef.h>

#include "common/wz_error.h"

typedef struct {
	char **fields;
	int nfields;
	int line; /* 1-based line where the record starts */
} wz_csv_row;

typedef struct {
	wz_csv_row *rows; /* rows[0] is the header when the file has one */
	int nrows;
	char *origin;     /* file name used in messages */
} wz_csv;

/* Parses text (n bytes).  Blank lines are skipped.  The caller frees the
 * result with wz_csv_free. */
wz_err wz_csv_parse(const char *text, size_t n, const char *origin, wz_csv **out /* OUT */,
		    wz_diag *diag);
/* Reads and parses a file of at most max_bytes. */
wz_err wz_csv_load(const char *path, size_t max_bytes, wz_csv **out /* OUT */, wz_diag *diag);
void wz_csv_free(wz_csv *csv);

/* Index of a header column (row 0), compared case-insensitively after
 * trimming; -1 when absent. */
int wz_csv_column(const wz_csv *csv, const char *name);

/* Field of a row, "" when the row is shorter. */
const char *wz_csv_field(const wz_csv_row *row, int col);

#endif
