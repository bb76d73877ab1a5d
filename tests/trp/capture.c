/* See capture.h. */
#include "capture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

static int capture_xmit(void *ctx, const void *hdr, size_t hdr_len, const void *data,
                        size_t data_len, void *cookie)
{
	struct capture *c = ctx;

	(void)cookie;
	assert_true(hdr_len + data_len <= sizeof(c->pkt));
	memcpy(c->pkt, hdr, hdr_len);
	if (data_len)
		memcpy(c->pkt + hdr_len, data, data_len);
	c->len = hdr_len + data_len;
	c->sent++;
	return 0;
}

static uint64_t capture_now(void *ctx)
{
	return ((struct capture *)ctx)->now;
}

static bool capture_deliver(void *ctx, uint32_t psn, const void *payload, size_t len)
{
	struct capture *c = ctx;

	(void)psn;
	assert_true(len <= sizeof(c->got));
	memcpy(c->got, payload, len);
	c->got_len = len;
	c->delivered++;
	return true;
}

static void capture_in_order(void *ctx, uint32_t next_psn)
{
	(void)ctx, (void)next_psn;
}

static void capture_acked(void *ctx, void *cookie, int status)
{
	struct capture *c = ctx;

	(void)cookie;
	if (status == TRP_OK)
		c->acked_ok++;
	else
		c->acked_err++;
}

static void capture_event(void *ctx, enum trp_event_type type, int status, const void *pdata,
                          size_t pdata_len)
{
	struct capture *c = ctx;

	(void)pdata;
	c->ev = type;
	c->ev_status = status;
	c->ev_pdata_len = pdata_len;
	c->n_ev++;
}

const struct trp_ops capture_ops = {
	.xmit = capture_xmit,
	.now_ns = capture_now,
	.deliver = capture_deliver,
	.in_order = capture_in_order,
	.acked = capture_acked,
	.event = capture_event,
};
