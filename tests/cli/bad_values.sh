#!/bin/sh
# The catalogue of tests/cli/bad-values.md: values accepted that meant
# nothing.
exec sh "$top_srcdir/tests/cli/bad_inputs.sh" "$top_srcdir/tests/cli/bad-values.md" 8
