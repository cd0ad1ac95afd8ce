/* `wzplan cost`: the cost comparison of cache formats for one scenario. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "runs/cost_report.h"

static void help(void)
{
	printf("Usage: wzplan cost [options]\n"
	       "\n"
	       "Compares cache formats for one scenario: GPUs needed and annual cost at\n"
	       "reserved and on-demand rates, with the saving against the baseline format.\n"
	       "Two ways to size: 'scaling' (users per GPU in proportion to cache capacity,\n"
	       "from a known baseline fleet: the product page's method) and 'memory' (first\n"
	       "principles: HBM minus weights and reserve, in 64-token blocks).\n"
	       "\n"
	       "%s"
	       "\n"
	       "Output:\n"
	       "  --format F             text (default), md, csv or json\n"
	       "  -o, --output FILE      write there instead of standard output\n"
	       "  -h, --help             this help\n"
	       "\n"
	       "Examples:\n"
	       "  wzplan cost                      the product page's table (embedded default)\n"
	       "  wzplan cost --mode memory --formats fp8-mix,wz-5.44,int4-g64\n"
	       "  wzplan cost --users 2000 --context 64k --gpu 'H200 SXM' --price-set catalog\n",
	       wz_scenario_opts_help);
}

int wz_cmd_cost(int argc, char **argv)
{
	static const struct option longopts[] = {
		WZ_SCENARIO_LONGOPTS,
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	wz_scenario_opts opts = { 0 };
	const char *output = NULL;
	wzp_output how = WZP_TEXT;
	wz_diag diag;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (wzp_output_parse(optarg, &how, &diag))
				return wz_cli_usage("cost", "%s", diag.msg);
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			help();
			return 0;
		case ':':
			return wz_cli_bad_option("cost", ':', argv);
		case '?':
			return wz_cli_bad_option("cost", '?', argv);
		default:
			if (wz_scenario_opt(&opts, c, optarg))
				return wz_cli_usage("cost", "unknown option");
		}
	}
	if (optind < argc)
		return wz_cli_usage("cost", "unexpected argument '%s'", argv[optind]);

	wzm_catalog *cat;
	wzm_scenario *scn;
	int rc = wz_scenario_setup("cost", &opts, &cat, &scn);
	if (rc)
		return rc;
	wzm_compare cmp;
	rc = wz_cost_compare("cost", scn, cat, &cmp);
	if (!rc) {
		wz_buf out = { 0 };
		if (wz_report_render(scn, &cmp, how, &out)) {
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			rc = wz_cli_fail("cost", &diag);
		} else {
			rc = wz_cli_emit("cost", output, wz_buf_str(&out));
		}
		wz_buf_free(&out);
		wzm_compare_free(&cmp);
	}
	wzm_scenario_free(scn);
	wzm_catalog_free(cat);
	return rc;
}
