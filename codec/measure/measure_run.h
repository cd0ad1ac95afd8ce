/* The work of `wzplan codec measure`: windows x formats measured on many
 * threads, with the bound, the per-layer rows and the wz rate sweep for
 * iso-quality bits; the same results for any thread count. */
#ifndef WZC_MEASURE_RUN_H
#define WZC_MEASURE_RUN_H

#include "codec/cores.h"
#include "codec/measure/metrics.h"
#include "codec/profile/profile.h"

/* The wz rates of the iso-quality sweep (bits/value as named; the rates
 * interpolated are the ones the sweep's records really have). */
#define WZC_ISO_N 17
extern const double wzc_iso_rates[WZC_ISO_N];

typedef struct {
	const wzc_window *windows;
	int nwindows;
	const wzc_format *formats;
	int nformats;
	int ref;                    /* index of fp8-mix in formats: the ratios' reference */
	const wzc_profile *profile; /* borrowed; NULL when no wz format and no sweep */
	int iso;                    /* also sweep wz rates for iso-quality bits */
	int per_layer;              /* also each layer's figures */
	int threads;                /* >= 1 */
	int nboot;                  /* bootstrap resamples of the iso intervals */
	uint64_t seed;
	/* Called from the worker threads as each piece starts (may be NULL). */
	void (*progress)(void *ud, const char *window, const char *what);
	void *progress_ud;
	int no_bound;               /* skip the Gaussian bound (bound and gap figures NaN) */
} wzc_run_spec;

/* One (window, format), or one layer of it. */
typedef struct wzc_run_cell {
	wzc_errors *e;
	double bound_nmse; /* the Gaussian bound at e's rate */
	double gap_db;     /* 10 log10(nmse / bound_nmse) */
	/* with a profile that caps the position part (--position-cap): the
	 * bound under that cap (wzc_spectrum_capped_bound_nmse) and the gap to
	 * it; NaN without */
	double bound_capped_nmse, capped_gap_db;
	int has_iso;       /* iso figures measured (--iso, and a format other than wz) */
	wzc_ci iso[2];     /* wz rate at this format's nmse (0) and KL (1) */
	int iso_censored[2]; /* 1: the sweep's lowest rate already beats it (an upper bound) */
	int nlayers;       /* with per_layer: layers[0..nlayers) */
	struct wzc_run_cell *layers;
} wzc_run_cell;

typedef struct {
	int nwindows, nformats;
	wzc_run_cell *cells;  /* [window][format] */
	wzc_run_cell *sweep;  /* [window][WZC_ISO_N] with iso (no iso figures of their own) */
} wzc_run;

/* Runs the measurement; on failure the message of the first piece (in
 * window, then format order) that failed.  The caller frees the result
 * with wzc_run_free. */
wz_err wzc_run_measure(const wzc_run_spec *spec, wzc_run **out /* OUT */, wz_diag *diag);
/* Whether the run's profile caps the position part of some layer. */
int wzc_run_capped(const wzc_run_spec *spec);
void wzc_run_free(wzc_run *run);

/* "Fewer bits at equal quality": bits / the iso rate, its interval from the
 * iso rate's (a higher rate saves fewer bits). */
wzc_ci wzc_fewer_bits(double bits, wzc_ci iso);


#endif
