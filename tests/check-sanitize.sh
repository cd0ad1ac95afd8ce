#!/bin/sh
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer
# (docs/fuzzing.md, "The test suite under sanitizers"), in a folder of its
# own: a copy of the sources (a source folder that is itself configured
# cannot host an out-of-tree build) and a build folder beside it, with
# configure --enable-sanitizers.  Usage: check-sanitize.sh SRC OUT, where
# OUT is made afresh; JOBS (default 2) sets make's -j.  Exits with make
# check's status; OUT/build/test-suite.log says what failed.
set -eu
src=$1
out=$2
jobs=${JOBS:-2}
case "$out" in /*) ;; *) out=$(pwd)/$out ;; esac
rm -rf "$out"
mkdir -p "$out/src" "$out/build"
if git -C "$src" rev-parse --git-dir > /dev/null 2>&1; then
	# tracked files and new ones not ignored: what a commit of this tree would hold
	(cd "$src" && git ls-files -co --exclude-standard -z | tar --null -T - --ignore-failed-read -cf -) |
		tar -xf - -C "$out/src"
else
	# a release tarball's tree: its distribution files
	(cd "$src" && tar --exclude=./sanitize-build -cf - .) | tar -xf - -C "$out/src"
	(cd "$out/src" && { [ ! -f Makefile ] || make distclean > /dev/null; })
fi
# the tests find the shared samples beside the source folder (../shared)
if [ -d "$src/../shared" ]; then
	ln -s "$(cd "$src/../shared" && pwd)" "$out/shared"
fi
(cd "$out/src" && autoreconf -fi > "$out/autoreconf.log" 2>&1)
cd "$out/build"
"$out/src/configure" --enable-sanitizers CFLAGS='-O1 -g' > configure.log 2>&1
echo "check-sanitize: building in $out/build (make -j$jobs)"
make -j"$jobs" > build.log 2>&1 || { tail -n 40 build.log; exit 1; }
echo "check-sanitize: make check (make -j$jobs -k)"
status=0
make -j"$jobs" -k check > check.log 2>&1 || status=$?
sed -n '/^# TOTAL/,/^# ERROR/p' check.log | head -n 7
grep -E '^(FAIL|ERROR|XPASS):' check.log || true
exit "$status"
