/* The connection state machine: setup (three-way handshake or handshake-less
 * establish), input dispatch, timers, shutdown and failure.  See
 * docs/protocol-trp.md for the state diagram. */
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */

#include "trp/conn.h"
#include "trp/psn.h"
#include "usiw/byteorder.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>

/* The liveness bounds give many tries within 1-2.5 s (retransmissions
 * backing off to only 200 ms; probes 25 ms apart once one goes unanswered):
 * a lossy link leaves a few tries in a row unanswered often enough that
 * nine tries gave live peers up (docs/protocol-trp.md 2.3 and 3.4). */
void trp_config_default(struct trp_config *cfg)
{
	*cfg = (struct trp_config){
		.send_slots = 512,
		.recv_window = 512,
		.initial_cwnd = 16,
		.rto_initial_ns = 10 * 1000 * 1000,
		.rto_min_ns = 1000 * 1000,
		.rto_max_ns = 200 * 1000 * 1000,
		.max_retries = 15,
		.ack_every = 4,
		.ack_delay_ns = 50 * 1000,
		.ack_grid_ns = 1u << 15,
		.keepalive_ns = 100 * 1000 * 1000,
		.keepalive_interval_ns = 25 * 1000 * 1000,
		.keepalive_probes = 36,
		.checksum = true,
		.rnr_retries = 7,
		.rnr_delay_ns = 640 * 1000,
	};
}

static bool power_of_two(uint64_t v)
{
	return v && !(v & (v - 1));
}

static bool config_valid(const struct trp_config *cfg)
{
	return power_of_two(cfg->send_slots) && cfg->send_slots >= 2 &&
	       cfg->send_slots <= (1u << 20) && power_of_two(cfg->recv_window) &&
	       cfg->recv_window >= 2 && cfg->recv_window <= (1u << 15) &&
	       cfg->initial_cwnd >= 1 && cfg->rto_min_ns > 0 &&
	       (cfg->ack_grid_ns == 0 || power_of_two(cfg->ack_grid_ns)) &&
	       cfg->ack_grid_ns <= cfg->ack_delay_ns &&
	       cfg->rto_min_ns <= cfg->rto_max_ns && cfg->ack_every >= 1 &&
	       cfg->keepalive_ns > 0 && cfg->keepalive_interval_ns > 0 && cfg->rnr_delay_ns > 0;
}

/* The send ring from mmap, not calloc: it is large (32 KiB of slots and 32
 * KiB of long ULP headers after them, with the default 512 slots; send.c,
 * slot_ulp_hdr) and a connection that mostly receives writes few of its slots,
 * so only the pages written should become resident.  calloc's zeroing made
 * all of them resident or not depending on where malloc found room (peak RSS
 * per QP of an ib_write_bw server: 37 KiB, or 92 once other allocations of
 * the QP moved).  Anonymous pages are zero until written. */
static size_t slots_size(uint32_t n)
{
	return (size_t)n * (sizeof(struct trp_slot) + TRP_MAX_ULP_HDR);
}

static struct trp_slot *slots_alloc(uint32_t n)
{
	void *p = mmap(NULL, slots_size(n), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void slots_free(struct trp_slot *slots, uint32_t n)
{
	if (slots)
		munmap(slots, slots_size(n));
}

struct trp_conn *trp_conn_create(const struct trp_config *cfg,
                                 const struct trp_ops *ops, void *ctx)
{
	struct trp_config defaults;
	struct trp_conn *c;

	if (!cfg) {
		trp_config_default(&defaults);
		cfg = &defaults;
	}
	if (!config_valid(cfg) || !ops || !ops->xmit || !ops->now_ns || !ops->deliver ||
	    !ops->in_order || !ops->acked || !ops->event)
		return NULL;
	/* Aligned to a cache line: conn.h orders its fields by line. */
	c = aligned_alloc(64, (sizeof(*c) + 63) & ~(size_t)63);
	if (!c)
		return NULL;
	*c = (struct trp_conn){0};
	c->slots = slots_alloc(cfg->send_slots);
	c->rcv_bits = calloc(cfg->recv_window / 64 + 1, sizeof(*c->rcv_bits));
	if (!c->slots || !c->rcv_bits) {
		slots_free(c->slots, cfg->send_slots);
		free(c->rcv_bits);
		free(c);
		return NULL;
	}
	c->cfg = *cfg;
	c->ops = *ops;
	c->ctx = ctx;
	c->state = TRP_STATE_IDLE;
	c->slot_mask = cfg->send_slots - 1;
	c->recv_mask = cfg->recv_window - 1;
	c->rcv_window = cfg->recv_window;
	/* Until the peer advertises its window, send no more than the initial
	 * congestion window allows anyway. */
	c->peer_window = cfg->initial_cwnd;
	c->keepalive_at = TRP_NO_DEADLINE;
	rtt_init(&c->rtt, cfg->rto_initial_ns, cfg->rto_min_ns, cfg->rto_max_ns);
	cc_init(&c->cc, cfg->initial_cwnd, cfg->send_slots);
	send_init(c, 0);
	recv_init(c, 0);
	return c;
}

void trp_conn_destroy(struct trp_conn *c)
{
	if (!c)
		return;
	send_flush(c, TRP_ERR_ABORTED);
	slots_free(c->slots, c->cfg.send_slots);
	free(c->rcv_bits);
	free(c);
}

static void raise_event(struct trp_conn *c, enum trp_event_type type, int status,
                        const void *pdata, size_t pdata_len)
{
	c->ops.event(c->ctx, type, status, pdata, pdata_len);
}

/* States in which the peer should be talking to us (keepalive applies). */
static bool conn_open(const struct trp_conn *c)
{
	switch (c->state) {
	case TRP_STATE_REQ_SENT:
	case TRP_STATE_ACCEPT_SENT:
	case TRP_STATE_REJECT_SENT:
	case TRP_STATE_ESTABLISHED:
	case TRP_STATE_CLOSING:
		return true;
	default:
		return false;
	}
}

static void heard_from_peer(struct trp_conn *c, uint64_t now)
{
	c->probes = 0;
	c->keepalive_at = now + c->cfg.keepalive_ns;
}

static void become_established(struct trp_conn *c, const void *pdata, size_t pdata_len)
{
	c->state = TRP_STATE_ESTABLISHED;
	raise_event(c, TRP_EV_ESTABLISHED, TRP_OK, pdata, pdata_len);
}

static void maybe_closed(struct trp_conn *c)
{
	if (c->state == TRP_STATE_CLOSING && c->local_shutdown_acked && c->peer_shutdown_done) {
		c->state = TRP_STATE_CLOSED;
		c->keepalive_at = TRP_NO_DEADLINE;
		raise_event(c, TRP_EV_CLOSED, TRP_OK, NULL, 0);
	}
}

void conn_fail(struct trp_conn *c, int status)
{
	c->state = TRP_STATE_FAILED;
	c->keepalive_at = TRP_NO_DEADLINE;
	c->ack_deadline = TRP_NO_DEADLINE;
	send_flush(c, status);
	raise_event(c, TRP_EV_FAILED, status, NULL, 0);
}

void conn_control_acked(struct trp_conn *c, unsigned opcode)
{
	switch (opcode) {
	case TRP_OP_CONNECT_ACCEPT:
		if (c->state == TRP_STATE_ACCEPT_SENT)
			become_established(c, NULL, 0);
		break;
	case TRP_OP_CONNECT_REJECT:
		c->state = TRP_STATE_CLOSED;
		c->keepalive_at = TRP_NO_DEADLINE;
		raise_event(c, TRP_EV_CLOSED, TRP_OK, NULL, 0);
		break;
	case TRP_OP_SHUTDOWN:
		c->local_shutdown_acked = true;
		maybe_closed(c);
		break;
	default: /* CONNECT_REQUEST: the answer itself moves the state on */
		break;
	}
}

static void queue_shutdown(struct trp_conn *c)
{
	c->local_shutdown = true;
	c->state = TRP_STATE_CLOSING;
	send_control(c, TRP_OP_SHUTDOWN, NULL, 0);
}

void conn_peer_shutdown(struct trp_conn *c)
{
	c->peer_shutdown_done = true;
	if (!c->local_shutdown)
		queue_shutdown(c);
	maybe_closed(c);
}

/* ---- Setup and teardown requested by the upper layer ------------------- */

static void open_common(struct trp_conn *c, uint32_t isn, uint32_t rcv_next)
{
	send_init(c, isn);
	recv_init(c, rcv_next);
	heard_from_peer(c, conn_now(c));
}

int trp_connect(struct trp_conn *c, uint32_t isn, uint32_t conn_id,
                const void *pdata, size_t pdata_len)
{
	if (c->state != TRP_STATE_IDLE)
		return -EISCONN;
	if (pdata_len > TRP_MAX_PDATA || (pdata_len && !pdata))
		return -EINVAL;
	c->conn_id = conn_id;
	open_common(c, isn, 0);
	c->state = TRP_STATE_REQ_SENT;
	send_control(c, TRP_OP_CONNECT_REQUEST, pdata, pdata_len);
	return 0;
}

static int answer_request(struct trp_conn *c, unsigned opcode, uint32_t isn,
                          const void *pdata, size_t pdata_len)
{
	if (c->state != TRP_STATE_REQ_RCVD)
		return -EINVAL;
	if (pdata_len > TRP_MAX_PDATA || (pdata_len && !pdata))
		return -EINVAL;
	open_common(c, isn, c->rcv_next);
	c->state = opcode == TRP_OP_CONNECT_ACCEPT ? TRP_STATE_ACCEPT_SENT
	                                           : TRP_STATE_REJECT_SENT;
	send_control(c, opcode, pdata, pdata_len);
	return 0;
}

int trp_accept(struct trp_conn *c, uint32_t isn, const void *pdata, size_t pdata_len)
{
	return answer_request(c, TRP_OP_CONNECT_ACCEPT, isn, pdata, pdata_len);
}

int trp_reject(struct trp_conn *c, uint32_t isn, const void *pdata, size_t pdata_len)
{
	return answer_request(c, TRP_OP_CONNECT_REJECT, isn, pdata, pdata_len);
}

int trp_conn_establish(struct trp_conn *c, uint32_t local_isn, uint32_t remote_isn)
{
	if (c->state != TRP_STATE_IDLE)
		return -EISCONN;
	c->conn_id = local_isn ^ remote_isn;
	open_common(c, local_isn, remote_isn);
	c->state = TRP_STATE_ESTABLISHED;
	return 0;
}

int trp_shutdown(struct trp_conn *c)
{
	switch (c->state) {
	case TRP_STATE_ESTABLISHED:
		queue_shutdown(c);
		return 0;
	case TRP_STATE_CLOSING:
	case TRP_STATE_CLOSED:
		return 0; /* already under way (peer-initiated closes answer at once) */
	default:
		return -ENOTCONN;
	}
}

void trp_set_rnr(struct trp_conn *c, uint32_t retries, uint64_t delay_ns)
{
	c->cfg.rnr_retries = retries;
	if (delay_ns)
		c->cfg.rnr_delay_ns = delay_ns;
}

void trp_set_recv_window(struct trp_conn *c, uint32_t packets)
{
	uint32_t old = c->rcv_window;

	c->rcv_window = packets < c->cfg.recv_window ? packets : c->cfg.recv_window;
	/* Window update.  Shrinking cannot recall packets already sent against
	 * the old window (they are dropped and retransmitted), so upper layers
	 * should shrink only before the peer starts sending. */
	if (c->rcv_window != old && conn_open(c))
		send_ack_only(c, TRP_OP_ACK);
}

/* ---- Input ------------------------------------------------------------- */

/* IDLE: only a CONNECT_REQUEST means anything (a passive open). */
static void input_idle(struct trp_conn *c, const struct trp_header *h, const uint8_t *payload)
{
	if (h->opcode != TRP_OP_CONNECT_REQUEST) {
		c->stats.early_dropped++;
		return;
	}
	c->conn_id = h->conn_id;
	c->rcv_next = h->psn + 1;
	c->peer_window = h->window;
	c->state = TRP_STATE_REQ_RCVD;
	raise_event(c, TRP_EV_CONNECT_REQUEST, TRP_OK, payload, h->length);
}

/* REQ_SENT: waiting for ACCEPT or REJECT, which must acknowledge our REQUEST. */
static void input_req_sent(struct trp_conn *c, const struct trp_header *h, const uint8_t *payload,
			   uint64_t now)
{
	switch (h->opcode) {
	case TRP_OP_CONNECT_ACCEPT:
	case TRP_OP_CONNECT_REJECT:
		if (h->ack_psn != c->snd_nxt) {
			c->stats.stale_dropped++;
			return;
		}
		recv_init(c, h->psn + 1);
		send_process_ack(c, h, now);
		send_ack_only(c, TRP_OP_ACK);
		if (h->opcode == TRP_OP_CONNECT_ACCEPT) {
			become_established(c, payload, h->length);
		} else {
			c->state = TRP_STATE_CLOSED;
			c->keepalive_at = TRP_NO_DEADLINE;
			raise_event(c, TRP_EV_REJECTED, TRP_ERR_REJECTED, payload, h->length);
		}
		return;
	case TRP_OP_ACK:
		/* Our REQUEST arrived but the ACCEPT is still coming (the peer
		 * retransmits it). */
		if (!send_process_ack(c, h, now))
			c->stats.stale_dropped++;
		return;
	default:
		c->stats.early_dropped++;
		return;
	}
}

/* ACCEPT_SENT, REJECT_SENT, ESTABLISHED, CLOSING. */
static void input_open(struct trp_conn *c, const struct trp_header *h, const uint8_t *payload,
		       uint64_t now)
{
	if (!send_process_ack(c, h, now)) {
		c->stats.stale_dropped++;
		return;
	}
	switch (h->opcode) {
	case TRP_OP_DATA:
	case TRP_OP_SHUTDOWN:
		if (c->state == TRP_STATE_ESTABLISHED || c->state == TRP_STATE_CLOSING)
			recv_packet(c, h, payload, now);
		else
			c->stats.early_dropped++;
		break;
	case TRP_OP_CONNECT_REQUEST:
		/* A retransmitted REQUEST: our answer is on its way (our own timer
		 * resends it); acknowledge so the peer stops. */
		c->stats.dup_dropped++;
		c->ack_now = true;
		break;
	case TRP_OP_KEEPALIVE:
		c->ack_now = true;
		break;
	case TRP_OP_ACK:
		break;
	case TRP_OP_NOT_READY:
		send_on_not_ready(c, h->psn, (uint64_t)get_be32(payload) * 1000, now);
		break;
	default: /* ACCEPT/REJECT repeated after we acknowledged it */
		c->stats.dup_dropped++;
		c->ack_now = true;
		break;
	}
}

/* CLOSED: keep acknowledging the peer's retransmitted SHUTDOWN, REJECT or
 * KEEPALIVE (our final ACK may have been lost) so it can finish too. */
static void input_closed(struct trp_conn *c, const struct trp_header *h)
{
	if (h->opcode == TRP_OP_DATA || h->opcode == TRP_OP_ACK || h->opcode == TRP_OP_NOT_READY) {
		c->stats.stale_dropped++;
		return;
	}
	c->ack_now = true;
}

/* A RESET from the peer's port: its end of the connection is gone
 * (trp_closed_port_answer).  Taken only if it echoes a PSN that we sent and
 * have not seen acknowledged, or snd_nxt, which our ACKs and KEEPALIVEs
 * carry: as TCP takes a RST only within its window (RFC 5961), so that a
 * stranger cannot end a connection it has not seen. */
static void input_reset(struct trp_conn *c, const struct trp_header *h)
{
	if (c->state == TRP_STATE_CLOSED ||
	    !psn_in_range(h->psn, c->snd_una, c->snd_nxt - c->snd_una + 1)) {
		c->stats.stale_dropped++;
		return;
	}
	c->stats.resets_rcvd++;
	/* An end that is gone (or gave up) after its SHUTDOWN reached us, and
	 * after it had acknowledged all we sent but our own SHUTDOWN (nothing
	 * can follow that), lost nothing of ours: the close is complete, as
	 * the SHUTDOWN's ACK would have made it.  So is a REJECT's exchange.
	 * What of the peer's data did not arrive before its SHUTDOWN, it gave
	 * up on itself (a closing sender whose packets we refused as not ready:
	 * send_on_not_ready).  Otherwise data of ours may have been lost. */
	const uint32_t ours_left = c->snd_nxt - c->snd_una;
	if ((c->peer_shutdown_seen && ours_left <= (c->local_shutdown ? 1u : 0u)) ||
	    c->state == TRP_STATE_REJECT_SENT) {
		c->ack_deadline = TRP_NO_DEADLINE;   /* nobody to acknowledge */
		c->keepalive_at = TRP_NO_DEADLINE;
		send_flush(c, TRP_OK);   /* releases our SHUTDOWN as acknowledged */
		if (c->state != TRP_STATE_CLOSED) {
			c->state = TRP_STATE_CLOSED;
			raise_event(c, TRP_EV_CLOSED, TRP_OK, NULL, 0);
		}
		return;
	}
	conn_fail(c, TRP_ERR_RESET);
}

/* One packet of a datagram, pkt..pkt+len exactly.  Its ACK, keepalive and
 * delayed ACK take one reading of the clock, which costs two calls through
 * the host's callbacks (a ping-pong message took three).  One per packet,
 * not per datagram: a packet's time must not be older than what the packets
 * before it in the datagram sent (a retransmission, a Read Response), or
 * now - sent_ns in send_process_ack would wrap. */
static void input_packet(struct trp_conn *c, const uint8_t *pkt, size_t len)
{
	const uint8_t *payload = pkt + TRP_HDR_LEN;
	struct trp_header h;

	if (trp_header_decode(&h, pkt, len) != TRP_OK) {
		c->stats.malformed_dropped++;
		return;
	}
	if (c->cfg.checksum && h.checksum == 0) {
		c->stats.checksum_dropped++;
		c->stats.checksum_missing++; /* the peer computes none */
		return;
	}
	if (!trp_checksum_ok(pkt, len)) {
		c->stats.checksum_dropped++;
		return;
	}
	if (c->state == TRP_STATE_IDLE) {
		input_idle(c, &h, payload);
		return;
	}
	if (c->state == TRP_STATE_FAILED || h.conn_id != c->conn_id) {
		c->stats.stale_dropped++;
		return;
	}
	if (c->state == TRP_STATE_REQ_RCVD) {
		/* The application has not answered yet; repeats are ignored. */
		if (h.opcode != TRP_OP_CONNECT_REQUEST)
			c->stats.early_dropped++;
		return;
	}
	if (h.opcode == TRP_OP_RESET) {
		input_reset(c, &h);
		return;
	}
	const uint64_t now = conn_now(c);
	heard_from_peer(c, now);
	switch (c->state) {
	case TRP_STATE_REQ_SENT:
		input_req_sent(c, &h, payload, now);
		break;
	case TRP_STATE_CLOSED:
		input_closed(c, &h);
		break;
	default:
		input_open(c, &h, payload, now);
		break;
	}
}

/* The ACK a datagram calls for goes once, after all its packets: a bundle of
 * many small messages is answered by one ACK, not one per ack_every. */
void trp_input(struct trp_conn *c, const void *datagram, size_t len)
{
	const uint8_t *pkt = datagram;

	do {
		size_t span = trp_packet_span(pkt, len);

		c->stats.pkts_rcvd++;
		c->stats.bytes_rcvd += span ? span : len;
		if (!span) {
			c->stats.malformed_dropped++;
			break;
		}
		input_packet(c, pkt, span);
		pkt += span;
		len -= span;
	} while (len);
	/* A NOT_READY carries the ACK state too. */
	if ((c->not_ready & NOT_READY_DUE) && c->state != TRP_STATE_FAILED)
		send_not_ready(c);
	if (c->ack_now && c->state != TRP_STATE_FAILED)
		send_ack_only(c, TRP_OP_ACK);
	send_notify_writable(c);
}

/* ---- Timers ------------------------------------------------------------ */

static void keepalive_expired(struct trp_conn *c, uint64_t now)
{
	if (send_outstanding(c)) {
		/* The retransmission timer and its retry bound watch the peer. */
		c->keepalive_at = now + c->cfg.keepalive_ns;
		return;
	}
	if (c->probes >= c->cfg.keepalive_probes) {
		conn_fail(c, TRP_ERR_DEAD_PEER);
		return;
	}
	c->probes++;
	c->keepalive_at = now + c->cfg.keepalive_interval_ns;
	send_ack_only(c, TRP_OP_KEEPALIVE);
}

void trp_poll(struct trp_conn *c)
{
	uint64_t now = conn_now(c);

	if (c->send_deadline <= now)
		send_on_deadline(c, now);
	if (c->state == TRP_STATE_FAILED)
		return;
	/* What the host could not take goes again now (ops.xmit). */
	if (c->xmit_busy) {
		c->xmit_busy = false;
		send_retransmit_lost(c);
		if (c->ack_now)
			send_ack_only(c, TRP_OP_ACK);
	}
	if (c->ack_deadline <= now)
		send_ack_only(c, TRP_OP_ACK);
	if (conn_open(c) && c->keepalive_at <= now)
		keepalive_expired(c, now);
	send_notify_writable(c);
}

uint64_t trp_next_deadline(const struct trp_conn *c)
{
	uint64_t t = c->send_deadline;

	if (c->ack_deadline < t)
		t = c->ack_deadline;
	if (conn_open(c) && c->keepalive_at < t)
		t = c->keepalive_at;
	return c->xmit_busy ? 0 : t;
}

/* ---- Introspection ----------------------------------------------------- */

enum trp_state trp_conn_state(const struct trp_conn *c)
{
	return c->state;
}

uint32_t trp_conn_id(const struct trp_conn *c)
{
	return c->conn_id;
}

void trp_conn_stats(const struct trp_conn *c, struct trp_stats *stats)
{
	*stats = c->stats;
	stats->srtt_ns = c->rtt.srtt_ns;
	stats->rttvar_ns = c->rtt.rttvar_ns;
	stats->rto_ns = rtt_timeout(&c->rtt);
	stats->min_rtt_ns = c->rtt.have_sample ? c->rtt.lowest_ns : 0;
	stats->cwnd = c->cc.cwnd;
	stats->ssthresh = c->cc.ssthresh;
	stats->peer_window = c->peer_window;
	stats->recv_window = c->rcv_window;
	stats->in_flight = send_outstanding(c);
	stats->snd_una = c->snd_una;
	stats->snd_nxt = c->snd_nxt;
	stats->rcv_next = c->rcv_next;
}

/* The connection up to its cold part (struct trp_conn orders it so); then
 * the slot the next packet sent takes and the receive bitmap's word at
 * rcv_next. */
void trp_conn_warm(const struct trp_conn *c, enum usiw_warm how)
{
	const char *fields = (const char *)c;
	for (size_t off = 0; off < offsetof(struct trp_conn, cc_before_rto); off += 64)
		usiw_warm_line(fields + off, how);
}

/* The send slot (one line, conn.h) n places after the oldest
 * unacknowledged packet's. */
static void warm_send_slot_at(const struct trp_conn *c, uint32_t n, enum usiw_warm how)
{
	usiw_warm_line(&c->slots[(c->una_slot + n) & c->slot_mask], how);
}

void trp_conn_warm_queues(const struct trp_conn *c, enum usiw_warm how)
{
	warm_send_slot_at(c, send_outstanding(c), how);
	usiw_warm_line(&c->rcv_bits[(c->rcv_next & c->recv_mask) / 64], how);
}

bool trp_conn_warm_send_slot(const struct trp_conn *c, uint32_t ahead, enum usiw_warm how)
{
	const uint32_t n = send_outstanding(c) + ahead;
	/* trp_can_send leaves one slot of the ring free. */
	if (n + 1 >= c->cfg.send_slots)
		return false;
	warm_send_slot_at(c, n, how);
	return true;
}

const char *trp_state_name(enum trp_state state)
{
	static const char *const names[] = {
		[TRP_STATE_IDLE] = "IDLE",
		[TRP_STATE_REQ_SENT] = "REQ_SENT",
		[TRP_STATE_REQ_RCVD] = "REQ_RCVD",
		[TRP_STATE_ACCEPT_SENT] = "ACCEPT_SENT",
		[TRP_STATE_REJECT_SENT] = "REJECT_SENT",
		[TRP_STATE_ESTABLISHED] = "ESTABLISHED",
		[TRP_STATE_CLOSING] = "CLOSING",
		[TRP_STATE_CLOSED] = "CLOSED",
		[TRP_STATE_FAILED] = "FAILED",
	};
	return (unsigned)state < sizeof(names) / sizeof(names[0]) ? names[state] : "UNKNOWN";
}

const char *trp_strerror(int status)
{
	switch (status) {
	case TRP_OK:
		return "success";
	case TRP_E_SHORT:
		return "datagram shorter than the TRP header";
	case TRP_E_VERSION:
		return "unknown TRP version";
	case TRP_E_OPCODE:
		return "unknown TRP opcode";
	case TRP_E_LENGTH:
		return "TRP length field disagrees with the datagram";
	case TRP_ERR_TIMEOUT:
		return "retransmission limit exceeded: peer unreachable";
	case TRP_ERR_DEAD_PEER:
		return "peer stopped answering keepalives";
	case TRP_ERR_ABORTED:
		return "connection destroyed with packets outstanding";
	case TRP_ERR_REJECTED:
		return "connection rejected by the peer";
	case TRP_ERR_RESET:
		return "connection reset: the peer's end of it no longer exists, or gave it up";
	case TRP_ERR_NOT_READY:
		return "receiver not ready: the peer refused a packet (no receive posted) through "
		       "every retry";
	default:
		return "unknown TRP status";
	}
}
