/* trp_refusal: a REQUEST that reached a closed port is answered with a
 * REJECT built from the request alone, which the requester takes at once as
 * a rejection; nothing but an intact REQUEST is ever answered. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "capture.h"

#include <string.h>

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
	assert_true(trp_refusal(cap.pkt, cap.len, rej));

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
	assert_false(trp_refusal(cap.pkt, cap.len, rej));
	assert_int_equal(trp_next_deadline(conn), UINT64_MAX);
	assert_int_equal(cap.delivered, 0); /* no data on a refused connection */
	trp_conn_destroy(conn);
}

/* A retransmitted REQUEST (the first refusal was lost) draws the same
 * answer, which still ends the attempt. */
static void test_retransmitted_request_refused(void **state)
{
	struct capture cap = { .now = 1000 };
	uint8_t rej[TRP_HDR_LEN];

	(void)state;
	struct trp_conn *conn = trp_conn_create(NULL, &capture_ops, &cap);
	assert_non_null(conn);
	assert_int_equal(trp_connect(conn, 7, 99, NULL, 0), 0);
	cap.now = trp_next_deadline(conn);
	trp_poll(conn);
	assert_int_equal(cap.sent, 2);
	assert_true(trp_refusal(cap.pkt, cap.len, rej));
	trp_input(conn, rej, sizeof(rej));
	assert_int_equal(cap.ev, TRP_EV_REJECTED);
	assert_int_equal(trp_conn_state(conn), TRP_STATE_CLOSED);
	assert_int_equal(cap.delivered, 0); /* no data on a refused connection */
	trp_conn_destroy(conn);
}

/* Only an intact REQUEST is answered: not a damaged or truncated one, not
 * any other opcode (a REJECT answered with a REJECT would never end). */
static void test_nothing_else_answered(void **state)
{
	struct capture cap = { .now = 1000 };
	uint8_t rej[TRP_HDR_LEN], bad[TRP_HDR_LEN + TRP_MAX_PDATA];

	(void)state;
	struct trp_conn *conn = trp_conn_create(NULL, &capture_ops, &cap);
	assert_non_null(conn);
	assert_int_equal(trp_connect(conn, 1, 2, "abc", 3), 0);
	memcpy(bad, cap.pkt, cap.len);
	bad[cap.len - 1] ^= 0x10;
	assert_false(trp_refusal(bad, cap.len, rej));
	assert_false(trp_refusal(cap.pkt, cap.len - 1, rej));
	assert_false(trp_refusal(cap.pkt, 5, rej));
	assert_true(trp_refusal(cap.pkt, cap.len, rej));
	assert_false(trp_refusal(rej, sizeof(rej), bad));
	for (unsigned op = 0; op < TRP_OP_COUNT; op++) {
		struct trp_header h = { .version = TRP_VERSION, .opcode = (uint8_t)op,
					.conn_id = 5, .psn = 6 };
		trp_header_encode(&h, bad);
		assert_int_equal(trp_refusal(bad, TRP_HDR_LEN, rej),
				 op == TRP_OP_CONNECT_REQUEST);
	}
	assert_int_equal(cap.delivered, 0); /* no data on a refused connection */
	trp_conn_destroy(conn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_refused_at_once),
		cmocka_unit_test(test_retransmitted_request_refused),
		cmocka_unit_test(test_nothing_else_answered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
