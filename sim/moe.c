/* Expert parallelism's shape, bandwidths and time terms (moe.h). */
#include "sim/moe.h"

#include <math.h>
#include <string.h>

#include "sim/weights.h"

/* DeepEP (github.com/deepseek-ai/DeepEP, docs/legacy.md, "Performance",
 * V1 kernels) measured on H800 with one ConnectX-7 400 Gb/s NIC per GPU,
 * DeepSeek-V3's shape (7168 hidden, top-8, FP8 dispatch, BF16 combine),
 * bandwidth per GPU as bytes over the time: tokens x top-k x hidden for
 * the low-latency kernels, tokens x distinct destinations x hidden for
 * the normal ones (wzs_moe_destinations).
 * Normal kernels (prefill, 4096 tokens): EP8 intranode 153 / 158 GB/s
 * over NVLink; internode EP16 43 / 43, EP32 58 / 57, EP64 51 / 50 GB/s
 * over RDMA.  Low-latency kernels (decode, 128 tokens, pure RDMA): EP8
 * 98 / 127, EP16 63 / 74, EP32 48 / 53, EP64 43 / 46, EP128 39 / 39,
 * EP256 39 / 40 GB/s.  An EP size between two measured ones takes the
 * larger's figure (the slower, beyond 32), below 8 the EP8 figure. */
typedef struct {
	int ep;
	double dispatch_gbps, combine_gbps;
} deepep_row;

static const deepep_row normal_rows[] = {
	{ 8, 153, 158 }, { 16, 43, 43 }, { 32, 58, 57 }, { 64, 51, 50 },
};
static const deepep_row low_latency_rows[] = {
	{ 8, 98, 127 }, { 16, 63, 74 }, { 32, 48, 53 }, { 64, 43, 46 }, { 128, 39, 39 }, { 256, 39, 40 },
};

/* The low-latency kernels' floor: DeepEP's dispatch and combine of the
 * fewest tokens measured (1 on one node, 2 across), DeepSeek-V3's shape
 * (7168 hidden, 256 experts, top 8) on H100 with SGLang: NVIDIA
 * AIConfigurator, systems/data/h100_sxm/comm/sglang/0.5.6.post2/
 * wideep_deepep_ll_perf.parquet, microseconds.  A group between two sizes
 * takes the larger's, beyond 64 GPUs the 64's. */
static const deepep_row ll_floor_rows[] = {
	{ 8, 16.28, 12.1988 }, { 16, 22.57, 25.9 }, { 32, 27.13, 28.43 }, { 64, 28.7, 30.77 },
};

static const deepep_row *deepep_lookup(const deepep_row *rows, int n, int ep)
{
	for (int i = 0; i < n; i++)
		if (ep <= rows[i].ep)
			return &rows[i];
	return &rows[n - 1];
}

/* DeepEP's rows were measured on H800: NVLink 400 GB/s both ways
 * (gpus.csv) and one ConnectX-7 of 400 Gb/s, 50 GB/s, per GPU. */
#define DEEPEP_NVLINK_GBPS 400.0
#define DEEPEP_NIC_GBPS 50.0

/* The all-to-all by topology, for an EP group of `gpus`: inside one NVLink
 * domain (the catalog's nvlink_domain: 8 on an HGX board, 72 on NVL72)
 * every byte crosses NVLink, at DeepEP's intranode figure (EP8, 153 / 158
 * GB/s, NVLink-bound) scaled by the GPU's NVLink over the H800's; across
 * domains at the internode rows scaled by the GPU's NIC over the CX7's.
 * DeepEP's low-latency rows are RDMA even within an HGX board, so a group
 * of 8 or fewer keeps them (NIC-scaled); inside a wider domain they run
 * over NVLink too.  Without the catalog's columns, the rows as measured. */
static void topology_row(const wzm_gpu *gpu, int gpus, const deepep_row *measured,
			 int low_latency, deepep_row *out)
{
	*out = *measured;
	double domain = gpu ? gpu->nvlink_domain : NAN;
	double nvlink = gpu ? gpu->nvlink_gbps : NAN, nic = gpu ? gpu->nic_gbps : NAN;
	int inside = !isnan(domain) && gpus <= domain && !(low_latency && gpus <= 8);
	if (inside && nvlink > 0) {
		out->dispatch_gbps = normal_rows[0].dispatch_gbps * nvlink / DEEPEP_NVLINK_GBPS;
		out->combine_gbps = normal_rows[0].combine_gbps * nvlink / DEEPEP_NVLINK_GBPS;
	} else if (!inside && gpus > 8 && nic > 0) {
		out->dispatch_gbps = measured->dispatch_gbps * nic / DEEPEP_NIC_GBPS;
		out->combine_gbps = measured->combine_gbps * nic / DEEPEP_NIC_GBPS;
	} else if (low_latency && nic > 0) {
		out->dispatch_gbps = measured->dispatch_gbps * nic / DEEPEP_NIC_GBPS;
		out->combine_gbps = measured->combine_gbps * nic / DEEPEP_NIC_GBPS;
	}
}

static void bandwidths(const wzs_params *p, const wzm_gpu *gpu, int gpus, const deepep_row *rows,
		       int nrows, int low_latency, double *dispatch_bps, double *combine_bps)
{
	deepep_row r;
	topology_row(gpu, gpus, deepep_lookup(rows, nrows, gpus), low_latency, &r);
	*dispatch_bps = (p->ep_dispatch_gbps > 0 ? p->ep_dispatch_gbps : r.dispatch_gbps) * 1e9;
	*combine_bps = (p->ep_combine_gbps > 0 ? p->ep_combine_gbps : r.combine_gbps) * 1e9;
}

double wzs_moe_fabric(const wzm_gpu *gpu, long gpus_per_node)
{
	return gpu && gpu->nvlink_domain > 0 ? gpu->nvlink_domain : (double)gpus_per_node;
}

wz_err wzs_moe_build(const wzm_model *model, const wzm_gpu *gpu, const wzs_params *p, int gpus,
		     int tensor_parallel, int pool_gpus, wzs_moe *out, wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	out->compute_factor = 1;
	out->imbalance = 1;
	if (!p->expert_parallel)
		return WZ_OK;
	if (tensor_parallel)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "expert_parallel: needs attention data parallelism "
				   "(parallelism = attention-dp), not tp");
	double routed_all;
	wzs_moe_shape sh;
	wz_err err = wzs_moe_shape_check(model, p, &sh, &routed_all, diag);
	if (err)
		return err;
	double expert = 3.0 * model->hidden_size * (double)sh.intermediate; /* gate, up, down */
	double routed = (double)sh.layers * (double)sh.top_k * expert;
	double shared = (double)sh.layers * (double)sh.shared_experts * expert;
	double active = model->params_active_b * 1e9, total = model->params_total_b * 1e9;
	out->on = 1;
	out->layers = (double)sh.layers;
	out->routed_share = routed / active;
	out->shared_share = shared / active;
	/* Each GPU holds the replicated weights whole and 1/gpus of the
	 * routed experts, and reads the replicated ones every step. */
	out->replicated_params = total - routed_all;
	out->always_read = out->replicated_params /
			   (out->replicated_params + routed_all / (gpus > 1 ? gpus : 1));
	out->expert_pick = (double)sh.top_k / (double)sh.routed_experts;
	out->imbalance = p->ep_imbalance;
	out->compute_factor = 1 + out->routed_share * (p->ep_imbalance - 1);
	out->dispatch_bytes = model->hidden_size * (1 + 4.0 / 128);
	out->combine_bytes = model->hidden_size * 2;
	double experts = (double)sh.routed_experts, k = (double)sh.top_k;
	int pool = pool_gpus > 0 ? pool_gpus : gpus;
	out->decode_dests = k;
	/* across NVLink domains the normal kernels send a token once to each
	 * domain holding one of its experts and forward it over NVLink there */
	long fabric = (long)wzs_moe_fabric(gpu, p->gpus_per_node);
	out->prefill_dests = wzs_moe_destinations(experts, k, wzs_moe_normal_units(gpus, fabric),
						  sh.n_group, sh.topk_group);
	out->pool_dests = pool == gpus ? out->prefill_dests
				       : wzs_moe_destinations(experts, k,
							      wzs_moe_normal_units(pool, fabric),
							      sh.n_group, sh.topk_group);
	int nn = (int)(sizeof normal_rows / sizeof normal_rows[0]);
	int nl = (int)(sizeof low_latency_rows / sizeof low_latency_rows[0]);
	bandwidths(p, gpu, gpus, low_latency_rows, nl, 1, &out->decode_dispatch_bps,
		   &out->decode_combine_bps);
	bandwidths(p, gpu, gpus, normal_rows, nn, 0, &out->prefill_dispatch_bps,
		   &out->prefill_combine_bps);
	bandwidths(p, gpu, pool, normal_rows, nn, 0, &out->pool_dispatch_bps,
		   &out->pool_combine_bps);
	out->overlap = p->dual_batch_overlap;
	const deepep_row *floor = deepep_lookup(ll_floor_rows, 4, gpus);
	out->decode_dispatch_floor_s = floor->dispatch_gbps * 1e-6;
	out->decode_combine_floor_s = floor->combine_gbps * 1e-6;
	/* One GPU holds every expert: nothing moves. */
	if (gpus <= 1)
		out->decode_dispatch_bps = out->prefill_dispatch_bps = 0;
	if (pool <= 1)
		out->pool_dispatch_bps = 0;
	return WZ_OK;
}

double wzs_moe_comm_time(const wzs_moe *e, double tokens, double dests, double dispatch_bps,
			 double combine_bps)
{
	if (!e->on || tokens <= 0 || !(dispatch_bps > 0) || !(combine_bps > 0))
		return 0;
	return e->layers * tokens * dests *
	       (e->dispatch_bytes / dispatch_bps + e->combine_bytes / combine_bps);
}

double wzs_moe_decode_comm_time(const wzs_moe *e, double tokens)
{
	if (!e->on || tokens <= 0 || !(e->decode_dispatch_bps > 0) || !(e->decode_combine_bps > 0))
		return 0;
	double parts = e->overlap ? 2 : 1, t = tokens / parts;
	double d = t * e->decode_dests * e->dispatch_bytes / e->decode_dispatch_bps;
	double c = t * e->decode_dests * e->combine_bytes / e->decode_combine_bps;
	if (d < e->decode_dispatch_floor_s)
		d = e->decode_dispatch_floor_s;
	if (c < e->decode_combine_floor_s)
		c = e->decode_combine_floor_s;
	return e->layers * parts * (d + c);
}

void wzs_moe_decode_comm_parts(const wzs_moe *e, double tokens, double *dispatch_s,
			       double *combine_s)
{
	*dispatch_s = *combine_s = 0;
	if (!e->on || tokens <= 0 || !(e->decode_dispatch_bps > 0) || !(e->decode_combine_bps > 0))
		return;
	double d = tokens * e->decode_dests * e->dispatch_bytes / e->decode_dispatch_bps;
	double c = tokens * e->decode_dests * e->combine_bytes / e->decode_combine_bps;
	*dispatch_s = e->layers * (d > e->decode_dispatch_floor_s ? d : e->decode_dispatch_floor_s);
	*combine_s = e->layers * (c > e->decode_combine_floor_s ? c : e->decode_combine_floor_s);
}

/* C(a - x, k) / C(a, k) for real a and x: a unit with x of a experts
 * gets none of k distinct picks. */
static double miss_all(double a, double x, int k)
{
	double miss = 1;
	for (int i = 0; i < k; i++)
		miss *= a - x - i > 0 ? (a - x - i) / (a - i) : 0;
	return miss;
}

/* DeepEP's tests count the normal kernels' bytes this way
 * (tests/legacy/test_internode.py: RDMA bytes = num_rdma_token_sent x
 * hidden x 2, num_rdma_token_sent the distinct nodes of each token's
 * experts; tests/test_intranode.py: NVLink bytes = the tokens each rank
 * receives x hidden x 2), so their GB/s are per distinct destination, not
 * per expert picked as the low-latency kernels' are. */
double wzs_moe_destinations(double experts, double top_k, double units, long n_group,
			    long topk_group)
{
	if (units <= 1)
		return 1;
	if (n_group < 1 || n_group > WZS_MOE_MAX_GROUPS || topk_group < 1 || topk_group >= n_group)
		n_group = topk_group = 1;
	double per_group = experts / (double)n_group, per_unit = experts / units;
	double a = per_group * (double)topk_group, sum = 0;
	long sets = 0;
	int nu = (int)ceil(units - 1e-9);
	for (unsigned long s = 0; s < 1ul << n_group; s++) {
		if (__builtin_popcountl(s) != topk_group)
			continue;
		sets++;
		for (int u = 0; u < nu; u++) {
			double u0 = u * per_unit, u1 = (u + 1) * per_unit, x = 0;
			if (u1 > experts)
				u1 = experts;
			for (long g = 0; g < n_group; g++) {
				if (!(s >> g & 1))
					continue;
				double lo = g * per_group > u0 ? g * per_group : u0;
				double hi = (g + 1) * per_group < u1 ? (g + 1) * per_group : u1;
				x += hi > lo ? hi - lo : 0;
			}
			sum += 1 - miss_all(a, x, (int)top_k);
		}
	}
	return sum / (double)sets;
}

double wzs_moe_normal_units(int gpus, long gpus_per_node)
{
	if (gpus <= gpus_per_node || gpus_per_node <= 0)
		return gpus;
	return (double)gpus / (double)gpus_per_node;
}

double wzs_moe_combine(const wzs_moe *e, double roofline_s, double comm_s)
{
	if (e->overlap)
		return roofline_s > comm_s ? roofline_s : comm_s;
	return roofline_s + comm_s;
}
