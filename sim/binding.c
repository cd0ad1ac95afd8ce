/* Which resource binds a sized fleet (binding.h). */
#include "sim/binding.h"
#include "sim/sim.h"

#include <stdio.h>

/* Prefill binds: its computation, or (expert parallelism) its all-to-all
 * where that was the longer part of most of the passes' time. */
static wzs_binding prefill_binding(const wzs_result *r)
{
	return 2 * r->busy_prefill_network_s > r->busy_prefill_s ? WZS_BIND_ALL_TO_ALL
								   : WZS_BIND_PREFILL_COMPUTE;
}

wzs_binding wzs_what_binds(const wzs_params *p, const wzs_result *r)
{
	if (!r)
		return WZS_BIND_NONE;
	if (r->refused_too_big)
		return WZS_BIND_HBM_CAPACITY;
	if (r->refused)
		return 2 * r->refused_batch_capped > r->refused ? WZS_BIND_BATCH_LIMIT
								 : WZS_BIND_HBM_CAPACITY;
	if (r->completed == 0)
		return WZS_BIND_UNKNOWN;
	double ttft_over = wzs_ttft_over(p, r), tpot_over = r->tpot.p99 / p->tpot_p99_s;
	if (ttft_over > 1 && ttft_over >= tpot_over) {
		double q = r->slow_ttft_queue_s, f = r->slow_ttft_prefill_s, n = r->slow_ttft_transfer_s;
		double s = r->slow_ttft_restore_s + r->slow_ttft_restore_decode_s;
		if (q >= s && q >= f && q >= n)
			return WZS_BIND_HBM_CAPACITY;
		if (n > s && n > f)
			return WZS_BIND_NETWORK;
		if (s < f)
			return prefill_binding(r);
		return r->slow_ttft_restore_decode_s > r->slow_ttft_restore_s ? WZS_BIND_RESTORE_DECODE
									       : WZS_BIND_RESTORE_BANDWIDTH;
	}
	if (tpot_over > 1) {
		double dc = r->busy_decode_compute_s, dm = r->busy_decode_memory_s;
		double dn = r->busy_decode_network_s;
		if (r->busy_prefill_s > dc + dm + dn)
			return prefill_binding(r);
		if (dn > dc && dn > dm)
			return WZS_BIND_ALL_TO_ALL;
		return dc >= dm ? WZS_BIND_DECODE_COMPUTE : WZS_BIND_DECODE_BANDWIDTH;
	}
	return WZS_BIND_UNKNOWN;
}

const char *wzs_binding_name(wzs_binding b)
{
	switch (b) {
	case WZS_BIND_NONE: return "none (one replica suffices)";
	case WZS_BIND_HBM_CAPACITY: return "HBM capacity";
	case WZS_BIND_BATCH_LIMIT: return "batch limit";
	case WZS_BIND_DECODE_COMPUTE: return "decode compute";
	case WZS_BIND_DECODE_BANDWIDTH: return "decode HBM bandwidth";
	case WZS_BIND_PREFILL_COMPUTE: return "prefill compute";
	case WZS_BIND_RESTORE_BANDWIDTH: return "restore bandwidth";
	case WZS_BIND_RESTORE_DECODE: return "restore decode (host CPU)";
	case WZS_BIND_NETWORK: return "network (prefill to decode)";
	case WZS_BIND_ALL_TO_ALL: return "network (expert all-to-all)";
	case WZS_BIND_UNKNOWN: break;
	}
	return "unknown";
}

const char *wzs_binding_text(wzs_binding b, double recomputed_share, char *buf, size_t n)
{
	const char *name = wzs_binding_name(b);
	/* below half a per cent rounds to nothing worth saying */
	if (b == WZS_BIND_PREFILL_COMPUTE && recomputed_share >= 0.005)
		snprintf(buf, n, "%s, %.0f%% of it recomputing dropped or evicted caches", name,
			 100 * recomputed_share);
	else
		snprintf(buf, n, "%s", name);
	return buf;
}
