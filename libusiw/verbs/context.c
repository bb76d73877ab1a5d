/* Opening and closing usiw0, and the table of verbs it implements. */
#include "context.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "attributes.h"
#include "cq.h"
#include "device.h"
#include "limits.h"
#include "mr.h"
#include "pd.h"
#include "progress.h"
#include "qp.h"
#include "qp_cm.h"
#include "provider_abi.h"

static void usiw_free_context(struct ibv_context *context);

/* The engine, once started, stays for the life of the process: closing the
 * last context does not stop it.  Applications open and close the device
 * before they open it for good (libfabric's fi_getinfo does), and a second
 * start cannot work: DPDK's EAL starts once per process, and DPDK 22.11
 * keeps a closed memif server's socket listening until a client next
 * connects to it, so the reopened port would find its socket taken. */
static void keep_engine(void)
{
	static atomic_flag kept = ATOMIC_FLAG_INIT;
	struct usiw_engine *again;

	if (!atomic_flag_test_and_set(&kept) && usiw_engine_get(&again) != 0)
		atomic_flag_clear(&kept);
}

/* Every verb usiw0 implements.  The members left out keep libibverbs'
 * defaults, which fail cleanly with EOPNOTSUPP: AHs, memory windows, extended
 * CQs and QPs, rereg_mr, and the rest. */
static const struct verbs_context_ops usiw_context_ops = {
	.alloc_pd = usiw_alloc_pd,
	.create_cq = usiw_create_cq,
	.create_qp = usiw_create_qp,
	.create_srq = usiw_create_srq,
	.dealloc_pd = usiw_dealloc_pd,
	.dereg_mr = usiw_dereg_mr,
	.destroy_cq = usiw_destroy_cq,
	.destroy_qp = usiw_destroy_qp,
	.destroy_srq = usiw_destroy_srq,
	.free_context = usiw_free_context,
	.modify_qp = usiw_modify_qp,
	.modify_srq = usiw_modify_srq,
	.poll_cq = usiw_poll_cq,
	.post_recv = usiw_post_recv,
	.post_send = usiw_post_send,
	.post_srq_recv = usiw_post_srq_recv,
	.query_device_ex = usiw_query_device_ex,
	.query_port = usiw_query_port,
	.query_qp = usiw_query_qp,
	.query_srq = usiw_query_srq,
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
	ctx->engine = engine;
	keep_engine();
	/* Every usiw process answers for its closed ports (connections
	 * refused, destroyed QPs' peers reset), whether or not it uses the
	 * connection manager itself. */
	usiw_udp_set_closed_port_answer(engine, usiw_qp_cm_closed_port_answer);
	rc = usiw_mr_table_init(&ctx->mrs);
	if (!rc) {
		rc = usiw_progress_init(ctx);
		if (rc)
			usiw_mr_table_fini(&ctx->mrs);
	}
	if (rc) {
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		usiw_engine_put(engine);
		errno = -rc;
		return NULL;
	}
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

	usiw_progress_fini(ctx);
	usiw_mr_table_fini(&ctx->mrs);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	usiw_engine_put(engine);
}
