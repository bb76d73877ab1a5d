/* RDMAP endpoint life cycle: creation, completion delivery, the error state
 * (Terminate, transport failure, flush) and acknowledgements. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ddp-rdmap/rdmap_ep_internal.h"

/* The smallest segment payload that still holds every control message. */
#define MIN_SEG_PAYLOAD 128u
/* The deepest queue or table: an ORD/IRD ring (a power of two) and an SQ
 * ring (one more entry) still count their entries in 32 bits. */
#define MAX_DEPTH (1u << 31)

static bool attr_valid(const struct rdmap_ep_attr *a)
{
	return a->sq_depth && a->sq_depth <= MAX_DEPTH && a->rq_depth <= MAX_DEPTH &&
	       a->max_send_sge && a->max_recv_sge && a->ord && a->ord <= MAX_DEPTH && a->ird &&
	       a->ird <= MAX_DEPTH && (a->srq || a->rq_depth) && a->max_seg_payload >= MIN_SEG_PAYLOAD &&
	       a->transport && a->transport->xmit && a->mr && a->mr->lookup &&
	       a->mr->invalidate && a->complete &&
	       (!a->srq || rdmap_srq_max_sge(a->srq) <= a->max_recv_sge);
}

struct rdmap_ep *rdmap_ep_create(const struct rdmap_ep_attr *attr)
{
	if (!attr_valid(attr)) {
		errno = EINVAL;
		return NULL;
	}
	/* Aligned to a cache line: rdmap_ep_internal.h orders its fields by
	 * line. */
	struct rdmap_ep *ep = aligned_alloc(64, (sizeof(*ep) + 63) & ~(size_t)63);
	if (!ep)
		return NULL;
	*ep = (struct rdmap_ep){0};
	ep->attr = *attr;
	/* an SRQ endpoint binds at most rq_depth SRQ receives at a time */
	if (!ep->attr.rq_depth)
		ep->attr.rq_depth = attr->sq_depth;
	const struct rdmap_ep_attr *a = &ep->attr;
	ep->sq_size = a->sq_depth + 1;
	ep->ord_mask = ring_mask_for(a->ord);
	ep->ird_mask = ring_mask_for(a->ird);
	const size_t sq_size = ep->sq_size, rq_size = a->rq_depth;

	/* Line-aligned: each send_wqe is two whole lines. */
	ep->sq = aligned_alloc(64, sq_size * sizeof(*ep->sq));
	ep->sq_sges = calloc(sq_size * a->max_send_sge, sizeof(*ep->sq_sges));
	ep->sq_atomic = calloc(sq_size, sizeof(*ep->sq_atomic));
	ep->ord = calloc((size_t)ep->ord_mask + 1, sizeof(*ep->ord));
	ep->rq = aligned_alloc(64, rq_size * sizeof(*ep->rq));
	ep->rq_sges = calloc(rq_size * a->max_recv_sge, sizeof(*ep->rq_sges));
	ep->ird = calloc((size_t)ep->ird_mask + 1, sizeof(*ep->ird));
	if (!ep->sq || !ep->sq_sges || !ep->sq_atomic ||
	    !ep->ord || !ep->rq || !ep->rq_sges || !ep->ird) {
		rdmap_ep_destroy(ep);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < sq_size; i++)
		ep->sq[i] = (struct send_wqe){ .tx.kind = TX_OWNER_SEND_WQE,
					       .sges = &ep->sq_sges[i * a->max_send_sge] };
	for (size_t i = 0; i < rq_size; i++)
		ep->rq[i] = (struct recv_wqe){ .sges = &ep->rq_sges[i * a->max_recv_sge] };
	for (uint32_t i = 0; i <= ep->ird_mask; i++)
		ep->ird[i].tx.kind = TX_OWNER_INBOUND_REQ;
	ep->term_tx.kind = TX_OWNER_TERMINATE;
	ep->next_send_msn = DDP_FIRST_MSN;
	ep->next_rreq_msn = DDP_FIRST_MSN;
	ep->rq_head_msn = DDP_FIRST_MSN;
	ep->ird_free_msn = DDP_FIRST_MSN;
	ep->ird_exec_msn = DDP_FIRST_MSN;
	ep->next_atomic_resp_msn = DDP_FIRST_MSN;
	ep->state = RDMAP_EP_RTS;
	return ep;
}

void rdmap_ep_destroy(struct rdmap_ep *ep)
{
	if (!ep)
		return;
	free(ep->sq);
	free(ep->sq_sges);
	free(ep->sq_inline);
	free(ep->sq_atomic);
	free(ep->ord);
	free(ep->rq);
	free(ep->rq_sges);
	free(ep->ird);
	free(ep);
}

void ep_deliver(struct rdmap_ep *ep, const struct rdmap_wc *wc)
{
	ep->attr.complete(ep->attr.complete_ctx, wc);
}

struct send_wqe *ep_oldest_started(struct rdmap_ep *ep)
{
	if (ep->sq_head == ep->sq_tail)
		return NULL;
	struct send_wqe *w = sq_at(ep, ep->sq_head);
	return w->started ? w : NULL;
}

enum rdmap_wc_opcode send_wc_opcode(enum rdmap_wr_opcode op)
{
	switch (op) {
	case RDMAP_WR_RDMA_WRITE:
	case RDMAP_WR_RDMA_WRITE_WITH_IMM:
		return RDMAP_WC_RDMA_WRITE;
	case RDMAP_WR_RDMA_READ:
		return RDMAP_WC_RDMA_READ;
	case RDMAP_WR_ATOMIC_FETCH_ADD:
		return RDMAP_WC_FETCH_ADD;
	case RDMAP_WR_ATOMIC_CMP_SWP:
		return RDMAP_WC_COMP_SWAP;
	default:
		return RDMAP_WC_SEND;
	}
}

static void flush_send_queue(struct rdmap_ep *ep)
{
	for (; ep->sq_head != ep->sq_tail; ep->sq_head = sq_next(ep, ep->sq_head)) {
		struct send_wqe *w = sq_at(ep, ep->sq_head);
		struct rdmap_wc wc = {
			.wr_id = w->wr_id,
			.opcode = send_wc_opcode(w->opcode),
			.status = w->status != RDMAP_WC_SUCCESS ? w->status : RDMAP_WC_WR_FLUSH_ERR,
		};
		ep_deliver(ep, &wc);
	}
	ep->sq_tx = ep->sq_tail;
	ep->ord_used = 0;
	memset(ep->ord, 0, ((size_t)ep->ord_mask + 1) * sizeof(*ep->ord));
}

static void flush_recv_queue(struct rdmap_ep *ep)
{
	while (ep->rq_count) {
		struct recv_wqe *w = rq_at(ep, 0);
		struct rdmap_wc wc = {
			.wr_id = w->wr_id,
			.opcode = RDMAP_WC_RECV,
			.status = w->status != RDMAP_WC_SUCCESS ? w->status : RDMAP_WC_WR_FLUSH_ERR,
		};
		rq_pop(ep);
		ep_deliver(ep, &wc);
	}
}

void ep_enter_error(struct rdmap_ep *ep)
{
	if (ep->state == RDMAP_EP_ERROR)
		return;
	ep->state = RDMAP_EP_ERROR;
	flush_send_queue(ep);
	flush_recv_queue(ep);
	for (uint32_t i = 0; i <= ep->ird_mask; i++)
		ep->ird[i].state = INBOUND_FREE;
	ep->ird_arrived = 0;
}

void ep_terminate(struct rdmap_ep *ep, struct term_code code, const uint8_t *seg, size_t len)
{
	if (ep->state == RDMAP_EP_ERROR)
		return;
	term_build(&ep->term_sent, code, seg, len);
	ep->term_sent_valid = true;
	ep->term_len = rdmap_terminate_encode(&ep->term_sent, ep->term_buf);
	ep->term_pending = true;
	ep->counters.terminates_sent++;
	ep_enter_error(ep);
}

void rdmap_ep_fail(struct rdmap_ep *ep, enum rdmap_fail_reason reason)
{
	if (ep->state == RDMAP_EP_ERROR)
		return;
	struct send_wqe *w = ep_oldest_started(ep);
	static const enum rdmap_wc_status status_of[] = {
		[RDMAP_FAIL_RETRY_EXCEEDED] = RDMAP_WC_RETRY_EXC_ERR,
		[RDMAP_FAIL_RNR_EXCEEDED] = RDMAP_WC_RNR_RETRY_EXC_ERR,
		[RDMAP_FAIL_PEER_DEAD] = RDMAP_WC_RETRY_EXC_ERR,
		[RDMAP_FAIL_LOCAL] = RDMAP_WC_FATAL_ERR,
	};
	if (w && w->status == RDMAP_WC_SUCCESS)
		w->status = status_of[reason];
	/* the transport is gone: no Terminate can reach the peer */
	ep->term_pending = false;
	ep_enter_error(ep);
}

void rdmap_ep_acked(struct rdmap_ep *ep, void *cookie)
{
	struct tx_owner *owner = cookie;

	if (owner->unacked)
		owner->unacked--;
	if (ep->state == RDMAP_EP_ERROR)
		return;
	if (owner->kind == TX_OWNER_SEND_WQE)
		sq_complete_ready(ep);
	else if (owner->kind == TX_OWNER_INBOUND_REQ)
		responder_release_acked(ep);
}

void rdmap_ep_in_order(struct rdmap_ep *ep, uint32_t next_psn)
{
	if (ep->state == RDMAP_EP_ERROR)
		return;
	ep->in_order_valid = true;
	ep->in_order_psn = next_psn;
	responder_execute_ready(ep);
	if (ep->state == RDMAP_EP_RTS)
		rq_complete_ready(ep);
	if (ep->state == RDMAP_EP_RTS)
		sq_complete_ready(ep);
}

enum rdmap_ep_state rdmap_ep_state(const struct rdmap_ep *ep)
{
	return ep->state;
}

const struct rdmap_ep_counters *rdmap_ep_counters(const struct rdmap_ep *ep)
{
	return &ep->counters;
}

bool rdmap_ep_rx_mid_message(const struct rdmap_ep *ep)
{
	return ep->rx_mid_message;
}

bool rdmap_ep_rx_mid_write(const struct rdmap_ep *ep)
{
	return ep->rx_mid_write;
}

bool rdmap_ep_tx_waiting(const struct rdmap_ep *ep)
{
	return ep->state == RDMAP_EP_RTS && ep->sq_tx != ep->sq_tail;
}

/* The whole endpoint; then the send WQE that the next post fills, and the
 * receive WQEs that the next Send consumes and that the next post_recv
 * fills, with their scatter/gather entries (attr_valid: at least one each,
 * so each place is memory of the endpoint, which a load needs).
 * A ping-pong over many QPs in turn reposts each receive right after it
 * completes, before it answers, and that post reads its WQE: warmed too,
 * qp-lat's half round trip over 1024 QPs was 0.025-0.065 us shorter, with
 * QP 0 alone the same (five runs, alternate blocks with and without). */
void rdmap_ep_warm(const struct rdmap_ep *ep, enum usiw_warm how)
{
	const char *fields = (const char *)ep;
	for (size_t off = 0; off < sizeof(*ep); off += 64)
		usiw_warm_line(fields + off, how);
}

/* The SQ entry at pos: its WQE's two lines and its first SGE's. */
static void warm_sq_entry(const struct rdmap_ep *ep, uint32_t pos, enum usiw_warm how)
{
	usiw_warm_line(&ep->sq[pos], how);
	usiw_warm_line((const char *)&ep->sq[pos] + 64, how);
	usiw_warm_line(&ep->sq_sges[(size_t)pos * ep->attr.max_send_sge], how);
}

void rdmap_ep_warm_queues(const struct rdmap_ep *ep, enum usiw_warm how)
{
	const uint32_t rq_tail = ring_advance(ep->rq_head, ep->rq_count, ep->attr.rq_depth);

	warm_sq_entry(ep, ep->sq_tail, how);
	usiw_warm_line(&ep->rq[ep->rq_head], how);
	usiw_warm_line(&ep->rq_sges[(size_t)ep->rq_head * ep->attr.max_recv_sge], how);
	usiw_warm_line(&ep->rq[rq_tail], how);
	usiw_warm_line(&ep->rq_sges[(size_t)rq_tail * ep->attr.max_recv_sge], how);
}

/* An application in a ping-pong writes the message it sends and reads the
 * one it receives: over many QPs in turn each is a line that has left the
 * cache, on the way of the round trip.  It mostly sends from the same
 * buffer each time on a QP, and a QP's SQ, empty between its messages,
 * starts again at the same entry, whose scatter/gather entry still names
 * that buffer. */
void rdmap_ep_warm_buffers(const struct rdmap_ep *ep)
{
	const struct recv_wqe *next_recv = &ep->rq[ep->rq_head];
	const struct rdmap_sge *last_sent = ep->sq[ep->sq_tail].sges;

	if (ep->rq_count && next_recv->num_sge && next_recv->sges[0].length)
		usiw_warm_line((const void *)(uintptr_t)next_recv->sges[0].addr, USIW_WARM_PREFETCH);
	if (last_sent->length)
		usiw_warm_line((const void *)(uintptr_t)last_sent->addr, USIW_WARM_PREFETCH);
}

bool rdmap_ep_warm_send_entry(const struct rdmap_ep *ep, uint32_t ahead, enum usiw_warm how)
{
	const uint32_t posted = ep->sq_tail >= ep->sq_head ? ep->sq_tail - ep->sq_head
							   : ep->sq_tail + ep->sq_size - ep->sq_head;
	if (posted + ahead >= ep->attr.sq_depth)
		return false;
	warm_sq_entry(ep, ring_advance(ep->sq_tail, ahead, ep->sq_size), how);
	return true;
}

bool rdmap_ep_last_terminate(const struct rdmap_ep *ep, bool sent, struct rdmap_terminate *out)
{
	if (sent ? !ep->term_sent_valid : !ep->term_recv_valid)
		return false;
	*out = sent ? ep->term_sent : ep->term_recv;
	return true;
}
