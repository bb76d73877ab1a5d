/* The impairment SPEC of tools/usiw-impair, `usiw-pair --impair` and the
 * simulated link of the protocol tests (tests/sim): what a link does to the
 * packets that cross it, and the one parser of its text form.
 *
 * SPEC is comma-separated key=value, for example
 *   loss=0.01,dup=0.005,reorder=0.01,delay_us=50,corrupt=0.001,seed=1
 * Rates are fractions of packets, applied in each direction; see
 * docs/impair.md for every key.  Pure C11: no DPDK. */
#ifndef USIW_IMPAIR_SPEC_H
#define USIW_IMPAIR_SPEC_H

#include <stddef.h>
#include <stdint.h>

/* The two directions of a link: from side A (port0) to side B (port1), and
 * back. */
enum impair_dir { IMPAIR_A_TO_B = 0, IMPAIR_B_TO_A = 1 };

/* Impairments of one direction; rates are fractions of packets. */
struct impair_dir_config {
	double loss, dup, reorder, corrupt;
	uint64_t delay_ns;         /* fixed one-way delay */
	uint64_t jitter_ns;        /* + uniform [0, jitter_ns] */
	uint64_t reorder_delay_ns; /* a reordered packet is held up to this much
	                              longer; 0 = 2 * delay + 10 us */
	uint64_t rate_bps;         /* serialization rate; 0 = unlimited */
};

/* What a forwarder does to a UDP checksum after corrupting the payload it
 * covers (the simulated link carries bare datagrams and has none). */
enum impair_udp_csum {
	/* Recompute it: the datagram reaches the receiver's ULP, whose own
	 * check (TRP's CRC32C) must catch the damage. */
	IMPAIR_UDP_CSUM_FIX,
	/* Leave it stale: the receiver's UDP check drops the datagram, which
	 * the ULP sees as a loss (for ULPs with no integrity check). */
	IMPAIR_UDP_CSUM_KEEP,
};

struct impair_config {
	struct impair_dir_config dir[2]; /* indexed by enum impair_dir */
	uint64_t seed;
	uint64_t partition_at_ns;  /* the link is cut in [at, at + len) */
	uint64_t partition_len_ns; /* 0 = no partition */
	/* Packets due in [at, at + len) arrive at its end instead: a receiver
	 * that is not scheduled for a while (delay, no loss). */
	uint64_t stall_at_ns;
	uint64_t stall_len_ns;     /* 0 = no stall */
	enum impair_udp_csum udp_csum;
};

/* No impairment, delay 0, seed 1, UDP checksums fixed. */
void impair_config_default(struct impair_config *cfg);

/* Parses SPEC on top of what cfg already holds (every key sets both
 * directions; a later key overrides an earlier one; "" changes nothing).
 * Returns 0, or -1 with cfg unchanged and, if err is not NULL, a message
 * naming the offending item and what is allowed. */
int impair_config_parse(struct impair_config *cfg, const char *spec, char *err, size_t errlen);

#endif
