# tests/codec/: the codec's unit tests (formats, conversions, wz, metrics)
# and the quality must-shows of issue 3 on synthetic windows.
EXTRA_DIST += tests/codec/window.h
check_PROGRAMS += tests/codec/test_quality
TESTS += tests/codec/test_quality
tests_codec_test_quality_SOURCES = tests/codec/test_quality.c
tests_codec_test_quality_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_quality_LDADD = $(TEST_LDADD)
tests_codec_test_quality_DEPENDENCIES = $(WZ_LIBS)
check_PROGRAMS += tests/codec/test_formats
TESTS += tests/codec/test_formats
tests_codec_test_formats_SOURCES = tests/codec/test_formats.c
tests_codec_test_formats_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_formats_LDADD = $(TEST_LDADD)
tests_codec_test_formats_DEPENDENCIES = $(WZ_LIBS)
TESTS += tests/codec/codec_cli.sh
EXTRA_DIST += tests/codec/codec_cli.sh
