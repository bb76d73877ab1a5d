/* Two queue-pair protocol stacks (qp/qp_stack.h) joined by the simulated
 * lossy link, sharing one memory-region table (PD 1), each collecting its
 * completions and connection events.  Used by the simulated-link tests and
 * by the protocol demo. */
#ifndef USIW_TESTS_QP_PAIR_H
#define USIW_TESTS_QP_PAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "harness.h"
#include "qp/qp_stack.h"
#include "simlink.h"

#define QP_PAIR_MAX_EVENTS 16

struct qp_pair;

struct qp_pair_side {
	struct qp_pair *pair;
	enum simlink_side side;
	struct qp_stack *qs;
	struct test_wcs wcs;
	struct test_mr_ctx mr_ctx;
	enum trp_event_type ev[QP_PAIR_MAX_EVENTS];
	int ev_status[QP_PAIR_MAX_EVENTS];
	unsigned n_ev;
};

struct qp_pair {
	struct simlink *link;
	struct qp_pair_side side[2];
	struct test_mr_table mrs;
	uint8_t *frame;          /* one datagram being assembled for the link */
	size_t frame_cap;
};

struct qp_pair_config {
	struct simlink_config link;
	struct trp_config trp;
	uint32_t max_seg_payload; /* DDP payload per datagram */
	uint32_t sq_depth, rq_depth, max_sge, ord_ird;
};

void qp_pair_config_default(struct qp_pair_config *cfg);
/* Returns 0, or -1 if a stack could not be created. */
int qp_pair_init(struct qp_pair *p, const struct qp_pair_config *cfg);
void qp_pair_fini(struct qp_pair *p);

/* A connects, B accepts in its CONNECT_REQUEST callback.  True once both are
 * established (within 10 s of virtual time). */
bool qp_pair_connect(struct qp_pair *p);
/* Runs until side A has at least wcs_a completions and B at least wcs_b, or
 * until virtual time until_ns.  True if the counts were reached. */
bool qp_pair_run_until_wcs(struct qp_pair *p, size_t wcs_a, size_t wcs_b, uint64_t until_ns);
/* True if the side saw a connection event of this type. */
bool qp_pair_has_event(const struct qp_pair_side *s, enum trp_event_type type);

#endif
