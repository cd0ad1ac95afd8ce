/* Error codes shared by every wzplan module, and a diagnostic carrying the
 * detailed message for the human. */
#ifndef WZ_ERROR_H
#define WZ_ERROR_H

/* Never renumber: the values appear in archives and test expectations. */
typedef enum {
	WZ_OK = 0,
	WZ_ERR_NOMEM = 1,       /* allocation failed */
	WZ_ERR_IO = 2,          /* the operating system refused a read or write */
	WZ_ERR_USAGE = 3,       /* bad options or arguments */
	WZ_ERR_INPUT = 4,       /* a malformed input file or value */
	WZ_ERR_NOT_FOUND = 5,   /* an unknown name (model, GPU, format, run) */
	WZ_ERR_MISSING = 6,     /* a value the calculation needs is empty */
	WZ_ERR_RANGE = 7,       /* a value outside what the model allows */
	WZ_ERR_CORRUPT = 8,     /* checksum or structure mismatch */
	WZ_ERR_VERSION = 9,     /* a file from a newer or unknown version */
	WZ_ERR_REFUSED = 10,    /* an input the operation must not use */
	WZ_ERR_UNSUPPORTED = 11,/* valid, but not something this build can do */
	WZ_ERR_BUSY = 12,       /* a lock could not be taken in time */
	WZ_ERR_INTERNAL = 13,   /* a bug of ours */
	WZ_ERR_MISMATCH = 14,   /* a recomputed figure differs from the stored one */
	WZ_ERR__COUNT
} wz_err;

/* Short text for a code; never NULL. */
const char *wz_strerror(wz_err code);

/* Process exit status for a code: 0 ok, 2 bad usage or input, 1 otherwise. */
int wz_exit_status(wz_err code);

/* A code with the message for the human, e.g. "models.csv:4: field
 * hbm_gib: not a number". Functions that can fail take a `wz_diag *` that may
 * be NULL. */
typedef struct {
	wz_err code;
	char msg[1024];
} wz_diag;

/* Sets *diag (when not NULL) and returns code, so callers can write
 * `return wz_diag_set(d, WZ_ERR_INPUT, "...")`. */
wz_err wz_diag_set(wz_diag *diag, wz_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Clears *diag to WZ_OK with an empty message. */
void wz_diag_clear(wz_diag *diag);

#endif
