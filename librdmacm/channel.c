/* rdma_create_event_channel, rdma_get_cm_event, rdma_ack_cm_event and
 * rdma_event_str, and the queue behind them. */
#include "channel.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cm_id.h"
#include "device.h"
#include "progress.h"

struct cm_channel *cm_channel_create(void)
{
	struct cm_channel *chan = calloc(1, sizeof(*chan));

	if (!chan) {
		errno = ENOMEM;
		return NULL;
	}
	chan->ch.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (chan->ch.fd < 0) {
		free(chan);
		return NULL;
	}
	pthread_mutex_init(&chan->lock, NULL);
	return chan;
}

void cm_channel_destroy(struct cm_channel *chan)
{
	struct cm_event *e = chan->head;

	while (e) {
		struct cm_event *next = e->next;
		free(e);
		e = next;
	}
	close(chan->ch.fd);
	pthread_mutex_destroy(&chan->lock);
	free(chan);
}

static void add_token(struct cm_channel *chan)
{
	const uint64_t one = 1;

	if (chan->stale_tokens) {
		chan->stale_tokens--;
		return;
	}
	/* Cannot fail: the counter is far from its limit. */
	(void)!write(chan->ch.fd, &one, sizeof(one));
}

int cm_event_raise(struct cm_id *id, enum rdma_cm_event_type type, int status,
		   const struct cm_event_param *param)
{
	struct cm_channel *chan = cm_channel_of(id->id.channel);
	struct cm_event *e = calloc(1, sizeof(*e));

	if (!e)
		return ENOMEM;
	e->ev.id = &id->id;
	e->ev.event = type;
	e->ev.status = status;
	e->owner = id;
	if (param) {
		if (param->listen_id) {
			e->ev.listen_id = &param->listen_id->id;
			e->owner = param->listen_id;
		}
		if (param->pdata_len) {
			memcpy(e->pdata, param->pdata, param->pdata_len);
			e->ev.param.conn.private_data = e->pdata;
			e->ev.param.conn.private_data_len = (uint8_t)param->pdata_len;
		}
		e->ev.param.conn.initiator_depth = param->initiator_depth;
		e->ev.param.conn.responder_resources = param->responder_resources;
	}
	pthread_mutex_lock(&chan->lock);
	if (chan->tail)
		chan->tail->next = e;
	else
		chan->head = e;
	chan->tail = e;
	add_token(chan);
	pthread_mutex_unlock(&chan->lock);
	return 0;
}

/* Unlinks the events for id from chan into *out (a list); chan->lock held. */
static void unlink_events_of(struct cm_channel *chan, const struct cm_id *id,
			     struct cm_event **out)
{
	struct cm_event **p = &chan->head, *last = NULL;

	while (*p) {
		struct cm_event *e = *p;
		if (e->ev.id == &id->id || e->owner == id) {
			*p = e->next;
			e->next = *out;
			*out = e;
		} else {
			last = e;
			p = &e->next;
		}
	}
	chan->tail = last;
}

void cm_channel_discard(struct cm_channel *chan, const struct cm_id *id)
{
	struct cm_event *gone = NULL;

	pthread_mutex_lock(&chan->lock);
	unlink_events_of(chan, id, &gone);
	for (struct cm_event *e = gone; e; e = e->next)
		chan->stale_tokens++;
	pthread_mutex_unlock(&chan->lock);
	while (gone) {
		struct cm_event *next = gone->next;
		/* A CONNECT_REQUEST nobody read, of a listener being
		 * destroyed, takes its new id along: nobody will ever see it. */
		if (gone->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST && gone->owner == id)
			cm_id_drop_unseen_child(cm_id_of(gone->ev.id));
		free(gone);
		gone = next;
	}
}

void cm_channel_move(struct cm_channel *from, struct cm_channel *to, const struct cm_id *id)
{
	struct cm_event *moved = NULL, *rev = NULL;

	pthread_mutex_lock(&from->lock);
	unlink_events_of(from, id, &moved);
	for (struct cm_event *e = moved; e; e = e->next)
		from->stale_tokens++;
	pthread_mutex_unlock(&from->lock);
	/* unlink_events_of built the list newest first. */
	while (moved) {
		struct cm_event *next = moved->next;
		moved->next = rev;
		rev = moved;
		moved = next;
	}
	pthread_mutex_lock(&to->lock);
	while (rev) {
		struct cm_event *next = rev->next;
		rev->next = NULL;
		if (to->tail)
			to->tail->next = rev;
		else
			to->head = rev;
		to->tail = rev;
		add_token(to);
		rev = next;
	}
	pthread_mutex_unlock(&to->lock);
}

struct rdma_event_channel *rdma_create_event_channel(void)
{
	int rc = cm_init();

	if (rc) {
		errno = rc;
		return NULL;
	}
	struct cm_channel *chan = cm_channel_create();
	return chan ? &chan->ch : NULL;
}

/* rdma_destroy_event_channel(3): every id on it must be gone already.
 *
 * Another thread may still be inside rdma_get_cm_event (rping's CM thread
 * is, when its main thread tears down and returns): with the kernel's
 * channel that thread stays blocked in its read, and the process exits
 * around it.  Here it may also be awake for a moment (the token of an
 * event its id's destruction discarded), so the channel and its fd live
 * on until it leaves, and it goes back to waiting on an fd nothing will
 * ever signal.  Freed at once, that thread read a closed fd (rping: "Bad
 * file descriptor", exit 255) or freed memory (a segmentation fault). */
void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	if (!channel)
		return;
	struct cm_channel *chan = cm_channel_of(channel);
	pthread_mutex_lock(&chan->lock);
	chan->destroyed = true;
	bool unused = !chan->readers;
	pthread_mutex_unlock(&chan->lock);
	if (unused)
		cm_channel_destroy(chan);
}

static struct cm_event *pop(struct cm_channel *chan)
{
	pthread_mutex_lock(&chan->lock);
	struct cm_event *e = chan->head;
	if (e) {
		chan->head = e->next;
		if (!chan->head)
			chan->tail = NULL;
		e->next = NULL;
	}
	pthread_mutex_unlock(&chan->lock);
	return e;
}

static int wait_for_event(struct cm_channel *chan, struct rdma_cm_event **event)
{
	/* What arrived since the CM's thread last looked, so that a caller
	 * polling a non-blocking channel sees it at once. */
	cm_progress_pass();
	for (;;) {
		uint64_t token;
		if (read(chan->ch.fd, &token, sizeof(token)) != sizeof(token)) {
			if (errno == EINTR)
				continue;
			return -1;   /* EAGAIN with O_NONBLOCK, as the kernel's */
		}
		/* Taken and counted under the CM lock: an rdma_destroy_id
		 * between the two would free the owner we count on. */
		cm_lock();
		struct cm_event *e = pop(chan);
		if (e)
			e->owner->events_reported++;
		cm_unlock();
		if (!e)
			continue;    /* the token of a discarded event */
		*event = &e->ev;
		return 0;
	}
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	if (!channel || !event) {
		errno = EINVAL;
		return -1;
	}
	struct cm_channel *chan = cm_channel_of(channel);
	pthread_mutex_lock(&chan->lock);
	chan->readers++;
	pthread_mutex_unlock(&chan->lock);
	int rc = wait_for_event(chan, event);
	int saved_errno = errno;
	pthread_mutex_lock(&chan->lock);
	bool last_of_destroyed = --chan->readers == 0 && chan->destroyed;
	pthread_mutex_unlock(&chan->lock);
	if (last_of_destroyed)
		cm_channel_destroy(chan);
	errno = saved_errno;
	return rc;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	if (!event) {
		errno = EINVAL;
		return -1;
	}
	struct cm_event *e = (struct cm_event *)event;
	cm_lock();
	cm_id_event_acked(e->owner);
	cm_unlock();
	free(e);
	return 0;
}

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	switch (event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED: return "RDMA_CM_EVENT_ADDR_RESOLVED";
	case RDMA_CM_EVENT_ADDR_ERROR: return "RDMA_CM_EVENT_ADDR_ERROR";
	case RDMA_CM_EVENT_ROUTE_RESOLVED: return "RDMA_CM_EVENT_ROUTE_RESOLVED";
	case RDMA_CM_EVENT_ROUTE_ERROR: return "RDMA_CM_EVENT_ROUTE_ERROR";
	case RDMA_CM_EVENT_CONNECT_REQUEST: return "RDMA_CM_EVENT_CONNECT_REQUEST";
	case RDMA_CM_EVENT_CONNECT_RESPONSE: return "RDMA_CM_EVENT_CONNECT_RESPONSE";
	case RDMA_CM_EVENT_CONNECT_ERROR: return "RDMA_CM_EVENT_CONNECT_ERROR";
	case RDMA_CM_EVENT_UNREACHABLE: return "RDMA_CM_EVENT_UNREACHABLE";
	case RDMA_CM_EVENT_REJECTED: return "RDMA_CM_EVENT_REJECTED";
	case RDMA_CM_EVENT_ESTABLISHED: return "RDMA_CM_EVENT_ESTABLISHED";
	case RDMA_CM_EVENT_DISCONNECTED: return "RDMA_CM_EVENT_DISCONNECTED";
	case RDMA_CM_EVENT_DEVICE_REMOVAL: return "RDMA_CM_EVENT_DEVICE_REMOVAL";
	case RDMA_CM_EVENT_MULTICAST_JOIN: return "RDMA_CM_EVENT_MULTICAST_JOIN";
	case RDMA_CM_EVENT_MULTICAST_ERROR: return "RDMA_CM_EVENT_MULTICAST_ERROR";
	case RDMA_CM_EVENT_ADDR_CHANGE: return "RDMA_CM_EVENT_ADDR_CHANGE";
	case RDMA_CM_EVENT_TIMEWAIT_EXIT: return "RDMA_CM_EVENT_TIMEWAIT_EXIT";
	}
	return "UNKNOWN EVENT";
}
