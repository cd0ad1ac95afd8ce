#!/bin/sh
# Streaming restore benchmark (printed, not timed as a test): DeepSeek-V3-
# shaped synthetic sessions (61 layers x (512 + 64), mla-b statistics) of
# two lengths packed at wzx-5.4, then `wzplan codec unpack --to
# wz` (records) on one thread and on every core: wall time and peak memory
# (maximum resident set, from /usr/bin/time) for each.  Peak memory that
# does not grow with the session's length is the must-show; the container
# itself is mapped, not read.  TOKENS="a b" sets the lengths.
: "${WZPLAN:=./wzplan}"
: "${TOKENS:=1024 4096}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wzplan-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cores=$(nproc 2>/dev/null || echo 1)
if [ ! -x /usr/bin/time ]; then
	echo "bench_unpack: /usr/bin/time is needed for peak memory; skipped"
	exit 0
fi
first=$(echo $TOKENS | cut -d' ' -f1)
"$WZPLAN" trace synth-cache --family mla-b --seed 5 --layers 61 --tokens "$first" --queries 0 \
	--calibration 1 --test 0 --quiet --out "$tmp/cal" > /dev/null || exit 1
"$WZPLAN" codec prepare --trace "$tmp/cal/mla-b-cal-0.safetensors" --out "$tmp/p.wzp" > /dev/null || exit 1
printf '%8s %8s %10s %8s %10s %12s\n' tokens threads container wall_s Mtok/s peak_MiB
for T in $TOKENS; do
	"$WZPLAN" trace synth-cache --family mla-b --seed 6 --layers 61 --tokens "$T" --queries 0 \
		--calibration 0 --test 1 --quiet --out "$tmp/t$T" > /dev/null || exit 1
	"$WZPLAN" codec pack --trace "$tmp/t$T/mla-b-test-0.safetensors" --profile "$tmp/p.wzp" \
		--rate 5.4 --out "$tmp/s.wzx" > /dev/null || exit 1
	rm -rf "$tmp/t$T"
	size=$(wc -c < "$tmp/s.wzx")
	for th in 1 "$cores"; do
		/usr/bin/time -f '%e %M' -o "$tmp/time" "$WZPLAN" codec unpack --in "$tmp/s.wzx" \
			--profile "$tmp/p.wzp" --to wz --threads "$th" --out "$tmp/y.rec" > /dev/null || exit 1
		rm -f "$tmp/y.rec"
		read -r wall kb < "$tmp/time"
		awk -v T="$T" -v th="$th" -v s="$size" -v w="$wall" -v kb="$kb" 'BEGIN {
			printf "%8d %8d %9.1fM %8.2f %10.3f %12.1f\n", T, th, s / 1048576, w, 61 * T / w / 1e6, kb / 1024 }'
		[ "$th" = "$cores" ] && break
	done
done
