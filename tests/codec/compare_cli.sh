#!/bin/sh
# wzplan codec formats lists the shipped 4-bit MLA baselines with their
# sources; wzplan codec compare pairs formats with references per window;
# bad input: exit 2 and a clear message.
. "$top_srcdir/tests/cli/lib.sh"

run $WZPLAN codec formats
expect_rc 0 "codec formats"
contains "$out" "nvfp4-ds-mla" "formats lists vLLM's nvfp4_ds_mla"
contains "$out" "4.89" "nvfp4-ds-mla is 4.89 bits/value (352 bytes)"
contains "$out" "nvfp4_ds_mla_cache_kernels.cu" "its source is named"
contains "$out" "mxfp4-sgl-mla" "formats lists SGLang's block-16 MXFP4"
contains "$out" "nvfp4-trt-cold-bf16rope" "formats lists TensorRT-LLM's cold page with bf16 RoPE"
contains "$out" "5.78" "which is 5.78 bits/value (416 bytes)"

small="--layers 2 --tokens 256 --queries 4 --heads 4 --quiet"
run $WZPLAN trace synth-cache --family mla-a --seed 5 $small --calibration 1 --test 1 --out "$tmp/t"
expect_rc 0 "a synthetic test window"
test="$tmp/t/mla-a-test-0.safetensors"

run $WZPLAN codec compare --trace "$test" --formats bf16,nvfp4-trt-cold --against fp8-mix,nvfp4-ds-mla --boot 20
expect_rc 0 "compare on the test window"
contains "$out" "nvfp4-ds-mla" "a row against nvfp4-ds-mla"
contains "$out" "100%" "bf16 beats fp8-mix on every token"
run $WZPLAN codec compare --trace "$test" --formats bf16 --against fp8-mix --boot 20 --format csv
expect_rc 0 "compare as CSV"
contains "$out" "nmse_ratio_lo" "CSV carries interval bounds"
contains "$out" "queries_better" "and the share of queries better"

run $WZPLAN codec compare --trace "$test" --formats bf16
expect_rc 2 "compare without --against"
contains "$err" "--against" "the message names the missing option"
run $WZPLAN codec compare --trace "$test" --formats bf16 --against nvfp5
expect_rc 2 "an unknown reference format"
contains "$err" "nvfp5" "the message names it"
run $WZPLAN codec compare --trace "$test" --formats wz-4.97 --against nvfp4-ds-mla
expect_rc 2 "wz without a profile"
contains "$err" "--profile" "the message says what is missing"

# TensorRT-LLM's kept tokens: bits from the bytes of each token, kept ones
# in bf16; the fleet commands refuse it, naming the record to size with.
run $WZPLAN codec formats
contains "$out" "nvfp4-trt-cold-keep<F>-<L>" "formats lists the kept-token option"
contains "$out" "keep_first_tokens" "with TensorRT-LLM's key names"
run $WZPLAN codec measure --trace "$test" --formats nvfp4-trt-cold,nvfp4-trt-cold-keep0-16,nvfp4-trt-cold-keep1000000-0 --boot 20 --format csv --no-archive
expect_rc 0 "measure with kept tokens"
bits=$(printf '%s\n' "$out" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "bits_per_value") c = i; for (i = 1; i <= NF; i++) if ($i == "format") f = i } NR > 1 && $f == "nvfp4-trt-cold-keep0-16" { print $c }')
# 240 tokens at 324 bytes and 16 at 1,152, over 256 x 576 values
want=$(awk 'BEGIN { printf "%.3f", (240 * 324 + 16 * 1152) * 8 / (256 * 576) }')
got=$(awk -v b="$bits" 'BEGIN { printf "%.3f", b }')
[ "$got" = "$want" ]; ok $? "the last 16 tokens in bf16: $want bits/value (got $bits)"
contains "$out" "nvfp4-trt-cold-keep1000000-0,"  "every token kept is a row"
run $WZPLAN codec compare --trace "$test" --formats nvfp4-trt-cold-keep4-64 --against nvfp4-trt-cold --boot 20
expect_rc 0 "compare takes kept tokens"
run $WZPLAN codec measure --trace "$test" --formats fp8-mix-keep4-64 --no-archive
expect_rc 2 "kept tokens on a format without the option"
contains "$err" "TensorRT-LLM" "the message says whose option it is"
run $WZPLAN codec measure --trace "$test" --formats nvfp4-trt-cold-keep4 --no-archive
expect_rc 2 "a keep without its last count"
contains "$err" "keep<F>-<L>" "the message gives the form"
run $WZPLAN codec compare --trace "$test" --formats bf16,nvfp4-trt-cold-keep4-64 --against fp8-mix,nvfp4-trt-cold --boot 20 --format csv --threads 1
one=$out
run $WZPLAN codec compare --trace "$test" "$test" --formats bf16,nvfp4-trt-cold-keep4-64 --against fp8-mix,nvfp4-trt-cold --boot 20 --format csv --threads 3
expect_rc 0 "compare on 3 threads"
[ "$(printf '%s\n' "$out" | sed -n 2,5p)" = "$(printf '%s\n' "$one" | sed -n 2,5p)" ]
ok $? "the rows on 3 threads are the rows on 1"
run $WZPLAN codec compare --trace "$test" --formats bf16 --against fp8-mix --threads 0
expect_rc 2 "compare --threads 0"
contains "$err" "--threads" "the message names the option"
run $WZPLAN size --formats fp8-mix,nvfp4-trt-cold-keep4-64 --no-archive --max-replicas 4
expect_rc 2 "size refuses kept tokens"
contains "$err" "size fleets with nvfp4-trt-cold" "and names the record to size with"
done_testing
