check_PROGRAMS += tests/common/test_common
TESTS += tests/common/test_common
tests_common_test_common_SOURCES = tests/common/test_common.c
tests_common_test_common_CFLAGS = $(TEST_CFLAGS)
tests_common_test_common_LDADD = $(TEST_LDADD)
tests_common_test_common_DEPENDENCIES = $(WZ_LIBS)
