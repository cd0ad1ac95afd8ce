/* The deployment search: for one cache format, the serving configurations a
 * serving engineer would consider for a model and GPU (GPUs per replica,
 * attention data or tensor parallelism, expert parallelism and dual-batch
 * overlap, aggregated or disaggregated serving with its prefill pool,
 * context-parallel prefill, MTP depth, batch cap), ranked by an analytic
 * screen built on the simulator's own step-time model (sim/replica.h), the
 * best few confirmed by simulation (wzs_size), the cheapest fleet meeting
 * the targets kept (DESIGN.md, "Deployment search"). */
#ifndef WZD_DEPLOY_H
#define WZD_DEPLOY_H

#include "common/wz_error.h"
#include "common/wz_str.h"
#include "costmodel/capacity.h"
#include "costmodel/catalog.h"
#include "sim/params.h"
#include "sim/replica.h"
#include "sim/search.h"
#include "sim/sim.h"

/* One serving configuration, as overrides of the scenario's wzs_params and
 * replica shape.  Expert parallelism spans the replica's GPUs (its width
 * is gpus), as sim/moe.h models it. */
typedef struct {
	int gpus;          /* decode (or aggregated) GPUs per replica: gpus_per_replica */
	int tp;            /* parallelism: 1 tp, 0 attention-dp */
	int ep;            /* expert_parallel */
	int dbo;           /* dual_batch_overlap (with ep) */
	int prefill_gpus;  /* serving: 0 aggregated, else disaggregated with this pool */
	int cp;            /* prefill_context_parallel (1: off) */
	int mtp;           /* mtp_draft_tokens (0: off) */
	int max_batch;     /* max_batch */
	int pp;            /* prefill_pipeline_stages (1: none; with a pool, its instances) */
} wzd_config;

/* The keys a configuration sets, as a scenario and --config name them. */
enum {
	WZD_KEY_GPUS, WZD_KEY_PARALLELISM, WZD_KEY_EP, WZD_KEY_DBO, WZD_KEY_SERVING,
	WZD_KEY_PREFILL_GPUS, WZD_KEY_CP, WZD_KEY_MTP, WZD_KEY_MAX_BATCH, WZD_KEY_PP, WZD_NKEYS
};
extern const char *const wzd_key_names[WZD_NKEYS];

#define WZD_MAX_CHOICES 16

/* The values each key may take: a pinned key has one. */
typedef struct {
	int n[WZD_NKEYS];
	int v[WZD_NKEYS][WZD_MAX_CHOICES];
	int pinned[WZD_NKEYS];
} wzd_space;

/* The space for a model and GPU from the scenario's parameters: GPUs per
 * replica from one node (gpus_per_node) up through 256 in doublings,
 * attention-dp or tp, expert parallelism off or on (with dual-batch
 * overlap off or on), aggregated or disaggregated with a prefill pool of
 * one node up to 64 GPUs, context-parallel prefill 1 to 16, MTP 0 to 3
 * drafts where p->mtp_acceptance > 0 (else off), batch caps 64, 128, 256
 * and p->max_batch, and for a disaggregated pool 1, 2 or 4 pipeline
 * stages and the scenario's own (more than one: the pool's prefill
 * instances, sim/pool.c, of the scenario's prefill_instance_gpus or else
 * the whole pool, in that many stages).  Configurations that cannot hold
 * the weights or that the model refuses are dropped when enumerated. */
void wzd_space_default(const wzs_params *p, wzd_space *out /* OUT */);

/* Pins key=value pairs, "key=value, key=value" (a scenario's `config` or
 * --config), each narrowing the space to that value.  `where` prefixes
 * messages ("--config" or "FILE:LINE: config").  Unknown keys and bad
 * values fail naming the key. */
wz_err wzd_space_pin(wzd_space *s, const char *pairs, const char *where, wz_diag *diag);

/* Pins one key to the configuration's value. */
void wzd_space_pin_key(wzd_space *s, int key, int value);

/* The configuration a scenario's own keys describe (its default). */
void wzd_config_of(const wzs_params *p, const wzm_memory_params *mem, wzd_config *out /* OUT */);

/* Applies a configuration to copies of the scenario's parameters and
 * replica shape. */
void wzd_config_apply(const wzd_config *c, wzs_params *p /* IN/OUT */,
		      wzm_memory_params *mem /* IN/OUT */);

/* "16 GPUs attention-dp, EP + DBO, disaggregated 1:2 (pool 32), CP 8,
 * MTP 1, batch 256" */
const char *wzd_config_text(const wzd_config *c, char *buf, size_t n);

/* key=value pairs that reproduce the configuration (for --config). */
const char *wzd_config_pairs(const wzd_config *c, char *buf, size_t n);

/* What a format's search needs beside the configuration: the scenario's
 * model, GPU and parameters, the format's record bytes, and the run's
 * population (run.params and run.model are set per configuration). */
typedef struct {
	const wzm_model *model;
	const wzm_gpu *gpu;
	wzm_memory_params mem;
	wzs_params params;
	long context;
	double record_per_layer, offload_per_layer, decode_cost;
	double restore_per_core_tlps; /* host decode rate of restores (0: none) */
	wzs_run_config run;           /* users, initial_context, max_context */
	double usd_per_gpu_year;      /* reserved rate x hours a year, for costs */
} wzd_base;

/* What binds a screened configuration's users per replica. */
typedef enum {
	WZD_BIND_NONE = 0,
	WZD_BIND_MEMORY,      /* HBM holds no more users' caches */
	WZD_BIND_TPOT,        /* a larger decode batch misses the TPOT target */
	WZD_BIND_TTFT,        /* more load queues prefills past the TTFT target */
	WZD_BIND_BATCH_CAP,   /* the batch cap */
	WZD_BIND_PREFILL_POOL,/* the prefill pool's capacity */
} wzd_bind;
const char *wzd_bind_name(wzd_bind b);

/* The analytic screen's verdict on one configuration. */
typedef struct {
	wzd_config c;
	int feasible;              /* some load per replica meets the targets */
	char why[256];             /* infeasible or dropped: why */
	int dropped;               /* the model refused it (weights do not fit, ...) */
	double users_per_replica;  /* the most users a replica serves within the targets */
	long replicas, gpus;       /* for the scenario's users: the fleet */
	/* The confirmation's lower bound on the simulated fleet: the most
	 * users a replica could serve where only the mean time per token
	 * within the TPOT target and the prefill server busy less than all
	 * the time bind, at any load a rank, HBM holding the running requests
	 * at the least context and idle sessions evicted as the simulator
	 * evicts them (their turns recompute), a turn's cycle up to its
	 * targets (screen.c); 0 when even that fails or a first prompt alone
	 * misses its target.  Feasible or not by the estimate, a
	 * configuration with a bound is a candidate. */
	long gpus_bound;
	/* The order candidates are confirmed in: the same fleet with users at
	 * their mean context, HBM capping them, and no queue, closer to the
	 * simulation than the bound but no bound (0: none). */
	long gpus_order;
	double usd_year;           /* its reserved cost */
	double batch;              /* running requests per attention rank at that load */
	double tpot_s;             /* mean time per output token there */
	double tok_s_gpu;          /* output tokens/s per GPU there */
	double first_prefill_s;    /* a new session's first prompt alone */
	double first_target_s;     /* its TTFT target */
	wzd_bind bind;
} wzd_estimate;

/* The TTFT target of a request of `new_tokens` to prefill: ttft_p99_s plus
 * ttft_per_1k_tokens_s per 1,000 of them. */
double wzd_ttft_target(const wzs_params *p, double new_tokens);

/* Screens one configuration.  Configurations the replica model refuses
 * come back dropped with the model's reason, not as an error. */
void wzd_screen(const wzd_base *b, const wzd_config *c, wzd_estimate *out /* OUT */);

/* One configuration's frontier of output tokens/s per GPU against tokens/s
 * per user, a point per decode batch per rank (1 .. its batch cap, at most
 * n points, doubling), at the load each batch carries; returns the points
 * written.  Prefill's share of the GPUs is taken out as the screen does. */
int wzd_frontier(const wzd_base *b, const wzd_config *c, double *tok_s_user /* OUT */,
		 double *tok_s_gpu /* OUT */, int n);

/* The frontier over many configurations: of the points (x tokens/s per
 * user, y tokens/s per GPU) of each one's wzd_frontier, those no other
 * point beats on both, x falling; returns how many (at most
 * WZD_PARETO_POINTS, thinned evenly beyond that). */
#define WZD_PARETO_POINTS 48
int wzd_pareto(const wzd_base *b, const wzd_estimate *configs, long n, double *x /* OUT */,
	       double *y /* OUT */);

/* Every configuration of the space in a fixed order; returns how many
 * (at most max). */
long wzd_space_enumerate(const wzd_space *s, wzd_config *out /* OUT */, long max);

/* A confirmed configuration: its screen and its simulated fleet. */
typedef struct {
	wzd_estimate est;
	wzs_replica_model model;
	wzs_params params;         /* the run's parameters under the configuration */
	wzs_search search;         /* replicas 0: none met the targets */
	long gpus;                 /* search.replicas x GPUs per replica */
	double usd_year;
	/* searched only up to the fleet that costs as much as a cheaper one
	 * already found (search.replicas 0 then means none cheaper) */
	int capped;
} wzd_confirmed;

typedef struct {
	long nconfigs;             /* enumerated */
	long ndropped;             /* refused by the replica model */
	long nfeasible;            /* screened feasible */
	wzd_estimate *screened;    /* all enumerated, cheapest first (infeasible last) */
	int nconfirmed;
	wzd_confirmed *confirmed;  /* in screen order */
	int best;                  /* index into confirmed of the cheapest meeting the
				      targets, -1 when none did */
	int closest;               /* none did: the confirmed one whose largest fleet came
				      closest to the targets (-1: nothing confirmed) */
	double screen_s, confirm_s;/* wall seconds of each stage */
	unsigned long long runs;   /* simulations run */
	int limit;                 /* the most configurations confirmed */
	/* the limit stopped the confirmation with this many candidates left
	 * whose lower bound beats the best fleet found (the lowest such bound:
	 * unconfirmed_bound GPUs); 0: it stopped because none was left */
	long unconfirmed;
	long unconfirmed_bound;
} wzd_result;

/* Where no configuration has a bound, the most confirmed, in the screen's
 * order (each to the end: the answer then says how close they came). */
#define WZD_INFEASIBLE_CONFIRMS 4

/* The default limit on configurations confirmed (wzplan's --confirm-limit):
 * a cap on the search's cost, not a model constant.  The embedded
 * scenario's searches end by their bounds at 67 to 87 confirmations a
 * format (docs/validation.md), most of them one run each. */
#define WZD_CONFIRM_LIMIT 128

/* The confirmation's stopping rule: of n candidates in the order they are
 * confirmed (cand[j].gpus_order rising), the first one not done[j] whose
 * lower bound is below best_gpus, the best fleet confirmed so far (0 or
 * less: none yet, any); -1 when none is: no unconfirmed candidate can
 * beat the best, and the confirmation stops.  (Any order works.) */
long wzd_next_candidate(const wzd_estimate *cand, long n, const unsigned char *done,
			long best_gpus);

/* Screens every configuration of the space, then confirms by simulation
 * (wzs_size with `threads` threads, up to max_replicas replicas each) the
 * configurations with a bound in the order of their optimistic fleets
 * (gpus_order rising, then gpus_bound; ties in the screen's order: the
 * best is found sooner than in the bounds' order, and each later
 * candidate searched only below it) until no unconfirmed one's bound is below the best
 * fleet confirmed (wzd_next_candidate), or `limit` are confirmed (then
 * out->unconfirmed says how many were left that could still win).  Each
 * searches first up to twice the replicas the screen expects, then,
 * where that failed, on up to the best fleet found, and never at or
 * above it (a fleet there cannot win).  Where only the best found caps
 * a search, the largest fleet below it is run first (wzs_size_below):
 * where it fails, so does every smaller one by the monotonicity the
 * fleet search assumes, and the candidate costs one run; those first
 * runs of the next candidates are made `threads` at once, each on a
 * thread, and taken in turn, so the answer and the runs are the same on
 * any number of threads.  So where every bound holds and
 * the limit does not bind, the answer is the cheapest simulated fleet of
 * the space, and a larger space never answers dearer.  The nfirst
 * configurations of `first` (another format's winner, say: so that a
 * smaller format is never sized dearer than a larger one's best) are
 * confirmed before the screen's, in the space or not.  Configurations
 * the screen cannot tell apart (the same replica shape at the same load,
 * batch and binding limit) count once.  Fails with WZ_ERR_INPUT naming
 * the pinned key when the space is empty, or when every configuration
 * was dropped (naming the pinned keys, or why). */
wz_err wzd_search(const wzd_base *b, const wzd_space *s, const wzd_config *first, int nfirst,
		  int limit, long max_replicas, int threads,
		  void (*on_run)(void *ud, const wzd_config *c, long replicas,
				 const wzs_result *r, int ok),
		  void *ud, wzd_result *out /* OUT */, wz_diag *diag);

/* Confirms one configuration by simulation (what wzd_search does for
 * each): builds its replica model and sizes its fleet. */
wz_err wzd_confirm(const wzd_base *b, const wzd_config *c, long max_replicas, int threads,
		   void (*on_run)(void *ud, long replicas, const wzs_result *r, int ok), void *ud,
		   wzd_confirmed *out /* OUT */, wz_diag *diag);

void wzd_confirmed_free(wzd_confirmed *c);
void wzd_result_free(wzd_result *r);

#endif
