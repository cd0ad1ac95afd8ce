#!/bin/sh
# Runs every example in the man pages: lines "$ wzplan ..." between .EX and
# .EE.  Each must exit 0.  A page's examples run in order, in a scratch
# folder of their own, so one page's runs never meet another's archive.
. "$top_srcdir/tests/cli/lib.sh"
bindir=$(dirname "$WZPLAN")
# Examples that archive runs must not touch the real archive: each page's
# default archive is in its own folder.
unset WZPLAN_ARCHIVE
for page in "$top_srcdir"/man/*.[15]; do
	dir="$tmp/$(basename "$page")"
	mkdir -p "$dir"
	XDG_DATA_HOME="$dir/xdg"
	export XDG_DATA_HOME
	sed -n '/^\.EX/,/^\.EE/p' "$page" | sed -n 's/^\\\$ //p; s/^\$ //p' | sed 's/\\-/-/g; s/\\(aq/'"'"'/g' > "$tmp/examples"
	while IFS= read -r line; do
		case "$line" in wzplan*) ;; *) continue ;; esac
		(cd "$dir" && PATH="$bindir:$PATH" eval "$line") > "$tmp/ex.out" 2> "$tmp/ex.err"
		s=$?
		ok $s "$(basename "$page"): $line"
		[ $s -eq 0 ] || sed 's/^/#   /' "$tmp/ex.err" | head -5
	done < "$tmp/examples"
done
[ "$n" -gt 0 ]; ok $? "the man pages have examples"
done_testing
