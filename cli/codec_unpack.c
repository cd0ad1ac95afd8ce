/* `wzplan codec unpack`: a wzx container back to wz GPU-tier records, the
 * transformed domain or bf16 values, streaming: the container is read a
 * run of blocks at a time (its index held, 16 bytes a block) and restored
 * on all cores into an output written as it goes (atomically: a temporary
 * file renamed at the end), so memory stays a few blocks per thread
 * whatever the session's length (docs/wzx-format.md). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/codec_cli.h"
#include "codec/profile.h"
#include "codec/wzx.h"
#include "common/wz_io.h"

/* Blocks per thread in one run: enough to keep every thread busy between
 * writes, few enough that memory is a handful of blocks per thread. */
#define BLOCKS_PER_THREAD 4

static void help_unpack(void)
{
	printf("Usage: wzplan codec unpack --in FILE.wzx --profile PROFILE --out FILE\n"
	       "                           [--to wz|transformed|bf16] [--layer L --block B]\n"
	       "                           [--threads N]\n"
	       "\n"
	       "Reads a wzx container, checking every block's checksum, and writes the\n"
	       "wz GPU-tier records it holds ([L][T][record bytes], --to wz, the default),\n"
	       "the transformed domain attention reads ([L][T][R + P] little-endian float32,\n"
	       "--to transformed) or the decoded values ([L][T][R + P] little-endian bf16,\n"
	       "latent first).  --layer and --block read one block of 64 tokens through the\n"
	       "index.  Blocks are restored on N threads (default: every core); the output\n"
	       "is the same for any N.  A damaged or foreign container exits with status 2.\n");
}

/* The container read with pread a run of blocks at a time, never mapped
 * (a file that shrinks while it is read is then an error, not a SIGBUS)
 * nor read whole: memory is its index (16 bytes a block) and a run of
 * blocks, whatever the session's length. */
typedef struct {
	int fd;
	int shrank;
} source;

static int read_at(void *ctx, size_t off, size_t len, void *dst)
{
	source *s = ctx;
	size_t got = 0;
	while (got < len) {
		ssize_t k = pread(s->fd, (uint8_t *)dst + got, len - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			s->shrank = k == 0;
			return -1;
		}
		got += (size_t)k;
	}
	return 0;
}

static wz_err open_in(const char *path, source *src, wzc_wzx_reader **r, wz_diag *diag)
{
	*r = NULL;
	src->shrank = 0;
	src->fd = open(path, O_RDONLY);
	struct stat st;
	if (src->fd < 0 || fstat(src->fd, &st))
		return wz_diag_set(diag, WZ_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: not a regular file", path);
	return wzc_wzx_open_source((size_t)st.st_size, read_at, src, path, r, diag);
}

/* A failed read says why: the file shrank, or the system's error. */
static wz_err read_failure(const char *path, const source *src, wz_err e, wz_diag *diag)
{
	if (e != WZ_ERR_IO)
		return e;
	if (src->shrank)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: the file shrank while it was read", path);
	return wz_diag_set(diag, WZ_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
}

int wz_codec_unpack(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "in", required_argument, NULL, 'i' },	   { "profile", required_argument, NULL, 'p' },
		{ "out", required_argument, NULL, 'o' },   { "to", required_argument, NULL, 'T' },
		{ "layer", required_argument, NULL, 'l' }, { "block", required_argument, NULL, 'b' },
		{ "threads", required_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in = NULL, *profile = NULL, *out = NULL, *to = "wz";
	long layer = -1, block = -1, threads = 0;
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:p:o:T:l:b:j:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': in = optarg; break;
		case 'p': profile = optarg; break;
		case 'o': out = optarg; break;
		case 'T': to = optarg; break;
		case 'l':
			if ((rc = wz_cli_long(CMD, "--layer", optarg, 0, 4095, &layer)))
				return rc;
			break;
		case 'b':
			if ((rc = wz_cli_long(CMD, "--block", optarg, 0, 0x7fffffffL, &block)))
				return rc;
			break;
		case 'j':
			if ((rc = wz_cli_long(CMD, "--threads", optarg, 1, 1024, &threads)))
				return rc;
			break;
		case 'h': help_unpack(); return 0;
		case ':': return wz_cli_bad_option(CMD, ':', argv);
		default: return wz_cli_bad_option(CMD, '?', argv);
		}
	}
	if (optind < argc)
		return wz_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
	if (!in || !profile || !out)
		return wz_cli_usage(CMD, "unpack needs --in, --profile and --out");
	wzc_restore_kind kind;
	if (!strcmp(to, "wz"))
		kind = WZC_RESTORE_RECORDS;
	else if (!strcmp(to, "transformed"))
		kind = WZC_RESTORE_TRANSFORMED;
	else if (!strcmp(to, "bf16"))
		kind = WZC_RESTORE_BF16;
	else
		return wz_cli_usage(CMD, "--to: wz, transformed or bf16, not '%s'", to);
	if ((layer < 0) != (block < 0))
		return wz_cli_usage(CMD, "--layer and --block go together");
	int nthreads = threads > 0 ? (int)threads : wz_cli_cores();
	wz_diag diag;
	wzc_profile *prof;
	if (wzc_profile_read(profile, &prof, &diag))
		return wz_cli_fail(CMD, &diag);
	source src = { -1, 0 };
	wzc_wzx_reader *r = NULL;
	wzc_wzx *x = NULL;
	uint8_t *buf = NULL;
	wz_out_file of = { NULL, -1 };
	size_t nout = 0;
	long first = 0, count = 0, ntok = 0;
	wz_err e = open_in(in, &src, &r, &diag);
	if (e)
		e = read_failure(in, &src, e, &diag);
	if (!e)
		e = wzc_wzx_coder_for(r, prof, &x, &diag);
	const wzc_wzx_info *info = r ? wzc_wzx_reader_info(r) : NULL;
	if (!e && layer >= 0) {
		if (layer >= info->L || block >= info->blocks_per_layer)
			e = wz_diag_set(&diag, WZ_ERR_RANGE, "%s: no block %ld of layer %ld", in, block, layer);
		first = layer * info->blocks_per_layer + block;
		count = 1;
	} else if (!e) {
		count = info->nblocks;
	}
	size_t per = info ? wzc_wzx_restore_token_bytes(info, kind) : 0;
	long run = (long)nthreads * BLOCKS_PER_THREAD;
	if (!e && !(buf = malloc(per * WZC_WZX_BLOCK_TOKENS * (size_t)run)))
		e = wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
	if (!e)
		e = wz_out_open(&of, out, &diag);
	for (long b0 = first; !e && b0 < first + count; b0 += run) {
		long nb = first + count - b0 < run ? first + count - b0 : run;
		e = wzc_wzx_reader_load(r, b0, nb, &diag);
		if (e)
			e = read_failure(in, &src, e, &diag);
		if (!e)
			e = wzc_wzx_restore(r, x, kind, b0, nb, nthreads, buf, &diag);
		/* the tokens of these blocks: every block of a layer has 64 but
		 * the layer's last */
		long tok = 0;
		for (long i = b0; i < b0 + nb; i++) {
			long bl = i % info->blocks_per_layer;
			long t0 = bl * WZC_WZX_BLOCK_TOKENS;
			tok += info->T - t0 < WZC_WZX_BLOCK_TOKENS ? info->T - t0 : WZC_WZX_BLOCK_TOKENS;
		}
		if (!e)
			e = wz_out_write(&of, out, buf, per * (size_t)tok, &diag);
		nout += per * (size_t)tok;
		ntok += tok;
	}
	if (of.fd >= 0) {
		wz_err ce = wz_out_close(&of, out, !e, &diag);
		e = e ? e : ce;
	}
	if (!e) {
		int nl = layer >= 0 ? 1 : info->L;
		printf("%s: %d layer%s x %ld tokens as %s, %zu bytes (%d thread%s)\n", out, nl,
		       nl == 1 ? "" : "s", ntok / nl, to, nout, nthreads, nthreads == 1 ? "" : "s");
	}
	free(buf);
	wzc_wzx_free(x);
	wzc_wzx_reader_free(r);
	if (src.fd >= 0)
		close(src.fd);
	wzc_profile_free(prof);
	return e ? wz_cli_fail(CMD, &diag) : 0;
}
