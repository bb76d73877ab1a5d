/* Completion channels: a pipe carrying event records. */
#include "comp_channel.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "provider_abi.h"

struct usiw_comp_channel {
	struct ibv_comp_channel channel;   /* fd = the pipe's read end */
	int notify_fd;                     /* the write end, non-blocking */
	/* Writers against usiw_comp_channel_withdraw, which empties the pipe
	 * and writes back what it keeps. */
	pthread_mutex_t lock;
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
	pthread_mutex_init(&ch->lock, NULL);
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
		pthread_mutex_destroy(&ch->lock);
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
	 * at all. */
	pthread_mutex_lock(&ch->lock);
	do
		written = write(ch->notify_fd, &record, sizeof(record));
	while (written < 0 && errno == EINTR);
	int err = errno;
	pthread_mutex_unlock(&ch->lock);
	return written == (ssize_t)sizeof(record) ? 0 : -err;
}

unsigned usiw_comp_channel_withdraw(struct ibv_comp_channel *channel,
				    const struct ibv_cq *cq)
{
	struct usiw_comp_channel *ch = (struct usiw_comp_channel *)channel;
	struct usiw_comp_event_record records[256];
	unsigned withdrawn = 0;
	int pending;

	pthread_mutex_lock(&ch->lock);
	/* Only what is in the pipe now is read, so the reads never block even
	 * on a blocking fd; the pipe holds whole records (writes of less than
	 * PIPE_BUF are atomic, and so are these reads of whole records). */
	if (ioctl(channel->fd, FIONREAD, &pending) == 0 && pending > 0) {
		size_t n = (size_t)pending / sizeof(records[0]);
		if (n > sizeof(records) / sizeof(records[0]))
			n = sizeof(records) / sizeof(records[0]);
		ssize_t got = read(channel->fd, records, n * sizeof(records[0]));
		size_t kept = 0;
		for (ssize_t i = 0; got > 0 && i < got / (ssize_t)sizeof(records[0]); i++) {
			if (records[i].cq_handle == (uintptr_t)cq)
				withdrawn++;
			else
				records[kept++] = records[i];
		}
		/* Cannot fail or be partial: the pipe was just emptied of at
		 * least this much, and writers are locked out. */
		if (kept) {
			ssize_t put = write(ch->notify_fd, records, kept * sizeof(records[0]));
			(void)put;
		}
	}
	pthread_mutex_unlock(&ch->lock);
	return withdrawn;
}
