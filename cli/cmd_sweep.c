/* `wzplan sweep`: run every point of a sweep file (wzplan-sweep(5)) on
 * every core, or one shard of them, each archived as a run tagged with the
 * sweep and point ids; list the points; print the archived results. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "archive/merge.h"
#include "cli/commands.h"
#include "cli/propose_cli.h"
#include "runs/propose.h"
#include "sweep/point_run.h"
#include "sweep/report_write.h"
#include "sweep/mpi.h"

/* `sweep example`: a sweep file to start from (wzplan-sweep(5)). */
static const char example_sweep[] =
	"# A wzplan sweep file (wzplan-sweep(5)): the product page's scenario on\n"
	"# two GPU types at three contexts, with two format lists: 12 points, the\n"
	"# last axis varying fastest.\n"
	"sweep = example\n"
	"set.mode = memory\n"
	"set.price_set = catalog\n"

	"axis.gpu = H100 SXM 80GB | H200 SXM\n"
	"axis.context = 32k .. 128k times 2\n"
	"axis.formats = fp8-mix, wz-5.44 | fp8-mix, int4-g64\n"
	"# Size fleets by simulation too (slower): uncomment, with a population\n"
	"# small enough for a quick run.\n"
	"# simulate = yes\n"
	"# set.users = 500\n"
	"# set.duration_s = 900\n";

static void help(void)
{
	printf("Usage: wzplan sweep FILE [--jobs N] [--shard K/N] [options]\n"
	       "       wzplan sweep points FILE [--format text|csv|json]\n"
	       "       wzplan sweep results FILE [--archive FILE] [-o FILE]\n"
	       "       wzplan sweep report FILE [--archive FILE] [--out DIR] [--codec-run RUN]\n"
	       "       wzplan sweep example\n"
	       "\n"
	       "Runs every point of the sweep file FILE (a base scenario and axes of its\n"
	       "parameters; see wzplan-sweep(5)): the cost comparison of each point, and\n"
	       "the fleets sized by simulation where the point says 'simulate = yes', each\n"
	       "stored in the archive as a propose run tagged with the sweep's id and the\n"
	       "point's id.  Points whose id is already in the archive are skipped, so a\n"
	       "killed sweep run again continues where it stopped.  The points run in N\n"
	       "worker processes, each taking the next point when it is free; every\n"
	       "point's figures are the same for any N and any order.\n"
	       "\n"
	       "  points   the expanded points: index, id and parameters\n"
	       "  results  every archived point's figures as CSV, in point order (the\n"
	       "           same bytes for the same results; missing points are counted\n"
	       "           on standard error and make the exit status 1)\n"
	       "  report   tables (the points and their runs; one per pair of axes) and\n"
	       "           charts (cost against context, GPUs against users, the\n"
	       "           cost-quality front with --codec-run) into DIR, each figure\n"
	       "           with the run it is from\n"
	       "  example  print a sweep file to start from\n"
	       "\n"
	       "Options:\n"
	       "  -j, --jobs N           worker processes (default: the online CPUs, %d here)\n"
	       "  --shard K/N            run only shard K of N, the shards of about equal\n"
	       "                         estimated cost (for job arrays: one shard per task;\n"
	       "                         see docs/sweep-slurm.md)\n"
	       "  --archive FILE         the archive (default: $WZPLAN_ARCHIVE, else\n"
	       "                         $XDG_DATA_HOME/wzplan/archive.sqlite, else\n"
	       "                         ~/.local/share/wzplan/archive.sqlite)\n"
	       "  --format F             points: text (default), csv or json\n"
	       "  --out DIR              report: the folder (default: SWEEP-report)\n"
	       "  --codec-run RUN        report: the codec run whose nmse per format places\n"
	       "                         the formats on the cost-quality front\n"
	       "  --codec-archive FILE   report: the archive holding RUN (default: --archive)\n"
	       "  -o, --output FILE      points, results: write there instead of standard output\n"
	       "  -q, --quiet            no progress on standard error\n"
	       "  -h, --help             this help\n"
	       "\n"
	       "Started by mpirun with N ranks, rank 0 deals the points out one at a time to\n"
	       "the other N - 1 ranks as they come free and stores each in the archive\n"
	       "(MPI in this build: %s).\n"
	       "\n"
	       "Examples:\n"
	       "  wzplan sweep example > grid.sweep\n"
	       "  wzplan sweep points grid.sweep\n"
	       "  wzplan sweep grid.sweep --jobs 8 --archive grid.sqlite\n"
	       "  wzplan sweep grid.sweep --shard 3/16 --archive shard-3.sqlite\n"
	       "  wzplan archive merge grid.sqlite shard-*.sqlite\n"
	       "  mpirun -np 33 wzplan sweep grid.sweep --archive grid.sqlite\n",
	       wzsw_ncpus(), wzsw_mpi_built() ? "yes" : "no");
}

static int list_points(const wzsw_sweep *s, wzp_output how, const char *output)
{
	wzp_table *t = wzp_table_new("Sweep points");
	wz_diag diag;
	if (!t)
		return 1;
	wzp_table_column(t, "index", "Point", 1);
	wzp_table_column(t, "id", "Id", 0);
	/* `simulate`, fixed or an axis, is the Simulate column alone */
	wzp_table_column(t, WZSW_KEY_SIMULATE, "Simulate", 0);
	for (int i = 0; i < s->nparams; i++)
		if (strcmp(s->params[i].key, WZSW_KEY_SIMULATE))
			wzp_table_column(t, s->params[i].key, s->params[i].key, 0);
	for (int a = 0; a < s->naxes; a++)
		if (strcmp(s->axes[a].key, WZSW_KEY_SIMULATE))
			wzp_table_column(t, s->axes[a].key, s->axes[a].key, 0);
	int rc = 0;
	for (long i = 0; i < s->npoints && !rc; i++) {
		wzsw_point p;
		if (wzsw_point_build(s, i, &p, &diag)) {
			rc = wz_cli_fail("sweep", &diag);
			break;
		}
		wzp_table_row(t);
		wzp_table_numf(t, (double)i, 0);
		wzp_table_str(t, p.id);
		wzp_table_str(t, p.simulate ? "yes" : "no");
		for (int k = 0; k < p.n; k++)
			if (strcmp(p.keys[k], WZSW_KEY_SIMULATE))
				wzp_table_str(t, p.values[k]);
		wzsw_point_clear(&p);
	}
	wzp_table_note(t, "Sweep %s: %ld point%s (%s); the last axis varies fastest.", s->name,
		       s->npoints, s->npoints == 1 ? "" : "s", s->origin);
	wz_buf out = { 0 };
	if (!rc && wzp_table_render(t, how, &out))
		rc = 1;
	if (!rc)
		rc = wz_cli_emit("sweep", output, wz_buf_str(&out));
	wz_buf_free(&out);
	wzp_table_free(t);
	return rc;
}

static int open_archive(const char *path, int create, char **resolved, wza_archive **a)
{
	wz_diag diag;
	*resolved = NULL;
	if (path)
		*resolved = strdup(path);
	else if (wza_default_path(resolved, &diag))
		return wz_cli_fail("sweep", &diag);
	if (!*resolved)
		return 1;
	return wz_run_archive_open("sweep", *resolved, create, a);
}

static int results(const wzsw_sweep *s, const char *path, const char *output)
{
	char *where;
	wza_archive *a;
	int rc = open_archive(path, 0, &where, &a);
	free(where);
	if (rc)
		return rc;
	wz_buf out = { 0 };
	long missing = 0;
	rc = wz_sweep_results_csv("sweep", s, a, &out, &missing);
	wza_close(a);
	if (!rc)
		rc = wz_cli_emit("sweep", output, wz_buf_str(&out));
	if (!rc && missing) {
		fprintf(stderr, "wzplan sweep: %ld of %ld points are not in the archive\n", missing,
			s->npoints);
		rc = 1;
	}
	wz_buf_free(&out);
	return rc;
}

static int report(const wzsw_sweep *s, const char *path, const char *out_dir,
		  long long codec_run, const char *codec_archive, int quiet)
{
	char *where, dir[4096];
	wza_archive *a;
	wza_run *codec = NULL;
	int rc = open_archive(path, 0, &where, &a);
	if (rc) {
		free(where);
		return rc;
	}
	if (codec_run)
		rc = wz_propose_load_codec_run("sweep", codec_archive ? codec_archive : where,
					       codec_run, &codec);
	snprintf(dir, sizeof dir, "%s", out_dir ? out_dir : s->name);
	if (!out_dir)
		snprintf(dir, sizeof dir, "%s-report", s->name);
	if (!rc)
		rc = wz_sweep_report(s, a, codec, codec_run, dir, quiet);
	wza_run_free(codec);
	wza_close(a);
	free(where);
	return rc;
}

typedef struct {
	const wzsw_sweep *s;
	long done, total;
	int quiet;
	struct timespec start;
} progress;

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void on_done(void *ud, long index, int status)
{
	progress *pr = ud;
	pr->done++;
	if (pr->quiet && !status)
		return;
	fprintf(stderr, "wzplan sweep: point %ld %s (%ld of %ld, %.1f s)\n", index,
		status ? "FAILED" : "archived", pr->done, pr->total, since(&pr->start));
}

/* The scratch folder for the points' scenario files (and, on an MPI
 * rank, its scratch archive). */
static int make_workdir(char *workdir, size_t n)
{
	const char *tmpdir = getenv("TMPDIR");
	snprintf(workdir, n, "%s/wzplan-sweep.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (mkdtemp(workdir))
		return 0;
	wz_diag diag;
	wz_diag_set(&diag, WZ_ERR_IO, "%s: cannot make a work folder", workdir);
	return wz_cli_fail("sweep", &diag);
}

/* An MPI rank other than 0: runs the points rank 0 sends until told to
 * stop; rank 0 reports them. */
static int mpi_worker(const wzsw_sweep *s)
{
	char workdir[PATH_MAX], scratch[PATH_MAX + 32], sweep_abs[PATH_MAX];
	int rc = make_workdir(workdir, sizeof workdir);
	if (rc)
		return rc;
	snprintf(scratch, sizeof scratch, "%s/point.sqlite", workdir);
	if (!realpath(s->origin, sweep_abs))
		snprintf(sweep_abs, sizeof sweep_abs, "%s", s->origin);
	wz_sweep_ctx ctx = { s, scratch, workdir, sweep_abs };
	wz_diag diag;
	long nfailed = 0;
	if (wzsw_mpi_run(NULL, 0, wz_sweep_mpi_work, &ctx, NULL, NULL, NULL, NULL, &nfailed, &diag))
		rc = wz_cli_fail("sweep", &diag);
	rmdir(workdir);
	return rc;
}

/* Runs the sweep's points (of one shard) that the archive lacks: in the
 * process pool, or with mpi set, dealt out to the other MPI ranks (*dealt
 * says whether they were, so that the caller can stop them if not). */
static int run_sweep(const wzsw_sweep *s, const char *path, long jobs, long shard_k,
		     long shard_n, int quiet, int mpi, int *dealt)
{
	wz_diag diag;
	char *where;
	wza_archive *a;
	/* Created (and migrated) here, before the workers open it. */
	int rc = open_archive(path, 1, &where, &a);
	if (rc) {
		free(where);
		return rc;
	}
	wza_point_run *have;
	int nhave;
	if (wza_point_runs(a, NULL, &have, &nhave, &diag)) {
		wza_close(a);
		free(where);
		return wz_cli_fail("sweep", &diag);
	}
	wza_close(a);
	long *todo = malloc((size_t)s->npoints * sizeof *todo);
	long *shard_of = malloc((size_t)s->npoints * sizeof *shard_of);
	long ntodo = 0, nskip = 0, nshard = 0;
	if (todo && shard_of && wzsw_shard_plan(s, shard_n, shard_of, NULL, &diag))
		rc = wz_cli_fail("sweep", &diag);
	for (long i = 0; todo && shard_of && i < s->npoints && !rc; i++) {
		if (shard_of[i] != shard_k)
			continue;
		nshard++;
		wzsw_point p;
		if (wzsw_point_build(s, i, &p, &diag)) {
			rc = wz_cli_fail("sweep", &diag);
			break;
		}
		int there = 0;
		for (int k = 0; k < nhave && !there; k++)
			there = !strcmp(have[k].point, p.id);
		wzsw_point_clear(&p);
		if (there)
			nskip++;
		else
			todo[ntodo++] = i;
	}
	wza_point_runs_free(have, nhave);
	int nomem = !todo || !shard_of;
	free(shard_of);
	if (!rc && !nomem && wzsw_order_by_cost(s, todo, ntodo, &diag))
		rc = wz_cli_fail("sweep", &diag);
	char workdir[PATH_MAX], sweep_abs[PATH_MAX];
	if (!rc && nomem) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail("sweep", &diag);
	}
	if (!rc)
		rc = make_workdir(workdir, sizeof workdir);
	if (rc) {
		free(todo);
		free(where);
		return rc;
	}
	if (!realpath(s->origin, sweep_abs))
		snprintf(sweep_abs, sizeof sweep_abs, "%s", s->origin);
	if (!quiet) {
		fprintf(stderr, "wzplan sweep: %s: %ld point%s", s->name, s->npoints,
			s->npoints == 1 ? "" : "s");
		if (shard_n > 1)
			fprintf(stderr, ", %ld in shard %ld/%ld", nshard, shard_k, shard_n);
		if (mpi)
			fprintf(stderr, "; %ld already in %s, %ld to run on %d MPI rank%s\n", nskip,
				where, ntodo, mpi - 1, mpi == 2 ? "" : "s");
		else
			fprintf(stderr, "; %ld already in %s, %ld to run on %ld worker%s\n", nskip,
				where, ntodo, jobs, jobs == 1 ? "" : "s");
	}
	/* Standard output is shared with the workers: nothing buffered may be
	 * written twice. */
	fflush(stdout);
	fflush(stderr);
	wz_sweep_ctx ctx = { s, where, workdir, sweep_abs };
	progress pr = { s, 0, ntodo, quiet, { 0, 0 } };
	clock_gettime(CLOCK_MONOTONIC, &pr.start);
	long nfailed = 0;
	if (mpi) {
		*dealt = 1;
		if (wzsw_mpi_run(todo, ntodo, NULL, NULL, wz_sweep_mpi_take, &ctx, on_done, &pr,
				 &nfailed, &diag))
			rc = wz_cli_fail("sweep", &diag);
	} else if (wzsw_pool_run((int)jobs, todo, ntodo, wz_sweep_run_point, &ctx, on_done, &pr,
				 &nfailed, &diag)) {
		rc = wz_cli_fail("sweep", &diag);
	}
	rmdir(workdir);
	if (!rc && !quiet)
		fprintf(stderr, "wzplan sweep: %s: %ld point%s archived, %ld failed, %ld skipped, in "
				"%.2f s\n",
			s->name, ntodo - nfailed, ntodo - nfailed == 1 ? "" : "s", nfailed, nskip,
			since(&pr.start));
	if (!rc && nfailed)
		rc = 1;
	free(todo);
	free(where);
	return rc;
}

/* Under an MPI launcher with more than one rank the points are dealt out
 * over the ranks; a build without MPI refuses rather than run the whole
 * sweep once per rank. */
static int run_mpi_or_pool(const wzsw_sweep *s, const char *path, long jobs, long shard_k,
			   long shard_n, int quiet)
{
	long launched = wzsw_mpi_launched();
	int dealt = 0;
	if (launched < 2)
		return run_sweep(s, path, jobs, shard_k, shard_n, quiet, 0, &dealt);
	wz_diag diag;
	int rank, size;
	if (wzsw_mpi_init(&rank, &size, &diag)) {
		fprintf(stderr, "wzplan sweep: started as one of %ld MPI ranks, but %s\n", launched,
			diag.msg);
		return 2;
	}
	int rc;
	if (size < 2)
		rc = run_sweep(s, path, jobs, shard_k, shard_n, quiet, 0, &dealt);
	else if (rank)
		rc = mpi_worker(s);
	else
		rc = run_sweep(s, path, jobs, shard_k, shard_n, quiet, size, &dealt);
	/* Ranks waiting for points that will never come are stopped. */
	if (rc && size > 1 && (rank || !dealt))
		wzsw_mpi_abort(rc);
	wzsw_mpi_finalize();
	return rc;
}

int wz_cmd_sweep(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "shard", required_argument, NULL, 'S' },
		{ "archive", required_argument, NULL, 'A' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "out", required_argument, NULL, 'O' },
		{ "codec-run", required_argument, NULL, 'C' },
		{ "codec-archive", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *archive = NULL, *output = NULL, *format = NULL, *shard = NULL;
	const char *out_dir = NULL, *codec_archive = NULL;
	long long codec_run = 0;
	long jobs = wzsw_ncpus(), shard_k = 1, shard_n = 1;
	int quiet = 0, c, rc;
	wz_diag diag;
	wz_diag_clear(&diag);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":j:f:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			if ((rc = wz_cli_long("sweep", "--jobs", optarg, 1, 4096, &jobs)))
				return rc;
			break;
		case 'S': shard = optarg; break;
		case 'A': archive = optarg; break;
		case 'f': format = optarg; break;
		case 'o': output = optarg; break;
		case 'q': quiet = 1; break;
		case 'O': out_dir = optarg; break;
		case 'K': codec_archive = optarg; break;
		case 'C':
			if ((rc = wz_run_id_parse("sweep", optarg, &codec_run)))
				return rc;
			break;
		case 'h': help(); return 0;
		case ':': return wz_cli_bad_option("sweep", ':', argv);
		default: return wz_cli_bad_option("sweep", '?', argv);
		}
	}
	if (optind < argc && !strcmp(argv[optind], "example")) {
		if (argc - optind != 1)
			return wz_cli_usage("sweep", "example takes no arguments");
		return wz_cli_emit("sweep", output, example_sweep);
	}
	const char *action = "run";
	if (optind < argc && (!strcmp(argv[optind], "points") || !strcmp(argv[optind], "results") ||
			      !strcmp(argv[optind], "report")))
		action = argv[optind++];
	if (argc - optind != 1)
		return wz_cli_usage("sweep", argc - optind ? "one sweep file, please"
							   : "which sweep file?");
	const char *file = argv[optind];
	wzp_output how = WZP_TEXT;
	if (format && strcmp(action, "points"))
		return wz_cli_usage("sweep", "--format is for 'sweep points'");
	if (format && wzp_output_parse(format, &how, &diag))
		return wz_cli_usage("sweep", "%s", diag.msg);
	if (shard && wzsw_shard_parse(shard, &shard_k, &shard_n, &diag))
		return wz_cli_usage("sweep", "%s", diag.msg);
	if (shard && strcmp(action, "run"))
		return wz_cli_usage("sweep", "--shard is for running a sweep");
	if (output && (!strcmp(action, "run") || !strcmp(action, "report")))
		return wz_cli_usage("sweep", "-o is for 'sweep points' and 'sweep results'");
	if ((out_dir || codec_run || codec_archive) && strcmp(action, "report"))
		return wz_cli_usage("sweep", "--out, --codec-run and --codec-archive are for 'sweep report'");
	if (codec_archive && !codec_run)
		return wz_cli_usage("sweep", "--codec-archive needs --codec-run");
	wzsw_sweep *s;
	if (wzsw_load(file, &s, &diag))
		return wz_cli_fail("sweep", &diag);
	if (!strcmp(action, "points"))
		rc = list_points(s, how, output);
	else if (!strcmp(action, "results"))
		rc = results(s, archive, output);
	else if (!strcmp(action, "report"))
		rc = report(s, archive, out_dir, codec_run, codec_archive, quiet);
	else
		rc = run_mpi_or_pool(s, archive, jobs, shard_k, shard_n, quiet);
	wzsw_free(s);
	return rc;
}
