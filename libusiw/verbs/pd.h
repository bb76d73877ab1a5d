/* Protection domains.  An MR (and later a QP) takes a reference on its PD, so
 * that ibv_dealloc_pd can refuse with EBUSY while anything still uses it. */
#ifndef USIW_VERBS_PD_H
#define USIW_VERBS_PD_H

#include <stdatomic.h>

#include <infiniband/verbs.h>

struct usiw_pd {
	struct ibv_pd ibv_pd;
	atomic_uint users;
};

static inline struct usiw_pd *usiw_pd_of(struct ibv_pd *pd)
{
	return (struct usiw_pd *)pd;
}

static inline void usiw_pd_hold(struct ibv_pd *pd)
{
	atomic_fetch_add(&usiw_pd_of(pd)->users, 1);
}

static inline void usiw_pd_put(struct ibv_pd *pd)
{
	atomic_fetch_sub(&usiw_pd_of(pd)->users, 1);
}

struct ibv_pd *usiw_alloc_pd(struct ibv_context *context);
int usiw_dealloc_pd(struct ibv_pd *pd);

#endif
