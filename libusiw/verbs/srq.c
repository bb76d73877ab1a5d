/* Shared receive queues: ibv_create_srq / modify / query / destroy and
 * ibv_post_srq_recv, over the RDMAP endpoint's SRQ ring (ddp-rdmap/srq.h). */
#include "qp.h"

#include <errno.h>
#include <stdlib.h>

#include "context.h"
#include "limits.h"
#include "pd.h"
#include "progress.h"

struct ibv_srq *usiw_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init)
{
	struct usiw_context *ctx = usiw_context_of(pd->context);
	struct ibv_srq_attr *a = &init->attr;

	if (a->max_wr < 1 || a->max_wr > USIW_MAX_SRQ_WR || a->max_sge > USIW_MAX_SRQ_SGE ||
	    a->srq_limit > a->max_wr) {
		errno = EINVAL;
		return NULL;
	}
	if (atomic_fetch_add(&ctx->srq_count, 1) >= USIW_MAX_SRQ) {
		atomic_fetch_sub(&ctx->srq_count, 1);
		errno = ENOMEM;
		return NULL;
	}
	struct usiw_srq *srq = calloc(1, sizeof(*srq));
	uint32_t max_sge = a->max_sge ? a->max_sge : 1;
	if (srq)
		srq->ring = rdmap_srq_create(a->max_wr, max_sge);
	if (!srq || !srq->ring) {
		free(srq);
		atomic_fetch_sub(&ctx->srq_count, 1);
		errno = ENOMEM;
		return NULL;
	}
	srq->max_wr = a->max_wr;
	srq->max_sge = max_sge;
	srq->srq_limit = a->srq_limit;
	a->max_sge = max_sge;
	usiw_pd_hold(pd);

	struct ibv_srq *s = &srq->ibv_srq;
	s->context = pd->context;
	s->srq_context = init->srq_context;
	s->pd = pd;
	pthread_mutex_init(&s->mutex, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->events_completed = 0;
	return s;
}

/* Resizing is not offered (no IBV_DEVICE_SRQ_RESIZE); the limit is kept for
 * query_srq, since the SRQ limit event is not raised yet. */
int usiw_modify_srq(struct ibv_srq *ibv_srq, struct ibv_srq_attr *attr, int attr_mask)
{
	struct usiw_srq *srq = usiw_srq_of(ibv_srq);

	if (attr_mask & ~IBV_SRQ_LIMIT || attr_mask & IBV_SRQ_MAX_WR ||
	    (attr_mask & IBV_SRQ_LIMIT && attr->srq_limit > srq->max_wr))
		return usiw_verb_failed(EINVAL);
	if (attr_mask & IBV_SRQ_LIMIT)
		srq->srq_limit = attr->srq_limit;
	return 0;
}

int usiw_query_srq(struct ibv_srq *ibv_srq, struct ibv_srq_attr *attr)
{
	struct usiw_srq *srq = usiw_srq_of(ibv_srq);

	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->srq_limit;
	return 0;
}

int usiw_destroy_srq(struct ibv_srq *ibv_srq)
{
	struct usiw_srq *srq = usiw_srq_of(ibv_srq);

	if (atomic_load(&srq->users))
		return usiw_verb_failed(EBUSY);
	atomic_fetch_sub(&usiw_context_of(ibv_srq->context)->srq_count, 1);
	usiw_pd_put(ibv_srq->pd);
	rdmap_srq_destroy(srq->ring);
	pthread_mutex_destroy(&ibv_srq->mutex);
	pthread_cond_destroy(&ibv_srq->cond);
	free(srq);
	return 0;
}

/* The ring is shared by the QPs of the context, all under its lock. */
int usiw_post_srq_recv(struct ibv_srq *ibv_srq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct usiw_srq *srq = usiw_srq_of(ibv_srq);
	struct usiw_context *ctx = usiw_context_of(ibv_srq->context);
	int rc = 0;

	usiw_context_lock(ctx);
	while (wr && !rc) {
		struct rdmap_sge sges[USIW_MAX_SRQ_SGE];
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_sge) {
			rc = EINVAL;
		} else {
			usiw_sges_from_ibv(sges, wr->sg_list, wr->num_sge);
			struct rdmap_recv_wr rwr = { wr->wr_id, sges, (uint32_t)wr->num_sge };
			rc = -rdmap_srq_post_recv(srq->ring, &rwr);
		}
		if (rc)
			*bad_wr = wr;
		else
			wr = wr->next;
	}
	usiw_context_unlock(ctx);
	return rc;
}
