/* Wiring between TRP and the RDMAP endpoint; see qp_stack.h. */
#include <errno.h>
#include <stdlib.h>

#include "qp/qp_stack.h"

struct qp_stack {
	struct trp_conn *conn;
	struct rdmap_ep *ep;
	const struct qp_stack_host_ops *ops;
	void *ctx;
};

/* ---- TRP callbacks ----------------------------------------------------- */

static int trp_xmit(void *ctx, const void *hdr, size_t hdr_len, const void *data,
		     size_t data_len, void *cookie)
{
	struct qp_stack *qs = ctx;

	(void)cookie;
	return qs->ops->xmit(qs->ctx, hdr, hdr_len, data, data_len);
}

static uint64_t trp_now(void *ctx)
{
	struct qp_stack *qs = ctx;

	return qs->ops->now_ns(qs->ctx);
}

/* A segment the endpoint refused (it answered with a Terminate) is not
 * acknowledged, so the peer's work request does not complete as a success:
 * it learns of the error from the Terminate.  One of a Send whose receive
 * is not posted yet is refused as not ready: the peer sends it again. */
static bool trp_deliver(void *ctx, uint32_t psn, const void *payload, size_t len)
{
	struct qp_stack *qs = ctx;
	const int rc = rdmap_ep_input(qs->ep, psn, payload, len);

	if (rc == -EAGAIN)
		trp_not_ready(qs->conn);
	if (rc != 0)
		return false;
	if (!rdmap_ep_rx_mid_message(qs->ep))
		trp_defer_ack(qs->conn);
	return true;
}

static void trp_in_order(void *ctx, uint32_t next_psn)
{
	struct qp_stack *qs = ctx;

	rdmap_ep_in_order(qs->ep, next_psn);
}

static enum rdmap_fail_reason fail_reason(int trp_status)
{
	switch (trp_status) {
	case TRP_ERR_DEAD_PEER:
		return RDMAP_FAIL_PEER_DEAD;
	case TRP_ERR_NOT_READY:
		return RDMAP_FAIL_RNR_EXCEEDED;
	default:
		return RDMAP_FAIL_RETRY_EXCEEDED;
	}
}

static void trp_acked(void *ctx, void *cookie, int status)
{
	struct qp_stack *qs = ctx;

	/* A segment that will never be delivered must not let the endpoint
	 * complete its work request as a success: fail the endpoint first, so
	 * everything outstanding is flushed (TRP raises FAILED right after). */
	if (status != TRP_OK)
		rdmap_ep_fail(qs->ep, fail_reason(status));
	rdmap_ep_acked(qs->ep, cookie);
}

static void trp_event(void *ctx, enum trp_event_type type, int status, const void *pdata,
		      size_t pdata_len)
{
	struct qp_stack *qs = ctx;

	if (type == TRP_EV_FAILED)
		rdmap_ep_fail(qs->ep, fail_reason(status));
	else if (type == TRP_EV_CLOSED)
		rdmap_ep_fail(qs->ep, RDMAP_FAIL_PEER_DEAD);
	if (qs->ops->event)
		qs->ops->event(qs->ctx, type, status, pdata, pdata_len);
}

static const struct trp_ops stack_trp_ops = {
	.xmit = trp_xmit,
	.now_ns = trp_now,
	.deliver = trp_deliver,
	.in_order = trp_in_order,
	.acked = trp_acked,
	.event = trp_event,
	/* no writable(): every entry point ends with rdmap_ep_progress_tx() */
};

/* ---- RDMAP endpoint callbacks ------------------------------------------ */

static int64_t ep_xmit(void *ctx, const void *ulp_hdr, size_t ulp_hdr_len, const void *data,
		       size_t data_len, void *cookie)
{
	struct qp_stack *qs = ctx;

	return trp_send(qs->conn, ulp_hdr, ulp_hdr_len, data, data_len, cookie);
}

static const struct rdmap_transport_ops stack_transport_ops = {
	.xmit = ep_xmit,
};

static void ep_complete(void *ctx, const struct rdmap_wc *wc)
{
	struct qp_stack *qs = ctx;

	qs->ops->complete(qs->ctx, wc);
}

/* ---- The stack ---------------------------------------------------------- */

struct qp_stack *qp_stack_create(const struct trp_config *trp_cfg,
				 const struct rdmap_ep_attr *ep_attr,
				 const struct qp_stack_host_ops *ops, void *ctx)
{
	struct qp_stack *qs = calloc(1, sizeof(*qs));

	if (!qs)
		return NULL;
	qs->ops = ops;
	qs->ctx = ctx;

	struct rdmap_ep_attr attr = *ep_attr;
	attr.transport = &stack_transport_ops;
	attr.transport_ctx = qs;
	attr.complete = ep_complete;
	attr.complete_ctx = qs;
	qs->ep = rdmap_ep_create(&attr);
	if (!qs->ep) {
		int err = errno;
		free(qs);
		errno = err;
		return NULL;
	}
	qs->conn = trp_conn_create(trp_cfg, &stack_trp_ops, qs);
	if (!qs->conn) {
		rdmap_ep_destroy(qs->ep);
		free(qs);
		errno = EINVAL;
		return NULL;
	}
	return qs;
}

void qp_stack_destroy(struct qp_stack *qs)
{
	if (!qs)
		return;
	/* The connection goes first: it reports its outstanding segments to
	 * acked(), which still needs the endpoint. */
	trp_conn_destroy(qs->conn);
	rdmap_ep_destroy(qs->ep);
	free(qs);
}

struct trp_conn *qp_stack_conn(struct qp_stack *qs)
{
	return qs->conn;
}

struct rdmap_ep *qp_stack_ep(struct qp_stack *qs)
{
	return qs->ep;
}

int qp_stack_post_send(struct qp_stack *qs, const struct rdmap_send_wr *wr)
{
	int ret = rdmap_ep_post_send(qs->ep, wr);

	if (ret == 0)
		rdmap_ep_progress_tx(qs->ep);
	return ret;
}

int qp_stack_post_recv(struct qp_stack *qs, const struct rdmap_recv_wr *wr)
{
	return rdmap_ep_post_recv(qs->ep, wr);
}

/* Segments are sent only here, after TRP has returned: TRP's callbacks feed
 * the endpoint but never re-enter TRP. */
void qp_stack_input(struct qp_stack *qs, const void *pkt, size_t len)
{
	trp_input(qs->conn, pkt, len);
	rdmap_ep_progress_tx(qs->ep);
}

void qp_stack_poll(struct qp_stack *qs)
{
	trp_poll(qs->conn);
	rdmap_ep_progress_tx(qs->ep);
}

uint64_t qp_stack_next_deadline(const struct qp_stack *qs)
{
	return trp_next_deadline(qs->conn);
}
