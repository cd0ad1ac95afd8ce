/* Internals shared by the wzx coder (codec/wzx/wzx.c) and its container
 * (codec/wzx/wzx_file.c, wzx_read.c): the block coder and the little-endian
 * field helpers. */
#ifndef WZC_WZX_INTERNAL_H
#define WZC_WZX_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "codec/profile/profile.h"

/* codec/wzx/wzx.h names it too */
typedef struct wzc_wzx wzc_wzx;

#include "codec/first_fail.h"

#include "codec/profile/levels.h"
#include "codec/wzx/wzx_rans.h"

enum { WZC_WZX_RAW = 0, WZC_WZX_RANS = 1, WZC_WZX_LANES = 2, WZC_WZX_LANES12 = 3, WZC_WZX_LANES4 = 4, WZC_WZX_LANES5 = 5,
       WZC_WZX_LANES6 = 6 };

/* A symbol position's table as the fast decoder reads it: the symbol of
 * every slot (2^16 entries) and the cumulative frequencies. */
typedef struct {
	const uint16_t *dir;
	const uint32_t *cum;
} wzc_wzx_direct;

typedef struct {
	wzc_wz_flat *flat;
	wzc_rans_table *etab;              /* [nentries] the table of each coded component */
	uint32_t *cum[2][WZC_NSET];        /* histogram tables per (part, count index) */
	uint16_t *hint[2][WZC_NSET];       /* their decoder search hints */
	double bits;                       /* expected bits of one token's symbols */
	/* for the fast decoder (codec/wzx/wzx_fast.c), per symbol position of a
	 * token (scale codes, then the entries): its table */
	int nsym;
	wzc_wzx_direct *pos;               /* [nsym] */
	uint16_t *dirs[2][WZC_NSET];       /* direct tables of the histogram tables */
	void *extra;                       /* those of large uniform counts */
	int fast_ready;                    /* pos and dirs built (atomic) */
	/* type 3 (12-bit tables, version 3): written when every count of the
	 * layer is at most 4096 */
	int type3;
	const uint32_t **ecum12;           /* [nentries] each coded component's 12-bit table */
	uint32_t *ecount12;                /* [nentries] its symbol count */
	uint32_t *cum12[2][WZC_NSET];      /* 12-bit histogram tables per (part, count index) */
	uint32_t **uni12;                  /* [nuni12] uniform tables the layer owns (12-bit; type 6's 16-bit) */
	int nuni12;
	double bits12;                     /* expected bits of one token's symbols, type 3 */
	void *fast12;                      /* the type 3 decoder's tables (codec/wzx/legacy/wzx_fast12.c) */
	int fast12_ready;                  /* 1 built, -1 none (atomic) */
	void *fast32;                      /* type 4's tables (codec/wzx/legacy/wzx_fast32.c) */
	int fast32_ready;                  /* 1 built, -1 none (atomic) */
	/* type 6 (version 6): each entry's table, WZC_RANS6_BITS-bit where it
	 * has at most WZC_RANS6_MAXN symbols, type 2's uniform 16-bit one
	 * where it has over 4096 (at most 2^16), else ecum12's */
	const uint32_t **ecum6;            /* [nentries] */
	uint32_t *cum6[2][WZC_NSET];       /* the narrow histogram tables */
	double bits6;                      /* expected bits of one token's symbols, type 6 */
	void *fast6;                       /* type 6's tables (codec/wzx/wzx_lanes6.c) */
	int fast6_ready;                   /* 1 built, -1 none (atomic) */
	/* symbols to the transformed domain (codec/wzx/wzx_transform.c) */
	void *trans;
	int trans_ready;                   /* 1 built, -1 the general loop (atomic) */
} wzx_layer;

struct wzc_wzx {
	const wzc_codec *codec;
	wzc_codec *owned;
	const wzc_profile *profile;
	int L, R, P, scale_bytes;
	size_t B;
	uint64_t profile_hash;
	wzc_rans_table scale_tab;
	wzx_layer *layers;
	/* each layer's tables are built on first use (wzc_wzx_layer_at): a
	 * restore of one block builds one layer's */
	int *ready;                        /* [L] 1 once layers[l] is built (atomic) */
	pthread_mutex_t *lock;             /* [L] guards building layer l */
	/* direct tables shared by every layer: scale codes and anchor flags */
	uint16_t *dir_scale, *dir_flag;
	uint32_t cum_scale[257], cum_flag[3];
	uint32_t cum12_scale[257], cum12_flag[3]; /* the same in 12-bit (type 3) */
	uint32_t cum6_scale[257], cum6_flag[3];   /* and at type 6's narrow precision */
	pthread_mutex_t *fast_lock;        /* guards building them */
};

/* Layer l's tables, built on first use by whichever thread gets there
 * first (the others wait); NULL when out of memory.  wzc_wzx_layer_ready
 * builds it and says why not in diag. */
wzx_layer *wzc_wzx_layer_at(const wzc_wzx *x, int l);
wz_err wzc_wzx_layer_ready(const wzc_wzx *x, int l, wz_diag *diag);

/* A layer's derived table *slot, built by build(x, ly) on first use by
 * whichever thread gets there first, under x->fast_lock (the others wait).
 * build gives the table, WZC_WZX_NO_TABLE for a plan the table does not
 * cover, or NULL when out of memory.  *ready (atomic) is 1 once built, -1
 * where there is no table, and is not tried again; out of memory leaves it
 * 0, for a later try.  Returns *slot, or NULL where there is none
 * (codec/wzx/wzx_fast.c); *nomem (may be NULL) gets 1 where that is for
 * want of memory. */
extern char wzc_wzx_no_table;
#define WZC_WZX_NO_TABLE ((void *)&wzc_wzx_no_table)
void *wzc_wzx_layer_table(wzc_wzx *x, wzx_layer *ly, int *ready, void **slot,
			  void *(*build)(const wzc_wzx *x, const wzx_layer *ly));
/* Whether a table getter's NULL was for want of memory: 1 unless the
 * table is known not to exist (*ready -1). */
int wzc_wzx_table_nomem(const int *ready);

/* The fast decoder's tables (codec/wzx/wzx_fast.c). */
void wzc_wzx_fast_free_layer(wzx_layer *ly);
void wzc_wzx_fast_free(wzc_wzx *x);
/* The type 3 decoder's tables (codec/wzx/legacy/wzx_fast12.c). */
void wzc_wzx_fast12_free_layer(wzx_layer *ly);
/* The type 4 decoder's tables (codec/wzx/legacy/wzx_fast32.c). */
void wzc_wzx_fast32_free_layer(wzx_layer *ly);
/* Type 6's tables (codec/wzx/wzx_lanes6.c). */
void wzc_wzx_fast6_free_layer(wzx_layer *ly);
/* The transformed-domain table (codec/wzx/wzx_transform.c). */
void wzc_wzx_transform_free_layer(wzx_layer *ly);


int wzc_wzx_layers(const wzc_wzx *x);
int wzc_wzx_R(const wzc_wzx *x);
int wzc_wzx_P(const wzc_wzx *x);
uint64_t wzc_wzx_profile_hash(const wzc_wzx *x);
const char *wzc_wzx_model(const wzc_wzx *x);

/* Codes n (1..64) records of a layer into out (cap >= n * B bytes); returns
 * the block type and sets *size to the payload bytes, or -1 when out of
 * memory (a block is coded only as it would be with memory, so that the
 * container's bytes never depend on it). */
int wzc_wzx_encode_block(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			 uint8_t *out, size_t cap, size_t *size);
/* Decodes a rANS payload of n tokens into records; 0, or -1 when the
 * payload is not exactly what the encoder writes. */
int wzc_wzx_decode_block(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			 size_t size, uint8_t *records);

/* The container's pieces (codec/wzx/wzx_file.c), shared by the in-memory
 * writer and the streaming one (codec/wzx/wzx_pack.c): the header of a
 * container of T tokens into dst (its size returned, at most
 * WZC_WZX_HEADER_FIXED + 256 + 8); block (layer, tokens t0..t0+n-1) coded
 * and framed into blk (room for 16 + n B + 8), its whole size returned and
 * its type in *type; an index entry; the footer after the index. */
size_t wzc_wzx_header(const wzc_wzx *x, int T, uint8_t *dst /* OUT */);
size_t wzc_wzx_frame_block(const wzc_wzx *x, int layer, int t0, int n, const uint8_t *records,
			   uint8_t *blk /* OUT */, int *type /* OUT: -1 when out of memory, and 0 returned */);
void wzc_wzx_index_entry(uint8_t *e /* OUT */, size_t offset, size_t block_size);
void wzc_wzx_footer(uint8_t *dst /* OUT */, size_t index_offset, const uint8_t *index,
		    size_t nblocks);

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

/* A coder as wzc_wzx_new, without the profile's hash: for planning a
 * grid, never for a container. */
wz_err wzc_wzx_new_unhashed(const wzc_profile *p, size_t record_bytes, wzc_wzx **out, wz_diag *diag);

/* The grid of wzx-<bits> (wzc_wzx_grid_bytes, without its cache): by a
 * guided search, and by the plain bisection it is tested against, each
 * probe's layers planned on nthreads threads; probes, if not NULL, the
 * grids planned. */
wz_err wzc_wzx_grid_search(const wzc_profile *p, double bits, int nthreads, size_t *record_bytes,
			   int *probes, wz_diag *diag);
wz_err wzc_wzx_grid_bisect(const wzc_profile *p, double bits, int nthreads, size_t *record_bytes,
			   int *probes, wz_diag *diag);

#endif
