/* Error code names and the diagnostic helpers declared in wz_error.h. */
#include "common/wz_error.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const error_names[WZ_ERR__COUNT] = {
	[WZ_OK] = "success",
	[WZ_ERR_NOMEM] = "out of memory",
	[WZ_ERR_IO] = "input/output error",
	[WZ_ERR_USAGE] = "bad usage",
	[WZ_ERR_INPUT] = "bad input",
	[WZ_ERR_NOT_FOUND] = "not found",
	[WZ_ERR_MISSING] = "missing value",
	[WZ_ERR_RANGE] = "value out of range",
	[WZ_ERR_CORRUPT] = "corrupt data",
	[WZ_ERR_VERSION] = "unsupported version",
	[WZ_ERR_REFUSED] = "refused",
	[WZ_ERR_UNSUPPORTED] = "unsupported",
	[WZ_ERR_BUSY] = "busy",
	[WZ_ERR_INTERNAL] = "internal error",
	[WZ_ERR_MISMATCH] = "figures differ",
};

const char *wz_strerror(wz_err code)
{
	if ((unsigned)code >= WZ_ERR__COUNT || !error_names[code])
		return "unknown error";
	return error_names[code];
}

int wz_exit_status(wz_err code)
{
	switch (code) {
	case WZ_OK:
		return 0;
	case WZ_ERR_USAGE:
	case WZ_ERR_INPUT:
	case WZ_ERR_NOT_FOUND:
	case WZ_ERR_MISSING:
	case WZ_ERR_RANGE:
	case WZ_ERR_CORRUPT:
	case WZ_ERR_VERSION:
	case WZ_ERR_REFUSED:
		return 2;
	default:
		return 1;
	}
}

wz_err wz_diag_set(wz_diag *diag, wz_err code, const char *fmt, ...)
{
	if (diag) {
		va_list ap;
		va_start(ap, fmt);
		diag->code = code;
		vsnprintf(diag->msg, sizeof diag->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}

void wz_diag_clear(wz_diag *diag)
{
	if (diag) {
		diag->code = WZ_OK;
		diag->msg[0] = '\0';
	}
}
