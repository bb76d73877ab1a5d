/* A retransmission carries the data the sender's memory holds when it goes,
 * with a checksum of that data: an application that changes a buffer before
 * its work request completes gets undefined data at the peer (RDMA's rule),
 * never a connection that fails because each retransmission looks corrupt.
 * Two endpoints joined by hand, so the test decides which packet is lost. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "capture.h"

/* Hands `from`'s last datagram to `to`. */
static void carry(struct capture *from, struct trp_conn *to)
{
	trp_input(to, from->pkt, from->len);
}

static void test_retransmission_of_changed_data(void **state)
{
	struct trp_config cfg;
	struct capture a = {0}, b = {0};
	const uint8_t ulp_hdr[4] = { 0xc1, 0x40, 0x00, 0x01 };
	uint8_t credit[4] = { 0, 0, 0, 3 };
	struct trp_stats st;

	(void)state;
	trp_config_default(&cfg);
	assert_true(cfg.checksum);
	struct trp_conn *conn_a = trp_conn_create(&cfg, &capture_ops, &a);
	struct trp_conn *conn_b = trp_conn_create(&cfg, &capture_ops, &b);
	assert_non_null(conn_a);
	assert_non_null(conn_b);
	assert_int_equal(trp_conn_establish(conn_a, 100, 200), 0);
	assert_int_equal(trp_conn_establish(conn_b, 200, 100), 0);

	/* The first transmission is lost; the application then rewrites the
	 * buffer, as perftest's credit Writes do. */
	assert_true(trp_send(conn_a, ulp_hdr, sizeof(ulp_hdr), credit, sizeof(credit), NULL) >= 0);
	assert_int_equal(a.sent, 1);
	credit[3] = 4;

	/* The retransmission timer fires: what goes is the buffer as it is. */
	a.now = trp_next_deadline(conn_a);
	trp_poll(conn_a);
	assert_int_equal(a.sent, 2);
	carry(&a, conn_b);
	trp_conn_stats(conn_b, &st);
	assert_int_equal(st.checksum_dropped, 0);
	assert_int_equal(b.delivered, 1);
	assert_int_equal(b.got_len, sizeof(ulp_hdr) + sizeof(credit));
	assert_memory_equal(b.got, ulp_hdr, sizeof(ulp_hdr));
	assert_int_equal(b.got[sizeof(ulp_hdr) + 3], 4);

	/* B's acknowledgement completes A's send. */
	b.now = trp_next_deadline(conn_b);
	trp_poll(conn_b);
	assert_true(b.sent >= 1);
	a.now = b.now;
	carry(&b, conn_a);
	assert_int_equal(a.acked_ok, 1);
	assert_int_equal(trp_unacked(conn_a), 0);

	trp_conn_destroy(conn_a);
	trp_conn_destroy(conn_b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retransmission_of_changed_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
