/* An educational wzx decoder: docs/wzx-format.md in plain C, as zstd's
 * doc/educational_decoder is its format's.  No SIMD, no tables built for
 * speed, every field read where the specification places it and every
 * check it asks for, in a few hundred lines; tests/codec/test_edu.c
 * decodes the golden files with it and compares the records with the
 * library's.  It needs only libc and libxxhash.
 *
 * What it is handed, per layer, is the model the specification derives
 * from the profile and the grid (docs/wzx-format.md, "Static tables";
 * docs/wz-format.md, "Record"): each symbol's cumulative frequencies and
 * the record's groups.  Deriving them is the wz rate plan's work, not the
 * container's; the test takes them from the library. */
#ifndef WZX_EDU_H
#define WZX_EDU_H

#include <stddef.h>
#include <stdint.h>

/* A static table: n symbols, symbol s has the slots cum[s] .. cum[s+1]-1 of
 * M = cum[n] (2^16, 2^12, or type 6's 2^9). */
typedef struct {
	uint32_t n;
	const uint32_t *cum; /* [n + 1] */
} edu_table;

typedef struct {
	/* the wz record: scale bytes, then groups of mixed-radix digits */
	int scale_bytes, nentries, ngroups;
	const uint32_t *goff;  /* [ngroups] bit offset of the group in the record */
	const uint8_t *gbits;  /* [ngroups] its bits */
	const int32_t *gstart; /* [ngroups + 1] its entries, in coding order */
	const uint32_t *nlev;  /* [nentries] the entry's level count */
	/* types 1 and 2 (M = 2^16) and type 3 (M = 2^12): the table of each
	 * symbol of a token, scale codes then entries [scale_bytes + nentries];
	 * tab12 NULL where the layer has a count above 4096 */
	const edu_table *tab16, *tab12;
	/* types 4 and 5: a token's places in output order [S], place j's table
	 * and where its digit goes (j < scale_bytes: scale byte j; else the
	 * entry src[j], or -1 for a single-level component); type 5's coded
	 * places [S5] */
	int S;
	const edu_table *place;
	const int32_t *src;
	int S5;
	const int32_t *coded;
	/* type 6: place j's table at its own precision [S] */
	const edu_table *place6;
} edu_layer;

/* Decodes the container file[0..n) into records [L][T][B] (room for
 * L * T * B bytes, the header's).  Returns 0, or -1 with the reason in
 * err (at least 128 bytes).  layers[l] is layer l's model; *L, *T and *B
 * receive the header's. */
int edu_wzx_decode(const uint8_t *file, size_t n, const edu_layer *layers, int nlayers,
		   uint8_t *records, size_t cap, int *L, int *T, int *B, char *err);

/* The header's L, T and B without decoding (0, or -1 with err). */
int edu_wzx_shape(const uint8_t *file, size_t n, int *L, int *T, int *B, char *err);

#endif
