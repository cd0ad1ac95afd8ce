#!/bin/sh
# Replays the catalog fuzz corpus through its fuzz target (TAP).
exec "$top_builddir/tests/fuzz/replay_catalog" "$top_srcdir/tests/fuzz/corpus/catalog"
