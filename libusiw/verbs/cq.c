/* ibv_create_cq / ibv_destroy_cq / ibv_poll_cq / ibv_req_notify_cq. */
#include "cq.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "ddp-rdmap/ring.h"

#include "comp_channel.h"
#include "context.h"
#include "limits.h"
#include "progress.h"

/* Taken by the threads that poll one CQ, among themselves (cq.h).  Two of
 * them can share one CPU, and a waiter that spun while the holder it
 * preempted could not run would spin out its time slice.  When the
 * producer took this lock too, the progress helper did exactly that after
 * it woke on the application's CPU: ib_send_lat 64 B over memif with both
 * sides pinned took 2.0 ms at its worst in 4 runs of 6, the helpers'
 * samples 89% in that spin (af_packet).  So a waiter yields the CPU
 * between tries. */
static void cq_lock(struct usiw_cq *cq)
{
	while (pthread_spin_trylock(&cq->lock))
		sched_yield();
}

struct ibv_cq *usiw_create_cq(struct ibv_context *context, int cqe,
			      struct ibv_comp_channel *channel, int comp_vector)
{
	struct usiw_context *ctx = usiw_context_of(context);

	/* A channel from another device (or another open of this one) would
	 * never be read by whoever waits on this context's events. */
	if (cqe < 1 || cqe > USIW_MAX_CQE || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors ||
	    (channel && channel->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	if (atomic_fetch_add(&ctx->cq_count, 1) >= USIW_MAX_CQ) {
		errno = ENOMEM;
		goto err_count;
	}
	struct usiw_cq *cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		goto err_count;
	}
	uint32_t size = ring_mask_for((uint32_t)cqe) + 1;
	cq->ring = calloc(size, sizeof(*cq->ring));
	if (!cq->ring) {
		errno = ENOMEM;
		goto err_cq;
	}
	int rc = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (rc) {
		errno = rc;
		goto err_ring;
	}
	cq->mask = size - 1;
	/* ibv_create_cq(3): cqe is set to the real capacity, >= the request. */
	cq->ibv_cq.cqe = (int)size;
	return &cq->ibv_cq;

err_ring:
	free(cq->ring);
err_cq:
	free(cq);
err_count:
	atomic_fetch_sub(&ctx->cq_count, 1);
	return NULL;
}

int usiw_destroy_cq(struct ibv_cq *ibv_cq)
{
	struct usiw_cq *cq = usiw_cq_of(ibv_cq);

	if (atomic_load(&cq->users))
		return usiw_verb_failed(EBUSY);

	/* ibv_get_cq_event(3): destroying a CQ waits until every event the
	 * application has read has been acknowledged with ibv_ack_cq_events,
	 * which counts them in comp_events_completed and signals cond.  Events
	 * still unread in the channel are withdrawn first: the application
	 * never saw them and will never acknowledge them. */
	if (ibv_cq->channel)
		atomic_fetch_sub(&cq->events_reported,
				 usiw_comp_channel_withdraw(ibv_cq->channel, ibv_cq));
	pthread_mutex_lock(&ibv_cq->mutex);
	while (ibv_cq->comp_events_completed != atomic_load(&cq->events_reported))
		pthread_cond_wait(&ibv_cq->cond, &ibv_cq->mutex);
	pthread_mutex_unlock(&ibv_cq->mutex);

	atomic_fetch_sub(&usiw_context_of(ibv_cq->context)->cq_count, 1);
	pthread_spin_destroy(&cq->lock);
	free(cq->ring);
	free(cq);
	return 0;
}

/* Completions the CQ holds, read without the lock (relaxed: a count that
 * is stale by a completion only defers it, or a pass, to the next poll). */
static uint32_t cq_held(const struct usiw_cq *cq)
{
	return __atomic_load_n(&cq->tail, __ATOMIC_RELAXED) -
	       __atomic_load_n(&cq->head, __ATOMIC_RELAXED);
}

int usiw_poll_cq(struct ibv_cq *ibv_cq, int num_entries, struct ibv_wc *wc)
{
	struct usiw_cq *cq = usiw_cq_of(ibv_cq);
	int n = 0;

	if (num_entries < 0)
		return -EINVAL;
	/* Inline progress: a spinning poll_cq is what moves the data.  Not
	 * when the CQ already holds all the call asks for: a pass could not
	 * change what it returns, and the next call runs one.  One pass often
	 * completes work on two CQs: the datagram that brings a Send also
	 * acknowledges ours, and ib_send_lat polls the send CQ, then the recv
	 * CQ, whose completion is waiting.  A second pass there (the receive,
	 * the timers, the clock) was ~170 ns of the turnaround over af_packet
	 * (TSC, medians).  Frames left for a bundle still go. */
	if (num_entries == 0 || cq_held(cq) < (uint32_t)num_entries ||
	    usiw_progress_flush_deferred())
		usiw_progress(usiw_context_of(ibv_cq->context));
	/* Most polls of a spinning application find nothing, and see so
	 * without the lock, which took ~20 of an empty poll's ~400
	 * instructions.  A completion committed meanwhile is found by the
	 * next poll. */
	if (cq_held(cq) == 0)
		return 0;
	cq_lock(cq);
	uint32_t head = cq->head;
	const uint32_t tail = __atomic_load_n(&cq->tail, __ATOMIC_ACQUIRE);
	while (n < num_entries && head != tail)
		wc[n++] = cq->ring[head++ & cq->mask];
	/* Release: the entries are read before the producer may reuse them. */
	__atomic_store_n(&cq->head, head, __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
	if (n > 0)
		usiw_progress_finish_arriving(usiw_context_of(ibv_cq->context));
	return n;
}

int usiw_req_notify_cq(struct ibv_cq *ibv_cq, int solicited_only)
{
	struct usiw_cq *cq = usiw_cq_of(ibv_cq);
	enum usiw_cq_arm want = solicited_only ? USIW_CQ_ARMED_SOLICITED
					       : USIW_CQ_ARMED_ANY;

	/* Arming for any completion includes the solicited ones, so a
	 * solicited-only request never weakens an arm already in place.  The
	 * arm is the producer's to test and clear, under the engine's lock. */
	struct usiw_context *ctx = usiw_context_of(ibv_cq->context);
	usiw_context_lock(ctx);
	if (want > cq->arm)
		cq->arm = want;
	usiw_context_unlock(ctx);
	usiw_progress_app_may_wait();
	return 0;
}

/* No lock: the caller holds the engine's, so it is the only producer
 * (cq.h).  A locked instruction a completion fewer: the lock took 4-5% of
 * an ib_send_bw 64 B receiver's time (perf). */
struct ibv_wc *usiw_cq_reserve(struct usiw_cq *cq)
{
	if (cq->tail - __atomic_load_n(&cq->head, __ATOMIC_ACQUIRE) > cq->mask)
		return NULL;
	return &cq->ring[cq->tail & cq->mask];
}

void usiw_cq_commit(struct usiw_cq *cq, bool solicited)
{
	const struct ibv_wc *wc = &cq->ring[cq->tail & cq->mask];
	bool fire;

	fire = cq->arm == USIW_CQ_ARMED_ANY ||
	       (cq->arm == USIW_CQ_ARMED_SOLICITED &&
		(solicited || wc->status != IBV_WC_SUCCESS));
	if (fire)
		cq->arm = USIW_CQ_DISARMED;
	/* Release: the entry is written before a poll can see it. */
	__atomic_store_n(&cq->tail, cq->tail + 1, __ATOMIC_RELEASE);

	/* Counted before the record is written, so that ibv_destroy_cq never
	 * sees an event acknowledged that it has not seen reported. */
	struct ibv_comp_channel *channel = cq->ibv_cq.channel;
	if (fire && channel) {
		atomic_fetch_add(&cq->events_reported, 1);
		if (usiw_comp_channel_notify(channel, &cq->ibv_cq))
			atomic_fetch_sub(&cq->events_reported, 1);
	}
}
