/* Tests of the trace importers: the public samples (facts from their
 * README) and small messy fixtures of each format. */
#include "tests/tap.h"
#include "common/wz_str.h"
#include "tests/traffic/fixture.h"
#include "traces/traffic.h"
#include "traces/traffic_import.h"

static wz_diag d;

static double mean_prompt(const wzt_traffic *t)
{
	double s = 0;
	for (size_t i = 0; i < t->n; i++)
		s += (double)(t->requests[i].prompt_tokens + t->requests[i].prefix_tokens);
	return t->n ? s / (double)t->n : 0;
}

static long count_sessions(const wzt_traffic *t)
{
	int64_t max = -1;
	for (size_t i = 0; i < t->n; i++)
		if (t->requests[i].session > max)
			max = t->requests[i].session;
	return (long)(max + 1);
}

static int sorted(const wzt_traffic *t)
{
	for (size_t i = 1; i < t->n; i++)
		if (t->requests[i].arrival_s < t->requests[i - 1].arrival_s)
			return 0;
	return 1;
}

static void skip(int n, const char *why)
{
	for (int i = 0; i < n; i++)
		printf("ok %d # SKIP %s\n", ++tap_count, why);
}

static void test_azure(void)
{
	char buf[1024];
	const char *p = fx_sample("AzureLLMInferenceTrace_code.csv", buf, sizeof buf);
	wzt_traffic *t = NULL;
	if (!p) {
		skip(5, "shared Azure sample absent");
	} else {
		wz_err e = wzt_import_azure(p, WZT_UNSORTED_REFUSE, &t, NULL, &d);
		if (!ok(e == WZ_OK && t, "Azure code sample imports"))
			printf("#   %s\n", d.msg);
		is_long(t ? t->n : 0, 8819, "8,819 requests");
		is_double(t && t->n ? t->requests[t->n - 1].arrival_s : 0, 3435.95, 0.01,
			  "span 3,436 s (18:17:03.98 .. 19:14:19.93)");
		is_double(t ? mean_prompt(t) : 0, 2048, 1.0, "input mean 2048");
		ok(t && t->requests[t->n - 1].session == (int64_t)t->n - 1,
		   "each request its own session");
		wzt_traffic_free(t);
	}
	/* The 2024 layout's variations: BOM, CRLF, quoted and reordered
	 * columns, a time zone, fewer fractional digits, extra columns. */
	p = fx_write("az.csv", "\xEF\xBB\xBF"
			       "\"Timestamp\",generatedtokens,ContextTokens,extra\r\n"
			       "\"2024-05-10 00:00:00.0029060+00:00\",5,\"100\",x\r\n"
			       "\r\n"
			       "2024-05-10T00:00:01.5Z,6,200,y\r\n"
			       "2024-05-10 00:00:02+00:00,7,300,z\r\n");
	wz_err e = wzt_import_azure(p, WZT_UNSORTED_REFUSE, &t, NULL, &d);
	if (!ok(e == WZ_OK && t && t->n == 3, "Azure 2024 layout, BOM, CRLF, quotes"))
		printf("#   %s\n", d.msg);
	if (t && t->n == 3) {
		is_double(t->requests[1].arrival_s, 1.497094, 1e-9, "100-ns timestamps, exactly");
		is_long(t->requests[2].prompt_tokens, 300, "columns by name");
		is_long(t->requests[2].output_tokens, 7, "case-insensitive names");
	}
	wzt_traffic_free(t);
	p = fx_write("az-bad.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
				   "2023-11-16 18:17:03.9799600,4808,10\n"
				   "2023-11-16 18:17:0x,4808,10\n");
	e = wzt_import_azure(p, WZT_UNSORTED_REFUSE, &t, NULL, &d);
	ok(e == WZ_ERR_INPUT && !t, "a bad timestamp is refused");
	has_str(d.msg, "az-bad.csv:3: field TIMESTAMP", "  naming file:line and field");
	/* 4046 is past what int64 nanoseconds reach: it used to wrap
	 * around to a time before the first row's */
	p = fx_write("az-year.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
				    "2023-11-16 18:15:46.8696342,374,44\n"
				    "4046-11-16 18:15:50.9951690,396,109\n");
	e = wzt_import_azure(p, WZT_UNSORTED_SORT, &t, NULL, &d);
	ok(e == WZ_ERR_INPUT && !t, "a year past 2099 is refused");
	has_str(d.msg, "az-year.csv:3: field TIMESTAMP: '4046-11-16 18:15:50.9951690': the year",
		"  naming file:line, field and value");
	p = fx_write("az-bad2.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
				    "2023-11-16 18:17:03.9799600,4808,-1\n");
	e = wzt_import_azure(p, WZT_UNSORTED_REFUSE, &t, NULL, &d);
	has_str(d.msg, "az-bad2.csv:2: field GeneratedTokens: negative", "negative tokens refused");
	p = fx_write("az-order.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
				     "2023-11-16 18:17:05,1,1\n"
				     "2023-11-16 18:17:04,2,1\n");
	e = wzt_import_azure(p, WZT_UNSORTED_REFUSE, &t, NULL, &d);
	has_str(d.msg, "az-order.csv:3: field TIMESTAMP", "out-of-order time refused");
	size_t moved = 0;
	e = wzt_import_azure(p, WZT_UNSORTED_SORT, &t, &moved, &d);
	ok(e == WZ_OK && t && moved == 1 && t->requests[0].prompt_tokens == 2 &&
		   t->requests[0].arrival_s == 0 && t->requests[1].arrival_s == 1,
	   "or sorted, with a count");
	wzt_traffic_free(t);
	p = fx_write("az-hdr.csv", "time,ContextTokens\n1,2\n");
	e = wzt_import_azure(p, WZT_UNSORTED_REFUSE, &t, NULL, &d);
	has_str(d.msg, "az-hdr.csv:1: header", "a foreign header is refused");
}

static void test_mooncake(void)
{
	char buf[1024];
	const char *p = fx_sample("synthetic_trace.jsonl", buf, sizeof buf);
	wzt_traffic *t = NULL;
	wzt_mooncake_stats st = { 0 };
	if (!p) {
		skip(6, "shared Mooncake sample absent");
	} else {
		wz_err e = wzt_import_mooncake(p, 512, WZT_UNSORTED_REFUSE, &t, NULL, &st, &d);
		if (!ok(e == WZ_OK && t, "Mooncake sample imports"))
			printf("#   %s\n", d.msg);
		is_long(t ? t->n : 0, 3993, "3,993 requests");
		double ratio = st.blocks ? (double)st.hit_blocks / (double)st.blocks : 0;
		printf("# prefix-block hit ratio %.4f (%lld of %lld blocks)\n", ratio,
		       (long long)st.hit_blocks, (long long)st.blocks);
		is_double(round(ratio * 1000) / 10, 64.0, 1e-9,
			  "infinite-cache prefix-block hit ratio 64.0%");
		is_double(t && t->n ? t->requests[t->n - 1].arrival_s : 0, 1022.025, 1e-9,
			  "span 1,022,025 ms");
		is_double(t ? mean_prompt(t) : 0, 15325, 1.0, "input mean 15,325");
		/* Our session chaining on the sample: 1,256 continuations.  Chains
		 * that matched only up to a block two different full blocks follow
		 * (the same document with another question) are shared prefixes
		 * now, not turns: 2,517 sessions before that rule. */
		is_long(t ? count_sessions(t) : 0, 2737, "2,737 sessions");
		wzt_traffic_free(t);
	}
	/* Sessions and prefixes: request 2 extends request 0's chain, request
	 * 3 shares only its first block, the last block of 1 is partial. */
	p = fx_write("mc.jsonl", "\xEF\xBB\xBF{\"timestamp\": 0, \"input_length\": 1024, "
				 "\"output_length\": 3, \"hash_ids\": [1, 2]}\r\n"
				 "\r\n"
				 "{\"timestamp\": 10, \"input_length\": 300, \"output_length\": 2, "
				 "\"hash_ids\": [7], \"extra\": \"ignored\"}\r\n"
				 "{\"timestamp\": 20.5, \"input_length\": 2000, \"output_length\": 4, "
				 "\"hash_ids\": [1, 2, 3, 4]}\n"
				 "  {\"timestamp\": 30, \"input_length\": 700, \"output_length\": 1, "
				 "\"hash_ids\": [1, 9]}\n"
				 "{\"timestamp\": 40, \"input_length\": 200, \"output_length\": 1, "
				 "\"hash_ids\": [7]}\n"
				 "{\"timestamp\": 45, \"input_length\": 900, \"output_length\": 1, "
				 "\"hash_ids\": [20, 21]}\n"
				 "{\"timestamp\": 46, \"input_length\": 1600, \"output_length\": 1, "
				 "\"hash_ids\": [20, 22, 23, 24]}\n");
	wz_err e = wzt_import_mooncake(p, 512, WZT_UNSORTED_REFUSE, &t, NULL, &st, &d);
	if (!ok(e == WZ_OK && t && t->n == 7, "Mooncake fixture: BOM, CRLF, blank lines"))
		printf("#   %s\n", d.msg);
	if (t && t->n == 7) {
		wzt_request *r = t->requests;
		ok(r[0].session == 0 && r[1].session == 1 && r[2].session == 0 && r[2].turn == 1,
		   "a request extending a chain continues its session");
		ok(r[3].session == 2 && r[4].session == 1 && r[4].turn == 1,
		   "a shared first block alone starts a new session; equal ids continue");
		ok(r[2].prefix_tokens == 1024 && r[2].prompt_tokens == 976, "prefix of 2 blocks");
		ok(r[3].prefix_tokens == 512 && r[3].prompt_tokens == 188, "prefix of 1 block");
		ok(r[4].prefix_tokens == 200 && r[4].prompt_tokens == 0,
		   "prefix capped at the input length");
		is_double(r[2].arrival_s, 0.0205, 1e-12, "milliseconds to seconds");
		ok(r[6].session == 3 && r[6].turn == 1 && r[6].prefix_tokens == 512,
		   "a request extending an earlier one's full blocks continues its session");
		ok(st.blocks == 16 && st.hit_blocks == 5, "block counts");
	}
	wzt_traffic_free(t);
	/* Conversations that all begin with one system-prompt block S.  B's
	 * first turn holds S and a partial block: its full blocks are S alone,
	 * which must not make every later conversation a turn of B. */
	p = fx_write("mc-shared.jsonl",
		     "{\"timestamp\": 0, \"input_length\": 1500, \"output_length\": 5, "
		     "\"hash_ids\": [100, 1, 2]}\n"
		     "{\"timestamp\": 1, \"input_length\": 700, \"output_length\": 5, "
		     "\"hash_ids\": [100, 11]}\n"
		     "{\"timestamp\": 2, \"input_length\": 2048, \"output_length\": 5, "
		     "\"hash_ids\": [100, 21, 22, 23]}\n"
		     "{\"timestamp\": 3, \"input_length\": 2600, \"output_length\": 5, "
		     "\"hash_ids\": [100, 1, 3, 4, 5, 6]}\n"
		     "{\"timestamp\": 4, \"input_length\": 900, \"output_length\": 5, "
		     "\"hash_ids\": [100, 31]}\n"
		     "{\"timestamp\": 5, \"input_length\": 800, \"output_length\": 5, "
		     "\"hash_ids\": [100, 41]}\n"
		     "{\"timestamp\": 6, \"input_length\": 3000, \"output_length\": 5, "
		     "\"hash_ids\": [100, 21, 22, 23, 24, 25]}\n");
	e = wzt_import_mooncake(p, 512, WZT_UNSORTED_REFUSE, &t, NULL, &st, &d);
	if (!ok(e == WZ_OK && t && t->n == 7, "Mooncake shared-prompt fixture imports"))
		printf("#   %s\n", d.msg);
	if (t && t->n == 7) {
		wzt_request *r = t->requests;
		ok(count_sessions(t) == 5, "5 conversations sharing a prompt block: %ld sessions",
		   count_sessions(t));
		ok(r[3].session == r[0].session && r[3].turn == 1 && r[6].session == r[2].session &&
			   r[6].turn == 1,
		   "turns extending a chain past the shared prompt continue their sessions");
		ok(r[4].session != r[1].session && r[5].session != r[1].session &&
			   r[5].session != r[4].session,
		   "conversations sharing only the prompt block are sessions of their own");
		ok(r[4].prefix_tokens == 512 && r[4].prompt_tokens == 388,
		   "the shared prompt block is still a reusable prefix");
		ok(st.shared_blocks == 6, "6 hit blocks are a shared prefix (%lld)",
		   (long long)st.shared_blocks);
		int same = 1;
		for (int i = 0; i < 7; i++)
			same &= r[i].shared_prefix == r[0].shared_prefix &&
				r[i].shared_prefix_tokens == 512;
		ok(same && r[0].shared_prefix == 0,
		   "every request names the prompt block as one shared prefix of 512 tokens");
	}
	wzt_traffic_free(t);
	static const struct {
		const char *text, *want, *name;
	} bad[] = {
		{ "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n{oops\n",
		  "mc-bad.jsonl:2: not JSON", "bad JSON" },
		{ "{\"timestamp\": 0, \"output_length\": 1}\n", "mc-bad.jsonl:1: field input_length",
		  "missing field" },
		{ "{\"timestamp\": 0, \"input_length\": -4, \"output_length\": 1}\n",
		  "mc-bad.jsonl:1: field input_length: negative", "negative length" },
		{ "{\"timestamp\": 0, \"input_length\": 1e9, \"output_length\": 1}\n",
		  "mc-bad.jsonl:1: field input_length", "absurd length" },
		{ "{\"timestamp\": \"x\", \"input_length\": 1, \"output_length\": 1}\n",
		  "mc-bad.jsonl:1: field timestamp", "text timestamp" },
		{ "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1, "
		  "\"a\"]}\n",
		  "mc-bad.jsonl:1: field hash_ids", "bad hash id" },
		{ "{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1}\n"
		  "{\"timestamp\": 4, \"input_length\": 1, \"output_length\": 1}\n",
		  "mc-bad.jsonl:2: field timestamp", "out of order" },
		{ "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": "
		  "[1, 2]}\n"
		  "{\"timestamp\": 1, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": "
		  "[1, 2]}\n",
		  "mc-bad.jsonl:2: field hash_ids: 2 blocks of 512 tokens, but input_length 512 fills 1",
		  "more blocks than the input fills" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		p = fx_write("mc-bad.jsonl", bad[i].text);
		e = wzt_import_mooncake(p, 512, WZT_UNSORTED_REFUSE, &t, NULL, NULL, &d);
		ok(e == WZ_ERR_INPUT && !t, "Mooncake refuses: %s", bad[i].name);
		has_str(d.msg, bad[i].want, "  naming file:line and field");
	}
}

static void test_lengths(void)
{
	char buf[1024];
	const char *p =
		fx_sample("arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv", buf, sizeof buf);
	wzt_lengths_opts o = { .rate = 4, .cv = 1, .seed = 7 };
	wzt_traffic *t = NULL;
	if (!p) {
		skip(3, "shared Vidur sample absent");
	} else {
		wz_err e = wzt_import_lengths(p, &o, &t, &d);
		if (!ok(e == WZ_OK && t, "Vidur arXiv lengths import"))
			printf("#   %s\n", d.msg);
		is_long(t ? t->n : 0, 28257, "28,257 requests");
		/* Poisson at 4/s: the span is near n/4 (sd sqrt(n)/4 = 42 s). */
		is_double(t && t->n ? t->requests[t->n - 1].arrival_s : 0, 28257 / 4.0, 200,
			  "span matches the rate");
		wzt_traffic_free(t);
	}
	wz_buf text = { 0 };
	wz_buf_puts(&text, "\xEF\xBB\xBFin,\"out\",other\r\n");
	for (int i = 0; i < 4000; i++)
		wz_buf_printf(&text, "%d,\"%d\",z\r\n", 100 + i % 7, 1 + i % 3);
	p = fx_write("len.csv", wz_buf_str(&text));
	wz_buf_free(&text);
	o = (wzt_lengths_opts){ .prompt_column = "IN", .output_column = "out", .rate = 2, .cv = 3,
				.seed = 1 };
	wz_err e = wzt_import_lengths(p, &o, &t, &d);
	if (!ok(e == WZ_OK && t && t->n == 4000, "columns chosen by name; BOM, CRLF, quotes"))
		printf("#   %s\n", d.msg);
	if (t && t->n == 4000) {
		double s = 0, s2 = 0;
		for (size_t i = 1; i < t->n; i++) {
			double g = t->requests[i].arrival_s - t->requests[i - 1].arrival_s;
			s += g;
			s2 += g * g;
		}
		double n = (double)t->n - 1, mean = s / n, cv = sqrt(s2 / n - mean * mean) / mean;
		printf("# gamma gaps: mean %.4f s, cv %.3f\n", mean, cv);
		ok(fabs(mean - 0.5) < 0.05 && fabs(cv - 3) < 0.4, "Gamma gaps: mean 1/rate, CV 3");
	}
	wzt_traffic *u = NULL;
	wzt_import_lengths(p, &o, &u, &d);
	int same = t && u && t->n == u->n;
	for (size_t i = 0; same && i < t->n; i++)
		same = t->requests[i].arrival_s == u->requests[i].arrival_s &&
		       t->requests[i].prompt_tokens == u->requests[i].prompt_tokens;
	ok(same, "same seed, same trace");
	wzt_traffic_free(t);
	wzt_traffic_free(u);
	o.output_column = "nope";
	e = wzt_import_lengths(p, &o, &t, &d);
	has_str(d.msg, "len.csv:1: header: no column 'nope'", "a missing column is named");
	o.output_column = "out";
	p = fx_write("len-bad.csv", "in,out\n5,6\n7,x\n");
	e = wzt_import_lengths(p, &o, &t, &d);
	has_str(d.msg, "len-bad.csv:3: field out", "a bad length names file:line and field");
}

static void test_burstgpt(void)
{
	/* BurstGPT's published column layout. */
	const char *p = fx_write("burst.csv",
				 "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\r\n"
				 "5,ChatGPT,472,18,490,Conversation log\r\n"
				 "45,GPT-4,1087,0,1087,\"API log\"\r\n"
				 "118,ChatGPT,417,276,693,Conversation log\r\n");
	wzt_traffic *t = NULL;
	wz_err e = wzt_import_burstgpt(p, NULL, WZT_UNSORTED_REFUSE, &t, NULL, &d);
	if (!ok(e == WZ_OK && t && t->n == 3, "BurstGPT fixture imports"))
		printf("#   %s\n", d.msg);
	if (t && t->n == 3)
		ok(t->requests[2].arrival_s == 113 && t->requests[1].output_tokens == 0 &&
			   t->requests[2].prompt_tokens == 417,
		   "times from the first request; failed requests kept");
	wzt_traffic_free(t);
	e = wzt_import_burstgpt(p, "chatgpt", WZT_UNSORTED_REFUSE, &t, NULL, &d);
	ok(e == WZ_OK && t && t->n == 2, "one model selected");
	wzt_traffic_free(t);
	p = fx_write("burst-s.csv", "Timestamp,SessionID,Request tokens,Response tokens\n"
				    "0,abc,1,1\n1,,2,1\n2,abc,3,1\n");
	e = wzt_import_burstgpt(p, NULL, WZT_UNSORTED_REFUSE, &t, NULL, &d);
	ok(e == WZ_OK && t && t->n == 3 && t->requests[2].session == 0 &&
		   t->requests[2].turn == 1 && t->requests[1].session == 1,
	   "a SessionID column groups requests into sessions");
	wzt_traffic_free(t);
	p = fx_write("burst-bad.csv", "Timestamp,Model,Request tokens,Response tokens\n"
				      "5,ChatGPT,472,18\n"
				      "6,ChatGPT,47x,18\n");
	e = wzt_import_burstgpt(p, NULL, WZT_UNSORTED_REFUSE, &t, NULL, &d);
	has_str(d.msg, "burst-bad.csv:3: field Request tokens", "bad BurstGPT row named");
}

static void test_servegen(void)
{
	char buf[1024];
	const char *dir = fx_sample("servegen_deepseek-r1", buf, sizeof buf);
	wzt_traffic *t = NULL;
	if (!dir) {
		skip(3, "shared ServeGen sample absent");
	} else {
		/* Three clients for a whole day: the count follows the rates. */
		static const int clients[] = { 0, 24, 35 };
		wzt_servegen_opts o = { .duration_s = 86400, .clients = clients, .n_clients = 3,
					.seed = 3 };
		wz_err e = wzt_import_servegen(&dir, 1, &o, &t, &d);
		if (!ok(e == WZ_OK && t, "ServeGen sample samples"))
			printf("#   %s\n", d.msg);
		/* Expected count: sum of rate x 600 s over the three files. */
		double want = 0;
		for (int k = 0; k < 3; k++) {
			char path[1200];
			snprintf(path, sizeof path, "%s/chunk-%d-trace.csv", dir, clients[k]);
			FILE *f = fopen(path, "r");
			double start, rate;
			while (f && fscanf(f, "%lf,%lf%*[^\n]\n", &start, &rate) == 2)
				want += rate * 600;
			if (f)
				fclose(f);
		}
		printf("# ServeGen clients 0,24,35 for a day: %zu requests, rates say %.0f\n",
		       t ? t->n : 0, want);
		ok(t && want > 1000 && fabs((double)t->n - want) < 0.05 * want,
		   "daily request count within 5%% of the rates");
		ok(t && sorted(t) && t->n && t->requests[t->n - 1].arrival_s < 86400,
		   "sorted, within the day");
		wzt_traffic_free(t);
	}
	/* A fixture: one client, 100 s windows, fixed lengths. */
	fx_write("chunk-4-trace.csv", "0,2,1,Gamma,1,0.5\r\n100,0,0,,0,0\r\n"
				      "200,1,1.5,Weibull,0.7,1.1\r\n");
	fx_write("chunk-4-dataset.json",
		 "{\"0\": {\"input_tokens\": \"{10: 0.5, 20: 0.5}\", \"output_tokens\": \"{3: 1.0}\"},"
		 " \"150\": {\"input_tokens\": {\"30\": 1}, \"output_tokens\": \"{4: 2}\"}}");
	wzt_servegen_opts o = { .duration_s = 900, .seed = 9 };
	const char *path = fx_path("chunk-4-trace.csv");
	wz_err e = wzt_import_servegen(&path, 1, &o, &t, &d);
	if (!ok(e == WZ_OK && t, "ServeGen fixture samples"))
		printf("#   %s\n", d.msg);
	if (t) {
		int first = 1, quiet = 1, second = 1;
		for (size_t i = 0; i < t->n; i++) {
			const wzt_request *r = &t->requests[i];
			double tod = fmod(r->arrival_s, 300);
			if (tod < 100)
				first &= (r->prompt_tokens == 10 || r->prompt_tokens == 20) &&
					 r->output_tokens == 3;
			else if (tod < 200)
				quiet = 0;
			else
				second &= r->prompt_tokens == 30 && r->output_tokens == 4;
		}
		printf("# fixture: %zu requests (rates say 900)\n", t->n);
		ok(first && quiet && second, "windows and length tables applied by time of day");
		ok(t->n > 700 && t->n < 1100, "the period repeats: three days of 300 s");
	}
	wzt_traffic_free(t);
	fx_write("chunk-5-trace.csv", "0,2,1,Gamma,1,0.5\n100,x,0,,0,0\n");
	fx_write("chunk-5-dataset.json", "{}");
	path = fx_path("chunk-5-trace.csv");
	e = wzt_import_servegen(&path, 1, &o, &t, &d);
	has_str(d.msg, "chunk-5-trace.csv:2: field rate", "a bad window names file:line and field");
	fx_write("chunk-6-trace.csv", "0,2,1,Gamma,1,0.5\n");
	fx_write("chunk-6-dataset.json", "{\n \"0\": {\n  \"input_tokens\": \"{10: 1}\",\n"
					 "  \"output_tokens\": \"{3: x}\"\n }\n}\n");
	path = fx_path("chunk-6-trace.csv");
	e = wzt_import_servegen(&path, 1, &o, &t, &d);
	has_str(d.msg, "chunk-6-dataset.json:4: window \"0\": field output_tokens",
		"a bad table names file:line and field");
}

int main(void)
{
	fx_init();
	test_azure();
	test_mooncake();
	test_lengths();
	test_burstgpt();
	test_servegen();
	fx_cleanup();
	return tap_done();
}
