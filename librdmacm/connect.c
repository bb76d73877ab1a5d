/* rdma_connect, rdma_accept, rdma_reject, rdma_disconnect, rdma_establish,
 * rdma_notify, and the CM events a QP's connection raises. */
#include "connect.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <sys/random.h>

#include "channel.h"
#include "cm_id.h"
#include "cm_proto.h"
#include "listen.h"
#include "progress.h"

/* The RDMA Read depths a QP is built with when the application asks for
 * none, and the most it may ask for (the device's limits). */
static uint8_t read_depth(struct cm_id *id, uint8_t asked, bool outbound)
{
	struct ibv_device_attr attr;
	int max = 1;

	if (!ibv_query_device(id->id.verbs, &attr))
		max = outbound ? attr.max_qp_init_rd_atom : attr.max_qp_rd_atom;
	if (max > UINT8_MAX)
		max = UINT8_MAX;
	if (asked == 0 || asked > max)
		return (uint8_t)max;
	return asked;
}

/* How often the QP's Sends are sent again to a peer with no receive posted
 * (7: with no bound).  Without parameters, 7, as rdma-core's librdmacm
 * asks the kernel for. */
static uint8_t rnr_retry_of(const struct rdma_conn_param *param)
{
	return param ? param->rnr_retry_count : 7;
}

static uint32_t random_u32(void)
{
	uint32_t v = 0;

	while (v == 0)
		if (getrandom(&v, sizeof(v), 0) != sizeof(v))
			v = (uint32_t)cm_now_ns() | 1;
	return v;
}

void cm_conn_qp_callback(void *id, enum trp_event_type type, int status, const void *pdata,
			 size_t pdata_len)
{
	cm_inbox_qp_event(id, type, status, pdata, pdata_len);
}

void cm_conn_qp_leaving(struct cm_id *id)
{
	if (id->state == CM_DISCONNECT) {
		id->state = CM_DISCONNECTED;
		cm_event_raise(id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
	}
}

void cm_conn_qp_gone(void *ctx)
{
	struct cm_id *id = ctx;

	cm_lock();
	id->qp_attached = false;
	id->id.qp = NULL;
	cm_conn_qp_leaving(id);
	cm_unlock();
}

static void attach_qp(struct cm_id *id)
{
	if (!id->qp_attached) {
		cm_usiw->qp_attach(id->id.qp, cm_conn_qp_callback, cm_conn_qp_gone, id);
		id->qp_attached = true;
	}
}

static int encode_pdata(struct cm_id *id, const struct rdma_conn_param *param, uint8_t ord,
			uint8_t ird, unsigned char *out)
{
	struct cm_hdr hdr = {
		.version = CM_PROTO_VERSION,
		.ord = ord,
		.ird = ird,
		.qpn = id->id.qp ? (uint16_t)id->id.qp->qp_num : 0,
		.pdata_len = param ? param->private_data_len : 0,
	};
	if (hdr.pdata_len && !param->private_data)
		return -EINVAL;
	return cm_proto_encode(&hdr, param ? param->private_data : NULL, out, TRP_MAX_PDATA);
}

static int connect_locked(struct cm_id *id, const struct rdma_conn_param *param)
{
	unsigned char pdata[TRP_MAX_PDATA];

	if (id->state != CM_ROUTE_RESOLVED && id->state != CM_ADDR_RESOLVED)
		return EINVAL;
	/* Connecting a QP the application made on its own (param->qp_num) is
	 * not possible: the connection lives in the QP. */
	if (!id->id.qp)
		return EINVAL;
	uint8_t ord = read_depth(id, param ? param->initiator_depth : 0, true);
	uint8_t ird = read_depth(id, param ? param->responder_resources : 0, false);
	int len = encode_pdata(id, param, ord, ird, pdata);
	if (len < 0)
		return -len;
	const struct sockaddr_in *dst = &id->id.route.addr.dst_sin;
	struct usiw_qp_cm_param qp_param = {
		.peer_ipv4 = dst->sin_addr.s_addr,
		.peer_port = ntohs(dst->sin_port),
		.ord = ord,
		.ird = ird,
		.rnr_retry = rnr_retry_of(param),
		.pdata = pdata,
		.pdata_len = (size_t)len,
	};
	attach_qp(id);
	int rc = cm_usiw->qp_connect(id->id.qp, &qp_param, random_u32());
	if (rc)
		return rc;
	id->state = CM_CONNECT;
	return 0;
}

int rdma_connect(struct rdma_cm_id *rid, struct rdma_conn_param *conn_param)
{
	if (!rid)
		return cm_fail(EINVAL);
	struct cm_id *id = cm_id_of(rid);
	cm_lock();
	int rc = connect_locked(id, conn_param);
	cm_unlock();
	if (rc)
		return cm_fail(rc);
	return id->sync ? cm_id_wait_sync(id, RDMA_CM_EVENT_ESTABLISHED) : 0;
}

static int accept_locked(struct cm_id *id, const struct rdma_conn_param *param)
{
	unsigned char pdata[TRP_MAX_PDATA];
	struct cm_request *r = id->request;

	if (id->state != CM_REQUEST || !r)
		return EINVAL;
	if (!id->id.qp)
		return EINVAL;
	/* Never more than the peer can take: our ORD within its IRD. */
	uint8_t ord = read_depth(id, param ? param->initiator_depth : 0, true);
	if (r->peer_ird && ord > r->peer_ird)
		ord = r->peer_ird;
	uint8_t ird = read_depth(id, param ? param->responder_resources : 0, false);
	int len = encode_pdata(id, param, ord, ird, pdata);
	if (len < 0)
		return -len;
	struct usiw_qp_cm_param qp_param = {
		.peer_ipv4 = r->src_ipv4,
		.peer_port = r->src_port,
		.ord = ord,
		.ird = ird,
		.rnr_retry = rnr_retry_of(param),
		.pdata = pdata,
		.pdata_len = (size_t)len,
	};
	attach_qp(id);
	int rc = cm_usiw->qp_accept(id->id.qp, &qp_param, r->datagram, r->len);
	if (rc)
		return rc;
	id->state = CM_ACCEPT;
	return 0;
}

int rdma_accept(struct rdma_cm_id *rid, struct rdma_conn_param *conn_param)
{
	if (!rid)
		return cm_fail(EINVAL);
	struct cm_id *id = cm_id_of(rid);
	if (id->sync)
		cm_id_ack_sync_event(id);
	cm_lock();
	int rc = accept_locked(id, conn_param);
	cm_unlock();
	if (rc)
		return cm_fail(rc);
	return id->sync ? cm_id_wait_sync(id, RDMA_CM_EVENT_ESTABLISHED) : 0;
}

static int reject_locked(struct cm_id *id, const void *private_data, uint8_t len)
{
	unsigned char pdata[TRP_MAX_PDATA];
	struct cm_hdr hdr = { .version = CM_PROTO_VERSION, .pdata_len = len };

	if (id->state != CM_REQUEST)
		return EINVAL;
	if (len && !private_data)
		return EINVAL;
	int n = cm_proto_encode(&hdr, private_data, pdata, sizeof(pdata));
	if (n < 0)
		return -n;
	int rc = cm_request_reject(id, pdata, (size_t)n);
	if (rc)
		return rc;
	id->state = CM_REJECTED;
	return 0;
}

int rdma_reject(struct rdma_cm_id *rid, const void *private_data, uint8_t private_data_len)
{
	if (!rid)
		return cm_fail(EINVAL);
	struct cm_id *id = cm_id_of(rid);
	if (id->sync)
		cm_id_ack_sync_event(id);
	cm_lock();
	int rc = reject_locked(id, private_data, private_data_len);
	cm_unlock();
	return rc ? cm_fail(rc) : 0;
}

int rdma_disconnect(struct rdma_cm_id *rid)
{
	if (!rid)
		return cm_fail(EINVAL);
	struct cm_id *id = cm_id_of(rid);
	int rc = 0;

	cm_lock();
	switch (id->state) {
	case CM_CONNECT:
	case CM_ACCEPT:
	case CM_CONNECTED:
		if (!id->id.qp) {
			/* rdma_destroy_qp came first and closed the
			 * connection with the QP: only the event is left. */
			id->state = CM_DISCONNECTED;
			cm_event_raise(id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
			break;
		}
		rc = cm_usiw->qp_disconnect(id->id.qp);
		if (!rc)
			id->state = CM_DISCONNECT;
		break;
	case CM_DISCONNECT:
	case CM_DISCONNECTED:
	case CM_FAILED:
		break;   /* already closing or closed: nothing more to do */
	default:
		rc = EINVAL;
	}
	cm_unlock();
	if (rc)
		return cm_fail(rc);
	return 0;
}

/* rdma_establish(3) is for a passive side whose QP is not the CM's: with
 * usiw the connection lives in the QP and its third leg establishes it,
 * so there is nothing to do once the QP has connected. */
int rdma_establish(struct rdma_cm_id *rid)
{
	if (!rid)
		return cm_fail(EINVAL);
	struct cm_id *id = cm_id_of(rid);
	cm_lock();
	int rc = id->state == CM_CONNECTED || id->state == CM_ACCEPT ? 0 : EINVAL;
	cm_unlock();
	return rc ? cm_fail(rc) : 0;
}

/* rdma_notify(3) tells the CM that the QP saw traffic before ESTABLISHED;
 * TRP already establishes on the first packet of the third leg. */
int rdma_notify(struct rdma_cm_id *rid, enum ibv_event_type event)
{
	(void)event;
	return rid ? 0 : cm_fail(EINVAL);
}

/* ---- QP connection events ------------------------------------------- */

static void established(struct cm_id *id, const void *pdata, size_t pdata_len)
{
	struct cm_event_param param = { 0 };

	if (id->state == CM_CONNECT) {
		/* The ACCEPT's CM header: the passive QP's depths and port. */
		struct cm_hdr hdr;
		const void *app;
		if (cm_proto_decode(&hdr, &app, pdata, pdata_len) == 0) {
			param.pdata = app;
			param.pdata_len = hdr.pdata_len;
			param.initiator_depth = hdr.ird;
			param.responder_resources = hdr.ord;
			id->id.route.addr.dst_sin.sin_port = htons(hdr.qpn);
		}
	}
	id->state = CM_CONNECTED;
	cm_event_raise(id, RDMA_CM_EVENT_ESTABLISHED, 0, &param);
}

/* The kernel's iWARP CM reports both kinds of refusal as REJECTED and
 * tells them apart by the status its driver gives: the peer's application
 * rejected (an MPA reject: -ECONNREFUSED), or nothing listens at that port
 * (a TCP RST: -ECONNRESET from iw_cxgb4 and irdma). */
static void rejected(struct cm_id *id, const void *pdata, size_t pdata_len)
{
	struct cm_event_param param = { 0 };
	struct cm_hdr hdr;
	const void *app;
	int status = -ECONNRESET;

	/* A REJECT without our header is trp_closed_port_answer's: nobody listens. */
	if (cm_proto_decode(&hdr, &app, pdata, pdata_len) == 0) {
		param.pdata = app;
		param.pdata_len = hdr.pdata_len;
		status = -ECONNREFUSED;
	}
	id->state = CM_FAILED;
	cm_event_raise(id, RDMA_CM_EVENT_REJECTED, status, &param);
}

static void failed(struct cm_id *id, int status)
{
	enum cm_state was = id->state;

	id->state = was == CM_CONNECTED || was == CM_DISCONNECT ? CM_DISCONNECTED : CM_FAILED;
	switch (was) {
	case CM_CONNECT:
		/* The kernel's iWARP CM: a connect that timed out is
		 * UNREACHABLE, any other failure CONNECT_ERROR. */
		if (status == TRP_ERR_TIMEOUT)
			cm_event_raise(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL);
		else
			cm_event_raise(id, RDMA_CM_EVENT_CONNECT_ERROR, -ECONNABORTED, NULL);
		break;
	case CM_ACCEPT:
		/* The requester's QP went away (a RESET), or never answered. */
		cm_event_raise(id, RDMA_CM_EVENT_CONNECT_ERROR,
			       status == TRP_ERR_RESET ? -ECONNRESET : -ETIMEDOUT, NULL);
		break;
	case CM_CONNECTED:
	case CM_DISCONNECT:
		cm_event_raise(id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
		break;
	default:
		break;
	}
}

void cm_conn_qp_event(struct cm_id *id, enum trp_event_type type, int status,
		      const void *pdata, size_t pdata_len)
{
	switch (type) {
	case TRP_EV_ESTABLISHED:
		if (id->state == CM_CONNECT || id->state == CM_ACCEPT)
			established(id, pdata, pdata_len);
		break;
	case TRP_EV_REJECTED:
		if (id->state == CM_CONNECT)
			rejected(id, pdata, pdata_len);
		break;
	case TRP_EV_CLOSED:
		if (id->state == CM_CONNECTED || id->state == CM_DISCONNECT) {
			id->state = CM_DISCONNECTED;
			cm_event_raise(id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
		}
		break;
	case TRP_EV_FAILED:
		failed(id, status);
		break;
	case TRP_EV_CONNECT_REQUEST:
		break;   /* the QP's own step of rdma_accept */
	}
}
