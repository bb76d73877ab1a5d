/* The sender's copy of frame bytes into a memif ring's buffers, which the
 * other process reads from another CPU: with ordinary (cached) stores or
 * with non-temporal (streaming) stores, whichever moves bulk data faster,
 * measured while it runs.
 *
 * Why both: on this VM the host places the two vCPUs near each other
 * (a shared L3) or far apart, from run to run and minute to minute.  Near,
 * a cached copy hands the receiver its bytes in the L3 and 64 KiB
 * ib_write_bw runs at 20-35 GB/s, where streaming stores send them through
 * DRAM at 11-14.  Far, every cached store into a buffer the receiver last
 * read must first take its line back from the other CPU: the sender's copy
 * runs at 0.33-0.36 cycles a byte instead of 0.06 and the run at 6.5-7
 * GB/s, where streaming stores, which take no line, keep 0.09 cycles a
 * byte and 11 GB/s (docs/bench.md, Bulk copies into the ring).  Neither
 * placement can be seen from inside the VM but by its effect, so the
 * chooser measures the effect: the bytes its port moves per cycle in one
 * mode and then, now and then, in the other.  It probes streaming stores
 * only while the cached copy itself costs more than twice the cycles a byte
 * of a streaming copy (one piece copied so, timed, every so often): only
 * then can streaming win, as the receiver reads its bytes from DRAM at less
 * than half the speed the sender writes them (0.07-0.09 cycles a byte for
 * the sender, 11-14 GB/s end to end); so a near placement, where cached
 * stores win, loses no window to a probe.
 *
 * The chooser is plain C with the clock passed in, so that it can be
 * tested on its own (tests/integration/engine/test_ring_copy.c). */
#ifndef USIW_RING_COPY_H
#define USIW_RING_COPY_H

#include <stddef.h>
#include <stdint.h>

/* Pieces shorter than this are copied with cached stores and not counted:
 * headers, inline data and small messages, which the receiver reads at
 * once, are latency's, and a streaming store would send them to DRAM. */
#define RING_COPY_BULK_MIN 8192u

enum ring_copy_mode {
	RING_COPY_CACHED,
	RING_COPY_STREAMING,
};

struct ring_copy_chooser {
	uint64_t window;        /* busy cycles one measurement lasts */
	uint64_t gap_max;       /* a longer gap between bulk bursts counts as this */
	uint64_t last;          /* time of the last burst accounted; 0: none yet */
	uint64_t busy, bytes;   /* the current window's */
	uint64_t copying;       /* the current window's cycles spent in bursts that copied bulk */
	uint64_t held_rate;     /* bytes per 2^16 cycles in the held mode's last window */
	uint64_t streaming_cost;    /* 2^16 x cycles a byte of the last streaming copy timed; 0: none yet */
	unsigned until_sample;  /* cached windows left before a piece is timed streaming */
	enum ring_copy_mode held;   /* the mode chosen */
	enum ring_copy_mode used;   /* the mode in use: held's other while probing */
	unsigned interval;      /* held windows between two probes */
	unsigned until_probe;   /* held windows left before the next probe */
};

/* window and gap_max in the clock's cycles (the TSC's in the port). */
void ring_copy_chooser_init(struct ring_copy_chooser *c, uint64_t window, uint64_t gap_max);

static inline enum ring_copy_mode ring_copy_mode(const struct ring_copy_chooser *c)
{
	return c->used;
}

/* How the next bulk piece is to be copied: as the mode in use says, or, in
 * the cached mode when a timing is due, with streaming stores and timed
 * (ring_copy_sampled). */
enum ring_copy_piece {
	RING_COPY_PIECE_CACHED,
	RING_COPY_PIECE_STREAMING,
	RING_COPY_PIECE_TIMED,
};

static inline enum ring_copy_piece ring_copy_next_piece(const struct ring_copy_chooser *c)
{
	if (c->used == RING_COPY_STREAMING)
		return RING_COPY_PIECE_STREAMING;
	return c->until_sample ? RING_COPY_PIECE_CACHED : RING_COPY_PIECE_TIMED;
}

/* After a burst that copied `bytes` bulk bytes (pieces of RING_COPY_BULK_MIN
 * or more) and ended at time `now`, `copying` cycles after its first bulk
 * piece began: ends the window when it is full, and then decides whether to
 * probe the other mode, or to keep or switch after a probe. */
void ring_copy_account(struct ring_copy_chooser *c, uint64_t now, uint64_t bytes, uint64_t copying);

/* A bulk piece of `bytes` copied with streaming stores took `cycles`. */
void ring_copy_sampled(struct ring_copy_chooser *c, uint64_t cycles, uint64_t bytes);

/* dst = src with non-temporal stores (and an sfence, so that the bytes are
 * visible before the descriptor that announces them). */
void ring_copy_streaming(void *dst, const void *src, size_t len);

#endif
