/* One queue pair's protocol stack: an RDMAP endpoint (ddp-rdmap/) carried by
 * a TRP connection (trp/).
 *
 * Pure C like the two layers it joins: the host (the DPDK engine, or a
 * simulated link in the tests and the demo) carries datagrams, tells the time
 * and runs timers.  The stack wires TRP's deliveries, in-order points and
 * acknowledgements into the endpoint, the endpoint's segments into TRP, and a
 * TRP failure or close into the endpoint's error state (which flushes every
 * work request).  Not thread-safe: one caller at a time per stack. */
#ifndef USIW_QP_STACK_H
#define USIW_QP_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "ddp-rdmap/rdmap.h"
#include "trp/trp.h"

struct qp_stack_host_ops {
	/* One datagram out: hdr (TRP + DDP/RDMAP headers, valid during the call)
	 * then data_len bytes of data, which stays valid until acknowledged.
	 * Returns 0, or non-zero if the host cannot take it now (its transmit
	 * queue is full): TRP sends it again soon (trp_ops.xmit). */
	int (*xmit)(void *ctx, const void *hdr, size_t hdr_len, const void *data,
		    size_t data_len);
	uint64_t (*now_ns)(void *ctx);
	void (*complete)(void *ctx, const struct rdmap_wc *wc);
	/* TRP connection events (CONNECT_REQUEST, ESTABLISHED, REJECTED, CLOSED,
	 * FAILED); pdata valid during the call.  May be NULL. */
	void (*event)(void *ctx, enum trp_event_type type, int status, const void *pdata,
		      size_t pdata_len);
};

struct qp_stack;

/* ep_attr's transport and complete fields are set by the stack; trp_cfg NULL
 * = TRP defaults.  NULL with errno set on failure. */
struct qp_stack *qp_stack_create(const struct trp_config *trp_cfg,
				 const struct rdmap_ep_attr *ep_attr,
				 const struct qp_stack_host_ops *ops, void *ctx);
void qp_stack_destroy(struct qp_stack *qs);

/* For connect/accept/reject/establish/shutdown, statistics and warming. */
struct trp_conn *qp_stack_conn(struct qp_stack *qs);
struct rdmap_ep *qp_stack_ep(struct qp_stack *qs);

/* Post and send what the windows allow at once. */
int qp_stack_post_send(struct qp_stack *qs, const struct rdmap_send_wr *wr);
int qp_stack_post_recv(struct qp_stack *qs, const struct rdmap_recv_wr *wr);

/* A datagram from the peer. */
void qp_stack_input(struct qp_stack *qs, const void *pkt, size_t len);
/* Run TRP's timers (retransmission, delayed ACK, keepalive) and send. */
void qp_stack_poll(struct qp_stack *qs);
/* Absolute time (now_ns clock) qp_stack_poll() next has work; UINT64_MAX = none. */
uint64_t qp_stack_next_deadline(const struct qp_stack *qs);

#endif
