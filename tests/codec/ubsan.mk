# The codec's fast paths under UndefinedBehaviorSanitizer inside make check:
# a second build of the codec library (check-only, -fsanitize=undefined,
# any finding fatal) linked into second builds of the tests that compare
# the SIMD kernels with their scalar references, so that undefined
# behaviour in SIMD code (an intrinsic that adds signed words, a shift of
# a negative code) fails make check, not a sanitizer round weeks later.
# Skipped when the compiler cannot link -fsanitize=undefined, and in a
# build already configured --enable-sanitizers (which covers every test).
if UBSAN_TESTS
check_LIBRARIES = libwzcodec_ubsan.a
libwzcodec_ubsan_a_SOURCES = $(libwzcodec_la_SOURCES) codec/wz_api.c
libwzcodec_ubsan_a_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS) $(UBSAN_CFLAGS)
UBSAN_TEST_LDADD = libwzcodec_ubsan.a $(TEST_LDADD)
check_PROGRAMS += tests/codec/test_wz_fast_ubsan tests/codec/test_wzx_fast_ubsan
check_PROGRAMS += tests/codec/test_wzt_ubsan tests/codec/test_overload_ubsan
TESTS += tests/codec/test_wz_fast_ubsan tests/codec/test_wzx_fast_ubsan
TESTS += tests/codec/test_wzt_ubsan tests/codec/test_overload_ubsan
tests_codec_test_wz_fast_ubsan_SOURCES = tests/codec/test_wz_fast.c
tests_codec_test_wz_fast_ubsan_CFLAGS = $(TEST_CFLAGS) $(UBSAN_CFLAGS)
tests_codec_test_wz_fast_ubsan_LDFLAGS = $(AM_LDFLAGS) -fsanitize=undefined
tests_codec_test_wz_fast_ubsan_LDADD = $(UBSAN_TEST_LDADD)
tests_codec_test_wz_fast_ubsan_DEPENDENCIES = libwzcodec_ubsan.a $(WZ_LIBS)
tests_codec_test_wzx_fast_ubsan_SOURCES = tests/codec/test_wzx_fast.c
tests_codec_test_wzx_fast_ubsan_CFLAGS = $(TEST_CFLAGS) $(UBSAN_CFLAGS)
tests_codec_test_wzx_fast_ubsan_LDFLAGS = $(AM_LDFLAGS) -fsanitize=undefined
tests_codec_test_wzx_fast_ubsan_LDADD = $(UBSAN_TEST_LDADD)
tests_codec_test_wzx_fast_ubsan_DEPENDENCIES = libwzcodec_ubsan.a $(WZ_LIBS)
tests_codec_test_wzt_ubsan_SOURCES = tests/codec/test_wzt.c
tests_codec_test_wzt_ubsan_CFLAGS = $(TEST_CFLAGS) $(UBSAN_CFLAGS)
tests_codec_test_wzt_ubsan_LDFLAGS = $(AM_LDFLAGS) -fsanitize=undefined
tests_codec_test_wzt_ubsan_LDADD = $(UBSAN_TEST_LDADD)
tests_codec_test_wzt_ubsan_DEPENDENCIES = libwzcodec_ubsan.a $(WZ_LIBS)
tests_codec_test_overload_ubsan_SOURCES = tests/codec/test_overload.c
tests_codec_test_overload_ubsan_CFLAGS = $(TEST_CFLAGS) $(UBSAN_CFLAGS)
tests_codec_test_overload_ubsan_LDFLAGS = $(AM_LDFLAGS) -fsanitize=undefined
tests_codec_test_overload_ubsan_LDADD = $(UBSAN_TEST_LDADD)
tests_codec_test_overload_ubsan_DEPENDENCIES = libwzcodec_ubsan.a $(WZ_LIBS)
endif
