/* Simulator speed against a bare event loop measured in the same run: the
 * product page's population (fp8-mix, resident caches) at 1,000, 10,000
 * and 100,000 users, and a textbook binary-heap event loop doing the same
 * number of events with one pending event per user and replica.  Times
 * are this thread's CPU seconds (the machine may be shared).  Prints
 * the medians of several runs, the simulator/reference time ratio and
 * events per second (the target: ratio <= 1.3, flat per event;
 * the figures measured so far, and why the target is not met, are in
 * docs/validation.md, "Simulator speed").
 *
 * Events are counted as the result's `events`: every event of the model,
 * a replica's operation end that a cut decode epoch replaced included
 * (the simulator replaces it in its queue instead of popping and
 * ignoring it; wzs_queue_push_owned).  The reference pops and pushes that
 * many.  `pops` are the events the simulator took from its queue, and
 * ratio/pop compares its time with the reference's for that many events
 * (the reference's time scaled by pops / events: its cost per event is
 * flat at a given queue size), the stricter comparison.
 *
 * The simulator's time includes its start-up (each user's steady-start
 * draws, the replicas and the first events: 10-14% of a 900 s run at
 * 1,000 users), which the reference loop has none of.  `ratio-start`
 * takes it out: a run of 1 simulated second (no warm-up) times the start-up
 * and its events, and the ratio compares the rest with the reference
 * doing the rest's events.  It is an estimate (the start-up's cost does
 * not depend on the duration; the 1 s run's few events are taken to cost
 * what the long run's do); `ratio` stays the measure.
 *
 *   bench_sim [SIM_SECONDS [REPEATS]]   defaults 3600 s and 3 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "cli/sim_cli.h"

/* ---- the reference: a binary heap of (time, priority, sequence) ---- */

typedef struct {
	double time;
	uint32_t prio, kind;
	uint64_t seq;
	uint32_t a, b;
} ref_event;

static int ref_before(const ref_event *x, const ref_event *y)
{
	if (x->time != y->time)
		return x->time < y->time;
	if (x->prio != y->prio)
		return x->prio < y->prio;
	return x->seq < y->seq;
}

static void ref_push(ref_event *h, size_t *n, ref_event ev)
{
	size_t i = (*n)++;
	while (i > 0 && ref_before(&ev, &h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = ev;
}

static ref_event ref_pop(ref_event *h, size_t *n)
{
	ref_event top = h[0], last = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && ref_before(&h[c + 1], &h[c]))
			c++;
		if (!ref_before(&h[c], &last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
	return top;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Each popped event schedules one more a uniform delay later (mean
 * `mean_gap` s), so the queue holds `pending` events throughout. */
static double ref_loop(unsigned long long events, size_t pending, double mean_gap,
		       double *checksum /* OUT */)
{
	ref_event *h = malloc(pending * sizeof *h);
	if (!h)
		return -1;
	size_t n = 0;
	uint64_t s = 0x9e3779b97f4a7c15ULL, seq = 0;
	const double scale = 2 * mean_gap / 18446744073709551616.0;
	for (size_t i = 0; i < pending; i++)
		ref_push(h, &n, (ref_event){ (double)xorshift(&s) * scale, 0, 1, seq++, (uint32_t)i, 0 });
	double t0 = bench_thread_cpu_s(), sum = 0;
	for (unsigned long long e = 0; e < events; e++) {
		ref_event ev = ref_pop(h, &n);
		sum += ev.a;
		ev.time += (double)xorshift(&s) * scale;
		ev.seq = seq++;
		ref_push(h, &n, ev);
	}
	double t1 = bench_thread_cpu_s();
	free(h);
	*checksum = sum;
	return t1 - t0;
}

/* ---- the simulator ---- */

/* One run; duration > 0 replaces the set-up's duration, with no warm-up
 * (the start-up's run). */
static double sim_once(const wz_sim_setup *s, const wzs_replica_model *m, long users,
		       long replicas, double duration, unsigned long long *events /* OUT */,
		       unsigned long long *pops /* OUT */)
{
	wzs_run_config cfg;
	wz_sim_setup s2 = *s;
	if (duration > 0) {
		s2.params.duration_s = duration;
		s2.params.warmup_s = 0;
	}
	wz_sim_config(&s2, m, &cfg);
	cfg.users = users;
	cfg.replicas = replicas;
	wzs_result res;
	wz_diag diag;
	wz_diag_clear(&diag);
	double t0 = bench_thread_cpu_s();
	wz_err err = wzs_run(&cfg, &res, &diag);
	double t1 = bench_thread_cpu_s();
	if (err) {
		fprintf(stderr, "bench_sim: %s\n", diag.msg);
		wzs_result_free(&res);
		return -1;
	}
	*events = res.events;
	*pops = res.events_popped;
	wzs_result_free(&res);
	return t1 - t0;
}

int main(int argc, char **argv)
{
	double duration = argc > 1 ? atof(argv[1]) : 3600;
	int repeats = argc > 2 ? atoi(argv[2]) : 3;
	if (duration <= 0 || repeats < 1 || repeats > 99) {
		fprintf(stderr, "usage: bench_sim [SIM_SECONDS [REPEATS]]\n");
		return 2;
	}
	wz_scenario_opts so;
	memset(&so, 0, sizeof so);
	wz_sim_opts o;
	memset(&o, 0, sizeof o);
	wz_sim_setup setup;
	if (wz_sim_setup_load("bench_sim", &so, &o, &setup))
		return 1;
	setup.params.duration_s = duration;
	setup.params.idle_policy = WZS_IDLE_RESIDENT;
	wzs_replica_model model;
	wzm_format_size size;
	if (wz_sim_model("bench_sim", &setup, "fp8-mix", &model, &size)) {
		wz_sim_setup_free(&setup);
		return 1;
	}
	printf("bench_sim: %s on %d x %s, fp8-mix, resident, %.0f s simulated, median of %d\n",
	       setup.model->name, model.gpus, setup.gpu->name, duration, repeats);
	printf("%8s %9s %12s %12s %9s %9s %7s %9s %11s %13s %10s\n", "users", "replicas",
	       "events", "pops", "sim_s", "ref_s", "ratio", "ratio/pop", "ratio-start",
	       "sim_events/s", "sim_ns/ev");
	static const long sizes[] = { 1000, 10000, 100000 };
	int rc = 0;
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0] && !rc; k++) {
		long users = sizes[k], upr = model.mem.users_per_replica;
		long replicas = upr < 1 ? 1 : (users + upr - 1) / upr;
		double ts[99], tr[99], t0[99], checksum = 0;
		unsigned long long events = 0, pops = 0, ev0 = 0, pops0 = 0;
		for (int r = 0; r < repeats && !rc; r++) {
			t0[r] = sim_once(&setup, &model, users, replicas, 1, &ev0, &pops0);
			ts[r] = sim_once(&setup, &model, users, replicas, 0, &events, &pops);
			/* The same number of events; the population's mean gap
			 * between a user's events is about its think time. */
			tr[r] = ref_loop(events, (size_t)(users + replicas), setup.params.think_s,
					 &checksum);
			rc = ts[r] < 0 || tr[r] < 0 || t0[r] < 0;
		}
		if (rc)
			break;
		double sim_s = bench_median(ts, repeats), ref_s = bench_median(tr, repeats);
		double start_s = bench_median(t0, repeats);
		double rest = events > ev0 ? (double)(events - ev0) / (double)events : 1;
		printf("%8ld %9ld %12llu %12llu %9.3f %9.3f %7.2f %9.2f %11.2f %13.0f %10.1f\n", users,
		       replicas, events, pops, sim_s, ref_s, sim_s / ref_s,
		       sim_s / (ref_s * (double)pops / (double)events),
		       (sim_s - start_s) / (ref_s * rest), (double)events / sim_s,
		       1e9 * sim_s / (double)events);
		(void)checksum;
	}
	wz_sim_setup_free(&setup);
	return rc;
}
