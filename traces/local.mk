# traces/: cache traces (safetensors), synthetic caches, traffic tables.
# One source per line, so each module's files are added without conflicts.
noinst_LIBRARIES += libwztraces.a
libwztraces_a_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwztraces_a_SOURCES = \
	traces/cache_trace.h \
	traces/cache_trace.c \
	traces/cache_trace_internal.h \
	traces/cache_trace_layout.c \
	traces/cache_trace_stream.c \
	traces/cache_trace_write.c \
	traces/float16.h \
	traces/float16.c \
	traces/synth_cache.h \
	traces/synth_cache.c \
	traces/synth_rng.h \
	traces/traffic.h \
	traces/traffic.c \
	traces/traffic_import.h \
	traces/traffic_rng.c \
	traces/import_azure.c \
	traces/import_mooncake.c \
	traces/import_lengths.c \
	traces/import_servegen.c \
	traces/import_burstgpt.c
