# sweep/: sweep files (base scenario + axes, expanded into points with
# stable ids) and the process pool that runs the points on every core.
noinst_LIBRARIES += libwzsweep.a
libwzsweep_a_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS) $(MPI_CFLAGS)
if HAVE_MPI
libwzsweep_a_CPPFLAGS = $(AM_CPPFLAGS) -DWZ_HAVE_MPI=1
endif
libwzsweep_a_SOURCES = \
	sweep/sweep.h \
	sweep/sweep.c \
	sweep/pool.c \
	sweep/balance.c \
	sweep/report.h sweep/report.c \
	sweep/mpi.h sweep/mpi.c
