/* Placement: copying received payload into registered memory, after an MR
 * check of exactly the bytes written, for every segment. */
#ifndef USIW_DDP_RDMAP_PLACEMENT_H
#define USIW_DDP_RDMAP_PLACEMENT_H

#include <stdint.h>

#include "ddp-rdmap/mr.h"
#include "ddp-rdmap/wr.h"

/* Tagged placement: [to, to+len) of the MR named by stag, which must grant
 * access.  A zero-length segment is not checked (RFC 5041: it places nothing). */
enum rdmap_mr_status ddp_place_tagged(const struct rdmap_mr_ops *mr, void *mr_ctx, uint32_t stag,
				      uint64_t to, const void *src, uint32_t len, unsigned access);

/* Places len bytes at byte offset off of the buffer an SGE list describes;
 * each SGE range touched is checked with LOCAL_WRITE.  RDMAP_MR_BOUNDS if the
 * list is shorter than off + len (nothing is written then). */
enum rdmap_mr_status ddp_place_sgl(const struct rdmap_mr_ops *mr, void *mr_ctx,
				   const struct rdmap_sge *sges, uint32_t num_sge, uint64_t off,
				   const void *src, uint32_t len);

#endif
