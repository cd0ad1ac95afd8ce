/* Codec measurements into the archive: inputs, window provenance and every
 * measured row with its interval and bits/value (codec_record.h). */
#include "cli/codec_record.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/codec_cli.h"
#include "cli/sim_record.h"
#include "common/wz_io.h"
#include "config.h"

/* Where the measurement now running goes: set by the two entry points,
 * read by wz_codec_record, which wz_codec_measure calls at its end. */
static struct {
	const char *archive; /* --archive FILE */
	int no_archive;
	wza_run *into;       /* propose and verify: add the rows here, store nothing */
	int argc;            /* the arguments as the user gave them, for the run */
	char **argv;
} target;

/* The path as given without its folders: what the proposal prints, and the
 * same whether verify reads the file by a relative or absolute path. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int wz_codec_measure_archived(int argc, char **argv)
{
	char **args = calloc((size_t)argc + 1, sizeof *args);
	if (!args) {
		fprintf(stderr, "wzplan codec: out of memory\n");
		return 1;
	}
	int n = 0;
	for (int i = 0; i < argc; i++) {
		if (i && !strcmp(argv[i], "--no-archive")) {
			target.no_archive = 1;
		} else if (i && !strcmp(argv[i], "--archive")) {
			if (i + 1 >= argc) {
				free(args);
				return wz_cli_usage(CMD, "option --archive needs a value");
			}
			target.archive = argv[++i];
		} else if (i && !strncmp(argv[i], "--archive=", 10)) {
			target.archive = argv[i] + 10;
		} else {
			args[n++] = argv[i];
		}
	}
	int rc;
	if (target.archive && target.no_archive) {
		rc = wz_cli_usage(CMD, "--archive and --no-archive exclude each other");
	} else {
		target.argc = argc;
		target.argv = argv;
		rc = wz_codec_measure(n, args);
	}
	memset(&target, 0, sizeof target);
	free(args);
	return rc;
}

int wz_codec_measure_into(wza_run *run, int argc, char **argv)
{
	/* The table goes to a scratch file (nothing on standard output, and a
	 * recorded -o never overwrites the user's file); the rows go to run. */
	const char *tmpdir = getenv("TMPDIR");
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s/wzplan-measure.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	int fd = mkstemp(tmp);
	char **args = calloc((size_t)argc + 3, sizeof *args);
	if (fd < 0 || !args) {
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(args);
		fprintf(stderr, "wzplan codec: cannot create a scratch file in %s\n",
			tmpdir && *tmpdir ? tmpdir : "/tmp");
		return 1;
	}
	close(fd);
	int n = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (i && (!strcmp(a, "--archive") || !strcmp(a, "-o") || !strcmp(a, "--output")))
			i++;
		else if (i && (!strcmp(a, "--no-archive") || !strncmp(a, "--archive=", 10) ||
			       !strncmp(a, "--output=", 9) || (!strncmp(a, "-o", 2) && a[2])))
			continue;
		else
			args[n++] = argv[i];
	}
	args[n++] = "-o";
	args[n++] = tmp;
	target.into = run;
	target.argc = argc;
	target.argv = argv;
	int rc = wz_codec_measure(n, args);
	memset(&target, 0, sizeof target);
	unlink(tmp);
	free(args);
	return rc;
}

static void put(wza_run *run, const wz_codec_measured *r, const char *metric, wzc_ci ci,
		const char *hash)
{
	if (!isnan(ci.value))
		wza_run_codec(run, r->window, r->format, metric, ci.value, ci.lo, ci.hi,
			      r->cell->e->bits_per_value, hash);
}

static wzc_ci point(double v)
{
	wzc_ci ci = { v, NAN, NAN };
	return ci;
}

/* Whether a measured (not sweep) row of r's window has r's format: then a
 * sweep row at that rate leaves the bound, the same figure, to it. */
static int measured_too(const wz_codec_measured *rows, int nrows, const wz_codec_measured *r)
{
	for (int i = 0; i < nrows; i++)
		if (!rows[i].sweep && !strcmp(rows[i].window, r->window) &&
		    !strcmp(rows[i].format, r->format))
			return 1;
	return 0;
}

static void record_row(wza_run *run, const wz_codec_measured *r, int nboot, uint64_t seed,
		       const char *hash, int bound_elsewhere)
{
	static const char *const iso_names[2][3] = {
		{ "iso_bits_nmse", "fewer_bits_nmse", "iso_censored_nmse" },
		{ "iso_bits_kl", "fewer_bits_kl", "iso_censored_kl" },
	};
	const wzc_errors *e = r->cell->e;
	const wzc_errors *ref = r->ref ? r->ref->e : NULL;
	int kl = wzc_metric_available(e, WZC_M_KL);
	if (r->sweep) {
		/* The iso sweep: what the iso-quality bits were read from, and
		 * the bound at each of its rates. */
		put(run, r, "sweep_nmse", wzc_metric_ci(e, WZC_M_NMSE, nboot, seed), hash);
		if (kl)
			put(run, r, "sweep_kl", wzc_metric_ci(e, WZC_M_KL, nboot, seed), hash);
		if (!bound_elsewhere)
			put(run, r, "nmse_bound", point(r->cell->bound_nmse), hash);
		return;
	}
	wzc_ci nmse = wzc_metric_ci(e, WZC_M_NMSE, nboot, seed);
	put(run, r, "nmse", nmse, hash);
	wzc_ci sqnr = { wzc_sqnr_db(nmse.value), wzc_sqnr_db(nmse.hi), wzc_sqnr_db(nmse.lo) };
	put(run, r, "sqnr_db", sqnr, hash);
	put(run, r, "nmse_latent", wzc_metric_ci(e, WZC_M_NMSE_LATENT, nboot, seed), hash);
	put(run, r, "nmse_rope", wzc_metric_ci(e, WZC_M_NMSE_ROPE, nboot, seed), hash);
	if (kl) {
		put(run, r, "kl", wzc_metric_ci(e, WZC_M_KL, nboot, seed), hash);
		put(run, r, "out_err", wzc_metric_ci(e, WZC_M_OUT_ERR, nboot, seed), hash);
	}
	if (ref && ref != e) {
		put(run, r, "nmse_vs_fp8", wzc_ratio_ci(e, ref, WZC_M_NMSE, nboot, seed), hash);
		put(run, r, "tokens_better", point(wzc_share_better(e, ref, WZC_M_NMSE)), hash);
		if (kl) {
			put(run, r, "kl_vs_fp8", wzc_ratio_ci(e, ref, WZC_M_KL, nboot, seed), hash);
			put(run, r, "queries_better", point(wzc_share_better(e, ref, WZC_M_KL)),
			    hash);
		}
	}
	put(run, r, "bound_gap_db", point(r->cell->gap_db), hash);
	put(run, r, "nmse_bound", point(r->cell->bound_nmse), hash);
	if (!isnan(r->cell->bound_capped_nmse)) {
		put(run, r, "bound_capped_gap_db", point(r->cell->capped_gap_db), hash);
		put(run, r, "nmse_bound_capped", point(r->cell->bound_capped_nmse), hash);
	}
	/* Only iso figures really measured (--iso, formats other than wz). */
	for (int k = 0; k < 2 && r->cell->has_iso; k++) {
		if (isnan(r->cell->iso[k].value))
			continue;
		put(run, r, iso_names[k][0], r->cell->iso[k], hash);
		put(run, r, iso_names[k][1], wzc_fewer_bits(e->bits_per_value, r->cell->iso[k]),
		    hash);
		if (r->cell->iso_censored[k])
			put(run, r, iso_names[k][2], point(1), hash);
	}
}

/* The trace and profile files with size and hash; a file that cannot be
 * hashed now is recorded without one. */
static void record_file(wza_run *run, const char *kind, const char *path, char hex[17])
{
	char abs[PATH_MAX];
	const char *where = realpath(path, abs) ? abs : path;
	uint64_t size = 0;
	if (wz_hash_file(path, hex, &size, NULL)) {
		hex[0] = '\0';
		wza_run_input(run, kind, path, where, NULL, -1, NULL);
	} else {
		wza_run_input(run, kind, path, where, hex, (long long)size, NULL);
	}
}

static void record_window(wza_run *run, const wz_codec_measured *r, const char *hash)
{
	const char *t = "codec_window", *w = r->window;
	const wzt_cache_trace *tr = r->trace;
	wza_run_figure(run, t, w, "file", NAN, base_name(r->path));
	wza_run_figure(run, t, w, "trace_hash", NAN, hash);
	wza_run_figure(run, t, w, "split", NAN, r->split ? r->split : "none");
	wza_run_figure(run, t, w, "source", NAN, tr && tr->source ? tr->source : "not stated");
	wza_run_figure(run, t, w, "model", NAN, tr && tr->model ? tr->model : "not stated");
	if (tr) {
		wza_run_figure(run, t, w, "layers", tr->L, NULL);
		wza_run_figure(run, t, w, "tokens", tr->T, NULL);
		wza_run_figure(run, t, w, "queries", tr->Q, NULL);
	}
}

int wz_codec_record(int argc, char **argv, const char *profile_path, long seed, long nboot,
		    const char *formats, const wz_codec_measured *rows, int nrows)
{
	if (!target.into && target.no_archive)
		return 0;
	if (target.argv) {
		argc = target.argc;
		argv = target.argv;
	}
	wza_run *run = target.into ? target.into
				   : wza_run_new("codec", argc, argv, PACKAGE_VERSION);
	wz_diag diag;
	if (!run) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_cli_fail(CMD, &diag);
	}
	char seed_text[32], boot_text[32], prof_hex[17] = "";
	snprintf(seed_text, sizeof seed_text, "%ld", seed);
	snprintf(boot_text, sizeof boot_text, "%ld", nboot);
	wza_run_input(run, "seed", "seed", "bootstrap", NULL, (long long)strlen(seed_text),
		      seed_text);
	wza_run_input(run, "option", "formats", "--formats", NULL, (long long)strlen(formats),
		      formats);
	if (profile_path)
		record_file(run, "profile", profile_path, prof_hex);
	const char *t = "codec_setup", *s = "setup";
	wza_run_figure(run, t, s, "seed", (double)seed, NULL);
	wza_run_figure(run, t, s, "boot", (double)nboot, NULL);
	wza_run_figure(run, t, s, "formats", NAN, formats);
	wza_run_figure(run, t, s, "profile_hash", NAN, *prof_hex ? prof_hex : "none");
	wza_run_figure(run, t, s, "profile_file", NAN, profile_path ? base_name(profile_path)
								    : "none");
	const char *last_path = NULL;
	char hex[17] = "";
	for (int i = 0; i < nrows; i++) {
		const wz_codec_measured *r = &rows[i];
		/* Rows come window by window: each trace file once. */
		if (!last_path || strcmp(last_path, r->path)) {
			record_file(run, "trace", r->path, hex);
			record_window(run, r, hex);
			last_path = r->path;
		}
		record_row(run, r, (int)nboot, (uint64_t)seed, *hex ? hex : NULL,
			   r->sweep && measured_too(rows, nrows, r));
	}
	if (target.into) {
		if (!run->failed)
			return 0;
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_cli_fail(CMD, &diag);
	}
	int rc;
	if (run->failed) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail(CMD, &diag);
	} else {
		rc = wz_sim_store(CMD, target.archive, run);
	}
	wza_run_free(run);
	return rc;
}

int wz_codec_inputs_changed(const wza_run *run, wz_buf *changes)
{
	int n = 0;
	for (int i = 0; i < run->ninputs; i++) {
		const wza_input *in = &run->inputs[i];
		int trace = !strcmp(in->kind, "trace") && strcmp(in->name, "traffic");
		if (!trace && strcmp(in->kind, "profile"))
			continue;
		char hex[17];
		uint64_t size = 0;
		if (wz_hash_file(in->origin, hex, &size, NULL)) {
			n++;
			wz_buf_printf(changes, "  %s %s: %s is gone\n", in->kind, base_name(in->name),
				      in->origin);
		} else if (!in->hash || strcmp(hex, in->hash)) {
			n++;
			wz_buf_printf(changes, "  %s %s: %s changed (recorded XXH3 %s, %lld bytes; "
					       "now %s, %llu bytes)\n",
				      in->kind, base_name(in->name), in->origin,
				      in->hash ? in->hash : "none", in->size, hex,
				      (unsigned long long)size);
		}
	}
	return n;
}

static int same(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

int wz_codec_rows_diff(const wza_run *a, const wza_run *b, wz_buf *out)
{
	if (a->ncodec != b->ncodec) {
		wz_buf_printf(out, "  codec: archived %d measurements, recomputed %d\n", a->ncodec,
			      b->ncodec);
		return 1;
	}
	int n = 0;
	for (int i = 0; i < a->ncodec; i++) {
		const wza_codec *x = &a->codec[i], *y = &b->codec[i];
		if (strcmp(x->window, y->window) || strcmp(x->format, y->format) ||
		    strcmp(x->metric, y->metric) || !same(x->value, y->value) ||
		    !same(x->ci_low, y->ci_low) || !same(x->ci_high, y->ci_high) ||
		    !same(x->bits_per_value, y->bits_per_value)) {
			n++;
			wz_buf_printf(out, "  codec %s / %s / %s: archived %.10g [%.10g, %.10g] at "
					   "%.6g bits, recomputed %s %.10g [%.10g, %.10g] at %.6g bits\n",
				      x->window, x->format, x->metric, x->value, x->ci_low, x->ci_high,
				      x->bits_per_value, y->metric, y->value, y->ci_low, y->ci_high,
				      y->bits_per_value);
		}
	}
	return n;
}

int wz_codec_recompute(const wza_run *run, wza_run *fresh)
{
	json_t *arr = json_loads(run->args ? run->args : "[]", 0, NULL);
	size_t n = json_is_array(arr) ? json_array_size(arr) : 0;
	char **argv = n ? calloc(n + 1, sizeof *argv) : NULL;
	int rc = 0;
	if (!argv) {
		fprintf(stderr, "wzplan verify: run %lld: its recorded arguments are unreadable\n",
			run->id);
		rc = 1;
	}
	/* Traces and the profile from their recorded absolute paths, so the
	 * run recomputes from any folder. */
	for (size_t i = 0; !rc && i < n; i++) {
		const char *s = json_string_value(json_array_get(arr, i));
		argv[i] = (char *)(s ? s : "");
		for (int k = 0; k < run->ninputs; k++) {
			const wza_input *in = &run->inputs[k];
			if ((!strcmp(in->kind, "trace") || !strcmp(in->kind, "profile")) &&
			    !strcmp(in->name, argv[i]))
				argv[i] = in->origin;
		}
	}
	if (!rc)
		rc = wz_codec_measure_into(fresh, (int)n, argv);
	free(argv);
	json_decref(arr);
	return rc;
}
