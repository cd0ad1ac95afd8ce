/* Cost-comparison tables: the figures of a wzm_compare as the tables `cost`
 * prints and the proposal shows. */
#ifndef WZ_RUNS_COST_REPORT_H
#define WZ_RUNS_COST_REPORT_H

#include "costmodel/compare.h"
#include "plots/table.h"

/* Cost-comparison tables.  Each returns a new table the
 * caller frees with wzp_table_free, or NULL when out of memory. */
wzp_table *wz_report_scaling(const wzm_scenario *s, const wzm_compare *c);
wzp_table *wz_report_memory(const wzm_scenario *s, const wzm_compare *c);
wzp_table *wz_report_breakdown(const wzm_scenario *s, const wzm_compare *c);
/* One wide row per format with every figure, for CSV and JSON. */
wzp_table *wz_report_wide(const wzm_scenario *s, const wzm_compare *c);
/* Renders the human tables (text/md) or the wide table (csv/json). */
wz_err wz_report_render(const wzm_scenario *s, const wzm_compare *c, wzp_output how,
			wz_buf *out);

#endif
