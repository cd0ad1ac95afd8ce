/* verify as a job: a stored run recomputed from its inputs (the files as
 * they are now, or the texts the run recorded) through the job that made
 * it, and compared figure by figure. */
#ifndef WZ_RUNS_VERIFY_H
#define WZ_RUNS_VERIFY_H

#include "archive/archive.h"
#include "common/wz_kv.h"
#include "runs/measure.h"
#include "runs/propose.h"
#include "runs/sim_setup.h"

/* A run's request, in the struct of its job (run->command: "propose",
 * "size" or "codec"). */
typedef struct {
	wz_propose_opts propose;
	wz_size_opts size;
	wz_measure_req measure;
	const char *paths[WZ_MEASURE_MAX_TRACES]; /* measure.paths */
	wz_kv *kv;                                /* what the strings point into */
} wz_verify_request;

/* Reads the request run recorded (runs/request.h).  Returns 0 when read,
 * -1 when the run has none (stored before requests were: the program
 * parses its recorded arguments instead), or an exit status after
 * reporting an unreadable one.  Free with wz_verify_request_free. */
int wz_verify_request_read(const wza_run *run, wz_verify_request *out /* OUT */);
void wz_verify_request_free(wz_verify_request *r);

typedef struct {
	const wza_run *run;          /* the stored run: propose, size or codec */
	const wza_run *codec_run;    /* the codec run a propose run used, or NULL */
	int stored;                  /* the recorded input texts, not today's files */
	wz_verify_request *request;  /* its request (paths are changed to the recorded ones) */
} wz_verify_req;

/* Recomputes and compares.  report gets what to tell: the inputs that
 * changed, and either every difference or that all reproduced (it may hold
 * text when the recomputation failed too).  Returns 0 when every figure
 * reproduced exactly, 1 when some differ or the run could not be
 * recomputed, 2 for bad input; errors go to the sink. */
int wz_verify_run(const wz_verify_req *rq, wz_buf *report);

/* Lists the figures that differ between two runs (value, text, or present
 * in one only) into out, one line each; returns how many. */
int wz_figures_diff(const wza_run *a, const wza_run *b, const char *name_a, const char *name_b,
		    wz_buf *out);

#endif
