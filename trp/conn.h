/* Internal: the connection object shared by the send path (send.c), the
 * receive path (recv.c) and the state machine (conn.c).  Not installed. */
#ifndef USIW_TRP_CONN_H
#define USIW_TRP_CONN_H

#include "trp/trp.h"
#include "trp/cc.h"
#include "trp/rtt.h"

#define TRP_NO_DEADLINE UINT64_MAX

/* A refusal as not ready, from the ULP to recv_packet, and what it makes
 * due after the datagram. */
enum trp_not_ready_flags {
	NOT_READY_ASKED = 1 << 0,   /* trp_not_ready during this deliver() */
	NOT_READY_DUE = 1 << 1,     /* a NOT_READY goes after this datagram */
};

/* What send_deadline is for. */
enum trp_send_timer {
	SEND_TIMER_RTO,         /* the retransmission timeout (or none set) */
	SEND_TIMER_TAIL_PROBE,  /* the tail-loss probe, before the timeout */
	SEND_TIMER_RNR_HOLD,    /* the wait a NOT_READY asked for: nothing is
	                         * sent again before it ends (send_on_not_ready) */
};

enum trp_slot_flags {
	SLOT_CONTROL = 1 << 0,  /* REQUEST/ACCEPT/REJECT/SHUTDOWN: no acked() */
	SLOT_SACKED = 1 << 1,   /* the peer reported it in a SACK bitmap */
	SLOT_LOST = 1 << 2,     /* declared lost, waiting to be retransmitted */
	SLOT_SACK_LOSS = 1 << 3, /* already declared lost by SACK once */
	SLOT_RTO_LOSS = 1 << 4,  /* declared lost by the timer, not resent since */
	SLOT_TAIL_PROBE = 1 << 5, /* resent as the tail-loss probe */
};

/* ULP headers up to this long are kept in their slot; longer ones (a Read
 * Request's, an atomic's, a Terminate's) by slot index after the ring
 * (slot_ulp_hdr in send.c).  24 bytes hold the DDP header of a Write, a Read
 * Response and a Send, so a message of those touches one line of the ring
 * per packet: with many connections sending in turn each one is a miss
 * (docs/bench.md, Many QPs). */
#define TRP_SLOT_ULP_INLINE 24

/* One packet sent and not yet cumulatively acknowledged, in one cache line
 * (the ring is page-aligned).  Its TRP header is encoded at each
 * transmission (send_slot_xmit), so only the ULP header is kept. */
struct trp_slot {
	uint64_t sent_ns;       /* last transmission */
	const void *data;       /* referenced, not copied */
	void *cookie;
	uint32_t psn;
	uint32_t xmit_seq;      /* the connection's transmission count at its last
	                         * transmission (send.c, lost retransmissions) */
	uint16_t data_len;      /* trp_send: the ULP header and data fit a uint16_t */
	uint16_t tx_count;
	uint8_t opcode;
	uint8_t flags;
	uint8_t ulp_hdr_len;
	uint8_t ulp_hdr[TRP_SLOT_ULP_INLINE]; /* if ulp_hdr_len fits */
};
_Static_assert(sizeof(struct trp_slot) == 64, "a send slot is one cache line");

/* The fields that each packet sent or received reads or writes come first,
 * grouped by path, and the ones only the handshake, a timeout's undo or the
 * shutdown use come last: with a thousand connections each one's state has
 * left the cache by its next packet, and every line a packet touches is a
 * miss (docs/bench.md, "Many QPs").  trp_conn_create aligns the struct to a
 * cache line, so the order below is the order of the lines. */
struct trp_conn {
	/* Line 0: the host's callbacks. */
	struct trp_ops ops;
	void *ctx;

	/* Line 1: the send side.  The PSNs in [snd_una, snd_nxt) occupy the
	 * slots from slots[una_slot] on, wrapping at slot_mask.  una_slot goes
	 * back to 0 whenever nothing is outstanding, so a connection sending one
	 * packet at a time reuses one slot, still cached, instead of walking the
	 * whole ring (with many connections the walk missed the cache per
	 * packet). */
	enum trp_state state;
	uint32_t conn_id;
	struct trp_slot *slots;
	uint32_t slot_mask;
	uint32_t una_slot;
	uint32_t snd_una, snd_nxt;
	uint32_t peer_window;    /* the peer accepts PSNs < snd_una + peer_window */
	uint32_t n_sacked, n_lost;
	uint32_t timeouts_in_row; /* consecutive RTO expiries without progress */
	uint64_t send_deadline;  /* send_timer's */
	uint8_t send_timer;      /* enum trp_send_timer */
	uint8_t tail_probes_sent; /* since the cumulative ACK last moved */
	bool want_writable;      /* trp_send() returned -EAGAIN since last writable() */
	bool xmit_busy;          /* a packet the host could not take waits (ops.xmit) */
	bool local_shutdown;     /* our SHUTDOWN is in the send ring */
	bool rto_undo_armed;     /* cc_before_rto holds the window to restore */
	bool recovery_started;   /* a loss just began a recovery: its first
	                          * retransmission goes whatever the window */
	bool ack_asked;          /* a KEEPALIVE asked for an ACK since the
	                          * cumulative ACK last moved (trp_send) */

	/* Line 2: the receive side.  Bit (psn & recv_mask) set = PSN received,
	 * for PSNs in [rcv_next, rcv_next + cfg.recv_window). */
	uint64_t *rcv_bits;
	uint32_t recv_mask;
	uint32_t rcv_next;
	uint32_t rcv_window;     /* advertised, <= cfg.recv_window */
	uint32_t rcv_ooo;        /* received PSNs beyond rcv_next */
	uint32_t ack_pending;    /* new in-order packets not yet acknowledged */
	bool ack_now;
	bool ack_deferred;       /* trp_defer_ack during this deliver() */
	uint8_t not_ready;       /* enum trp_not_ready_flags (recv.c) */
	bool peer_shutdown_seen; /* the peer's SHUTDOWN PSN is known */
	uint64_t ack_deadline;
	/* Liveness: any packet in puts the next probe off. */
	uint64_t keepalive_at;
	uint32_t probes;         /* keepalives sent without an answer */
	/* The send side's transmission order (here, since every packet in and
	 * out touches this line): the next transmission's number, and the
	 * newest transmission the peer is known to have received. */
	uint32_t xmit_seq;
	uint32_t delivered_xmit_seq;

	/* Then, from the end of line 2: the settings (their per-packet ones
	 * first), the window, the RTT estimate and the counters (theirs
	 * first). */
	struct trp_config cfg;
	struct trp_cc cc;
	struct trp_rtt rtt;
	struct trp_stats stats;

	/* The window before the first of a run of RTO expiries, restored when
	 * they prove spurious (send_process_ack). */
	struct trp_cc cc_before_rto;

	/* Handshake: the private data our REQUEST/ACCEPT/REJECT carries. */
	uint8_t pdata[TRP_MAX_PDATA];
	uint16_t pdata_len;

	/* The rest of the shutdown. */
	bool local_shutdown_acked;
	bool peer_shutdown_done;    /* everything before the peer's SHUTDOWN delivered */
	uint32_t peer_shutdown_psn;

	/* Receiver not ready (recv.c): the PSN of the packet our last NOT_READY
	 * answered, while the peer has not resent it or it is still refused;
	 * refusals of later packets meanwhile go unanswered, since the sender
	 * sends again from that one.  And the sender's side (send.c): the PSN
	 * of the last NOT_READY taken and how many in a row named it. */
	bool rnr_answered_valid;
	uint32_t rnr_answered_psn;
	uint32_t rnr_taken_psn;
	uint32_t rnr_taken_in_row;
};

static inline uint32_t send_outstanding(const struct trp_conn *c)
{
	return c->snd_nxt - c->snd_una;
}

/* Packets believed to be in the network. */
static inline uint32_t send_pipe(const struct trp_conn *c)
{
	return send_outstanding(c) - c->n_sacked - c->n_lost;
}

static inline uint64_t conn_now(const struct trp_conn *c)
{
	return c->ops.now_ns(c->ctx);
}

/* header.c: the checksum of a packet whose payload CRC state is known. */
uint32_t trp_checksum_finish(uint32_t payload_state, const void *hdr_with_zero_csum);
void trp_header_set_checksum(void *hdr, uint32_t checksum);

/* send.c */
void send_init(struct trp_conn *c, uint32_t isn);
bool send_window_open(const struct trp_conn *c);
struct trp_slot *send_new_slot(struct trp_conn *c, unsigned opcode);
/* Returns false if the host could not take it (the slot is marked lost). */
bool send_slot_xmit(struct trp_conn *c, struct trp_slot *s);
void send_control(struct trp_conn *c, unsigned opcode, const void *pdata, size_t pdata_len);
void send_ack_only(struct trp_conn *c, unsigned opcode);
/* The peer refused psn as not ready and asks us to wait delay_ns. */
void send_on_not_ready(struct trp_conn *c, uint32_t psn, uint64_t delay_ns, uint64_t now);
void send_not_ready(struct trp_conn *c);
/* A RESET: we give the connection up while the peer's end still lives. */
void send_reset(struct trp_conn *c);
/* Apply a packet's ACK/SACK/window.  Returns false if it acknowledges a PSN
 * never sent (the packet must be dropped). */
bool send_process_ack(struct trp_conn *c, const struct trp_header *h, uint64_t now);
void send_retransmit_lost(struct trp_conn *c);
/* send_deadline passed: the tail-loss probe or the retransmission timeout. */
void send_on_deadline(struct trp_conn *c, uint64_t now);
void send_flush(struct trp_conn *c, int status);
void send_notify_writable(struct trp_conn *c);

/* recv.c */
void recv_init(struct trp_conn *c, uint32_t rcv_next);
void recv_packet(struct trp_conn *c, const struct trp_header *h, const uint8_t *payload,
		 uint64_t now);
uint64_t recv_sack_bits(const struct trp_conn *c);
void recv_ack_sent(struct trp_conn *c);

/* conn.c: callbacks from the send and receive paths into the state machine */
void conn_control_acked(struct trp_conn *c, unsigned opcode);
void conn_peer_shutdown(struct trp_conn *c);
void conn_fail(struct trp_conn *c, int status);

#endif
