#!/bin/sh
# Replays the cache-trace fuzz corpus through the fuzz target (TAP).
exec "$top_builddir/tests/fuzz/replay_cache_trace" "$top_srcdir/tests/fuzz/corpus/cache_trace"
