/* The send side: the ring of outstanding packets, (re)transmission, ACK and
 * SACK processing, loss detection, the tail-loss probe and the
 * retransmission timer. */
#include "trp/conn.h"
#include "trp/crc32c.h"
#include "trp/psn.h"
#include "usiw/byteorder.h"

#include <errno.h>
#include <string.h>

/* SACK-reported packets above a hole before the hole is declared lost (as
 * TCP's three duplicate ACKs). */
#define DUP_THRESHOLD 3

static struct trp_slot *slot_of(struct trp_conn *c, uint32_t psn)
{
	return &c->slots[(c->una_slot + (psn - c->snd_una)) & c->slot_mask];
}

void send_init(struct trp_conn *c, uint32_t isn)
{
	c->snd_una = c->snd_nxt = isn;
	c->una_slot = 0;
	c->n_sacked = c->n_lost = 0;
	c->send_deadline = TRP_NO_DEADLINE;
	c->send_timer = SEND_TIMER_RTO;
	c->tail_probes_sent = 0;
	c->timeouts_in_row = 0;
	c->recovery_started = false;
	c->ack_asked = false;
	c->xmit_seq = c->delivered_xmit_seq = 0;
}

/* Room for one more DATA packet: a free slot (one is kept for SHUTDOWN), the
 * peer's advertised window, the congestion window, and no retransmission
 * waiting (repairs go before new data). */
bool send_window_open(const struct trp_conn *c)
{
	return send_outstanding(c) < c->cfg.send_slots - 1 &&
	       send_outstanding(c) < c->peer_window &&
	       send_pipe(c) < c->cc.cwnd && c->n_lost == 0;
}

struct trp_slot *send_new_slot(struct trp_conn *c, unsigned opcode)
{
	struct trp_slot *s = slot_of(c, c->snd_nxt);

	s->psn = c->snd_nxt++;
	s->opcode = (uint8_t)opcode;
	s->flags = 0;
	s->tx_count = 0;
	s->ulp_hdr_len = 0;
	s->data = NULL;
	s->data_len = 0;
	s->cookie = NULL;
	return s;
}

/* Where a slot's ULP header (s->ulp_hdr_len bytes) is kept: in the slot when
 * short, else in the slot's own entry of the array after the ring (conn.c,
 * slots_alloc), which only Read Requests, atomics and Terminates touch. */
static uint8_t *slot_ulp_hdr(const struct trp_conn *c, struct trp_slot *s)
{
	if (s->ulp_hdr_len <= TRP_SLOT_ULP_INLINE)
		return s->ulp_hdr;
	uint8_t (*long_hdrs)[TRP_MAX_ULP_HDR] = (void *)(c->slots + c->slot_mask + 1);
	return long_hdrs[s - c->slots];
}

/* Encode the TRP header (with the current ACK state) in front of the bytes
 * already in buf + TRP_HDR_LEN and hand the datagram to the host.  Returns
 * false if the host could not take it (ops.xmit): nothing was sent. */
static bool xmit_packet(struct trp_conn *c, uint8_t *buf, unsigned opcode, uint32_t psn,
                        size_t ulp_len, const void *data, size_t data_len,
                        uint32_t payload_crc, void *cookie)
{
	struct trp_header h = {
		.version = TRP_VERSION,
		.opcode = (uint8_t)opcode,
		.window = (uint16_t)c->rcv_window,
		.conn_id = c->conn_id,
		.psn = psn,
		.ack_psn = c->rcv_next,
		.sack = recv_sack_bits(c),
		.length = (uint16_t)(ulp_len + data_len),
	};

	trp_header_encode(&h, buf);
	if (c->cfg.checksum)
		trp_header_set_checksum(buf, trp_checksum_finish(payload_crc, buf));
	if (c->ops.xmit(c->ctx, buf, TRP_HDR_LEN + ulp_len, data, data_len, cookie) != 0) {
		c->stats.xmit_busy++;
		c->xmit_busy = true;
		return false;
	}
	c->stats.pkts_sent++;
	c->stats.bytes_sent += TRP_HDR_LEN + ulp_len + data_len;
	if (h.sack)
		c->stats.sacks_sent++;
	recv_ack_sent(c);
	return true;
}

/* The tail-loss probe (after RFC 8985, section 7).  When the last packets
 * sent are lost, no later packet makes the peer SACK past them, and only the
 * retransmission timer found the loss, at its floor (1 ms) on a link whose
 * round trip is tens of microseconds: over a link losing a fifth of its
 * packets, most messages waited that long once.  So when nothing has been
 * acknowledged for two round trips plus the peer's ACK delay since new data
 * last went out, the newest packet not SACKed goes again (send_tail_probe):
 * the peer acknowledges it at once when it is a duplicate or lies past a
 * gap, and what that ACK leaves unreported below it is lost
 * (detect_sack_losses).  A probe lost in turn (or its answer) is followed
 * by another after twice the wait, as QUIC's probe timeout backs off (RFC
 * 9002, section 6.2), for as long as that wait stays shorter than the
 * retransmission timeout; then the timer.  With a single probe, a 64 B
 * ping-pong over a simulated 10 us round trip losing 5% each way had its
 * 99.9th percentile at 1080 us (a lost probe waited for the 1 ms RTO floor);
 * with the backoff, 220 us. */
static uint64_t tail_probe_timeout(const struct trp_conn *c)
{
	const uint64_t first = 2 * c->rtt.srtt_ns + c->cfg.ack_delay_ns;

	/* After 16 probes, the timer's turn (and the shift stays defined). */
	return c->tail_probes_sent > 16 ? UINT64_MAX : first << c->tail_probes_sent;
}

/* Not before an RTT is known, nor once the timer or SACKs found a loss:
 * their retransmissions are the repair then. */
static bool tail_probe_allowed(const struct trp_conn *c)
{
	return c->rtt.have_sample && c->timeouts_in_row == 0 && c->n_lost == 0;
}

/* Arm the send timer for what is outstanding at now: the probe's if one may
 * go before the retransmission timeout, else the timeout's.  A NOT_READY's
 * hold keeps its own deadline: both are set again when it ends. */
static void arm_send_deadline(struct trp_conn *c, uint64_t now)
{
	if (c->send_timer == SEND_TIMER_RNR_HOLD)
		return;
	if (!send_outstanding(c)) {
		c->send_timer = SEND_TIMER_RTO;
		c->send_deadline = TRP_NO_DEADLINE;
		return;
	}
	const uint64_t rto = rtt_timeout(&c->rtt);
	const uint64_t probe = tail_probe_timeout(c);
	const bool probe_first = tail_probe_allowed(c) && probe < rto;
	c->send_timer = probe_first ? SEND_TIMER_TAIL_PROBE : SEND_TIMER_RTO;
	c->send_deadline = now + (probe_first ? probe : rto);
}

static void slot_mark_lost(struct trp_conn *c, struct trp_slot *s)
{
	s->flags |= SLOT_LOST;
	c->n_lost++;
}

/* A packet the host could not take is marked lost, as if the wire had lost
 * it, so that it goes again before new data (send_window_open), but without
 * the congestion response to a loss: nothing was in the network.
 *
 * The payload is hashed at every transmission, since its data is read again
 * from memory the ULP references: a checksum kept from the first one would
 * not match data the application changed before its work request completed.
 * RDMA leaves what arrives undefined then, but the peer dropped every
 * retransmission as corrupt, until the retry limit failed the connection:
 * perftest's ib_send_bw over iWARP rewrites its credit buffer while the
 * previous credit Write is outstanding (1 in 30 runs of -q 4 over
 * af_packet, where the first Write was lost). */
bool send_slot_xmit(struct trp_conn *c, struct trp_slot *s)
{
	uint8_t buf[TRP_HDR_LEN + TRP_MAX_ULP_HDR];
	uint32_t payload_crc = CRC32C_INIT;

	/* A copy of constant length compiles to a few moves (the bytes past a
	 * short header are the slot's own, unused). */
	if (s->ulp_hdr_len <= TRP_SLOT_ULP_INLINE)
		memcpy(buf + TRP_HDR_LEN, s->ulp_hdr, TRP_SLOT_ULP_INLINE);
	else
		memcpy(buf + TRP_HDR_LEN, slot_ulp_hdr(c, s), s->ulp_hdr_len);
	if (c->cfg.checksum) {
		payload_crc = crc32c_update(payload_crc, buf + TRP_HDR_LEN, s->ulp_hdr_len);
		if (s->data_len)
			payload_crc = crc32c_update(payload_crc, s->data, s->data_len);
	}
	if (!xmit_packet(c, buf, s->opcode, s->psn, s->ulp_hdr_len, s->data, s->data_len,
	                 payload_crc, s->cookie)) {
		slot_mark_lost(c, s);
		return false;
	}
	uint64_t now = conn_now(c);
	const bool first = s->tx_count == 0;

	if (!first) {
		c->stats.retransmits++;
		rtt_retransmitted(&c->rtt, now);
	}
	if (s->tx_count < UINT16_MAX)
		s->tx_count++;
	s->sent_ns = now;
	s->xmit_seq = c->xmit_seq++;
	/* The probe waits from the newest data: it is for the tail. */
	if (c->send_deadline == TRP_NO_DEADLINE || (first && c->send_timer == SEND_TIMER_TAIL_PROBE))
		arm_send_deadline(c, now);
	return true;
}

int64_t trp_send(struct trp_conn *c, const void *ulp_hdr, size_t ulp_hdr_len,
                 const void *data, size_t data_len, void *cookie)
{
	struct trp_slot *s;

	if (c->state != TRP_STATE_ESTABLISHED && c->state != TRP_STATE_CLOSING)
		return -ENOTCONN;
	if (c->local_shutdown)
		return -EPIPE;
	if (ulp_hdr_len > TRP_MAX_ULP_HDR || ulp_hdr_len + data_len > UINT16_MAX)
		return -EMSGSIZE;
	if (!send_window_open(c)) {
		/* The congestion window (at least one packet, so some are in
		 * the network) holds fewer packets than the peer acknowledges
		 * at once (ack_every): it would wait ack_delay_ns for each
		 * round's ACK. */
		if (!c->ack_asked && send_pipe(c) >= c->cc.cwnd && c->cc.cwnd < c->cfg.ack_every) {
			c->ack_asked = true;
			send_ack_only(c, TRP_OP_KEEPALIVE);
		}
		c->want_writable = true;
		return -EAGAIN;
	}
	s = send_new_slot(c, TRP_OP_DATA);
	s->ulp_hdr_len = (uint8_t)ulp_hdr_len;
	if (ulp_hdr_len)
		memcpy(slot_ulp_hdr(c, s), ulp_hdr, ulp_hdr_len);
	s->data = data;
	s->data_len = (uint16_t)data_len;
	s->cookie = cookie;
	send_slot_xmit(c, s);
	return s->psn;
}

bool trp_can_send(const struct trp_conn *c)
{
	return (c->state == TRP_STATE_ESTABLISHED || c->state == TRP_STATE_CLOSING) &&
	       !c->local_shutdown && send_window_open(c);
}

uint32_t trp_unacked(const struct trp_conn *c)
{
	return send_outstanding(c);
}

/* A PSN-consuming control packet; its private data lives in c->pdata. */
void send_control(struct trp_conn *c, unsigned opcode, const void *pdata, size_t pdata_len)
{
	struct trp_slot *s = send_new_slot(c, opcode);

	s->flags = SLOT_CONTROL;
	c->pdata_len = (uint16_t)pdata_len;
	if (pdata_len) {
		memcpy(c->pdata, pdata, pdata_len);
		s->data = c->pdata;
		s->data_len = (uint16_t)pdata_len;
	}
	send_slot_xmit(c, s);
}

/* ACK or KEEPALIVE: no PSN consumed, nothing to retransmit.  An ACK the
 * host could not take stays due (trp_poll sends it again). */
void send_ack_only(struct trp_conn *c, unsigned opcode)
{
	uint8_t buf[TRP_HDR_LEN];

	if (!xmit_packet(c, buf, opcode, c->snd_nxt, 0, NULL, 0, CRC32C_INIT, NULL))
		return;
	if (opcode == TRP_OP_ACK)
		c->stats.acks_sent++;
	else
		c->stats.keepalives_sent++;
}

/* Names the packet recv.c refused last (answer_not_ready) and carries the
 * ACK state, as every packet does.  One the host could not take is not
 * sent again: the sender's timer finds the packet unacknowledged. */
void send_not_ready(struct trp_conn *c)
{
	uint8_t buf[TRP_HDR_LEN + TRP_NOT_READY_LEN];
	uint64_t us = c->cfg.rnr_delay_ns / 1000;

	c->not_ready &= (uint8_t)~NOT_READY_DUE;
	put_be32(buf + TRP_HDR_LEN, us > UINT32_MAX ? UINT32_MAX : (uint32_t)us);
	if (xmit_packet(c, buf, TRP_OP_NOT_READY, c->rnr_answered_psn, TRP_NOT_READY_LEN, NULL, 0,
	                crc32c_update(CRC32C_INIT, buf + TRP_HDR_LEN, TRP_NOT_READY_LEN), NULL))
		c->stats.not_ready_sent++;
}

/* The PSN the peer takes a RESET for (conn.c, input_reset): the next one
 * we expect from it, which it has sent or sends next. */
void send_reset(struct trp_conn *c)
{
	uint8_t buf[TRP_HDR_LEN];

	xmit_packet(c, buf, TRP_OP_RESET, c->rcv_next, 0, NULL, 0, CRC32C_INIT, NULL);
}

/* Release one cumulatively acknowledged slot.  Returns whether the peer
 * had it though the retransmission timer declared it lost and it was not
 * resent since: the evidence that the timeout was spurious. */
static bool slot_release(struct trp_conn *c, struct trp_slot *s, int status)
{
	bool rto_spurious = (s->flags & (SLOT_RTO_LOSS | SLOT_LOST)) == (SLOT_RTO_LOSS | SLOT_LOST);

	if (s->flags & SLOT_SACKED)
		c->n_sacked--;
	if (s->flags & SLOT_LOST)
		c->n_lost--;
	c->snd_una++;
	c->una_slot = c->snd_una == c->snd_nxt ? 0 : c->una_slot + 1;
	if (s->flags & SLOT_CONTROL) {
		if (status == TRP_OK)
			conn_control_acked(c, s->opcode);
	} else {
		c->ops.acked(c->ctx, s->cookie, status);
	}
	return rto_spurious;
}

/* Karn's rule: only packets sent once give an RTT sample, and only when no
 * retransmission left after them (rtt_sample_ok). */
static void maybe_sample_rtt(struct trp_conn *c, const struct trp_slot *s, uint64_t now)
{
	if (s->tx_count == 1 && !(s->flags & SLOT_SACKED) && rtt_sample_ok(&c->rtt, s->sent_ns))
		rtt_sample(&c->rtt, now - s->sent_ns);
}

/* The peer has s: keep the newest transmission it is known to have
 * received.  A retransmitted packet reported sooner than the lowest round
 * trip after its last transmission was received from an earlier one (RFC
 * 8985, section 6.2). */
static void note_delivered(struct trp_conn *c, const struct trp_slot *s, uint64_t now)
{
	if (s->tx_count > 1 && now - s->sent_ns < c->rtt.lowest_ns)
		return;
	if ((int32_t)(s->xmit_seq - c->delivered_xmit_seq) > 0)
		c->delivered_xmit_seq = s->xmit_seq;
}

/* Apply the SACK bitmap; returns the number of newly SACKed packets.  A
 * SACK of a packet the timer declared lost is no evidence that the timeout
 * was spurious: packets beyond a real loss arrive too (send_process_ack). */
static uint32_t apply_sack(struct trp_conn *c, uint32_t ack_psn, uint64_t sack, uint64_t now)
{
	uint32_t newly = 0;

	for (unsigned i = 0; sack && i < TRP_SACK_BITS; i++, sack >>= 1) {
		uint32_t psn = ack_psn + 1 + i;
		struct trp_slot *s;

		if (!(sack & 1) || !psn_before(psn, c->snd_nxt))
			continue;
		s = slot_of(c, psn);
		if (s->flags & SLOT_SACKED)
			continue;
		maybe_sample_rtt(c, s, now);
		note_delivered(c, s, now);
		if (s->flags & SLOT_LOST) {
			s->flags &= (uint8_t)~(SLOT_LOST | SLOT_RTO_LOSS);
			c->n_lost--;
		}
		s->flags |= SLOT_SACKED;
		c->n_sacked++;
		newly++;
	}
	return newly;
}

/* A retransmission is lost when the peer has received a packet sent after
 * it: RFC 8985's RACK, in transmission order rather than time.  Outside
 * loss recovery, DUP_THRESHOLD later transmissions must have arrived
 * (reordering); in recovery any one, as RACK's reordering window is 0 there.
 * The hole rule below finds a hole once only: the packets SACKed above it
 * were reported before it went again.  Before this, each lost fast
 * retransmission waited for the timer (1 ms at least, then a window of one
 * packet): over a simulated link losing 5% of its packets, nearly all of a
 * 64 MiB transfer's timeouts. */
static bool retransmission_lost(const struct trp_conn *c, const struct trp_slot *s)
{
	const int32_t threshold = c->cc.in_recovery ? 1 : DUP_THRESHOLD;

	return (int32_t)(c->delivered_xmit_seq - s->xmit_seq) >= threshold;
}

/* A hole with DUP_THRESHOLD SACKed packets above it is lost, and so is one
 * below a SACKed tail-loss probe: the probe left at least two round trips
 * after it; a packet sent again is also lost by retransmission_lost.
 * SACKed slots lie within TRP_SACK_BITS + 1 of snd_una (every SACK bitmap
 * starts at an ACK PSN <= snd_una), so only that span is scanned, from the
 * top down. */
static void detect_sack_losses(struct trp_conn *c)
{
	uint32_t span = send_outstanding(c);
	uint32_t sacked_above = 0;
	bool probe_above = false;
	bool found = false;

	if (c->n_sacked == 0)
		return;
	if (span > TRP_SACK_BITS + 1)
		span = TRP_SACK_BITS + 1;
	for (uint32_t i = span; i-- > 0;) {
		struct trp_slot *s = slot_of(c, c->snd_una + i);

		if (s->flags & SLOT_SACKED) {
			sacked_above++;
			probe_above |= (s->flags & SLOT_TAIL_PROBE) != 0;
		} else if (!(s->flags & SLOT_LOST) &&
		           (((sacked_above >= DUP_THRESHOLD || probe_above) &&
		             !(s->flags & SLOT_SACK_LOSS)) ||
		            (s->tx_count > 1 && retransmission_lost(c, s)))) {
			s->flags |= SLOT_SACK_LOSS;
			slot_mark_lost(c, s);
			found = true;
		}
	}
	if (found && cc_on_loss(&c->cc, c->snd_nxt))
		c->recovery_started = true;
}

/* The timer fired only because the acknowledgements were late (a
 * receiver that was not scheduled, a queue that grew faster than the RTT
 * estimate): the cumulative ACK passed packets it declared lost that were
 * never resent, so the oldest outstanding packet was not lost and those
 * after it arrived in order.  As Eifel (RFC 4015) responds: what is still
 * marked lost from that timeout is not resent, and the window and the RTO
 * go back to what they were.  A real loss further on is still found by SACK
 * or the next timeout, which is then judged afresh.  (SACKs alone are no
 * such evidence: after a burst loss, the packets beyond it are SACKed while
 * the burst is really lost, and undoing on them resent one packet per
 * backed-off timeout.) */
static void undo_spurious_timeout(struct trp_conn *c)
{
	for (uint32_t psn = c->snd_una; psn_before(psn, c->snd_nxt); psn++) {
		struct trp_slot *s = slot_of(c, psn);

		if (s->flags & SLOT_RTO_LOSS) {
			s->flags &= (uint8_t)~(SLOT_RTO_LOSS | SLOT_LOST);
			c->n_lost--;
		}
	}
	c->cc = c->cc_before_rto;
	rtt_end_backoff(&c->rtt);
	c->rto_undo_armed = false;
	c->stats.spurious_timeouts++;
}

bool send_process_ack(struct trp_conn *c, const struct trp_header *h, uint64_t now)
{
	uint32_t acked = 0;
	bool rto_spurious = false;

	if (psn_before(h->ack_psn, c->snd_una))
		return true; /* an old ACK overtaken by newer ones: nothing new */
	if (psn_diff(h->ack_psn, c->snd_nxt) > 0)
		return false;
	const bool una_moved = h->ack_psn != c->snd_una;
	c->peer_window = h->window;
	if (h->sack)
		c->stats.sacks_rcvd++;
	if (una_moved) {
		struct trp_slot *newest = slot_of(c, h->ack_psn - 1);

		maybe_sample_rtt(c, newest, now);
		while (c->snd_una != h->ack_psn) {
			struct trp_slot *s = slot_of(c, c->snd_una);

			if (!(s->flags & SLOT_SACKED)) {
				acked++;
				note_delivered(c, s, now);
			}
			rto_spurious |= slot_release(c, s, TRP_OK);
		}
		c->timeouts_in_row = 0;
		c->tail_probes_sent = 0;
		c->ack_asked = false;
		rtt_end_backoff(&c->rtt);
		cc_on_una(&c->cc, c->snd_una);
		arm_send_deadline(c, now);
	}
	acked += apply_sack(c, h->ack_psn, h->sack, now);
	/* The first acknowledgement of anything after a timeout decides, as
	 * in Eifel: either it shows the timeout spurious, or the loss stands. */
	if (rto_spurious && c->rto_undo_armed) {
		undo_spurious_timeout(c);
	} else if (acked || una_moved) {
		c->rto_undo_armed = false;
		cc_on_acked(&c->cc, acked);
	}
	detect_sack_losses(c);
	send_retransmit_lost(c);
	return true;
}

/* Retransmit lost packets, oldest first, as the congestion window allows,
 * until the host refuses one (ops.xmit): the rest wait behind it, and a
 * packet declared lost by the timer and still not resent keeps that mark
 * (slot_release takes its acknowledgement as evidence of a spurious
 * timeout).
 *
 * The first retransmission of a recovery goes even when the window is full,
 * as TCP's fast retransmit does (RFC 6675 section 5, step 4.3).  The pipe
 * counts every packet the SACK bitmap cannot reach (beyond ack_psn + 64) as
 * still in the network, so after a loss in a full 512-packet window it
 * stayed above the halved window: the hole waited for the timer (1 ms)
 * although the peer had everything else. */
void send_retransmit_lost(struct trp_conn *c)
{
	if (!c->n_lost || c->send_timer == SEND_TIMER_RNR_HOLD)
		return;
	for (uint32_t psn = c->snd_una; c->n_lost && psn_before(psn, c->snd_nxt); psn++) {
		struct trp_slot *s = slot_of(c, psn);

		if (!(s->flags & SLOT_LOST))
			continue;
		if (send_pipe(c) >= c->cc.cwnd && !c->recovery_started)
			break;
		uint8_t rto_loss = s->flags & SLOT_RTO_LOSS;
		s->flags &= (uint8_t)~(SLOT_LOST | SLOT_RTO_LOSS);
		c->n_lost--;
		if (!send_slot_xmit(c, s)) {
			s->flags |= rto_loss;
			break;
		}
		c->recovery_started = false;
		if (s->flags & SLOT_SACK_LOSS)
			c->stats.fast_retransmits++;
	}
}

/* The retransmission timer fired: every packet not SACKed is presumed lost
 * (go-back-N over the SACK scoreboard, as TCP after an RTO), the window
 * restarts at one packet and the timeout doubles. */
static void send_on_timeout(struct trp_conn *c)
{
	c->stats.timeouts++;
	if (++c->timeouts_in_row > c->cfg.max_retries) {
		conn_fail(c, TRP_ERR_TIMEOUT);
		return;
	}
	rtt_backoff(&c->rtt);
	if (c->timeouts_in_row == 1) {
		c->cc_before_rto = c->cc;
		c->rto_undo_armed = true;
	}
	cc_on_timeout(&c->cc, c->snd_nxt);
	for (uint32_t psn = c->snd_una; psn_before(psn, c->snd_nxt); psn++) {
		struct trp_slot *s = slot_of(c, psn);

		s->flags &= (uint8_t)~SLOT_SACK_LOSS;
		if (!(s->flags & (SLOT_SACKED | SLOT_LOST))) {
			slot_mark_lost(c, s);
			s->flags |= SLOT_RTO_LOSS;
		}
	}
	c->send_deadline = TRP_NO_DEADLINE; /* re-armed by the retransmission */
	send_retransmit_lost(c);
	/* Nothing was retransmittable (only a peer that reneges on its SACKs gets
	 * here): keep the timer running so the retry bound still applies.  No
	 * probe is allowed after a timeout, so this is the RTO. */
	if (c->send_deadline == TRP_NO_DEADLINE)
		arm_send_deadline(c, conn_now(c));
}

/* The newest packet the peer has not reported goes again.  The oldest
 * outstanding one is never SACKed (an ACK names it as its ack_psn), so
 * there is one. */
static void send_tail_probe(struct trp_conn *c, uint64_t now)
{
	uint32_t psn = c->snd_nxt - 1;

	while (psn != c->snd_una && (slot_of(c, psn)->flags & SLOT_SACKED))
		psn--;
	struct trp_slot *s = slot_of(c, psn);

	c->tail_probes_sent++;
	arm_send_deadline(c, now); /* the next probe's, or the RTO, from this one */
	c->stats.tail_probes++;
	s->flags |= SLOT_TAIL_PROBE;
	/* A KEEPALIVE after it, which the peer answers at once: a probe that
	 * fills the last hole is new in-order data to the peer, whose ACK it
	 * would otherwise delay by ack_delay_ns while we wait for it. */
	if (send_slot_xmit(c, s))
		send_ack_only(c, TRP_OP_KEEPALIVE);
}

/* The peer refused psn because its receiver is not ready (InfiniBand's RNR
 * NAK): nothing is lost, and the peer is alive.  So the window and the
 * RTO stay, and the retry bound is the NOT_READY's own: psn and every
 * packet after it that the peer has not reported go again once the wait
 * it asks for is over, the oldest first, and nothing goes before (the
 * peer would refuse a Send after it too, and takes the later packets in
 * order only after it).  Each time the same packet is refused counts
 * against cfg.rnr_retries; a packet refused after it starts again. */
void send_on_not_ready(struct trp_conn *c, uint32_t psn, uint64_t delay_ns, uint64_t now)
{
	if (!psn_in_range(psn, c->snd_una, send_outstanding(c)) ||
	    (slot_of(c, psn)->flags & (SLOT_SACKED | SLOT_CONTROL))) {
		c->stats.stale_dropped++; /* old, or about a packet that arrived since */
		return;
	}
	c->stats.not_ready_rcvd++;
	c->rnr_taken_in_row = psn == c->rnr_taken_psn ? c->rnr_taken_in_row + 1 : 1;
	c->rnr_taken_psn = psn;
	/* A closing end gives up too: its SHUTDOWN comes after packets the
	 * peer takes only if its application posts receives, and one that
	 * waits for the close (rdma_cm's peers, which wait for DISCONNECTED)
	 * posts none: the two would wait for each other for ever.  So does
	 * rdma_disconnect elsewhere, flushing what is outstanding. */
	if (c->local_shutdown || (c->cfg.rnr_retries != TRP_RNR_RETRY_FOREVER &&
				  c->rnr_taken_in_row > c->cfg.rnr_retries)) {
		/* The peer's end lives on: tell it that ours gives up. */
		send_reset(c);
		conn_fail(c, TRP_ERR_NOT_READY);
		return;
	}
	for (uint32_t p = psn; psn_before(p, c->snd_nxt); p++) {
		struct trp_slot *s = slot_of(c, p);

		if (!(s->flags & (SLOT_SACKED | SLOT_LOST | SLOT_CONTROL)))
			slot_mark_lost(c, s);
	}
	c->send_timer = SEND_TIMER_RNR_HOLD;
	c->send_deadline = now + (delay_ns ? delay_ns : 1);
}

/* The NOT_READY's wait is over: what it held goes now, and the timer is
 * the retransmission timer again. */
static void end_rnr_hold(struct trp_conn *c, uint64_t now)
{
	c->send_timer = SEND_TIMER_RTO;
	c->send_deadline = TRP_NO_DEADLINE;
	send_retransmit_lost(c);
	if (c->send_deadline == TRP_NO_DEADLINE)
		arm_send_deadline(c, now);
}

void send_on_deadline(struct trp_conn *c, uint64_t now)
{
	if (c->send_timer == SEND_TIMER_RNR_HOLD)
		end_rnr_hold(c, now);
	else if (c->send_timer == SEND_TIMER_RTO)
		send_on_timeout(c);
	else if (tail_probe_allowed(c))
		send_tail_probe(c, now);
	else
		arm_send_deadline(c, now); /* a loss found since: the timer's turn */
}

/* Report every outstanding packet with status (failure or teardown). */
void send_flush(struct trp_conn *c, int status)
{
	while (c->snd_una != c->snd_nxt)
		slot_release(c, slot_of(c, c->snd_una), status);
	c->send_deadline = TRP_NO_DEADLINE;
	c->send_timer = SEND_TIMER_RTO;
}

void send_notify_writable(struct trp_conn *c)
{
	if (c->want_writable && trp_can_send(c)) {
		c->want_writable = false;
		if (c->ops.writable)
			c->ops.writable(c->ctx);
	}
}
