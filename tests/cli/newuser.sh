#!/bin/sh
# The path a new user walks: the overview names every command, the README's
# tour uses only files it writes first or that ship, messages say what
# makes a failing command work, options mean what they mean elsewhere, and
# what a command concludes is on standard output.
. "$top_srcdir/tests/cli/lib.sh"
cd "$tmp" || exit 1

# wzplan(1) lists every command `wzplan help` lists.
run "$WZPLAN" help
for c in $(printf '%s\n' "$out$err" | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'); do
	grep -q "^\.B $c\$" "$top_srcdir/man/wzplan.1"; ok $? "wzplan(1) lists '$c'"
done
grep -q '^\.B sweep$' "$top_srcdir/man/wzplan.1"; ok $? "wzplan(1) lists sweep"

# The README's tour: every file it reads is shipped or written by a line
# before it.
python3 - "$top_srcdir" <<'PY' > tour.txt
import os, re, sys
top = sys.argv[1]
text = open(os.path.join(top, "README.md")).read()
tour = text.split("## A short tour", 1)[1].split("```")[1]
made = set()
for line in tour.splitlines():
    cmd = line.split("#")[0] if not line.startswith("printf") else line
    words = cmd.split()
    for i, w in enumerate(words):
        if i and words[i - 1] in (">", "--out", "-o"):
            made.add(w.rstrip("/"))
    if words[:1] == ["cp"]:
        made.add(words[-1])
    for i, w in enumerate(words):
        if not re.search(r"\.(csv|sweep|scenario|safetensors|wzp)$", w) or "*" in w:
            continue
        if i and words[i - 1] in (">", "--out", "-o") or (words[:1] == ["cp"] and i == len(words) - 1):
            continue
        ok = w in made or os.path.exists(os.path.join(top, w)) or any(w.startswith(m + "/") for m in made)
        print(("ok " if ok else "missing ") + w)
PY
missing=$(grep '^missing' tour.txt)
[ -s tour.txt ] && [ -z "$missing" ]; ok $? "the tour reads only files it writes or that ship ($(wc -l < tour.txt) checked)${missing:+: $missing}"

# cost --gpu H200: the price set of the scenario has no H200 row; the
# message says what prices it.
run "$WZPLAN" cost --gpu H200
expect_rc 2 "cost --gpu H200 without H200 prices in the price set"
contains "$err" "--price-set catalog" "the message names --price-set catalog"
run "$WZPLAN" cost --gpu H200 --price-set catalog
expect_rc 0 "and with it, cost runs"

# sim's cache format is --cache-format; --format still works, with a note.
run "$WZPLAN" sim --cache-format wz-5.44 --users 16 --replicas 1 --duration 60 --warmup 5 --no-archive
expect_rc 0 "sim --cache-format"
contains "$out" "wz-5.44" "simulates that format"
run "$WZPLAN" sim --format wz-5.44 --users 16 --replicas 1 --duration 60 --warmup 5 --no-archive
expect_rc 0 "sim --format, the old spelling, still works"
contains "$err" "--format is now --cache-format" "with a note saying so"

# propose --simulate: the fleets sized by simulation are on standard output,
# and the output folder is an ordinary one (0777 less the umask).
umask 022
run "$WZPLAN" propose --simulate --users 64 --duration 120 --warmup 10 --out sized --no-archive
expect_rc 0 "propose --simulate"
[ "$(stat -c %a sized)" = 755 ]; ok $? "the output folder has mode 755 under umask 022 ($(stat -c %a sized))"
[ "$(stat -c %a sized/charts)" = 755 ]; ok $? "and so has its charts folder"

# A run refused at its first request has no latency to print: progress
# says none was measured, not 0.
run "$WZPLAN" size --users 20000 --formats fp8-mix --max-replicas 1 --duration 60 --warmup 5 --no-archive
case "$err" in *"p99 TTFT 0.000"*) false ;; *) true ;; esac; ok $? "no 'p99 TTFT 0.000' for a run with no first token"
contains "$err" "p99 TTFT none measured" "but that none was measured"
cd / && done_testing
