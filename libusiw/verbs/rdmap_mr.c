/* The MR table as a QP's RDMAP endpoint sees it (ddp-rdmap/mr.h), over
 * usiw_mr_lookup: STag, PD of the QP, access rights, bounds. */
#include "qp.h"

#include "context.h"
#include "mr.h"

static int ibv_access_of(unsigned rdmap_access)
{
	return (rdmap_access & RDMAP_ACCESS_LOCAL_WRITE ? IBV_ACCESS_LOCAL_WRITE : 0) |
	       (rdmap_access & RDMAP_ACCESS_REMOTE_WRITE ? IBV_ACCESS_REMOTE_WRITE : 0) |
	       (rdmap_access & RDMAP_ACCESS_REMOTE_READ ? IBV_ACCESS_REMOTE_READ : 0) |
	       (rdmap_access & RDMAP_ACCESS_REMOTE_ATOMIC ? IBV_ACCESS_REMOTE_ATOMIC : 0);
}

static enum rdmap_mr_status status_of(enum usiw_mr_check check)
{
	switch (check) {
	case USIW_MR_OK:
		return RDMAP_MR_OK;
	case USIW_MR_INVALID_STAG:
		return RDMAP_MR_INVALID_STAG;
	case USIW_MR_PD_MISMATCH:
		return RDMAP_MR_NOT_ASSOCIATED;
	case USIW_MR_ACCESS_VIOLATION:
		return RDMAP_MR_ACCESS;
	case USIW_MR_BOUNDS_VIOLATION:
		return RDMAP_MR_BOUNDS;
	}
	return RDMAP_MR_INVALID_STAG;
}

#define REMOTE_ACCESS                                                                  \
	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static enum rdmap_mr_status lookup(void *arg, uint32_t stag, uint64_t to, uint64_t len,
				   unsigned required_access, void **addr)
{
	struct usiw_qp *qp = arg;
	int access = ibv_access_of(required_access);

	if (to + len < to)
		return RDMAP_MR_TO_WRAP;
	/* A remote access needs the right on the QP as well as on the MR
	 * (ibv_modify_qp's qp_access_flags). */
	if ((access & REMOTE_ACCESS) & ~qp->attr.qp_access_flags)
		return RDMAP_MR_ACCESS;
	return status_of(usiw_mr_lookup(qp->ctx, stag, to, len, access, qp->vqp.qp.pd, addr));
}

static enum rdmap_mr_status invalidate(void *arg, uint32_t stag)
{
	struct usiw_qp *qp = arg;

	return status_of(usiw_mr_invalidate(qp->ctx, stag, qp->vqp.qp.pd));
}

const struct rdmap_mr_ops usiw_rdmap_mr_ops = {
	.lookup = lookup,
	.invalidate = invalidate,
	.copy = usiw_payload_copy,
};
