/* trp_closed_port_answer: a REQUEST that reached a closed port is answered
 * with a REJECT built from the request alone, which the requester takes at
 * once as a rejection; a packet of a connection whose end is gone with a
 * RESET, which closes the sender's connection when nothing was lost and
 * fails it otherwise; an ACK or a RESET is never answered. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "capture.h"
#include "trp/conn.h"   /* hand-made packets: trp_header_set_checksum */
#include "trp/crc32c.h"

#include <string.h>

/* The last datagram conn sent reached a closed port: the port's answer
 * (there must be one) goes back to conn. */
static void closed_port_answers(struct trp_conn *conn, const struct capture *cap)
{
	uint8_t answer[TRP_HDR_LEN];

	assert_true(trp_closed_port_answer(cap->pkt, cap->len, answer));
	trp_input(conn, answer, sizeof(answer));
}

static void test_request_refused_at_once(void **state)
{
	struct capture cap = { .now = 1000 };
	uint8_t rej[TRP_HDR_LEN];
	struct trp_header h;

	(void)state;
	struct trp_conn *conn = trp_conn_create(NULL, &capture_ops, &cap);
	assert_non_null(conn);
	assert_int_equal(trp_connect(conn, 0xfffffff0u, 0xabcd1234u, "pdata", 5), 0);
	assert_int_equal(cap.sent, 1);
	assert_true(trp_closed_port_answer(cap.pkt, cap.len, rej));

	assert_int_equal(trp_header_decode(&h, rej, sizeof(rej)), TRP_OK);
	assert_int_equal(h.opcode, TRP_OP_CONNECT_REJECT);
	assert_int_equal(h.conn_id, 0xabcd1234u);
	assert_int_equal(h.ack_psn, 0xfffffff1u);
	assert_int_equal(h.length, 0);
	assert_int_not_equal(h.checksum, 0);
	assert_true(trp_checksum_ok(rej, sizeof(rej)));

	/* The requester: REJECTED without private data, closed, and its
	 * acknowledgement sent (to a port that ignores it). */
	trp_input(conn, rej, sizeof(rej));
	assert_int_equal(cap.n_ev, 1);
	assert_int_equal(cap.ev, TRP_EV_REJECTED);
	assert_int_equal(cap.ev_status, TRP_ERR_REJECTED);
	assert_int_equal(cap.ev_pdata_len, 0);
	assert_int_equal(trp_conn_state(conn), TRP_STATE_CLOSED);
	assert_int_equal(cap.sent, 2);
	assert_int_equal(trp_header_decode(&h, cap.pkt, cap.len), TRP_OK);
	assert_int_equal(h.opcode, TRP_OP_ACK);
	assert_false(trp_closed_port_answer(cap.pkt, cap.len, rej));
	assert_int_equal(trp_next_deadline(conn), UINT64_MAX);
	assert_int_equal(cap.delivered, 0); /* no data on a refused connection */
	trp_conn_destroy(conn);
}

/* A retransmitted REQUEST (the first refusal was lost) draws the same
 * answer, which still ends the attempt. */
static void test_retransmitted_request_refused(void **state)
{
	struct capture cap = { .now = 1000 };

	(void)state;
	struct trp_conn *conn = trp_conn_create(NULL, &capture_ops, &cap);
	assert_non_null(conn);
	assert_int_equal(trp_connect(conn, 7, 99, NULL, 0), 0);
	cap.now = trp_next_deadline(conn);
	trp_poll(conn);
	assert_int_equal(cap.sent, 2);
	closed_port_answers(conn, &cap);
	assert_int_equal(cap.ev, TRP_EV_REJECTED);
	assert_int_equal(trp_conn_state(conn), TRP_STATE_CLOSED);
	assert_int_equal(cap.delivered, 0); /* no data on a refused connection */
	trp_conn_destroy(conn);
}

/* Only an intact packet is answered, and never an ACK, a NOT_READY or a
 * RESET (a RESET answered with a RESET would never end): a REQUEST with a
 * REJECT, the other packets a live end would answer with a RESET. */
static void test_what_is_answered(void **state)
{
	struct capture cap = { .now = 1000 };
	uint8_t ans[TRP_HDR_LEN], bad[TRP_HDR_LEN + TRP_MAX_PDATA] = { 0 };
	struct trp_header h;

	(void)state;
	struct trp_conn *conn = trp_conn_create(NULL, &capture_ops, &cap);
	assert_non_null(conn);
	assert_int_equal(trp_connect(conn, 1, 2, "abc", 3), 0);
	memcpy(bad, cap.pkt, cap.len);
	bad[cap.len - 1] ^= 0x10;
	assert_false(trp_closed_port_answer(bad, cap.len, ans));
	assert_false(trp_closed_port_answer(cap.pkt, cap.len - 1, ans));
	assert_false(trp_closed_port_answer(cap.pkt, 5, ans));
	assert_true(trp_closed_port_answer(cap.pkt, cap.len, ans));
	for (unsigned op = 0; op < TRP_OP_COUNT; op++) {
		const uint16_t len = op == TRP_OP_NOT_READY ? TRP_NOT_READY_LEN : 0;
		struct trp_header in = { .version = TRP_VERSION, .opcode = (uint8_t)op,
					 .conn_id = 5, .psn = 6, .length = len };
		const bool answered = op != TRP_OP_ACK && op != TRP_OP_RESET &&
				      op != TRP_OP_NOT_READY;

		trp_header_encode(&in, bad);
		assert_true(trp_header_decode(&h, bad, TRP_HDR_LEN + len) == TRP_OK);
		assert_int_equal(trp_closed_port_answer(bad, TRP_HDR_LEN + len, ans), answered);
		if (!answered)
			continue;
		assert_int_equal(trp_header_decode(&h, ans, sizeof(ans)), TRP_OK);
		assert_true(trp_checksum_ok(ans, sizeof(ans)));
		assert_int_equal(h.conn_id, 5);
		if (op == TRP_OP_CONNECT_REQUEST) {
			assert_int_equal(h.opcode, TRP_OP_CONNECT_REJECT);
			assert_int_equal(h.ack_psn, 7);
		} else {
			assert_int_equal(h.opcode, TRP_OP_RESET);
			assert_int_equal(h.psn, 6);
			assert_int_equal(h.ack_psn, 0);   /* acknowledges nothing */
		}
	}
	assert_int_equal(cap.delivered, 0); /* no data on a refused connection */
	trp_conn_destroy(conn);
}

/* A hand-made packet from the peer (local ISN 100, the peer's 200),
 * checksummed as TRP requires by default. */
static void input_from_peer(struct trp_conn *conn, unsigned opcode, uint32_t conn_id,
			    uint32_t psn, uint32_t ack_psn)
{
	uint8_t pkt[TRP_HDR_LEN];
	struct trp_header h = { .version = TRP_VERSION, .opcode = (uint8_t)opcode,
				.conn_id = conn_id, .psn = psn, .ack_psn = ack_psn,
				.window = 64 };

	trp_header_encode(&h, pkt);
	trp_header_set_checksum(pkt, trp_checksum_finish(CRC32C_INIT, pkt));
	trp_input(conn, pkt, sizeof(pkt));
}

#define CONN_ID (100u ^ 200u)

/* A connection opened without a handshake: local ISN 100, the peer's 200. */
static struct trp_conn *established(struct capture *cap)
{
	struct trp_conn *conn = trp_conn_create(NULL, &capture_ops, cap);

	assert_non_null(conn);
	assert_int_equal(trp_conn_establish(conn, 100, 200), 0);
	return conn;
}

/* Data sent to a peer whose end is gone: the RESET its port answers with
 * fails the connection at once (not when the retries run out), and the
 * data is reported as not delivered. */
static void test_reset_fails_connection_with_data_outstanding(void **state)
{
	struct capture cap = { .now = 1000 };

	(void)state;
	struct trp_conn *conn = established(&cap);
	assert_true(trp_send(conn, NULL, 0, "data", 4, NULL) >= 0);
	assert_true(trp_send(conn, NULL, 0, "more", 4, NULL) >= 0);
	closed_port_answers(conn, &cap);
	assert_int_equal(trp_conn_state(conn), TRP_STATE_FAILED);
	assert_int_equal(cap.ev, TRP_EV_FAILED);
	assert_int_equal(cap.ev_status, TRP_ERR_RESET);
	assert_int_equal(cap.acked_ok, 0);
	assert_int_equal(cap.acked_err, 2);
	assert_int_equal(trp_next_deadline(conn), UINT64_MAX);
	struct trp_stats st;
	trp_conn_stats(conn, &st);
	assert_int_equal(st.resets_rcvd, 1);
	trp_conn_destroy(conn);
}

/* The peer closed and then destroyed its end: its SHUTDOWN arrived and our
 * answering SHUTDOWN reached a closed port.  Nothing was lost, so the
 * RESET completes the close (CLOSED, no failure) at once. */
static void test_reset_completes_close(void **state)
{
	struct capture cap = { .now = 1000 };
	struct trp_header h;

	(void)state;
	struct trp_conn *conn = established(&cap);
	input_from_peer(conn, TRP_OP_SHUTDOWN, CONN_ID, 200, 100);
	assert_int_equal(trp_conn_state(conn), TRP_STATE_CLOSING);
	assert_int_equal(trp_header_decode(&h, cap.pkt, cap.len), TRP_OK);
	assert_int_equal(h.opcode, TRP_OP_SHUTDOWN);
	closed_port_answers(conn, &cap);
	assert_int_equal(trp_conn_state(conn), TRP_STATE_CLOSED);
	assert_int_equal(cap.ev, TRP_EV_CLOSED);
	assert_int_equal(cap.ev_status, TRP_OK);
	assert_int_equal(trp_next_deadline(conn), UINT64_MAX);
	trp_conn_destroy(conn);
}

/* Our SHUTDOWN answered with a RESET while data of ours before it is still
 * unacknowledged: the peer's end may have gone without it, so the
 * connection fails rather than closing. */
static void test_reset_with_data_before_shutdown_fails(void **state)
{
	struct capture cap = { .now = 1000 };

	(void)state;
	struct trp_conn *conn = established(&cap);
	assert_true(trp_send(conn, NULL, 0, "data", 4, NULL) >= 0);
	input_from_peer(conn, TRP_OP_SHUTDOWN, CONN_ID, 200, 100);
	closed_port_answers(conn, &cap);
	assert_int_equal(cap.ev, TRP_EV_FAILED);
	assert_int_equal(cap.ev_status, TRP_ERR_RESET);
	assert_int_equal(cap.acked_err, 1);
	trp_conn_destroy(conn);
}

/* A RESET is taken only for this connection and a PSN it sent and has not
 * seen acknowledged (or its next one, which its ACKs and KEEPALIVEs carry):
 * one that a stranger could guess, or a late one, changes nothing. */
static void test_reset_outside_window_ignored(void **state)
{
	struct capture cap = { .now = 1000 };

	(void)state;
	struct trp_conn *conn = established(&cap);
	for (int i = 0; i < 3; i++)
		assert_true(trp_send(conn, NULL, 0, "data", 4, NULL) >= 0);
	input_from_peer(conn, TRP_OP_ACK, CONN_ID, 200, 101);  /* PSN 100 acknowledged */
	assert_int_equal(cap.acked_ok, 1);
	const uint32_t outside[] = { 99, 100, 104, 100 + 0x80000000u };
	for (unsigned i = 0; i < sizeof(outside) / sizeof(outside[0]); i++)
		input_from_peer(conn, TRP_OP_RESET, CONN_ID, outside[i], 0);
	input_from_peer(conn, TRP_OP_RESET, CONN_ID ^ 1, 101, 0);
	assert_int_equal(trp_conn_state(conn), TRP_STATE_ESTABLISHED);
	assert_int_equal(cap.acked_err, 0);
	struct trp_stats st;
	trp_conn_stats(conn, &st);
	assert_int_equal(st.resets_rcvd, 0);
	assert_int_equal(st.stale_dropped, 5);
	/* The next PSN (103: an ACK's or KEEPALIVE's) is inside. */
	input_from_peer(conn, TRP_OP_RESET, CONN_ID, 103, 0);
	assert_int_equal(cap.ev_status, TRP_ERR_RESET);
	assert_int_equal(cap.acked_err, 2);
	trp_conn_destroy(conn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_refused_at_once),
		cmocka_unit_test(test_retransmitted_request_refused),
		cmocka_unit_test(test_what_is_answered),
		cmocka_unit_test(test_reset_fails_connection_with_data_outstanding),
		cmocka_unit_test(test_reset_completes_close),
		cmocka_unit_test(test_reset_with_data_before_shutdown_fails),
		cmocka_unit_test(test_reset_outside_window_ignored),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
