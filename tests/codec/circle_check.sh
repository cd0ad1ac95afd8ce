#!/bin/sh
# The include graph of codec/ has no circle of more than two units
# (issue 44).  A unit is a header with the source of the same name
# (codec/wz/wz_flat.h and codec/wz/wz_flat.c are one unit); a unit reaches
# another when one of its files includes one of the other's.  Units that
# reach each other both ways form a circle (a strongly connected part of
# the graph); a circle of two (a header and the private header of its
# own source) is allowed, anything larger fails.  It also prints the
# arrows between codec/'s feature folders (formats/, profile/, wz/, wzx/
# with its legacy/, wze/, kvtc/, measure/, cuda/) and fails on any circle among them
# and on any arrow not in the list below (docs/codec-layout.md): a format
# never reaches the measurement, the measurement reaches the formats only
# through the traits table of the core (codec/registry.c).
# The files at codec/'s top are the core that wires the features together
# (the codec context, the traits table, the public API) and small
# headers every feature may use; they are units of the first check, not
# a folder of the second.
#
#   tests/codec/circle_check.sh [SRCDIR]      (default: $srcdir, else .)
#   CIRCLE_MAX=N  the largest circle allowed (default 2)
set -eu
top=${1:-${srcdir:-.}}
max=${CIRCLE_MAX:-2}
cd "$top"
allowed="profile>formats wz>profile wz>formats wzx>wz wzx>profile wzx>formats
measure>profile measure>formats kvtc>profile kvtc>formats wze>profile wze>formats cuda>formats cuda>profile cuda>wz cuda>wzx cuda>wze"
[ -d codec ] || { echo "circle_check: no codec/ under $top" >&2; exit 2; }

out=$(find codec -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) | LC_ALL=C sort |
while read -r f; do
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(codec\/[^"]*\)".*/\1/p' "$f" |
	while read -r inc; do echo "$f $inc"; done
	echo "$f"
done | awk -v max="$max" -v allowed="$allowed" '
function unit(p) { sub(/\.(c|h|cu)$/, "", p); return p }
function folder(p,   q) { q = p; sub(/^codec\//, "", q); if (q !~ /\//) return ""; sub(/\/.*/, "", q); return "codec/" q }
{
	a = unit($1); if (!(a in id)) { id[a] = ++n; name[n] = a }
	if (NF < 2) next
	b = unit($2); if (!(b in id)) { id[b] = ++n; name[n] = b }
	if (a != b) r[id[a], id[b]] = 1
	fa = folder($1); fb = folder($2)
	if (fa == "" || fb == "") next
	if (fa != fb && !((fa, fb) in farrow)) { farrow[fa, fb] = 1; fl[++nf] = fa " -> " fb }
	if (!(fa in fid)) { fid[fa] = ++nfo; fname[nfo] = fa }
	if (!(fb in fid)) { fid[fb] = ++nfo; fname[nfo] = fb }
	fr[fid[fa], fid[fb]] = (fa != fb)
}
END {
	# reachability (Warshall), units then folders
	for (k = 1; k <= n; k++) for (i = 1; i <= n; i++) if ((i, k) in r)
		for (j = 1; j <= n; j++) if ((k, j) in r) r[i, j] = 1
	for (k = 1; k <= nfo; k++) for (i = 1; i <= nfo; i++) if (fr[i, k])
		for (j = 1; j <= nfo; j++) if (fr[k, j]) fr[i, j] = 1
	bad = 0; circles = 0
	for (i = 1; i <= n; i++) {
		if (done[i]) continue
		s = name[i]; c = 1; done[i] = 1
		for (j = i + 1; j <= n; j++)
			if (!done[j] && ((i, j) in r) && ((j, i) in r)) { s = s " " name[j]; c++; done[j] = 1 }
		if (c > 1) {
			circles++
			printf "circle of %d units: %s\n", c, s
			if (c > max) bad = 1
		}
	}
	printf "%d units, %d circles, the largest allowed %d\n", n, circles, max
	print "arrows between feature folders:"
	na = split(allowed, al, /[ \n]+/)
	for (i = 1; i <= na; i++) ok[al[i]] = 1
	for (i = 1; i <= nf; i++) {
		split(fl[i], ab, / -> /)
		k = substr(ab[1], 7) ">" substr(ab[2], 7)
		print "  " fl[i] (k in ok ? "" : "   (not allowed)")
		if (!(k in ok)) bad = 1
	}
	for (i = 1; i <= nfo; i++) for (j = i + 1; j <= nfo; j++)
		if (fr[i, j] && fr[j, i]) { printf "folder circle: %s <-> %s\n", fname[i], fname[j]; bad = 1 }
	exit bad
}' 2>&1) && rc=0 || rc=$?
echo "1..1"
echo "$out" | sed 's/^/# /'
if [ "$rc" -eq 0 ]; then
	echo "ok 1 - codec/: no circle of more than $max units, the folders' arrows allowed"
else
	echo "not ok 1 - codec/: a circle of more than $max units, or an arrow not allowed (above)"
fi
