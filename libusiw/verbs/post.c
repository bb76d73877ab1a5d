/* ibv_post_send / ibv_post_recv: verbs work requests into RDMAP ones.  Both
 * end with a progress pass, so that what they queued leaves at once. */
#include "qp.h"

#include <endian.h>
#include <errno.h>

#include "context.h"
#include "limits.h"
#include "progress.h"

void usiw_sges_from_ibv(struct rdmap_sge *out, const struct ibv_sge *in, int num_sge)
{
	for (int i = 0; i < num_sge; i++)
		out[i] = (struct rdmap_sge){ in[i].addr, in[i].length, in[i].lkey };
}

static bool opcode_of(enum ibv_wr_opcode op, enum rdmap_wr_opcode *out)
{
	switch (op) {
	case IBV_WR_SEND:
		*out = RDMAP_WR_SEND;
		return true;
	case IBV_WR_SEND_WITH_IMM:
		*out = RDMAP_WR_SEND_WITH_IMM;
		return true;
	case IBV_WR_SEND_WITH_INV:
		*out = RDMAP_WR_SEND_WITH_INV;
		return true;
	case IBV_WR_RDMA_WRITE:
		*out = RDMAP_WR_RDMA_WRITE;
		return true;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		*out = RDMAP_WR_RDMA_WRITE_WITH_IMM;
		return true;
	case IBV_WR_RDMA_READ:
		*out = RDMAP_WR_RDMA_READ;
		return true;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		*out = RDMAP_WR_ATOMIC_FETCH_ADD;
		return true;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		*out = RDMAP_WR_ATOMIC_CMP_SWP;
		return true;
	default:
		return false;   /* memory windows, local invalidate, TSO, ... */
	}
}

static unsigned flags_of(unsigned send_flags)
{
	return (send_flags & IBV_SEND_SIGNALED ? RDMAP_SEND_SIGNALED : 0) |
	       (send_flags & IBV_SEND_SOLICITED ? RDMAP_SEND_SOLICITED : 0) |
	       (send_flags & IBV_SEND_INLINE ? RDMAP_SEND_INLINE : 0) |
	       (send_flags & IBV_SEND_FENCE ? RDMAP_SEND_FENCE : 0);
}

/* Immediate data is opaque: the application's four bytes (in network order,
 * as ibv_send_wr holds them) are what goes on the wire. */
static int post_one_send(struct usiw_qp *qp, const struct ibv_send_wr *wr)
{
	struct rdmap_sge sges[USIW_MAX_SGE];
	struct rdmap_send_wr rwr = {
		.wr_id = wr->wr_id,
		.flags = flags_of(wr->send_flags),
		.sg_list = sges,
		.num_sge = (uint32_t)wr->num_sge,
	};

	if (!opcode_of(wr->opcode, &rwr.opcode) || wr->num_sge < 0 ||
	    (uint32_t)wr->num_sge > qp->cap.max_send_sge)
		return EINVAL;
	usiw_sges_from_ibv(sges, wr->sg_list, wr->num_sge);
	switch (rwr.opcode) {
	case RDMAP_WR_SEND_WITH_IMM:
	case RDMAP_WR_RDMA_WRITE_WITH_IMM:
		rwr.imm_data = be32toh(wr->imm_data);
		break;
	case RDMAP_WR_SEND_WITH_INV:
		rwr.invalidate_stag = wr->invalidate_rkey;
		break;
	default:
		break;
	}
	if (rwr.opcode == RDMAP_WR_ATOMIC_FETCH_ADD || rwr.opcode == RDMAP_WR_ATOMIC_CMP_SWP) {
		rwr.remote_addr = wr->wr.atomic.remote_addr;
		rwr.rkey = wr->wr.atomic.rkey;
		rwr.compare_add = wr->wr.atomic.compare_add;
		rwr.swap = wr->wr.atomic.swap;
	} else {
		rwr.remote_addr = wr->wr.rdma.remote_addr;
		rwr.rkey = wr->wr.rdma.rkey;
	}

	if (!qp->stack) {
		/* ERR before ever reaching RTS: nothing to send it with. */
		usiw_qp_flush_wr(qp, wr->wr_id, RDMAP_WC_SEND);
		return 0;
	}
	int rc = -qp_stack_post_send(qp->stack, &rwr);
	if (rc == 0 && qp->state == IBV_QPS_RTS &&
	    (rwr.opcode == RDMAP_WR_RDMA_WRITE || rwr.opcode == RDMAP_WR_RDMA_WRITE_WITH_IMM))
		usiw_progress_write_posted(qp);
	return rc;
}

/* ibv_post_send(3): only RTS (and SQD) take work; a QP in error takes it and
 * completes it with a flush.  An RTR QP whose connection the peer opened
 * takes it too: iWARP has no RTR, a connected QP sends, and perftest's
 * ib_send_bw server sends its credits from RTR (qp_modify.c). */
int usiw_post_send(struct ibv_qp *ibv_qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct usiw_qp *qp = usiw_qp_of(ibv_qp);
	int rc = 0;

	usiw_context_lock(qp->ctx);
	usiw_progress_touch_qp(qp);
	/* As Nagle's algorithm: a QP with nothing unacknowledged sends at once
	 * (a ping-pong's latency); one with packets on their way is streaming,
	 * and its small messages may wait for the next flush, bundled several
	 * to a datagram (docs/verbs.md, Bundling). */
	const bool streaming = usiw_progress_streaming(
		qp->stack && trp_unacked(qp_stack_conn(qp->stack)) > 0);
	usiw_udp_set_streaming(qp->udp, streaming);
	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_ERR &&
	    !(qp->state == IBV_QPS_RTR && qp->stack)) {
		rc = EINVAL;
		*bad_wr = wr;
	}
	while (wr && !rc) {
		usiw_progress_post_clock(qp->ctx);
		rc = post_one_send(qp, wr);
		if (rc)
			*bad_wr = wr;
		else
			wr = wr->next;
	}
	usiw_progress_qp_changed(qp);
	/* A post refused for a full send queue is retried, perhaps without a
	 * poll_cq in between: that one receives, so the retry can succeed. */
	if (rc)
		usiw_progress_locked(qp->ctx);
	else
		usiw_progress_sent_locked(qp->ctx, streaming);
	if (!rc && qp->stack && rdmap_ep_tx_waiting(qp_stack_ep(qp->stack)))
		usiw_progress_tx_waiting();
	usiw_progress_posted(qp, streaming);
	usiw_context_unlock(qp->ctx);
	return rc;
}

static int post_one_recv(struct usiw_qp *qp, const struct ibv_recv_wr *wr)
{
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_recv_sge)
		return EINVAL;
	if (qp->stack) {
		struct rdmap_sge sges[USIW_MAX_SGE];
		usiw_sges_from_ibv(sges, wr->sg_list, wr->num_sge);
		struct rdmap_recv_wr rwr = { wr->wr_id, sges, (uint32_t)wr->num_sge };
		return -qp_stack_post_recv(qp->stack, &rwr);
	}
	if (qp->state == IBV_QPS_ERR) {
		usiw_qp_flush_wr(qp, wr->wr_id, RDMAP_WC_RECV);
		return 0;
	}
	/* INIT or RTR: kept until the stack exists. */
	if (qp->early.count == qp->cap.max_recv_wr)
		return ENOMEM;
	struct rdmap_sge *sges = &qp->early.sges[(size_t)qp->early.count * qp->cap.max_recv_sge];
	usiw_sges_from_ibv(sges, wr->sg_list, wr->num_sge);
	qp->early.wrs[qp->early.count++] =
		(struct rdmap_recv_wr){ wr->wr_id, sges, (uint32_t)wr->num_sge };
	return 0;
}

/* ibv_post_recv(3): any state but RESET; not on a QP that uses an SRQ. */
int usiw_post_recv(struct ibv_qp *ibv_qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct usiw_qp *qp = usiw_qp_of(ibv_qp);
	int rc = 0;

	usiw_context_lock(qp->ctx);
	if (qp->state == IBV_QPS_RESET || qp->srq) {
		rc = EINVAL;
		*bad_wr = wr;
	}
	while (wr && !rc) {
		rc = post_one_recv(qp, wr);
		if (rc)
			*bad_wr = wr;
		else
			wr = wr->next;
	}
	usiw_context_unlock(qp->ctx);
	return rc;
}
