#!/bin/sh
# tests/capture/test_stack_quantizers.py in the project's Python environment.
. "$top_srcdir/tests/capture/python.sh" test_stack_quantizers
