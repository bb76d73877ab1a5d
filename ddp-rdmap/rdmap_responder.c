/* RDMAP endpoint, responder side: RDMA Read Requests and Atomic Requests
 * from the peer.  They are accepted on arrival (within IRD), executed in MSN
 * order once the in-order point has passed them (so they see every earlier
 * Write), and answered in that order. */
#include <errno.h>
#include <string.h>

#include "ddp-rdmap/rdmap_ep_internal.h"

#define ATOMIC_ALIGN 8u

void responder_accept(struct rdmap_ep *ep, uint32_t psn, const struct ddp_hdr *h,
		      const uint8_t *seg, size_t len, size_t payload_off)
{
	uint32_t pos = h->msn - ep->ird_free_msn;

	if (pos >= 0x80000000u) {  /* before every live request: a replay */
		ep_terminate(ep, term_code_untagged(TERM_DDP_U_MSN_RANGE), seg, len);
		return;
	}
	if (pos >= ep->attr.ird) {  /* the peer exceeded our IRD */
		ep_terminate(ep, term_code_untagged(TERM_DDP_U_NO_BUFFER), seg, len);
		return;
	}
	struct inbound_req *r = ird_at(ep, h->msn);
	if (r->state != INBOUND_FREE) {
		ep_terminate(ep, term_code_untagged(TERM_DDP_U_MSN_RANGE), seg, len);
		return;
	}
	const uint8_t *payload = seg + payload_off;
	size_t plen = len - payload_off;
	int err = h->opcode == RDMAP_OP_READ_REQ ? rdmap_read_req_decode(payload, plen, &r->read)
						 : rdmap_atomic_req_decode(payload, plen, &r->atomic);
	if (err) {
		ep->counters.malformed_segments++;
		ep_terminate(ep, term_code_malformed(err, seg, len), seg, len);
		return;
	}
	r->state = INBOUND_ARRIVED;
	ep->ird_arrived++;
	r->opcode = h->opcode;
	r->psn = psn;
	r->resp_sent = 0;
	r->raw_len = (uint8_t)(len < sizeof(r->raw) ? len : sizeof(r->raw));
	memcpy(r->raw, seg, r->raw_len);
}

static void refuse(struct rdmap_ep *ep, struct inbound_req *r, struct term_code code)
{
	ep->counters.placement_violations++;
	ep_terminate(ep, code, r->raw, r->raw_len);
}

static void execute_read(struct rdmap_ep *ep, struct inbound_req *r)
{
	const struct rdmap_read_req *rr = &r->read;
	void *addr;
	enum rdmap_mr_status st = rr->size == 0 ? RDMAP_MR_OK
			       : ep->attr.mr->lookup(ep->attr.mr_ctx, rr->src_stag, rr->src_to,
						     rr->size, RDMAP_ACCESS_REMOTE_READ, &addr);
	if (st != RDMAP_MR_OK) {
		refuse(ep, r, term_code_rdmap_access(st));
		return;
	}
	r->state = INBOUND_RESPONDING;
}

static uint64_t masked_merge(uint64_t old, uint64_t value, uint64_t mask)
{
	return (old & ~mask) | (value & mask);
}

static void execute_atomic(struct rdmap_ep *ep, struct inbound_req *r)
{
	const struct rdmap_atomic_req *a = &r->atomic;
	/* Misaligned targets and masked Fetch-Add (unsupported) are invalid requests. */
	if (a->to % ATOMIC_ALIGN ||
	    (a->op == RDMAP_ATOMIC_FETCH_ADD && a->add_swap_mask != UINT64_MAX)) {
		refuse(ep, r, term_code_rdmap_op(TERM_RDMAP_UNSPECIFIED));
		return;
	}
	void *addr;
	enum rdmap_mr_status st = ep->attr.mr->lookup(ep->attr.mr_ctx, a->stag, a->to, sizeof(uint64_t),
						      RDMAP_ACCESS_REMOTE_ATOMIC, &addr);
	if (st != RDMAP_MR_OK) {
		refuse(ep, r, term_code_rdmap_access(st));
		return;
	}
	if ((uintptr_t)addr % ATOMIC_ALIGN) {
		refuse(ep, r, term_code_rdmap_op(TERM_RDMAP_UNSPECIFIED));
		return;
	}
	/* atomic against the application's own accesses to the word, too */
	uint64_t *target = addr;
	uint64_t orig;
	if (a->op == RDMAP_ATOMIC_FETCH_ADD) {
		orig = __atomic_fetch_add(target, a->add_swap, __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_load_n(target, __ATOMIC_SEQ_CST);
		for (;;) {
			if (a->op == RDMAP_ATOMIC_CMP_SWAP && ((orig ^ a->compare) & a->compare_mask))
				break;
			uint64_t next = masked_merge(orig, a->add_swap, a->add_swap_mask);
			if (__atomic_compare_exchange_n(target, &orig, next, false, __ATOMIC_SEQ_CST,
							__ATOMIC_SEQ_CST))
				break;
		}
	}
	rdmap_atomic_resp_encode(&(struct rdmap_atomic_resp){ .req_id = a->req_id, .orig = orig },
				 r->atomic_resp);
	r->state = INBOUND_RESPONDING;
}

void responder_execute_ready(struct rdmap_ep *ep)
{
	/* ird_arrived first: the entry is a line of its own, which each
	 * message in would otherwise read. */
	while (ep->ird_arrived && ep->state == RDMAP_EP_RTS &&
	       ep->ird_exec_msn - ep->ird_free_msn < ep->attr.ird) {
		struct inbound_req *r = ird_at(ep, ep->ird_exec_msn);
		if (r->state != INBOUND_ARRIVED || !psn_before(r->psn, ep->in_order_psn))
			return;
		if (r->opcode == RDMAP_OP_READ_REQ)
			execute_read(ep, r);
		else
			execute_atomic(ep, r);
		ep->ird_exec_msn++;
		ep->ird_arrived--;
	}
}

static int send_read_response(struct rdmap_ep *ep, struct inbound_req *r, int *sent)
{
	const struct rdmap_read_req *rr = &r->read;

	while (r->state == INBOUND_RESPONDING) {
		uint32_t left = rr->size - r->resp_sent;
		uint32_t n = left < ep->attr.max_seg_payload ? left : ep->attr.max_seg_payload;
		void *data = NULL;
		/* checked again per segment: the MR may have gone since execution */
		enum rdmap_mr_status st = n == 0 ? RDMAP_MR_OK
				       : ep->attr.mr->lookup(ep->attr.mr_ctx, rr->src_stag,
							     rr->src_to + r->resp_sent, n,
							     RDMAP_ACCESS_REMOTE_READ, &data);
		if (st != RDMAP_MR_OK) {
			refuse(ep, r, term_code_rdmap_access(st));
			return -EIO;
		}
		struct ddp_hdr h = {
			.tagged = true,
			.last = n == left,
			.opcode = RDMAP_OP_READ_RESP,
			.stag = rr->sink_stag,
			.to = rr->sink_to + r->resp_sent,
		};
		int err = ep_xmit(ep, &r->tx, &h, NULL, 0, data, n);
		if (err)
			return err;
		r->resp_sent += n;
		(*sent)++;
		if (h.last)
			r->state = INBOUND_SENT;
	}
	return 0;
}

static int send_atomic_response(struct rdmap_ep *ep, struct inbound_req *r, int *sent)
{
	struct ddp_hdr h = {
		.last = true,
		.opcode = RDMAP_OP_ATOMIC_RESP,
		.qn = DDP_QN_ATOMIC_RESP,
		.msn = ep->next_atomic_resp_msn,
	};
	int err = ep_xmit(ep, &r->tx, &h, r->atomic_resp, sizeof(r->atomic_resp), NULL, 0);
	if (err)
		return err;
	ep->next_atomic_resp_msn++;
	r->state = INBOUND_SENT;
	(*sent)++;
	return 0;
}

int responder_transmit(struct rdmap_ep *ep, int *sent)
{
	int err = 0;

	for (uint32_t msn = ep->ird_free_msn; msn != ep->ird_exec_msn && !err; msn++) {
		struct inbound_req *r = ird_at(ep, msn);
		if (r->state != INBOUND_RESPONDING)
			continue;
		err = r->opcode == RDMAP_OP_READ_REQ ? send_read_response(ep, r, sent)
						     : send_atomic_response(ep, r, sent);
	}
	if (ep->state == RDMAP_EP_RTS)
		responder_release_acked(ep);
	return err;
}

void responder_release_acked(struct rdmap_ep *ep)
{
	while (ep->ird_free_msn != ep->ird_exec_msn) {
		struct inbound_req *r = ird_at(ep, ep->ird_free_msn);
		if (r->state != INBOUND_SENT || r->tx.unacked)
			return;
		r->state = INBOUND_FREE;
		ep->ird_free_msn++;
	}
}
