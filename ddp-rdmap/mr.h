/* The memory-region table as the endpoint sees it.  The verbs layer
 * implements these ops over its MRs; tests implement a small table. */
#ifndef USIW_DDP_RDMAP_MR_H
#define USIW_DDP_RDMAP_MR_H

#include <stddef.h>
#include <stdint.h>

enum rdmap_access {
	RDMAP_ACCESS_LOCAL_WRITE = 1u << 0,
	RDMAP_ACCESS_REMOTE_WRITE = 1u << 1,
	RDMAP_ACCESS_REMOTE_READ = 1u << 2,
	RDMAP_ACCESS_REMOTE_ATOMIC = 1u << 3,
};

/* Outcome of an MR check, from most to least basic failure. */
enum rdmap_mr_status {
	RDMAP_MR_OK = 0,
	RDMAP_MR_INVALID_STAG,     /* unknown or invalidated STag */
	RDMAP_MR_NOT_ASSOCIATED,   /* STag of another PD (or bound to another QP) */
	RDMAP_MR_ACCESS,           /* the MR lacks a required access right */
	RDMAP_MR_BOUNDS,           /* [to, to+len) not inside the MR */
	RDMAP_MR_TO_WRAP,          /* to + len overflows 64 bits */
	RDMAP_MR_CANNOT_INVALIDATE,/* invalidate refused (e.g. not remotely invalidatable) */
};

struct rdmap_mr_ops {
	/* Checks that stag names a valid MR usable by the endpoint identified by
	 * ctx, with every bit of required_access (0: any valid MR), covering
	 * [to, to + len).  On RDMAP_MR_OK sets *addr to where to is in memory. */
	enum rdmap_mr_status (*lookup)(void *ctx, uint32_t stag, uint64_t to, uint64_t len,
				       unsigned required_access, void **addr);
	/* Send with Invalidate: invalidates stag for the endpoint identified by ctx. */
	enum rdmap_mr_status (*invalidate)(void *ctx, uint32_t stag);
	/* Copies len bytes of a received segment to where lookup pointed, with
	 * memcpy's contract: the verbs layer has a copy faster than memcpy's
	 * when the two ends differ in alignment, as a payload after its
	 * headers does. */
	void *(*copy)(void *dst, const void *src, size_t len);
};

#endif
