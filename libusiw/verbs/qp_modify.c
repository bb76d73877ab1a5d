/* ibv_modify_qp: the RC state machine, and what each state brings.
 *
 * RESET -> INIT -> RTR -> RTS, any state -> ERR, any state -> RESET.  RTR
 * takes the peer RoCE-style: the IPv4 in ah_attr.grh.dgid (::ffff:a.b.c.d),
 * the UDP port in dest_qp_num.  RTS builds the QP's stack and opens its TRP
 * connection with the PSNs exchanged out of band (sq_psn ours, rq_psn the
 * peer's), so both sides derive the same connection id. */
#include "qp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libusiw/config.h"

#include "attributes.h"
#include "context.h"
#include "limits.h"
#include "progress.h"

/* attr_mask bits a transition needs (besides IBV_QP_STATE) and may have.
 * Where RC's rules (IBTA 11.2.4.2) ask for what iWARP has no use for, the
 * table follows what iWARP applications send: librdmacm's
 * rdma_init_qp_attr gives INIT only access flags, and RTS nothing. */
struct transition {
	bool valid;
	int required;
	int optional;
};

#define ALWAYS_OPTIONAL IBV_QP_CUR_STATE
#define RTS_OPTIONAL                                                                   \
	(IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER | IBV_QP_ALT_PATH |                \
	 IBV_QP_PATH_MIG_STATE)

static struct transition transition_of(enum ibv_qp_state from, enum ibv_qp_state to)
{
	if (to == IBV_QPS_RESET || to == IBV_QPS_ERR)
		return (struct transition){ .valid = true };
	switch (from) {
	case IBV_QPS_RESET:
		if (to == IBV_QPS_INIT)
			return (struct transition){ true, IBV_QP_ACCESS_FLAGS,
						    IBV_QP_PKEY_INDEX | IBV_QP_PORT };
		break;
	case IBV_QPS_INIT:
		if (to == IBV_QPS_INIT)
			return (struct transition){ true, 0,
						    IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
							    IBV_QP_PORT };
		if (to == IBV_QPS_RTR)
			return (struct transition){
				true,
				IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
				IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_ALT_PATH
			};
		break;
	case IBV_QPS_RTR:
		if (to == IBV_QPS_RTS)
			return (struct transition){
				true, 0,
				RTS_OPTIONAL | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC
			};
		break;
	case IBV_QPS_RTS:
		if (to == IBV_QPS_RTS)
			return (struct transition){ true, 0, RTS_OPTIONAL };
		break;
	default:
		break;
	}
	return (struct transition){ .valid = false };
}

#define SUPPORTED_QP_ACCESS                                                            \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |   \
	 IBV_ACCESS_REMOTE_ATOMIC)

static bool values_valid(const struct ibv_qp_attr *attr, int mask)
{
	if ((mask & IBV_QP_ACCESS_FLAGS) && (attr->qp_access_flags & ~SUPPORTED_QP_ACCESS))
		return false;
	if ((mask & IBV_QP_PORT) && attr->port_num != 1)
		return false;
	if ((mask & IBV_QP_PKEY_INDEX) && attr->pkey_index >= USIW_PKEY_TABLE_LEN)
		return false;
	if ((mask & IBV_QP_PATH_MTU) &&
	    (attr->path_mtu < IBV_MTU_256 || attr->path_mtu > IBV_MTU_4096))
		return false;
	/* The peer's QP number is its UDP port. */
	if ((mask & IBV_QP_DEST_QPN) && (attr->dest_qp_num == 0 || attr->dest_qp_num > UINT16_MAX))
		return false;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && attr->max_dest_rd_atomic > USIW_MAX_QP_RD_ATOM)
		return false;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && attr->max_rd_atomic > USIW_MAX_QP_INIT_RD_ATOM)
		return false;
	return true;
}

/* Keeps what query_qp reports. */
static void record_attr(struct usiw_qp *qp, const struct ibv_qp_attr *attr, int mask)
{
	struct ibv_qp_attr *a = &qp->attr;

	if (mask & IBV_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IBV_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IBV_QP_AV)
		a->ah_attr = attr->ah_attr;
	if (mask & IBV_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn;
	if (mask & IBV_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IBV_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IBV_QP_ALT_PATH) {
		a->alt_ah_attr = attr->alt_ah_attr;
		a->alt_pkey_index = attr->alt_pkey_index;
		a->alt_port_num = attr->alt_port_num;
		a->alt_timeout = attr->alt_timeout;
	}
	if (mask & IBV_QP_PATH_MIG_STATE)
		a->path_mig_state = attr->path_mig_state;
}

/* ::ffff:a.b.c.d -> a.b.c.d (network byte order); false for any other GID. */
static bool ipv4_of_gid(const union ibv_gid *gid, uint32_t *ipv4)
{
	static const uint8_t mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (memcmp(gid->raw, mapped_prefix, sizeof(mapped_prefix)))
		return false;
	memcpy(ipv4, &gid->raw[12], sizeof(*ipv4));
	return true;
}

static uint32_t ibv_mtu_bytes(enum ibv_mtu mtu)
{
	return 128u << mtu;   /* IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5 */
}

/* DDP payload per segment: a datagram is TRP header, DDP/RDMAP header (at
 * most the untagged one) and payload, kept a multiple of 8 bytes so that
 * segments land 8-byte aligned in the MRs.  The IB path MTU has no iWARP
 * meaning; a path MTU below what the port reports for itself is taken as a
 * ceiling on the IP MTU, anything else leaves the port's MTU. */
uint32_t usiw_qp_seg_payload(const struct usiw_context *ctx, enum ibv_mtu path_mtu)
{
	size_t datagram = usiw_udp_max_payload(ctx->engine);

	if (path_mtu < usiw_ibv_mtu_for(ctx->port->mtu)) {
		/* IPv4 and UDP headers */
		size_t ceiling = ibv_mtu_bytes(path_mtu) - 28;
		if (ceiling < datagram)
			datagram = ceiling;
	}
	return (uint32_t)((datagram - TRP_HDR_LEN - DDP_MAX_PAYLOAD_OFF) & ~(size_t)7);
}

static int enter_rtr(struct usiw_qp *qp, const struct ibv_qp_attr *attr)
{
	uint32_t ipv4;

	if (!attr->ah_attr.is_global || attr->ah_attr.port_num > 1 ||
	    !ipv4_of_gid(&attr->ah_attr.grh.dgid, &ipv4))
		return EINVAL;
	/* A peer outside the port's subnet is a clear error now.  ARP itself
	 * is only started: with inline progress the peer answers only while
	 * its application is in a verbs call, and RoCE-style applications
	 * often block in their own TCP exchange right after RTS.  Datagrams
	 * wait for the answer in the engine, and a peer that never answers
	 * ends in TRP's retry limit (IBV_WC_RETRY_EXC_ERR). */
	int rc = usiw_engine_resolve(qp->ctx->engine, ipv4, 0);
	if (rc == -ENETUNREACH)
		return ENETUNREACH;
	qp->peer_ipv4 = ipv4;
	qp->peer_port = (uint16_t)attr->dest_qp_num;
	qp->max_seg_payload = usiw_qp_seg_payload(qp->ctx, attr->path_mtu);
	return 0;
}

static uint32_t at_least_one(uint32_t n)
{
	return n ? n : 1;
}

/* The wait our NOT_READY asks a sender for, as InfiniBand's RNR NAK does
 * from the responder's min_rnr_timer: its code (IBTA table 45) counts in
 * steps of 10 us that grow by 2 and 3 in turn, 1 2 3 4 6 8 12 16 ... 49152
 * for codes 1 to 31, and 0 is the longest, 65536 steps (655.36 ms). */
static uint64_t rnr_timer_ns(uint8_t code)
{
	code &= 31;
	uint64_t steps = code == 0   ? 65536
			 : code <= 3 ? code
			 : code % 2  ? 3ull << ((code - 3) / 2)
				     : 1ull << (code / 2);
	return steps * 10000;
}

/* The sender's bound on NOT_READYs in a row for one packet: its rnr_retry,
 * where 7 means none (IBTA: retry without end). */
static uint32_t rnr_retries(uint8_t rnr_retry)
{
	return rnr_retry >= 7 ? TRP_RNR_RETRY_FOREVER : rnr_retry;
}

int usiw_qp_start_stack(struct usiw_qp *qp)
{
	const struct ibv_qp_attr *a = &qp->attr;
	struct rdmap_ep_attr ep = {
		.sq_depth = qp->cap.max_send_wr,
		.rq_depth = qp->srq ? 0 : qp->cap.max_recv_wr,
		.max_send_sge = qp->cap.max_send_sge,
		.max_recv_sge = qp->srq ? qp->srq->max_sge : qp->cap.max_recv_sge,
		.max_inline = qp->cap.max_inline_data,
		.max_seg_payload = qp->max_seg_payload,
		/* ORD and IRD as the application set them; an ORD it never
		 * set (librdmacm negotiates it in the CM; a connection opened
		 * in RTR precedes it) is the device's. */
		.ord = a->max_rd_atomic ? a->max_rd_atomic : USIW_MAX_QP_INIT_RD_ATOM,
		.ird = at_least_one(a->max_dest_rd_atomic),
		.sq_sig_all = qp->sq_sig_all,
		.mr = &usiw_rdmap_mr_ops,
		.mr_ctx = qp,
		.srq = qp->srq ? qp->srq->ring : NULL,
	};

	/* TRP's defaults, delayed ACKs included: an acknowledgement mostly
	 * rides on the reply (ib_write_lat's Writes acknowledge each other
	 * inside the poll_cq loops that wait for them), and when there is none
	 * the progress thread sends it when its timer is due.  The CRC is the
	 * port's ([port] crc). */
	struct trp_config trp;
	trp_config_default(&trp);
	trp.checksum = usiw_config_trp_crc(usiw_engine_config(qp->ctx->engine));
	trp.rnr_retries = rnr_retries(a->rnr_retry);
	trp.rnr_delay_ns = rnr_timer_ns(a->min_rnr_timer);
	qp->stack = qp_stack_create(&trp, &ep, &usiw_qp_host_ops, qp);
	if (!qp->stack)
		return errno;
	qp->conn = qp_stack_conn(qp->stack);
	qp->ep = qp_stack_ep(qp->stack);
	if (usiw_progress_add_running(qp)) {
		qp_stack_destroy(qp->stack);
		qp->stack = NULL;
		return ENOMEM;
	}
	for (uint32_t i = 0; i < qp->early.count; i++)
		qp_stack_post_recv(qp->stack, &qp->early.wrs[i]);
	qp->early.count = 0;
	return 0;
}

/* Builds the stack and opens its TRP connection: local_isn is our first PSN,
 * the peer's is rq_psn (both sides derive the connection id from the two). */
static int open_stack(struct usiw_qp *qp, uint32_t local_isn)
{
	int rc = usiw_qp_start_stack(qp);

	if (rc)
		return rc;
	if (trp_conn_establish(qp_stack_conn(qp->stack), local_isn, qp->attr.rq_psn)) {
		usiw_progress_remove_running(qp);
		qp_stack_destroy(qp->stack);
		qp->stack = NULL;
		return EINVAL;
	}
	return 0;
}

/* The connection may be open already (usiw_qp_open_on_first_segment). */
static int enter_rts(struct usiw_qp *qp)
{
	return qp->stack ? 0 : open_stack(qp, qp->attr.sq_psn);
}

/* An RTR QP must receive (ibv_modify_qp(3): RTR = ready to receive), and
 * some applications never take it further: perftest's bandwidth servers
 * leave their QPs in RTR, and ib_send_bw's server even posts its credit
 * Writes there.  Our first PSN is set only at RTS (sq_psn), so in RTR the
 * connection id is unknown; the peer's first segment, which carries the
 * PSN RTR gave (rq_psn), tells it: its connection id is ours, and our first
 * PSN is that id XOR rq_psn, which is what the peer was told as our PSN.
 * Anything else before it is dropped, and TRP retransmits it. */
void usiw_qp_open_on_first_segment(struct usiw_qp *qp, const void *pkt, size_t len)
{
	struct trp_header h;

	if (trp_header_decode(&h, pkt, len) || h.opcode != TRP_OP_DATA ||
	    h.psn != qp->attr.rq_psn || !trp_checksum_ok(pkt, len))
		return;
	open_stack(qp, h.conn_id ^ qp->attr.rq_psn);
}

static void enter_error(struct usiw_qp *qp)
{
	if (qp->stack) {
		qp->flushing_on_request = true;
		rdmap_ep_fail(qp_stack_ep(qp->stack), RDMAP_FAIL_LOCAL);
		qp->flushing_on_request = false;
		/* Tell the peer, whose QP would otherwise wait for ours. */
		trp_shutdown(qp_stack_conn(qp->stack));
		usiw_progress_qp_changed(qp);
		return;
	}
	for (uint32_t i = 0; i < qp->early.count; i++)
		usiw_qp_flush_wr(qp, qp->early.wrs[i].wr_id, RDMAP_WC_RECV);
	qp->early.count = 0;
}

void usiw_qp_reset(struct usiw_qp *qp)
{
	if (qp->stack) {
		/* The SHUTDOWN carries our last acknowledgement, which the
		 * delayed-ACK timer would never send now: without it the peer's
		 * last message (often the final one of a test) would fail with
		 * retry exceeded though it arrived. */
		trp_shutdown(qp_stack_conn(qp->stack));
		usiw_engine_progress(qp->ctx->engine);
		usiw_progress_remove_running(qp);
		qp_stack_destroy(qp->stack);
		qp->stack = NULL;
	}
	qp->early.count = 0;
	qp->peer_ipv4 = 0;
	qp->peer_port = 0;
	qp->state = IBV_QPS_RESET;
}

static int apply(struct usiw_qp *qp, enum ibv_qp_state to, const struct ibv_qp_attr *attr,
		 int mask)
{
	int rc = 0;

	if (to == IBV_QPS_RTR && qp->state == IBV_QPS_INIT)
		rc = enter_rtr(qp, attr);
	if (rc)
		return rc;
	record_attr(qp, attr, mask);
	/* A connection opened in RTR (usiw_qp_open_on_first_segment) learns
	 * rnr_retry at RTS, and RTS may change min_rnr_timer. */
	if (qp->stack && (mask & (IBV_QP_RNR_RETRY | IBV_QP_MIN_RNR_TIMER)))
		trp_set_rnr(qp_stack_conn(qp->stack), rnr_retries(qp->attr.rnr_retry),
			    rnr_timer_ns(qp->attr.min_rnr_timer));
	if (to == IBV_QPS_RTS && qp->state == IBV_QPS_RTR)
		rc = enter_rts(qp);
	else if (to == IBV_QPS_ERR && qp->state != IBV_QPS_ERR)
		enter_error(qp);
	else if (to == IBV_QPS_RESET)
		usiw_qp_reset(qp);
	if (rc)
		return rc;
	qp->state = to;
	qp->attr.qp_state = to;
	return 0;
}

int usiw_modify_qp(struct ibv_qp *ibv_qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct usiw_qp *qp = usiw_qp_of(ibv_qp);
	int rc;

	/* Nothing to change (librdmacm's iWARP path asks for RTS this way,
	 * since the connection manager moves the QP itself). */
	if (attr_mask == 0)
		return 0;
	usiw_context_lock(qp->ctx);
	enum ibv_qp_state to = attr_mask & IBV_QP_STATE ? attr->qp_state : qp->state;
	struct transition t = transition_of(qp->state, to);
	int given = attr_mask & ~IBV_QP_STATE;
	if (!t.valid || (given & t.required) != t.required ||
	    (given & ~(t.required | t.optional | ALWAYS_OPTIONAL)) ||
	    ((attr_mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != qp->state) ||
	    !values_valid(attr, attr_mask))
		rc = EINVAL;
	else
		rc = apply(qp, to, attr, attr_mask);
	usiw_context_unlock(qp->ctx);
	if (rc)
		return usiw_verb_failed(rc);
	if (to == IBV_QPS_RTR || to == IBV_QPS_RTS)
		usiw_progress_app_may_wait();
	return 0;
}
