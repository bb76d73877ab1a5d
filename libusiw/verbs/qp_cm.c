/* The connection manager's hooks into QPs and the engine (qp_cm.h): what
 * our librdmacm calls to connect, accept and close a QP over its TRP
 * connection, and to drive progress. */
#include "qp_cm.h"

#include <errno.h>
#include <sys/random.h>

#include "attributes.h"
#include "context.h"
#include "device.h"
#include "progress.h"
#include "qp.h"

static bool cm_is_device(const struct ibv_device *device)
{
	return usiw_is_device(device);
}

static struct usiw_engine *cm_engine_of(struct ibv_context *verbs)
{
	return usiw_is_context(verbs) ? usiw_context_of(verbs)->engine : NULL;
}

/* The engine's receive callbacks take the QP lock, so whoever makes the
 * engine poll (a resolve does) holds it first. */
static int cm_resolve(struct ibv_context *verbs, uint32_t dst_ipv4)
{
	struct usiw_context *ctx = usiw_context_of(verbs);

	usiw_context_lock(ctx);
	int rc = usiw_engine_resolve(ctx->engine, dst_ipv4, 0);
	usiw_context_unlock(ctx);
	return rc;
}

static void cm_qp_attach(struct ibv_qp *ibv_qp, usiw_qp_cm_event_fn fn, usiw_qp_cm_gone_fn gone,
			 void *cm_ctx)
{
	struct usiw_qp *qp = usiw_qp_of(ibv_qp);

	usiw_context_lock(qp->ctx);
	qp->cm.event = fn;
	qp->cm.gone = gone;
	qp->cm.ctx = cm_ctx;
	usiw_context_unlock(qp->ctx);
}

/* The RNR timer code (qp_modify.c, rnr_timer_ns) of the CM's QPs: 12,
 * 0.64 ms, the one perftest and rdma-core's examples give their QPs. */
#define USIW_CM_MIN_RNR_TIMER 12

static uint32_t random_isn(void)
{
	uint32_t isn;

	if (getrandom(&isn, sizeof(isn), 0) != sizeof(isn))
		isn = (uint32_t)(uintptr_t)&isn;
	return isn;
}

/* What RTR and RTS would have given the QP, taken from the CM instead: the
 * peer, the port's MTU, the read depths and the RNR retry bound (the wait
 * the QP asks for when it has no receive is USIW_CM_MIN_RNR_TIMER's, as
 * the CM's peer sets none); then the stack. */
static int open_stack(struct usiw_qp *qp, const struct usiw_qp_cm_param *param)
{
	if (qp->state != IBV_QPS_INIT || qp->stack)
		return EINVAL;
	if (param->pdata_len > TRP_MAX_PDATA)
		return EINVAL;
	qp->peer_ipv4 = param->peer_ipv4;
	qp->peer_port = param->peer_port;
	qp->max_seg_payload = usiw_qp_seg_payload(qp->ctx, usiw_ibv_mtu_for(qp->ctx->port->mtu));
	qp->attr.max_rd_atomic = param->ord;
	qp->attr.max_dest_rd_atomic = param->ird;
	qp->attr.rnr_retry = param->rnr_retry;
	qp->attr.min_rnr_timer = USIW_CM_MIN_RNR_TIMER;
	return usiw_qp_start_stack(qp);
}

static void close_stack(struct usiw_qp *qp)
{
	usiw_progress_remove_running(qp);
	qp_stack_destroy(qp->stack);
	qp->stack = NULL;
	qp->peer_ipv4 = 0;
	qp->peer_port = 0;
	qp->cm.learn_peer_port = false;
}

static int cm_qp_connect(struct ibv_qp *ibv_qp, const struct usiw_qp_cm_param *param,
			 uint32_t conn_id)
{
	struct usiw_qp *qp = usiw_qp_of(ibv_qp);

	usiw_context_lock(qp->ctx);
	int rc = open_stack(qp, param);
	if (!rc) {
		qp->cm.learn_peer_port = true;
		rc = -trp_connect(qp_stack_conn(qp->stack), random_isn(), conn_id, param->pdata,
				  param->pdata_len);
		if (rc)
			close_stack(qp);
	}
	usiw_progress_qp_changed(qp);
	usiw_progress_locked(qp->ctx);
	usiw_context_unlock(qp->ctx);
	return rc;
}

static int cm_qp_accept(struct ibv_qp *ibv_qp, const struct usiw_qp_cm_param *param,
			const void *request, size_t request_len)
{
	struct usiw_qp *qp = usiw_qp_of(ibv_qp);

	usiw_context_lock(qp->ctx);
	int rc = open_stack(qp, param);
	if (!rc) {
		struct trp_conn *conn = qp_stack_conn(qp->stack);
		/* The listener kept the REQUEST; fed to the new connection it
		 * puts it where the application's answer is expected. */
		qp_stack_input(qp->stack, request, request_len);
		if (trp_conn_state(conn) != TRP_STATE_REQ_RCVD)
			rc = EPROTO;
		else
			rc = -trp_accept(conn, random_isn(), param->pdata, param->pdata_len);
		if (rc)
			close_stack(qp);
	}
	usiw_progress_qp_changed(qp);
	usiw_progress_locked(qp->ctx);
	usiw_context_unlock(qp->ctx);
	return rc;
}

static int cm_qp_disconnect(struct ibv_qp *ibv_qp)
{
	struct usiw_qp *qp = usiw_qp_of(ibv_qp);
	int rc = 0;

	usiw_context_lock(qp->ctx);
	if (!qp->stack)
		rc = ENOTCONN;
	else
		trp_shutdown(qp_stack_conn(qp->stack));   /* -EPIPE: closing already */
	usiw_progress_qp_changed(qp);
	usiw_progress_locked(qp->ctx);
	usiw_context_unlock(qp->ctx);
	return rc;
}

void usiw_qp_cm_event(struct usiw_qp *qp, enum trp_event_type type, int status,
		      const void *pdata, size_t pdata_len)
{
	switch (type) {
	case TRP_EV_CONNECT_REQUEST:
		return;   /* cm_qp_accept's own step */
	case TRP_EV_ESTABLISHED:
		/* iWARP: the connection manager moves the QP to RTS. */
		qp->state = IBV_QPS_RTS;
		qp->attr.qp_state = IBV_QPS_RTS;
		qp->cm.learn_peer_port = false;
		break;
	default:
		break;
	}
	if (qp->cm.event)
		qp->cm.event(qp->cm.ctx, type, status, pdata, pdata_len);
}

bool usiw_qp_cm_peer_answered(struct usiw_qp *qp, uint32_t src_ipv4, uint16_t src_port,
			      const void *data, size_t len)
{
	struct trp_header hdr;

	if (!qp->cm.learn_peer_port || !qp->stack || src_ipv4 != qp->peer_ipv4 ||
	    trp_header_decode(&hdr, data, len) || hdr.opcode != TRP_OP_CONNECT_ACCEPT ||
	    hdr.conn_id != trp_conn_id(qp_stack_conn(qp->stack)))
		return false;
	qp->peer_port = src_port;
	qp->cm.learn_peer_port = false;
	return true;
}

size_t usiw_qp_cm_closed_port_answer(const void *data, size_t len, void *reply,
				     size_t reply_max)
{
	if (reply_max < TRP_HDR_LEN || !trp_closed_port_answer(data, len, reply))
		return 0;
	return TRP_HDR_LEN;
}

static const struct usiw_cm_interface cm_interface = {
	.version = USIW_CM_INTERFACE_VERSION,
	.is_device = cm_is_device,
	.engine_of = cm_engine_of,
	.resolve = cm_resolve,
	.udp_open = usiw_udp_open,
	.udp_close = usiw_udp_close,
	.udp_port = usiw_udp_port,
	.udp_send = usiw_udp_send,
	.port_attr = usiw_engine_port_attr,
	.qp_attach = cm_qp_attach,
	.qp_connect = cm_qp_connect,
	.qp_accept = cm_qp_accept,
	.qp_disconnect = cm_qp_disconnect,
};

/* libusiw is built with hidden visibility; this one function is public. */
__attribute__((visibility("default"))) const struct usiw_cm_interface *usiw_cm_interface(void)
{
	return &cm_interface;
}
