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
done_testing
