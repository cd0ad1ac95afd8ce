/* The wzx container reader's state, private to the container's two files:
 * codec/wzx/wzx_file.c opens it, codec/wzx/wzx_read.c reads blocks
 * through it. */
#ifndef WZC_WZX_READER_H
#define WZC_WZX_READER_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wzx/wzx.h"

/* Over bytes in memory (b), or over a source read through a callback: then
 * the header, the index and footer are held (16 bytes a block), and the
 * blocks of the run last loaded (win), nothing else. */
struct wzc_wzx_reader {
	const uint8_t *b;
	size_t n, index_off;
	const uint8_t *index;
	wzc_wzx_read_fn read;
	void *ctx;
	uint8_t *head, *tail;    /* source: the header's bytes; the index and footer */
	uint8_t *win;            /* source: the loaded run's bytes, from win_off */
	size_t win_off, win_len, win_cap;
	wzc_wzx_info info;
	char origin[128];
};

#endif
