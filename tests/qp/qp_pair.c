#include "qp_pair.h"

#include <stdlib.h>
#include <string.h>

static struct qp_pair_side *side_of(void *ctx)
{
	return ctx;
}

static int host_xmit(void *ctx, const void *hdr, size_t hdr_len, const void *data,
		     size_t data_len)
{
	struct qp_pair_side *s = side_of(ctx);
	struct qp_pair *p = s->pair;

	/* the simulated link carries one flat datagram, as a NIC would */
	if (hdr_len + data_len > p->frame_cap)
		abort();
	memcpy(p->frame, hdr, hdr_len);
	if (data_len)
		memcpy(p->frame + hdr_len, data, data_len);
	simlink_send(p->link, s->side, p->frame, hdr_len + data_len);
	return 0;
}

static uint64_t host_now(void *ctx)
{
	return simlink_now(side_of(ctx)->pair->link);
}

static void host_complete(void *ctx, const struct rdmap_wc *wc)
{
	test_wcs_collect(&side_of(ctx)->wcs, wc);
}

static void host_event(void *ctx, enum trp_event_type type, int status, const void *pdata,
		       size_t pdata_len)
{
	struct qp_pair_side *s = side_of(ctx);

	(void)pdata;
	(void)pdata_len;
	if (s->n_ev < QP_PAIR_MAX_EVENTS) {
		s->ev[s->n_ev] = type;
		s->ev_status[s->n_ev++] = status;
	}
	if (type == TRP_EV_CONNECT_REQUEST)
		trp_accept(qp_stack_conn(s->qs), 0x7000u + s->side, NULL, 0);
}

static const struct qp_stack_host_ops pair_host_ops = {
	.xmit = host_xmit,
	.now_ns = host_now,
	.complete = host_complete,
	.event = host_event,
};

static void link_deliver(void *ctx, enum simlink_side to, const void *buf, size_t len)
{
	struct qp_pair *p = ctx;

	qp_stack_input(p->side[to].qs, buf, len);
}

static uint64_t link_next_timer(void *ctx)
{
	struct qp_pair *p = ctx;
	uint64_t a = qp_stack_next_deadline(p->side[0].qs);
	uint64_t b = qp_stack_next_deadline(p->side[1].qs);

	return a < b ? a : b;
}

static void link_timer(void *ctx)
{
	struct qp_pair *p = ctx;

	qp_stack_poll(p->side[0].qs);
	qp_stack_poll(p->side[1].qs);
}

static const struct simlink_ops pair_link_ops = {
	.deliver = link_deliver,
	.next_timer = link_next_timer,
	.timer = link_timer,
};

void qp_pair_config_default(struct qp_pair_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	simlink_config_default(&cfg->link);
	cfg->link.dir[0].delay_ns = cfg->link.dir[1].delay_ns = 5000;
	trp_config_default(&cfg->trp);
	cfg->max_seg_payload = 4000;
	cfg->sq_depth = 256;
	cfg->rq_depth = 256;
	cfg->max_sge = 4;
	cfg->ord_ird = 16;
}

int qp_pair_init(struct qp_pair *p, const struct qp_pair_config *cfg)
{
	memset(p, 0, sizeof(*p));
	p->frame_cap = TRP_HDR_LEN + RDMAP_ULP_HDR_MAX + cfg->max_seg_payload;
	p->frame = malloc(p->frame_cap);
	p->link = simlink_create(&cfg->link, &pair_link_ops, p);
	if (!p->frame || !p->link)
		return -1;
	for (int i = 0; i < 2; i++) {
		struct qp_pair_side *s = &p->side[i];
		s->pair = p;
		s->side = (enum simlink_side)i;
		s->mr_ctx.table = &p->mrs;
		s->mr_ctx.pd = 1;
		struct rdmap_ep_attr attr = {
			.sq_depth = cfg->sq_depth,
			.rq_depth = cfg->rq_depth,
			.max_send_sge = cfg->max_sge,
			.max_recv_sge = cfg->max_sge,
			.max_inline = 64,
			.max_seg_payload = cfg->max_seg_payload,
			.ord = cfg->ord_ird,
			.ird = cfg->ord_ird,
			.mr = &test_mr_ops,
			.mr_ctx = &s->mr_ctx,
		};
		s->qs = qp_stack_create(&cfg->trp, &attr, &pair_host_ops, s);
		if (!s->qs)
			return -1;
	}
	return 0;
}

void qp_pair_fini(struct qp_pair *p)
{
	for (int i = 0; i < 2; i++) {
		qp_stack_destroy(p->side[i].qs);
		test_wcs_free(&p->side[i].wcs);
	}
	simlink_destroy(p->link);
	test_mr_table_free(&p->mrs);
	free(p->frame);
}

static bool both_established(void *arg)
{
	struct qp_pair *p = arg;

	return qp_pair_has_event(&p->side[0], TRP_EV_ESTABLISHED) &&
	       qp_pair_has_event(&p->side[1], TRP_EV_ESTABLISHED);
}

bool qp_pair_connect(struct qp_pair *p)
{
	if (trp_connect(qp_stack_conn(p->side[0].qs), 0x1000u, 0xc0ffee01u, NULL, 0))
		return false;
	return simlink_run(p->link, simlink_now(p->link) + 10000000000ull, both_established, p);
}

struct wcs_goal {
	struct qp_pair *p;
	size_t n[2];
};

static bool wcs_reached(void *arg)
{
	struct wcs_goal *g = arg;

	return g->p->side[0].wcs.count >= g->n[0] && g->p->side[1].wcs.count >= g->n[1];
}

bool qp_pair_run_until_wcs(struct qp_pair *p, size_t wcs_a, size_t wcs_b, uint64_t until_ns)
{
	struct wcs_goal goal = { .p = p, .n = { wcs_a, wcs_b } };

	return simlink_run(p->link, until_ns, wcs_reached, &goal);
}

bool qp_pair_has_event(const struct qp_pair_side *s, enum trp_event_type type)
{
	for (unsigned i = 0; i < s->n_ev; i++)
		if (s->ev[i] == type)
			return true;
	return false;
}
