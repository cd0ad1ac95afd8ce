/* propose's arguments into its request (propose_cli.h). */
#include "cli/propose_cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/sim_cli.h"

int wz_propose_parse(int argc, char **argv, wz_propose_opts *o)
{
	static const struct option longopts[] = {
		WZ_SCENARIO_LONGOPTS,
		WZ_SIM_LONGOPTS,
		{ "out", required_argument, NULL, 'O' },
		{ "archive", required_argument, NULL, 'A' },
		{ "no-archive", no_argument, NULL, 'N' },
		{ "simulate", no_argument, NULL, 'S' },
		{ "max-replicas", required_argument, NULL, 'm' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "trace", required_argument, NULL, 1200 },
		{ "profile", required_argument, NULL, 1201 },
		{ "calibration", required_argument, NULL, 1205 },
		{ "codec-run", required_argument, NULL, 1202 },
		{ "live-kl", required_argument, NULL, 1203 },
		{ "serving-modes", required_argument, NULL, 1204 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof *o);
	o->out_dir = "wzplan-out";
	o->max_replicas = 100000;
	int c, rc, sim_option = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'O':
			o->out_dir = optarg;
			break;
		case 'A':
			o->archive = optarg;
			break;
		case 'N':
			o->no_archive = 1;
			break;
		case 'S':
			o->simulate = 1;
			break;
		case 'm':
			if ((rc = wz_cli_long("propose", "--max-replicas", optarg, 1, 1000000,
					      &o->max_replicas)))
				return rc;
			sim_option = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 1203:
			o->live_kl = optarg;
			break;
		case 1204: {
			char why[256];
			o->serving_modes = optarg;
			if (wz_propose_modes_parse(optarg, &o->modes, why, sizeof why))
				return wz_cli_usage("propose", "--serving-modes: %s", why);
			sim_option = 1;
			break;
		}
		case 1200: /* --trace FILE...: the words that follow are traces too */
			o->traces[o->ntraces++] = optarg;
			while (optind < argc && argv[optind][0] != '-' &&
			       o->ntraces < WZ_PROPOSE_MAX_TRACES)
				o->traces[o->ntraces++] = argv[optind++];
			if (o->ntraces >= WZ_PROPOSE_MAX_TRACES)
				return wz_cli_usage("propose", "at most %d traces",
						    WZ_PROPOSE_MAX_TRACES - 1);
			break;
		case 1201:
			o->profile = optarg;
			break;
		case 1205:
			if (o->ncalibration >= WZ_PROPOSE_MAX_TRACES)
				return wz_cli_usage("propose", "at most %d calibration windows",
						    WZ_PROPOSE_MAX_TRACES);
			o->calibration[o->ncalibration++] = optarg;
			break;
		case 1202:
			if ((rc = wz_run_id_parse("propose", optarg, &o->codec_run)))
				return rc;
			break;
		case 'h':
			return 0;
		case ':':
			return wz_cli_bad_option("propose", ':', argv);
		case '?':
			return wz_cli_bad_option("propose", '?', argv);
		default:
			if (!wz_sim_opt(&o->sim, c, optarg))
				sim_option = 1;
			else if (wz_scenario_opt(&o->scn, c, optarg))
				return wz_cli_usage("propose", "unknown option");
		}
	}
	if (optind < argc)
		return wz_cli_usage("propose", "unexpected argument '%s'", argv[optind]);
	if (o->archive && o->no_archive)
		return wz_cli_usage("propose", "--archive and --no-archive exclude each other");
	if (o->ntraces && !o->profile)
		return wz_cli_usage("propose", "--trace needs --profile FILE (the wz profile "
				    "prepared from calibration windows)");
	if (o->profile && !o->ntraces)
		return wz_cli_usage("propose", "--profile needs --trace FILE...");
	if (o->ncalibration && !o->ntraces)
		return wz_cli_usage("propose", "--calibration needs --trace FILE... --profile FILE");
	if (o->ntraces && o->codec_run)
		return wz_cli_usage("propose", "--trace and --codec-run exclude each other");
	if (o->sim.traffic)
		o->simulate = 1;
	/* A simulator option alone would be silently ignored. */
	if (sim_option && !o->simulate)
		return wz_cli_usage("propose", "simulation options need --simulate or --traffic FILE");
	return -1;
}

int wz_run_id_parse(const char *cmd, const char *text, long long *id)
{
	long v;
	if (wz_parse_long(text, &v) || v < 1)
		return wz_cli_usage(cmd, "'%s' is not a run id (a number from 'wzplan archive list')",
				    text);
	*id = v;
	return 0;
}
