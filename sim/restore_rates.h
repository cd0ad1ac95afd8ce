/* The host-side decode rates a restore from the offload tier is limited
 * by, read from the rates file bench/bench_restore writes (docs/restore.md,
 * "The rates file"): a parked wzx session comes back no faster than the
 * host's cores decode it, whatever the link's bandwidth. */
#ifndef WZS_RESTORE_RATES_H
#define WZS_RESTORE_RATES_H

#include "common/wz_error.h"

typedef struct {
	/* token-layers/s on one core; NAN where the file has no such line */
	double to_records;  /* restore_records_tokens_per_core_s: wzx to wz records */
	double to_values;   /* restore_values_tokens_per_core_s: wzx to the cache's values */
	char origin[512];   /* the file read, for messages and reports */
} wzs_restore_rates;

/* Reads a rates file.  Lines starting with '#' and blank lines are
 * skipped; every other line is key, value, unit and a sentence, separated
 * by single tabs.  Unknown keys are ignored (as the format says), but
 * every line must be well formed, and a known key must carry its unit and
 * a positive finite value.  Errors (WZ_ERR_INPUT, WZ_ERR_IO) name the file,
 * the line and the field. */
wz_err wzs_restore_rates_read(const char *path, wzs_restore_rates *out /* OUT */, wz_diag *diag);

/* The per-core rate for restoring `offload_format` into the GPU tier's
 * `gpu_format`: wzx into wz records when the GPU tier is wz (the format
 * decodes to exactly those codes), else wzx to the cache's own values.  0
 * when the offload format needs no decode (the GPU tier's own bytes,
 * copied as they are).  Fails naming the key the file lacks, or that no
 * file was given (rates NULL), for a wzx offload. */
wz_err wzs_restore_rate(const wzs_restore_rates *rates, const char *gpu_format,
			const char *offload_format, double *per_core /* OUT */, wz_diag *diag);

#endif
