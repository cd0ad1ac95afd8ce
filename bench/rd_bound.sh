#!/bin/sh
# What is possible at 5.0 bits/value, family by family: the Gaussian
# rate-distortion bound of each synthetic family's calibration window
# (both parts' joint covariance, reverse water-filling) beside fp8-mix's
# nmse on its test window (bench/bench_rd5), on the windows
# bench/wz_low_rate.sh measures (4 layers x 4,096 tokens, seed 3).
# docs/wz-format.md, "What 5.0 bits/value can reach", holds the table.
: "${WZPLAN:=./wzplan}" "${BITS:=5.0}" "${RD5:=bench/bench_rd5}"
: "${FAMILIES:=iid mla-a mla-b mla-p v4-c4 v4-c128}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wzplan-rd.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
set --
for f in $FAMILIES; do
	"$WZPLAN" trace synth-cache --family "$f" --seed 3 --layers 4 --tokens 4096 --queries 64 \
		--heads 8 --quiet --out "$tmp" > /dev/null || exit 1
	set -- "$@" "$tmp/$f-cal-0.safetensors" "$tmp/$f-test-0.safetensors"
done
"$RD5" "$BITS" "$@"
