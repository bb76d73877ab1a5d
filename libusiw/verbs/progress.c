/* Inline progress, the QP stacks' lock (the engine's), the running QPs and
 * their timers, and the host side of the QP stacks: datagrams out through
 * the engine, datagrams in from it, the clock. */
#include "progress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "context.h"
#include "cq.h"
#include "progress_thread.h"
#include "qp.h"
#include "qp_timers.h"

/* Warming a QP has no effect on behaviour: it brings in the lines of the
 * QP that its next message in or out uses (usiw/warm.h).  In stages,
 * each asking for the lines whose places the lines of the stage before
 * hold: the QP, then what it points to (its UDP endpoint, its CQs' next
 * entries, its stack, its TRP connection and RDMAP endpoint), then their
 * queues' next entries; and for a QP that streams, the queue entries its
 * next turn's later posts fill, one more at each stage (WARM_AHEAD). */
enum warm_stage { WARM_QP, WARM_NEAR, WARM_QUEUES, WARM_AHEAD, WARM_DONE };

static struct {
	/* Open and close of contexts: starts and stops the progress thread.
	 * Never taken with the lock below held. */
	pthread_mutex_t lifecycle;
	unsigned contexts;
	/* [engine] progress = thread: the engine's lcore runs our pass, and
	 * verbs calls leave progress to it.  Set while no QP exists. */
	bool engine_thread;

	/* The process's one engine, whose lock is the lock (progress.h); set
	 * by the first open, and kept for the life of the process as the
	 * engine is (context.c). */
	struct usiw_engine *engine;
	/* QPs with a stack, of every context, by their next deadline. */
	struct usiw_qp_timers timers;
	/* Earliest timer of those stacks; written under the lock, read
	 * without it by the helper thread to bound its sleep. */
	_Atomic uint64_t next_deadline;

	/* Written by application threads without the lock, read by the
	 * helper thread to stay out of the way of an application that
	 * progresses itself. */
	_Atomic uint64_t app_last_call_ns;
	_Atomic uint64_t app_calling_since_ns;
	/* usiw_clock_ns() time of the last usiw_progress_app_may_wait (0:
	 * none). */
	_Atomic uint64_t app_may_wait_ns;

	/* Running QPs that expect an RDMA Write to go on arriving, or to
	 * begin (usiw_progress_finish_arriving).  Written under the lock, read
	 * without it for the quick check. */
	_Atomic unsigned writes_expected;
	/* usiw_progress_flush_deferred */
	atomic_bool flush_deferred;
	/* usiw_progress_tx_waiting */
	atomic_bool tx_waiting;

	/* Posts and datagrams in, over every QP (usiw_progress_touch_qp).  32
	 * bits, as a QP's last_use, which fits a hole of its hot line: the
	 * count only tells how long ago a QP was used, and a difference that
	 * wraps misjudges only a QP idle for 2^32 uses, a hint's worth. */
	uint32_t qp_uses;
	/* The QP of the last ibv_post_send (usiw_progress_posted). */
	struct usiw_qp *last_posted;
	/* usiw_progress_streaming */
	bool last_post_unacked;
	/* The QP being warmed ahead of its use (a timer slot) and its next
	 * stage (warm_next_stage); in WARM_AHEAD, how many entries past its
	 * queues' next ones are warmed, and whether they are to be. */
	uint32_t warm_slot;
	uint8_t warm_stage;
	bool warm_ahead_wanted;
	uint32_t warm_ahead;
} progress = {
	.lifecycle = PTHREAD_MUTEX_INITIALIZER,
	.next_deadline = UINT64_MAX,
	.warm_stage = WARM_DONE,
};

static unsigned engine_thread_poll(struct usiw_engine *engine)
{
	uint64_t next_deadline;

	return usiw_progress_pass(engine, &next_deadline);
}

/* A QP and its number, copied so that sorting reads no QP (each one read is
 * a cache miss, and the lock the sort holds stops the data path). */
struct numbered_qp {
	uint32_t num;
	struct usiw_qp *qp;
};

static int by_qp_num(const void *a, const void *b)
{
	uint32_t x = ((const struct numbered_qp *)a)->num;
	uint32_t y = ((const struct numbered_qp *)b)->num;

	return (x > y) - (x < y);
}

/* /usiw/qps (engine.h): the TRP counters of the running QPs numbered from
 * `first` on, in order of number (the timer heap's order changes from one
 * page to the next), read under the lock from DPDK's telemetry thread. */
static unsigned report_qps(struct usiw_counters *out, uint32_t first)
{
	usiw_engine_lock(progress.engine);
	const uint32_t all = progress.timers.len;
	struct numbered_qp *page = malloc(((size_t)all + 1) * sizeof(*page));
	uint32_t n = 0;

	for (uint32_t i = 0; page && i < all; i++) {
		struct usiw_qp *qp = usiw_qp_timers_slot_qp(&progress.timers, progress.timers.heap[i].slot);

		if (qp->vqp.qp.qp_num >= first)
			page[n++] = (struct numbered_qp){ .num = qp->vqp.qp.qp_num, .qp = qp };
	}
	if (n > 1) /* page is NULL when malloc failed, and qsort's may not be */
		qsort(page, n, sizeof(*page), by_qp_num);
	for (uint32_t i = 0; i < n; i++) {
		struct usiw_qp *qp = page[i].qp;
		struct trp_stats st;
		char name[32];

		snprintf(name, sizeof(name), "qp_%u", page[i].num);
		if (!usiw_counters_object(out, name))
			continue;
		trp_conn_stats(qp_stack_conn(qp->stack), &st);
#define VALUE(field) usiw_counters_value(out, #field, st.field)
		VALUE(pkts_sent);
		VALUE(bytes_sent);
		VALUE(pkts_rcvd);
		VALUE(bytes_rcvd);
		VALUE(data_delivered);
		VALUE(retransmits);
		VALUE(timeouts);
		VALUE(spurious_timeouts);
		VALUE(fast_retransmits);
		VALUE(tail_probes);
		VALUE(xmit_busy);
		VALUE(acks_sent);
		VALUE(dup_dropped);
		VALUE(window_dropped);
		VALUE(refused);
		VALUE(not_ready_sent);
		VALUE(not_ready_rcvd);
		VALUE(checksum_dropped);
		VALUE(checksum_missing);
		VALUE(srtt_ns);
		VALUE(min_rtt_ns);
		VALUE(rto_ns);
		VALUE(cwnd);
		VALUE(in_flight);
		VALUE(peer_window);
#undef VALUE
	}
	usiw_engine_unlock(progress.engine);
	free(page);
	return all;
}

int usiw_progress_init(struct usiw_context *ctx)
{
	int rc = 0;

	pthread_mutex_lock(&progress.lifecycle);
	if (progress.contexts == 0) {
		progress.engine = ctx->engine;
		progress.engine_thread = usiw_engine_set_thread_poll(ctx->engine,
								     engine_thread_poll);
		if (!progress.engine_thread)
			rc = usiw_helper_thread_start(ctx->engine);
		if (!rc)
			usiw_engine_set_qp_report(report_qps);
	}
	if (!rc)
		progress.contexts++;
	pthread_mutex_unlock(&progress.lifecycle);
	return rc;
}

void usiw_progress_fini(struct usiw_context *ctx)
{
	pthread_mutex_lock(&progress.lifecycle);
	if (--progress.contexts == 0) {
		usiw_engine_set_qp_report(NULL);
		if (progress.engine_thread)
			usiw_engine_set_thread_poll(ctx->engine, NULL);
		else
			usiw_helper_thread_stop();
	}
	pthread_mutex_unlock(&progress.lifecycle);
}

void usiw_context_lock(struct usiw_context *ctx)
{
	usiw_engine_lock(ctx->engine);
}

void usiw_context_unlock(struct usiw_context *ctx)
{
	usiw_engine_unlock(ctx->engine);
}

/* The cheap check first: nothing but a compare when no stack was used and
 * no timer is due, which is every call of a spinning poll_cq between
 * packets. */
static void run_due_timers(uint64_t now)
{
	if (!progress.timers.changed &&
	    now < atomic_load_explicit(&progress.next_deadline, memory_order_relaxed))
		return;
	atomic_store_explicit(&progress.next_deadline, usiw_qp_timers_run(&progress.timers, now),
			      memory_order_relaxed);
}

/* Before a progress pass, whose flush sends what post_send left waiting. */
static void flush_deferred_taken(void)
{
	if (atomic_load_explicit(&progress.flush_deferred, memory_order_relaxed))
		atomic_store_explicit(&progress.flush_deferred, false, memory_order_relaxed);
}

/* Sets a flag the helper thread reads before a long sleep, waking it from
 * one it is in: the change from clear to set only.  Set and announced
 * (seq_cst both) before the helper's long sleep is looked at, as the
 * helper announces that sleep before it reads the flag: one of the two
 * sides sees the other. */
static void set_and_wake_helper(atomic_bool *flag)
{
	if (atomic_load_explicit(flag, memory_order_relaxed))
		return;
	atomic_store(flag, true);
	usiw_helper_thread_wake();
}

/* After a post that left frames in an open bundle.  The helper thread may
 * be in one of its long sleeps, begun while the application drove
 * progress; if the application now waits elsewhere, the frames would wait
 * for the end of it (up to 10 ms).  Without the wake, 15 Writes posted
 * behind an unacknowledged one and followed by a 2 ms pause without verbs
 * calls were still unsent at its end whenever the helper had begun a long
 * sleep: usiw-verbs-check (deferred_leave) over memif and af_packet failed
 * in 4 runs of 8, none in 10 with it. */
static void flush_deferred_set(void)
{
	set_and_wake_helper(&progress.flush_deferred);
}

/* A post's kept clock (usiw_progress_post_clock) may be older than the last
 * call: signed, that continues the run. */
static void note_app_call(uint64_t now)
{
	uint64_t last = atomic_load_explicit(&progress.app_last_call_ns, memory_order_relaxed);

	if ((int64_t)(now - last) >= USIW_APP_CALL_GAP_NS)
		atomic_store_explicit(&progress.app_calling_since_ns, now, memory_order_relaxed);
	atomic_store_explicit(&progress.app_last_call_ns, now, memory_order_relaxed);
}

/* The time of the progress pass that the thread holding the lock runs (0:
 * none), which the QPs' stacks read as their clock (host_now): a pass
 * takes microseconds, and TRP read the clock for every packet it sent or
 * received, 7.7% of the CPU of the helper thread that sends ib_read_bw's
 * responses.  A post_send sets it too, for each work request it sends
 * (usiw_progress_post_clock).  Read after the lock is taken, so it never
 * runs behind a time a stack took from the thread that held the lock
 * before.  Written and read only under the lock (every stack call runs
 * under it), and back to 0 before the pass (or the post) lets it go, so it
 * needs no thread-local storage, which a library loaded with dlopen reaches
 * through __tls_get_addr: about 80 instructions per 64 B ib_send_lat
 * message. */
static uint64_t pass_clock;

/* The clock of the last post_send that read it, and the engine's flush
 * count then (usiw_engine_tx_flushes; UINT64_MAX: none to reuse).  While
 * nothing was flushed since and frames wait, later posts take it as theirs
 * without reading the TSC, which costs ~23 ns here: a tenth of an
 * ib_send_bw 64 B sender's time (perf), whose posts gather ~50 Sends to a
 * frame.  The packets they send leave at the flush, no sooner than those
 * of the post that read it: TRP's times of transmission (its RTT samples,
 * its timers) were already behind by the time a frame waits for the flush,
 * and this keeps them within it.  Any other clock a stack takes forgets
 * it (forget_post_clock), so the time stacks see never runs backwards. */
static uint64_t post_clock;
static uint64_t post_clock_flushes = UINT64_MAX;

static void forget_post_clock(void)
{
	post_clock_flushes = UINT64_MAX;
}

/* Engine passes a progress pass may add before its timers run, while a
 * timer is due and each pass finds work (see engine_pass). */
#define PASSES_BEFORE_TIMERS 8

static void warm_next_stage(void);

static unsigned engine_pass(struct usiw_engine *engine, uint64_t now)
{
	pass_clock = now;
	forget_post_clock();
	flush_deferred_taken();
	unsigned handled = usiw_engine_progress(engine);
	/* An engine pass receives one burst.  A retransmission timer that is
	 * due while ACKs still wait in the rx ring behind that burst would
	 * fire for packets already acknowledged, so the ring is drained
	 * further first.  That happens when one thread both sends and receives
	 * for many QPs: ib_write_bw -q 1024's sender, which receives its ACKs
	 * only in its poll_cq calls, had every QP time out about once a
	 * second, two thirds of them spuriously; about once in 9 s with this
	 * (docs/verbs.md). */
	for (unsigned passes = 0, last = handled;
	     last && passes < PASSES_BEFORE_TIMERS &&
	     now >= atomic_load_explicit(&progress.next_deadline, memory_order_relaxed);
	     passes++) {
		last = usiw_engine_progress(engine);
		handled += last;
	}
	run_due_timers(now);
	pass_clock = 0;
	return handled;
}

void usiw_progress_post_clock(struct usiw_context *ctx)
{
	const uint64_t flushes = usiw_engine_tx_flushes(ctx->engine);

	if (flushes == post_clock_flushes && usiw_engine_tx_waiting(ctx->engine)) {
		pass_clock = post_clock;
		return;
	}
	pass_clock = post_clock = usiw_clock_ns();
	post_clock_flushes = flushes;
}

void usiw_progress_locked(struct usiw_context *ctx)
{
	pass_clock = 0; /* a post's (usiw_progress_post_clock) ends here */
	if (progress.engine_thread)
		return;
	uint64_t now = usiw_clock_ns();
	note_app_call(now);
	engine_pass(ctx->engine, now);
	warm_next_stage();
}

void usiw_progress_sent_locked(struct usiw_context *ctx, bool may_bundle)
{
	const uint64_t now = pass_clock ? pass_clock : usiw_clock_ns();

	pass_clock = 0;
	if (progress.engine_thread)
		return;
	note_app_call(now);
	if (!may_bundle)
		usiw_engine_flush(ctx->engine);
	else if (!usiw_engine_flush_unless_bundling(ctx->engine))
		flush_deferred_set();
}

/* An application that streams over several QPs in turn (ib_write_bw -q,
 * qp-rate, a collective's peers) begins each QP's turn on a QP with nothing
 * unacknowledged: that post flushed its lone datagram at once, a frame and
 * an ACK of its own per turn.  Taken as streaming, it joins the frames of
 * the turns before it (mux frames, docs/engine.md): qp-rate's 16-Write
 * turns over 16 QPs went from 0.72-0.95 to 0.94-0.97 of QP 0 alone's rate
 * (docs/bench.md, Many QPs).  A ping-pong over many QPs is untouched: each
 * of its posts finds the one before answered, hence acknowledged. */
bool usiw_progress_streaming(bool qp_unacked)
{
	const bool streaming = qp_unacked || progress.last_post_unacked;

	progress.last_post_unacked = qp_unacked;
	return streaming;
}

bool usiw_progress_flush_deferred(void)
{
	return atomic_load(&progress.flush_deferred);
}

void usiw_progress(struct usiw_context *ctx)
{
	if (progress.engine_thread)
		return;
	usiw_engine_lock(ctx->engine);
	usiw_progress_locked(ctx);
	usiw_engine_unlock(ctx->engine);
}

/* How long a poll_cq that found completions keeps receiving the rest of
 * Writes that are arriving: until their segments stop coming for
 * ARRIVAL_GAP_NS (the sender paused), and at most ARRIVAL_MAX_NS (longer
 * ones are the helper thread's).  64 KiB take ~15 us over memif and ~160 us
 * over af_packet at MTU 1500, where a bound of 100 us left ib_write_lat at
 * 380-470 us typical, against 157-177 us with 500 us.
 *
 * Both bounds are set against what handing the rest to the helper costs
 * when the application spins on memory next, on the helper's CPU.  Traced
 * (ib_write_lat 1 MiB over af_packet, pinned, 2 x 200 round trips): a
 * helper asleep began to receive ~10 us after it was asked (40 times), but
 * one that had just worked spins for idle-spin-us, yielding after each
 * empty poll, and the kernel (6.18) gave the CPU to the application
 * spinning on memory and ran the helper again a median of ~3.1 ms later
 * (358 times; a helper slice of 100 us or a nice of -19 changed nothing),
 * while the peer's retransmission timer fired.  The
 * gap: over af_packet a sender's frames come in bursts of the ~11 that one
 * flush hands the kernel, ~40 us apart, with ~20 us without a frame
 * between them, which ended the old 20 us gap mid-Write.  The maximum: 1 MiB
 * takes ~1.2-1.4 ms over af_packet, which the old 500 us always cut short.
 * ib_write_lat over af_packet, runs of one build alternating between the
 * old bounds (20 us, 500 us) and these: 64 KiB typical 95-121 / 87-148 us,
 * average 218-586 / 94-158 us, 99th percentile 2.1-4.0 / 0.13-0.23 ms;
 * 256 KiB typical 1.95-3.84 / 0.53-0.54 ms; 1 MiB typical ~4.0 / 1.5-3.1 ms
 * (a noisy host); over memif, 1 MiB typical 1.74-2.18 / 0.25-0.29 ms.  An
 * application polling a CQ while Writes keep arriving may thus stay in
 * poll_cq for up to 3 ms (ib_write_bw -b 64 KiB moved as much either way,
 * memif and af_packet). */
#define ARRIVAL_GAP_NS 100000u
#define ARRIVAL_MAX_NS 3000000u

/* An application that polled a completion may next wait without calling
 * verbs: ib_write_lat spins on memory for the peer's Write right after the
 * completion of its own, and that completion came with the first segment
 * of the peer's Write (whose ACK rode on it, trp_defer_ack).  Segments leave
 * as they are built, so the rest of that Write is still on its way, and
 * would wait for the helper thread, which sleeps while the application
 * drives progress (a wake-up costs ~50 us here): 64 KiB ib_write_lat over
 * memif went from 26 to 53 us typical when the engine began sending
 * segments as they were built.  Only Writes: a Send or Read Response
 * completes when it is in, so an application waiting for one polls the CQ
 * (waiting here for those made 64 KiB ib_send_lat's 99th percentile 130 ->
 * 600 us).  A Write that stops arriving (its sender was descheduled, or its
 * window is small) is left to the helper thread, woken for it.
 *
 * The same holds for the peer's answer to a Write of ours in a Write
 * ping-pong (usiw_progress_write_posted) when the completion of ours came
 * before it: the peer's delayed ACK left on its own, without waiting for
 * the answer (trp_defer_ack), because the peer took longer than the ACK
 * delay to answer.  The application then spins on memory for the answer,
 * with nobody receiving it but a helper asleep for up to 10 ms, while the
 * peer's retransmission timer fires every millisecond or more: 64 KiB
 * ib_write_lat over memif had ~120 timeouts in 5000 round trips, each with
 * all 8 segments of a Write unacknowledged, and a 99th percentile of 5 ms. */
void usiw_progress_finish_arriving(struct usiw_context *ctx)
{
	if (progress.engine_thread ||
	    !atomic_load_explicit(&progress.writes_expected, memory_order_relaxed))
		return;
	usiw_engine_lock(ctx->engine);
	uint64_t start = usiw_clock_ns(), last_frame = start;
	while (atomic_load_explicit(&progress.writes_expected, memory_order_relaxed)) {
		uint64_t now = usiw_clock_ns();
		if (now - last_frame > ARRIVAL_GAP_NS || now - start > ARRIVAL_MAX_NS)
			break;
		note_app_call(now);
		if (engine_pass(ctx->engine, now))
			last_frame = now;
	}
	usiw_engine_unlock(ctx->engine);
	if (usiw_progress_write_expected())
		usiw_helper_thread_take_over();
}

bool usiw_progress_write_expected(void)
{
	return atomic_load_explicit(&progress.writes_expected, memory_order_relaxed) != 0;
}

unsigned usiw_progress_pass(struct usiw_engine *engine, uint64_t *next_deadline)
{
	*next_deadline = UINT64_MAX;
	if (!usiw_engine_trylock(engine))
		return 0;
	unsigned handled = engine_pass(engine, usiw_clock_ns());
	/* The pass flushed before its timers ran, and what they sent (a
	 * delayed ACK, a retransmission) would wait for the next pass, which
	 * may be a sleep away.  Traced in usiw-verbs-check (deferred_leave)
	 * over af_packet under load: the helper ran the server's delayed ACK
	 * timer, slept 1 ms with the ACK unsent, and the client's 2 ms pause
	 * ended before it left.  An application's pass leaves them: its next
	 * call flushes, a post sends them with what it posts (a ping-pong's
	 * answer takes the ACK whose delay ran out along in one burst), and
	 * one that waits elsewhere after it is the helper's to serve.
	 * (Flushing there too, ib_write_lat 64 B over af_packet had a 99th
	 * percentile above 5 us in 4 of 6 alternating runs, against 1 of 6
	 * without.) */
	if (usiw_engine_tx_waiting(engine))
		usiw_engine_flush(engine);
	usiw_engine_unlock(engine);
	*next_deadline = usiw_progress_next_deadline();
	return handled;
}

uint64_t usiw_progress_next_deadline(void)
{
	return atomic_load_explicit(&progress.next_deadline, memory_order_relaxed);
}

void usiw_progress_app_may_wait(void)
{
	if (progress.engine_thread)
		return;
	atomic_store(&progress.app_may_wait_ns, usiw_clock_ns());
	usiw_helper_thread_wake();
}

/* The helper takes the flag at each look, so this wakes it at most once
 * per look. */
void usiw_progress_tx_waiting(void)
{
	if (progress.engine_thread)
		return;
	set_and_wake_helper(&progress.tx_waiting);
}

bool usiw_progress_take_tx_waiting(void)
{
	return atomic_exchange(&progress.tx_waiting, false);
}

uint64_t usiw_progress_app_may_wait_ns(void)
{
	return atomic_load(&progress.app_may_wait_ns);
}

uint64_t usiw_progress_app_last_call_ns(void)
{
	return atomic_load_explicit(&progress.app_last_call_ns, memory_order_relaxed);
}

uint64_t usiw_progress_app_calling_since_ns(void)
{
	return atomic_load_explicit(&progress.app_calling_since_ns, memory_order_relaxed);
}

int usiw_progress_add_running(struct usiw_qp *qp)
{
	int rc = usiw_qp_timers_add(&progress.timers, qp);

	qp->next_posted_slot = USIW_QP_NO_SLOT;
	if (rc == 0)
		atomic_store_explicit(&progress.next_deadline, 0, memory_order_relaxed);
	return rc;
}

static void set_write_expected(struct usiw_qp *qp, bool expected)
{
	if (expected == qp->write_expected)
		return;
	qp->write_expected = expected;
	if (expected)
		atomic_fetch_add_explicit(&progress.writes_expected, 1, memory_order_relaxed);
	else
		atomic_fetch_sub_explicit(&progress.writes_expected, 1, memory_order_relaxed);
}

/* Changes with every segment of an RDMA Write received (a zero-length
 * Write is one last segment): whether the peer wrote since a mark. */
static uint64_t write_segments_mark(const struct usiw_qp *qp)
{
	const struct rdmap_ep_counters *c = rdmap_ep_counters(qp_stack_ep(qp->stack));

	return c->rx[RDMAP_OP_WRITE].bytes + c->rx[RDMAP_OP_WRITE].msgs;
}

/* A Write is expected while one is partly in, or while a Write of ours that
 * answered one of the peer's (a Write ping-pong) awaits the peer's answer:
 * until a segment of a Write from the peer arrives. */
static void update_write_expected(struct usiw_qp *qp)
{
	if (qp->write_answer_awaited && write_segments_mark(qp) != qp->write_rx_mark)
		qp->write_answer_awaited = false;
	set_write_expected(qp, qp->write_answer_awaited ||
				       rdmap_ep_rx_mid_write(qp_stack_ep(qp->stack)));
}

void usiw_progress_write_posted(struct usiw_qp *qp)
{
	uint64_t mark = write_segments_mark(qp);

	qp->write_answer_awaited = mark != qp->write_rx_mark;
	qp->write_rx_mark = mark;
	update_write_expected(qp);
}

void usiw_progress_remove_running(struct usiw_qp *qp)
{
	if (progress.last_posted == qp)
		progress.last_posted = NULL;
	qp->write_answer_awaited = false;
	qp->write_rx_mark = 0;
	set_write_expected(qp, false);
	usiw_qp_timers_remove(&progress.timers, qp);
	usiw_qp_timers_fini(&progress.timers);
}

void usiw_progress_qp_changed(struct usiw_qp *qp)
{
	usiw_qp_timers_changed(&progress.timers, qp);
}

/* A message touches ~40 lines of its QP's state on each side (bench/run's
 * cache-line count), spread over the QP, its TRP connection, its RDMAP
 * endpoint, their queues and its CQs' next entries, and the code reaches
 * them one after another, so a QP whose state has left the cache pays each
 * miss in turn.  A QP last used more than this many uses ago (other QPs'
 * state touched since: ~2.5 KiB a use, 640 KiB in all, more than the cache
 * this VM's host leaves a process) gets those lines warmed all at once
 * (warm_qp): at its use, before the work that needs them, which over 1024
 * QPs in turn took 18-22% off qp-lat's half round trip; better, before its
 * use (usiw_progress_posted).  A QP in steady use is left alone: its lines
 * are cached, and warming them anyway cost 0.025 µs of a 0.7 µs half
 * round trip over one QP (docs/bench.md, Many QPs). */
#define QP_COLD_AFTER_USES 256

/* The queue entries a QP's turn of posts fills (a 128-byte send WQE and a
 * 64-byte TRP send slot a Write) stay cached far longer than the QP's own
 * lines when many QPs stream in turn: the queues restart at their first
 * entry when empty (rdmap_tx.c, trp/send.c), so each turn reuses the
 * last's.  Over 16 QPs taking 64 Writes a turn in qp-rate (~1000 uses
 * between a QP's turns) they were still cached, and warming them cost 2-3
 * points of the same-run ratio to QP 0 alone (four alternating pairs);
 * over 1024 QPs (~70000 uses) it gained 3 (mean 0.824 -> 0.853, six
 * pairs), over 256 (~17000) ~2 (better in 5 of 7; docs/bench.md, Many
 * QPs). */
#define QP_QUEUES_COLD_AFTER_USES 4096

static bool qp_cold(const struct usiw_qp *qp)
{
	return (uint32_t)(progress.qp_uses - qp->last_use) > QP_COLD_AFTER_USES;
}

/* Warms one stage's lines of qp (enum warm_stage above). */
static void warm_stage(const struct usiw_qp *qp, enum warm_stage stage, enum usiw_warm how)
{
	switch (stage) {
	case WARM_QP:
		for (size_t off = 0; off < offsetof(struct usiw_qp, early); off += 64)
			usiw_warm_line((const char *)qp + off, how);
		break;
	case WARM_NEAR:
		usiw_warm_line(qp->udp, how);
		usiw_warm_line(qp->stack, how);
		for (const struct usiw_cq *cq = qp->send_cq;; cq = qp->recv_cq) {
			usiw_warm_line(&cq->ring[cq->tail & cq->mask], how);
			usiw_warm_line(&cq->ring[(cq->tail + 1) & cq->mask], how);
			if (cq == qp->recv_cq)
				break;
		}
		trp_conn_warm(qp->conn, how);
		rdmap_ep_warm(qp->ep, how);
		break;
	case WARM_QUEUES:
		trp_conn_warm_queues(qp->conn, how);
		rdmap_ep_warm_queues(qp->ep, how);
		break;
	case WARM_AHEAD:
	case WARM_DONE:
		break;
	}
}

/* All stages at once. */
static void warm_qp(const struct usiw_qp *qp, enum usiw_warm how)
{
	for (enum warm_stage s = WARM_QP; s < WARM_AHEAD; s++)
		warm_stage(qp, s, how);
}

/* A QP used soon (usiw_progress_posted): a stage at each post and each
 * progress pass of the application, so that the stage's lines come in
 * while the application works.  All at once, the QP's ~50 lines took ~0.9
 * us at the start of each turn of qp-rate over 1024 QPs (perf: warm_qp,
 * 14 ns a Write of 206): more lines than a core keeps in flight, and each
 * stage's places read from lines still missing.  In stages, qp-rate's
 * same-run ratio over 1024 QPs went from 0.79-0.81 to 0.82-0.86 (eight
 * alternating pairs), qp-lat's stayed (means 1.39 and 1.37).  The QP keeps
 * the places of its TRP connection and RDMAP endpoint (qp.h), so that they
 * are asked for with the QP's own pointers instead of a stage after the
 * stack's line, on which the stage stalled: 0.853 against 0.843 on average
 * (twelve alternating pairs, better in nine). */
static void warm_next_stage(void)
{
	if (progress.warm_stage == WARM_DONE)
		return;
	const struct usiw_qp *qp = usiw_qp_timers_slot_qp(&progress.timers, progress.warm_slot);

	if (!qp || !qp->stack) {
		progress.warm_stage = WARM_DONE;
	} else if (progress.warm_stage < WARM_AHEAD) {
		warm_stage(qp, progress.warm_stage++, USIW_WARM_PREFETCH);
		if (progress.warm_stage == WARM_AHEAD && !progress.warm_ahead_wanted)
			progress.warm_stage = WARM_DONE;
	} else {
		/* Until the QP's turn begins (usiw_progress_posted) or its
		 * queues have no room for more. */
		const uint32_t ahead = ++progress.warm_ahead;
		const bool sq = rdmap_ep_warm_send_entry(qp->ep, ahead, USIW_WARM_PREFETCH);
		const bool slots = trp_conn_warm_send_slot(qp->conn, ahead, USIW_WARM_PREFETCH);
		if (!sq && !slots)
			progress.warm_stage = WARM_DONE;
	}
}

void usiw_progress_touch_qp(struct usiw_qp *qp)
{
	const bool cold = qp->stack && qp_cold(qp);

	qp->last_use = ++progress.qp_uses;
	if (cold)
		warm_qp(qp, USIW_WARM_PREFETCH);
}

/* Applications that spread their work over many QPs mostly take them in
 * an order that repeats (qp-lat and ib_write_bw -q in turn, MPI's
 * collectives peer by peer), so the QP posted to after this one last time
 * is the likely next.  Warming that one now, when this post's frames have
 * left, moves its misses out of the next message's way: over 1024 QPs
 * qp-lat's same-run ratio to one QP went from 1.24-1.31 to 1.12-1.15 in
 * alternating runs (docs/bench.md).  A wrong guess costs only the warming;
 * the successor is kept as a timer slot (qp_timers.h), so a QP that
 * stopped running is never read.
 *
 * After a post that does not stream, the application waits for an answer
 * (a ping-pong): the successor's lines are loaded at once (usiw/warm.h),
 * stalling only that wait, which cut qp-lat's half round trip over 1024
 * QPs by 0.035-0.055 us more than the staged prefetches, QP 0 alone the
 * same (alternate blocks, four runs).  The successor's next buffers get
 * a prefetch (rdmap_ep_warm_buffers: the application's memory, which it
 * may have unmapped, so no load): over 1024 QPs qp-lat's same-run ratio
 * went from 1.10-1.23 (mean 1.16) to 1.00-1.10 (mean 1.05), lower in 14
 * of 15 alternating pairs of runs.  A streaming post is followed by the
 * next one, which a stall would hold back (loads at every QP's turn took
 * qp-rate over 1024 QPs from 0.875-0.888 to 0.851-0.860 of QP 0 alone),
 * so its successor gets the staged prefetches (warm_next_stage). */
void usiw_progress_posted(struct usiw_qp *qp, bool streaming)
{
	struct usiw_qp *prev = progress.last_posted;

	warm_next_stage();
	if (progress.engine_thread || !qp->stack || prev == qp)
		return;
	/* Its turn has begun: what it posts next is warm, or being written. */
	if (progress.warm_slot == qp->timer.slot)
		progress.warm_stage = WARM_DONE;
	if (prev)
		prev->next_posted_slot = qp->timer.slot;
	progress.last_posted = qp;
	struct usiw_qp *next = usiw_qp_timers_slot_qp(&progress.timers, qp->next_posted_slot);
	if (!next || next == qp || !qp_cold(next))
		return;
	const uint32_t idle_uses = progress.qp_uses - next->last_use;
	/* Warm it from now on, so that its use does not warm it again. */
	next->last_use = progress.qp_uses;
	if (!streaming) {
		warm_qp(next, USIW_WARM_LOAD);
		rdmap_ep_warm_buffers(next->ep);
		return;
	}
	progress.warm_slot = qp->next_posted_slot;
	progress.warm_stage = WARM_QP;
	progress.warm_ahead_wanted = idle_uses > QP_QUEUES_COLD_AFTER_USES;
	progress.warm_ahead = 0;
	warm_next_stage();
}

/* ---- Host operations of a QP's stack ------------------------------------ */

/* A datagram the engine cannot take now (-EAGAIN: no mbuf, ARP queue full,
 * the tx queue and its backlog full) is refused to TRP, which sends it again
 * at its next poll; the other errors cannot happen after RTR resolved the
 * peer and sized segments to the path (and TRP's retries end the connection
 * if the peer really went away). */
static int host_xmit(void *arg, const void *hdr, size_t hdr_len, const void *data,
		     size_t data_len)
{
	struct usiw_qp *qp = arg;

	return usiw_udp_send(qp->udp, qp->peer_ipv4, qp->peer_port, hdr, hdr_len, data,
			     data_len) == -EAGAIN;
}

static uint64_t host_now(void *arg)
{
	(void)arg;
	if (pass_clock)
		return pass_clock;
	forget_post_clock();
	return usiw_clock_ns();
}

static void host_complete(void *arg, const struct rdmap_wc *wc)
{
	usiw_qp_complete(arg, wc);
}

/* Lines report_peer_gone prints per process: a peer that dies with a
 * thousand QPs open would otherwise print a thousand of them. */
#define PEER_GONE_REPORTS 4

/* Says why a QP's connection failed where the application sees only
 * IBV_WC_RETRY_EXC_ERR, with what TRP knows of the peer. */
static void report_peer_gone(const struct usiw_qp *qp, int status, const struct trp_stats *st)
{
	static atomic_uint reports;
	unsigned n = atomic_fetch_add_explicit(&reports, 1, memory_order_relaxed);
	char ip[INET_ADDRSTRLEN];

	if (n > PEER_GONE_REPORTS)
		return;
	if (n == PEER_GONE_REPORTS) {
		fprintf(stderr, "usiw: further QP failures are not reported\n");
		return;
	}
	inet_ntop(AF_INET, &qp->peer_ipv4, ip, sizeof(ip));
	fprintf(stderr,
		"usiw: QP %u: the connection to QP %u at %s failed: %s "
		"(%" PRIu64 " packets received from it in all; retransmission timeout %" PRIu64
		" ms at the end)\n",
		qp->vqp.qp.qp_num, qp->peer_port, ip, trp_strerror(status),
		st->pkts_rcvd, st->rto_ns / 1000000);
}

/* A failed or closed connection puts the endpoint in error, which query_qp
 * reports as the QP's state; the events matter to a connection manager. */
static void host_event(void *arg, enum trp_event_type type, int status, const void *pdata,
		       size_t pdata_len)
{
	struct usiw_qp *qp = arg;

	if (type == TRP_EV_FAILED) {
		struct trp_stats st;

		trp_conn_stats(qp_stack_conn(qp->stack), &st);
		/* The one bad setup TRP can recognise: the application sees
		 * only retries exceeded. */
		if (st.checksum_missing)
			fprintf(stderr,
				"usiw: QP %u: the peer sent %" PRIu64 " packets without the CRC "
				"this port requires: the [port] crc settings of the two ends "
				"differ (docs/config.md)\n",
				qp->vqp.qp.qp_num, st.checksum_missing);
		else if (status == TRP_ERR_TIMEOUT || status == TRP_ERR_DEAD_PEER ||
			 status == TRP_ERR_RESET)
			report_peer_gone(qp, status, &st);
	}
	usiw_qp_cm_event(qp, type, status, pdata, pdata_len);
}

const struct qp_stack_host_ops usiw_qp_host_ops = {
	.xmit = host_xmit,
	.now_ns = host_now,
	.complete = host_complete,
	.event = host_event,
};

/* Runs inside engine progress, under the engine's lock: the lock
 * (progress.h). */
void usiw_qp_receive(void *arg, uint32_t src_ipv4, uint16_t src_port, const void *data,
		     size_t len)
{
	struct usiw_qp *qp = arg;

	usiw_progress_touch_qp(qp);
	/* From anyone but the peer (none before RTR), nothing is taken. */
	if (src_ipv4 == qp->peer_ipv4 &&
	    (src_port == qp->peer_port ||
	     usiw_qp_cm_peer_answered(qp, src_ipv4, src_port, data, len))) {
		if (!qp->stack && qp->state == IBV_QPS_RTR)
			usiw_qp_open_on_first_segment(qp, data, len);
		if (qp->stack) {
			qp_stack_input(qp->stack, data, len);
			update_write_expected(qp);
			usiw_qp_timers_changed(&progress.timers, qp);
		}
	}
}
