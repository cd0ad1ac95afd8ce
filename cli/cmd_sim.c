/* `wzplan sim`: simulate one fleet serving a scenario's traffic with one
 * cache format and print latency, cache and goodput figures. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "runs/sim_setup.h"
#include "cli/sim_cli.h"
#include "runs/sim_record.h"
#include "sim/benchmark.h"
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
	       "  --cache-format F       cache format (default: the scenario's baseline format;\n"
	       "                         formerly --format, which still works, with a note)\n"
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
	       "Fixed-batch benchmark (one replica, no traffic, not archived):\n"
	       "  --benchmark MODE       decode-only or prefill-only\n"
	       "  --batch N              requests (decode) or prompts (prefill) per GPU\n"
	       "  --input-tokens N       prompt tokens of every request\n"
	       "  --output-tokens N      answer tokens of every request (decode-only)\n"
	       "\n"
	       "Examples:\n"
	       "  wzplan sim --users 200 --replicas 2 --duration 600\n"
	       "  wzplan sim --cache-format wz-5.44 --idle-policy offload --occupancy occ.csv\n",
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

/* --benchmark's options: all or none of mode, batch and input (and output
 * for decode-only). */
static int bench_args(const char *mode, const char *batch, const char *in, const char *out,
		      wzs_bench *b)
{
	if (!mode) {
		if (batch || in || out)
			return wz_cli_usage("sim", "--batch, --input-tokens and --output-tokens go "
					    "with --benchmark");
		return 0;
	}
	if (!strcmp(mode, "decode-only"))
		b->mode = WZS_BENCH_DECODE;
	else if (!strcmp(mode, "prefill-only"))
		b->mode = WZS_BENCH_PREFILL;
	else
		return wz_cli_usage("sim", "--benchmark '%s': use decode-only or prefill-only", mode);
	if (!batch || !in || (b->mode == WZS_BENCH_DECODE && !out))
		return wz_cli_usage("sim", "--benchmark %s needs --batch and --input-tokens%s", mode,
				    b->mode == WZS_BENCH_DECODE ? " and --output-tokens" : "");
	if (b->mode == WZS_BENCH_PREFILL && out)
		return wz_cli_usage("sim", "--output-tokens: prefill-only makes no answer");
	long v;
	int rc;
	if ((rc = wz_cli_long("sim", "--batch", batch, 1, 1000000, &v)))
		return rc;
	b->per_gpu = (double)v;
	if ((rc = wz_cli_long("sim", "--input-tokens", in, 1, 100000000, &v)))
		return rc;
	b->input_tokens = (double)v;
	if (out) {
		if ((rc = wz_cli_long("sim", "--output-tokens", out, 1, 100000000, &v)))
			return rc;
		b->output_tokens = (double)v;
	}
	return 0;
}

/* Prints the inputs, the replica model and the benchmark's figures. */
static int benchmark(const wz_sim_setup *setup, const wzs_replica_model *model,
		     const wzm_format_size *size, const wzs_bench *b, const char *output)
{
	wz_diag diag;
	wz_diag_clear(&diag);
	wzs_bench_result r;
	if (wzs_benchmark_run(model, b, &r, &diag))
		return wz_cli_fail("sim", &diag);
	wz_buf out = { 0 };
	wz_buf_printf(&out, "# inputs\nscenario = %s\nmodel = %s\ngpu = %s\nformat = %s\n"
		      "bits_per_value = %.4f\nreplicas = 1\n",
		      setup->scn->origin, setup->model->name, setup->gpu->name, size->name,
		      size->bits_per_value);
	wzs_params_describe(&setup->params, &out);
	wz_buf_puts(&out, "# replica\n");
	wzs_replica_model_describe(model, &out);
	wz_buf_puts(&out, "# benchmark\n");
	wzs_benchmark_describe(b, &r, &out);
	int rc;
	if (out.failed) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail("sim", &diag);
	} else {
		rc = wz_cli_emit("sim", output, wz_buf_str(&out));
	}
	wz_buf_free(&out);
	return rc;
}

int wz_cmd_sim(int argc, char **argv)
{
	static const struct option longopts[] = {
		WZ_SCENARIO_LONGOPTS,
		WZ_SIM_LONGOPTS,
		{ "cache-format", required_argument, NULL, 'f' },
		/* every other command's --format is an output format */
		{ "format", required_argument, NULL, 1900 },
		{ "replicas", required_argument, NULL, 'r' },
		{ "occupancy", required_argument, NULL, 'O' },
		{ "output", required_argument, NULL, 'o' },
		{ "archive", required_argument, NULL, 'A' },
		{ "no-archive", no_argument, NULL, 'N' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "benchmark", required_argument, NULL, 1200 },
		{ "batch", required_argument, NULL, 1201 },
		{ "input-tokens", required_argument, NULL, 1202 },
		{ "output-tokens", required_argument, NULL, 1203 },
		{ NULL, 0, NULL, 0 },
	};
	const char *bench_mode = NULL, *bench_batch = NULL, *bench_in = NULL, *bench_out = NULL;
	wz_scenario_opts sopts = { 0 };
	wz_sim_opts simopts = { 0 };
	const char *format = NULL, *replicas_arg = NULL, *occupancy = NULL, *output = NULL,
		   *archive = NULL;
	int quiet = 0, no_archive = 0, old_format = 0, c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:r:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 1900: format = optarg, old_format = 1; break;
		case 'r': replicas_arg = optarg; break;
		case 'O': occupancy = optarg; break;
		case 'o': output = optarg; break;
		case 'A': archive = optarg; break;
		case 'N': no_archive = 1; break;
		case 'q': quiet = 1; break;
		case 'h': help(); return 0;
		case 1200: bench_mode = optarg; break;
		case 1201: bench_batch = optarg; break;
		case 1202: bench_in = optarg; break;
		case 1203: bench_out = optarg; break;
		case ':': return wz_cli_bad_option("sim", ':', argv);
		case '?': return wz_cli_bad_option("sim", '?', argv);
		default:
			if (wz_scenario_opt(&sopts, c, optarg) && wz_sim_opt(&simopts, c, optarg))
				return wz_cli_usage("sim", "unknown option");
		}
	}
	if (optind < argc)
		return wz_cli_usage("sim", "unexpected argument '%s'", argv[optind]);
	if (old_format && !quiet)
		wz_cli_warn("sim", "--format is now --cache-format (elsewhere --format names an "
				   "output format); the old spelling still works");
	if (archive && no_archive)
		return wz_cli_usage("sim", "--archive and --no-archive exclude each other");
	if (simopts.threads)
		return wz_cli_usage("sim", "--threads: sim runs one simulation, on one thread; "
				    "--threads is for size and propose, which run several");
	if (simopts.search || simopts.config || simopts.confirm_limit)
		return wz_cli_usage("sim", "--search, --no-search, --config and --confirm-limit are "
				    "for size and propose, which search configurations; sim runs the "
				    "scenario's");
	if (simopts.search_seeds)
		return wz_cli_usage("sim", "--search-seeds: sim runs one simulation, with --seed's "
				    "seed; --search-seeds is for size and propose, which search");
	long replicas = 0;
	if (replicas_arg && (rc = wz_cli_long("sim", "--replicas", replicas_arg, 1, 1000000, &replicas)))
		return rc;
	wzs_bench bench = { 0 };
	if ((rc = bench_args(bench_mode, bench_batch, bench_in, bench_out, &bench)))
		return rc;
	if (bench_mode && (simopts.traffic || replicas_arg || occupancy || archive))
		return wz_cli_usage("sim", "--benchmark runs one replica on a fixed batch, without "
				    "traffic, occupancy series or archive: drop --traffic, --replicas, "
				    "--occupancy and --archive");

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
	if (bench_mode) {
		rc = benchmark(&setup, &model, &size, &bench, output);
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
