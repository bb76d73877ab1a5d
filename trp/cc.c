/* AIMD congestion control in packets (TCP Reno's rules, RFC 5681, applied to
 * datagrams):
 *  - slow start: +1 packet per packet acknowledged while cwnd < ssthresh;
 *  - congestion avoidance: +1 packet per cwnd packets acknowledged;
 *  - loss found by SACK: ssthresh = cwnd / 2, cwnd = ssthresh, at most once
 *    per window (until everything sent before the loss is acknowledged);
 *  - retransmission timeout: ssthresh = cwnd / 2, cwnd = 1.
 * Growth continues during recovery: the window was already cut, and
 * freezing it would only slow the repair of further holes. */
#include "trp/cc.h"
#include "trp/psn.h"

#define CC_MIN_SSTHRESH 2

void cc_init(struct trp_cc *cc, uint32_t initial_cwnd, uint32_t max_cwnd)
{
	*cc = (struct trp_cc){
		.cwnd = initial_cwnd < max_cwnd ? initial_cwnd : max_cwnd,
		.ssthresh = max_cwnd,
		.max_cwnd = max_cwnd,
	};
}

void cc_on_acked(struct trp_cc *cc, uint32_t n)
{
	if (cc->cwnd < cc->ssthresh) {
		cc->cwnd += n;
		if (cc->cwnd > cc->ssthresh)
			cc->cwnd = cc->ssthresh;
	} else {
		cc->acked_acc += n;
		while (cc->acked_acc >= cc->cwnd) {
			cc->acked_acc -= cc->cwnd;
			cc->cwnd++;
		}
	}
	if (cc->cwnd > cc->max_cwnd)
		cc->cwnd = cc->max_cwnd;
}

void cc_on_una(struct trp_cc *cc, uint32_t snd_una)
{
	if (cc->in_recovery && !psn_before(snd_una, cc->recovery_point))
		cc->in_recovery = false;
}

static void cc_halve(struct trp_cc *cc, uint32_t snd_nxt)
{
	cc->ssthresh = cc->cwnd / 2 > CC_MIN_SSTHRESH ? cc->cwnd / 2 : CC_MIN_SSTHRESH;
	cc->acked_acc = 0;
	cc->in_recovery = true;
	cc->recovery_point = snd_nxt;
}

bool cc_on_loss(struct trp_cc *cc, uint32_t snd_nxt)
{
	if (cc->in_recovery)
		return false;
	cc_halve(cc, snd_nxt);
	cc->cwnd = cc->ssthresh;
	return true;
}

void cc_on_timeout(struct trp_cc *cc, uint32_t snd_nxt)
{
	/* Repeated timeouts of the same data keep halving ssthresh only once. */
	if (!cc->in_recovery)
		cc_halve(cc, snd_nxt);
	cc->cwnd = 1;
}
