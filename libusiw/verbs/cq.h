/* Completion queues of usiw0: a ring of struct ibv_wc filled by the QP layer
 * (usiw_cq_reserve, usiw_cq_commit) and drained by ibv_poll_cq, with the
 * one-shot arming of ibv_req_notify_cq signalling the CQ's completion
 * channel. */
#ifndef USIW_VERBS_CQ_H
#define USIW_VERBS_CQ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

enum usiw_cq_arm {
	USIW_CQ_DISARMED,
	USIW_CQ_ARMED_SOLICITED,   /* next solicited or unsuccessful completion */
	USIW_CQ_ARMED_ANY,         /* next completion */
};

struct usiw_cq {
	struct ibv_cq ibv_cq;
	/* One producer, the thread that holds the engine's lock (every
	 * completion is made under it), and any number of consumers, the
	 * application's threads in ibv_poll_cq, which take the lock among
	 * themselves.  Each side publishes its index with a release store and
	 * reads the other's with an acquire load. */
	pthread_spinlock_t lock;      /* consumers; waiters yield (cq.c) */
	struct ibv_wc *ring;
	uint32_t mask;                /* ring size - 1; ring size a power of two */
	uint32_t head;                /* next to poll (free-running) */
	uint32_t tail;                /* next to fill (free-running) */
	enum usiw_cq_arm arm;         /* under the engine's lock */
	atomic_uint events_reported;  /* records written to the channel */
	atomic_uint users;            /* QPs (and SRQs) completing here */
};

static inline struct usiw_cq *usiw_cq_of(struct ibv_cq *cq)
{
	return (struct usiw_cq *)cq;
}

/* Appending a completion, written in place, by the holder of the engine's
 * lock: usiw_cq_reserve returns the CQ's next entry, to be filled and then
 * appended by usiw_cq_commit; or NULL if the CQ is full (a CQ overrun: the
 * QP layer must then raise IBV_EVENT_CQ_ERR).  In place rather than built
 * by the caller and copied: a 64 B ib_send_lat message, which completes
 * twice on each side, took 30 instructions a side fewer (callgrind).
 * solicited: the completion is of a received Send that carried the
 * Solicited Event flag (an unsuccessful completion wakes a solicited-only
 * arm as well).  The commit fires the channel if the CQ is armed for it. */
struct ibv_wc *usiw_cq_reserve(struct usiw_cq *cq);
void usiw_cq_commit(struct usiw_cq *cq, bool solicited);

/* The QP layer holds a CQ while a QP completes into it, so ibv_destroy_cq
 * can refuse with EBUSY as ibv_destroy_cq(3) requires. */
static inline void usiw_cq_hold(struct usiw_cq *cq)
{
	atomic_fetch_add(&cq->users, 1);
}

static inline void usiw_cq_put(struct usiw_cq *cq)
{
	atomic_fetch_sub(&cq->users, 1);
}

struct ibv_cq *usiw_create_cq(struct ibv_context *context, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
int usiw_destroy_cq(struct ibv_cq *cq);
int usiw_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int usiw_req_notify_cq(struct ibv_cq *cq, int solicited_only);

#endif
