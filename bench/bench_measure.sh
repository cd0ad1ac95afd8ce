#!/bin/sh
# `codec measure --iso` on one thread (the reference) and on every core, in
# the same run: wall time, the median of RUNS runs each, and the speed-up.
# Two synthetic test windows (LAYERS x TOKENS, mla-b statistics, queries),
# six formats and the 17-rate iso sweep: 2 x (1 + 6 + 17) jobs.  The
# outputs of the two thread counts are compared byte for byte.
: "${WZPLAN:=./wzplan}"
: "${LAYERS:=4}" "${TOKENS:=1024}" "${RUNS:=3}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wzplan-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cores=$(nproc 2>/dev/null || echo 1)
"$WZPLAN" trace synth-cache --family mla-b --seed 5 --layers "$LAYERS" --tokens "$TOKENS" \
	--queries 8 --heads 4 --calibration 1 --test 2 --quiet --out "$tmp/t" > /dev/null || exit 1
"$WZPLAN" codec prepare --trace "$tmp/t/mla-b-cal-0.safetensors" --out "$tmp/p.wzp" > /dev/null 2>&1 || exit 1
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for th in 1 "$cores"; do
	: > "$tmp/times.$th"
	i=0
	while [ $i -lt "$RUNS" ]; do
		s=$(date +%s.%N)
		"$WZPLAN" codec measure --trace "$tmp/t/mla-b-test-0.safetensors" "$tmp/t/mla-b-test-1.safetensors" \
			--profile "$tmp/p.wzp" --formats fp8-mix,int4-g64,nvfp4,wz-4.97,wz-5.44,wz-6.31 --iso \
			--boot 100 --threads "$th" --no-archive --format csv -o "$tmp/out.$th" 2> /dev/null || exit 1
		e=$(date +%s.%N)
		awk -v s="$s" -v e="$e" 'BEGIN { print e - s }' >> "$tmp/times.$th"
		i=$((i + 1))
	done
done
one=$(median < "$tmp/times.1")
all=$(median < "$tmp/times.$cores")
printf 'codec measure --iso, 2 windows of %s layers x %s tokens, median of %s runs:\n' "$LAYERS" "$TOKENS" "$RUNS"
printf '  1 thread (reference): %.2f s\n  %s threads: %.2f s  (%.2fx)\n' "$one" "$cores" "$all" \
	"$(awk -v a="$one" -v b="$all" 'BEGIN { print a / b }')"
cmp -s "$tmp/out.1" "$tmp/out.$cores" && echo "  outputs byte-identical" || { echo "  outputs DIFFER"; exit 1; }
