/* Between the profile file's parser (profile_io.c) and its reader of some
 * layers (profile_layers.c): version 5's header, directory and layers
 * taken apart (docs/wz-format.md, "Profile file"). */
#ifndef WZC_PROFILE_INTERNAL_H
#define WZC_PROFILE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "codec/profile.h"

/* Bytes of the fixed header and the longest model name: what a reader
 * reads first to learn the version, L and the name's length. */
#define WZC_PROFILE_HEAD_MAX (48 + WZC_MODEL_MAX + 1)

/* Where version 5's layers start (H) for L layers and a name of mlen
 * bytes. */
size_t wzc_profile_layers_at(size_t mlen, size_t L);

/* A version 5 profile of no layers yet from the first nhead bytes of an
 * n-byte file (at least its header and directory) and the file's last 8
 * bytes: checked as docs/wz-format.md orders it, up to the layers.  Every
 * layer is marked not loaded; the profile's hash is the trailer.  The
 * caller frees the result with wzc_profile_free. */
wz_err wzc_profile_open_head(const uint8_t *head, size_t nhead, size_t n, uint64_t trailer,
			     const char *origin, wzc_profile **out /* OUT */, wz_diag *diag);

/* Layer l's place and size in the file of a profile from
 * wzc_profile_open_head. */
size_t wzc_profile_layer_offset(const wzc_profile *p, int l);
size_t wzc_profile_layer_size(const wzc_profile *p);

/* 1 when a layer's arrays can point into bytes at this address (a
 * little-endian host, 4-byte aligned). */
int wzc_profile_can_view(const void *bytes);

/* Layer l from its wzc_profile_layer_size bytes: checked against its
 * directory entry, then its values; the arrays point into bytes (view:
 * wzc_profile_can_view said so, and the caller keeps them for the
 * profile's life as its backing) or are copies (the profile's backing
 * NULL).  On an error the layer stays
 * not loaded. */
wz_err wzc_profile_load_layer(wzc_profile *p, int l, const uint8_t *bytes, int view,
			      const char *origin, wz_diag *diag);

#endif
