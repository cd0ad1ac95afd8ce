/* Shared by the profile's files only (profile_io.c writes, profile_parse.c
 * parses, profile_layers.c reads some layers): the file's layout
 * (docs/wz-format.md, "Profile file"), its little-endian fields, and
 * version 5 taken apart into its header, directory and layers. */
#ifndef WZC_PROFILE_INTERNAL_H
#define WZC_PROFILE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "codec/profile/profile.h"

static const uint8_t wzc_profile_magic[8] = { 0x89, 'W', 'Z', 'P', 'R', 'O', 'F', '\n' };
#define WZC_PROF_HEADER 48u
#define WZC_PROF_MAX_L 4096
#define WZC_PROF_MAX_R 8192
#define WZC_PROF_MAX_P 1024

static inline size_t part_bytes(int n)
{
	size_t un = (size_t)n;
	return 4 * (1 + un * un + 5 * un + WZC_HIST_BINS);
}

/* The position caps after the layers' parts: version 4's layout (version
 * 5 keeps each layer's cap with the layer). */
static inline size_t cap_bytes(int version, int L)
{
	return version == 4 ? 4 * (size_t)L : 0;
}

static inline size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* Version 5's and 6's layout (docs/wz-format.md): the directory at D, the layers
 * from H, each of S bytes. */
static inline size_t dir_at(size_t mlen)
{
	return WZC_PROF_HEADER + pad4(mlen);
}

static inline size_t layers_at(size_t mlen, size_t L)
{
	return dir_at(mlen) + 8 * L;
}

/* Version 6 adds each layer's RoPE inverse frequencies (float64, one per
 * pair) after its position cap. */
static inline size_t freq_bytes(int version, int P)
{
	return version >= 6 ? 8 * (size_t)(P / 2) : 0;
}

/* Version 7 adds after them the prediction's flag (uint32), the
 * statistics of the anchored tokens' position part and the R x P map. */
static inline size_t pred_bytes(int version, int R, int P)
{
	return version >= 7 ? 4 + part_bytes(P) + 4 * (size_t)P * (size_t)R : 0;
}

static inline size_t layer_bytes(int version, int R, int P)
{
	return part_bytes(R) + part_bytes(P) + 4 + freq_bytes(version, P) + pred_bytes(version, R, P);
}

/* The file's size the header implies. */
static inline size_t file_bytes(int version, int L, int R, int P, size_t mlen)
{
	if (version >= 5)
		return layers_at(mlen, (size_t)L) + (size_t)L * layer_bytes(version, R, P) + 8;
	return WZC_PROF_HEADER + pad4(mlen) + (size_t)L * (part_bytes(R) + part_bytes(P)) +
	       cap_bytes(version, L) + 8;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint8_t *put_doubles(uint8_t *p, const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t u;
		memcpy(&u, &x[i], 8);
		put64(p + 8 * i, u);
	}
	return p + 8 * n;
}

static inline const uint8_t *get_doubles(const uint8_t *p, double *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t u = get64(p + 8 * i);
		memcpy(&x[i], &u, 8);
	}
	return p + 8 * n;
}

static inline uint8_t *put_floats(uint8_t *p, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &x[i], 4);
		put32(p + 4 * i, u);
	}
	return p + 4 * n;
}

static inline const uint8_t *get_floats(const uint8_t *p, float *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t u = get32(p + 4 * i);
		memcpy(&x[i], &u, 4);
	}
	return p + 4 * n;
}


/* A profile of the shape with no arrays yet; a part's arrays (zeroed) and
 * their freeing (NULL ones too). */
wzc_profile *wzc_profile_shell(int L, int R, int P);
int wzc_part_alloc(wzc_part_profile *q, int n);
/* Version 7's arrays of L entries (predicts, rope_plain, pred_map), zeroed,
 * the parts without arrays; 0, or -1 when out of memory. */
int wzc_profile_pred_alloc(wzc_profile *p);
void wzc_part_free(wzc_part_profile *q);

/* Bytes of the fixed header and the longest model name: what a reader
 * reads first to learn the version, L and the name's length. */
#define WZC_PROFILE_HEAD_MAX (48 + WZC_MODEL_MAX + 1)

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
