#!/bin/sh
# tests/capture/test_capture.py in the project's Python environment.
. "$top_srcdir/tests/capture/python.sh" test_capture
