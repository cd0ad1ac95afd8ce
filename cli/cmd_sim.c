/* `wzplan sim`: simulate one fleet serving a scenario's traffic with one
 * cache format and print latency, cache and goodput figures. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/commands.h"
#include "runs/sim_setup.h"
#include "cli/sim_cli.h"
#include "runs/sim_record.h"
#include "config.h"

static void help(void)
{
	printf("Usage: wzplan sim [options]\n"
	       "\n"
	       "Simulates one fleet of --replicas replicas serving the scenario's closed\n"
	       "population (or a replayed --traffic table) with one cache format, and prints\n"
	       "the inputs, the replica model and the results as 'key = value' lines: time to\n"
	       "first token, time per output token, end-to-end latency and queueing delay\n"
	       "(p50/p90/p99), refused requests, goodput, parks/restores/recomputes and cache\n"
	       "occupancy.  The run is stored in the archive (inputs, results, latency\n"
	       "distributions, cache occupancy over time, the fleet and its annual cost)\n"
	       "and its id printed on standard error; 'wzplan plot RUN' draws it.\n"
	       "\n"
	       "%s\n%s"
	       "\n"
	       "Fleet and output:\n"
	       "  --format F             cache format (default: the scenario's baseline format)\n"
	       "  --replicas N           replicas (default: memory mode's count for the users)\n"
	       "  --occupancy FILE       write the cache occupancy over time as CSV\n"
	       "  -o, --output FILE      write the results there instead of standard output\n"
	       "  --archive FILE         archive to store the run in (default: $WZPLAN_ARCHIVE,\n"
	       "                         else $XDG_DATA_HOME/wzplan/archive.sqlite, else\n"
	       "                         ~/.local/share/wzplan/archive.sqlite)\n"
	       "  --no-archive           do not store the run\n"
	       "  -q, --quiet            no progress on standard error\n"
	       "  -h, --help             this help\n"
	       "\n"
	       "Examples:\n"
	       "  wzplan sim --users 200 --replicas 2 --duration 600\n"
	       "  wzplan sim --format wz-5.44 --idle-policy offload --occupancy occ.csv\n",
	       wz_scenario_opts_help, wz_sim_opts_help);
}

/* The run with its fleet priced at the scenario's rates. */
static int store(int argc, char **argv, const char *archive, const wz_sim_setup *setup,
		 const wzm_format_size *size, const wzs_result *res)
{
	wz_diag diag;
	wz_diag_clear(&diag);
	wzm_rates rates;
	if (wzm_find_rates(setup->cat, setup->scn->price_set, setup->gpu, &rates, &diag))
		return wz_cli_fail("sim", &diag);
	wzm_fleet fleet = { 0 };
	fleet.replicas = res->replicas;
	fleet.gpus = res->replicas * wz_sim_gpus_per_replica(setup);
	fleet.gpus_exact = (double)fleet.gpus;
	fleet.gpus_up = fleet.gpus_nearest = fleet.gpus;
	wzm_fleet_price(&fleet, &rates);
	wza_run *run = wza_run_new("sim", argc - 1, argv + 1, PACKAGE_VERSION);
	if (run) {
		wz_record_inputs(run, setup->scn, setup->cat);
		wz_sim_record_setup(run, setup, setup->traffic ? setup->traffic->origin : NULL);
		wz_sim_record_scenario(run, setup);
		wz_sim_record_fleet(run, setup, size->name, res, &fleet, 0, 1);
		wza_run_figure(run, "simulation", size->name, "bits_per_value", size->bits_per_value,
			       NULL);
	}
	if (!run || run->failed) {
		wza_run_free(run);
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_cli_fail("sim", &diag);
	}
	int rc = wz_sim_store("sim", archive, run);
	wza_run_free(run);
	return rc;
}

int wz_cmd_sim(int argc, char **argv)
{
	static const struct option longopts[] = {
		WZ_SCENARIO_LONGOPTS,
		WZ_SIM_LONGOPTS,
		{ "format", required_argument, NULL, 'f' },
		{ "replicas", required_argument, NULL, 'r' },
		{ "occupancy", required_argument, NULL, 'O' },
		{ "output", required_argument, NULL, 'o' },
		{ "archive", required_argument, NULL, 'A' },
		{ "no-archive", no_argument, NULL, 'N' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	wz_scenario_opts sopts = { 0 };
	wz_sim_opts simopts = { 0 };
	const char *format = NULL, *replicas_arg = NULL, *occupancy = NULL, *output = NULL,
		   *archive = NULL;
	int quiet = 0, no_archive = 0, c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:r:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'r': replicas_arg = optarg; break;
		case 'O': occupancy = optarg; break;
		case 'o': output = optarg; break;
		case 'A': archive = optarg; break;
		case 'N': no_archive = 1; break;
		case 'q': quiet = 1; break;
		case 'h': help(); return 0;
		case ':': return wz_cli_bad_option("sim", ':', argv);
		case '?': return wz_cli_bad_option("sim", '?', argv);
		default:
			if (wz_scenario_opt(&sopts, c, optarg) && wz_sim_opt(&simopts, c, optarg))
				return wz_cli_usage("sim", "unknown option");
		}
	}
	if (optind < argc)
		return wz_cli_usage("sim", "unexpected argument '%s'", argv[optind]);
	if (archive && no_archive)
		return wz_cli_usage("sim", "--archive and --no-archive exclude each other");
	if (simopts.threads)
		return wz_cli_usage("sim", "--threads: sim runs one simulation, on one thread; "
				    "--threads is for size and propose, which run several");
	if (simopts.search_seeds)
		return wz_cli_usage("sim", "--search-seeds: sim runs one simulation, with --seed's "
				    "seed; --search-seeds is for size and propose, which search");
	long replicas = 0;
	if (replicas_arg && (rc = wz_cli_long("sim", "--replicas", replicas_arg, 1, 1000000, &replicas)))
		return rc;

	wz_sim_setup setup;
	if ((rc = wz_sim_setup_load("sim", &sopts, &simopts, &setup)))
		return rc;
	wzs_replica_model model;
	wzm_format_size size;
	rc = wz_sim_model("sim", &setup, format ? format : setup.scn->baseline_format, &model, &size);
	if (rc) {
		wz_sim_setup_free(&setup);
		return rc;
	}
	if (!replicas) {
		long upr = model.mem.users_per_replica;
		replicas = setup.traffic || upr < 1 ? 1 : (setup.scn->users + upr - 1) / upr;
	}
	wzs_run_config cfg;
	wz_sim_config(&setup, &model, &cfg);
	cfg.replicas = replicas;
	if (!quiet) {
		cfg.progress = wz_sim_progress;
		cfg.progress_ud = (void *)"sim";
	}
	wzs_result res;
	wz_diag diag;
	wz_diag_clear(&diag);
	clock_t t0 = clock();
	if (wzs_run(&cfg, &res, &diag)) {
		rc = wz_cli_fail("sim", &diag);
	} else {
		double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
		if (!quiet)
			fprintf(stderr, "wzplan sim: %llu events in %.2f s of CPU (%.0f events/s)\n",
				res.events, cpu, cpu > 0 ? (double)res.events / cpu : 0.0);
		wz_buf out = { 0 };
		wz_buf_printf(&out, "# inputs\nscenario = %s\nmodel = %s\ngpu = %s\nformat = %s\n"
			      "bits_per_value = %.4f\nreplicas = %ld\n",
			      setup.scn->origin, setup.model->name, setup.gpu->name, size.name,
			      size.bits_per_value, replicas);
		if (setup.traffic)
			wz_buf_printf(&out, "traffic = %s\ntraffic_requests = %zu\nspeedup = %g\n"
				      "speedup_think_time = %s\n",
				      setup.traffic->source ? setup.traffic->source : setup.traffic->origin,
				      setup.traffic->n, setup.speedup,
				      setup.speedup_all ? "compressed" : "kept");
		else
			wz_buf_printf(&out, "traffic = closed population\nusers = %ld\ncontext = %ld\n"
				      "initial_context = %ld\n",
				      setup.scn->users, setup.scn->context, setup.initial_context);
		wzs_params_describe(&setup.params, &out);
		wz_buf_puts(&out, "# replica\n");
		wzs_replica_model_describe(&model, &out);
		wz_buf_puts(&out, "# results\n");
		wzs_result_describe(&res, &out);
		wz_buf_printf(&out, "meets_targets = %s\n",
			      wzs_meets_targets(&setup.params, &res) ? "yes" : "no");
		if (res.completed == 0)
			wz_cli_warn("sim", "no request completed in the measured %.3f s; it has no "
				    "latencies (reported as none) and meets no target",
				    res.window_s);
		if (out.failed) {
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			rc = wz_cli_fail("sim", &diag);
		} else {
			rc = wz_cli_emit("sim", output, wz_buf_str(&out));
		}
		if (!rc && occupancy) {
			wz_buf csv = { 0 };
			wzs_result_occupancy_csv(&res, &csv);
			rc = wz_cli_emit("sim", occupancy, wz_buf_str(&csv));
			wz_buf_free(&csv);
		}
		wz_buf_free(&out);
		if (!rc && !no_archive)
			rc = store(argc, argv, archive, &setup, &size, &res);
	}
	wzs_result_free(&res);
	wz_sim_setup_free(&setup);
	return rc;
}
