# archive/: the SQLite result archive: schema, migrations, writes, queries.
noinst_LIBRARIES += libwzarchive.a
libwzarchive_a_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwzarchive_a_SOURCES = \
	archive/archive.h archive/internal.h \
	archive/run.c \
	archive/schema.c \
	archive/store.c \
	archive/merge.h archive/merge.c
