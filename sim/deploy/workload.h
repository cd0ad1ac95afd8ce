/* What the deployment search's screen (screen.c) and its lower bound
 * (bound.c) share: a configuration's workload on its replica model and
 * the load a decode batch per rank carries. */
#ifndef WZD_WORKLOAD_H
#define WZD_WORKLOAD_H

#include "sim/deploy/deploy.h"

typedef struct {
	const wzd_base *b;
	wzs_replica_model m;
	wzs_params p;
	double ranks, context, prompt, output, think, first_share;
	double first_new;              /* a new session's first prompt's tokens */
	double t_first, t_follow;      /* each alone, to its first token */
	double s_prefill;              /* disaggregated without instances: pool GPU seconds of
					  prefill a request */
	double g_first, g_follow;      /* the same of a first prompt and of a later turn */
	double first_passes;           /* aggregated: passes of a first prompt alone */
	double link_first, link_follow;/* disaggregated: each one's cache to the decode GPUs */
	double follow_pairs;           /* a later turn's (query, key) pairs */
	double pool;                   /* prefill pool GPUs (0: aggregated) */
	double users_mem;              /* users a replica holds (resident), or HUGE_VAL */
	double users_mean;             /* the same at their mean context, no margin */
	double users_least;            /* the same at the least context a session holds */
	double running_mem;            /* running requests a rank holds */
	double running_least;          /* the same at the least context */
	double cap;                    /* decode batch per rank: the batch cap */
} wzd_workload;

/* One decode batch per rank: its mean time per output token with the
 * prefill that the batch's completions bring, the replica's request rate,
 * and the prefill server's busy share. */
typedef struct {
	double tpot, rate, busy, users;
	double tail;   /* aggregated: the share of requests a long pass puts over the TPOT target */
	double ttft_first, ttft_follow; /* a first prompt's and a later turn's, at this load */
	double ttft_tail; /* prefill instances: the share of requests past their TTFT target */
} wzd_point;

/* The workload of configuration c under b (screen.c). */
wz_err wzd_workload_build(const wzd_base *b, const wzd_config *c, wzd_workload *w /* OUT */,
			  wz_diag *diag);

/* The point at a decode batch of per_rank requests a rank (screen.c). */
void wzd_at_batch(const wzd_workload *w, double per_rank, wzd_point *out /* OUT */);

/* The most users a replica could serve by the relaxation of the
 * simulator that gives the lower bound (bound.c). */
double wzd_load_bound(const wzd_workload *wl);

#endif
