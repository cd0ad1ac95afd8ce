/* Sweep files: a base scenario plus axes of scenario parameters, expanded
 * into points in a fixed order, each with an id derived from its
 * parameters (format in wzplan-sweep(5)); and the process pool that runs
 * the points on every core. */
#ifndef WZSW_SWEEP_H
#define WZSW_SWEEP_H

#include "common/wz_error.h"

/* Version of the point-id derivation; part of every id's hashed text, so a
 * change to it changes every id instead of silently reusing them. */
#define WZSW_POINT_ID_VERSION 1
/* Parameters that are not scenario keys. */
#define WZSW_KEY_SIMULATE "simulate"
#define WZSW_KEY_MAX_REPLICAS "max_replicas"
#define WZSW_KEY_TRAFFIC "traffic"

/* One axis: a parameter and its values, in the file's order. */
typedef struct {
	char *key;     /* "users", "gpu", "simulate" */
	char **values; /* as written (ranges expanded) */
	int nvalues;
	int line;      /* in the sweep file */
} wzsw_axis;

/* A parameter fixed for every point (set.KEY, simulate, ...). */
typedef struct {
	char *key, *value;
	int line;
} wzsw_param;

typedef struct {
	char *name;          /* the sweep's id: [A-Za-z0-9._-]+ */
	char *origin;        /* the sweep file's path */
	char *dir;           /* its folder, for relative paths */
	char *scenario_path; /* base scenario (resolved), or NULL: embedded default */
	char *catalog_dir;   /* resolved, or NULL: embedded catalogs */
	char *base_text;     /* the base scenario's text */
	char *base_origin;   /* its path, or "embedded:product-page" */
	char *catalog_hash;  /* XXH3 of the catalogs used, 16 hex digits */
	wzsw_param *params;  /* the fixed parameters, file order */
	int nparams;
	wzsw_axis *axes;     /* file order; the first varies slowest */
	int naxes;
	long npoints;        /* product of the axes' sizes */
} wzsw_sweep;

/* One expanded point: every parameter that differs from the base
 * scenario, in the order fixed parameters then axes. */
typedef struct {
	long index;      /* 0-based, in expansion order */
	char id[17];     /* 16 hex digits */
	char **keys, **values;
	int n;
	int simulate;    /* size the fleets by simulation too */
	long max_replicas;
	char *traffic;   /* resolved traffic file, or NULL */
	char *scenario;  /* the point's whole scenario text */
} wzsw_point;

/* Parses a sweep file: every error names the file, line and key (exit
 * status 2, WZ_ERR_INPUT).  Every point is built and its scenario checked
 * here, so that a bad value is refused before anything runs.  The caller
 * frees the result with wzsw_free. */
wz_err wzsw_load(const char *path, wzsw_sweep **out /* OUT */, wz_diag *diag);
void wzsw_free(wzsw_sweep *s);

/* Builds point `index` (0 <= index < npoints): the axes' values as an
 * odometer with the last axis fastest.  Free with wzsw_point_clear. */
wz_err wzsw_point_build(const wzsw_sweep *s, long index, wzsw_point *out /* OUT */,
			wz_diag *diag);
void wzsw_point_clear(wzsw_point *p);

/* Parses "K/N" (1 <= K <= N). */
wz_err wzsw_shard_parse(const char *text, long *k /* OUT */, long *n /* OUT */, wz_diag *diag);

/* Balance (sweep/balance.c).  A point's estimated cost in whole units:
 * per format, 1 plus, when it simulates, its simulated user-minutes
 * (users x (duration_s + warmup_s) / 60), or for a traffic file its size
 * / 100 bytes.  Used for scheduling only. */
long long wzsw_point_cost(const wzsw_point *p);
/* Shares the points over nshards shards of about equal estimated cost:
 * the points by decreasing cost (ties: lower index first), each to the
 * shard with the least cost so far (ties: the lower shard).  shard_of[i]
 * (npoints entries) gets point i's shard, 1..nshards; load, when not NULL
 * (nshards entries), each shard's total.  The same on every machine. */
wz_err wzsw_shard_plan(const wzsw_sweep *s, long nshards, long *shard_of /* OUT */,
		       long long *load /* OUT */, wz_diag *diag);
/* Reorders indices by decreasing estimated cost (ties: lower index), so
 * that the longest points start first and the short ones fill the end. */
wz_err wzsw_order_by_cost(const wzsw_sweep *s, long *indices, long n, wz_diag *diag);

/* The pool (sweep/pool.c).  Runs fn(ud, index) for each of the indices in
 * nworkers forked processes; each takes the next index as soon as it is
 * free, so long points do not hold up short ones.  fn returns 0 for
 * success.  A worker that dies is counted as failed for its point and
 * replaced.  Workers die with the parent (Linux).  With nworkers 0 fn runs
 * in this process.  done(dud, index, status) is called in this process as
 * each point ends, in completion order.  *nfailed gets the points whose fn
 * did not return 0. */
typedef int (*wzsw_point_fn)(void *ud, long index);
typedef void (*wzsw_done_fn)(void *ud, long index, int status);
wz_err wzsw_pool_run(int nworkers, const long *indices, long n, wzsw_point_fn fn, void *ud,
		     wzsw_done_fn done, void *dud, long *nfailed /* OUT */, wz_diag *diag);

/* Online processors (at least 1). */
int wzsw_ncpus(void);

#endif
