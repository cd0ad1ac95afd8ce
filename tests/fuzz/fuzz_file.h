/* Helpers for fuzz targets whose readers take a path (catalog folders,
 * scenarios, traffic importers): the input is written to a file in a
 * private folder made once per process, and the tables a reader hands out
 * are checked against the promises of traffic.h. */
#ifndef WZ_FUZZ_FILE_H
#define WZ_FUZZ_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/wz_error.h"
#include "traces/traffic.h"

/* Writes data to `name` in the private folder and returns its path (valid
 * until the next call with the same name); aborts when it cannot. */
const char *fuzz_file(const char *name, const void *data, size_t size);
/* The private folder's path. */
const char *fuzz_dir(void);
/* Removes `name` from the private folder (absent is fine). */
void fuzz_unlink(const char *name);

/* Aborts unless a refused read came with a message and no table. */
void fuzz_check_refusal(const wzt_traffic *t, const char *msg);
/* Aborts unless the table is sorted by arrival, has finite times and
 * token counts in 0..WZT_MAX_TOKENS, and reads back the same through the
 * normalized table's writer and reader. */
void fuzz_check_table(const wzt_traffic *t);
/* fuzz_check_table, and what importers add: sessions numbered densely in
 * order of first arrival, turns 0, 1, ... in each, and with from_zero set
 * the first arrival at 0 s (ServeGen keeps times from the sampled start). */
void fuzz_check_imported(const wzt_traffic *t, int from_zero);
/* The same file read with WZT_UNSORTED_REFUSE and WZT_UNSORTED_SORT:
 * each refusal has a message and no table; a file read in order gives the
 * same table both ways, with nothing moved; a sorted table passes
 * fuzz_check_imported. */
void fuzz_check_policies(wz_err refuse_err, const wzt_traffic *refused, const wz_diag *refuse_diag,
			 wz_err sort_err, const wzt_traffic *sorted, size_t moved,
			 const wz_diag *sort_diag);
/* Aborts unless a and b hold the same requests. */
void fuzz_check_same(const wzt_traffic *a, const wzt_traffic *b);

#endif
