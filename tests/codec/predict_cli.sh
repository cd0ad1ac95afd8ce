#!/bin/sh
# wzplan codec prepare --predict (profile version 7) on small synthetic
# traces: mla-p predicts and measures; mla-a does not predict; a trellis
# format is refused with such a profile; a damaged map is bad input (exit
# 2, naming the layer and entry).
. "$top_srcdir/tests/cli/lib.sh"

small="--layers 2 --tokens 512 --queries 4 --heads 4 --quiet"
run $WZPLAN trace synth-cache --family mla-p --seed 3 $small --calibration 1 --test 1 --out "$tmp/t"
expect_rc 0 "mla-p traces"
run $WZPLAN codec prepare --trace "$tmp/t/mla-p-cal-0.safetensors" --predict auto --out "$tmp/x.wzp"
expect_rc 2 "--predict without --rope-theta is refused"
contains "$err" "--rope-theta" "the message says what it needs"
run $WZPLAN codec prepare --trace "$tmp/t/mla-p-cal-0.safetensors" --rope-theta 10000 \
	--rope-layers all --predict auto --out "$tmp/p.wzp"
expect_rc 0 "prepare --predict auto on mla-p"
contains "$err" "predicted from the latent in 2 of 2 layers" "both layers predict"
run $WZPLAN codec measure --trace "$tmp/t/mla-p-test-0.safetensors" --profile "$tmp/p.wzp" \
	--formats fp8-mix,wz-5.0 --boot 20
expect_rc 0 "measure wz-5.0 with a version 7 profile"
contains "$out" "wz-5.0" "a wz-5.0 row"
run $WZPLAN codec measure --trace "$tmp/t/mla-p-test-0.safetensors" --profile "$tmp/p.wzp" \
	--formats wzt8-5.0 --boot 20
expect_rc 2 "wzt8 with a predicting profile is refused"
contains "$err" "predicts the position part" "the message says why"

run $WZPLAN trace synth-cache --family mla-a --seed 3 $small --calibration 1 --test 0 --out "$tmp/a"
run $WZPLAN codec prepare --trace "$tmp/a/mla-a-cal-0.safetensors" --rope-theta 10000 \
	--rope-layers all --predict auto --out "$tmp/a.wzp"
expect_rc 0 "prepare --predict auto on mla-a"
contains "$err" "predicted from the latent in 0 of 2 layers" "no layer predicts"

"${top_builddir:-.}/tests/codec/test_predict" --bad-map "$tmp/p.wzp" "$tmp/bad.wzp"
ok $? "a version 7 profile with a damaged map written"
run $WZPLAN codec measure --trace "$tmp/t/mla-p-test-0.safetensors" --profile "$tmp/bad.wzp" \
	--formats wz-5.0 -o "$tmp/out.txt"
expect_rc 2 "a damaged prediction map"
contains "$err" "prediction map entry (511, 57)" "the message names the map entry"
contains "$err" "layer 1" "and the layer"
[ ! -e "$tmp/out.txt" ]; ok $? "nothing written on failure"
done_testing
