/* Routing new sessions: load balance before free memory and prefix
 * affinity (SGLang's router's imbalance rule), on hand-built routing
 * tables and in a replay where free memory alone sends every new session
 * to one replica. */
#include "tests/tap.h"
#include "tests/sim/sim_fixture.h"

#include <stdlib.h>
#include <string.h>

#include "sim/fleet.h"

/* A fleet of n replicas that only the router reads: its routing table. */
typedef struct {
	wzs_fleet f;
	wzs_run_config cfg;
	wzs_params p;
	wzs_route route[8];
} table;

static void table_init(table *t, int n)
{
	memset(t, 0, sizeof *t);
	wzs_params_default(&t->p);
	t->cfg.replicas = n;
	t->f.cfg = &t->cfg;
	t->f.p = &t->p;
	t->f.route = t->route;
	for (int i = 0; i < n; i++)
		t->route[i].free_total = 1000;
}

static void set(table *t, int i, int64_t free_blocks, long sessions, long load)
{
	t->route[i].free_total = free_blocks;
	t->route[i].sessions = sessions;
	t->route[i].load = load;
}

static void check_table(void)
{
	table t;
	table_init(&t, 3);
	/* balanced (a spread of 32 is not over 32): the most free blocks */
	set(&t, 0, 900, 5, 40);
	set(&t, 1, 1000, 5, 72);
	set(&t, 2, 800, 5, 60);
	is_long(wzs_route_session(&t.f), 1, "a spread of 32 requests is balanced: the most free blocks");
	/* out of balance: the least loaded, whatever its memory */
	t.route[1].load = 73;
	is_long(wzs_route_session(&t.f), 0, "a spread of 33 over 1.1 x: the least loaded");
	/* a spread over 32 but within 1.1 x of the least: balanced */
	set(&t, 0, 900, 5, 400);
	set(&t, 1, 1000, 5, 439);
	set(&t, 2, 800, 5, 420);
	is_long(wzs_route_session(&t.f), 1, "439 against 400 is within 1.1 x: the most free blocks");
	t.route[1].load = 441;
	is_long(wzs_route_session(&t.f), 0, "441 against 400 is over 1.1 x: the least loaded");
	/* the least loaded tie: the most free blocks, then the fewest sessions */
	set(&t, 0, 700, 5, 0);
	set(&t, 1, 1000, 5, 50);
	set(&t, 2, 800, 5, 0);
	is_long(wzs_route_session(&t.f), 2, "tied least loaded: the most free blocks of them");
	set(&t, 0, 800, 4, 0);
	is_long(wzs_route_session(&t.f), 0, "tied in load and memory: the fewest sessions");
	set(&t, 0, 800, 5, 0);
	is_long(wzs_route_session(&t.f), 0, "tied in everything: the lowest index");
	/* off: free memory alone */
	set(&t, 0, 700, 5, 0);
	set(&t, 1, 1000, 5, 500);
	set(&t, 2, 800, 5, 0);
	t.p.route_balance = 0;
	is_long(wzs_route_session(&t.f), 1, "route_load_balance = no: the most free blocks");
	t.p.route_balance = 1;
	/* the thresholds are the scenario's */
	t.p.route_balance_abs = 600;
	is_long(wzs_route_session(&t.f), 1, "route_balance_abs 600: a spread of 500 is balanced");
	t.p.route_balance_abs = 32;
	t.p.route_balance_rel = 1e6;
	set(&t, 0, 700, 5, 1);
	set(&t, 2, 800, 5, 1);
	is_long(wzs_route_session(&t.f), 1, "route_balance_rel 1e6: 500 against 1 is balanced");
	set(&t, 2, 800, 5, 0);
	is_long(wzs_route_session(&t.f), 2, "route_balance_rel 1e6: 500 against none is not");
	t.p.route_balance_rel = 1.1;
	set(&t, 0, 700, 5, 0);
	set(&t, 2, 800, 5, 3);
	/* before prefix affinity: an unbalanced fleet routes by load without
	 * looking at any replica's prefix cache (the table has no replicas) */
	t.p.prefix_routing = 1;
	is_long(wzs_route_session_prefix(&t.f, 3, 1000, 10), 0,
	       "prefix routing: load out of balance comes first");
	t.p.prefix_routing = 0;
	is_long(wzs_route_session_prefix(&t.f, 3, 1000, 10), 0, "without prefix routing: the same");
	/* one replica: always it */
	table_init(&t, 1);
	set(&t, 0, 10, 1, 90);
	is_long(wzs_route_session(&t.f), 0, "one replica");
}

/* One long session, then 80 short ones a millisecond apart: by free
 * memory alone every short one goes to the other replica (the long one
 * holds 120,000 tokens' blocks, the 80 short ones 112,000 in all), which
 * runs 4 a rank (64) and refuses the rest after 5 s of queueing; balanced
 * by load they split and none waits. */
/* Replays rows on two replicas of DeepSeek-V3 on 16 H100s (attention data
 * parallelism) under p. */
static void run_two(wzs_params *p, wzt_request *rows, size_t n, wzs_result *r, const char *what)
{
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;
	wzs_replica_model m;
	wz_diag diag;
	if (wzs_replica_model_build(dsv3, h100, &mem, 128000, fixture_record("fp8-mix"),
				    fixture_record("fp8-mix"), 1, p, &m, &diag)) {
		ok(0, "replica model: %s", diag.msg);
		return;
	}
	wzt_traffic tr = { 0 };
	tr.requests = rows;
	tr.n = n;
	wzs_run_config cfg = { 0 };
	cfg.params = p;
	cfg.model = &m;
	cfg.replicas = 2;
	cfg.traffic = &tr;
	if (wzs_run(&cfg, r, &diag))
		ok(0, "%s run: %s", what, diag.msg);
}

static void run_burst(int balance, wzs_result *r)
{
	wzs_params p;
	wzs_params_default(&p);
	p.warmup_s = 0;
	p.max_batch = 4;
	p.queue_timeout_s = 5;
	p.route_balance = balance;
	enum { SHORT = 80 };
	wzt_request rows[SHORT + 1];
	rows[0] = (wzt_request){ 0, 0, 0.0, 120000, 10, 0, 0, 0 };
	for (int i = 1; i <= SHORT; i++)
		rows[i] = (wzt_request){ i, 0, 1.0 + 0.001 * i, 400, 1000, 0, 0, 0 };
	run_two(&p, rows, SHORT + 1, r, "burst");
}

static void check_burst(void)
{
	wzs_result off, on;
	memset(&off, 0, sizeof off);
	memset(&on, 0, sizeof on);
	run_burst(0, &off);
	run_burst(1, &on);
	ok(off.refused >= 10, "by free memory alone the short sessions pile onto one replica: %lu refused",
	   (unsigned long)off.refused);
	ok(on.refused == 0 && on.completed == 81, "balanced by load none is refused (%lu of 81 done)",
	   (unsigned long)on.completed);
	wzs_result again;
	memset(&again, 0, sizeof again);
	run_burst(1, &again);
	ok(again.completed == on.completed && again.refused == on.refused &&
	   again.ttft.p99 == on.ttft.p99,
	   "the same run twice: the same result");
	wzs_result_free(&off);
	wzs_result_free(&on);
	wzs_result_free(&again);
}

/* Later turns under the same rule (route_balance_moves): one long session
 * on replica 0, then 40 short ones, which free memory sends to replica 1;
 * their second turns all come back at once, so replica 1's requests in
 * flight climb past 32 above replica 0's.  Moving, the turns that arrive
 * while it is out of balance go to replica 0 and recompute their context
 * there; staying, none moves and none recomputes. */
static void run_moves(int moves, wzs_result *r)
{
	wzs_params p;
	wzs_params_default(&p);
	p.warmup_s = 0;
	p.route_balance_moves = moves;
	enum { SHORT = 40 };
	wzt_request rows[1 + 2 * SHORT];
	rows[0] = (wzt_request){ 0, 0, 0.0, 120000, 5, 0, 0, 0 };
	for (int i = 1; i <= SHORT; i++) {
		rows[i] = (wzt_request){ i, 0, 1.0 + 0.001 * i, 100, 5, 0, 0, 0 };
		rows[SHORT + i] = (wzt_request){ i, 1, 300.0 + 0.001 * i, 100, 1000, 105, 0, 0 };
	}
	run_two(&p, rows, 1 + 2 * SHORT, r, "moves");
}

static void check_moves(void)
{
	wzs_result stay, move;
	memset(&stay, 0, sizeof stay);
	memset(&move, 0, sizeof move);
	run_moves(0, &stay);
	run_moves(1, &move);
	ok(stay.sessions_moved == 0 && stay.recomputes == 0 && stay.completed == 81,
	   "later turns stay with their cache: none moved, none recomputed (%llu done)", stay.completed);
	ok(move.sessions_moved > 0 && move.recomputes == move.sessions_moved && move.completed == 81,
	   "route_balance_moves: %llu turns sent to the least loaded replica, each recomputing its "
	   "context (%llu recomputes)",
	   move.sessions_moved, move.recomputes);
	wzs_result_free(&stay);
	wzs_result_free(&move);
}

int main(void)
{
	if (fixture_open())
		return tap_done();
	check_table();
	check_burst();
	check_moves();
	fixture_close();
	return tap_done();
}
