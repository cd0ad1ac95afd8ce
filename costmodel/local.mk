# costmodel/: catalogs, memory per GPU, fleets and annual cost, scenarios.
noinst_LIBRARIES += libwzcostmodel.a
libwzcostmodel_a_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwzcostmodel_a_SOURCES = \
	costmodel/catalog.c costmodel/catalog.h \
	costmodel/capacity.c costmodel/capacity.h \
	costmodel/layers.c costmodel/layers.h \
	costmodel/fleet.c costmodel/fleet.h \
	costmodel/scenario.c costmodel/scenario.h \
	costmodel/compare.c costmodel/compare.h
