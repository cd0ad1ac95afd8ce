#!/bin/sh
# propose --live-kl: the live-model KL summary of traces/capture/ in a
# proposal, recorded and verified; malformed summaries refused by member.
. "$top_srcdir/tests/cli/lib.sh"
good() {
	cat <<'JSON'
{"model": "our-mla-16m", "context": 4096, "prefix": "exact", "score_tokens": 512,
 "categories": {"code": {"windows": 2, "tokens": 1022,
   "rows": {"exact": {"bits": null, "kl": 0.0},
	    "fp8-mix": {"bits": 8.06, "kl": 1.0e-5, "kl_lo": 0.9e-5, "kl_hi": 1.1e-5, "ratio": null,
			"top1": 0.998, "dlogloss": 1e-4, "better": null},
	    "wz-5.44": {"bits": 5.44, "kl": 0.8e-5, "kl_lo": 0.7e-5, "kl_hi": 0.9e-5, "ratio": 0.8,
			"ratio_lo": 0.7, "ratio_hi": 0.9, "top1": 0.999, "dlogloss": 5e-5, "better": 0.61}},
   "iso": {"bits": 5.2, "lo": 5.0, "hi": 5.4, "fewer_bits": 1.55}}}}
JSON
}
good > "$tmp/good.json"
run "$WZPLAN" propose --live-kl "$tmp/good.json" --out "$tmp/o" --archive "$tmp/a.db" -q
expect_rc 0 "propose --live-kl"
md=$(cat "$tmp/o/proposal.md" 2>/dev/null)
contains "$md" "## Live-model quality" "the proposal has the live-model section"
contains "$md" "| wz-5.44 | 5.44 | 8e-06 [7e-06, 9e-06] | 0.80× [0.70, 0.90] | 0.9990 | 61% |" "a format's row"
contains "$md" "**5.20** bits/value [95% CI 5.00, 5.40], **1.55× fewer bits**" "iso-quality bits by live KL"
contains "$md" "our-mla-16m" "the model is named"
case $md in *"not monotone"*) false ;; esac; ok $? "no rate is named as losing where none loses"
run "$WZPLAN" verify 1 --archive "$tmp/a.db"
expect_rc 0 "verify recomputes the run with its live-KL figures"
# A rate above the iso point that still loses is named: wz-6.0 here.
good | sed 's/"iso":/"wz-6.0": {"bits": 6.0, "kl": 1.3e-5, "kl_lo": 1.2e-5, "kl_hi": 1.4e-5, "ratio": 1.3, "ratio_lo": 1.2, "ratio_hi": 1.4, "top1": 0.997, "dlogloss": 2e-4, "better": 0.3}},\n   "iso":/; s/"better": 0.61}},/"better": 0.61},/' > "$tmp/lose.json"
run "$WZPLAN" propose --live-kl "$tmp/lose.json" --out "$tmp/l" --archive "$tmp/l.db" -q
expect_rc 0 "propose --live-kl with a losing higher rate"
contains "$(cat "$tmp/l/proposal.md" 2>/dev/null)" "higher rates that still lose to fp8-mix: wz-6.0" \
	"rates above the iso point that lose are named"
run "$WZPLAN" archive show 1 --archive "$tmp/a.db"
contains "$out" "live_kl" "the summary is an input of the run"

bad() { # bad NAME SED-EXPRESSION EXPECTED-FRAGMENT
	good | sed "$2" > "$tmp/bad.json"
	run "$WZPLAN" propose --live-kl "$tmp/bad.json" --out "$tmp/b" --archive "$tmp/b.db" -q
	expect_rc 2 "$1"
	contains "$err" "$3" "$1: the message names it"
	[ ! -e "$tmp/b/proposal.md" ]; ok $? "$1: no proposal written"
}
bad "an unknown format" 's/"wz-5.44"/"fp9"/' 'rows.fp9: not a cache format'
bad "NaN in a number" 's/"kl": 0.8e-5/"kl": NaN/' 'bad.json: line'
bad "a string for a number" 's/"top1": 0.999/"top1": "high"/' 'rows.wz-5.44.top1: not a finite number'
bad "a model name with a backquote" 's/"our-mla-16m"/"x`touch owned`"/' 'model: missing, or not a plain name'
bad "score_tokens above the context" 's/"score_tokens": 512/"score_tokens": 9999/' 'score_tokens'
bad "a prefix mode of its own" 's/"prefix": "exact"/"prefix": "maybe"/' 'prefix'
bad "a KL of -5" 's/"kl": 0.8e-5/"kl": -5/' 'rows.wz-5.44.kl: negative'
bad "a top-1 agreement of 7.0" 's/"top1": 0.999/"top1": 7.0/' 'rows.wz-5.44.top1: not a fraction from 0 to 1'
bad "iso bits of -7" 's/"iso": {"bits": 5.2/"iso": {"bits": -7/' 'categories.code.iso.bits: not a number of bits per value'
[ ! -e owned ] && [ ! -e "$tmp/owned" ]; ok $? "nothing ran from the model name"
printf '{"model": "m", "context": 1' > "$tmp/trunc.json"
run "$WZPLAN" propose --live-kl "$tmp/trunc.json" --out "$tmp/c" --archive "$tmp/c.db" -q
expect_rc 2 "a truncated file"
run "$WZPLAN" propose --live-kl "$tmp/missing.json" --out "$tmp/d" --archive "$tmp/d.db" -q
contains "$err" "missing.json" "a missing file is named"
# The shipped real windows, profile and live-KL summary make a proposal
# with measured and live-model quality and their provenance.
r="$top_srcdir/data/real"
run "$WZPLAN" propose --trace "$r"/code-test-c32768-w*.safetensors "$r"/prose-test-c32768-w*.safetensors \
	--profile "$r/model.wzp" --live-kl "$r/live-kl-c32768.json" --out "$tmp/real" --archive "$tmp/real.db" -q
expect_rc 0 "propose with the shipped real windows"
md=$(cat "$tmp/real/proposal.md" 2>/dev/null)
contains "$md" "split \`test\`" "the windows' split is in the proposal"
contains "$md" "document-level split" "the capture's provenance is in the proposal"
contains "$md" "### prose" "live-model KL per category"
run "$WZPLAN" codec prepare --trace "$r/prose-test-c32768-w0.safetensors" --out "$tmp/x.wzp"
expect_rc 2 "prepare refuses the shipped test window"
done_testing
