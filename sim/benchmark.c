/* Fixed-batch decode-only and prefill-only benchmarks of a replica
 * (benchmark.h). */
#include "sim/benchmark.h"

#include <math.h>
#include <string.h>

static wz_err positive(double v, const char *what, wz_diag *diag)
{
	if (!(v > 0) || !isfinite(v))
		return wz_diag_set(diag, WZ_ERR_RANGE, "benchmark: %s must be positive (got %g)", what,
				   v);
	return WZ_OK;
}

static wz_err decode_run(const wzs_replica_model *m, const wzs_bench *b, wzs_bench_result *out,
			 wz_diag *diag)
{
	wz_err err;
	if ((err = positive(b->output_tokens, "output tokens", diag)))
		return err;
	/* the k-th answer token is made with input + k - 1 tokens cached */
	double context = b->input_tokens + (b->output_tokens - 1) / 2;
	double longest = b->input_tokens + b->output_tokens;
	double blocks = b->per_gpu * ceil(longest / m->block_tokens);
	if (blocks > (double)m->blocks_per_rank)
		return wz_diag_set(diag, WZ_ERR_RANGE,
				   "benchmark: %g requests of %g tokens need %.0f cache blocks a GPU, "
				   "and the pool holds %ld",
				   b->per_gpu, longest, blocks, m->blocks_per_rank);
	out->context_tokens = context;
	out->batch = b->per_gpu * m->ranks;
	out->step_s = wzs_step_time_bound(m, out->batch, b->per_gpu * context, &out->compute_bound,
					  &out->network_bound);
	out->tokens_s_user = m->tokens_per_step / out->step_s;
	out->tokens_s_gpu = out->batch * out->tokens_s_user / m->gpus;
	return WZ_OK;
}

static void prefill_run(const wzs_replica_model *m, const wzs_bench *b, wzs_bench_result *out)
{
	double prompt_pairs = wzs_model_prefill_pairs(m, 0, b->input_tokens);
	double tokens_gpu = b->per_gpu * b->input_tokens;
	if (m->pool_instance_gpus > 0) {
		/* each rank of an instance's stage takes per_gpu prompts a pass,
		 * cut into passes of at most pool_batch_tokens a rank (the same
		 * chunk of every prompt in each), passes in a row through the
		 * stages; the first stage's busy time bounds the throughput */
		out->batch = b->per_gpu * m->prefill_gpus / m->pool_stages;
		double chunk = m->pool_batch_tokens / b->per_gpu;
		chunk = chunk < 1 ? 1 : chunk > b->input_tokens ? b->input_tokens : floor(chunk);
		double stage_free[WZS_MAX_PP_STAGES] = { 0 }, busy = 0;
		for (double done = 0; done < b->input_tokens;) {
			double k = b->input_tokens - done < chunk ? b->input_tokens - done : chunk;
			double t = wzs_pool_stage_time(m, b->per_gpu * k,
						       b->per_gpu * wzs_model_prefill_pairs(m, done, k));
			out->step_s = wzs_pipeline_pass(stage_free, m->pool_stages, stage_free[0], t,
							wzs_pool_hop_time(m, b->per_gpu * k));
			busy += t;
			done += k;
		}
		out->tokens_s_gpu = tokens_gpu / (m->pool_stages * busy);
		return;
	}
	if (m->prefill_gpus > 0) {
		/* each pool GPU prefills its own prompts */
		out->batch = b->per_gpu * m->prefill_gpus;
		out->step_s = wzs_pool_prefill_time(m, tokens_gpu, b->per_gpu * prompt_pairs);
	} else {
		/* the replica's pass: each attention rank's prompts, the weight
		 * matmuls over every GPU */
		out->batch = b->per_gpu * m->gpus;
		double tokens = tokens_gpu * m->gpus, pairs = out->batch * prompt_pairs;
		double rank_pairs = pairs / m->ranks;
		out->step_s = wzs_prefill_time(m, tokens, pairs, rank_pairs);
		out->network_bound = wzs_prefill_network_bound(m, tokens, pairs, rank_pairs);
	}
	out->tokens_s_gpu = tokens_gpu / out->step_s;
}

wz_err wzs_benchmark_run(const wzs_replica_model *m, const wzs_bench *b, wzs_bench_result *out,
			 wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	wz_err err;
	if ((err = positive(b->per_gpu, b->mode == WZS_BENCH_DECODE ? "requests a GPU"
								 : "prompts a GPU",
			    diag)) ||
	    (err = positive(b->input_tokens, "input tokens", diag)))
		return err;
	if (b->mode == WZS_BENCH_DECODE)
		return decode_run(m, b, out, diag);
	prefill_run(m, b, out);
	return WZ_OK;
}

void wzs_benchmark_describe(const wzs_bench *b, const wzs_bench_result *r, wz_buf *out)
{
	int decode = b->mode == WZS_BENCH_DECODE;
	wz_buf_printf(out, "benchmark = %s\nbenchmark_per_gpu = %g\nbenchmark_input_tokens = %g\n",
		      decode ? "decode-only" : "prefill-only", b->per_gpu, b->input_tokens);
	if (decode)
		wz_buf_printf(out, "benchmark_output_tokens = %g\nbenchmark_context_tokens = %.1f\n",
			      b->output_tokens, r->context_tokens);
	wz_buf_printf(out, "benchmark_batch = %g\nbenchmark_step_s = %.6f\n", r->batch, r->step_s);
	if (decode)
		wz_buf_printf(out, "benchmark_output_tokens_s_per_gpu = %.1f\n"
			      "benchmark_output_tokens_s_per_user = %.3f\n",
			      r->tokens_s_gpu, r->tokens_s_user);
	else
		wz_buf_printf(out, "benchmark_input_tokens_s_per_gpu = %.1f\n", r->tokens_s_gpu);
	wz_buf_printf(out, "benchmark_bound = %s\n",
		      r->network_bound    ? "all-to-all"
		      : !decode          ? "roofline"
		      : r->compute_bound ? "compute"
					 : "memory");
}
