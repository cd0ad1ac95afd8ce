#!/bin/sh
# Simulator benchmark (printed, not timed as a test): 24 simulated hours of
# the product page's 10,000-user population, and `wzplan size` for three
# formats.  Targets: <= 60 s and <= 10 min on the build machine.
: "${WZPLAN:=./wzplan}"
now() { date +%s.%N; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wzplan-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for policy in resident offload; do
	t0=$(now)
	"$WZPLAN" sim --duration 86400 --idle-policy "$policy" -o "$tmp/sim.out" 2> "$tmp/sim.err" || exit 1
	t1=$(now)
	events=$(sed -n 's/^events = //p' "$tmp/sim.out")
	replicas=$(sed -n 's/^replicas = //p' "$tmp/sim.out" | head -1)
	awk -v a="$t0" -v b="$t1" -v e="$events" -v p="$policy" -v r="$replicas" 'BEGIN {
		printf "sim: 24 h, 10,000 users at 100k, fp8-mix, %s, %s replicas: %.2f s wall, %d events, %.0f events/s\n", p, r, b - a, e, e / (b - a) }'
done

t0=$(now)
"$WZPLAN" size --formats fp8-mix,wz-5.44,int4-g64 --idle-policy offload -o "$tmp/size.out" 2> "$tmp/size.err" || exit 1
t1=$(now)
runs=$(grep -c ' replicas: ' "$tmp/size.err")
awk -v a="$t0" -v b="$t1" -v n="$runs" 'BEGIN {
	printf "size: 3 formats, offload, 1 h simulated per run: %.1f s wall, %d simulations\n", b - a, n }'
cat "$tmp/size.out"
