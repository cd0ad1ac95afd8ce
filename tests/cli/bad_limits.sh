#!/bin/sh
# The catalogue of tests/cli/bad-limits.md: one field that would take
# unbounded memory or time.
exec sh "$top_srcdir/tests/cli/bad_inputs.sh" "$top_srcdir/tests/cli/bad-limits.md" 17
