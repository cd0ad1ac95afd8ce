# codec/: format registry, CPU reference encoders/decoders, profiles, metrics.
noinst_LIBRARIES += libwzcodec.a
libwzcodec_a_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwzcodec_a_SOURCES = \
	codec/format.c codec/format.h \
	codec/fpconv.h codec/records.h \
	codec/codec.c codec/codec.h codec/codec_internal.h \
	codec/baseline.c \
	codec/linalg.c codec/linalg.h \
	codec/levels.c codec/levels.h \
	codec/profile.h codec/profile_io.c codec/prepare.c \
	codec/wz_codec.c \
	codec/metrics.c codec/metrics.h
