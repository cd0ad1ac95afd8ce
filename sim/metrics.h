/* What a simulation run measures: latency distributions in log-spaced
 * histograms (fixed memory for a day of traffic, percentiles within 0.4%),
 * counters, and the cache occupancy over time. */
#ifndef WZS_METRICS_H
#define WZS_METRICS_H

#include <stddef.h>

#include "common/wz_error.h"
#include "common/wz_str.h"

/* Log-linear bins, at most 0.39% wide, from about 1 microsecond (metrics.c). */
#define WZS_HIST_BINS (44 << 8)

typedef struct {
	unsigned long long n;
	double sum, max;
	unsigned long long zero;            /* values <= the lowest bin */
	unsigned long long bins[WZS_HIST_BINS];
} wzs_hist;

void wzs_hist_add(wzs_hist *h, double seconds);
/* The p-quantile (0 < p <= 1): the upper edge of its bin, so it never
 * understates; 0 when empty. */
double wzs_hist_quantile(const wzs_hist *h, double p);
/* The p[i]-quantiles into out[i], each what wzs_hist_quantile gives, in
 * one walk over the bins instead of one each (a run's summaries take
 * some seventy, a visible share of a short run).  At most
 * WZS_HIST_MAX_QUANTILES of them. */
#define WZS_HIST_MAX_QUANTILES 64
void wzs_hist_quantiles(const wzs_hist *h, const double *p, int np, double *out /* OUT */);
double wzs_hist_mean(const wzs_hist *h);

typedef struct {
	double p50, p90, p99, mean, max;
	/* A 95% interval for the p99 from the run's own samples (order
	 * statistics, no distribution assumed): a short run's p99 rests on a
	 * few tail requests, and a target inside this interval is met or
	 * missed by chance. */
	double p99_lo, p99_hi;
	unsigned long long n;
} wzs_summary;

void wzs_hist_summary(const wzs_hist *h, wzs_summary *out /* OUT */);

/* The probabilities at which a run keeps the quantiles of its latency
 * distributions, so that charts can draw them without the histograms:
 * dense in the tail, where the targets are. */
#define WZS_CDF_POINTS 26
extern const double wzs_cdf_p[WZS_CDF_POINTS];

/* One row of the occupancy series, fleet totals at one instant. */
typedef struct {
	double time;
	double blocks_used, blocks_total;
	long running, queued, resident_idle, parked_cpu, parked_ssd;
	double cpu_bytes, ssd_bytes;
} wzs_sample;

typedef struct {
	/* latency, over requests arriving after the warm-up */
	wzs_summary ttft, tpot, e2e, queue;
	/* each request's TTFT over its own target, where the target grows
	 * with the prompt (ttft_per_1k_tokens_s > 0; else n is 0) */
	wzs_summary ttft_ratio;
	double ttft_cdf[WZS_CDF_POINTS], tpot_cdf[WZS_CDF_POINTS]; /* seconds, at wzs_cdf_p */
	unsigned long long arrived, completed, refused, unfinished, met_slo;
	unsigned long long refused_too_big, refused_timeout;
	unsigned long long refused_batch_capped; /* timeouts whose wait was max_batch's */
	/* What binds (sim/binding.h): the parts of TTFT of the requests over
	 * the TTFT target (queueing for admission, restoring from the offload
	 * tier, prefill), and the replicas' busy time by operation */
	double slow_ttft_queue_s, slow_ttft_restore_s, slow_ttft_prefill_s;
	double slow_ttft_restore_decode_s; /* restores that waited on the host's decode */
	double slow_ttft_transfer_s;       /* disaggregated: the cache's move to decode */
	/* of slow_ttft_prefill_s, the time before its prefill began (waiting
	 * for a pass with room, or for pool GPUs), and the slow first tokens'
	 * time past the target, summed */
	double slow_ttft_prefill_wait_s, slow_ttft_excess_s;
	/* Tokens prefilled (passes and pools, the whole run), and of them the
	 * contexts of sessions whose cache was dropped or evicted for room and
	 * had to be computed again */
	double prefill_tokens, prefill_tokens_recomputed;
	double busy_pool_prefill_s;        /* disaggregated: prefill pool GPU-seconds */
	double busy_prefill_s, busy_decode_compute_s, busy_decode_memory_s;
	/* expert parallelism: decode steps whose all-to-all was longer than
	 * their roofline (apart from the two above), and prefill passes whose
	 * all-to-all was (part of busy_prefill_s) */
	double busy_decode_network_s, busy_prefill_network_s;
	/* Request-seconds of the measured window that requests in a decode
	 * batch spent in its decode steps, and waiting while their replica
	 * ran a prefill pass (passes are replica-wide: the whole batch waits);
	 * their share is what prefill takes out of the decode side's time, the
	 * TPOT tail's usual cause under aggregated serving */
	double decode_run_s, decode_wait_prefill_s;
	/* cache movements */
	unsigned long long parks_cpu, parks_ssd, restores, recomputes, drops, evictions;
	unsigned long long sessions_moved; /* later turns the router sent away from their cache */
	unsigned long long sessions_started, sessions_ended;
	/* shared prefix cache: lookups (requests whose session held none of
	 * their context), hits in each tier (HBM, CPU, SSD) and the prefill
	 * tokens the hits saved */
	unsigned long long prefix_lookups, prefix_hits[3];
	double prefix_tokens_saved;
	/* tokens those lookups wanted, and found in each tier (a partial hit
	 * counts its part; a lookup's hit above is in its slowest tier) */
	double prefix_tokens_wanted, prefix_hit_tokens[3];
	/* replay: turns sent before their session's previous turn finished,
	 * and their mean wait for it (not counted as queueing) */
	unsigned long long deferred;
	double deferred_wait_mean;
	/* rates over the measured window */
	double window_s;
	double arrival_rate;      /* requests/s arriving: a replay's over its arrival span */
	double mean_in_system;    /* time-average requests in the system (L) */
	double mean_wait_system;  /* mean e2e of completed requests (W) */
	/* served: output tokens/s the fleet produced inside the window, every
	 * completed request's tokens that fell in it (wzs_tokens_in_window),
	 * whenever it arrived; offered: output tokens/s the window's arrivals
	 * asked for, over a replay's arrival span (as arrival_rate) */
	double throughput_tok_s;
	double offered_tok_s;
	double goodput_rps;       /* completed requests/s meeting both targets */
	double goodput_tok_s;
	double occupancy_mean, occupancy_peak; /* share of cache blocks in use */
	double mean_context;      /* tokens of context + prompt per arriving request */
	/* the run */
	double sim_time_s;
	unsigned long long events;
	/* of them, taken from the event queue; the others, replicas'
	 * operation ends replaced before their time (a decode epoch cut
	 * short), counted where the clock passed them (wzs_queue_events) */
	unsigned long long events_popped;
	int stopped_early;        /* 1: stopped at the first refusal (fleet search) */
	long replicas;
	wzs_sample *samples;      /* occupancy series; owned by the result */
	size_t nsamples;
} wzs_result;

void wzs_result_free(wzs_result *r);

/* Output tokens of one completed request that fall in [from, to): its
 * first at first_token, the other output - 1 spread evenly up to finish
 * (the decode steps in between). */
double wzs_tokens_in_window(double output, double first_token, double finish, double from,
			    double to);

/* Appends the results as "key = value" lines (stable order, fixed
 * precision, so equal runs give equal bytes). */
void wzs_result_describe(const wzs_result *r, wz_buf *out);
/* The share of decoding requests' time in the measured window spent
 * waiting for prefill passes (decode_wait_prefill_s over it and
 * decode_run_s), or -1 when no request decoded in it. */
double wzs_decode_wait_prefill_share(const wzs_result *r);
/* The share of the tokens prefilled that recompute dropped or evicted
 * caches; -1 when nothing was prefilled. */
double wzs_prefill_recomputed_share(const wzs_result *r);

/* Appends the occupancy series as CSV with a header. */
void wzs_result_occupancy_csv(const wzs_result *r, wz_buf *out);

#endif
