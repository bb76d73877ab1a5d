/* qp-set: N RC QPs of usiw0 connected one to one with a peer process's N,
 * the set-up that bench/qp-lat and bench/qp-rate share.  The two sides swap
 * GIDs, QP numbers and PSNs over their TCP set-up connection, RoCE-style as
 * perftest does without -R.  Every failure ends the program with a message
 * naming what failed (bench programs: there is nothing to recover). */
#ifndef USIW_BENCH_QP_SET_H
#define USIW_BENCH_QP_SET_H

#include <stdint.h>

#include <infiniband/verbs.h>

struct qp_set {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;  /* every QP's send and receive completions */
	struct ibv_qp **qp;
	uint32_t *psn;             /* each QP's initial send PSN */
	uint32_t n;
};

/* Opens usiw0 and makes a PD, two CQs of cq_depth and n RC QPs of the
 * given capacities, in INIT with the given access flags, so that receives
 * can be posted before qp_set_connect. */
void qp_set_create(struct qp_set *s, uint32_t n, int cq_depth, const struct ibv_qp_cap *cap,
		   unsigned int access);

/* Connects QP i to the peer's QP i (RTR, then RTS), then waits until the
 * peer has connected its own. */
void qp_set_connect(struct qp_set *s, int sock);

/* Destroys what qp_set_create made (the caller's MRs first). */
void qp_set_destroy(struct qp_set *s);

/* The 64 B that message n on QP i carries in the bench programs that check
 * what they receive: both numbers, then bytes that change with n. */
#define QP_SET_MSG_SIZE 64
void qp_set_fill_message(uint8_t *msg, uint32_t n, uint32_t i);

#endif
