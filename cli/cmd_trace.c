/* `wzplan trace`: cache-trace files: synthetic ones (synth-cache) and a
 * summary of any (info). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "common/wz_io.h"
#include "traces/cache_trace.h"
#include "traces/synth_cache.h"

static void help(void)
{
	printf("Usage: wzplan trace <subcommand> [options]\n"
	       "\n"
	       "Cache traces: MLA caches per layer and token (and optionally queries) in a\n"
	       "safetensors file; format in docs/cache-trace.md.\n"
	       "\n"
	       "Subcommands:\n"
	       "  synth-cache   write synthetic calibration and test windows\n"
	       "  info FILE...  shapes, metadata and per-layer RMS of cache traces\n"
	       "\n"
	       "  wzplan trace <subcommand> --help   help for one subcommand\n");
}

static void help_synth(void)
{
	printf("Usage: wzplan trace synth-cache --out DIR [options]\n"
	       "\n"
	       "Writes synthetic MLA cache traces from a written statistical model\n"
	       "(docs/synthetic-cache.md): K calibration windows DIR/<family>-cal-<k>.safetensors\n"
	       "and M test windows DIR/<family>-test-<k>.safetensors.  Windows of one seed share\n"
	       "the model (bases, gains, per-layer scales) and differ in their tokens.  The same\n"
	       "options give the same bytes.  Results from these traces are synthetic and are\n"
	       "labelled so in the files' source metadata.\n"
	       "\n"
	       "Families (per layer; R = 512 latent and P = 64 position values per token):\n"
	       "  iid    all R + P values independent Gaussians of variance 1: no structure to\n"
	       "         exploit (no RoPE, no sink, same scale in every layer).\n"
	       "  mla-a  latent = s_l * g * RMSNorm(x): x = U z with U a random orthogonal basis\n"
	       "         of the layer, z_k independent Student-t (nu = 6, unit variance) times\n"
	       "         sqrt(lambda_k), lambda_k proportional to k^-0.7; per-channel gains\n"
	       "         g = exp(0.5 N(0,1)); layer scale s_l from 0.01 (first layer) to 1 (last),\n"
	       "         log-uniform, jittered by 10^(0.15 N(0,1)): two decades across layers.\n"
	       "         Position part: Gaussian with eigenvalues proportional to k^-0.7 on a\n"
	       "         random orthogonal basis, RMS 0.3 exp(0.5 N(0,1)) per layer, then rotated by\n"
	       "         RoPE (base 10000, consecutive pairs) at the token's absolute position.\n"
	       "         The token at position 0 is an attention sink: its latent is a fixed\n"
	       "         direction of the layer, its position part 4 times larger.\n"
	       "         Queries (per head): Gaussian on the latent's basis with variances\n"
	       "         lambda_k w_hk (w_hk = exp(0.5 N(0,1))), likewise on the position basis,\n"
	       "         scaled so the logits' two parts have standard deviation about 2 and 1,\n"
	       "         plus a component that adds 6 to the sink's logit; query q sits at token\n"
	       "         (q+1) T/Q - 1.  softmax_scale = DeepSeek-V3's 1.874/sqrt(192).\n"
	       "  mla-b  as mla-a with eigenvalues proportional to k^-1.0, nu = 4 and gains\n"
	       "         exp(0.8 N(0,1)): more structure and heavier tails.\n"
	       "  mla-p  as mla-a, but 95%% of the pre-RoPE position part's power is a random\n"
	       "         linear map of the latent's coefficients (the rest as mla-a's): a\n"
	       "         broad position spectrum the latent predicts, as measured on the\n"
	       "         project's own model.\n"
	       "  v4-c4, v4-c128  DeepSeek-V4's compressed entries, R = 448 and P = 64: each\n"
	       "         entry sums the mla-b draws of 8 tokens (v4-c4, one entry every 4\n"
	       "         tokens) or 128 (v4-c128, every 128) with softmax weights of\n"
	       "         Gaussian scores, scaled to unit power, then as mla-b (RMSNorm, gains,\n"
	       "         layer scale); entry i sits at position 4i or 128i, RoPE base 160000;\n"
	       "         no sink entry.  Lighter tails than mla-b: a sum of t draws.\n"
	       "\n"
	       "Options:\n"
	       "  --family F        iid, mla-a, mla-b, mla-p, v4-c4 or v4-c128 (default mla-a)\n"
	       "  --tokens T        tokens, or for v4-c4 and v4-c128 entries, per window\n"
	       "  --seed N          the model's seed (default 1)\n"
	       "  --layers L        layers (default 4)\n"
	       "                    (default 1024)\n"
	       "  --queries Q       queries per window, 0 for none (default 32)\n"
	       "  --heads H         heads per query (default 16)\n"
	       "  --calibration K   calibration windows (default 1)\n"
	       "  --test M          test windows (default 1)\n"
	       "  --out DIR         output folder, created if missing (required)\n"
	       "  --model NAME      model name in the metadata (default synthetic-<family>-seed<N>)\n"
	       "  --dtype D         bf16 (default), f16 or f32\n"
	       "  -q, --quiet       no progress on standard error\n"
	       "  -h, --help        this help\n"
	       "\n"
	       "Example:\n"
	       "  wzplan trace synth-cache --family mla-b --seed 7 --calibration 4 --test 2 --out traces\n");
}

static void help_info(void)
{
	printf("Usage: wzplan trace info [options] FILE...\n"
	       "\n"
	       "Reads cache traces (checking them fully) and prints, per file, the shapes, the\n"
	       "metadata and per layer the RMS and largest magnitude of the latent and of the\n"
	       "position part.  A file that fails the checks stops the command with exit\n"
	       "status 2 and a message naming file and tensor.\n"
	       "\n"
	       "Options:\n"
	       "  --format F        text (default), md, csv or json; csv and json give one\n"
	       "                    row per file and layer, with the metadata in columns\n"
	       "  -h, --help        this help\n");
}

typedef struct {
	const char *out_dir, *model;
	wzt_synth_params params;
	long n_cal, n_test;
	wzt_dtype dtype;
	int quiet;
} synth_opts;

/* Paths written so far, removed again if a later window fails, so a failed
 * run leaves nothing behind. */
static void remove_written(char **paths, int n)
{
	for (int i = 0; i < n; i++) {
		unlink(paths[i]);
		free(paths[i]);
	}
}

static int synth_write(const synth_opts *o)
{
	wz_diag diag;
	wz_diag_clear(&diag);
	if (wz_mkdir_out(o->out_dir, &diag))
		return wz_cli_fail("trace", &diag);
	int total = (int)(o->n_cal + o->n_test), nwritten = 0, rc = 0;
	char **written = calloc((size_t)total + 1, sizeof *written);
	if (!written) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_cli_fail("trace", &diag);
	}
	const char *family = wzt_family_name(o->params.family);
	for (int w = 0; w < total && !rc; w++) {
		int is_test = w >= o->n_cal;
		int k = is_test ? w - (int)o->n_cal : w;
		char name[96], file[128];
		snprintf(name, sizeof name, "%s-%s-%d", family, is_test ? "test" : "cal", k);
		snprintf(file, sizeof file, "%s.safetensors", name);
		wzt_synth_params p = o->params;
		/* Test windows' seeds live in another range from calibration's, so
		 * adding windows of one split never changes the other's. */
		p.window_seed = (is_test ? UINT64_C(1) << 32 : 0) + (uint64_t)k;
		p.split = is_test ? "test" : "calibration";
		p.window = name;
		p.model = o->model;
		char *path = wz_path_join(o->out_dir, file);
		wzt_cache_trace *t = NULL;
		if (!path) {
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			rc = wz_cli_fail("trace", &diag);
		} else if (wzt_synth_cache(&p, &t, &diag) ||
			   wzt_cache_trace_write(path, t, o->dtype, &diag)) {
			rc = wz_cli_fail("trace", &diag);
			free(path);
		} else {
			written[nwritten++] = path;
			if (!o->quiet)
				fprintf(stderr, "wzplan trace: [%d/%d] wrote %s (%s, %d layers x %d tokens%s)\n",
					w + 1, total, path, p.split, p.L, p.T, p.Q ? ", with queries" : "");
		}
		wzt_cache_trace_free(t);
	}
	if (rc)
		remove_written(written, nwritten);
	else
		for (int i = 0; i < nwritten; i++)
			free(written[i]);
	free(written);
	return rc;
}

static int cmd_synth(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "family", required_argument, NULL, 'F' },
		{ "seed", required_argument, NULL, 's' },
		{ "layers", required_argument, NULL, 'L' },
		{ "tokens", required_argument, NULL, 'T' },
		{ "queries", required_argument, NULL, 'Q' },
		{ "heads", required_argument, NULL, 'H' },
		{ "calibration", required_argument, NULL, 'c' },
		{ "test", required_argument, NULL, 't' },
		{ "out", required_argument, NULL, 'o' },
		{ "model", required_argument, NULL, 'm' },
		{ "dtype", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	synth_opts o = { .n_cal = 1, .n_test = 1, .dtype = WZT_DTYPE_BF16 };
	wzt_synth_params_default(&o.params);
	wz_diag diag;
	long v;
	int c, rc, heads_given = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (wzt_family_parse(optarg, &o.params.family, &diag))
				return wz_cli_usage("trace", "--family: %s", diag.msg);
			break;
		case 's':
			if ((rc = wz_cli_long("trace", "--seed", optarg, 0, 2147483647L, &v)))
				return rc;
			o.params.seed = (uint64_t)v;
			break;
		case 'L':
			if ((rc = wz_cli_long("trace", "--layers", optarg, 1, 1024, &v)))
				return rc;
			o.params.L = (int)v;
			break;
		case 'T':
			if ((rc = wz_cli_long("trace", "--tokens", optarg, 1, 1L << 24, &v)))
				return rc;
			o.params.T = (int)v;
			break;
		case 'Q':
			if ((rc = wz_cli_long("trace", "--queries", optarg, 0, 1L << 24, &v)))
				return rc;
			o.params.Q = (int)v;
			break;
		case 'H':
			if ((rc = wz_cli_long("trace", "--heads", optarg, 1, 1024, &v)))
				return rc;
			o.params.H = (int)v;
			heads_given = 1;
			break;
		case 'c':
			if ((rc = wz_cli_long("trace", "--calibration", optarg, 0, 10000, &o.n_cal)))
				return rc;
			break;
		case 't':
			if ((rc = wz_cli_long("trace", "--test", optarg, 0, 10000, &o.n_test)))
				return rc;
			break;
		case 'o': o.out_dir = optarg; break;
		case 'm': o.model = optarg; break;
		case 'd':
			if (wzt_dtype_parse(optarg, &o.dtype, &diag))
				return wz_cli_usage("trace", "--dtype: %s", diag.msg);
			break;
		case 'q': o.quiet = 1; break;
		case 'h': help_synth(); return 0;
		case ':': return wz_cli_bad_option("trace", ':', argv);
		default: return wz_cli_bad_option("trace", '?', argv);
		}
	}
	if (optind < argc)
		return wz_cli_usage("trace", "unexpected argument '%s'", argv[optind]);
	wzt_family_shape(o.params.family, &o.params.R, &o.params.P);
	if (!o.out_dir || !*o.out_dir)
		return wz_cli_usage("trace", "synth-cache needs --out DIR");
	if (o.n_cal + o.n_test == 0)
		return wz_cli_usage("trace", "--calibration and --test are both 0: nothing to write");
	if (o.params.Q == 0) {
		if (heads_given)
			return wz_cli_usage("trace", "--heads given with --queries 0");
		o.params.H = 0;
	}
	if (o.params.Q > o.params.T)
		return wz_cli_usage("trace", "--queries %d is more than --tokens %d", o.params.Q,
				    o.params.T);
	if ((double)o.params.L * o.params.T * (o.params.R + o.params.P) > 2147483648.0)
		return wz_cli_usage("trace", "%d layers x %d tokens is over 2^31 values per window",
				    o.params.L, o.params.T);
	return synth_write(&o);
}

/* A measured figure: 4 significant digits to read, full precision in CSV
 * and JSON. */
static void num_g(wzp_table *tab, double value)
{
	char text[32];
	snprintf(text, sizeof text, "%.4g", value);
	wzp_table_num(tab, value, text);
}

/* Per-layer RMS and largest magnitude of n-value rows [layer][count][n]. */
static void layer_stats(const float *v, size_t count, int n, double *rms, double *maxabs)
{
	double ss = 0, mx = 0;
	for (size_t i = 0; i < count * (size_t)n; i++) {
		ss += (double)v[i] * v[i];
		if (fabs(v[i]) > mx)
			mx = fabs(v[i]);
	}
	*rms = sqrt(ss / ((double)count * n));
	*maxabs = mx;
}

static void add_layer_cells(wzp_table *tab, const wzt_cache_trace *t, int l)
{
	double rms, mx;
	wzp_table_numf(tab, l, 0);
	layer_stats(&t->latent[(size_t)l * t->T * t->R], (size_t)t->T, t->R, &rms, &mx);
	num_g(tab, rms);
	num_g(tab, mx);
	layer_stats(&t->rope[(size_t)l * t->T * t->P], (size_t)t->T, t->P, &rms, &mx);
	num_g(tab, rms);
	num_g(tab, mx);
}

static void layer_columns(wzp_table *tab)
{
	wzp_table_column(tab, "layer", "layer", 1);
	wzp_table_column(tab, "latent_rms", "latent RMS", 1);
	wzp_table_column(tab, "latent_maxabs", "latent max |x|", 1);
	wzp_table_column(tab, "rope_rms", "rope RMS", 1);
	wzp_table_column(tab, "rope_maxabs", "rope max |x|", 1);
}

static void describe(wzp_table *tab, const wzt_cache_trace *t)
{
	wzp_table_note(tab, "%d layers x %d tokens, latent %d + position part %d values per token",
		       t->L, t->T, t->R, t->P);
	if (t->Q)
		wzp_table_note(tab, "queries: %d x %d heads, softmax_scale %.6g", t->Q, t->H,
			       t->softmax_scale);
	else
		wzp_table_note(tab, "queries: none");
	wzp_table_note(tab, "model: %s; split: %s; window: %s", t->model, t->split, t->window);
	wzp_table_note(tab, "source: %s", t->source);
	if (t->rope_theta > 0 && t->rope_yarn[0] > 0)
		wzp_table_note(tab, "RoPE: base %g, YaRN factor %g on %g positions (beta_fast %g, "
				    "beta_slow %g)",
			       t->rope_theta, t->rope_yarn[0], t->rope_yarn[1], t->rope_yarn[2],
			       t->rope_yarn[3]);
	else if (t->rope_theta > 0)
		wzp_table_note(tab, "RoPE: base %g", t->rope_theta);
}

static int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	wzp_output how = WZP_TEXT;
	wz_diag diag;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (wzp_output_parse(optarg, &how, &diag))
				return wz_cli_usage("trace", "%s", diag.msg);
			break;
		case 'h': help_info(); return 0;
		case ':': return wz_cli_bad_option("trace", ':', argv);
		default: return wz_cli_bad_option("trace", '?', argv);
		}
	}
	if (optind >= argc)
		return wz_cli_usage("trace", "info needs at least one FILE");
	int wide = how == WZP_CSV || how == WZP_JSON;
	wz_buf out = { 0 };
	wzp_table *all = wide ? wzp_table_new("cache traces") : NULL;
	if (all) {
		static const char *const keys[] = { "file", "model", "split", "window", "source",
						    "xxh3" };
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
			wzp_table_column(all, keys[i], keys[i], 0);
		static const char *const dims[] = { "layers", "tokens", "R", "P", "queries", "heads",
						    "softmax_scale" };
		for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
			wzp_table_column(all, dims[i], dims[i], 1);
		layer_columns(all);
	}
	int rc = 0;
	for (int f = optind; f < argc && !rc; f++) {
		wzt_cache_trace *t;
		wz_diag_clear(&diag);
		if (wzt_cache_trace_read(argv[f], &t, &diag)) {
			rc = wz_cli_fail("trace", &diag);
			break;
		}
		/* The format has no checksum of its own: the file's hash, the one
		 * the archive records, is how a changed byte is noticed. */
		char hex[17];
		uint64_t bytes;
		if (wz_hash_file(argv[f], hex, &bytes, &diag)) {
			wzt_cache_trace_free(t);
			rc = wz_cli_fail("trace", &diag);
			break;
		}
		if (wide) {
			for (int l = 0; l < t->L; l++) {
				wzp_table_row(all);
				const char *texts[] = { argv[f], t->model,  t->split,
							t->window, t->source, hex };
				for (size_t i = 0; i < 6; i++)
					wzp_table_str(all, texts[i]);
				double dims[] = { t->L, t->T, t->R, t->P, t->Q, t->H };
				for (size_t i = 0; i < 6; i++)
					wzp_table_numf(all, dims[i], 0);
				if (t->Q)
					num_g(all, t->softmax_scale);
				else
					wzp_table_empty(all);
				add_layer_cells(all, t, l);
			}
		} else {
			wzp_table *tab = wzp_table_new(argv[f]);
			if (tab) {
				layer_columns(tab);
				for (int l = 0; l < t->L; l++) {
					wzp_table_row(tab);
					add_layer_cells(tab, t, l);
				}
				describe(tab, t);
				wzp_table_note(tab, "file: %llu bytes, xxh3 %s", (unsigned long long)bytes,
					       hex);
				if (out.len)
					wz_buf_puts(&out, "\n");
			}
			if (!tab || wzp_table_render(tab, how, &out)) {
				wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
				rc = wz_cli_fail("trace", &diag);
			}
			wzp_table_free(tab);
		}
		wzt_cache_trace_free(t);
	}
	if (!rc && wide && (!all || wzp_table_render(all, how, &out))) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail("trace", &diag);
	}
	if (!rc)
		rc = wz_cli_emit("trace", NULL, wz_buf_str(&out));
	wzp_table_free(all);
	wz_buf_free(&out);
	return rc;
}

int wz_cmd_trace(int argc, char **argv)
{
	if (argc < 2)
		return wz_cli_usage("trace", "which subcommand? synth-cache or info");
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		help();
		return 0;
	}
	if (!strcmp(sub, "synth-cache"))
		return cmd_synth(argc - 1, argv + 1);
	if (!strcmp(sub, "info"))
		return cmd_info(argc - 1, argv + 1);
	return wz_cli_usage("trace", "no subcommand '%s' (synth-cache, info)", sub);
}
