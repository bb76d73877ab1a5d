/* RDMAP work completions as verbs work completions, into the QP's CQs. */
#include "qp.h"

#include <endian.h>
#include <stdio.h>

#include "cq.h"

static enum ibv_wc_status status_of(enum rdmap_wc_status s)
{
	switch (s) {
	case RDMAP_WC_SUCCESS:
		return IBV_WC_SUCCESS;
	case RDMAP_WC_LOC_LEN_ERR:
		return IBV_WC_LOC_LEN_ERR;
	case RDMAP_WC_LOC_PROT_ERR:
		return IBV_WC_LOC_PROT_ERR;
	case RDMAP_WC_LOC_QP_OP_ERR:
		return IBV_WC_LOC_QP_OP_ERR;
	case RDMAP_WC_REM_ACCESS_ERR:
		return IBV_WC_REM_ACCESS_ERR;
	case RDMAP_WC_REM_OP_ERR:
		return IBV_WC_REM_OP_ERR;
	case RDMAP_WC_REM_INV_REQ_ERR:
		return IBV_WC_REM_INV_REQ_ERR;
	case RDMAP_WC_WR_FLUSH_ERR:
		return IBV_WC_WR_FLUSH_ERR;
	case RDMAP_WC_RETRY_EXC_ERR:
		return IBV_WC_RETRY_EXC_ERR;
	case RDMAP_WC_RNR_RETRY_EXC_ERR:
		return IBV_WC_RNR_RETRY_EXC_ERR;
	case RDMAP_WC_FATAL_ERR:
		return IBV_WC_FATAL_ERR;
	}
	return IBV_WC_GENERAL_ERR;
}

static enum ibv_wc_opcode opcode_of(enum rdmap_wc_opcode op)
{
	switch (op) {
	case RDMAP_WC_SEND:
		return IBV_WC_SEND;
	case RDMAP_WC_RDMA_WRITE:
		return IBV_WC_RDMA_WRITE;
	case RDMAP_WC_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case RDMAP_WC_FETCH_ADD:
		return IBV_WC_FETCH_ADD;
	case RDMAP_WC_COMP_SWAP:
		return IBV_WC_COMP_SWAP;
	case RDMAP_WC_RECV:
		return IBV_WC_RECV;
	case RDMAP_WC_RECV_RDMA_WITH_IMM:
		return IBV_WC_RECV_RDMA_WITH_IMM;
	}
	return IBV_WC_SEND;
}

static bool is_receive(enum rdmap_wc_opcode op)
{
	return op == RDMAP_WC_RECV || op == RDMAP_WC_RECV_RDMA_WITH_IMM;
}

void usiw_qp_complete(struct usiw_qp *qp, const struct rdmap_wc *wc)
{
	struct usiw_cq *cq = is_receive(wc->opcode) ? qp->recv_cq : qp->send_cq;
	struct ibv_wc *out = usiw_cq_reserve(cq);

	/* A full CQ loses the completion; the application sized it too small
	 * (the CQ error async event is not raised yet): say so once. */
	if (!out) {
		if (!qp->cq_overrun_reported) {
			qp->cq_overrun_reported = true;
			fprintf(stderr, "usiw: QP %u: CQ overrun, completions lost\n",
				qp->vqp.qp.qp_num);
		}
		return;
	}
	*out = (struct ibv_wc){
		.wr_id = wc->wr_id,
		.status = qp->flushing_on_request && wc->status != RDMAP_WC_SUCCESS
				  ? IBV_WC_WR_FLUSH_ERR
				  : status_of(wc->status),
		.opcode = opcode_of(wc->opcode),
		.byte_len = wc->byte_len,
		.qp_num = qp->vqp.qp.qp_num,
		.src_qp = qp->peer_port,
	};
	if (wc->flags & RDMAP_WC_WITH_IMM) {
		out->wc_flags |= IBV_WC_WITH_IMM;
		out->imm_data = htobe32(wc->imm_data);
	} else if (wc->flags & RDMAP_WC_WITH_INV) {
		out->wc_flags |= IBV_WC_WITH_INV;
		out->invalidated_rkey = wc->invalidated_stag;
	}
	usiw_cq_commit(cq, wc->flags & RDMAP_WC_SOLICITED);
}

void usiw_qp_flush_wr(struct usiw_qp *qp, uint64_t wr_id, enum rdmap_wc_opcode opcode)
{
	usiw_qp_complete(qp, &(struct rdmap_wc){
				     .wr_id = wr_id,
				     .opcode = opcode,
				     .status = RDMAP_WC_WR_FLUSH_ERR,
			     });
}
