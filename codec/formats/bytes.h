/* Little-endian fields at any alignment, for records and files. */
#ifndef WZC_BYTES_H
#define WZC_BYTES_H

#include <stdint.h>
#include <string.h>

static inline void wzc_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline uint16_t wzc_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}
static inline void wzc_put32f(uint8_t *p, float f)
{
	uint32_t v;
	memcpy(&v, &f, 4);
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline float wzc_get32f(const uint8_t *p)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;
	float f;
	memcpy(&f, &v, 4);
	return f;
}

#endif
