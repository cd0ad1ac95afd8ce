/* The wzx offload-tier container (docs/wzx-format.md): wz GPU-tier records
 * entropy-coded losslessly in blocks of 64 tokens x one layer, with a block
 * index and a checksum per block; restoring a block gives back exactly the
 * GPU-tier records. */
#ifndef WZC_WZX_H
#define WZC_WZX_H

#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "common/wz_error.h"

#define WZC_WZX_VERSION 6 /* written; 1 to 5 are still read */
#define WZC_WZX_BLOCK_TOKENS 64
#define WZC_WZX_HEADER_FIXED 56 /* bytes before the model name */
#define WZC_WZX_BLOCK_OVERHEAD 24 /* block header 16 + checksum 8 */
#define WZC_WZX_INDEX_ENTRY 16
#define WZC_WZX_FOOTER 24

/* The coder of one grid: the wz plan of record size B and the static rANS
 * tables derived from the profile. */
typedef struct wzc_wzx wzc_wzx;

/* A coder for the grid of a wz or wzx codec (borrowed: it must outlive the
 * result).  The caller frees it with wzc_wzx_free. */
wz_err wzc_wzx_of_codec(const wzc_codec *codec, wzc_wzx **out /* OUT */, wz_diag *diag);
/* A coder for profile p at wz record size record_bytes (the profile is
 * borrowed).  The caller frees it with wzc_wzx_free. */
wz_err wzc_wzx_new(const wzc_profile *p, size_t record_bytes, wzc_wzx **out /* OUT */,
		   wz_diag *diag);
void wzc_wzx_free(wzc_wzx *x);

size_t wzc_wzx_record_bytes(const wzc_wzx *x);
/* The wz codec of the coder's grid (borrowed from the coder), for decoding
 * the records it restores. */
const wzc_codec *wzc_wzx_codec(const wzc_wzx *x);
/* Expected coded bits/value under the static tables, block overhead included
 * (the estimate that chooses the grid; reports use written bytes).  A
 * coder builds each layer's tables when the layer is first used; this
 * builds them all (NaN when out of memory). */
double wzc_wzx_expected_bits(const wzc_wzx *x);

/* The grid for wzx-<bits>: the largest wz record size whose expected coded
 * size is at most `bits` bits/value (docs/wzx-format.md), kept in the
 * profile's cache once found.  The search plans layers on every core, or
 * (_threads) on nthreads threads; the grid is the same either way. */
wz_err wzc_wzx_grid_bytes(const wzc_profile *p, double bits, size_t *record_bytes /* OUT */,
			  wz_diag *diag);
wz_err wzc_wzx_grid_bytes_threads(const wzc_profile *p, double bits, int nthreads,
				  size_t *record_bytes /* OUT */, wz_diag *diag);

/* Most bytes a container of L x T tokens at record size B can take (blocks
 * fall back to raw records); 0 when the shape is out of range. */
size_t wzc_wzx_bound(int L, int T, int R, int P, size_t record_bytes, size_t model_len);

typedef struct {
	size_t total;    /* bytes of the container */
	size_t header;   /* header with its checksum */
	size_t index;    /* index and footer */
	size_t payload;  /* block payloads alone */
	size_t blocks;   /* blocks with their headers and checksums */
	int nblocks, nraw;
} wzc_wzx_stats;

/* Writes a container of T tokens from wz records [L][T][B] of this grid into
 * dst (cap bytes; wzc_wzx_bound is always enough). */
wz_err wzc_wzx_write(const wzc_wzx *x, int T, const uint8_t *records, uint8_t *dst, size_t cap,
		     size_t *written /* OUT */, wzc_wzx_stats *stats /* OUT, may be NULL */,
		     wz_diag *diag);

/* A container written as it goes (codec/wzx/wzx_pack.c): the header when
 * made, then runs of blocks in block order (layer-major), then the index
 * and footer; every piece goes to the sink in order.  The bytes are
 * wzc_wzx_write's for the same records, for any number of threads. */
typedef wz_err (*wzc_wzx_sink)(void *ctx, const void *bytes, size_t n, wz_diag *diag);
/* The values of tokens t0 .. t0 + n - 1 of a layer (n <= 64) into latent
 * [n][R] and rope [n][P]; called from many threads at once. */
typedef wz_err (*wzc_wzx_source)(void *ctx, int layer, int t0, int n, float *latent /* OUT */,
				 float *rope /* OUT */, wz_diag *diag);
typedef struct wzc_wzx_writer wzc_wzx_writer;
/* codec: the wz codec of x's grid, which encodes the values (borrowed, as
 * x is; wz encoding is safe from many threads).  The caller frees the
 * writer with wzc_wzx_writer_free. */
wz_err wzc_wzx_writer_new(const wzc_wzx *x, wzc_codec *codec, int T, wzc_wzx_sink sink,
			  void *sink_ctx, wzc_wzx_writer **out /* OUT */, wz_diag *diag);
long wzc_wzx_writer_blocks(const wzc_wzx_writer *w);
/* The next count blocks, encoded on nthreads threads (this one among them):
 * memory is their bytes and a block's scratch per thread.  The error is the
 * lowest failing block's, whatever nthreads; a writer that failed stays so. */
wz_err wzc_wzx_writer_put(wzc_wzx_writer *w, long count, int nthreads, wzc_wzx_source src,
			  void *src_ctx, wz_diag *diag);
/* After every block: the index and footer. */
wz_err wzc_wzx_writer_finish(wzc_wzx_writer *w, wzc_wzx_stats *stats /* OUT, may be NULL */,
			     wz_diag *diag);
void wzc_wzx_writer_free(wzc_wzx_writer *w);

/* What a container's header says (after every check of wzc_wzx_open). */
typedef struct {
	int L, R, P, T;
	int blocks_per_layer, nblocks;
	size_t record_bytes;
	uint64_t profile_hash;
	char model[WZC_MODEL_MAX + 1];
	int version;
} wzc_wzx_info;

/* A container read from untrusted bytes (borrowed: they must outlive it):
 * header, footer and index are checked here, each block when it is read.
 * The caller frees it with wzc_wzx_reader_free. */
typedef struct wzc_wzx_reader wzc_wzx_reader;
wz_err wzc_wzx_open(const void *bytes, size_t n, const char *origin,
		    wzc_wzx_reader **out /* OUT */, wz_diag *diag);
/* The same over a source of n bytes read through read (0, or -1 when the
 * bytes cannot all be read, e.g. the file shrank): the header, index and
 * footer are read and checked here and held (16 bytes per block); blocks
 * are read a run at a time by wzc_wzx_reader_load, which must come before
 * reading or restoring any of them (a block not loaded is WZ_ERR_USAGE).
 * Memory: the index and the largest run loaded, whatever the file's size.
 * A reader over a source is used by one thread at a time between loads
 * (the restore's threads only read). */
typedef int (*wzc_wzx_read_fn)(void *ctx, size_t offset, size_t len, void *dst /* OUT */);
wz_err wzc_wzx_open_source(size_t n, wzc_wzx_read_fn read, void *ctx, const char *origin,
			   wzc_wzx_reader **out /* OUT */, wz_diag *diag);
/* Reads blocks first .. first + count - 1 (a no-op for a reader over bytes
 * in memory); the blocks loaded before are dropped. */
wz_err wzc_wzx_reader_load(wzc_wzx_reader *r, long first, long count, wz_diag *diag);
/* The same in two steps, so that several threads can read parts of a run:
 * _place makes room for blocks first .. first + count - 1 (the blocks
 * loaded before are dropped) and reads nothing; _fill reads blocks of the
 * placed run into their place, safe on several threads at once for
 * disjoint blocks where the source's read function is (pread is).  A
 * block placed and not filled must not be read. */
wz_err wzc_wzx_reader_place(wzc_wzx_reader *r, long first, long count, wz_diag *diag);
wz_err wzc_wzx_reader_fill(const wzc_wzx_reader *r, long first, long count, wz_diag *diag);
void wzc_wzx_reader_free(wzc_wzx_reader *r);
const wzc_wzx_info *wzc_wzx_reader_info(const wzc_wzx_reader *r);

/* Where block i (in block order) starts in the container; the index's
 * offset for i past the last block. */
size_t wzc_wzx_block_offset(const wzc_wzx_reader *r, long i);

/* A coder for the container's grid with profile p; WZ_ERR_INPUT when the
 * container was written with another profile or shape.  The caller frees
 * it with wzc_wzx_free. */
wz_err wzc_wzx_coder_for(const wzc_wzx_reader *r, const wzc_profile *p, wzc_wzx **out /* OUT */,
			 wz_diag *diag);

/* Random access: block `block` of `layer` back to wz records (up to 64 x B
 * bytes); *ntok gets its token count.  WZ_ERR_CORRUPT names the block. */
wz_err wzc_wzx_read_block(const wzc_wzx_reader *r, const wzc_wzx *x, int layer, int block,
			  uint8_t *records /* OUT */, int *ntok /* OUT */, wz_diag *diag);
/* Random access into the transformed domain attention reads: block `block`
 * of `layer` to y_latent [ntok][R] and y_rope [ntok][P], exactly the values
 * wzc_wz_decode_token_transformed gives for its records (version 2 blocks
 * go there from their digits, never through records). */
wz_err wzc_wzx_read_block_transformed(const wzc_wzx_reader *r, const wzc_wzx *x, int layer,
				      int block, float *y_latent /* OUT */, float *y_rope /* OUT */,
				      int *ntok /* OUT */, wz_diag *diag);
/* Blocks block .. block + G - 1 of a layer (G <= 4, all in the layer) into
 * the transformed domain as rows of R + P floats (latent first), tokens in
 * order, the same values as wzc_wzx_read_block_transformed; type 3 blocks
 * of one token count are decoded together (their latencies overlap).
 * *ndone gets the blocks written; an error is that of block block +
 * *ndone, the lowest damaged one. */
wz_err wzc_wzx_read_blocks_rows(const wzc_wzx_reader *r, const wzc_wzx *x, int layer, int block,
				int G, float *rows /* OUT */, int *ndone /* OUT */, wz_diag *diag);
/* The same into wz records (B bytes a token), as wzc_wzx_read_block gives. */
wz_err wzc_wzx_read_blocks_records(const wzc_wzx_reader *r, const wzc_wzx *x, int layer,
				   int block, int G, uint8_t *records /* OUT */, int *ndone /* OUT */,
				   wz_diag *diag);
/* Every block: records [L][T][B]. */
wz_err wzc_wzx_read_all(const wzc_wzx_reader *r, const wzc_wzx *x, uint8_t *records /* OUT */,
			wz_diag *diag);

/* What a restore writes per token: the wz records (B bytes), the
 * transformed domain (R + P floats, latent first), or the cache's own
 * values in bf16 (R + P, latent first).  WZC_RESTORE_BF16 goes through the
 * transformed domain, four blocks at once, and inverts the transform for
 * a block's tokens together (one matrix product per part, wzc_gemm);
 * WZC_RESTORE_BF16_RECORDS is its reference, the same bf16 bit for bit:
 * each block to records, then wzc_decode_layer. */
typedef enum {
	WZC_RESTORE_RECORDS,
	WZC_RESTORE_TRANSFORMED,
	WZC_RESTORE_BF16,
	WZC_RESTORE_BF16_RECORDS,
} wzc_restore_kind;
size_t wzc_wzx_restore_token_bytes(const wzc_wzx_info *in, wzc_restore_kind kind);

/* Blocks first .. first + count - 1 (in block order, layer-major) restored
 * on nthreads threads (this one among them) into out, token after token as
 * they follow in the container.  The bytes, and the error (the lowest
 * damaged block's), are the same for any nthreads.  Memory besides out: a
 * few blocks' scratch per thread (bf16: four blocks of transformed rows
 * and one of cache values). */
wz_err wzc_wzx_restore(const wzc_wzx_reader *r, const wzc_wzx *x, wzc_restore_kind kind,
		       long first, long count, int nthreads, void *out /* OUT */, wz_diag *diag);

/* The same on threads kept from run to run (with their scratch): a
 * streaming restore makes one, runs it on each run of blocks, and frees
 * it.  Fewer threads than asked, where one cannot be started, is only
 * slower.  Each layer is planned by the first block that needs it, the
 * others waiting: wzc_wzx_build_layers first plans a range's layers on
 * all threads. */
typedef struct wzc_wzx_restorer wzc_wzx_restorer;
wz_err wzc_wzx_restorer_new(const wzc_wzx_reader *r, const wzc_wzx *x, wzc_restore_kind kind,
			    int nthreads, wzc_wzx_restorer **out /* OUT */, wz_diag *diag);
wz_err wzc_wzx_restorer_run(wzc_wzx_restorer *p, long first, long count, void *out /* OUT */,
			    wz_diag *diag);
/* The same where the run's blocks were placed (wzc_wzx_reader_place) and
 * not read: each thread reads its share of them (wzc_wzx_reader_fill),
 * then restores it, so the reading is spread over the threads too.  A
 * read that fails is the error of the first block of that share. */
wz_err wzc_wzx_restorer_fill_run(wzc_wzx_restorer *p, long first, long count, void *out /* OUT */,
				 wz_diag *diag);
void wzc_wzx_restorer_free(wzc_wzx_restorer *p);

/* Layers lo .. lo + n - 1 planned and their tables built now, on nthreads
 * threads (otherwise each is built by its first block); the error is the
 * lowest failing layer's, the one its first block would report. */
wz_err wzc_wzx_build_layers(const wzc_wzx *x, int lo, int n, int nthreads, wz_diag *diag);

/* For the metrics: encodes every layer of a window with the codec's grid,
 * writes the container in memory, reads it back, and returns the records
 * decoded from it [L][T][B] (caller frees with free()) and its stats. */
wz_err wzc_wzx_roundtrip(wzc_codec *codec, const wzc_window *w, uint8_t **records /* OUT */,
			 wzc_wzx_stats *stats /* OUT */, wz_diag *diag);

#endif
