#!/bin/sh
# An earlier build's codec beside this one's in one process
# (bench/bench_inproc.c): OLD is the earlier tree, built in place (its
# static libraries); their objects are linked as one with every symbol
# they define renamed old_*, so both libraries live in one program.
#   bench/bench_inproc.sh OLD ROUNDS "old wz-5.44" "new wzt8-5.44" ...
# Run from this tree's top directory after make.
set -e
if [ $# -lt 3 ]; then
	echo "usage: bench_inproc.sh OLD ROUNDS \"old|new FORMAT\"..." >&2
	exit 2
fi
old=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -f "$old/.libs/libwzplan.a" ]; then
	libs="$old/.libs/libwzplan.a"
else
	libs="$old/libwzcodec.a $old/libwzdata.a $old/libwzcommon.a"
fi
i=0
for a in $libs; do
	i=$((i + 1))
	mkdir "$work/x$i"
	(cd "$work/x$i" && ar x "$a")
done
ld -r -o "$work/old.o" "$work"/x*/*.o
nm --defined-only -g "$work/old.o" | awk '{ print $3, "old_" $3 }' >"$work/syms"
objcopy --redefine-syms="$work/syms" "$work/old.o" "$work/old_renamed.o"
${CC:-gcc} -std=c11 -D_GNU_SOURCE -O2 -I. -o "$work/bench_inproc" bench/bench_inproc.c \
	"$work/old_renamed.o" libwztraces.a libwzdata.a .libs/libwzplan.a \
	-lsqlite3 -ljansson -lxxhash -lzstd -lcsv -lm -lpthread
"$work/bench_inproc" "$@"
