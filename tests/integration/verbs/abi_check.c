/* Checks libusiw/verbs/provider_abi.h against the installed libibverbs.
 *
 * The private provider interface has no header on this system, so our
 * declarations could silently disagree with the library.  This test (which
 * links libibverbs plainly, with no preload) checks that every symbol we
 * call or replace exists at the version we name, and then plays provider
 * itself: it registers a device whose every operation records its call, opens
 * it through libibverbs' own ibv_open_device, and drives the public entry
 * points.  Each must land in the operation it belongs to, which holds only if
 * our verbs_device, verbs_context_ops and verbs_mr have rdma-core's layout. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "overrides.h"
#include "provider_abi.h"

#include "../check.h"

static void check_symbol(void *lib, const char *name, const char *version)
{
	if (!dlvsym(lib, name, version)) {
		fprintf(stderr, "FAILED: libibverbs has no %s@%s\n", name,
			version);
		failures++;
	}
}

static void check_symbols(void)
{
	void *lib = dlopen("libibverbs.so.1", RTLD_NOW);

	CHECK(lib);
	if (!lib)
		return;
#define CHECK_OVERRIDDEN(name, version) check_symbol(lib, #name, version);
	USIW_OVERRIDDEN_SYMBOLS(CHECK_OVERRIDDEN)
	check_symbol(lib, "_verbs_init_and_alloc_context", USIW_IBVERBS_PRIVATE);
	check_symbol(lib, "verbs_uninit_context", USIW_IBVERBS_PRIVATE);
	check_symbol(lib, "verbs_set_ops", USIW_IBVERBS_PRIVATE);
	dlclose(lib);
}

static void check_defined_in(void *handle, const char *path, const char *name)
{
	void *symbol = dlsym(handle, name);
	Dl_info info;

	if (!symbol || !dladdr(symbol, &info) ||
	    strcmp(info.dli_fname, path) != 0) {
		fprintf(stderr, "FAILED: %s does not export %s\n", path, name);
		failures++;
	}
}

/* libusiw.so exports exactly what overrides.h lists (libusiw.map says it
 * again, for the linker). */
static void check_preload_exports(const char *preload_path)
{
	/* Never unloaded: DPDK's libraries, which it pulls in, allocate as
	 * they load (driver registrations), and once unloaded their blocks
	 * would look leaked to LeakSanitizer, by code it cannot name. */
	void *preload = dlopen(preload_path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);

	if (!preload) {
		fprintf(stderr, "FAILED: dlopen %s: %s\n", preload_path, dlerror());
		failures++;
		return;
	}
/* dlsym on the handle also searches its dependencies (libibverbs), so
 * where the symbol was found is what tells. */
#define CHECK_EXPORTED(name, version)                                          \
	check_defined_in(preload, preload_path, #name);
	USIW_OVERRIDDEN_SYMBOLS(CHECK_EXPORTED)
	dlclose(preload);
}

static void check_records(void)
{
	struct usiw_comp_event_record ours;
	struct ib_uverbs_comp_event_desc kernels;

	CHECK(sizeof(ours) == sizeof(kernels));
	CHECK(offsetof(struct usiw_comp_event_record, cq_handle) ==
	      offsetof(struct ib_uverbs_comp_event_desc, cq_handle));
	CHECK(offsetof(struct verbs_device, device) == 0);
	CHECK(offsetof(struct verbs_mr, ibv_mr) == 0);
}

/* Which recording operation ran last. */
static const char *called;

static struct ibv_pd recorded_pd;
static struct verbs_mr recorded_mr;
static struct ibv_cq recorded_cq;
static struct verbs_mr *dereg_mr_argument;
static size_t query_device_attr_size;

static struct ibv_pd *rec_alloc_pd(struct ibv_context *c)
{
	(void)c;
	called = "alloc_pd";
	return &recorded_pd;
}
static int rec_dealloc_pd(struct ibv_pd *pd)
{
	(void)pd;
	called = "dealloc_pd";
	return 0;
}
static struct ibv_mr *rec_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				 uint64_t iova, int access)
{
	(void)pd, (void)addr, (void)len, (void)iova, (void)access;
	called = "reg_mr";
	return &recorded_mr.ibv_mr;
}
static int rec_dereg_mr(struct verbs_mr *vmr)
{
	called = "dereg_mr";
	dereg_mr_argument = vmr;
	return 0;
}
static struct ibv_cq *rec_create_cq(struct ibv_context *c, int cqe,
				    struct ibv_comp_channel *ch, int vec)
{
	(void)c, (void)cqe, (void)ch, (void)vec;
	called = "create_cq";
	return &recorded_cq;
}
static int rec_destroy_cq(struct ibv_cq *cq)
{
	(void)cq;
	called = "destroy_cq";
	return 0;
}
static int rec_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	(void)cq, (void)n, (void)wc;
	called = "poll_cq";
	return 0;
}
static int rec_req_notify_cq(struct ibv_cq *cq, int solicited)
{
	(void)cq, (void)solicited;
	called = "req_notify_cq";
	return 0;
}
static int rec_query_device_ex(struct ibv_context *c,
			       const struct ibv_query_device_ex_input *in,
			       struct ibv_device_attr_ex *attr, size_t size)
{
	(void)c, (void)in, (void)attr;
	called = "query_device_ex";
	query_device_attr_size = size;
	return 0;
}
static int rec_query_port(struct ibv_context *c, uint8_t port,
			  struct ibv_port_attr *attr)
{
	(void)c, (void)port, (void)attr;
	called = "query_port";
	return 0;
}
static struct ibv_qp *rec_create_qp(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr)
{
	(void)pd, (void)attr;
	called = "create_qp";
	return NULL;
}
static int rec_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	(void)qp, (void)attr, (void)mask;
	called = "modify_qp";
	return 0;
}
static int rec_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
			struct ibv_qp_init_attr *init)
{
	(void)qp, (void)attr, (void)mask, (void)init;
	called = "query_qp";
	return 0;
}
static int rec_destroy_qp(struct ibv_qp *qp)
{
	(void)qp;
	called = "destroy_qp";
	return 0;
}
static int rec_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad)
{
	(void)qp, (void)wr, (void)bad;
	called = "post_send";
	return 0;
}
static int rec_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad)
{
	(void)qp, (void)wr, (void)bad;
	called = "post_recv";
	return 0;
}
static struct ibv_srq *rec_create_srq(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr)
{
	(void)pd, (void)attr;
	called = "create_srq";
	return NULL;
}
static int rec_destroy_srq(struct ibv_srq *srq)
{
	(void)srq;
	called = "destroy_srq";
	return 0;
}
static int rec_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad)
{
	(void)srq, (void)wr, (void)bad;
	called = "post_srq_recv";
	return 0;
}

static void rec_free_context(struct ibv_context *c)
{
	struct verbs_context *vctx =
		(struct verbs_context *)((char *)c -
					 offsetof(struct verbs_context, context));
	called = "free_context";
	verbs_uninit_context(vctx);
	free(vctx);
}

static const struct verbs_context_ops recording_ops = {
	.alloc_pd = rec_alloc_pd,
	.create_cq = rec_create_cq,
	.create_qp = rec_create_qp,
	.create_srq = rec_create_srq,
	.dealloc_pd = rec_dealloc_pd,
	.dereg_mr = rec_dereg_mr,
	.destroy_cq = rec_destroy_cq,
	.destroy_qp = rec_destroy_qp,
	.destroy_srq = rec_destroy_srq,
	.free_context = rec_free_context,
	.modify_qp = rec_modify_qp,
	.poll_cq = rec_poll_cq,
	.post_recv = rec_post_recv,
	.post_send = rec_post_send,
	.post_srq_recv = rec_post_srq_recv,
	.query_device_ex = rec_query_device_ex,
	.query_port = rec_query_port,
	.query_qp = rec_query_qp,
	.reg_mr = rec_reg_mr,
	.req_notify_cq = rec_req_notify_cq,
};

static int alloc_context_cmd_fd = 99;

static struct verbs_context *rec_alloc_context(struct ibv_device *device,
					       int cmd_fd, void *private_data)
{
	struct verbs_context *vctx;

	(void)private_data;
	alloc_context_cmd_fd = cmd_fd;
	vctx = _verbs_init_and_alloc_context(device, cmd_fd, sizeof(*vctx),
					     NULL, USIW_RDMA_DRIVER_UNKNOWN);
	if (vctx)
		verbs_set_ops(vctx, &recording_ops);
	return vctx;
}

static const struct verbs_device_ops recording_device_ops = {
	.name = "abi-check",
	.alloc_context = rec_alloc_context,
};

static struct verbs_device recording_device = {
	.device = {
		.node_type = IBV_NODE_RNIC,
		.transport_type = IBV_TRANSPORT_IWARP,
		.name = "abi-check0",
	},
	.ops = &recording_device_ops,
	.refcount = 1,
};

#define CHECK_CALLED(expr, op)                                                 \
	do {                                                                   \
		called = NULL;                                                 \
		(void)(expr);                                                  \
		if (!called || strcmp(called, op)) {                           \
			fprintf(stderr,                                        \
				"%s:%d: FAILED: %s reached %s, not %s\n",      \
				__FILE__, __LINE__, #expr,                     \
				called ? called : "nothing", op);              \
			failures++;                                            \
		}                                                              \
	} while (0)

static void check_dispatch(void)
{
	struct ibv_context *ctx = ibv_open_device(&recording_device.device);

	CHECK(ctx);
	if (!ctx)
		return;
	/* A device without sysfs is opened with no kernel command fd, and
	 * the open holds a reference in the refcount we declared. */
	CHECK(alloc_context_cmd_fd == -1);
	CHECK(ctx->device == &recording_device.device);
	CHECK(ctx->cmd_fd == -1);
	CHECK(ctx->async_fd == -1);
	CHECK(atomic_load(&recording_device.refcount) == 2);

	struct ibv_device_attr dattr;
	struct ibv_device_attr_ex dattr_ex;
	struct ibv_port_attr pattr;
	char buf[64];
	CHECK_CALLED(ibv_query_device(ctx, &dattr), "query_device_ex");
	CHECK(query_device_attr_size == sizeof(dattr));
	CHECK_CALLED(ibv_query_device_ex(ctx, NULL, &dattr_ex), "query_device_ex");
	CHECK(query_device_attr_size == sizeof(dattr_ex));
	CHECK_CALLED(ibv_query_port(ctx, 1, &pattr), "query_port");

	struct ibv_pd *pd;
	CHECK_CALLED(pd = ibv_alloc_pd(ctx), "alloc_pd");
	CHECK(pd == &recorded_pd && pd->context == ctx);
	struct ibv_mr *mr;
	CHECK_CALLED(mr = ibv_reg_mr(pd, buf, sizeof(buf),
				     IBV_ACCESS_LOCAL_WRITE),
		     "reg_mr");
	CHECK(mr == &recorded_mr.ibv_mr && mr->addr == buf);
	CHECK_CALLED(ibv_dereg_mr(mr), "dereg_mr");
	CHECK(dereg_mr_argument == &recorded_mr);

	struct ibv_cq *cq;
	struct ibv_wc wc;
	CHECK_CALLED(cq = ibv_create_cq(ctx, 1, NULL, NULL, 0), "create_cq");
	CHECK(cq == &recorded_cq && cq->context == ctx);
	CHECK_CALLED(ibv_poll_cq(cq, 1, &wc), "poll_cq");
	CHECK_CALLED(ibv_req_notify_cq(cq, 0), "req_notify_cq");

	/* The QP and SRQ operations the QP layer will fill in. */
	struct ibv_qp_init_attr qp_init = { .send_cq = cq, .recv_cq = cq };
	struct ibv_qp qp = { .context = ctx, .pd = pd };
	struct ibv_qp_attr qp_attr = { 0 };
	struct ibv_send_wr swr = { 0 }, *bad_swr;
	struct ibv_recv_wr rwr = { 0 }, *bad_rwr;
	CHECK_CALLED(ibv_create_qp(pd, &qp_init), "create_qp");
	CHECK_CALLED(ibv_modify_qp(&qp, &qp_attr, 0), "modify_qp");
	CHECK_CALLED(ibv_query_qp(&qp, &qp_attr, 0, &qp_init), "query_qp");
	CHECK_CALLED(ibv_post_send(&qp, &swr, &bad_swr), "post_send");
	CHECK_CALLED(ibv_post_recv(&qp, &rwr, &bad_rwr), "post_recv");
	CHECK_CALLED(ibv_destroy_qp(&qp), "destroy_qp");
	struct ibv_srq_init_attr srq_init = { 0 };
	struct ibv_srq srq = { .context = ctx, .pd = pd };
	CHECK_CALLED(ibv_create_srq(pd, &srq_init), "create_srq");
	CHECK_CALLED(ibv_post_srq_recv(&srq, &rwr, &bad_rwr), "post_srq_recv");
	CHECK_CALLED(ibv_destroy_srq(&srq), "destroy_srq");

	CHECK_CALLED(ibv_destroy_cq(cq), "destroy_cq");
	CHECK_CALLED(ibv_dealloc_pd(pd), "dealloc_pd");
	CHECK_CALLED(ibv_close_device(ctx), "free_context");
	CHECK(atomic_load(&recording_device.refcount) == 1);
}

int main(int argc, char **argv)
{
	check_symbols();
	if (argc > 1)
		check_preload_exports(argv[1]);
	check_records();
	check_dispatch();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("provider ABI matches the installed libibverbs (%s)\n",
	       USIW_IBVERBS_PRIVATE);
	return 0;
}
