/* Inline progress, the context lock, and the host side of the QP stacks:
 * datagrams out through the engine, datagrams in from it, the clock. */
#include "progress.h"

#include <time.h>

#include "context.h"
#include "qp.h"

int usiw_progress_init(struct usiw_context *ctx)
{
	pthread_mutexattr_t attr;
	int rc = pthread_mutexattr_init(&attr);

	if (rc)
		return -rc;
	rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	if (!rc)
		rc = pthread_mutex_init(&ctx->lock, &attr);
	pthread_mutexattr_destroy(&attr);
	ctx->running = NULL;
	ctx->next_deadline = UINT64_MAX;
	ctx->deadline_moved = false;
	return -rc;
}

void usiw_progress_fini(struct usiw_context *ctx)
{
	pthread_mutex_destroy(&ctx->lock);
}

void usiw_context_lock(struct usiw_context *ctx)
{
	pthread_mutex_lock(&ctx->lock);
}

void usiw_context_unlock(struct usiw_context *ctx)
{
	pthread_mutex_unlock(&ctx->lock);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The cheap check first: one clock read when no deadline has moved and none
 * is due, which is every call of a spinning poll_cq between packets. */
static void run_due_timers(struct usiw_context *ctx)
{
	uint64_t now = monotonic_ns();

	if (!ctx->deadline_moved && now < ctx->next_deadline)
		return;
	uint64_t next = UINT64_MAX;
	for (struct usiw_qp *qp = ctx->running; qp; qp = qp->next_running) {
		uint64_t due = qp_stack_next_deadline(qp->stack);
		if (due <= now) {
			qp_stack_poll(qp->stack);
			due = qp_stack_next_deadline(qp->stack);
		}
		if (due < next)
			next = due;
	}
	ctx->next_deadline = next;
	ctx->deadline_moved = false;
}

void usiw_progress_locked(struct usiw_context *ctx)
{
	usiw_engine_progress(ctx->engine);
	run_due_timers(ctx);
}

void usiw_progress(struct usiw_context *ctx)
{
	usiw_context_lock(ctx);
	usiw_progress_locked(ctx);
	usiw_context_unlock(ctx);
}

void usiw_progress_add_running(struct usiw_qp *qp)
{
	qp->next_running = qp->ctx->running;
	qp->ctx->running = qp;
	qp->ctx->deadline_moved = true;
}

void usiw_progress_remove_running(struct usiw_qp *qp)
{
	for (struct usiw_qp **p = &qp->ctx->running; *p; p = &(*p)->next_running) {
		if (*p == qp) {
			*p = qp->next_running;
			break;
		}
	}
	qp->next_running = NULL;
	qp->ctx->deadline_moved = true;
}

void usiw_progress_deadline_moved(struct usiw_context *ctx)
{
	ctx->deadline_moved = true;
}

/* ---- Host operations of a QP's stack ------------------------------------ */

/* A datagram the engine cannot take now (-EAGAIN: no mbuf, ARP queue full)
 * is lost to TRP, which retransmits it; the others cannot happen after RTR
 * resolved the peer and sized segments to the path (and TRP's retries end
 * the connection if the peer really went away). */
static void host_xmit(void *arg, const void *hdr, size_t hdr_len, const void *data,
		      size_t data_len)
{
	struct usiw_qp *qp = arg;

	usiw_udp_send(qp->udp, qp->peer_ipv4, qp->peer_port, hdr, hdr_len, data, data_len);
}

static uint64_t host_now(void *arg)
{
	(void)arg;
	return monotonic_ns();
}

static void host_complete(void *arg, const struct rdmap_wc *wc)
{
	usiw_qp_complete(arg, wc);
}

const struct qp_stack_host_ops usiw_qp_host_ops = {
	.xmit = host_xmit,
	.now_ns = host_now,
	.complete = host_complete,
	/* no event(): a failed or closed connection puts the endpoint in
	 * error, which query_qp reports as the QP's state */
};

/* Inline progress calls this with the context lock held by the same thread,
 * so the trylock succeeds (the lock is recursive).  It fails only when
 * another thread is inside this context's stacks while this one progresses
 * the engine for a different context or in thread mode: then the datagram is
 * dropped and TRP retransmits it, which beats waiting on a lock against the
 * lock order. */
void usiw_qp_receive(void *arg, uint32_t src_ipv4, uint16_t src_port, const void *data,
		     size_t len)
{
	struct usiw_qp *qp = arg;
	struct usiw_context *ctx = qp->ctx;

	if (pthread_mutex_trylock(&ctx->lock))
		return;
	/* Before RTS nothing can take it; from anyone but the peer, nobody. */
	if (qp->stack && src_ipv4 == qp->peer_ipv4 && src_port == qp->peer_port) {
		qp_stack_input(qp->stack, data, len);
		ctx->deadline_moved = true;
	}
	pthread_mutex_unlock(&ctx->lock);
}
