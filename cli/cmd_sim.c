/* `wzplan sim`: simulate one fleet serving a scenario's traffic with one
 * cache format and print latency, cache and goodput figures. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/commands.h"
#include "cli/sim_cli.h"

static void help(void)
{
	printf("Usage: wzplan sim [options]\n"
	       "\n"
	       "Simulates one fleet of --replicas replicas serving the scenario's closed\n"
	       "population (or a replayed --traffic table) with one cache format, and prints\n"
	       "the inputs, the replica model and the results as 'key = value' lines: time to\n"
	       "first token, time per output token, end-to-end latency and queueing delay\n"
	       "(p50/p90/p99), refused requests, goodput, parks/restores/recomputes and cache\n"
	       "occupancy.\n"
	       "\n"
	       "%s\n%s"
	       "\n"
	       "Fleet and output:\n"
	       "  --format F             cache format (default: the scenario's baseline format)\n"
	       "  --replicas N           replicas (default: memory mode's count for the users)\n"
	       "  --occupancy FILE       write the cache occupancy over time as CSV\n"
	       "  -o, --output FILE      write the results there instead of standard output\n"
	       "  -q, --quiet            no progress on standard error\n"
	       "  -h, --help             this help\n"
	       "\n"
	       "Examples:\n"
	       "  wzplan sim --users 200 --replicas 2 --duration 600\n"
	       "  wzplan sim --format wz-5.44 --idle-policy offload --occupancy occ.csv\n",
	       wz_scenario_opts_help, wz_sim_opts_help);
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
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	wz_scenario_opts sopts = { 0 };
	wz_sim_opts simopts = { 0 };
	const char *format = NULL, *replicas_arg = NULL, *occupancy = NULL, *output = NULL;
	int quiet = 0, c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:r:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'r': replicas_arg = optarg; break;
		case 'O': occupancy = optarg; break;
		case 'o': output = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': help(); return 0;
		case ':': return wz_cli_usage("sim", "option %s needs a value", argv[optind - 1]);
		case '?': return wz_cli_usage("sim", "unknown option '%s'", argv[optind - 1]);
		default:
			if (wz_scenario_opt(&sopts, c, optarg) && wz_sim_opt(&simopts, c, optarg))
				return wz_cli_usage("sim", "unknown option");
		}
	}
	if (optind < argc)
		return wz_cli_usage("sim", "unexpected argument '%s'", argv[optind]);
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
			wz_buf_printf(&out, "traffic = %s\ntraffic_requests = %zu\nspeedup = %g\n",
				      setup.traffic->source ? setup.traffic->source : setup.traffic->origin,
				      setup.traffic->n, setup.speedup);
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
	}
	wzs_result_free(&res);
	wz_sim_setup_free(&setup);
	return rc;
}
