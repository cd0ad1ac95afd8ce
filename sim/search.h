/* The fleet-size search: the smallest whole number of replicas whose run
 * meets the latency targets with no refused request (DESIGN.md, "Fleet
 * search"). */
#ifndef WZS_SEARCH_H
#define WZS_SEARCH_H

#include "common/wz_error.h"
#include "sim/binding.h"
#include "sim/sim.h"

typedef struct {
	long replicas;      /* smallest feasible, or 0 when none up to the limit */
	long runs;          /* simulations run */
	long largest;       /* the largest fleet the search would try */
	wzs_result result;  /* the run at `replicas` (free with wzs_result_free) */
	double seconds;     /* wall time is the caller's; simulated seconds summed */
	unsigned long long events;
	/* Why the largest failing fleet failed (replicas - 1 once the search
	 * has bisected; 0 when every run met the targets): a report can then
	 * say what binds.  Its run stopped at the first refusal, so the p99s
	 * cover only the requests until then. */
	long below;
	double below_ttft_p99, below_tpot_p99;
	double below_ttft_over;  /* its wzs_ttft_over: p99 TTFT over its target */
	unsigned long long below_refused_timeout, below_refused_too_big, below_completed;
	wzs_binding binding;  /* what made `below` fail: what binds the fleet */
	/* of the tokens `below` prefilled, the share that recomputed caches
	 * dropped or evicted for room (wzs_binding_text says so where prefill
	 * binds: then memory is behind the prefill load) */
	double below_recomputed_share;
	/* The verdicts that decided the answer were within the p99s' sampling
	 * noise (wzs_within_noise): `replicas` passed, or `below` failed, with
	 * a target inside the p99's 95% interval, so a longer run may move the
	 * answer by a step of the search. */
	int marginal, below_marginal;
} wzs_search;

/* One fleet size's runs (one per seed of the scenario's), as a search
 * makes them: base and replicas in; the rest out. */
typedef struct {
	const wzs_run_config *base;
	long replicas;
	wzs_result res;    /* the first failing run, else the tightest (wzs_probe_free) */
	wz_err err;
	wz_diag diag;
	int ok;            /* every run met the targets */
	long runs;         /* the seeds' runs made */
	uint64_t events;   /* over them */
	double seconds;
} wzs_probe;

/* Room for wzs_search_binds's text. */
#define WZS_BINDS_TEXT 128

/* What binds the search's fleet, as reports print it (wzs_binding_text of
 * its binding and of below_recomputed_share), in buf. */
const char *wzs_search_binds(const wzs_search *s, char buf[WZS_BINDS_TEXT]);

/* Whether a run's verdict could be the p99's sampling noise: no request
 * refused, and a target inside its p99's 95% interval (TTFT or TPOT). */
int wzs_within_noise(const wzs_params *p, const wzs_result *r);

/* Searches 1, 2, 4, ... until a run meets the targets (at most
 * max_replicas), then bisects between the last failing and the first
 * passing count.  This assumes feasibility is monotone in the fleet size,
 * which holds for the model's queueing in expectation and, with each user
 * on its own random stream, nearly always run by run.  Runs below the
 * answer stop at their first refusal.  The search ends at one replica per
 * session, beyond which more cannot help.  `base` gives everything but the
 * replica count.  With `threads` > 1 the search runs counts it may need
 * ahead on that many threads; its answer and the runs it reports (in
 * on_run, called on the caller's thread, in order) are the same for every
 * thread count. */
wz_err wzs_size(const wzs_run_config *base, long max_replicas, int threads,
		void (*on_run)(void *ud, long replicas, const wzs_result *r, int ok), void *ud,
		wzs_search *out /* OUT */, wz_diag *diag);

/* wzs_size for a caller that only wants a fleet of at most max_replicas
 * (one that beats a fleet found already): max_replicas is run first, and
 * where it fails the search ends there (replicas 0, `below` that count):
 * by the same monotonicity, no smaller fleet meets the targets.  Where
 * it passes, wzs_size's doubling and bisection below it follow.  One run
 * for a fleet that cannot win, where wzs_size's doubling makes several,
 * and the same answer wherever feasibility is monotone. */
wz_err wzs_size_below(const wzs_run_config *base, long max_replicas, int threads,
		      void (*on_run)(void *ud, long replicas, const wzs_result *r, int ok), void *ud,
		      wzs_search *out /* OUT */, wz_diag *diag);

/* wzs_size_below's first run made ahead, so that a caller can run the
 * first runs of several searches at once (wzs_probes_run) and then finish
 * each in its turn (wzs_size_below_after, which takes over top's result):
 * the same answer, runs and on_run calls as wzs_size_below. */
void wzs_probe_init(wzs_probe *p /* OUT */, const wzs_run_config *base, long max_replicas);
void wzs_probes_run(wzs_probe *p, int n);   /* n at once, on n threads */
wz_err wzs_size_below_after(wzs_probe *top, int threads,
			    void (*on_run)(void *ud, long replicas, const wzs_result *r, int ok), void *ud,
			    wzs_search *out /* OUT */, wz_diag *diag);
void wzs_probe_free(wzs_probe *p);

#endif
