/* Histograms, summaries and result text of a simulation run (metrics.h). */
#include "sim/metrics.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Log-linear bins: 2^HIST_SUB_BITS per octave from 2^HIST_OCT_MIN s (about
 * a microsecond).  The octave is the value's exponent bits and the place in
 * it the top mantissa bits, so binning a sample takes no logarithm; a bin
 * is at most 2^-8 (0.39%) of its value wide, and the last one (2^24 s,
 * half a year) is beyond any latency we simulate. */
#define HIST_OCT_MIN (-20)
#define HIST_SUB_BITS 8
_Static_assert(WZS_HIST_BINS == 44 << HIST_SUB_BITS, "44 octaves of bins");

static int bin_of(double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof u);
	int octave = (int)((u >> 52) & 0x7ff) - 1023 - HIST_OCT_MIN;
	if (octave < 0)
		return -1;
	long k = (long)octave << HIST_SUB_BITS | (long)((u >> (52 - HIST_SUB_BITS)) &
							 ((1u << HIST_SUB_BITS) - 1));
	return k >= WZS_HIST_BINS ? WZS_HIST_BINS - 1 : (int)k;
}

static double bin_upper_edge(int b)
{
	int sub = b & ((1 << HIST_SUB_BITS) - 1);
	return ldexp(1.0 + (sub + 1) / (double)(1 << HIST_SUB_BITS),
		     (b >> HIST_SUB_BITS) + HIST_OCT_MIN);
}

void wzs_hist_add(wzs_hist *h, double v)
{
	h->n++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
	int b = v > 0 ? bin_of(v) : -1;
	if (b < 0)
		h->zero++;
	else
		h->bins[b]++;
}

/* The rank of the p-quantile's sample among h's n (1-based). */
static unsigned long long quantile_rank(const wzs_hist *h, double p)
{
	unsigned long long rank = (unsigned long long)ceil(p * (double)h->n);
	return rank < 1 ? 1 : rank;
}

double wzs_hist_quantile(const wzs_hist *h, double p)
{
	if (h->n == 0)
		return 0;
	unsigned long long rank = quantile_rank(h, p);
	unsigned long long seen = h->zero;
	if (seen >= rank)
		return 0; /* at or below a microsecond: no wait worth reporting */
	for (int b = 0; b < WZS_HIST_BINS; b++) {
		seen += h->bins[b];
		if (seen >= rank) {
			double edge = bin_upper_edge(b);
			return edge < h->max ? edge : h->max;
		}
	}
	return h->max;
}

void wzs_hist_quantiles(const wzs_hist *h, const double *p, int np, double *out)
{
	assert(np >= 0 && np <= WZS_HIST_MAX_QUANTILES);
	if (h->n == 0) {
		for (int i = 0; i < np; i++)
			out[i] = 0;
		return;
	}
	/* The quantiles by rank (an insertion sort: a few dozen at most). */
	unsigned long long rank[WZS_HIST_MAX_QUANTILES];
	int order[WZS_HIST_MAX_QUANTILES];
	for (int i = 0; i < np; i++) {
		rank[i] = quantile_rank(h, p[i]);
		int j = i;
		for (; j > 0 && rank[order[j - 1]] > rank[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	int next = 0;
	unsigned long long seen = h->zero;
	for (; next < np && seen >= rank[order[next]]; next++)
		out[order[next]] = 0;
	for (int b = 0; b < WZS_HIST_BINS && next < np; b++) {
		seen += h->bins[b];
		if (seen < rank[order[next]])
			continue;
		double edge = bin_upper_edge(b), at = edge < h->max ? edge : h->max;
		for (; next < np && seen >= rank[order[next]]; next++)
			out[order[next]] = at;
	}
	for (; next < np; next++)
		out[order[next]] = h->max;
}

double wzs_hist_mean(const wzs_hist *h)
{
	return h->n ? h->sum / (double)h->n : 0;
}

void wzs_hist_summary(const wzs_hist *h, wzs_summary *out)
{
	/* The number of samples below the p-quantile is binomial (n, p): the
	 * ranks n p -+ 1.96 sqrt(n p (1 - p)) bracket the quantile with about
	 * 95% confidence (normal approximation, rounded outwards). */
	double n = (double)h->n, half = 1.96 * sqrt(n * 0.99 * 0.01);
	double lo = floor(n * 0.99 - half), hi = ceil(n * 0.99 + half);
	const double p[5] = { 0.50, 0.90, 0.99, (lo < 1 ? 1 : lo) / n, hi / n };
	double q[5];
	wzs_hist_quantiles(h, p, h->n && hi < n ? 5 : 4, q);
	out->p50 = q[0];
	out->p90 = q[1];
	out->p99 = q[2];
	out->p99_lo = h->n ? q[3] : 0;
	out->p99_hi = h->n ? (hi >= n ? h->max : q[4]) : 0;
	out->mean = wzs_hist_mean(h);
	out->max = h->max;
	out->n = h->n;
}

const double wzs_cdf_p[WZS_CDF_POINTS] = {
	0.01, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60,
	0.65, 0.70, 0.75, 0.80, 0.85, 0.90, 0.95, 0.97, 0.98, 0.99, 0.995, 0.999, 1.0,
};

void wzs_result_free(wzs_result *r)
{
	if (!r)
		return;
	free(r->samples);
	r->samples = NULL;
	r->nsamples = 0;
}

/* A latency of no request is not zero: with nothing measured the summary
 * says "none" (wzplan-sim(1)). */
static void summary(wz_buf *out, const char *name, const wzs_summary *s)
{
	if (s->n == 0) {
		wz_buf_printf(out, "%s_p50_s = none\n%s_p90_s = none\n%s_p99_s = none\n"
			      "%s_mean_s = none\n%s_max_s = none\n",
			      name, name, name, name, name);
		return;
	}
	wz_buf_printf(out, "%s_p50_s = %.6f\n%s_p90_s = %.6f\n%s_p99_s = %.6f\n%s_mean_s = %.6f\n"
		      "%s_max_s = %.6f\n",
		      name, s->p50, name, s->p90, name, s->p99, name, s->mean, name, s->max);
	if (!strcmp(name, "ttft") || !strcmp(name, "tpot"))
		wz_buf_printf(out, "%s_p99_interval95_s = %.6f..%.6f\n", name, s->p99_lo, s->p99_hi);
}

double wzs_decode_wait_prefill_share(const wzs_result *r)
{
	double all = r->decode_run_s + r->decode_wait_prefill_s;
	return all > 0 ? r->decode_wait_prefill_s / all : -1;
}

double wzs_prefill_recomputed_share(const wzs_result *r)
{
	return r->prefill_tokens > 0 ? r->prefill_tokens_recomputed / r->prefill_tokens : -1;
}

void wzs_result_describe(const wzs_result *r, wz_buf *out)
{
	wz_buf_printf(out, "replicas = %ld\nsimulated_s = %.3f\nmeasured_window_s = %.3f\n",
		      r->replicas, r->sim_time_s, r->window_s);
	wz_buf_printf(out, "requests_arrived = %llu\nrequests_completed = %llu\n"
		      "requests_refused = %llu\nrefused_too_big = %llu\nrefused_timeout = %llu\n"
		      "requests_unfinished = %llu\n",
		      r->arrived, r->completed, r->refused, r->refused_too_big, r->refused_timeout,
		      r->unfinished);
	summary(out, "ttft", &r->ttft);
	summary(out, "tpot", &r->tpot);
	summary(out, "e2e", &r->e2e);
	summary(out, "queue", &r->queue);
	wz_buf_printf(out, "met_slo = %llu\ngoodput_rps = %.6f\ngoodput_tokens_s = %.3f\n"
		      "throughput_tokens_s = %.3f\noffered_tokens_s = %.3f\n",
		      r->met_slo, r->goodput_rps, r->goodput_tok_s, r->throughput_tok_s,
		      r->offered_tok_s);
	wz_buf_printf(out, "arrival_rate_rps = %.6f\nmean_in_system = %.6f\nmean_time_in_system_s = %.6f\n",
		      r->arrival_rate, r->mean_in_system, r->mean_wait_system);
	wz_buf_printf(out, "parks_cpu = %llu\nparks_ssd = %llu\nrestores = %llu\nrecomputes = %llu\n"
		      "drops = %llu\nevictions = %llu\nsessions_started = %llu\nsessions_ended = %llu\n",
		      r->parks_cpu, r->parks_ssd, r->restores, r->recomputes, r->drops, r->evictions,
		      r->sessions_started, r->sessions_ended);
	wz_buf_printf(out, "sessions_moved = %llu\n", r->sessions_moved);
	wz_buf_printf(out, "prefix_lookups = %llu\n", r->prefix_lookups);
	static const char *const tiers[3] = { "hbm", "cpu", "ssd" };
	for (int t = 0; t < 3; t++) {
		if (r->prefix_lookups)
			wz_buf_printf(out, "prefix_hit_ratio_%s = %.6f\n", tiers[t],
				      (double)r->prefix_hits[t] / (double)r->prefix_lookups);
		else
			wz_buf_printf(out, "prefix_hit_ratio_%s = none\n", tiers[t]);
	}
	for (int t = 0; t < 3; t++) {
		if (r->prefix_tokens_wanted > 0)
			wz_buf_printf(out, "prefix_token_hit_ratio_%s = %.6f\n", tiers[t],
				      r->prefix_hit_tokens[t] / r->prefix_tokens_wanted);
		else
			wz_buf_printf(out, "prefix_token_hit_ratio_%s = none\n", tiers[t]);
	}
	wz_buf_printf(out, "prefix_tokens_saved = %.0f\n", r->prefix_tokens_saved);
	wz_buf_printf(out, "turns_waiting_for_previous_turn = %llu\nprevious_turn_wait_mean_s = %.6f\n",
		      r->deferred, r->deferred_wait_mean);
	wz_buf_printf(out, "mean_request_context_tokens = %.1f\n", r->mean_context);
	wz_buf_printf(out, "cache_occupancy_mean = %.6f\ncache_occupancy_peak = %.6f\n",
		      r->occupancy_mean, r->occupancy_peak);
	/* Where the first tokens past the TTFT target spent their time, summed
	 * over them (wzs_what_binds weighs the queue, restore, prefill and
	 * transfer; the prefill's wait and run apart, and the excess, are for
	 * the reader). */
	wz_buf_printf(out, "slow_ttft_excess_s = %.6f\nslow_ttft_queue_s = %.6f\n"
		      "slow_ttft_restore_s = %.6f\nslow_ttft_prefill_wait_s = %.6f\n"
		      "slow_ttft_prefill_run_s = %.6f\nslow_ttft_transfer_s = %.6f\n",
		      r->slow_ttft_excess_s, r->slow_ttft_queue_s,
		      r->slow_ttft_restore_s + r->slow_ttft_restore_decode_s, r->slow_ttft_prefill_wait_s,
		      r->slow_ttft_prefill_s - r->slow_ttft_prefill_wait_s, r->slow_ttft_transfer_s);
	wz_buf_printf(out, "prefill_tokens = %.0f\nprefill_recomputed_share = ", r->prefill_tokens);
	double recomputed = wzs_prefill_recomputed_share(r);
	if (recomputed >= 0)
		wz_buf_printf(out, "%.6f\n", recomputed);
	else
		wz_buf_puts(out, "none\n");
	double share = wzs_decode_wait_prefill_share(r);
	if (share >= 0)
		wz_buf_printf(out, "decode_time_behind_prefill_share = %.6f\n", share);
	else
		wz_buf_printf(out, "decode_time_behind_prefill_share = none\n");
	wz_buf_printf(out, "events = %llu\nstopped_at_first_refusal = %d\n", r->events,
		      r->stopped_early);
}

void wzs_result_occupancy_csv(const wzs_result *r, wz_buf *out)
{
	wz_buf_puts(out, "time_s,blocks_used,blocks_total,occupancy,running,queued,resident_idle,"
			 "parked_cpu,parked_ssd,cpu_gib,ssd_gib\n");
	for (size_t i = 0; i < r->nsamples; i++) {
		const wzs_sample *s = &r->samples[i];
		wz_buf_printf(out, "%.3f,%.0f,%.0f,%.6f,%ld,%ld,%ld,%ld,%ld,%.3f,%.3f\n", s->time,
			      s->blocks_used, s->blocks_total,
			      s->blocks_total > 0 ? s->blocks_used / s->blocks_total : 0, s->running,
			      s->queued, s->resident_idle, s->parked_cpu, s->parked_ssd,
			      s->cpu_bytes / 1073741824.0, s->ssd_bytes / 1073741824.0);
	}
}

double wzs_tokens_in_window(double output, double first_token, double finish, double from,
			    double to)
{
	if (output <= 0 || finish < from || first_token >= to)
		return 0;
	double n = first_token >= from ? 1 : 0;
	if (output > 1) {
		double lo = first_token > from ? first_token : from, hi = finish < to ? finish : to;
		double span = finish - first_token;
		n += span > 0 ? (output - 1) * (hi > lo ? hi - lo : 0) / span : (output - 1);
	}
	return n;
}
