/* Type 5 and type 6 blocks straight to wz records with AVX2 (and again
 * with AVX-512VL: the loop is codec/wzx/wzx_fused_loop.h, included once
 * for each), in one pass over the payload (the plan: wzx_fused5, codec/wzx/wzx_fast5_internal.h; the
 * portable loop and the reference it is tested against:
 * codec/wzx/wzx_records5.c).  Each round of 32 lanes decodes one coded place
 * of 32 tokens and adds digit x place value into its piece's row of 32-bit
 * sums; once a group's places are all decoded, each token's value
 * (wzc_wzx_rec5_token's Horner steps over the pieces), field
 * (wzc_wzx_field) and bits are put in its record.  No digits buffer: the
 * rows stay in L1. */
#include <stdint.h>
#include <string.h>

#include "codec/wzx/wzx_fast32_internal.h"
#include "codec/wzx/wzx_fast5_internal.h"
#include "codec/wzx/wzx_rec5.h"
#include "codec/wzx/wzx_rec6.h"

#ifdef WZ_HAVE_AVX2_PATH
#include "codec/wzx/wzx_avx2_lanes.h"

/* BMI2 too: the fields' products and shifts by mulx, shlx and shrx (the
 * caller checks the processor has it, wzc_wzx_fused5_have) */
#define FUSED_TARGET __attribute__((target("avx2,popcnt,bmi2")))

enum { HEAD, FIRST, ADD, DIG };

/* The loop with AVX2 alone */
#define FL(name) name##_avx2
#define FL_TARGET FUSED_TARGET
#define FL_RENORM32 renorm32
#include "codec/wzx/wzx_fused_loop.h"
#undef FL
#undef FL_TARGET
#undef FL_RENORM32

/* The same loop where the processor has AVX-512F and AVX-512VL too */
#define VL_TARGET __attribute__((target("avx2,popcnt,bmi2,avx512f,avx512vl")))
#define FL(name) name##_vl
#define FL_TARGET VL_TARGET
#define FL_RENORM32 renorm32_vl
#include "codec/wzx/wzx_fused_loop.h"
#undef FL
#undef FL_TARGET
#undef FL_RENORM32

FUSED_TARGET static int fused_gather(const fast32 *t, int n, const uint8_t *payload, size_t size, uint8_t *records)
{
	return loop_avx2(t, NULL, n, payload, size, records, 0, 0);
}

FUSED_TARGET static int fused_loads(const fast32 *t, int n, const uint8_t *payload, size_t size, uint8_t *records)
{
	return loop_avx2(t, NULL, n, payload, size, records, 1, 0);
}

FUSED_TARGET static int fused6_gather(const fast6 *s, int n, const uint8_t *payload, size_t size, uint8_t *records)
{
	return loop_avx2(s->t, s, n, payload, size, records, 0, 0);
}

FUSED_TARGET static int fused6_loads(const fast6 *s, int n, const uint8_t *payload, size_t size, uint8_t *records)
{
	return loop_avx2(s->t, s, n, payload, size, records, 1, 0);
}

FUSED_TARGET static int fused6_digits(const fast6 *s, int n, const uint8_t *payload, size_t size, uint16_t *dig)
{
	return loop_avx2(s->t, s, n, payload, size, (uint8_t *)(void *)dig, 1, 1);
}

int wzc_wzx_fused6_avx2_records(const fast6 *s, int n, const uint8_t *payload, size_t size, uint8_t *records,
				int loads)
{
	return loads ? fused6_loads(s, n, payload, size, records) : fused6_gather(s, n, payload, size, records);
}

int wzc_wzx_fused6_avx2_digits(const fast6 *s, int n, const uint8_t *payload, size_t size, uint16_t *dig)
{
	return fused6_digits(s, n, payload, size, dig);
}

VL_TARGET static int fused6_vl(const fast6 *s, int n, const uint8_t *payload, size_t size, uint8_t *records)
{
	return loop_vl(s->t, s, n, payload, size, records, 1, 0);
}

VL_TARGET static int fused6_vl_digits(const fast6 *s, int n, const uint8_t *payload, size_t size, uint16_t *dig)
{
	return loop_vl(s->t, s, n, payload, size, (uint8_t *)(void *)dig, 1, 1);
}

int wzc_wzx_fused6_vl_records(const fast6 *s, int n, const uint8_t *payload, size_t size, uint8_t *records)
{
	return fused6_vl(s, n, payload, size, records);
}

int wzc_wzx_fused6_vl_digits(const fast6 *s, int n, const uint8_t *payload, size_t size, uint16_t *dig)
{
	return fused6_vl_digits(s, n, payload, size, dig);
}

int wzc_wzx_fused6_vl_have(void)
{
	return wzc_wzx_fused5_have() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
}

int wzc_wzx_fused5_have(void)
{
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2");
}

int wzc_wzx_fused5_avx2_records(const fast32 *t, int n, const uint8_t *payload, size_t size, uint8_t *records,
				int loads)
{
	return loads ? fused_loads(t, n, payload, size, records) : fused_gather(t, n, payload, size, records);
}
#endif
