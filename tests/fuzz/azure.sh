#!/bin/sh
# Replays the azure fuzz corpus through its fuzz target (TAP).
exec "$top_builddir/tests/fuzz/replay_azure" "$top_srcdir/tests/fuzz/corpus/azure"
