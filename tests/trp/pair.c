/* See pair.h.  Failures inside callbacks are cmocka assertions, so a broken
 * delivery (duplicate, wrong content, in-order point too early) fails the
 * test at the moment it happens. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "pair.h"
#include "trp/conn.h"
#include "usiw/byteorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PATTERN_LEN (64 * 1024)

static uint8_t pattern[PATTERN_LEN];

static void pattern_init(void)
{
	uint32_t x = 2463534242u;

	for (size_t i = 0; i < PATTERN_LEN; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		pattern[i] = (uint8_t)x;
	}
}

const uint8_t *pair_message_data(uint32_t i, uint32_t payload_max, size_t *len)
{
	*len = 1 + (size_t)i * 13 % payload_max;
	return &pattern[(size_t)i * 7 % (PATTERN_LEN - PAIR_MAX_PAYLOAD)];
}

static void put_index(uint8_t *p, uint32_t i)
{
	memset(p, 0, 4);
	put_be32(p + 4, i);
}

static uint32_t get_index(const uint8_t *p)
{
	return get_be32(p + 4);
}

/* Message i's ULP header: its index (put_index), then pattern bytes, at a
 * length on either side of what a send slot keeps in itself and up to the
 * largest, so that every stream carries both kinds of slot through its
 * losses and retransmissions. */
static size_t ulp_hdr_len(uint32_t i)
{
	static const size_t lens[] = {8, TRP_SLOT_ULP_INLINE, TRP_SLOT_ULP_INLINE + 1,
	                              TRP_MAX_ULP_HDR};

	return lens[i % (sizeof(lens) / sizeof(lens[0]))];
}

static const uint8_t *ulp_hdr_tail(uint32_t i)
{
	return &pattern[(size_t)i * 11 % (PATTERN_LEN - TRP_MAX_ULP_HDR)];
}

/* ---- trp_ops ----------------------------------------------------------- */

static void bundle_flush(struct pair_peer *peer)
{
	if (!peer->bundle_len)
		return;
	simlink_send(peer->pair->link, peer->side, peer->bundle, peer->bundle_len);
	peer->bundle_len = 0;
}

void pair_bundle(struct pair_peer *peer, uint32_t max)
{
	peer->bundle = realloc(peer->bundle, max);
	assert_non_null(peer->bundle);
	peer->bundle_max = max;
	peer->bundle_len = 0;
}

static int op_xmit(void *ctx, const void *hdr, size_t hdr_len, const void *data,
                   size_t data_len, void *cookie)
{
	struct pair_peer *peer = ctx;
	uint8_t buf[TRP_HDR_LEN + TRP_MAX_ULP_HDR + 65536];

	(void)cookie;
	if (peer->busy_every && ++peer->xmit_calls % peer->busy_every == 0)
		return -1;
	assert_true(hdr_len >= TRP_HDR_LEN && hdr_len <= TRP_HDR_LEN + TRP_MAX_ULP_HDR);
	assert_true(data_len <= 65535);
	memcpy(buf, hdr, hdr_len);
	if (data_len)
		memcpy(buf + hdr_len, data, data_len);
	if (!peer->bundle_max || hdr_len + data_len > peer->bundle_max) {
		simlink_send(peer->pair->link, peer->side, buf, hdr_len + data_len);
		return 0;
	}
	if (peer->bundle_len + hdr_len + data_len > peer->bundle_max)
		bundle_flush(peer);
	memcpy(peer->bundle + peer->bundle_len, buf, hdr_len + data_len);
	peer->bundle_len += hdr_len + data_len;
	return 0;
}

static uint64_t op_now(void *ctx)
{
	struct pair_peer *peer = ctx;

	return simlink_now(peer->pair->link);
}

static bool op_deliver(void *ctx, uint32_t psn, const void *payload, size_t len)
{
	struct pair_peer *peer = ctx;
	const uint8_t *bytes = payload;
	const uint8_t *expect;
	size_t expect_len;
	uint32_t i;

	assert_non_null(peer->delivered);
	assert_true(len >= 8);
	i = get_index(bytes);
	assert_true(i < peer->n_msgs);
	assert_int_equal(psn, peer->data_base + i);
	assert_int_equal(peer->delivered[i], 0);   /* exactly once */
	if (i == peer->refuse_index && peer->refuse_times) {
		peer->refuse_times--;
		return false;
	}
	if (i >= peer->not_ready_from && simlink_now(peer->pair->link) < peer->not_ready_until_ns) {
		trp_not_ready(peer->conn);
		return false;
	}
	peer->taken_ns[i] = simlink_now(peer->pair->link);
	const size_t hdr_len = ulp_hdr_len(i);
	assert_true(len >= hdr_len);
	assert_memory_equal(bytes + 8, ulp_hdr_tail(i), hdr_len - 8);
	expect = pair_message_data(i, peer->pair->peer[!peer->side].payload_max, &expect_len);
	assert_int_equal(len, hdr_len + expect_len);
	assert_memory_equal(bytes + hdr_len, expect, expect_len);
	peer->delivered[i]++;
	peer->n_delivered++;
	if (peer->defer_ack_every && (i + 1) % peer->defer_ack_every == 0)
		trp_defer_ack(peer->conn);
	return true;
}

static void op_in_order(void *ctx, uint32_t next_psn)
{
	struct pair_peer *peer = ctx;
	uint32_t upto;

	if (!peer->delivered)
		return;
	upto = next_psn - peer->data_base;
	if ((int32_t)upto < 0)
		return; /* handshake PSNs before the data */
	if (upto > peer->n_msgs)
		upto = peer->n_msgs; /* the SHUTDOWN PSN after the data */
	for (; peer->in_order_msgs < upto; peer->in_order_msgs++)
		assert_int_equal(peer->delivered[peer->in_order_msgs], 1);
}

static void op_acked(void *ctx, void *cookie, int status)
{
	struct pair_peer *peer = ctx;
	uint32_t i = (uint32_t)((uintptr_t)cookie - 1);

	assert_true(i < peer->n_sent);
	assert_int_equal(peer->ack_count[i], 0);    /* exactly once */
	peer->ack_count[i]++;
	peer->ack_status[i] = status;
	if (status == TRP_OK)
		peer->n_acked_ok++;
	else
		peer->n_acked_err++;
}

static void op_event(void *ctx, enum trp_event_type type, int status,
                     const void *pdata, size_t pdata_len)
{
	struct pair_peer *peer = ctx;

	assert_true(peer->n_ev < PAIR_MAX_EVENTS);
	peer->ev[peer->n_ev] = type;
	peer->ev_status[peer->n_ev++] = status;
	assert_true(pdata_len <= TRP_MAX_PDATA);
	if (pdata_len) {
		memcpy(peer->pdata, pdata, pdata_len);
		peer->pdata_len = pdata_len;
	}
	if (type == TRP_EV_CONNECT_REQUEST && peer->accept_in_callback)
		assert_int_equal(trp_accept(peer->conn, peer->accept_isn, "welcome", 7), 0);
}

static void op_writable(void *ctx)
{
	pair_pump(ctx);
}

static const struct trp_ops pair_ops = {
	.xmit = op_xmit,
	.now_ns = op_now,
	.deliver = op_deliver,
	.in_order = op_in_order,
	.acked = op_acked,
	.event = op_event,
	.writable = op_writable,
};

/* ---- simlink_ops ------------------------------------------------------- */

static void link_deliver(void *ctx, enum simlink_side to, const void *buf, size_t len)
{
	struct pair *p = ctx;
	struct pair_peer *peer = &p->peer[to];
	struct trp_header h;

	if (trp_header_decode(&h, buf, len) == TRP_OK && trp_checksum_ok(buf, len)) {
		struct trp_stats st;

		if (p->filter) {
			p->filter_calls++;
			if (!p->filter(p, to, &h))
				return;
		}
		/* The sender must never exceed the window the receiver advertised. */
		trp_conn_stats(peer->conn, &st);
		if (h.opcode == TRP_OP_DATA && trp_conn_state(peer->conn) == TRP_STATE_ESTABLISHED &&
		    h.psn - st.rcv_next < 0x80000000u && h.psn - st.rcv_next >= st.recv_window)
			peer->window_violations++;
	}
	trp_input(peer->conn, buf, len);
	bundle_flush(peer);
}

static uint64_t link_next_timer(void *ctx)
{
	struct pair *p = ctx;
	uint64_t a = trp_next_deadline(p->peer[0].conn);
	uint64_t b = trp_next_deadline(p->peer[1].conn);

	return a < b ? a : b;
}

static void link_timer(void *ctx)
{
	struct pair *p = ctx;
	uint64_t now = simlink_now(p->link);

	for (int s = 0; s < 2; s++) {
		if (trp_next_deadline(p->peer[s].conn) <= now)
			trp_poll(p->peer[s].conn);
		bundle_flush(&p->peer[s]);
	}
}

static const struct simlink_ops pair_link_ops = {
	.deliver = link_deliver,
	.next_timer = link_next_timer,
	.timer = link_timer,
};

/* ---- fixture ----------------------------------------------------------- */

void pair_init(struct pair *p, const struct simlink_config *link_cfg, const struct trp_config *cfg)
{
	struct simlink_config quiet;

	pattern_init();
	memset(p, 0, sizeof(*p));
	if (!link_cfg) {
		simlink_config_default(&quiet);
		quiet.dir[0].delay_ns = quiet.dir[1].delay_ns = 10000;
		link_cfg = &quiet;
	}
	p->link = simlink_create(link_cfg, &pair_link_ops, p);
	assert_non_null(p->link);
	for (int s = 0; s < 2; s++) {
		p->peer[s].pair = p;
		p->peer[s].side = (enum simlink_side)s;
		p->peer[s].conn = trp_conn_create(cfg, &pair_ops, &p->peer[s]);
		assert_non_null(p->peer[s].conn);
	}
}

struct simlink_config pair_link(const char *spec)
{
	struct simlink_config cfg;

	simlink_config_default(&cfg);
	assert_int_equal(simlink_config_parse(&cfg, spec), 0);
	return cfg;
}

void pair_fini(struct pair *p)
{
	for (int s = 0; s < 2; s++) {
		trp_conn_destroy(p->peer[s].conn);
		free(p->peer[s].delivered);
		free(p->peer[s].taken_ns);
		free(p->peer[s].ack_count);
		free(p->peer[s].ack_status);
		free(p->peer[s].bundle);
	}
	simlink_destroy(p->link);
}

static bool both_established(void *arg)
{
	struct pair *p = arg;

	return trp_conn_state(p->peer[0].conn) == TRP_STATE_ESTABLISHED &&
	       trp_conn_state(p->peer[1].conn) == TRP_STATE_ESTABLISHED;
}

void pair_connect(struct pair *p, uint32_t isn_a, uint32_t isn_b)
{
	p->peer[SIMLINK_B].accept_in_callback = true;
	p->peer[SIMLINK_B].accept_isn = isn_b;
	assert_int_equal(trp_connect(p->peer[SIMLINK_A].conn, isn_a, 0x5eed1234u, "hello", 5), 0);
	assert_true(pair_run(p, simlink_now(p->link) + 5000000000ull, both_established, p));
}

void pair_establish(struct pair *p, uint32_t isn_a, uint32_t isn_b)
{
	assert_int_equal(trp_conn_establish(p->peer[SIMLINK_A].conn, isn_a, isn_b), 0);
	assert_int_equal(trp_conn_establish(p->peer[SIMLINK_B].conn, isn_b, isn_a), 0);
}

void pair_stream(struct pair *p, enum simlink_side from, uint32_t n, uint32_t payload_max)
{
	struct pair_peer *tx = &p->peer[from], *rx = &p->peer[!from];
	struct trp_stats st;

	assert_true(payload_max >= 1 && payload_max <= PAIR_MAX_PAYLOAD);
	tx->n_to_send = n;
	tx->n_sent = 0;
	tx->payload_max = payload_max;
	tx->ack_count = calloc(n, 1);
	tx->ack_status = calloc(n, sizeof(int));
	trp_conn_stats(tx->conn, &st);
	rx->data_base = st.snd_nxt;
	rx->n_msgs = n;
	rx->delivered = calloc(n, 1);
	rx->taken_ns = calloc(n, sizeof(*rx->taken_ns));
	assert_non_null(tx->ack_count);
	assert_non_null(rx->delivered);
	assert_non_null(rx->taken_ns);
	pair_pump(tx);
}

void pair_pump(struct pair_peer *peer)
{
	while (peer->n_sent < peer->n_to_send) {
		uint8_t ulp[TRP_MAX_ULP_HDR];
		const size_t ulp_len = ulp_hdr_len(peer->n_sent);
		size_t len;
		const uint8_t *data = pair_message_data(peer->n_sent, peer->payload_max, &len);
		int64_t psn;

		put_index(ulp, peer->n_sent);
		memcpy(ulp + 8, ulp_hdr_tail(peer->n_sent), ulp_len - 8);
		psn = trp_send(peer->conn, ulp, ulp_len, data, len,
		               (void *)(uintptr_t)(peer->n_sent + 1));
		if (psn == -EAGAIN)
			break;
		assert_true(psn >= 0);
		peer->n_sent++;
	}
	bundle_flush(peer);
}

bool pair_run(struct pair *p, uint64_t until_ns, bool (*done)(void *), void *arg)
{
	return simlink_run(p->link, until_ns, done, arg);
}

bool pair_stream_done(void *arg)
{
	struct pair *p = arg;

	for (int s = 0; s < 2; s++) {
		const struct pair_peer *tx = &p->peer[s], *rx = &p->peer[!s];
		if (tx->n_acked_ok + tx->n_acked_err < tx->n_to_send ||
		    rx->in_order_msgs < rx->n_msgs)
			return false;
	}
	return true;
}

static bool both_in_state(const struct pair *p, enum trp_state state)
{
	return trp_conn_state(p->peer[0].conn) == state && trp_conn_state(p->peer[1].conn) == state;
}

bool pair_both_closed(void *arg)
{
	return both_in_state(arg, TRP_STATE_CLOSED);
}

bool pair_both_failed(void *arg)
{
	return both_in_state(arg, TRP_STATE_FAILED);
}

bool peer_has_event(const struct pair_peer *peer, enum trp_event_type type, int *status)
{
	for (unsigned i = 0; i < peer->n_ev; i++) {
		if (peer->ev[i] == type) {
			if (status)
				*status = peer->ev_status[i];
			return true;
		}
	}
	return false;
}

void peer_stats(const struct pair_peer *peer, struct trp_stats *st)
{
	trp_conn_stats(peer->conn, st);
}
