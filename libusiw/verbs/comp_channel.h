/* Completion channels of usiw0.  libibverbs' ibv_get_cq_event() reads one
 * struct usiw_comp_event_record per event from channel->fd, as it would from
 * the kernel; usiw writes those records into a pipe whose read end is that fd,
 * so the fd can be polled, made non-blocking, or read blocking, as apps do. */
#ifndef USIW_VERBS_COMP_CHANNEL_H
#define USIW_VERBS_COMP_CHANNEL_H

#include <infiniband/verbs.h>

struct ibv_comp_channel *usiw_create_comp_channel(struct ibv_context *context);
/* 0, or EBUSY while a CQ still uses the channel (as ibv_destroy_comp_channel). */
int usiw_destroy_comp_channel(struct ibv_comp_channel *channel);

/* Queues an event for cq on its channel.  Never blocks: returns 0, or a
 * negative errno if the pipe is full (which needs thousands of events nobody
 * has read, each CQ producing at most one per ibv_req_notify_cq). */
int usiw_comp_channel_notify(struct ibv_comp_channel *channel,
			     struct ibv_cq *cq);

/* Removes the events of cq that nobody has read yet from the channel and
 * returns how many there were: a CQ being destroyed waits only for the
 * acknowledgement of events the application has read, as with the kernel,
 * which drops a destroyed CQ's unread events. */
unsigned usiw_comp_channel_withdraw(struct ibv_comp_channel *channel,
				    const struct ibv_cq *cq);

#endif
