/* What binds a fleet: which resource made the largest failing fleet of a
 * search fail, read from that run's refusals and from where the time of
 * its slow requests went, so a report can say why a format saves GPUs or
 * does not. */
#ifndef WZS_BINDING_H
#define WZS_BINDING_H

#include "sim/metrics.h"
#include "sim/params.h"

typedef enum {
	WZS_BIND_NONE = 0,          /* one replica meets the targets */
	WZS_BIND_HBM_CAPACITY,      /* requests waited for cache blocks */
	WZS_BIND_BATCH_LIMIT,       /* requests waited for a batch slot (max_batch) */
	WZS_BIND_DECODE_COMPUTE,    /* decode steps too slow, FLOP-bound */
	WZS_BIND_DECODE_BANDWIDTH,  /* decode steps too slow, bound by the bytes they read */
	WZS_BIND_PREFILL_COMPUTE,   /* prefill passes: slow first tokens, or steps they delay */
	WZS_BIND_RESTORE_BANDWIDTH, /* restoring parked caches over the host link or SSDs */
	WZS_BIND_RESTORE_DECODE,    /* restoring parked caches: the host's decode of them */
	WZS_BIND_NETWORK,           /* disaggregated: the cache's move from prefill to decode */
	WZS_BIND_UNKNOWN,           /* the failing run finished nothing to read */
	WZS_BIND_ALL_TO_ALL         /* expert parallelism: the dispatch and combine between GPUs */
} wzs_binding;

/* The resource that made `failing` (a run below the answer) miss the
 * targets: refusals are memory's (or the batch limit's, where that is what
 * the refused requests waited for); otherwise the target missed by more
 * decides, TTFT by the largest part of its slow requests' time (queueing:
 * HBM capacity; restore; prefill), TPOT by the replicas' busy time
 * (prefill passes, or decode steps by their roofline).  `failing` NULL:
 * nothing failed, WZS_BIND_NONE. */
wzs_binding wzs_what_binds(const wzs_params *p, const wzs_result *failing);

/* "HBM capacity", "decode compute", ... */
const char *wzs_binding_name(wzs_binding b);

/* The binding's name, and where prefill binds and some of what it
 * prefilled recomputed caches that were dropped or evicted for room,
 * that share ("prefill compute, 31% of it recomputing dropped or evicted
 * caches"): a smaller format, keeping more caches, then lightens the
 * prefill load too.  Writes at most n bytes to buf and returns it. */
const char *wzs_binding_text(wzs_binding b, double recomputed_share, char *buf, size_t n);

#endif
