/* Shared receive queue: a ring of receive WRs that several endpoints draw
 * from.  An endpoint takes the next WR when a message with a new MSN first
 * needs a buffer, so MSN order and SRQ order agree per endpoint. */
#ifndef USIW_DDP_RDMAP_SRQ_H
#define USIW_DDP_RDMAP_SRQ_H

#include <stdbool.h>
#include <stdint.h>

#include "ddp-rdmap/wr.h"

struct rdmap_srq;

/* NULL with errno set on failure. */
struct rdmap_srq *rdmap_srq_create(uint32_t depth, uint32_t max_sge);
void rdmap_srq_destroy(struct rdmap_srq *srq);
/* 0, -EINVAL (too many SGEs) or -ENOMEM (full). */
int rdmap_srq_post_recv(struct rdmap_srq *srq, const struct rdmap_recv_wr *wr);
uint32_t rdmap_srq_max_sge(const struct rdmap_srq *srq);
/* Removes the oldest receive WR: its wr_id and SGEs are copied out (sges holds
 * rdmap_srq_max_sge() entries).  False when the SRQ is empty. */
bool rdmap_srq_take(struct rdmap_srq *srq, uint64_t *wr_id, struct rdmap_sge *sges, uint32_t *num_sge);

#endif
