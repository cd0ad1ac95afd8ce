/* One simulation run: a fleet of identical replicas serving a replayed
 * traffic table (open loop) or a synthetic closed population, with the
 * results of metrics.h. */
#ifndef WZS_SIM_H
#define WZS_SIM_H

#include "common/wz_error.h"
#include "sim/metrics.h"
#include "sim/params.h"
#include "sim/replica.h"
#include "traces/traffic.h"

typedef struct {
	const wzs_params *params;
	const wzs_replica_model *model;
	long replicas;
	/* the synthetic population, used when traffic is NULL */
	long users;
	long initial_context;        /* tokens each new session starts with */
	long max_context;            /* a session whose next turn would pass this ends
					and is replaced (the model's window); 0: none */
	const wzt_traffic *traffic;  /* replayed to the end, then drained */
	int stop_on_refusal;         /* end the run at the first counted refusal */
	/* Called every 2^20 events taken from the queue and at the end (may
	 * be NULL; the last call's count is the result's `events`). */
	void (*progress)(void *ud, double sim_time, double end_time, unsigned long long events);
	void *progress_ud;
} wzs_run_config;

/* Runs the simulation.  The caller frees out's samples with wzs_result_free
 * (also after a failure). */
wz_err wzs_run(const wzs_run_config *cfg, wzs_result *out /* OUT */, wz_diag *diag);

/* Whether a run meets the targets: no refused request, p99 TTFT and p99
 * TPOT within the parameters' targets, and at least one completed request. */
int wzs_meets_targets(const wzs_params *p, const wzs_result *r);

/* The TTFT target of a request bringing `new_tokens` to prefill:
 * ttft_p99_s plus ttft_per_1k_tokens_s per 1,000 of them. */
double wzs_request_ttft_target(const wzs_params *p, int64_t new_tokens);

/* A run's p99 TTFT over its target: the p99 of each request's TTFT over
 * its own target where targets grow with the prompt, else the p99 TTFT
 * over ttft_p99_s (above 1: missed). */
double wzs_ttft_over(const wzs_params *p, const wzs_result *r);

#endif
