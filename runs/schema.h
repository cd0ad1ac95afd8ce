/* The one place that names what a run holds in the archive: the tables of
 * its figures (archive table `figures`: tbl, row_key, col, value or text)
 * with their rows and columns, the kinds of its inputs (table `inputs`),
 * and the series of its simulations (table `sim_series`).  The SQL tables
 * themselves are archive/'s (archive/schema.c).  Renaming any of these
 * makes stored runs unreadable by verify, plot and sweep report: add, never
 * rename. */
#ifndef WZ_RUNS_SCHEMA_H
#define WZ_RUNS_SCHEMA_H

/* Figure tables.  Each names its rows, then its columns. */

/* row "scenario": name, model, gpu, users, context, mode, baseline_format,
 * baseline_gpus, gpus_per_replica, price_set, reserved_usd_h,
 * ondemand_usd_h */
#define WZ_T_SCENARIO "scenario"
/* a row per format: label, bits_per_value, record_bytes_per_layer,
 * bytes_per_token, scaling_{gpus, gpus_exact, gpus_up, gpus_nearest,
 * reserved_usd_year, ondemand_usd_year, saving_reserved, saving_ondemand},
 * memory_{gpus, replicas, users_per_gpu, users_per_replica,
 * cache_gib_per_gpu, reserved_usd_year, ondemand_usd_year, saving_reserved,
 * saving_ondemand} */
#define WZ_T_COST "cost"
/* a row per format: hbm, weights, reserve, outside_engine, cache_pool,
 * cache_used, cache_free (GiB per GPU), users_per_gpu */
#define WZ_T_MEMORY "memory_gib"
/* a row per format, a column per context in tokens: GPUs, users per GPU */
#define WZ_T_GPUS_BY_CONTEXT "gpus_by_context"
#define WZ_T_USERS_BY_CONTEXT "users_per_gpu_by_context"
/* row "setup": duration_s, warmup_s, seed, ttft_p99_target_s,
 * tpot_p99_target_s, idle_policy, serving, users or traffic, ... (what the
 * simulation was asked) */
#define WZ_T_SIM_SETUP "sim_setup"
/* a row per format: replicas, gpus, ttft_p99_s, tpot_p99_s, refused,
 * goodput_rps, occupancy_mean, occupancy_peak, meets_targets, binds,
 * reserved_usd_year, ondemand_usd_year, saving_reserved, saving_ondemand,
 * runs, within_noise, bits_per_value, decode_behind_prefill */
#define WZ_T_SIMULATION "simulation"
/* a row per format whose search found no fleet: the largest fleet tried
 * (replicas, ttft_p99_s, tpot_p99_s, completed, refused_timeout,
 * refused_too_big) */
#define WZ_T_SIMULATION_BELOW "simulation_below"
/* a row per format sized by the deployment search (sim/deploy):
 * configuration, config (key=value pairs), gpus, gpus_per_replica,
 * reserved_usd_year, default_gpus (the scenario's own configuration),
 * at_baseline_config_gpus, screened, feasible; where none met the targets
 * closest_configuration and closest_over */
#define WZ_T_DEPLOYMENT "deployment"
/* a row per mode: order, serving, idle_policy, offload_format; and rows
 * "MODE|FORMAT" of the fleets sized under each */
#define WZ_T_SERVING_MODES "serving_modes"
#define WZ_T_SERVING_MODE_FLEETS "serving_mode_fleets"
/* row "setup": seed, boot, formats, profile_hash, profile_file */
#define WZ_T_CODEC_SETUP "codec_setup"
/* a row per window: file, trace_hash, split, source, model, layers,
 * tokens, queries */
#define WZ_T_CODEC_WINDOW "codec_window"
/* row "iso": bits, format, label (the measured iso-quality rate); row
 * "source": codec_run (the archived measurement used) */
#define WZ_T_QUALITY "quality"
/* the live-model summary: its source (model, hash, context, prefix,
 * score_tokens), categories (windows, tokens), per format and category
 * (kl, kl_lo, kl_hi, ratio..., top1, p99, dlogloss, better, bits) and the
 * iso rates (bits, lo, hi, fewer_bits) */
#define WZ_T_LIVE_KL_SOURCE "live_kl_source"
#define WZ_T_LIVE_KL_CATEGORIES "live_kl_categories"
#define WZ_T_LIVE_KL "live_kl"
#define WZ_T_LIVE_KL_ISO "live_kl_iso"

/* Input kinds: name and origin (an absolute path or embedded:NAME), the
 * XXH3 hash and size of the bytes used, the text when small. */
#define WZ_IN_SCENARIO "scenario"  /* name "scenario" */
#define WZ_IN_CATALOG "catalog"    /* models.csv, gpus.csv, prices.csv */
#define WZ_IN_TRACE "trace"        /* cache traces by path; "traffic" for a replay */
#define WZ_IN_PROFILE "profile"    /* the wz profile */
#define WZ_IN_SEED "seed"
#define WZ_IN_OPTION "option"      /* an option's value (codec: formats) */
#define WZ_IN_LIVE_KL "live_kl"    /* the live-model summary */
#define WZ_IN_REQUEST "request"    /* the job's request (runs/request.h) */

#endif
