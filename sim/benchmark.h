/* A fixed-batch benchmark of one replica, the way published
 * maximum-throughput figures are measured: every GPU holds the same batch
 * of requests of fixed input and output lengths, and the replica runs only
 * decode steps (decode-only) or only prefill passes (prefill-only), with
 * no traffic, queue or scheduler; from the replica model's step and
 * prefill times (sim/replica.h). */
#ifndef WZS_BENCHMARK_H
#define WZS_BENCHMARK_H

#include "common/wz_error.h"
#include "common/wz_str.h"
#include "sim/replica.h"

typedef enum {
	WZS_BENCH_DECODE = 0,  /* decode steps of a full batch, its cache mid-answer */
	WZS_BENCH_PREFILL = 1, /* prefill passes of whole prompts, nothing cached */
} wzs_bench_mode;

typedef struct {
	wzs_bench_mode mode;
	/* decode: requests a GPU (a cache pool's with attention data
	 * parallelism; the replica's with TP); prefill: prompts a GPU a pass */
	double per_gpu;
	double input_tokens;  /* prompt tokens of every request */
	double output_tokens; /* answer tokens of every request (decode) */
} wzs_bench;

typedef struct {
	double step_s;          /* one decode step or prefill pass */
	double tokens_s_gpu;    /* output (decode) or input (prefill) tokens/s per GPU */
	double tokens_s_user;   /* decode: output tokens/s of one request; prefill: 0 */
	double context_tokens;  /* decode: cached tokens a request holds on average */
	double batch;           /* requests (decode) or prompts (prefill) in the step */
	int compute_bound, network_bound;
} wzs_bench_result;

/* Runs the benchmark on one replica of m.  Decode: a request's cache holds
 * its prompt and half its answer (the mean over its decode); a step runs
 * per_gpu requests on each cache pool and gains m->tokens_per_step tokens
 * each (MTP included).  Prefill: a pass of per_gpu whole prompts on each
 * GPU, on the prefill pool when the replica is disaggregated; with prefill
 * instances per_gpu prompts on each rank of a stage, in chunks of at most
 * pool_batch_tokens a rank through the pipeline (step_s: the prompts'
 * latency; throughput: the first stage's busy time).  Fails with
 * WZ_ERR_RANGE naming the figure when a count or length is not positive,
 * or when the decode batch's cache does not fit the GPU's pool. */
wz_err wzs_benchmark_run(const wzs_replica_model *m, const wzs_bench *b,
			 wzs_bench_result *out /* OUT */, wz_diag *diag);

/* Appends the result as "key = value" lines. */
void wzs_benchmark_describe(const wzs_bench *b, const wzs_bench_result *r, wz_buf *out);

#endif
