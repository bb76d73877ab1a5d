/* The receive side: duplicate and window checks, immediate delivery of every
 * new DATA packet (in order or not: DDP places segments directly), the
 * cumulative in-order point, the SACK bitmap and the ACK schedule. */
#include "trp/conn.h"
#include "trp/psn.h"

static bool bit_test(const struct trp_conn *c, uint32_t psn)
{
	uint32_t i = psn & c->recv_mask;

	return c->rcv_bits[i / 64] >> (i % 64) & 1;
}

static void bit_set(struct trp_conn *c, uint32_t psn)
{
	uint32_t i = psn & c->recv_mask;

	c->rcv_bits[i / 64] |= UINT64_C(1) << (i % 64);
}

static void bit_clear(struct trp_conn *c, uint32_t psn)
{
	uint32_t i = psn & c->recv_mask;

	c->rcv_bits[i / 64] &= ~(UINT64_C(1) << (i % 64));
}

void recv_init(struct trp_conn *c, uint32_t rcv_next)
{
	for (uint32_t w = 0; w < (c->recv_mask + 1) / 64 + 1; w++)
		c->rcv_bits[w] = 0;
	c->rcv_next = rcv_next;
	c->rcv_ooo = 0;
	c->ack_pending = 0;
	c->ack_deadline = TRP_NO_DEADLINE;
	c->ack_now = false;
	c->ack_deferred = false;
	c->not_ready = 0;
	c->rnr_answered_valid = false;
}

/* Bit i: PSN rcv_next + 1 + i received.  Limited to the bitmap's span so a
 * bit never aliases a PSN a whole window earlier. */
uint64_t recv_sack_bits(const struct trp_conn *c)
{
	uint64_t sack = 0;
	uint32_t n;

	if (c->rcv_ooo == 0)
		return 0;
	n = c->recv_mask < TRP_SACK_BITS ? c->recv_mask : TRP_SACK_BITS;
	for (uint32_t i = 0; i < n; i++)
		if (bit_test(c, c->rcv_next + 1 + i))
			sack |= UINT64_C(1) << i;
	return sack;
}

/* Any transmitted packet carries the current ACK state. */
void recv_ack_sent(struct trp_conn *c)
{
	c->ack_pending = 0;
	c->ack_deadline = TRP_NO_DEADLINE;
	c->ack_now = false;
}

/* Advance the in-order point over consecutively received PSNs. */
static uint32_t advance_in_order(struct trp_conn *c)
{
	uint32_t advanced = 0;

	while (bit_test(c, c->rcv_next)) {
		bit_clear(c, c->rcv_next);
		c->rcv_next++;
		advanced++;
	}
	c->rcv_ooo -= advanced - 1; /* the arriving PSN itself was not counted */
	c->ack_pending += advanced;
	c->ops.in_order(c->ctx, c->rcv_next);
	if (c->peer_shutdown_seen && !c->peer_shutdown_done &&
	    !psn_before(c->rcv_next, c->peer_shutdown_psn + 1))
		conn_peer_shutdown(c);
	return advanced;
}

void trp_defer_ack(struct trp_conn *c)
{
	c->ack_deferred = true;
}

void trp_not_ready(struct trp_conn *c)
{
	c->not_ready |= NOT_READY_ASKED;
}

/* A packet refused as not ready gets a NOT_READY, unless our last one
 * named an earlier packet that has not arrived since: the sender, held by
 * that one, sends again from it, and this packet after it.  So a window of
 * Sends that find no receive draws one NOT_READY, not one each; and when
 * the packet it named comes again and is refused again, it draws the next
 * (a lost NOT_READY is made up for by the sender's retransmission timer). */
static bool answer_not_ready(struct trp_conn *c, uint32_t psn)
{
	const uint32_t named = c->rnr_answered_psn;

	if (c->rnr_answered_valid && psn_before(named, psn) && !psn_before(named, c->rcv_next) &&
	    !bit_test(c, named))
		return false;
	c->rnr_answered_valid = true;
	c->rnr_answered_psn = psn;
	return true;
}

/* When a delayed ACK is due: ack_delay_ns from now, brought forward to the
 * last multiple of ack_grid_ns (so between ack_delay_ns - ack_grid_ns and
 * ack_delay_ns from now; config_valid keeps that after now).  A power of
 * two, so that a mask finds it: a ping-pong schedules a delayed ACK for
 * every message it receives, and a 64-bit division takes tens of cycles.
 * The host's clock is the same for all its connections, so the delayed ACKs
 * that would come due within one grid step come due together and leave in
 * one timer pass, one burst of frames that the peer receives in one burst.
 * A ping-pong that goes round many QPs in turn sends one lone ACK per
 * message (its answer goes on another QP): over 1024 QPs, qp-lat's same-run
 * ratio to one QP was 1.14-1.16x with ACKs due at their own times and
 * 1.02-1.04x with a 32 us grid, where no lone ACKs at all gave 1.05-1.06x
 * (docs/bench.md, Many QPs). */
static uint64_t delayed_ack_deadline(const struct trp_conn *c, uint64_t now)
{
	const uint64_t t = now + c->cfg.ack_delay_ns;

	return c->cfg.ack_grid_ns ? t & ~(c->cfg.ack_grid_ns - 1) : t;
}

/* Schedule the ACK for new in-order data: every ack_every packets at once
 * (twice that at the end of a message, trp_defer_ack), otherwise after
 * the ACK delay (coalescing ACKs of a burst). */
static void schedule_delayed_ack(struct trp_conn *c, uint64_t now)
{
	uint32_t every = c->ack_deferred ? 2 * c->cfg.ack_every : c->cfg.ack_every;

	if (c->ack_pending >= every)
		c->ack_now = true;
	else if (c->ack_deadline == TRP_NO_DEADLINE)
		c->ack_deadline = delayed_ack_deadline(c, now);
}

/* A PSN-consuming packet (DATA or SHUTDOWN) in an open connection. */
void recv_packet(struct trp_conn *c, const struct trp_header *h, const uint8_t *payload,
		 uint64_t now)
{
	int32_t d = psn_diff(h->psn, c->rcv_next);

	if (d >= 0 && (uint32_t)d >= c->rcv_window) {
		c->stats.window_dropped++;
		c->ack_now = true; /* re-advertise the window */
		return;
	}
	if (d < 0 || bit_test(c, h->psn)) {
		c->stats.dup_dropped++;
		c->ack_now = true; /* our ACK was probably lost: repeat it */
		return;
	}
	if (c->peer_shutdown_seen && psn_diff(h->psn, c->peer_shutdown_psn) > 0) {
		c->stats.stale_dropped++; /* beyond the end of the peer's stream */
		return;
	}
	if (h->opcode == TRP_OP_SHUTDOWN) {
		bit_set(c, h->psn);
		c->peer_shutdown_seen = true;
		c->peer_shutdown_psn = h->psn;
		c->ack_now = true;
	} else {
		c->ack_deferred = false;
		if (!c->ops.deliver(c->ctx, h->psn, payload, h->length)) {
			c->stats.refused++;
			if (c->not_ready & NOT_READY_ASKED) {
				c->not_ready &= (uint8_t)~NOT_READY_ASKED;
				if (answer_not_ready(c, h->psn))
					c->not_ready |= NOT_READY_DUE;
			}
			return;
		}
		bit_set(c, h->psn);
		c->stats.data_delivered++;
	}
	if (d > 0) {
		c->rcv_ooo++;
		c->ack_now = true; /* a gap: tell the sender at once (SACK) */
		return;
	}
	/* A packet that fills a gap is most likely a retransmission, and the
	 * sender is waiting to hear of it (RFC 5681 section 4.2): acknowledge
	 * it at once rather than after ack_delay_ns. */
	if (advance_in_order(c) > 1 || c->rcv_ooo)
		c->ack_now = true;
	else
		schedule_delayed_ack(c, now);
}
