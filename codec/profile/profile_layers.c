/* Reading some layers of a profile (wzc_profile_read_layers): from
 * version 5, the header, directory and trailing checksum with pread, then
 * each wanted layer, checked against its directory entry; the others are
 * left unread (docs/wz-format.md, "Profile file"). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/profile/profile.h"
#include "codec/profile/profile_internal.h"
#include "common/wz_io.h"

/* The header and directory from fd (n bytes): the first bytes say how
 * many to read; 1 in *whole when the file is of a version read whole. */
static wz_err open_head(int fd, const char *path, uint64_t n, int *whole, wzc_profile **out,
			wz_diag *diag)
{
	uint8_t first[WZC_PROFILE_HEAD_MAX];
	size_t nfirst = n < sizeof first ? (size_t)n : sizeof first;
	*whole = 0;
	wz_err e = wz_read_at(fd, path, 0, nfirst, first, diag);
	if (e)
		return e;
	if (nfirst < 40 || get32(first + 8) < 5) {
		*whole = 1; /* one checksum over it all; too short: its reader says so */
		return WZ_OK;
	}
	/* out of range, the head alone: the parser names what is wrong */
	uint32_t L = get32(first + 16), mlen = get32(first + 36);
	size_t H = L <= WZC_PROF_MAX_L && mlen <= WZC_MODEL_MAX ? layers_at(mlen, L) : 0;
	size_t nhead = H > nfirst && H <= n ? H : nfirst;
	uint8_t *head = nhead > nfirst ? malloc(nhead) : first;
	uint8_t trailer[8] = { 0 };
	if (!head)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	if (head != first)
		e = wz_read_at(fd, path, 0, nhead, head, diag);
	if (!e && n >= 8)
		e = wz_read_at(fd, path, n - 8, 8, trailer, diag);
	if (!e)
		e = wzc_profile_open_head(head, nhead, (size_t)n, get64(trailer), path, out, diag);
	if (head != first)
		free(head);
	return e;
}

wz_err wzc_profile_read_layers(const char *path, const unsigned char *want, int nwant,
			       wzc_profile **out, wz_diag *diag)
{
	*out = NULL;
	if (!want)
		return wzc_profile_read(path, out, diag);
	int fd, whole;
	uint64_t n;
	wz_err e = wz_open_at(path, &fd, &n, diag);
	if (e == WZ_ERR_UNSUPPORTED) /* a pipe: read as it comes */
		return wzc_profile_read(path, out, diag);
	if (e)
		return e;
	wzc_profile *p = NULL;
	e = open_head(fd, path, n, &whole, &p, diag);
	if (e || whole) {
		close(fd);
		return e ? e : wzc_profile_read(path, out, diag);
	}
	/* the wanted layers into one buffer: the profile's backing when its
	 * arrays point into it */
	size_t S = wzc_profile_layer_size(p), count = 0;
	for (int l = 0; l < p->L && l < nwant; l++)
		count += want[l] != 0;
	uint8_t *buf = NULL;
	if (count && posix_memalign((void **)&buf, 64, count * S))
		e = wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
	int view = buf && wzc_profile_can_view(buf);
	if (view)
		p->backing = buf;
	size_t at = 0;
	for (int l = 0; !e && l < p->L && l < nwant; l++) {
		if (!want[l])
			continue;
		e = wz_read_at(fd, path, wzc_profile_layer_offset(p, l), S, buf + at, diag);
		if (!e)
			e = wzc_profile_load_layer(p, l, buf + at, view, path, diag);
		at += S;
	}
	close(fd);
	if (!view)
		free(buf); /* the layers' arrays are copies */
	if (e) {
		wzc_profile_free(p);
		return e;
	}
	*out = p;
	return WZ_OK;
}
