/* A replica's operations: chunked prefill passes and decode epochs (one
 * event per run of steps in which the batch does not change), the decode
 * batch ordered by finish step, and requests finishing (fleet.h). */
#include <math.h>
#include <stdlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "sim/fleet.h"

#define REP(f, i) (&(f)->reps[i])

void wzs_rank_tokens_max2_ref(const double *tok_a, const int64_t *tok_n, int ranks,
			      int64_t step0, int64_t step1, double per_step, double *max0,
			      double *max1)
{
	double best0 = 0, best1 = 0;
	for (int k = 0; k < ranks; k++) {
		double n = (double)tok_n[k];
		double t0 = tok_a[k] + n * (double)step0 * per_step;
		double t1 = tok_a[k] + n * (double)step1 * per_step;
		if (t0 > best0)
			best0 = t0;
		if (t1 > best1)
			best1 = t1;
	}
	*max0 = best0;
	*max1 = best1;
}

void wzs_rank_tokens_max2(const double *tok_a, const int64_t *tok_n, int ranks, int64_t step0,
			  int64_t step1, double per_step, double *max0, double *max1)
{
	double best0 = 0, best1 = 0;
	int k = 0;
#ifdef __SSE2__
	/* Two ranks at a time, each lane doing the reference's products and
	 * sums in its order; _mm_max_pd(x, m) is x > m ? x : m, so each lane
	 * keeps the reference's maximum over its ranks, and the larger of the
	 * two is the maximum over all (the sums are never NaN; a zero's sign
	 * could differ, and is lost in the caller's conversion to an integer).  A count below 2^52
	 * converts exactly through the 2^52 bias. */
	const __m128i bias_bits = _mm_set1_epi64x(0x4330000000000000LL);
	const __m128d bias = _mm_set1_pd(0x1p52);
	const __m128d s0 = _mm_set1_pd((double)step0), s1 = _mm_set1_pd((double)step1);
	const __m128d ps = _mm_set1_pd(per_step);
	__m128d m0 = _mm_setzero_pd(), m1 = _mm_setzero_pd();
	for (; k + 2 <= ranks; k += 2) {
		__m128i ni = _mm_loadu_si128((const __m128i *)&tok_n[k]);
		__m128d n = _mm_sub_pd(_mm_castsi128_pd(_mm_or_si128(ni, bias_bits)), bias);
		__m128d a = _mm_loadu_pd(&tok_a[k]);
		m0 = _mm_max_pd(_mm_add_pd(a, _mm_mul_pd(_mm_mul_pd(n, s0), ps)), m0);
		m1 = _mm_max_pd(_mm_add_pd(a, _mm_mul_pd(_mm_mul_pd(n, s1), ps)), m1);
	}
	double lane[2];
	_mm_storeu_pd(lane, m0);
	best0 = lane[1] > lane[0] ? lane[1] : lane[0];
	_mm_storeu_pd(lane, m1);
	best1 = lane[1] > lane[0] ? lane[1] : lane[0];
#endif
	for (; k < ranks; k++) {
		double n = (double)tok_n[k];
		double t0 = tok_a[k] + n * (double)step0 * per_step;
		double t1 = tok_a[k] + n * (double)step1 * per_step;
		if (t0 > best0)
			best0 = t0;
		if (t1 > best1)
			best1 = t1;
	}
	*max0 = best0;
	*max1 = best1;
}

/* Time of the first k steps of the current epoch: step i takes t0 + i dt. */
static double epoch_time(const wzs_rep *r, int64_t k)
{
	return (double)k * r->t0 + r->dt * (double)k * (double)(k - 1) / 2.0;
}

/* The request an operation's end reads first (id + 1, for the event
 * loop's prefetch): the decode batch's first to finish, or the prefill
 * queue's head.  A hint only: should it change, only speed suffers. */
static uint32_t op_hint(const wzs_rep *r)
{
	int32_t id = r->op == OP_DECODE && r->dn > 0 ? r->dheap[0].req
		     : r->op == OP_PREFILL ? r->pf_head : -1;
	return (uint32_t)(id + 1);
}

/* The session of a decode epoch's first request to finish (+ 1; 0 for
 * none), which its end reads next: the operation's end event carries it. */
static uint32_t op_hint_session(const wzs_rep *r)
{
	return r->op == OP_DECODE && r->dn > 0 ? (uint32_t)r->dheap[0].sess + 1 : 0;
}

/* A replica's operation ends at `end`: its one owned event (sim.c), so a
 * cut epoch's new end replaces the one queued. */
static void push_op_end(wzs_fleet *f, int32_t ri, const wzs_rep *r, double end)
{
	wzs_push_hinted(f, end, PRIO_OP_END, EV_OP_END, (uint32_t)ri, op_hint_session(r),
			op_hint(r));
}

/* Context-parallel prefill: request q takes up to every rank's budget in
 * its aligned group of cp_ranks ranks, its new tokens split evenly over
 * them (load-balanced sharding, so each rank gets an equal share of the
 * causal pairs); returns the tokens taken, 0 when a rank of the group has
 * no budget left. */
static int64_t cp_take(wzs_fleet *f, wzs_rep *r, wzs_req *q, int64_t left, int *open /* OUT */)
{
	int cp = f->m->cp_ranks;
	int g0 = q->rank / cp * cp;
	int64_t least = r->pf_budget[g0];
	for (int k = g0 + 1; k < g0 + cp; k++)
		if (r->pf_budget[k] < least)
			least = r->pf_budget[k];
	if (least <= 0)
		return 0;
	int64_t take = left < least * cp ? left : least * cp;
	int64_t share = (take + cp - 1) / cp;
	double cached = (double)(q->reuse + q->prefilled);
	double qp = wzs_model_prefill_pairs(f->m, cached, (double)take);
	double ring = wzs_cp_ring_time(f->m, cached, (double)take);
	for (int k = g0; k < g0 + cp; k++) {
		r->pf_budget[k] -= share;
		if (r->pf_budget[k] <= 0 && r->pf_budget[k] + share > 0)
			(*open)--;
		r->pf_cp_pairs[k] += qp / cp;
		r->pf_ring[k] += ring;
	}
	return take;
}

/* Starts a chunked prefill pass: at most prefill_chunk_tokens per attention
 * rank (each rank schedules its own requests, as engines with attention
 * data parallelism do; with TP the replica is one rank); with requests
 * decoding, one decode step follows, and so on. */
static void start_prefill(wzs_fleet *f, int32_t ri, wzs_rep *r)
{
	double tokens = 0, pairs = 0, rank_pairs = 0, recomputed = 0;
	long count = 0;
	int cp = f->m->cp_ranks;
	int open = f->m->ranks; /* ranks with budget left */
	for (int k = 0; k < f->m->ranks; k++) {
		r->pf_pairs[k] = 0;
		r->pf_budget[k] = f->p->prefill_chunk_tokens;
		if (cp > 1)
			r->pf_cp_pairs[k] = r->pf_ring[k] = 0;
	}
	int32_t *walk = f->pf_walk + (size_t)ri * (WZS_WALK_IDS + 1);
	int32_t walked = 0;
	for (int32_t i = r->pf_head; i >= 0 && open > 0; i = f->reqs[i].next) {
		wzs_req *q = &f->reqs[i];
		if (walked < WZS_WALK_IDS)
			walk[++walked] = i;
		int64_t whole = q->prefix - q->reuse + q->prompt;
		int64_t left = whole - q->prefilled;
		int64_t take;
		double qp;
		if (cp > 1 && whole >= f->m->cp_min_tokens) {
			take = cp_take(f, r, q, left, &open);
			if (take <= 0)
				continue;
			qp = wzs_model_prefill_pairs(f->m, (double)(q->reuse + q->prefilled),
						     (double)take);
		} else {
			int64_t *budget = &r->pf_budget[q->rank];
			if (*budget <= 0)
				continue;
			take = left < *budget ? left : *budget;
			qp = wzs_model_prefill_pairs(f->m, (double)(q->reuse + q->prefilled),
						     (double)take);
			r->pf_pairs[q->rank] += qp;
			if (r->pf_pairs[q->rank] > rank_pairs)
				rank_pairs = r->pf_pairs[q->rank];
			*budget -= take;
			if (*budget <= 0)
				open--;
		}
		q->op_take = take;
		tokens += (double)take;
		pairs += qp;
		/* counted as they are prefilled, so that the share is of the
		 * tokens prefilled */
		if (q->prefilled < q->recompute)
			recomputed += (double)((q->prefilled + take < q->recompute ? q->prefilled + take
										     : q->recompute) -
					       q->prefilled);
		if (!q->prefilled)
			q->prefill_start = f->now;
		q->state = RQ_PREFILL;
		count++;
	}
	walk[0] = walked;
	f->res->prefill_tokens += tokens;
	f->res->prefill_tokens_recomputed += recomputed;
	r->op_count = count;
	r->op = OP_PREFILL;
	r->op_start = f->now;
	double end;
	if (cp > 1) {
		double rank_attn_s = 0;
		for (int k = 0; k < f->m->ranks; k++) {
			double s = wzs_prefill_rank_attn_s(f->m, r->pf_pairs[k], r->pf_cp_pairs[k],
							   r->pf_ring[k]);
			if (s > rank_attn_s)
				rank_attn_s = s;
		}
		r->op_network_bound = wzs_prefill_network_bound_attn(f->m, tokens, pairs, rank_attn_s);
		end = f->now + wzs_prefill_time_attn(f->m, tokens, pairs, rank_attn_s);
	} else {
		r->op_network_bound = wzs_prefill_network_bound(f->m, tokens, pairs, rank_pairs);
		end = f->now + wzs_prefill_time(f->m, tokens, pairs, rank_pairs);
	}
	push_op_end(f, ri, r, end);
}

void wzs_start_idle_op(wzs_fleet *f, int32_t ri)
{
	wzs_rep *r = REP(f, ri);
	if (r->op != OP_IDLE)
		return;
	if (r->pf_head >= 0 && (r->dn == 0 || r->last_op == OP_DECODE)) {
		start_prefill(f, ri, r);
		return;
	}
	if (r->dn == 0)
		return;
	/* Nothing joins or leaves the batch until the first request finishes,
	 * unless a prefill cuts in: one event for the whole epoch.  Step time is
	 * linear in the tokens read, which grow by one per request per step (or
	 * MTP's tokens_per_step), so
	 * the epoch's length is an arithmetic series between its first and last
	 * steps (the busiest rank's roofline, taken at both ends). */
	int64_t k = r->pf_head >= 0 ? 1 : r->dheap[0].step - r->steps;
	if (k < 1)
		k = 1;
	double batch = (double)r->dn, per_step = f->m->tokens_per_step;
	double t0, tl;
	if (f->m->dsa_topk > 0) {
		/* sparse attention: the rank's step time is no function of its
		 * tokens alone, so every rank's is taken */
		wzs_epoch_ends_dsa(f->m, r->tok_a, r->tok_n, f->m->ranks, r->steps,
				   r->steps + k - 1, per_step, batch, &t0, &tl, &r->op_compute_bound,
				   &r->op_network_bound);
		if (k <= 1)
			tl = t0;
	} else {
		double first_max, last_max;
		wzs_rank_tokens_max2(r->tok_a, r->tok_n, f->m->ranks, r->steps, r->steps + k - 1,
				     per_step, &first_max, &last_max);
		/* Whole tokens. */
		double first = (double)(int64_t)first_max, last = (double)(int64_t)last_max;
		if (k > 1) {
			t0 = wzs_step_times_bound(f->m, batch, first, last, &tl, &r->op_compute_bound,
						  &r->op_network_bound);
		} else {
			t0 = tl = wzs_step_time_bound(f->m, batch, first, &r->op_compute_bound,
						      &r->op_network_bound);
		}
	}
	r->t0 = t0;
	r->dt = k > 1 ? (tl - t0) / (double)(k - 1) : 0;
	r->op_k = k;
	r->op = OP_DECODE;
	r->op_start = f->now;
	push_op_end(f, ri, r, f->now + epoch_time(r, k));
}

/* A prefill is waiting: end the decode epoch at the step in progress. */
void wzs_cut_epoch(wzs_fleet *f, int32_t ri)
{
	wzs_rep *r = REP(f, ri);
	if (r->op != OP_DECODE)
		return;
	double elapsed = f->now - r->op_start;
	int64_t lo = 0, hi = r->op_k;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo + 1) / 2;
		if (epoch_time(r, mid) <= elapsed)
			lo = mid;
		else
			hi = mid - 1;
	}
	int64_t k = (lo > 0 && epoch_time(r, lo) == elapsed) ? lo : lo + 1;
	if (k >= r->op_k)
		return;
	r->op_k = k;
	/* op_start + (now - op_start) can round below now. */
	double end = r->op_start + epoch_time(r, k);
	push_op_end(f, ri, r, end > f->now ? end : f->now);
}

static void dheap_push(wzs_rep *r, int64_t step, int32_t id, int32_t sess, wzs_fleet *f)
{
	if (r->dn == r->dcap) {
		long cap = r->dcap ? r->dcap * 2 : 64;
		wzs_dslot *h = realloc(r->dheap, (size_t)cap * sizeof *h);
		if (!h) {
			f->err = wz_diag_set(f->diag, WZ_ERR_NOMEM, "out of memory (decode batch)");
			f->stop = 1;
			return;
		}
		r->dheap = h;
		f->dheap_of[r - f->reps] = h;
		r->dcap = cap;
	}
	long i = r->dn++;
	while (i > 0) {
		long parent = (i - 1) / 2;
		/* ties by request slot, so equal runs pop in equal order */
		if (r->dheap[parent].step < step ||
		    (r->dheap[parent].step == step && r->dheap[parent].req < id))
			break;
		r->dheap[i] = r->dheap[parent];
		i = parent;
	}
	r->dheap[i].step = step;
	r->dheap[i].req = id;
	r->dheap[i].sess = sess;
}

static int32_t dheap_pop(wzs_rep *r)
{
	int32_t top = r->dheap[0].req;
	wzs_dslot last = r->dheap[--r->dn];
	long i = 0, n = r->dn;
	for (;;) {
		long c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && (r->dheap[c + 1].step < r->dheap[c].step ||
				  (r->dheap[c + 1].step == r->dheap[c].step &&
				   r->dheap[c + 1].req < r->dheap[c].req)))
			c++;
		if (r->dheap[c].step > last.step ||
		    (r->dheap[c].step == last.step && r->dheap[c].req > last.req))
			break;
		r->dheap[i] = r->dheap[c];
		i = c;
	}
	if (n > 0)
		r->dheap[i] = last;
	return top;
}

static void finish(wzs_fleet *f, wzs_rep *r, int32_t id)
{
	wzs_req *q = &f->reqs[id];
	wzs_sess *s = &f->sess[q->session];
	r->admitted[q->rank]--;
	s->ctx = q->prefix + q->prompt + q->output;
	s->busy = 0;
	wzs_request_done(f, id, f->now, 0, 0);
}

/* ceil(v), without the library call (this build may not assume SSE4.1's
 * rounding instruction): for |v| < 2^52, trunc(v) plus one where it lies
 * below v; trunc(v) of a negative v is ceil(v) already (-0.5 gives +0
 * where ceil gives -0, the same whole count). */
static inline double ceil_inline(double v)
{
	if (v > -0x1p52 && v < 0x1p52) {
		double t = (double)(long long)v;
		return t + (double)(t < v);
	}
	return ceil(v);
}

/* A request with its first token joins the decode batch at this step. */
static void join_decode(wzs_fleet *f, wzs_rep *r, int32_t id)
{
	wzs_req *q = &f->reqs[id];
	q->state = RQ_DECODE;
	/* The first token came with the prefill; MTP's steps each bring
	 * tokens_per_step of the rest on average. */
	q->finish_step = r->steps + (int64_t)ceil_inline((double)(q->output - 1) / f->m->tokens_per_step -
						  1e-9);
	q->tok_contrib = (double)(q->prefix + q->prompt + 1) - (double)r->steps * f->m->tokens_per_step;
	r->tok_a[q->rank] += q->tok_contrib;
	r->tok_n[q->rank]++;
	dheap_push(r, q->finish_step, id, q->session, f);
}

/* Disaggregated: the requests whose cache arrived during a decode step
 * join at its end. */
static void join_arrived(wzs_fleet *f, wzs_rep *r)
{
	while (r->join_head >= 0) {
		int32_t id = r->join_head;
		r->join_head = f->reqs[id].next;
		f->reqs[id].next = -1;
		join_decode(f, r, id);
	}
	r->join_tail = -1;
}

void wzs_on_kv_arrive(wzs_fleet *f, int32_t id, uint32_t serial)
{
	wzs_req *q = &f->reqs[id];
	if (q->serial != serial || q->state != RQ_POOL)
		return;
	int32_t ri = f->sess[q->session].replica;
	wzs_rep *r = REP(f, ri);
	q->prefilled = q->prefix - q->reuse + q->prompt;
	q->first_token = f->now;
	wzs_prefix_computed(f, r, q);
	if (q->output <= 1) {
		finish(f, r, id);
		wzs_try_admit(f, ri);
		return;
	}
	q->state = RQ_JOINING;
	q->next = -1;
	if (r->join_tail >= 0)
		f->reqs[r->join_tail].next = id;
	else
		r->join_head = id;
	r->join_tail = id;
	if (r->op == OP_IDLE) {
		join_arrived(f, r);
		wzs_start_op(f, ri);
	} else {
		wzs_cut_epoch(f, ri); /* the batch changes at the next step */
	}
}

void wzs_on_op_end(wzs_fleet *f, int32_t ri)
{
	wzs_rep *r = REP(f, ri);
	/* A replaced end never comes (wzs_queue_push_owned). */
	if (r->op == OP_IDLE)
		return;
	double busy = f->now - r->op_start;
	/* The decode batch's request-seconds in this operation, within the
	 * measured window: stepping, or waiting through a prefill pass (the
	 * batch is the same from the operation's start to its end). */
	double from = r->op_start > f->p->warmup_s ? r->op_start : f->p->warmup_s;
	if (r->dn > 0 && f->now > from) {
		double rs = (f->now - from) * (double)r->dn;
		if (r->op == OP_PREFILL)
			f->res->decode_wait_prefill_s += rs;
		else
			f->res->decode_run_s += rs;
	}
	if (r->op == OP_PREFILL) {
		f->res->busy_prefill_s += busy;
		if (r->op_network_bound)
			f->res->busy_prefill_network_s += busy;
	} else if (r->op_network_bound)
		f->res->busy_decode_network_s += busy;
	else if (r->op_compute_bound)
		f->res->busy_decode_compute_s += busy;
	else
		f->res->busy_decode_memory_s += busy;
	if (r->op == OP_PREFILL) {
		/* The pass's requests, in queue order among those still pending. */
		long seen = 0;
		int32_t prev = -1;
		for (int32_t id = r->pf_head; id >= 0 && seen < r->op_count;) {
			wzs_req *q = &f->reqs[id];
			int32_t next = q->next;
			if (q->state != RQ_PREFILL) {
				prev = id;
				id = next;
				continue;
			}
			seen++;
			q->prefilled += q->op_take;
			if (q->prefilled < q->prefix - q->reuse + q->prompt) {
				q->state = RQ_PENDING; /* the rest in the next pass */
				prev = id;
				id = next;
				continue;
			}
			if (prev >= 0)
				f->reqs[prev].next = next;
			else
				r->pf_head = next;
			if (next < 0)
				r->pf_tail = prev;
			q->next = -1;
			q->first_token = f->now;
			wzs_prefix_computed(f, r, q);
			if (q->output <= 1) {
				/* finish may append a deferred turn at the tail: after `next`. */
				finish(f, r, id);
				id = next;
				continue;
			}
			join_decode(f, r, id);
			id = next;
		}
	} else {
		r->steps += r->op_k;
		while (r->dn > 0 && r->dheap[0].step <= r->steps) {
			int32_t id = dheap_pop(r);
			wzs_req *q = &f->reqs[id];
			r->tok_a[q->rank] -= q->tok_contrib;
			r->tok_n[q->rank]--;
			finish(f, r, id);
		}
	}
	r->last_op = r->op;
	r->op = OP_IDLE;
	join_arrived(f, r);
	wzs_try_admit(f, ri); /* which starts the next operation */
}
