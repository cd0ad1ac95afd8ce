#!/bin/sh
# CLI tests for `wzplan sim` and `wzplan size`: a small run, byte-identical
# output for a seed, the occupancy CSV, exit 2 with file:line and key for
# bad input, and the deployment search's confirmation limit reported.
. "$top_srcdir/tests/cli/lib.sh"

small="--users 120 --replicas 1 --duration 300 --warmup 30 --context 32k -q"

run "$WZPLAN" sim $small
expect_rc 0 "sim runs a small population"
contains "$out" "ttft_p99_s = " "reports p99 TTFT"
contains "$out" "tpot_p50_s = " "reports TPOT"
contains "$out" "queue_p90_s = " "reports queueing delay"
contains "$out" "goodput_rps = " "reports goodput"
contains "$out" "requests_refused = " "reports refused requests"
contains "$out" "memory_mode_users_per_replica = " "reports the memory mode's users per replica"
contains "$out" "hbm_efficiency = 0.8" "reports the defaults it used"
first=$out

run "$WZPLAN" sim $small
[ "$out" = "$first" ]; ok $? "the same seed gives byte-identical output"

run "$WZPLAN" sim $small --seed 7 --occupancy "$tmp/occ.csv" --idle-policy offload
expect_rc 0 "sim with offload and an occupancy file"
[ "$out" != "$first" ]; ok $? "another seed and policy give other output"
head -1 "$tmp/occ.csv" | grep -q '^time_s,blocks_used,blocks_total,occupancy'; ok $? "occupancy CSV header"
[ "$(wc -l < "$tmp/occ.csv")" -gt 3 ]; ok $? "occupancy CSV has rows"
contains "$out" "parks_cpu = " "reports parks"

run "$WZPLAN" size --users 120 --context 32k --duration 300 --warmup 30 --formats fp8-mix,wz-5.44 --report csv -q
expect_rc 0 "size on a small population"
contains "$out" "format,bits_per_value,replicas,gpus" "size CSV header"
contains "$out" "wz-5.44" "size has a row per format"
contains "$out" ",binds" "size names what binds each fleet"
sized=$out
run "$WZPLAN" size --users 120 --context 32k --duration 300 --warmup 30 --formats fp8-mix,wz-5.44 --report csv -q --threads 1
expect_rc 0 "size on one thread"
[ "$out" = "$sized" ]; ok $? "size gives the same table on one thread as on all cores"
run "$WZPLAN" size --users 120 --context 32k --duration 300 --warmup 30 --formats fp8-mix,wz-5.44 --report csv -q --threads 5
[ "$out" = "$sized" ]; ok $? "size gives the same table on five threads"
run "$WZPLAN" size --threads 0 -q
expect_rc 2 "--threads 0 is bad usage"

cat > "$tmp/bad.scenario" <<'EOS'
model = DeepSeek-V3
gpu = H100 SXM
users = 100
context = 10k
hbm_efficiency = 2
EOS
run "$WZPLAN" sim --scenario "$tmp/bad.scenario" -q
expect_rc 2 "an efficiency above 1 is refused"
contains "$err" "bad.scenario:5: hbm_efficiency" "message names file:line and key"

sed 's/^hbm_efficiency = 2$/idle_policy = sometimes/' "$tmp/bad.scenario" > "$tmp/bad2.scenario"
run "$WZPLAN" sim --scenario "$tmp/bad2.scenario" -q
expect_rc 2 "an unknown idle policy is refused"
contains "$err" "bad2.scenario:5: idle_policy" "message names file:line and key"

sed 's/^hbm_efficiency = 2$/pop_prompt_tokens = -5/' "$tmp/bad.scenario" > "$tmp/bad3.scenario"
run "$WZPLAN" size --scenario "$tmp/bad3.scenario" -q
expect_rc 2 "negative prompt tokens are refused"
contains "$err" "bad3.scenario:5: pop_prompt_tokens" "message names file:line and key"

sed 's/^hbm_efficiency = 2$/duration_s = 1e12/' "$tmp/bad.scenario" > "$tmp/bad4.scenario"
run "$WZPLAN" sim --scenario "$tmp/bad4.scenario" -q
expect_rc 2 "an absurd duration is refused"
contains "$err" "bad4.scenario:5: duration_s" "message names file:line and key"

sed 's/^hbm_efficiency = 2$/prefill_compute_efficiency = 0/' "$tmp/bad.scenario" > "$tmp/bad5.scenario"
run "$WZPLAN" sim --scenario "$tmp/bad5.scenario" -q
expect_rc 2 "a prefill efficiency of 0 is refused"
contains "$err" "bad5.scenario:5: prefill_compute_efficiency" "message names file:line and key"
sed 's/^hbm_efficiency = 2$/prefill_compute_efficiency = 0.3/' "$tmp/bad.scenario" > "$tmp/pce.scenario"
echo "gpus_per_replica = 16" >> "$tmp/pce.scenario"
run "$WZPLAN" sim --scenario "$tmp/pce.scenario" --replicas 1 --duration 60 --warmup 0 -q
expect_rc 0 "a scenario with its own prefill efficiency runs"
contains "$out" "prefill_compute_efficiency = 0.3" "reports the prefill efficiency it used"
contains "$out" "compute_efficiency = 0.6" "and decode's unchanged"
contains "$first" "prefill_compute_efficiency = 0.47" "unset, prefill's dense matmuls run at the measured share"
contains "$first" "prefill_attention_efficiency = 0.76" "  and its attention at its own"

grep -v '^model' "$tmp/bad.scenario" | grep -v hbm_eff > "$tmp/nomodel.scenario"
run "$WZPLAN" sim --scenario "$tmp/nomodel.scenario" -q
expect_rc 2 "a scenario without a model is refused"
contains "$err" "model" "message names the missing key"

printf 'session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens\n0,0,0.0,100,-3,0\n' > "$tmp/bad.csv"
run "$WZPLAN" sim --traffic "$tmp/bad.csv" -q
expect_rc 2 "a traffic table with negative tokens is refused"
contains "$err" "bad.csv:2" "message names file:line"

printf 'session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens\n0,0,0.0,1000,50,0\n1,0,0.5,2000,80,0\n0,1,3.0,200,40,1050\n' > "$tmp/good.csv"
run "$WZPLAN" sim --traffic "$tmp/good.csv" --warmup 0 -q
expect_rc 0 "sim replays a traffic table"
contains "$out" "requests_completed = 3" "every replayed request completes"

run "$WZPLAN" sim --traffic "$tmp/good.csv" --warmup 0 --speedup 2 -q
expect_rc 0 "sim replays a table faster"
contains "$out" "speedup = 2" "reports the speed-up"
contains "$out" "speedup_think_time = kept" "a speed-up keeps think time by default"

run "$WZPLAN" sim --traffic "$tmp/good.csv" --warmup 0 --speedup 2 --speedup-think -q
contains "$out" "speedup_think_time = compressed" "--speedup-think compresses it too"

# Archived like any run: its annual cost needs the H800 prices, which the
# catalog row now cites.
run "$WZPLAN" sim $small --gpu "H800 SXM 80GB" --price-set catalog
expect_rc 0 "sim runs and prices a run on H800 (its catalog row has specs and prices)"

run "$WZPLAN" sim --speedup 2 -q
expect_rc 2 "--speedup without --traffic is bad usage"

run "$WZPLAN" sim --replicas 0 -q
expect_rc 2 "zero replicas is bad usage"

# A run in which no request completes has no latencies: they read "none"
# and a warning says why, never a latency of zero.
run "$WZPLAN" sim --replicas 1 --duration 2 --warmup 0 --no-archive -q
expect_rc 0 "a run too short for any request to complete"
contains "$out" "requests_completed = 0" "  completes nothing"
contains "$out" "ttft_p99_s = none" "  its p99 TTFT is none"
contains "$out" "tpot_mean_s = none" "  and so is its mean TPOT"
printf '%s\n' "$out" | grep -q '^ttft_p[0-9]*_s = 0\.0*$'; [ $? -ne 0 ]
ok $? "  no latency of zero"
contains "$err" "no request completed" "  a warning says so"

# Context-parallel prefill from a scenario: new sessions' 60k-token first
# prefills spread over 4 ranks, so the slowest first token comes sooner.
printf 'model = DeepSeek-V3\ngpu = H100 SXM 80GB\nusers = 10\ncontext = 100k\nformats = fp8-mix\ngpus_per_replica = 16\n' > "$tmp/cp.scenario"
cp "$tmp/cp.scenario" "$tmp/cp4.scenario"
echo 'prefill_context_parallel = 4' >> "$tmp/cp4.scenario"
run "$WZPLAN" sim --scenario "$tmp/cp.scenario" --replicas 1 --duration 1200 --warmup 0 --no-archive -q
expect_rc 0 "sim without context-parallel prefill"
max_off=$(printf '%s\n' "$out" | sed -n 's/^ttft_max_s = //p')
run "$WZPLAN" sim --scenario "$tmp/cp4.scenario" --replicas 1 --duration 1200 --warmup 0 --no-archive -q
expect_rc 0 "sim with prefill_context_parallel = 4"
contains "$out" "prefill_context_parallel_ranks = 4" "  reports its ranks"
contains "$out" "prefill_cp_ring_gbps = 450" "  and its ring's bandwidth (H100 NVLink, one way)"
max_cp=$(printf '%s\n' "$out" | sed -n 's/^ttft_max_s = //p')
awk -v a="$max_cp" -v b="$max_off" 'BEGIN { exit !(a > 0 && a * 2 < b) }'
ok $? "  the slowest first token comes over twice as soon ($max_cp s against $max_off s)"

# Recomputed tokens count as they are prefilled: an overloaded fleet that
# drops idle sessions ends its run with recomputations admitted but not
# yet prefilled, and those are not in the share (it once passed 1).
cat > "$tmp/drop.scenario" <<'EOS'
model = DeepSeek-V3
gpu = H100 SXM 80GB
users = 300
context = 100k
formats = fp8-mix
gpus_per_replica = 16
price_set = catalog
EOS
run "$WZPLAN" sim --scenario "$tmp/drop.scenario" --idle-policy drop --replicas 2 --duration 120 \
	--warmup 30 --no-archive -q
expect_rc 0 "sim, an overloaded fleet that drops idle sessions"
share=$(printf '%s\n' "$out" | sed -n 's/^prefill_recomputed_share = //p')
awk -v s="$share" 'BEGIN { exit !(s > 0.5 && s <= 1) }'
ok $? "  the recomputed share of its prefill is at most 1 ($share)"

# The fixed-batch benchmark: DeepSeek's prefill anchor (docs/validation.md,
# "Fidelity anchors") from the command line, and its refusals.
cat > "$tmp/anchor.scenario" <<'EOS'
model = DeepSeek-V3
gpu = H100 SXM 80GB
users = 1000
context = 4096
formats = bf16
baseline_format = bf16
price_set = catalog
gpus_per_replica = 16
serving = disaggregated
prefill_gpus_per_replica = 32
expert_parallel = yes
dual_batch_overlap = yes
EOS
run "$WZPLAN" sim --scenario "$tmp/anchor.scenario" --benchmark prefill-only --batch 4 --input-tokens 4096
expect_rc 0 "sim --benchmark prefill-only runs"
contains "$out" "benchmark_input_tokens_s_per_gpu = 8483.8" "  the DeepSeek prefill anchor's figure per GPU"
contains "$out" "benchmark_batch = 128" "  4 prompts on each of the pool's 32 GPUs"
# The same pool as one instance of 4 pipeline stages (EP8 each): a 64K
# prompt in 16K chunks; a layout that does not divide the pool is refused.
cp "$tmp/anchor.scenario" "$tmp/pp.scenario"
echo "prefill_pipeline_stages = 4" >> "$tmp/pp.scenario"
run "$WZPLAN" sim --scenario "$tmp/pp.scenario" --benchmark prefill-only --batch 1 --input-tokens 65536
expect_rc 0 "sim --benchmark prefill-only on a pipelined pool runs"
contains "$out" "prefill_pipeline_stages = 4" "  printing the pool's layout"
contains "$out" "prefill_instance_stage_gpus = 8" "  a stage of 8 GPUs"
contains "$out" "benchmark_batch = 8" "  one prompt on each of a stage's 8 ranks"
echo "prefill_instance_gpus = 12" >> "$tmp/pp.scenario"
run "$WZPLAN" sim --scenario "$tmp/pp.scenario" --benchmark prefill-only --batch 1 --input-tokens 65536
expect_rc 2 "instances that do not divide the pool are refused"
contains "$err" "pp.scenario:14: prefill_instance_gpus: 12 GPUs do not divide" "  naming file, line and key"
run "$WZPLAN" sim --benchmark decode-only --batch 32 --input-tokens 4000 --output-tokens 1001
expect_rc 0 "sim --benchmark decode-only runs"
contains "$out" "benchmark_context_tokens = 4500.0" "  at the batch's mean context"
contains "$out" "benchmark_output_tokens_s_per_user = " "  and says each request's speed"
run "$WZPLAN" sim --benchmark decode-only --batch 32 --input-tokens 4000
expect_rc 2 "decode-only without --output-tokens is bad usage"
contains "$err" "--output-tokens" "  naming it"
run "$WZPLAN" sim --benchmark decode-only --batch 100000 --input-tokens 4000 --output-tokens 10
expect_rc 2 "a batch the cache cannot hold is refused"
contains "$err" "cache blocks a GPU" "  saying what it needs and holds"
run "$WZPLAN" sim --benchmark prefill-only --batch 2 --input-tokens 10 --replicas 2
expect_rc 2 "--benchmark with --replicas is bad usage"
run "$WZPLAN" sim --batch 2
expect_rc 2 "--batch without --benchmark is bad usage"

# The deployment search stopped by its confirmation limit says so, on
# standard error and under its table, and counts what it left.
run "$WZPLAN" size --users 120 --context 32k --duration 300 --warmup 30 --formats fp8-mix \
	--confirm-limit 1 --threads 1 --no-archive
expect_rc 0 "size with a confirmation limit of 1"
contains "$err" "warning: fp8-mix: the confirmation limit (1 configurations, --confirm-limit) stopped the search with" \
	"the limit that binds is said on stderr"
contains "$out" "1 (limit; " "and in the table's Confirmed column"
contains "$out" "a larger --confirm-limit may find a cheaper one" "and in a note"
run "$WZPLAN" size --users 120 --context 32k --duration 300 --warmup 30 --formats fp8-mix \
	--threads 1 --no-archive
expect_rc 0 "size with the default limit"
printf '%s' "$err" | grep -q "confirmation limit"; [ $? -ne 0 ]
ok $? "the default limit does not bind: nothing said"
done_testing
