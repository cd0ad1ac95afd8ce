# The wzx container reader's fuzz target (tests/fuzz/local.mk explains the
# pattern): a replay of tests/fuzz/corpus/wzx_decode/ in `make check`, and
# with --enable-fuzzers a libFuzzer binary, e.g.
#   tests/fuzz/fuzz_wzx_decode -max_len=65536 ../tests/fuzz/corpus/wzx_decode
# The corpus is the golden container with its profile, damaged in each way
# the reader must refuse, written by tests/fuzz/make_wzx_decode_corpus.py.
check_PROGRAMS += tests/fuzz/replay_wzx_decode
TESTS += tests/fuzz/wzx_decode.sh
EXTRA_DIST += tests/fuzz/wzx_decode.sh tests/fuzz/corpus/wzx_decode \
	tests/fuzz/make_wzx_decode_corpus.py
tests_fuzz_replay_wzx_decode_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_wzx_decode.c tests/fuzz/fuzz_profile.c tests/fuzz/fuzz_profile.h
tests_fuzz_replay_wzx_decode_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_replay_wzx_decode_LDADD = $(TEST_LDADD)
tests_fuzz_replay_wzx_decode_DEPENDENCIES = $(WZ_LIBS)
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_wzx_decode
tests_fuzz_fuzz_wzx_decode_SOURCES = tests/fuzz/fuzz_wzx_decode.c tests/fuzz/fuzz_profile.c tests/fuzz/fuzz_profile.h
tests_fuzz_fuzz_wzx_decode_CFLAGS = $(TEST_CFLAGS) -fsanitize=fuzzer -DWZ_LIBFUZZER
tests_fuzz_fuzz_wzx_decode_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_wzx_decode_LDADD = $(TEST_LDADD)
tests_fuzz_fuzz_wzx_decode_DEPENDENCIES = $(WZ_LIBS)
endif
