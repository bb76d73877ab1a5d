/* rdma_cm_id as our CM keeps it, the CM lock, and the list of live ids.
 *
 * Locks: the CM lock (recursive) guards every id, listener and request.  It
 * is taken before libusiw's locks (context, engine), never after: what
 * libusiw calls back inside progress (datagrams for a listener, a QP's
 * connection events) only goes into the inbox (progress.h), which the CM
 * works off with the CM lock held and no libusiw lock. */
#ifndef USIW_CM_ID_H
#define USIW_CM_ID_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/rdma_cma.h>

#include "device.h"

enum cm_state {
	CM_IDLE,
	CM_BOUND,
	CM_ADDR_QUERY,          /* rdma_resolve_addr: waiting for ARP */
	CM_ADDR_RESOLVED,
	CM_ROUTE_RESOLVED,
	CM_LISTEN,
	CM_CONNECT,             /* active: REQUEST sent */
	CM_REQUEST,             /* passive: CONNECT_REQUEST raised, app deciding */
	CM_ACCEPT,              /* passive: ACCEPT sent */
	CM_REJECTED,            /* passive: rdma_reject answered */
	CM_CONNECTED,
	CM_DISCONNECT,          /* rdma_disconnect, waiting for the close */
	CM_DISCONNECTED,
	CM_FAILED,              /* connection attempt ended (REJECTED, UNREACHABLE, ...) */
};

struct cm_request;
struct cm_listener;

struct cm_id {
	struct rdma_cm_id id;           /* what the application holds */
	enum cm_state state;
	struct cm_device *dev;          /* NULL until bound or resolved */
	struct cm_id *next;             /* the list of live ids */
	bool sync;                      /* created without a channel: calls wait */

	/* Events read by the application and not yet acknowledged; destroy
	 * waits for them (rdma_destroy_id(3)). */
	unsigned events_reported;
	unsigned events_acked;

	struct usiw_udp_endpoint *ep;   /* the bound port, for a listener */
	uint64_t resolve_deadline_ns;   /* CM_ADDR_QUERY */

	struct cm_listener *listener;   /* CM_LISTEN */
	struct cm_request *request;     /* passive: the REQUEST this id came from */
	bool qp_attached;               /* the QP reports its events to us */
	/* rdma_create_ep of a passive endpoint: the QP each new id of
	 * rdma_get_request gets (NULL: none). */
	struct ibv_qp_init_attr *ep_qp_attr;
};

static inline struct cm_id *cm_id_of(struct rdma_cm_id *id)
{
	return (struct cm_id *)id;
}

void cm_lock(void);
void cm_unlock(void);

/* Allocates an id on chan (NULL: a synchronous id with its own channel);
 * CM lock held.  NULL with errno set. */
struct cm_id *cm_id_alloc(struct rdma_event_channel *chan, void *context,
			  enum rdma_port_space ps);
/* The live ids, for the progress thread; CM lock held. */
struct cm_id *cm_id_first(void);

void cm_id_event_acked(struct cm_id *id);
/* A new passive id whose CONNECT_REQUEST was discarded unread. */
void cm_id_drop_unseen_child(struct cm_id *id);

/* For a synchronous id: waits for its next event, leaves it in id->event
 * (acknowledged by the next call), and returns 0 if it is `expected` with
 * status 0, else -1 with errno from the status.  Called without the CM lock. */
int cm_id_wait_sync(struct cm_id *id, enum rdma_cm_event_type expected);
/* Acknowledges the event a synchronous id still holds. */
void cm_id_ack_sync_event(struct cm_id *id);

/* -1 with errno = err: the return of every failing rdma_* call. */
static inline int cm_fail(int err)
{
	errno = err;
	return -1;
}

#endif
