#!/bin/sh
# wzplan codec: the registry table, prepare and measure on small synthetic
# traces, and bad input: exit 2, a clear message, nothing written.
. "$top_srcdir/tests/cli/lib.sh"

run $WZPLAN codec formats
expect_rc 0 "codec formats"
contains "$out" "fp8-mix" "formats lists fp8-mix"
contains "$out" "8.06" "fp8-mix is 8.06 bits/value"
contains "$out" "4.92" "int4-g64 and nvfp4 are 4.92 bits/value"
run $WZPLAN codec formats --format csv
contains "$out" "name,id,tier,bits_per_value" "formats as CSV"
# a format of one geometry is shown at its own, not as 0 bits/value
contains "$out" "fp8-ds-mla-v4,13,gpu,9.125,584," "fp8-ds-mla-v4 at its 448 + 64: 9.125 bits/value, 584 bytes"

small="--layers 2 --tokens 256 --queries 4 --heads 4 --quiet"
run $WZPLAN trace synth-cache --family mla-b --seed 3 $small --calibration 1 --test 1 --out "$tmp/t"
expect_rc 0 "synthetic traces"
cal="$tmp/t/mla-b-cal-0.safetensors"
test="$tmp/t/mla-b-test-0.safetensors"

run $WZPLAN codec prepare --trace "$cal" --out "$tmp/p.wzp" --rate 4.97,5.44,6.31
expect_rc 0 "prepare from a calibration window"
[ -s "$tmp/p.wzp" ]; ok $? "the profile is written"
contains "$err" "wz-5.44 plans: 391 bytes" "wz-5.44 records are 391 bytes"

run $WZPLAN codec prepare --trace "$test" --out "$tmp/bad.wzp"
expect_rc 2 "prepare refuses a test window"
contains "$err" "calibration windows only" "the message says why"
[ ! -e "$tmp/bad.wzp" ]; ok $? "nothing written after refusing"

run $WZPLAN codec measure --trace "$test" --profile "$tmp/p.wzp" --formats fp8-mix,int4-g64,wz-5.44 --boot 50
expect_rc 0 "measure on the test window"
contains "$out" "wz-5.44" "a wz-5.44 row"
contains "$out" "nmse / fp8-mix" "the ratio to fp8-mix"
contains "$err" "mla-b-test-0" "progress on standard error"
run $WZPLAN codec formats
contains "$out" "wzt-<bits>" "formats lists the trellis-coded wzt"
contains "$out" "wzt8-<bits>" "formats lists wzt8 (8 states)"
contains "$out" "wzt32-<bits>" "formats lists wzt32 (32 states)"
run $WZPLAN codec measure --trace "$test" --profile "$tmp/p.wzp" --formats wzt8-5.44,wzt32-5.44 --boot 20
expect_rc 0 "measure wzt8-5.44 and wzt32-5.44 with a wz profile"
contains "$out" "wzt8-5.44" "a wzt8-5.44 row"
contains "$out" "wzt32-5.44" "a wzt32-5.44 row"
run $WZPLAN codec measure --trace "$test" --profile "$tmp/p.wzp" --formats wzt8-0.5 --boot 20
expect_rc 2 "wzt8-0.5 is refused as bad input"
run $WZPLAN codec measure --trace "$test" --profile "$tmp/p.wzp" --formats wzt-5.44 --boot 20
expect_rc 0 "measure wzt-5.44 with a wz profile"
contains "$out" "wzt-5.44" "a wzt-5.44 row"
run $WZPLAN codec pack --trace "$test" --profile "$tmp/p.wzp" --grid wzt-5.44 --out "$tmp/t.wzx"
expect_rc 2 "pack refuses a wzt grid"
run $WZPLAN codec measure --trace "$test" --profile "$tmp/p.wzp" --formats wz-6.31 --format csv --boot 20
expect_rc 0 "measure as CSV"
contains "$out" "nmse_vs_fp8_lo" "CSV carries interval bounds"

# A corrupted profile: one byte changed in the middle.
cp "$tmp/p.wzp" "$tmp/c.wzp"
size=$(wc -c < "$tmp/c.wzp")
printf '\377' | dd of="$tmp/c.wzp" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run $WZPLAN codec measure --trace "$test" --profile "$tmp/c.wzp" --formats wz-5.44 -o "$tmp/out.txt"
expect_rc 2 "a corrupted profile"
contains "$err" "checksum" "the message names the checksum"
[ ! -e "$tmp/out.txt" ]; ok $? "nothing written on failure"

# A profile of another model, and one of another shape.
run $WZPLAN trace synth-cache --family mla-b --seed 3 $small --calibration 0 --test 1 --model other-model --out "$tmp/o"
run $WZPLAN codec measure --trace "$tmp/o/mla-b-test-0.safetensors" --profile "$tmp/p.wzp" --formats wz-5.44
expect_rc 2 "a profile of another model"
contains "$err" "other-model" "the message names the model"
run $WZPLAN trace synth-cache --family mla-b --seed 3 --layers 1 --tokens 256 --queries 0 --quiet --calibration 0 --test 1 --out "$tmp/s"
run $WZPLAN codec measure --trace "$tmp/s/mla-b-test-0.safetensors" --profile "$tmp/p.wzp" --formats wz-5.44
expect_rc 2 "a cache of another shape"
contains "$err" "profile" "the message compares with the profile"

# A truncated trace.
head -c 1000 "$test" > "$tmp/trunc.safetensors"
run $WZPLAN codec measure --trace "$tmp/trunc.safetensors" --formats fp8-mix
expect_rc 2 "a truncated trace"

run $WZPLAN codec measure --trace "$test" --formats wz-5.44
expect_rc 2 "wz without a profile"
run $WZPLAN codec measure --trace "$test" --formats fp9
expect_rc 2 "an unknown format"
contains "$err" "unknown cache format" "the message names the problem"
# The position part coded after undoing RoPE (profile version 6).
run $WZPLAN codec prepare --trace "$cal" --out "$tmp/rope.wzp" --rope-theta 10000
expect_rc 0 "prepare undoing RoPE"
contains "$err" "RoPE undone in 1 of 2 layers: the position part's gain" "prepare prints the gain, every layer but the first by default"
v=$(od -An -tu4 -j8 -N4 "$tmp/rope.wzp" | tr -d ' ')
[ "$v" = 6 ]; ok $? "the profile is version 6 (read $v)"
v=$(od -An -tu4 -j8 -N4 "$tmp/p.wzp" | tr -d ' ')
[ "$v" = 5 ]; ok $? "one prepared without --rope-theta stays version 5 (read $v)"
run $WZPLAN codec measure --trace "$test" --profile "$tmp/rope.wzp" --formats fp8-mix,wz-5.44,wzx-5.4 --boot 20
expect_rc 0 "measure with a profile that undoes RoPE, wzx included"
contains "$out" "wzx-5.4" "a wzx row"
run $WZPLAN codec pack --trace "$cal" --profile "$tmp/rope.wzp" --rate 5.4 --out "$tmp/rope.wzx"
expect_rc 0 "pack a window from position 0"
run $WZPLAN codec unpack --in "$tmp/rope.wzx" --profile "$tmp/rope.wzp" --to bf16 --out "$tmp/rope.bf16"
expect_rc 0 "unpack it to bf16"
run $WZPLAN codec prepare --trace "$cal" --out "$tmp/rope-trace.wzp" --rope-theta trace
expect_rc 0 "prepare with the RoPE the trace's metadata gives"
cmp -s "$tmp/rope.wzp" "$tmp/rope-trace.wzp"; ok $? "the same profile as --rope-theta 10000 (synth-cache's base)"
run $WZPLAN codec prepare --trace "$cal" --out "$tmp/plain2.wzp"
contains "$err" "--rope-theta trace codes the position part" "a plain prepare says how to undo the trace's RoPE"
run $WZPLAN trace info "$cal"
contains "$out" "RoPE: base 10000" "trace info shows the RoPE"
run $WZPLAN codec prepare --trace "$cal" --out "$tmp/rope1.wzp" --rope-theta 10000 --rope-layers 1
expect_rc 0 "prepare undoing RoPE in layer 1 alone"
cmp -s "$tmp/rope1.wzp" "$tmp/rope.wzp"; ok $? "the default: every layer but the first"
run $WZPLAN codec prepare --trace "$cal" --out "$tmp/rope-all.wzp" --rope-theta 10000 --rope-layers all
expect_rc 0 "prepare undoing RoPE in every layer"
contains "$err" "RoPE undone in 2 of 2 layers" "the summary says in how many layers"
for bad in "--rope-layers 1" "--rope-theta 10000 --rope-layers 2" "--rope-theta 10000 --rope-layers 1-" \
	"--rope-theta 10000 --rope-layers 1-0" "--rope-theta 10000 --rope-layers x" \
	"--rope-yarn 32,1024" "--rope-theta 1" "--rope-theta 10000 --rope-yarn 32" \
	"--rope-theta 10000 --rope-yarn 0.5,1024" "--rope-theta 10000 --rope-yarn 32,1024,1,32"; do
	run $WZPLAN codec prepare --trace "$cal" --out "$tmp/bad.wzp" $bad
	expect_rc 2 "prepare $bad"
	[ ! -e "$tmp/bad.wzp" ]; ok $? "nothing written after prepare $bad"
done
done_testing
