/* When a receiver acknowledges: in-order data waits for the ACK delay (or
 * ack_every packets) so that ACKs coalesce or ride on the answer, until a
 * step of a grid that all connections share; a gap is
 * reported at once (SACK), a duplicate is answered at once, and the packet
 * that fills a gap is acknowledged at once, since its sender is recovering
 * from a loss.  Two endpoints joined by hand: the test hands B each of A's
 * packets in the order it chooses and counts what B sends. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "capture.h"

#define N_PKTS 3

struct ends {
	struct capture a, b;
	struct trp_conn *conn_a, *conn_b;
	uint8_t pkt[N_PKTS][CAPTURE_MAX_DGRAM]; /* A's DATA packets, PSN order */
	size_t len[N_PKTS];
};

static void ends_open(struct ends *e, const struct trp_config *cfg)
{
	memset(e, 0, sizeof(*e));
	e->conn_a = trp_conn_create(cfg, &capture_ops, &e->a);
	e->conn_b = trp_conn_create(cfg, &capture_ops, &e->b);
	assert_non_null(e->conn_a);
	assert_non_null(e->conn_b);
	assert_int_equal(trp_conn_establish(e->conn_a, 100, 200), 0);
	assert_int_equal(trp_conn_establish(e->conn_b, 200, 100), 0);
}

/* A sends DATA packet i; what went is kept as pkt[i].  Returns trp_send's. */
static int64_t send_data(struct ends *e, unsigned i)
{
	const uint8_t ulp_hdr[4] = { 0xc1, 0x40, 0x00, 0x01 };
	uint8_t data[8] = { (uint8_t)i };
	int64_t rc = trp_send(e->conn_a, ulp_hdr, sizeof(ulp_hdr), data, sizeof(data), NULL);

	if (rc >= 0) {
		memcpy(e->pkt[i], e->a.pkt, e->a.len);
		e->len[i] = e->a.len;
	}
	return rc;
}

static void ends_init(struct ends *e)
{
	struct trp_config cfg;

	trp_config_default(&cfg);
	ends_open(e, &cfg);
	for (unsigned i = 0; i < N_PKTS; i++) {
		assert_true(send_data(e, i) >= 0);
		assert_int_equal(e->a.sent, i + 1);
	}
}

static void ends_fini(struct ends *e)
{
	trp_conn_destroy(e->conn_a);
	trp_conn_destroy(e->conn_b);
}

/* Hands A's packet i to B. */
static void deliver(struct ends *e, unsigned i)
{
	trp_input(e->conn_b, e->pkt[i], e->len[i]);
}

/* B's last packet, decoded: an ACK with what it acknowledges. */
static struct trp_header last_ack(const struct ends *e)
{
	struct trp_header h;

	assert_int_equal(trp_header_decode(&h, e->b.pkt, e->b.len), 0);
	assert_int_equal(h.opcode, TRP_OP_ACK);
	return h;
}

static void test_in_order_ack_delayed(void **state)
{
	struct ends e;
	struct trp_config cfg;

	(void)state;
	trp_config_default(&cfg);
	ends_init(&e);
	deliver(&e, 0);
	deliver(&e, 1);
	assert_int_equal(e.b.delivered, 2);
	assert_int_equal(e.b.sent, 0);
	/* Received at time 0: due at the grid's last step before the delay
	 * ends (test_delayed_acks_on_grid). */
	const uint64_t due = cfg.ack_delay_ns - cfg.ack_delay_ns % cfg.ack_grid_ns;
	assert_int_equal(trp_next_deadline(e.conn_b), due);
	e.b.now = due - 1;
	trp_poll(e.conn_b);
	assert_int_equal(e.b.sent, 0);
	e.b.now = due;
	trp_poll(e.conn_b);
	assert_int_equal(e.b.sent, 1);
	assert_int_equal(last_ack(&e).ack_psn, 102);
	ends_fini(&e);
}

/* A delayed ACK is due at a multiple of ack_grid_ns, between ack_delay_ns -
 * ack_grid_ns (excluded) and ack_delay_ns after its packet arrived, so that
 * the connections whose delayed ACKs come due within one grid step send
 * them together; with no grid (0) the delay is exact; a grid that is not a
 * power of two, or is longer than the delay, is refused. */
static void test_delayed_acks_on_grid(void **state)
{
	struct trp_config cfg;
	const uint64_t arrivals[] = { 0, 1, 15535, 15536, 15537, 32767, 32768, 40000, 123456 };
	uint64_t deadline[sizeof(arrivals) / sizeof(arrivals[0])];

	(void)state;
	trp_config_default(&cfg);
	assert_int_equal(cfg.ack_grid_ns, 32768);
	for (size_t i = 0; i < sizeof(arrivals) / sizeof(arrivals[0]); i++) {
		struct ends e;

		ends_init(&e);
		e.b.now = arrivals[i];
		deliver(&e, 0);
		deadline[i] = trp_next_deadline(e.conn_b);
		assert_int_equal(deadline[i] % cfg.ack_grid_ns, 0);
		assert_true(deadline[i] > arrivals[i] + cfg.ack_delay_ns - cfg.ack_grid_ns);
		assert_true(deadline[i] <= arrivals[i] + cfg.ack_delay_ns);
		ends_fini(&e);
	}
	/* Arrivals at 15.537 and 40 us are due together, at 65.536 us; those
	 * at 15.535 and 15.537 us a step apart. */
	assert_int_equal(deadline[4], 65536);
	assert_int_equal(deadline[7], 65536);
	assert_int_equal(deadline[2], 32768);

	/* Without a grid, the delay is exact. */
	struct ends e;
	cfg.ack_grid_ns = 0;
	ends_open(&e, &cfg);
	assert_true(send_data(&e, 0) >= 0);
	e.b.now = 12345;
	deliver(&e, 0);
	assert_int_equal(trp_next_deadline(e.conn_b), 12345 + cfg.ack_delay_ns);
	ends_fini(&e);

	cfg.ack_grid_ns = 30000;
	assert_null(trp_conn_create(&cfg, &capture_ops, NULL));
	cfg.ack_grid_ns = 65536;
	assert_null(trp_conn_create(&cfg, &capture_ops, NULL));
}

/* 0, then 2 (a gap: SACKed at once), then 1, which fills it: acknowledged
 * at once too, not after the ACK delay. */
static void test_gap_filled_acked_at_once(void **state)
{
	struct ends e;
	struct trp_header h;

	(void)state;
	ends_init(&e); /* A's ISN 100: its data starts at PSN 100 */
	deliver(&e, 0);
	assert_int_equal(e.b.sent, 0);
	deliver(&e, 2);
	assert_int_equal(e.b.sent, 1);
	h = last_ack(&e);
	assert_int_equal(h.ack_psn, 101);
	assert_int_equal(h.sack, 1); /* PSN 102 */
	deliver(&e, 1);
	assert_int_equal(e.b.delivered, 3);
	assert_int_equal(e.b.sent, 2);
	h = last_ack(&e);
	assert_int_equal(h.ack_psn, 103);
	assert_int_equal(h.sack, 0);
	ends_fini(&e);
}

/* A packet that arrives twice: our ACK was probably lost, so it is repeated
 * at once. */
static void test_duplicate_acked_at_once(void **state)
{
	struct ends e;

	(void)state;
	ends_init(&e);
	deliver(&e, 0);
	assert_int_equal(e.b.sent, 0);
	deliver(&e, 0);
	assert_int_equal(e.b.delivered, 1);
	assert_int_equal(e.b.sent, 1);
	assert_int_equal(last_ack(&e).ack_psn, 101);
	ends_fini(&e);
}

/* A congestion window smaller than ack_every (after a timeout it is one
 * packet) would leave each round's packets to wait for the peer's ACK
 * delay: when it stops the sender, a KEEPALIVE asks for the ACK at once,
 * once per advance of the cumulative ACK. */
static void test_small_window_asks_for_ack(void **state)
{
	struct ends e;
	struct trp_config cfg;
	struct trp_header h;

	(void)state;
	trp_config_default(&cfg);
	cfg.initial_cwnd = 2;
	ends_open(&e, &cfg);
	assert_true(send_data(&e, 0) >= 0);
	assert_true(send_data(&e, 1) >= 0);
	assert_int_equal(send_data(&e, 2), -EAGAIN);
	assert_int_equal(e.a.sent, 3);
	assert_int_equal(trp_header_decode(&h, e.a.pkt, e.a.len), 0);
	assert_int_equal(h.opcode, TRP_OP_KEEPALIVE);
	/* asked once: the next refusal sends nothing */
	assert_int_equal(send_data(&e, 2), -EAGAIN);
	assert_int_equal(e.a.sent, 3);

	/* B acknowledges both packets at once, not after the ACK delay */
	deliver(&e, 0);
	deliver(&e, 1);
	assert_int_equal(e.b.sent, 0);
	trp_input(e.conn_b, e.a.pkt, e.a.len);
	assert_int_equal(e.b.sent, 1);
	assert_int_equal(last_ack(&e).ack_psn, 102);

	/* the ACK opens the window */
	trp_input(e.conn_a, e.b.pkt, e.b.len);
	assert_true(send_data(&e, 2) >= 0);
	ends_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order_ack_delayed),
		cmocka_unit_test(test_delayed_acks_on_grid),
		cmocka_unit_test(test_gap_filled_acked_at_once),
		cmocka_unit_test(test_duplicate_acked_at_once),
		cmocka_unit_test(test_small_window_asks_for_ack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
