/* A job's request as "key = value" lines (common/wz_kv.h), stored with its
 * run as the input of kind "request" named after the job, so that `verify`
 * recomputes what was asked rather than parsing a command line again.
 * Runs stored before requests were have their arguments only; verify
 * parses those the way the command did (cli/). */
#ifndef WZ_RUNS_REQUEST_H
#define WZ_RUNS_REQUEST_H

#include "archive/archive.h"
#include "common/wz_kv.h"
#include "runs/measure.h"
#include "runs/propose.h"
#include "runs/schema.h"
#include "runs/sim_setup.h"

#define WZ_REQUEST_KIND WZ_IN_REQUEST

/* The text of a request.  NULL when out of memory, or when a value cannot
 * be written as a key = value line (a '#', a line break, spaces at either
 * end): the run is then stored with its arguments only.  The caller frees
 * the result. */
char *wz_request_propose_text(const wz_propose_opts *o);
char *wz_request_size_text(const wz_size_opts *o);
char *wz_request_measure_text(const wz_measure_req *rq);

/* Records text as run's request for job ("propose", "size", "codec");
 * nothing when text is NULL. */
void wz_request_record(wza_run *run, const char *job, const char *text);
/* The request text run recorded for job, or NULL. */
const char *wz_request_of(const wza_run *run, const char *job);

/* A request read back from its text's kv (wz_kv_parse).  The strings point
 * into kv, which must outlive the request; paths (room for max) holds a
 * measurement's trace paths.  A key this program does not know, or a value
 * it cannot take, is an error naming it. */
wz_err wz_request_propose_read(wz_kv *kv, wz_propose_opts *o /* OUT */, wz_diag *diag);
wz_err wz_request_size_read(wz_kv *kv, wz_size_opts *o /* OUT */, wz_diag *diag);
wz_err wz_request_measure_read(wz_kv *kv, wz_measure_req *rq /* OUT */, const char **paths,
			       int max, wz_diag *diag);

#endif
