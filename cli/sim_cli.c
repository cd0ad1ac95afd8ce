/* The simulator's options of `sim`, `size` and `propose`, and size's
 * arguments into its request (sim_cli.h). */
#include "cli/sim_cli.h"

#include <string.h>

const char wz_sim_opts_help[] =
	"Simulation (defaults from the scenario; see wzplan-scenario(5)):\n"
	"  --traffic FILE         replay a request table (wzplan-traffic(5)) instead of\n"
	"                         the scenario's closed population of --users users\n"
	"  --sort-traffic         sort a table whose arrivals are out of order (else refused)\n"
	"  --speedup X            replay sessions X times faster: session starts divided by\n"
	"                         X, the time between a session's turns kept (1)\n"
	"  --speedup-think        --speedup divides every arrival time, think time too\n"
	"  --idle-policy P        resident, offload or drop: idle sessions between turns\n"
	"  --offload-format F     format of parked sessions (default: the GPU format)\n"
	"  --duration S           seconds simulated (population; default 3600)\n"
	"  --warmup S             seconds before measuring (default 300)\n"
	"  --seed N               random seed (default 1)\n"
	"  --ttft-p99 S           target p99 time to first token (default 5)\n"
	"  --ttft-per-1k S        the TTFT target grows by S seconds per 1,000 new tokens\n"
	"                         of each request (ttft_per_1k_tokens_s; 0: flat)\n"
	"  --tpot-p99 S           target p99 time per output token (default 0.1)\n"
	"  --serving M            aggregated (default) or disaggregated: prefills on a pool\n"
	"                         of prefill_gpus_per_replica GPUs, the cache moved to decode\n"
	"  --restore-rates FILE   host decode rates of restores from the offload tier (the\n"
	"                         file bench/bench_restore writes; needed for a wzx one)\n";

const char wz_sim_threads_help[] =
	"  --threads N            simulations run at once (default: one per core); the\n"
	"                         results do not depend on it\n"
	"  --search-seeds K       each fleet size tried runs seeds seed..seed+K-1 and meets\n"
	"                         the targets only if every run does (default 1)\n"
	"  --search               size each format at the cheapest serving configuration\n"
	"                         the deployment search finds (GPUs per replica, DP or TP,\n"
	"                         EP, disaggregation and its pool, CP prefill, MTP, batch\n"
	"                         cap; scenario key search = yes), not the scenario's own\n"
	"  --no-search            the scenario's own configuration (search = no)\n"
	"  --config K=V,...       pin configuration keys of the search (gpus_per_replica,\n"
	"                         parallelism, expert_parallel, dual_batch_overlap, serving,\n"
	"                         prefill_gpus_per_replica, prefill_context_parallel,\n"
	"                         mtp_draft_tokens, max_batch, prefill_pipeline_stages;\n"
	"                         scenario key config)\n"
	"  --confirm-limit N      the most configurations the search confirms by simulation\n"
	"                         (default 128); it stops sooner once no unconfirmed one's\n"
	"                         lower bound beats the best fleet, and says so if the\n"
	"                         limit stopped it first\n";

int wz_sim_opt(wz_sim_opts *o, int val, const char *arg)
{
	switch (val) {
	case 1100: o->idle_policy = arg; break;
	case 1101: o->duration = arg; break;
	case 1102: o->warmup = arg; break;
	case 1103: o->seed = arg; break;
	case 1104: o->offload_format = arg; break;
	case 1105: o->ttft = arg; break;
	case 1106: o->tpot = arg; break;
	case 1107: o->traffic = arg; break;
	case 1108: o->sort_traffic = 1; break;
	case 1109: o->speedup = arg; break;
	case 1110: o->speedup_all = 1; break;
	case 1111: o->threads = arg; break;
	case 1112: o->restore_rates = arg; break;
	case 1113: o->serving = arg; break;
	case 1114: o->search_seeds = arg; break;
	case 1115: o->search = 1; break;
	case 1116: o->search = -1; break;
	case 1117: o->config = arg; break;
	case 1118: o->ttft_per_1k = arg; break;
	case 1119: o->confirm_limit = arg; break;
	default: return -1;
	}
	return 0;
}

int wz_size_parse(int argc, char **argv, wz_size_opts *o)
{
	static const struct option longopts[] = {
		WZ_SCENARIO_LONGOPTS,
		WZ_SIM_LONGOPTS,
		{ "max-replicas", required_argument, NULL, 'm' },
		{ "report", required_argument, NULL, 'R' },
		{ "output", required_argument, NULL, 'o' },
		{ "archive", required_argument, NULL, 'A' },
		{ "no-archive", no_argument, NULL, 'N' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof *o);
	o->max_replicas = 100000;
	o->how = WZP_TEXT;
	wz_diag diag;
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if ((rc = wz_cli_long("size", "--max-replicas", optarg, 1, 1000000,
					      &o->max_replicas)))
				return rc;
			break;
		case 'R':
			if (wzp_output_parse(optarg, &o->how, &diag))
				return wz_cli_usage("size", "%s", diag.msg);
			break;
		case 'o': o->output = optarg; break;
		case 'A': o->archive = optarg; break;
		case 'N': o->no_archive = 1; break;
		case 'q': o->quiet = 1; break;
		case 'h': return 0;
		case ':': return wz_cli_bad_option("size", ':', argv);
		case '?': return wz_cli_bad_option("size", '?', argv);
		default:
			if (wz_scenario_opt(&o->scn, c, optarg) && wz_sim_opt(&o->sim, c, optarg))
				return wz_cli_usage("size", "unknown option");
		}
	}
	if (optind < argc)
		return wz_cli_usage("size", "unexpected argument '%s'", argv[optind]);
	if (o->archive && o->no_archive)
		return wz_cli_usage("size", "--archive and --no-archive exclude each other");
	return -1;
}
