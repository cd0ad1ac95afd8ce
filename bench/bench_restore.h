/* What bench/bench_restore.c (the set-up benchmark and main) shares with
 * bench/bench_restore_speed.c (the throughput part): the layers measured,
 * the clock, a trace's layer repeated as a window, and the rates file. */
#ifndef WZ_BENCH_RESTORE_H
#define WZ_BENCH_RESTORE_H

#include <stdio.h>

#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "traces/cache_trace.h"

/* layers of the profile (61; WZ_BENCH_LAYERS sets another count) */
extern int br_layers;
/* the rates file (bench_restore R), or NULL */
extern FILE *br_rates;

/* Monotonic seconds. */
double br_now(void);
/* A window of trace t's one layer repeated L times (*lat and *rope the
 * caller's to free). */
wzc_window br_view(const wzt_cache_trace *t, const char *split, int L, float **lat, float **rope);
/* One line of the rates file: key, value, unit, what it measures. */
void br_rate(const char *key, double value, const char *unit, const char *what);
/* The throughput part; 0, or -1 on failure (said on stderr). */
int bench_restore_speed(const wzc_profile *one, const wzc_format *fmt);

#endif
