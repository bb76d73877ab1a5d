/* Congestion control: AIMD on a congestion window counted in packets. */
#ifndef USIW_TRP_CC_H
#define USIW_TRP_CC_H

#include <stdbool.h>
#include <stdint.h>

struct trp_cc {
	uint32_t cwnd;           /* packets allowed in the network */
	uint32_t ssthresh;       /* slow start below, congestion avoidance above */
	uint32_t max_cwnd;
	uint32_t acked_acc;      /* packets acked towards the next +1 in avoidance */
	uint32_t recovery_point; /* no second reduction until this PSN is acked */
	bool in_recovery;
};

void cc_init(struct trp_cc *cc, uint32_t initial_cwnd, uint32_t max_cwnd);
/* n packets newly acknowledged (cumulatively or by SACK). */
void cc_on_acked(struct trp_cc *cc, uint32_t n);
/* The cumulative ACK point moved to snd_una. */
void cc_on_una(struct trp_cc *cc, uint32_t snd_una);
/* SACK revealed a loss; snd_nxt = next new PSN.  Halves the window once per
 * window of data.  Returns true if it reduced the window. */
bool cc_on_loss(struct trp_cc *cc, uint32_t snd_nxt);
/* Retransmission timeout: back to one packet, slow start up to half. */
void cc_on_timeout(struct trp_cc *cc, uint32_t snd_nxt);

#endif
