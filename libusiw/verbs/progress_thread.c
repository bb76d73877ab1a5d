/* The helper progress thread of inline mode.
 *
 * An application that waits without calling verbs (perftest's ib_write_lat
 * spins on memory for the peer's RDMA Write; the passive side of the
 * bandwidth tests blocks on its TCP socket) progresses nothing, so its QPs
 * would neither receive nor acknowledge.  This thread covers it, without
 * competing for the two cores of a machine where both endpoints run:
 *
 * - while the application drives progress (a progressing verbs call within
 *   USIW_APP_CALL_GAP_NS, the last of calls that went on for as long), the
 *   thread sleeps MAX_DRIVING_SLEEP_NS (idle-sleep-us if it handled frames
 *   within the spin spell: the application needed it a moment ago) and only
 *   looks at the time of the last call when it wakes;
 * - when the application stops calling, the thread progresses, and keeps
 *   busy-polling for [engine] idle-spin-us after the later of the last call
 *   and the last frame it handled (a stream of traffic keeps it spinning),
 *   yielding the CPU (sched_yield) after each poll that found nothing to do.
 *   A yield returns at once when nothing else waits for the CPU; what does
 *   wait there is an application preempted by us most likely, or the
 *   kernel's softirq thread that moves af_packet's frames across a veth.
 *   Without the yield, on two cores shared by two spinning applications and
 *   their helpers, a helper spun in its application's place for idle-spin-us
 *   at a time, which kept it preempted: in one ib_send_bw -s 64 run over
 *   memif the server's helper made 30 million polls and 20000 progress
 *   passes (alternating runs without / with a yield while the application
 *   was off its CPU: ib_send_bw 64 B 0.85-1.35 / 1.29-1.31 M msg/s;
 *   ib_send_lat -e 64 B typical 149-169 / 25-56 us).  And over af_packet,
 *   where ib_write_lat's applications both spin on memory and their helpers
 *   both poll, the frames waited for ksoftirqd, which got a CPU at the next
 *   tick: ib_write_lat 64 KiB had typical round trips of 4.0 ms (this
 *   kernel's tick) in most runs, and 125 us in the others.  Yielding only
 *   when the application was off its CPU left that; yielding after every
 *   poll (take-over included): typical 125-135 us in every run, average
 *   256-283 us, 99th percentile 2.1 ms.  A poll that handled frames is not
 *   followed by a yield: the next one most likely finds more, and as the
 *   passive side of a bandwidth test (the thread does all its receiving)
 *   half the thread's time went to sched_yield; ib_write_bw -s 64 -q 1024
 *   over memif, three alternating runs: 3.16-4.35 -> 4.44-4.64 M msg/s,
 *   af_packet ib_write_lat 64 KiB unchanged (typical 126-132 us);
 * - otherwise its sleeps last [engine] idle-sleep-us at first, longer the
 *   longer it has had nothing to do (an eighth of that time, at most
 *   MAX_IDLE_SLEEP_NS), never past the next TRP timer (delayed ACK,
 *   retransmission, keepalive).  Each wake-up on a machine
 *   whose cores both spin (two endpoints polling) preempts one of them, so
 *   an application that progresses itself is left alone for long, and a
 *   timer it leaves pending when it stops (its last delayed ACK) waits for
 *   the end of our sleep: up to MAX_DRIVING_SLEEP_NS;
 * - an application that may be about to wait elsewhere
 *   (usiw_progress_app_may_wait: it armed a CQ to block on the channel, or
 *   a QP reached RTR or RTS and it may now wait on its own socket, as the
 *   passive side of perftest's bandwidth tests does) wakes the thread from
 *   such a long sleep, and for WAIT_WATCH_NS after that the thread's sleeps
 *   while the application drives last idle-sleep-us, so that it notices the
 *   application stop (an event-driven one usually polls the CQ once more
 *   after arming) within one of them.  ib_send_lat -e over memif had its
 *   events up to 10 ms late (99th percentile 5 ms), and the passive side
 *   of a bandwidth test could begin to receive up to 10 ms late;
 * - while frames that ibv_post_send left waiting for a bundle
 *   (usiw_progress_flush_deferred) are not flushed, the sleeps while the
 *   application drives last idle-sleep-us too, and the post that left them
 *   wakes the thread from a longer one: an application that posted and
 *   then waits elsewhere (on a completion channel, on memory) has them sent
 *   when it stops calling, within one such sleep, not at the end of a long
 *   one;
 * - likewise, after a post that left work the transport's window held back
 *   (usiw_progress_tx_waiting: it goes as ACKs come in), the sleeps while
 *   the application drives last TX_WAITING_SLEEP_NS, and such a post wakes
 *   the thread from a longer one.  usiw-verbs-check over af_packet posts
 *   16 Writes at once, sleeps 2 ms and polls once: in 4 runs of 100 it
 *   found 9 complete, and the other 7 a poll later (they went when that
 *   poll received the ACKs of the first); none in 100 with this;
 * - but an application that leaves poll_cq while an RDMA Write is still
 *   arriving (usiw_helper_thread_take_over) wakes the thread at once, which
 *   then progresses, driving or not, until that Write is in or no frame
 *   came for idle-spin-us (a peer gone mid-Write): ib_write_lat waits on
 *   memory for it next.  Left to the sleep, the rest of a 64 KiB
 *   Write waited up to 10 ms, long enough for the sender's retransmission
 *   timer, whose spurious timeouts then cut its window to one segment.
 *
 * Sleeps use a timer slack of 1 us (the default 50 us would add to each). */
#include "progress_thread.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <time.h>

#include "libusiw/config.h"
#include "progress.h"

#define MAX_IDLE_SLEEP_NS 1000000u
/* While the application drives: 100 wake-ups a second, each preempting a
 * spinning thread, reach ib_send_lat's 99th percentile no more (1000, or
 * sleeps growing from idle-sleep-us, did: 64 B over memif, 99% 15-108 us
 * against 9-13 us without a thread). */
#define MAX_DRIVING_SLEEP_NS 10000000u
/* How long after usiw_progress_app_may_wait() the driving sleeps stay
 * short: an event-driven application re-arms for every event, one that
 * armed once (or connected) and polls on is left alone after this. */
#define WAIT_WATCH_NS 1000000u
/* The driving sleep after a post that the window held back
 * (usiw_progress_tx_waiting): 1000 wake-ups a second at most while an
 * application streams, against 20000 at idle-sleep-us. */
#define TX_WAITING_SLEEP_NS 1000000u

static struct {
	pthread_t thread;
	struct usiw_engine *engine;
	uint64_t spin_ns;
	uint64_t sleep_ns;               /* 0: never sleep */
	atomic_bool stop;
	atomic_bool take_over;           /* usiw_helper_thread_take_over */
	atomic_bool long_sleep;          /* in a sleep a wake may cut short */
	atomic_bool wake_now;            /* usiw_helper_thread_wake */
	pthread_mutex_t wake_lock;       /* the sleep: a timed wait on wake */
	pthread_cond_t wake;
} helper = {
	.wake_lock = PTHREAD_MUTEX_INITIALIZER,
};

/* Sleeps ns, or less if the application asks us to take over or wakes
 * us. */
static void sleep_ns(uint64_t ns)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	uint64_t t = (uint64_t)until.tv_nsec + ns;
	until.tv_sec += (time_t)(t / 1000000000u);
	until.tv_nsec = (long)(t % 1000000000u);
	pthread_mutex_lock(&helper.wake_lock);
	while (!atomic_load_explicit(&helper.take_over, memory_order_relaxed) &&
	       !atomic_exchange_explicit(&helper.wake_now, false, memory_order_relaxed) &&
	       pthread_cond_timedwait(&helper.wake, &helper.wake_lock, &until) == 0)
		;
	pthread_mutex_unlock(&helper.wake_lock);
}

void usiw_helper_thread_take_over(void)
{
	if (atomic_exchange_explicit(&helper.take_over, true, memory_order_relaxed))
		return;
	pthread_mutex_lock(&helper.wake_lock);
	pthread_cond_signal(&helper.wake);
	pthread_mutex_unlock(&helper.wake_lock);
}

void usiw_helper_thread_wake(void)
{
	if (!atomic_load(&helper.long_sleep))
		return;
	pthread_mutex_lock(&helper.wake_lock);
	atomic_store_explicit(&helper.wake_now, true, memory_order_relaxed);
	pthread_cond_signal(&helper.wake);
	pthread_mutex_unlock(&helper.wake_lock);
}

/* How long to sleep after `idle_ns` without activity, bounded by the next
 * timer. */
static uint64_t sleep_for(uint64_t idle_ns, uint64_t now, uint64_t next_deadline)
{
	uint64_t ns = idle_ns / 8;

	if (ns > MAX_IDLE_SLEEP_NS)
		ns = MAX_IDLE_SLEEP_NS;
	if (ns < helper.sleep_ns)
		ns = helper.sleep_ns;
	if (next_deadline <= now)
		return 0;
	if (next_deadline - now < ns)
		ns = next_deadline - now;
	return ns;
}

static void *helper_main(void *arg)
{
	uint64_t last_work = 0;
	uint64_t taking_over_since = 0;

	(void)arg;
	prctl(PR_SET_TIMERSLACK, 1UL);
	while (!atomic_load_explicit(&helper.stop, memory_order_relaxed)) {
		uint64_t now = usiw_clock_ns();
		uint64_t app = usiw_progress_app_last_call_ns();
		/* Read after the last call (as written before it): a run of
		 * calls that begins between the two reads looks just begun. */
		uint64_t since = usiw_progress_app_calling_since_ns();
		bool taking_over = atomic_load_explicit(&helper.take_over, memory_order_relaxed);
		/* app > now: a call since our clock read.  A recent call is
		 * not enough: an application that backs off polls once a
		 * millisecond, and a look that fell within
		 * USIW_APP_CALL_GAP_NS of one of those polls slept
		 * MAX_DRIVING_SLEEP_NS, leaving the timers to its polls
		 * (usiw-verbs-check's server in deferred_leave, traced: a
		 * delayed ACK went 1 ms late, in 2 runs of 80 over af_packet
		 * under load).  It must have gone on calling for as long. */
		bool app_driving = !taking_over &&
				   (app > now || now - app < USIW_APP_CALL_GAP_NS) &&
				   (int64_t)(app - since) >= USIW_APP_CALL_GAP_NS;
		uint64_t next_deadline = UINT64_MAX;

		/* A driving application runs the timers itself.  Its pending
		 * ones (a delayed ACK is due 17-50 us after every receive of a
		 * ping-pong) must not wake us: each wake-up preempts a
		 * spinning thread, which shows in its latency tail. */
		bool worked = !app_driving && usiw_progress_pass(helper.engine, &next_deadline);
		if (worked)
			last_work = now;
		if (taking_over) {
			if (!taking_over_since)
				taking_over_since = now;
			uint64_t active = last_work > taking_over_since ? last_work : taking_over_since;
			if (!usiw_progress_write_expected() || now - active >= helper.spin_ns) {
				atomic_store_explicit(&helper.take_over, false, memory_order_relaxed);
				taking_over_since = 0;
			}
			if (!worked)
				sched_yield();
			continue;
		}
		if (helper.sleep_ns == 0)
			continue;
		if (!app_driving) {
			uint64_t active = last_work > app ? last_work : app;
			if (now - active < helper.spin_ns) {
				if (!worked)
					sched_yield();
				continue;
			}
		}
		uint64_t ns;
		if (!app_driving)
			ns = sleep_for(now - last_work, now, next_deadline);
		else if (now - last_work < helper.spin_ns)
			ns = helper.sleep_ns;   /* it needed us a moment ago */
		else
			ns = MAX_DRIVING_SLEEP_NS;
		/* A sleep that usiw_helper_thread_wake may cut short: a long
		 * one beside a driving application, or an idle one longer than
		 * idle-sleep-us (up to MAX_IDLE_SLEEP_NS).  A post that leaves
		 * a bundle wakes us from the idle one too, as the application
		 * may have begun a run of calls we did not see (on two busy
		 * cores we look seldom) and stopped after it.  Traced: a
		 * helper that began a 1 ms sleep 5 us before such a post sent
		 * the bundle 1 ms later, past usiw-verbs-check's 2 ms pause.
		 * Announced before the flags are looked at, as they are set
		 * before the announcement is looked at (seq_cst both): one of
		 * the two sides sees the other. */
		const uint64_t planned = ns;
		if (ns == MAX_DRIVING_SLEEP_NS || (!app_driving && ns > helper.sleep_ns)) {
			atomic_store(&helper.long_sleep, true);
			if (usiw_progress_flush_deferred()) {
				ns = helper.sleep_ns;
			} else if (planned == MAX_DRIVING_SLEEP_NS) {
				uint64_t hint = usiw_progress_app_may_wait_ns();
				/* hint > now: given since our clock read */
				if (hint > now || now - hint < WAIT_WATCH_NS)
					ns = helper.sleep_ns;
				else if (usiw_progress_take_tx_waiting())
					ns = TX_WAITING_SLEEP_NS;
			}
			if (ns != planned)
				/* too short to be worth a wake-up */
				atomic_store_explicit(&helper.long_sleep, false,
						      memory_order_relaxed);
		}
		if (ns)
			sleep_ns(ns);
		atomic_store_explicit(&helper.long_sleep, false, memory_order_relaxed);
	}
	return NULL;
}

int usiw_helper_thread_start(struct usiw_engine *engine)
{
	const struct usiw_config *cfg = usiw_engine_config(engine);
	sigset_t all, old;

	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&helper.wake, &ca);
	pthread_condattr_destroy(&ca);
	atomic_store(&helper.take_over, false);
	helper.engine = engine;
	helper.spin_ns = (uint64_t)cfg->idle_spin_us * 1000u;
	helper.sleep_ns = (uint64_t)cfg->idle_sleep_us * 1000u;
	atomic_store(&helper.stop, false);
	/* The application's signals (perftest's SIGALRM for -D) stay with
	 * its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&helper.thread, NULL, helper_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	pthread_setname_np(helper.thread, "usiw-progress");
	return 0;
}

void usiw_helper_thread_stop(void)
{
	atomic_store(&helper.stop, true);
	pthread_join(helper.thread, NULL);
	pthread_cond_destroy(&helper.wake);
}
