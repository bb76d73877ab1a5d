/* Completion channels: a pipe carrying event records. */
#include "comp_channel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "provider_abi.h"

struct usiw_comp_channel {
	struct ibv_comp_channel channel;   /* fd = the pipe's read end */
	int notify_fd;                     /* the write end, non-blocking */
};

struct ibv_comp_channel *usiw_create_comp_channel(struct ibv_context *context)
{
	struct usiw_comp_channel *ch = malloc(sizeof(*ch));
	int fds[2];

	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(fds, O_CLOEXEC)) {
		free(ch);
		return NULL;
	}
	/* The engine must never wait on an application that does not read. */
	if (fcntl(fds[1], F_SETFL, O_NONBLOCK)) {
		int err = errno;
		close(fds[0]);
		close(fds[1]);
		free(ch);
		errno = err;
		return NULL;
	}
	ch->channel.context = context;
	ch->channel.fd = fds[0];
	ch->channel.refcnt = 0;
	ch->notify_fd = fds[1];
	return &ch->channel;
}

int usiw_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct usiw_comp_channel *ch = (struct usiw_comp_channel *)channel;
	struct ibv_context *context = channel->context;
	int ret = 0;

	/* libibverbs counts the CQs using a channel in refcnt, under the
	 * context's mutex (ibv_create_cq / ibv_destroy_cq). */
	pthread_mutex_lock(&context->mutex);
	if (channel->refcnt) {
		ret = EBUSY;
	} else {
		close(channel->fd);
		close(ch->notify_fd);
		free(ch);
	}
	pthread_mutex_unlock(&context->mutex);
	return ret;
}

int usiw_comp_channel_notify(struct ibv_comp_channel *channel,
			     struct ibv_cq *cq)
{
	struct usiw_comp_channel *ch = (struct usiw_comp_channel *)channel;
	struct usiw_comp_event_record record = {
		.cq_handle = (uintptr_t)cq,
	};
	ssize_t written;

	/* A record is far smaller than PIPE_BUF, so it is written whole or not
	 * at all, and records from several threads never interleave. */
	do
		written = write(ch->notify_fd, &record, sizeof(record));
	while (written < 0 && errno == EINTR);
	return written == (ssize_t)sizeof(record) ? 0 : -errno;
}
