/* Internal state of a simulation run shared by sim.c (event loop, traffic
 * sources, metrics) and the scheduler's files: scheduler.c (admission),
 * batch.c (prefill passes and decode epochs), eviction.c (idle sessions on
 * the GPU), offload.c (the offload tier and restores); not part of the
 * module's interface. */
#ifndef WZS_FLEET_H
#define WZS_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/prefix_cache.h"
#include "sim/sim.h"

enum { EV_OP_END, EV_RESTORE, EV_PARK, EV_USER_TURN, EV_REPLAY, EV_TIMEOUT, EV_SAMPLE,
       EV_KV_ARRIVE, EV_POOL_FREE };
/* Same-time order: finished work first frees blocks for what arrives. */
enum { PRIO_OP_END = 0, PRIO_RESTORE = 1, PRIO_PARK = 2, PRIO_ARRIVAL = 3, PRIO_TIMEOUT = 4,
       PRIO_SAMPLE = 5 };

enum { CACHE_NONE, CACHE_RESIDENT, CACHE_CPU, CACHE_SSD };
/* A request's states (wzs_req.state), the events that move it and the file
 * that moves it:
 *
 *   a turn arrives (sim.c: a user's EV_USER_TURN, a replay's EV_REPLAY)
 *     |                          the session's previous turn still runs
 *     |------------------------------------------------> DEFERRED
 *     |                                                     | that turn done
 *     v                                                     | (sim.c, in
 *   wzs_submit (scheduler.c) <------------------------------+ request_done)
 *     |            needs more blocks than a rank holds: refused ---------+
 *     v                                                                   |
 *   QUEUED --- EV_TIMEOUT, queue_timeout_s waited (scheduler.c): refused -+
 *     | wzs_try_admit (scheduler.c): blocks free, batch room              |
 *     |   cache parked in CPU or SSD, or a shared prefix in CPU           |
 *     |----------------------------------> RESTORING (offload.c)         |
 *     |                                       | EV_RESTORE (offload.c)    |
 *     v                                       v                           |
 *   wzs_pending_append (scheduler.c)                                      |
 *     | aggregated                    | disaggregated (a prefill pool)    |
 *     v                               v                                   |
 *   PENDING <---------+             POOL (disagg.c: prefilled on the      |
 *     | a prefill     | tokens        pool, its cache sent over the link) |
 *     | pass starts   | left after    | EV_KV_ARRIVE (batch.c)            |
 *     v (batch.c)     | the pass      v                                   |
 *   PREFILL ----------+             JOINING: joins the decode batch at    |
 *     | every prompt token            the end of the running step         |
 *     | prefilled (EV_OP_END)         | (batch.c, join_arrived)           |
 *     v                               v                                   |
 *   DECODE (batch.c: decode epochs until its finish_step)                 |
 *     | its last token (EV_OP_END); a request for one output token skips  |
 *     | DECODE: from PREFILL or POOL to FREE with its first               |
 *     v                                                                   v
 *   FREE (sim.c, wzs_request_done: counted done or refused; the session's
 *         cache stays resident, is parked (eviction.c, offload.c) or is
 *         dropped, by the idle policy, and its next turn is scheduled)
 *
 * RQ_REFUSED is never set: a refused request goes to FREE at once, counted
 * as refused (too big, or timed out in the queue).  Each event carries the
 * request's serial, so an event for a request that has moved on (or been
 * reused) is ignored. */
enum { RQ_FREE, RQ_DEFERRED, RQ_QUEUED, RQ_RESTORING, RQ_PENDING, RQ_PREFILL, RQ_DECODE,
       RQ_REFUSED, RQ_POOL, RQ_JOINING };
enum { OP_IDLE, OP_PREFILL, OP_DECODE };

/* A session's state that nearly every one of its events reads: one cache
 * line (the array is line-aligned), since at 10^5 users the sessions are
 * far larger than the caches and each event of a user is a miss. */
typedef struct {
	wzs_rng rng;                  /* population: this user's own stream */
	int64_t ctx;                  /* tokens cached (resident or parked) */
	int32_t replica, rank;        /* rank -1 unless resident */
	int32_t blocks;               /* blocks held on rank (<= blocks_per_rank, < 2^31) */
	uint32_t gen;                 /* invalidates pending park events */
	int32_t turns_left;           /* population: turns before the session ends */
	uint8_t cache, busy, in_lru;
	uint8_t fresh;                /* a new session: its first prefill is not a recompute */
} wzs_sess;

_Static_assert(sizeof(wzs_sess) == 64, "a session is one cache line");

/* A session's place in its rank's LRU list of idle sessions (its own
 * array: unlinking touches two other sessions' links, not their lines). */
typedef struct {
	int32_t prev, next;
} wzs_lru_link;

/* What replays and shared prefixes keep per session, read seldom. */
typedef struct {
	int32_t deferred_head, deferred_tail; /* replay: turns waiting for this one */
	int32_t last_turn;            /* replay: the session's last row's turn */
	int32_t prefix_id;            /* population: its shared prefix (with pop_prefixes) */
} wzs_sess_more;

/* A request, in three cache lines (the array is line-aligned): the first
 * holds what the prefill passes and the decode batch read of every request
 * they walk over, so that a walk touches one line per request. */
typedef struct {
	_Alignas(64) int32_t session;
	int32_t next;
	int32_t rank;
	uint8_t state, counted;
	uint8_t batch_capped;         /* its last failed admission met max_batch, not memory */
	uint8_t restore_decode_bound; /* its restore waited on the host's decode, not the link */
	int64_t prefix, prompt, reuse;
	int64_t prefilled, op_take;   /* prefill tokens done, and in the running pass */
	int64_t output;
	/* line 2 */
	int32_t prev;
	uint32_t serial;
	int32_t turn;
	int32_t shared_id;            /* the shared prefix it begins with, */
	int64_t shared_tokens;        /* of these tokens (0: none) */
	int64_t need_blocks;
	int64_t finish_step;
	double tok_contrib;           /* this request's share of its rank's token sum */
	double arrival;               /* when it could run: the queueing clock starts here */
	double first_token;
	/* line 3 */
	double requested;             /* when the trace or the user sent it */
	double admitted;
	double restored;              /* its cache back from the offload tier (= admitted if none) */
	double pool_done;             /* disaggregated: its prefill done on the pool (0: none) */
	double prefill_start;         /* its prefill's first pass, or its pool GPUs, began (0: not yet) */
	uint8_t prefix_missed;        /* looked up and missed some: its prefill adds the prefix */
	int64_t recompute;            /* its prefill's first tokens that recompute its session's
				       * dropped or evicted context (0: none) */
} wzs_req;

_Static_assert(sizeof(wzs_req) == 192 && offsetof(wzs_req, prev) == 64,
	       "a request is three cache lines, the walks' fields in the first");

/* Requests a prefill pass's walk records (wzs_fleet.pf_walk): a line's
 * worth with the count. */
#define WZS_WALK_IDS 15

typedef struct {
	int64_t step;
	int32_t req;
	int32_t sess;                 /* the request's session, for prefetching */
} wzs_dslot;

/* A replica.  What an operation's end and an admission read comes first,
 * in two lines (the array is line-aligned), so that the next event's
 * replica can be prefetched whole; the rest is read seldom. */
typedef struct {
	/* line 1: the running operation and the decode batch */
	_Alignas(64) int op;
	int32_t pf_head;              /* waiting for prefill */
	int32_t q_head;
	double op_start, t0, dt;
	int64_t op_k;
	int64_t steps;
	wzs_dslot *dheap;             /* decoding, by finish step */
	/* line 2: the per-rank arrays (one block, scheduler.c) */
	int64_t *free_blocks, *admitted, *tok_n, *idle_blocks;
	double *tok_a;
	double *pf_pairs;             /* per rank: attention pairs of the prefill pass */
	int64_t *pf_budget;           /* per rank: prefill tokens the pass may still take */
	long dn;
	/* the rest */
	int32_t pf_tail, q_tail;
	int32_t join_head, join_tail;
	int last_op;
	long q_len;
	long dcap;
	int op_compute_bound;         /* the decode epoch's roofline: FLOPs, not bytes */
	int op_network_bound;         /* the operation's expert all-to-all outlasts its roofline */
	long op_count;                /* pending requests the running prefill pass covers */
	double *link_free;
	/* per rank, context-parallel prefill only: its share of the pass's
	 * context-parallel pairs, and the seconds its ring link is busy */
	double *pf_cp_pairs, *pf_ring;
	int32_t *lru_head, *lru_tail;
	double ssd_free, cpu_used, ssd_used;
	long parked_cpu, parked_ssd, resident_idle;
	/* disaggregated: the prefill pool's GPUs and their links, free from
	 * these times, and requests whose cache arrived (join_head, join_tail),
	 * to join the batch at the next step */
	double *pool_free, *pool_link_free;
	struct wzs_pool_queue *pool_queue; /* prefill instances (disagg.c; NULL: none) */
	wzs_prefix_cache *prefix;     /* shared prefixes (NULL: no prefix cache) */
} wzs_rep;

_Static_assert(offsetof(wzs_rep, free_blocks) == 64 && offsetof(wzs_rep, pf_tail) == 128,
	       "a replica's hot fields are its first two lines");

/* What routing a new session reads of every replica, in an array of its
 * own: the scan over 10^3 replicas then reads a few contiguous KB, not a
 * line of each replica's state. */
typedef struct {
	int64_t free_total;           /* free blocks over all ranks */
	long sessions;
	long load;                    /* requests sent to it and not yet done (a router's count) */
} wzs_route;

typedef struct {
	const wzs_run_config *cfg;
	const wzs_params *p;
	const wzs_replica_model *m;
	wzs_queue q;
	double now;
	wzs_rep *reps;
	char *rank_mem;               /* the replicas' per-rank arrays (scheduler.c) */
	size_t rank_stride;           /* bytes of a replica's block there */
	size_t rank_hot_bytes;        /* its head read by every decode epoch (tok_a, tok_n) */
	wzs_route *route;             /* per replica */
	wzs_dslot **dheap_of;         /* per replica: its dheap, to prefetch without reading it */
	/* per replica, a line: the count and the first requests its running
	 * prefill pass's walk over the waiting list met (batch.c), so that
	 * the pass's end, which walks them again, finds them prefetched */
	int32_t *pf_walk;
	wzs_sess *sess;               /* line-aligned */
	wzs_lru_link *lru;
	wzs_sess_more *sess_more;
	long nsess;
	wzs_req *reqs;
	long nreqs, capreqs;
	int32_t free_req;
	uint32_t next_serial;
	/* metrics */
	wzs_hist *h_ttft, *h_tpot, *h_e2e, *h_queue;
	wzs_hist *h_ttft_ratio;       /* with ttft_per_1k_tokens_s: TTFT over each one's target */
	wzs_result *res;
	double in_sys_area, in_sys_last;
	long in_sys;
	long live;                    /* requests in the system, counted or not */
	int replay_done;              /* the last traffic row has arrived */
	double tokens_served, tokens_offered, good_tokens, context_sum;
	double first_arrival, last_arrival; /* counted arrivals, for rates over the arrival span */
	double deferred_wait;         /* seconds turns waited for their own previous turn */
	double *prefix_cdf;           /* population: Zipf popularity of its shared prefixes */
	double session_scale;         /* population: wzs_pop_session_scale, taken once */
	int stop;                     /* 1: stopped at a refusal; 2: replay drained */
	wz_diag *diag;
	wz_err err;
} wzs_fleet;

/* scheduler.c */
wz_err wzs_fleet_alloc_replicas(wzs_fleet *f);
void wzs_fleet_free_replicas(wzs_fleet *f);
/* A request (already counted as arrived) asks its session's replica. */
void wzs_submit(wzs_fleet *f, int32_t req);
/* Admits queued requests while memory allows, then starts an operation. */
void wzs_try_admit(wzs_fleet *f, int32_t rep);
/* An admitted request waits for prefill (on the replica, or its pool). */
void wzs_pending_append(wzs_fleet *f, int32_t rep, int32_t req);

/* batch.c: starts the next operation of an idle replica; ends a decode
 * epoch at the step in progress (a prefill or a new request is waiting). */
void wzs_start_idle_op(wzs_fleet *f, int32_t rep);
/* wzs_start_idle_op if the replica is idle: most calls find it busy, and
 * the check inline spares them a call that saves and restores the
 * registers the start of an operation needs. */
static inline void wzs_start_op(wzs_fleet *f, int32_t rep)
{
	if (f->reps[rep].op == OP_IDLE)
		wzs_start_idle_op(f, rep);
}
/* Cached tokens of the busiest rank at two steps of a decode epoch (0 if
 * none is above), in one walk over the ranks: each running request holds
 * its context at joining plus per_step tokens per step since (rank k:
 * tok_a[k] + tok_n[k] * step * per_step; counts tok_n[k] in [0, 2^52)).
 * The fast version (two ranks at a time where SSE2 is) gives the _ref's
 * results bit for bit, but for the sign of a zero. */
void wzs_rank_tokens_max2(const double *tok_a, const int64_t *tok_n, int ranks, int64_t step0,
			  int64_t step1, double per_step, double *max0 /* OUT */,
			  double *max1 /* OUT */);
void wzs_rank_tokens_max2_ref(const double *tok_a, const int64_t *tok_n, int ranks,
			      int64_t step0, int64_t step1, double per_step,
			      double *max0 /* OUT */, double *max1 /* OUT */);
void wzs_cut_epoch(wzs_fleet *f, int32_t rep);

/* eviction.c: takes an idle session off its rank's LRU list; frees idle
 * sessions on a rank, oldest first, until `need` blocks are free. */
void wzs_lru_remove(wzs_fleet *f, int32_t sess);
void wzs_evict_for(wzs_fleet *f, wzs_rep *r, int rank, int64_t need);

/* offload.c: parks a session's cache in CPU memory, else on SSD (1, 2; 0
 * when neither has room); frees its parked bytes; restores `tokens` of a
 * request's cache (from SSD or CPU memory), EV_RESTORE when done. */
int wzs_tier_store(wzs_fleet *f, wzs_sess *s);
void wzs_tier_release(wzs_fleet *f, wzs_sess *s);
void wzs_start_restore(wzs_fleet *f, wzs_rep *r, int k, int32_t req, double tokens, int from_ssd);

/* Event handlers (batch.c, offload.c, eviction.c, scheduler.c). */
void wzs_on_op_end(wzs_fleet *f, int32_t rep);
void wzs_on_restore(wzs_fleet *f, int32_t req, uint32_t serial);
void wzs_on_park(wzs_fleet *f, int32_t sess, uint32_t gen);
void wzs_on_timeout(wzs_fleet *f, int32_t req, uint32_t serial);
void wzs_on_kv_arrive(wzs_fleet *f, int32_t req, uint32_t serial);

/* prefix_admit.c: the shared prefix cache's part in admission.  For a request
 * whose session holds none of its context, looks its shared prefix up:
 * returns the tier of a hit (*tokens its length, counted in the results)
 * or WZS_PREFIX_MISS, marking the request to add its prefix once computed. */
wzs_prefix_tier wzs_prefix_admit(wzs_fleet *f, wzs_rep *r, wzs_req *q, int64_t *tokens /* OUT */,
				 int64_t *gpu_tokens /* OUT: of them, found in HBM */);
/* A shared prefix as a path from the root: the prefixes of the traffic's
 * tree it begins with, then its own (a population's prefixes are paths of
 * one).  Returns the segments written to path (at most
 * WZS_PREFIX_MAX_DEPTH). */
int wzs_prefix_path(const wzs_fleet *f, int32_t shared_id, int64_t shared_tokens,
		    wzs_prefix_link *path /* OUT */);
/* The request's prefill is done: a prefix it missed is now cached. */
void wzs_prefix_computed(wzs_fleet *f, wzs_rep *r, wzs_req *q);
/* Builds the population's prefix popularity (f->prefix_cdf) and draws a
 * session's prefix from it. */
wz_err wzs_prefix_popularity(wzs_fleet *f);
int32_t wzs_prefix_draw(const wzs_fleet *f, wzs_rng *rng);

/* disagg.c: an admitted request's prefill on its replica's prefill pool,
 * then its cache's transfer to the decode GPUs (EV_KV_ARRIVE). */
void wzs_pool_prefill(wzs_fleet *f, int32_t rep, int32_t req);
/* With prefill instances (sim/pool.c), the request waits in its replica's
 * pool queue; an instance whose first stage is free takes the queue's
 * prompts into a pass, up to pool_batch_tokens a rank (a longer prompt in
 * chunks), and takes the next at EV_POOL_FREE (wzs_on_pool_free). */
void wzs_on_pool_free(wzs_fleet *f, int32_t rep, uint32_t instance);
wz_err wzs_pool_queue_alloc(wzs_fleet *f, wzs_rep *r);
void wzs_pool_queue_free(wzs_rep *r);
/* Places a session's cache at the start of a run as its idle state would
 * be: resident where there is room (and the policy keeps it), parked, or
 * nowhere. */
void wzs_place_initial(wzs_fleet *f, int32_t sess);
/* Frees a session's blocks and parked bytes (its session ended). */
void wzs_session_release(wzs_fleet *f, int32_t sess);
/* A session between turns: kept, parked or dropped by the idle policy. */
void wzs_session_idle(wzs_fleet *f, int32_t sess);
/* The replica a new session goes to: with route_load_balance, while load
 * is out of balance (requests in flight: the most less the least over
 * route_balance_abs, and the most over route_balance_rel times the
 * least), the least loaded, then the most free blocks, then the fewest
 * sessions, then the lowest index; otherwise the most free cache blocks,
 * then the fewest sessions, then the lowest index. */
int32_t wzs_route_session(const wzs_fleet *f);
/* The same for a new session beginning with `shared_tokens` of shared
 * prefix `shared_id` (0 tokens: none), with prefix_routing: the replica
 * whose prefix cache holds the most of it (its first segments at least),
 * then in the highest tier, then with the most free blocks, among those
 * with `need_blocks` free; else as wzs_route_session.  Load out of
 * balance comes first, as in wzs_route_session. */
int32_t wzs_route_session_prefix(const wzs_fleet *f, int32_t shared_id, int64_t shared_tokens,
				 int64_t need_blocks);
/* Blocks of 64 (block_tokens) tokens holding `tokens`. */
int64_t wzs_blocks_for(const wzs_fleet *f, int64_t tokens);

/* sim.c: called by the scheduler when a request leaves the system. */
void wzs_request_done(wzs_fleet *f, int32_t req, double finish, int refused, int too_big);
void wzs_push(wzs_fleet *f, double time, uint32_t prio, uint32_t kind, uint32_t a, uint32_t b);
/* The same with a request the event's handler reads first (id + 1; 0:
 * none), for the event loop's prefetch. */
void wzs_push_hinted(wzs_fleet *f, double time, uint32_t prio, uint32_t kind, uint32_t a,
		     uint32_t b, uint32_t hint);

#endif
