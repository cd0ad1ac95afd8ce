# codec/: format registry, CPU reference encoders/decoders, profiles, metrics.
noinst_LIBRARIES += libwzcodec.a
libwzcodec_a_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwzcodec_a_SOURCES = \
	codec/format.c codec/format.h
