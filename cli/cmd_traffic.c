/* `wzplan traffic`: import public LLM-serving traces into the request
 * table, and summarize a table. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "traces/traffic.h"
#include "traces/traffic_import.h"

/* Files bigger than this get a line on stderr while they load: reading and
 * parsing a few GiB takes long enough to look like a hang. */
#define PROGRESS_BYTES ((long long)64 << 20)

static void help(void)
{
	printf("Usage: wzplan traffic import --from FORMAT FILE... --out FILE [options]\n"
	       "       wzplan traffic info FILE [--sort] [--format F]\n"
	       "\n"
	       "Converts public LLM-serving traces into wzplan's request table (see\n"
	       "wzplan-traffic(5)), and summarizes a table.\n"
	       "\n"
	       "Formats (--from):\n"
	       "  azure      Azure LLM inference CSV (TIMESTAMP, ContextTokens, GeneratedTokens)\n"
	       "  mooncake   Mooncake JSONL (timestamp ms, input_length, output_length, hash_ids)\n"
	       "  burstgpt   BurstGPT CSV (Timestamp, Model, Request tokens, Response tokens, ...)\n"
	       "  lengths    a CSV of token counts only (Vidur), with synthetic arrivals\n"
	       "  servegen   ServeGen per-client distributions (a folder of chunk-<i>-* files)\n"
	       "Several files are overlaid: each starts at 0 s, sessions kept apart.\n"
	       "\n"
	       "Import options:\n"
	       "  --out FILE             the request table to write (required)\n"
	       "  --sort                 sort records that are out of time order (default: refuse)\n"
	       "  --block-tokens N       mooncake: tokens per hash block (512)\n"
	       "  --model NAME           burstgpt: keep only this model's requests\n"
	       "  --rate R               lengths: arrivals per second (required)\n"
	       "  --cv C                 lengths: inter-arrival CV, 1 = Poisson (1)\n"
	       "  --prompt-column NAME   lengths: prompt column (num_prefill_tokens)\n"
	       "  --output-column NAME   lengths: output column (num_decode_tokens)\n"
	       "  --limit N              lengths: at most N rows\n"
	       "  --start S              servegen: seconds since 00:00 to start at (0)\n"
	       "  --duration S           servegen: seconds to draw (86400)\n"
	       "  --clients LIST         servegen: chunk numbers, e.g. 0,3,17 (all)\n"
	       "  --rate-scale X         servegen: multiply every rate (1)\n"
	       "  --seed N               lengths, servegen: random seed (1)\n"
	       "\n"
	       "Info options:\n"
	       "  --format F             text (default), md, csv or json\n"
	       "  -o, --output FILE      write there instead of standard output\n"
	       "  -h, --help             this help\n"
	       "\n"
	       "Examples:\n"
	       "  wzplan traffic import --from azure AzureLLMInferenceTrace_code.csv --out code.csv\n"
	       "  wzplan traffic import --from lengths arxiv.csv --rate 2 --cv 3 --out arxiv.csv\n"
	       "  wzplan traffic import --from servegen servegen_deepseek-r1 --clients 0,1 \\\n"
	       "      --duration 3600 --out r1.csv\n"
	       "  wzplan traffic info code.csv --format json\n");
}

enum {
	OPT_FROM = 1100, OPT_OUT, OPT_SORT, OPT_BLOCK, OPT_MODEL, OPT_RATE, OPT_CV, OPT_PCOL,
	OPT_OCOL, OPT_LIMIT, OPT_START, OPT_DURATION, OPT_CLIENTS, OPT_RATE_SCALE, OPT_SEED,
};

typedef struct {
	const char *from, *out, *model;
	int sort;
	long block_tokens;
	wzt_lengths_opts lengths;
	wzt_servegen_opts servegen;
	int *clients;
} import_opts;

static int parse_clients(const char *text, import_opts *o)
{
	char **items;
	int n = wz_split_list(text, &items);
	if (n <= 0)
		return wz_cli_usage("traffic import", "--clients: want a list such as 0,3,17");
	o->clients = calloc((size_t)n, sizeof *o->clients);
	if (!o->clients) {
		wz_strlist_free(items, n);
		return wz_cli_usage("traffic import", "out of memory");
	}
	for (int i = 0; i < n; i++) {
		long v;
		if (wz_cli_long("traffic import", "--clients", items[i], 0, 1000000, &v)) {
			wz_strlist_free(items, n);
			return 2;
		}
		o->clients[i] = (int)v;
	}
	o->servegen.clients = o->clients;
	o->servegen.n_clients = n;
	wz_strlist_free(items, n);
	return 0;
}

static void progress(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > PROGRESS_BYTES)
		fprintf(stderr, "wzplan traffic import: reading %s (%lld MiB)\n", path,
			(long long)(st.st_size >> 20));
}

static wz_err import_one(const import_opts *o, const char *path, int index, wzt_traffic **t,
			 size_t *moved, wz_diag *diag)
{
	wzt_unsorted_policy policy = o->sort ? WZT_UNSORTED_SORT : WZT_UNSORTED_REFUSE;
	progress(path);
	if (!strcmp(o->from, "azure"))
		return wzt_import_azure(path, policy, t, moved, diag);
	if (!strcmp(o->from, "burstgpt"))
		return wzt_import_burstgpt(path, o->model, policy, t, moved, diag);
	if (!strcmp(o->from, "lengths")) {
		/* Each file its own arrival stream: overlaid copies of one
		 * stream would arrive in lockstep. */
		wzt_lengths_opts lo = o->lengths;
		lo.seed += (uint64_t)index;
		return wzt_import_lengths(path, &lo, t, diag);
	}
	wzt_mooncake_stats st;
	wz_err err = wzt_import_mooncake(path, (int)o->block_tokens, policy, t, moved, &st, diag);
	if (!err && st.blocks > 0) {
		char hit[32], all[32];
		wz_format_thousands((double)st.hit_blocks, 0, hit, sizeof hit);
		wz_format_thousands((double)st.blocks, 0, all, sizeof all);
		printf("%s: infinite-cache prefix-block hit ratio %.1f%% (%s of %s blocks)\n", path,
		       100.0 * (double)st.hit_blocks / (double)st.blocks, hit, all);
	}
	return err;
}

static int run_import(const import_opts *o, char **files, int nfiles)
{
	const char *cmd = "traffic import";
	wz_diag diag;
	wzt_traffic *all = NULL;
	wz_err err = WZ_OK;
	if (!strcmp(o->from, "servegen")) {
		progress(files[0]);
		err = wzt_import_servegen((const char *const *)files, nfiles, &o->servegen, &all,
					  &diag);
	} else {
		for (int i = 0; i < nfiles && !err; i++) {
			wzt_traffic *t = NULL;
			size_t moved = 0;
			err = import_one(o, files[i], i, &t, &moved, &diag);
			if (!err && moved)
				wz_cli_warn(cmd, "%s: %zu records out of time order were sorted",
					    files[i], moved);
			if (!err && !all) {
				all = t;
				t = NULL;
			} else if (!err) {
				err = wzt_traffic_overlay(all, t, &diag);
			}
			wzt_traffic_free(t);
		}
		if (!err && nfiles > 1)
			wzt_traffic_sort(all);
	}
	if (!err)
		err = wzt_traffic_write(o->out, all, &diag);
	if (err) {
		wzt_traffic_free(all);
		return wz_cli_fail(cmd, &diag);
	}
	int64_t sessions = 0;
	for (size_t i = 0; i < all->n; i++)
		if (all->requests[i].session >= sessions)
			sessions = all->requests[i].session + 1;
	char nreq[32], nses[32];
	wz_format_thousands((double)all->n, 0, nreq, sizeof nreq);
	wz_format_thousands((double)sessions, 0, nses, sizeof nses);
	printf("%s: %s requests, %s sessions, %.3f s\n", o->out, nreq, nses,
	       all->n ? all->requests[all->n - 1].arrival_s : 0.0);
	wzt_traffic_free(all);
	return 0;
}

static int cmd_import(int argc, char **argv)
{
	const char *cmd = "traffic import";
	static const struct option longopts[] = {
		{ "from", required_argument, NULL, OPT_FROM },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "sort", no_argument, NULL, OPT_SORT },
		{ "block-tokens", required_argument, NULL, OPT_BLOCK },
		{ "model", required_argument, NULL, OPT_MODEL },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "cv", required_argument, NULL, OPT_CV },
		{ "prompt-column", required_argument, NULL, OPT_PCOL },
		{ "output-column", required_argument, NULL, OPT_OCOL },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "start", required_argument, NULL, OPT_START },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "clients", required_argument, NULL, OPT_CLIENTS },
		{ "rate-scale", required_argument, NULL, OPT_RATE_SCALE },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	import_opts o = { .block_tokens = 512,
			  .lengths = { .cv = 1, .seed = 1 },
			  .servegen = { .duration_s = 86400, .seed = 1 } };
	int have_rate = 0, c, rc = 0;
	long v;
	optind = 1;
	opterr = 0;
	while (!rc && (c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FROM:
			o.from = optarg;
			break;
		case OPT_OUT:
			o.out = optarg;
			break;
		case OPT_SORT:
			o.sort = 1;
			break;
		case OPT_BLOCK:
			rc = wz_cli_long(cmd, "--block-tokens", optarg, 1, 1 << 20, &o.block_tokens);
			break;
		case OPT_MODEL:
			o.model = optarg;
			break;
		case OPT_RATE:
			rc = wz_cli_double(cmd, "--rate", optarg, 1e-9, 1e9, &o.lengths.rate);
			have_rate = 1;
			break;
		case OPT_CV:
			rc = wz_cli_double(cmd, "--cv", optarg, 1e-3, 1e3, &o.lengths.cv);
			break;
		case OPT_PCOL:
			o.lengths.prompt_column = optarg;
			break;
		case OPT_OCOL:
			o.lengths.output_column = optarg;
			break;
		case OPT_LIMIT:
			rc = wz_cli_long(cmd, "--limit", optarg, 1, 1000000000L, &v);
			o.lengths.limit = v;
			break;
		case OPT_START:
			rc = wz_cli_double(cmd, "--start", optarg, 0, 1e9, &o.servegen.start_s);
			break;
		case OPT_DURATION:
			rc = wz_cli_double(cmd, "--duration", optarg, 1e-3, 1e9,
					   &o.servegen.duration_s);
			break;
		case OPT_CLIENTS:
			free(o.clients);
			rc = parse_clients(optarg, &o);
			break;
		case OPT_RATE_SCALE:
			rc = wz_cli_double(cmd, "--rate-scale", optarg, 1e-6, 1e6,
					   &o.servegen.rate_scale);
			break;
		case OPT_SEED:
			rc = wz_cli_long(cmd, "--seed", optarg, 0, 0x7fffffffL, &v);
			o.lengths.seed = o.servegen.seed = (uint64_t)v;
			break;
		case 'h':
			help();
			free(o.clients);
			return 0;
		case ':':
			rc = wz_cli_bad_option(cmd, ':', argv);
			break;
		default:
			rc = wz_cli_bad_option(cmd, '?', argv);
		}
	}
	static const char *const formats[] = { "azure", "mooncake", "lengths", "servegen",
					       "burstgpt" };
	int known = 0;
	for (int i = 0; o.from && i < 5; i++)
		known |= !strcmp(o.from, formats[i]);
	if (rc) {
		free(o.clients);
		return rc;
	}
	if (!o.from)
		rc = wz_cli_usage(cmd, "--from is required (azure, mooncake, lengths, servegen, "
				       "burstgpt)");
	else if (!known)
		rc = wz_cli_usage(cmd, "--from: unknown format '%s' (azure, mooncake, lengths, "
				       "servegen, burstgpt)",
				  o.from);
	else if (!o.out)
		rc = wz_cli_usage(cmd, "--out FILE is required");
	else if (optind >= argc)
		rc = wz_cli_usage(cmd, "no input file");
	else if (!strcmp(o.from, "lengths") && !have_rate)
		rc = wz_cli_usage(cmd, "--from lengths needs --rate (requests per second)");
	if (!rc)
		rc = run_import(&o, argv + optind, argc - optind);
	free(o.clients);
	return rc;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Mean, p50, p90, p99 and max of one token column, as a table row.
 * Percentiles are nearest-rank: the smallest value with at least p of the
 * requests at or below it, a value some request really had. */
static void token_row(wzp_table *tab, const char *name, const wzt_traffic *t, int which,
		      int64_t *buf)
{
	double sum = 0;
	for (size_t i = 0; i < t->n; i++) {
		const wzt_request *r = &t->requests[i];
		buf[i] = which == 0 ? r->prompt_tokens
			 : which == 1 ? r->output_tokens
			 : which == 2 ? r->prefix_tokens
				      : r->prompt_tokens + r->prefix_tokens;
		sum += (double)buf[i];
	}
	qsort(buf, t->n, sizeof *buf, cmp_i64);
	wzp_table_row(tab);
	wzp_table_str(tab, name);
	wzp_table_empty(tab);
	if (!t->n) {
		for (int k = 0; k < 5; k++)
			wzp_table_empty(tab);
		return;
	}
	wzp_table_numf(tab, sum / (double)t->n, 1);
	static const double ps[] = { 0.50, 0.90, 0.99 };
	for (int k = 0; k < 3; k++) {
		size_t rank = (size_t)ceil(ps[k] * (double)t->n);
		wzp_table_numf(tab, (double)buf[rank ? rank - 1 : 0], 0);
	}
	wzp_table_numf(tab, (double)buf[t->n - 1], 0);
}

static void count_row(wzp_table *tab, const char *name, double value, int decimals)
{
	wzp_table_row(tab);
	wzp_table_str(tab, name);
	wzp_table_numf(tab, value, decimals);
	for (int k = 0; k < 5; k++)
		wzp_table_empty(tab);
}

static int cmd_info(int argc, char **argv)
{
	const char *cmd = "traffic info";
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "sort", no_argument, NULL, OPT_SORT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	wzp_output how = WZP_TEXT;
	const char *output = NULL;
	int sort = 0, c;
	wz_diag diag;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (wzp_output_parse(optarg, &how, &diag))
				return wz_cli_usage(cmd, "%s", diag.msg);
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_SORT:
			sort = 1;
			break;
		case 'h':
			help();
			return 0;
		case ':':
			return wz_cli_bad_option(cmd, ':', argv);
		default:
			return wz_cli_bad_option(cmd, '?', argv);
		}
	}
	if (optind != argc - 1)
		return wz_cli_usage(cmd, "want exactly one request table");
	wzt_traffic *t;
	size_t moved = 0;
	if (wzt_traffic_read(argv[optind], sort ? WZT_UNSORTED_SORT : WZT_UNSORTED_REFUSE, &t,
			     &moved, &diag))
		return wz_cli_fail(cmd, &diag);
	if (moved)
		wz_cli_warn(cmd, "%s: %zu rows out of time order were sorted", argv[optind], moved);
	int64_t *buf = malloc(sizeof *buf * (t->n ? t->n : 1));
	wzp_table *tab = wzp_table_new("Traffic");
	if (!buf || !tab) {
		free(buf);
		wzp_table_free(tab);
		wzt_traffic_free(t);
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_cli_fail(cmd, &diag);
	}
	/* Sessions: distinct ids (they need not be dense in a hand-made file). */
	for (size_t i = 0; i < t->n; i++)
		buf[i] = t->requests[i].session;
	qsort(buf, t->n, sizeof *buf, cmp_i64);
	size_t sessions = 0;
	for (size_t i = 0; i < t->n; i++)
		sessions += i == 0 || buf[i] != buf[i - 1];
	double span = t->n ? t->requests[t->n - 1].arrival_s - t->requests[0].arrival_s : 0;

	wzp_table_column(tab, "measure", "Measure", 0);
	wzp_table_column(tab, "value", "Value", 1);
	wzp_table_column(tab, "mean", "Mean", 1);
	wzp_table_column(tab, "p50", "p50", 1);
	wzp_table_column(tab, "p90", "p90", 1);
	wzp_table_column(tab, "p99", "p99", 1);
	wzp_table_column(tab, "max", "Max", 1);
	count_row(tab, "requests", (double)t->n, 0);
	count_row(tab, "sessions", (double)sessions, 0);
	count_row(tab, "span_s", span, 1);
	count_row(tab, "rate_per_s", span > 0 ? (double)t->n / span : 0, 3);
	token_row(tab, "prompt_tokens", t, 0, buf);
	token_row(tab, "output_tokens", t, 1, buf);
	token_row(tab, "prefix_tokens", t, 2, buf);
	token_row(tab, "context_tokens", t, 3, buf);
	wzp_table_note(tab, "%s; context = prompt + prefix; percentiles nearest-rank.",
		       argv[optind]);
	wz_buf out = { 0 };
	int rc;
	if (wzp_table_render(tab, how, &out)) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail(cmd, &diag);
	} else {
		rc = wz_cli_emit(cmd, output, wz_buf_str(&out));
	}
	wz_buf_free(&out);
	wzp_table_free(tab);
	free(buf);
	wzt_traffic_free(t);
	return rc;
}

int wz_cmd_traffic(int argc, char **argv)
{
	if (argc < 2)
		return wz_cli_usage("traffic", "want an action: import or info");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		help();
		return 0;
	}
	if (!strcmp(argv[1], "import"))
		return cmd_import(argc - 1, argv + 1);
	if (!strcmp(argv[1], "info"))
		return cmd_info(argc - 1, argv + 1);
	return wz_cli_usage("traffic", "unknown action '%s' (import or info)", argv[1]);
}
