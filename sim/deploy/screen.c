/* The deployment search's analytic screen: per configuration, the most
 * users a replica serves within the targets, from the simulator's own
 * step-time model (sim/replica.h), and the fleet and cost that gives
 * (deploy.h).
 *
 * The workload is the scenario's population at its mean: a user holds the
 * scenario's context, sends a turn of prompt_tokens after think_s, reads
 * output_tokens, and one turn in `turns` is a new session's first, whose
 * whole initial context is prefilled.  For a decode batch of b requests
 * per attention rank the step time is wzs_step_time's at b x context
 * tokens a rank; the replica's prefill work for the requests that batch
 * completes is added to each token's time (aggregated: prefill passes
 * stop decode), or loads the prefill pool (disaggregated).  A request's
 * prefill, stretched by the share of time the prefill server is busy,
 * must meet its TTFT target.
 *
 * Aggregated, a prefill pass stops every rank's decode for its whole
 * length, however few ranks have prompts in it: a pass carries the
 * prompts that arrived while the last ran (1 + rate x pass, at most one
 * per rank), and a new session's first prompt takes its own passes.  The
 * p99 TPOT is set by short requests that meet a long pass: with
 * exponential output lengths of mean m, a request of o tokens decoding
 * for o x tpot meets passes of length s at rate r and exceeds the target
 * when o < o* = s / (target - tpot), a share of about r tpot o*^2 / (2 m)
 * of requests, which must stay within 1%.
 *
 * A pool of prefill instances (sim/pool.c) is packed as sim/disagg.c packs
 * it (wzs_pool_pack_pass): a pass takes as long as its busiest rank, so a
 * pass that carries a chunk of a new session's first prompt holds the
 * later turns packed beside it for the chunk's whole time in every stage.
 * The share of time such passes run is that of an infinite-server queue
 * (first prompts overlap on separate ranks): 1 - exp(-rate x their
 * passes' time); a later turn that arrives in one waits for it and rides
 * the next, which carries the same prompt's next chunk unless that was the
 * last, and the share of requests whose first token then misses its
 * target must stay within 1%, as the simulator's p99 asks.  Passes of
 * later turns alone carry those that arrived during the last.
 *
 * These are estimates, not the simulator's p99s: the screen ranks
 * configurations, and the simulator sizes them.  For the confirmation's
 * order each also gets an optimistic fleet: the same load limit with users
 * at their mean context and no queue.  It is not a lower bound on the
 * simulated fleet (bench/bench_deploy_bound finds fleets below it).  For
 * the stopping rule (confirm.c) each gets a lower bound, a relaxation of
 * what the simulator does (bound.c). */
#include "sim/deploy/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *wzd_bind_name(wzd_bind b)
{
	switch (b) {
	case WZD_BIND_NONE: return "nothing";
	case WZD_BIND_MEMORY: return "HBM capacity";
	case WZD_BIND_TPOT: return "TPOT (decode step time)";
	case WZD_BIND_TTFT: return "TTFT (prefill queueing)";
	case WZD_BIND_BATCH_CAP: return "batch cap";
	case WZD_BIND_PREFILL_POOL: return "prefill pool capacity";
	}
	return "nothing";
}

double wzd_ttft_target(const wzs_params *p, double new_tokens)
{
	return wzs_request_ttft_target(p, (int64_t)new_tokens);
}


/* A prompt of n new tokens after `cached` ones, alone on an idle
 * aggregated replica: chunked passes, each taking prefill_chunk_tokens
 * (times the context-parallel group where it spreads). */
static double alone_aggregated(const wzd_workload *w, double cached, double n)
{
	const wzs_replica_model *m = &w->m;
	int cp = m->cp_ranks > 1 && n >= (double)m->cp_min_tokens;
	double budget = (double)w->p.prefill_chunk_tokens * (cp ? m->cp_ranks : 1);
	double total = 0;
	for (double done = 0; done < n;) {
		double k = n - done < budget ? n - done : budget;
		double pairs = wzs_model_prefill_pairs(m, cached + done, k);
		if (cp) {
			double ring = wzs_cp_ring_time(m, cached + done, k);
			total += wzs_prefill_time_attn(m, k, pairs,
						       wzs_prefill_rank_attn_s(m, 0, pairs / m->cp_ranks,
									       ring));
		} else {
			total += wzs_prefill_time(m, k, pairs, pairs);
		}
		done += k;
	}
	return total;
}

/* A prompt's cache leaving an instance: each stage's GPU of its rank
 * sends its stage's share of the layers (disagg.c's pool_send). */
static double instance_link(const wzs_replica_model *m, double n)
{
	return m->kv_link_bps > 0 ? n * m->token_bytes / m->pool_stages / m->kv_link_bps : 0;
}

/* The same on a disaggregated pool GPU (or context-parallel group), with
 * the cache's move to the decode GPUs. */
static double alone_pool(const wzd_workload *w, double cached, double n)
{
	const wzs_replica_model *m = &w->m;
	if (m->pool_instance_gpus > 0)
		return wzs_pool_chunked_time(m, cached, n, NULL) + instance_link(m, n);
	double pairs = wzs_model_prefill_pairs(m, cached, n);
	double t = m->cp_ranks > 1 && n >= (double)m->cp_min_tokens
			   ? wzs_pool_cp_prefill_time(m, cached, n, pairs)
			   : wzs_pool_prefill_time(m, n, pairs);
	return t + (m->kv_link_bps > 0 ? n * m->token_bytes / m->kv_link_bps : 0);
}

wz_err wzd_workload_build(const wzd_base *b, const wzd_config *c, wzd_workload *w, wz_diag *diag)
{
	memset(w, 0, sizeof *w);
	w->b = b;
	w->p = b->params;
	wzm_memory_params mem = b->mem;
	wzd_config_apply(c, &w->p, &mem);
	wz_err err = wzs_params_validate(&w->p, "config", diag);
	if (!err)
		err = wzs_replica_model_build(b->model, b->gpu, &mem, b->context, b->record_per_layer,
					      b->offload_per_layer, b->decode_cost, &w->p, &w->m, diag);
	if (err)
		return err;
	if (w->p.idle_policy == WZS_IDLE_OFFLOAD)
		wzs_replica_model_set_restore_decode(&w->m, &w->p, b->restore_per_core_tlps);
	const wzs_replica_model *m = &w->m;
	w->ranks = m->ranks;
	w->prompt = w->p.prompt_tokens;
	w->output = w->p.output_tokens > 1 ? w->p.output_tokens : 1;
	w->think = w->p.think_s;
	w->first_share = w->p.turns > 1 ? 1 / w->p.turns : 1;
	w->first_new = (double)b->run.initial_context + w->prompt;
	w->pool = c->prefill_gpus;
	/* A user holds the session's start plus the turns taken so far: on
	 * average (turns - 1) turns of a geometric session, (turns - 1) / 2 of
	 * a fixed one (wzs_initial_context), spread evenly from none to twice
	 * that.  A rank fills when its users' sum, at two standard deviations
	 * over its mean, passes its blocks: the fullest of many ranks. */
	double per_turn = w->prompt + w->output;
	double taken = w->p.length_dist == WZS_DIST_FIXED ? (w->p.turns - 1) / 2 : w->p.turns - 1;
	double growth = taken > 0 ? taken * per_turn : 0;
	double held = (double)b->run.initial_context + growth, sd = growth / sqrt(3);
	if (b->run.max_context > 0 && held > (double)b->run.max_context)
		held = (double)b->run.max_context;
	w->context = held;
	double rank_tokens = (double)m->blocks_per_rank * m->block_tokens;
	double per_running = held + per_turn + m->block_tokens;
	w->running_mem = floor(rank_tokens / per_running);
	/* The least a session's cache holds: a new session's initial context
	 * (wzs_pop_steady_start only adds turns to it), in whole blocks as the
	 * simulator takes them (wzs_blocks_for), and a running request's
	 * at least one prompt token more. */
	double least = (double)b->run.initial_context;
	if (b->run.max_context > 0 && least > (double)b->run.max_context)
		least = (double)b->run.max_context;
	double least_blocks = ceil(least / m->block_tokens);
	if (least_blocks < 1)
		least_blocks = 1;
	w->running_least = floor((double)m->blocks_per_rank / ceil((least + 1) / m->block_tokens));
	if (w->p.idle_policy == WZS_IDLE_RESIDENT) {
		/* n held + 2 sd sqrt(n) <= rank_tokens, the largest such n */
		double x = (-2 * sd + sqrt(4 * sd * sd + 4 * held * rank_tokens)) / (2 * held);
		w->users_mem = w->ranks * floor(x * x);
		w->users_mean = w->ranks * floor(rank_tokens / held);
		w->users_least = w->ranks * floor((double)m->blocks_per_rank / least_blocks);
	} else {
		w->users_mem = w->users_mean = w->users_least = HUGE_VAL;
	}
	double follow_pairs = wzs_model_prefill_pairs(m, w->context, w->prompt);
	if (w->pool > 0) {
		w->link_first = instance_link(m, w->first_new);
		w->link_follow = instance_link(m, w->prompt);
		w->t_first = alone_pool(w, 0, w->first_new);
		w->t_follow = alone_pool(w, w->context, w->prompt);
		/* GPU seconds: a context-parallel first prompt holds its group */
		double group = m->cp_ranks > 1 && w->first_new >= (double)m->cp_min_tokens
				       ? m->cp_ranks : 1;
		double g_first = group * (w->t_first - w->first_new * m->token_bytes /
							       (m->kv_link_bps > 0 ? m->kv_link_bps : HUGE_VAL));
		double g_follow = wzs_pool_prefill_time(m, w->prompt, follow_pairs);
		w->g_first = g_first;
		w->g_follow = g_follow;
		w->s_prefill = w->first_share * g_first + (1 - w->first_share) * g_follow;
	} else {
		w->t_first = alone_aggregated(w, 0, w->first_new);
		w->t_follow = alone_aggregated(w, w->context, w->prompt);
		int cp = m->cp_ranks > 1 && w->first_new >= (double)m->cp_min_tokens;
		double budget = (double)w->p.prefill_chunk_tokens * (cp ? m->cp_ranks : 1);
		w->first_passes = ceil(w->first_new / budget);
		w->follow_pairs = follow_pairs;
	}

	w->cap = (double)w->p.max_batch;
	return WZ_OK;
}


/* A pool of prefill instances at `rate` requests a second (a replica's):
 * its first stage's busy share, the first tokens' times and the share of
 * requests past their TTFT targets, packed as the instances pack passes
 * (file comment). */
static void instances_at(const wzd_workload *w, double rate, wzd_point *out)
{
	const wzs_replica_model *m = &w->m;
	double instances = w->pool / m->pool_instance_gpus, stages = m->pool_stages;
	double lf = rate * w->first_share / instances, lo = rate * (1 - w->first_share) / instances;
	double budget = m->pool_batch_tokens > 0 ? (double)m->pool_batch_tokens : w->first_new;
	int chunks = (int)ceil(w->first_new / budget);
	double *pass = malloc((size_t)(chunks > 0 ? chunks : 1) * sizeof *pass);
	out->busy = 1;
	if (!pass || chunks < 1) {
		free(pass);
		return;
	}
	/* a first prompt's passes, each chunk beside the later turns that
	 * arrived during the pass before */
	double alone_busy;
	wzs_pool_chunked_time(m, 0, w->first_new, &alone_busy);
	double beside = ceil(lo * alone_busy / chunks), t_long = 0, hop_long = 0;
	for (int c = 0; c < chunks; c++) {
		double done = c * budget, k = w->first_new - done < budget ? w->first_new - done : budget;
		double hop;
		pass[c] = wzs_pool_pack_pass(m, k, done, beside, w->prompt, w->context, &hop);
		t_long += pass[c];
		hop_long = hop > hop_long ? hop : hop_long;
	}
	double share_long = 1 - exp(-lf * t_long), p_long = t_long / chunks;
	/* passes of later turns alone carry those that arrived during the last */
	double n = 1, p_short = 0, hop_short = 0;
	for (int it = 0; it < 8; it++) {
		p_short = wzs_pool_pack_pass(m, 0, 0, ceil(n), w->prompt, w->context, &hop_short);
		n = 1 + lo * p_short;
	}
	double busy = share_long + lo * (1 - share_long) * p_short / n;
	/* first prompts in flight at once, each on a rank of its own */
	if (lf * t_long >= m->pool_stage_gpus)
		busy = 1;
	out->busy = busy;
	if (busy < 1) {
		double last = pass[chunks - 1], wait = share_long * p_long / 2;
		out->ttft_first = wait + (t_long - last) + stages * last + (stages - 1) * hop_long +
				  w->link_first;
		out->ttft_follow = wait + stages * p_short + (stages - 1) * hop_short + w->link_follow;
		/* a later turn that arrives during chunk c's pass waits for it and
		 * rides chunk c + 1's through every stage (after the last chunk,
		 * another prompt's while one is in flight) */
		double target = wzd_ttft_target(&w->p, w->prompt), stuck = 0;
		for (int c = 0; c < chunks; c++) {
			double next = c + 1 < chunks ? pass[c + 1] : p_long;
			double ride = c + 1 < chunks ? 1 : share_long;
			double late = pass[c] / 2 + stages * next + (stages - 1) * hop_long +
				      w->link_follow;
			if (late > target)
				stuck += share_long * pass[c] / t_long * ride;
		}
		out->ttft_tail = (1 - w->first_share) * stuck;
	}
	free(pass);
}

void wzd_at_batch(const wzd_workload *w, double per_rank, wzd_point *out)
{
	const wzs_replica_model *m = &w->m;
	double batch = per_rank * w->ranks;
	double t = wzs_step_time(m, batch, per_rank * w->context) / m->tokens_per_step;
	out->tail = out->ttft_tail = 0;
	if (w->pool > 0) {
		out->tpot = t;
		out->rate = batch / (w->output * t);
		if (m->pool_instance_gpus > 0) {
			instances_at(w, out->rate, out);
		} else {
			out->busy = out->rate * w->s_prefill / w->pool;
			out->ttft_first = w->t_first / (1 - out->busy);
			out->ttft_follow = w->t_follow / (1 - out->busy);
		}
	} else {
		/* Prefill passes stop the replica's decode: the share of time they
		 * take, at the rate the batch completes requests, found by fixed
		 * point (a pass carries the prompts that arrived during the last). */
		double tpot = t, pass = w->t_follow, per_pass = 1, busy = 0;
		for (int it = 0; it < 8; it++) {
			double rate = batch / (w->output * tpot);
			per_pass = 1 + rate * pass;
			if (per_pass > w->ranks)
				per_pass = w->ranks;
			pass = wzs_prefill_time(m, per_pass * w->prompt, per_pass * w->follow_pairs,
						w->follow_pairs);
			busy = rate * (w->first_share * w->t_first +
				       (1 - w->first_share) * pass / per_pass);
			if (busy >= 1) {
				tpot = HUGE_VAL;
				break;
			}
			tpot = t / (1 - busy);
		}
		out->tpot = tpot;
		out->rate = batch / (w->output * tpot);
		out->busy = busy;
		out->ttft_first = w->t_first / (1 - busy);
		out->ttft_follow = w->t_follow / (1 - busy);
		if (w->p.length_dist == WZS_DIST_EXP && tpot < w->p.tpot_p99_s) {
			double room = w->p.tpot_p99_s - tpot;
			double follow_rate = out->rate * (1 - w->first_share) / per_pass;
			double first_rate = out->rate * w->first_share * w->first_passes;
			double o_follow = pass / room, o_first = w->t_first / w->first_passes / room;
			out->tail = tpot * (follow_rate * o_follow * o_follow +
					    first_rate * o_first * o_first) / (2 * w->output);
		}
	}
	double cycle = w->think + w->output * out->tpot + w->t_follow;
	out->users = out->rate * cycle;
}

/* The most users a replica serves within the targets when it holds at
 * most users_mem: the largest decode batch per rank that meets them, the
 * point there, the batch and what stops a larger one.  Optimistic (the
 * order of confirmation), only the mean time per token within the TPOT
 * target and the prefill server busy less than all the time, with users
 * at their mean context; where one request a rank already keeps it busy,
 * the share of that load it carries.  That is no bound (load_bound). */
static double load_limit(const wzd_workload *wl, double users_mem, double first_target,
			 double follow_target, int optimistic, wzd_point *at, double *batch,
			 wzd_bind *bind)
{
	const wzs_params *p = &wl->p;
	double best = 0;
	*bind = WZD_BIND_BATCH_CAP;
	*batch = 0;
	double cap = wl->cap < wl->running_mem ? wl->cap : wl->running_mem;
	for (double k = 1; k <= cap; k++) {
		wzd_point pt;
		wzd_at_batch(wl, k, &pt);
		if (pt.tpot > p->tpot_p99_s || (!optimistic && pt.tail > 0.01)) {
			*bind = WZD_BIND_TPOT;
			break;
		}
		if (pt.busy >= 1 ||
		    (!optimistic && (pt.ttft_first > first_target || pt.ttft_follow > follow_target ||
				     pt.ttft_tail > 0.01))) {
			*bind = wl->pool > 0 ? WZD_BIND_PREFILL_POOL : WZD_BIND_TTFT;
			if (optimistic && k == 1 && pt.busy > 0 && pt.users > 0) {
				best = pt.users / pt.busy;
				best = best < users_mem ? best : users_mem;
			}
			break;
		}
		if (pt.users >= users_mem) {
			/* the replica holds no more users: they run a smaller batch */
			best = users_mem;
			*at = pt;
			at->rate = pt.rate * users_mem / pt.users;
			*batch = k;
			*bind = WZD_BIND_MEMORY;
			break;
		}
		best = pt.users;
		*at = pt;
		*batch = k;
		if (k == cap && cap < wl->cap)
			*bind = WZD_BIND_MEMORY;
	}
	return best;
}

void wzd_screen(const wzd_base *b, const wzd_config *c, wzd_estimate *out)
{
	memset(out, 0, sizeof *out);
	out->c = *c;
	wzd_workload *wl = calloc(1, sizeof *wl);
	wz_diag diag;
	wz_diag_clear(&diag);
	if (!wl) {
		out->dropped = 1;
		snprintf(out->why, sizeof out->why, "out of memory");
		return;
	}
	if (wzd_workload_build(b, c, wl, &diag)) {
		out->dropped = 1;
		size_t len = strlen(diag.msg);
		if (len >= sizeof out->why)
			len = sizeof out->why - 1;
		memcpy(out->why, diag.msg, len);
		out->why[len] = '\0';
		free(wl);
		return;
	}
	const wzs_params *p = &wl->p;
	out->first_prefill_s = wl->t_first;
	out->first_target_s = wzd_ttft_target(p, wl->first_new);
	double follow_target = wzd_ttft_target(p, wl->prompt);
	if (wl->t_first > out->first_target_s) {
		snprintf(out->why, sizeof out->why,
			 "a new session's first prompt (%.0f tokens) alone takes %.2f s to its first "
			 "token, over its %.2f s TTFT target",
			 wl->first_new, wl->t_first, out->first_target_s);
		out->bind = WZD_BIND_TTFT;
		free(wl);
		return;
	}
	wzd_point at = { 0 }, ignore;
	wzd_bind bind, b2;
	double batch;
	double best = load_limit(wl, wl->users_mem, out->first_target_s, follow_target, 0, &at,
				 &out->batch, &bind);
	double opt = load_limit(wl, wl->users_mean, out->first_target_s, follow_target, 1, &ignore,
				&batch, &b2);
	opt = opt > best ? opt : best;
	double bound = wzd_load_bound(wl);
	bound = bound > best ? bound : best;
	long users = b->run.users > 0 ? b->run.users : 1;
	long per_replica = c->gpus + c->prefill_gpus;
	if (bound > 0) {
		double low = ceil((double)users / bound);
		out->gpus_bound = (long)(low < (double)users ? low : (double)users) * per_replica;
	}
	if (opt > 0) {
		double low = ceil((double)users / opt);
		out->gpus_order = (long)(low < (double)users ? low : (double)users) * per_replica;
	}
	out->bind = bind;
	if (!(best > 0)) {
		snprintf(out->why, sizeof out->why,
			 "one running request per rank already misses a target (%s)",
			 wzd_bind_name(bind));
		free(wl);
		return;
	}
	out->feasible = 1;
	out->users_per_replica = best;
	out->replicas = (long)ceil((double)users / best);
	if (out->replicas > users)
		out->replicas = users;
	out->gpus = out->replicas * per_replica;
	out->usd_year = (double)out->gpus * b->usd_per_gpu_year;
	out->tpot_s = at.tpot;
	out->tok_s_gpu = at.rate * wl->output / (double)per_replica;
	free(wl);
}

int wzd_frontier(const wzd_base *b, const wzd_config *c, double *tok_s_user, double *tok_s_gpu,
		 int n)
{
	wzd_workload *wl = calloc(1, sizeof *wl);
	wz_diag diag;
	if (!wl)
		return 0;
	if (wzd_workload_build(b, c, wl, &diag)) {
		free(wl);
		return 0;
	}
	int k = 0;
	double per_replica = c->gpus + c->prefill_gpus;
	for (double per_rank = 1; per_rank <= wl->cap && per_rank <= wl->running_mem && k < n;
	     per_rank *= 2) {
		wzd_point pt;
		wzd_at_batch(wl, per_rank, &pt);
		if (pt.busy >= 1)
			break;
		tok_s_user[k] = 1 / pt.tpot;
		tok_s_gpu[k] = pt.rate * wl->output / per_replica;
		k++;
	}
	free(wl);
	return k;
}

typedef struct {
	double x, y;
} xy;

static int by_x_down(const void *pa, const void *pb)
{
	const xy *a = pa, *b = pb;
	if (a->x != b->x)
		return a->x > b->x ? -1 : 1;
	return a->y > b->y ? -1 : a->y < b->y;
}

int wzd_pareto(const wzd_base *b, const wzd_estimate *configs, long n, double *x, double *y)
{
	enum { PER = 12 };
	xy *all = malloc((size_t)(n > 0 ? n : 1) * PER * sizeof *all);
	if (!all)
		return 0;
	long m = 0;
	for (long i = 0; i < n; i++) {
		if (configs[i].dropped)
			continue;
		double u[PER], g[PER];
		int k = wzd_frontier(b, &configs[i].c, u, g, PER);
		for (int j = 0; j < k; j++)
			all[m++] = (xy){ u[j], g[j] };
	}
	qsort(all, (size_t)m, sizeof *all, by_x_down);
	/* walking from the most tokens/s per user down, a point belongs to the
	 * frontier when it beats every point before it per GPU */
	long kept = 0;
	double best = -1;
	for (long i = 0; i < m; i++)
		if (all[i].y > best) {
			best = all[i].y;
			all[kept++] = all[i];
		}
	int out = 0;
	for (long i = 0; i < kept && out < WZD_PARETO_POINTS; i++) {
		long at = kept <= WZD_PARETO_POINTS ? i
						    : i * (kept - 1) / (WZD_PARETO_POINTS - 1);
		if (at >= kept)
			break;
		x[out] = all[at].x;
		y[out] = all[at].y;
		out++;
		if (kept > WZD_PARETO_POINTS && out == WZD_PARETO_POINTS)
			break;
	}
	free(all);
	return out;
}
