/* How runs are stored in the archive: the inputs (scenario, catalogs,
 * traffic file, seed), the figures of a simulation, the latency
 * distributions and cache occupancy series, and the fleets with their
 * cost; opening the archive a user chose and storing a finished run. */
#ifndef WZ_SIM_RECORD_H
#define WZ_SIM_RECORD_H

#include "archive/archive.h"
#include "runs/sim_setup.h"

/* Series names of wza_point rows: x in seconds (ttft_cdf, occupancy) or
 * milliseconds (tpot_cdf); y the share of requests at or below x, or the
 * share of the fleet's cache blocks in use. */
#define WZ_SERIES_TTFT "ttft_cdf"
#define WZ_SERIES_TPOT "tpot_cdf"
#define WZ_SERIES_OCCUPANCY "occupancy"

/* Records the scenario and catalog texts with their hashes. */
void wz_record_inputs(wza_run *run, const wzm_scenario *s, const wzm_catalog *cat);

/* Records the inputs of a simulation beyond the scenario and catalogs: the
 * traffic file (absolute path, size, hash, and its text when under 1 MiB,
 * so `verify --stored` can use it) and the seed; and the figures of table
 * "sim_setup" (duration, warm-up, seed, targets, population or traffic). */
void wz_sim_record_setup(wza_run *run, const wz_sim_setup *s, const char *traffic_path);

/* Records the scenario's name, model, GPU, users and context as table
 * "scenario", for runs that do not compute the cost comparison. */
void wz_sim_record_scenario(wza_run *run, const wz_sim_setup *s);

/* Records one simulated fleet of a format: its results (wza_run_sim), the
 * latency distributions and occupancy series (wza_run_point), the fleet
 * with method "simulation" (wza_run_fleet) and the figures of table
 * "simulation" row `format`.  fleet may be NULL when no fleet met the
 * targets; res is then the search's last run or NULL. */
void wz_sim_record_fleet(wza_run *run, const wz_sim_setup *s, const char *format,
			 const wzs_result *res, const wzm_fleet *fleet, int has_saving, long runs);

/* Records every row of a size search (wz_size_formats). */
void wz_size_record(wza_run *run, const wz_sim_setup *s, const wz_size_row *rows, int n,
		    int base);

/* Stores a finished run for `sim` and `size`: in the archive at path, or at
 * the default place (where a default that cannot be used only warns).  The
 * run id goes to standard error.  Returns an exit status. */
int wz_sim_store(const char *cmd, const char *path, wza_run *run);
/* wz_sim_store in two steps, so that a command opens its archive before it
 * prints anything and an archive it cannot use fails it with no results on
 * the way out: open (*out NULL when the default place only warned), then
 * store and close (a NULL archive stores nothing).  Exit statuses. */
int wz_sim_archive_open(const char *cmd, const char *path, wza_archive **out /* OUT */);
int wz_sim_store_in(const char *cmd, wza_archive *a, wza_run *run);

/* Opens the archive at `path`, or at the default location when path is
 * NULL.  Reports errors; returns an exit status. */
int wz_run_archive_open(const char *cmd, const char *path, int create, wza_archive **a /* OUT */);

#endif
