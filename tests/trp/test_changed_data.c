/* A retransmission carries the data the sender's memory holds when it goes,
 * with a checksum of that data: an application that changes a buffer before
 * its work request completes gets undefined data at the peer (RDMA's rule),
 * never a connection that fails because each retransmission looks corrupt.
 * Two endpoints joined by hand, so the test decides which packet is lost. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "trp/trp.h"

#define MAX_DGRAM 256

struct end {
	struct trp_conn *conn;
	uint8_t out[MAX_DGRAM];     /* the last datagram it sent */
	size_t out_len;
	unsigned sent;
	uint8_t got[MAX_DGRAM];     /* the last payload delivered to it */
	size_t got_len;
	unsigned delivered, acked_ok;
};

static uint64_t now_ns;

static int end_xmit(void *ctx, const void *hdr, size_t hdr_len, const void *data,
                    size_t data_len, void *cookie)
{
	struct end *e = ctx;

	(void)cookie;
	assert_true(hdr_len + data_len <= MAX_DGRAM);
	memcpy(e->out, hdr, hdr_len);
	if (data_len)
		memcpy(e->out + hdr_len, data, data_len);
	e->out_len = hdr_len + data_len;
	e->sent++;
	return 0;
}

static uint64_t end_now(void *ctx)
{
	(void)ctx;
	return now_ns;
}

static bool end_deliver(void *ctx, uint32_t psn, const void *payload, size_t len)
{
	struct end *e = ctx;

	(void)psn;
	assert_true(len <= MAX_DGRAM);
	memcpy(e->got, payload, len);
	e->got_len = len;
	e->delivered++;
	return true;
}

static void end_in_order(void *ctx, uint32_t next_psn)
{
	(void)ctx, (void)next_psn;
}

static void end_acked(void *ctx, void *cookie, int status)
{
	struct end *e = ctx;

	(void)cookie;
	if (status == TRP_OK)
		e->acked_ok++;
}

static void end_event(void *ctx, enum trp_event_type type, int status, const void *pdata,
                      size_t pdata_len)
{
	(void)ctx, (void)type, (void)status, (void)pdata, (void)pdata_len;
}

static const struct trp_ops end_ops = {
	.xmit = end_xmit, .now_ns = end_now, .deliver = end_deliver,
	.in_order = end_in_order, .acked = end_acked, .event = end_event,
};

/* Hands `from`'s last datagram to `to`. */
static void carry(struct end *from, struct end *to)
{
	trp_input(to->conn, from->out, from->out_len);
}

static void test_retransmission_of_changed_data(void **state)
{
	struct trp_config cfg;
	struct end a = {0}, b = {0};
	const uint8_t ulp_hdr[4] = { 0xc1, 0x40, 0x00, 0x01 };
	uint8_t credit[4] = { 0, 0, 0, 3 };
	struct trp_stats st;

	(void)state;
	trp_config_default(&cfg);
	assert_true(cfg.checksum);
	a.conn = trp_conn_create(&cfg, &end_ops, &a);
	b.conn = trp_conn_create(&cfg, &end_ops, &b);
	assert_non_null(a.conn);
	assert_non_null(b.conn);
	assert_int_equal(trp_conn_establish(a.conn, 100, 200), 0);
	assert_int_equal(trp_conn_establish(b.conn, 200, 100), 0);

	/* The first transmission is lost; the application then rewrites the
	 * buffer, as perftest's credit Writes do. */
	assert_true(trp_send(a.conn, ulp_hdr, sizeof(ulp_hdr), credit, sizeof(credit), NULL) >= 0);
	assert_int_equal(a.sent, 1);
	credit[3] = 4;

	/* The retransmission timer fires: what goes is the buffer as it is. */
	now_ns = trp_next_deadline(a.conn);
	trp_poll(a.conn);
	assert_int_equal(a.sent, 2);
	carry(&a, &b);
	trp_conn_stats(b.conn, &st);
	assert_int_equal(st.checksum_dropped, 0);
	assert_int_equal(b.delivered, 1);
	assert_int_equal(b.got_len, sizeof(ulp_hdr) + sizeof(credit));
	assert_memory_equal(b.got, ulp_hdr, sizeof(ulp_hdr));
	assert_int_equal(b.got[sizeof(ulp_hdr) + 3], 4);

	/* B's acknowledgement completes A's send. */
	now_ns = trp_next_deadline(b.conn);
	trp_poll(b.conn);
	assert_true(b.sent >= 1);
	carry(&b, &a);
	assert_int_equal(a.acked_ok, 1);
	assert_int_equal(trp_unacked(a.conn), 0);

	trp_conn_destroy(a.conn);
	trp_conn_destroy(b.conn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retransmission_of_changed_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
