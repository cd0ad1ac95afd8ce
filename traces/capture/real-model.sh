#!/bin/sh
# The real-model measurements of docs/real-model.md, end to end, on the
# project's own model (or any transformers MLA model folder):
#
#   traces/capture/real-model.sh WORK [MODEL]
#
# WORK gets the corpus, calibration and test traces, the wz profile and
# every result; MODEL defaults to WORK/model (train.py's output; run
# `train.py --out WORK/model` first, or pass a folder).  Settings come from
# the environment (defaults in brackets): CONTEXT [32768] tokens per test
# window, WINDOWS [2] per category, SCORE [512] scored tokens per window,
# TRACE_TOKENS [1024] tokens kept per test trace, CAL_CONTEXTS
# ["1024 8192"], PREFIX [exact] (or live), FORMATS, WZ_GRID (the wz rates
# for iso-quality bits), MODEL_NAME [MODEL's folder name] (written into
# every trace and result), QUERY_WEIGHT [1] (prepare's --query-weight:
# the capture keeps 32 queries a window, enough for the attention-score
# error alone), PREPARE_ARGS (more prepare options, e.g. "--rope-theta
# 10000 --rope-yarn 32,1024" for the project's model: the position part
# coded after undoing its RoPE), WZPLAN [./wzplan], SKIP_CAPTURE (reuse
# WORK's profile and traces).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:?usage: real-model.sh WORK [MODEL]}
model=${2:-$work/model}
model_name=${MODEL_NAME:-$(basename "$model")}
py=${PYTHON:-$root/.venv/bin/python}
wzplan=${WZPLAN:-$root/wzplan}
context=${CONTEXT:-32768}
windows=${WINDOWS:-2}
score=${SCORE:-512}
trace_tokens=${TRACE_TOKENS:-1024}
cal_contexts=${CAL_CONTEXTS:-1024 8192}
prefix=${PREFIX:-exact}
query_weight=${QUERY_WEIGHT:-1}
baselines=${FORMATS:-fp8-mix,fp8-bf16rope,fp8-ds-mla,int4-g64,nvfp4,wzx-5.43}
grid=${WZ_GRID:-wz-3.0,wz-3.5,wz-4.0,wz-4.5,wz-4.97,wz-5.44,wz-6.0,wz-6.31,wz-7.0,wz-8.0}
mkdir -p "$work"
[ -f "$work/corpus/corpus.jsonl" ] || "$py" "$here/corpus.py" --out "$work/corpus"
cap() { "$py" "$here/wzcapture.py" capture --model "$model" --model-name "$model_name" --corpus "$work/corpus" "$@"; }

# Calibration windows at short contexts, from calibration documents only.
[ -n "${SKIP_CAPTURE:-}" ] || for c in $cal_contexts; do
	for cat in prose code; do
		cap --split calibration --category "$cat" --context "$c" --windows 1 \
		    --tokens "$trace_tokens" --queries 32 --dtype f32 --out "$work/cal" > /dev/null
	done
done
[ -n "${SKIP_CAPTURE:-}" ] || "$wzplan" codec prepare --trace "$work"/cal/*.safetensors --out "$work/model.wzp" \
	--query-weight "$query_weight" ${PREPARE_ARGS:-}

# Test windows at long context, from test documents only.
[ -n "${SKIP_CAPTURE:-}" ] || for cat in prose code; do
	cap --split test --category "$cat" --context "$context" --windows "$windows" \
	    --tokens "$trace_tokens" --queries 32 --dtype f32 --out "$work/test" > /dev/null
done
"$wzplan" codec measure --trace "$work"/test/*-c"$context"-*.safetensors --profile "$work/model.wzp" \
	--formats "$baselines,$grid" --format csv --no-archive > "$work/measure-c$context.csv.tmp"
mv "$work/measure-c$context.csv.tmp" "$work/measure-c$context.csv"

"$py" "$here/wzcapture.py" livekl --model "$model" --model-name "$model_name" --corpus "$work/corpus" --split test \
	--context "$context" --windows "$windows" --score "$score" --profile "$work/model.wzp" \
	--prefix "$prefix" --formats "exact,$baselines,$grid" --out "$work/livekl-c$context-$prefix.json"
"$py" "$here/wzcapture.py" report "$work/livekl-c$context-$prefix.json" --measure "$work/measure-c$context.csv" \
	--out "$work/report-c$context-$prefix.md" --json "$work/report-c$context-$prefix.json"
cat "$work/report-c$context-$prefix.md"
