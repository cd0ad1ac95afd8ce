/* `wzplan codec`: the cache-format registry, wz profile preparation from
 * calibration traces, and quality measurement of formats on trace windows. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/codec_cli.h"
#include "cli/commands.h"
#include "codec/formats/format.h"
#include "codec/profile/profile.h"


static void help(void)
{
	printf("Usage: wzplan codec <subcommand> [options]\n"
	       "\n"
	       "Cache formats: the registry, the wz profile (prepared once per model from\n"
	       "calibration windows) and quality measurements on cache traces.\n"
	       "\n"
	       "Subcommands:\n"
	       "  formats    the registry: name, id, tier, bits/value at R = 512, P = 64\n"
	       "  prepare    write a wz profile from calibration traces\n"
	       "  measure    encode trace windows in formats and measure the error\n"
	       "  compare    formats against reference formats, paired per window\n"
	       "  pack       write a trace as a wzx offload container\n"
	       "  unpack     read a wzx container back (wz records, transformed, bf16)\n"
	       "\n"
	       "  wzplan codec <subcommand> --help   help for one subcommand\n");
}

static void help_formats(void)
{
	printf("Usage: wzplan codec formats [--format text|csv|json|md]\n"
	       "\n"
	       "Lists every cache format of the registry with its stable id, tier and the\n"
	       "bits per value of its record for DeepSeek's shape (512 latent + 64 position\n"
	       "values).  wz and wzx take a rate: wz-5.44 is 5.44 bits/value at most.\n");
}

static void help_prepare(void)
{
	printf("Usage: wzplan codec prepare --trace FILE... --out PROFILE [options]\n"
	       "\n"
	       "Prepares the wz profile of a model from calibration windows: per layer an\n"
	       "orthogonal transform (the latent's covariance eigenbasis; the position part\n"
	       "per rotated pair), component variances, the distribution the level tables\n"
	       "are fitted to, and query weights when the traces hold queries.  A trace\n"
	       "whose split is 'test' is refused (exit 2) and nothing is written.\n"
	       "\n"
	       "Options:\n"
	       "  --trace FILE        a calibration trace (repeat, or several after one)\n"
	       "  --out PROFILE       the profile file to write (atomically)\n"
	       "  --rate LIST         also check that these wz rates plan (e.g. 4.97,5.44,6.31)\n"
	       "  --query-weight X    share of the distortion weight following the queries,\n"
	       "                      0..1 (default 1; 0: plain squared error alone)\n"
	       "  --position-cap MODE int8: plan each layer's position-part error within the\n"
	       "                      int8 position part's error on the calibration tokens\n"
	       "                      (fp8-mix's, int4-g64's); off (default): no cap\n"
	       "  --rope-theta BASE   the model's RoPE base (DeepSeek: 10000): code the position\n"
	       "                      part after undoing RoPE at each token's position, with\n"
	       "                      a transform of its own like the latent's (a version 6\n"
	       "                      profile; docs/wz-format.md, \"RoPE undone\").  The\n"
	       "                      traces' position parts must be in DeepSeek's interleaved\n"
	       "                      pairs (2i, 2i+1); each layer's gain is printed.\n"
	       "                      --rope-theta trace: the base and YaRN the traces'\n"
	       "                      metadata give (rope_theta, rope_yarn; wzcapture.py\n"
	       "                      and synth-cache write them)\n"
	       "  --predict MODE      with --rope-theta: code the position part of each token\n"
	       "                      as its residual from a linear prediction from the\n"
	       "                      decoded latent (a version 7 profile; docs/wz-format.md,\n"
	       "                      \"Predicted position part\"): auto, in the layers where\n"
	       "                      the residual is cheaper to code on the calibration\n"
	       "                      tokens; all, in every layer that undoes RoPE; off\n"
	       "                      (default).  Each predicting layer's gain is printed\n"
	       "  --rope-layers LIST  the layers that undo RoPE (e.g. 1-60, or 0,2,5-9, or all).\n"
	       "                      Default: every layer but the first, whose keys are a\n"
	       "                      function of the token alone (its input is the token's\n"
	       "                      embedding), so that its rotated-back position part is\n"
	       "                      one vector per vocabulary entry, which calibration text\n"
	       "                      covers only in part; the others keep the part as cached\n"
	       "  --rope-yarn F,N[,BF,BS]\n"
	       "                      the model's YaRN scaling: factor F on N original\n"
	       "                      positions, beta_fast BF and beta_slow BS (default 32,1);\n"
	       "                      DeepSeek-V3: 40,4096.  Needs --rope-theta\n"
	       "  --threads N         layers fitted on N threads (default: one per core); the\n"
	       "                      profile is the same for any N\n"
	       "  -h, --help          this help\n");
}

/* --rope-yarn F,N[,BF,BS] into yarn[4]. */
static int parse_yarn(const char *text, double yarn[4])
{
	char **items;
	int n = wz_split_list(text, &items), rc = 0;
	static const char *what[4] = { "factor", "original positions", "beta_fast", "beta_slow" };
	static const double lo[4] = { 1, 1, 1e-6, 1e-6 }, hi[4] = { 1e6, 1e9, 1e6, 1e6 };
	if (n != 2 && n != 4)
		rc = wz_cli_usage(CMD, "--rope-yarn: '%s': give FACTOR,ORIGINAL[,BETA_FAST,BETA_SLOW]",
				  text);
	for (int i = 0; !rc && i < n; i++) {
		char opt[64];
		snprintf(opt, sizeof opt, "--rope-yarn (%s)", what[i]);
		rc = wz_cli_double(CMD, opt, items[i], lo[i], hi[i], &yarn[i]);
	}
	if (!rc && n == 4 && !(yarn[2] > yarn[3]))
		rc = wz_cli_usage(CMD, "--rope-yarn: beta_fast %g must be above beta_slow %g", yarn[2],
				  yarn[3]);
	wz_strlist_free(items, n);
	return rc;
}

/* --rope-layers LIST (numbers and ranges A-B, comma-separated, or all)
 * into a mask of L layers; NULL (no --rope-layers) gives every layer but
 * the first. */
static int parse_layers(const char *text, int L, unsigned char **out)
{
	unsigned char *m = calloc((size_t)L, 1);
	char **items;
	if (!text || !strcmp(text, "all")) { /* NULL: the default, every layer but the first */
		if (!m)
			return wz_cli_usage(CMD, "out of memory");
		for (int l = text ? 0 : 1; l < L; l++)
			m[l] = 1;
		*out = m;
		return 0;
	}
	int n = wz_split_list(text, &items), rc = 0;
	if (!m) {
		wz_strlist_free(items, n);
		return wz_cli_usage(CMD, "out of memory");
	}
	if (n == 0)
		rc = wz_cli_usage(CMD, "--rope-layers: '%s' names no layer", text);
	for (int i = 0; !rc && i < n; i++) {
		char *dash = strchr(items[i], '-'), *end;
		long a = strtol(items[i], &end, 10), b = a;
		int ok = end != items[i] && (dash ? end == dash : *end == 0);
		if (ok && dash) {
			b = strtol(dash + 1, &end, 10);
			ok = end != dash + 1 && *end == 0;
		}
		if (!ok || a < 0 || b < a || b >= L)
			rc = wz_cli_usage(CMD, "--rope-layers: '%s' is not a layer or range A-B within 0..%d",
					  items[i], L - 1);
		for (long l = a; !rc && l <= b; l++)
			m[l] = 1;
	}
	wz_strlist_free(items, n);
	if (rc)
		free(m);
	else
		*out = m;
	return rc;
}

/* --rope-theta trace (*theta < 0): the base and YaRN of the traces'
 * metadata, the same in each; without --rope-theta, a note where the
 * traces say how their model rotated the position part. */
static int rope_of_traces(wzt_cache_trace *const *t, const char *const *paths, int n,
			  double *theta, double yarn[4])
{
	for (int i = 1; i < n; i++)
		if (t[i]->rope_theta != t[0]->rope_theta ||
		    memcmp(t[i]->rope_yarn, t[0]->rope_yarn, sizeof t[0]->rope_yarn))
			if (*theta < 0)
				return wz_cli_usage(CMD, "%s: its rope_theta or rope_yarn differs from %s's",
						    paths[i], paths[0]);
	if (*theta < 0) {
		if (!(t[0]->rope_theta > 0))
			return wz_cli_usage(CMD, "--rope-theta trace: %s's metadata has no rope_theta; "
						 "give the model's RoPE base (--rope-theta BASE)",
					    paths[0]);
		*theta = t[0]->rope_theta;
		if (t[0]->rope_yarn[0] > 0)
			memcpy(yarn, t[0]->rope_yarn, sizeof t[0]->rope_yarn);
		return 0;
	}
	if (!*theta && t[0]->rope_theta > 0)
		fprintf(stderr,
			"wzplan codec: note: %s says its model's RoPE (base %g%s); --rope-theta trace "
			"codes the position part after undoing it\n",
			paths[0], t[0]->rope_theta, t[0]->rope_yarn[0] > 0 ? ", with YaRN" : "");
	return 0;
}

/* Each layer's gain from undoing RoPE, on stderr: the range and the
 * median over the layers that undo it, and a warning where the median
 * loses. */
/* Each layer's prediction: its gain, or that it does not predict. */
static void report_pred_gain(const wzc_profile *prof)
{
	int n = 0;
	for (int l = 0; l < prof->L; l++)
		n += wzc_profile_predicts(prof, l);
	fprintf(stderr, "wzplan codec: the position part predicted from the latent in %d of %d layers\n",
		n, prof->L);
	for (int l = 0; l < prof->L && l < 64; l++)
		if (wzc_profile_predicts(prof, l))
			fprintf(stderr, "wzplan codec: layer %d: prediction gain %.2f dB\n", l,
				wzc_profile_pred_gain_db(prof, l));
}

static void report_rope_gain(const wzc_profile *prof)
{
	double *g = malloc(sizeof *g * (size_t)prof->L);
	int *at = malloc(sizeof *at * (size_t)prof->L), n = 0;
	if (!g || !at) {
		free(g);
		free(at);
		return;
	}
	for (int l = 0; l < prof->L; l++)
		if (wzc_profile_undoes_rope(prof, l)) {
			g[n] = wzc_profile_rope_gain_db(prof, l);
			at[n++] = l;
		}
	for (int i = 1; i < n; i++) /* insertion sort: L <= 4096, once */
		for (int j = i; j > 0 && g[j] < g[j - 1]; j--) {
			double t = g[j];
			int a = at[j];
			g[j] = g[j - 1];
			at[j] = at[j - 1];
			g[j - 1] = t;
			at[j - 1] = a;
		}
	if (n > 0) {
		double med = n % 2 ? g[n / 2] : 0.5 * (g[n / 2 - 1] + g[n / 2]);
		fprintf(stderr,
			"wzplan codec: RoPE undone in %d of %d layers: the position part's gain on the "
			"calibration tokens %.2f dB (layer %d) to %.2f dB (layer %d), median %.2f dB\n",
			n, prof->L, g[0], at[0], g[n - 1], at[n - 1], med);
		if (med < 0)
			fprintf(stderr, "wzplan codec: warning: undoing RoPE loses on these caches: are "
					"--rope-theta and --rope-yarn the model's, and the pairs "
					"interleaved?\n");
	}
	free(g);
	free(at);
}

static const char *tier_name(wzc_tier tier)
{
	return tier == WZC_TIER_GPU ? "gpu" : "offload";
}


/* The "-keep<F>-<L>" row under a TensorRT-LLM cold-page record: its bytes
 * are a window's (docs/baselines-fp4.md). */
static void kept_row(wzp_table *t, const wzc_format_info *info, size_t bytes)
{
	char name[48], disp[48];
	snprintf(name, sizeof name, "%s-keep<F>-<L>", info->name);
	wzp_table_row(t);
	wzp_table_str(t, name);
	wzp_table_numf(t, info->id, 0);
	wzp_table_str(t, tier_name(info->tier));
	wzp_table_str(t, "per window");
	snprintf(disp, sizeof disp, "%zu; 1,152 kept", bytes);
	wzp_table_str(t, disp);
	wzp_table_str(t, "the record above, with tokens at positions below F and a window's last L "
			 "kept in bf16");
	wzp_table_str(t, "NVIDIA/TensorRT-LLM tensorrt_llm/_torch/kv_cache_compression/"
			 "quantization_for_cold_page/quantization_for_cold_page.py "
			 "(selective_compression: keep_first_tokens, keep_last_tokens)");
}

static int cmd_formats(int argc, char **argv)
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
				return wz_cli_usage(CMD, "%s", diag.msg);
			break;
		case 'h':
			help_formats();
			return 0;
		case ':':
			return wz_cli_bad_option(CMD, ':', argv);
		default:
			return wz_cli_bad_option(CMD, '?', argv);
		}
	}
	if (optind < argc)
		return wz_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
	wzp_table *t = wzp_table_new("Cache formats (bits/value for 512 latent + 64 position values)");
	wzp_table_column(t, "name", "Format", 0);
	wzp_table_column(t, "id", "Id", 1);
	wzp_table_column(t, "tier", "Tier", 0);
	wzp_table_column(t, "bits_per_value", "Bits/value", 1);
	wzp_table_column(t, "record_bytes", "Bytes/token/layer", 1);
	wzp_table_column(t, "description", "Layout", 0);
	wzp_table_column(t, "source", "Defined by", 0);
	for (int i = 0; i < wzc_format_count(); i++) {
		const wzc_format_info *info = wzc_format_info_at(i);
		wzc_format f = { .id = info->id };
		char name[40];
		snprintf(name, sizeof name, "%s%s", info->name, info->parametric ? "-<bits>" : "");
		wzp_table_row(t);
		wzp_table_str(t, name);
		wzp_table_numf(t, info->id, 0);
		wzp_table_str(t, tier_name(info->tier));
		if (info->parametric) {
			wzp_table_str(t, "<bits>");
			wzp_table_str(t, "floor(<bits>*576/8)");
		} else {
			/* a format of one geometry (FlashMLA's V4 entry: 448 + 64)
			 * is shown at its own, said so */
			int R = 512;
			if (!wzc_record_bytes(&f, 512, 64) && wzc_record_bytes(&f, 448, 64))
				R = 448;
			const char *at = R == 512 ? "" : " at 448+64";
			char disp[48], bytes[48];
			double bpv = wzc_bits_per_value(&f, R, 64);
			size_t rb = wzc_record_bytes(&f, R, 64);
			snprintf(disp, sizeof disp, "%.2f%s", bpv, at);
			snprintf(bytes, sizeof bytes, "%zu%s", rb, at);
			wzp_table_num(t, bpv, disp);
			if (R == 512)
				wzp_table_numf(t, (double)rb, 0);
			else
				wzp_table_num(t, (double)rb, bytes);
		}
		wzp_table_str(t, info->description);
		wzp_table_str(t, info->source ? info->source : "this project (DESIGN.md)");
		if (wzc_format_can_keep(info->id))
			kept_row(t, info, wzc_record_bytes(&f, 512, 64));
	}
	wz_buf out = { 0 };
	int rc;
	if (!t || wzp_table_render(t, how, &out)) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail(CMD, &diag);
	} else {
		rc = wz_cli_emit(CMD, NULL, wz_buf_str(&out));
	}
	wz_buf_free(&out);
	wzp_table_free(t);
	return rc;
}

/* Prepare's progress: a line a second at most, and the last layer's. */
static void prepare_progress(void *ud, int done, int layers)
{
	double *last = ud;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double now = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
	if (done < layers && now - *last < 1.0)
		return;
	*last = now;
	fprintf(stderr, "wzplan codec: fitted %d of %d layers\n", done, layers);
}

static int cmd_prepare(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "trace", required_argument, NULL, 't' },
		{ "out", required_argument, NULL, 'o' },
		{ "rate", required_argument, NULL, 'r' },
		{ "query-weight", required_argument, NULL, 'q' },
		{ "position-cap", required_argument, NULL, 'p' },
		{ "rope-theta", required_argument, NULL, 'T' },
		{ "rope-yarn", required_argument, NULL, 'Y' },
		{ "rope-layers", required_argument, NULL, 'Z' },
		{ "predict", required_argument, NULL, 'P' },
		{ "threads", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *paths[MAX_TRACES], *out = NULL, *rates = NULL, *rope_layers = NULL;
	long threads = 0;
	int npaths = 0, c, rc, yarn_given = 0;
	double theta = 0, yarn[4] = { 1, 1, 32, 1 };
	wzc_prepare_opts opts;
	wzc_prepare_opts_default(&opts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:o:r:q:p:T:Y:Z:P:j:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			if ((rc = wz_codec_add_traces(argc, argv, paths, &npaths)))
				return rc;
			break;
		case 'o':
			out = optarg;
			break;
		case 'r':
			rates = optarg;
			break;
		case 'q':
			if ((rc = wz_cli_double(CMD, "--query-weight", optarg, 0, 1, &opts.query_weight)))
				return rc;
			break;
		case 'p':
			if (strcmp(optarg, "int8") == 0)
				opts.position_cap = 1;
			else if (strcmp(optarg, "off") == 0)
				opts.position_cap = 0;
			else
				return wz_cli_usage(CMD, "--position-cap: '%s' is not int8 or off",
						    optarg);
			break;
		case 'T':
			if (!strcmp(optarg, "trace"))
				theta = -1; /* from the traces' metadata, once they are read */
			else if ((rc = wz_cli_double(CMD, "--rope-theta", optarg, 1.0000001, 1e12,
						     &theta)))
				return rc;
			break;
		case 'Y':
			if ((rc = parse_yarn(optarg, yarn)))
				return rc;
			yarn_given = 1;
			break;
		case 'Z':
			rope_layers = optarg;
			break;
		case 'P':
			if (!strcmp(optarg, "off"))
				opts.predict = 0;
			else if (!strcmp(optarg, "auto"))
				opts.predict = 1;
			else if (!strcmp(optarg, "all"))
				opts.predict = 2;
			else
				return wz_cli_usage(CMD, "--predict: '%s' is not auto, all or off", optarg);
			break;
		case 'j':
			if ((rc = wz_cli_long(CMD, "--threads", optarg, 1, 1024, &threads)))
				return rc;
			opts.threads = (int)threads;
			break;
		case 'h':
			help_prepare();
			return 0;
		case ':':
			return wz_cli_bad_option(CMD, ':', argv);
		default:
			return wz_cli_bad_option(CMD, '?', argv);
		}
	}
	if (optind < argc)
		return wz_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
	if (!npaths || !out)
		return wz_cli_usage(CMD, "prepare needs --trace and --out");
	if (yarn_given && !theta)
		return wz_cli_usage(CMD, "--rope-yarn needs --rope-theta (the RoPE base)");
	if (rope_layers && !theta)
		return wz_cli_usage(CMD, "--rope-layers needs --rope-theta (the RoPE base)");
	if (opts.predict && !theta)
		return wz_cli_usage(CMD, "--predict needs --rope-theta: the prediction is of the "
					 "position part with RoPE undone");
	if (yarn_given && theta < 0)
		return wz_cli_usage(CMD, "--rope-yarn with --rope-theta trace: the traces' metadata "
					 "gives both; drop one");
	wzc_format fmts[MAX_FORMATS];
	int nrates = 0;
	wz_diag diag;
	if (rates) {
		char **items;
		int n = wz_split_list(rates, &items);
		for (int i = 0; i < n && nrates < MAX_FORMATS; i++) {
			char name[48];
			snprintf(name, sizeof name, "wz-%s", items[i]);
			if (wzc_format_parse(name, &fmts[nrates++], &diag)) {
				wz_strlist_free(items, n);
				return wz_cli_usage(CMD, "--rate: %s", diag.msg);
			}
		}
		wz_strlist_free(items, n);
	}
	wzt_cache_trace *traces[MAX_TRACES];
	if ((rc = wz_codec_load_traces(paths, npaths, traces)))
		return rc;
	for (int i = 0; i < npaths; i++)
		if (traces[i]->T < 2) {
			/* one token has no spread: the fitted scales are NaN, and the
			 * profile written from them cannot be read */
			wz_diag bad;
			wz_diag_set(&bad, WZ_ERR_INPUT,
				    "%s: tensor 'latent': shape: a calibration window of %d token; a "
				    "profile needs at least 2 in each",
				    paths[i], traces[i]->T);
			for (int k = 0; k < npaths; k++)
				wzt_cache_trace_free(traces[k]);
			return wz_cli_fail(CMD, &bad);
		}
	wzc_window ws[MAX_TRACES];
	const wzc_window *wp[MAX_TRACES];
	for (int i = 0; i < npaths; i++) {
		ws[i] = wz_codec_window(traces[i], paths[i]);
		wp[i] = &ws[i];
	}
	if ((rc = rope_of_traces(traces, paths, npaths, &theta, yarn))) {
		for (int i = 0; i < npaths; i++)
			wzt_cache_trace_free(traces[i]);
		return rc;
	}
	fprintf(stderr, "wzplan codec: preparing from %d window%s\n", npaths, npaths == 1 ? "" : "s");
	double *freq = NULL;
	unsigned char *layers = NULL;
	if (theta && (rc = parse_layers(rope_layers, traces[0]->L, &layers))) {
		for (int i = 0; i < npaths; i++)
			wzt_cache_trace_free(traces[i]);
		return rc;
	}
	opts.rope_layers = layers;
	if (theta > 0) {
		int pairs = traces[0]->P / 2;
		freq = malloc(sizeof *freq * (size_t)(pairs ? pairs : 1));
		if (!freq) {
			for (int i = 0; i < npaths; i++)
				wzt_cache_trace_free(traces[i]);
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			return wz_cli_fail(CMD, &diag);
		}
		wzc_rope_freqs(traces[0]->P, theta, yarn[0], yarn[1], yarn[2], yarn[3], freq);
		opts.rope_freq = freq;
		opts.rope_pairs = pairs;
	}
	wzc_profile *prof = NULL;
	double last_progress = 0;
	opts.progress = prepare_progress;
	opts.progress_ud = &last_progress;
	wz_err e = wzc_prepare(wp, npaths, &opts, &prof, &diag);
	free(freq);
	free(layers);
	if (!e && theta > 0)
		report_rope_gain(prof);
	if (!e && opts.predict)
		report_pred_gain(prof);
	for (int i = 0; !e && i < nrates; i++) {
		wzc_codec *codec;
		e = wzc_codec_new(&fmts[i], prof->L, prof->R, prof->P, prof, &codec, &diag);
		if (!e)
			fprintf(stderr, "wzplan codec: %s plans: %zu bytes per token and layer\n",
				fmts[i].name, wzc_codec_record_bytes(codec));
		wzc_codec_free(codec);
	}
	if (!e)
		e = wzc_profile_write(out, prof, &diag);
	wzc_profile_free(prof);
	for (int i = 0; i < npaths; i++)
		wzt_cache_trace_free(traces[i]);
	if (e)
		return wz_cli_fail(CMD, &diag);
	fprintf(stderr, "wzplan codec: wrote %s\n", out);
	return 0;
}

int wz_cmd_codec(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		help();
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "formats"))
		return cmd_formats(argc - 1, argv + 1);
	if (!strcmp(argv[1], "prepare"))
		return cmd_prepare(argc - 1, argv + 1);
	if (!strcmp(argv[1], "pack"))
		return wz_codec_pack(argc - 1, argv + 1);
	if (!strcmp(argv[1], "unpack"))
		return wz_codec_unpack(argc - 1, argv + 1);
	if (!strcmp(argv[1], "compare"))
		return wz_codec_compare(argc - 1, argv + 1);
	if (!strcmp(argv[1], "measure"))
		return wz_codec_measure(argc - 1, argv + 1);
	return wz_cli_usage(CMD, "unknown subcommand '%s'", argv[1]);
}
