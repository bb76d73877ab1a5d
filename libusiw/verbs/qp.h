/* Queue pairs of usiw0 (RC only) and shared receive queues.
 *
 * A QP is created with its own UDP port, whose number is its QP number.  Its
 * protocol stack (qp/qp_stack.h: RDMAP over TRP) is built when the QP enters
 * RTS, or in RTR when the peer's first segment arrives (qp_modify.c), because
 * its fixed attributes (segment size from the path MTU, both first PSNs, ORD
 * and IRD) are known only then; receives posted in INIT and RTR wait in the
 * QP until that moment.  Everything that touches a stack runs under the
 * context's lock (progress.h). */
#ifndef USIW_VERBS_QP_H
#define USIW_VERBS_QP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "ddp-rdmap/srq.h"
#include "ddp-rdmap/wr.h"
#include "provider_abi.h"
#include "qp/qp_stack.h"
#include "qp_cm.h"

struct usiw_context;
struct usiw_cq;
struct usiw_udp_endpoint;

struct usiw_srq {
	struct ibv_srq ibv_srq;
	struct rdmap_srq *ring;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
	atomic_uint users;              /* QPs drawing from it */
};

static inline struct usiw_srq *usiw_srq_of(struct ibv_srq *srq)
{
	return (struct usiw_srq *)srq;
}

/* Receives posted before the stack exists (INIT, RTR). */
struct usiw_early_recvs {
	struct rdmap_recv_wr *wrs;
	struct rdmap_sge *sges;         /* max_recv_sge per WR */
	uint32_t count;
};

/* After vqp, what each message reads or writes comes first and what only
 * setup, query_qp and the CM read comes last: with a thousand QPs a QP has
 * left the cache by its next message, and every line a message touches is a
 * miss (docs/bench.md, "Many QPs").  attr comes right after them, so that
 * attr.qp_access_flags, which each placement checks, shares their last
 * line.  usiw_create_qp aligns the struct to a cache line. */
struct usiw_qp {
	struct verbs_qp vqp;            /* what the application holds */
	struct usiw_context *ctx;
	enum ibv_qp_state state;        /* also ERR once the endpoint failed */
	uint32_t last_use;              /* usiw_progress_touch_qp (fills the hole after state) */
	bool sq_sig_all;
	/* While an application moves the QP to ERR, every completion is a
	 * flush (the endpoint would report its oldest WR as a fatal error). */
	bool flushing_on_request;
	bool cq_overrun_reported;
	/* Counted in progress.c (usiw_progress_write_expected): a Write is
	 * partly in, or write_answer_awaited.  write_rx_mark: the Write
	 * segments received when we last posted a Write. */
	bool write_expected;
	bool write_answer_awaited;
	uint64_t write_rx_mark;
	struct usiw_cq *send_cq;
	struct usiw_cq *recv_cq;
	struct usiw_srq *srq;

	struct usiw_udp_endpoint *udp;  /* its port is the QP number */
	uint32_t peer_ipv4;             /* network byte order, from RTR */
	uint16_t peer_port;             /* the peer's QP number */
	uint32_t max_seg_payload;       /* from the path MTU at RTR */

	struct qp_stack *stack;         /* from RTS until RESET or destroy */
	/* While stack is: its TRP connection and RDMAP endpoint, so that
	 * warming the QP reaches them without the stack's line (progress.c). */
	const struct trp_conn *conn;
	const struct rdmap_ep *ep;
	struct {                        /* its place among the running QPs' */
		uint32_t slot;          /* timers (qp_timers.h) */
		bool changed;
		struct usiw_qp *next_changed;
	} timer;
	uint32_t next_posted_slot;      /* the QP posted to after this one, last time */
	struct ibv_qp_attr attr;        /* as modify_qp set them, for query_qp */
	struct ibv_qp_cap cap;          /* as granted */
	struct usiw_early_recvs early;
	struct usiw_qp_cm cm;           /* our librdmacm's hooks (qp_cm.h) */
};

static inline struct usiw_qp *usiw_qp_of(struct ibv_qp *qp)
{
	return (struct usiw_qp *)qp;
}

/* qp.c */
struct ibv_qp *usiw_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
int usiw_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr);
int usiw_destroy_qp(struct ibv_qp *qp);

/* qp_modify.c */
int usiw_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
/* Ends the stack (if any) and forgets receives and peer: back to RESET. */
void usiw_qp_reset(struct usiw_qp *qp);
/* In RTR, with the lock held: a datagram from the peer before the stack
 * exists; the peer's first segment opens the connection. */
void usiw_qp_open_on_first_segment(struct usiw_qp *qp, const void *pkt, size_t len);
/* With the lock held: builds the stack from the QP's attributes and hands it
 * the receives posted so far; the caller opens its connection. */
int usiw_qp_start_stack(struct usiw_qp *qp);
/* DDP payload per segment for a path MTU. */
uint32_t usiw_qp_seg_payload(const struct usiw_context *ctx, enum ibv_mtu path_mtu);

/* post.c */
int usiw_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int usiw_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
/* Copies a verbs scatter list into RDMAP SGEs (the same three fields). */
void usiw_sges_from_ibv(struct rdmap_sge *out, const struct ibv_sge *in, int num_sge);

/* srq.c */
struct ibv_srq *usiw_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
int usiw_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask);
int usiw_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int usiw_destroy_srq(struct ibv_srq *srq);
int usiw_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/* wc_map.c: a completion of the QP's stack, into the right CQ. */
void usiw_qp_complete(struct usiw_qp *qp, const struct rdmap_wc *wc);
/* A flush completion for a WR the stack never saw (no stack yet). */
void usiw_qp_flush_wr(struct usiw_qp *qp, uint64_t wr_id, enum rdmap_wc_opcode opcode);

/* rdmap_mr.c: the MR table as the RDMAP endpoint sees it; ctx = the QP. */
extern const struct rdmap_mr_ops usiw_rdmap_mr_ops;

#endif
