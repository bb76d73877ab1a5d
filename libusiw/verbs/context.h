/* An open usiw0: the verbs context, the engine it runs on, and the tables of
 * the objects created in it.  This is what the QP layer gets from any ibv_*
 * object's context pointer. */
#ifndef USIW_VERBS_CONTEXT_H
#define USIW_VERBS_CONTEXT_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "libusiw/engine.h"
#include "mr_table.h"

struct usiw_qp;

/* The failure of a verb that returns an error number (ibv_dealloc_pd,
 * ibv_destroy_cq, ibv_modify_qp, ...): errno is set to it too.  Their man
 * pages speak of "the value of errno", callers print strerror(errno)
 * (perftest does), and a kernel provider's failed command leaves errno set;
 * without it the message would name whatever failed last in the process. */
static inline int usiw_verb_failed(int err)
{
	errno = err;
	return err;
}

struct usiw_context {
	struct usiw_engine *engine;          /* one reference, held while open */
	const struct usiw_port_attr *port;   /* the engine's, live */
	struct usiw_mr_table mrs;            /* by STag */
	atomic_uint pd_count;                /* against USIW_MAX_PD */
	atomic_uint cq_count;                /* against USIW_MAX_CQ */
	atomic_uint qp_count;                /* against USIW_MAX_QP */
	atomic_uint srq_count;               /* against USIW_MAX_SRQ */

	uint32_t next_qpn;                   /* where the QP number search starts (under
						the progress.h lock) */
	struct verbs_context vctx;           /* libibverbs' part; ibv_context inside */
};

static inline struct usiw_context *usiw_context_of(struct ibv_context *context)
{
	return (struct usiw_context *)((char *)context -
				       offsetof(struct usiw_context, vctx.context));
}

/* verbs_device_ops.alloc_context: what ibv_open_device(usiw0) ends in. */
struct verbs_context *usiw_alloc_context(struct ibv_device *device, int cmd_fd,
					 void *private_data);

#endif
