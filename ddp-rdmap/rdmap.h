/* RDMAP endpoint: the per-QP protocol engine of RDMAP over DDP over TRP.
 *
 * The endpoint knows neither DPDK, verbs nor TRP.  It is driven by its owner
 * (the provider's progress engine, or a test):
 *   - work requests come in through rdmap_ep_post_send/post_recv;
 *   - segments go out only from rdmap_ep_progress_tx(), through
 *     rdmap_transport_ops.xmit, which copies the header and references the
 *     data until it calls rdmap_ep_acked() with the segment's cookie;
 *   - every received segment is handed over once with rdmap_ep_input(), in any
 *     order, and rdmap_ep_in_order() reports the transport's cumulative point;
 *   - completions come out through rdmap_ep_attr.complete.
 * After post_send, in_order and acked the owner calls progress_tx, which sends
 * what became sendable.  Nothing allocates memory after rdmap_ep_create().
 * Not thread-safe: one caller at a time per endpoint.
 */
#ifndef USIW_DDP_RDMAP_RDMAP_H
#define USIW_DDP_RDMAP_RDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ddp-rdmap/header.h"
#include "ddp-rdmap/mr.h"
#include "ddp-rdmap/srq.h"
#include "ddp-rdmap/wr.h"
#include "usiw/warm.h"

struct rdmap_ep;
struct rdmap_terminate; /* ddp-rdmap/header.h */

/* How the endpoint hands segments to the reliable transport (TRP). */
struct rdmap_transport_ops {
	/* Sends one DDP segment: ulp_hdr (at most RDMAP_ULP_HDR_MAX bytes) is
	 * copied, data (data_len bytes, may be NULL when 0) is only referenced
	 * until ack(cookie).  Returns the segment's PSN (0..UINT32_MAX), -EAGAIN
	 * when the window is full (nothing was sent), -EPIPE once the transport
	 * is shutting down (the segment waits, as for -EAGAIN, until the close
	 * fails the endpoint) or another negative errno, which fails the
	 * endpoint. */
	int64_t (*xmit)(void *ctx, const void *ulp_hdr, size_t ulp_hdr_len, const void *data,
			size_t data_len, void *cookie);
};

#define RDMAP_ULP_HDR_MAX 64u

enum rdmap_ep_state {
	RDMAP_EP_RTS,    /* connected, moving data */
	RDMAP_EP_ERROR,  /* terminated or failed; every WR has been flushed */
};

/* Why the owner fails an endpoint. */
enum rdmap_fail_reason {
	RDMAP_FAIL_RETRY_EXCEEDED,  /* transport gave up retransmitting */
	RDMAP_FAIL_RNR_EXCEEDED,    /* the peer's receiver stayed not ready through every retry */
	RDMAP_FAIL_PEER_DEAD,       /* peer stopped answering or shut down */
	RDMAP_FAIL_LOCAL,           /* local catastrophic error */
};

/* An opcode's two counters share a cache line, so that counting a message
 * touches one line, not two (rdmap_ep_internal.h says why that matters). */
struct rdmap_op_counters {
	uint64_t msgs;              /* counted on each message's last segment */
	uint64_t bytes;             /* DDP payload bytes */
};

/* The first three come first: every segment counts one of the first two,
 * and rdmap_ep_input reads the third for every segment. */
struct rdmap_ep_counters {
	uint64_t tx_segments;
	uint64_t rx_segments;
	uint64_t terminates_sent;
	struct rdmap_op_counters tx[16], rx[16];  /* per enum rdmap_opcode */
	uint64_t terminates_received;
	uint64_t placement_violations;  /* tagged/untagged placement refused */
	uint64_t malformed_segments;
	uint64_t tx_eagain;
};

struct rdmap_ep_attr {
	uint32_t sq_depth;        /* send WRs outstanding */
	uint32_t rq_depth;        /* posted receive WRs (or SRQ receives bound to this ep) */
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;      /* bytes of inline data per send WR */
	uint32_t max_seg_payload; /* DDP payload bytes per segment, from the path MTU */
	uint32_t ord;             /* Reads/atomics this ep may have outstanding at the peer:
				   * min(our ORD, the peer's IRD) */
	uint32_t ird;             /* Reads/atomics this ep accepts from the peer at once */
	bool sq_sig_all;

	const struct rdmap_transport_ops *transport;
	void *transport_ctx;
	const struct rdmap_mr_ops *mr;
	void *mr_ctx;             /* identifies this QP (and its PD) to the MR table */
	struct rdmap_srq *srq;    /* NULL: receives come from rdmap_ep_post_recv */
	void (*complete)(void *ctx, const struct rdmap_wc *wc);
	void *complete_ctx;
};

/* Returns NULL with errno set (EINVAL on bad attributes, ENOMEM). */
struct rdmap_ep *rdmap_ep_create(const struct rdmap_ep_attr *attr);
void rdmap_ep_destroy(struct rdmap_ep *ep);

/* 0, or -EINVAL (bad opcode, SGE count, lengths, inline size, atomic buffer)
 * or -ENOMEM (queue full).  In the error state the WR is accepted and
 * completed at once with RDMAP_WC_WR_FLUSH_ERR. */
int rdmap_ep_post_send(struct rdmap_ep *ep, const struct rdmap_send_wr *wr);
int rdmap_ep_post_recv(struct rdmap_ep *ep, const struct rdmap_recv_wr *wr);

/* Sends segments until done or the transport says -EAGAIN.  Returns the
 * number of segments sent. */
int rdmap_ep_progress_tx(struct rdmap_ep *ep);
/* The transport has delivered the segment sent with this cookie. */
void rdmap_ep_acked(struct rdmap_ep *ep, void *cookie);

/* One received DDP segment (header + payload), each exactly once, any order.
 * Returns 0, or -EPROTO when the endpoint refused the segment (protection
 * violation, malformed...), sent a Terminate and went to error: the
 * transport must then not acknowledge that segment, so the WR that sent it
 * can never complete successfully before the Terminate reaches the peer.
 * -EAGAIN when it is of a Send (Immediate Data, Write with Immediate) whose
 * receive is not posted yet: nothing changed, and the transport must not
 * acknowledge it but offer it again later (trp_not_ready).  -ENOTCONN when
 * the endpoint was already in error (ignored). */
int rdmap_ep_input(struct rdmap_ep *ep, uint32_t psn, const void *seg, size_t len);
/* Every segment with PSN before next_psn has been passed to rdmap_ep_input. */
void rdmap_ep_in_order(struct rdmap_ep *ep, uint32_t next_psn);

/* Transport failure: the endpoint goes to error and flushes every WR. */
void rdmap_ep_fail(struct rdmap_ep *ep, enum rdmap_fail_reason reason);

enum rdmap_ep_state rdmap_ep_state(const struct rdmap_ep *ep);
const struct rdmap_ep_counters *rdmap_ep_counters(const struct rdmap_ep *ep);
/* Whether the last segment received was not the last of its message: more
 * of that message is on its way. */
bool rdmap_ep_rx_mid_message(const struct rdmap_ep *ep);
/* The same for an RDMA Write, whose arrival completes nothing here: the
 * application can only learn of it by watching the memory. */
bool rdmap_ep_rx_mid_write(const struct rdmap_ep *ep);
/* Whether posted send work is not all handed to the transport yet (its
 * window is full): it goes as acknowledgements open the window. */
bool rdmap_ep_tx_waiting(const struct rdmap_ep *ep);
/* With no effect on behaviour: warms every line of the endpoint that its
 * next message in or out uses (trp_conn_warm's twin); rdmap_ep_warm_queues:
 * the entries of its queues that the next messages and posts use
 * (trp_conn_warm_queues's twin). */
void rdmap_ep_warm(const struct rdmap_ep *ep, enum usiw_warm how);
void rdmap_ep_warm_queues(const struct rdmap_ep *ep, enum usiw_warm how);
/* Prefetches (never loads: the memory is the application's, which it may
 * have unmapped since) the first line of the buffers the next messages
 * probably use: the next receive's, and the one the send WQE that the next
 * post fills last sent from. */
void rdmap_ep_warm_buffers(const struct rdmap_ep *ep);
/* The send WQE (and its scatter/gather entries) that the post `ahead`
 * posts after the next one will fill (trp_conn_warm_send_slot's twin);
 * false if the send queue has no room for that post. */
bool rdmap_ep_warm_send_entry(const struct rdmap_ep *ep, uint32_t ahead, enum usiw_warm how);
/* The Terminate this endpoint sent or received last (false if none). */
bool rdmap_ep_last_terminate(const struct rdmap_ep *ep, bool sent, struct rdmap_terminate *out);

#endif
