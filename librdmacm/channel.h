/* Event channels: a queue of rdma_cm_events and an eventfd the application
 * can poll.  The eventfd counts as a semaphore, one token per queued event,
 * so the fd is readable exactly while an event waits, a blocking read waits
 * for the next one, and O_NONBLOCK set by the application makes
 * rdma_get_cm_event return EAGAIN, as with the kernel's channel. */
#ifndef USIW_CM_CHANNEL_H
#define USIW_CM_CHANNEL_H

#include <pthread.h>
#include <stdbool.h>

#include <rdma/rdma_cma.h>

#include "trp/trp.h"

struct cm_id;

struct cm_event {
	struct rdma_cm_event ev;        /* what the application gets */
	struct cm_event *next;
	struct cm_id *owner;            /* whose acknowledgement count it is in */
	unsigned char pdata[TRP_MAX_PDATA];
};

struct cm_channel {
	struct rdma_event_channel ch;   /* fd: the eventfd */
	pthread_mutex_t lock;           /* the queue; taken after the CM lock */
	struct cm_event *head, *tail;
	/* Tokens of events discarded before being read (their id was
	 * destroyed): the next raise reuses one instead of adding another. */
	unsigned stale_tokens;
	/* Threads inside rdma_get_cm_event, and whether the application
	 * destroyed the channel meanwhile: the last of them frees it then. */
	unsigned readers;
	bool destroyed;
};

static inline struct cm_channel *cm_channel_of(struct rdma_event_channel *ch)
{
	return (struct cm_channel *)ch;
}

struct cm_channel *cm_channel_create(void);
void cm_channel_destroy(struct cm_channel *chan);

/* What an event says besides its type and status. */
struct cm_event_param {
	struct cm_id *listen_id;        /* CONNECT_REQUEST: the listener */
	const void *pdata;
	size_t pdata_len;
	uint8_t initiator_depth, responder_resources;
};

/* Queues an event for id on its channel; with the CM lock held.  For a
 * CONNECT_REQUEST the listener's count takes the acknowledgement (as
 * rdma-core counts it). */
int cm_event_raise(struct cm_id *id, enum rdma_cm_event_type type, int status,
		   const struct cm_event_param *param);
/* Drops the events of id (and of CONNECT_REQUESTs for id) not yet read;
 * with the CM lock held. */
void cm_channel_discard(struct cm_channel *chan, const struct cm_id *id);
/* Moves id's unread events from one channel to another; CM lock held. */
void cm_channel_move(struct cm_channel *from, struct cm_channel *to, const struct cm_id *id);

#endif
