#!/bin/sh
# wz at or below 5.0 bits/value against fp8-mix, family by family: attention
# KL and nmse ratios with paired bootstrap 95% intervals (`codec compare`),
# on the synthetic families (one calibration and one test window each, 4
# layers x 4,096 tokens, 64 queries x 8 heads, seed 3; profiles by `codec
# prepare`'s defaults) and on the project model's caches (data/real: the
# shipped profile and one prepared undoing RoPE in every layer, as
# docs/wz-format.md, "RoPE undone").  docs/wz-format.md, "The position part
# at low rates", holds the table this prints and what it means.  With
# PREDICT=1, each family and the real windows also through a profile that
# undoes RoPE in every layer (`--rope-theta 10000 --rope-layers all`,
# rows "(RoPE undone)"), and the same with the position part predicted
# from the latent where it gains (`--predict auto`, profile version 7,
# rows "(predicted)"; docs/wz-format.md, "Predicted position part").
# wze-5.0, the same record size entropy-coded, is among the default
# formats (docs/wze-format.md, "Why (measured)").
: "${WZPLAN:=./wzplan}" "${REAL:=data/real}" "${BOOT:=200}" "${FORMATS:=wz-4.97,wz-5.0,wze-5.0}"
: "${PREDICT:=0}"
: "${FAMILIES:=iid mla-a mla-b mla-p v4-c4 v4-c128}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wzplan-lowrate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for f in $FAMILIES; do
	"$WZPLAN" trace synth-cache --family "$f" --seed 3 --layers 4 --tokens 4096 --queries 64 \
		--heads 8 --quiet --out "$tmp" > /dev/null || exit 1
	"$WZPLAN" codec prepare --trace "$tmp/$f-cal-0.safetensors" --out "$tmp/$f.wzp" > /dev/null 2>&1 || exit 1
	"$WZPLAN" codec compare --trace "$tmp/$f-test-0.safetensors" --profile "$tmp/$f.wzp" \
		--formats "$FORMATS" --against fp8-mix --boot "$BOOT" 2> /dev/null | grep -- '-test-0 ' || exit 1
	[ "$PREDICT" = 1 ] || continue
	for v in "RoPE undone:" "predicted:--predict auto"; do
		"$WZPLAN" codec prepare --trace "$tmp/$f-cal-0.safetensors" --rope-theta 10000 \
			--rope-layers all ${v#*:} --out "$tmp/$f-v.wzp" > /dev/null 2>&1 || exit 1
		"$WZPLAN" codec compare --trace "$tmp/$f-test-0.safetensors" --profile "$tmp/$f-v.wzp" \
			--formats "$FORMATS" --against fp8-mix --boot "$BOOT" 2> /dev/null |
			grep -- '-test-0 ' | sed "s/\$/  (${v%%:*})/" || exit 1
	done
done
[ -f "$REAL/model.wzp" ] || exit 0
set -- "$REAL"/*-test-*.safetensors
"$WZPLAN" codec compare --trace "$@" --profile "$REAL/model.wzp" --formats "$FORMATS" \
	--against fp8-mix --boot "$BOOT" 2> /dev/null | grep -- '-test-' | sed 's/$/  (model.wzp)/' || exit 1
"$WZPLAN" codec prepare --trace "$REAL"/*-calibration-*.safetensors --rope-theta 10000 \
	--rope-yarn 32,1024 --rope-layers all --out "$tmp/real.wzp" > /dev/null 2>&1 || exit 1
"$WZPLAN" codec compare --trace "$@" --profile "$tmp/real.wzp" --formats "$FORMATS" \
	--against fp8-mix --boot "$BOOT" 2> /dev/null | grep -- '-test-' | sed 's/$/  (RoPE undone)/'
[ "$PREDICT" = 1 ] || exit 0
"$WZPLAN" codec prepare --trace "$REAL"/*-calibration-*.safetensors --rope-theta 10000 \
	--rope-yarn 32,1024 --rope-layers all --predict auto --out "$tmp/real-p.wzp" > /dev/null 2>&1 || exit 1
"$WZPLAN" codec compare --trace "$@" --profile "$tmp/real-p.wzp" --formats "$FORMATS" \
	--against fp8-mix --boot "$BOOT" 2> /dev/null | grep -- '-test-' | sed 's/$/  (predicted)/'
