/* ibv_reg_mr / ibv_dereg_mr and the STag check of the data path. */
#include "mr.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "context.h"
#include "limits.h"
#include "pd.h"
#include "progress.h"

/* The access flags usiw0 understands.  IBV_ACCESS_HUGETLB is only a hint
 * about how the memory was allocated; the rest are enforced by
 * usiw_mr_lookup.  Anything else (memory windows, zero-based or on-demand
 * regions) is refused rather than silently ignored. */
#define SUPPORTED_ACCESS                                                       \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                    \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_HUGETLB)

static bool access_is_valid(int access)
{
	if (access & ~SUPPORTED_ACCESS)
		return false;
	/* ibv_reg_mr(3): remote write or atomic access needs local write. */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return false;
	return true;
}

struct ibv_mr *usiw_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t iova, int access)
{
	struct usiw_context *ctx = usiw_context_of(pd->context);

	if (!access_is_valid(access) || length > USIW_MAX_MR_SIZE ||
	    iova + length < iova) {
		errno = EINVAL;
		return NULL;
	}
	struct usiw_mr *mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	mr->access = access;
	mr->host = addr;
	mr->iova = iova;
	mr->length = length;
	mr->pd = pd;
	usiw_context_lock(ctx);
	int rc = usiw_mr_table_insert(&ctx->mrs, mr);
	usiw_context_unlock(ctx);
	if (rc) {
		free(mr);
		errno = -rc;
		return NULL;
	}
	usiw_pd_hold(pd);

	/* libibverbs fills in context, pd, addr and length on return. */
	mr->vmr.mr_type = USIW_IBV_MR_TYPE_MR;
	mr->vmr.access = access;
	mr->vmr.ibv_mr.lkey = mr->stag;
	mr->vmr.ibv_mr.rkey = mr->stag;
	mr->vmr.ibv_mr.handle = mr->stag;
	return &mr->vmr.ibv_mr;
}

int usiw_dereg_mr(struct verbs_mr *vmr)
{
	struct usiw_mr *mr = (struct usiw_mr *)vmr;
	struct usiw_context *ctx = usiw_context_of(vmr->ibv_mr.context);

	usiw_context_lock(ctx);
	usiw_mr_table_remove(&ctx->mrs, mr);
	usiw_context_unlock(ctx);
	usiw_pd_put(mr->pd);
	free(mr);
	return 0;
}

enum usiw_mr_check usiw_mr_lookup(struct usiw_context *ctx, uint32_t stag,
				  uint64_t addr, size_t len, int access,
				  const struct ibv_pd *pd, void **host)
{
	enum usiw_mr_check check;

	const struct usiw_mr *mr = usiw_mr_table_find(&ctx->mrs, stag);
	if (!mr || mr->invalidated)
		check = USIW_MR_INVALID_STAG;
	else if (mr->pd != pd)
		check = USIW_MR_PD_MISMATCH;
	else if ((mr->access & access) != access)
		check = USIW_MR_ACCESS_VIOLATION;
	/* Written so that nothing overflows: addr - iova only once addr is
	 * known to be at or above iova. */
	else if (addr < mr->iova || addr - mr->iova > mr->length ||
		 len > mr->length - (addr - mr->iova))
		check = USIW_MR_BOUNDS_VIOLATION;
	else {
		*host = (void *)((uintptr_t)mr->host + (addr - mr->iova));
		check = USIW_MR_OK;
	}
	return check;
}

enum usiw_mr_check usiw_mr_invalidate(struct usiw_context *ctx, uint32_t stag,
				      const struct ibv_pd *pd)
{
	enum usiw_mr_check check = USIW_MR_OK;

	struct usiw_mr *mr = usiw_mr_table_find(&ctx->mrs, stag);
	if (!mr || mr->invalidated)
		check = USIW_MR_INVALID_STAG;
	else if (mr->pd != pd)
		check = USIW_MR_PD_MISMATCH;
	else
		mr->invalidated = true;
	return check;
}
