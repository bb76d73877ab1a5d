/* The fate of each packet on an impaired link: whether it is lost, how many
 * copies arrive, when, and which bits of each are flipped.  All of it is
 * drawn from one seeded PRNG in a fixed order, so the simulated link
 * (tests/sim) and the real forwarder (tools/usiw-impair) make the same
 * decisions for the same packets from the same SPEC.  Time is in ns since
 * the link started (virtual time in the simulation, wall time in the
 * forwarder).  Pure C11: no DPDK. */
#ifndef USIW_IMPAIR_FATE_H
#define USIW_IMPAIR_FATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "impair/spec.h"

#define IMPAIR_MAX_FLIPS 3

/* One bit to flip: byte offset in the payload, and its mask. */
struct impair_flip {
	size_t offset;
	uint8_t mask;
};

/* One copy of a packet that crosses the link. */
struct impair_copy {
	uint64_t release_ns;     /* when it arrives at the far side */
	bool reordered;          /* held back so later packets may overtake it */
	unsigned n_flips;        /* 0: intact */
	struct impair_flip flips[IMPAIR_MAX_FLIPS];
};

enum impair_verdict {
	IMPAIR_PASS,             /* n_copies copies arrive */
	IMPAIR_LOST,             /* dropped by the loss rate */
	IMPAIR_PARTITIONED,      /* dropped: sent while the link is cut */
};

struct impair_fate {
	enum impair_verdict verdict;
	unsigned n_copies;       /* 1, or 2 when duplicated; 0 unless IMPAIR_PASS */
	struct impair_copy copy[2];
};

/* Counters of one direction. */
struct impair_dir_stats {
	uint64_t sent, delivered, lost, partitioned, duplicated, reordered, corrupted;
};

/* The decision state of one link: its SPEC, PRNG, per-direction wire
 * occupancy (rate limit) and counters.  Plain data: embed it. */
struct impair {
	struct impair_config cfg;
	uint64_t rng;
	uint64_t busy_until_ns[2];
	struct impair_dir_stats stats[2];
};

void impair_init(struct impair *imp, const struct impair_config *cfg);

/* A packet enters the link in direction dir at now_ns.  wire_len is its size
 * for the rate limit; payload_len the number of bytes (from the start of the
 * payload) corruption may touch, 0 for none.  Fills fate and counts the
 * packet.
 * Order of draws (the contract that makes runs reproducible): loss, then for
 * each copy jitter, reorder, corruption, and the duplicate between them. */
void impair_decide(struct impair *imp, enum impair_dir dir, uint64_t now_ns, size_t wire_len,
                   size_t payload_len, struct impair_fate *fate);

/* A copy is due at the far side at now_ns: returns whether it is delivered
 * (false when the link is cut by then), and counts it either way. */
bool impair_release(struct impair *imp, enum impair_dir dir, uint64_t now_ns);

/* Whether the link is cut at t_ns. */
bool impair_partitioned(const struct impair_config *cfg, uint64_t t_ns);

#endif
