#!/bin/sh
# tests/capture/test_binding.py in the project's Python environment.
. "$top_srcdir/tests/capture/python.sh" test_binding
