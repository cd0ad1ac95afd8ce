#!/bin/sh
# Two builds' bench_rounds side by side: OLD and NEW (bench_rounds
# programs, the old one built from this source against the earlier
# library) run in turn N times, each run one round of its formats; prints
# each build's and format's median over the runs and its ratio to OLD's
# first format.  Alternating the two puts both under the same load.
#   bench/bench_vs.sh OLD NEW N 'OLD_FORMATS' 'NEW_FORMATS'
# e.g. bench/bench_vs.sh old/bench_rounds bench/bench_rounds 5 \
#        'wz-5.44 wz-4.97' 'wz-4.97 wz-5.44 wzt8-5.44'
set -e
if [ $# -ne 5 ]; then
	echo "usage: bench_vs.sh OLD NEW N 'OLD_FORMATS' 'NEW_FORMATS'" >&2
	exit 2
fi
old=$1 new=$2 n=$3 oldf=$4 newf=$5
out=$(mktemp)
trap 'rm -f "$out"' EXIT
i=0
while [ "$i" -lt "$n" ]; do
	# shellcheck disable=SC2086
	"$old" 1 $oldf | awk '/^median/ { print "old", $2, $4, $6 }' >>"$out"
	# shellcheck disable=SC2086
	"$new" 1 $newf | awk '/^median/ { print "new", $2, $4, $6 }' >>"$out"
	i=$((i + 1))
done
awk -v ref="$(echo "$oldf" | awk '{ print $1 }')" '
function med(list, k,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
	key = $1 " " $2
	if (!(key in enc)) order[++nk] = key
	enc[key] = enc[key] " " $3
	dec[key] = dec[key] " " $4
	runs[key]++
}
END {
	re = med(enc["old " ref]); rd = med(dec["old " ref])
	printf "%-4s %-12s %5s %10s %10s %8s %8s\n", "tree", "format", "runs", "enc GB/s",
	       "dec GB/s", "enc x", "dec x"
	for (k = 1; k <= nk; k++) {
		split(order[k], p, " ")
		e = med(enc[order[k]]); d = med(dec[order[k]])
		printf "%-4s %-12s %5d %10.4f %10.4f %8.2f %8.2f\n", p[1], p[2], runs[order[k]],
		       e, d, e / re, d / rd
	}
	printf "(ratios to old %s)\n", ref
}' "$out"
