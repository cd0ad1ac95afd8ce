#!/bin/sh
# Runs tests/capture/test_binding.py in the project's virtual environment (a TAP skip
# exit 77, when traces/capture/venv.sh has not made it).
py=${WZ_PYTHON:-$top_srcdir/.venv/bin/python}
if ! "$py" -c 'import numpy, torch, transformers' 2>/dev/null; then
	echo "1..0 # SKIP no Python environment (traces/capture/venv.sh makes it)"
	exit 0
fi
WZPLAN_LIB=${WZPLAN_LIB:-$top_builddir/.libs/libwzplan.so}
export WZPLAN_LIB
exec "$py" "$top_srcdir/tests/capture/test_binding.py"
