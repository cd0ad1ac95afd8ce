# sweep/: sweep files (base scenario + axes, expanded into points with
# stable ids) and the process pool that runs the points on every core.
noinst_LIBRARIES += libwzsweep.a
libwzsweep_a_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwzsweep_a_SOURCES = \
	sweep/sweep.h \
	sweep/sweep.c \
	sweep/pool.c
