# data/: embedded defaults (catalogs, scenarios), also installed under
# $(pkgdatadir) so users can copy and edit them.
WZ_EMBEDDED_FILES = \
	data/models.csv data/gpus.csv data/prices.csv \
	data/scenarios/product-page.scenario
nobase_dist_pkgdata_DATA += $(WZ_EMBEDDED_FILES)
# A small synthetic cache trace (docs/cache-trace.md, "Sample").
nobase_dist_pkgdata_DATA += data/sample-mla-a.safetensors
noinst_LIBRARIES += libwzdata.a
libwzdata_a_SOURCES = data/embedded.h
nodist_libwzdata_a_SOURCES = data/embedded.c
BUILT_SOURCES += data/embedded.c
CLEANFILES += data/embedded.c
EXTRA_DIST += build-aux/embed.sh
data/embedded.c: $(WZ_EMBEDDED_FILES) $(top_srcdir)/build-aux/embed.sh
	$(AM_V_GEN)$(MKDIR_P) data && $(SHELL) $(top_srcdir)/build-aux/embed.sh $@ \
	  models.csv=$(top_srcdir)/data/models.csv \
	  gpus.csv=$(top_srcdir)/data/gpus.csv \
	  prices.csv=$(top_srcdir)/data/prices.csv \
	  scenarios/product-page.scenario=$(top_srcdir)/data/scenarios/product-page.scenario
