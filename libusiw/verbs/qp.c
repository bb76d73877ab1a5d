/* ibv_create_qp / ibv_query_qp / ibv_destroy_qp, and QP numbers. */
#include "qp.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "cq.h"
#include "limits.h"
#include "pd.h"
#include "progress.h"

static const char *qp_type_name(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	case IBV_QPT_RAW_PACKET:
		return "RAW_PACKET";
	case IBV_QPT_XRC_SEND:
		return "XRC_SEND";
	case IBV_QPT_XRC_RECV:
		return "XRC_RECV";
	default:
		return "unknown";
	}
}

/* A cap above usiw0's limit: the applications' own message is only
 * "couldn't create QP", so this says which cap and what the limit is. */
static bool cap_too_big(const char *name, uint32_t asked, uint32_t limit)
{
	if (asked <= limit)
		return false;
	fprintf(stderr, "usiw: ibv_create_qp: %s %" PRIu32 " is above usiw0's limit of %" PRIu32 "\n",
		name, asked, limit);
	return true;
}

/* ibv_create_qp(3): the caps asked for must be within the device's limits;
 * the QP gets at least what was asked and the caps say what it got. */
static int check_init_attr(struct ibv_context *context, const struct ibv_qp_init_attr *attr)
{
	if (attr->qp_type != IBV_QPT_RC) {
		/* iWARP (RFC 5040) defines reliable connected QPs only. */
		fprintf(stderr,
			"usiw: ibv_create_qp: QP type %s (%d) is not supported: usiw0 is an iWARP "
			"device and has RC QPs only\n",
			qp_type_name(attr->qp_type), (int)attr->qp_type);
		return EOPNOTSUPP;
	}
	if (!attr->send_cq || !attr->recv_cq || attr->send_cq->context != context ||
	    attr->recv_cq->context != context ||
	    (attr->srq && attr->srq->context != context))
		return EINVAL;
	const struct ibv_qp_cap *cap = &attr->cap;
	if (cap_too_big("max_send_wr", cap->max_send_wr, USIW_MAX_QP_WR) ||
	    cap_too_big("max_send_sge", cap->max_send_sge, USIW_MAX_SGE) ||
	    cap_too_big("max_inline_data", cap->max_inline_data, USIW_MAX_INLINE_DATA))
		return EINVAL;
	/* With an SRQ the QP's own receive queue attributes are ignored. */
	if (!attr->srq && (cap_too_big("max_recv_wr", cap->max_recv_wr, USIW_MAX_QP_WR) ||
			   cap_too_big("max_recv_sge", cap->max_recv_sge, USIW_MAX_SGE)))
		return EINVAL;
	return 0;
}

static uint32_t at_least_one(uint32_t n)
{
	return n ? n : 1;
}

/* A send WR's inline room is at least what its SGEs take (16 bytes each), as
 * rxe and mlx5 give it: programs post small inline Sends on QPs that asked
 * for no inline data (rdma-core's rdma_xclient, 16 bytes, with one SGE). */
static uint32_t inline_room(uint32_t max_send_sge, uint32_t max_inline_data)
{
	const uint32_t sge_room = max_send_sge * (uint32_t)sizeof(struct ibv_sge);
	const uint32_t room = max_inline_data > sge_room ? max_inline_data : sge_room;

	return room < USIW_MAX_INLINE_DATA ? room : USIW_MAX_INLINE_DATA;
}

/* The QP number is a free UDP port of the engine in the QPN range; several
 * contexts of a process share the engine, so a port may be taken already. */
static int open_port(struct usiw_context *ctx, struct usiw_qp *qp)
{
	for (uint32_t tries = 0; tries < USIW_QPN_COUNT; tries++) {
		uint32_t qpn = USIW_QPN_FIRST + ctx->next_qpn++ % USIW_QPN_COUNT;
		int rc = usiw_udp_open(ctx->engine, (uint16_t)qpn, usiw_qp_receive, qp, &qp->udp);
		if (rc == 0) {
			/* TRP's CRC32C checks every datagram of a QP, TRP keeps
			 * what it sends until acknowledged, and its packets carry
			 * their own length. */
			usiw_udp_skip_checksum(qp->udp);
			usiw_udp_reference_data(qp->udp);
			usiw_udp_bundle(qp->udp);
			qp->vqp.qp.qp_num = qpn;
			return 0;
		}
		if (rc != -EADDRINUSE)
			return -rc;
	}
	return ENOMEM;
}

static int alloc_early_recvs(struct usiw_qp *qp)
{
	if (qp->srq)
		return 0;
	qp->early.wrs = calloc(qp->cap.max_recv_wr, sizeof(*qp->early.wrs));
	qp->early.sges = calloc((size_t)qp->cap.max_recv_wr * qp->cap.max_recv_sge,
				sizeof(*qp->early.sges));
	return qp->early.wrs && qp->early.sges ? 0 : ENOMEM;
}

static void free_qp(struct usiw_qp *qp)
{
	free(qp->early.wrs);
	free(qp->early.sges);
	free(qp);
}

struct ibv_qp *usiw_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct usiw_context *ctx = usiw_context_of(pd->context);
	int rc = check_init_attr(pd->context, attr);

	if (rc) {
		errno = rc;
		return NULL;
	}
	if (atomic_fetch_add(&ctx->qp_count, 1) >= USIW_MAX_QP) {
		atomic_fetch_sub(&ctx->qp_count, 1);
		fprintf(stderr, "usiw: ibv_create_qp: this context has %d QPs already, usiw0's max_qp\n",
			USIW_MAX_QP);
		errno = ENOMEM;
		return NULL;
	}
	/* Aligned to a cache line: qp.h orders its fields by line. */
	struct usiw_qp *qp = aligned_alloc(64, (sizeof(*qp) + 63) & ~(size_t)63);
	if (!qp) {
		atomic_fetch_sub(&ctx->qp_count, 1);
		errno = ENOMEM;
		return NULL;
	}
	*qp = (struct usiw_qp){0};
	qp->ctx = ctx;
	qp->state = IBV_QPS_RESET;
	qp->sq_sig_all = attr->sq_sig_all;
	qp->send_cq = usiw_cq_of(attr->send_cq);
	qp->recv_cq = usiw_cq_of(attr->recv_cq);
	qp->srq = attr->srq ? usiw_srq_of(attr->srq) : NULL;
	qp->cap.max_send_wr = at_least_one(attr->cap.max_send_wr);
	qp->cap.max_send_sge = at_least_one(attr->cap.max_send_sge);
	qp->cap.max_inline_data = inline_room(qp->cap.max_send_sge, attr->cap.max_inline_data);
	if (!qp->srq) {
		qp->cap.max_recv_wr = at_least_one(attr->cap.max_recv_wr);
		qp->cap.max_recv_sge = at_least_one(attr->cap.max_recv_sge);
	}
	rc = alloc_early_recvs(qp);
	if (!rc) {
		usiw_context_lock(ctx);
		rc = open_port(ctx, qp);
		usiw_context_unlock(ctx);
	}
	if (rc) {
		free_qp(qp);
		atomic_fetch_sub(&ctx->qp_count, 1);
		errno = rc;
		return NULL;
	}

	usiw_pd_hold(pd);
	usiw_cq_hold(qp->send_cq);
	usiw_cq_hold(qp->recv_cq);
	if (qp->srq)
		atomic_fetch_add(&qp->srq->users, 1);

	struct ibv_qp *q = &qp->vqp.qp;
	q->context = pd->context;
	q->qp_context = attr->qp_context;
	q->pd = pd;
	q->send_cq = attr->send_cq;
	q->recv_cq = attr->recv_cq;
	q->srq = attr->srq;
	q->handle = q->qp_num;
	q->state = IBV_QPS_RESET;
	q->qp_type = IBV_QPT_RC;
	pthread_mutex_init(&q->mutex, NULL);
	pthread_cond_init(&q->cond, NULL);
	q->events_completed = 0;

	qp->attr.qp_state = IBV_QPS_RESET;
	qp->attr.path_mtu = IBV_MTU_1024;
	qp->attr.port_num = 1;
	attr->cap = qp->cap;
	return q;
}

int usiw_query_qp(struct ibv_qp *ibv_qp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr)
{
	struct usiw_qp *qp = usiw_qp_of(ibv_qp);

	/* ibv_query_qp(3): attr_mask is a hint; everything is filled in. */
	(void)attr_mask;
	usiw_context_lock(qp->ctx);
	/* A Terminate, a failed or a closed connection put the endpoint in
	 * error on its own: the QP is in ERR from then on. */
	if (qp->stack && rdmap_ep_state(qp_stack_ep(qp->stack)) == RDMAP_EP_ERROR)
		qp->state = IBV_QPS_ERR;
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->cap = qp->cap;
	usiw_context_unlock(qp->ctx);

	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = ibv_qp->qp_context;
	init_attr->send_cq = ibv_qp->send_cq;
	init_attr->recv_cq = ibv_qp->recv_cq;
	init_attr->srq = ibv_qp->srq;
	init_attr->cap = qp->cap;
	init_attr->qp_type = IBV_QPT_RC;
	init_attr->sq_sig_all = qp->sq_sig_all;
	return 0;
}

int usiw_destroy_qp(struct ibv_qp *ibv_qp)
{
	struct usiw_qp *qp = usiw_qp_of(ibv_qp);
	struct usiw_context *ctx = qp->ctx;

	usiw_context_lock(ctx);
	usiw_qp_reset(qp);
	usiw_udp_close(qp->udp);
	usiw_qp_cm_gone_fn cm_gone = qp->cm.gone;
	void *cm_ctx = qp->cm.ctx;
	qp->cm = (struct usiw_qp_cm){ 0 };
	usiw_context_unlock(ctx);
	/* Outside the lock: the connection manager takes its own, which it
	 * holds while calling into libusiw. */
	if (cm_gone)
		cm_gone(cm_ctx);

	if (qp->srq)
		atomic_fetch_sub(&qp->srq->users, 1);
	usiw_cq_put(qp->send_cq);
	usiw_cq_put(qp->recv_cq);
	usiw_pd_put(ibv_qp->pd);
	pthread_mutex_destroy(&ibv_qp->mutex);
	pthread_cond_destroy(&ibv_qp->cond);
	free_qp(qp);
	atomic_fetch_sub(&ctx->qp_count, 1);
	return 0;
}
