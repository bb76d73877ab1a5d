/* The inbox and the progress thread (see progress.h). */
#include "progress.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "addr.h"
#include "cm_id.h"
#include "connect.h"
#include "listen.h"

enum inbox_kind { INBOX_DATAGRAM, INBOX_QP_EVENT };

struct inbox_item {
	struct inbox_item *next;
	enum inbox_kind kind;
	struct cm_id *id;
	uint32_t src_ipv4;
	uint16_t src_port;
	enum trp_event_type type;
	int status;
	size_t len;
	unsigned char data[];
};

/* A leaf lock: taken inside libusiw's callbacks and by the CM, around
 * nothing else. */
static pthread_mutex_t inbox_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t inbox_filled = PTHREAD_COND_INITIALIZER;
static bool kicked;   /* a timer started since the thread last looked */
static struct inbox_item *inbox_head, **inbox_tail = &inbox_head;

uint64_t cm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void push(struct inbox_item *item)
{
	pthread_mutex_lock(&inbox_lock);
	*inbox_tail = item;
	inbox_tail = &item->next;
	pthread_cond_signal(&inbox_filled);
	pthread_mutex_unlock(&inbox_lock);
}

/* An allocation failure loses the datagram or event like a full queue
 * would: TRP retransmits a REQUEST, and a connection event lost this way
 * is the one case that could leave an id waiting (on memory exhaustion). */
void cm_inbox_datagram(struct cm_id *id, uint32_t src_ipv4, uint16_t src_port,
		       const void *data, size_t len)
{
	struct inbox_item *item = malloc(sizeof(*item) + len);

	if (!item)
		return;
	*item = (struct inbox_item){ .kind = INBOX_DATAGRAM, .id = id, .src_ipv4 = src_ipv4,
				     .src_port = src_port, .len = len };
	memcpy(item->data, data, len);
	push(item);
}

void cm_inbox_qp_event(struct cm_id *id, enum trp_event_type type, int status,
		       const void *pdata, size_t pdata_len)
{
	struct inbox_item *item = malloc(sizeof(*item) + pdata_len);

	if (!item)
		return;
	*item = (struct inbox_item){ .kind = INBOX_QP_EVENT, .id = id, .type = type,
				     .status = status, .len = pdata_len };
	if (pdata_len)
		memcpy(item->data, pdata, pdata_len);
	push(item);
}

void cm_inbox_forget(const struct cm_id *id)
{
	pthread_mutex_lock(&inbox_lock);
	struct inbox_item **p = &inbox_head;
	while (*p) {
		struct inbox_item *item = *p;
		if (item->id == id) {
			*p = item->next;
			free(item);
		} else {
			p = &item->next;
		}
	}
	inbox_tail = p;
	pthread_mutex_unlock(&inbox_lock);
}

static struct inbox_item *take_all(void)
{
	pthread_mutex_lock(&inbox_lock);
	struct inbox_item *all = inbox_head;
	inbox_head = NULL;
	inbox_tail = &inbox_head;
	pthread_mutex_unlock(&inbox_lock);
	return all;
}

/* CM lock held. */
static void work_off(struct inbox_item *item)
{
	while (item) {
		struct inbox_item *next = item->next;
		if (item->kind == INBOX_DATAGRAM)
			cm_listener_input(item->id, item->src_ipv4, item->src_port, item->data,
					  item->len);
		else
			cm_conn_qp_event(item->id, item->type, item->status, item->data,
					 item->len);
		free(item);
		item = next;
	}
}

bool cm_progress_pass(void)
{
	bool timers = false;

	cm_lock();
	/* Items whose handling makes more (a reject's first REJECT is sent
	 * from here, its ACK comes back later) land in a later pass. */
	work_off(take_all());
	uint64_t now = cm_now_ns();
	for (struct cm_id *id = cm_id_first(), *next; id; id = next) {
		next = id->next;   /* a timer may end an id's life */
		if (id->state == CM_ADDR_QUERY) {
			cm_addr_poll(id, now);
			timers = true;
		}
		if (id->listener)
			timers |= cm_listener_poll(id, now);
	}
	cm_unlock();
	return timers;
}

void cm_progress_kick(void)
{
	pthread_mutex_lock(&inbox_lock);
	kicked = true;
	pthread_cond_signal(&inbox_filled);
	pthread_mutex_unlock(&inbox_lock);
}

/* Waits until the inbox has something, or the timers are due. */
static void wait_for_work(bool timers)
{
	pthread_mutex_lock(&inbox_lock);
	if (!inbox_head && !kicked) {
		if (timers) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 1000000;
			if (until.tv_nsec >= 1000000000) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&inbox_filled, &inbox_lock, &until);
		} else {
			pthread_cond_wait(&inbox_filled, &inbox_lock);
		}
	}
	kicked = false;
	pthread_mutex_unlock(&inbox_lock);
}

static void *progress_thread(void *arg)
{
	bool timers = false;

	(void)arg;
	for (;;) {
		wait_for_work(timers);
		timers = cm_progress_pass();
	}
	return NULL;
}

int cm_progress_start(void)
{
	pthread_t thread;
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&thread, &attr, progress_thread, NULL);
	pthread_attr_destroy(&attr);
	if (rc)
		return rc;
	pthread_setname_np(thread, "usiw-cm");
	return 0;
}
