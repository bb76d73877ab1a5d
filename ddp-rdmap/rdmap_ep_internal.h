/* State of an RDMAP endpoint, shared by its send side (rdmap_tx.c), receive
 * side (rdmap_rx.c), responder (rdmap_responder.c) and life cycle
 * (rdmap_ep.c).  Not part of the library's interface. */
#ifndef USIW_DDP_RDMAP_EP_INTERNAL_H
#define USIW_DDP_RDMAP_EP_INTERNAL_H

#include "ddp-rdmap/header.h"
#include "ddp-rdmap/rdmap.h"
#include "ddp-rdmap/ring.h"
#include "ddp-rdmap/segment.h"
#include "ddp-rdmap/terminate.h"

/* RFC 5041: the MSN of every untagged queue starts at 1. */
#define DDP_FIRST_MSN 1u

/* Whatever a transmitted segment's cookie points to: it counts the segments
 * the transport still references. */
enum tx_owner_kind {
	TX_OWNER_SEND_WQE,
	TX_OWNER_INBOUND_REQ,
	TX_OWNER_TERMINATE,
};

struct tx_owner {
	enum tx_owner_kind kind;
	uint32_t unacked;
};

/* One posted send WR from post to completion, in two cache lines: the SQ
 * is aligned to a line, and a message's post, transmission and completion
 * touch only its own entry's lines (with many QPs each is a miss).  Hence
 * the byte-sized status and the atomics' operands kept apart (send_atomic). */
struct send_wqe {
	struct tx_owner tx;  /* first: the cookie of its segments */
	uint64_t wr_id;
	struct rdmap_sge *sges;  /* max_send_sge entries (or the inline buffer) */
	uint64_t remote_addr;
	enum rdmap_wr_opcode opcode;
	unsigned flags;
	uint32_t num_sge;
	uint32_t length;
	uint32_t imm;
	uint32_t inv_stag;
	uint32_t rkey;
	uint32_t msn;        /* QN 0 (sends, trailing immediate) or QN 1 (read, atomic) */

	/* Read Response / Atomic Response at the requester */
	uint32_t resp_bytes;
	uint32_t resp_last_psn;

	uint8_t status;      /* enum rdmap_wc_status: SUCCESS until something fails it */
	bool resp_last_seen;

	/* transmission */
	bool started;        /* first segment sent; msn is assigned */
	bool message_sent;   /* the main message's Last segment is sent */
	bool tx_done;        /* everything of this WR is sent */
	bool imm_pending;    /* the Immediate Data field is still to be sent */
	struct ddp_seg_cursor cursor;
};
_Static_assert(sizeof(struct send_wqe) == 128, "a send_wqe is two cache lines");

/* An atomic's operands and its encoded request, by SQ index. */
struct send_atomic {
	uint64_t compare_add;
	uint64_t swap;
	uint8_t req[RDMAP_ATOMIC_REQ_LEN];  /* referenced by the transport */
};

/* One posted (or SRQ-bound) receive, bound to the MSN of its position: one
 * cache line (the RQ is line-aligned), as send_wqe says why. */
struct recv_wqe {
	uint64_t wr_id;
	struct rdmap_sge *sges;
	uint64_t capacity;
	uint64_t placed;      /* message bytes placed (immediate field included) */
	uint32_t num_sge;
	enum rdmap_opcode opcode;
	uint32_t inv_stag;
	uint32_t last_psn;
	uint32_t msg_len;
	uint8_t imm[RDMAP_IMM_LEN];
	uint8_t status;       /* enum rdmap_wc_status */
	bool seen;            /* a segment of its message has arrived */
	bool last_seen;
};
_Static_assert(sizeof(struct recv_wqe) == 64, "a recv_wqe is one cache line");

enum inbound_state {
	INBOUND_FREE,
	INBOUND_ARRIVED,     /* waiting for the in-order point to pass it */
	INBOUND_RESPONDING,  /* executed; response segments being sent */
	INBOUND_SENT,        /* response sent, waiting for its acks */
};

/* A Read Request or Atomic Request received from the peer (IRD resource). */
struct inbound_req {
	struct tx_owner tx;  /* first: the cookie of the response's segments */
	enum inbound_state state;
	enum rdmap_opcode opcode;
	uint32_t psn;
	struct rdmap_read_req read;
	struct rdmap_atomic_req atomic;
	uint32_t resp_sent;  /* Read Response bytes sent */
	uint8_t atomic_resp[RDMAP_ATOMIC_RESP_LEN];
	/* the request segment's headers, copied into a Terminate if it fails */
	uint8_t raw[DDP_UNTAGGED_PAYLOAD_OFF + RDMAP_ATOMIC_REQ_LEN];
	uint8_t raw_len;
};

/* An outstanding Read or atomic, by its QN 1 MSN (the Read's sink STag, the
 * atomic's request identifier). */
struct ord_slot {
	bool used;
	uint32_t msn;
	uint32_t sq_index;
};

/* What each message sent or received reads or writes comes first: the
 * queues' indices and state, then the attributes, then the counters, and
 * the Terminate's buffers last.  With a thousand QPs an endpoint has left
 * the cache by its next message, and every line a message touches is a miss
 * (docs/bench.md, "Many QPs").  rdmap_ep_create aligns the struct to a cache
 * line.
 *
 * The SQ and RQ are rings of their depth (the SQ one entry more, so that a
 * full ring differs from an empty one), their positions kept below the
 * ring's size: an entry is found with no division (4.46 -> 4.76 M msg/s for
 * ib_send_bw 64 B against index % depth, docs/bench.md), and no memory goes
 * to rounding (an SQ of 100, perftest's ib_write_bw -n 100, would have a
 * ring of 128 rounded up to a power of two: ~5 KiB more per QP).  The ORD
 * and IRD tables are found by MSN, a free-running 32-bit counter the
 * protocol carries: they have a power of two entries (at least the depth),
 * indexed by a mask, so that an MSN stays in step with its entry where it
 * wraps (MSN % depth would jump there, and two live MSNs share an entry).
 * They hold a few entries each. */
struct rdmap_ep {
	enum rdmap_ep_state state;
	bool term_pending;         /* a Terminate waits for the transport */

	/* send queue: [sq_head, sq_tail) posted, [sq_tx, sq_tail) not fully sent */
	struct send_wqe *sq;
	struct rdmap_sge *sq_sges;
	uint8_t *sq_inline;
	struct send_atomic *sq_atomic;
	uint32_t sq_head, sq_tx, sq_tail;  /* positions in the ring, below sq_size */
	uint32_t sq_size;                  /* sq_depth + 1 */
	uint32_t next_send_msn;    /* QN 0 */
	uint32_t next_rreq_msn;    /* QN 1 */
	uint32_t ord_used;
	uint32_t ord_mask;
	struct ord_slot *ord;

	/* receive queue: rq_count entries from position rq_head (rq_at), bound
	 * to MSNs rq_head_msn... */
	struct recv_wqe *rq;
	struct rdmap_sge *rq_sges;
	uint32_t rq_head, rq_count;
	uint32_t rq_head_msn;

	/* responder: inbound requests by QN 1 MSN in [ird_free_msn, ird_free_msn + ird) */
	uint32_t ird_free_msn;   /* oldest not yet freed */
	uint32_t ird_exec_msn;   /* next to execute */
	uint32_t ird_arrived;    /* arrived, not yet executed */
	uint32_t next_atomic_resp_msn;  /* QN 3 */
	uint32_t ird_mask;
	struct inbound_req *ird;

	bool in_order_valid;
	uint32_t in_order_psn;
	bool rx_mid_message;       /* rdmap_ep_rx_mid_message */
	bool rx_mid_write;         /* rdmap_ep_rx_mid_write */

	struct rdmap_ep_attr attr;
	struct rdmap_ep_counters counters;

	/* Terminate: the one sent (pending until the transport takes it) or received */
	struct tx_owner term_tx;
	bool term_sent_valid, term_recv_valid;
	struct rdmap_terminate term_sent, term_recv;
	uint8_t term_buf[RDMAP_TERMINATE_MAX_LEN];
	size_t term_len;
};

/* PSN order: a is before b in serial-number arithmetic. */
static inline bool psn_before(uint32_t a, uint32_t b)
{
	uint32_t d = b - a;
	return d != 0 && d < 0x80000000u;
}

static inline bool wr_is_send(enum rdmap_wr_opcode op)
{
	return op == RDMAP_WR_SEND || op == RDMAP_WR_SEND_WITH_INV || op == RDMAP_WR_SEND_WITH_IMM;
}

static inline bool wr_is_write(enum rdmap_wr_opcode op)
{
	return op == RDMAP_WR_RDMA_WRITE || op == RDMAP_WR_RDMA_WRITE_WITH_IMM;
}

static inline bool wr_is_atomic(enum rdmap_wr_opcode op)
{
	return op == RDMAP_WR_ATOMIC_FETCH_ADD || op == RDMAP_WR_ATOMIC_CMP_SWP;
}

/* Reads and atomics complete when their response is in, not when acked. */
static inline bool wr_needs_response(enum rdmap_wr_opcode op)
{
	return op == RDMAP_WR_RDMA_READ || wr_is_atomic(op);
}

static inline struct send_wqe *sq_at(struct rdmap_ep *ep, uint32_t pos)
{
	return &ep->sq[pos];
}

static inline struct send_atomic *sq_atomic_at(struct rdmap_ep *ep, uint32_t pos)
{
	return &ep->sq_atomic[pos];
}

/* The SQ position after pos. */
static inline uint32_t sq_next(const struct rdmap_ep *ep, uint32_t pos)
{
	return ring_advance(pos, 1, ep->sq_size);
}

/* The receive n places past the RQ's head (n < rq_depth). */
static inline struct recv_wqe *rq_at(struct rdmap_ep *ep, uint32_t n)
{
	return &ep->rq[ring_advance(ep->rq_head, n, ep->attr.rq_depth)];
}

/* Frees the RQ's head entry. */
static inline void rq_pop(struct rdmap_ep *ep)
{
	ep->rq_head = ring_advance(ep->rq_head, 1, ep->attr.rq_depth);
	ep->rq_count--;
}

static inline struct inbound_req *ird_at(struct rdmap_ep *ep, uint32_t msn)
{
	return &ep->ird[msn & ep->ird_mask];
}

static inline struct ord_slot *ord_at(struct rdmap_ep *ep, uint32_t msn)
{
	return &ep->ord[msn & ep->ord_mask];
}

/* rdmap_ep.c */
enum rdmap_wc_opcode send_wc_opcode(enum rdmap_wr_opcode op);
void ep_deliver(struct rdmap_ep *ep, const struct rdmap_wc *wc);
/* Sends a Terminate for code about seg (may be NULL) and goes to error. */
void ep_terminate(struct rdmap_ep *ep, struct term_code code, const uint8_t *seg, size_t len);
/* Goes to error: every WR completes, with its own status if failed, else
 * with WR_FLUSH_ERR. */
void ep_enter_error(struct rdmap_ep *ep);
/* The oldest send WR that has started transmission, or NULL. */
struct send_wqe *ep_oldest_started(struct rdmap_ep *ep);

/* rdmap_tx.c */
void sq_complete_ready(struct rdmap_ep *ep);

/* rdmap_rx.c */
void rq_complete_ready(struct rdmap_ep *ep);

/* rdmap_responder.c */
void responder_accept(struct rdmap_ep *ep, uint32_t psn, const struct ddp_hdr *h,
		      const uint8_t *seg, size_t len, size_t payload_off);
void responder_execute_ready(struct rdmap_ep *ep);
/* Sends response segments; -EAGAIN when the transport is full. */
int responder_transmit(struct rdmap_ep *ep, int *sent);
void responder_release_acked(struct rdmap_ep *ep);

/* rdmap_tx.c: one segment to the transport; counts it against owner. */
int ep_xmit(struct rdmap_ep *ep, struct tx_owner *owner, const struct ddp_hdr *h,
	    const void *ctrl, size_t ctrl_len, const void *data, size_t data_len);

#endif
