/* `wzplan plot RUN`: draws an archived run's charts again from its stored
 * figures, with their data files and gnuplot scripts. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/propose_cli.h"
#include "runs/propose.h"

static void help(void)
{
	printf("Usage: wzplan plot RUN [options]\n"
	       "\n"
	       "Draws the charts of an archived run from its stored figures: annual cost and\n"
	       "saving per format, GPUs and users per GPU against context, the per-GPU\n"
	       "memory breakdown, for runs with codec measurements (codec measure, propose\n"
	       "--trace or --codec-run) error against bits/value per format with the\n"
	       "Gaussian bound (rate-distortion) and attention KL against bits/value, and\n"
	       "simulation series when the run has them.  Each chart is\n"
	       "written as NAME.dat and NAME.gp and rendered by gnuplot to NAME.png and\n"
	       "NAME.svg.\n"
	       "\n"
	       "Options:\n"
	       "  --archive FILE         the archive (default as in wzplan-archive(1))\n"
	       "  --out DIR              folder for the charts (default: run-RUN-charts)\n"
	       "  -h, --help             this help\n"
	       "\n"
	       "Without gnuplot ($WZ_GNUPLOT, or gnuplot on $PATH) the data and scripts are\n"
	       "written with a warning.  Exit status: 0 charts written, 1 gnuplot failed or\n"
	       "a file could not be written, 2 bad usage or unknown run.\n");
}

/* The codec measurements of a run: its own (codec runs, propose runs that
 * measured), or the archived codec run a propose run named with
 * --codec-run; never others, so a chart shows what its run used. */
static wz_err codec_for(wza_archive *a, const wza_run *run, wza_run **out, wz_diag *diag)
{
	*out = NULL;
	const wza_figure *f = wza_run_find_figure(run, "quality", "source", "codec_run");
	if (run->ncodec || !f)
		return WZ_OK;
	return wza_load(a, (long long)f->value, out, diag);
}

int wz_cmd_plot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "archive", required_argument, NULL, 'A' },
		{ "out", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL, *out_dir = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'A': path = optarg; break;
		case 'O': out_dir = optarg; break;
		case 'h': help(); return 0;
		case ':': return wz_cli_bad_option("plot", ':', argv);
		default: return wz_cli_bad_option("plot", '?', argv);
		}
	}
	if (argc - optind != 1)
		return wz_cli_usage("plot", "give one run id (see 'wzplan archive list')");
	long long id;
	int rc = wz_run_id_parse("plot", argv[optind], &id);
	if (rc)
		return rc;
	wza_archive *a;
	if ((rc = wz_run_archive_open("plot", path, 0, &a)))
		return rc;
	wz_diag diag;
	wz_diag_clear(&diag);
	wza_run *run = NULL, *codec = NULL;
	if (wza_load(a, id, &run, &diag) || codec_for(a, run, &codec, &diag))
		rc = wz_cli_fail("plot", &diag);
	wza_close(a);
	char def[64];
	snprintf(def, sizeof def, "run-%lld-charts", id);
	if (!out_dir)
		out_dir = def;
	wzp_chart **charts = NULL;
	int n = 0, rendered = 0;
	wz_buf skipped = { 0 }, why_not = { 0 };
	if (!rc && wz_charts_build(run, run && run->ncodec ? run : codec, &charts, &n, &skipped)) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail("plot", &diag);
	}
	if (!rc && !n) {
		wz_diag_set(&diag, WZ_ERR_MISSING, "run %lld (%s) has no figures to chart", id,
			    run->command);
		rc = wz_cli_fail("plot", &diag);
	}
	if (!rc && wz_charts_write(charts, n, out_dir, &rendered, &why_not, &diag))
		rc = wz_cli_fail("plot", &diag);
	if (!rc) {
		for (int i = 0; i < n; i++)
			printf("%s/%s.%s  %s\n", out_dir, wzp_chart_name(charts[i]),
			       rendered ? "png" : "gp", wzp_chart_title(charts[i]));
		if (skipped.len)
			printf("%s", wz_buf_str(&skipped));
		char *gnuplot = NULL;
		wz_diag missing;
		int have = wzp_gnuplot_find(&gnuplot, &missing) == WZ_OK;
		free(gnuplot);
		/* Without gnuplot the data and scripts are the product; a gnuplot
		 * that fails is an error. */
		if (!rendered && !have) {
			wz_cli_warn("plot", "charts not drawn: %s; the data and gnuplot scripts are in %s",
				    wz_buf_str(&why_not), out_dir);
		} else if (!rendered) {
			wz_diag_set(&diag, WZ_ERR_IO, "charts not drawn: %s", wz_buf_str(&why_not));
			rc = wz_cli_fail("plot", &diag);
		}
	}
	wz_charts_free(charts, n);
	wz_buf_free(&skipped);
	wz_buf_free(&why_not);
	wza_run_free(codec);
	wza_run_free(run);
	return rc;
}
