/* The connection state machine: handshake (accept, reject, lost packets),
 * handshake-less establish, shutdown (one-sided, simultaneous, lost
 * packets), failure (retry bound, dead peer), input validation and API
 * errors.  Two endpoints on a quiet simulated link; a filter drops chosen
 * packets. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "pair.h"

#include <errno.h>
#include <string.h>

#define MS 1000000ull
#define SEC 1000000000ull

struct drop_rule {
	enum simlink_side to;
	unsigned opcode;
	unsigned count;   /* drop this many matching packets, then let them pass */
};

static bool drop_by_rule(struct pair *p, enum simlink_side to, const struct trp_header *h)
{
	struct drop_rule *r = p->test_state;

	for (; r && r->opcode != TRP_OP_COUNT; r++) {
		if (r->to == to && r->opcode == h->opcode && r->count) {
			r->count--;
			return false;
		}
	}
	return true;
}

#define RULES_END { SIMLINK_A, TRP_OP_COUNT, 0 }

static bool drop_all(struct pair *p, enum simlink_side to, const struct trp_header *h)
{
	(void)p, (void)to, (void)h;
	return false;
}

static void assert_state(const struct pair *p, enum simlink_side s, enum trp_state st)
{
	assert_string_equal(trp_state_name(trp_conn_state(p->peer[s].conn)), trp_state_name(st));
}

static void test_handshake_accept(void **state)
{
	struct pair p;
	int status;

	(void)state;
	pair_init(&p, NULL, NULL);
	pair_connect(&p, 1000, 2000);
	assert_state(&p, SIMLINK_A, TRP_STATE_ESTABLISHED);
	assert_state(&p, SIMLINK_B, TRP_STATE_ESTABLISHED);
	assert_int_equal(trp_conn_id(p.peer[0].conn), 0x5eed1234u);
	assert_int_equal(trp_conn_id(p.peer[1].conn), 0x5eed1234u);
	/* B: the request with A's private data, then established. */
	assert_int_equal(p.peer[1].ev[0], TRP_EV_CONNECT_REQUEST);
	assert_int_equal(p.peer[1].ev[1], TRP_EV_ESTABLISHED);
	/* A: established with B's private data. */
	assert_int_equal(p.peer[0].n_ev, 1);
	assert_true(peer_has_event(&p.peer[0], TRP_EV_ESTABLISHED, &status));
	assert_int_equal(status, TRP_OK);
	assert_int_equal(p.peer[0].pdata_len, 7);
	assert_memory_equal(p.peer[0].pdata, "welcome", 7);
	/* Data flows both ways after the handshake; PSNs follow the ISNs. */
	pair_stream(&p, SIMLINK_A, 20, 100);
	pair_stream(&p, SIMLINK_B, 20, 100);
	assert_int_equal(p.peer[1].data_base, 1001);
	assert_int_equal(p.peer[0].data_base, 2001);
	assert_true(pair_run(&p, 1 * SEC, pair_stream_done, &p));
	pair_fini(&p);
}

/* The passive side answers later, outside the callback, with the largest
 * private data; the REQUEST is retransmitted meanwhile and ignored. */
static void test_passive_decides_later(void **state)
{
	struct pair p;
	uint8_t big[TRP_MAX_PDATA];

	(void)state;
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i ^ 0x3c);
	pair_init(&p, NULL, NULL);
	assert_int_equal(trp_connect(p.peer[0].conn, 7, 99, big, sizeof(big)), 0);
	pair_run(&p, 30 * MS, NULL, NULL);
	assert_state(&p, SIMLINK_A, TRP_STATE_REQ_SENT);
	assert_state(&p, SIMLINK_B, TRP_STATE_REQ_RCVD);
	assert_int_equal(p.peer[1].n_ev, 1);
	assert_int_equal(p.peer[1].ev[0], TRP_EV_CONNECT_REQUEST);
	assert_int_equal(p.peer[1].pdata_len, sizeof(big));
	assert_memory_equal(p.peer[1].pdata, big, sizeof(big));
	/* Not established: no data can be sent either way. */
	assert_int_equal(trp_send(p.peer[0].conn, NULL, 0, "x", 1, NULL), -ENOTCONN);
	assert_int_equal(trp_send(p.peer[1].conn, NULL, 0, "x", 1, NULL), -ENOTCONN);
	assert_false(trp_can_send(p.peer[0].conn));

	assert_int_equal(trp_accept(p.peer[1].conn, 0xfffffffeu, big, sizeof(big)), 0);
	pair_run(&p, 60 * MS, NULL, NULL);
	assert_state(&p, SIMLINK_A, TRP_STATE_ESTABLISHED);
	assert_state(&p, SIMLINK_B, TRP_STATE_ESTABLISHED);
	assert_int_equal(p.peer[0].pdata_len, sizeof(big));
	assert_memory_equal(p.peer[0].pdata, big, sizeof(big));
	pair_fini(&p);
}

static void test_reject_with_private_data(void **state)
{
	struct pair p;
	int status;

	(void)state;
	pair_init(&p, NULL, NULL);
	assert_int_equal(trp_connect(p.peer[0].conn, 5, 77, "please", 6), 0);
	pair_run(&p, 1 * MS, NULL, NULL);
	assert_state(&p, SIMLINK_B, TRP_STATE_REQ_RCVD);
	assert_int_equal(trp_reject(p.peer[1].conn, 500, "go away", 7), 0);
	assert_true(pair_run(&p, 1 * SEC, pair_both_closed, &p));
	assert_true(peer_has_event(&p.peer[0], TRP_EV_REJECTED, &status));
	assert_int_equal(status, TRP_ERR_REJECTED);
	assert_int_equal(p.peer[0].pdata_len, 7);
	assert_memory_equal(p.peer[0].pdata, "go away", 7);
	assert_false(peer_has_event(&p.peer[0], TRP_EV_ESTABLISHED, NULL));
	/* B is told its REJECT arrived. */
	assert_true(peer_has_event(&p.peer[1], TRP_EV_CLOSED, NULL));
	assert_false(peer_has_event(&p.peer[1], TRP_EV_ESTABLISHED, NULL));
	pair_fini(&p);
}

/* The REJECT's acknowledgement is lost: B retransmits the REJECT and the
 * already-closed A acknowledges it again. */
static void test_reject_ack_lost(void **state)
{
	struct pair p;
	struct drop_rule rules[] = { { SIMLINK_B, TRP_OP_ACK, 1 }, RULES_END };

	(void)state;
	pair_init(&p, NULL, NULL);
	p.filter = drop_by_rule;
	p.test_state = rules;
	assert_int_equal(trp_connect(p.peer[0].conn, 5, 77, NULL, 0), 0);
	pair_run(&p, 1 * MS, NULL, NULL);
	assert_int_equal(trp_reject(p.peer[1].conn, 500, NULL, 0), 0);
	assert_true(pair_run(&p, 1 * SEC, pair_both_closed, &p));
	assert_int_equal(rules[0].count, 0);
	pair_fini(&p);
}

static void test_request_lost_is_retransmitted(void **state)
{
	struct pair p;
	struct drop_rule rules[] = { { SIMLINK_B, TRP_OP_CONNECT_REQUEST, 3 }, RULES_END };
	struct trp_stats st;

	(void)state;
	pair_init(&p, NULL, NULL);
	p.filter = drop_by_rule;
	p.test_state = rules;
	pair_connect(&p, 1, 2);
	peer_stats(&p.peer[0], &st);
	assert_int_equal(st.timeouts, 3);
	assert_int_equal(st.retransmits, 3);
	/* B saw a single request despite the retransmissions. */
	assert_int_equal(p.peer[1].ev[0], TRP_EV_CONNECT_REQUEST);
	assert_int_equal(p.peer[1].ev[1], TRP_EV_ESTABLISHED);
	pair_fini(&p);
}

static void test_accept_lost_is_retransmitted(void **state)
{
	struct pair p;
	struct drop_rule rules[] = { { SIMLINK_A, TRP_OP_CONNECT_ACCEPT, 2 }, RULES_END };
	struct trp_stats st;

	(void)state;
	pair_init(&p, NULL, NULL);
	p.filter = drop_by_rule;
	p.test_state = rules;
	pair_connect(&p, 1, 2);
	peer_stats(&p.peer[1], &st);
	assert_true(st.retransmits >= 2);
	assert_int_equal(p.peer[0].n_ev, 1);
	assert_int_equal(p.peer[1].n_ev, 2);
	pair_fini(&p);
}

/* The third leg (A's ACK of the ACCEPT) is lost: B stays in ACCEPT_SENT and
 * retransmits until A's repeated ACK arrives. */
static void test_final_handshake_ack_lost(void **state)
{
	struct pair p;
	struct drop_rule rules[] = { { SIMLINK_B, TRP_OP_ACK, 1 }, RULES_END };

	(void)state;
	pair_init(&p, NULL, NULL);
	p.filter = drop_by_rule;
	p.test_state = rules;
	pair_connect(&p, 10, 20);
	assert_int_equal(rules[0].count, 0);
	assert_int_equal(p.peer[1].ev[1], TRP_EV_ESTABLISHED);
	pair_fini(&p);
}

/* Handshake-less open: B comes up 20 ms after A.  A's first packets reach a
 * B that is not established and are dropped; retransmission delivers them. */
static void test_establish_early_data_dropped(void **state)
{
	struct pair p;
	struct trp_stats st;

	(void)state;
	pair_init(&p, NULL, NULL);
	assert_int_equal(trp_conn_establish(p.peer[0].conn, 0xfffffff0u, 0x10u), 0);
	assert_int_equal(trp_conn_state(p.peer[0].conn), TRP_STATE_ESTABLISHED);
	pair_stream(&p, SIMLINK_A, 50, 200);
	pair_run(&p, 20 * MS, NULL, NULL);
	peer_stats(&p.peer[1], &st);
	assert_true(st.early_dropped > 0);
	assert_int_equal(p.peer[1].n_delivered, 0);

	assert_int_equal(trp_conn_establish(p.peer[1].conn, 0x10u, 0xfffffff0u), 0);
	assert_int_equal(trp_conn_id(p.peer[0].conn), trp_conn_id(p.peer[1].conn));
	assert_true(pair_run(&p, 2 * SEC, pair_stream_done, &p));
	assert_int_equal(p.peer[1].n_delivered, 50);
	assert_int_equal(p.peer[0].n_acked_ok, 50);
	assert_int_equal(p.peer[0].n_ev + p.peer[1].n_ev, 0); /* no events in this mode */
	pair_fini(&p);
}

static void test_shutdown_after_data(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p, NULL, NULL);
	pair_connect(&p, 100, 200);
	pair_stream(&p, SIMLINK_A, 300, 500);
	/* Shut down while data is still queued in the window: the SHUTDOWN
	 * follows it and the close completes only after all is delivered. */
	assert_int_equal(trp_shutdown(p.peer[0].conn), 0);
	assert_int_equal(trp_conn_state(p.peer[0].conn), TRP_STATE_CLOSING);
	assert_int_equal(trp_send(p.peer[0].conn, NULL, 0, "x", 1, NULL), -EPIPE);
	/* The stream ends where the shutdown cut it. */
	p.peer[0].n_to_send = p.peer[0].n_sent;
	p.peer[1].n_msgs = p.peer[0].n_sent;
	assert_true(p.peer[0].n_sent > 0 && p.peer[0].n_sent < 300);
	assert_true(pair_run(&p, 5 * SEC, pair_both_closed, &p));
	/* Only what was sent before the shutdown exists; all of it arrived. */
	assert_int_equal(p.peer[1].n_delivered, p.peer[0].n_sent);
	assert_int_equal(p.peer[0].n_acked_ok, p.peer[0].n_sent);
	for (int s = 0; s < 2; s++) {
		unsigned closed = 0;
		for (unsigned i = 0; i < p.peer[s].n_ev; i++)
			closed += p.peer[s].ev[i] == TRP_EV_CLOSED;
		assert_int_equal(closed, 1);
	}
	assert_int_equal(trp_send(p.peer[1].conn, NULL, 0, "x", 1, NULL), -ENOTCONN);
	assert_int_equal(trp_shutdown(p.peer[1].conn), 0); /* idempotent */
	pair_fini(&p);
}

static void test_simultaneous_close(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p, NULL, NULL);
	pair_connect(&p, 100, 200);
	assert_int_equal(trp_shutdown(p.peer[0].conn), 0);
	assert_int_equal(trp_shutdown(p.peer[1].conn), 0);
	assert_true(pair_run(&p, 1 * SEC, pair_both_closed, &p));
	assert_true(peer_has_event(&p.peer[0], TRP_EV_CLOSED, NULL));
	assert_true(peer_has_event(&p.peer[1], TRP_EV_CLOSED, NULL));
	pair_fini(&p);
}

/* Both SHUTDOWNs lost once and the last ACK lost: retransmission and the
 * closed side's repeated ACK still close both ends. */
static void test_shutdown_packets_lost(void **state)
{
	struct pair p;
	struct drop_rule rules[] = {
		{ SIMLINK_B, TRP_OP_SHUTDOWN, 1 },
		{ SIMLINK_A, TRP_OP_SHUTDOWN, 1 },
		RULES_END,
	};

	(void)state;
	pair_init(&p, NULL, NULL);
	pair_connect(&p, 100, 200);
	p.filter = drop_by_rule;
	p.test_state = rules;
	assert_int_equal(trp_shutdown(p.peer[0].conn), 0);
	assert_true(pair_run(&p, 2 * SEC, pair_both_closed, &p));
	assert_int_equal(rules[0].count + rules[1].count, 0);
	pair_fini(&p);
}

static bool drop_acks_to_b_once_a_closed(struct pair *p, enum simlink_side to,
                                         const struct trp_header *h)
{
	unsigned *dropped = p->test_state;

	if (to == SIMLINK_B && h->opcode == TRP_OP_ACK && *dropped < 2 &&
	    trp_conn_state(p->peer[0].conn) == TRP_STATE_CLOSED) {
		++*dropped;
		return false;
	}
	return true;
}

static void test_last_ack_lost(void **state)
{
	struct pair p;
	unsigned dropped = 0;

	(void)state;
	pair_init(&p, NULL, NULL);
	pair_connect(&p, 100, 200);
	p.filter = drop_acks_to_b_once_a_closed;
	p.test_state = &dropped;
	assert_int_equal(trp_shutdown(p.peer[0].conn), 0);
	assert_true(pair_run(&p, 2 * SEC, pair_both_closed, &p));
	assert_true(dropped >= 1);
	pair_fini(&p);
}

static void test_connect_timeout_fails(void **state)
{
	struct pair p;
	struct trp_config cfg;
	int status;

	(void)state;
	trp_config_default(&cfg);
	pair_init(&p, NULL, &cfg);
	p.filter = drop_all;
	assert_int_equal(trp_connect(p.peer[0].conn, 1, 2, NULL, 0), 0);
	pair_run(&p, 60 * SEC, NULL, NULL);
	assert_state(&p, SIMLINK_A, TRP_STATE_FAILED);
	assert_true(peer_has_event(&p.peer[0], TRP_EV_FAILED, &status));
	assert_int_equal(status, TRP_ERR_TIMEOUT);
	assert_string_equal(trp_strerror(status), "retransmission limit exceeded: peer unreachable");
	/* The retry bound: max_retries retransmissions, then the failure. */
	struct trp_stats st;
	peer_stats(&p.peer[0], &st);
	assert_int_equal(st.retransmits, cfg.max_retries);
	assert_int_equal(st.timeouts, cfg.max_retries + 1);
	assert_int_equal(trp_next_deadline(p.peer[0].conn), UINT64_MAX);
	pair_fini(&p);
}

struct failure_times {
	uint64_t at[2];
};

static bool record_until_both_failed(void *arg)
{
	struct pair *p = arg;
	struct failure_times *ft = p->test_state;

	for (int s = 0; s < 2; s++)
		if (!ft->at[s] && trp_conn_state(p->peer[s].conn) == TRP_STATE_FAILED)
			ft->at[s] = simlink_now(p->link);
	return ft->at[0] && ft->at[1];
}

/* Idle connection, the peer vanishes: keepalives go unanswered and both sides
 * fail with TRP_ERR_DEAD_PEER within the documented bound
 * keepalive_ns + keepalive_probes * keepalive_interval_ns after the peer was
 * last heard, which an idle live connection is every keepalive_ns. */
static void test_dead_peer_detected(void **state)
{
	struct pair p;
	struct failure_times ft = {{0, 0}};
	struct trp_config cfg;
	uint64_t cut, bound;
	int status;

	(void)state;
	trp_config_default(&cfg);
	pair_init(&p, NULL, &cfg);
	pair_connect(&p, 1, 2);
	/* Idle but alive: keepalives keep it up. */
	pair_run(&p, simlink_now(p.link) + 2 * SEC, NULL, NULL);
	assert_state(&p, SIMLINK_A, TRP_STATE_ESTABLISHED);
	assert_state(&p, SIMLINK_B, TRP_STATE_ESTABLISHED);
	struct trp_stats st;
	peer_stats(&p.peer[0], &st);
	assert_true(st.keepalives_sent > 0);

	p.filter = drop_all;
	p.test_state = &ft;
	cut = simlink_now(p.link);
	assert_true(pair_run(&p, cut + 10 * SEC, record_until_both_failed, &p));
	bound = cfg.keepalive_ns + cfg.keepalive_probes * cfg.keepalive_interval_ns;
	for (int s = 0; s < 2; s++) {
		assert_true(peer_has_event(&p.peer[s], TRP_EV_FAILED, &status));
		assert_int_equal(status, TRP_ERR_DEAD_PEER);
		assert_true(ft.at[s] - cut <= bound);
		assert_true(ft.at[s] - cut >= bound - cfg.keepalive_ns);
	}
	pair_fini(&p);
}

/* Inject a hand-made packet into B. */
static void inject(struct pair *p, struct trp_header h, const void *payload, size_t len)
{
	uint8_t pkt[TRP_HDR_LEN + 256];

	h.version = TRP_VERSION;
	h.length = (uint16_t)len;
	h.checksum = 0;
	trp_header_encode(&h, pkt);
	memcpy(pkt + TRP_HDR_LEN, payload, len);
	trp_input(p->peer[1].conn, pkt, TRP_HDR_LEN + len);
}

static void test_stale_and_malformed_dropped(void **state)
{
	struct pair p;
	struct trp_config cfg;
	struct trp_stats before, after;
	uint8_t ulp[8] = {0};
	uint8_t junk[64];

	(void)state;
	trp_config_default(&cfg);
	cfg.checksum = false; /* so hand-made packets need no CRC */
	pair_init(&p, NULL, &cfg);
	pair_establish(&p, 1000, 2000);
	pair_stream(&p, SIMLINK_A, 10, 50);
	assert_true(pair_run(&p, 1 * SEC, pair_stream_done, &p));
	peer_stats(&p.peer[1], &before);

	/* A packet of an older connection (other conn_id) at the next PSN. */
	inject(&p, (struct trp_header){ .opcode = TRP_OP_DATA, .conn_id = 1000 ^ 2000 ^ 1,
	                                .psn = 1010, .ack_psn = 2000, .window = 8 },
	       ulp, sizeof(ulp));
	/* Right conn_id, but acknowledging PSNs never sent. */
	inject(&p, (struct trp_header){ .opcode = TRP_OP_DATA, .conn_id = 1000 ^ 2000,
	                                .psn = 1010, .ack_psn = 2500, .window = 8 },
	       ulp, sizeof(ulp));
	/* A duplicate of an already delivered PSN. */
	inject(&p, (struct trp_header){ .opcode = TRP_OP_DATA, .conn_id = 1000 ^ 2000,
	                                .psn = 1003, .ack_psn = 2000, .window = 8 },
	       ulp, sizeof(ulp));
	/* Far beyond the receive window. */
	inject(&p, (struct trp_header){ .opcode = TRP_OP_DATA, .conn_id = 1000 ^ 2000,
	                                .psn = 1010 + 100000, .ack_psn = 2000, .window = 8 },
	       ulp, sizeof(ulp));
	/* A wrapped, very old PSN. */
	inject(&p, (struct trp_header){ .opcode = TRP_OP_DATA, .conn_id = 1000 ^ 2000,
	                                .psn = 1010 + 0x80000000u, .ack_psn = 2000, .window = 8 },
	       ulp, sizeof(ulp));
	/* Malformed: short, bad version, bad opcode, a length beyond the
	 * datagram. */
	memset(junk, 0, sizeof(junk));
	trp_input(p.peer[1].conn, junk, 5);
	junk[0] = 9;
	trp_input(p.peer[1].conn, junk, TRP_HDR_LEN);
	junk[0] = TRP_VERSION;
	junk[1] = 15;
	trp_input(p.peer[1].conn, junk, TRP_HDR_LEN);
	junk[1] = TRP_OP_DATA;
	junk[25] = sizeof(junk) - TRP_HDR_LEN + 1; /* length field 35, datagram 64 */
	trp_input(p.peer[1].conn, junk, sizeof(junk));

	peer_stats(&p.peer[1], &after);
	assert_int_equal(after.stale_dropped - before.stale_dropped, 2);
	/* The duplicate, the far-future PSN and the wrapped one: whether a PSN
	 * 2^31 away counts as old or new, it is never accepted. */
	assert_int_equal(after.dup_dropped - before.dup_dropped +
	                 after.window_dropped - before.window_dropped, 3);
	assert_true(after.window_dropped - before.window_dropped >= 1);
	assert_int_equal(after.malformed_dropped - before.malformed_dropped, 4);
	assert_int_equal(after.data_delivered, before.data_delivered);
	assert_int_equal(after.rcv_next, before.rcv_next);
	assert_int_equal(p.peer[1].n_delivered, 10);
	assert_state(&p, SIMLINK_B, TRP_STATE_ESTABLISHED);
	pair_fini(&p);
}

/* With checksums required, a packet without one is dropped. */
static void test_checksum_required(void **state)
{
	struct pair p;
	struct trp_stats st;
	uint8_t ulp[8] = {0};

	(void)state;
	pair_init(&p, NULL, NULL);
	pair_establish(&p, 1, 2);
	inject(&p, (struct trp_header){ .opcode = TRP_OP_DATA, .conn_id = 1 ^ 2, .psn = 2,
	                                .ack_psn = 1, .window = 8 },
	       ulp, sizeof(ulp));
	peer_stats(&p.peer[1], &st);
	assert_int_equal(st.checksum_dropped, 1);
	assert_int_equal(st.checksum_missing, 1);
	assert_int_equal(st.data_delivered, 0);
	pair_fini(&p);
}

static void test_destroy_reports_outstanding(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p, NULL, NULL);
	p.filter = drop_all;
	pair_establish(&p, 1, 2);
	pair_stream(&p, SIMLINK_A, 5, 10);
	pair_run(&p, 5 * MS, NULL, NULL);
	assert_int_equal(p.peer[0].n_sent, 5);
	trp_conn_destroy(p.peer[0].conn);
	p.peer[0].conn = NULL;
	assert_int_equal(p.peer[0].n_acked_err, 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(p.peer[0].ack_count[i], 1);
		assert_int_equal(p.peer[0].ack_status[i], TRP_ERR_ABORTED);
	}
	pair_fini(&p);
}

/* Warming a connection's coming burst slot by slot (what a host does for
 * a connection about to stream) stops where the ring has no room: with 5
 * packets unacknowledged in a ring of 16 that keeps one slot free, the
 * packets after the next one can take 9 more.  The loads of USIW_WARM_LOAD
 * read each slot warmed. */
static void test_warm_send_slots_end_with_the_ring(void **state)
{
	struct trp_config cfg;
	struct pair p;

	(void)state;
	trp_config_default(&cfg);
	cfg.send_slots = 16;
	pair_init(&p, NULL, &cfg);
	p.filter = drop_all;
	pair_establish(&p, 1, 2);
	pair_stream(&p, SIMLINK_A, 5, 10);
	pair_run(&p, 5 * MS, NULL, NULL);
	assert_int_equal(trp_unacked(p.peer[0].conn), 5);
	uint32_t ahead = 1;
	while (trp_conn_warm_send_slot(p.peer[0].conn, ahead, USIW_WARM_LOAD))
		ahead++;
	assert_int_equal(ahead - 1, 16 - 1 - 5 - 1);
	pair_fini(&p);
}

static int stub_xmit(void *ctx, const void *h, size_t hl, const void *d, size_t dl, void *c)
{
	(void)ctx, (void)h, (void)hl, (void)d, (void)dl, (void)c;
	return 0;
}
static uint64_t stub_now(void *ctx) { (void)ctx; return 0; }
static bool stub_deliver(void *ctx, uint32_t psn, const void *p, size_t l)
{
	(void)ctx, (void)psn, (void)p, (void)l;
	return true;
}
static void stub_in_order(void *ctx, uint32_t psn) { (void)ctx, (void)psn; }
static void stub_acked(void *ctx, void *cookie, int status) { (void)ctx, (void)cookie, (void)status; }
static void stub_event(void *ctx, enum trp_event_type t, int s, const void *p, size_t l)
{
	(void)ctx, (void)t, (void)s, (void)p, (void)l;
}

static void test_api_errors(void **state)
{
	const struct trp_ops stub_ops = {
		.xmit = stub_xmit, .now_ns = stub_now, .deliver = stub_deliver,
		.in_order = stub_in_order, .acked = stub_acked, .event = stub_event,
	};
	struct trp_conn *c;
	struct pair p;
	struct trp_config cfg;
	uint8_t big[TRP_MAX_ULP_HDR + 1] = {0};

	(void)state;
	pair_init(&p, NULL, NULL);
	assert_int_equal(trp_shutdown(p.peer[0].conn), -ENOTCONN);
	assert_int_equal(trp_accept(p.peer[0].conn, 1, NULL, 0), -EINVAL);
	assert_int_equal(trp_connect(p.peer[0].conn, 1, 2, big, TRP_MAX_PDATA + 1), -EINVAL);
	pair_establish(&p, 1, 2);
	assert_int_equal(trp_connect(p.peer[0].conn, 1, 2, NULL, 0), -EISCONN);
	assert_int_equal(trp_conn_establish(p.peer[0].conn, 1, 2), -EISCONN);
	assert_int_equal(trp_send(p.peer[0].conn, big, sizeof(big), NULL, 0, NULL), -EMSGSIZE);
	assert_int_equal(trp_send(p.peer[0].conn, big, 8, big, 65535, NULL), -EMSGSIZE);
	pair_fini(&p);

	c = trp_conn_create(NULL, &stub_ops, NULL);
	assert_non_null(c);
	trp_conn_destroy(c);
	assert_null(trp_conn_create(NULL, &(struct trp_ops){0}, NULL)); /* callbacks missing */
	trp_config_default(&cfg);
	cfg.send_slots = 100; /* not a power of two */
	assert_null(trp_conn_create(&cfg, &stub_ops, NULL));
	trp_config_default(&cfg);
	cfg.recv_window = 1u << 16; /* does not fit the 16-bit window field */
	assert_null(trp_conn_create(&cfg, &stub_ops, NULL));
	trp_config_default(&cfg);
	cfg.rto_min_ns = cfg.rto_max_ns + 1;
	assert_null(trp_conn_create(&cfg, &stub_ops, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake_accept),
		cmocka_unit_test(test_passive_decides_later),
		cmocka_unit_test(test_reject_with_private_data),
		cmocka_unit_test(test_reject_ack_lost),
		cmocka_unit_test(test_request_lost_is_retransmitted),
		cmocka_unit_test(test_accept_lost_is_retransmitted),
		cmocka_unit_test(test_final_handshake_ack_lost),
		cmocka_unit_test(test_establish_early_data_dropped),
		cmocka_unit_test(test_shutdown_after_data),
		cmocka_unit_test(test_simultaneous_close),
		cmocka_unit_test(test_warm_send_slots_end_with_the_ring),
		cmocka_unit_test(test_shutdown_packets_lost),
		cmocka_unit_test(test_last_ack_lost),
		cmocka_unit_test(test_connect_timeout_fails),
		cmocka_unit_test(test_dead_peer_detected),
		cmocka_unit_test(test_stale_and_malformed_dropped),
		cmocka_unit_test(test_checksum_required),
		cmocka_unit_test(test_destroy_reports_outstanding),
		cmocka_unit_test(test_api_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
