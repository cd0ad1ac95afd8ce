/* Replaying a traffic table faster: the arrival of sessions sped up, the
 * time between a session's turns kept (it is the user's think time, plus
 * the response time of the fleet the trace was taken on). */
#ifndef WZS_SPEEDUP_H
#define WZS_SPEEDUP_H

#include "common/wz_error.h"
#include "traces/traffic.h"

typedef enum {
	WZS_SPEEDUP_SESSIONS = 0, /* session starts divided by X; gaps between turns kept */
	WZS_SPEEDUP_ALL = 1,      /* every arrival divided by X (think time compressed too) */
} wzs_speedup_mode;

/* Rewrites t's arrival times for a replay `factor` times faster and sorts
 * the rows by the new times (stably, so each session keeps its turn
 * order).  With WZS_SPEEDUP_SESSIONS a session's first turn arrives at
 * its time / factor and every later turn the same time after it as in the
 * trace.  Fails only on a factor outside (0, 1e6] or out of memory. */
wz_err wzs_traffic_speedup(wzt_traffic *t, double factor, wzs_speedup_mode mode, wz_diag *diag);

#endif
