/* RDMAP endpoint, receive side: posting receives, placing every arriving
 * segment at once (in any order), and completing receives in MSN order once
 * the transport's in-order point has passed their Last segment. */
#include <errno.h>
#include <string.h>

#include "ddp-rdmap/placement.h"
#include "ddp-rdmap/rdmap_ep_internal.h"

int rdmap_ep_post_recv(struct rdmap_ep *ep, const struct rdmap_recv_wr *wr)
{
	if (ep->attr.srq || wr->num_sge > ep->attr.max_recv_sge || (wr->num_sge && !wr->sg_list))
		return -EINVAL;
	if (ep->state == RDMAP_EP_ERROR) {
		struct rdmap_wc wc = { .wr_id = wr->wr_id, .opcode = RDMAP_WC_RECV,
				       .status = RDMAP_WC_WR_FLUSH_ERR };
		ep_deliver(ep, &wc);
		return 0;
	}
	if (ep->rq_count == ep->attr.rq_depth)
		return -ENOMEM;
	struct recv_wqe *w = rq_at(ep, ep->rq_count);
	struct rdmap_sge *sges = w->sges;
	*w = (struct recv_wqe){
		.wr_id = wr->wr_id,
		.num_sge = wr->num_sge,
		.sges = sges,
		.capacity = ddp_sgl_length(wr->sg_list, wr->num_sge),
	};
	ddp_sgl_copy(sges, wr->sg_list, wr->num_sge);
	ep->rq_count++;
	return 0;
}

/* Draws SRQ receives for every MSN up to pos positions past the head. */
static bool bind_srq_receives(struct rdmap_ep *ep, uint32_t pos)
{
	while (ep->rq_count <= pos) {
		struct recv_wqe *w = rq_at(ep, ep->rq_count);
		struct rdmap_sge *sges = w->sges;
		*w = (struct recv_wqe){ .sges = sges };
		if (!rdmap_srq_take(ep->attr.srq, &w->wr_id, sges, &w->num_sge))
			return false;
		w->capacity = ddp_sgl_length(sges, w->num_sge);
		ep->rq_count++;
	}
	return true;
}

/* The receive the message with this MSN lands in (MSN n: the n-th receive),
 * in *w; false if it is not posted yet (the SRQ has none either): the
 * segment then waits for one, refused as not ready (rdmap_ep_input), where
 * RFC 5041 would terminate the stream (DDP's "no buffer").  As the MSN
 * names the receive, a later Send that finds one still waits behind it:
 * messages land in order whenever the receives come. */
static bool receive_for_msn(struct rdmap_ep *ep, uint32_t msn, const uint8_t *seg, size_t len,
			    struct recv_wqe **w)
{
	uint32_t pos = msn - ep->rq_head_msn;

	*w = NULL;
	if ((int32_t)pos < 0) {  /* completed already */
		ep_terminate(ep, term_code_untagged(TERM_DDP_U_MSN_RANGE), seg, len);
		return true;
	}
	if (pos >= ep->rq_count &&
	    !(ep->attr.srq && pos < ep->attr.rq_depth && bind_srq_receives(ep, pos)))
		return false;
	*w = rq_at(ep, pos);
	return true;
}

static bool has_immediate(enum rdmap_opcode op)
{
	return op == RDMAP_OP_IMM_DATA || op == RDMAP_OP_IMM_DATA_SE || op == RDMAP_OP_WRITE_IMM;
}

/* The receive fails with status and the stream is terminated with code. */
static void receive_error(struct rdmap_ep *ep, struct recv_wqe *w, enum rdmap_wc_status status,
			  struct term_code code, const uint8_t *seg, size_t len)
{
	w->status = status;
	ep->counters.placement_violations++;
	ep_terminate(ep, code, seg, len);
}

/* A segment of a message on QN 0 into its receive w. */
static void place_in_receive(struct rdmap_ep *ep, struct recv_wqe *w, uint32_t psn,
			     const struct ddp_hdr *h, const uint8_t *seg, size_t len,
			     const uint8_t *payload, uint32_t plen)
{
	if (w->seen && w->opcode != h->opcode) {
		receive_error(ep, w, RDMAP_WC_LOC_QP_OP_ERR,
			      term_code_rdmap_op(TERM_RDMAP_UNEXPECTED_OPCODE), seg, len);
		return;
	}
	uint64_t end = (uint64_t)h->mo + plen;
	uint64_t data_start = has_immediate(h->opcode) ? RDMAP_IMM_LEN : 0;
	if (end > UINT32_MAX || (w->last_seen && end > w->msg_len) ||
	    (h->last && end < data_start)) {
		receive_error(ep, w, RDMAP_WC_LOC_QP_OP_ERR, term_code_untagged(TERM_DDP_U_INVALID_MO),
			      seg, len);
		return;
	}
	if (end > data_start && end - data_start > w->capacity) {
		receive_error(ep, w, RDMAP_WC_LOC_LEN_ERR, term_code_untagged(TERM_DDP_U_TOO_LONG), seg,
			      len);
		return;
	}
	w->seen = true;
	w->opcode = h->opcode;
	w->inv_stag = h->inv_stag;

	if (h->mo < data_start) {
		uint64_t imm_end = end < data_start ? end : data_start;
		memcpy(w->imm + h->mo, payload, (size_t)(imm_end - h->mo));
	}
	if (end > data_start && h->opcode != RDMAP_OP_WRITE_IMM) {
		uint64_t from = h->mo > data_start ? h->mo : data_start;
		enum rdmap_mr_status st =
			ddp_place_sgl(ep->attr.mr, ep->attr.mr_ctx, w->sges, w->num_sge,
				      from - data_start, payload + (from - h->mo), (uint32_t)(end - from));
		if (st != RDMAP_MR_OK) {
			receive_error(ep, w, RDMAP_WC_LOC_PROT_ERR,
				      term_code_rdmap_op(TERM_RDMAP_CATASTROPHIC_STREAM), seg, len);
			return;
		}
	}
	w->placed += plen;
	if (h->last) {
		if (w->last_seen) {
			receive_error(ep, w, RDMAP_WC_LOC_QP_OP_ERR,
				      term_code_untagged(TERM_DDP_U_INVALID_MO), seg, len);
			return;
		}
		w->last_seen = true;
		w->last_psn = psn;
		w->msg_len = (uint32_t)end;
	}
	if (w->last_seen && w->placed > w->msg_len)
		receive_error(ep, w, RDMAP_WC_LOC_QP_OP_ERR, term_code_untagged(TERM_DDP_U_INVALID_MO),
			      seg, len);
}

/* Send family, Immediate Data, RDMA-Write-with-Immediate trailer: QN 0.
 * False if the message's receive is not posted yet. */
static bool place_untagged(struct rdmap_ep *ep, uint32_t psn, const struct ddp_hdr *h,
			   const uint8_t *seg, size_t len, const uint8_t *payload, uint32_t plen)
{
	struct recv_wqe *w;

	if (!receive_for_msn(ep, h->msn, seg, len, &w))
		return false;
	if (w)
		place_in_receive(ep, w, psn, h, seg, len, payload, plen);
	return true;
}

static void place_write(struct rdmap_ep *ep, const struct ddp_hdr *h, const uint8_t *seg,
			size_t len, const uint8_t *payload, uint32_t plen)
{
	enum rdmap_mr_status st = ddp_place_tagged(ep->attr.mr, ep->attr.mr_ctx, h->stag, h->to,
						   payload, plen, RDMAP_ACCESS_REMOTE_WRITE);
	if (st != RDMAP_MR_OK) {
		ep->counters.placement_violations++;
		ep_terminate(ep, term_code_tagged_sink(st), seg, len);
	}
}

/* The outstanding Read or atomic with this QN 1 MSN, or NULL. */
static struct send_wqe *outstanding_request(struct rdmap_ep *ep, uint32_t msn)
{
	struct ord_slot *slot = ord_at(ep, msn);
	if (!slot->used || slot->msn != msn)
		return NULL;
	return sq_at(ep, slot->sq_index);
}

static void place_read_response(struct rdmap_ep *ep, uint32_t psn, const struct ddp_hdr *h,
				const uint8_t *seg, size_t len, const uint8_t *payload, uint32_t plen)
{
	struct send_wqe *w = outstanding_request(ep, h->stag);
	if (!w || w->opcode != RDMAP_WR_RDMA_READ) {
		ep->counters.placement_violations++;
		ep_terminate(ep, term_code_tagged_sink(RDMAP_MR_INVALID_STAG), seg, len);
		return;
	}
	/* The sink TO counts from 0: it is the offset in the Read's SGE list.
	 * Segments arrive in any order, the Last one possibly first. */
	if ((h->last && w->resp_last_seen) || h->to > w->length || plen > w->length - h->to ||
	    plen > w->length - w->resp_bytes || (h->last && h->to + plen != w->length)) {
		ep->counters.placement_violations++;
		ep_terminate(ep, term_code_tagged_sink(RDMAP_MR_BOUNDS), seg, len);
		return;
	}
	enum rdmap_mr_status st = ddp_place_sgl(ep->attr.mr, ep->attr.mr_ctx, w->sges, w->num_sge,
						h->to, payload, plen);
	if (st != RDMAP_MR_OK) {
		w->status = RDMAP_WC_LOC_PROT_ERR;
		ep->counters.placement_violations++;
		ep_terminate(ep, term_code_tagged_sink(st), seg, len);
		return;
	}
	w->resp_bytes += plen;
	if (h->last) {
		w->resp_last_seen = true;
		w->resp_last_psn = psn;
	}
}

static void atomic_response(struct rdmap_ep *ep, uint32_t psn, const uint8_t *seg, size_t len,
			    const uint8_t *payload, uint32_t plen)
{
	struct rdmap_atomic_resp resp;
	rdmap_atomic_resp_decode(payload, plen, &resp);  /* length checked with the header */
	struct send_wqe *w = outstanding_request(ep, resp.req_id);
	if (!w || !wr_is_atomic(w->opcode) || w->resp_last_seen) {
		ep_terminate(ep, term_code_rdmap_op(TERM_RDMAP_UNEXPECTED_OPCODE), seg, len);
		return;
	}
	/* the original value lands in the WR's buffer in host byte order */
	enum rdmap_mr_status st = ddp_place_sgl(ep->attr.mr, ep->attr.mr_ctx, w->sges, w->num_sge, 0,
						&resp.orig, sizeof(resp.orig));
	if (st != RDMAP_MR_OK) {
		w->status = RDMAP_WC_LOC_PROT_ERR;
		ep->counters.placement_violations++;
		ep_terminate(ep, term_code_rdmap_op(TERM_RDMAP_CATASTROPHIC_STREAM), seg, len);
		return;
	}
	w->resp_bytes = sizeof(resp.orig);
	w->resp_last_seen = true;
	w->resp_last_psn = psn;
}

/* The send WR a received Terminate is about, from the header it copied. */
static struct send_wqe *terminate_culprit(struct rdmap_ep *ep, const struct rdmap_terminate *t)
{
	struct ddp_hdr c;
	if (!t->ddp_hdr_copied || ddp_hdr_parse(t->ddp_hdr, t->ddp_hdr_len, &c) != 0)
		return ep_oldest_started(ep);
	if (!c.tagged && c.qn == DDP_QN_READ_REQ) {
		struct send_wqe *w = outstanding_request(ep, c.msn);
		return w ? w : ep_oldest_started(ep);
	}
	for (uint32_t i = ep->sq_head; i != ep->sq_tail && sq_at(ep, i)->started; i = sq_next(ep, i)) {
		struct send_wqe *w = sq_at(ep, i);
		bool on_qn0 = wr_is_send(w->opcode) || w->opcode == RDMAP_WR_RDMA_WRITE_WITH_IMM;
		if (!c.tagged && c.qn == DDP_QN_SEND && on_qn0 && w->msn == c.msn)
			return w;
		if (c.tagged && c.opcode == RDMAP_OP_WRITE && wr_is_write(w->opcode) &&
		    w->rkey == c.stag && c.to - w->remote_addr <= w->length)
			return w;
	}
	return ep_oldest_started(ep);
}

static void terminate_received(struct rdmap_ep *ep, const uint8_t *payload, uint32_t plen)
{
	struct rdmap_terminate t;
	ep->counters.terminates_received++;
	if (rdmap_terminate_decode(payload, plen, &t) != 0) {
		ep->counters.malformed_segments++;
		/* still the peer's end of the stream, reason unknown */
		memset(&t, 0, sizeof(t));
		t.layer = TERM_LAYER_RDMAP;
		t.etype = TERM_RDMAP_ETYPE_REMOTE_OPERATION;
		t.ecode = TERM_RDMAP_UNSPECIFIED;
	}
	ep->term_recv = t;
	ep->term_recv_valid = true;
	struct send_wqe *w = terminate_culprit(ep, &t);
	if (w && w->status == RDMAP_WC_SUCCESS)
		w->status = term_wc_status(&t);
	ep_enter_error(ep);
}

/* 0, or -EAGAIN for a segment whose receive is not posted yet, which
 * changed nothing, not even the counters: it comes again. */
static int input_segment(struct rdmap_ep *ep, uint32_t psn, const uint8_t *seg, size_t len)
{
	ep->counters.rx_segments++;
	struct ddp_hdr h;
	int off = ddp_hdr_decode(seg, len, &h);
	if (off >= 0 && len - (size_t)off > UINT32_MAX)
		off = -DDP_ERR_LENGTH;
	if (off < 0) {
		ep->counters.malformed_segments++;
		ep_terminate(ep, term_code_malformed(off, seg, len), seg, len);
		return 0;
	}
	const uint8_t *payload = seg + off;
	uint32_t plen = (uint32_t)(len - (size_t)off);
	ep->counters.rx[h.opcode].bytes += plen;
	if (h.last)
		ep->counters.rx[h.opcode].msgs++;
	ep->rx_mid_message = !h.last;
	ep->rx_mid_write = !h.last && h.opcode == RDMAP_OP_WRITE;

	switch (h.opcode) {
	case RDMAP_OP_WRITE:
		place_write(ep, &h, seg, len, payload, plen);
		break;
	case RDMAP_OP_READ_RESP:
		place_read_response(ep, psn, &h, seg, len, payload, plen);
		break;
	case RDMAP_OP_READ_REQ:
	case RDMAP_OP_ATOMIC_REQ:
		responder_accept(ep, psn, &h, seg, len, (size_t)off);
		break;
	case RDMAP_OP_ATOMIC_RESP:
		atomic_response(ep, psn, seg, len, payload, plen);
		break;
	case RDMAP_OP_TERMINATE:
		terminate_received(ep, payload, plen);
		break;
	default:  /* Send family, Immediate Data, Write-with-Immediate trailer */
		if (!place_untagged(ep, psn, &h, seg, len, payload, plen)) {
			/* It comes again: not counted now (rare enough to be
			 * taken back rather than looked for before counting). */
			ep->counters.rx[h.opcode].bytes -= plen;
			ep->counters.rx[h.opcode].msgs -= h.last;
			return -EAGAIN;
		}
		break;
	}
	return 0;
}

int rdmap_ep_input(struct rdmap_ep *ep, uint32_t psn, const void *seg, size_t len)
{
	if (ep->state != RDMAP_EP_RTS)
		return -ENOTCONN;
	uint64_t terminates = ep->counters.terminates_sent;
	if (input_segment(ep, psn, seg, len))
		return -EAGAIN;
	return ep->counters.terminates_sent != terminates ? -EPROTO : 0;
}

/* Completes the head receive; false if it failed the stream instead. */
static bool complete_receive(struct rdmap_ep *ep, struct recv_wqe *w)
{
	struct rdmap_wc wc = {
		.wr_id = w->wr_id,
		.opcode = RDMAP_WC_RECV,
		.status = RDMAP_WC_SUCCESS,
		.byte_len = w->msg_len,
	};
	struct rdmap_imm imm;
	switch (w->opcode) {
	case RDMAP_OP_SEND_INV:
	case RDMAP_OP_SEND_SE_INV: {
		enum rdmap_mr_status st = ep->attr.mr->invalidate(ep->attr.mr_ctx, w->inv_stag);
		if (st != RDMAP_MR_OK) {
			receive_error(ep, w, RDMAP_WC_LOC_PROT_ERR,
				      term_code_rdmap_access(st == RDMAP_MR_INVALID_STAG
								     ? st : RDMAP_MR_CANNOT_INVALIDATE),
				      NULL, 0);
			return false;
		}
		wc.flags |= RDMAP_WC_WITH_INV;
		wc.invalidated_stag = w->inv_stag;
		break;
	}
	case RDMAP_OP_IMM_DATA:
	case RDMAP_OP_IMM_DATA_SE:
		rdmap_imm_decode(w->imm, sizeof(w->imm), &imm);
		wc.flags |= RDMAP_WC_WITH_IMM;
		wc.imm_data = imm.imm;
		wc.byte_len = w->msg_len - RDMAP_IMM_LEN;
		break;
	case RDMAP_OP_WRITE_IMM:
		rdmap_imm_decode(w->imm, sizeof(w->imm), &imm);
		wc.opcode = RDMAP_WC_RECV_RDMA_WITH_IMM;
		wc.flags |= RDMAP_WC_WITH_IMM;
		wc.imm_data = imm.imm;
		wc.byte_len = imm.write_len;
		break;
	default:
		break;
	}
	if (w->opcode == RDMAP_OP_SEND_SE || w->opcode == RDMAP_OP_SEND_SE_INV ||
	    w->opcode == RDMAP_OP_IMM_DATA_SE)
		wc.flags |= RDMAP_WC_SOLICITED;
	rq_pop(ep);
	ep->rq_head_msn++;
	ep_deliver(ep, &wc);
	return true;
}

void rq_complete_ready(struct rdmap_ep *ep)
{
	while (ep->state == RDMAP_EP_RTS && ep->rq_count) {
		struct recv_wqe *w = &ep->rq[ep->rq_head];
		if (!w->last_seen || !psn_before(w->last_psn, ep->in_order_psn))
			return;
		if (w->placed != w->msg_len) {
			/* the in-order point passed the Last segment, so every
			 * segment is in: bytes are missing or doubled */
			receive_error(ep, w, RDMAP_WC_LOC_QP_OP_ERR,
				      term_code_untagged(TERM_DDP_U_INVALID_MO), NULL, 0);
			return;
		}
		if (!complete_receive(ep, w))
			return;
	}
}
