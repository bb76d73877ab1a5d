/* rdma_create_id, rdma_destroy_id, rdma_migrate_id, rdma_set_option, the
 * port getters, and the bookkeeping every id shares. */
#include "cm_id.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "channel.h"
#include "connect.h"
#include "listen.h"
#include "progress.h"

static pthread_mutex_t cm_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static struct cm_id *live_ids;

void cm_lock(void)
{
	pthread_mutex_lock(&cm_mutex);
}

void cm_unlock(void)
{
	pthread_mutex_unlock(&cm_mutex);
}

struct cm_id *cm_id_first(void)
{
	return live_ids;
}

struct cm_id *cm_id_alloc(struct rdma_event_channel *channel, void *context,
			  enum rdma_port_space ps)
{
	struct cm_id *id = calloc(1, sizeof(*id));

	if (!id) {
		errno = ENOMEM;
		return NULL;
	}
	if (!channel) {
		struct cm_channel *own = cm_channel_create();
		if (!own) {
			free(id);
			return NULL;
		}
		channel = &own->ch;
		id->sync = true;
	}
	id->id.channel = channel;
	id->id.context = context;
	id->id.ps = ps;
	id->id.qp_type = IBV_QPT_RC;
	id->id.port_num = 1;
	id->state = CM_IDLE;
	id->next = live_ids;
	live_ids = id;
	return id;
}

static void unlink_id(struct cm_id *id)
{
	for (struct cm_id **p = &live_ids; *p; p = &(*p)->next) {
		if (*p == id) {
			*p = id->next;
			return;
		}
	}
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		   enum rdma_port_space ps)
{
	int rc = cm_init();

	if (rc)
		return cm_fail(rc);
	if (!id)
		return cm_fail(EINVAL);
	/* usiw connects reliable connected QPs only: the TCP port space (and
	 * IB's, which applications use for the same thing); no UD. */
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_IB)
		return cm_fail(EPROTONOSUPPORT);
	cm_lock();
	struct cm_id *new_id = cm_id_alloc(channel, context, ps);
	cm_unlock();
	if (!new_id)
		return -1;
	*id = &new_id->id;
	return 0;
}

void cm_id_event_acked(struct cm_id *id)
{
	id->events_acked++;
}

void cm_id_ack_sync_event(struct cm_id *id)
{
	if (id->id.event) {
		rdma_ack_cm_event(id->id.event);
		id->id.event = NULL;
	}
}

int cm_id_wait_sync(struct cm_id *id, enum rdma_cm_event_type expected)
{
	struct rdma_cm_event *event;

	cm_id_ack_sync_event(id);
	if (rdma_get_cm_event(id->id.channel, &event))
		return -1;
	id->id.event = event;
	if (event->event == expected && event->status == 0)
		return 0;
	/* rdma-core's synchronous calls fail with ECONNREFUSED for any
	 * REJECTED (whatever its status says), else with the event's status
	 * as errno; an event that carries none means the peer refused. */
	if (event->event == RDMA_CM_EVENT_REJECTED)
		return cm_fail(ECONNREFUSED);
	return cm_fail(event->status < 0 ? -event->status
			: event->status ? event->status : ECONNREFUSED);
}

/* Everything but the memory: after this nothing refers to id but events the
 * application still has to acknowledge.  CM lock held. */
static void release(struct cm_id *id)
{
	if (id->qp_attached && id->id.qp)
		cm_usiw->qp_attach(id->id.qp, NULL, NULL, NULL);
	id->qp_attached = false;
	if (id->listener)
		cm_listener_close(id);
	if (id->request)
		cm_request_child_gone(id);
	if (id->ep) {
		cm_usiw->udp_close(id->ep);
		id->ep = NULL;
	}
	cm_inbox_forget(id);
	cm_channel_discard(cm_channel_of(id->id.channel), id);
	unlink_id(id);
}

static void free_id(struct cm_id *id)
{
	if (id->sync)
		cm_channel_destroy(cm_channel_of(id->id.channel));
	free(id->ep_qp_attr);
	free(id);
}

void cm_id_drop_unseen_child(struct cm_id *id)
{
	release(id);
	free_id(id);
}

static void wait_for_acks(struct cm_id *id)
{
	const struct timespec pause = { 0, 100000 };

	for (;;) {
		cm_lock();
		bool done = id->events_acked == id->events_reported;
		cm_unlock();
		if (done)
			return;
		nanosleep(&pause, NULL);
	}
}

/* rdma_destroy_id(3): the QP must have been destroyed already; waits until
 * every event reported for the id has been acknowledged. */
int rdma_destroy_id(struct rdma_cm_id *rid)
{
	if (!rid)
		return cm_fail(EINVAL);
	struct cm_id *id = cm_id_of(rid);
	if (id->sync)
		cm_id_ack_sync_event(id);
	cm_lock();
	release(id);
	cm_unlock();
	wait_for_acks(id);
	free_id(id);
	return 0;
}

int rdma_migrate_id(struct rdma_cm_id *rid, struct rdma_event_channel *channel)
{
	if (!rid)
		return cm_fail(EINVAL);
	struct cm_id *id = cm_id_of(rid);
	struct cm_channel *own = NULL;

	/* The event a synchronous id still holds goes with its channel. */
	if (id->sync)
		cm_id_ack_sync_event(id);
	if (!channel) {
		own = cm_channel_create();
		if (!own)
			return -1;
		channel = &own->ch;
	}
	cm_lock();
	struct cm_channel *old = cm_channel_of(rid->channel);
	bool was_sync = id->sync;
	cm_channel_move(old, cm_channel_of(channel), id);
	rid->channel = channel;
	id->sync = own != NULL;
	cm_unlock();
	if (was_sync)
		cm_channel_destroy(old);
	return 0;
}

static bool optlen_is(size_t optlen, size_t want)
{
	return optlen == want;
}

/* rdma_set_option(3).  The RDMA_OPTION_ID options are accepted and have no
 * effect: TOS (the engine sends every datagram with TOS 0), REUSEADDR (a
 * listener's port is free again as soon as its id is destroyed), AFONLY
 * (usiw is IPv4 only) and ACK_TIMEOUT (TRP derives its retransmission
 * timeout from the measured RTT).  IB path records mean nothing on iWARP. */
int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
		    size_t optlen)
{
	if (!id || !optval)
		return cm_fail(EINVAL);
	if (level != RDMA_OPTION_ID)
		return cm_fail(level == RDMA_OPTION_IB ? EOPNOTSUPP : EINVAL);
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		return optlen_is(optlen, sizeof(uint8_t)) ? 0 : cm_fail(EINVAL);
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		return optlen_is(optlen, sizeof(int)) ? 0 : cm_fail(EINVAL);
	default:
		return cm_fail(ENOSYS);
	}
}

__be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return id->route.addr.src_sin.sin_port;
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id->route.addr.dst_sin.sin_port;
}
