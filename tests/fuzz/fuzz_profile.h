/* Helpers for the decoder fuzz targets, whose inputs carry a codec profile
 * (tests/fuzz/fuzz_wz_decode.c, fuzz_wzx_decode.c): building a coder from a
 * profile fits level tables to every histogram and costs tens of
 * milliseconds, so the profile an input carries is parsed once per process
 * and what is built from it is kept, and the libFuzzer build mutates the
 * bytes after the profile far more often than the profile itself.
 * Input layout shared by both targets: byte 0 flags, bytes 1..4 the
 * profile's length n (little-endian), n profile bytes, then the rest. */
#ifndef WZ_FUZZ_PROFILE_H
#define WZ_FUZZ_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/profile/profile.h"

/* The profile's length from an input's bytes 1..4, clipped to what the
 * input holds (size >= 5). */
size_t fuzz_profile_len(const uint8_t *data, size_t size);

/* The profile parsed from n untrusted bytes: first as they are (the
 * checksum check itself must hold up), then with the checksum recomputed so
 * that mutations reach the field checks.  NULL when the resealed bytes do
 * not parse.  The same bytes give the same profile object for the life of
 * the process (a few are kept, the least recently used dropped); the caller
 * does not free it. */
const wzc_profile *fuzz_profile_get(const uint8_t *bytes, size_t n);

/* What was built from profile p under key (a coder for one rate, say):
 * fuzz_memo_get gives the object stored by fuzz_memo_put, or sets *found to
 * 0.  The object lives as long as the profile is kept and is freed with
 * free_fn (which may get NULL: failures are memoized too). */
void *fuzz_memo_get(const wzc_profile *p, uint64_t key, int *found /* OUT */);
void fuzz_memo_put(const wzc_profile *p, uint64_t key, void *obj, void (*free_fn)(void *));

#endif
