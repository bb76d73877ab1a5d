/* Receiver not ready (docs/protocol-trp.md 2.6): a packet the receiver's
 * ULP refuses for now (trp_not_ready) is answered with a NOT_READY, the
 * sender waits the delay it asks for and sends again, up to its retry
 * bound, without taking anything for lost: everything still arrives
 * exactly once, and nothing times out; a close meanwhile gives the rest
 * up. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "pair.h"

#define US 1000ull
#define MS 1000000ull
#define SEC 1000000000ull

static struct trp_config rnr_config(uint32_t retries, uint64_t delay_ns)
{
	struct trp_config cfg;

	trp_config_default(&cfg);
	cfg.rnr_retries = retries;
	cfg.rnr_delay_ns = delay_ns;
	return cfg;
}

/* The NOT_READYs that reach A (one packet per datagram), each checked to
 * name the first message refused. */
struct not_ready_seen {
	uint32_t named;
	unsigned count;
};

static bool count_not_ready(struct pair *p, enum simlink_side to, const struct trp_header *h)
{
	struct not_ready_seen *seen = p->test_state;

	if (to == SIMLINK_A && h->opcode == TRP_OP_NOT_READY) {
		assert_int_equal(h->psn, seen->named);
		assert_int_equal(h->length, TRP_NOT_READY_LEN);
		seen->count++;
	}
	return true;
}

static void assert_all_taken_once(const struct pair_peer *rx, const struct pair_peer *tx)
{
	assert_int_equal(rx->n_delivered, rx->n_msgs);
	assert_int_equal(rx->in_order_msgs, rx->n_msgs);
	assert_int_equal(tx->n_acked_ok, rx->n_msgs);
	assert_int_equal(tx->n_acked_err, 0);
	for (uint32_t i = 0; i < rx->n_msgs; i++)
		assert_int_equal(rx->delivered[i], 1);
}

/* B takes nothing from message 10 on for 1 ms, asking for 200 us at a time:
 * a window of refused packets draws one NOT_READY a round, each naming
 * message 10, and A waits out each before sending again (4-6 rounds in
 * 1 ms, where resending at once would take one a round trip, 40 us). */
static void test_sender_waits_and_sends_again(void **state)
{
	struct simlink_config lc = pair_link("delay_us=20,seed=21");
	struct trp_config cfg = rnr_config(7, 200 * US);
	struct trp_stats st_a, st_b;
	struct pair p;
	struct not_ready_seen seen = { 0 };

	(void)state;
	pair_init(&p, &lc, &cfg);
	pair_establish(&p, 0xfffffff0u, 0x42);
	const uint64_t ready_at = simlink_now(p.link) + 1 * MS;
	p.peer[1].not_ready_from = 10;
	p.peer[1].not_ready_until_ns = ready_at;
	p.filter = count_not_ready;
	p.test_state = &seen;
	pair_stream(&p, SIMLINK_A, 300, 200);
	seen.named = p.peer[1].data_base + 10;
	assert_true(pair_run(&p, 10 * SEC, pair_stream_done, &p));

	assert_all_taken_once(&p.peer[1], &p.peer[0]);
	peer_stats(&p.peer[0], &st_a);
	peer_stats(&p.peer[1], &st_b);
	assert_true(p.peer[1].taken_ns[10] >= ready_at);
	assert_true(p.peer[1].taken_ns[9] < ready_at);
	assert_int_equal(st_a.timeouts, 0);
	assert_int_equal(st_b.not_ready_sent, seen.count);
	assert_int_equal(st_a.not_ready_rcvd, seen.count);
	assert_in_range(seen.count, 4, 6);
	/* Far more packets refused than answered. */
	assert_true(st_b.refused > 4 * st_b.not_ready_sent);
	assert_int_equal(trp_conn_state(p.peer[0].conn), TRP_STATE_ESTABLISHED);
	pair_fini(&p);
}

/* A receiver that never becomes ready: after its retry bound (2) the
 * sender gives up with TRP_ERR_NOT_READY, reporting every packet not
 * taken, and its RESET ends the receiver's connection too, at once. */
static void test_retry_bound_fails_both_ends(void **state)
{
	struct simlink_config lc = pair_link("delay_us=20,seed=22");
	struct trp_config cfg = rnr_config(2, 100 * US);
	struct trp_stats st_a;
	struct pair p;
	int status;

	(void)state;
	pair_init(&p, &lc, &cfg);
	pair_establish(&p, 1, 2);
	p.peer[1].not_ready_from = 5;
	p.peer[1].not_ready_until_ns = UINT64_MAX;
	const uint64_t start = simlink_now(p.link);
	pair_stream(&p, SIMLINK_A, 50, 100);
	assert_true(pair_run(&p, 10 * SEC, pair_both_failed, &p));
	/* Three NOT_READYs apart by their waits, then the RESET's trip: far
	 * below the keepalives' second or more. */
	assert_true(simlink_now(p.link) - start < 2 * MS);

	struct pair_peer *a = &p.peer[0], *b = &p.peer[1];
	assert_true(peer_has_event(a, TRP_EV_FAILED, &status));
	assert_int_equal(status, TRP_ERR_NOT_READY);
	assert_true(peer_has_event(b, TRP_EV_FAILED, &status));
	assert_int_equal(status, TRP_ERR_RESET);
	peer_stats(a, &st_a);
	assert_int_equal(st_a.not_ready_rcvd, 3);
	assert_int_equal(b->n_delivered, 5);
	assert_int_equal(a->n_acked_ok, 5);
	assert_int_equal(a->n_acked_ok + a->n_acked_err, a->n_sent);
	for (uint32_t i = 5; i < a->n_sent; i++)
		assert_int_equal(a->ack_status[i], TRP_ERR_NOT_READY);
	assert_string_not_equal(trp_strerror(TRP_ERR_NOT_READY), trp_strerror(12345));
	pair_fini(&p);
}

/* With no retry bound, a receiver not ready for 50 ms is waited for: some
 * 400 NOT_READYs, and neither end fails. */
static void test_no_retry_bound_waits(void **state)
{
	struct simlink_config lc = pair_link("delay_us=10,seed=23");
	struct trp_config cfg = rnr_config(TRP_RNR_RETRY_FOREVER, 100 * US);
	struct trp_stats st_a;
	struct pair p;

	(void)state;
	pair_init(&p, &lc, &cfg);
	pair_establish(&p, 7, 8);
	p.peer[1].not_ready_from = 0;
	p.peer[1].not_ready_until_ns = simlink_now(p.link) + 50 * MS;
	pair_stream(&p, SIMLINK_A, 100, 300);
	assert_true(pair_run(&p, 10 * SEC, pair_stream_done, &p));
	assert_all_taken_once(&p.peer[1], &p.peer[0]);
	peer_stats(&p.peer[0], &st_a);
	assert_in_range(st_a.not_ready_rcvd, 300, 500);
	assert_int_equal(st_a.timeouts, 0);
	pair_fini(&p);
}

/* Over a link that loses, duplicates and reorders, with bundled datagrams:
 * a lost NOT_READY (or lost retransmissions) is made up for by the
 * timers, and still everything arrives exactly once. */
static void test_lossy_link(void **state)
{
	struct simlink_config lc =
		pair_link("loss=0.05,dup=0.02,reorder=0.05,delay_us=15,seed=24");
	struct trp_config cfg = rnr_config(TRP_RNR_RETRY_FOREVER, 150 * US);
	struct trp_stats st_a;
	struct pair p;

	(void)state;
	pair_init(&p, &lc, &cfg);
	pair_establish(&p, 0x10, 0x20);
	pair_bundle(&p.peer[0], 4000);
	pair_bundle(&p.peer[1], 4000);
	p.peer[1].not_ready_from = 20;
	p.peer[1].not_ready_until_ns = simlink_now(p.link) + 5 * MS;
	pair_stream(&p, SIMLINK_A, 2000, 400);
	assert_true(pair_run(&p, 30 * SEC, pair_stream_done, &p));
	assert_all_taken_once(&p.peer[1], &p.peer[0]);
	peer_stats(&p.peer[0], &st_a);
	assert_true(st_a.not_ready_rcvd > 0);
	assert_int_equal(trp_conn_state(p.peer[0].conn), TRP_STATE_ESTABLISHED);
	pair_fini(&p);
}

static bool b_closed_a_failed(void *arg)
{
	struct pair *p = arg;

	return peer_has_event(&p->peer[1], TRP_EV_CLOSED, NULL) &&
	       peer_has_event(&p->peer[0], TRP_EV_FAILED, NULL);
}

/* With no retry bound, the sender (A) or the receiver (B) closes
 * (trp_shutdown) while A's packets still wait for B's receives: A's
 * SHUTDOWN would come after them, and B, which waits for the close,
 * posts none, so the two would wait for each other for ever.  A gives up
 * at the next NOT_READY (A's close comes there when B's SHUTDOWN reaches
 * it), and its RESET completes B's close: all B sent arrived. */
static void closing_gives_up(enum simlink_side closer)
{
	struct simlink_config lc = pair_link("delay_us=20,seed=26");
	struct trp_config cfg = rnr_config(TRP_RNR_RETRY_FOREVER, 100 * US);
	struct pair p;
	int status;

	pair_init(&p, &lc, &cfg);
	pair_establish(&p, 5, 6);
	p.peer[1].not_ready_from = 3;
	p.peer[1].not_ready_until_ns = UINT64_MAX;
	pair_stream(&p, SIMLINK_A, 40, 100);
	simlink_run(p.link, simlink_now(p.link) + 2 * MS, NULL, NULL);
	assert_int_equal(p.peer[1].n_delivered, 3);
	assert_int_equal(trp_shutdown(p.peer[closer].conn), 0);
	const uint64_t closed_at = simlink_now(p.link);
	assert_true(pair_run(&p, 10 * SEC, b_closed_a_failed, &p));
	/* The next NOT_READY's wait and a round trip, far below the
	 * keepalives' bound of a second. */
	assert_true(simlink_now(p.link) - closed_at < 1 * MS);
	assert_true(peer_has_event(&p.peer[1], TRP_EV_CLOSED, &status));
	assert_int_equal(status, TRP_OK);
	assert_int_equal(trp_conn_state(p.peer[1].conn), TRP_STATE_CLOSED);
	assert_true(peer_has_event(&p.peer[0], TRP_EV_FAILED, &status));
	assert_int_equal(status, TRP_ERR_NOT_READY);
	assert_int_equal(p.peer[0].n_acked_ok, 3);
	assert_int_equal(p.peer[0].n_acked_ok + p.peer[0].n_acked_err, p.peer[0].n_sent);
	assert_int_equal(trp_next_deadline(p.peer[0].conn), UINT64_MAX);
	assert_int_equal(trp_next_deadline(p.peer[1].conn), UINT64_MAX);
	pair_fini(&p);
}

static void test_sender_closing_gives_up(void **state)
{
	(void)state;
	closing_gives_up(SIMLINK_A);
}

static void test_receiver_closing_gives_up(void **state)
{
	(void)state;
	closing_gives_up(SIMLINK_B);
}

/* trp_set_rnr changes the bound of a connection already open. */
static void test_set_rnr_changes_the_bound(void **state)
{
	struct simlink_config lc = pair_link("delay_us=20,seed=25");
	struct trp_config cfg = rnr_config(0, 100 * US);
	struct trp_stats st_a;
	struct pair p;

	(void)state;
	pair_init(&p, &lc, &cfg);
	pair_establish(&p, 3, 4);
	trp_set_rnr(p.peer[0].conn, 4, 0);
	p.peer[1].not_ready_from = 0;
	p.peer[1].not_ready_until_ns = UINT64_MAX;
	pair_stream(&p, SIMLINK_A, 10, 100);
	assert_true(pair_run(&p, 10 * SEC, pair_both_failed, &p));
	peer_stats(&p.peer[0], &st_a);
	assert_int_equal(st_a.not_ready_rcvd, 5);
	pair_fini(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sender_waits_and_sends_again),
		cmocka_unit_test(test_retry_bound_fails_both_ends),
		cmocka_unit_test(test_no_retry_bound_waits),
		cmocka_unit_test(test_lossy_link),
		cmocka_unit_test(test_sender_closing_gives_up),
		cmocka_unit_test(test_receiver_closing_gives_up),
		cmocka_unit_test(test_set_rnr_changes_the_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
