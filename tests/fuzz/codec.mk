# The wz decoder's fuzz target (tests/fuzz/local.mk explains the pattern):
# a replay of tests/fuzz/corpus/wz_decode/ in `make check`, and with
# --enable-fuzzers a libFuzzer binary, e.g.
#   tests/fuzz/fuzz_wz_decode -max_len=65536 ../tests/fuzz/corpus/wz_decode
# The corpus holds small valid profiles (1-2 layers, R 8..32) with records,
# written by tests/fuzz/make_wz_decode_corpus.c.
check_PROGRAMS += tests/fuzz/replay_wz_decode
TESTS += tests/fuzz/wz_decode.sh
EXTRA_DIST += tests/fuzz/wz_decode.sh tests/fuzz/corpus/wz_decode \
	tests/fuzz/make_wz_decode_corpus.c
tests_fuzz_replay_wz_decode_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_wz_decode.c tests/fuzz/fuzz_profile.c tests/fuzz/fuzz_profile.h
tests_fuzz_replay_wz_decode_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_replay_wz_decode_LDADD = $(TEST_LDADD)
tests_fuzz_replay_wz_decode_DEPENDENCIES = $(WZ_LIBS)
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_wz_decode
tests_fuzz_fuzz_wz_decode_SOURCES = tests/fuzz/fuzz_wz_decode.c tests/fuzz/fuzz_profile.c tests/fuzz/fuzz_profile.h
tests_fuzz_fuzz_wz_decode_CFLAGS = $(TEST_CFLAGS) -fsanitize=fuzzer -DWZ_LIBFUZZER
tests_fuzz_fuzz_wz_decode_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_wz_decode_LDADD = $(TEST_LDADD)
tests_fuzz_fuzz_wz_decode_DEPENDENCIES = $(WZ_LIBS)
endif
