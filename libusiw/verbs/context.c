/* Opening and closing usiw0, and the table of verbs it implements. */
#include "context.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "attributes.h"
#include "cq.h"
#include "device.h"
#include "limits.h"
#include "mr.h"
#include "pd.h"
#include "provider_abi.h"

static void usiw_free_context(struct ibv_context *context);

/* Every verb usiw0 implements.  The members left out keep libibverbs'
 * defaults, which fail cleanly with EOPNOTSUPP: QPs, SRQs, AHs, memory
 * windows, extended CQs, rereg_mr, and the rest.  The QP layer adds its verbs
 * (create_qp, modify_qp, query_qp, destroy_qp, post_send, post_recv, ...)
 * here. */
static const struct verbs_context_ops usiw_context_ops = {
	.alloc_pd = usiw_alloc_pd,
	.create_cq = usiw_create_cq,
	.dealloc_pd = usiw_dealloc_pd,
	.dereg_mr = usiw_dereg_mr,
	.destroy_cq = usiw_destroy_cq,
	.free_context = usiw_free_context,
	.poll_cq = usiw_poll_cq,
	.query_device_ex = usiw_query_device_ex,
	.query_port = usiw_query_port,
	.reg_mr = usiw_reg_mr,
	.req_notify_cq = usiw_req_notify_cq,
};

struct verbs_context *usiw_alloc_context(struct ibv_device *device, int cmd_fd,
					 void *private_data)
{
	struct usiw_engine *engine;
	struct usiw_context *ctx;
	int rc;

	(void)private_data;
	/* This is the moment DPDK starts (once per process): listing the
	 * device must stay cheap, opening it is when the port is needed. */
	rc = usiw_engine_get(&engine);
	if (rc) {
		fprintf(stderr, "usiw: cannot open %s: %s\n", USIW_DEVICE_NAME,
			usiw_engine_last_error());
		if (cmd_fd >= 0)
			close(cmd_fd);
		errno = -rc;
		return NULL;
	}

	ctx = _verbs_init_and_alloc_context(
		device, cmd_fd, sizeof(*ctx),
		(struct verbs_context *)(uintptr_t)offsetof(struct usiw_context,
							    vctx),
		USIW_RDMA_DRIVER_UNKNOWN);
	if (!ctx) {
		rc = errno;
		usiw_engine_put(engine);
		errno = rc;
		return NULL;
	}
	rc = usiw_mr_table_init(&ctx->mrs);
	if (rc) {
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		usiw_engine_put(engine);
		errno = -rc;
		return NULL;
	}
	ctx->engine = engine;
	ctx->port = usiw_engine_port_attr(engine);
	usiw_device_set_mac(ctx->port->mac);
	ctx->vctx.context.num_comp_vectors = USIW_NUM_COMP_VECTORS;
	verbs_set_ops(&ctx->vctx, &usiw_context_ops);
	return &ctx->vctx;
}

static void usiw_free_context(struct ibv_context *context)
{
	struct usiw_context *ctx = usiw_context_of(context);
	struct usiw_engine *engine = ctx->engine;

	usiw_mr_table_fini(&ctx->mrs);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	usiw_engine_put(engine);
}
