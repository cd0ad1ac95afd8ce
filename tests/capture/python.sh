# Sourced by the tests/capture/*.sh tests: runs tests/capture/$1.py in the
# project's virtual environment, or reports a TAP skip when
# traces/capture/venv.sh has not made it.
py=${WZ_PYTHON:-$top_srcdir/.venv/bin/python}
if ! "$py" -c 'import numpy, torch, transformers' 2>/dev/null; then
	echo "1..0 # SKIP no Python environment (traces/capture/venv.sh makes it)"
	exit 0
fi
WZPLAN_LIB=${WZPLAN_LIB:-$top_builddir/.libs/libwzplan.so}
export WZPLAN_LIB
exec "$py" "$top_srcdir/tests/capture/$1.py"
