#!/bin/sh
# Streaming restore benchmark (printed, not timed as a test): DeepSeek-V3-
# shaped synthetic sessions (61 layers x (512 + 64), mla-b statistics) of
# two lengths packed at wzx-5.4, then `wzplan codec unpack --to
# transformed` (TO=wz or bf16 for the others) on one thread and on every
# core, to standard output discarded (medians of 3, alternated) and once
# into a file: wall time and peak memory (maximum resident set, from
# /usr/bin/time) for each.  Peak memory that
# does not grow with the session's length is the must-show: unpack holds
# the container's index (16 bytes a block) and a run of blocks, pack the
# trace's header, a run of blocks and the index it writes.  Pack's wall
# time and peak are printed for every core, beside the trace file's size.
# TOKENS="a b" sets the lengths, LAYERS the layer count (61, DeepSeek-V3's,
# unless set: a quick run uses fewer).
: "${WZPLAN:=./wzplan}"
: "${TOKENS:=1024 4096}"
: "${LAYERS:=61}"
: "${TO:=transformed}"
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
echo "$LAYERS layers x (512 + 64), mla-b, wzx-5.4; unpack --to $TO"
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
	# each count three times, the counts alternated so that a change in the
	# machine's load falls on both; the output to standard output and
	# discarded, so the time is the restore's, not the disk's (the last row
	# writes a file, for comparison)
	: > "$tmp/walls"
	for rep in 1 2 3; do
		for th in 1 "$cores"; do
			/usr/bin/time -f "$th %e %M" -a -o "$tmp/walls" "$WZPLAN" codec unpack --in "$tmp/s.wzx" \
				--profile "$tmp/p.wzp" --to "$TO" --threads "$th" --out - > /dev/null 2>&1 || exit 1
			[ "$cores" = 1 ] && break
		done
	done
	for th in 1 "$cores"; do
		grep "^$th " "$tmp/walls" | sort -n -k2 | awk -v L="$LAYERS" -v T="$T" -v th="$th" -v s="$size" -v to="$TO" '
			{ w[NR] = $2; kb = kb > $3 ? kb : $3 }
			END { m = NR % 2 ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2
			      printf "%8d %8d %9.1fM %8.2f %10.3f %12.1f  to %s, discarded, median of %d\n", T, th, s / 1048576, m, L * T / m / 1e6, kb / 1024, to, NR }'
		[ "$th" = "$cores" ] && break
	done
	/usr/bin/time -f '%e %M' -o "$tmp/time" "$WZPLAN" codec unpack --in "$tmp/s.wzx" \
		--profile "$tmp/p.wzp" --to "$TO" --threads "$cores" --out "$tmp/y.out" > /dev/null || exit 1
	rm -f "$tmp/y.out"
	read -r wall kb < "$tmp/time"
	awk -v L="$LAYERS" -v T="$T" -v th="$cores" -v s="$size" -v w="$wall" -v kb="$kb" -v to="$TO" 'BEGIN {
		printf "%8d %8d %9.1fM %8.2f %10.3f %12.1f  to %s, into a file (one run)\n", T, th, s / 1048576, w, L * T / w / 1e6, kb / 1024, to }'
done
