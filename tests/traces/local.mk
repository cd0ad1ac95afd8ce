# tests/traces/: cache-trace reader/writer, synthetic generator, `wzplan trace`.
check_PROGRAMS += tests/traces/test_cache_trace tests/traces/test_synth
TESTS += tests/traces/test_cache_trace tests/traces/test_synth tests/traces/trace_cli.sh
EXTRA_DIST += tests/traces/trace_cli.sh tests/traces/linalg.h
tests_traces_test_cache_trace_SOURCES = tests/traces/test_cache_trace.c
tests_traces_test_cache_trace_CFLAGS = $(TEST_CFLAGS)
tests_traces_test_cache_trace_LDADD = $(TEST_LDADD)
tests_traces_test_cache_trace_DEPENDENCIES = $(WZ_LIBS)
tests_traces_test_synth_SOURCES = tests/traces/test_synth.c tests/traces/linalg.h
tests_traces_test_synth_CFLAGS = $(TEST_CFLAGS)
tests_traces_test_synth_LDADD = $(TEST_LDADD)
tests_traces_test_synth_DEPENDENCIES = $(WZ_LIBS)
# The block reader (wzt_cache_stream_*) against the whole-file reader.
check_PROGRAMS += tests/traces/test_cache_stream
TESTS += tests/traces/test_cache_stream
tests_traces_test_cache_stream_SOURCES = tests/traces/test_cache_stream.c
tests_traces_test_cache_stream_CFLAGS = $(TEST_CFLAGS)
tests_traces_test_cache_stream_LDADD = $(TEST_LDADD)
tests_traces_test_cache_stream_DEPENDENCIES = $(WZ_LIBS)
