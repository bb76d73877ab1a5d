/* Test fixture: two TRP endpoints joined by a simulated link, recording every
 * callback so tests can assert outcomes (events, deliveries with content,
 * in-order points, acked cookies, the receive window). */
#ifndef USIW_TESTS_TRP_PAIR_H
#define USIW_TESTS_TRP_PAIR_H

#include "trp/trp.h"
#include "simlink.h"

#define PAIR_MAX_EVENTS 16
#define PAIR_MAX_PAYLOAD 1024

struct pair;

struct pair_peer {
	struct pair *pair;
	enum simlink_side side;
	struct trp_conn *conn;

	enum trp_event_type ev[PAIR_MAX_EVENTS];
	int ev_status[PAIR_MAX_EVENTS];
	unsigned n_ev;
	uint8_t pdata[TRP_MAX_PDATA]; /* of the last event that carried some */
	size_t pdata_len;
	bool accept_in_callback;      /* answer CONNECT_REQUEST at once ... */
	uint32_t accept_isn;          /* ... with this ISN */

	/* Receiving a stream of n_msgs messages whose first DATA PSN is data_base. */
	uint32_t data_base;
	uint32_t n_msgs;
	uint8_t *delivered;           /* per message: times delivered */
	uint32_t n_delivered;
	uint32_t in_order_msgs;       /* messages known complete by in_order() */
	uint32_t window_violations;   /* DATA PSNs seen beyond the advertised window */
	uint32_t refuse_index;        /* deliver() refuses this message ... */
	uint32_t refuse_times;        /* ... this many times */
	/* deliver() refuses every message from this index on as not ready
	 * (trp_not_ready) until the clock reaches not_ready_until_ns, as a
	 * receiver with no receive posted for them yet; taken_ns[i] is when
	 * message i was taken. */
	uint32_t not_ready_from;
	uint64_t not_ready_until_ns;
	uint64_t *taken_ns;
	uint32_t defer_ack_every;     /* deliver() calls trp_defer_ack on every
	                               * this-many-th message (0: never) */
	uint32_t busy_every;          /* the host refuses every this-many-th
	                               * transmission (trp_ops.xmit; 0: never) */
	uint32_t xmit_calls;
	/* Bundling, as the engine does it (docs/protocol-trp.md 1.4): packets
	 * are gathered into one datagram of at most bundle_max bytes, sent
	 * when the next would not fit and after each pump, input or timer
	 * pass (the host's flush).  0: one packet per datagram. */
	uint32_t bundle_max;
	uint8_t *bundle;
	size_t bundle_len;

	/* Sending a stream of n_to_send messages from the writable() pump. */
	uint32_t n_to_send, n_sent;
	uint8_t *ack_count;           /* per message: acked() calls */
	int *ack_status;
	uint32_t n_acked_ok, n_acked_err;
	uint32_t payload_max;         /* message i carries 1 + i*13 % payload_max bytes */
};

struct pair {
	struct simlink *link;
	struct pair_peer peer[2];
	/* Optional: return false to drop a packet arriving at `to`. */
	bool (*filter)(struct pair *pair, enum simlink_side to, const struct trp_header *h);
	unsigned filter_calls;
	void *test_state;
};

/* A link configuration from a usiw-impair SPEC (docs/impair.md), which
 * must parse. */
struct simlink_config pair_link(const char *spec);

/* Create both endpoints (cfg NULL = TRP defaults) and the link. */
void pair_init(struct pair *p, const struct simlink_config *link_cfg, const struct trp_config *cfg);
void pair_fini(struct pair *p);

/* Handshake (A active, B passive, B accepts in its callback), run until both
 * are established. */
void pair_connect(struct pair *p, uint32_t isn_a, uint32_t isn_b);
/* Handshake-less open of both sides. */
void pair_establish(struct pair *p, uint32_t isn_a, uint32_t isn_b);

/* Prepare `from` to send n messages and the other side to check them. */
void pair_stream(struct pair *p, enum simlink_side from, uint32_t n, uint32_t payload_max);
/* Bundle this peer's packets into datagrams of at most max bytes. */
void pair_bundle(struct pair_peer *peer, uint32_t max);
/* Send what the windows allow now (also called from writable()). */
void pair_pump(struct pair_peer *peer);

bool pair_run(struct pair *p, uint64_t until_ns, bool (*done)(void *), void *arg);
/* done() predicates for pair_run, arg = struct pair * */
bool pair_stream_done(void *pair);       /* every message delivered and acked */
bool pair_both_closed(void *pair);
bool pair_both_failed(void *pair);

/* True if the peer saw an event of this type; *status (if non-NULL) = its status. */
bool peer_has_event(const struct pair_peer *peer, enum trp_event_type type, int *status);
void peer_stats(const struct pair_peer *peer, struct trp_stats *st);

/* The fixture's deterministic message i: ULP header = 8-byte index. */
const uint8_t *pair_message_data(uint32_t i, uint32_t payload_max, size_t *len);

#endif
