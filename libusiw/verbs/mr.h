/* Memory regions: ibv_reg_mr / ibv_dereg_mr, and the lookup by which the QP
 * layer checks every tagged placement and every local SGE. */
#ifndef USIW_VERBS_MR_H
#define USIW_VERBS_MR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "provider_abi.h"

struct usiw_context;

struct usiw_mr {
	struct verbs_mr vmr;        /* what the application holds */
	uint32_t stag;              /* lkey = rkey = stag */
	int access;                 /* IBV_ACCESS_* */
	uint8_t *host;              /* the registered memory */
	uint64_t iova;              /* the address peers use for host[0] */
	uint64_t length;
	struct ibv_pd *pd;
	/* A Send with Invalidate named its STag: no access through it any
	 * more (RFC 5040 6.3); deregistration still frees it. */
	bool invalidated;
	struct usiw_mr *next_in_bucket;
};

/* Why a lookup failed; each maps onto an RDMAP/DDP TERMINATE error
 * (RFC 5040 7.4, RFC 5041 7.2) for the QP layer to send. */
enum usiw_mr_check {
	USIW_MR_OK = 0,
	USIW_MR_INVALID_STAG,       /* no MR has this STag */
	USIW_MR_PD_MISMATCH,        /* the MR is in another PD than the QP */
	USIW_MR_ACCESS_VIOLATION,   /* the MR lacks a required access right */
	USIW_MR_BOUNDS_VIOLATION,   /* [addr, addr+len) leaves the MR */
};

/* Both with the context lock held (usiw_context_lock; every QP's stack runs
 * under it).
 *
 * Checks that STag stag names an MR of pd that grants every right in access
 * (IBV_ACCESS_* flags; 0 for a local read, which every MR allows) over
 * [addr, addr + len), addr being in the MR's iova space.  On USIW_MR_OK sets
 * *host to the byte at addr.  The pointer stays valid until the application
 * deregisters the MR, which it must not do while operations on it are
 * outstanding (as with any RDMA device). */
enum usiw_mr_check usiw_mr_lookup(struct usiw_context *ctx, uint32_t stag,
				  uint64_t addr, size_t len, int access,
				  const struct ibv_pd *pd, void **host);

/* Invalidates the STag of an MR of pd, as a received Send with Invalidate
 * asks: USIW_MR_OK, USIW_MR_INVALID_STAG (unknown or already invalid) or
 * USIW_MR_PD_MISMATCH. */
enum usiw_mr_check usiw_mr_invalidate(struct usiw_context *ctx, uint32_t stag,
				      const struct ibv_pd *pd);

struct ibv_mr *usiw_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t iova, int access);
int usiw_dereg_mr(struct verbs_mr *vmr);

#endif
