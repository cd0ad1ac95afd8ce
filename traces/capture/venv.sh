#!/bin/sh
# Creates the Python virtual environment the capture and live-KL tools (and
# their tests) run in: ./.venv at the repository root, or the folder given.
# Versions are pinned to the ones the tools were written and checked with.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${1:-$root/.venv}
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import torch, transformers, safetensors, tokenizers, numpy' 2>/dev/null; then
	exit 0
fi
echo "venv.sh: creating $venv (torch, transformers, safetensors, tokenizers, numpy from PyPI; a few minutes)" >&2
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check \
	"torch==2.15.0" "transformers==5.24.0" "safetensors==0.8.0" "tokenizers==0.23.3" "numpy==2.4.6" >&2
"$venv/bin/python" -c 'import torch, transformers, safetensors, tokenizers, numpy'
