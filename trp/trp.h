/* TRP: the reliability layer between UDP and DDP.
 *
 * TRP turns an unreliable datagram service into reliable, ordered,
 * flow-controlled and congestion-controlled delivery between two endpoints.
 * It is a pure library: no threads, no syscalls, no global state.  The host
 * (the DPDK engine, or a simulated link in the tests) supplies time, carries
 * datagrams and receives deliveries through struct trp_ops.  Memory is
 * allocated only in trp_conn_create(); the per-packet paths never allocate.
 *
 * The wire format and the algorithms are documented in docs/protocol-trp.md.
 */
#ifndef USIW_TRP_H
#define USIW_TRP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "usiw/warm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Wire format ------------------------------------------------------- */

#define TRP_VERSION 1
/* 30 bytes: after Ethernet(14)+IPv4(20)+UDP(8) = 42 bytes, 42 + 30 = 72 puts
 * the DDP header that follows on an 8-byte boundary. */
#define TRP_HDR_LEN 30
/* Bits of SACK information carried after the cumulative ACK PSN. */
#define TRP_SACK_BITS 64
/* Largest ULP (DDP/RDMAP) header that trp_send() copies into its slot. */
#define TRP_MAX_ULP_HDR 64
/* Largest private data of CONNECT_REQUEST / ACCEPT / REJECT (as MPA). */
#define TRP_MAX_PDATA 196
/* NOT_READY's payload: the retry delay the receiver asks for, in
 * microseconds (big-endian). */
#define TRP_NOT_READY_LEN 4

enum trp_opcode {
	TRP_OP_DATA = 0,            /* ULP segment; consumes a PSN */
	TRP_OP_CONNECT_REQUEST = 1, /* active open + private data; consumes a PSN */
	TRP_OP_CONNECT_ACCEPT = 2,  /* passive accept + private data; consumes a PSN */
	TRP_OP_CONNECT_REJECT = 3,  /* passive reject + private data; consumes a PSN */
	TRP_OP_SHUTDOWN = 4,        /* end of this direction's stream; consumes a PSN */
	TRP_OP_ACK = 5,             /* cumulative ACK + SACK + window only */
	TRP_OP_KEEPALIVE = 6,       /* liveness / window probe; peer answers with ACK */
	TRP_OP_RESET = 7,           /* from a closed port, or an end that gave the connection up */
	TRP_OP_NOT_READY = 8,       /* receiver not ready: a DATA packet refused for now; payload:
	                             * the wait asked for (TRP_NOT_READY_LEN bytes, in us) */
	TRP_OP_COUNT
};

struct trp_header {
	uint8_t version;
	uint8_t opcode;      /* enum trp_opcode */
	uint16_t window;     /* PSNs from ack_psn on that the sender will accept */
	uint32_t conn_id;    /* connection nonce: both directions carry it */
	uint32_t psn;        /* meaningful for PSN-consuming opcodes */
	uint32_t ack_psn;    /* next PSN the sender of this packet expects */
	uint64_t sack;       /* bit i: PSN ack_psn + 1 + i has been received */
	uint16_t length;     /* bytes after the header */
	uint32_t checksum;   /* CRC32C, 0 = not computed (see docs) */
};

/* A datagram carries one or more TRP packets back to back, each a header
 * and the `length` bytes after it (docs/protocol-trp.md, 1.4).  The
 * functions below look at the first packet of the datagram at pkt. */

/* Bytes of the first packet (TRP_HDR_LEN + its length field), or 0 if the
 * datagram is shorter than that. */
size_t trp_packet_span(const void *pkt, size_t len);
/* Decode the first packet's header.  Returns 0, or a negative TRP_E* value
 * saying why it is malformed (short, version, opcode, length beyond the
 * datagram or the opcode's limit).  Does not verify the checksum (see
 * trp_checksum_ok). */
int trp_header_decode(struct trp_header *hdr, const void *pkt, size_t len);
/* Encode into buf (at least TRP_HDR_LEN bytes), checksum field as given. */
void trp_header_encode(const struct trp_header *hdr, void *buf);
/* True if the first packet's checksum field is 0 (absent) or matches. */
bool trp_checksum_ok(const void *pkt, size_t len);
const char *trp_opcode_name(unsigned opcode);

/* ---- Status codes ------------------------------------------------------ */

enum trp_status {
	TRP_OK = 0,
	TRP_E_SHORT = -1,        /* datagram shorter than the header */
	TRP_E_VERSION = -2,      /* unknown protocol version */
	TRP_E_OPCODE = -3,       /* unknown opcode */
	TRP_E_LENGTH = -4,       /* length field disagrees with the datagram */
	TRP_ERR_TIMEOUT = -10,   /* retransmission bound exceeded */
	TRP_ERR_DEAD_PEER = -11, /* keepalives unanswered */
	TRP_ERR_ABORTED = -12,   /* connection destroyed with packets outstanding */
	TRP_ERR_REJECTED = -13,  /* the peer rejected the connection request */
	TRP_ERR_RESET = -14,     /* the peer's end of the connection no longer exists */
	TRP_ERR_NOT_READY = -15, /* the peer's receiver stayed not ready through every retry */
};
const char *trp_strerror(int status);

/* ---- Configuration ----------------------------------------------------- */

/* The ones each packet uses come first (trp_conn keeps its hot fields
 * together: conn.h). */
struct trp_config {
	uint32_t send_slots;        /* send ring (packets outstanding), power of 2; 512 */
	uint32_t recv_window;       /* receive window (packets), power of 2; 512 */
	uint32_t ack_every;         /* ACK after this many new in-order packets; 4 */
	bool checksum;              /* compute CRC32C on send and require it on receive; true */
	uint64_t ack_delay_ns;      /* ... or after this long; 50 us */
	uint64_t ack_grid_ns;       /* ... brought forward to a multiple of this: 0 (not) or a
				     * power of 2 up to ack_delay_ns; 2^15 (32.8 us) */
	uint64_t keepalive_ns;      /* idle time before the first probe; 100 ms */
	uint32_t initial_cwnd;      /* congestion window at start, packets; 16 */
	uint32_t max_retries;       /* consecutive timeouts before TRP_ERR_TIMEOUT; 15 */
	uint64_t rto_initial_ns;    /* RTO before the first RTT sample; 10 ms */
	uint64_t rto_min_ns;        /* 1 ms */
	uint64_t rto_max_ns;        /* 200 ms */
	uint64_t keepalive_interval_ns; /* between unanswered probes; 25 ms */
	uint32_t keepalive_probes;  /* unanswered probes before TRP_ERR_DEAD_PEER; 36 */
	/* Receiver not ready (trp_not_ready, docs/protocol-trp.md 2.6): */
	uint32_t rnr_retries;       /* NOT_READY answers to one packet before
	                             * TRP_ERR_NOT_READY; TRP_RNR_RETRY_FOREVER: none; 7 */
	uint64_t rnr_delay_ns;      /* the wait our NOT_READY asks the sender for; 640 us */
};
#define TRP_RNR_RETRY_FOREVER UINT32_MAX
/* Fill cfg with the defaults above. */
void trp_config_default(struct trp_config *cfg);

/* ---- Callbacks --------------------------------------------------------- */

enum trp_event_type {
	TRP_EV_CONNECT_REQUEST, /* passive: a peer asks; pdata = its private data */
	TRP_EV_ESTABLISHED,     /* both directions open; active gets ACCEPT's pdata */
	TRP_EV_REJECTED,        /* active: the peer rejected; pdata = its private data */
	TRP_EV_CLOSED,          /* orderly shutdown complete (or our REJECT delivered) */
	TRP_EV_FAILED,          /* status = TRP_ERR_*; the connection is dead */
};

struct trp_ops {
	/* Transmit one datagram: hdr (TRP header + ULP header, valid only during
	 * the call) followed by data (NULL for control packets).  data is the
	 * pointer given to trp_send(), also on retransmission.  Returns 0, or
	 * non-zero when the host cannot take the datagram now (its own transmit
	 * queue is full): the packet then counts as not sent, no new data goes
	 * before it, and it is sent again at the next trp_poll() (which
	 * trp_next_deadline() makes due at once) or acknowledgement, instead of
	 * being taken for lost on the wire and waiting for the retransmission
	 * timeout. */
	int (*xmit)(void *ctx, const void *hdr, size_t hdr_len,
	            const void *data, size_t data_len, void *cookie);
	/* Monotonic time in nanoseconds. */
	uint64_t (*now_ns)(void *ctx);
	/* A new DATA packet, immediately even if out of order.
	 * payload = the bytes after the TRP header (ULP header + data).
	 * Returns true if the ULP took it (then it is never delivered again);
	 * false if the ULP refused it (RDMAP refuses a segment it answered with
	 * a Terminate): the packet is then treated as never received and not
	 * acknowledged, so the sender does not count it as delivered.  A ULP
	 * that can take it later (a Send before its receive is posted) calls
	 * trp_not_ready() before returning false. */
	bool (*deliver)(void *ctx, uint32_t psn, const void *payload, size_t len);
	/* Every PSN before next_psn has been delivered. */
	void (*in_order)(void *ctx, uint32_t next_psn);
	/* The packet sent with cookie is acknowledged (status TRP_OK), or will
	 * never be (status TRP_ERR_*).  Exactly once per successful trp_send(). */
	void (*acked)(void *ctx, void *cookie, int status);
	/* Connection events; pdata valid only during the call. */
	void (*event)(void *ctx, enum trp_event_type type, int status,
	              const void *pdata, size_t pdata_len);
	/* Optional (may be NULL): trp_send() may succeed again after -EAGAIN. */
	void (*writable)(void *ctx);
};

/* ---- Connections ------------------------------------------------------- */

enum trp_state {
	TRP_STATE_IDLE,        /* created; trp_connect/trp_conn_establish, or a REQUEST arrives */
	TRP_STATE_REQ_SENT,    /* active: REQUEST outstanding */
	TRP_STATE_REQ_RCVD,    /* passive: waiting for trp_accept/trp_reject */
	TRP_STATE_ACCEPT_SENT, /* passive: waiting for our ACCEPT to be acknowledged */
	TRP_STATE_REJECT_SENT, /* passive: waiting for our REJECT to be acknowledged */
	TRP_STATE_ESTABLISHED,
	TRP_STATE_CLOSING,     /* a SHUTDOWN sent or received, not both done */
	TRP_STATE_CLOSED,
	TRP_STATE_FAILED,
};
const char *trp_state_name(enum trp_state state);

/* The ones each packet counts come first (as in trp_config). */
struct trp_stats {
	uint64_t pkts_sent, bytes_sent;     /* every packet, incl. retransmits */
	uint64_t pkts_rcvd, bytes_rcvd;     /* every packet handed to trp_input */
	uint64_t data_delivered;            /* DATA packets delivered (new PSNs) */
	uint64_t acks_sent;                 /* ACK-only packets */
	uint64_t refused;                   /* DATA packets the ULP refused */
	uint64_t retransmits;               /* all retransmissions */
	uint64_t timeouts;                  /* RTO expirations */
	uint64_t spurious_timeouts;         /* ... found spurious and undone */
	uint64_t fast_retransmits;          /* retransmissions triggered by SACK */
	uint64_t tail_probes;               /* tail-loss probes sent */
	uint64_t xmit_busy;                 /* transmissions the host could not take */
	uint64_t sacks_sent, sacks_rcvd;    /* packets carrying a non-zero SACK bitmap */
	uint64_t keepalives_sent;
	uint64_t dup_dropped;               /* PSN already received */
	uint64_t stale_dropped;             /* wrong conn_id, ACK of unsent PSN */
	uint64_t window_dropped;            /* PSN beyond the receive window */
	uint64_t early_dropped;             /* data before the connection was established */
	uint64_t malformed_dropped;         /* header decode failed */
	uint64_t resets_rcvd;               /* RESETs taken (trp_closed_port_answer) */
	uint64_t not_ready_sent;            /* NOT_READY answers to refused packets */
	uint64_t not_ready_rcvd;            /* NOT_READYs taken: retries after a wait */
	uint64_t checksum_dropped;          /* CRC32C mismatch or missing */
	uint64_t checksum_missing;          /* of those, without one (checksum 0) */
	uint64_t srtt_ns, rttvar_ns, rto_ns;
	uint64_t min_rtt_ns;                /* the lowest RTT sample; 0 before one */
	uint32_t cwnd, ssthresh;            /* packets */
	uint32_t peer_window;               /* last window the peer advertised */
	uint32_t recv_window;               /* window we advertise */
	uint32_t in_flight;                 /* sent, not yet cumulatively acked */
	uint32_t snd_una, snd_nxt;          /* oldest unacknowledged, next new PSN */
	uint32_t rcv_next;                  /* next in-order PSN expected */
};

struct trp_conn;

/* Allocate a connection (the only allocation), cfg NULL = defaults.
 * Returns NULL on a bad config or out of memory. */
struct trp_conn *trp_conn_create(const struct trp_config *cfg,
                                 const struct trp_ops *ops, void *ctx);
/* Free it.  Packets still outstanding are reported to acked() with
 * TRP_ERR_ABORTED; no events are raised.  Not from inside a callback of the
 * same connection (the other calls, e.g. trp_send from acked(), are fine). */
void trp_conn_destroy(struct trp_conn *conn);

/* Active open: send CONNECT_REQUEST (retransmitted until answered).
 * isn = our first PSN, conn_id = a fresh random nonce for this connection. */
int trp_connect(struct trp_conn *conn, uint32_t isn, uint32_t conn_id,
                const void *pdata, size_t pdata_len);
/* Passive side, after TRP_EV_CONNECT_REQUEST. */
int trp_accept(struct trp_conn *conn, uint32_t isn, const void *pdata, size_t pdata_len);
int trp_reject(struct trp_conn *conn, uint32_t isn, const void *pdata, size_t pdata_len);
/* Handshake-less open (RoCE-style, both ISNs exchanged out of band).
 * The connection id is local_isn ^ remote_isn, the same on both sides. */
int trp_conn_establish(struct trp_conn *conn, uint32_t local_isn, uint32_t remote_isn);
/* Orderly close: SHUTDOWN after all data sent so far.  TRP_EV_CLOSED once our
 * SHUTDOWN is acknowledged and the peer's has arrived. */
int trp_shutdown(struct trp_conn *conn);

/* Send one DATA packet.  ulp_hdr (<= TRP_MAX_ULP_HDR) is copied; data is
 * referenced until acked(cookie) is called.  Returns the PSN (>= 0) or
 * -EAGAIN (window, cwnd or ring full), -ENOTCONN, -EPIPE (shut down),
 * -EMSGSIZE (ULP header too long). */
int64_t trp_send(struct trp_conn *conn, const void *ulp_hdr, size_t ulp_hdr_len,
                 const void *data, size_t data_len, void *cookie);
/* True if trp_send() would not return -EAGAIN now. */
bool trp_can_send(const struct trp_conn *conn);
/* Packets sent and not yet cumulatively acknowledged. */
uint32_t trp_unacked(const struct trp_conn *conn);
/* With no effect on behaviour: warms (usiw/warm.h) every line of the
 * connection's own state that its next packet in or out uses, so that a
 * host that knows the connection has gone cold has its misses overlap
 * instead of following one another as the code reaches each line. */
void trp_conn_warm(const struct trp_conn *conn, enum usiw_warm how);
/* The same for the entries of its queues that the next packets use (the
 * next send slot, the receive bitmap's word), whose places it reads from
 * the connection: best after trp_conn_warm's lines have come in. */
void trp_conn_warm_queues(const struct trp_conn *conn, enum usiw_warm how);
/* The same for the send slot that the packet `ahead` packets after the next
 * one will take, for a host warming a connection's coming burst a slot at a
 * time; false if the ring has no room for that packet. */
bool trp_conn_warm_send_slot(const struct trp_conn *conn, uint32_t ahead, enum usiw_warm how);

/* For a datagram that reached a port where no connection is open: writes
 * to out (TRP_HDR_LEN bytes) the stateless answer its first packet calls
 * for and returns true, as a TCP stack answers a segment to a closed port
 * with a RST:
 * - an intact CONNECT_REQUEST: the CONNECT_REJECT that refuses it at once
 *   (no private data; the requester gets TRP_EV_REJECTED);
 * - an intact DATA, SHUTDOWN, KEEPALIVE, CONNECT_ACCEPT or CONNECT_REJECT,
 *   packets of a connection whose end here is gone: a RESET (the sender's
 *   connection closes if nothing was lost with that end, and fails with
 *   TRP_ERR_RESET otherwise).
 * False for anything else (an ACK, a RESET), which must go unanswered.
 * The host sends it from the port the packet reached; a retransmission
 * draws another one. */
bool trp_closed_port_answer(const void *pkt, size_t len, void *out);

/* Process one received datagram, every packet in it (any content; malformed
 * input is counted, and ends the datagram: what follows cannot be found). */
void trp_input(struct trp_conn *conn, const void *pkt, size_t len);
/* Run timers: retransmission, delayed ACK, keepalive. */
void trp_poll(struct trp_conn *conn);
/* Absolute time (now_ns clock) trp_poll() next has work; UINT64_MAX = none. */
uint64_t trp_next_deadline(const struct trp_conn *conn);

/* From deliver() only: the packet ends a message that the peer's
 * application may answer at once (a ping-pong).  Its ACK then waits up to
 * ack_delay_ns to ride on the answer even if ack_every packets are pending
 * (up to twice that many), instead of going alone just before the answer.
 * The answer's first packet then both completes the peer's request and
 * brings the start of the reply, which the peer receives in the same poll. */
void trp_defer_ack(struct trp_conn *conn);

/* From deliver() only, which then returns false: the ULP cannot take the
 * packet now but will later, as RDMAP cannot place a Send that finds no
 * receive posted (InfiniBand's receiver not ready).  The sender is told
 * with a NOT_READY, holds its retransmissions for cfg.rnr_delay_ns and
 * then sends the packet again, up to its own cfg.rnr_retries times in a row,
 * instead of taking the packet for lost. */
void trp_not_ready(struct trp_conn *conn);

/* Change cfg.rnr_retries and cfg.rnr_delay_ns (unless delay_ns is 0) of a
 * connection already created (the verbs layer may learn them at a later
 * state change than the one that opened it). */
void trp_set_rnr(struct trp_conn *conn, uint32_t retries, uint64_t delay_ns);

/* Limit the window we advertise (a slow ULP); clamped to cfg.recv_window.
 * The change is advertised at once.  Packets the peer sent against a larger
 * window are dropped and retransmitted, so shrink before data flows. */
void trp_set_recv_window(struct trp_conn *conn, uint32_t packets);

enum trp_state trp_conn_state(const struct trp_conn *conn);
uint32_t trp_conn_id(const struct trp_conn *conn);
void trp_conn_stats(const struct trp_conn *conn, struct trp_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
