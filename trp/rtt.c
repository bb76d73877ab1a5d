/* SRTT/RTTVAR estimator with gains 1/8 and 1/4 and RTO = SRTT + 4 RTTVAR
 * (RFC 6298 section 2), clamped to [min, max].  The clock is nanoseconds, so
 * the "G" (clock granularity) term of the RFC is negligible and the rto_min
 * floor plays its role. */
#include "trp/rtt.h"

static uint64_t clamp(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void rtt_init(struct trp_rtt *rtt, uint64_t initial_ns, uint64_t min_ns, uint64_t max_ns)
{
	*rtt = (struct trp_rtt){
		.rto_ns = clamp(initial_ns, min_ns, max_ns),
		.min_ns = min_ns,
		.max_ns = max_ns,
		.lowest_ns = UINT64_MAX,
	};
}

void rtt_sample(struct trp_rtt *rtt, uint64_t sample_ns)
{
	if (sample_ns < rtt->lowest_ns)
		rtt->lowest_ns = sample_ns;
	if (!rtt->have_sample) {
		rtt->srtt_ns = sample_ns;
		rtt->rttvar_ns = sample_ns / 2;
		rtt->have_sample = true;
	} else {
		uint64_t err = rtt->srtt_ns > sample_ns ? rtt->srtt_ns - sample_ns
		                                        : sample_ns - rtt->srtt_ns;
		rtt->rttvar_ns = rtt->rttvar_ns - rtt->rttvar_ns / 4 + err / 4;
		rtt->srtt_ns = rtt->srtt_ns - rtt->srtt_ns / 8 + sample_ns / 8;
	}
	rtt->rto_ns = clamp(rtt->srtt_ns + 4 * rtt->rttvar_ns, rtt->min_ns, rtt->max_ns);
}

void rtt_retransmitted(struct trp_rtt *rtt, uint64_t now)
{
	rtt->retransmitted_ns = now;
}

bool rtt_sample_ok(const struct trp_rtt *rtt, uint64_t sent_ns)
{
	return sent_ns >= rtt->retransmitted_ns;
}

void rtt_backoff(struct trp_rtt *rtt)
{
	if (rtt_timeout(rtt) < rtt->max_ns)
		rtt->backoff++;
}

void rtt_end_backoff(struct trp_rtt *rtt)
{
	rtt->backoff = 0;
}

uint64_t rtt_timeout(const struct trp_rtt *rtt)
{
	uint64_t rto = rtt->rto_ns;

	for (unsigned i = 0; i < rtt->backoff && rto < rtt->max_ns; i++)
		rto *= 2;
	return rto < rtt->max_ns ? rto : rtt->max_ns;
}
