/* `wzplan propose`: a pilot proposal for a scenario (runs/proposal.c makes
 * it): the options, the help, and what was written, printed. */
#include <stdio.h>

#include "cli/commands.h"
#include "cli/propose_cli.h"
#include "cli/sim_cli.h"
#include "config.h"
#include "runs/propose.h"

static void help(void)
{
	printf("Usage: wzplan propose [options]\n"
	       "\n"
	       "Writes a pilot proposal for a scenario (the embedded product-page scenario by\n"
	       "default): the cost comparison of cache formats by scaling and by memory\n"
	       "accounting, the assumptions with their catalog sources, charts, and what\n"
	       "was not measured.  With --trace FILE... --profile FILE it measures the\n"
	       "cache formats on those test windows (calibration windows are refused) and\n"
	       "adds \"Measured quality\" with provenance, the rate-distortion chart and a\n"
	       "cost row for wz at the measured iso-quality rate; --codec-run RUN uses an\n"
	       "archived 'wzplan codec measure --iso' run instead.  With --simulate (the\n"
	       "scenario's closed population) or --traffic FILE (a request table) it also\n"
	       "sizes every format by simulation, adds the table \"Sized by simulation\",\n"
	       "which sizing method binds, and latency and cache occupancy charts; with\n"
	       "--serving-modes, the same under each serving mode.  The run is stored in\n"
	       "the archive and its id printed.\n"
	       "Files: OUT/proposal.md, OUT/cost.csv, OUT/cost.json, OUT/memory.csv,\n"
	       "OUT/context.csv, OUT/simulation.csv (with a simulation),\n"
	       "OUT/serving-modes.csv (with --serving-modes), OUT/quality.csv (with a\n"
	       "measurement: every codec row), OUT/charts/\n"
	       "(gnuplot data, scripts, PNG and SVG).\n"
	       "\n"
	       "%s\n%s%s"
	       "  --simulate             size the fleets by simulating the scenario's users\n"
	       "  --serving-modes LIST   also size them under each serving mode: 'all', or\n"
	       "                         SERVING:IDLE and SERVING:offload:FORMAT items, e.g.\n"
	       "                         aggregated:resident,disaggregated:offload:wzx-5.0\n"
	       "                         (adds \"Sized under each serving mode\" and\n"
	       "                         OUT/serving-modes.csv)\n"
	       "  --max-replicas N       the size search's limit (default 100000)\n"
	       "  -q, --quiet            no simulation progress on standard error\n"
	       "\n"
	       "Measured quality:\n"
	       "  --trace FILE...        test windows of a cache trace to measure\n"
	       "  --profile FILE         the wz profile prepared from calibration windows\n"
	       "  --calibration FILE     a calibration window (repeatable): kvtc is measured at\n"
	       "                         the wz rates too, its transforms fitted on these\n"
	       "  --codec-run RUN        use this archived codec measurement instead\n"
	       "  --live-kl FILE         live-model next-token KL per format (the summary\n"
	       "                         `wzcapture.py report --json` writes; docs/real-model.md)\n"
	       "\n"
	       "Output:\n"
	       "  --out DIR              output folder (default: wzplan-out)\n"
	       "  --archive FILE         archive to store the run in (default: $WZPLAN_ARCHIVE,\n"
	       "                         else $XDG_DATA_HOME/wzplan/archive.sqlite, else\n"
	       "                         ~/.local/share/wzplan/archive.sqlite; when that cannot\n"
	       "                         be used, OUT/archive.sqlite)\n"
	       "  --no-archive           do not store the run (the proposal says so; it\n"
	       "                         cannot be verified later)\n"
	       "  -h, --help             this help\n"
	       "\n"
	       "Charts need gnuplot ($WZ_GNUPLOT, or gnuplot on $PATH); without it the\n"
	       "proposal is written without images and says so.\n"
	       "\n"
	       "Example:\n"
	       "  wzplan propose --out wzplan-out\n"
	       "  wzplan propose --simulate --duration 1200 --out sized\n",
	       wz_scenario_opts_help, wz_sim_opts_help, wz_sim_threads_help);
}

int wz_cmd_propose(int argc, char **argv)
{
	wz_propose_opts o;
	int rc = wz_propose_parse(argc, argv, &o);
	if (rc == 0)
		help();
	if (rc >= 0)
		return rc;
	wza_run *run = wza_run_new("propose", argc - 1, argv + 1, PACKAGE_VERSION);
	if (!run) {
		wz_diag diag;
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_cli_fail("propose", &diag);
	}
	wz_proposal p;
	rc = wz_propose_write("propose", &o, run, &p);
	if (!rc) {
		fputs(wz_buf_str(&p.text), stdout);
		printf("\nProposal written to %s/proposal.md\n", o.out_dir);
		if (p.rendered)
			printf("Charts: %d, in %s/charts (PNG and SVG, with data and gnuplot "
			       "scripts)\n", p.ncharts, o.out_dir);
		else
			printf("Charts not drawn: %s; their data and gnuplot scripts are in "
			       "%s/charts\n", wz_buf_str(&p.why_not), o.out_dir);
		if (p.archive_path)
			printf("Run %lld archived in %s\n", p.run_id, p.archive_path);
		else
			printf("Run not archived (--no-archive)\n");
	}
	wz_proposal_free(&p);
	wza_run_free(run);
	return rc;
}
