/* ibv_alloc_pd / ibv_dealloc_pd. */
#include "pd.h"

#include <errno.h>
#include <stdlib.h>

#include "context.h"
#include "limits.h"

struct ibv_pd *usiw_alloc_pd(struct ibv_context *context)
{
	struct usiw_context *ctx = usiw_context_of(context);

	if (atomic_fetch_add(&ctx->pd_count, 1) >= USIW_MAX_PD) {
		atomic_fetch_sub(&ctx->pd_count, 1);
		errno = ENOMEM;
		return NULL;
	}
	struct usiw_pd *pd = calloc(1, sizeof(*pd));
	if (!pd) {
		atomic_fetch_sub(&ctx->pd_count, 1);
		errno = ENOMEM;
		return NULL;
	}
	pd->ibv_pd.context = context;
	return &pd->ibv_pd;
}

int usiw_dealloc_pd(struct ibv_pd *ibv_pd)
{
	struct usiw_pd *pd = usiw_pd_of(ibv_pd);

	if (atomic_load(&pd->users))
		return usiw_verb_failed(EBUSY);
	atomic_fetch_sub(&usiw_context_of(ibv_pd->context)->pd_count, 1);
	free(pd);
	return 0;
}
