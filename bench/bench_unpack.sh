#!/bin/sh
# Streaming restore benchmark (printed, not timed as a test): DeepSeek-V3-
# shaped synthetic sessions (61 layers x (512 + 64), mla-b statistics) of
# two lengths packed at wzx-5.4, then `wzplan codec unpack --to
# wz` (records) on one thread and on every core: wall time and peak memory
# (maximum resident set, from /usr/bin/time) for each.  Peak memory that
# does not grow with the session's length is the must-show: unpack holds
# the container's index (16 bytes a block) and a run of blocks, pack the
# trace's header, a run of blocks and the index it writes.  Pack's wall
# time and peak are printed for every core, beside the trace file's size.
# TOKENS="a b" sets the lengths, LAYERS the layer count (61, DeepSeek-V3's,
# unless set: a quick run uses fewer).
: "${WZPLAN:=./wzplan}"
: "${TOKENS:=1024 4096}"
: "${LAYERS:=61}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wzplan-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cores=$(nproc 2>/dev/null || echo 1)
if [ ! -x /usr/bin/time ]; then
	echo "bench_unpack: /usr/bin/time is needed for peak memory; skipped"
	exit 0
fi
first=$(echo $TOKENS | cut -d' ' -f1)
"$WZPLAN" trace synth-cache --family mla-b --seed 5 --layers "$LAYERS" --tokens "$first" --queries 0 \
	--calibration 1 --test 0 --quiet --out "$tmp/cal" > /dev/null || exit 1
"$WZPLAN" codec prepare --trace "$tmp/cal/mla-b-cal-0.safetensors" --out "$tmp/p.wzp" > /dev/null || exit 1
echo "$LAYERS layers x (512 + 64), mla-b, wzx-5.4; unpack --to wz"
printf '%8s %8s %10s %8s %10s %12s\n' tokens threads container wall_s Mtok/s peak_MiB
for T in $TOKENS; do
	"$WZPLAN" trace synth-cache --family mla-b --seed 5 --layers "$LAYERS" --tokens "$T" --queries 0 \
		--calibration 0 --test 1 --quiet --out "$tmp/t$T" > /dev/null || exit 1
	/usr/bin/time -f '%e %M' -o "$tmp/ptime" "$WZPLAN" codec pack --trace "$tmp/t$T/mla-b-test-0.safetensors" \
		--profile "$tmp/p.wzp" --rate 5.4 --out "$tmp/s.wzx" > /dev/null || exit 1
	read -r pwall pkb < "$tmp/ptime"
	tsize=$(wc -c < "$tmp/t$T/mla-b-test-0.safetensors")
	rm -rf "$tmp/t$T"
	size=$(wc -c < "$tmp/s.wzx")
	awk -v T="$T" -v c="$cores" -v w="$pwall" -v kb="$pkb" -v ts="$tsize" 'BEGIN {
		printf "%8d pack on %d threads: %.2f s, peak %.1f MiB (trace file %.1f MiB)\n", T, c, w, kb / 1024, ts / 1048576 }'
	for th in 1 "$cores"; do
		/usr/bin/time -f '%e %M' -o "$tmp/time" "$WZPLAN" codec unpack --in "$tmp/s.wzx" \
			--profile "$tmp/p.wzp" --to wz --threads "$th" --out "$tmp/y.rec" > /dev/null || exit 1
		rm -f "$tmp/y.rec"
		read -r wall kb < "$tmp/time"
		awk -v L="$LAYERS" -v T="$T" -v th="$th" -v s="$size" -v w="$wall" -v kb="$kb" 'BEGIN {
			printf "%8d %8d %9.1fM %8.2f %10.3f %12.1f\n", T, th, s / 1048576, w, L * T / w / 1e6, kb / 1024 }'
		[ "$th" = "$cores" ] && break
	done
done
