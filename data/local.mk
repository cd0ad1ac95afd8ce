# data/: embedded defaults (catalogs, scenarios), also installed under
# $(pkgdatadir) so users can copy and edit them.
WZ_EMBEDDED_FILES = \
	data/models.csv data/gpus.csv data/prices.csv data/model-layers.csv \
	data/scenarios/product-page.scenario
nobase_dist_pkgdata_DATA += $(WZ_EMBEDDED_FILES)
# Today's models on today's GPUs (data/scenarios/README.md).
nobase_dist_pkgdata_DATA += data/scenarios/v4-pro-gb300.scenario \
	data/scenarios/v4-flash-b200.scenario data/scenarios/kimi-k2-h200.scenario \
	data/scenarios/today.sweep
EXTRA_DIST += data/scenarios/README.md
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
	  model-layers.csv=$(top_srcdir)/data/model-layers.csv \
	  scenarios/product-page.scenario=$(top_srcdir)/data/scenarios/product-page.scenario
# Real caches (docs/real-model.md): windows captured from the project's own
# DeepSeek-V3-architecture model on calibration and test documents, the wz
# profile prepared from the calibration captures, the live-KL summary, and
# the model itself (weights bf16, config, tokenizer, training summary, the
# corpus's document split).
nobase_dist_pkgdata_DATA += \
	data/real/code-calibration-c1024-w0.safetensors data/real/prose-calibration-c1024-w0.safetensors \
	data/real/code-calibration-c8192-w0.safetensors data/real/prose-calibration-c8192-w0.safetensors \
	data/real/code-test-c32768-w0.safetensors data/real/prose-test-c32768-w0.safetensors \
	data/real/code-test-c32768-w1.safetensors data/real/prose-test-c32768-w1.safetensors \
	data/real/model.wzp data/real/live-kl-c32768.json \
	data/model/config.json data/model/model.safetensors data/model/tokenizer.json \
	data/model/summary.json data/model/split.json
