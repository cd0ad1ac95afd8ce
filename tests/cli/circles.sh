#!/bin/sh
# Circles of calls between the files of a library: file A calls file B when
# A's object uses a symbol B's object defines (nm).  A circle of more than
# two files means none of them can be read, tested or moved alone; this
# test fails on one, in cli/ and runs/ (docs/architecture.md).
#
#   tests/cli/circles.sh [LIBRARY.a...]   prints every circle, exits 1 if
#                                         one has more than two files
# The libraries are found in the build folder (top_builddir, default .).
set -eu
: "${top_builddir:=.}"
self_test=0
if [ $# -eq 0 ]; then
	set -- libwzcli.a libwzruns.a
	self_test=1
fi
command -v nm > /dev/null 2>&1 || { echo "1..0 # SKIP nm not found"; exit 0; }

echo "1..$(($# + self_test))"
n=0
status=0
# The check itself, on a library of three files that call each other in a
# circle (a -> b -> c -> a) beside one that only calls in (d -> a).
if [ "$self_test" -eq 1 ]; then
	n=1
	fx=$(mktemp -d "${TMPDIR:-/tmp}/circles.XXXXXX")
	printf 'int b(void);\nint a(void) { return b(); }\n' > "$fx/a.c"
	printf 'int c(void);\nint b(void) { return c(); }\n' > "$fx/b.c"
	printf 'int a(void);\nint c(void) { return a(); }\n' > "$fx/c.c"
	printf 'int a(void);\nint d(void) { return a(); }\n' > "$fx/d.c"
	got=
	if (cd "$fx" && ${CC:-cc} -c a.c b.c c.c d.c && ar rc libfx.a a.o b.o c.o d.o) > /dev/null 2>&1; then
		got=$(top_builddir=$fx sh "$0" libfx.a 2>&1 | grep '^# libfx.a: circle' || true)
	fi
	rm -rf "$fx"
	if [ "$got" = "# libfx.a: circle of 3: a b c" ]; then
		echo "ok 1 - finds a circle of three files (and not the file calling into it)"
	else
		echo "not ok 1 - finds a circle of three files; got '$got'"
		status=1
	fi
fi
for lib in "$@"; do
	n=$((n + 1))
	dir=$lib
	if [ ! -f "$top_builddir/$lib" ]; then
		echo "not ok $n - $lib: not in $top_builddir (build first)"
		status=1
		continue
	fi
	# "file kind symbol" lines from nm -A ("lib.a:libwzcli_a-cmd_codec.o:
	# U name"); a file is its source's name (cmd_codec).
	circles=$(nm -A "$top_builddir/$lib" | awk 'NF >= 3 {
			split($1, at, ":"); f = at[2]
			sub(/\.o$/, "", f); sub(/^.*_a-/, "", f)
			print f, $(NF - 1), $NF
		}' | awk '
		$2 == "U" { use[++nu] = $1 " " $3; next }
		$2 ~ /^[TDBRC]$/ { def[$3] = $1; files[$1] = 1 }
		END {
			for (f in files) names[++nf] = f
			for (i = 1; i <= nu; i++) {
				split(use[i], p, " ")
				if ((p[2] in def) && def[p[2]] != p[1] && !((p[1], def[p[2]]) in reach)) {
					reach[p[1], def[p[2]]] = 1
					edges++
				}
			}
			# the calls seen, so that a graph read wrong cannot pass empty
			print 0, "calls:" edges + 0
			for (k = 1; k <= nf; k++)
				for (i = 1; i <= nf; i++)
					if ((names[i], names[k]) in reach)
						for (j = 1; j <= nf; j++)
							if ((names[k], names[j]) in reach)
								reach[names[i], names[j]] = 1
			# A circle: the files that reach each other, printed once.
			for (i = 1; i <= nf; i++) {
				a = names[i]
				if (a in done || !((a, a) in reach))
					continue
				line = ""; size = 0
				for (j = 1; j <= nf; j++) {
					b = names[j]
					if ((a, b) in reach && (b, a) in reach) {
						done[b] = 1; size++; mem[size] = b
					}
				}
				# sorted, so the output is the same on every run
				for (x = 2; x <= size; x++)
					for (y = x; y > 1 && mem[y - 1] > mem[y]; y--) {
						t = mem[y]; mem[y] = mem[y - 1]; mem[y - 1] = t
					}
				for (x = 1; x <= size; x++)
					line = line (x > 1 ? " " : "") mem[x]
				print size, line
			}
		}' | sort -k1,1nr -k2)
	big=$(printf '%s\n' "$circles" | awk '$1 > 2' | grep -c . || true)
	calls=$(printf '%s\n' "$circles" | awk '$1 == 0 { sub(/^calls:/, "", $2); print $2 }')
	printf '%s\n' "$circles" | awk -v d="$dir" '$1 > 0 { n = $1; $1 = ""; printf "# %s: circle of %d:%s\n", d, n, $0 }'
	echo "# $dir: ${calls:-0} calls between its files"
	if [ "${calls:-0}" -eq 0 ]; then
		echo "not ok $n - $dir: no calls between its files found (nm's output not understood)"
		status=1
	elif [ "$big" -gt 0 ]; then
		echo "not ok $n - $dir: $big circle(s) of more than two files"
		status=1
	else
		echo "ok $n - $dir: no circle of more than two files"
	fi
done
exit $status
