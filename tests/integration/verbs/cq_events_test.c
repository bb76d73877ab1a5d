/* Completions and completion events through the QP layer's interface: this
 * program links the verbs front-end statically, opens usiw0 through the
 * ordinary libibverbs calls, and plays the QP layer with usiw_cq_reserve and
 * usiw_cq_commit. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "context.h"
#include "cq.h"
#include "mr.h"

#include "../check.h"

static bool readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

static struct ibv_wc completion(uint64_t wr_id, enum ibv_wc_status status)
{
	struct ibv_wc wc = {
		.wr_id = wr_id,
		.status = status,
		.opcode = IBV_WC_RECV,
		.byte_len = 64,
	};
	return wc;
}

/* As the QP layer appends a completion: 0, or -ENOSPC if the CQ is full. */
static int push(struct usiw_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	struct ibv_wc *entry = usiw_cq_reserve(cq);

	if (!entry)
		return -ENOSPC;
	*entry = *wc;
	usiw_cq_commit(cq, solicited);
	return 0;
}

/* One event: ibv_get_cq_event hands back the CQ and its context. */
static void expect_event(struct ibv_comp_channel *channel, struct ibv_cq *cq)
{
	struct ibv_cq *event_cq = NULL;
	void *event_context = NULL;

	CHECK(readable(channel->fd));
	CHECK(ibv_get_cq_event(channel, &event_cq, &event_context) == 0);
	CHECK(event_cq == cq);
	CHECK(event_context == cq->cq_context);
	ibv_ack_cq_events(cq, 1);
	CHECK(!readable(channel->fd));
}

static void check_events(struct ibv_context *ctx)
{
	struct ibv_comp_channel *channel = ibv_create_comp_channel(ctx);
	int cookie;
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, &cookie, channel, 0);
	struct ibv_wc wc[8];

	CHECK(channel && cq);
	if (!channel || !cq)
		return;
	struct usiw_cq *ucq = usiw_cq_of(cq);
	struct ibv_wc ok = completion(1, IBV_WC_SUCCESS);

	/* Not armed: completions queue, no event. */
	CHECK(push(ucq, &ok, false) == 0);
	CHECK(!readable(channel->fd));
	CHECK(ibv_poll_cq(cq, 8, wc) == 1);
	CHECK(wc[0].wr_id == 1 && wc[0].status == IBV_WC_SUCCESS);
	CHECK(ibv_poll_cq(cq, 8, wc) == 0);

	/* Armed for any completion: one event, then disarmed. */
	CHECK(ibv_req_notify_cq(cq, 0) == 0);
	ok.wr_id = 2;
	CHECK(push(ucq, &ok, false) == 0);
	expect_event(channel, cq);
	ok.wr_id = 3;
	CHECK(push(ucq, &ok, false) == 0);
	CHECK(!readable(channel->fd));
	CHECK(ibv_poll_cq(cq, 8, wc) == 2);
	CHECK(wc[0].wr_id == 2 && wc[1].wr_id == 3);

	/* Solicited only: an ordinary completion does not wake it, a
	 * solicited one does, and so does an unsuccessful one. */
	CHECK(ibv_req_notify_cq(cq, 1) == 0);
	ok.wr_id = 4;
	CHECK(push(ucq, &ok, false) == 0);
	CHECK(!readable(channel->fd));
	ok.wr_id = 5;
	CHECK(push(ucq, &ok, true) == 0);
	expect_event(channel, cq);
	CHECK(ibv_req_notify_cq(cq, 1) == 0);
	struct ibv_wc flushed = completion(6, IBV_WC_WR_FLUSH_ERR);
	CHECK(push(ucq, &flushed, false) == 0);
	expect_event(channel, cq);
	CHECK(ibv_poll_cq(cq, 8, wc) == 3);
	CHECK(wc[0].wr_id == 4 && wc[1].wr_id == 5 && wc[2].wr_id == 6);
	CHECK(wc[2].status == IBV_WC_WR_FLUSH_ERR);

	/* A solicited-only request does not weaken an arm for any. */
	CHECK(ibv_req_notify_cq(cq, 0) == 0);
	CHECK(ibv_req_notify_cq(cq, 1) == 0);
	ok.wr_id = 7;
	CHECK(push(ucq, &ok, false) == 0);
	expect_event(channel, cq);
	CHECK(ibv_poll_cq(cq, 8, wc) == 1);

	/* Full: the CQ holds cq->cqe completions, and the next overruns. */
	for (int i = 0; i < cq->cqe; i++)
		CHECK(push(ucq, &ok, false) == 0);
	CHECK(push(ucq, &ok, false) == -ENOSPC);
	CHECK(ibv_poll_cq(cq, 8, wc) == cq->cqe);

	/* A QP completing into the CQ keeps it alive. */
	usiw_cq_hold(ucq);
	errno = 0;
	CHECK(ibv_destroy_cq(cq) == EBUSY);
	CHECK(errno == EBUSY);
	usiw_cq_put(ucq);

	/* An event nobody read does not hold up the destruction of its CQ
	 * (an app that stops its event thread before tearing down), and the
	 * channel's events of other CQs stay in it. */
	int other_cookie;
	struct ibv_cq *other = ibv_create_cq(ctx, 4, &other_cookie, channel, 0);
	CHECK(other != NULL);
	if (!other)
		return;
	CHECK(ibv_req_notify_cq(cq, 0) == 0);
	CHECK(ibv_req_notify_cq(other, 0) == 0);
	CHECK(push(ucq, &ok, false) == 0);
	CHECK(push(usiw_cq_of(other), &ok, false) == 0);
	CHECK(ibv_destroy_cq(cq) == 0);
	expect_event(channel, other);
	CHECK(!readable(channel->fd));
	CHECK(ibv_destroy_cq(other) == 0);
	CHECK(ibv_destroy_comp_channel(channel) == 0);
}

/* usiw_mr_lookup: what the QP layer checks each placement and SGE with. */
static void check_mr_lookup(struct ibv_context *ctx)
{
	static char buf[256];
	struct usiw_context *uctx = usiw_context_of(ctx);
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *other_pd = ibv_alloc_pd(ctx);
	void *host = NULL;

	CHECK(pd && other_pd);
	if (!pd || !other_pd)
		return;
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf),
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr);
	if (!mr)
		return;
	uint64_t base = (uintptr_t)buf;

	CHECK(usiw_mr_lookup(uctx, mr->rkey, base + 16, 32,
			     IBV_ACCESS_REMOTE_WRITE, pd, &host) == USIW_MR_OK);
	CHECK(host == buf + 16);
	CHECK(usiw_mr_lookup(uctx, mr->rkey, base, sizeof(buf), 0, pd, &host) ==
	      USIW_MR_OK);
	CHECK(usiw_mr_lookup(uctx, mr->rkey ^ 1, base, 1, 0, pd, &host) ==
	      USIW_MR_INVALID_STAG);
	CHECK(usiw_mr_lookup(uctx, mr->rkey, base, 1, 0, other_pd, &host) ==
	      USIW_MR_PD_MISMATCH);
	CHECK(usiw_mr_lookup(uctx, mr->rkey, base, 1, IBV_ACCESS_REMOTE_READ,
			     pd, &host) == USIW_MR_ACCESS_VIOLATION);
	CHECK(usiw_mr_lookup(uctx, mr->rkey, base + 250, 7, 0, pd, &host) ==
	      USIW_MR_BOUNDS_VIOLATION);
	CHECK(usiw_mr_lookup(uctx, mr->rkey, base - 1, 1, 0, pd, &host) ==
	      USIW_MR_BOUNDS_VIOLATION);
	CHECK(usiw_mr_lookup(uctx, mr->rkey, UINT64_MAX, 2, 0, pd, &host) ==
	      USIW_MR_BOUNDS_VIOLATION);

	/* ibv_reg_mr_iova: peers address the region by its iova. */
	struct ibv_mr *at_iova = ibv_reg_mr_iova(pd, buf, sizeof(buf), 0x1000,
						 IBV_ACCESS_LOCAL_WRITE |
						 IBV_ACCESS_REMOTE_READ);
	CHECK(at_iova);
	if (at_iova) {
		CHECK(usiw_mr_lookup(uctx, at_iova->rkey, 0x1010, 16,
				     IBV_ACCESS_REMOTE_READ, pd, &host) ==
		      USIW_MR_OK);
		CHECK(host == buf + 0x10);
		CHECK(ibv_dereg_mr(at_iova) == 0);
	}

	uint32_t stag = mr->rkey;
	CHECK(ibv_dereg_mr(mr) == 0);
	CHECK(usiw_mr_lookup(uctx, stag, base, 1, 0, pd, &host) ==
	      USIW_MR_INVALID_STAG);
	CHECK(ibv_dealloc_pd(pd) == 0);
	CHECK(ibv_dealloc_pd(other_pd) == 0);
}

int main(void)
{
	int n;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx = NULL;

	CHECK(list);
	for (int i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "usiw0"))
			ctx = ibv_open_device(list[i]);
	CHECK(ctx);
	if (ctx) {
		check_events(ctx);
		check_mr_lookup(ctx);
		CHECK(ibv_close_device(ctx) == 0);
	}
	if (list)
		ibv_free_device_list(list);
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("completions, events and MR lookups behave\n");
	return 0;
}
