/* rdma_create_qp(_ex), rdma_destroy_qp, rdma_create_srq(_ex),
 * rdma_destroy_srq and rdma_init_qp_attr: QPs on the id's device, made as
 * rdma-core's librdmacm makes them (a default PD, CQs when the application
 * gives none) and left in INIT, where our CM takes them over. */
#include <errno.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "cm_id.h"
#include "connect.h"
#include "cm_qp.h"

/* What a connected QP allows: remote reads, writes and atomics into MRs that
 * allow them.  The kernel's iWARP CM gives INIT reads and writes only, since
 * RFC 5040 has no atomics; usiw0 has RFC 7306's, and the kernel's IB CM
 * allows atomics with reads where the QP has responder resources.  Without
 * them qperf's rc_compare_swap_mr over rdma_cm failed with remote access
 * errors. */
#define CM_QP_ACCESS                                                             \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_ATOMIC)

static void destroy_cqs(struct rdma_cm_id *id)
{
	if (id->recv_cq) {
		ibv_destroy_cq(id->recv_cq);
		if (id->send_cq == id->recv_cq)
			id->send_cq = NULL;
		id->recv_cq = NULL;
	}
	if (id->recv_cq_channel) {
		ibv_destroy_comp_channel(id->recv_cq_channel);
		id->recv_cq_channel = NULL;
	}
	if (id->send_cq) {
		ibv_destroy_cq(id->send_cq);
		id->send_cq = NULL;
	}
	if (id->send_cq_channel) {
		ibv_destroy_comp_channel(id->send_cq_channel);
		id->send_cq_channel = NULL;
	}
}

/* A CQ with its own completion channel, where the application gave none. */
static struct ibv_cq *make_cq(struct rdma_cm_id *id, uint32_t depth,
			      struct ibv_comp_channel **channel)
{
	*channel = ibv_create_comp_channel(id->verbs);
	if (!*channel)
		return NULL;
	return ibv_create_cq(id->verbs, (int)(depth ? depth : 1), id, *channel, 0);
}

static int make_missing_cqs(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	if (!attr->recv_cq) {
		id->recv_cq = make_cq(id, attr->cap.max_recv_wr, &id->recv_cq_channel);
		if (!id->recv_cq)
			return errno;
		attr->recv_cq = id->recv_cq;
	}
	if (!attr->send_cq) {
		id->send_cq = make_cq(id, attr->cap.max_send_wr, &id->send_cq_channel);
		if (!id->send_cq)
			return errno;
		attr->send_cq = id->send_cq;
	}
	return 0;
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.qp_access_flags = CM_QP_ACCESS,
		.port_num = 1,
	};
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PORT |
						IBV_QP_PKEY_INDEX);
}

int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	if (!id || !attr || !id->verbs)
		return cm_fail(EINVAL);
	if (id->qp)
		return cm_fail(EEXIST);
	if (attr->qp_type != IBV_QPT_RC)
		return cm_fail(EOPNOTSUPP);
	/* Creation flags, send ops flags and the like need the extended
	 * verbs, which usiw0 does not have. */
	if (attr->comp_mask & ~IBV_QP_INIT_ATTR_PD)
		return cm_fail(EOPNOTSUPP);
	struct ibv_pd *pd = attr->comp_mask & IBV_QP_INIT_ATTR_PD ? attr->pd : NULL;
	cm_lock();
	if (!pd)
		pd = id->pd ? id->pd : cm_device_default_pd(cm_id_of(id)->dev);
	cm_unlock();
	if (!pd)
		return -1;
	if (pd->context != id->verbs)
		return cm_fail(EINVAL);
	int rc = make_missing_cqs(id, attr);
	if (rc) {
		destroy_cqs(id);
		return cm_fail(rc);
	}
	if (!attr->srq)
		attr->srq = id->srq;
	struct ibv_qp_init_attr init = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);
	if (!qp) {
		rc = errno;
		destroy_cqs(id);
		return cm_fail(rc);
	}
	rc = to_init(qp);
	if (rc) {
		ibv_destroy_qp(qp);
		destroy_cqs(id);
		return cm_fail(rc);
	}
	attr->cap = init.cap;
	id->pd = pd;
	id->qp = qp;
	return 0;
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	if (!qp_init_attr)
		return cm_fail(EINVAL);
	struct ibv_qp_init_attr_ex attr = {
		.qp_context = qp_init_attr->qp_context,
		.send_cq = qp_init_attr->send_cq,
		.recv_cq = qp_init_attr->recv_cq,
		.srq = qp_init_attr->srq,
		.cap = qp_init_attr->cap,
		.qp_type = qp_init_attr->qp_type,
		.sq_sig_all = qp_init_attr->sq_sig_all,
		.comp_mask = pd ? IBV_QP_INIT_ATTR_PD : 0,
		.pd = pd,
	};
	if (rdma_create_qp_ex(id, &attr))
		return -1;
	qp_init_attr->send_cq = attr.send_cq;
	qp_init_attr->recv_cq = attr.recv_cq;
	qp_init_attr->srq = attr.srq;
	qp_init_attr->cap = attr.cap;
	return 0;
}

/* The QP goes; the CQs it was made with stay until rdma_destroy_ep. */
void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (!id || !id->qp)
		return;
	struct cm_id *cid = cm_id_of(id);
	cm_lock();
	if (cid->qp_attached) {
		cm_usiw->qp_attach(id->qp, NULL, NULL, NULL);
		cid->qp_attached = false;
	}
	cm_conn_qp_leaving(cid);
	cm_unlock();
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
}

int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	if (!id || !attr || !id->verbs)
		return cm_fail(EINVAL);
	if (attr->srq_type != IBV_SRQT_BASIC ||
	    (attr->comp_mask & ~(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD)))
		return cm_fail(EOPNOTSUPP);
	struct ibv_pd *pd = attr->comp_mask & IBV_SRQ_INIT_ATTR_PD ? attr->pd : NULL;
	cm_lock();
	if (!pd)
		pd = id->pd ? id->pd : cm_device_default_pd(cm_id_of(id)->dev);
	cm_unlock();
	if (!pd)
		return -1;
	struct ibv_srq_init_attr init = { .srq_context = attr->srq_context, .attr = attr->attr };
	struct ibv_srq *srq = ibv_create_srq(pd, &init);
	if (!srq)
		return -1;
	attr->attr = init.attr;
	id->pd = pd;
	id->srq = srq;
	return 0;
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	if (!attr)
		return cm_fail(EINVAL);
	struct ibv_srq_init_attr_ex ex = {
		.srq_context = attr->srq_context,
		.attr = attr->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | (pd ? IBV_SRQ_INIT_ATTR_PD : 0),
		.srq_type = IBV_SRQT_BASIC,
		.pd = pd,
	};
	if (rdma_create_srq_ex(id, &ex))
		return -1;
	attr->attr = ex.attr;
	return 0;
}

void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (!id || !id->srq)
		return;
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
}

/* rdma_init_qp_attr(3).  For INIT, what the QP needs; for RTR and RTS
 * nothing (mask 0): the connection manager moves the QP itself when the
 * connection is established, as iWARP's does, and libusiw takes a modify
 * with an empty mask as a no-op. */
int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	if (!id || !qp_attr || !qp_attr_mask)
		return cm_fail(EINVAL);
	switch (qp_attr->qp_state) {
	case IBV_QPS_INIT:
		qp_attr->qp_access_flags = CM_QP_ACCESS;
		qp_attr->port_num = 1;
		qp_attr->pkey_index = 0;
		*qp_attr_mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PORT | IBV_QP_PKEY_INDEX;
		return 0;
	case IBV_QPS_RTR:
	case IBV_QPS_RTS:
		*qp_attr_mask = 0;
		return 0;
	default:
		return cm_fail(EINVAL);
	}
}

/* Kept here, beside the QP and CQs it destroys. */
void cm_qp_destroy_ep_resources(struct rdma_cm_id *id)
{
	rdma_destroy_qp(id);
	rdma_destroy_srq(id);
	destroy_cqs(id);
}
