/* `wzplan archive`: list, show, export, compare and check the runs stored in
 * the result archive. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/commands.h"
#include "cli/propose_cli.h"
#include "runs/propose.h"
#include "runs/verify.h"

static void help(void)
{
	printf("Usage: wzplan archive list [options]\n"
	       "       wzplan archive show RUN [options]\n"
	       "       wzplan archive export RUN [--format csv|json] [-o FILE] [options]\n"
	       "       wzplan archive diff RUN1 RUN2 [options]\n"
	       "       wzplan archive check [options]\n"
	       "       wzplan archive merge OUT IN... [--skip-duplicates]\n"
	       "\n"
	       "The result archive holds every stored run: its command line, program version,\n"
	       "start and end time, inputs (scenario and catalog texts with their hashes,\n"
	       "trace files with size and hash), and figures.\n"
	       "\n"
	       "  list     runs, newest first (--format text, csv or json)\n"
	       "  show     one run: its inputs and every figure\n"
	       "  export   one run's figures as CSV (default), or the whole run as JSON\n"
	       "  diff     the figures that differ between two runs (exit 1 when any)\n"
	       "  check    SQLite's integrity check of the archive file\n"
	       "  merge    combine archives into one (see 'wzplan archive merge --help')\n"
	       "\n"
	       "Options:\n"
	       "  --archive FILE         the archive (default: $WZPLAN_ARCHIVE, else\n"
	       "                         $XDG_DATA_HOME/wzplan/archive.sqlite, else\n"
	       "                         ~/.local/share/wzplan/archive.sqlite)\n"
	       "  --format F             text, csv or json (list, export)\n"
	       "  -o, --output FILE      write there instead of standard output\n"
	       "  -h, --help             this help\n");
}

static void csv_number(wz_buf *b, double v)
{
	if (!isnan(v))
		wz_buf_printf(b, "%.17g", v);
}

static json_t *jnum(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static int cmd_list(wza_archive *a, wzp_output how, wz_buf *out, wz_diag *diag)
{
	wza_run_info *runs;
	int n;
	if (wza_list(a, &runs, &n, diag))
		return wz_cli_fail("archive", diag);
	wzp_table *t = wzp_table_new("Runs in the archive");
	if (!t) {
		wza_list_free(runs, n);
		return 1;
	}
	wzp_table_column(t, "id", "Run", 1);
	wzp_table_column(t, "command", "Command", 0);
	wzp_table_column(t, "started", "Started (UTC)", 0);
	wzp_table_column(t, "finished", "Finished (UTC)", 0);
	wzp_table_column(t, "status", "Status", 0);
	wzp_table_column(t, "figures", "Figures", 1);
	wzp_table_column(t, "version", "Version", 0);
	wzp_table_column(t, "args", "Arguments", 0);
	for (int i = 0; i < n; i++) {
		char id[32];
		snprintf(id, sizeof id, "%lld", runs[i].id);
		wzp_table_row(t);
		wzp_table_num(t, (double)runs[i].id, id);
		wzp_table_str(t, runs[i].command);
		wzp_table_str(t, runs[i].started);
		wzp_table_str(t, runs[i].finished);
		wzp_table_str(t, runs[i].status);
		wzp_table_numf(t, runs[i].nfigures, 0);
		wzp_table_str(t, runs[i].version);
		wzp_table_str(t, runs[i].args);
	}
	if (!n)
		wzp_table_note(t, "No runs yet: 'wzplan propose' stores one.");
	wzp_table_note(t, "Archive: %s", wza_path(a));
	wz_err err = wzp_table_render(t, how, out);
	wzp_table_free(t);
	wza_list_free(runs, n);
	return err ? 1 : 0;
}

static void show_run(const wza_run *r, wz_buf *out)
{
	wz_buf_printf(out, "Run %lld: wzplan %s %s\n", r->id, r->command, r->args);
	wz_buf_printf(out, "  program version %s, started %s, finished %s, status %s\n\n",
		      r->version, r->started, r->finished, r->status);
	wz_buf_puts(out, "Inputs:\n");
	for (int i = 0; i < r->ninputs; i++) {
		const wza_input *in = &r->inputs[i];
		wz_buf_printf(out, "  %-9s %-12s %s", in->kind, in->name, in->origin);
		if (in->hash)
			wz_buf_printf(out, "  (%lld bytes, XXH3 %s)", in->size, in->hash);
		wz_buf_puts(out, "\n");
	}
	wz_buf_printf(out, "\nFigures (%d):\n", r->nfigures);
	for (int i = 0; i < r->nfigures; i++) {
		const wza_figure *f = &r->figures[i];
		wz_buf_printf(out, "  %s / %s / %s = ", f->table, f->row, f->col);
		if (f->text)
			wz_buf_printf(out, "%s\n", f->text);
		else if (isnan(f->value))
			wz_buf_puts(out, "(none)\n");
		else
			wz_buf_printf(out, "%.10g\n", f->value);
	}
	if (r->ncodec)
		wz_buf_printf(out, "\nCodec measurements (%d):\n", r->ncodec);
	for (int i = 0; i < r->ncodec; i++) {
		const wza_codec *c = &r->codec[i];
		wz_buf_printf(out, "  %s / %s / %s = %.6g [%.6g, %.6g] at %.3f bits/value\n",
			      c->window, c->format, c->metric, c->value, c->ci_low, c->ci_high,
			      c->bits_per_value);
	}
	if (r->nsim)
		wz_buf_printf(out, "\nSimulation results (%d):\n", r->nsim);
	for (int i = 0; i < r->nsim; i++)
		wz_buf_printf(out, "  %s / %s = %.6g %s\n", r->sim[i].format, r->sim[i].metric,
			      r->sim[i].value, r->sim[i].unit ? r->sim[i].unit : "");
	if (r->npoints)
		wz_buf_printf(out, "\nSimulation series (%d points; 'archive export RUN --format "
				   "json' lists them, 'plot RUN' draws them):\n",
			      r->npoints);
	/* One line per series and format: points are stored grouped so. */
	for (int i = 0, start = 0; i < r->npoints; i++) {
		const wza_point *p = &r->points[i], *next = i + 1 < r->npoints ? p + 1 : NULL;
		if (next && !strcmp(next->series, p->series) && !strcmp(next->format, p->format))
			continue;
		wz_buf_printf(out, "  %-10s %-12s %4d points, x %.6g .. %.6g\n", p->series, p->format,
			      i + 1 - start, r->points[start].x, p->x);
		start = i + 1;
	}
	if (r->nfleets)
		wz_buf_printf(out, "\nFleets (%d):\n", r->nfleets);
	for (int i = 0; i < r->nfleets; i++) {
		const wza_fleet *f = &r->fleets[i];
		wz_buf_printf(out, "  %-12s %-8s %6ld GPUs  $%.0f reserved, $%.0f on demand per year\n",
			      f->format, f->method, f->gpus, f->reserved_usd_year,
			      f->ondemand_usd_year);
	}
}

static void export_csv(const wza_run *r, wz_buf *out)
{
	wz_buf_puts(out, "run,table,row,column,value,text\n");
	for (int i = 0; i < r->nfigures; i++) {
		const wza_figure *f = &r->figures[i];
		wz_buf_printf(out, "%lld,", r->id);
		wz_buf_csv_field(out, f->table);
		wz_buf_puts(out, ",");
		wz_buf_csv_field(out, f->row);
		wz_buf_puts(out, ",");
		wz_buf_csv_field(out, f->col);
		wz_buf_puts(out, ",");
		csv_number(out, f->value);
		wz_buf_puts(out, ",");
		wz_buf_csv_field(out, f->text);
		wz_buf_puts(out, "\n");
	}
}

static json_t *run_json(const wza_run *r)
{
	json_t *root = json_object(), *run = json_object();
	json_object_set_new(run, "id", json_integer(r->id));
	json_object_set_new(run, "command", jstr(r->command));
	json_t *args = json_loads(r->args ? r->args : "[]", 0, NULL);
	json_object_set_new(run, "args", args ? args : json_array());
	json_object_set_new(run, "version", jstr(r->version));
	json_object_set_new(run, "started", jstr(r->started));
	json_object_set_new(run, "finished", jstr(r->finished));
	json_object_set_new(run, "status", jstr(r->status));
	json_object_set_new(root, "run", run);
	json_t *arr = json_array();
	for (int i = 0; i < r->ninputs; i++) {
		const wza_input *in = &r->inputs[i];
		json_array_append_new(arr, json_pack("{s:o,s:o,s:o,s:o,s:I,s:o}", "kind", jstr(in->kind),
						     "name", jstr(in->name), "origin", jstr(in->origin),
						     "hash", jstr(in->hash), "size", (json_int_t)in->size,
						     "content", jstr(in->content)));
	}
	json_object_set_new(root, "inputs", arr);
	arr = json_array();
	for (int i = 0; i < r->nfigures; i++) {
		const wza_figure *f = &r->figures[i];
		json_array_append_new(arr, json_pack("{s:o,s:o,s:o,s:o,s:o}", "table", jstr(f->table),
						     "row", jstr(f->row), "column", jstr(f->col),
						     "value", jnum(f->value), "text", jstr(f->text)));
	}
	json_object_set_new(root, "figures", arr);
	arr = json_array();
	for (int i = 0; i < r->ncodec; i++) {
		const wza_codec *c = &r->codec[i];
		json_array_append_new(arr, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "window",
						     jstr(c->window), "format", jstr(c->format),
						     "metric", jstr(c->metric), "value", jnum(c->value),
						     "ci_low", jnum(c->ci_low), "ci_high", jnum(c->ci_high),
						     "bits_per_value", jnum(c->bits_per_value),
						     "trace_hash", jstr(c->trace_hash)));
	}
	json_object_set_new(root, "codec_measurements", arr);
	arr = json_array();
	for (int i = 0; i < r->nsim; i++)
		json_array_append_new(arr, json_pack("{s:o,s:o,s:o,s:o}", "format", jstr(r->sim[i].format),
						     "metric", jstr(r->sim[i].metric), "value",
						     jnum(r->sim[i].value), "unit", jstr(r->sim[i].unit)));
	json_object_set_new(root, "sim_results", arr);
	arr = json_array();
	for (int i = 0; i < r->npoints; i++)
		json_array_append_new(arr, json_pack("{s:o,s:o,s:o,s:o}", "format",
						     jstr(r->points[i].format), "series",
						     jstr(r->points[i].series), "x", jnum(r->points[i].x),
						     "y", jnum(r->points[i].y)));
	json_object_set_new(root, "sim_series", arr);
	arr = json_array();
	for (int i = 0; i < r->nfleets; i++) {
		const wza_fleet *f = &r->fleets[i];
		json_array_append_new(arr, json_pack("{s:o,s:o,s:I,s:I,s:o,s:o,s:o,s:o}", "format",
						     jstr(f->format), "method", jstr(f->method), "gpus",
						     (json_int_t)f->gpus, "replicas", (json_int_t)f->replicas,
						     "reserved_usd_year", jnum(f->reserved_usd_year),
						     "ondemand_usd_year", jnum(f->ondemand_usd_year),
						     "saving_reserved", jnum(f->saving_reserved),
						     "saving_ondemand", jnum(f->saving_ondemand)));
	}
	json_object_set_new(root, "fleets", arr);
	return root;
}

int wz_cmd_archive(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "archive", required_argument, NULL, 'A' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	if (argc > 1 && !strcmp(argv[1], "merge"))
		return wz_cmd_archive_merge(argc - 1, argv + 1);
	const char *path = NULL, *output = NULL, *format = NULL;
	wz_diag diag;
	wz_diag_clear(&diag);
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'A': path = optarg; break;
		case 'f': format = optarg; break;
		case 'o': output = optarg; break;
		case 'h': help(); return 0;
		case ':': return wz_cli_bad_option("archive", ':', argv);
		default: return wz_cli_bad_option("archive", '?', argv);
		}
	}
	if (optind >= argc)
		return wz_cli_usage("archive", "which action? list, show, export, diff or check");
	const char *action = argv[optind++];
	int nargs = !strcmp(action, "show") || !strcmp(action, "export") ? 1
		    : !strcmp(action, "diff")                           ? 2
		    : !strcmp(action, "list") || !strcmp(action, "check") ? 0
									  : -1;
	if (nargs < 0)
		return wz_cli_usage("archive", "no action '%s'; use list, show, export, diff or check",
				    action);
	if (argc - optind != nargs)
		return wz_cli_usage("archive", "%s takes %d run id%s", action, nargs,
				    nargs == 1 ? "" : "s");
	long long ids[2] = { 0, 0 };
	for (int i = 0; i < nargs; i++) {
		int rc = wz_run_id_parse("archive", argv[optind + i], &ids[i]);
		if (rc)
			return rc;
	}
	wzp_output how = !strcmp(action, "export") ? WZP_CSV : WZP_TEXT;
	if (format && wzp_output_parse(format, &how, &diag))
		return wz_cli_usage("archive", "%s", diag.msg);
	if (!strcmp(action, "export") && how != WZP_CSV && how != WZP_JSON)
		return wz_cli_usage("archive", "export writes csv or json, not '%s'", format);

	wza_archive *a;
	int rc = wz_run_archive_open("archive", path, 0, &a);
	if (rc)
		return rc;
	wz_buf out = { 0 };
	wza_run *runs[2] = { NULL, NULL };
	for (int i = 0; i < nargs && !rc; i++)
		if (wza_load(a, ids[i], &runs[i], &diag))
			rc = wz_cli_fail("archive", &diag);
	if (rc) {
		/* already reported */
	} else if (!strcmp(action, "list")) {
		rc = cmd_list(a, how, &out, &diag);
	} else if (!strcmp(action, "check")) {
		if (wza_check(a, &diag))
			rc = wz_cli_fail("archive", &diag);
		else
			wz_buf_printf(&out, "%s: ok\n", wza_path(a));
	} else if (!strcmp(action, "show")) {
		show_run(runs[0], &out);
	} else if (!strcmp(action, "export") && how == WZP_CSV) {
		export_csv(runs[0], &out);
	} else if (!strcmp(action, "export")) {
		json_t *j = run_json(runs[0]);
		char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
		if (text)
			wz_buf_printf(&out, "%s\n", text);
		else
			out.failed = 1;
		free(text);
		json_decref(j);
	} else {
		char na[32], nb[32];
		snprintf(na, sizeof na, "run %lld", ids[0]);
		snprintf(nb, sizeof nb, "run %lld", ids[1]);
		wz_buf body = { 0 };
		int n = wz_figures_diff(runs[0], runs[1], na, nb, &body);
		if (n)
			wz_buf_printf(&out, "%d figure%s differ between run %lld and run %lld:\n%s", n,
				      n == 1 ? "" : "s", ids[0], ids[1], wz_buf_str(&body));
		else
			wz_buf_printf(&out, "run %lld and run %lld have the same %d figures\n", ids[0],
				      ids[1], runs[0]->nfigures);
		wz_buf_free(&body);
		rc = n ? 1 : 0;
	}
	if (out.failed) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail("archive", &diag);
	} else if (out.len) {
		int erc = wz_cli_emit("archive", output, wz_buf_str(&out));
		if (erc)
			rc = erc;
	}
	wz_buf_free(&out);
	wza_run_free(runs[0]);
	wza_run_free(runs[1]);
	wza_close(a);
	return rc;
}
