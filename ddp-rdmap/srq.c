#include "ddp-rdmap/srq.h"
#include "ddp-rdmap/ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The deepest SRQ: its ring's positions still add in 32 bits. */
#define SRQ_MAX_DEPTH (1u << 31)

struct rdmap_srq_entry {
	uint64_t wr_id;
	uint32_t num_sge;
};

struct rdmap_srq {
	uint32_t depth;
	uint32_t max_sge;
	uint32_t head;  /* oldest */
	uint32_t count;
	struct rdmap_srq_entry *entries;
	struct rdmap_sge *sges;  /* depth * max_sge */
};

struct rdmap_srq *rdmap_srq_create(uint32_t depth, uint32_t max_sge)
{
	if (depth == 0 || depth > SRQ_MAX_DEPTH || max_sge == 0) {
		errno = EINVAL;
		return NULL;
	}
	struct rdmap_srq *srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	srq->depth = depth;
	srq->max_sge = max_sge;
	srq->entries = calloc(depth, sizeof(*srq->entries));
	srq->sges = calloc((size_t)depth * max_sge, sizeof(*srq->sges));
	if (!srq->entries || !srq->sges) {
		rdmap_srq_destroy(srq);
		errno = ENOMEM;
		return NULL;
	}
	return srq;
}

void rdmap_srq_destroy(struct rdmap_srq *srq)
{
	if (!srq)
		return;
	free(srq->entries);
	free(srq->sges);
	free(srq);
}

int rdmap_srq_post_recv(struct rdmap_srq *srq, const struct rdmap_recv_wr *wr)
{
	if (wr->num_sge > srq->max_sge)
		return -EINVAL;
	if (srq->count == srq->depth)
		return -ENOMEM;
	uint32_t i = ring_advance(srq->head, srq->count, srq->depth);
	srq->entries[i].wr_id = wr->wr_id;
	srq->entries[i].num_sge = wr->num_sge;
	if (wr->num_sge)
		memcpy(&srq->sges[(size_t)i * srq->max_sge], wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
	srq->count++;
	return 0;
}

uint32_t rdmap_srq_max_sge(const struct rdmap_srq *srq)
{
	return srq->max_sge;
}

bool rdmap_srq_take(struct rdmap_srq *srq, uint64_t *wr_id, struct rdmap_sge *sges, uint32_t *num_sge)
{
	if (srq->count == 0)
		return false;
	const struct rdmap_srq_entry *e = &srq->entries[srq->head];
	*wr_id = e->wr_id;
	*num_sge = e->num_sge;
	if (e->num_sge)
		memcpy(sges, &srq->sges[(size_t)srq->head * srq->max_sge], e->num_sge * sizeof(*sges));
	srq->head = ring_advance(srq->head, 1, srq->depth);
	srq->count--;
	return true;
}
