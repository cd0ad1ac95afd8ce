/* Error reporting and option parsing shared by the subcommands (cli.h). */
#include "cli/cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>

#include "runs/say.h"

int wz_cli_fail(const char *cmd, const wz_diag *diag)
{
	return wz_say_fail(cmd, diag);
}

int wz_cli_usage(const char *cmd, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	wz_say_usage(cmd, "%s", msg ? msg : "out of memory");
	free(msg);
	return 2;
}

int wz_cli_bad_option(const char *cmd, int result, char *const *argv)
{
	if (result == ':')
		return wz_cli_usage(cmd, "option %s needs a value", argv[optind - 1]);
	return wz_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
}

void wz_cli_warn(const char *cmd, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	wz_say_warn(cmd, "%s", msg ? msg : "out of memory");
	free(msg);
}

int wz_cli_long(const char *cmd, const char *opt, const char *text, long min, long max,
		long *out)
{
	return wz_say_long(cmd, opt, text, min, max, out);
}

int wz_cli_double(const char *cmd, const char *opt, const char *text, double min, double max,
		  double *out)
{
	return wz_say_double(cmd, opt, text, min, max, out);
}

int wz_cli_emit(const char *cmd, const char *path, const char *text)
{
	return wz_say_emit(cmd, path, text);
}

const char wz_scenario_opts_help[] =
	"Scenario (defaults from --scenario FILE, or the embedded product-page scenario):\n"
	"  --scenario FILE        read the scenario from FILE (see wzplan-scenario(5))\n"
	"  --catalog DIR          use models.csv, gpus.csv, prices.csv from DIR\n"
	"  --model NAME           model from the catalog, e.g. DeepSeek-V3\n"
	"  --gpu NAME             GPU from the catalog, e.g. 'H100 SXM'\n"
	"  --users N              concurrent users (10000, 10k)\n"
	"  --context TOKENS       context per user (100000, 100k)\n"
	"  --formats LIST         formats to compare: fp8-mix,wz-5.44,int4-g64,iso:1.48,...\n"
	"  --baseline FORMAT      format the savings are measured against (fp8-mix)\n"
	"  --mode M               scaling, memory or both\n"
	"  --baseline-gpus N      scaling mode: GPUs the baseline format needs today\n"
	"  --rounding R           scaling mode: up (buy whole GPUs) or nearest\n"
	"  --gpus-per-replica N   GPUs holding one copy of the weights\n"
	"  --parallelism P        attention-dp or tp (MLA caches are not split by TP)\n"
	"  --mem-util F           share of HBM the engine uses (0.90)\n"
	"  --act-reserve GIB      per-GPU activation reserve in GiB (4)\n"
	"  --weight-bits B        bits per weight (the catalog's by default)\n"
	"  --price-set NAME       prices: a set in prices.csv, or 'catalog' (gpus.csv)\n";

int wz_scenario_opt(wz_scenario_opts *o, int val, const char *arg)
{
	switch (val) {
	case 1000: o->scenario_path = arg; break;
	case 1001: o->catalog_dir = arg; break;
	case 1002: o->model = arg; break;
	case 1003: o->gpu = arg; break;
	case 1004: o->formats = arg; break;
	case 1005: o->baseline = arg; break;
	case 1006: o->mode = arg; break;
	case 1007: o->rounding = arg; break;
	case 1008: o->price_set = arg; break;
	case 1009: o->parallelism = arg; break;
	case 1010: o->users = arg; break;
	case 1011: o->context = arg; break;
	case 1012: o->baseline_gpus = arg; break;
	case 1013: o->gpus_per_replica = arg; break;
	case 1014: o->mem_util = arg; break;
	case 1015: o->act_reserve = arg; break;
	case 1016: o->weight_bits = arg; break;
	default: return -1;
	}
	return 0;
}
