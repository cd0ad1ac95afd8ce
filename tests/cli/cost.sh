#!/bin/sh
# CLI tests for `wzplan cost`: the product page's table, output formats,
# exit codes and messages for bad input.
. "$top_srcdir/tests/cli/lib.sh"

run "$WZPLAN" cost
expect_rc 0 "cost runs on the embedded default"
contains "$out" "1,000" "baseline fleet of 1,000 GPUs"
contains "$out" "704" "1.42x fewer bits -> 704 GPUs"
contains "$out" "705" "rounded up, 705 GPUs, shown where it differs"
contains "$out" "676" "1.48x fewer bits -> 676 GPUs"
contains "$out" '$17.52M' "fp8-mix costs ~\$17.5M reserved"
contains "$out" '$12.33M' "~\$12.3M reserved"
contains "$out" '$11.84M' "~\$11.8M reserved"
contains "$out" '$5.19M' "saving ~\$5.2M reserved"
contains "$out" '$5.68M' "saving ~\$5.7M reserved"
contains "$out" '$9.36M' "saving ~\$9.4M on demand"
contains "$out" '$10.25M' "saving ~\$10.2M on demand"
contains "$out" "Users/GPU" "memory mode table"
contains "$out" "Weights" "per-GPU breakdown"

run "$WZPLAN" cost --format csv
expect_rc 0 "csv output"
header=$(printf '%s\n' "$out" | head -1)
contains "$header" "format,label,bits_per_value" "csv header"
rows=$(printf '%s\n' "$out" | wc -l)
[ "$rows" -eq 7 ]; ok $? "csv has a header and six formats"
contains "$out" "iso:1.42" "csv names the format"

run "$WZPLAN" cost --format json
expect_rc 0 "json output"
printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["rows"][0]["scaling_gpus"]==1000' 2>/dev/null
ok $? "json parses and carries numbers"

run "$WZPLAN" cost --format md --mode memory --formats fp8-mix,wz-5.44
expect_rc 0 "markdown, memory mode"
contains "$out" "| fp8-mix |" "markdown table row"

run "$WZPLAN" cost --model GPT-9
expect_rc 2 "unknown model"
contains "$err" "DeepSeek-V3" "known models listed"
run "$WZPLAN" cost --gpu Z100
expect_rc 2 "unknown GPU"
contains "$err" "H100 SXM 80GB" "known GPUs listed"
run "$WZPLAN" cost --users 0
expect_rc 2 "zero users"
run "$WZPLAN" cost --users -5
expect_rc 2 "negative users"
contains "$err" "at least one user" "says why"
run "$WZPLAN" cost --context 200k --mode scaling
expect_rc 0 "context beyond the model's limit still computes"
contains "$err" "warning" "with a warning"
contains "$err" "163840" "naming the limit"
run "$WZPLAN" cost --formats fp8-mix,zz-3
expect_rc 2 "unknown format"
contains "$err" "wz-<bits>" "known formats listed"
run "$WZPLAN" cost --bogus
expect_rc 2 "unknown option"
run "$WZPLAN" cost --mode scaling --baseline-gpus 0
expect_rc 2 "zero baseline GPUs"

mkdir "$tmp/cat"
printf 'name,hbm_gib,hbm_tbps,bf16_tflops,fp8_tflops,nvlink_gbps,pcie_gbps,price_reserved_usd_h,price_ondemand_usd_h,price_source,price_date\nH100 SXM 80GB,80,3.35,,,,,,,,\nBad,lots,1,,,,,,,,\n' > "$tmp/cat/gpus.csv"
run "$WZPLAN" cost --catalog "$tmp/cat" -o "$tmp/out.txt"
expect_rc 2 "malformed catalog row"
contains "$err" "gpus.csv:3: field hbm_gib" "names file, line and field"
[ ! -e "$tmp/out.txt" ]; ok $? "no output file on error"

printf 'name,hbm_gib,hbm_tbps,bf16_tflops,fp8_tflops,nvlink_gbps,pcie_gbps,price_reserved_usd_h,price_ondemand_usd_h,price_source,price_date\nH100 SXM 80GB,,3.35,,,,,2,3,x,2026\n' > "$tmp/cat/gpus.csv"
run "$WZPLAN" cost --catalog "$tmp/cat" --mode memory --price-set catalog
expect_rc 2 "empty catalog value the calculation needs"
contains "$err" "hbm_gib is empty" "names the missing value"

printf 'model = DeepSeek-V3\ngpu = H100 SXM\nusers = 10k\ncontext = 32k\nformats = fp8-mix, wz-5.44\nmode = memory\ngpus_per_replica = 16\nprice_set = product-page\n' > "$tmp/s.scenario"
run "$WZPLAN" cost --scenario "$tmp/s.scenario" --format csv
expect_rc 0 "scenario file"
printf 'model = DeepSeek-V3\ngpu = H100 SXM\nusers = ten\ncontext = 32k\n' > "$tmp/bad.scenario"
run "$WZPLAN" cost --scenario "$tmp/bad.scenario"
expect_rc 2 "malformed scenario"
contains "$err" "bad.scenario:3: users" "names file, line and key"
printf 'model = DeepSeek-V3\nusers = 10\ncontext = 32k\n' > "$tmp/bad.scenario"
run "$WZPLAN" cost --scenario "$tmp/bad.scenario"
expect_rc 2 "scenario missing a required key"
contains "$err" "'gpu'" "names the key"

printf 'model = DeepSeek-V3\ngpu = H100 SXM\nusers = 10\ncontext = 32k\nuser = 3\n' > "$tmp/bad.scenario"
run "$WZPLAN" cost --scenario "$tmp/bad.scenario"
expect_rc 2 "scenario with an unknown key"
contains "$err" "bad.scenario:5: unknown key 'user'" "names file, line and key"

# Per-GPU weights: the memory mode holds them as the simulator does.  Under
# attention data parallelism every GPU holds DeepSeek-V3's 17.1B parameters
# outside the routed experts whole and 1/16 of the 653.9B routed ones
# (57,960,527,360 B at 8 bits), with or without expert parallelism, which
# leaves 15,053,916,672 B = 14.02 GiB of cache per GPU; tensor parallelism
# splits all 671B and leaves 28.94 GiB.
pools_of() { # pools_of SCENARIO: cost's cache GiB per GPU, then sim's
	"$WZPLAN" cost --scenario "$1" --mode memory --formats fp8-mix --format csv 2> /dev/null |
		python3 -c 'import csv,sys; r=list(csv.DictReader(sys.stdin)); print("%.2f" % float(r[0]["memory_cache_gib_per_gpu"]))'
	"$WZPLAN" sim --scenario "$1" --format fp8-mix --replicas 1 --duration 2 --warmup 0 --no-archive -q 2>&1 |
		sed -n 's/^cache_gib_per_gpu = //p' | python3 -c 'import sys; print("%.2f" % float(sys.stdin.read()))'
}
base='model = DeepSeek-V3\ngpu = H100 SXM\nusers = 1000\ncontext = 100k\ngpus_per_replica = 16\n'
printf "$base" > "$tmp/dp.scenario"
printf "${base}expert_parallel = yes\n" > "$tmp/ep.scenario"
printf "${base}parallelism = tp\n" > "$tmp/tp.scenario"
w=$(pools_of "$tmp/dp.scenario" | tr '\n' ' ')
[ "$w" = "14.02 14.02 " ]; ok $? "attention-dp: cost and sim leave 14.02 GiB of cache per GPU ($w)"
w=$(pools_of "$tmp/ep.scenario" | tr '\n' ' ')
[ "$w" = "14.02 14.02 " ]; ok $? "expert parallelism: cost sees it as sim does ($w)"
w=$(pools_of "$tmp/tp.scenario" | tr '\n' ' ')
[ "$w" = "28.94 28.94 " ]; ok $? "tensor parallel: every weight split, 28.94 GiB ($w)"
printf "${base}moe_routed_experts = 300\n" > "$tmp/shape.scenario"
run "$WZPLAN" cost --scenario "$tmp/shape.scenario"
expect_rc 2 "a MoE shape larger than the model is refused by cost too"
contains "$err" "moe_routed_experts" "names the keys"

run "$WZPLAN" help cost
expect_rc 0 "help cost"
contains "$out" "Usage: wzplan cost" "help text"
run "$WZPLAN" --version
expect_rc 0 "version"
run "$WZPLAN" frobnicate
expect_rc 2 "unknown command"
done_testing
