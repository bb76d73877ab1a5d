/* See qp-set.h.  err(3) names the program in each message. */
#include "qp-set.h"

#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "verbs-peer.h"

struct qp_info {
	uint32_t qpn;
	uint32_t psn;
};

void qp_set_create(struct qp_set *s, uint32_t n, int cq_depth, const struct ibv_qp_cap *cap,
		   unsigned int access)
{
	s->n = n;
	s->ctx = verbs_peer_open_usiw0();
	s->pd = ibv_alloc_pd(s->ctx);
	s->scq = ibv_create_cq(s->ctx, cq_depth, NULL, NULL, 0);
	s->rcq = ibv_create_cq(s->ctx, cq_depth, NULL, NULL, 0);
	s->qp = calloc(n, sizeof(*s->qp));
	s->psn = calloc(n, sizeof(*s->psn));
	if (!s->pd || !s->scq || !s->rcq || !s->qp || !s->psn)
		err(1, "setting up %u QPs", n);
	for (uint32_t i = 0; i < n; i++) {
		struct ibv_qp_init_attr init = {
			.send_cq = s->scq, .recv_cq = s->rcq, .qp_type = IBV_QPT_RC, .cap = *cap,
		};
		s->qp[i] = ibv_create_qp(s->pd, &init);
		if (!s->qp[i])
			err(1, "ibv_create_qp %u of %u", i + 1, n);
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					 .qp_access_flags = access };
		if (ibv_modify_qp(s->qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					      IBV_QP_ACCESS_FLAGS))
			err(1, "modify to INIT");
		s->psn[i] = (uint32_t)rand() & 0xffffff;
	}
}

void qp_set_connect(struct qp_set *s, int sock)
{
	struct qp_info *mine = calloc(s->n, sizeof(*mine)), *peer = calloc(s->n, sizeof(*peer));
	union ibv_gid gid, peer_gid;

	if (!mine || !peer)
		err(1, "connecting %u QPs", s->n);
	if (ibv_query_gid(s->ctx, 1, 0, &gid))
		err(1, "ibv_query_gid");
	for (uint32_t i = 0; i < s->n; i++)
		mine[i] = (struct qp_info){ s->qp[i]->qp_num, s->psn[i] };
	verbs_peer_exchange(sock, &gid, &peer_gid, sizeof(gid));
	verbs_peer_exchange(sock, mine, peer, s->n * sizeof(*peer));
	for (uint32_t i = 0; i < s->n; i++) {
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
			.dest_qp_num = peer[i].qpn, .rq_psn = peer[i].psn,
			.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
			.ah_attr = { .is_global = 1, .port_num = 1,
				     .grh = { .dgid = peer_gid, .hop_limit = 64 } },
		};
		if (ibv_modify_qp(s->qp[i], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
			err(1, "modify to RTR");
		a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = s->psn[i],
					  .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
					  .max_rd_atomic = 1 };
		if (ibv_modify_qp(s->qp[i], &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					      IBV_QP_MAX_QP_RD_ATOMIC))
			err(1, "modify to RTS");
	}
	free(mine);
	free(peer);
	char go = 'g';
	verbs_peer_exchange(sock, &go, &go, 1);
}

void qp_set_destroy(struct qp_set *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		ibv_destroy_qp(s->qp[i]);
	ibv_destroy_cq(s->scq);
	ibv_destroy_cq(s->rcq);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
	free(s->qp);
	free(s->psn);
}

void qp_set_fill_message(uint8_t *msg, uint32_t n, uint32_t i)
{
	memcpy(msg, &n, sizeof(n));
	memcpy(msg + sizeof(n), &i, sizeof(i));
	for (uint32_t k = sizeof(n) + sizeof(i); k < QP_SET_MSG_SIZE; k++)
		msg[k] = (uint8_t)(n * 31 + k);
}
