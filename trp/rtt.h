/* Retransmission timeout from measured round-trip time (RFC 6298 style). */
#ifndef USIW_TRP_RTT_H
#define USIW_TRP_RTT_H

#include <stdbool.h>
#include <stdint.h>

struct trp_rtt {
	uint64_t srtt_ns;
	uint64_t rttvar_ns;
	uint64_t rto_ns;      /* before backoff */
	uint64_t min_ns, max_ns;  /* the RTO's bounds */
	uint64_t lowest_ns;       /* the lowest sample; UINT64_MAX before one */
	unsigned backoff;     /* timeouts since the last ACK of new data */
	bool have_sample;
	/* When the last retransmission left: an ACK that first reports only
	 * packets sent before it may have been sent for it (rtt_sample_ok). */
	uint64_t retransmitted_ns;
};

void rtt_init(struct trp_rtt *rtt, uint64_t initial_ns, uint64_t min_ns, uint64_t max_ns);
/* A sample from a packet transmitted exactly once (Karn's rule: the caller
 * never samples retransmitted packets, whose ACK is ambiguous). */
void rtt_sample(struct trp_rtt *rtt, uint64_t sample_ns);
/* A retransmission left at now. */
void rtt_retransmitted(struct trp_rtt *rtt, uint64_t now);
/* Whether the ACK that first reports a packet sent at sent_ns times it.
 * Not when a retransmission left after that packet: the ACK may answer the
 * retransmission, after the timer or after earlier ACKs that were lost, and
 * timing it by the older packet counts that wait as round trip.  Over a
 * simulated link with a 10 us round trip that loses a fifth of its packets
 * each way, such samples had raised SRTT to 0.8-3.7 ms and the RTO to
 * 7-30 ms, which each lost last packet of a message then waited. */
bool rtt_sample_ok(const struct trp_rtt *rtt, uint64_t sent_ns);
/* A retransmission timeout fired: double the timeout, up to max. */
void rtt_backoff(struct trp_rtt *rtt);
/* The backoff ends on an ACK of new data (the cumulative point moved), or
 * when the timeouts proved spurious; not on an RTT sample alone: a SACK of
 * later packets while the oldest is still missing (a peer refusing it, a
 * burst loss) would otherwise keep the RTO at its floor and spend the retry
 * bound in a few milliseconds. */
void rtt_end_backoff(struct trp_rtt *rtt);
/* The timeout to arm now: rto << backoff, clamped to max. */
uint64_t rtt_timeout(const struct trp_rtt *rtt);

#endif
