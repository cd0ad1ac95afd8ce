/* Internals shared by the wzx coder (codec/wzx.c) and its container
 * (codec/wzx_file.c): the block coder and the little-endian field helpers. */
#ifndef WZC_WZX_INTERNAL_H
#define WZC_WZX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wzx.h"

enum { WZC_WZX_RAW = 0, WZC_WZX_RANS = 1 };

int wzc_wzx_layers(const wzc_wzx *x);
int wzc_wzx_R(const wzc_wzx *x);
int wzc_wzx_P(const wzc_wzx *x);
uint64_t wzc_wzx_profile_hash(const wzc_wzx *x);
const char *wzc_wzx_model(const wzc_wzx *x);

/* Codes n (1..64) records of a layer into out (cap >= n * B bytes); returns
 * the block type and sets *size to the payload bytes. */
int wzc_wzx_encode_block(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			 uint8_t *out, size_t cap, size_t *size);
/* Decodes a rANS payload of n tokens into records; 0, or -1 when the
 * payload is not exactly what the encoder writes. */
int wzc_wzx_decode_block(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			 size_t size, uint8_t *records);

static inline void wzx_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void wzx_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t wzx_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t wzx_get64(const uint8_t *p)
{
	return (uint64_t)wzx_get32(p) | (uint64_t)wzx_get32(p + 4) << 32;
}

#endif
