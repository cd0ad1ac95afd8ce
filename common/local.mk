# common/: error codes, file helpers, key=value files, the random-number
# generator, shared by every module.
noinst_LTLIBRARIES += libwzcommon.la
libwzcommon_la_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
# PIC objects for the shared library (see codec/local.mk)
libwzcommon_la_LDFLAGS =
libwzcommon_la_SOURCES = \
	common/wz_error.c common/wz_error.h \
	common/wz_io.c common/wz_io.h \
	common/wz_cleanup.c common/wz_cleanup.h \
	common/wz_kv.c common/wz_kv.h \
	common/wz_str.c common/wz_str.h \
	common/wz_csv.c common/wz_csv.h \
	common/wz_name.c common/wz_name.h \
	common/wz_rng.c common/wz_rng.h common/wz_rng_table.c
